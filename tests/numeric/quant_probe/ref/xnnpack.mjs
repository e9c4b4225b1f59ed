// XNNPACK arithmetic (google/XNNPACK: src/microparams-init.c, src/qs8-*/ microkernels,
// src/operators/*.c).
import { f32, rne, clamp, f32Bits, bitsF32, asr } from './common.mjs';

// fp32 requantization (qs8/qu8 gemm, igemm, dwconv, vmul, ...): the int32 accumulator is
// converted to float32, multiplied by the float32 scale (one float32 rounding), rounded to
// nearest-even (magic-number or lrintf), offset by the output zero point and clamped.
export function requantizeFp32(acc, scale, zp, qmin, qmax) {
  const v = f32(f32(acc) * f32(scale));
  return clamp(rne(v) + zp, qmin, qmax);
}

// ---- qs8/qu8 ADD (xnn_init_qs8_add_minmax_scalar_params, qs8-vadd kernels) -------------
// a_output_scale = f32(sa / so), b_output_scale = f32(sb / so);
// shift = 20 - exponent(max(|a|,|b|)); multiplier = lrintf(scale * 2^shift) (exponent add);
// bias = 2^(shift-1) - ma * za - mb * zb; out = ((bias + a*ma + b*mb) >> shift) + zo, clamped.
export function addParams(sa, sb, so) {
  const as = f32(f32(sa) / f32(so));
  const bs = f32(f32(sb) / f32(so));
  const mx = Math.max(Math.abs(as), Math.abs(bs));
  const exp = ((f32Bits(mx) >>> 23) & 0xff) - 127;
  const shift = 20 - exp;
  const ma = rne(Math.abs(as) * 2 ** shift) * Math.sign(as || 1);
  const mb = rne(Math.abs(bs) * 2 ** shift) * Math.sign(bs || 1);
  return { ma, mb, shift };
}
// One element. `sub`: XNNPACK subtract is add with the negated b scale (xnn_binary_subtract
// in the binary-elementwise operator negates b_output_scale).
export function addElement(a, b, p, za, zb, zo, qmin, qmax) {
  const bias = 2 ** (p.shift - 1) - p.ma * za - p.mb * zb;
  const acc = (bias + a * p.ma + b * p.mb) | 0; // int32 wrap as in C
  return clamp(asr(acc, p.shift) + zo, qmin, qmax);
}

// ---- qs8/qu8 MUL (xnn_init_qs8_mul_minmax_scalar_params, qs8-vmul fp32 kernels) --------
// scale = f32(f32(sa * sb) / so); acc = (a - za) * (b - zb); requantizeFp32.
export function mulScale(sa, sb, so) { return f32(f32(f32(sa) * f32(sb)) / f32(so)); }
export function mulElement(a, b, scale, za, zb, zo, qmin, qmax) {
  return requantizeFp32((a - za) * (b - zb), scale, zo, qmin, qmax);
}
