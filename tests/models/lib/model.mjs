// The one library of the test model generators (tests/models/make_models*.mjs):
// a builder of TFLite models as FlatBuffer JSON against core/tflite/schema.fbs,
// and what it needs: builtin codes and option tables read from that schema, a
// seeded PRNG, little-endian encoders of every tensor type (float16 included),
// numpy broadcasting, a FlexBuffer encoder (custom options), a sparse tensor
// encoder (TFLite's SparsityParameters), the JSON styles of the committed
// files, and the loop that writes a family of models and its specs file.
//
// Node >= 18, no dependencies. See tests/models/README.md for examples.

import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// ---- the schema --------------------------------------------------------------------

const SCHEMA_TEXT = readFileSync(new URL('../../../core/tflite/schema.fbs', import.meta.url), 'utf8')
  .replace(/\/\/[^\n]*/g, '');

function schemaBlock(kind, name) {
  const m = SCHEMA_TEXT.match(new RegExp(`\\b${kind}\\s+${name}\\b[^{]*\\{([^}]*)\\}`));
  if (!m) throw new Error(`core/tflite/schema.fbs: no ${kind} ${name}`);
  return m[1];
}

// BuiltinOperator name -> code, as the schema declares them.
export const BUILTIN_CODES = Object.freeze(Object.fromEntries(
  [...schemaBlock('enum', 'BuiltinOperator').matchAll(/(\w+)\s*=\s*(\d+)/g)].map((m) => [m[1], Number(m[2])])));

const unionMembers = (name) => new Set(schemaBlock('union', name).split(',').map((s) => s.trim()).filter(Boolean));
// The option tables of Operator.builtin_options and Operator.builtin_options_2.
export const BUILTIN_OPTIONS = unionMembers('BuiltinOptions');
export const BUILTIN_OPTIONS_2 = unionMembers('BuiltinOptions2');

// Codes 0..126 are also written to OperatorCode.deprecated_builtin_code; larger
// ones store 127 (PLACEHOLDER_FOR_GREATER_OP_CODES) there.
const DEPRECATED_CODE_LIMIT = BUILTIN_CODES.PLACEHOLDER_FOR_GREATER_OP_CODES;

// ---- numbers -------------------------------------------------------------------------

