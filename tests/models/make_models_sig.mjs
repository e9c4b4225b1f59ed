#!/usr/bin/env node
// Writes the test models of SignatureDefs (--signature, --io-names signature;
// core/tflite/reader.cc selects the subgraph) as FlatBuffer JSON into
// tests/models/json/sig_*.json, plus their input domains into
// tests/models/specs_sig.json. Same format and conventions as make_models.mjs
// (see README.md); only sig_* files are touched.
//
//   node tests/models/make_models_sig.mjs      # from the repository root
//
// The numeric suite checks each signature of a model: the model's name
// converts with the defaults (its first signature), NAME#KEY with
// --signature KEY, each against LiteRT.js running that signature
// (tests/numeric/README.md, "Signatures").
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_sig.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `sig_${name}`, description, build });

// ---- op helpers (any subgraph) -----------------------------------------------------

function fullyConnected(g, x, name, units) {
  const k = g.shape(x).at(-1);
  const w = g.rand32(`${name}/weights`, [units, k], 1 / Math.sqrt(k));
  const b = g.rand32(`${name}/bias`, [units], 0.1);
  const y = g.tensor(name, [g.shape(x)[0], units]);
  g.op('FULLY_CONNECTED', [x, w, b], [y], 'FullyConnectedOptions', { fused_activation_function: 'NONE' });
  return y;
}

function binary(g, op, a, b, name, optionsType) {
  const y = g.tensor(name, g.shape(a), g.type(a));
  g.op(op, [a, b], [y], optionsType, { fused_activation_function: 'NONE' });
  return y;
}

function unary(g, op, x, name) {
  const y = g.tensor(name, g.shape(x), g.type(x));
  g.op(op, [x], [y]);
  return y;
}

function meanHw(g, x, name) {
  const [n, , , c] = g.shape(x);
  const axes = g.i32(`${name}/axes`, [2], [1, 2]);
  const y = g.tensor(name, [n, c]);
  g.op('MEAN', [x, axes], [y], 'ReducerOptions', { keep_dims: false });
  return y;
}

function maxPool2x2(g, x, name) {
  const [n, h, w, c] = g.shape(x);
  const y = g.tensor(name, [n, Math.floor(h / 2), Math.floor(w / 2), c]);
  g.op('MAX_POOL_2D', [x], [y], 'Pool2DOptions', {
    padding: 'VALID', stride_h: 2, stride_w: 2, filter_height: 2, filter_width: 2, fused_activation_function: 'NONE',
  });
  return y;
}

// ---- models ------------------------------------------------------------------------

def('conv_fc', 'two SignatureDefs on two subgraphs: "classify" (subgraph 0: image [1,5,7,3] -> CONV_2D 3x3 -> ' +
  'MEAN over H,W -> FULLY_CONNECTED -> scores [1,6]) and "embed" (subgraph 1: features [2,9] -> FULLY_CONNECTED -> ' +
  'TANH -> embedding [2,5]); both subgraphs call their input "input"', (m) => {
  const image = m.input('input', [1, 5, 7, 3]);
  const logits = fullyConnected(m, meanHw(m, conv3x3(m, image, 'conv', 4), 'pool'), 'logits', 6);
  m.output(logits);
  m.signature('classify', { inputs: { image }, outputs: { scores: logits } });
  let io;
  const embed = m.subgraph('embed', (g) => {
    const x = g.input('input', [2, 9]);
    const y = unary(g, 'TANH', fullyConnected(g, x, 'hidden', 5), 'output');
    g.output(y);
    io = { x, y };
  });
  m.signature('embed', { inputs: { features: io.x }, outputs: { embedding: io.y }, subgraph: embed });
});

def('first_in_subgraph_1', 'the first SignatureDef "step" runs subgraph 1 (frame [1,6,5,2] -> CONV_2D 3x3 -> + state ' +
  '[1,6,5,3] -> next_state, MAX_POOL_2D 2x2 of it -> pooled; aliases x, h -> y, h_next, sorted unlike the subgraph\'s ' +
  'inputs and outputs), the second "reset" subgraph 0 (x [3,4] -> ABS)', (m) => {
  const x = m.input('x', [3, 4]);
  const y = unary(m, 'ABS', x, 'output');
  m.output(y);
  let io;
  const step = m.subgraph('step', (g) => {
    const frame = g.input('frame', [1, 6, 5, 2]);
    const state = g.input('state', [1, 6, 5, 3]);
    const next = binary(g, 'ADD', conv3x3(g, frame, 'frame_conv', 3), state, 'next_state', 'AddOptions');
    const pooled = maxPool2x2(g, next, 'pooled');
    g.output(pooled, next);
    io = { frame, state, next, pooled };
  });
  m.signature('step', { inputs: { x: io.frame, h: io.state }, outputs: { y: io.pooled, h_next: io.next }, subgraph: step });
  m.signature('reset', { inputs: { x }, outputs: { y } });
});

def('swapped_aliases', 'one SignatureDef "diff" whose aliases swap the input names (tensor input_a is alias ' +
  '"input_b" and the other way round) over SUB [2,3,4] -> difference -> RELU -> output (alias "difference", the ' +
  'name of the tensor before the RELU): --io-names signature must keep the names apart', (m) => {
  const a = m.input('input_a', [2, 3, 4]);
  const b = m.input('input_b', [2, 3, 4]);
  const d = binary(m, 'SUB', a, b, 'difference', 'SubOptions');
  const y = unary(m, 'RELU', d, 'output');
  m.output(y);
  m.signature('diff', { inputs: { input_b: a, input_a: b }, outputs: { difference: y } });
});

writeModels({ dir: JSON_DIR, prefix: 'sig_', models: MODELS, specsFile: SPECS_FILE });
