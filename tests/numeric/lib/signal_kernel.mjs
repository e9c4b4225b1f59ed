// TensorFlow Lite Micro's Signal library kernels in JS, written from
// tflite-micro's signal/src/*.cc and signal/micro/kernels/*.cc, and kissfft
// v130 (FIXED_POINT=16, as TFLM's kiss_fft_wrappers build it) for the RFFT:
// scalar code in the C's order with C's integer types (int16/int32 wrap,
// uint32 via >>> 0, uint64 as BigInt). No runtime here registers these ops;
// signal_reference.mjs runs them between LiteRT.js segments.

const wrap16 = (v) => (v << 16) >> 16;  // an int16_t store of an int value
const u32 = (v) => v >>> 0;

// ---- window.cc ----
export function applyWindow(input, weights, shift) {
  const out = new Int16Array(input.length);
  const w = weights.length;
  for (let base = 0; base < input.length; base += w) {
    for (let i = 0; i < w; i++) {
      const raw = Math.imul(input[base + i], weights[i]) >> shift;
      out[base + i] = raw < -32768 ? -32768 : raw > 32767 ? 32767 : raw;
    }
  }
  return out;
}

// ---- msb_32.cc (GCC's path: 32 - clz, 32 for 0) ----
function msb32(x) {
  x = u32(x);
  return x === 0 ? 32 : 32 - Math.clz32(x);
}

// ---- max_abs.cc, fft_auto_scale.cc ----
export function fftAutoScale(input) {
  let max = 0;  // int16_t
  for (let i = 0; i < input.length; i++) {
    const value = input[i];
    if (value > max) max = value;
    else if (-value > max) max = wrap16(-value);
  }
  let scaleBits = 16 - msb32(max) - 1;  // max converted to uint32_t
  if (scaleBits <= 0) scaleBits = 0;
  const out = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) out[i] = Math.imul(input[i], 1 << scaleBits);
  return { output: out, scaleBits };
}

// ---- kissfft v130: FIXED_POINT 16 (int16, every macro's rounding and store),
// FIXED_POINT 32 (int32, SAMPPROD int64: BigInt here) or float
// (kiss_fft_scalar float, each operation rounded to float32) ----
const SAMP_MAX = 32767;
const f32 = Math.fround;

const wrap32 = (v) => v | 0;  // an int32 store of a value within 2^53

function arithmeticQ31() {
  const MAX = 2147483647n;
  const sround = (x) => Number(BigInt.asIntN(32, (x + (1n << 30n)) >> 31n));
  const B = BigInt;
  return {
    fixdiv: (c, div) => ({ r: sround(B(c.r) * (MAX / B(div))), i: sround(B(c.i) * (MAX / B(div))) }),
    cmul: (a, b) => ({ r: sround(B(a.r) * B(b.r) - B(a.i) * B(b.i)), i: sround(B(a.r) * B(b.i) + B(a.i) * B(b.r)) }),
    add: (a, b) => wrap32(a + b),
    sub: (a, b) => wrap32(a - b),
    neg: (a) => wrap32(-a),
    half: (v) => wrap32(v) >> 1,  // HALF_OF of an int (32-bit) sum
    cexp: (phase) => ({ r: Math.floor(0.5 + 2147483647 * Math.cos(phase)), i: Math.floor(0.5 + 2147483647 * Math.sin(phase)) }),
  };
}

function arithmetic(fixed) {
  if (fixed === 'q31') return arithmeticQ31();
  if (!fixed) {
    return {
      fixdiv: (c) => c,
      cmul: (a, b) => ({ r: f32(f32(a.r * b.r) - f32(a.i * b.i)), i: f32(f32(a.r * b.i) + f32(a.i * b.r)) }),
      add: (a, b) => f32(a + b),
      sub: (a, b) => f32(a - b),
      neg: (a) => -a,
      half: (v) => f32(v * 0.5),
      cexp: (phase) => ({ r: f32(Math.cos(phase)), i: f32(Math.sin(phase)) }),
    };
  }
  const sround = (x) => wrap16((x + (1 << 14)) >> 15);
  return {
    fixdiv: (c, div) => ({ r: sround(c.r * Math.trunc(SAMP_MAX / div)), i: sround(c.i * Math.trunc(SAMP_MAX / div)) }),
    cmul: (a, b) => ({ r: sround(a.r * b.r - a.i * b.i), i: sround(a.r * b.i + a.i * b.r) }),
    add: (a, b) => wrap16(a + b),
    sub: (a, b) => wrap16(a - b),
    neg: (a) => wrap16(-a),
    half: (v) => v >> 1,
    cexp: (phase) => ({ r: Math.floor(0.5 + SAMP_MAX * Math.cos(phase)), i: Math.floor(0.5 + SAMP_MAX * Math.sin(phase)) }),
  };
}

