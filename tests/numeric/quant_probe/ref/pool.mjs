// Pooling and reductions (TFLite builtin kernels and XNNPACK).
import { f32, clamp, rne, roundAway } from './common.mjs';
import { quantizeMultiplier, mbqm } from './tflite.mjs';

// TFLite AVERAGE_POOL_2D (reference_integer_ops::AveragePool, optimized_ops for uint8): the
// raw integers (zero point NOT subtracted) of the window part inside the input are summed;
// average = (sum + count/2) / count for sum > 0, (sum - count/2) / count otherwise, with C
// integer division (truncation): round half away from zero of sum / count. Then clamped to
// the fused activation range. Input and output share scale and zero point.
export function tfliteAvg(sum, count) {
  const h = Math.floor(count / 2);
  return sum > 0 ? Math.trunc((sum + h) / count) : Math.trunc((sum - h) / count);
}

// Window sums of a 2-D pool (NHWC), TFLite padding (SAME: pad_before = floor(total/2)).
export function poolWindows(x, [n, h, w, c], [fh, fw], [sh, sw], padding, reduce) {
  const oh = padding === 'SAME' ? Math.ceil(h / sh) : Math.floor((h - fh) / sh) + 1;
  const ow = padding === 'SAME' ? Math.ceil(w / sw) : Math.floor((w - fw) / sw) + 1;
  const pt = Math.max(0, Math.floor(((oh - 1) * sh + fh - h) / 2));
  const pl = Math.max(0, Math.floor(((ow - 1) * sw + fw - w) / 2));
  const out = [];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let ch = 0; ch < c; ch++) {
    const vals = [];
    for (let ky = 0; ky < fh; ky++) for (let kx = 0; kx < fw; kx++) {
      const iy = y * sh + ky - pt; const ix = xx * sw + kx - pl;
      if (iy >= 0 && iy < h && ix >= 0 && ix < w) vals.push(x[((b * h + iy) * w + ix) * c + ch]);
    }
    out.push(reduce(vals));
  }
  return { out, shape: [n, oh, ow, c] };
}

// Groups of a reduction over `axes` of a row-major tensor: returns arrays of the reduced values
// in output order.
export function reduceGroups(x, shape, axes) {
  const ax = axes.map((a) => (a < 0 ? a + shape.length : a));
  const outDims = shape.map((d, i) => (ax.includes(i) ? 1 : d));
  const nOut = outDims.reduce((a, b) => a * b, 1);
  const groups = Array.from({ length: nOut }, () => []);
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const ostr = outDims.map((_, i) => outDims.slice(i + 1).reduce((a, b) => a * b, 1));
  for (let i = 0; i < x.length; i++) {
    let o = 0;
    for (let d = 0; d < shape.length; d++) {
      const c = Math.floor(i / strides[d]) % shape[d];
      if (!ax.includes(d)) o += c * ostr[d];
    }
    groups[o].push(x[i]);
  }
  return groups;
}

const sum = (v) => v.reduce((a, b) => a + b, 0);

// TFLite reference_ops::QuantizedMeanOrSum (integer; EvalQuantizedMean for int8/uint8/int16
// MEAN outside the 4-D special case): M, s = QuantizeMultiplier(double(sx) / double(so));
// for the mean: k = min(floor(log2 N), 32, 31 + s); M' = trunc((M << k) / N); s' = s - k;
// out = clamp(MBQM(sum(x) - zx * N, M', s') + zo).
export function tfliteMeanRef(vals, sx, zx, so, zo, qmin, qmax, computeSum = false) {
  let [m, s] = quantizeMultiplier(f32(sx) / f32(so));
  const n = vals.length;
  if (!computeSum) {
    let k = Math.floor(Math.log2(n));
    k = Math.min(k, 32, 31 + s);
    m = Number((BigInt(m) << BigInt(k)) / BigInt(n));
    s -= k;
  }
  return clamp(mbqm(sum(vals) - zx * n, m, s) + zo, qmin, qmax);
}

// TFLite optimized_integer_ops::Mean (int8, 4-D input, axes {1,2}, keep_dims): float math:
// bias = zo - (int)(t > 0 ? t + 0.5f : t - 0.5f), t = f32(f32(zx * sx) / so);
// M, s = QuantizeMultiplier(double(f32(sx / f32(N * so)))); out = clamp(MBQM(sum(x), M, s) + bias).
export function tfliteMean4D(vals, sx, zx, so, zo, qmin, qmax) {
  const n = vals.length;
  let t = f32(f32(zx * f32(sx)) / f32(so));
  t = t > 0 ? f32(t + 0.5) : f32(t - 0.5);
  const bias = zo - Math.trunc(t);
  const real = f32(f32(sx) / f32(n * f32(so)));
  const [m, s] = quantizeMultiplier(real);
  return clamp(mbqm(sum(vals), m, s) + bias, qmin, qmax);
}