// mulberry32 seeded with the FNV-1a hash of `name`: each model's weights depend
// on its name only, so adding a model changes no other file.
export function seeded(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  let a = h;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const count = (shape) => shape.reduce((a, b) => a * b, 1);

// numpy broadcasting of two shapes.
export function bcast(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`cannot broadcast ${a} and ${b}`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

// IEEE 754 binary32 -> binary16 bits, rounding to nearest even.
export function f16Bits(value) {
  const x = new Uint32Array(new Float32Array([value]).buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf, nan
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: inf
  if (e <= 0) { // a subnormal half, or zero
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++; // may carry into the exponent
  return sign | half;
}

// The float16 nearest to `value` (as a number).
export function roundF16(value) {
  const h = f16Bits(value);
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (exp ? (1 + mant / 1024) * 2 ** (exp - 15) : (mant / 1024) * 2 ** -14);
}

// Bytes per element of the tensor types the encoder writes.
export const TYPE_SIZE = {
  FLOAT32: 4, FLOAT16: 2, FLOAT64: 8, INT8: 1, UINT8: 1, INT16: 2, UINT16: 2, INT32: 4, UINT32: 4,
  INT64: 8, UINT64: 8, BOOL: 1,
};

// Little-endian bytes of `values` as tensor type `type` (FLOAT16 from float values).
export function le(type, values) {
  const size = TYPE_SIZE[type];
  if (!size) throw new Error(`le: no encoding for ${type}`);
  const view = new DataView(new ArrayBuffer(values.length * size));
  values.forEach((v, i) => {
    const at = i * size;
    switch (type) {
      case 'FLOAT32': view.setFloat32(at, v, true); break;
      case 'FLOAT16': view.setUint16(at, f16Bits(v), true); break;
      case 'FLOAT64': view.setFloat64(at, v, true); break;
      case 'INT8': view.setInt8(at, v); break;
      case 'UINT8': view.setUint8(at, v); break;
      case 'INT16': view.setInt16(at, v, true); break;
      case 'UINT16': view.setUint16(at, v, true); break;
      case 'INT32': view.setInt32(at, v, true); break;
      case 'UINT32': view.setUint32(at, v, true); break;
      case 'INT64': view.setBigInt64(at, BigInt(v), true); break;
      case 'UINT64': view.setBigUint64(at, BigInt(v), true); break;
      default: view.setUint8(at, v ? 1 : 0); // BOOL
    }
  });
  return Array.from(new Uint8Array(view.buffer));
}

// ---- FlexBuffers (Operator.custom_options) -----------------------------------------------
//
// flexbuffer(value) encodes a JS value the way flexbuffers::Builder lays it out:
// objects are maps (keys sorted), arrays untyped vectors, strings strings,
// booleans bools, null null, safe integers INT and other numbers FLOAT (64-bit
// unless the value is exact in float32). flex.int / flex.uint / flex.float force a type;
// flex.blob(bytes) is a blob; flex.ints(list) a typed vector of INT (what
// AsTypedVector reads). Every value gets the narrowest width that holds it.

const FBT = {
  NULL: 0, INT: 1, UINT: 2, FLOAT: 3, KEY: 4, STRING: 5, MAP: 9, VECTOR: 10, VECTOR_INT: 11, VECTOR_KEY: 14, BLOB: 25,
  BOOL: 26,
};

class Typed {
  constructor(kind, value) { this.kind = kind; this.value = value; }
}
export const flex = {
  int: (v) => new Typed('int', v),
  uint: (v) => new Typed('uint', v),
  float: (v) => new Typed('float', v),
  blob: (bytes) => new Typed('blob', bytes),
  ints: (list) => new Typed('ints', list),
};

// Bit width code (0: 8, 1: 16, 2: 32, 3: 64) of an unsigned / signed / float value.
function widthU(v) {
  const u = BigInt(v);
  return u < 1n << 8n ? 0 : u < 1n << 16n ? 1 : u < 1n << 32n ? 2 : 3;
}
function widthI(v) {
  const i = BigInt(v);
  const fits = (bits) => i >= -(1n << (bits - 1n)) && i < 1n << (bits - 1n);
  return fits(8n) ? 0 : fits(16n) ? 1 : fits(32n) ? 2 : 3;
}
const widthF = (v) => (Math.fround(v) === v || Number.isNaN(v) ? 2 : 3);

class FlexWriter {
  constructor() { this.bytes = []; }

  pad(byteWidth) {
    while (this.bytes.length % byteWidth) this.bytes.push(0);
  }

  // An unsigned / signed / float scalar of byteWidth bytes.
  put(kind, v, byteWidth) {
    const view = new DataView(new ArrayBuffer(8));
    if (kind === 'float') {
      if (byteWidth === 4) view.setFloat32(0, v, true);
      else if (byteWidth === 8) view.setFloat64(0, v, true);
      else throw new Error(`flexbuffer: no ${byteWidth}-byte float`);
    } else {
      view.setBigUint64(0, BigInt.asUintN(64, BigInt(v)), true);
    }
    for (let i = 0; i < byteWidth; i++) this.bytes.push(view.getUint8(i));
  }

  // A value: inline scalars carry their value, the rest the position they start at.
  encode(v) {
    if (v instanceof Typed) {
      if (v.kind === 'int') return { type: FBT.INT, width: widthI(v.value), value: v.value, inline: true };
      if (v.kind === 'uint') return { type: FBT.UINT, width: widthU(v.value), value: v.value, inline: true };
      if (v.kind === 'float') return { type: FBT.FLOAT, width: widthF(v.value), value: v.value, inline: true };
      if (v.kind === 'ints') {
        const elements = v.value.map((x) => ({ type: FBT.INT, width: widthI(x), value: x, inline: true }));
        return { ...this.vector(elements, { typed: true }), type: FBT.VECTOR_INT };
      }
      return this.blob(FBT.BLOB, v.value, 0);
    }
    if (v === null || v === undefined) return { type: FBT.NULL, width: 0, value: 0, inline: true };
    if (typeof v === 'boolean') return { type: FBT.BOOL, width: 0, value: v ? 1 : 0, inline: true };
    if (typeof v === 'bigint') return { type: FBT.INT, width: widthI(v), value: v, inline: true };
    if (typeof v === 'number') {
      if (Number.isSafeInteger(v)) return { type: FBT.INT, width: widthI(v), value: v, inline: true };
      return { type: FBT.FLOAT, width: widthF(v), value: v, inline: true };
    }
    if (typeof v === 'string') return this.blob(FBT.STRING, [...new TextEncoder().encode(v)], 1);
    if (Array.isArray(v)) return this.vector(v.map((x) => this.encode(x)));
    if (typeof v === 'object') {
      const utf8 = (s) => [...new TextEncoder().encode(s)];
      const compare = (a, b) => {
        for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
        return a.length - b.length;
      };
      const entries = Object.entries(v).map(([k, x]) => [utf8(k), x]).sort((a, b) => compare(a[0], b[0]));
      const keys = entries.map(([k]) => {
        const at = this.bytes.length;
        this.bytes.push(...k, 0);
        return { type: FBT.KEY, width: 0, at, inline: false };
      });
      const values = entries.map(([, x]) => this.encode(x));
      const keyVector = this.vector(keys, { typed: true });
      return this.vector(values, { keys: keyVector });
    }
    throw new Error(`flexbuffer: cannot encode ${typeof v}`);
  }

  // Strings (with a 0 terminator) and blobs: length, then the bytes.
  blob(type, data, trailing) {
    const width = widthU(data.length);
    const byteWidth = 1 << width;
    this.pad(byteWidth);
    this.put('uint', data.length, byteWidth);
    const at = this.bytes.length;
    this.bytes.push(...data);
    for (let i = 0; i < trailing; i++) this.bytes.push(0);
    return { type, width, at, inline: false };
  }

  // The width a value needs as element `index` of a vector starting (after
  // padding) at the end of the buffer: inline values their own, offsets the
  // narrowest that reaches back to their target from their slot.
  elementWidth(value, index) {
    if (value.inline) return value.width;
    for (let width = 0; width < 4; width++) {
      const byteWidth = 1 << width;
      const padded = Math.ceil(this.bytes.length / byteWidth) * byteWidth;
      const slot = padded + index * byteWidth;
      if (widthU(slot - value.at) <= width) return width;
    }
    throw new Error('flexbuffer: offset too large');
  }

  write(value, byteWidth) {
    if (value.inline) this.put(value.type === FBT.FLOAT ? 'float' : 'uint', value.value, byteWidth);
    else this.put('uint', this.bytes.length - value.at, byteWidth);
  }

  // The packed type byte of a value stored in a slot of `width`.
  static packedType(value, width) {
    return (value.type << 2) | (value.inline ? Math.max(value.width, width) : value.width);
  }

  // Untyped vectors and maps: [keys offset, keys byte width,] length, the
  // elements, then one packed type byte per element. Typed vectors (of keys):
  // length and elements only.
  vector(values, { typed = false, keys = undefined } = {}) {
    let width = widthU(values.length);
    const prefix = keys ? 3 : 1;
    if (keys) width = Math.max(width, this.elementWidth(keys, 0));
    values.forEach((v, i) => { width = Math.max(width, this.elementWidth(v, i + prefix)); });
    const byteWidth = 1 << width;
    this.pad(byteWidth);
    if (keys) {
      this.write(keys, byteWidth);
      this.put('uint', 1 << keys.width, byteWidth);
    }
    this.put('uint', values.length, byteWidth);
    const at = this.bytes.length;
    for (const v of values) this.write(v, byteWidth);
    if (!typed) for (const v of values) this.bytes.push(FlexWriter.packedType(v, width));
    const type = keys ? FBT.MAP : typed ? FBT.VECTOR_KEY : FBT.VECTOR;
    return { type, width, at, inline: false };
  }
}

export function flexbuffer(value) {
  const w = new FlexWriter();
  const root = w.encode(value);
  const width = w.elementWidth(root, 0);
  const byteWidth = 1 << width;
  w.pad(byteWidth);
  w.write(root, byteWidth);
  w.bytes.push(FlexWriter.packedType(root, width), byteWidth);
  return w.bytes;
}

// ---- sparse tensors (Tensor.sparsity) -------------------------------------------------------
//
// sparsify(shape, dense, options) encodes a dense array (row-major, `shape`) as
// TFLite stores a sparse constant: the values TFLite's FormatConverter::
// SparseToDense reads back into `dense`, and the SparsityParameters JSON.
//   format: 'DENSE' or 'SPARSE_CSR' per tensor dimension (default: the first
//           dense, the others CSR);
//   order:  the traversal order of the tensor dimensions (default 0, 1, ...);
//   block:  block sizes, one per dimension (1: not blocked), e.g. [1, 4]; blocks
//           are dense and visited after the tensor dimensions, row-major;
//   index:  'INT32', 'UINT16' or 'UINT8' index vectors (default: the narrowest
//           that holds every segment and index).
// A sparse dimension lists the coordinates whose sub-tensor holds a nonzero; a
// dense one all of them; a dense last dimension keeps its zeros.
export function sparsify(shape, dense, { format = undefined, order = undefined, block = undefined, index = undefined } = {}) {
  const n = shape.length;
  if (dense.length !== count(shape)) throw new Error(`sparsify: ${dense.length} values for ${shape}`);
  format ??= shape.map((_, i) => (i === 0 ? 'DENSE' : 'SPARSE_CSR'));
  order ??= shape.map((_, i) => i);
  block ??= shape.map(() => 1);
  const blockMap = [];
  const blockSize = [];
  block.forEach((b, d) => {
    if (b === 1) return;
    if (shape[d] % b) throw new Error(`sparsify: block ${b} does not divide dimension ${d} (${shape[d]})`);
    blockMap.push(d);
    blockSize.push(b);
  });
  // The visited levels: the blocked tensor dimensions in `order`, then the block dimensions.
  const levels = [
    ...order.map((d) => ({ dim: d, size: shape[d] / block[d], format: format[d], block: -1 })),
    ...blockMap.map((d, b) => ({ dim: d, size: blockSize[b], format: 'DENSE', block: b })),
  ];
  const strides = shape.map((_, d) => count(shape.slice(d + 1)));
  const valueAt = (coords) => {
    const idx = new Array(n).fill(0);
    levels.forEach((l, i) => {
      if (l.block < 0) idx[l.dim] = coords[i];
      else idx[l.dim] = idx[l.dim] * blockSize[l.block] + coords[i];
    });
    return dense[idx.reduce((a, c, d) => a + c * strides[d], 0)];
  };
  const anyNonzero = (coords) => {
    if (coords.length === levels.length) return valueAt(coords) !== 0;
    for (let i = 0; i < levels[coords.length].size; i++) if (anyNonzero([...coords, i])) return true;
    return false;
  };
  const meta = levels.map((l) => (l.format === 'DENSE' ? { dense: l.size } : { segments: [0], indices: [] }));
  const values = [];
  const visit = (coords) => {
    const level = coords.length;
    if (level === levels.length) {
      values.push(valueAt(coords));
      return;
    }
    const m = meta[level];
    for (let i = 0; i < levels[level].size; i++) {
      const next = [...coords, i];
      if (m.dense === undefined) {
        if (!anyNonzero(next)) continue;
        m.indices.push(i);
      }
      visit(next);
    }
    if (m.dense === undefined) m.segments.push(m.indices.length);
  };
  visit([]);
  const widest = Math.max(0, ...meta.flatMap((m) => (m.dense === undefined ? [...m.segments, ...m.indices] : [])));
  index ??= widest < 256 ? 'UINT8' : widest < 65536 ? 'UINT16' : 'INT32';
  const limit = { UINT8: 255, UINT16: 65535, INT32: 2 ** 31 - 1 }[index];
  if (limit === undefined || widest > limit) throw new Error(`sparsify: ${index} cannot hold index ${widest}`);
  const vectorType = { UINT8: 'Uint8Vector', UINT16: 'Uint16Vector', INT32: 'Int32Vector' }[index];
  const dimMetadata = meta.map((m) => (m.dense !== undefined
    ? { format: 'DENSE', dense_size: m.dense }
    : {
      format: 'SPARSE_CSR',
      array_segments_type: vectorType, array_segments: { values: m.segments },
      array_indices_type: vectorType, array_indices: { values: m.indices },
    }));
  const sparsity = { traversal_order: levels.map((l, i) => (l.block < 0 ? l.dim : n + l.block)) };
  if (blockMap.length) sparsity.block_map = blockMap;
  sparsity.dim_metadata = dimMetadata;
  return { values, sparsity };
}

// ---- the model builder ----------------------------------------------------------------------

// One subgraph: its tensors, operators, inputs and outputs. A Model is its main
// subgraph (index 0); model.subgraph() adds others. Tensors are indices.
export class Graph {
  constructor(model, name) {
    this.model = model ?? this;
    this.graphName = name;
    this.tensors = [];
    this.ops = [];
    this.inputs = [];
    this.outputs = [];
    this.constants = {}; // tensor -> the values constant() encoded
  }

  shape(t) { return this.tensors[t].shape; }
  type(t) { return this.tensors[t].type; }

  // A tensor without data (buffer 0). `fields` adds Tensor fields:
  // { is_variable: true }, { shape_signature: [...] }, { has_rank: true }, ...
  tensor(name, shape, type = 'FLOAT32', fields = undefined) {
    if (this.tensors.some((t) => t.name === name)) throw new Error(`${this.model.name}: duplicate ${name}`);
    this.tensors.push({ shape: [...shape], type, buffer: 0, name, ...fields });
    return this.tensors.length - 1;
  }

  // A graph input. spec (main subgraph only): its entry in the numeric
  // harness's specs file, { range: [lo, hi] } or { value: [...] }; an array is
  // a range.
  input(name, shape, type = 'FLOAT32', spec = undefined) {
    const t = this.tensor(name, shape, type);
    this.inputs.push(t);
    if (spec && this === this.model) (this.spec.inputs ??= {})[name] = Array.isArray(spec) ? { range: spec } : spec;
    return t;
  }

  output(...ts) { this.outputs.push(...ts); }

  // A constant: `values` encoded as `type` (le), in a buffer of its own.
  constant(name, shape, type, values) {
    if (values.length !== count(shape)) throw new Error(`${this.model.name}: ${name}: ${values.length} values for ${shape}`);
    const t = this.constantBytes(name, shape, type, le(type, values));
    this.constants[t] = [...values];
    return t;
  }

  f32(name, shape, values) { return this.constant(name, shape, 'FLOAT32', values); }
  f16(name, shape, values) { return this.constant(name, shape, 'FLOAT16', values); }
  i32(name, shape, values) { return this.constant(name, shape, 'INT32', values); }
  i64(name, shape, values) { return this.constant(name, shape, 'INT64', values); }

  // A constant holding `bytes` as they are.
  constantBytes(name, shape, type, bytes) {
    const buffer = this.model.buffer(bytes);
    const t = this.tensor(name, shape, type);
    this.tensors[t].buffer = buffer;
    return t;
  }

  // A quantized constant: `real` values quantized with q = { type, scale: [..],
  // zero_point: [..], axis } (one scale per slice of `axis`, or a single one),
  // rounded to nearest and clamped to the type's range. Returns the tensor.
  quantized(name, shape, real, q) {
    const range = { INT8: [-128, 127], UINT8: [0, 255], INT16: [-32768, 32767], INT32: [-(2 ** 31), 2 ** 31 - 1] }[q.type];
    if (!range) throw new Error(`quantized: no range for ${q.type}`);
    const zp = q.zero_point ?? q.scale.map(() => 0);
    const inner = q.axis === undefined ? 1 : count(shape.slice(q.axis + 1));
    const channels = q.axis === undefined ? 1 : shape[q.axis];
    const ints = real.map((r, i) => {
      const c = Math.floor(i / inner) % channels;
      const v = Math.round(r / q.scale[c]) + zp[c];
      return Math.min(range[1], Math.max(range[0], v));
    });
    const t = this.constant(name, shape, q.type, ints);
    this.quantize(t, q);
    return t;
  }

  // Sets a tensor's quantization parameters (q as for quantized()).
  quantize(t, q) {
    const out = { scale: q.scale, zero_point: q.zero_point ?? q.scale.map(() => 0) };
    if (q.axis !== undefined) out.quantized_dimension = q.axis;
    this.tensors[t].quantization = out;
    return t;
  }

  // A sparse constant: `dense` stored as sparsify() encodes it (options as there).
  sparseConstant(name, shape, type, dense, options = undefined) {
    const { values, sparsity } = sparsify(shape, dense, options);
    const t = this.constant(name, [values.length], type, values);
    this.tensors[t].shape = [...shape];
    this.tensors[t].sparsity = sparsity;
    return t;
  }

  // Uniform values in [-scale, scale), rounded to multiples of 1/1024 (exact in
  // float16 and float32).
  randomValues(n, scale) {
    const v = [];
    for (let i = 0; i < n; i++) v.push(Math.round((this.model.rand() * 2 - 1) * scale * 1024) / 1024);
    return v;
  }

  rand32(name, shape, scale = 0.5) {
    return this.constant(name, shape, 'FLOAT32', this.randomValues(count(shape), scale));
  }

  // Uniform integers in [lo, hi].
  randI32(name, shape, lo, hi) {
    const v = [];
    for (let i = 0; i < count(shape); i++) v.push(lo + Math.floor(this.model.rand() * (hi - lo + 1)));
    return this.constant(name, shape, 'INT32', v);
  }

  // A builtin operator. optionsType names its options table: a member of
  // BuiltinOptions (builtin_options) or of BuiltinOptions2 (builtin_options_2).
  // fields adds Operator fields (intermediates, mutating_variable_inputs, ...).
  op(opName, inputs, outputs, optionsType = undefined, options = undefined, fields = undefined) {
    const op = { opcode_index: this.model.opcode(opName), inputs, outputs };
    if (optionsType) {
      if (BUILTIN_OPTIONS.has(optionsType)) {
        op.builtin_options_type = optionsType;
        op.builtin_options = options ?? {};
      } else if (BUILTIN_OPTIONS_2.has(optionsType)) {
        op.builtin_options_2_type = optionsType;
        op.builtin_options_2 = options ?? {};
      } else {
        throw new Error(`${this.model.name}: ${optionsType} is no options table of the schema`);
      }
    }
    Object.assign(op, fields);
    this.ops.push(op);
    return op;
  }

  // A custom operator `code` whose custom_options are the FlexBuffer of `options`
  // (see flexbuffer()); `bytes` instead of a value writes them as given;
  // `version` is the operator code's version.
  customOp(code, inputs, outputs, options = undefined, { bytes = undefined, version = undefined } = {}) {
    const op = { opcode_index: this.model.opcode('CUSTOM', code, version), inputs, outputs };
    const data = bytes ?? (options === undefined ? undefined : flexbuffer(options));
    if (data) Object.assign(op, { custom_options: data, custom_options_format: 'FLEXBUFFERS' });
    this.ops.push(op);
    return op;
  }

  toJSON() {
    return {
      tensors: this.tensors, inputs: this.inputs, outputs: this.outputs, operators: this.ops, name: this.graphName,
    };
  }
}

// A whole model: the main subgraph plus buffers, operator codes, further
// subgraphs, signatures and metadata. options.versions: op name -> operator
// version (OperatorCode.version, 1 when not given).
export class Model extends Graph {
  constructor(name, description, { versions = {} } = {}) {
    super(undefined, 'main');
    this.name = name;
    this.description = description;
    this.versions = versions;
    this.rand = seeded(name);
    this.buffers = [{}]; // buffer 0: the empty buffer, by TFLite convention
    this.codes = [];
    this.graphs = [this];
    this.signatures = [];
    this.metadataEntries = [];
    // The model's entry in the specs file (tests/numeric/README.md): input()
    // fills spec.inputs; generators may set outputs, reference, skip, ...
    this.spec = {};
  }

  buffer(bytes) {
    this.buffers.push({ data: bytes });
    return this.buffers.length - 1;
  }

  // The index of the operator code of a builtin (by name) or of a custom op.
  opcode(opName, customCode = undefined, customVersion = undefined) {
    const code = BUILTIN_CODES[opName];
    if (code === undefined) throw new Error(`${this.name}: unknown op ${opName}`);
    const version = customVersion ?? this.versions[opName];
    let index = this.codes.findIndex((c) => c.builtin_code === opName && c.custom_code === customCode
      && c.version === version);
    if (index < 0) {
      const entry = { deprecated_builtin_code: Math.min(code, DEPRECATED_CODE_LIMIT) };
      if (customCode !== undefined) entry.custom_code = customCode;
      entry.builtin_code = opName;
      if (version) entry.version = version;
      this.codes.push(entry);
      index = this.codes.length - 1;
    }
    return index;
  }

  // Adds a subgraph, lets build(graph) fill it, returns its index (for the
  // options of WHILE, IF, CALL_ONCE, CALL and the StableHLO ops).
  subgraph(name, build) {
    const g = new Graph(this, name);
    const index = this.graphs.push(g) - 1;
    build(g); // may add subgraphs of its own (nested control flow)
    return index;
  }

  // A SignatureDef: inputs and outputs map alias names to tensors of `subgraph`.
  signature(key, { inputs, outputs, subgraph = 0 }) {
    const map = (o) => Object.entries(o).map(([name, t]) => ({ name, tensor_index: t }));
    this.signatures.push({ inputs: map(inputs), outputs: map(outputs), signature_key: key, subgraph_index: subgraph });
  }

  // A Model.metadata entry: `data` (a string or bytes) in a buffer of its own.
  metadata(name, data) {
    const bytes = typeof data === 'string' ? [...new TextEncoder().encode(data)] : [...data];
    this.metadataEntries.push({ name, buffer: this.buffer(bytes) });
  }

  toJSON() {
    const indexFields = ['then_subgraph_index', 'else_subgraph_index', 'cond_subgraph_index', 'body_subgraph_index',
      'init_subgraph_index', 'decomposition_subgraph_index', 'comparator_subgraph_index', 'update_computation_subgraph_index'];
    // Hostile models (make_models_hostile.mjs) set uncheckedSubgraphIndices
    // to write indices that name no subgraph.
    for (const g of this.uncheckedSubgraphIndices ? [] : this.graphs) {
      for (const op of g.ops) {
        const options = { ...op.builtin_options, ...op.builtin_options_2 };
        for (const f of indexFields) {
          if (options[f] !== undefined && !(options[f] >= 0 && options[f] < this.graphs.length))
            throw new Error(`${this.name}: ${f} ${options[f]} is no subgraph`);
        }
      }
    }
    for (const s of this.signatures) {
      const g = this.graphs[s.subgraph_index];
      if (!g) throw new Error(`${this.name}: signature ${s.signature_key}: no subgraph ${s.subgraph_index}`);
      for (const m of [...s.inputs, ...s.outputs])
        if (!g.tensors[m.tensor_index]) throw new Error(`${this.name}: signature ${s.signature_key}: no tensor ${m.tensor_index}`);
    }
    const json = {
      version: 3,
      description: `lite2onnx test model ${this.name}: ${this.description}`,
      operator_codes: this.codes,
      subgraphs: this.graphs.map((g) => Graph.prototype.toJSON.call(g)),
      buffers: this.buffers,
    };
    if (this.metadataEntries.length) json.metadata = this.metadataEntries;
    if (this.signatures.length) json.signature_defs = this.signatures;
    return json;
  }
}

// ---- op helpers shared by families --------------------------------------------------------

// A 3x3 SAME stride-1 CONV_2D with random weights `name`/weights and
// `name`/bias: an op whose output a converter keeps in NCHW, to place another
// op "after a conv". Returns the output tensor `name`.
export function conv3x3(m, x, name, filters) {
  const [n, h, w, c] = m.shape(x);
  const wt = m.rand32(`${name}/weights`, [filters, 3, 3, c], 1 / Math.sqrt(9 * c));
  const b = m.rand32(`${name}/bias`, [filters], 0.1);
  const y = m.tensor(name, [n, h, w, filters]);
  m.op('CONV_2D', [x, wt, b], [y], 'Conv2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, dilation_h_factor: 1, dilation_w_factor: 1,
    fused_activation_function: 'NONE',
  });
  return y;
}

// ---- JSON styles ------------------------------------------------------------------------------
// Each family's committed files keep the style they were first written in.

// Short objects and scalar arrays on one line (the style of new generators).
export function format(v, indent = '') {
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.every((x) => x === null || typeof x !== 'object')) return JSON.stringify(v).replaceAll(',', ', ');
    return `[\n${v.map((x) => inner + format(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    const line = `{ ${keys.map((k) => `${JSON.stringify(k)}: ${format(v[k], inner)}`).join(', ')} }`;
    if (keys.length === 0) return '{}';
    if (!line.includes('\n') && line.length + indent.length <= 100) return line;
    return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${format(v[k], inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

// Like format, but long scalar arrays wrap at 100 columns and only objects of
// scalars and short arrays share a line (make_models.mjs).
export function formatWrapped(value, indent = '') {
  const inner = indent + '  ';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => v === null || typeof v !== 'object')) {
      const items = value.map((v) => JSON.stringify(v));
      const oneLine = `[${items.join(', ')}]`;
      if (oneLine.length + indent.length <= 100) return oneLine;
      const lines = [];
      let line = '';
      for (const item of items) {
        if (line && inner.length + line.length + item.length + 2 > 100) {
          lines.push(line);
          line = '';
        }
        line += (line ? ', ' : '') + item;
      }
      lines.push(line);
      return `[\n${lines.map((l) => inner + l).join(',\n')}\n${indent}]`;
    }
    return `[\n${value.map((v) => inner + formatWrapped(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    if (keys.length === 0) return '{}';
    const simple = keys.every((k) => value[k] === null || typeof value[k] !== 'object'
      || (Array.isArray(value[k]) && value[k].length <= 6 && value[k].every((v) => typeof v !== 'object')));
    if (simple) {
      const oneLine = `{ ${keys.map((k) => `${JSON.stringify(k)}: ${formatWrapped(value[k], inner)}`).join(', ')} }`;
      if (oneLine.length + indent.length <= 100) return oneLine;
    }
    return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${formatWrapped(value[k], inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

// Compact JSON (no spaces) for anything that fits in 100 columns or is an
// array of numbers (make_models_data.mjs).
export function formatFlat(value, indent = '') {
  const flat = JSON.stringify(value);
  if (typeof value !== 'object' || value === null || flat.length <= 100
    || (Array.isArray(value) && value.every((v) => typeof v === 'number'))) return flat;
  const inner = indent + '  ';
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + formatFlat(v, inner)).join(',\n')}\n${indent}]`;
  return `{\n${Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${formatFlat(v, inner)}`).join(',\n')}\n${indent}}`;
}

// JSON.stringify with two-space indentation, one value a line (make_models_reduce.mjs).
export const formatIndented = (value) => JSON.stringify(value, null, 2);

// ---- writing a family ---------------------------------------------------------------------------

// Name prefixes of the model families in json/ (make_models_<family>.mjs);
// make_models.mjs writes the models without a prefix.
export const FAMILY_PREFIXES = ['math_', 'reduce_', 'data_', 'extra_', 'q_', 'formats_', 'det_', 'layout_', 'sig_', 'audio_',
  'flow_', 'rnn_', 'builtin_', 'selecttf_', 'signal_'];

// Writes models [{ name, description, build(model) }] as `dir`/NAME.json after
// removing the family's old files (names starting with `prefix`; for prefix ''
// the names without any family prefix), and their specs to `specsFile`.
export function writeModels({ dir, prefix, models, specsFile = undefined, style = format, modelOptions = undefined }) {
  mkdirSync(dir, { recursive: true });
  const owned = (f) => (prefix ? f.startsWith(prefix) : !FAMILY_PREFIXES.some((p) => f.startsWith(p)));
  for (const f of readdirSync(dir)) if (f.endsWith('.json') && owned(f)) rmSync(join(dir, f));
  const specs = {};
  for (const { name, description, build } of models) {
    if (!owned(`${name}.json`)) throw new Error(`${name}: not a name of this family (prefix '${prefix}')`);
    const m = new Model(name, description, modelOptions);
    build(m);
    writeFileSync(join(dir, `${name}.json`), `${style(m.toJSON())}\n`);
    if (Object.keys(m.spec).length) specs[`${name}.tflite`] = m.spec;
  }
  if (specsFile) writeFileSync(specsFile, `${JSON.stringify(specs, null, 2)}\n`);
  console.log(`wrote ${models.length} models to ${dir}${specsFile ? ` and ${Object.keys(specs).length} specs to ${specsFile}` : ''}`);
}
