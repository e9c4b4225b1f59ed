#!/usr/bin/env node
// Writes the test models of the elementwise math / comparison / logical /
// selection ops (core/ops/math.cc) as FlatBuffer JSON into
// tests/models/json/math_*.json, plus their input domains into
// tests/models/specs_math.json. Same format and conventions as
// make_models.mjs (see README.md); only math_* files are touched.
//
//   node tests/models/make_models_math.mjs      # from the repository root
//
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3 as conv, bcast, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_math.json');

// ---- op helpers: add one op and its output tensor, return the output ------

function unary(m, op, x, name = 'output', type = undefined, optionsType = undefined, options = undefined) {
  const y = m.tensor(name, m.shape(x), type ?? m.type(x));
  m.op(op, [x], [y], optionsType, options);
  return y;
}

const BOOL_OUT = new Set(['EQUAL', 'NOT_EQUAL', 'GREATER', 'GREATER_EQUAL', 'LESS', 'LESS_EQUAL']);

function binary(m, op, a, b, name = 'output') {
  const y = m.tensor(name, bcast(m.shape(a), m.shape(b)), BOOL_OUT.has(op) ? 'BOOL' : m.type(a));
  m.op(op, [a, b], [y]);
  return y;
}

function select(m, op, c, x, y, name = 'output') {
  const out = m.tensor(name, op === 'SELECT' ? m.shape(x) : bcast(m.shape(c), bcast(m.shape(x), m.shape(y))), m.type(x));
  m.op(op, [c, x, y], [out]);
  return out;
}

// ---- models ----------------------------------------------------------------

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `math_${name}`, description, build });

const R3 = [2, 3, 5];
const NHWC = [1, 5, 7, 3];

for (const [op, range] of [
  ['CEIL', [-3, 3]], ['FLOOR', [-3, 3]], ['ROUND', [-4, 4]], ['COS', [-4, 4]], ['SIN', [-4, 4]],
  ['EXP', [-3, 3]], ['LOG', [0.05, 5]], ['ELU', [-3, 3]], ['NEG', [-2, 2]], ['SQUARE', [-3, 3]],
]) {
  def(op.toLowerCase(), `${op} of a float32 [2,3,5] input in [${range}]`, (m) =>
    m.output(unary(m, op, m.input('input', R3, 'FLOAT32', { range }))));
}

def('round_halves', 'ROUND of exact halves and near-halves (half to even)', (m) =>
  m.output(unary(m, 'ROUND', m.input('input', [2, 5], 'FLOAT32', {
    value: [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.5, 0.49999997, -0.49999997],
  }))));
def('neg_i32', 'NEG of int32 [2,3,5] in [-100, 100)', (m) =>
  m.output(unary(m, 'NEG', m.input('input', R3, 'INT32', { range: [-100, 100] }))));
def('zeros_like', 'ZEROS_LIKE of float32 [2,3,5]', (m) =>
  m.output(unary(m, 'ZEROS_LIKE', m.input('input', R3))));
def('zeros_like_i32', 'ZEROS_LIKE of int32 [3,4,5]', (m) =>
  m.output(unary(m, 'ZEROS_LIKE', m.input('input', [3, 4, 5], 'INT32', { range: [-50, 50] }))));
def('gelu', 'GELU approximate=false (erf form) of [2,3,5] in [-4, 4)', (m) =>
  m.output(unary(m, 'GELU', m.input('input', R3, 'FLOAT32', { range: [-4, 4] }), 'output', undefined,
    'GeluOptions', { approximate: false })));
def('gelu_approx', 'GELU approximate=true (tanh form) of [2,3,5] in [-4, 4)', (m) =>
  m.output(unary(m, 'GELU', m.input('input', R3, 'FLOAT32', { range: [-4, 4] }), 'output', undefined,
    'GeluOptions', { approximate: true })));

const castOpts = (i, o) => ({ in_data_type: i, out_data_type: o });
def('cast_f32_i32', 'CAST float32 [2,3,5] in [-50, 50) to int32 (truncation toward 0)', (m) =>
  m.output(unary(m, 'CAST', m.input('input', R3, 'FLOAT32', { range: [-50, 50] }), 'output', 'INT32',
    'CastOptions', castOpts('FLOAT32', 'INT32'))));
def('cast_i32_f32', 'CAST int32 [2,3,5] to float32', (m) =>
  m.output(unary(m, 'CAST', m.input('input', R3, 'INT32', { range: [-1000, 1000] }), 'output', 'FLOAT32',
    'CastOptions', castOpts('INT32', 'FLOAT32'))));