function kfFactor(n) {
  const out = [];
  let p = 4;
  const floorSqrt = Math.floor(Math.sqrt(n));
  do {
    while (n % p) {
      p = p === 4 ? 2 : p === 2 ? 3 : p + 2;
      if (p > floorSqrt) p = n;
    }
    n = Math.trunc(n / p);
    out.push([p, n]);
  } while (n > 1);
  return out;
}

function kissFftAlloc(nfft, A, inverse = false) {
  const pi = 3.141592653589793238462643383279502884197169399375105820974944;
  const twiddles = [];
  for (let i = 0; i < nfft; i++) {
    let phase = (-2 * pi * i) / nfft;
    if (inverse) phase *= -1;
    twiddles.push(A.cexp(phase));
  }
  return { nfft, twiddles, factors: kfFactor(nfft), A, inverse };
}

function bfly2(F, at, fstride, st, m) {
  const A = st.A;
  for (let k = 0; k < m; k++) {
    const a = A.fixdiv(F[at + k], 2), b = A.fixdiv(F[at + k + m], 2);
    const t = A.cmul(b, st.twiddles[k * fstride]);
    F[at + k + m] = { r: A.sub(a.r, t.r), i: A.sub(a.i, t.i) };
    F[at + k] = { r: A.add(a.r, t.r), i: A.add(a.i, t.i) };
  }
}

function bfly4(F, at, fstride, st, m) {
  const A = st.A;
  for (let k = 0; k < m; k++) {
    const i0 = at + k, i1 = i0 + m, i2 = i0 + 2 * m, i3 = i0 + 3 * m;
    F[i0] = A.fixdiv(F[i0], 4); F[i1] = A.fixdiv(F[i1], 4); F[i2] = A.fixdiv(F[i2], 4); F[i3] = A.fixdiv(F[i3], 4);
    const s0 = A.cmul(F[i1], st.twiddles[k * fstride]);
    const s1 = A.cmul(F[i2], st.twiddles[2 * k * fstride]);
    const s2 = A.cmul(F[i3], st.twiddles[3 * k * fstride]);
    const s5 = { r: A.sub(F[i0].r, s1.r), i: A.sub(F[i0].i, s1.i) };
    F[i0] = { r: A.add(F[i0].r, s1.r), i: A.add(F[i0].i, s1.i) };
    const s3 = { r: A.add(s0.r, s2.r), i: A.add(s0.i, s2.i) };
    const s4 = { r: A.sub(s0.r, s2.r), i: A.sub(s0.i, s2.i) };
    F[i2] = { r: A.sub(F[i0].r, s3.r), i: A.sub(F[i0].i, s3.i) };
    F[i0] = { r: A.add(F[i0].r, s3.r), i: A.add(F[i0].i, s3.i) };
    if (st.inverse) {
      F[i1] = { r: A.sub(s5.r, s4.i), i: A.add(s5.i, s4.r) };
      F[i3] = { r: A.add(s5.r, s4.i), i: A.sub(s5.i, s4.r) };
    } else {
      F[i1] = { r: A.add(s5.r, s4.i), i: A.sub(s5.i, s4.r) };
      F[i3] = { r: A.sub(s5.r, s4.i), i: A.add(s5.i, s4.r) };
    }
  }
}

function kfWork(F, at, f, fat, fstride, depth, st) {
  const [p, m] = st.factors[depth];
  if (m === 1) {
    for (let k = 0; k < p; k++) F[at + k] = { ...f[fat + k * fstride] };
  } else {
    for (let k = 0; k < p; k++) kfWork(F, at + k * m, f, fat + k * fstride, fstride * p, depth + 1, st);
  }
  if (p === 2) bfly2(F, at, fstride, st, m);
  else if (p === 4) bfly4(F, at, fstride, st, m);
  else throw new Error(`kissfft radix ${p} is not written in this reference`);
}

