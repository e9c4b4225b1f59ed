// The builtin twin of a model with select-TF ("Flex") ops, for the TFLite
// runtimes here, which have no Flex delegate: every Flex op that is an
// ordinary TensorFlow op with a TFLite builtin (AddV2 -> ADD, StridedSlice ->
// STRIDED_SLICE with its masks, ConcatV2 -> CONCATENATION with the constant
// axis as its option, ...) rewritten as that builtin, its options read from
// the op's NodeDef. Written independently of the converter's table
// (core/ops/select_tf.cc), from TensorFlow's op definitions, so that the
// numeric check compares two readings of the NodeDef, not one with itself.
// Everything else (tensors, buffers, other ops) is left as it is, so the
// twin has the model's inputs and outputs.
import fs from 'node:fs';

import { readTfliteModel } from './tflite_model.mjs';
import { DEFAULT_SCHEMA, jsonToTflite, tfliteToJson } from './tflite_rewrite.mjs';

// ---- FlexBuffer [op name, NodeDef] ------------------------------------------

function flexVector(bytes) {
  const u = Uint8Array.from(bytes);
  const view = new DataView(u.buffer);
  const uint = (at, w) => (w === 1 ? view.getUint8(at) : w === 2 ? view.getUint16(at, true)
    : w === 4 ? view.getUint32(at, true) : Number(view.getBigUint64(at, true)));
  const rootWidth = u[u.length - 1];
  const rootPacked = u[u.length - 2];
  if (rootPacked >> 2 !== 10) throw new Error('select-TF options: no FlexBuffer vector');  // VECTOR
  const rootAt = u.length - 2 - rootWidth;
  const vec = rootAt - uint(rootAt, rootWidth);
  const width = 1 << (rootPacked & 3);
  const length = uint(vec - width, width);
  const out = [];
  for (let i = 0; i < length; i++) {
    const packed = u[vec + length * width + i];
    const type = packed >> 2;
    if (type !== 5 && type !== 25) throw new Error('select-TF options: an element is no string or blob');
    const at = vec + i * width;
    const target = at - uint(at, width);
    const lenWidth = 1 << (packed & 3);
    const size = uint(target - lenWidth, lenWidth);
    out.push(u.subarray(target, target + size));
  }
  return out;
}

// ---- protobuf: NodeDef.attr (5) -> { name: AttrValue } ----------------------

function reader(bytes) {
  let at = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= bytes.length) throw new Error('select-TF options: a NodeDef cut short');
      const b = bytes[at++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  return {
    done: () => at >= bytes.length,
    varint,
    fields() {
      const out = [];
      while (at < bytes.length) {
        const tag = Number(varint());
        const field = tag >> 3;
        const wire = tag & 7;
        if (wire === 0) out.push([field, varint()]);
        else if (wire === 2) {
          const n = Number(varint());
          out.push([field, bytes.subarray(at, at + n)]);
          at += n;
        } else if (wire === 5) {
          out.push([field, new DataView(bytes.buffer, bytes.byteOffset + at, 4).getFloat32(0, true)]);
          at += 4;
        } else if (wire === 1) at += 8;
        else throw new Error(`select-TF options: wire type ${wire}`);
      }
      return out;
    },
  };
}

function attrValue(bytes) {
  const v = {};
  for (const [field, x] of reader(bytes).fields()) {
    if (field === 3) v.i = Number(BigInt.asIntN(64, x));
    else if (field === 5) v.b = x !== 0n;
    else if (field === 6) v.type = Number(x);
    else if (field === 4) v.f = x;
    else if (field === 1) {
      v.list = [];
      for (const [f, y] of reader(x).fields()) {
        if (f !== 3) continue;
        if (typeof y === 'bigint') v.list.push(Number(BigInt.asIntN(64, y)));
        else for (const r = reader(y); !r.done();) v.list.push(Number(BigInt.asIntN(64, r.varint())));
      }
    }
  }
  return v;
}

export function readNodeDef(options) {
  const [name, def] = flexVector(options);
  const attrs = {};
  for (const [field, x] of reader(def).fields()) {
    if (field !== 5) continue;
    let key = '';
    let value = {};
    for (const [f, y] of reader(x).fields()) {
      if (f === 1) key = new TextDecoder().decode(y);
      if (f === 2) value = attrValue(y);
    }
    attrs[key] = value;
  }
  return { op: new TextDecoder().decode(name), attrs };
}

// ---- the twins ----------------------------------------------------------------

// tensorflow.DataType -> TensorType name (the types ArgMax and Shape write).
const TF_TYPES = { 3: 'INT32', 9: 'INT64' };
const int = (a, k, d = 0) => (a[k]?.i ?? d);
const bool = (a, k) => !!a[k]?.b;