def('cast_i32_bool', 'CAST int32 [2,3,5] in [-2, 3) to bool', (m) =>
  m.output(unary(m, 'CAST', m.input('input', R3, 'INT32', { range: [-2, 3] }), 'output', 'BOOL',
    'CastOptions', castOpts('INT32', 'BOOL'))));
def('cast_bool_f32', 'CAST bool [2,3,5] to float32', (m) =>
  m.output(unary(m, 'CAST', m.input('input', R3, 'BOOL'), 'output', 'FLOAT32',
    'CastOptions', castOpts('BOOL', 'FLOAT32'))));

// Comparisons.
def('equal_i32', 'EQUAL of two int32 [2,3,5] inputs in [0, 3)', (m) =>
  m.output(binary(m, 'EQUAL', m.input('input_a', R3, 'INT32', { range: [0, 3] }),
    m.input('input_b', R3, 'INT32', { range: [0, 3] }))));
def('equal_bool', 'EQUAL of two bool [3,4,5] inputs', (m) =>
  m.output(binary(m, 'EQUAL', m.input('input_a', [3, 4, 5], 'BOOL'), m.input('input_b', [3, 4, 5], 'BOOL'))));
def('not_equal_i32', 'NOT_EQUAL of int32 [2,3,5] in [0, 3) and a constant int32 [5]', (m) =>
  m.output(binary(m, 'NOT_EQUAL', m.input('input', R3, 'INT32', { range: [0, 3] }),
    m.constant('not_equal/other', [5], 'INT32', [0, 1, 2, 1, 0]))));
def('not_equal_f32', 'NOT_EQUAL of float32 [2,3,5] and a constant scalar 0.5', (m) =>
  m.output(binary(m, 'NOT_EQUAL', m.input('input', R3, 'FLOAT32', { range: [-1, 2] }),
    m.constant('not_equal/half', [], 'FLOAT32', [0.5]))));
def('greater', 'GREATER of two float32 inputs [2,3,5]', (m) =>
  m.output(binary(m, 'GREATER', m.input('input_a', R3), m.input('input_b', R3))));
def('greater_equal_i32', 'GREATER_EQUAL of int32 [2,3,5] in [0, 5) and a constant [5]', (m) =>
  m.output(binary(m, 'GREATER_EQUAL', m.input('input', R3, 'INT32', { range: [0, 5] }),
    m.constant('greater_equal/other', [5], 'INT32', [0, 1, 2, 3, 4]))));
def('less', 'LESS of float32 [1,5,7,3] and a constant [3]', (m) =>
  m.output(binary(m, 'LESS', m.input('input', NHWC), m.rand32('less/other', [3], 0.5))));
def('less_equal_i32_bcast', 'LESS_EQUAL of int32 [3,4,5] and an int32 input [4,1] (broadcast both ways)', (m) =>
  m.output(binary(m, 'LESS_EQUAL', m.input('input_a', [3, 4, 5], 'INT32', { range: [0, 4] }),
    m.input('input_b', [4, 1], 'INT32', { range: [0, 4] }))));
def('greater_after_conv', 'CONV_2D then GREATER with a constant [C]: runs in NCHW, bool output', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  m.output(binary(m, 'GREATER', c, m.rand32('greater/threshold', [4], 0.2)));
});
def('less_equal_after_conv', 'CONV_2D then LESS_EQUAL with a constant [1,1,7,1]', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  m.output(binary(m, 'LESS_EQUAL', c, m.rand32('less_equal/threshold', [1, 1, 7, 1], 0.2)));
});

// Logical ops.
def('logical_and', 'LOGICAL_AND of two bool [2,3,5] inputs', (m) =>
  m.output(binary(m, 'LOGICAL_AND', m.input('input_a', R3, 'BOOL'), m.input('input_b', R3, 'BOOL'))));
def('logical_or_bcast', 'LOGICAL_OR of bool [3,4,5] and bool [5] (rank-changing broadcast)', (m) =>
  m.output(binary(m, 'LOGICAL_OR', m.input('input_a', [3, 4, 5], 'BOOL'), m.input('input_b', [5], 'BOOL'))));
def('logical_not', 'LOGICAL_NOT of bool [2,3,5]', (m) =>
  m.output(unary(m, 'LOGICAL_NOT', m.input('input', R3, 'BOOL'))));
