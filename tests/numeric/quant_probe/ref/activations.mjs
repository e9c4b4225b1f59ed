// Quantized activations and unary ops: TFLite builtin kernels (activations.cc, elementwise.cc,
// quantize.cc, dequantize.cc, squared_difference.cc, reference/*.h) and XNNPACK (the LUT built
// from its float reference ops, qs8-vlrelu, qs8-vcvt, f32-qs8-vcvt).
import fs from 'node:fs';
import { f32, clamp, rne, roundAway } from './common.mjs';
import { quantizeMultiplier, mbqm, srdhm, rdbpot } from './tflite.mjs';

const expf = (x) => f32(Math.exp(x)); // C expf, to float rounding (musl's expf is within 1 ulp)
const tanhf = (x) => f32(Math.tanh(x));
const expm1f = (x) => f32(Math.expm1(x));

// ---- TFLite LUTPopulate<int8_t/uint8_t> (common.h) -------------------------------------
// table[q] = clamp((int)(round_away(f32(fn(f32(sx * (q - zx))) * f32(1 / so))) + zo)); all float32.
export function tfliteLut8(sx, zx, so, zo, fn, qmin, qmax) {
  const inv = f32(1 / f32(so));
  const lut = new Map();
  for (let q = qmin; q <= qmax; q++) {
    const dq = f32(f32(sx) * (q - zx));
    const t = f32(fn(dq));
    const r = roundAway(f32(t * inv));
    lut.set(q, clamp(r + zo, qmin, qmax));
  }
  return lut;
}
export const tfliteLogisticFn = (x) => f32(1 / f32(1 + expf(-x)));
export const tfliteTanhFn = (x) => tanhf(x);
export const tfliteEluFn = (x) => (x < 0 ? expm1f(x) : x);

// ---- XNNPACK (LiteRT's 2026 build): quantized unary ops without a dedicated kernel run a
// 256-entry LUT made by the float reference op (src/reference/unary-elementwise.cc):
// x = f32((f32(q) - f32(zx)) * sx); y = op(x); out = clamp(nearbyint(f32(f32(y * f32(1/so)) + zo))).
export function xnnLut8(sx, zx, so, zo, op, qmin, qmax) {
  const inv = f32(1 / f32(so));
  const lut = new Map();
  for (let q = qmin; q <= qmax; q++) {
    const x = f32(f32(q - zx) * f32(sx));
    const y = f32(op(x));
    lut.set(q, clamp(rne(f32(f32(y * inv) + zo)), qmin, qmax));
  }
  return lut;
}
// XNNPACK reference SigmoidOp: |x| > 100 saturates; else e = exp(double x), f32(e / (1 + e)).
export const xnnSigmoidOp = (x) => (x > 100 ? 1 : x < -100 ? 0 : f32(Math.exp(x) / (1 + Math.exp(x))));
export const xnnTanhOp = (x) => tanhf(x);
export const xnnEluOp = (x) => (x < 0 ? f32(1 * expm1f(x)) : x);

// ---- older XNNPACK (the tfjs-tflite build, lut-elementwise-nc.c before 2024):
// x = f32((q - zx) * sx); y = fn(x); out = clamp(lrintf(f32(y * f32(1/so))) + zo).
export function xnnOldLut8(sx, zx, so, zo, fn, qmin, qmax) {
  const inv = f32(1 / f32(so));
  const lut = new Map();
  for (let q = qmin; q <= qmax; q++) {
    const x = f32((q - zx) * f32(sx));
    lut.set(q, clamp(rne(f32(f32(fn(x)) * inv)) + zo, qmin, qmax));
  }
  return lut;
}
export const xnnOldSigmoidFn = (x) => (x < 0 || Object.is(x, -0) ? f32(1 / f32(1 + expf(-x))) : f32(1 - f32(1 / f32(1 + expf(x)))));

