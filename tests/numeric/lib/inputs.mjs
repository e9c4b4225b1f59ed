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

export function inputSeed(modelFileName, inputIndex) {
  return fnv1a(`${modelFileName}#${inputIndex}`);
}
