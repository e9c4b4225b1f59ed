#!/usr/bin/env node
// Writes the test models of the builtins of issue 34 (core/ops/indexing.cc,
// segment.cc, conv3d.cc, bitwise.cc, random.cc, stablehlo*.cc, and ATAN2,
// FAKE_QUANT, REDUCE_ANY/ALL, REAL/IMAG) as FlatBuffer JSON into
// tests/models/json/builtin_*.json, plus their specs into
// tests/models/specs_builtins.json. Same conventions as make_models.mjs (see
// README.md); only builtin_* files are touched.
//
//   node tests/models/make_models_builtins.mjs      # from the repository root
//
// References: LiteRT.js runs every TFLite builtin here (tfjs-tflite all but
// BITWISE_XOR, RIGHT_SHIFT, int64 tensors and the StableHLO ops); SEGMENT_SUM
// and UNIQUE have outputs of run-time size, which only tfjs-tflite returns, and
// LiteRT.js's RANK and int32 MULTINOMIAL outputs hold stale memory: those
// models pin tfjs-tflite.
// No runtime here runs the element-wise and shape StableHLO ops but ADD,
// MULTIPLY, MAXIMUM, MINIMUM and PAD: each StableHLO model has a twin of the
// same function in builtins (`_twin`, spec reference_model), written from the
// same description, whose constants the generator computes by hand (iota, the
// clamped dynamic-slice starts). The random ops are judged by their
// distribution (spec mode "distribution": two-sample Kolmogorov-Smirnov).
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { count, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_builtins.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `builtin_${name}`, description, build });

const NONE = { fused_activation_function: 'NONE' };

function op1(m, op, inputs, shape, type, name, optionsType, options) {
  const y = m.tensor(name, shape, type);
  m.op(op, inputs, [y], optionsType, options);
  return y;
}

// ---- ONE_HOT, REDUCE_ANY/ALL, RANK --------------------------------------------------

def('one_hot', 'ONE_HOT of int32 [3,4] in [-1,6) (negative and >= depth give off), depth 5, float on 2.5 / off -1, axis -1', (m) => {
  const i = m.input('indices', [3, 4], 'INT32', [-1, 6]);
  m.output(op1(m, 'ONE_HOT', [i, m.i32('depth', [], [5]), m.f32('on', [], [2.5]), m.f32('off', [], [-1])],
    [3, 4, 5], 'FLOAT32', 'output', 'OneHotOptions', { axis: -1 }));
});
def('one_hot_axis1_i64', 'ONE_HOT of int64 [4,3] in [0,7), depth 6, int32 on 7 / off 0, axis 1 -> [4,6,3]', (m) => {
  const i = m.input('indices', [4, 3], 'INT64', [0, 7]);
  m.output(op1(m, 'ONE_HOT', [i, m.i32('depth', [], [6]), m.i32('on', [], [7]), m.i32('off', [], [0])],
    [4, 6, 3], 'INT32', 'output', 'OneHotOptions', { axis: 1 }));
});
def('reduce_any', 'REDUCE_ANY of bool [3,4,5] over axis 1', (m) => {
  const x = m.input('input', [3, 4, 5], 'BOOL');
  m.output(op1(m, 'REDUCE_ANY', [x, m.i32('axes', [1], [1])], [3, 5], 'BOOL', 'output', 'ReducerOptions', { keep_dims: false }));
});
def('reduce_all_keep', 'REDUCE_ALL of bool [2,3,5] over axes [0,-1], keep_dims', (m) => {
  const x = m.input('input', [2, 3, 5], 'BOOL');
  m.output(op1(m, 'REDUCE_ALL', [x, m.i32('axes', [2], [0, -1])], [1, 3, 1], 'BOOL', 'output', 'ReducerOptions', { keep_dims: true }));
});
def('rank', 'RANK of float32 [2,3,5,7]: int32 4', (m) => {
  const x = m.input('input', [2, 3, 5, 7]);
  const y = m.tensor('output', [], 'INT32', { has_rank: true });
  m.op('RANK', [x], [y]);
  m.output(y);
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns 0 (a buffer it never writes)';
});

// ---- SPARSE_TO_DENSE, MATRIX_DIAG, MATRIX_SET_DIAG -------------------------------------

def('sparse_to_dense', 'SPARSE_TO_DENSE: 4 constant [row, col] indices into [3,5], float32 values input, default 0.5', (m) => {
  const idx = m.i32('indices', [4, 2], [0, 1, 1, 4, 2, 0, 2, 3]);
  const v = m.input('values', [4]);
  m.output(op1(m, 'SPARSE_TO_DENSE', [idx, m.i32('shape', [2], [3, 5]), v, m.f32('default', [], [0.5])],
    [3, 5], 'FLOAT32', 'output', 'SparseToDenseOptions', { validate_indices: false }));
});
def('sparse_to_dense_i32_1d', 'SPARSE_TO_DENSE: 1-D indices [3] into [7], int32 values input [3], default -1', (m) => {
  const idx = m.i32('indices', [3], [5, 0, 2]);
  const v = m.input('values', [3], 'INT32', [-20, 20]);
  m.output(op1(m, 'SPARSE_TO_DENSE', [idx, m.i32('shape', [1], [7]), v, m.i32('default', [], [-1])],
    [7], 'INT32', 'output', 'SparseToDenseOptions', { validate_indices: false }));
});
def('matrix_diag', 'MATRIX_DIAG of float32 [2,3,4] -> [2,3,4,4]', (m) =>
  m.output(op1(m, 'MATRIX_DIAG', [m.input('input', [2, 3, 4])], [2, 3, 4, 4], 'FLOAT32', 'output')));
def('matrix_diag_i32', 'MATRIX_DIAG of int32 [5] -> [5,5]', (m) =>
  m.output(op1(m, 'MATRIX_DIAG', [m.input('input', [5], 'INT32', [-9, 10])], [5, 5], 'INT32', 'output')));
