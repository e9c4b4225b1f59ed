// Deterministic pseudo-random model inputs.
//
// The seed of each input is a 32-bit FNV-1a hash of "<model file name>#<input
// index>", so a model gets the same inputs whatever directory it is run from,
// and the generator is a 32-bit "mulberry"-style mixer: a Weyl sequence
// (state += 0x6D2B79F5) passed through two multiply-xorshift rounds.

import { allocate, typeRange } from './tensor.mjs';

export function fnv1a(text) {
  let h = 0x811c9dc5;
  const bytes = new TextEncoder().encode(text);
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Returns a function producing uniform floats in [0, 1). */
export function makeRng(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Default value domain for a TFLite input type:
 *   float: [-1, 1); int8/uint8/int16/uint16: the whole type range;
 *   int32/int64/uint32: [0, 10); bool: {0, 1}.
 * Integer ranges are [lo, hi) here (hi exclusive).
 */
export function defaultRange(type) {
  switch (type) {
    case 'float32':
    case 'float64':
    case 'float16':
      return [-1, 1];
    case 'int8':
    case 'uint8':
    case 'int16':
    case 'uint16': {
      const [lo, hi] = typeRange(type);
      return [lo, hi + 1];
    }
    case 'bool':
      return [0, 2];
    default:
      return [0, 10];
  }
}

/**
 * Fills a tensor of the given TFLite type and shape.
 * range: [lo, hi) — floats uniform in it, integers uniform over lo..hi-1.
 */
export function randomTensor(type, shape, seed, range) {
  const t = allocate(type, shape);
  const rng = makeRng(seed);
  const [lo, hi] = range ?? defaultRange(type);
  if (!(hi > lo)) throw new Error(`empty input range [${lo}, ${hi})`);
  const d = t.data;
  if (type === 'float32' || type === 'float64') {
    const span = hi - lo;
    for (let i = 0; i < d.length; i++) d[i] = lo + span * rng();
  } else if (type === 'int64' || type === 'uint64') {
    const ilo = Math.ceil(lo);
    const span = Math.max(1, Math.ceil(hi) - ilo);
    for (let i = 0; i < d.length; i++) d[i] = BigInt(ilo + Math.floor(rng() * span));
  } else {
    const ilo = Math.ceil(lo);
    const span = Math.max(1, Math.ceil(hi) - ilo);
    const [tlo, thi] = typeRange(type);
    for (let i = 0; i < d.length; i++) {
      d[i] = Math.min(thi, Math.max(tlo, ilo + Math.floor(rng() * span)));
    }
  }
  return t;
}

/**
 * Like randomTensor, but spatially smooth, as camera images are: per leading
 * index and channel, a coarse grid of uniform random values every `cell`
 * elements along the two `axes`, bilinearly interpolated in between (integer
 * types rounded). Deep quantized classifiers fed uniform noise amplify any
 * one-step rounding difference: TFLite's own output then moves by many steps
 * when one input element moves by one (tests/numeric/sensitivity.mjs shows
 * it), so a step-based comparison measures that amplification, not the
 * conversion. Smooth inputs keep such models in their normal operating regime.
 */
export function smoothTensor(type, shape, seed, range, axes, cell) {
  if (shape.length < 2) throw new Error(`smooth input needs rank >= 2, got [${shape}]`);
  const [ay, ax] = (axes ?? [shape.length - 3, shape.length - 2]).map((a) => (a < 0 ? a + shape.length : a));
  if (!(ay >= 0 && ax > ay && ax < shape.length)) throw new Error(`smooth input: bad axes [${axes}] for shape [${shape}]`);
  if (!(cell >= 1)) throw new Error(`smooth input: cell must be >= 1, got ${cell}`);
  const t = allocate(type, shape);
  const rng = makeRng(seed);
  const [lo, hi] = range ?? defaultRange(type);
  if (!(hi > lo)) throw new Error(`empty input range [${lo}, ${hi})`);
  const integer = !(type === 'float32' || type === 'float64');
  const [tlo, thi] = integer ? typeRange(type) : [-Infinity, Infinity];
  const H = shape[ay];
  const W = shape[ax];
  // grid points at 0, cell, 2*cell, ...: one more than needed so every
  // element has a right/lower neighbour to interpolate with
  const gh = Math.floor((H - 1) / cell) + 2;
  const gw = Math.floor((W - 1) / cell) + 2;
  const stride = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const planes = shape.reduce((a, b) => a * b, 1) / (H * W);
  const other = shape.map((_, i) => i).filter((i) => i !== ay && i !== ax);
  const grid = new Float64Array(gh * gw);
  for (let p = 0; p < planes; p++) {
    let rest = p;
    let base = 0;
    for (let k = other.length - 1; k >= 0; k--) {
      base += (rest % shape[other[k]]) * stride[other[k]];
      rest = Math.floor(rest / shape[other[k]]);
    }
    for (let i = 0; i < grid.length; i++) grid[i] = lo + (hi - lo) * rng();
    for (let y = 0; y < H; y++) {
      const y0 = Math.floor(y / cell);
      const fy = y / cell - y0;
      for (let x = 0; x < W; x++) {
        const x0 = Math.floor(x / cell);
        const fx = x / cell - x0;
        const top = (1 - fx) * grid[y0 * gw + x0] + fx * grid[y0 * gw + x0 + 1];
        const bottom = (1 - fx) * grid[(y0 + 1) * gw + x0] + fx * grid[(y0 + 1) * gw + x0 + 1];
        const v = (1 - fy) * top + fy * bottom;
        t.data[base + y * stride[ay] + x * stride[ax]] = integer
          ? Math.min(thi, Math.ceil(hi) - 1, Math.max(tlo, Math.floor(v)))
          : v;
      }
    }
  }
  return t;
}

export function inputSeed(modelFileName, inputIndex) {
  return fnv1a(`${modelFileName}#${inputIndex}`);
}
