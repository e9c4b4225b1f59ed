// Minimal read-only view of a TFLite FlatBuffer: just what the harness needs to
// generate inputs and interpret outputs (tensor names, types, shapes,
// quantization, signature names, and a little about the operators).
//
// FlatBuffers layout recap: the file starts with a uoffset to the root table.
// A table starts with an soffset to its vtable (vtable = table - soffset); the
// vtable holds [vtable bytes, table bytes, field offsets...]. Offsets to
// strings, vectors and sub-tables are uoffsets relative to where they are
// stored. Vectors and strings are prefixed with a uint32 element count.

export const TFL_TYPES = [
  'float32', 'float16', 'int32', 'uint8', 'int64', 'string', 'bool', 'int16',
  'complex64', 'int8', 'float64', 'complex128', 'uint64', 'resource', 'variant',
  'uint32', 'uint16', 'int4', 'bfloat16',
];

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Builtin operator codes used by the harness (schema.fbs BuiltinOperator).
export const OP = {
  EMBEDDING_LOOKUP: 7,
  GATHER: 36,
  ARG_MAX: 56,
  GATHER_ND: 107,
  ARG_MIN: 79,
  TRANSPOSE_CONV: 67,
};

class Table {
  constructor(view, pos) {
    this.view = view;
    this.pos = pos;
    const vt = pos - view.getInt32(pos, true);
    this.vt = vt;
    this.vtSize = view.getUint16(vt, true);
  }

  // Byte position of field `id`, or 0 when the field is absent.
  field(id) {
    const at = 4 + 2 * id;
    if (at >= this.vtSize) return 0;
    const off = this.view.getUint16(this.vt + at, true);
    return off === 0 ? 0 : this.pos + off;
  }

  deref(p) {
    return p + this.view.getUint32(p, true);
  }

  u8(id, dflt = 0) { const p = this.field(id); return p ? this.view.getUint8(p) : dflt; }
  i8(id, dflt = 0) { const p = this.field(id); return p ? this.view.getInt8(p) : dflt; }
  i32(id, dflt = 0) { const p = this.field(id); return p ? this.view.getInt32(p, true) : dflt; }
  u32(id, dflt = 0) { const p = this.field(id); return p ? this.view.getUint32(p, true) : dflt; }
  bool(id, dflt = false) { const p = this.field(id); return p ? this.view.getUint8(p) !== 0 : dflt; }

  string(id) {
    const p = this.field(id);
    if (!p) return null;
    const s = this.deref(p);
    const n = this.view.getUint32(s, true);
    return new TextDecoder().decode(new Uint8Array(this.view.buffer, this.view.byteOffset + s + 4, n));
  }

  table(id) {
    const p = this.field(id);
    return p ? new Table(this.view, this.deref(p)) : null;
  }

  // Returns [start, length] of a vector field, or null.
  vec(id) {
    const p = this.field(id);
    if (!p) return null;
    const v = this.deref(p);
    return [v + 4, this.view.getUint32(v, true)];
  }

  // A [ubyte] field as a view into the file, or null.
  u8s(id) {
    const v = this.vec(id);
    return v ? new Uint8Array(this.view.buffer, this.view.byteOffset + v[0], v[1]) : null;
  }

  i32s(id) {
    const v = this.vec(id);
    if (!v) return null;
    const out = new Array(v[1]);
    for (let i = 0; i < v[1]; i++) out[i] = this.view.getInt32(v[0] + 4 * i, true);
    return out;
  }

  f32s(id) {
    const v = this.vec(id);
    if (!v) return null;
    const out = new Array(v[1]);
    for (let i = 0; i < v[1]; i++) out[i] = this.view.getFloat32(v[0] + 4 * i, true);
    return out;
  }

  i64s(id) {
    const v = this.vec(id);
    if (!v) return null;
    const out = new Array(v[1]);
    for (let i = 0; i < v[1]; i++) out[i] = Number(this.view.getBigInt64(v[0] + 8 * i, true));
    return out;
  }