def('matrix_set_diag', 'MATRIX_SET_DIAG of float32 [2,3,5] with diagonal [2,3] (wide)', (m) =>
  m.output(op1(m, 'MATRIX_SET_DIAG', [m.input('input', [2, 3, 5]), m.input('diagonal', [2, 3])], [2, 3, 5], 'FLOAT32', 'output')));
def('matrix_set_diag_tall_i32', 'MATRIX_SET_DIAG of int32 [2,5,3] with diagonal [2,3] (tall)', (m) =>
  m.output(op1(m, 'MATRIX_SET_DIAG', [m.input('input', [2, 5, 3], 'INT32', [-9, 10]), m.input('diagonal', [2, 3], 'INT32', [50, 60])],
    [2, 5, 3], 'INT32', 'output')));

// ---- segment reductions ---------------------------------------------------------------

def('segment_sum', 'SEGMENT_SUM of float32 [6,3,2] with constant sorted ids [0,0,1,2,2,2] (TFLite takes steps of 0 or 1) -> [3,3,2]', (m) => {
  const x = m.input('input', [6, 3, 2]);
  m.output(op1(m, 'SEGMENT_SUM', [x, m.i32('segment_ids', [6], [0, 0, 1, 2, 2, 2])], [3, 3, 2], 'FLOAT32', 'output'));
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns a stale buffer for the output it sizes at run time';
});
def('segment_sum_i32', 'SEGMENT_SUM of int32 [5,4] with constant ids [0,1,1,2,2] -> [3,4]', (m) => {
  const x = m.input('input', [5, 4], 'INT32', [-50, 50]);
  m.output(op1(m, 'SEGMENT_SUM', [x, m.i32('segment_ids', [5], [0, 1, 1, 2, 2])], [3, 4], 'INT32', 'output'));
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns a stale buffer for the output it sizes at run time';
});
function unsorted(name, description, op, shape, type, idsShape, ids, segments) {
  def(name, description, (m) => {
    const x = m.input('input', shape, type, type === 'INT32' ? [-50, 50] : undefined);
    const s = Array.isArray(ids) ? m.i32('segment_ids', idsShape, ids) : m.input('segment_ids', idsShape, 'INT32', ids.range);
    const out = [segments, ...shape.slice(idsShape.length)];
    m.output(op1(m, op, [x, s, m.i32('num_segments', [], [segments])], out, type, 'output'));
    // the float lowest/highest of an empty segment would widen the float rule's tolerance to ~1e34
    if (type === 'FLOAT32' && (op === 'UNSORTED_SEGMENT_MIN' || op === 'UNSORTED_SEGMENT_MAX')) m.spec.outputs = { output: { mode: 'exact' } };
    if (!Array.isArray(ids)) {
      m.spec.reference = 'tfjs';
      m.spec.note = 'run-time ids: LiteRT.js returns a stale buffer for the output it sizes at run time';
    }
  });
}
unsorted('unsorted_segment_sum', 'UNSORTED_SEGMENT_SUM of float32 [5,4], run-time ids in [0,4), 4 segments',
  'UNSORTED_SEGMENT_SUM', [5, 4], 'FLOAT32', [5], { range: [0, 4] }, 4);
unsorted('unsorted_segment_prod', 'UNSORTED_SEGMENT_PROD of float32 [6,2,3], constant ids [3,0,3,1,0,3], 5 segments (2 and 4 empty: 1)',
  'UNSORTED_SEGMENT_PROD', [6, 2, 3], 'FLOAT32', [6], [3, 0, 3, 1, 0, 3], 5);
unsorted('unsorted_segment_max_i32', 'UNSORTED_SEGMENT_MAX of int32 [7,3], run-time ids in [0,4), 4 segments (empty ones: the lowest int32)',
  'UNSORTED_SEGMENT_MAX', [7, 3], 'INT32', [7], { range: [0, 4] }, 4);
unsorted('unsorted_segment_min_2d_ids', 'UNSORTED_SEGMENT_MIN of float32 [2,3,4] with 2-D constant ids [2,3], 5 segments -> [5,4]',
  'UNSORTED_SEGMENT_MIN', [2, 3, 4], 'FLOAT32', [2, 3], [4, 0, 4, 1, 2, 0], 5);

// ---- CONV_3D, CONV_3D_TRANSPOSE -------------------------------------------------------