// tf op -> [builtin, options type, (attrs, axis) => options]; the options
// function is absent for builtins without options.
const plain = (op) => [op];
const reducer = (op) => [op, 'ReducerOptions', (a) => ({ keep_dims: bool(a, 'keep_dims') })];
export const TWINS = {
  Abs: plain('ABS'), Add: ['ADD', 'AddOptions', () => ({})], AddN: plain('ADD_N'),
  AddV2: ['ADD', 'AddOptions', () => ({})], All: reducer('REDUCE_ALL'), Any: reducer('REDUCE_ANY'),
  ArgMax: ['ARG_MAX', 'ArgMaxOptions', (a) => ({ output_type: TF_TYPES[a.output_type?.type ?? 9] })],
  ArgMin: ['ARG_MIN', 'ArgMinOptions', (a) => ({ output_type: TF_TYPES[a.output_type?.type ?? 9] })],
  Atan2: plain('ATAN2'),
  BatchMatMulV2: ['BATCH_MATMUL', 'BatchMatMulOptions', (a) => ({ adj_x: bool(a, 'adj_x'), adj_y: bool(a, 'adj_y') })],
  BatchMatMulV3: ['BATCH_MATMUL', 'BatchMatMulOptions', (a) => ({ adj_x: bool(a, 'adj_x'), adj_y: bool(a, 'adj_y') })],
  BroadcastTo: plain('BROADCAST_TO'), Cast: plain('CAST'), Ceil: plain('CEIL'),
  ConcatV2: ['CONCATENATION', 'ConcatenationOptions', (a, axis) => ({ axis })], Cos: plain('COS'),
  Cumsum: ['CUMSUM', 'CumsumOptions', (a) => ({ exclusive: bool(a, 'exclusive'), reverse: bool(a, 'reverse') })],
  Elu: plain('ELU'), Equal: plain('EQUAL'), Exp: plain('EXP'), ExpandDims: plain('EXPAND_DIMS'),
  Fill: plain('FILL'), Floor: plain('FLOOR'), FloorDiv: plain('FLOOR_DIV'), FloorMod: plain('FLOOR_MOD'),
  GatherNd: plain('GATHER_ND'),
  GatherV2: ['GATHER', 'GatherOptions', (a, axis) => ({ axis, batch_dims: int(a, 'batch_dims') })],
  Greater: plain('GREATER'), GreaterEqual: plain('GREATER_EQUAL'),
  LeakyRelu: ['LEAKY_RELU', 'LeakyReluOptions', (a) => ({ alpha: a.alpha?.f ?? 0.2 })],
  Less: plain('LESS'), LessEqual: plain('LESS_EQUAL'), Log: plain('LOG'), LogSoftmax: plain('LOG_SOFTMAX'),
  LogicalAnd: plain('LOGICAL_AND'), LogicalNot: plain('LOGICAL_NOT'), LogicalOr: plain('LOGICAL_OR'),
  Max: reducer('REDUCE_MAX'), Maximum: plain('MAXIMUM'), Mean: reducer('MEAN'), Min: reducer('REDUCE_MIN'),
  Minimum: plain('MINIMUM'), Mul: ['MUL', 'MulOptions', () => ({})], Neg: plain('NEG'), NotEqual: plain('NOT_EQUAL'),
  OneHot: ['ONE_HOT', 'OneHotOptions', (a) => ({ axis: int(a, 'axis', -1) })],
  Pack: ['PACK', 'PackOptions', (a) => ({ values_count: int(a, 'N'), axis: int(a, 'axis') })],
  Pad: plain('PAD'), PadV2: plain('PADV2'), Pow: plain('POW'), Prod: reducer('REDUCE_PROD'),
  Range: plain('RANGE'), Rank: plain('RANK'), RealDiv: ['DIV', 'DivOptions', () => ({})], Relu: plain('RELU'),
  Relu6: plain('RELU6'), Reshape: plain('RESHAPE'), ReverseV2: plain('REVERSE_V2'), Round: plain('ROUND'),
  Rsqrt: plain('RSQRT'), ScatterNd: plain('SCATTER_ND'), Select: plain('SELECT'), SelectV2: plain('SELECT_V2'),
  Shape: ['SHAPE', 'ShapeOptions', (a) => ({ out_type: TF_TYPES[a.out_type?.type ?? 3] })],
  Sigmoid: plain('LOGISTIC'), Sign: plain('SIGN'), Sin: plain('SIN'), Slice: plain('SLICE'),
  Softmax: ['SOFTMAX', 'SoftmaxOptions', () => ({ beta: 1 })],
  Split: ['SPLIT', 'SplitOptions', (a) => ({ num_splits: int(a, 'num_split') })],
  SplitV: ['SPLIT_V', 'SplitVOptions', (a) => ({ num_splits: int(a, 'num_split') })],
  Sqrt: plain('SQRT'), Square: plain('SQUARE'), SquaredDifference: plain('SQUARED_DIFFERENCE'),
  Squeeze: ['SQUEEZE', 'SqueezeOptions', (a) => ({ squeeze_dims: a.squeeze_dims?.list ?? [] })],
  StridedSlice: ['STRIDED_SLICE', 'StridedSliceOptions', (a) => ({
    begin_mask: int(a, 'begin_mask'), end_mask: int(a, 'end_mask'), ellipsis_mask: int(a, 'ellipsis_mask'),
    new_axis_mask: int(a, 'new_axis_mask'), shrink_axis_mask: int(a, 'shrink_axis_mask'),
  })],
  Sub: ['SUB', 'SubOptions', () => ({})], Sum: reducer('SUM'), Tanh: plain('TANH'), Tile: plain('TILE'),
  Transpose: plain('TRANSPOSE'),
  Unpack: ['UNPACK', 'UnpackOptions', (a) => ({ num: int(a, 'num'), axis: int(a, 'axis') })], Where: plain('WHERE'), ZerosLike: plain('ZEROS_LIKE'),
};
// The operands TFLite's kernel reads as int32 only, where TF also takes int64.
const INT32_OPERANDS = { STRIDED_SLICE: [1, 2, 3], SCATTER_ND: [0, 2] };

