// Hybrid (dynamic-range) FULLY_CONNECTED / CONV_2D: float input and output, int8 weights.
import { f32, rne, clamp, roundAway } from './common.mjs';

// ---- XNNPACK qd8 / qdu8 (dynamically quantized input, qc8w weights) ----------------------
// Per row (batch element of FC; per image of CONV): min/max of the row (float),
// rmin = min(0, min), rmax = max(0, max); qs = rmin == rmax ? 1 : f32(255 / f32(rmax - rmin));
// zero point: dmin = f32(rmin*qs), dmax = f32(rmax*qs); zp = (f32(-128 + dmin) + f32(127 + dmax) > 0)
// ? f32(-128 - dmin) : f32(127 - dmax), clamped to [-128, 127], then lrintf (RNE);
// q = clamp(rne(f32(x * qs)) + zp, -128, 127); dequantization scale ds = f32(1 / qs).
export function xnnQd8Params(row) {
  let mn = Infinity; let mx = -Infinity;
  for (const v of row) { if (v < mn) mn = v; if (v > mx) mx = v; }
  const rmin = Math.min(0, mn); const rmax = Math.max(0, mx);
  const qs = rmin === rmax ? 1 : f32(255 / f32(rmax - rmin));
  const dmin = f32(rmin * qs); const dmax = f32(rmax * qs);
  let zp = f32(f32(-128 + dmin) + f32(127 + dmax)) > 0 ? f32(-128 - dmin) : f32(127 - dmax);
  zp = rne(clamp(zp, -128, 127));
  return { qs, zp, ds: f32(1 / qs) };
}
export const xnnQuantizeRow = (row, p) => row.map((v) => clamp(rne(f32(v * p.qs)) + p.zp, -128, 127));
// out = f32(f32(f32(f32(acc) * ds) * ws[c]) + bias[c]), acc = sum (q - zp) * w (int32).
export const xnnQd8Output = (acc, ds, ws, bias) => f32(f32(f32(f32(acc) * ds) * f32(ws)) + f32(bias));

// ---- TFLite builtin hybrid (tensor_utils): symmetric per-row input quantization -----------
// SymmetricQuantizeFloats: range = max(|min|, |max|); scaling_factor = f32(range / 127);
// q = clamp(round_away(f32(x * f32(127 / range))), -127, 127); (range 0: q = 0, factor 1?)
// out = bias + f32(acc * f32(scaling_factor * ws[c])) (float).
export function tfliteSymParams(row) {
  let mn = Infinity; let mx = -Infinity;
  for (const v of row) { if (v < mn) mn = v; if (v > mx) mx = v; }
  const range = Math.max(Math.abs(mn), Math.abs(mx));
  if (range === 0) return { sf: 1, inv: 0 };
  return { sf: f32(range / 127), inv: f32(127 / range) };
}
export const tfliteSymQuantizeRow = (row, p) => row.map((v) => clamp(roundAway(f32(v * p.inv)), -127, 127));
// PortableAsymmetricQuantizeFloats (tensor_utils): rmin = min(0, min), rmax = max(0, max) (as
// doubles); scale = (rmax - rmin) / 255 (double); zp = the double zero point with the smaller
// error (|qmin| + |rmin/scale| vs |qmax| + |rmax/scale|), clamped, std::round (half away);
// scaling_factor = f32(scale); inv = f32(1 / scaling_factor);
// q = clamp(round_away(f32(zp + f32(x * inv))), -128, 127).
export function tfliteAsymParams(row) {
  let mn = Infinity; let mx = -Infinity;
  for (const v of row) { if (v < mn) mn = v; if (v > mx) mx = v; }
  const rmin = Math.min(0, mn); const rmax = Math.max(0, mx);
  if (rmin === rmax) return { sf: 1, zp: 0, inv: 0 };
  const qmin = -128; const qmax = 127;
  const scale = (rmax - rmin) / (qmax - qmin); // double
  const zpFromMin = qmin - rmin / scale;
  const zpFromMax = qmax - rmax / scale;
  const errMin = Math.abs(qmin) + Math.abs(rmin / scale);
  const errMax = Math.abs(qmax) + Math.abs(rmax / scale);
  const zpd = errMin < errMax ? zpFromMin : zpFromMax;
  let zp;
  if (zpd <= qmin) zp = qmin; else if (zpd >= qmax) zp = qmax; else zp = roundAway(zpd);
  return { sf: f32(scale), zp, inv: f32(1 / f32(scale)) };
}
export const tfliteAsymQuantizeRow = (row, p) => row.map((v) => clamp(roundAway(f32(p.zp + f32(v * p.inv))), -128, 127));
