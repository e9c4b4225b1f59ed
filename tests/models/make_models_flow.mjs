#!/usr/bin/env node
// Writes the test models of control flow (WHILE -> Loop, IF -> If, CALL
// inlined; core/tflite/reader.cc expands them, core/ops/control_flow.cc
// lowers them) as FlatBuffer JSON into tests/models/json/flow_*.json, plus
// their input domains into tests/models/specs_flow.json. Same format and
// conventions as make_models.mjs (see README.md); only flow_* files are
// touched. Hostile control flow (recursion, subgraph indices out of range,
// nesting past the limit, copies multiplying) is in make_models_hostile.mjs.
//
//   node tests/models/make_models_flow.mjs      # from the repository root
//
// Every model runs in both TFLite runtimes of the numeric suite (LiteRT.js
// and tfjs-tflite run WHILE, IF and CALL_ONCE); loop counts are constants of
// the model, so the loops run the same number of times whatever the inputs.
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3, flex, flexbuffer, seeded, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_flow.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `flow_${name}`, description, build });

// ---- op helpers (any subgraph) -----------------------------------------------------

const NONE = { fused_activation_function: 'NONE' };

function binary(g, op, a, b, name, optionsType = undefined) {
  const shape = g.shape(a).length >= g.shape(b).length ? g.shape(a) : g.shape(b);
  const y = g.tensor(name, shape, g.type(a));
  g.op(op, [a, b], [y], optionsType, optionsType ? NONE : undefined);
  return y;
}
const add = (g, a, b, name) => binary(g, 'ADD', a, b, name, 'AddOptions');
const sub = (g, a, b, name) => binary(g, 'SUB', a, b, name, 'SubOptions');
const mul = (g, a, b, name) => binary(g, 'MUL', a, b, name, 'MulOptions');

function compare(g, op, a, b, name) {
  const y = g.tensor(name, g.shape(a), 'BOOL');
  g.op(op, [a, b], [y]);
  return y;
}

function unary(g, op, x, name) {
  const y = g.tensor(name, g.shape(x), g.type(x));
  g.op(op, [x], [y]);
  return y;
}

function fullyConnected(g, x, name, units, { bias = true } = {}) {
  const k = g.shape(x).at(-1);
  const w = g.rand32(`${name}/weights`, [units, k], 1 / Math.sqrt(k));
  const inputs = [x, w];
  if (bias) inputs.push(g.rand32(`${name}/bias`, [units], 0.1));
  else inputs.push(-1);
  const y = g.tensor(name, [g.shape(x)[0], units]);
  g.op('FULLY_CONNECTED', inputs, [y], 'FullyConnectedOptions', NONE);
  return y;
}

// GATHER of one row (a scalar index) along axis 0.
function row(g, x, index, name) {
  const y = g.tensor(name, g.shape(x).slice(1), g.type(x));
  g.op('GATHER', [x, index], [y], 'GatherOptions', { axis: 0 });
  return y;
}

// A WHILE op in graph `g` over `values`: cond(c, inputs) returns a BOOL
// tensor of c, body(b, inputs) the next values (as many, same types and
// shapes). Returns the op's outputs.
function whileLoop(m, g, name, values, cond, body) {
  const inputsOf = (s, tag) => values.map((t, i) => s.input(`${name}/${tag}_${i}`, g.shape(t), g.type(t)));
  const condIndex = m.subgraph(`${name}_cond`, (c) => c.output(cond(c, inputsOf(c, 'value'))));
  const bodyIndex = m.subgraph(`${name}_body`, (b) => b.output(...body(b, inputsOf(b, 'value'))));
  const outs = values.map((t, i) => g.tensor(`${name}/out_${i}`, g.shape(t), g.type(t)));
  g.op('WHILE', values, outs, 'WhileOptions', { cond_subgraph_index: condIndex, body_subgraph_index: bodyIndex });
  return outs;
}

// An IF op in graph `g`: then/else(b, inputs) return the outputs, of the
// shapes and types `outShapes` lists as [shape, type].
function ifThenElse(m, g, name, condition, args, outShapes, thenBuild, elseBuild) {
  const branch = (tag, build) => m.subgraph(`${name}_${tag}`, (b) => {
    const ins = args.map((t, i) => b.input(`${name}/${tag}_arg_${i}`, g.shape(t), g.type(t)));
    b.output(...build(b, ins));
  });
  const thenIndex = branch('then', thenBuild);
  const elseIndex = branch('else', elseBuild);
  const outs = outShapes.map(([shape, type], i) => g.tensor(`${name}/out_${i}`, shape, type));
  g.op('IF', [condition, ...args], outs, 'IfOptions', { then_subgraph_index: thenIndex, else_subgraph_index: elseIndex });
  return outs;
}

// A loop counter: i (int32 scalar) counting to `count`.
function counting(c, i, count, name) {
  return compare(c, 'LESS', i, c.i32(`${name}/count`, [], [count]), `${name}/again`);
}
const next = (b, i, name) => add(b, i, b.i32(`${name}/one`, [], [1]), `${name}/next`);

// ---- models ------------------------------------------------------------------------

def('while_counter', 'WHILE over a counter i < 4 (int32 scalar) and x [2,3]: x = x * 1.25 + 0.5 each iteration; ' +
  'outputs x and the counter; the cond reads only the counter', (m) => {
  const x = m.input('x', [2, 3]);
  const i0 = m.i32('i0', [], [0]);
  const [i, y] = whileLoop(m, m, 'loop', [i0, x],
    (c, [ci]) => counting(c, ci, 4, 'c'),
    (b, [bi, bx]) => [next(b, bi, 'i'), add(b, mul(b, bx, b.f32('scale', [], [1.25]), 'scaled'),
      b.f32('shift', [1, 3], [0.5, -0.25, 0.125]), 'x_next')]);
  m.output(y, i);
});

