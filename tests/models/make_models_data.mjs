#!/usr/bin/env node
// Writes the test models of the data-movement ops (SLICE, TILE, REVERSE_V2,
// BROADCAST_TO, GATHER_ND, SCATTER_ND, RANGE, WHERE, BATCH_MATMUL) as FlatBuffer JSON
// (against core/tflite/schema.fbs) into tests/models/json/data_*.json, plus
// tests/models/specs_data.json (input domains and fixed inputs).
//
//   node tests/models/make_models_data.mjs      # from the repository root
//
// Built with lib/model.mjs (Node >= 18, no dependencies): weights come from a
// PRNG seeded by the model name. It only touches data_*.json files and
// specs_data.json.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3 as conv, formatFlat, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_data.json');

// TFLite registers BROADCAST_TO from version 2 (version 1 was the Flex op).
const VERSIONS = { BROADCAST_TO: 2 };

// ---- op helpers (output shapes computed as TFLite does) -------------------------

function slice(m, x, name, begin, size) {
  const xs = m.shape(x);
  const out = xs.map((d, i) => (size[i] === -1 ? d - begin[i] : size[i]));
  const y = m.tensor(name, out, m.tensors[x].type);
  m.op('SLICE', [x, m.i32(`${name}/begin`, [begin.length], begin), m.i32(`${name}/size`, [size.length], size)], [y], 'SliceOptions');
  return y;
}

function tile(m, x, name, multiples) {
  const y = m.tensor(name, m.shape(x).map((d, i) => d * multiples[i]), m.tensors[x].type);
  m.op('TILE', [x, m.i32(`${name}/multiples`, [multiples.length], multiples)], [y], 'TileOptions');
  return y;
}

function reverse(m, x, name, axes) {
  const y = m.tensor(name, m.shape(x), m.tensors[x].type);
  m.op('REVERSE_V2', [x, m.i32(`${name}/axis`, [axes.length], axes)], [y], 'ReverseV2Options');
  return y;
}

function batchMatmul(m, a, b, name, adjX = false, adjY = false) {
  const as = m.shape(a), bs = m.shape(b);
  const rows = as[as.length - (adjX ? 1 : 2)];
  const cols = bs[bs.length - (adjY ? 2 : 1)];
  const ba = as.slice(0, -2), bb = bs.slice(0, -2);
  const r = Math.max(ba.length, bb.length);
  const batch = [];
  for (let i = 0; i < r; i++) {
    const da = ba[ba.length - r + i] ?? 1, db = bb[bb.length - r + i] ?? 1;
    batch.push(da === 1 ? db : da);
  }
  const y = m.tensor(name, [...batch, rows, cols]);
  m.op('BATCH_MATMUL', [a, b], [y], 'BatchMatMulOptions', { adj_x: adjX, adj_y: adjY, asymmetric_quantize_inputs: false });
  return y;
}

function add(m, a, b, name) {
  const y = m.tensor(name, m.shape(a), m.tensors[a].type);
  m.op('ADD', [a, b], [y], 'AddOptions', { fused_activation_function: 'NONE' });
  return y;
}

// ---- models ---------------------------------------------------------------------

const MODELS = [];
const model = (name, description, build) => MODELS.push({ name: `data_${name}`, description, build });

model('slice', 'SLICE of [2,5,7,3], begin [1,1,2,0] size [1,3,-1,2]', (m) => {
  m.outputs.push(slice(m, m.input('input', [2, 5, 7, 3]), 'output', [1, 1, 2, 0], [1, 3, -1, 2]));
});

model('slice_rank2_i32', 'SLICE of an int32 [6,9], begin [2,0] size [3,-1]', (m) => {
  m.outputs.push(slice(m, m.input('input', [6, 9], 'INT32'), 'output', [2, 0], [3, -1]));
});

model('slice_after_conv', 'CONV_2D [1,6,8,3]->5 then SLICE begin [0,1,2,1] size [-1,4,5,3] (NCHW)', (m) => {
  const c = conv(m, m.input('input', [1, 6, 8, 3]), 'conv', 5);
  m.outputs.push(slice(m, c, 'output', [0, 1, 2, 1], [-1, 4, 5, 3]));
});

model('tile', 'TILE of [2,3,4] by [3,1,2]', (m) => {
  m.outputs.push(tile(m, m.input('input', [2, 3, 4]), 'output', [3, 1, 2]));
});

model('tile_after_conv', 'CONV_2D [1,4,5,3]->6 then TILE by [2,1,3,2] (NCHW)', (m) => {
  const c = conv(m, m.input('input', [1, 4, 5, 3]), 'conv', 6);
  m.outputs.push(tile(m, c, 'output', [2, 1, 3, 2]));
});

model('reverse', 'REVERSE_V2 of [3,4,5] on axis 1', (m) => {
  m.outputs.push(reverse(m, m.input('input', [3, 4, 5]), 'output', [1]));
});