// ---- int16 LOGISTIC / TANH (reference_integer_ops::Logistic / Tanh, activations.cc Prepare) ----
const SIG = JSON.parse(fs.readFileSync(new URL('./data/sigmoid_table_uint16.json', import.meta.url), 'utf8')).values;
function int16Params(sx, kInputIntegerBits, allowShift1) {
  const l2 = Math.log2(f32(sx));
  const pot = Number.isInteger(l2);
  let leftShift = (15 - kInputIntegerBits) + (pot ? l2 : Math.round(l2));
  let multiplier = 0;
  if (!(pot && (leftShift === 0 || (allowShift1 && leftShift === 1)))) {
    let m = f32(sx) * 4096.0 * 3.0;
    leftShift = 0;
    while (m <= 32767.0 / 2.0 && leftShift <= 30) { leftShift++; m *= 2; }
    multiplier = Math.trunc(m);
  }
  if (multiplier === 0) { multiplier = 3 * 2 ** leftShift; leftShift = 0; }
  return { multiplier, leftShift };
}
export function tfliteLogistic16(x, sx) {
  const { multiplier, leftShift } = int16Params(sx, 3, false);
  const round = leftShift > 0 ? 2 ** (leftShift - 1) : 0;
  const inp = Math.floor((x * multiplier + round) / 2 ** leftShift);
  const a = Math.abs(inp);
  const uh = Math.floor(a / 512);
  let result;
  if (uh >= 255) result = 0x7fff * 1024;
  else {
    const ua = SIG[uh]; const ub = SIG[uh + 1]; const ut = a & 0x1ff;
    result = ua * 512 + ut * (ub - ua);
  }
  result = inp >= 0 ? result + 512 : 2 ** 25 - result + 512 - 1;
  return Math.floor(result / 1024) << 16 >> 16;
}
export function tfliteTanh16(x, sx) {
  const { multiplier, leftShift } = int16Params(sx, 3, true);
  const round = leftShift > 0 ? 2 ** (leftShift - 1) : 0;
  const inp = Math.floor((x * multiplier + round) / 2 ** leftShift);
  const a = Math.abs(inp);
  const uh = Math.floor(a / 256);
  let result;
  if (uh >= 255) result = 0xffff * 256;
  else {
    const ua = SIG[uh]; const ub = SIG[uh + 1]; const ut = a & 0xff;
    result = ua * 256 + ut * (ub - ua);
  }
  result = inp >= 0 ? result - 2 ** 23 + 128 : -result + 2 ** 23 + 128 - 1;
  return Math.floor(result / 256) << 16 >> 16;
}

// ---- HARD_SWISH (reference_ops::HardSwish, HardSwishPrepare) -----------------------------
const srdhm16 = (a, b) => {
  if (a === -32768 && b === -32768) return 32767;
  const ab = a * b;
  const nudge = ab >= 0 ? 1 << 14 : 1 - (1 << 14);
  return Math.trunc((ab + nudge) / 32768);
};
const sat16 = (v) => clamp(v, -32768, 32767);
const toI16 = (v) => (v << 16) >> 16;
function downScale16(m32) {
  if (m32 >= 2147483647 - 32768) return 32767;
  return (m32 + 32768) >> 16;
}
export function hardSwishParams(sx, so) {
  const hires = f32(f32(1 / 128) * f32(sx));
  const outMult = f32(hires / f32(so));
  const [om, oe] = quantizeMultiplier(outMult);
  const reluish = f32(hires / f32(3 / 32768));
  const [rm, re] = quantizeMultiplier(reluish);
  return { om16: downScale16(om), oe, rm16: downScale16(rm), re };
}
export function tfliteHardSwish(q, p, zx, zo, qmin, qmax) {
  const inV = toI16(q - zx);
  const hi = toI16(inV * 128);
  const pre = srdhm16(hi, p.om16);
  let r = hi;
  if (p.re > 0) r = sat16(r * 2 ** (p.re - 1));
  r = srdhm16(r, p.rm16);
  if (p.re > 0) r = sat16(r * 2);
  if (p.re < 0) r = rdbpot(r, -p.re);
  r = (r + 32768) >> 1;
  // SaturatingDoublingHighMul (truncating, not rounding)
  const ab = r * pre;
  const preOut = (r === -32768 && pre === -32768) ? 32767 : Math.trunc(ab / 32768);
  let out = rdbpot(preOut, -p.oe);
  out += zo;
  return clamp(out, qmin, qmax);
}