def('while_rnn', 'a Keras SimpleRNN as TensorFlow exports it with unroll=False: sequence [N=2, T=5, F=3] -> ' +
  'TRANSPOSE to time-major [5,2,3] -> WHILE (t < 5) over (t, h [2,4], sequence): x_t = GATHER(sequence, t); ' +
  'h = TANH(x_t @ W + b + h @ U) -> the last h', (m) => {
  const seq = m.input('sequence', [2, 5, 3]);
  const perm = m.i32('time_major/perm', [3], [1, 0, 2]);
  const tm = m.tensor('time_major', [5, 2, 3]);
  m.op('TRANSPOSE', [seq, perm], [tm], 'TransposeOptions', {});
  const h0 = m.f32('h0', [2, 4], new Array(8).fill(0));
  const t0 = m.i32('t0', [], [0]);
  const [, h] = whileLoop(m, m, 'rnn', [t0, h0, tm],
    (c, [t]) => counting(c, t, 5, 't'),
    (b, [t, hp, s]) => {
      const xt = row(b, s, t, 'x_t');
      const pre = add(b, fullyConnected(b, xt, 'kernel', 4), fullyConnected(b, hp, 'recurrent', 4, { bias: false }),
        'pre_activation');
      return [next(b, t, 't'), unary(b, 'TANH', pre, 'h'), s];
    });
  m.output(h);
});

def('while_rnn_strided', 'the SimpleRNN loop of while_rnn with the time step read as TensorFlow slices x[t]: ' +
  'STRIDED_SLICE(sequence, begin = PACK(t), end = PACK(t + 1), strides [1], shrink_axis_mask 1) with begin ' +
  'and end computed from the counter at run time; sequence [2, 6, 3], 4 units, every hidden state kept ' +
  '(one-hot scan into [6, 2, 4]) besides the last. LiteRT.js returns zeros for this loop (its WHILE with a ' +
  'slice whose bounds are computed: measured, every element 0), so tfjs-tflite is the reference', (m) => {
  m.spec.reference = 'tfjs';
  const seq = m.input('sequence', [2, 6, 3]);
  const tm = m.tensor('time_major', [6, 2, 3]);
  m.op('TRANSPOSE', [seq, m.i32('time_major/perm', [3], [1, 0, 2])], [tm], 'TransposeOptions', {});
  const h0 = m.f32('h0', [2, 4], new Array(8).fill(0));
  const all0 = m.f32('states0', [6, 2, 4], new Array(48).fill(0));
  const [, h, all] = whileLoop(m, m, 'rnn', [m.i32('t0', [], [0]), h0, all0, tm],
    (c, [t]) => counting(c, t, 6, 't'),
    (b, [t, hp, states, s]) => {
      const t1 = next(b, t, 't');
      const pack = (x, name) => {
        const y = b.tensor(name, [1], 'INT32');
        b.op('PACK', [x], [y], 'PackOptions', { values_count: 1, axis: 0 });
        return y;
      };
      const xt = b.tensor('x_t', [2, 3]);
      b.op('STRIDED_SLICE', [s, pack(t, 'begin'), pack(t1, 'end'), b.i32('strides', [1], [1])], [xt],
        'StridedSliceOptions', { shrink_axis_mask: 1 });
      const pre = add(b, fullyConnected(b, xt, 'kernel', 4), fullyConnected(b, hp, 'recurrent', 4, { bias: false }),
        'pre_activation');
      const hn = unary(b, 'TANH', pre, 'h');
      const hit = compare(b, 'EQUAL', b.i32('iota', [6, 1, 1], [0, 1, 2, 3, 4, 5]), t, 'is_step');
      const mask = b.tensor('step_mask', [6, 1, 1]);
      b.op('CAST', [hit], [mask], 'CastOptions', { in_data_type: 'BOOL', out_data_type: 'FLOAT32' });
      const put = b.tensor('state_row', [6, 2, 4]);
      b.op('MUL', [mask, hn], [put], 'MulOptions', NONE);
      return [t1, hn, add(b, states, put, 'states_next'), s];
    });
  m.output(h, all);
});

def('while_cnn', 'a loop whose body is a small CNN: image [1,7,6,3] carried through 3 iterations of ' +
  'CONV_2D 3x3 -> RELU -> CONV_2D 3x3 -> ADD (residual); the body runs in NCHW with no Transpose, and the ' +
  'whole model with none', (m) => {
  const x = m.input('image', [1, 7, 6, 3]);
  const [, y] = whileLoop(m, m, 'blocks', [m.i32('i0', [], [0]), x],
    (c, [i]) => counting(c, i, 3, 'c'),
    (b, [i, img]) => {
      const h = unary(b, 'RELU', conv3x3(b, img, 'conv1', 5), 'relu');
      return [next(b, i, 'i'), add(b, img, conv3x3(b, h, 'conv2', 3), 'residual')];
    });
  m.output(y);
});

def('while_scan', 'a loop with carried and scanned values: sequence [T=4, 2, 3] read row by row ' +
  '(GATHER on the counter), a running sum carried, and each step\'s sum scanned into a [4,2,3] output ' +
  '(one-hot row mask from EQUAL of an iota and the counter, CAST, MUL, ADD)', (m) => {
  const seq = m.input('sequence', [4, 2, 3]);
  const acc0 = m.f32('acc0', [2, 3], new Array(6).fill(0));
  const out0 = m.f32('scan0', [4, 2, 3], new Array(24).fill(0));
  const [, acc, scan] = whileLoop(m, m, 'scan', [m.i32('t0', [], [0]), acc0, out0, seq],
    (c, [t]) => counting(c, t, 4, 't'),
    (b, [t, a, o, s]) => {
      const sum = add(b, a, mul(b, row(b, s, t, 'x_t'), b.rand32('weight', [3]), 'weighted'), 'running_sum');
      const iota = b.i32('iota', [4, 1, 1], [0, 1, 2, 3]);
      const hit = compare(b, 'EQUAL', iota, t, 'is_row');
      const mask = b.tensor('row_mask', [4, 1, 1]);
      b.op('CAST', [hit], [mask], 'CastOptions', { in_data_type: 'BOOL', out_data_type: 'FLOAT32' });
      const put = b.tensor('scanned_row', [4, 2, 3]);
      b.op('MUL', [mask, sum], [put], 'MulOptions', NONE);
      return [next(b, t, 't'), sum, add(b, o, put, 'scan_next'), s];
    });
  m.output(acc, scan);
});

