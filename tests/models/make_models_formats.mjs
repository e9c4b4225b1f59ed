#!/usr/bin/env node
// Writes the test models of the TFLite format's features beyond one plain
// subgraph (tests/models/json/formats_*.json, tests/models/specs_formats.json):
// several subgraphs with WHILE / IF / CALL_ONCE, resource and variable tensors,
// SignatureDefs, metadata entries, a custom op with FlexBuffer options, sparse
// constants (CSR and block-sparse; float32, float16, int8; uint8, uint16 and
// int32 index vectors), constants without a shape (scalars), per-axis
// quantization and float16 buffers. Each shows
// one feature of lib/model.mjs.
//
//   node tests/models/make_models_formats.mjs      # from the repository root
//
// Every model also says what TFLite computes with it (`m.runs`: inputs and the
// expected outputs of one or more invocations of one interpreter):
// tests/models/test/formats.test.mjs runs the compiled models in LiteRT.js and
// checks them, which shows that TFLite reads each feature as written.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { count, flex, roundF16, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_formats.json');

export const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `formats_${name}`, description, build });

// Inputs of the checks: multiples of 1/8 in [-2, 2), exact in every float type.
function values(m, n) {
  return Array.from({ length: n }, () => Math.floor(m.rand() * 32 - 16) / 8);
}

const add = (a, b) => a.map((x, i) => x + b[i]);

// A dense array with the given fraction of zeros (the others multiples of 1/8,
// never zero), for the sparse constants.
function sparseValues(m, n, zeros, lo = -2, hi = 2) {
  return Array.from({ length: n }, () => {
    if (m.rand() < zeros) return 0;
    const v = Math.floor(m.rand() * (hi - lo) * 8 + lo * 8) / 8;
    return v === 0 ? 0.125 : v;
  });
}

function binary(g, op, a, b, name, optionsType) {
  const y = g.tensor(name, g.shape(a), g.type(a));
  g.op(op, [a, b], [y], optionsType, optionsType && { fused_activation_function: 'NONE' });
  return y;
}

// ---- several subgraphs -------------------------------------------------------------

def('while', 'WHILE (cond: counter < 3, body: counter + 1, x + x) of a constant int32 counter and an input [2,3]: x * 8', (m) => {
  const shape = [2, 3];
  const cond = m.subgraph('cond', (g) => {
    const i = g.input('counter', [], 'INT32');
    g.input('x', shape);
    const limit = g.i32('limit', [], [3]);
    const c = g.tensor('less', [], 'BOOL');
    g.op('LESS', [i, limit], [c], 'LessOptions', {});
    g.output(c);
  });
  const body = m.subgraph('body', (g) => {
    const i = g.input('counter', [], 'INT32');
    const x = g.input('x', shape);
    const i1 = binary(g, 'ADD', i, g.i32('one', [], [1]), 'counter_next', 'AddOptions');
    const x1 = binary(g, 'ADD', x, x, 'x_next', 'AddOptions');
    g.output(i1, x1);
  });
  const x = m.input('input', shape);
  const counter = m.i32('counter', [], [0]);
  const counterOut = m.tensor('counter_out', [], 'INT32');
  const y = m.tensor('output', shape);
  m.op('WHILE', [counter, x], [counterOut, y], 'WhileOptions', { cond_subgraph_index: cond, body_subgraph_index: body });
  m.output(y);
  const input = values(m, count(shape));
  m.runs = [{ inputs: { input }, outputs: { output: input.map((v) => v * 8) } }];
});