/** kiss_fftr of one row of `fftLength` samples: fftLength / 2 + 1 complex bins. */
function kissFftr(st, superTwiddles, time) {
  const A = st.A;
  const ncfft = st.nfft;
  const fin = [];
  for (let k = 0; k < ncfft; k++) fin.push({ r: time[2 * k], i: time[2 * k + 1] });
  const tmp = new Array(ncfft);
  kfWork(tmp, 0, fin, 0, 1, 0, st);
  const freq = new Array(ncfft + 1);
  const tdc = A.fixdiv(tmp[0], 2);
  freq[0] = { r: A.add(tdc.r, tdc.i), i: 0 };
  freq[ncfft] = { r: A.sub(tdc.r, tdc.i), i: 0 };
  for (let k = 1; k <= ncfft / 2; k++) {
    const fpk = A.fixdiv(tmp[k], 2);
    const fpnk = A.fixdiv({ r: tmp[ncfft - k].r, i: A.neg(tmp[ncfft - k].i) }, 2);
    const f1k = { r: A.add(fpk.r, fpnk.r), i: A.add(fpk.i, fpnk.i) };
    const f2k = { r: A.sub(fpk.r, fpnk.r), i: A.sub(fpk.i, fpnk.i) };
    const tw = A.cmul(f2k, superTwiddles[k - 1]);
    // HALF_OF of an int sum (no int16 wrap before the halving) or of a float sum
    const sum = (a, b) => (st.fixed ? a + b : f32(a + b));
    const dif = (a, b) => (st.fixed ? a - b : f32(a - b));
    freq[k] = { r: A.half(sum(f1k.r, tw.r)), i: A.half(sum(f1k.i, tw.i)) };
    freq[ncfft - k] = { r: A.half(dif(f1k.r, tw.r)), i: A.half(dif(tw.i, f1k.i)) };
  }
  return freq;
}

/** rfft.cc's Eval: each row of `inputLength` samples, zero-padded; int16 (fixed) or float32. */
function rfft(input, inputLength, fftLength, fixed) {
  const A = arithmetic(fixed);
  const ncfft = fftLength / 2;
  const st = { ...kissFftAlloc(ncfft, A), fixed };
  const superTwiddles = [];
  for (let i = 0; i < ncfft / 2; i++) {
    superTwiddles.push(A.cexp(-3.14159265358979323846264338327 * ((i + 1) / ncfft + 0.5)));
  }
  const Ctor = fixed === 'q31' ? Int32Array : fixed ? Int16Array : Float32Array;
  const rows = input.length / inputLength;
  const out = new Ctor(rows * (fftLength + 2));
  const work = new Ctor(fftLength);
  for (let r = 0; r < rows; r++) {
    work.fill(0);
    work.set(input.subarray(r * inputLength, (r + 1) * inputLength));
    const freq = kissFftr(st, superTwiddles, work);
    freq.forEach((c, k) => { out[r * (fftLength + 2) + 2 * k] = c.r; out[r * (fftLength + 2) + 2 * k + 1] = c.i; });
  }
  return out;
}

/** kiss_fftri: ncfft + 1 bins (complex pairs from `freq` at `at`) -> 2 * ncfft samples into `out` at `outAt`. */
function kissFftri(st, superTwiddles, freq, at, out, outAt) {
  const A = st.A;
  const ncfft = st.nfft;
  const bin = (k) => ({ r: freq[at + 2 * k], i: freq[at + 2 * k + 1] });
  const tmp = new Array(ncfft);
  tmp[0] = A.fixdiv({ r: A.add(bin(0).r, bin(ncfft).r), i: A.sub(bin(0).r, bin(ncfft).r) }, 2);
  for (let k = 1; k <= ncfft / 2; k++) {
    const fk = A.fixdiv(bin(k), 2);
    const fnkc = A.fixdiv({ r: bin(ncfft - k).r, i: A.neg(bin(ncfft - k).i) }, 2);
    const fek = { r: A.add(fk.r, fnkc.r), i: A.add(fk.i, fnkc.i) };
    const t = { r: A.sub(fk.r, fnkc.r), i: A.sub(fk.i, fnkc.i) };
    const fok = A.cmul(t, superTwiddles[k - 1]);
    tmp[k] = { r: A.add(fek.r, fok.r), i: A.add(fek.i, fok.i) };
    tmp[ncfft - k] = { r: A.sub(fek.r, fok.r), i: A.sub(fek.i, fok.i) };
    tmp[ncfft - k].i = A.neg(tmp[ncfft - k].i);
  }
  const time = new Array(ncfft);
  kfWork(time, 0, tmp, 0, 1, 0, st);
  time.forEach((c, k) => { out[outAt + 2 * k] = c.r; out[outAt + 2 * k + 1] = c.i; });
}