def('while_if', 'an IF nested inside a WHILE: 4 iterations over (i, x [3,5]); the body takes x * 2 (then) ' +
  'while i < 2, else x - 0.75, through an IF on LESS(i, 2)', (m) => {
  const x = m.input('x', [3, 5]);
  const [, y] = whileLoop(m, m, 'outer', [m.i32('i0', [], [0]), x],
    (c, [i]) => counting(c, i, 4, 'c'),
    (b, [i, bx]) => {
      const early = compare(b, 'LESS', i, b.i32('half', [], [2]), 'early');
      const [r] = ifThenElse(m, b, 'step', early, [bx], [[[3, 5], 'FLOAT32']],
        (t, [tx]) => [mul(t, tx, t.f32('two', [], [2]), 'doubled')],
        (e, [ex]) => [sub(e, ex, e.f32('shift', [], [0.75]), 'shifted')]);
      return [next(b, i, 'i'), r];
    });
  m.output(y);
});

def('if_branches', 'two IFs on complementary conditions (x[0,0] > 0 and its negation), so one run takes both ' +
  'branch kinds: a branch that computes (CONV_2D 3x3 of the image, in NCHW) and one that passes an argument ' +
  'through unchanged (as TensorFlow writes tf.cond of an identity)', (m) => {
  const img = m.input('image', [1, 5, 4, 3]);
  const first = m.tensor('first', [1, 1, 1, 1]);
  m.op('SLICE', [img, m.i32('begin', [4], [0, 0, 0, 0]), m.i32('size', [4], [1, 1, 1, 1])], [first]);
  const cond = m.tensor('positive', [], 'BOOL');
  m.op('RESHAPE', [compare(m, 'GREATER', first, m.f32('zero', [], [0]), 'positive_4d'), m.i32('scalar', [0], [])],
    [cond]);
  const notCond = unary(m, 'LOGICAL_NOT', cond, 'not_positive');
  const branches = (name, c) => ifThenElse(m, m, name, c, [img], [[[1, 5, 4, 3], 'FLOAT32']],
    (t, [tx]) => [conv3x3(t, tx, 'conv', 3)],
    (e, [ex]) => [ex]);
  const [a] = branches('when_positive', cond);
  const [b] = branches('when_not', notCond);
  m.output(a, b);
});

def('shared_subgraphs', 'two WHILE ops running the same cond and body subgraphs (each gets its own copy), ' +
  'on x [2,3] and on their result', (m) => {
  const x = m.input('x', [2, 3]);
  const [, y] = whileLoop(m, m, 'first', [m.i32('i0', [], [0]), x],
    (c, [i]) => counting(c, i, 3, 'c'),
    (b, [i, bx]) => [next(b, i, 'i'), unary(b, 'TANH', add(b, bx, b.f32('bias', [3], [0.5, -0.5, 0.25]), 'sum'),
      'squashed')]);
  // The second WHILE reuses the first one's subgraphs (indices 1 and 2).
  const again = [m.i32('i1', [], [1]), y];
  const outs = again.map((t, i) => m.tensor(`second/out_${i}`, m.shape(t), m.type(t)));
  m.op('WHILE', again, outs, 'WhileOptions', { cond_subgraph_index: 1, body_subgraph_index: 2 });
  m.output(outs[1]);
});

def('strided_slice_runtime_index', 'STRIDED_SLICE x[:, i, ::-1, j] with begin a graph input (int32 [4] in ' +
  '[-4, 4): negative indices count from the end), end an input too (ignored where masked or shrunk), strides ' +
  '[1, 1, -1, 1], begin and end masks on axes 0 and 2, shrink on axes 1 and 3, on the [5, 6, 7, 4] output of a ' +
  'MAX_POOL_2D (the slice runs in NCHW): the bounds picked by Gather, masked by Where, the shrunk indices ' +
  'wrapped by Mod at run time; output [5, 7]. LiteRT.js returns garbage here (a stale buffer: values such as ' +
  '-8.96e+8) and tfjs-tflite aborts when a CONV_2D feeds the slice, so tfjs-tflite after a pool is the ' +
  'reference', (m) => {
  m.spec.reference = 'tfjs';
  const x = m.tensor('pooled', [5, 6, 7, 4]);
  m.op('MAX_POOL_2D', [m.input('x', [5, 6, 7, 4])], [x], 'Pool2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, filter_height: 2, filter_width: 2, fused_activation_function: 'NONE',
  });
  const begin = m.input('begin', [4], 'INT32', { range: [-4, 4] });
  const end = m.input('end', [4], 'INT32', { range: [0, 3] });
  const y = m.tensor('output', [5, 7]);
  m.op('STRIDED_SLICE', [x, begin, end, m.i32('strides', [4], [1, 1, -1, 1])], [y], 'StridedSliceOptions',
    { begin_mask: 5, end_mask: 5, shrink_axis_mask: 10 });
  m.output(y);
});