model('reverse_neg_axis_i32', 'REVERSE_V2 of an int32 [4,6] on axis -1', (m) => {
  m.outputs.push(reverse(m, m.input('input', [4, 6], 'INT32'), 'output', [-1]));
});

model('reverse_after_conv', 'CONV_2D [1,5,6,3]->4 then REVERSE_V2 on axis 3 (channels) and axis 1 (NCHW)', (m) => {
  const c = conv(m, m.input('input', [1, 5, 6, 3]), 'conv', 4);
  const r = reverse(m, c, 'reversed_c', [3]);
  m.outputs.push(reverse(m, r, 'output', [1]));
});

model('reverse_two_axes', 'REVERSE_V2 of [3,4,5] on axes 1 and 2 (TFLite needs contiguous axes)', (m) => {
  m.outputs.push(reverse(m, m.input('input', [3, 4, 5]), 'output', [1, 2]));
});

model('broadcast_to', 'BROADCAST_TO of [3,1,5] to constant [2,3,4,5]', (m) => {
  const x = m.input('input', [3, 1, 5]);
  const y = m.tensor('output', [2, 3, 4, 5]);
  m.op('BROADCAST_TO', [x, m.i32('shape', [4], [2, 3, 4, 5])], [y], 'BroadcastToOptions');
  m.outputs.push(y);
});

model('broadcast_to_const_input', 'BROADCAST_TO of a constant [4,1] to [3,4,6], plus a run-time input', (m) => {
  const y = m.tensor('broadcast', [3, 4, 6]);
  m.op('BROADCAST_TO', [m.rand32('table', [4, 1]), m.i32('shape', [3], [3, 4, 6])], [y], 'BroadcastToOptions');
  m.outputs.push(add(m, y, m.input('input', [3, 4, 6]), 'output'));
});

model('broadcast_to_runtime_shape', 'BROADCAST_TO of [4,1] to a run-time int32 shape (3, 4, 6)', (m) => {
  // The output shape follows a run-time input: pin tfjs-tflite (LiteRT.js returns stale buffers).
  m.spec.reference = 'tfjs';
  const x = m.input('input', [4, 1]);
  const y = m.tensor('output', [3, 4, 6]);
  m.tensors[y].shape_signature = [-1, -1, -1];
  m.op('BROADCAST_TO', [x, m.input('shape', [3], 'INT32', { value: [3, 4, 6] })], [y], 'BroadcastToOptions');
  m.outputs.push(y);
});

model('gather_nd', 'GATHER_ND of [4,5,6] with constant int32 indices [3,2]', (m) => {
  const x = m.input('input', [4, 5, 6]);
  const y = m.tensor('output', [3, 6]);
  m.op('GATHER_ND', [x, m.i32('indices', [3, 2], [3, 4, 0, 2, 1, 1])], [y], 'GatherNdOptions');
  m.outputs.push(y);
});

model('gather_nd_runtime_indices', 'GATHER_ND of a constant [5,4,3] with run-time int32 indices [2,4,3]', (m) => {
  const y = m.tensor('output', [2, 4]);
  m.op('GATHER_ND', [m.rand32('params', [5, 4, 3]), m.input('indices', [2, 4, 3], 'INT32', { range: [0, 3] })], [y], 'GatherNdOptions');
  m.outputs.push(y);
});

model('gather_nd_after_conv', 'CONV_2D [1,4,5,3]->6 then GATHER_ND with constant indices [2,3] (TFLite order)', (m) => {
  const c = conv(m, m.input('input', [1, 4, 5, 3]), 'conv', 6);
  const y = m.tensor('output', [2, 6]);
  m.op('GATHER_ND', [c, m.i32('indices', [2, 3], [0, 3, 1, 0, 2, 4])], [y], 'GatherNdOptions');
  m.outputs.push(y);
});

// SCATTER_ND sums updates that land on the same element: ONNX ScatterND with
// reduction 'add' needs opset 16; distinct constant indices convert at 13.
model('scatter_nd', 'SCATTER_ND of run-time updates [3,5] at distinct constant rows [3,1] of [6,5]', (m) => {
  const y = m.tensor('output', [6, 5]);
  m.op('SCATTER_ND', [m.i32('indices', [3, 1], [4, 0, 2]), m.input('updates', [3, 5]), m.i32('shape', [2], [6, 5])], [y], 'ScatterNdOptions');
  m.outputs.push(y);
});

model('scatter_nd_duplicates', 'SCATTER_ND with repeated constant indices [4,2] into [4,5,3] (sums; opset 16)', (m) => {
  m.spec.opset = 16;
  const y = m.tensor('output', [4, 5, 3]);
  m.op('SCATTER_ND', [m.i32('indices', [4, 2], [1, 3, 0, 4, 1, 3, 3, 2]), m.input('updates', [4, 3]), m.i32('shape', [3], [4, 5, 3])], [y], 'ScatterNdOptions');
  m.outputs.push(y);
});