// TFLite optimized_ops::QuantizedMeanOrSum (float; SUM in the optimized kernel):
// scale = f32(sx / so);
// sum:  bias = f32(f32(-zx * scale) * N); out = (int)round_away(f32(f32(sum * scale) + bias)) + zo
// mean: bias = f32(-zx * scale); mean = f32(sum / N); out = round_away(f32(f32(mean * scale) + bias)) + zo
export function tfliteMeanOrSumFloat(vals, sx, zx, so, zo, qmin, qmax, computeSum) {
  const n = vals.length;
  const scale = f32(f32(sx) / f32(so));
  const s = sum(vals);
  if (computeSum) {
    const bias = f32(f32(-zx * scale) * n);
    return clamp(roundAway(f32(f32(f32(s) * scale) + bias)) + zo, qmin, qmax);
  }
  const bias = f32(-zx * scale);
  const mean = f32(f32(s) / f32(n));
  return clamp(roundAway(f32(f32(mean * scale) + bias)) + zo, qmin, qmax);
}

// XNNPACK qs8/qu8 MEAN / SUM (reduce-nd.c + int32 -> q8 reference convert):
// inv = f32(f32(sx / so) * f32(1 / N)) (mean) or f32(sx / so) (sum);
// yzp = f32(zo - f32(f32(N * zx) * inv)); out = clamp(nearbyint(f32(f32(f32(sum) * inv) + yzp))).
export function xnnMeanOrSum(vals, sx, zx, so, zo, qmin, qmax, computeSum) {
  const n = vals.length;
  const base = f32(f32(sx) / f32(so));
  const inv = computeSum ? base : f32(base * f32(1 / n));
  const yzp = f32(zo - f32(f32(n * zx) * inv));
  return clamp(rne(f32(f32(f32(sum(vals)) * inv) + yzp)), qmin, qmax);
}

// ---- older TFLite (the tfjs-tflite build, TF ~2.1x; MEAN is registered as the REFERENCE kernel
// without NEON) ----
// MEAN with input and output sharing scale and zero point: reference_ops::Mean on the raw
// integers: trunc(sum / N) (C integer division).
export function tfliteOldMeanSame(vals) {
  return Math.trunc(sum(vals) / vals.length);
}
// MEAN 4-D axes {1,2} keep_dims, int8/int16: reference_integer_ops::Mean:
// acc = sum(x - zx); acc = MBQM(acc, M, s) with M, s = QuantizeMultiplier(double(sx)/double(so));
// acc = round_half_away(acc / N) (integer: (acc +- N/2) / N); out = clamp(acc + zo).
export function tfliteOldIntMean4D(vals, sx, zx, so, zo, qmin, qmax) {
  const n = vals.length;
  const [m, s] = quantizeMultiplier(f32(sx) / f32(so));
  let acc = mbqm(sum(vals) - zx * n, m, s);
  const h = Math.floor(n / 2);
  acc = acc > 0 ? Math.trunc((acc + h) / n) : Math.trunc((acc - h) / n);
  return clamp(acc + zo, qmin, qmax);
}
// SUM with input and output sharing scale and zero point (EvalGeneric<kSum> on the storage type):
// the raw integers summed in the 8/16-bit type, wrapping.
export function tfliteOldSumWrap(vals, bits, signed) {
  const m = 2 ** bits;
  let s = sum(vals) % m;
  if (s < 0) s += m;
  if (signed && s >= m / 2) s -= m;
  return s;
}
// Old XNNPACK global average pooling (qs8/qu8 gavgpool, the tfjs build's MEAN over H,W):
// acc = sum(x) - N*zx; scale = f32(f32(sx / so) / N); fp32 requantization (RNE) + zo.
export function xnnOldGavgpool(vals, sx, zx, so, zo, qmin, qmax) {
  const n = vals.length;
  const scale = f32(f32(f32(sx) / f32(so)) / n);
  return clamp(rne(f32(f32(sum(vals) - n * zx) * scale)) + zo, qmin, qmax);
}

// Older TFLite optimized_ops::QuantizedMeanOrSum for SUM (tfjs build): the float formula of
// tfliteMeanOrSumFloat without the clamp: the int32 value is cast to the 8-bit type (wraps).
export function tfliteOldSumFloatWrap(vals, sx, zx, so, zo, bits, signed) {
  const v = tfliteMeanOrSumFloat(vals, sx, zx, so, zo, -(2 ** 40), 2 ** 40, true);
  return tfliteOldSumWrap([v], bits, signed);
}
