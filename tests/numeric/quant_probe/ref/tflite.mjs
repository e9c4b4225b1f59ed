// TFLite builtin-kernel arithmetic (tflite/kernels/internal/common.h, common.cc,
// quantization_util.cc, reference/integer_ops/*.h, kernels/*.cc of LiteRT).
import { frexp, roundAway, clamp, f32, asr } from './common.mjs';

// ---- fixed-point primitives ------------------------------------------------------------

// QuantizeMultiplier(double): q = frexp(m); q_fixed = round_half_away(q * 2^31); if q_fixed == 2^31
// then q_fixed /= 2, shift++; shift < -31 flushes to (0, 0). Returns [multiplier, shift]
// (shift > 0: left shift). `singleRounding` applies the TFLITE_SINGLE_ROUNDING shift cap.
export function quantizeMultiplier(m, singleRounding = false) {
  if (m === 0) return [0, 0];
  let [q, shift] = frexp(m);
  let qf = roundAway(q * 2 ** 31);
  if (qf === 2 ** 31) { qf /= 2; shift += 1; }
  if (shift < -31) { shift = 0; qf = 0; }
  if (singleRounding && shift > 30) { shift = 30; qf = 2 ** 31 - 1; }
  return [qf, shift];
}

const B31 = 1n << 31n;
const B30 = 1n << 30n;
// gemmlowp::SaturatingRoundingDoublingHighMul(a, b) for int32 a, b:
// (a*b + (a*b >= 0 ? 2^30 : 1 - 2^30)) / 2^31, truncated toward zero; INT_MIN*INT_MIN saturates.
export function srdhm(a, b) {
  if (a === -2147483648 && b === -2147483648) return 2147483647;
  const ab = BigInt(a) * BigInt(b);
  const nudge = ab >= 0n ? B30 : 1n - B30;
  return Number((ab + nudge) / B31);
}

// gemmlowp::RoundingDivideByPOT(x, e): x / 2^e rounded to nearest, ties away from zero.
export function rdbpot(x, e) {
  if (e === 0) return x;
  const p = 2 ** e;
  const q = Math.floor(x / p);
  const rem = x - q * p; // x & mask
  const mask = p - 1;
  const threshold = Math.floor(mask / 2) + (x < 0 ? 1 : 0);
  return q + (rem > threshold ? 1 : 0);
}

// Wrap to int32 (C int32 arithmetic with wrap-around, e.g. x * (1 << left_shift)).
export const wrap32 = (x) => Number(BigInt.asIntN(32, BigInt(x)));

// MultiplyByQuantizedMultiplier(int32 x, multiplier, shift), double rounding (default build):
// RoundingDivideByPOT(SRDHM(x * 2^max(shift,0), multiplier), max(-shift,0)).
export function mbqm(x, multiplier, shift) {
  const left = shift > 0 ? shift & 31 : 0; // int32 `1 << shift`: x86 and wasm shift by the count mod 32
  const right = shift > 0 ? 0 : -shift;
  return rdbpot(srdhm(wrap32(x * 2 ** left), multiplier), right);
}

// TFLITE_SINGLE_ROUNDING variant: (x * multiplier + 2^(30-shift)) >> (31 - shift).
export function mbqmSingle(x, multiplier, shift) {
  const total = 31n - BigInt(shift);
  const r = BigInt(x) * BigInt(multiplier) + (1n << (total - 1n));
  return Number(r >> total);
}

// MultiplyByQuantizedMultiplier(int64 x, multiplier, shift) (16x8 kernels): the multiplier is
// reduced to 16 bits: m16 = m < 0x7FFF0000 ? (m + 2^15) >> 16 : 0x7FFF; then
// (x * m16 + 2^(14 - shift)) >> (15 - shift) — single rounding, ties toward +inf.
export function mbqm64(x, multiplier, shift) {
  const m16 = multiplier < 0x7fff0000 ? Math.floor((multiplier + 32768) / 65536) : 0x7fff;
  const total = 15n - BigInt(shift);
  const r = BigInt(x) * BigInt(m16) + (1n << (total - 1n));
  return Number(BigInt.asIntN(32, r >> total));
}

// ---- ADD / SUB (reference/integer_ops/add.h, kernels/add.cc, sub.cc) ---------------------