model('scatter_nd_runtime_indices_i32', 'SCATTER_ND of int32 updates [6,4] at run-time int32 indices [6,1] into [5,4] (opset 16)', (m) => {
  m.spec.opset = 16;
  const y = m.tensor('output', [5, 4], 'INT32');
  m.op('SCATTER_ND', [m.input('indices', [6, 1], 'INT32', { range: [0, 3] }), m.input('updates', [6, 4], 'INT32'), m.i32('shape', [2], [5, 4])], [y], 'ScatterNdOptions');
  m.outputs.push(y);
});

model('range_f32', 'RANGE(0.5, 4.25, 0.75) float32 plus a run-time [5]', (m) => {
  const r = m.tensor('range', [5]);
  m.op('RANGE', [m.f32('start', [], [0.5]), m.f32('limit', [], [4.25]), m.f32('delta', [], [0.75])], [r], 'RangeOptions');
  m.outputs.push(add(m, r, m.input('input', [5]), 'output'));
});

model('range_i32', 'RANGE(17, 2, -3) int32 plus a run-time [5]', (m) => {
  const r = m.tensor('range', [5], 'INT32');
  m.op('RANGE', [m.i32('start', [], [17]), m.i32('limit', [], [2]), m.i32('delta', [], [-3])], [r], 'RangeOptions');
  m.outputs.push(add(m, r, m.input('input', [5], 'INT32'), 'output'));
});

model('range_runtime', 'RANGE of run-time int32 scalars (2, 23, 3) -> [7]', (m) => {
  // LiteRT.js returns a stale buffer for this dynamically shaped output: pin tfjs-tflite.
  m.spec.reference = 'tfjs';
  const s = m.input('start', [], 'INT32', { value: [2] });
  const l = m.input('limit', [], 'INT32', { value: [23] });
  const d = m.input('delta', [], 'INT32', { value: [3] });
  const y = m.tensor('output', [7], 'INT32');
  m.tensors[y].shape_signature = [-1];
  m.op('RANGE', [s, l, d], [y], 'RangeOptions');
  m.outputs.push(y);
});

const WHERE_VALUE = [1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0];
model('where', 'WHERE (one input) of a bool [2,3,4] with 9 true elements -> [9,3] int64', (m) => {
  const x = m.input('input', [2, 3, 4], 'BOOL', { value: WHERE_VALUE });
  const y = m.tensor('output', [WHERE_VALUE.filter((v) => v).length, 3], 'INT64');
  m.tensors[y].shape_signature = [-1, 3];
  m.op('WHERE', [x], [y], 'WhereOptions');
  m.spec.skip = 'WHERE has a data-dependent output shape: LiteRT.js returns a stale buffer for it and ' +
    'tfjs-tflite cannot read its int64 output (see tests/numeric/README.md)';
  m.outputs.push(y);
});

model('batch_matmul', 'BATCH_MATMUL [2,3,4] x [2,4,5], both run-time', (m) => {
  m.outputs.push(batchMatmul(m, m.input('lhs', [2, 3, 4]), m.input('rhs', [2, 4, 5]), 'output'));
});

model('batch_matmul_adj', 'BATCH_MATMUL adj_x adj_y: run-time [3,5,2] x run-time [3,4,5] -> [3,2,4]', (m) => {
  m.outputs.push(batchMatmul(m, m.input('lhs', [3, 5, 2]), m.input('rhs', [3, 4, 5]), 'output', true, true));
});

model('batch_matmul_const_adj_y', 'BATCH_MATMUL [2,1,3,4] x constant [5,6,4] adj_y (broadcast batch) -> [2,5,3,6]', (m) => {
  m.outputs.push(batchMatmul(m, m.input('lhs', [2, 1, 3, 4]), m.rand32('rhs', [5, 6, 4]), 'output', false, true));
});

model('batch_matmul_const_adj_x', 'BATCH_MATMUL constant [7,3] adj_x x run-time [2,7,5] -> [2,3,5]', (m) => {
  m.outputs.push(batchMatmul(m, m.rand32('lhs', [7, 3]), m.input('rhs', [2, 7, 5]), 'output', true, false));
});

model('batch_matmul_after_conv', 'CONV_2D [1,4,5,3]->6 then BATCH_MATMUL with a constant [6,7] (TFLite order)', (m) => {
  const c = conv(m, m.input('input', [1, 4, 5, 3]), 'conv', 6);
  m.outputs.push(batchMatmul(m, c, m.rand32('rhs', [6, 7]), 'output'));
});

writeModels({
  dir: JSON_DIR, prefix: 'data_', models: MODELS, specsFile: SPECS_FILE, style: formatFlat,
  modelOptions: { versions: VERSIONS },
});