const conv3dOptions = (padding, s, d, act = 'NONE') => ({
  padding, stride_d: s[0], stride_h: s[1], stride_w: s[2],
  dilation_d_factor: d[0], dilation_h_factor: d[1], dilation_w_factor: d[2], fused_activation_function: act,
});
def('conv3d_same', 'CONV_3D SAME stride 1 on [1,4,5,6,2], filter [2,3,2,2,3] + bias', (m) => {
  const x = m.input('input', [1, 4, 5, 6, 2]);
  const w = m.rand32('conv/filter', [2, 3, 2, 2, 3], 0.5);
  m.output(op1(m, 'CONV_3D', [x, w, m.rand32('conv/bias', [3], 0.1)], [1, 4, 5, 6, 3], 'FLOAT32', 'output',
    'Conv3DOptions', conv3dOptions('SAME', [1, 1, 1], [1, 1, 1])));
});
def('conv3d_valid_s2_dilation_relu', 'CONV_3D VALID stride (2,1,2), dilation (1,2,1), RELU, on [2,7,6,5,3], filter [3,2,2,3,4], no bias', (m) => {
  const x = m.input('input', [2, 7, 6, 5, 3]);
  const w = m.rand32('conv/filter', [3, 2, 2, 3, 4], 0.5);
  m.output(op1(m, 'CONV_3D', [x, w], [2, 3, 4, 2, 4], 'FLOAT32', 'output',
    'Conv3DOptions', conv3dOptions('VALID', [2, 1, 2], [1, 2, 1], 'RELU')));
});
def('conv3d_same_s2_runtime_filter', 'CONV_3D SAME stride 2 on [1,3,5,6,2] with a run-time filter [1,2,2,2,4] (as conv3d_huge_im2col)', (m) => {
  const x = m.input('input', [1, 3, 5, 6, 2]);
  const w = m.input('filter', [1, 2, 2, 2, 4]);
  m.output(op1(m, 'CONV_3D', [x, w], [1, 2, 3, 3, 4], 'FLOAT32', 'output', 'Conv3DOptions', conv3dOptions('SAME', [2, 2, 2], [1, 1, 1])));
});
def('conv3d_transpose_same_s2', 'CONV_3D_TRANSPOSE SAME stride 2 of [1,3,4,5,2], filter DHWOI [2,3,3,4,2] + bias, output [1,6,8,10,4]', (m) => {
  const w = m.rand32('conv/filter', [2, 3, 3, 4, 2], 0.5);
  const x = m.input('input', [1, 3, 4, 5, 2]);
  m.output(op1(m, 'CONV_3D_TRANSPOSE', [m.i32('output_shape', [5], [1, 6, 8, 10, 4]), w, x, m.rand32('conv/bias', [4], 0.1)],
    [1, 6, 8, 10, 4], 'FLOAT32', 'output', 'Conv3DOptions', conv3dOptions('SAME', [2, 2, 2], [1, 1, 1])));
});
def('conv3d_transpose_valid', 'CONV_3D_TRANSPOSE VALID stride (1,2,1) of [2,2,3,4,3], filter [2,2,3,2,3], output [2,3,6,6,2]', (m) => {
  const w = m.rand32('conv/filter', [2, 2, 3, 2, 3], 0.5);
  const x = m.input('input', [2, 2, 3, 4, 3]);
  m.output(op1(m, 'CONV_3D_TRANSPOSE', [m.i32('output_shape', [5], [2, 3, 6, 6, 2]), w, x],
    [2, 3, 6, 6, 2], 'FLOAT32', 'output', 'Conv3DOptions', conv3dOptions('VALID', [1, 2, 1], [1, 1, 1])));
});

// ---- ATAN2, BROADCAST_ARGS, BUCKETIZE, DYNAMIC_UPDATE_SLICE -----------------------------

def('atan2', 'ATAN2 of float32 [3,4,5] in [-2,2) with exact zeros in both operands (every quadrant and axis)', (m) => {
  const y = []; const x = [];
  for (let i = 0; i < 60; i++) {
    y.push(i % 11 === 0 ? 0 : (((i * 7) % 23) - 11) / 5);
    x.push(i % 7 === 0 ? 0 : (((i * 5) % 19) - 9) / 4);
  }
  m.output(op1(m, 'ATAN2', [m.input('input_y', [3, 4, 5], 'FLOAT32', { value: y }), m.input('input_x', [3, 4, 5], 'FLOAT32', { value: x })],
    [3, 4, 5], 'FLOAT32', 'output'));
});
def('broadcast_args', 'BROADCAST_ARGS of int32 shapes [2,1,6,1] and [5,1,7] -> [2,5,6,7]', (m) => {
  const a = m.input('shape_a', [4], 'INT32', { value: [2, 1, 6, 1] });
  const b = m.input('shape_b', [3], 'INT32', { value: [5, 1, 7] });
  m.output(op1(m, 'BROADCAST_ARGS', [a, b], [4], 'INT32', 'output'));
});
def('bucketize', 'BUCKETIZE of float32 [3,4,5] in [-3,3) on boundaries [-2,-0.5,0,0.25,1.5]', (m) =>
  m.output(op1(m, 'BUCKETIZE', [m.input('input', [3, 4, 5], 'FLOAT32', [-3, 3])], [3, 4, 5], 'INT32', 'output',
    'BucketizeOptions', { boundaries: [-2, -0.5, 0, 0.25, 1.5] })));
def('bucketize_i64', 'BUCKETIZE of int64 [5,3] in [-10,10) on boundaries [-4.5,0,6]', (m) =>
  m.output(op1(m, 'BUCKETIZE', [m.input('input', [5, 3], 'INT64', [-10, 10])], [5, 3], 'INT32', 'output',
    'BucketizeOptions', { boundaries: [-4.5, 0, 6] })));
def('broadcast_args_i64', 'BROADCAST_ARGS of int64 shapes [3,1,5] and [4,1] -> [3,4,5]', (m) => {
  const a = m.input('shape_a', [3], 'INT64', { value: [3, 1, 5] });
  const b = m.input('shape_b', [2], 'INT64', { value: [4, 1] });
  m.output(op1(m, 'BROADCAST_ARGS', [a, b], [3], 'INT64', 'output'));
});
def('bucketize_i32', 'BUCKETIZE of int32 [4,6] in [-10,10) on boundaries [-5,0,3.5,7]', (m) =>
  m.output(op1(m, 'BUCKETIZE', [m.input('input', [4, 6], 'INT32', [-10, 10])], [4, 6], 'INT32', 'output',
    'BucketizeOptions', { boundaries: [-5, 0, 3.5, 7] })));
def('dynamic_update_slice', 'DYNAMIC_UPDATE_SLICE of float32 [4,5,6] with [2,3,6] at constant [1,3,0] (clamped to [1,2,0])', (m) => {
  const x = m.input('input', [4, 5, 6]);
  const u = m.input('update', [2, 3, 6], 'FLOAT32', [5, 6]);
  m.output(op1(m, 'DYNAMIC_UPDATE_SLICE', [x, u, m.i32('start', [3], [1, 3, 0])], [4, 5, 6], 'FLOAT32', 'output'));
});
def('dynamic_update_slice_i32_runtime_start', 'DYNAMIC_UPDATE_SLICE of int32 [5,7] with [2,4] at run-time int32 start [-1,2] (clamped to [0,2])', (m) => {
  const x = m.input('input', [5, 7], 'INT32', [-50, 50]);
  const u = m.input('update', [2, 4], 'INT32', [100, 200]);
  const s = m.input('start', [2], 'INT32', { value: [-1, 2] });
  m.output(op1(m, 'DYNAMIC_UPDATE_SLICE', [x, u, s], [5, 7], 'INT32', 'output'));
});