def('if', 'IF on a bool input: then x + 1, else x * x, of an input [2,3]', (m) => {
  const shape = [2, 3];
  const thenBranch = m.subgraph('then', (g) => {
    const x = g.input('x', shape);
    g.output(binary(g, 'ADD', x, g.f32('one', [1], [1]), 'x_plus_one', 'AddOptions'));
  });
  const elseBranch = m.subgraph('else', (g) => {
    const x = g.input('x', shape);
    g.output(binary(g, 'MUL', x, x, 'x_squared', 'MulOptions'));
  });
  const c = m.input('cond', [], 'BOOL', { value: [1] });
  const x = m.input('input', shape);
  const y = m.tensor('output', shape);
  m.op('IF', [c, x], [y], 'IfOptions', { then_subgraph_index: thenBranch, else_subgraph_index: elseBranch });
  m.output(y);
  const input = values(m, count(shape));
  m.runs = [
    { inputs: { cond: [1], input }, outputs: { output: input.map((v) => v + 1) } },
    { inputs: { cond: [0], input }, outputs: { output: input.map((v) => v * v) } },
  ];
});

// Resource variables as TensorFlow 2 writes them: a CALL_ONCE subgraph assigns
// the initial value; every invocation adds its input to the variable.
def('resource_variable', 'CALL_ONCE (init subgraph assigns a constant) then VAR_HANDLE -> READ_VARIABLE + input -> ASSIGN_VARIABLE: an accumulator [2,3]', (m) => {
  const shape = [2, 3];
  const initial = values(m, count(shape));
  const init = m.subgraph('init', (g) => {
    const h = g.tensor('handle', [], 'RESOURCE');
    g.op('VAR_HANDLE', [], [h], 'VarHandleOptions', { container: '', shared_name: 'accumulator' });
    g.op('ASSIGN_VARIABLE', [h, g.f32('initial', shape, initial)], [], 'AssignVariableOptions', {});
  });
  m.op('CALL_ONCE', [], [], 'CallOnceOptions', { init_subgraph_index: init });
  const x = m.input('input', shape);
  const h = m.tensor('handle', [], 'RESOURCE');
  m.op('VAR_HANDLE', [], [h], 'VarHandleOptions', { container: '', shared_name: 'accumulator' });
  const v = m.tensor('value', shape);
  m.op('READ_VARIABLE', [h], [v], 'ReadVariableOptions', {});
  const y = binary(m, 'ADD', v, x, 'output', 'AddOptions');
  m.op('ASSIGN_VARIABLE', [h, y], [], 'AssignVariableOptions', {});
  m.output(y);
  const a = values(m, count(shape));
  const b = values(m, count(shape));
  m.runs = [
    { inputs: { input: a }, outputs: { output: add(initial, a) } },
    { inputs: { input: b }, outputs: { output: add(add(initial, a), b) } },
  ];
});

// A variable tensor (Tensor.is_variable): the hidden state of an RNN, which
// the op updates in place; zero at the first invocation. LiteRT.js 2.5.3
// refuses variable tensors ("Variable tensors not yet supported"): the check
// runs in tfjs-tflite.
def('variable_tensor', 'RNN (RELU) with a variable hidden state [2,4] (is_variable): input [2,3] -> [2,4], state kept between invocations', (m) => {
  const [batch, inputSize, units] = [2, 3, 4];
  const x = m.input('input', [batch, inputSize]);
  const weights = m.rand32('rnn/weights', [units, inputSize], 0.5);
  const recurrent = m.rand32('rnn/recurrent_weights', [units, units], 0.5);
  const bias = m.rand32('rnn/bias', [units], 0.25);
  const state = m.tensor('rnn/hidden_state', [batch, units], 'FLOAT32', { is_variable: true });
  const y = m.tensor('output', [batch, units]);
  m.op('RNN', [x, weights, recurrent, bias, state], [y], 'RNNOptions', { fused_activation_function: 'RELU' });
  m.output(y);
  m.runtime = 'tfjs-tflite';
  const data = (t) => m.constants[t];
  const step = (input, h) => Array.from({ length: batch * units }, (_, i) => {
    const [b, u] = [Math.floor(i / units), i % units];
    let s = data(bias)[u];
    for (let k = 0; k < inputSize; k++) s += input[b * inputSize + k] * data(weights)[u * inputSize + k];
    for (let k = 0; k < units; k++) s += h[b * units + k] * data(recurrent)[u * units + k];
    return Math.max(0, s);
  });
  const a = values(m, batch * inputSize);
  const b = values(m, batch * inputSize);
  const h1 = step(a, new Array(batch * units).fill(0));
  m.runs = [{ inputs: { input: a }, outputs: { output: h1 } }, { inputs: { input: b }, outputs: { output: step(b, h1) } }];
});