  tables(id) {
    const v = this.vec(id);
    if (!v) return [];
    const out = new Array(v[1]);
    for (let i = 0; i < v[1]; i++) {
      const p = v[0] + 4 * i;
      out[i] = new Table(this.view, this.deref(p));
    }
    return out;
  }
}

// The scalars of a FlexBuffer map (a custom op's options): { key: number | boolean }.
// Other values (strings, vectors) are left out; bytes that are no map give {}.
export function readFlexMap(bytes) {
  if (!bytes || bytes.length < 3) return {};
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const uint = (at, width) => (width === 1 ? view.getUint8(at) : width === 2 ? view.getUint16(at, true)
    : width === 4 ? view.getUint32(at, true) : Number(view.getBigUint64(at, true)));
  const scalar = (at, width, type) => {
    if (type === 1) return width === 8 ? Number(view.getBigInt64(at, true)) : width === 4 ? view.getInt32(at, true)
      : width === 2 ? view.getInt16(at, true) : view.getInt8(at);  // INT
    if (type === 2) return uint(at, width);  // UINT
    if (type === 3) return width === 8 ? view.getFloat64(at, true) : view.getFloat32(at, true);  // FLOAT
    if (type === 26) return uint(at, width) !== 0;  // BOOL
    return undefined;
  };
  const rootWidth = bytes[bytes.length - 1];
  const rootType = bytes[bytes.length - 2] >> 2;
  const rootAt = bytes.length - 2 - rootWidth;
  if (rootType !== 9 || rootAt < 0) return {};  // MAP
  const map = rootAt - uint(rootAt, rootWidth);
  const width = 1 << (bytes[bytes.length - 2] & 3);
  const length = uint(map - width, width);
  const keysAt = map - 3 * width - uint(map - 3 * width, width);
  const keyWidth = uint(map - 2 * width, width);
  const out = {};
  for (let i = 0; i < length; i++) {
    const slot = keysAt + i * keyWidth;
    let k = slot - uint(slot, keyWidth);
    let key = '';
    while (k < bytes.length && bytes[k] !== 0) key += String.fromCharCode(bytes[k++]);
    const packed = bytes[map + length * width + i];
    const value = scalar(map + i * width, width, packed >> 2);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function readTensor(t, index) {
  const q = t.table(4);
  let quant = null;
  if (q) {
    const scale = q.f32s(2);
    const zeroPoint = q.i64s(3);
    if (scale && scale.length > 0) {
      quant = {
        scale,
        zeroPoint: zeroPoint && zeroPoint.length ? zeroPoint : scale.map(() => 0),
        axis: q.i32(6, 0),
        scaleAt: q.vec(2)[0],  // byte position of the float32 scales in the file
      };
    }
  }
  const typeId = t.i8(1, 0);
  return {
    index,
    name: t.string(3) ?? `tensor_${index}`,
    type: TFL_TYPES[typeId] ?? `type${typeId}`,
    shape: t.i32s(0) ?? [],
    shapeSignature: t.i32s(7),
    quant,
    isVariable: t.bool(5, false),
    hasRank: t.bool(8, false),
  };
}

function rootTable(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (u8.length < 8) throw new Error('file too small to be a TFLite model');
  const ident = String.fromCharCode(u8[4], u8[5], u8[6], u8[7]);
  if (ident !== 'TFL3') throw new Error(`not a TFLite FlatBuffer (file identifier "${ident}")`);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  return new Table(view, view.getUint32(0, true));
}

// The SignatureDefs (Model field 7), in the file's order: key, subgraph, and
// the aliases of the inputs and outputs with their tensor indices.
function signatureDefs(model) {
  return model.tables(7).map((sd, index) => ({
    index,
    key: sd.string(2),
    subgraph: sd.u32(4, 0),
    inputs: sd.tables(0).map((tm) => ({ name: tm.string(0), tensor: tm.u32(1, 0) })),
    outputs: sd.tables(1).map((tm) => ({ name: tm.string(0), tensor: tm.u32(1, 0) })),
  }));
}

/** The keys of the model's SignatureDefs, in the file's order (cheap: no tensor is read). */
export function readSignatureKeys(bytes) {
  return signatureDefs(rootTable(bytes)).map((s) => s.key);
}

/**
 * The exact float32 quantization scales of every tensor of every subgraph:
 * [subgraph][tensor] -> number[] or null (flatc's JSON rounds them).
 */
export function readAllScales(bytes) {
  return rootTable(bytes).tables(2).map((sg) => sg.tables(0).map((t) => {
    const q = t.table(4);
    const scale = q ? q.f32s(2) : null;
    return scale && scale.length ? scale : null;
  }));
}

/**
 * Parses the parts of a .tflite file the harness uses, for the subgraph a
 * conversion with `--signature KEY` converts: that signature's, or without a
 * key the first signature's (subgraph 0 when the model has none), as lite2onnx
 * chooses. `signature` is the signature chosen (null: none), `subgraphIndex`
 * its subgraph.
 * Throws an Error with a readable message when the bytes are not a TFLite
 * model or have no signature `KEY`.
 */
export function readTfliteModel(bytes, { signature: key = null } = {}) {
  const model = rootTable(bytes);

  const opcodes = model.tables(1).map((oc) => {
    const deprecated = oc.i8(0, 0);
    const builtin = oc.i32(3, 0);
    return { code: Math.max(deprecated, builtin), custom: oc.string(1) };
  });

  const subgraphs = model.tables(2);
  if (subgraphs.length === 0) throw new Error('model has no subgraphs');
  const signatures = signatureDefs(model);
  const signature = key === null ? signatures[0] ?? null : signatures.find((s) => s.key === key);
  if (signature === undefined) throw new Error(`the model has no signature "${key}" (it has ${signatures.map((s) => `"${s.key}"`).join(', ') || 'none'})`);
  const subgraphIndex = signature ? signature.subgraph : 0;
  const sg = subgraphs[subgraphIndex];
  if (!sg) throw new Error(`signature "${signature.key}" names subgraph ${subgraphIndex}, which the model lacks`);
  const tensors = sg.tables(0).map((t, i) => readTensor(t, i));
  const inputs = (sg.i32s(1) ?? []).map((i) => tensors[i]);
  const outputs = (sg.i32s(2) ?? []).map((i) => tensors[i]);
  const operators = sg.tables(3).map((op) => {
    const opcode = opcodes[op.u32(0, 0)] ?? { code: -1, custom: null };
    const optionsType = op.u8(3, 0);
    const options = op.table(4);
    return {
      code: opcode.code,
      custom: opcode.custom,
      inputs: op.i32s(1) ?? [],
      outputs: op.i32s(2) ?? [],
      // Only GatherOptions.axis is interpreted (field 0, default 0).
      gatherAxis: opcode.code === OP.GATHER && options && optionsType !== 0 ? options.i32(0, 0) : 0,
      customOptions: op.u8s(5),
    };
  });

  let variableTensors = 0;
  for (const t of tensors) if (t.isVariable) variableTensors++;

  return {
    subgraphCount: subgraphs.length,
    subgraphIndex,
    signature,
    tensors,
    inputs,
    outputs,
    operators,
    signatures,
    variableTensors,
  };
}

/**
 * Maps a name used by a runtime's signature (an alias of the model's chosen
 * signature such as "input_1", or already a tensor name) to the TFLite tensor
 * it stands for.
 */
export function signatureNameToTensor(model, name, kind /* 'inputs' | 'outputs' */) {
  for (const m of model.signature?.[kind] ?? []) {
    if (m.name === name) return model.tensors[m.tensor];
  }
  const list = kind === 'inputs' ? model.inputs : model.outputs;
  return list.find((t) => t.name === name) ?? null;
}

/**
 * The value an integer input must have when the graph reads it as a shape:
 * TRANSPOSE_CONV's output_shape (a streaming model's input) is the shape its
 * output declares, when that is static; null otherwise.
 */
export function inferShapeValue(model, input) {
  for (const op of model.operators) {
    if (op.code !== OP.TRANSPOSE_CONV || op.inputs[0] !== input.index) continue;
    const out = model.tensors[op.outputs[0]];
    const count = input.shape.reduce((a, b) => a * b, 1);
    if (out && out.shape.length === count && out.shape.every((d) => d > 0)) return [...out.shape];
  }
  return null;
}

/**
 * Suggests an input value range from how the graph uses an integer input:
 * indices of GATHER / GATHER_ND / EMBEDDING_LOOKUP must stay below the table size.
 * Returns [lo, hi) or null.
 */
export function inferIndexRange(model, input) {
  let best = null;
  for (const op of model.operators) {
    let limit = null;
    if (op.code === OP.GATHER && op.inputs[1] === input.index) {
      const params = model.tensors[op.inputs[0]];
      if (params && params.shape.length > 0) {
        let axis = op.gatherAxis;
        if (axis < 0) axis += params.shape.length;
        limit = params.shape[axis];
      }
    } else if (op.code === OP.GATHER_ND && op.inputs[1] === input.index) {
      // the last dimension of the indices (K) indexes the first K of params
      const params = model.tensors[op.inputs[0]];
      const k = input.shape[input.shape.length - 1];
      if (params && k > 0 && k <= params.shape.length) limit = Math.min(...params.shape.slice(0, k));
    } else if (op.code === OP.EMBEDDING_LOOKUP && op.inputs[0] === input.index) {
      const table = model.tensors[op.inputs[1]];
      if (table && table.shape.length > 0) limit = table.shape[0];
    }
    if (limit != null && limit > 0) best = best == null ? limit : Math.min(best, limit);
  }
  return best == null ? null : [0, best];
}

// BuiltinOperator names, read from the project's schema (core/tflite/schema.fbs).
let builtinNames = null;
const SCHEMA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../core/tflite/schema.fbs');

/** The name of an operator ("CONV_2D", or the custom code), "BUILTIN_<code>" if unknown. */
export function operatorName(op) {
  if (op.custom) return op.custom;
  if (!builtinNames) {
    builtinNames = new Map();
    try {
      const text = fs.readFileSync(SCHEMA, 'utf8');
      const block = text.slice(text.indexOf('enum BuiltinOperator'));
      for (const m of block.slice(0, block.indexOf('}')).matchAll(/(\w+)\s*=\s*(\d+)/g)) builtinNames.set(Number(m[2]), m[1]);
    } catch { /* names unknown: codes only */ }
  }
  return builtinNames.get(op.code) ?? `BUILTIN_${op.code}`;
}

/** True when the tensor is produced by ARG_MAX / ARG_MIN (an index output). */
export function isIndexTensor(model, tensor) {
  return model.operators.some(
    (op) => (op.code === OP.ARG_MAX || op.code === OP.ARG_MIN) && op.outputs.includes(tensor.index));
}

/**
 * True when an operator reads float32 activations with constant quantized
 * integer weights (a hybrid op: TFLite quantizes its float input at run time).
 */
export function hasHybridOp(model) {
  const produced = new Set(model.operators.flatMap((op) => op.outputs));
  const graphInputs = new Set(model.inputs.map((t) => t.index));
  const weight = (t) => ['int8', 'uint8', 'int4'].includes(t.type) && t.quant &&
    !produced.has(t.index) && !graphInputs.has(t.index) && !t.isVariable;
  return model.operators.some((op) => {
    const ins = op.inputs.filter((i) => i >= 0 && i < model.tensors.length).map((i) => model.tensors[i]);
    return ins.some((t) => t.type === 'float32' && !t.quant) && ins.some(weight);
  });
}