// ---- BITWISE_XOR, RIGHT_SHIFT ---------------------------------------------------------

const I32_RANGE = [-(2 ** 31), 2 ** 31 - 1];
def('bitwise_xor_i32', 'BITWISE_XOR of int32 [3,4,5] over the whole range', (m) =>
  m.output(op1(m, 'BITWISE_XOR', [m.input('input_a', [3, 4, 5], 'INT32', I32_RANGE), m.input('input_b', [3, 4, 5], 'INT32', I32_RANGE)],
    [3, 4, 5], 'INT32', 'output')));
def('bitwise_xor_u8_bcast', 'BITWISE_XOR of uint8 [4,6] and a broadcast [6]', (m) =>
  m.output(op1(m, 'BITWISE_XOR', [m.input('input_a', [4, 6], 'UINT8'), m.input('input_b', [6], 'UINT8')], [4, 6], 'UINT8', 'output')));
def('bitwise_xor_i8', 'BITWISE_XOR of int8 [5,3]', (m) =>
  m.output(op1(m, 'BITWISE_XOR', [m.input('input_a', [5, 3], 'INT8'), m.input('input_b', [5, 3], 'INT8')], [5, 3], 'INT8', 'output')));
def('bitwise_xor_i16', 'BITWISE_XOR of int16 [2,5,3] over the whole range', (m) =>
  m.output(op1(m, 'BITWISE_XOR', [m.input('input_a', [2, 5, 3], 'INT16'), m.input('input_b', [2, 5, 3], 'INT16')], [2, 5, 3], 'INT16', 'output')));
def('right_shift_i16', 'RIGHT_SHIFT of int16 [3,5] over the whole range by [-1,20) (clamped to [0,15])', (m) =>
  m.output(op1(m, 'RIGHT_SHIFT', [m.input('input_a', [3, 5], 'INT16'), m.input('input_b', [3, 5], 'INT16', [-1, 20])], [3, 5], 'INT16', 'output')));
def('right_shift_i32', 'RIGHT_SHIFT of int32 [3,4,5] over the whole range by [-2,40) (clamped to [0,31]): arithmetic shift', (m) =>
  m.output(op1(m, 'RIGHT_SHIFT', [m.input('input_a', [3, 4, 5], 'INT32', I32_RANGE), m.input('input_b', [3, 4, 5], 'INT32', [-2, 40])],
    [3, 4, 5], 'INT32', 'output')));
def('right_shift_u8', 'RIGHT_SHIFT of uint8 [4,6] by [0,10) (BitShift)', (m) =>
  m.output(op1(m, 'RIGHT_SHIFT', [m.input('input_a', [4, 6], 'UINT8'), m.input('input_b', [4, 6], 'UINT8', [0, 10])], [4, 6], 'UINT8', 'output')));
def('right_shift_i8', 'RIGHT_SHIFT of int8 [5,3] by [0,9)', (m) =>
  m.output(op1(m, 'RIGHT_SHIFT', [m.input('input_a', [5, 3], 'INT8'), m.input('input_b', [5, 3], 'INT8', [0, 9])], [5, 3], 'INT8', 'output')));

// ---- UNIQUE, FAKE_QUANT, REAL, IMAG ---------------------------------------------------

def('unique', 'UNIQUE of float32 [9] with repeats: 5 values in order of first occurrence, int32 idx', (m) => {
  const x = m.input('input', [9], 'FLOAT32', { value: [2.5, -1, 2.5, 0.75, 3, -1, 0.75, 4, 2.5] });
  const y = m.tensor('output', [5], 'FLOAT32', { shape_signature: [-1] });
  const idx = m.tensor('idx', [9], 'INT32');
  m.op('UNIQUE', [x], [y, idx], 'UniqueOptions', { idx_out_type: 'INT32' });
  m.output(y, idx);
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns a stale buffer for the output it sizes at run time';
});
def('unique_i32', 'UNIQUE of int32 [11] with repeats: 6 values in order of first occurrence, int32 idx', (m) => {
  const x = m.input('input', [11], 'INT32', { value: [7, -3, 7, 0, 12, -3, 5, 0, 9, 7, 12] });
  const y = m.tensor('output', [6], 'INT32', { shape_signature: [-1] });
  const idx = m.tensor('idx', [11], 'INT32');
  m.op('UNIQUE', [x], [y, idx], 'UniqueOptions', { idx_out_type: 'INT32' });
  m.output(y, idx);
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns a stale buffer for the output it sizes at run time';
});
def('fake_quant', 'FAKE_QUANT of float32 [3,4,5] in [-3,3), min -1.5 max 2, 8 bits', (m) =>
  m.output(op1(m, 'FAKE_QUANT', [m.input('input', [3, 4, 5], 'FLOAT32', [-3, 3])], [3, 4, 5], 'FLOAT32', 'output',
    'FakeQuantOptions', { min: -1.5, max: 2, num_bits: 8, narrow_range: false })));
def('fake_quant_4bit', 'FAKE_QUANT of float32 [2,3,5] in [-1,1), min -0.7 max 0.9, 4 bits (nudged zero point)', (m) =>
  m.output(op1(m, 'FAKE_QUANT', [m.input('input', [2, 3, 5])], [2, 3, 5], 'FLOAT32', 'output',
    'FakeQuantOptions', { min: -0.7, max: 0.9, num_bits: 4, narrow_range: false })));