/** irfft.cc's Eval: each row of `inputLength` complex bins -> fftLength samples. */
function irfft(input, inputLength, fftLength, fixed) {
  const A = arithmetic(fixed);
  const ncfft = fftLength / 2;
  const st = { ...kissFftAlloc(ncfft, A, true), fixed };
  const superTwiddles = [];
  for (let i = 0; i < ncfft / 2; i++) {
    let phase = -3.14159265358979323846264338327 * ((i + 1) / ncfft + 0.5);
    phase *= -1;
    superTwiddles.push(A.cexp(phase));
  }
  const rows = input.length / (2 * inputLength);
  const out = new (fixed === 'q31' ? Int32Array : fixed ? Int16Array : Float32Array)(rows * fftLength);
  for (let r = 0; r < rows; r++) kissFftri(st, superTwiddles, input, 2 * r * inputLength, out, r * fftLength);
  // irfft_float.cc: output[i] /= fft_length (a float division)
  if (!fixed) for (let i = 0; i < out.length; i++) out[i] = Math.fround(out[i] / fftLength);
  return out;
}

export const irfftInt16 = (input, inputLength, fftLength) => irfft(input, inputLength, fftLength, true);
export const irfftInt32 = (input, inputLength, fftLength) => irfft(input, inputLength, fftLength, 'q31');
export const rfftInt32 = (input, inputLength, fftLength) => rfft(input, inputLength, fftLength, 'q31');
export const irfftFloat = (input, inputLength, fftLength) => irfft(input, inputLength, fftLength, false);
export const rfftInt16 = (input, inputLength, fftLength) => rfft(input, inputLength, fftLength, true);
export const rfftFloat = (input, inputLength, fftLength) => rfft(input, inputLength, fftLength, false);

// ---- energy.cc (outputs outside [start, end) unwritten: zeros here) ----
export function spectrumToEnergy(input, start, end, outLength) {
  const out = new Uint32Array(outLength);
  for (let i = start; i < end; i++) {
    const re = input[2 * i], im = input[2 * i + 1];
    out[i] = u32((Math.imul(re, re) + Math.imul(im, im)) | 0);
  }
  return out;
}

// ---- filter_bank.cc ----
export function filterbankAccumulate(input, weights, unweights, freqStarts, weightStarts, widths, numChannels) {
  const mask = (1n << 64n) - 1n;
  const work = new BigUint64Array(numChannels + 1);
  let weightAcc = 0n, unweightAcc = 0n;
  for (let i = 0; i < numChannels + 1; i++) {
    const freqStart = freqStarts[i], weightStart = weightStarts[i];
    for (let j = 0; j < widths[i]; j++) {
      const x = BigInt(input[freqStart + j]);
      // int16 weight converted to uint64 (sign-extended), product modulo 2^64
      weightAcc = (weightAcc + ((BigInt(weights[weightStart + j]) & mask) * x)) & mask;
      unweightAcc = (unweightAcc + ((BigInt(unweights[weightStart + j]) & mask) * x)) & mask;
    }
    work[i] = weightAcc;
    weightAcc = unweightAcc;
    unweightAcc = 0n;
  }
  return work.slice(1);
}

// ---- square_root_32.cc / square_root_64.cc, filter_bank_square_root.cc ----
function msb64(x) {
  let n = 0;
  while (x) { x >>= 1n; n++; }
  return x === 0n && n === 0 ? 64 : n;
}

function sqrt32(num) {
  if (num === 0) return 0;
  let res = 0;
  let maxBit = 32 - msb32(num);
  maxBit |= 1;
  let bit = u32(2 ** (31 - maxBit));
  let iterations = Math.trunc((31 - maxBit) / 2) + 1;
  while (iterations--) {
    if (num >= res + bit) {
      num = u32(num - (res + bit));
      res = u32((res >>> 1) + bit);
    } else {
      res >>>= 1;
    }
    bit = Math.floor(bit / 4);
  }
  if (num > res && res !== 0xffff) ++res;
  return res & 0xffff;
}

