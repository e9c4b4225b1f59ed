// Shared numeric helpers of the reference arithmetics.
// Numbers are JS doubles; float32 steps are made explicit with f32 (Math.fround).

export const f32 = Math.fround;

// Round half to even (IEEE default rounding, lrintf / nearbyintf / magic-number rounding).
export function rne(v) {
  const r = Math.round(v); // half up
  return (r - v === 0.5 && r % 2 !== 0) ? r - 1 : r;
}

// Round half away from zero (std::round, TfLiteRound).
export const roundAway = (v) => (v < 0 ? -Math.round(-v) : Math.round(v));

// Round half up (toward +inf): floor(v + 0.5) for exact v.
export const roundHalfUp = (v) => Math.floor(v + 0.5);

export const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);

export const RANGE = {
  int8: [-128, 127], uint8: [0, 255], int16: [-32768, 32767], int32: [-(2 ** 31), 2 ** 31 - 1],
};

// Float32 bits <-> value.
const cvt = new DataView(new ArrayBuffer(8));
export function f32Bits(x) { cvt.setFloat32(0, x, true); return cvt.getUint32(0, true); }
export function bitsF32(u) { cvt.setUint32(0, u >>> 0, true); return cvt.getFloat32(0, true); }

// C-style conversion of an int32 to float32 (round to nearest even).
export const i2f = (x) => Math.fround(x);

// frexp: x = q * 2^e with q in [0.5, 1) (x > 0 finite).
export function frexp(x) {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  const s = x < 0 ? -1 : 1;
  let a = Math.abs(x);
  let e = Math.max(-1073, Math.floor(Math.log2(a)) + 1);
  let q = a * 2 ** -e;
  while (q < 0.5) { q *= 2; e -= 1; }
  while (q >= 1) { q /= 2; e += 1; }
  return [s * q, e];
}

// Arithmetic shift right of an int (exact for |x| < 2^53): floor(x / 2^n).
export const asr = (x, n) => Math.floor(x / 2 ** n);