// ---- model-level tables ---------------------------------------------------------------

def('signatures', 'two SignatureDefs: "add" (subgraph 0, x + y -> sum) and "multiply" (subgraph 1, x * y -> product) over [2,3]', (m) => {
  const shape = [2, 3];
  const a = m.input('input_a', shape);
  const b = m.input('input_b', shape);
  const sum = binary(m, 'ADD', a, b, 'output', 'AddOptions');
  m.output(sum);
  m.signature('add', { inputs: { x: a, y: b }, outputs: { sum } });
  let io;
  const mul = m.subgraph('multiply', (g) => {
    const x = g.input('input_a', shape);
    const y = g.input('input_b', shape);
    const p = binary(g, 'MUL', x, y, 'output', 'MulOptions');
    g.output(p);
    io = { x, y, p };
  });
  m.signature('multiply', { inputs: { x: io.x, y: io.y }, outputs: { product: io.p }, subgraph: mul });
  const x = values(m, count(shape));
  const y = values(m, count(shape));
  m.runs = [
    { signature: 'add', inputs: { x, y }, outputs: { sum: add(x, y) } },
    { signature: 'multiply', inputs: { x, y }, outputs: { product: x.map((v, i) => v * y[i]) } },
  ];
});

def('metadata', 'Model.metadata entries (min_runtime_version, a JSON string) beside ADD of two inputs [2,3]', (m) => {
  const shape = [2, 3];
  const a = m.input('input_a', shape);
  const b = m.input('input_b', shape);
  m.output(binary(m, 'ADD', a, b, 'output', 'AddOptions'));
  // What TFLite converters write: the version, zero-padded to 16 bytes.
  m.metadata('min_runtime_version', [...new TextEncoder().encode('1.5.0'), ...new Array(11).fill(0)]);
  m.metadata('lite2onnx_test', JSON.stringify({ generator: 'make_models_formats.mjs', feature: 'metadata' }));
  const x = values(m, count(shape));
  const y = values(m, count(shape));
  m.runs = [{ inputs: { input_a: x, input_b: y }, outputs: { output: add(x, y) } }];
});

// ---- a custom op with FlexBuffer options --------------------------------------------------