// ---- LEAKY_RELU ----------------------------------------------------------------------------
// TFLite: alpha multiplier = QuantizeMultiplier(double(f32(f32(sx * alpha) / so))), identity =
// QuantizeMultiplier(double(f32(sx / so))); x >= zx: MBQM(x - zx, identity), else
// MBQM(x - zx, |alpha|) (negated for negative alpha); + zo, clamp.
export function tfliteLeakyRelu(q, sx, zx, so, zo, alpha, qmin, qmax) {
  const [am, as] = quantizeMultiplier(f32(f32(f32(sx) * f32(alpha)) / f32(so)));
  const [im, is] = quantizeMultiplier(f32(f32(sx) / f32(so)));
  const v = q - zx;
  let out;
  if (v >= 0) out = mbqm(v, im, is);
  else { const s = mbqm(v, Math.abs(am), as); out = am < 0 ? -s : s; }
  return clamp(out + zo, qmin, qmax);
}
// LiteRT's int16 LEAKY_RELU (optimized_integer_ops::QuantizeLeakyRelu, scalar
// loop in wasm): MBQM with the signed alpha multiplier itself (the reference
// kernel above takes |alpha|'s and negates the result: they differ at ties).
export function tfliteLeakyRelu16(q, sx, so, alpha) {
  const [am, as] = quantizeMultiplier(f32(f32(f32(sx) * f32(alpha)) / f32(so)));
  const [im, is] = quantizeMultiplier(f32(f32(sx) / f32(so)));
  return clamp(q >= 0 ? mbqm(q, im, is) : mbqm(q, am, as), -32768, 32767);
}
// XNNPACK qs8/qu8 lrelu: positive multiplier = lrintf(256 * f32(sx/so)), negative =
// lrintf(256 * f32(f32(sx/so) * alpha)); out = clamp(floor(((q - zx) * m + 128) / 256) + zo).
export function xnnLeakyRelu(q, sx, zx, so, zo, alpha, qmin, qmax) {
  const ps = f32(f32(sx) / f32(so));
  const ns = f32(ps * f32(alpha));
  const pm = rne(f32(256 * ps));
  const nm = rne(f32(256 * ns));
  const v = q - zx;
  return clamp(Math.floor((v * (v >= 0 ? pm : nm) + 128) / 256) + zo, qmin, qmax);
}

// ---- PRELU (reference_ops::BroadcastPrelu4DSlow / Prelu) ---------------------------------
// m1 = QM(double(f32(sx / so))), m2 = QM(double(f32(f32(sx * sa) / so)));
// v = x - zx; v >= 0: MBQM(v, m1); else MBQM(v * (a - za), m2); + zo, clamp.
export function tflitePrelu(q, a, sx, zx, sa, za, so, zo, qmin, qmax) {
  const [m1, s1] = quantizeMultiplier(f32(f32(sx) / f32(so)));
  const [m2, s2] = quantizeMultiplier(f32(f32(f32(sx) * f32(sa)) / f32(so)));
  const v = q - zx;
  const out = v >= 0 ? mbqm(v, m1, s1) : mbqm(v * (a - za), m2, s2);
  return clamp(out + zo, qmin, qmax);
}