def('strided_slice_runtime_bounds', 'STRIDED_SLICE whose begin and end are graph inputs (int32 [3] in [0, 2) ' +
  'and [3, 5)), strides [1, 1, 2] constant, no masks, on x [5, 6, 7]: the output\'s shape depends on the ' +
  'inputs (declared dynamic), so tfjs-tflite is the reference (LiteRT.js returns stale buffers for outputs ' +
  'whose shape changes)', (m) => {
  m.spec.reference = 'tfjs';
  const x = m.input('x', [5, 6, 7]);
  const begin = m.input('begin', [3], 'INT32', { range: [0, 2] });
  const end = m.input('end', [3], 'INT32', { range: [3, 5] });
  const y = m.tensor('output', [4, 4, 2], 'FLOAT32', { shape_signature: [-1, -1, -1] });
  m.op('STRIDED_SLICE', [x, begin, end, m.i32('strides', [3], [1, 1, 2])], [y], 'StridedSliceOptions', {});
  m.output(y);
});

def('slice_runtime_begin', 'SLICE of x [5, 6, 7] with begin a graph input (int32 [3] in [0, 2)) and size [3, 4, 5] ' +
  'constant: ONNX Slice with starts from the input and ends = starts + size, computed at run time', (m) => {
  const x = m.input('x', [5, 6, 7]);
  const begin = m.input('begin', [3], 'INT32', { range: [0, 2] });
  const y = m.tensor('output', [3, 4, 5]);
  m.op('SLICE', [x, begin, m.i32('size', [3], [3, 4, 5])], [y], 'SliceOptions', {});
  m.output(y);
});

def('pad_runtime_paddings', 'PAD of x [2, 3, 4] with paddings a graph input ' +
  '(int32 [3, 2] in [0, 3)): ONNX Pad takes them cast to int64, begins then ends, picked by a Gather; the ' +
  'output\'s shape depends on the input (declared dynamic), so tfjs-tflite is the reference', (m) => {
  m.spec.reference = 'tfjs';
  const x = m.input('x', [2, 3, 4]);
  const paddings = m.input('paddings', [3, 2], 'INT32', { range: [0, 3] });
  const y = m.tensor('output', [4, 5, 6], 'FLOAT32', { shape_signature: [-1, -1, -1] });
  m.op('PAD', [x, paddings], [y], 'PadOptions', {});
  m.output(y);
});

def('tile_runtime_multiples_nchw', 'TILE of a MAX_POOL_2D output [1, 5, 7, 4] (NCHW in ONNX) by multiples a ' +
  'graph input (int32 [4] in [1, 3)): the multiples put into the layout\'s order by a Gather; dynamic output, ' +
  'tfjs-tflite the reference (it aborts when a CONV_2D feeds the op)', (m) => {
  m.spec.reference = 'tfjs';
  const p = m.tensor('pooled', [1, 5, 7, 4]);
  m.op('MAX_POOL_2D', [m.input('x', [1, 5, 7, 4])], [p], 'Pool2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, filter_height: 2, filter_width: 2, fused_activation_function: 'NONE',
  });
  const multiples = m.input('multiples', [4], 'INT32', { range: [1, 3] });
  const y = m.tensor('output', [1, 10, 14, 8], 'FLOAT32', { shape_signature: [-1, -1, -1, -1] });
  m.op('TILE', [p, multiples], [y], 'TileOptions', {});
  m.output(y);
});

def('while_slice_rnn', 'the SimpleRNN loop of while_rnn_strided with the time step read as Keras writes it in a ' +
  'loop: SLICE(sequence [2, 6, 3], begin = PACK(0, t, 0), size = PACK(-1, t + 1 - t, -1)), both computed from ' +
  'the counter at run time (size -1: to the end), then RESHAPE to [2, 3]; 4 units, the last hidden state', (m) => {
  const seq = m.input('sequence', [2, 6, 3]);
  const h0 = m.f32('h0', [2, 4], new Array(8).fill(0));
  const [, h] = whileLoop(m, m, 'rnn', [m.i32('t0', [], [0]), h0, seq],
    (c, [t]) => counting(c, t, 6, 't'),
    (b, [t, hp, s]) => {
      const t1 = next(b, t, 't');
      const pack = (xs, name) => {
        const y = b.tensor(name, [xs.length], 'INT32');
        b.op('PACK', xs, [y], 'PackOptions', { values_count: xs.length, axis: 0 });
        return y;
      };
      const zero = b.i32('zero', [], [0]);
      const minusOne = b.i32('minus_one', [], [-1]);
      const step = b.tensor('step', [], 'INT32');
      b.op('SUB', [t1, t], [step], 'SubOptions', NONE);
      const xt3 = b.tensor('x_t3', [2, 1, 3]);
      b.op('SLICE', [s, pack([zero, t, zero], 'begin'), pack([minusOne, step, minusOne], 'size')], [xt3],
        'SliceOptions', {});
      const xt = b.tensor('x_t', [2, 3]);
      b.op('RESHAPE', [xt3, b.i32('x_t/shape', [2], [2, 3])], [xt], 'ReshapeOptions', { new_shape: [2, 3] });
      const pre = add(b, fullyConnected(b, xt, 'kernel', 4), fullyConnected(b, hp, 'recurrent', 4, { bias: false }),
        'pre_activation');
      return [t1, unary(b, 'TANH', pre, 'h'), s];
    });
  m.output(h);
});

// ---- state: resource variables over invocations ---------------------------------------

function varHandle(g, name, tag) {
  const h = g.tensor(tag, [], 'RESOURCE');
  g.op('VAR_HANDLE', [], [h], 'VarHandleOptions', { container: '', shared_name: name });
  return h;
}
function readVariable(g, h, name, shape, type = 'FLOAT32') {
  const v = g.tensor(name, shape, type);
  g.op('READ_VARIABLE', [h], [v], 'ReadVariableOptions', {});
  return v;
}
const assignVariable = (g, h, v) => g.op('ASSIGN_VARIABLE', [h, v], [], 'AssignVariableOptions', {});