def('logical_after_conv', 'CONV_2D -> GREATER / LESS -> LOGICAL_AND -> LOGICAL_NOT, all NCHW', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  const a = binary(m, 'GREATER', c, m.constant('greater/lo', [], 'FLOAT32', [-0.2]), 'above');
  const b = binary(m, 'LESS', c, m.constant('less/hi', [], 'FLOAT32', [0.3]), 'below');
  const both = binary(m, 'LOGICAL_AND', a, b, 'inside');
  m.output(unary(m, 'LOGICAL_NOT', both));
});

// MAXIMUM / MINIMUM.
def('maximum', 'MAXIMUM of two float32 [2,3,5] inputs', (m) =>
  m.output(binary(m, 'MAXIMUM', m.input('input_a', R3), m.input('input_b', R3))));
def('minimum_bcast_c', 'MINIMUM of float32 [1,5,7,3] and a constant [3]', (m) =>
  m.output(binary(m, 'MINIMUM', m.input('input', NHWC), m.rand32('minimum/other', [3], 0.5))));
def('maximum_i32', 'MAXIMUM of int32 [2,3,5] in [-50, 50) and a constant int32 [5]', (m) =>
  m.output(binary(m, 'MAXIMUM', m.input('input', R3, 'INT32', { range: [-50, 50] }),
    m.constant('maximum/other', [5], 'INT32', [-20, 0, 7, -3, 30]))));
def('minimum_after_conv', 'CONV_2D then MINIMUM with a constant [1,5,1,1] (H broadcast) in NCHW', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  m.output(binary(m, 'MINIMUM', c, m.rand32('minimum/cap', [1, 5, 1, 1], 0.3)));
});

// FLOOR_DIV.
def('floor_div', 'FLOOR_DIV of float32 [2,3,5] in [-5, 5) by an input in [0.5, 2)', (m) =>
  m.output(binary(m, 'FLOOR_DIV', m.input('input_a', R3, 'FLOAT32', { range: [-5, 5] }),
    m.input('input_b', R3, 'FLOAT32', { range: [0.5, 2] }))));
def('floor_div_signs', 'FLOOR_DIV of float32 [2,3,4] by a constant [4] of mixed signs', (m) =>
  m.output(binary(m, 'FLOOR_DIV', m.input('input', [2, 3, 4], 'FLOAT32', { range: [-5, 5] }),
    m.constant('floor_div/divisor', [4], 'FLOAT32', [1.5, -2, 0.75, -0.5]))));
def('floor_div_i32', 'FLOOR_DIV of int32 [2,3,4] in [-50, 50) by a constant [4] of mixed signs', (m) =>
  m.output(binary(m, 'FLOOR_DIV', m.input('input', [2, 3, 4], 'INT32', { range: [-50, 50] }),
    m.constant('floor_div/divisor', [4], 'INT32', [3, -4, 5, -7]))));
def('floor_div_i32_inputs', 'FLOOR_DIV of two int32 [2,3,5] inputs, divisor in [1, 7)', (m) =>
  m.output(binary(m, 'FLOOR_DIV', m.input('input_a', R3, 'INT32', { range: [-30, 30] }),
    m.input('input_b', R3, 'INT32', { range: [1, 7] }))));
def('floor_div_after_conv', 'CONV_2D then FLOOR_DIV by a constant [C] of mixed signs (NCHW)', (m) => {
  const c = conv(m, m.input('input', NHWC, 'FLOAT32', { range: [-4, 4] }), 'conv', 4);
  m.output(binary(m, 'FLOOR_DIV', c, m.constant('floor_div/divisor', [4], 'FLOAT32', [0.25, -0.5, 0.125, -0.375])));
});

// SELECT / SELECT_V2.
def('select', 'SELECT (v1) with a bool [2,3,5] condition and two float inputs', (m) =>
  m.output(select(m, 'SELECT', m.input('condition', R3, 'BOOL'), m.input('input_a', R3), m.input('input_b', R3))));
def('select_rows', 'SELECT (v1) with a rank-1 bool [4] condition over x [4,3,5]: picks whole rows', (m) =>
  m.output(select(m, 'SELECT', m.input('condition', [4], 'BOOL'), m.input('input_a', [4, 3, 5]),
    m.input('input_b', [4, 3, 5]))));
def('select_v2_bcast', 'SELECT_V2 with a bool [3,1] condition, x [2,3,5] input and y a constant [5]', (m) =>
  m.output(select(m, 'SELECT_V2', m.input('condition', [3, 1], 'BOOL'), m.input('input', R3),
    m.rand32('select/y', [5], 0.5))));
