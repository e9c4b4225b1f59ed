#!/usr/bin/env node
// Writes the layout test models: networks whose Transpose count is the point
// (core/passes/layout.cc, core/ops/shape.cc), as FlatBuffer JSON into
// tests/models/json/layout_*.json, plus their input domains into
// tests/models/specs_layout.json. Same format and conventions as
// make_models.mjs (see README.md); only layout_* files are touched.
//
//   node tests/models/make_models_layout.mjs      # from the repository root
//
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3 as conv, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_layout.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `layout_${name}`, description, build });

function reshape(m, x, name, shape) {
  const y = m.tensor(name, shape, m.type(x));
  m.op('RESHAPE', [x, m.constant(`${name}/shape`, [shape.length], 'INT32', shape)], [y]);
  return y;
}

function binary(m, op, a, b, name) {
  const y = m.tensor(name, m.shape(a), m.type(a));
  m.op(op, [a, b], [y], `${op === 'ADD' ? 'Add' : 'Mul'}Options`, { fused_activation_function: 'NONE' });
  return y;
}

function mean(m, x, axes, name) {
  const shape = m.shape(x).filter((_, i) => !axes.includes(i));
  const y = m.tensor(name, shape, m.type(x));
  m.op('MEAN', [x, m.constant(`${name}/axes`, [axes.length], 'INT32', axes)], [y], 'ReducerOptions', { keep_dims: false });
  return y;
}

// ---- time-distributed 2-D convolutions: [N, T, H, W, C] <-> [N*T, H, W, C] ----

def('time_distributed_conv', 'Time-distributed convs: [1,4,12,12,3] -> Reshape [4,12,12,3] -> 2 CONV_2D -> Reshape [1,4,12,12,8] -> MEAN over time -> CONV_2D',
  (m) => {
    const x = m.input('clip', [1, 4, 12, 12, 3]);
    const frames = reshape(m, x, 'frames', [4, 12, 12, 3]);
    const f = conv(m, conv(m, frames, 'conv1', 8), 'conv2', 8);
    const clip = reshape(m, f, 'clip_features', [1, 4, 12, 12, 8]);
    m.output(conv(m, mean(m, clip, [1], 'pooled'), 'head', 4));
  });

def('time_distributed_residual', 'Time-distributed blocks with a residual in 5-D: Reshape -> CONV_2D -> Reshape -> ADD (the 5-D input) -> Reshape -> CONV_2D -> Reshape',
  (m) => {
    const x = m.input('clip', [1, 3, 10, 10, 4]);
    const block = (t, name, filters) => reshape(m, conv(m, reshape(m, t, `${name}/frames`, [3, 10, 10, m.shape(t)[4]]), `${name}/conv`, filters),
      `${name}/clip`, [1, 3, 10, 10, filters]);
    const r = binary(m, 'ADD', block(x, 'block1', 4), x, 'residual');
    m.output(block(r, 'block2', 6));
  });

// ---- FULLY_CONNECTED flattening a 4-D tensor itself (no RESHAPE) ----

def('conv_fc_flattens_rows', 'CONV_2D [2,5,7,3] -> [2,5,7,4] read by FULLY_CONNECTED directly (it flattens each batch row to 140): weight columns permuted, no Transpose',
  (m) => {
    const c = conv(m, m.input('image', [2, 5, 7, 3]), 'conv', 4);
    const y = m.tensor('logits', [2, 6]);
    m.op('FULLY_CONNECTED', [c, m.f32('fc/weights', [6, 140], m.randomValues(840, 0.1)), m.f32('fc/bias', [6], m.randomValues(6, 0.1))],
      [y], 'FullyConnectedOptions', { fused_activation_function: 'NONE' });
    m.output(y);
  });

writeModels({ dir: JSON_DIR, prefix: 'layout_', models: MODELS, specsFile: SPECS_FILE });