def('state_stream', 'a streaming model with resource variables, as TensorFlow exports a stateful Keras layer: ' +
  'CALL_ONCE initialises "history" [1,3,4] (constant frames), "count" [1] int32 (0) and "scale" [4] (read, ' +
  'never written); each invocation appends its frame [1,1,4] to the history (CONCATENATION), keeps the last ' +
  'three frames (STRIDED_SLICE -> ASSIGN_VARIABLE), counts (ADD -> ASSIGN_VARIABLE) and outputs the mean of ' +
  'the scaled window times the count, and the count: the numeric suite runs it three times, state fed back', (m) => {
  const init = m.subgraph('init', (g) => {
    assignVariable(g, varHandle(g, 'history', 'history_handle'), g.rand32('history0', [1, 3, 4], 1));
    assignVariable(g, varHandle(g, 'count', 'count_handle'), g.i32('count0', [1], [0]));
    assignVariable(g, varHandle(g, 'scale', 'scale_handle'), g.rand32('scale0', [4], 1));
  });
  m.op('CALL_ONCE', [], [], 'CallOnceOptions', { init_subgraph_index: init });
  const frame = m.input('frame', [1, 1, 4]);
  const hh = varHandle(m, 'history', 'history_handle');
  const ch = varHandle(m, 'count', 'count_handle');
  const sh = varHandle(m, 'scale', 'scale_handle');
  const history = readVariable(m, hh, 'history', [1, 3, 4]);
  const window = m.tensor('window', [1, 4, 4]);
  m.op('CONCATENATION', [history, frame], [window], 'ConcatenationOptions', { axis: 1, ...NONE });
  const kept = m.tensor('history_next', [1, 3, 4]);
  m.op('STRIDED_SLICE', [window, m.i32('begin', [3], [0, 1, 0]), m.i32('end', [3], [1, 4, 4]),
    m.i32('strides', [3], [1, 1, 1])], [kept], 'StridedSliceOptions', {});
  assignVariable(m, hh, kept);
  const count = add(m, readVariable(m, ch, 'count', [1], 'INT32'), m.i32('one', [1], [1]), 'count_next');
  assignVariable(m, ch, count);
  const scaled = mul(m, window, readVariable(m, sh, 'scale', [4]), 'scaled');
  const mean = m.tensor('mean', [1, 4]);
  m.op('MEAN', [scaled, m.i32('axis', [1], [1])], [mean], 'ReducerOptions', { keep_dims: false });
  const times = m.tensor('count_float', [1]);
  m.op('CAST', [count], [times], 'CastOptions', { in_data_type: 'INT32', out_data_type: 'FLOAT32' });
  m.output(mul(m, mean, times, 'output'), count);
});

// ---- StableHLO composites ------------------------------------------------------------
//
// PyTorch and JAX exports (ai-edge-torch, the AI Edge quantizer) wrap blocks in
// STABLEHLO_COMPOSITE ops that name a decomposition subgraph and carry their
// attributes as a FlexBuffer map; TFLite's kernel runs the decomposition.
// LiteRT.js runs them (tfjs-tflite does not know the op).

// A composite `compositeName` in graph `g` over `args`: build(d, inputs)
// fills the decomposition (once per `impl` key: later composites of the same
// key call the same subgraph) and returns its outputs, whose shapes and types
// the composite's outputs take.
const decompositions = new Map();
function composite(m, g, name, compositeName, args, attributes, build, impl = undefined) {
  let index = impl === undefined ? undefined : decompositions.get(`${m.name}/${impl}`);
  if (index === undefined) {
    index = m.subgraph(`${compositeName}.impl`, (d) => {
      const ins = args.map((t, i) => d.input(`${name}/arg_${i}`, g.shape(t), g.type(t)));
      d.output(...build(d, ins));
    });
    if (impl !== undefined) decompositions.set(`${m.name}/${impl}`, index);
  }
  const d = m.graphs[index];
  const ys = d.outputs.map((t, i) => g.tensor(`${name}/out_${i}`, d.shape(t), d.type(t)));
  g.op('STABLEHLO_COMPOSITE', args, ys, 'StableHLOCompositeOptions', {
    name: compositeName, decomposition_subgraph_index: index,
    composite_attributes: flexbuffer(attributes), composite_attributes_format: 'FLEXBUFFERS',
  });
  return ys;
}

function transpose(g, x, perm, name) {
  const y = g.tensor(name, perm.map((p) => g.shape(x)[p]), g.type(x));
  g.op('TRANSPOSE', [x, g.i32(`${name}/perm`, [perm.length], perm)], [y], 'TransposeOptions', {});
  return y;
}
function reshape(g, x, shape, name) {
  const y = g.tensor(name, shape, g.type(x));
  g.op('RESHAPE', [x, g.i32(`${name}/shape`, [shape.length], shape)], [y], 'ReshapeOptions', { new_shape: shape });
  return y;
}
function batchMatmul(g, a, b, name) {
  const sa = g.shape(a), sb = g.shape(b);
  const y = g.tensor(name, [...sa.slice(0, -1), sb.at(-1)], g.type(a));
  g.op('BATCH_MATMUL', [a, b], [y], 'BatchMatMulOptions', {});
  return y;
}

// RMS norm as ai-edge-torch decomposes odml.rms_norm: x * RSQRT(MEAN(x * x) + eps) * weight.
function rmsNorm(d, x, weight, eps, name) {
  const shape = d.shape(x);
  const meanShape = [...shape.slice(0, -1), 1];
  const sq = mul(d, x, x, `${name}/square`);
  const mean = d.tensor(`${name}/mean`, meanShape);
  d.op('MEAN', [sq, d.i32(`${name}/axis`, [1], [shape.length - 1])], [mean], 'ReducerOptions', { keep_dims: true });
  const r = unary(d, 'RSQRT', add(d, mean, d.f32(`${name}/epsilon`, [], [eps]), `${name}/plus_eps`), `${name}/rsqrt`);
  return mul(d, mul(d, x, r, `${name}/normed`), weight, `${name}/scaled`);
}