function sqrt64(num) {
  if ((num >> 32n) === 0n) return sqrt32(Number(num));
  let res = 0n;
  let maxBit = 64 - msb64(num);
  maxBit |= 1;
  let bit = 1n << BigInt(63 - maxBit);
  let iterations = Math.trunc((63 - maxBit) / 2) + 1;
  while (iterations--) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1n) + bit;
    } else {
      res >>= 1n;
    }
    bit >>= 2n;
  }
  if (num > res && res !== 0xffffffffn) ++res;
  return Number(res & 0xffffffffn);
}

export function filterbankSqrt(input, scaleBits) {
  const out = new Uint32Array(input.length);
  for (let i = 0; i < input.length; i++) out[i] = sqrt64(input[i]) >>> scaleBits;
  return out;
}

// ---- filter_bank_spectral_subtraction.cc; `noise` (the kernel's state) is updated ----
export function spectralSubtraction(c, input, noise) {
  const out = new Uint32Array(input.length);
  for (let i = 0; i < c.num_channels; i++) {
    const odd = (i & 1) !== 0;
    const smoothing = BigInt(odd ? c.alternate_smoothing : c.smoothing);
    const oneMinus = BigInt(odd ? c.alternate_one_minus_smoothing : c.one_minus_smoothing);
    const signalScaledUp = u32(input[i] * 2 ** c.smoothing_bits);
    noise[i] = Number(((BigInt(signalScaledUp) * smoothing + BigInt(noise[i]) * oneMinus) >>
      BigInt(c.spectral_subtraction_bits)) & 0xffffffffn);
    let estimateScaledUp = noise[i];
    if (estimateScaledUp > signalScaledUp) {
      estimateScaledUp = signalScaledUp;
      if (c.clamping) noise[i] = estimateScaledUp;
    }
    const floor = Number(((BigInt(input[i]) * BigInt(c.min_signal_remaining)) >> BigInt(c.spectral_subtraction_bits)) & 0xffffffffn);
    const subtracted = Math.floor((signalScaledUp - estimateScaledUp) / 2 ** c.smoothing_bits);
    out[i] = subtracted > floor ? subtracted : floor;
  }
  return out;
}

// ---- pcan_argc_fixed.cc ----
function wideDynamicFunction(x, lut) {
  if (x <= 2) return lut[x];
  const interval = msb32(x);
  const at = 4 * interval - 6;
  const frac = (interval < 11 ? u32(x * 2 ** (11 - interval)) : x >>> (interval - 11)) & 0x3ff;
  let result = Math.imul(lut[at + 2], frac) >> 5;
  result = (result + (u32(lut[at + 1] * 32) | 0)) | 0;
  result = Math.imul(result, frac);
  result = ((result + (1 << 14)) >> 15) | 0;
  result = (result + lut[at]) | 0;
  return wrap16(result);
}

function pcanShrink(x) {
  if (x < 2 << 12) return u32(Math.imul(x, x)) >>> (2 + 2 * 12 - 6);
  return u32((x >>> (12 - 6)) - (1 << 6));
}

export function pcan(input, noise, lut, snrShift) {
  const out = new Uint32Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const gain = BigInt(u32(wideDynamicFunction(noise[i], lut)));  // int16 -> uint32
    const snr = Number(((BigInt(input[i]) * gain) >> BigInt(snrShift)) & 0xffffffffn);
    out[i] = pcanShrink(snr);
  }
  return out;
}

// ---- log.cc, filter_bank_log.cc ----
const LOG_LUT = [
  0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
  3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
  5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
  5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
  5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
  4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
  2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0];

function log2FractionPart32(x, log2x) {
  let frac = (x - 2 ** log2x) | 0;
  if (log2x < 16) frac = frac << (16 - log2x);
  else frac = frac >> (log2x - 16);
  const baseSeg = frac >>> (16 - 7);
  const c0 = LOG_LUT[baseSeg], c1 = LOG_LUT[baseSeg + 1];
  const segBase = 512 * baseSeg;
  const relPos = Math.imul(c1 - c0, frac - segBase) >> 16;
  return u32(frac + c0 + relPos);
}

function log32(x, outScale) {
  const integer = msb32(x) - 1;
  const fraction = log2FractionPart32(x, integer);
  const log2 = u32(integer * 65536 + fraction);
  const loge = Number((45426n * BigInt(log2) + 32768n) >> 16n) >>> 0;
  return u32(Math.imul(u32(outScale), loge) + 32768) >>> 16;
}

