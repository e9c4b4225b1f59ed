#!/usr/bin/env node
// Writes the test models of SIGN, RELU_0_TO_1, EMBEDDING_LOOKUP, CUMSUM,
// L2_POOL_2D and REVERSE_SEQUENCE (core/ops/extra.cc) as FlatBuffer JSON into
// tests/models/json/extra_*.json, plus their input domains into
// tests/models/specs_extra.json. Same format and conventions as
// make_models.mjs (see README.md); only extra_* files are touched.
//
//   node tests/models/make_models_extra.mjs      # from the repository root
//
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3 as conv, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_extra.json');

// ---- op helpers: add one op and its output tensor, return the output ------

function unary(m, op, x, name = 'output') {
  const y = m.tensor(name, m.shape(x), m.type(x));
  m.op(op, [x], [y]);
  return y;
}

function cumsum(m, x, axis, exclusive, reverse, name = 'output') {
  const a = m.constant(`${name}/axis`, [], 'INT32', [axis]);
  const y = m.tensor(name, m.shape(x), m.type(x));
  m.op('CUMSUM', [x, a], [y], 'CumsumOptions', { exclusive, reverse });
  return y;
}

const poolOut = (size, k, s, same) => (same ? Math.ceil(size / s) : Math.floor((size - k) / s) + 1);

function l2pool(m, x, k, s, padding, act = 'NONE', name = 'output') {
  const [n, h, w, c] = m.shape(x);
  const same = padding === 'SAME';
  const y = m.tensor(name, [n, poolOut(h, k[0], s[0], same), poolOut(w, k[1], s[1], same), c]);
  m.op('L2_POOL_2D', [x], [y], 'Pool2DOptions', {
    padding, stride_h: s[0], stride_w: s[1], filter_height: k[0], filter_width: k[1],
    fused_activation_function: act,
  });
  return y;
}

function reverseSequence(m, x, lens, seqDim, batchDim, name = 'output') {
  const y = m.tensor(name, m.shape(x), m.type(x));
  m.op('REVERSE_SEQUENCE', [x, lens], [y], 'ReverseSequenceOptions', { seq_dim: seqDim, batch_dim: batchDim });
  return y;
}

// ---- models ----------------------------------------------------------------

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `extra_${name}`, description, build });

const R3 = [2, 3, 5];
const NHWC = [1, 5, 7, 3];

// SIGN.
def('sign', 'SIGN of float32 [2,3,5] in [-2, 2) with exact zeros', (m) => {
  const v = [];
  for (let i = 0; i < 30; i++) v.push(i % 7 === 0 ? 0 : ((i * 13) % 17 - 8) / 4);
  m.output(unary(m, 'SIGN', m.input('input', R3, 'FLOAT32', { value: v })));
});
def('sign_i32', 'SIGN of int32 [3,4,5] in [-3, 4)', (m) =>
  m.output(unary(m, 'SIGN', m.input('input', [3, 4, 5], 'INT32', { range: [-3, 4] }))));
def('sign_after_conv', 'CONV_2D -> SIGN (NCHW)', (m) =>
  m.output(unary(m, 'SIGN', conv(m, m.input('input', NHWC), 'conv', 4))));

// RELU_0_TO_1.
def('relu_0_to_1', 'RELU_0_TO_1 of float32 [2,3,5] in [-1, 2)', (m) =>
  m.output(unary(m, 'RELU_0_TO_1', m.input('input', R3, 'FLOAT32', { range: [-1, 2] }))));
def('relu_0_to_1_after_conv', 'CONV_2D -> RELU_0_TO_1 (NCHW)', (m) =>
  m.output(unary(m, 'RELU_0_TO_1', conv(m, m.input('input', NHWC, 'FLOAT32', { range: [-3, 3] }), 'conv', 4))));

