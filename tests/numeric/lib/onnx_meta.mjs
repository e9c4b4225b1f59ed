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

function varintBytes(n) {
  const out = [];
  let v = n;
  while (v >= 128) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

// The name (field 8) of a TensorProto.
function tensorName(u8, start, end) {
  const r = new Reader(u8, start, end);
  while (!r.done()) {
    const tag = r.varint();
    if (Math.floor(tag / 8) === 8 && tag % 8 === WIRE_LEN) {
      const [s, e] = r.bytes();
      return new TextDecoder().decode(u8.subarray(s, e));
    }
    r.skip(tag % 8);
  }
  return '';
}

/**
 * The model without the main graph's initializers of these names (GraphProto
 * field 5): the graph inputs they back become plain inputs. onnxruntime-node
 * feeds only the inputs that have no initializer (it drops any other feed
 * silently), so a model's state inputs (lite2onnx.state) can be fed only this
 * way.
 */
export function withoutInitializers(bytes, names) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const drop = new Set(names);
  const parts = [];
  const r = new Reader(u8);
  while (!r.done()) {
    const fieldStart = r.pos;
    const tag = r.varint();
    if (Math.floor(tag / 8) !== 7 || tag % 8 !== WIRE_LEN) {
      r.skip(tag % 8);
      parts.push(u8.subarray(fieldStart, r.pos));
      continue;
    }
    const [gs, ge] = r.bytes();
    const g = new Reader(u8, gs, ge);
    const kept = [];
    while (!g.done()) {
      const at = g.pos;
      const t = g.varint();
      if (Math.floor(t / 8) === 5 && t % 8 === WIRE_LEN) {
        const [s, e] = g.bytes();
        if (drop.has(tensorName(u8, s, e))) continue;
      } else {
        g.skip(t % 8);
      }
      kept.push(u8.subarray(at, g.pos));
    }
    const length = kept.reduce((n, p) => n + p.length, 0);
    parts.push(Uint8Array.from([...varintBytes(tag), ...varintBytes(length)]), ...kept);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