// ---- RELU / RELU6 / RELU_N1_TO_1 with requantization (QuantizedReluX) --------------------
// M = QuantizeMultiplier(double(f32(sx / so))); bounds: max(qmin, zo + roundf(lo / so)),
// min(qmax, zo + roundf(hi / so)) (float division, round half away);
// out = clamp(zo + MBQM(x - zx, M)).
export function tfliteReluX(q, sx, zx, so, zo, lo, hi, qmin, qmax) {
  const [m, s] = quantizeMultiplier(f32(f32(sx) / f32(so)));
  const amin = Math.max(qmin, zo + roundAway(f32(lo / f32(so))));
  const amax = hi === Infinity ? qmax : Math.min(qmax, zo + roundAway(f32(hi / f32(so))));
  return clamp(zo + mbqm(q - zx, m, s), amin, amax);
}

// ---- QUANTIZE / DEQUANTIZE ---------------------------------------------------------------
// TFLite float -> int8 (optimized_ops::AffineQuantize<int8_t>): round_away(double(x) / double(s)) + zp.
export const tfliteQuantizeI8 = (x, s, zp, qmin, qmax) => clamp(roundAway(x / f32(s)) + zp, qmin, qmax);
// TFLite float -> uint8 / int16 (reference_ops::AffineQuantize): round_away(f32(x / f32(s))) + zp.
export const tfliteQuantizeRef = (x, s, zp, qmin, qmax) => clamp(roundAway(f32(x / f32(s))) + zp, qmin, qmax);
// XNNPACK f32 -> qs8/qu8 (f32-qs8-vcvt): nearbyint(f32(x * f32(1/s))) + zp, clamp.
export const xnnQuantize = (x, s, zp, qmin, qmax) => clamp(rne(f32(x * f32(1 / f32(s)))) + zp, qmin, qmax);
// TFLite requantize (reference_ops::Requantize): int8<->uint8 with equal scales and zero points
// 128 apart: x ^ 0x80; else MBQM(x - zx, QM(double(sx)/double(so))) + zo, clamp.
export function tfliteRequantize(q, sx, zx, so, zo, qmin, qmax) {
  const [m, s] = quantizeMultiplier(f32(sx) / f32(so));
  return clamp(mbqm(q - zx, m, s) + zo, qmin, qmax);
}
// XNNPACK qs8 -> qs8 / qu8 -> qu8 convert: multiplier = lrintf(256 * f32(sx/so));
// out = clamp(floor(((q - zx) * m + 128) / 256) + zo).
export function xnnRequantize(q, sx, zx, so, zo, qmin, qmax) {
  const m = rne(f32(256 * f32(f32(sx) / f32(so))));
  return clamp(Math.floor(((q - zx) * m + 128) / 256) + zo, qmin, qmax);
}
// DEQUANTIZE (both): f32((q - zp) * s) (one rounding of the exact product).
export const dequantize = (q, s, zp) => f32((q - zp) * f32(s));

// ---- SOFTMAX int8 / uint8 (optimized_ops::Softmax with the float table; wasm has no
// TFLITE_SOFTMAX_USE_UINT16_LUT): table[255 - v] = expf(f32(-sx * beta) * v); per row:
// max = max(x); e_j = table[255 - max + x_j] = expf(f32(-sx*beta) * (max - x_j));
// sum = float32 running sum of e_j in order; inv = f32(1 / f32(sum * so));
// p = f32(e_j * inv); int8: round_away(p) + zo; uint8: (int)(p + 0.5f) (truncation) + zo; clamp.
export function tfliteSoftmaxRow(row, sx, beta, so, zo, qmin, qmax, uint8) {
  const scale = f32(-f32(sx) * f32(beta));
  const mx = Math.max(...row);
  const e = row.map((v) => expf(f32(scale * (mx - v))));
  let sum = 0;
  for (const v of e) sum = f32(sum + v);
  const inv = f32(1 / f32(sum * f32(so)));
  return e.map((v) => {
    const p = f32(v * inv);
    const r = uint8 ? Math.trunc(f32(p + 0.5)) : roundAway(p);
    return clamp(r + zo, qmin, qmax);
  });
}

