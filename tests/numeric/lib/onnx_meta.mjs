// Reads ModelProto.metadata_props (field 14, repeated StringStringEntryProto
// {key = 1, value = 2}) and the op types of the graph's nodes straight from
// the protobuf wire format, because onnxruntime-node exposes neither.

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

class Reader {
  constructor(u8, start = 0, end = u8.length) {
    this.u8 = u8;
    this.pos = start;
    this.end = end;
  }

  done() { return this.pos >= this.end; }

  // Varints up to 2^53 are enough here (lengths < 2 GiB); uses arithmetic, not bit ops.
  varint() {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.u8[this.pos++];
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new Error('varint too long');
  }

  skip(wire) {
    switch (wire) {
      case WIRE_VARINT: this.varint(); break;
      case WIRE_I64: this.pos += 8; break;
      case WIRE_LEN: { const n = this.varint(); this.pos += n; break; }
      case WIRE_I32: this.pos += 4; break;
      default: throw new Error(`unsupported wire type ${wire}`);
    }
    if (this.pos > this.end) throw new Error('truncated field');
  }

  // Returns [start, end) of a length-delimited field's payload.
  bytes() {
    const n = this.varint();
    const start = this.pos;
    this.pos += n;
    if (this.pos > this.end) throw new Error('truncated length-delimited field');
    return [start, this.pos];
  }
}

function decodeEntry(u8, start, end) {
  const r = new Reader(u8, start, end);
  const dec = new TextDecoder();
  let key = '';
  let value = '';
  while (!r.done()) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if ((field === 1 || field === 2) && wire === WIRE_LEN) {
      const [s, e] = r.bytes();
      const text = dec.decode(u8.subarray(s, e));
      if (field === 1) key = text; else value = text;
    } else {
      r.skip(wire);
    }
  }
  return [key, value];
}

/** Returns ModelProto.metadata_props as a plain {key: value} object. */
export function readOnnxMetadata(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const r = new Reader(u8);
  const props = {};
  while (!r.done()) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 14 && wire === WIRE_LEN) {
      const [s, e] = r.bytes();
      const [k, v] = decodeEntry(u8, s, e);
      props[k] = v;
    } else {
      r.skip(wire);
    }
  }
  return props;
}

// Where the raw_data bytes (TensorProto field 9) of each initializer of the
// main graph (ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto
// .name = 8) lie in the model bytes: {name: [start, end)}.
function initializerData(u8) {
  const out = {};
  const model = new Reader(u8);
  const dec = new TextDecoder();
  while (!model.done()) {
    const tag = model.varint();
    if (Math.floor(tag / 8) !== 7 || tag % 8 !== WIRE_LEN) { model.skip(tag % 8); continue; }
    const [gs, ge] = model.bytes();
    const graph = new Reader(u8, gs, ge);
    while (!graph.done()) {
      const gtag = graph.varint();
      if (Math.floor(gtag / 8) !== 5 || gtag % 8 !== WIRE_LEN) { graph.skip(gtag % 8); continue; }
      const [ts, te] = graph.bytes();
      const tensor = new Reader(u8, ts, te);
      let name = null;
      let data = null;
      while (!tensor.done()) {
        const ttag = tensor.varint();
        const field = Math.floor(ttag / 8);
        if ((field === 8 || field === 9) && ttag % 8 === WIRE_LEN) {
          const range = tensor.bytes();
          if (field === 8) name = dec.decode(u8.subarray(range[0], range[1]));
          else data = range;
        } else {
          tensor.skip(ttag % 8);
        }
      }
      if (name !== null && data) out[name] = data;
    }
  }
  return out;
}

/**
 * A copy of the model whose initializers named in `values` ({name: typed
 * array}) hold those values instead (same byte size, written over raw_data):
 * how the harness feeds a state input backed by an initializer, which
 * onnxruntime-node cannot feed (its sessions list no such input).
 */
export function withInitializers(bytes, values) {
  const u8 = new Uint8Array(bytes);
  const where = initializerData(u8);
  for (const [name, data] of Object.entries(values)) {
    const range = where[name];
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (!range) throw new Error(`the ONNX model has no initializer "${name}" with raw data`);
    if (range[1] - range[0] !== raw.length) {
      throw new Error(`initializer "${name}" holds ${range[1] - range[0]} bytes, the value ${raw.length}`);
    }
    u8.set(raw, range[0]);
  }
  return u8;
}

export const IO_LAYOUTS_KEY = 'lite2onnx.io_layouts';

/**
 * Parses the converter's I/O layout record: {"tensor name": [perm...]}, where
 * onnx_tensor = transpose(tflite_tensor, perm). Returns {} when absent.
 */
export function readIoLayouts(bytes) {
  const props = readOnnxMetadata(bytes);
  const raw = props[IO_LAYOUTS_KEY];
  if (raw == null || raw === '') return {};
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new Error(`metadata ${IO_LAYOUTS_KEY} is not valid JSON: ${e.message}`);
  }
  if (parsed == null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`metadata ${IO_LAYOUTS_KEY} must be a JSON object`);
  }
  for (const [name, perm] of Object.entries(parsed)) {
    if (!Array.isArray(perm) || !isPermutation(perm)) {
      throw new Error(`metadata ${IO_LAYOUTS_KEY}: "${name}" is not a permutation: ${JSON.stringify(perm)}`);
    }
  }
  return parsed;
}