def('composite_rms_norm', 'STABLEHLO_COMPOSITE odml.rms_norm (attributes {epsilon}) of x [3,5,7] with a weight [7] ' +
  'constant of the main graph: its decomposition MUL, MEAN (last axis, keep_dims), ADD eps, RSQRT, MUL, MUL ' +
  'is inlined; then TANH', (m) => {
  const x = m.input('x', [3, 5, 7]);
  const w = m.rand32('norm/weight', [7], 1);
  const [y] = composite(m, m, 'rms_norm', 'odml.rms_norm', [x, w], { epsilon: 1e-6 },
    (d, [dx, dw]) => [rmsNorm(d, dx, dw, 1e-6, 'rms')]);
  m.output(unary(m, 'TANH', y, 'output'));
});

// Scaled dot-product attention as ai-edge-torch decomposes
// odml.scaled_dot_product_attention: query [B, T, Hq, D], key and value
// [B, S, Hkv, D], mask [B, 1, T, S]; Hq / Hkv query heads share one
// key/value head (grouped-query attention), the heads made first as the
// exports do (TRANSPOSE, then RESHAPE and BROADCAST_TO of the head axis).
function sdpa(d, [q, k, v, mask], scale, name) {
  const [B, T, Hq, D] = d.shape(q);
  const [, S, Hkv] = d.shape(k);
  const group = Hq / Hkv;
  const heads = (x, tag) => {
    const bhsd = transpose(d, x, [0, 2, 1, 3], `${name}/${tag}_bhsd`);
    if (group === 1) return bhsd;
    const five = reshape(d, bhsd, [B, Hkv, 1, S, D], `${name}/${tag}_groups`);
    const wide = d.tensor(`${name}/${tag}_broadcast`, [B, Hkv, group, S, D]);
    d.op('BROADCAST_TO', [five, d.i32(`${name}/${tag}_broadcast/shape`, [5], [B, Hkv, group, S, D])], [wide]);
    return reshape(d, wide, [B, Hq, S, D], `${name}/${tag}_heads`);
  };
  const qs = mul(d, q, d.f32(`${name}/scale`, [], [scale]), `${name}/scaled_query`);
  const qh = transpose(d, qs, [0, 2, 1, 3], `${name}/query_bhtd`);
  const kh = transpose(d, heads(k, 'key'), [0, 1, 3, 2], `${name}/key_bhds`);
  const logits = add(d, batchMatmul(d, qh, kh, `${name}/logits`), mask, `${name}/masked`);
  const probs = d.tensor(`${name}/probs`, d.shape(logits));
  d.op('SOFTMAX', [logits], [probs], 'SoftmaxOptions', { beta: 1 });
  return transpose(d, batchMatmul(d, probs, heads(v, 'value'), `${name}/context`), [0, 2, 1, 3], `${name}/context_bthd`);
}
function sdpaModel(T, S, Hq, Hkv, D) {
  return (m) => {
    m.versions = { ...m.versions, BROADCAST_TO: 2 };  // version 1 is in no runtime here
    const q = m.input('query', [1, T, Hq, D]);
    const k = m.input('key', [1, S, Hkv, D]);
    const v = m.input('value', [1, S, Hkv, D]);
    const mask = m.input('mask', [1, 1, T, S], 'FLOAT32', [-2, 0]);
    const scale = 1 / Math.sqrt(D);
    const [y] = composite(m, m, 'attention', 'odml.scaled_dot_product_attention', [q, k, v, mask],
      { scale: flex.float(scale) }, (d, ins) => [sdpa(d, ins, scale, 'sdpa')]);
    m.output(y);
  };
}
def('composite_sdpa', 'STABLEHLO_COMPOSITE odml.scaled_dot_product_attention (attributes {scale}) of query ' +
  '[1,3,2,4], key and value [1,5,2,4] and an additive mask [1,1,3,5], decomposed as ai-edge-torch writes it: ' +
  'MUL by the scale, TRANSPOSE to heads first, BATCH_MATMUL, ADD mask, SOFTMAX, BATCH_MATMUL, TRANSPOSE back',
  sdpaModel(3, 5, 2, 2, 4));
def('composite_sdpa_gqa', 'grouped-query attention in a STABLEHLO_COMPOSITE: query [1,3,6,4] with 6 heads, key ' +
  'and value [1,5,2,4] with 2 heads, each repeated for 3 query heads (TRANSPOSE, RESHAPE, BROADCAST_TO, RESHAPE) ' +
  'before the attention of flow_composite_sdpa', sdpaModel(3, 5, 6, 2, 4));

def('composite_nested_cnn', 'composites between convolutions: image [1,7,6,3] -> CONV_2D 3x3 (5 filters) -> ' +
  'odml.biased_swish(x, bias [5]) whose decomposition adds the bias and calls a nested composite odml.swish ' +
  '(x * LOGISTIC(x)) and returns its bias argument unchanged as a second output -> CONV_2D 3x3 -> the same ' +
  'decomposition run again (a second copy) -> output; the CNN runs in NCHW with no Transpose', (m) => {
  const x = m.input('image', [1, 7, 6, 3]);
  const block = (input, b, name) => composite(m, m, name, 'odml.biased_swish', [input, b], { approximate: false },
    (d, [dx, db]) => {
      const biased = add(d, dx, db, 'biased');
      const [sw] = composite(m, d, 'swish', 'odml.swish', [biased], {},
        (e, [ex]) => [mul(e, ex, unary(e, 'LOGISTIC', ex, 'gate'), 'swish')]);
      return [sw, db];
    }, 'biased_swish');
  const [h1, b1] = block(conv3x3(m, x, 'conv1', 5), m.rand32('block/bias', [5], 0.5), 'block1');
  const [h2] = block(conv3x3(m, h1, 'conv2', 5), b1, 'block2');
  m.output(h2);
});