// Builtins whose first registered version is not 1 (TFLite's kernels
// register BROADCAST_TO from version 2: version 1 was the converter's
// unrolled form).
const FIRST_VERSION = { BROADCAST_TO: 2 };

// TF ops with no builtin twin, written as a few builtins: (json, subgraph,
// op, builtinCode) -> the op replaced in place.
const COMPOSITES = {
  // Softplus(x) = LOG(ADD(EXP(x), 1)) (TF's thresholds change nothing in float32
  // for |x| < 15: the test models stay there).
  Softplus(json, sg, op, builtinCode) {
    const y = sg.tensors[op.outputs[0]];
    json.buffers.push({ data: [0, 0, 0x80, 0x3f] });  // 1.0f
    sg.tensors.push({ name: `${y.name}/one`, shape: [], type: 'FLOAT32', buffer: json.buffers.length - 1 });
    const one = sg.tensors.length - 1;
    sg.tensors.push({ ...y, name: `${y.name}/exp`, buffer: 0 }, { ...y, name: `${y.name}/exp_plus_one`, buffer: 0 });
    const [e, a] = [sg.tensors.length - 2, sg.tensors.length - 1];
    const plain = (code, inputs, outputs, extra = {}) => {
      const o = { ...op, opcode_index: builtinCode(code), inputs, outputs, builtin_options_type: 'NONE', ...extra };
      delete o.custom_options;
      delete o.custom_options_format;
      if (!extra.builtin_options) delete o.builtin_options;
      return o;
    };
    const at = sg.operators.indexOf(op);
    sg.operators.splice(at, 1, plain('EXP', [op.inputs[0]], [e]),
      plain('ADD', [e, one], [a], { builtin_options_type: 'AddOptions', builtin_options: {} }),
      plain('LOG', [a], [op.outputs[0]]));
  },
};

// The axis operand the builtin has as an option: its input index (-1: the last).
const AXIS_INPUT = { ConcatV2: -1, GatherV2: 2 };

// The BuiltinOperator codes by name, from the schema flatc's JSON names them by.
let codesByName = null;
function builtinCodeOf(name) {
  if (!codesByName) {
    const text = fs.readFileSync(DEFAULT_SCHEMA, 'utf8');
    const block = text.slice(text.indexOf('enum BuiltinOperator'));
    codesByName = new Map([...block.slice(0, block.indexOf('}')).matchAll(/(\w+)\s*=\s*(\d+)/g)]
      .map((m) => [m[1], Number(m[2])]));
  }
  if (!codesByName.has(name)) throw new Error(`no builtin ${name} in the schema`);
  return codesByName.get(name);
}

// The constant scalar of tensor `t` of subgraph `g` (int32 or int64), or null.
function constantScalar(json, g, t) {
  const tensor = json.subgraphs[g].tensors[t];
  const data = json.buffers[tensor.buffer]?.data;
  if (!data || !data.length) return null;
  const view = new DataView(Uint8Array.from(data).buffer);
  if (tensor.type === 'INT64') return data.length === 8 ? Number(view.getBigInt64(0, true)) : null;
  return data.length === 4 ? view.getInt32(0, true) : null;
}