// TFLite_Detection_PostProcess (a custom op of TFLite's builtin resolver) reads
// ints, floats and a bool from its FlexBuffer map; the other keys exercise the
// encoder (strings, vectors, nested maps, wide ints, a blob) and are ignored by
// TFLite. Five anchors, two classes plus background, box encodings of zero (the
// boxes are the anchors): fast NMS keeps the three best disjoint boxes.
def('custom_flexbuffers', 'TFLite_Detection_PostProcess (custom op, FlexBuffer options) of 5 anchors and 2 classes: 3 detections', (m) => {
  const anchors = [0, 1, 2, 3, 4].map((i) => [0.125 + 0.1875 * i, 0.5, 0.125, 0.25]); // y, x, h, w
  const scores = [[0, 0.875, 0.125], [0, 0.25, 0.75], [0, 0.25, 0.375], [0, 0.625, 0.125], [0, 0.125, 0.9375]];
  // Fixed inputs that select 3 boxes: TFLite's fast NMS leaves the rows past
  // num_detections unwritten, so a random input would compare arena garbage.
  const boxes = m.input('box_encodings', [1, 5, 4], 'FLOAT32', { value: new Array(20).fill(0) });
  const classes = m.input('class_predictions', [1, 5, 3], 'FLOAT32', { value: scores.flat() });
  const anchorT = m.f32('anchors', [5, 4], anchors.flat());
  const outs = [
    m.tensor('detection_boxes', [1, 3, 4], 'FLOAT32', { has_rank: true }),
    m.tensor('detection_classes', [1, 3], 'FLOAT32', { has_rank: true }),
    m.tensor('detection_scores', [1, 3], 'FLOAT32', { has_rank: true }),
    m.tensor('num_detections', [1], 'FLOAT32', { has_rank: true }),
  ];
  m.customOp('TFLite_Detection_PostProcess', [boxes, classes, anchorT], outs, {
    max_detections: 3,
    max_classes_per_detection: 1,
    detections_per_class: 100,
    use_regular_nms: false,
    nms_score_threshold: 0.5,
    nms_iou_threshold: 0.5,
    num_classes: 2,
    y_scale: flex.float(10),
    x_scale: flex.float(10),
    h_scale: flex.float(5),
    w_scale: flex.float(5),
    lite2onnx_string: 'détection',
    lite2onnx_vector: [1, -300, 70000, 2.5, true, null, 'x', [flex.uint(255)]],
    lite2onnx_map: { b: 2 ** 40, a: -1.5e300, nested: { empty: [] } },
    lite2onnx_blob: flex.blob([0, 1, 2, 255]),
  });
  m.output(...outs);
  // Kept, best first: anchor 4 (class 1), anchor 0 (class 0), anchor 1 (class 1).
  const corner = ([y, x, h, w]) => [y - h / 2, x - w / 2, y + h / 2, x + w / 2];
  m.runs = [{
    inputs: { box_encodings: new Array(20).fill(0), class_predictions: scores.flat() },
    outputs: {
      detection_boxes: [4, 0, 1].flatMap((i) => corner(anchors[i])),
      detection_classes: [1, 0, 1],
      detection_scores: [0.9375, 0.875, 0.75],
      num_detections: [3],
    },
  }];
});

// ---- sparse constants -----------------------------------------------------------------------

// DENSIFY of a sparse constant, then an op that reads it with a run-time input.
function densified(m, name, shape, type, dense, options, q = undefined) {
  let t = m.sparseConstant(`${name}/sparse`, shape, type, dense, options);
  if (q) m.quantize(t, q);
  const d = m.tensor(`${name}/dense`, shape, type);
  if (q) m.quantize(d, q);
  m.op('DENSIFY', [t], [d], 'DensifyOptions', {});
  t = d;
  if (type !== 'FLOAT32') {
    const f = m.tensor(`${name}/float`, shape);
    m.op('DEQUANTIZE', [t], [f], 'DequantizeOptions', {});
    t = f;
  }
  const x = m.input('input', shape);
  m.output(binary(m, 'ADD', t, x, 'output', 'AddOptions'));
  const input = values(m, count(shape));
  const real = q ? dense.map((v) => (v - q.zero_point[0]) * q.scale[0]) : dense;
  m.runs = [{ inputs: { input }, outputs: { output: add(real, input) } }];
}

def('sparse_csr_f32', 'DENSIFY of a float32 [5,6] constant, dim 0 DENSE, dim 1 SPARSE_CSR (uint8 indices), + input', (m) => {
  densified(m, 'weights', [5, 6], 'FLOAT32', sparseValues(m, 30, 0.6), { format: ['DENSE', 'SPARSE_CSR'] });
});

def('sparse_block_f32', 'DENSIFY of a block-sparse float32 [4,8] constant, 1x4 blocks (block_map [1]), uint16 indices, + input', (m) => {
  // Whole 1x4 blocks are zero or not: the encoder keeps the nonzero blocks.
  const blocks = sparseValues(m, 8, 0.5).map((v) => v !== 0);
  const dense = [];
  for (let r = 0; r < 4; r++) for (let c = 0; c < 8; c++) dense.push(blocks[r * 2 + (c >> 2)] ? (1 + ((r * 8 + c) % 5)) / 8 : 0);
  densified(m, 'weights', [4, 8], 'FLOAT32', dense, { format: ['DENSE', 'SPARSE_CSR'], block: [1, 4], index: 'UINT16' });
});