// Parameters as add.cc Prepare computes them (scales are float32 values; the multipliers
// are derived in double). leftShift: 20 for int8/uint8, 15 for int16 (general scales).
export function addParams(s1, s2, so, leftShift) {
  const twice = 2 * Math.max(f32(s1), f32(s2));
  const [m1, sh1] = quantizeMultiplier(f32(s1) / twice);
  const [m2, sh2] = quantizeMultiplier(f32(s2) / twice);
  const [mo, sho] = quantizeMultiplier(twice / (2 ** leftShift * f32(so)));
  return { m1, sh1, m2, sh2, mo, sho, leftShift };
}

// One element of the builtin quantized ADD (sub: negate = true gives SUB as add.cc/sub.cc do:
// raw = scaled1 - scaled2).
export function addElement(x1, x2, p, zp1, zp2, zpo, qmin, qmax, sub = false) {
  const a = (x1 - zp1) * 2 ** p.leftShift;
  const b = (x2 - zp2) * 2 ** p.leftShift;
  const sa = mbqm(a, p.m1, p.sh1);
  const sb = mbqm(b, p.m2, p.sh2);
  const raw = sub ? sa - sb : sa + sb;
  return clamp(mbqm(raw, p.mo, p.sho) + zpo, qmin, qmax);
}

// ---- MUL (reference/integer_ops/mul.h, kernels/mul.cc) ------------------------------------
// real_multiplier = double(f32(f32(s1 * s2) / so)) (the product and quotient are float32
// operations: TfLiteQuantizationParams.scale is float); QuantizeMultiplier.
export function mulParams(s1, s2, so) {
  const real = f32(f32(f32(s1) * f32(s2)) / f32(so));
  const [m, sh] = quantizeMultiplier(real);
  return { m, sh };
}
export function mulElement(x1, x2, p, zp1, zp2, zpo, qmin, qmax) {
  return clamp(mbqm((x1 - zp1) * (x2 - zp2), p.m, p.sh) + zpo, qmin, qmax);
}
// int16 MUL (16x16, zero points 0) uses the same formula in the reference kernel.

// int16 ADD/SUB, pot_scale_int16=true and all three scales powers of two (LSTM path,
// optimized_ops::AddElementwiseInt16 / reference_ops::Sub16): the input whose shift
// (log2(s_in) - log2(s_out)) is nonzero is divided by 2^-shift with RoundingDivideByPOT,
// then a saturating int16 add/sub; clamp to the activation range.
export function addPot16Element(x1, x2, s1, s2, so, sub = false) {
  const l = (s) => Math.round(Math.log2(f32(s)));
  const sh1 = l(s1) - l(so);
  const sh2 = l(s2) - l(so);
  const a = sh1 === 0 ? x1 : rdbpot(x1, -sh1);
  const b = sh2 === 0 ? x2 : rdbpot(x2, -sh2);
  return clamp(sub ? a - b : a + b, -32768, 32767);
}

// ---- linear ops (conv.cc / depthwise_conv.cc / fully_connected.cc / transpose_conv.cc) ----
// Per-channel effective scale (PopulateConvolutionQuantizationParams):
//   double(s_in) * double(s_w[c]) / double(s_out), then QuantizeMultiplier.
// Per-tensor uint8 (GetQuantizedConvolutionMultipler): double(s_in) * double(s_w) / double(s_out)
// (older TFLite: double(float(s_in * s_w)) / s_out — see f32Product).
export function linearMultiplier(sIn, sW, sOut, f32Product = false) {
  const prod = f32Product ? f32(f32(sIn) * f32(sW)) : f32(sIn) * f32(sW);
  return quantizeMultiplier(prod / f32(sOut));
}
// out = clamp(MBQM(acc, m, shift) + zp) (int32 accumulator, 8-bit kernels).
export function requantize(acc, m, shift, zp, qmin, qmax, single = false) {
  return clamp((single ? mbqmSingle : mbqm)(acc, m, shift) + zp, qmin, qmax);
}
// 16x8 kernels: int64 accumulator, the 16-bit reduced multiplier (mbqm64).
export function requantize16x8(acc, m, shift, zp, qmin, qmax) {
  return clamp(mbqm64(acc, m, shift) + zp, qmin, qmax);
}

// LiteRT's newer int16 FULLY_CONNECTED (reference_integer_ops::FullyConnected[PerChannel] with
// float scales): acc_scaled = (int32) round(double(acc) * (double(s_in) * double(s_w[c]) /
// double(s_out))) — one double multiply, std::round (ties away from zero).
export function requantizeDouble(acc, sIn, sW, sOut, zp, qmin, qmax) {
  const eff = f32(sIn) * f32(sW) / f32(sOut);
  return clamp(roundAway(acc * eff) + zp, qmin, qmax);
}