export function filterbankLog(input, outputScale, correctionBits) {
  const out = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const scaled = u32(input[i] * 2 ** correctionBits);
    if (scaled > 1) {
      const v = log32(scaled, outputScale);
      out[i] = v < 32767 ? v : 32767;
    } else {
      out[i] = 0;
    }
  }
  return out;
}

// ---- circular_buffer.cc as the stream kernels use it: a FIFO of int16 ----
class Fifo {
  constructor() { this.data = []; }
  write(values) { this.data.push(...values); }
  writeZeros(n) { for (let i = 0; i < n; i++) this.data.push(0); }
  available() { return this.data.length; }
  get(n) { return this.data.slice(0, n); }
  discard(n) { this.data.splice(0, n); }
}

/** delay.cc: one delay line per row of `inner` samples, delay_length zeros first. */
export function makeDelay(rows, inner, delayLength) {
  const lines = Array.from({ length: rows }, () => { const f = new Fifo(); f.writeZeros(delayLength); return f; });
  return (input) => {
    const out = new Int16Array(input.length);
    for (let r = 0; r < rows; r++) {
      lines[r].write(input.subarray(r * inner, (r + 1) * inner));
      out.set(lines[r].get(inner), r * inner);
      lines[r].discard(inner);
    }
    return out;
  };
}

/** framer.cc: frames of frameSize every frameStep per row; prefill writes frameSize - frameStep zeros. */
export function makeFramer(rows, inner, frameSize, frameStep, prefill) {
  const nFrames = Math.trunc(inner / frameStep);
  const buffers = Array.from({ length: rows }, () => { const f = new Fifo(); if (prefill) f.writeZeros(frameSize - frameStep); return f; });
  return (input) => {
    const out = new Int16Array(rows * nFrames * frameSize);
    let valid = true;
    for (let i = 0; i < rows; i++) {
      for (let frame = 0; frame < nFrames; frame++) {
        const at = (i * nFrames + frame) * frameStep;
        buffers[i].write(input.subarray(at, at + frameStep));
        if (buffers[i].available() >= frameSize) {
          out.set(buffers[i].get(frameSize), (i * nFrames + frame) * frameSize);
          buffers[i].discard(frameStep);
        } else {
          valid = false;
        }
      }
    }
    return [out, Uint8Array.of(valid ? 1 : 0)];
  };
}

/** overlap_add.cc (int16 saturating, or float32): per row a frameSize buffer, zeros first. */
export function makeOverlapAdd(rows, nFrames, frameSize, frameStep, isFloat) {
  const Ctor = isFloat ? Float32Array : Int16Array;
  const buffers = Array.from({ length: rows }, () => new Ctor(frameSize));
  return (input) => {
    const out = new Ctor(rows * nFrames * frameStep);
    for (let i = 0; i < rows; i++) {
      const buffer = buffers[i];
      for (let frame = 0; frame < nFrames; frame++) {
        const inAt = (i * nFrames + frame) * frameSize, outAt = (i * nFrames + frame) * frameStep;
        for (let k = 0; k < frameSize; k++) {
          if (isFloat) {
            buffer[k] = Math.fround(buffer[k] + input[inAt + k]);
          } else {
            const v = input[inAt + k] + buffer[k];
            buffer[k] = v < -32768 ? -32768 : v > 32767 ? 32767 : v;
          }
        }
        out.set(buffer.subarray(0, frameStep), outAt);
        buffer.copyWithin(0, frameStep, frameSize);
        buffer.fill(0, frameSize - frameStep);
      }
    }
    return out;
  };
}

/**
 * stacker.cc: frames of numChannels into a FIFO of numChannels * (left + right + 1);
 * the first frame repeated `left` times (CircularBufferExtend); a full FIFO is
 * the output (valid) and loses step frames. The kernel leaves the output
 * unwritten while it is not full: zeros here.
 */
export function makeStacker(numChannels, left, right, step) {
  const size = numChannels * (left + right + 1);
  const fifo = new Fifo();
  let hasFirst = false;
  return (input) => {
    fifo.write(input.subarray(0, numChannels));
    if (!hasFirst) {
      const frame = fifo.get(numChannels);
      for (let i = 0; i < left; i++) fifo.write(frame);
      hasFirst = true;
    }
    const out = new Int16Array(size);
    let valid = false;
    if (fifo.available() >= size) {
      out.set(fifo.get(size));
      fifo.discard(numChannels * step);
      valid = true;
    }
    return [out, Uint8Array.of(valid ? 1 : 0)];
  };
}