// EMBEDDING_LOOKUP.
def('embedding_lookup', 'EMBEDDING_LOOKUP of ids int32 [4] in a constant table [7,5]', (m) => {
  const ids = m.input('ids', [4], 'INT32', { range: [0, 7] });
  const table = m.rand32('params', [7, 5], 1);
  const y = m.tensor('output', [4, 5]);
  m.op('EMBEDDING_LOOKUP', [ids, table], [y]);
  m.output(y);
});
def('embedding_lookup_3d', 'EMBEDDING_LOOKUP of ids int32 [6] in a float32 input table [5,2,3]', (m) => {
  const ids = m.input('ids', [6], 'INT32', { range: [0, 5] });
  const table = m.input('params', [5, 2, 3]);
  const y = m.tensor('output', [6, 2, 3]);
  m.op('EMBEDDING_LOOKUP', [ids, table], [y]);
  m.output(y);
});

// CUMSUM.
def('cumsum', 'CUMSUM of float32 [2,3,5] along axis 1', (m) =>
  m.output(cumsum(m, m.input('input', R3), 1, false, false)));
def('cumsum_exclusive_reverse', 'CUMSUM of float32 [2,3,5] along axis -1, exclusive and reverse', (m) =>
  m.output(cumsum(m, m.input('input', R3), -1, true, true)));
def('cumsum_i32', 'CUMSUM of int32 [3,4,5] along axis 0, exclusive', (m) =>
  m.output(cumsum(m, m.input('input', [3, 4, 5], 'INT32', { range: [-20, 20] }), 0, true, false)));
def('cumsum_after_conv', 'CONV_2D -> CUMSUM along axis 3 (channels) and axis 2 (W), NCHW', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  m.output(cumsum(m, c, 3, false, false, 'output_c'));
  m.output(cumsum(m, c, 2, false, true, 'output_w'));
});

// L2_POOL_2D.
def('l2_pool_valid', 'L2_POOL_2D 2x2 stride 2 VALID on [1,6,9,2]', (m) =>
  m.output(l2pool(m, m.input('input', [1, 6, 9, 2]), [2, 2], [2, 2], 'VALID')));
def('l2_pool_same', 'L2_POOL_2D 3x2 stride 2x1 SAME (partial windows) on [2,5,7,4]', (m) =>
  m.output(l2pool(m, m.input('input', [2, 5, 7, 4]), [3, 2], [2, 1], 'SAME')));
def('l2_pool_after_conv_relu6', 'CONV_2D (6 filters) -> L2_POOL_2D 3x3 stride 2 SAME, RELU6 (NCHW)', (m) =>
  m.output(l2pool(m, conv(m, m.input('input', NHWC), 'conv', 6), [3, 3], [2, 2], 'SAME', 'RELU6')));

// REVERSE_SEQUENCE.
def('reverse_sequence', 'REVERSE_SEQUENCE of [3,6,4] with seq_dim 1, batch_dim 0, int32 lengths', (m) =>
  m.output(reverseSequence(m, m.input('input', [3, 6, 4]),
    m.constant('seq_lengths', [3], 'INT32', [6, 2, 4]), 1, 0)));
def('reverse_sequence_time_major', 'REVERSE_SEQUENCE of [5,2,3] with seq_dim 0, batch_dim 1, input lengths', (m) =>
  m.output(reverseSequence(m, m.input('input', [5, 2, 3]),
    m.input('seq_lengths', [2], 'INT32', { value: [3, 5] }), 0, 1)));
def('reverse_sequence_i32', 'REVERSE_SEQUENCE of int32 [2,5] with seq_dim 1, batch_dim 0', (m) =>
  m.output(reverseSequence(m, m.input('input', [2, 5], 'INT32', { range: [-50, 50] }),
    m.constant('seq_lengths', [2], 'INT32', [4, 1]), 1, 0)));

writeModels({ dir: JSON_DIR, prefix: 'extra_', models: MODELS, specsFile: SPECS_FILE });