export function isPermutation(perm) {
  const seen = new Array(perm.length).fill(false);
  for (const p of perm) {
    if (!Number.isInteger(p) || p < 0 || p >= perm.length || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

// Counts the nodes of a GraphProto (node = 1; NodeProto.op_type = 4,
// attribute = 5; AttributeProto.g = 6, graphs = 11) into `counts`, subgraphs
// of If / Loop / Scan included.
function countGraphNodes(u8, start, end, counts, depth) {
  if (depth > 32) throw new Error('ONNX subgraphs nested too deeply');
  const dec = new TextDecoder();
  const r = new Reader(u8, start, end);
  while (!r.done()) {
    const tag = r.varint();
    if (Math.floor(tag / 8) !== 1 || tag % 8 !== WIRE_LEN) { r.skip(tag % 8); continue; }
    const [ns, ne] = r.bytes();
    const node = new Reader(u8, ns, ne);
    while (!node.done()) {
      const t = node.varint();
      const field = Math.floor(t / 8);
      if (field === 4 && t % 8 === WIRE_LEN) {
        const [s, e] = node.bytes();
        const op = dec.decode(u8.subarray(s, e));
        counts[op] = (counts[op] ?? 0) + 1;
      } else if (field === 5 && t % 8 === WIRE_LEN) {
        const [as, ae] = node.bytes();
        const attr = new Reader(u8, as, ae);
        while (!attr.done()) {
          const at = attr.varint();
          const af = Math.floor(at / 8);
          if ((af === 6 || af === 11) && at % 8 === WIRE_LEN) {
            const [gs, ge] = attr.bytes();
            countGraphNodes(u8, gs, ge, counts, depth + 1);
          } else {
            attr.skip(at % 8);
          }
        }
      } else {
        node.skip(t % 8);
      }
    }
  }
}

/** Node counts by op_type of ModelProto.graph (field 7), subgraphs included. */
export function countOnnxOps(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const r = new Reader(u8);
  const counts = {};
  while (!r.done()) {
    const tag = r.varint();
    if (Math.floor(tag / 8) === 7 && tag % 8 === WIRE_LEN) {
      const [s, e] = r.bytes();
      countGraphNodes(u8, s, e, counts, 0);
    } else {
      r.skip(tag % 8);
    }
  }
  return counts;
}

// ---- graph outputs ---------------------------------------------------------

function encodeVarint(n) {
  const out = [];
  let v = n;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

function lengthDelimited(field, payload) {
  return [...encodeVarint(field * 8 + WIRE_LEN), ...encodeVarint(payload.length), ...payload];
}

/**
 * The values of the main graph (ModelProto.graph = 7): `produced`, the names
 * of its nodes' outputs (GraphProto.node = 1, NodeProto.output = 2), and
 * `outputs`, its graph outputs (GraphProto.output = 12, ValueInfoProto.name = 1).
 */
export function readGraphValues(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const dec = new TextDecoder();
  const produced = new Set();
  const outputs = [];
  const model = new Reader(u8);
  while (!model.done()) {
    const tag = model.varint();
    if (Math.floor(tag / 8) !== 7 || tag % 8 !== WIRE_LEN) { model.skip(tag % 8); continue; }
    const [gs, ge] = model.bytes();
    const graph = new Reader(u8, gs, ge);
    while (!graph.done()) {
      const gtag = graph.varint();
      const field = Math.floor(gtag / 8);
      if ((field !== 1 && field !== 12) || gtag % 8 !== WIRE_LEN) { graph.skip(gtag % 8); continue; }
      const [s, e] = graph.bytes();
      const sub = new Reader(u8, s, e);
      while (!sub.done()) {
        const t = sub.varint();
        const f = Math.floor(t / 8);
        if (t % 8 === WIRE_LEN && ((field === 1 && f === 2) || (field === 12 && f === 1))) {
          const [ns, ne] = sub.bytes();
          const name = dec.decode(u8.subarray(ns, ne));
          if (field === 1) produced.add(name); else outputs.push(name);
        } else {
          sub.skip(t % 8);
        }
      }
    }
  }
  return { produced, outputs };
}

/**
 * A copy of the model whose main graph also outputs the values `names`: a
 * ValueInfoProto with the name only each (ONNX Runtime takes the type and
 * shape from the producing node), appended to GraphProto.output. The graph's
 * nodes are untouched, so nothing changes but what the session returns (and
 * which fusions ONNX Runtime may still apply: see diverge.mjs).
 */
export function withGraphOutputs(bytes, names) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const enc = new TextEncoder();
  const extra = names.flatMap((name) => lengthDelimited(12, lengthDelimited(1, [...enc.encode(name)])));
  const parts = [];
  const model = new Reader(u8);
  let found = false;
  while (!model.done()) {
    const start = model.pos;
    const tag = model.varint();
    if (Math.floor(tag / 8) === 7 && tag % 8 === WIRE_LEN && !found) {
      const [gs, ge] = model.bytes();
      // The graph field again, its length grown by the new outputs.
      parts.push(Uint8Array.from([...encodeVarint(7 * 8 + WIRE_LEN), ...encodeVarint(ge - gs + extra.length)]));
      parts.push(u8.subarray(gs, ge), Uint8Array.from(extra));
      found = true;
    } else {
      model.skip(tag % 8);
      parts.push(u8.subarray(start, model.pos));
    }
  }
  if (!found) throw new Error('the ONNX model has no graph');
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