def('sparse_csc_f16', 'DENSIFY of a float16 [6,4] constant by columns (traversal order [1,0]: columns DENSE, rows SPARSE_CSR), int32 indices, DEQUANTIZE, + input', (m) => {
  densified(m, 'weights', [6, 4], 'FLOAT16', sparseValues(m, 24, 0.6), { format: ['SPARSE_CSR', 'DENSE'], order: [1, 0], index: 'INT32' });
});

def('sparse_i8', 'DENSIFY of an int8 [3,4,5] constant (DENSE, SPARSE_CSR, SPARSE_CSR; uint8 indices), DEQUANTIZE (scale 0.25, zero point 0), + input', (m) => {
  const ints = sparseValues(m, 60, 0.7).map((v) => Math.round(v * 16));
  densified(m, 'weights', [3, 4, 5], 'INT8', ints, { format: ['DENSE', 'SPARSE_CSR', 'SPARSE_CSR'] },
    { scale: [0.25], zero_point: [0] });
});

// ---- shape-less constants ---------------------------------------------------------------------

// A constant without a `shape` field is a scalar to TFLite (converters write
// epsilons, offsets and axes that way).
def('shapeless_scalars', 'ADD of an input [2,3,4] and a float32 constant without a shape (1.5), then ARG_MAX over an int32 axis without a shape (-1): [2,3] int32', (m) => {
  const c = m.f32('offset', [], [1.5]);
  delete m.tensors[c].shape;
  const x = m.input('input', [2, 3, 4]);
  const s = binary(m, 'ADD', x, c, 'sum', 'AddOptions');
  const axis = m.i32('axis', [], [-1]);
  delete m.tensors[axis].shape;
  const y = m.tensor('output', [2, 3], 'INT32');
  m.op('ARG_MAX', [s, axis], [y], 'ArgMaxOptions', { output_type: 'INT32' });
  m.output(y);
  const input = values(m, 24);
  const output = [];
  for (let i = 0; i < 6; i++) {
    const row = input.slice(i * 4, i * 4 + 4);
    output.push(row.indexOf(Math.max(...row)));
  }
  m.runs = [{ inputs: { input }, outputs: { output } }];
});

// ---- tensor types and quantization ------------------------------------------------------------

def('per_axis_quantization', 'DEQUANTIZE of an int8 [3,5] constant quantized per axis 1 (5 scales, zero points), + input', (m) => {
  const shape = [3, 5];
  const q = { type: 'INT8', scale: [0.5, 0.25, 0.125, 0.0625, 1], zero_point: [0, 3, -2, 1, 0], axis: 1 };
  const ints = Array.from({ length: 15 }, () => Math.floor(m.rand() * 200) - 100);
  const real = ints.map((v, i) => (v - q.zero_point[i % 5]) * q.scale[i % 5]);
  const w = m.quantized('weights', shape, real, q);
  const f = m.tensor('weights/float', shape);
  m.op('DEQUANTIZE', [w], [f], 'DequantizeOptions', {});
  const x = m.input('input', shape);
  m.output(binary(m, 'ADD', f, x, 'output', 'AddOptions'));
  const input = values(m, 15);
  m.runs = [{ inputs: { input }, outputs: { output: add(real, input) } }];
});

def('float16_buffer', 'DEQUANTIZE of a float16 [2,3,4] constant (values exact in float16, subnormals included), + input', (m) => {
  const shape = [2, 3, 4];
  const halves = [2 ** -24, -(2 ** -20), 65504, -0.5, 1 / 3, 3.140625];
  const w = m.f16('weights', shape, Array.from({ length: 24 }, (_, i) => (i < halves.length ? halves[i] : values(m, 1)[0])));
  const f = m.tensor('weights/float', shape);
  m.op('DEQUANTIZE', [w], [f], 'DequantizeOptions', {});
  const x = m.input('input', shape);
  m.output(binary(m, 'ADD', f, x, 'output', 'AddOptions'));
  const input = values(m, 24);
  m.runs = [{ inputs: { input }, outputs: { output: add(m.constants[w].map(roundF16), input) } }];
});

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  writeModels({ dir: JSON_DIR, prefix: 'formats_', models: MODELS, specsFile: SPECS_FILE });
