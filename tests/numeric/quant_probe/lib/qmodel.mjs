// Helpers to build single-op quantized models with the project's model builder and to
// generate adversarial integer inputs.
import { Model } from '../../../models/lib/model.mjs';
import { f32 } from '../ref/common.mjs';

export { Model };

export const TYPE_NAME = { int8: 'INT8', uint8: 'UINT8', int16: 'INT16', int32: 'INT32', float32: 'FLOAT32', int64: 'INT64' };
export const ARRAY = { int8: Int8Array, uint8: Uint8Array, int16: Int16Array, int32: Int32Array, float32: Float32Array };
export const LIMITS = { int8: [-128, 127], uint8: [0, 255], int16: [-32768, 32767] };

// The float32 value flatc will store for a decimal scale: we write the shortest decimal that
// round-trips the float32, so the runtime sees exactly f32(scale).
export function fs(x) {
  const v = f32(x);
  for (let p = 1; p <= 9; p++) if (f32(Number(v.toPrecision(p))) === v) return Number(v.toPrecision(p));
  return v;
}

function quantization(scale, zp, axis) {
  const s = Array.isArray(scale) ? scale.map(fs) : [fs(scale)];
  const z = Array.isArray(zp) ? zp : [zp ?? 0];
  const q = { scale: s, zero_point: z.length === s.length ? z : s.map(() => z[0]) };
  if (axis !== undefined) q.quantized_dimension = axis;
  return q;
}

// A quantized graph input.
export function qin(m, name, shape, type, scale, zp = 0) {
  const t = m.input(name, shape, TYPE_NAME[type]);
  m.tensors[t].quantization = quantization(scale, zp);
  return t;
}
// A quantized tensor (output or intermediate).
export function qt(m, name, shape, type, scale, zp = 0, axis = undefined) {
  const t = m.tensor(name, shape, TYPE_NAME[type]);
  if (scale !== undefined) m.tensors[t].quantization = quantization(scale, zp, axis);
  return t;
}
// A quantized constant of integers.
export function qconst(m, name, shape, type, ints, scale, zp = 0, axis = undefined) {
  const t = m.constant(name, shape, TYPE_NAME[type], ints);
  if (scale !== undefined) m.tensors[t].quantization = quantization(scale, zp, axis);
  return t;
}

export function tensor(type, shape, values) {
  return { type, shape, data: ARRAY[type].from(values) };
}

// A small deterministic PRNG (mulberry32).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export const randInt = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
export const randInts = (r, n, lo, hi) => Array.from({ length: n }, () => randInt(r, lo, hi));

// Every (a, b) pair of a type's range: two arrays of 256*256 (8-bit) values.
export function allPairs(type) {
  const [lo, hi] = LIMITS[type];
  const a = [];
  const b = [];
  for (let i = lo; i <= hi; i++) for (let j = lo; j <= hi; j++) { a.push(i); b.push(j); }
  return [a, b];
}
export function allValues(type) {
  const [lo, hi] = LIMITS[type];
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

export const count = (shape) => shape.reduce((x, y) => x * y, 1);

// numpy broadcasting index helper: for output index i of outShape, the flat index into a
// tensor of shape `shape` (right-aligned).
export function bcastIndex(outShape, shape) {
  const n = outShape.length;
  const s = [...Array(n - shape.length).fill(1), ...shape];
  const strides = s.map((_, d) => count(s.slice(d + 1)));
  return (i) => {
    let rem = i;
    let idx = 0;
    for (let d = n - 1; d >= 0; d--) {
      const c = rem % outShape[d];
      rem = (rem - c) / outShape[d];
      if (s[d] !== 1) idx += c * strides[d];
    }
    return idx;
  };
}
export function bcastShape(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    out.push(x === 1 ? y : x);
  }
  return out;
}