/**
 * The Flex ops of a model (flatc JSON object) rewritten as their builtin
 * twins, in place. Returns the TF ops rewritten (sorted, unique), or null
 * when the model has no Flex op or one with no twin here.
 */
export function rewriteSelectTf(json) {
  const codes = json.operator_codes ?? [];
  const flex = codes.map((c) => (c.custom_code?.startsWith('Flex') ? c.custom_code.slice(4) : null));
  if (!flex.some((n) => n)) return null;
  if (flex.some((n) => n && !TWINS[n] && !COMPOSITES[n])) return null;
  // One operator code per twin builtin, appended (the Flex codes stay, unused).
  const codeOf = new Map();
  const builtinCode = (name) => {
    if (!codeOf.has(name)) {
      codes.push({ deprecated_builtin_code: Math.min(builtinCodeOf(name), 127), builtin_code: name,
        version: FIRST_VERSION[name] ?? 1 });
      codeOf.set(name, codes.length - 1);
    }
    return codeOf.get(name);
  };
  const done = new Set();
  let left = false;
  json.subgraphs.forEach((sg, g) => {
    for (const op of [...(sg.operators ?? [])]) {
      const tf = flex[op.opcode_index ?? 0];
      if (!tf) continue;
      const def = readNodeDef(op.custom_options ?? []);
      if (def.op !== tf) throw new Error(`Flex${tf}: its options name ${def.op}`);
      if (COMPOSITES[tf]) {
        COMPOSITES[tf](json, sg, op, builtinCode);
        done.add(tf);
        continue;
      }
      const [builtin, optionsType, options] = TWINS[tf];
      let axis;
      if (tf in AXIS_INPUT) {
        const slot = AXIS_INPUT[tf] < 0 ? op.inputs.length - 1 : AXIS_INPUT[tf];
        axis = constantScalar(json, g, op.inputs[slot]);
        if (axis === null) {  // the converter refuses it too
          left = true;
          continue;
        }
        op.inputs = op.inputs.filter((_, i) => i !== slot);
      }
      op.opcode_index = builtinCode(builtin);
      delete op.custom_options;
      delete op.custom_options_format;
      if (optionsType) {
        op.builtin_options_type = optionsType;
        op.builtin_options = options(def.attrs, axis);
      } else {
        op.builtin_options_type = 'NONE';
        delete op.builtin_options;
      }
      // Index operands TFLite's kernel takes as int32 only (TF's int64 too):
      // a CAST before the op, as TFLite's converter writes.
      for (const slot of INT32_OPERANDS[builtin] ?? []) {
        const t = slot < op.inputs.length ? sg.tensors[op.inputs[slot]] : null;
        if (!t || t.type !== 'INT64') continue;
        sg.tensors.push({ ...t, name: `${t.name}/int32`, type: 'INT32', buffer: 0 });
        const cast = { ...op, opcode_index: builtinCode('CAST'), inputs: [op.inputs[slot]],
          outputs: [sg.tensors.length - 1], builtin_options_type: 'NONE' };
        delete cast.builtin_options;
        sg.operators.splice(sg.operators.indexOf(op), 0, cast);
        op.inputs[slot] = sg.tensors.length - 1;
      }
      done.add(tf);
    }
  });
  if (left) return null;
  // Only the codes still used (an unused Flex code makes tfjs-tflite load
  // the Flex delegate).
  const used = [...new Set(json.subgraphs.flatMap((sg) => (sg.operators ?? []).map((op) => op.opcode_index ?? 0)))]
    .sort((x, y) => x - y);
  const index = new Map(used.map((c, i) => [c, i]));
  json.operator_codes = used.map((c) => codes[c]);
  for (const sg of json.subgraphs) for (const op of sg.operators ?? []) op.opcode_index = index.get(op.opcode_index ?? 0);
  return [...done].sort();
}

/**
 * The builtin twin of `file` (model: its readTfliteModel result) written to
 * `outFile`; the TF ops rewritten, or null when the model needs no twin or
 * has a Flex op with no twin.
 */
export function writeSelectTfTwin(file, model, outFile) {
  const json = tfliteToJson(file, model);
  const ops = rewriteSelectTf(json);
  if (!ops) return null;
  jsonToTflite(json, outFile);
  return ops;
}

/**
 * The twin the TFLite runtimes run instead of the model in `file` (`bytes`):
 * { bytes, file: outFile, ops } when the file has select-TF ops that all
 * have a twin, else null (no "Flex" in the bytes: not read further).
 */
export function selectTfTwinOf(file, bytes, outFile, signature = null) {
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('Flex')) return null;
  const ops = writeSelectTfTwin(file, readTfliteModel(bytes, { signature }), outFile);
  return ops ? { bytes: new Uint8Array(fs.readFileSync(outFile)), file: outFile, ops } : null;
}
