#!/usr/bin/env node
// Writes the test models of select-TF ops with a builtin twin
// (core/ops/select_tf.cc): Flex ops whose options are a FlexBuffer [TF op
// name, NodeDef] with the attributes TensorFlow writes, one model per family,
// every op of the table at least once, every dimension a distinct size. As
// FlatBuffer JSON into tests/models/json/selecttf_*.json (specs:
// tests/models/specs_selecttf.json). Same conventions as make_models.mjs
// (README.md); only selecttf_* files are touched.
//
//   node tests/models/make_models_selecttf.mjs      # from the repository root
//
// No runtime here runs Flex ops: the numeric harness runs each model's builtin
// twin (tests/numeric/lib/select_tf_twin.mjs reads the NodeDefs on its own).
// Where is left out: its output has a run-time row count that no runtime here
// returns (as for the builtin WHERE, data_where is a SKIP).
// Deterministic; Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flex, flexbuffer, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_selecttf.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `selecttf_${name}`, description, build });

// ---- NodeDef (protobuf) and the Flex op ---------------------------------------------

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
    } else if (value instanceof Float32Array) {
      varint((field << 3) | 5);
      out.push(...new Uint8Array(value.buffer));
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

function varintBytes(v) {
  const out = [];
  let x = BigInt.asUintN(64, BigInt(v));
  do {
    const b = Number(x & 0x7fn);
    x >>= 7n;
    out.push(x ? b | 0x80 : b);
  } while (x);
  return out;
}

// tensorflow.DataType
const DT = { FLOAT: 1, INT32: 3, INT64: 9, BOOL: 10 };
// AttrValue forms: { i }, { b }, { type }, { f }, { list: [ints] }.
function attrValue(v) {
  if ('i' in v) return [[3, v.i]];
  if ('b' in v) return [[5, v.b ? 1 : 0]];
  if ('type' in v) return [[6, v.type]];
  if ('f' in v) return [[4, new Float32Array([v.f])]];
  if ('list' in v) return [[1, v.list.length ? [[3, v.list.flatMap(varintBytes)]] : []]];
  throw new Error(`attribute ${JSON.stringify(v)}`);
}

// A Flex op: custom code Flex<op>, options [op, NodeDef {op, input x n, attr}].
function tf(g, op, inputs, outShapes, attrs = {}, outType = 'FLOAT32') {
  const outs = outShapes.map(([name, shape, type]) => g.tensor(name, shape, type ?? outType));
  const nodeDef = [[1, outs.length ? g.tensors[outs[0]].name : op], [2, op],
    ...inputs.map((t) => [3, g.tensors[t].name]),
    ...Object.entries(attrs).map(([k, v]) => [5, [[1, k], [2, attrValue(v)]]])];
  g.customOp(`Flex${op}`, inputs, outs, undefined, { bytes: flexbuffer([op, flex.blob(protobuf(nodeDef))]) });
  return outs.length === 1 ? outs[0] : outs;
}
const T = { T: { type: DT.FLOAT } };

// ---- arithmetic -------------------------------------------------------------------------

def('arith', 'AddV2, Add, AddN, Sub, Mul, RealDiv, Maximum, Minimum, Pow, SquaredDifference, FloorDiv, ' +
  'FloorMod on a [2,3,4] and b [3,4] in [0.5,2] (broadcast), c a constant [4]; Atan2(a, a + b)', (m) => {
  const a = m.input('a', [2, 3, 4]);
  const b = m.input('b', [3, 4], 'FLOAT32', [0.5, 2]);
  const c = m.f32('c', [4], [0.5, -1.25, 2, 0.75]);
  const s = [2, 3, 4];
  const addV2 = tf(m, 'AddV2', [a, b], [['add_v2', s]], T);
  m.output(addV2);
  m.output(tf(m, 'Add', [a, c], [['add', s]], T));
  m.output(tf(m, 'Sub', [a, c], [['sub', s]], T));
  const mul = tf(m, 'Mul', [a, b], [['mul', s]], T);
  m.output(mul, tf(m, 'AddN', [a, mul, a], [['add_n', s]], { N: { i: 3 }, ...T }));
  m.output(tf(m, 'RealDiv', [a, b], [['real_div', s]], T));
  m.output(tf(m, 'Maximum', [a, b], [['maximum', s]], T));
  m.output(tf(m, 'Minimum', [a, c], [['minimum', s]], T));
  m.output(tf(m, 'Pow', [b, c], [['pow', [3, 4]]], T));
  m.output(tf(m, 'SquaredDifference', [a, b], [['squared_difference', s]], T));
  m.output(tf(m, 'FloorDiv', [a, b], [['floor_div', s]], T));
  m.output(tf(m, 'FloorMod', [a, b], [['floor_mod', s]], T));
  // TFLite's ATAN2 takes operands of one shape (TF's broadcasts).
  m.output(tf(m, 'Atan2', [a, addV2], [['atan2', s]], T));
});

// ---- element-wise functions ------------------------------------------------------------

def('unary', 'Abs, Ceil, Cos, Elu, Exp, Floor, Neg, Relu, Relu6, Round, Sigmoid, Sign, Sin, Softmax, ' +
  'LogSoftmax, Softplus (no builtin twin: ONNX Softplus), Square, Tanh, LeakyRelu (alpha 0.3) of x [3,4,5] in [-8,8); Log, Sqrt, Rsqrt of p in [0.5,3)', (m) => {
  const x = m.input('x', [3, 4, 5], 'FLOAT32', [-8, 8]);
  const p = m.input('p', [3, 4, 5], 'FLOAT32', [0.5, 3]);
  const s = [3, 4, 5];
  for (const op of ['Abs', 'Ceil', 'Cos', 'Elu', 'Exp', 'Floor', 'Neg', 'Relu', 'Relu6', 'Round', 'Sigmoid', 'Sign',
    'Sin', 'Softmax', 'LogSoftmax', 'Softplus', 'Square', 'Tanh']) m.output(tf(m, op, [x], [[op.toLowerCase(), s]], T));
  m.output(tf(m, 'LeakyRelu', [x], [['leaky_relu', s]], { alpha: { f: 0.3 }, ...T }));
  for (const op of ['Log', 'Sqrt', 'Rsqrt']) m.output(tf(m, op, [p], [[op.toLowerCase(), s]], T));
});

// ---- comparisons, logic, selection ----------------------------------------------------------

def('compare', 'Equal, NotEqual (int32 [2,3,4] vs [4], incompatible_shape_error), Less, LessEqual, Greater, ' +
  'GreaterEqual (float [2,3,4] vs [3,4]), LogicalAnd, LogicalOr, LogicalNot, Select, SelectV2', (m) => {
  const i = m.input('i', [2, 3, 4], 'INT32', [0, 3]);
  const j = m.input('j', [4], 'INT32', [0, 3]);
  const a = m.input('a', [2, 3, 4]);
  const b = m.input('b', [3, 4]);
  const s = [2, 3, 4];
  const I = { T: { type: DT.INT32 }, incompatible_shape_error: { b: true } };
  m.output(tf(m, 'Equal', [i, j], [['equal', s]], I, 'BOOL'));
  m.output(tf(m, 'NotEqual', [i, j], [['not_equal', s]], I, 'BOOL'));
  const lt = tf(m, 'Less', [a, b], [['less', s]], T, 'BOOL');
  const le = tf(m, 'LessEqual', [a, b], [['less_equal', s]], T, 'BOOL');
  const gt = tf(m, 'Greater', [a, b], [['greater', s]], T, 'BOOL');
  const ge = tf(m, 'GreaterEqual', [b, a], [['greater_equal', s]], T, 'BOOL');
  m.output(lt, le, gt, ge);
  const eq = m.outputs[0];
  m.output(tf(m, 'LogicalAnd', [le, ge], [['logical_and', s]], {}, 'BOOL'));
  m.output(tf(m, 'LogicalOr', [lt, eq], [['logical_or', s]], {}, 'BOOL'));
  m.output(tf(m, 'LogicalNot', [gt], [['logical_not', s]], {}, 'BOOL'));
  const neg = tf(m, 'Neg', [a], [['neg_a', s]], T);
  m.output(tf(m, 'Select', [lt, a, neg], [['select', s]], T));
  m.output(tf(m, 'SelectV2', [gt, a, b], [['select_v2', s]], T));
});

// ---- shapes and data movement ------------------------------------------------------------

def('shape', 'Reshape, Transpose, ConcatV2 (constant axis -1), Pack (axis 1), Unpack, ExpandDims, Squeeze, ' +
  'Shape, Rank, Fill, ZerosLike, Tile, Slice, StridedSlice (begin/end masks, a negative stride; shrink_axis_mask), ' +
  'Pad, PadV2, BroadcastTo, ReverseV2, Split, SplitV, Cast of x [2,3,5]', (m) => {
  // LiteRT.js returns stale memory for SHAPE's and RANK's outputs (as for the
  // builtin models): tfjs-tflite is the reference.
  m.spec.reference = 'tfjs';
  const x = m.input('x', [2, 3, 5], 'FLOAT32', [-4, 4]);
  const z = m.input('z', [3, 1]);
  const I = (name, v) => m.i32(name, [v.length], v);
  const shape = [2, 3, 5];
  m.output(tf(m, 'Reshape', [x, I('reshape/shape', [5, 6])], [['reshape', [5, 6]]], { ...T, Tshape: { type: DT.INT32 } }));
  m.output(tf(m, 'Transpose', [x, I('transpose/perm', [2, 0, 1])], [['transpose', [5, 2, 3]]], T));
  m.output(tf(m, 'ConcatV2', [x, x, m.i32('concat/axis', [], [-1])], [['concat', [2, 3, 10]]],
    { N: { i: 2 }, ...T, Tidx: { type: DT.INT32 } }));
  m.output(tf(m, 'Pack', [x, x, x], [['pack', [2, 3, 3, 5]]], { N: { i: 3 }, axis: { i: 1 }, ...T }));
  m.output(...tf(m, 'Unpack', [x], [['unpack_0', [2, 5]], ['unpack_1', [2, 5]], ['unpack_2', [2, 5]]],
    { num: { i: 3 }, axis: { i: 1 }, ...T }));
  const e = tf(m, 'ExpandDims', [x, m.i32('expand/axis', [], [2])], [['expand_dims', [2, 3, 1, 5]]], T);
  m.output(e, tf(m, 'Squeeze', [e], [['squeeze', shape]], { squeeze_dims: { list: [2] }, ...T }));
  m.output(tf(m, 'Shape', [x], [['shape', [3]]], { out_type: { type: DT.INT32 }, ...T }, 'INT32'));
  // (a scalar graph output has no shape LiteRT.js returns: [1])
  const rank = tf(m, 'Rank', [x], [['rank', []]], T, 'INT32');
  m.output(tf(m, 'Reshape', [rank, I('rank/shape', [1])], [['rank_1', [1]]], { T: { type: DT.INT32 } }, 'INT32'));
  const filled = tf(m, 'Fill', [I('fill/dims', [3, 5]), m.f32('fill/value', [], [1.5])], [['fill', [3, 5]]],
    { ...T, index_type: { type: DT.INT32 } });
  m.output(tf(m, 'Mul', [x, filled], [['x_times_fill', shape]], T));
  const zeros = tf(m, 'ZerosLike', [x], [['zeros_like', shape]], T);
  m.output(tf(m, 'Sub', [zeros, x], [['zeros_minus_x', shape]], T));
  m.output(tf(m, 'Tile', [x, I('tile/multiples', [1, 2, 1])], [['tile', [2, 6, 5]]], T));
  m.output(tf(m, 'Slice', [x, I('slice/begin', [0, 1, 1]), I('slice/size', [2, 2, 3])], [['slice', [2, 2, 3]]], T));
  // begin_mask 1 (axis 0 from the start), end_mask 4 (axis 2 to the end of a negative stride).
  m.output(tf(m, 'StridedSlice', [x, I('ss/begin', [1, 1, 4]), I('ss/end', [2, 3, 0]), I('ss/strides', [1, 1, -1])],
    [['strided_slice', [2, 2, 5]]], { ...T, Index: { type: DT.INT32 }, begin_mask: { i: 1 }, end_mask: { i: 4 },
      ellipsis_mask: { i: 0 }, new_axis_mask: { i: 0 }, shrink_axis_mask: { i: 0 } }));
  m.output(tf(m, 'StridedSlice', [x, I('ss2/begin', [0, 1, 0]), I('ss2/end', [2, 2, 5]), I('ss2/strides', [1, 1, 2])],
    [['strided_slice_shrink', [2, 3]]], { ...T, Index: { type: DT.INT32 }, begin_mask: { i: 0 }, end_mask: { i: 0 },
      ellipsis_mask: { i: 0 }, new_axis_mask: { i: 0 }, shrink_axis_mask: { i: 2 } }));
  const paddings = m.i32('pad/paddings', [3, 2], [1, 0, 0, 2, 1, 1]);
  m.output(tf(m, 'Pad', [x, paddings], [['pad', [3, 5, 7]]], T));
  m.output(tf(m, 'PadV2', [x, paddings, m.f32('pad/value', [], [0.5])], [['pad_v2', [3, 5, 7]]], T));
  m.output(tf(m, 'BroadcastTo', [z, I('broadcast/shape', [2, 3, 4])], [['broadcast_to', [2, 3, 4]]], T));
  m.output(tf(m, 'ReverseV2', [x, I('reverse/axis', [1])], [['reverse', shape]], T));
  m.output(...tf(m, 'Split', [m.i32('split/axis', [], [1]), x], [['split_0', [2, 1, 5]], ['split_1', [2, 1, 5]],
    ['split_2', [2, 1, 5]]], { num_split: { i: 3 }, ...T }));
  m.output(...tf(m, 'SplitV', [x, I('split_v/sizes', [2, 3]), m.i32('split_v/axis', [], [2])],
    [['split_v_0', [2, 3, 2]], ['split_v_1', [2, 3, 3]]], { num_split: { i: 2 }, ...T }));
  m.output(tf(m, 'Cast', [x], [['cast', shape]], { SrcT: { type: DT.FLOAT }, DstT: { type: DT.INT32 },
    Truncate: { b: false } }, 'INT32'));
});

// ---- reductions ---------------------------------------------------------------------------

def('reduce', 'Sum, Mean (keep_dims), Max, Min, Prod, ArgMax (int64), ArgMin (int32), Cumsum (exclusive, ' +
  'reverse) of x [2,3,5]; Any, All (keep_dims) of bool [2,3,5]', (m) => {
  const x = m.input('x', [2, 3, 5]);
  const q = m.input('q', [2, 3, 5], 'BOOL');
  const axes = (name, v) => m.i32(name, [v.length], v);
  const K = (keep) => ({ keep_dims: { b: keep }, ...T, Tidx: { type: DT.INT32 } });
  m.output(tf(m, 'Sum', [x, axes('sum/axes', [1])], [['sum', [2, 5]]], K(false)));
  m.output(tf(m, 'Mean', [x, axes('mean/axes', [0, 2])], [['mean', [1, 3, 1]]], K(true)));
  m.output(tf(m, 'Max', [x, axes('max/axes', [-1])], [['max', [2, 3]]], K(false)));
  m.output(tf(m, 'Min', [x, axes('min/axes', [0])], [['min', [3, 5]]], K(false)));
  m.output(tf(m, 'Prod', [x, axes('prod/axes', [2])], [['prod', [2, 3]]], K(false)));
  m.output(tf(m, 'ArgMax', [x, m.i32('arg_max/axis', [], [1])], [['arg_max', [2, 5]]],
    { ...T, output_type: { type: DT.INT64 } }, 'INT64'));
  m.output(tf(m, 'ArgMin', [x, m.i32('arg_min/axis', [], [2])], [['arg_min', [2, 3]]],
    { ...T, output_type: { type: DT.INT32 } }, 'INT32'));
  m.output(tf(m, 'Cumsum', [x, m.i32('cumsum/axis', [], [1])], [['cumsum', [2, 3, 5]]],
    { exclusive: { b: true }, reverse: { b: true }, ...T }));
  m.output(tf(m, 'Any', [q, axes('any/axes', [1])], [['any', [2, 5]]], K(false), 'BOOL'));
  m.output(tf(m, 'All', [q, axes('all/axes', [0, 2])], [['all', [1, 3, 1]]], K(true), 'BOOL'));
});

// ---- indexing, ranges, matrix products ------------------------------------------------------

def('index', 'GatherV2 (constant axis 1), GatherNd, ScatterNd, OneHot, Range, BatchMatMulV2 (adj_y) on ' +
  'params [4,3,5]', (m) => {
  const params = m.input('params', [4, 3, 5]);
  const idx = m.input('idx', [2], 'INT32', [0, 3]);
  const hot = m.input('hot', [2, 3], 'INT32', [0, 4]);
  const updates = m.input('updates', [3, 5]);
  const a = m.input('a', [2, 3, 4]);
  const b = m.input('b', [2, 5, 4]);
  m.output(tf(m, 'GatherV2', [params, idx, m.i32('gather/axis', [], [1])], [['gather', [4, 2, 5]]],
    { batch_dims: { i: 0 }, Tparams: { type: DT.FLOAT }, Tindices: { type: DT.INT32 }, Taxis: { type: DT.INT32 } }));
  m.output(tf(m, 'GatherNd', [params, m.i32('gather_nd/indices', [2, 2], [0, 1, 3, 2])], [['gather_nd', [2, 5]]],
    { Tparams: { type: DT.FLOAT }, Tindices: { type: DT.INT32 } }));
  m.output(tf(m, 'ScatterNd', [m.i32('scatter/indices', [3, 1], [1, 3, 0]), updates, m.i32('scatter/shape', [2], [4, 5])],
    [['scatter_nd', [4, 5]]], { ...T, Tindices: { type: DT.INT32 } }));
  m.output(tf(m, 'OneHot', [hot, m.i32('one_hot/depth', [], [4]), m.f32('one_hot/on', [], [2]),
    m.f32('one_hot/off', [], [-1])], [['one_hot', [2, 3, 4]]], { axis: { i: -1 }, ...T, TI: { type: DT.INT32 } }));
  const range = tf(m, 'Range', [m.f32('range/start', [], [0.5]), m.f32('range/limit', [], [3]),
    m.f32('range/delta', [], [0.5])], [['range', [5]]], { Tidx: { type: DT.FLOAT } });
  m.output(tf(m, 'AddV2', [params, range], [['params_plus_range', [4, 3, 5]]], T));
  m.output(tf(m, 'BatchMatMulV2', [a, b], [['batch_matmul', [2, 3, 5]]], { adj_x: { b: false }, adj_y: { b: true }, ...T }));
});

writeModels({ dir: JSON_DIR, prefix: 'selecttf_', models: MODELS, specsFile: SPECS_FILE });