// ---- Keras TensorList loops (select-TF ops) -------------------------------------------
//
// No runtime here runs select-TF ops, so each such model has a twin,
// `<name>_builtin`, computing the same function with builtins (a list is a
// dense tensor carried through the loop; an item is set by arithmetic on a
// one-hot row mask, unlike the converter's SELECT_V2), and the harness runs the
// twin in the TFLite runtimes (spec reference_model) as the reference for the
// ONNX of the Flex model. The twin is a test model of its own too.

// A protobuf message of [field, value] pairs: varints (numbers), bytes
// (Uint8Array / arrays of bytes) or nested messages (arrays of pairs).
function protobuf(fields) {
  const out = [];
  const varint = (v) => {
    let x = BigInt.asUintN(64, BigInt(v));
    do {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      out.push(x ? b | 0x80 : b);
    } while (x);
  };
  for (const [field, value] of fields) {
    if (typeof value === 'number' || typeof value === 'bigint') {
      varint(field << 3);
      varint(value);
    } else {
      const bytes = value instanceof Uint8Array ? [...value] : typeof value === 'string'
        ? [...new TextEncoder().encode(value)] : Array.isArray(value[0]) ? protobuf(value) : value;
      varint((field << 3) | 2);
      varint(bytes.length);
      out.push(...bytes);
    }
  }
  return out;
}
// A Flex op's custom options: FlexBuffer [op name, NodeDef {op, input x n, attr}].
// attrs: { name: ['type' | 'i' | 'b', value] } (AttrValue type = 6, i = 3, b = 5).
function flexOptions(op, inputs, attrs) {
  const fieldOf = { type: 6, i: 3, b: 5 };
  const def = [[2, op], ...new Array(inputs).fill([3, '']),
    ...Object.entries(attrs).map(([k, [kind, v]]) => [5, [[1, k], [2, [[fieldOf[kind], v]]]]])];
  return flexbuffer([op, flex.blob(protobuf(def))]);
}
const DT_FLOAT = 1;
function listOp(g, op, inputs, outputs, attrs) {
  g.customOp(`Flex${op}`, inputs, outputs, undefined, { bytes: flexOptions(op, inputs.length, attrs) });
}
const listTensor = (g, name) => g.tensor(name, [], 'VARIANT');

// The two ways of writing one list: select-TF ops (flex) or builtins on a
// dense tensor [length, ...element] (the twin).
function lists(flex, length, element) {
  const dense = [length, ...element];
  return {
    reserve(g, name) {
      if (!flex) return g.f32(name, dense, new Array(dense.reduce((a, b) => a * b, 1)).fill(0));
      const l = listTensor(g, name);
      listOp(g, 'TensorListReserve', [g.i32(`${name}/element_shape`, [element.length], [-1, ...element.slice(1)]),
        g.i32(`${name}/num_elements`, [], [length])], [l], { element_dtype: ['type', DT_FLOAT], shape_type: ['type', 3] });
      return l;
    },
    fromTensor(g, x, name) {
      if (!flex) return x;
      const l = listTensor(g, name);
      listOp(g, 'TensorListFromTensor', [x, g.i32(`${name}/element_shape`, [element.length], element)], [l],
        { element_dtype: ['type', DT_FLOAT], shape_type: ['type', 3] });
      return l;
    },
    input(b, name) { return flex ? b.input(name, [], 'VARIANT') : b.input(name, dense); },
    getItem(g, l, index, name) {
      if (!flex) return row(g, l, index, name);
      const y = g.tensor(name, element);
      listOp(g, 'TensorListGetItem', [l, index, g.i32(`${name}/element_shape`, [element.length], element)], [y],
        { element_dtype: ['type', DT_FLOAT] });
      return y;
    },
    setItem(g, l, index, item, name) {
      if (flex) {
        const out = listTensor(g, name);
        listOp(g, 'TensorListSetItem', [l, index, item], [out],
          { element_dtype: ['type', DT_FLOAT], resize_if_index_out_of_bounds: ['b', 0] });
        return out;
      }
      // list * (1 - mask) + item * mask, mask = CAST(EQUAL(iota, index)) of shape [length, 1, ...].
      const ones = new Array(element.length).fill(1);
      const iota = g.i32(`${name}/iota`, [length, ...ones], [...new Array(length).keys()]);
      const hit = g.tensor(`${name}/hit`, [length, ...ones], 'BOOL');
      g.op('EQUAL', [iota, index], [hit]);
      const mask = g.tensor(`${name}/mask`, [length, ...ones]);
      g.op('CAST', [hit], [mask], 'CastOptions', { in_data_type: 'BOOL', out_data_type: 'FLOAT32' });
      const keep = sub(g, g.f32(`${name}/one`, [], [1]), mask, `${name}/keep`);
      const kept = g.tensor(`${name}/kept`, dense);
      g.op('MUL', [l, keep], [kept], 'MulOptions', NONE);
      const put = g.tensor(`${name}/put`, dense);
      g.op('MUL', [item, mask], [put], 'MulOptions', NONE);
      const y = g.tensor(name, dense);
      g.op('ADD', [kept, put], [y], 'AddOptions', NONE);
      return y;
    },
    stack(g, l, name) {
      const y = g.tensor(name, dense);
      if (flex) {
        listOp(g, 'TensorListStack', [l, g.i32(`${name}/element_shape`, [element.length], [-1, ...element.slice(1)])],
          [y], { element_dtype: ['type', DT_FLOAT], num_elements: ['i', length] });
      } else {
        g.op('RESHAPE', [l, g.i32(`${name}/shape`, [dense.length], dense)], [y], 'ReshapeOptions', { new_shape: dense });
      }
      return y;
    },
  };
}