def('select_v2_i32', 'SELECT_V2 of int32 [2,3,5] inputs with a bool [2,3,5] condition', (m) =>
  m.output(select(m, 'SELECT_V2', m.input('condition', R3, 'BOOL'),
    m.input('input_a', R3, 'INT32', { range: [-50, 50] }), m.input('input_b', R3, 'INT32', { range: [-50, 50] }))));
def('select_v2_after_conv', 'CONV_2D -> GREATER 0 -> SELECT_V2(cond, conv, constant [C]) in NCHW', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  const cond = binary(m, 'GREATER', c, m.constant('greater/zero', [], 'FLOAT32', [0]), 'positive');
  m.output(select(m, 'SELECT_V2', cond, c, m.rand32('select/y', [4], 0.5)));
});
def('select_rows_after_conv', 'SELECT (v1) with a rank-1 condition [2] over CONV_2D outputs [2,5,7,4] (NCHW)', (m) => {
  const x = m.input('input', [2, 5, 7, 3]);
  const a = conv(m, x, 'conv_a', 4);
  const b = conv(m, x, 'conv_b', 4);
  m.output(select(m, 'SELECT', m.input('condition', [2], 'BOOL', { value: [1, 0] }), a, b));
});

// ADD_N.
def('add_n', 'ADD_N of three float32 [2,3,5] inputs', (m) =>
  m.output((() => {
    const xs = [m.input('input_a', R3), m.input('input_b', R3), m.input('input_c', R3)];
    const y = m.tensor('output', R3);
    m.op('ADD_N', xs, [y]);
    return y;
  })()));
def('add_n_i32', 'ADD_N of two int32 [2,3,5] inputs and an int32 constant [2,3,5]', (m) => {
  const xs = [m.input('input_a', R3, 'INT32', { range: [-100, 100] }), m.input('input_b', R3, 'INT32', { range: [-100, 100] })];
  const v = [];
  for (let i = 0; i < 30; i++) v.push((i * 7) % 13 - 6);
  xs.push(m.constant('add_n/constant', R3, 'INT32', v));
  const y = m.tensor('output', R3, 'INT32');
  m.op('ADD_N', xs, [y]);
  m.output(y);
});
def('add_n_after_conv', 'ADD_N of two CONV_2D outputs and a constant [1,5,7,4] (NCHW)', (m) => {
  const x = m.input('input', NHWC);
  const xs = [conv(m, x, 'conv_a', 4), conv(m, x, 'conv_b', 4), m.rand32('add_n/constant', [1, 5, 7, 4], 0.5)];
  const y = m.tensor('output', [1, 5, 7, 4]);
  m.op('ADD_N', xs, [y]);
  m.output(y);
});

// Unary float ops after a conv (NCHW), chained.
def('unary_after_conv', 'CONV_2D -> EXP -> LOG -> SIN -> COS -> SQUARE -> NEG -> ELU (NCHW)', (m) => {
  let t = conv(m, m.input('input', NHWC), 'conv', 4);
  for (const op of ['EXP', 'LOG', 'SIN', 'COS', 'SQUARE', 'NEG', 'ELU']) t = unary(m, op, t, op === 'ELU' ? 'output' : op.toLowerCase());
  m.output(t);
});
def('rounding_after_conv', 'CONV_2D then CEIL, FLOOR and ROUND of it (three outputs, NCHW)', (m) => {
  const c = conv(m, m.input('input', NHWC, 'FLOAT32', { range: [-6, 6] }), 'conv', 4);
  for (const op of ['CEIL', 'FLOOR', 'ROUND']) m.output(unary(m, op, c, `output_${op.toLowerCase()}`));
});
def('gelu_after_conv', 'CONV_2D -> GELU (tanh form) -> CAST to int32 (NCHW)', (m) => {
  const c = conv(m, m.input('input', NHWC, 'FLOAT32', { range: [-8, 8] }), 'conv', 4);
  const g = unary(m, 'GELU', c, 'gelu', undefined, 'GeluOptions', { approximate: true });
  m.output(unary(m, 'CAST', g, 'output', 'INT32', 'CastOptions', castOpts('FLOAT32', 'INT32')));
});
def('zeros_like_after_conv', 'CONV_2D -> ZEROS_LIKE (NCHW)', (m) => {
  const c = conv(m, m.input('input', NHWC), 'conv', 4);
  m.output(unary(m, 'ZEROS_LIKE', c));
});

writeModels({ dir: JSON_DIR, prefix: 'math_', models: MODELS, specsFile: SPECS_FILE });