for (const part of ['REAL', 'IMAG']) {
  def(`rfft2d_${part.toLowerCase()}`, `RFFT2D of float32 [2,3,8] (fft_length [1,8]) -> ${part} [2,1,5]`, (m) => {
    const x = m.input('input', [2, 3, 8]);
    const c = op1(m, 'RFFT2D', [x, m.i32('fft_length', [2], [1, 8])], [2, 1, 5], 'COMPLEX64', 'spectrum');
    m.output(op1(m, part, [c], [2, 1, 5], 'FLOAT32', 'output'));
  });
}

// ---- EMBEDDING_LOOKUP_SPARSE ----------------------------------------------------------

function lookupSparse(name, description, combiner, indices, dense, paramsShape) {
  def(name, description, (m) => {
    const n = indices.length;
    const ids = m.i32('ids', [n], indices.map((_, i) => (i * 5 + 2) % paramsShape[0]));
    const idx = m.i32('indices', [n, dense.length], indices.flat());
    const w = m.input('weights', [n], 'FLOAT32', [0.25, 2]);
    const p = m.input('params', paramsShape);
    const out = [...dense.slice(0, -1), ...paramsShape.slice(1)];
    m.output(op1(m, 'EMBEDDING_LOOKUP_SPARSE', [ids, idx, m.i32('dense_shape', [dense.length], dense), w, p], out, 'FLOAT32', 'output',
      'EmbeddingLookupSparseOptions', { combiner }));
  });
}
lookupSparse('embedding_lookup_sparse_sum', 'EMBEDDING_LOOKUP_SPARSE SUM: 5 lookups into rows 0 and 2 of dense_shape [3,4] (row 1 empty), params [6,2,3]',
  'SUM', [[0, 0], [0, 1], [2, 0], [2, 1], [2, 3]], [3, 4], [6, 2, 3]);
lookupSparse('embedding_lookup_sparse_mean', 'EMBEDDING_LOOKUP_SPARSE MEAN: 4 lookups, dense_shape [4,5], params [7,3]',
  'MEAN', [[0, 0], [1, 2], [1, 4], [3, 0]], [4, 5], [7, 3]);
lookupSparse('embedding_lookup_sparse_sqrtn_rank3', 'EMBEDDING_LOOKUP_SPARSE SQRTN: 6 lookups with 3-column indices, dense_shape [2,3,4], params [5,4] -> [2,3,4]',
  'SQRTN', [[0, 0, 0], [0, 0, 2], [0, 2, 1], [1, 1, 0], [1, 1, 3], [1, 2, 2]], [2, 3, 4], [5, 4]);

// ---- the random ops: same distribution, other values ---------------------------------

const DISTRIBUTION = { output: { mode: 'distribution' } };
def('random_uniform', 'RANDOM_UNIFORM [64,50] seeded (7, 3): compared as a distribution', (m) => {
  m.output(op1(m, 'RANDOM_UNIFORM', [m.i32('shape', [2], [64, 50])], [64, 50], 'FLOAT32', 'output', 'RandomOptions', { seed: 7, seed2: 3 }));
  m.spec.outputs = DISTRIBUTION;
});
def('random_uniform_scalar', 'RANDOM_UNIFORM of shape [] (a scalar: ONNX draws [1] and reshapes), seeded: pins the shape (one value says nothing of a distribution)', (m) => {
  const y = m.tensor('output', [], 'FLOAT32', { has_rank: true });
  m.op('RANDOM_UNIFORM', [m.i32('shape', [0], [])], [y], 'RandomOptions', { seed: 5, seed2: 0 });
  m.output(y);
  m.spec.outputs = DISTRIBUTION;
});
def('random_standard_normal', 'RANDOM_STANDARD_NORMAL [40,60] seeded by seed2 alone (a deterministic test): compared as a distribution', (m) => {
  m.output(op1(m, 'RANDOM_STANDARD_NORMAL', [m.i32('shape', [2], [40, 60])], [40, 60], 'FLOAT32', 'output', 'RandomOptions', { seed: 0, seed2: 9 }));
  m.spec.outputs = DISTRIBUTION;
});
def('multinomial', 'MULTINOMIAL of logits [3,5] in [-2,2), 400 int32 samples per row, seeded: compared as a distribution', (m) => {
  const logits = m.input('logits', [3, 5], 'FLOAT32', [-2, 2]);
  m.output(op1(m, 'MULTINOMIAL', [logits, m.i32('num_samples', [], [400])], [3, 400], 'INT32', 'output', 'RandomOptions', { seed: 11, seed2: 5 }));
  m.spec.outputs = DISTRIBUTION;
  m.spec.reference = 'tfjs';
  m.spec.note = 'LiteRT.js returns classes outside [0, 5) (stale memory) for int32 MULTINOMIAL samples';
});

// ---- StableHLO: each model and its builtin twin from one description -------------------

// Builds the StableHLO model (twin false) or its builtin twin (twin true).
function stablehlo(name, description, build) {
  def(name, description, (m) => {
    build(m, false);
    m.spec.reference_model = `builtin_${name}_twin.tflite`;
  });
  def(`${name}_twin`, `builtin twin of builtin_${name}: the same function in TFLite builtins`, (m) => build(m, true));
}