// ---- L2_NORMALIZATION int8 (reference_integer_ops::L2Normalization) and RSQRT int8 -------
const INT_MAX = 2147483647;
const satPow2 = (x, e) => { // gemmlowp SaturatingRoundingMultiplyByPOT<e> on int32
  if (e === 0) return x;
  if (e < 0) return rdbpot(x, -e);
  const th = 2 ** (31 - e) - 1;
  if (x > th) return INT_MAX;
  if (x < -th) return -2147483648;
  return x * 2 ** e;
};
const wrapAdd = (a, b) => (a + b) | 0;
// GetInvSqrtQuantizedMultiplierExp(input, reverse_shift): Newton-Raphson in gemmlowp fixed point.
export function invSqrtMultiplierExp(input, reverseShift = -1) {
  if (input <= 1) return [INT_MAX, 0];
  let shift = 11;
  while (input >= 2 ** 29) { input = Math.trunc(input / 4); shift++; }
  const clz = Math.clz32(input);
  const pairs = Math.floor((clz - 1) / 2) - 1;
  shift -= pairs;
  input *= 2 ** (2 * pairs);
  const inp = Math.floor(input / 2); // F3 raw (input >> 1)
  const halfInp = satPow2(inp, -1);
  const halfThree = (1 << 28) + (1 << 27);
  let x = 1 << 28; // F3 one
  for (let i = 0; i < 5; i++) {
    const x2 = srdhm(x, x); // F6
    const x3 = satPow2(srdhm(x2, x), 6); // F9 -> F3
    const a = srdhm(halfThree, x); // F6
    const b = srdhm(halfInp, x3); // F6
    x = satPow2(wrapAdd(a, -b), 3); // F6 -> F3
  }
  x = srdhm(x, 1518500250);
  if (shift < 0) { x = x * 2 ** -shift; shift = 0; }
  return [x, shift * reverseShift];
}
export function tfliteL2NormRow(row, zx) {
  const v = row.map((q) => q - zx);
  const acc = v.reduce((a, b) => a + b * b, 0);
  const [m, s] = invSqrtMultiplierExp(acc, -1);
  return v.map((d) => clamp(mbqm(d, m, s + 7), -128, 127));
}
export function tfliteRsqrtI8(q, sx, zx, so, zo) {
  const value = q - zx;
  if (value === 0) return 127;
  const [im, is] = invSqrtMultiplierExp(value, -1);
  const data = mbqm(1, im, is + 20);
  const [m, s] = quantizeMultiplier(1 / f32(f32(Math.sqrt(f32(sx))) * f32(so)));
  return clamp(mbqm(data, m, s - 20) + zo, -128, 127);
}

// ---- SQUARED_DIFFERENCE int8 (squared_difference.cc): left_shift 7; twice = 2*max(s1,s2);
// m1 = QM(s1/twice), m2 = QM(s2/twice), mo = QM(twice^2 / (2^14 * so)) (double math from float
// scales); d = MBQM((x1-z1)<<7, m1) - MBQM((x2-z2)<<7, m2); out = MBQM(d*d, mo) + zo, clamp.
export function tfliteSquaredDifference(x1, x2, s1, z1, s2, z2, so, zo, qmin, qmax) {
  const twice = 2 * Math.max(f32(s1), f32(s2));
  const [m1, sh1] = quantizeMultiplier(f32(s1) / twice);
  const [m2, sh2] = quantizeMultiplier(f32(s2) / twice);
  const [mo, sho] = quantizeMultiplier((twice * twice) / (2 ** 14 * f32(so)));
  const d = mbqm((x1 - z1) * 128, m1, sh1) - mbqm((x2 - z2) * 128, m2, sh2);
  return clamp(mbqm(d * d, mo, sho) + zo, qmin, qmax);
}