// A Keras SimpleRNN with return_sequences=True as TensorFlow writes it
// without lowering its TensorList: sequence [2, 5, 3] -> time-major ->
// Reserve(element [-1, 4], 5) -> WHILE (t < 5) over (t, h, list, sequence):
// h = TANH(x_t W + h U + b), list = SetItem(list, t, h) -> Stack -> [2, 5, 4].
function tensorListRnn(flex) {
  return (m) => {
    if (flex) m.spec.reference_model = 'flow_tensorlist_rnn_builtin.tflite';
    m.rand = seeded('flow_tensorlist_rnn');  // the twin's weights are the same
    const L = lists(flex, 5, [2, 4]);
    const seq = m.input('sequence', [2, 5, 3]);
    const tm = m.tensor('time_major', [5, 2, 3]);
    m.op('TRANSPOSE', [seq, m.i32('time_major/perm', [3], [1, 0, 2])], [tm], 'TransposeOptions', {});
    const list0 = L.reserve(m, 'outputs');
    const h0 = m.f32('h0', [2, 4], new Array(8).fill(0));
    const t0 = m.i32('t0', [], [0]);
    const values = [t0, h0, list0, tm];
    const condIndex = m.subgraph('rnn_cond', (c) => {
      const [t] = [c.input('c/t', [], 'INT32'), c.input('c/h', [2, 4]), L.input(c, 'c/list'), c.input('c/seq', [5, 2, 3])];
      c.output(counting(c, t, 5, 't'));
    });
    const bodyIndex = m.subgraph('rnn_body', (b) => {
      const t = b.input('b/t', [], 'INT32');
      const hp = b.input('b/h', [2, 4]);
      const list = L.input(b, 'b/list');
      const s = b.input('b/seq', [5, 2, 3]);
      const xt = row(b, s, t, 'x_t');
      const pre = add(b, fullyConnected(b, xt, 'kernel', 4), fullyConnected(b, hp, 'recurrent', 4, { bias: false }),
        'pre_activation');
      const h = unary(b, 'TANH', pre, 'h');
      b.output(next(b, t, 't'), h, L.setItem(b, list, t, h, 'b/list_next'), s);
    });
    const outs = [m.tensor('loop/t', [], 'INT32'), m.tensor('loop/h', [2, 4]),
      flex ? listTensor(m, 'loop/list') : m.tensor('loop/list', [5, 2, 4]), m.tensor('loop/seq', [5, 2, 3])];
    m.op('WHILE', values, outs, 'WhileOptions', { cond_subgraph_index: condIndex, body_subgraph_index: bodyIndex });
    const stacked = L.stack(m, outs[2], 'stacked');
    const y = m.tensor('sequence_out', [2, 5, 4]);
    m.op('TRANSPOSE', [stacked, m.i32('batch_major/perm', [3], [1, 0, 2])], [y], 'TransposeOptions', {});
    m.output(y, outs[1]);
  };
}
def('tensorlist_rnn', 'a SimpleRNN (return_sequences) over select-TF TensorList ops: Reserve (element shape ' +
  '[-1, 4], 5 items) carried through WHILE, SetItem of each step\'s h, Stack after the loop; reference: the ' +
  'builtin twin flow_tensorlist_rnn_builtin in the TFLite runtimes', tensorListRnn(true));
def('tensorlist_rnn_builtin', 'the function of flow_tensorlist_rnn with builtins: the list a dense [5, 2, 4] ' +
  'tensor, an item set as list * (1 - mask) + h * mask', tensorListRnn(false));

// FromTensor + GetItem: a list made of x [4, 3], read item by item in a loop
// that writes 2 * item + 1 into a second list, read in reverse order.
function tensorListMap(flex) {
  return (m) => {
    if (flex) m.spec.reference_model = 'flow_tensorlist_map_builtin.tflite';
    m.rand = seeded('flow_tensorlist_map');
    const L = lists(flex, 4, [3]);
    const x = m.input('x', [4, 3]);
    const source = L.fromTensor(m, x, 'source');
    const target0 = L.reserve(m, 'target');
    const values = [m.i32('i0', [], [0]), source, target0];
    const condIndex = m.subgraph('map_cond', (c) => {
      const i = c.input('c/i', [], 'INT32');
      L.input(c, 'c/source');
      L.input(c, 'c/target');
      c.output(counting(c, i, 4, 'i'));
    });
    const bodyIndex = m.subgraph('map_body', (b) => {
      const i = b.input('b/i', [], 'INT32');
      const src = L.input(b, 'b/source');
      const dst = L.input(b, 'b/target');
      const item = L.getItem(b, src, i, 'item');
      const y = add(b, mul(b, item, b.f32('two', [], [2]), 'doubled'), b.f32('one', [], [1]), 'mapped');
      const at = sub(b, b.i32('last', [], [3]), i, 'reversed_index');
      b.output(next(b, i, 'i'), src, L.setItem(b, dst, at, y, 'b/target_next'));
    });
    const outs = [m.tensor('loop/i', [], 'INT32'),
      flex ? listTensor(m, 'loop/source') : m.tensor('loop/source', [4, 3]),
      flex ? listTensor(m, 'loop/target') : m.tensor('loop/target', [4, 3])];
    m.op('WHILE', values, outs, 'WhileOptions', { cond_subgraph_index: condIndex, body_subgraph_index: bodyIndex });
    m.output(L.stack(m, outs[2], 'mapped_reversed'));
  };
}
def('tensorlist_map', 'TensorListFromTensor of x [4, 3], GetItem of each row in a WHILE, 2 * row + 1 set into a ' +
  'Reserve\'d list at index 3 - i, Stack; reference: the builtin twin flow_tensorlist_map_builtin',
  tensorListMap(true));
def('tensorlist_map_builtin', 'the function of flow_tensorlist_map with builtins (GATHER for GetItem, a mask for ' +
  'SetItem)', tensorListMap(false));

writeModels({ dir: JSON_DIR, prefix: 'flow_', models: MODELS, specsFile: SPECS_FILE });