const B3 = [2, 3, 5];
stablehlo('shlo_arith', 'STABLEHLO_ADD, SUBTRACT, MULTIPLY, DIVIDE, MAXIMUM, MINIMUM, POWER, REMAINDER of float32 [2,3,5] (fmod: the dividend\'s sign)', (m, twin) => {
  const a = m.input('input_a', B3, 'FLOAT32', [0.5, 3]);
  const b = m.input('input_b', B3, 'FLOAT32', [-2, 2]);
  const c = m.input('input_c', B3, 'FLOAT32', [0.5, 2]);
  const neg = m.input('input_d', B3, 'FLOAT32', [-4, 4]);
  const ops = [['add', 'ADD', 'AddOptions', a, b], ['subtract', 'SUB', 'SubOptions', a, b], ['multiply', 'MUL', 'MulOptions', a, b],
    ['divide', 'DIV', 'DivOptions', b, c], ['maximum', 'MAXIMUM'], ['minimum', 'MINIMUM'], ['power', 'POW', undefined, a, b]];
  for (const [o, builtin, opts, x = a, y = b] of ops) {
    const shlo = `STABLEHLO_${o.toUpperCase()}`;
    m.output(twin ? op1(m, builtin, [x, y], B3, 'FLOAT32', `output_${o}`, opts, opts ? NONE : undefined)
      : op1(m, shlo, [x, y], B3, 'FLOAT32', `output_${o}`));
  }
  // remainder(d, c) = d - c * trunc(d / c); trunc(q) = sign(q) * floor(|q|)
  if (!twin) {
    m.output(op1(m, 'STABLEHLO_REMAINDER', [neg, c], B3, 'FLOAT32', 'output_remainder'));
  } else {
    const q = op1(m, 'DIV', [neg, c], B3, 'FLOAT32', 'q', 'DivOptions', NONE);
    const t = op1(m, 'MUL', [op1(m, 'SIGN', [q], B3, 'FLOAT32', 'sign'), op1(m, 'FLOOR', [op1(m, 'ABS', [q], B3, 'FLOAT32', 'abs')], B3, 'FLOAT32', 'floor')],
      B3, 'FLOAT32', 'trunc', 'MulOptions', NONE);
    m.output(op1(m, 'SUB', [neg, op1(m, 'MUL', [c, t], B3, 'FLOAT32', 'multiple', 'MulOptions', NONE)], B3, 'FLOAT32', 'output_remainder', 'SubOptions', NONE));
  }
});
const I3 = [3, 4, 2];
stablehlo('shlo_arith_i32', 'STABLEHLO_ADD, SUBTRACT, MULTIPLY, MAXIMUM, MINIMUM, ABS, NEGATE, DIVIDE, REMAINDER (constant divisors of both signs), POWER, COMPARE (SIGNED GT, NE), CONVERT to float32 of int32 [3,4,2]', (m, twin) => {
  const a = m.input('input_a', I3, 'INT32', [-1000, 1000]);
  const b = m.input('input_b', I3, 'INT32', [-1000, 1000]);
  const ops = [['add', 'ADD', 'AddOptions'], ['subtract', 'SUB', 'SubOptions'], ['multiply', 'MUL', 'MulOptions'], ['maximum', 'MAXIMUM'], ['minimum', 'MINIMUM']];
  for (const [o, builtin, opts] of ops)
    m.output(twin ? op1(m, builtin, [a, b], I3, 'INT32', `output_${o}`, opts, opts ? NONE : undefined)
      : op1(m, `STABLEHLO_${o.toUpperCase()}`, [a, b], I3, 'INT32', `output_${o}`));
  m.output(op1(m, twin ? 'ABS' : 'STABLEHLO_ABS', [a], I3, 'INT32', 'output_abs'));
  m.output(op1(m, twin ? 'NEG' : 'STABLEHLO_NEGATE', [b], I3, 'INT32', 'output_negate'));
  // Integer division truncates toward zero in StableHLO and in TFLite's int32 DIV; the
  // remainder takes the dividend's sign: a - d * (a / d). Divisors: nonzero, both signs.
  const d = m.i32('divisor', I3, Array.from({ length: count(I3) }, (_, i) => ((i * 7) % 13 - 6) || 7));
  const quotient = op1(m, twin ? 'DIV' : 'STABLEHLO_DIVIDE', [a, d], I3, 'INT32', 'output_divide', twin ? 'DivOptions' : undefined, twin ? NONE : undefined);
  m.output(quotient);
  m.output(twin ? op1(m, 'SUB', [a, op1(m, 'MUL', [d, quotient], I3, 'INT32', 'multiple', 'MulOptions', NONE)], I3, 'INT32', 'output_remainder', 'SubOptions', NONE)
    : op1(m, 'STABLEHLO_REMAINDER', [a, d], I3, 'INT32', 'output_remainder'));
  // small bases, exponents 0..3: exact in int32
  const base = m.input('input_base', I3, 'INT32', [-9, 10]);
  const exponent = m.input('input_exponent', I3, 'INT32', [0, 4]);
  m.output(op1(m, twin ? 'POW' : 'STABLEHLO_POWER', [base, exponent], I3, 'INT32', 'output_power'));
  // SIGNED comparisons and int32 -> float32
  for (const [dir, builtin] of [['gt', 'GREATER'], ['ne', 'NOT_EQUAL']]) {
    m.output(twin ? op1(m, builtin, [base, exponent], I3, 'BOOL', `output_${dir}`)
      : op1(m, 'STABLEHLO_COMPARE', [base, exponent], I3, 'BOOL', `output_${dir}`, 'StablehloCompareOptions',
        { comparison_direction: `STABLEHLO_COMPARISON_DIRECTION_${dir.toUpperCase()}`, compare_type: 'STABLEHLO_COMPARISON_TYPE_SIGNED' }));
  }
  m.output(twin ? op1(m, 'CAST', [a], I3, 'FLOAT32', 'output_convert', 'CastOptions', { in_data_type: 'INT32', out_data_type: 'FLOAT32' })
    : op1(m, 'STABLEHLO_CONVERT', [a], I3, 'FLOAT32', 'output_convert'));
});
const U3 = [3, 4, 5];
stablehlo('shlo_unary', 'STABLEHLO_ABS, NEGATE, EXPONENTIAL, TANH, LOGISTIC, FLOOR, COSINE of [-3,3), LOG and RSQRT of [0.1,4), float32 [3,4,5]', (m, twin) => {
  const x = m.input('input', U3, 'FLOAT32', [-3, 3]);
  const p = m.input('input_positive', U3, 'FLOAT32', [0.1, 4]);
  const ops = [['abs', 'ABS', x], ['negate', 'NEG', x], ['exponential', 'EXP', x], ['tanh', 'TANH', x], ['logistic', 'LOGISTIC', x],
    ['floor', 'FLOOR', x], ['cosine', 'COS', x], ['log', 'LOG', p], ['rsqrt', 'RSQRT', p]];
  for (const [o, builtin, v] of ops)
    m.output(op1(m, twin ? builtin : `STABLEHLO_${o.toUpperCase()}`, [v], U3, 'FLOAT32', `output_${o}`));
});
const L3 = [2, 5, 3];
const DIRECTIONS = [['eq', 'EQUAL'], ['ne', 'NOT_EQUAL'], ['ge', 'GREATER_EQUAL'], ['gt', 'GREATER'], ['le', 'LESS_EQUAL'], ['lt', 'LESS']];
stablehlo('shlo_logic', 'STABLEHLO_COMPARE (every direction), AND, OR (bool), SELECT, CONVERT (float32 -> int32, truncating), CLAMP (scalar bounds) on [2,5,3]', (m, twin) => {
  const a = m.input('input_a', L3, 'FLOAT32', { value: Array.from({ length: 30 }, (_, i) => ((i * 7) % 9) - 4) });
  const b = m.input('input_b', L3, 'FLOAT32', { value: Array.from({ length: 30 }, (_, i) => ((i * 5) % 7) - 3) });
  const p = m.input('input_p', L3, 'BOOL');
  const q = m.input('input_q', L3, 'BOOL');
  const x = m.input('input_x', L3, 'FLOAT32', [-3, 3]);
  let lt;
  for (const [d, builtin] of DIRECTIONS) {
    const y = twin ? op1(m, builtin, [a, b], L3, 'BOOL', `output_${d}`)
      : op1(m, 'STABLEHLO_COMPARE', [a, b], L3, 'BOOL', `output_${d}`, 'StablehloCompareOptions',
        { comparison_direction: `STABLEHLO_COMPARISON_DIRECTION_${d.toUpperCase()}`, compare_type: 'STABLEHLO_COMPARISON_TYPE_FLOAT' });
    if (d === 'lt') lt = y;
    m.output(y);
  }
  m.output(op1(m, twin ? 'LOGICAL_AND' : 'STABLEHLO_AND', [p, q], L3, 'BOOL', 'output_and'));
  m.output(op1(m, twin ? 'LOGICAL_OR' : 'STABLEHLO_OR', [p, q], L3, 'BOOL', 'output_or'));
  m.output(op1(m, twin ? 'SELECT_V2' : 'STABLEHLO_SELECT', [lt, x, a], L3, 'FLOAT32', 'output_select'));
  m.output(twin ? op1(m, 'CAST', [x], L3, 'INT32', 'output_convert', 'CastOptions', { in_data_type: 'FLOAT32', out_data_type: 'INT32' })
    : op1(m, 'STABLEHLO_CONVERT', [x], L3, 'INT32', 'output_convert'));
  const lo = m.f32('clamp/min', [], [-1.25]);
  const hi = m.f32('clamp/max', [], [0.75]);
  m.output(twin ? op1(m, 'MINIMUM', [op1(m, 'MAXIMUM', [x, lo], L3, 'FLOAT32', 'low'), hi], L3, 'FLOAT32', 'output_clamp')
    : op1(m, 'STABLEHLO_CLAMP', [lo, x, hi], L3, 'FLOAT32', 'output_clamp'));
});
// a AND b = (a + b - (a XOR b)) / 2, a OR b = (a + b + (a XOR b)) / 2, exactly.
stablehlo('shlo_bitwise_i32', 'STABLEHLO_AND and OR of int32 [4,3,2] in [-2^30, 2^30) (bit by bit); the twin: (a + b -+ (a XOR b)) / 2', (m, twin) => {
  const s = [4, 3, 2];
  const a = m.input('input_a', s, 'INT32', [-(2 ** 30), 2 ** 30]);
  const b = m.input('input_b', s, 'INT32', [-(2 ** 30), 2 ** 30]);
  if (!twin) {
    m.output(op1(m, 'STABLEHLO_AND', [a, b], s, 'INT32', 'output_and'));
    m.output(op1(m, 'STABLEHLO_OR', [a, b], s, 'INT32', 'output_or'));
    return;
  }
  const x = op1(m, 'BITWISE_XOR', [a, b], s, 'INT32', 'xor');
  const sum = op1(m, 'ADD', [a, b], s, 'INT32', 'sum', 'AddOptions', NONE);
  const two = m.i32('two', [], [2]);
  m.output(op1(m, 'FLOOR_DIV', [op1(m, 'SUB', [sum, x], s, 'INT32', 'and2', 'SubOptions', NONE), two], s, 'INT32', 'output_and'));
  m.output(op1(m, 'FLOOR_DIV', [op1(m, 'ADD', [sum, x], s, 'INT32', 'or2', 'AddOptions', NONE), two], s, 'INT32', 'output_or'));
});
const S3 = [2, 3, 4];
function shloShape(name, T) {
  stablehlo(name, `STABLEHLO_RESHAPE, TRANSPOSE, BROADCAST_IN_DIM (dimensions [2,1]), CONCATENATE, SLICE (stride 2), DYNAMIC_SLICE (a start clamped), DYNAMIC_UPDATE_SLICE (run-time starts), PAD (negative low edge), IOTA of ${T.toLowerCase()} [2,3,4]`, (m, twin) => {
  const x = m.input('input', S3, T);
  const z = m.input('input_z', [5, 3], T);
  const y = m.input('input_y', [2, 2, 4], T);
  const u = m.input('update', [1, 2, 3], T, T === 'FLOAT32' ? [5, 6] : [50, 60]);
  const i0 = m.input('start_0', [], 'INT32', { value: [1] });
  const i1 = m.input('start_1', [], 'INT32', { value: [2] });
  const i2 = m.input('start_2', [], 'INT32', { value: [-3] });
  m.output(op1(m, twin ? 'RESHAPE' : 'STABLEHLO_RESHAPE', twin ? [x, m.i32('reshape/shape', [2], [6, 4])] : [x], [6, 4], T, 'output_reshape'));
  m.output(twin ? op1(m, 'TRANSPOSE', [x, m.i32('transpose/perm', [3], [2, 0, 1])], [4, 2, 3], T, 'output_transpose')
    : op1(m, 'STABLEHLO_TRANSPOSE', [x], [4, 2, 3], T, 'output_transpose', 'StablehloTransposeOptions', { permutation: [2, 0, 1] }));
  // z [5,3] into [2,3,5]: z's axis 0 -> result axis 2, axis 1 -> 1
  if (twin) {
    const t = op1(m, 'TRANSPOSE', [z, m.i32('bcast/perm', [2], [1, 0])], [3, 5], T, 'bcast/t');
    const r = op1(m, 'RESHAPE', [t, m.i32('bcast/shape', [3], [1, 3, 5])], [1, 3, 5], T, 'bcast/r');
    m.output(op1(m, 'CONCATENATION', [r, r], [2, 3, 5], T, 'output_broadcast_in_dim', 'ConcatenationOptions', { axis: 0, ...NONE }));
  } else {
    m.output(op1(m, 'STABLEHLO_BROADCAST_IN_DIM', [z], [2, 3, 5], T, 'output_broadcast_in_dim', 'StablehloBroadcastInDimOptions', { broadcast_dimensions: [2, 1] }));
  }
  m.output(twin ? op1(m, 'CONCATENATION', [x, y], [2, 5, 4], T, 'output_concatenate', 'ConcatenationOptions', { axis: 1, ...NONE })
    : op1(m, 'STABLEHLO_CONCATENATE', [x, y], [2, 5, 4], T, 'output_concatenate', 'StablehloConcatenateOptions', { dimension: 1 }));
  m.output(twin ? op1(m, 'STRIDED_SLICE', [x, m.i32('slice/begin', [3], [0, 1, 0]), m.i32('slice/end', [3], [2, 3, 4]), m.i32('slice/strides', [3], [1, 1, 2])],
    [2, 2, 2], T, 'output_slice', 'StridedSliceOptions', {})
    : op1(m, 'STABLEHLO_SLICE', [x], [2, 2, 2], T, 'output_slice', 'StablehloSliceOptions', { start_indices: [0, 1, 0], limit_indices: [2, 3, 4], strides: [1, 1, 2] }));
  // dynamic slice of size [1,2,3] at constant starts [1, 2, -3]: clamped to [1, 1, 0]
  if (twin) {
    m.output(op1(m, 'SLICE', [x, m.i32('dslice/begin', [3], [1, 1, 0]), m.i32('dslice/size', [3], [1, 2, 3])], [1, 2, 3], T, 'output_dynamic_slice'));
  } else {
    const starts = [m.i32('dslice/start0', [], [1]), m.i32('dslice/start1', [], [2]), m.i32('dslice/start2', [], [-3])];
    m.output(op1(m, 'STABLEHLO_DYNAMIC_SLICE', [x, ...starts], [1, 2, 3], T, 'output_dynamic_slice', 'StablehloDynamicSliceOptions', { slice_sizes: [1, 2, 3] }));
  }
  if (twin) {
    const start = op1(m, 'PACK', [i0, i1, i2], [3], 'INT32', 'dus/start', 'PackOptions', { values_count: 3, axis: 0 });
    m.output(op1(m, 'DYNAMIC_UPDATE_SLICE', [x, u, start], S3, T, 'output_dynamic_update_slice'));
  } else {
    m.output(op1(m, 'STABLEHLO_DYNAMIC_UPDATE_SLICE', [x, u, i0, i1, i2], S3, T, 'output_dynamic_update_slice'));
  }
  // pad: low [1,-1,0], high [0,2,1] with 0.5 -> [3,4,5]
  const v = m.constant('pad/value', [], T, [T === 'FLOAT32' ? 0.5 : -7]);
  if (twin) {
    const padded = op1(m, 'PADV2', [x, m.i32('pad/paddings', [3, 2], [1, 0, 0, 2, 0, 1]), v], [3, 5, 5], T, 'pad/padded');
    m.output(op1(m, 'SLICE', [padded, m.i32('pad/begin', [3], [0, 1, 0]), m.i32('pad/size', [3], [3, 4, 5])], [3, 4, 5], T, 'output_pad'));
  } else {
    m.output(op1(m, 'STABLEHLO_PAD', [x, v], [3, 4, 5], T, 'output_pad', 'StablehloPadOptions',
      { edge_padding_low: [1, -1, 0], edge_padding_high: [0, 2, 1], interior_padding: [0, 0, 0] }));
  }
  // iota along axis 1 of [2,3,4], added to x
  const iota = twin ? m.constant('iota', S3, T, Array.from({ length: count(S3) }, (_, i) => Math.floor(i / 4) % 3))
    : op1(m, 'STABLEHLO_IOTA', [], S3, T, 'iota', 'StablehloIotaOptions', { iota_dimension: 1 });
  m.output(op1(m, 'ADD', [x, iota], S3, T, 'output_iota', 'AddOptions', NONE));
  });
}
shloShape('shlo_shape', 'FLOAT32');
shloShape('shlo_shape_i32', 'INT32');

writeModels({ dir: JSON_DIR, prefix: 'builtin_', models: MODELS, specsFile: SPECS_FILE });
