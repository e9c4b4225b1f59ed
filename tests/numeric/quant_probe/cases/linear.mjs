// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL with quantized
// inputs: int8 per-channel / per-tensor, uint8, int16x8; adversarial scales (exact ties,
// one-ulp-off ties), extreme accumulators (> 2^24), zero points at the ends, activations.
import { Model, qin, qt, qconst, tensor, rng, randInt, randInts, LIMITS, count, fs } from '../lib/qmodel.mjs';
import * as T from '../ref/tflite.mjs';
import * as X from '../ref/xnnpack.mjs';
import * as L from '../ref/linear.mjs';
import { f32, clamp, rne } from '../ref/common.mjs';
import { actRange, actRangeXnn } from './elementwise.mjs';

const W_TYPE = { int8: 'int8', uint8: 'uint8', int16: 'int8' };

// Candidates for a linear op given its exact accumulators.
function linearRefs({ acc, channel }, { type, sx, sw, so, zo, act }) {
  const swc = (c) => (sw.length === 1 ? sw[0] : sw[c]);
  const [tmin, tmax] = actRange(act, type, so, zo);
  const [xmin, xmax] = actRangeXnn(act, type, so, zo);
  const refs = {};
  const xs = (c) => f32(f32(f32(sx) * f32(swc(c))) / f32(so));
  refs.xnnpack = () => acc.map((a, i) => X.requantizeFp32(a, xs(channel[i]), zo, xmin, xmax));
  const mult = (c, f32p) => T.linearMultiplier(sx, swc(c), so, f32p);
  if (type === 'int16') {
    refs.tflite16x8 = () => acc.map((a, i) => { const [m, s] = mult(channel[i]); return T.requantize16x8(a, m, s, zo, tmin, tmax); });
    refs.tflite16x8F32Prod = () => acc.map((a, i) => { const [m, s] = mult(channel[i], true); return T.requantize16x8(a, m, s, zo, tmin, tmax); });
    refs.tflite = () => acc.map((a, i) => { const [m, s] = mult(channel[i]); return T.requantize(a, m, s, zo, tmin, tmax); });
    refs.tfliteDouble = () => acc.map((a, i) => T.requantizeDouble(a, sx, swc(channel[i]), so, zo, tmin, tmax));
  } else {
    refs.tflite = () => acc.map((a, i) => { const [m, s] = mult(channel[i]); return T.requantize(a, m, s, zo, tmin, tmax); });
    refs.tfliteF32Prod = () => acc.map((a, i) => { const [m, s] = mult(channel[i], true); return T.requantize(a, m, s, zo, tmin, tmax); });
    refs.tfliteSingle = () => acc.map((a, i) => { const [m, s] = mult(channel[i]); return T.requantize(a, m, s, zo, tmin, tmax, true); });
  }
  // older TFLite TRANSPOSE_CONV ignored the fused activation: double rounding, type range only
  if (type !== 'int16') {
    const [qmin, qmax] = { int8: [-128, 127], uint8: [0, 255] }[type];
    refs.tfliteNoAct = () => acc.map((a, i) => { const [m, s] = mult(channel[i]); return T.requantize(a, m, s, zo, qmin, qmax); });
  }
  // exact real arithmetic, round half even (what a float64 QDQ graph would do)
  refs.exactRNE = () => acc.map((a, i) => clamp(rne(a * (f32(sx) * f32(swc(channel[i])) / f32(so))) + zo, tmin, tmax));
  return refs;
}

// Statistics of how adversarial the accumulators are: exact .5 ties and near ties (1e-6) of
// acc * real scale, and accumulators beyond 2^24 in magnitude.
function tieInfo({ acc, channel }, sx, sw, so) {
  let ties = 0; let near = 0; let big = 0;
  acc.forEach((a, i) => {
    const v = a * (f32(sx) * f32(sw.length === 1 ? sw[0] : sw[channel[i]]) / f32(so));
    const fr = Math.abs(v - Math.floor(v) - 0.5);
    if (fr === 0) ties++; else if (fr < 1e-6) near++;
    if (Math.abs(a) > 2 ** 24) big++;
  });
  return { exactTies: ties, nearTies: near, accAbove2p24: big };
}

function wQuant(wType, sw, zw, axis) {
  return wType === 'uint8' ? { scale: sw[0], zp: zw[0] } : { scale: sw.length === 1 ? sw[0] : sw, zp: sw.length === 1 ? 0 : sw.map(() => 0), axis: sw.length === 1 ? undefined : axis };
}

// Build one linear-op case. spec: { name, op, type, xShape, wShape, x, w, bias, sx, zx, sw[], zw[], so, zo, act,
//   stride, dilation, padding, multiplier, dynamicWeights, outShape (tconv), units (fc), adj }
function linearCase(s) {
  const { name, op, type } = s;
  const wType = W_TYPE[type];
  const m = new Model(name, `${op} ${s.variant}`);
  const x = qin(m, 'x', s.xShape, type, s.sx, s.zx);
  const wq = wQuant(wType, s.sw, s.zw, op === 'DEPTHWISE_CONV_2D' ? 3 : 0);
  const inputs = [tensor(type, s.xShape, s.x)];
  let w;
  if (s.dynamicWeights) {
    w = qin(m, 'w', s.wShape, wType, wq.scale, wq.zp);
    if (wq.axis !== undefined) m.tensors[w].quantization.quantized_dimension = wq.axis;
    inputs.push(tensor(wType, s.wShape, s.w));
  } else {
    w = qconst(m, 'w', s.wShape, wType, s.w, wq.scale, wq.zp, wq.axis);
  }
  const biasType = type === 'int16' ? 'INT64' : 'INT32';
  const nb = op === 'DEPTHWISE_CONV_2D' ? s.wShape[3] : s.wShape[0];
  const bScale = Array.from({ length: nb }, (_, c) => f32(f32(s.sx) * f32(s.sw.length === 1 ? s.sw[0] : s.sw[c])));
  let b = -1;
  if (s.bias) {
    b = m.constant('bias', [nb], biasType, s.bias);
    m.tensors[b].quantization = { scale: s.sw.length === 1 ? [bScale[0]] : bScale, zero_point: s.sw.length === 1 ? [0] : bScale.map(() => 0) };
  }
  let res;
  let outShape;
  const zwArg = wType === 'uint8' ? s.zw[0] : 0;
  if (op === 'CONV_2D') {
    res = L.conv2dAcc(s.x, s.xShape, s.zx, s.w, s.wShape, zwArg, s.bias, s);
    outShape = res.shape;
    const y = qt(m, 'y', outShape, type, s.so, s.zo);
    m.op('CONV_2D', [x, w, b], [y], 'Conv2DOptions', { padding: s.padding ?? 'SAME', stride_h: s.stride?.[0] ?? 1, stride_w: s.stride?.[1] ?? 1, dilation_h_factor: s.dilation?.[0] ?? 1, dilation_w_factor: s.dilation?.[1] ?? 1, fused_activation_function: s.act });
    m.output(y);
  } else if (op === 'DEPTHWISE_CONV_2D') {
    res = L.depthwiseAcc(s.x, s.xShape, s.zx, s.w, s.wShape, zwArg, s.bias, s);
    outShape = res.shape;
    const y = qt(m, 'y', outShape, type, s.so, s.zo);
    m.op('DEPTHWISE_CONV_2D', [x, w, b], [y], 'DepthwiseConv2DOptions', { padding: s.padding ?? 'SAME', stride_h: s.stride?.[0] ?? 1, stride_w: s.stride?.[1] ?? 1, dilation_h_factor: s.dilation?.[0] ?? 1, dilation_w_factor: s.dilation?.[1] ?? 1, depth_multiplier: s.multiplier ?? 1, fused_activation_function: s.act });
    m.output(y);
  } else if (op === 'FULLY_CONNECTED') {
    const k = s.wShape[1];
    const rows = count(s.xShape) / k;
    res = L.fcAcc(s.x, rows, k, s.zx, s.w, s.wShape[0], zwArg, s.bias);
    outShape = s.keepNumDims ? [...s.xShape.slice(0, -1), s.wShape[0]] : [rows, s.wShape[0]];
    const y = qt(m, 'y', outShape, type, s.so, s.zo);
    m.op('FULLY_CONNECTED', [x, w, b], [y], 'FullyConnectedOptions', { fused_activation_function: s.act, keep_num_dims: !!s.keepNumDims });
    m.output(y);
  } else if (op === 'TRANSPOSE_CONV') {
    res = L.transposeConvAcc(s.x, s.xShape, s.zx, s.w, s.wShape, zwArg, s.bias, s.outShape, s.stride);
    outShape = s.outShape;
    const shp = m.constant('output_shape', [4], 'INT32', outShape);
    const y = qt(m, 'y', outShape, type, s.so, s.zo);
    const ins = [shp, w, x];
    if (s.bias) ins.push(b);
    m.op('TRANSPOSE_CONV', ins, [y], 'TransposeConvOptions', { padding: s.padding, stride_h: s.stride[0], stride_w: s.stride[1], fused_activation_function: s.act });
    m.output(y);
  }
  const refs = linearRefs(res, { type, sx: s.sx, sw: s.sw, so: s.so, zo: s.zo, act: s.act });
  return { name, op, variant: s.variant, model: m, inputs, refs, tieInfo: tieInfo(res, s.sx, s.sw, s.so) };
}

// Per-channel weight scales giving requantization ratios `ratios` exactly (sx, so powers of two).
const SX = 2 ** -6;
const SO = 2 ** -5;
const ratioScales = (ratios) => ratios.map((r) => r * SO / SX);

export function cases() {
  const out = [];
  const r = rng(7);
  const small = (n) => randInts(r, n, -4, 4);
  const TIE_RATIOS = [0.5, 0.25, 0.125, f32(0.5 * (1 + 2 ** -23)), f32(0.5 * (1 - 2 ** -24)), f32(0.25 * (1 + 2 ** -22)), f32(0.375), f32(0.5 * (1 + 2 ** -20))];
  const variants = [
    // [label, op, extra spec]
    ['conv', 'CONV_2D', { xShape: [2, 7, 9, 5], wShape: [8, 3, 2, 5] }],
    ['conv_s2d2_valid', 'CONV_2D', { xShape: [1, 11, 13, 3], wShape: [8, 3, 3, 3], stride: [2, 1], dilation: [1, 2], padding: 'VALID' }],
    ['dw', 'DEPTHWISE_CONV_2D', { xShape: [2, 7, 9, 8], wShape: [1, 3, 2, 8] }],
    ['dw_m2_s2', 'DEPTHWISE_CONV_2D', { xShape: [1, 9, 11, 4], wShape: [1, 3, 3, 8], multiplier: 2, stride: [2, 2] }],
    ['fc', 'FULLY_CONNECTED', { xShape: [6, 37], wShape: [8, 37] }],
    ['fc_keepdims', 'FULLY_CONNECTED', { xShape: [2, 3, 37], wShape: [8, 37], keepNumDims: true }],
    ['tconv', 'TRANSPOSE_CONV', { xShape: [1, 5, 7, 3], wShape: [8, 3, 3, 3], stride: [2, 2], padding: 'SAME', outShape: [1, 10, 14, 8] }],
    ['tconv_valid', 'TRANSPOSE_CONV', { xShape: [1, 4, 6, 3], wShape: [8, 3, 2, 3], stride: [2, 1], padding: 'VALID', outShape: [1, 9, 7, 8] }],
  ];
  const nW = (v) => count(v.wShape);
  const nOut = (v) => (v.wShape[0] === 1 ? v.wShape[3] : v.wShape[0]);
  for (const [label, op, v] of variants) {
    const oc = nOut(v);
    const nx = count(v.xShape);
    // 1. exact and one-ulp-off ties: small integers, per-channel ratios from TIE_RATIOS
    out.push(linearCase({ name: `${label}_i8_ties`, op, type: 'int8', ...v, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 0, sw: ratioScales(TIE_RATIOS.slice(0, oc)), so: SO, zo: 0, act: 'NONE', variant: 'int8 per-channel, requantization ratios 0.5, 0.25, 0.125, 0.5(1+2^-23), 0.5(1-2^-24), ...: exact and near ties' }));
    // 2. realistic scales, full-range values
    const swr = Array.from({ length: oc }, () => 0.002 + 0.008 * r());
    out.push(linearCase({ name: `${label}_i8_random`, op, type: 'int8', ...v, x: randInts(r, nx, -128, 127), w: randInts(r, nW(v), -127, 127), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: -3, sw: swr, so: 0.35, zo: 5, act: 'NONE', variant: 'int8 per-channel, random scales, full-range values' }));
    // 3. extreme accumulators
    if (op === 'CONV_2D' || op === 'FULLY_CONNECTED') {
      const big = op === 'CONV_2D' ? { xShape: [1, 5, 6, 64], wShape: [6, 3, 3, 64] } : { xShape: [3, 1200], wShape: [6, 1200] };
      const k = op === 'CONV_2D' ? 576 : 1200;
      const xb = randInts(r, count(big.xShape), 100, 127);
      const sign = [1, -1, 1, -1, 1, 1];
      const wb = []; for (let i = 0; i < count(big.wShape); i++) { const c = Math.floor(i / (count(big.wShape) / 6)); wb.push(sign[c] * randInt(r, 118, 127)); }
      const accMax = k * 240 * 123;
      out.push(linearCase({ name: `${label}_i8_extreme_acc`, op, type: 'int8', ...big, x: xb, w: wb, bias: [2 ** 20, -(2 ** 21), 0, 12345, -777, 3], sx: 0.05, zx: -128, sw: [1, 2, 3, 4, 5, 6].map((c) => 100 * 0.2 / accMax / 0.05 * (1 + c / 50)), so: 0.2, zo: 0, act: 'NONE', variant: 'int8 per-channel, |acc| up to ~3e7 (> 2^24), zx = -128' }));
    }
    // 4. per-tensor int8 weights, zero points at the ends, RELU / RELU6
    out.push(linearCase({ name: `${label}_i8_pertensor_relu`, op, type: 'int8', ...v, x: randInts(r, nx, -128, 127), w: randInts(r, nW(v), -127, 127), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: 127, sw: [0.0061], so: 0.25, zo: -128, act: 'RELU', variant: 'int8 per-tensor weights, zx=127, zo=-128, RELU' }));
    out.push(linearCase({ name: `${label}_i8_pertensor_ties`, op, type: 'int8', ...v, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 1, sw: ratioScales([0.25]), so: SO, zo: -3, act: 'NONE', variant: 'int8 per-tensor weights, ratio 0.25 (exact ties)' }));
    out.push(linearCase({ name: `${label}_i8_requant_ge256`, op, type: 'int8', ...v, x: randInts(r, nx, -2, 2), w: randInts(r, nW(v), -2, 2), bias: randInts(r, oc, -3, 3), sx: 0.5, zx: 0, sw: Array(oc).fill(0.5), so: 1 / 1200, zo: 0, act: 'NONE', variant: 'int8, requantization scale 300 (XNNPACK cannot create the operator: its delegate fails as a whole and tfjs-tflite runs the builtin kernel); every nonzero sum saturates' }));
    out.push(linearCase({ name: `${label}_i8_relu6`, op, type: 'int8', ...v, x: randInts(r, nx, -128, 127), w: randInts(r, nW(v), -127, 127), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: -128, sw: swr, so: 6 / 200, zo: -100, act: 'RELU6', variant: 'int8 per-channel, RELU6' }));
    out.push(linearCase({ name: `${label}_i8_relu6_tie`, op, type: 'int8', ...v, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: 1, zx: 0, sw: Array(oc).fill(1), so: 12, zo: -2, act: 'RELU6', variant: 'int8, RELU6 with 6/s_out = 0.5 and an even zero point (clamp bound tie: TFLite zo+1, XNNPACK zo)' }));
    // 5. uint8 (per-tensor, nonzero weight zero point)
    out.push(linearCase({ name: `${label}_u8_random`, op, type: 'uint8', ...v, x: randInts(r, nx, 0, 255), w: randInts(r, nW(v), 0, 255), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: 131, sw: [0.0061], zw: [119], so: 0.3, zo: 128, act: 'NONE', variant: 'uint8 per-tensor, zw=119' }));
    out.push(linearCase({ name: `${label}_u8_ties`, op, type: 'uint8', ...v, x: randInts(r, nx, 125, 131), w: randInts(r, nW(v), 125, 131), bias: randInts(r, oc, -20, 20), sx: SX, zx: 128, sw: [SO / SX * 0.5], zw: [128], so: SO, zo: 128, act: 'NONE', variant: 'uint8, ratio 0.5 (exact ties)' }));
    out.push(linearCase({ name: `${label}_u8_ends_relu6`, op, type: 'uint8', ...v, x: randInts(r, nx, 0, 255), w: randInts(r, nW(v), 0, 255), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: 255, sw: [0.0061], zw: [0], so: 6 / 255, zo: 0, act: 'RELU6', variant: 'uint8, zx=255, zw=0, RELU6' }));
    // 6. builtin forced: weights as a graph input (XNNPACK needs static weights)
    out.push(linearCase({ name: `${label}_i8_dynw_ties`, op, type: 'int8', ...v, dynamicWeights: true, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 0, sw: ratioScales(TIE_RATIOS.slice(0, oc)), so: SO, zo: 0, act: 'NONE', variant: 'int8 per-channel, weights not constant (builtin kernel), ties' }));
    out.push(linearCase({ name: `${label}_i8_dynw_random`, op, type: 'int8', ...v, dynamicWeights: true, x: randInts(r, nx, -128, 127), w: randInts(r, nW(v), -127, 127), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: -3, sw: swr, so: 0.35, zo: 5, act: 'RELU', variant: 'int8 per-channel, weights not constant (builtin), random, RELU' }));
    if (op === 'FULLY_CONNECTED') {
      // int8 per-tensor weights computed at run time (attention's q·kᵀ written as FULLY_CONNECTED)
      out.push(linearCase({ name: `${label}_i8_pt_dynw_ties`, op, type: 'int8', ...v, dynamicWeights: true, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 2, sw: ratioScales([0.25]), so: SO, zo: -1, act: 'NONE', variant: 'int8 per-tensor, weights not constant (builtin), ratio 0.25 ties' }));
      out.push(linearCase({ name: `${label}_i8_pt_dynw_random`, op, type: 'int8', ...v, dynamicWeights: true, x: randInts(r, nx, -128, 127), w: randInts(r, nW(v), -128, 127), sx: 0.0235, zx: -3, sw: [0.0123], so: 0.35, zo: 5, act: 'RELU6', variant: 'int8 per-tensor, weights not constant (builtin), random, no bias, RELU6' }));
    }
    out.push(linearCase({ name: `${label}_u8_dynw_random`, op, type: 'uint8', ...v, dynamicWeights: true, x: randInts(r, nx, 0, 255), w: randInts(r, nW(v), 0, 255), bias: randInts(r, oc, -3000, 3000), sx: 0.0235, zx: 131, sw: [0.0061], zw: [119], so: 0.3, zo: 128, act: 'NONE', variant: 'uint8, weights not constant (builtin)' }));
    // 7. 16x8: int16 activations, int8 weights, int64 bias
    out.push(linearCase({ name: `${label}_i16_random`, op, type: 'int16', ...v, x: randInts(r, nx, -32768, 32767), w: randInts(r, nW(v), -127, 127), bias: randInts(r, oc, -300000, 300000), sx: 0.00031, zx: 0, sw: swr, so: 0.00031 * 0.006 * 300, zo: 0, act: 'NONE', variant: 'int16x8 per-channel, random' }));
    if (op === 'FULLY_CONNECTED') out.push(linearCase({ name: `${label}_i16_pertensor_ties`, op, type: 'int16', ...v, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 0, sw: ratioScales([0.5]), so: SO, zo: 0, act: 'NONE', variant: 'int16x8 per-tensor weights, ratio 0.5 (exact ties)' }));
    out.push(linearCase({ name: `${label}_u8_dynw_ties`, op, type: 'uint8', ...v, dynamicWeights: true, x: randInts(r, nx, 125, 131), w: randInts(r, nW(v), 125, 131), bias: randInts(r, oc, -20, 20), sx: SX, zx: 128, sw: [SO / SX * 0.25], zw: [128], so: SO, zo: 128, act: 'NONE', variant: 'uint8, weights not constant (builtin), ratio 0.25 ties' }));
    out.push(linearCase({ name: `${label}_i16_ties`, op, type: 'int16', ...v, x: small(nx), w: small(nW(v)), bias: randInts(r, oc, -20, 20), sx: SX, zx: 0, sw: ratioScales(TIE_RATIOS.slice(0, oc)), so: SO, zo: 0, act: 'NONE', variant: 'int16x8, exact and near ties' }));
  }
  return out;
}

// BATCH_MATMUL: a [B, M, K] x b [B, K, N] (both graph inputs, or b constant); bType
// int8 with an int16 a is the 16x8 kernel; sb an array quantizes b per channel along
// its output axis (N); bRank2 gives b no batch axis ([K, N], broadcast over a's B).
function bmmCase({ name, type, bType = type, B, M, K, N, a, b, sa, za, sb, zb, so, zo, adjX = false, adjY = false, constB = false, bRank2 = false, variant }) {
  const m = new Model(name, `BATCH_MATMUL ${variant}`);
  const aShape = adjX ? [B, K, M] : [B, M, K];
  const bMatrix = adjY ? [N, K] : [K, N];
  const bShape = bRank2 ? bMatrix : [B, ...bMatrix];
  const perChannel = Array.isArray(sb);
  const ta = qin(m, 'a', aShape, type, sa, za);
  const tb = constB
    ? qconst(m, 'b', bShape, bType, b, sb, perChannel ? sb.map(() => zb) : zb, perChannel ? bShape.length - (adjY ? 2 : 1) : undefined)
    : qin(m, 'b', bShape, bType, sb, zb);
  const y = qt(m, 'y', [B, M, N], type, so, zo);
  m.op('BATCH_MATMUL', [ta, tb], [y], 'BatchMatMulOptions', { adj_x: adjX, adj_y: adjY });
  m.output(y);
  const inputs = [tensor(type, aShape, a)];
  if (!constB) inputs.push(tensor(bType, bShape, b));
  const res = L.batchMatmulAcc(a, b, B, M, K, N, za, zb, adjX, adjY, bRank2 ? 1 : B);
  const sw = perChannel ? sb : [sb];
  const refs = linearRefs(res, { type, sx: sa, sw, so, zo, act: 'NONE' });
  // TFLite's builtin kernel reads a per-channel b through the tensor's legacy
  // (per-tensor) parameters, whose scale is 0: the multiplier is 0 and every
  // output is the output zero point.
  refs.legacyZeroScale = () => res.acc.map(() => zo);
  return { name, op: 'BATCH_MATMUL', variant, model: m, inputs, refs, tieInfo: tieInfo(res, sa, sw, so) };
}

export function bmmCases() {
  const out = [];
  const r = rng(11);
  const [B, M, K, N] = [3, 5, 17, 7];
  const sm = (k) => randInts(r, k, -4, 4);
  for (const [adjX, adjY] of [[false, false], [true, false], [false, true]]) {
    const tag = `${adjX ? 'T' : 'N'}${adjY ? 'T' : 'N'}`;
    out.push(bmmCase({ name: `bmm_i8_ties_${tag}`, type: 'int8', B, M, K, N, a: sm(B * M * K), b: sm(B * K * N), sa: SX, za: 0, sb: SO / SX * 0.25, zb: 0, so: SO, zo: 0, adjX, adjY, variant: `int8, both inputs dynamic, ratio 0.25 ties, adj ${tag}` }));
  }
  out.push(bmmCase({ name: 'bmm_i8_random', type: 'int8', B, M, K, N, a: randInts(r, B * M * K, -128, 127), b: randInts(r, B * K * N, -127, 127), sa: 0.0235, za: -7, sb: 0.0123, zb: 0, so: 0.6, zo: 3, variant: 'int8, dynamic, random' }));
  out.push(bmmCase({ name: 'bmm_i8_zb_nonzero', type: 'int8', B, M, K, N, a: sm(B * M * K), b: sm(B * K * N), sa: SX, za: 3, sb: SO / SX * 0.25, zb: -2, so: SO, zo: -1, variant: 'int8, b zero point -2 (XNNPACK refuses), ties' }));
  out.push(bmmCase({ name: 'bmm_i8_constb_ties', type: 'int8', B, M, K, N, a: sm(B * M * K), b: sm(B * K * N), sa: SX, za: 0, sb: SO / SX * 0.25, zb: 0, so: SO, zo: 0, constB: true, variant: 'int8, b constant, ties' }));
  out.push(bmmCase({ name: 'bmm_i16_ties', type: 'int16', B, M, K, N, a: sm(B * M * K), b: sm(B * K * N), sa: SX, za: 0, sb: SO / SX * 0.25, zb: 0, so: SO, zo: 0, variant: 'int16, ties' }));
  out.push(bmmCase({ name: 'bmm_i16_random', type: 'int16', B, M, K, N, a: randInts(r, B * M * K, -32768, 32767), b: randInts(r, B * K * N, -32768, 32767), sa: 0.00031, za: 0, sb: 0.00017, zb: 0, so: 0.00031 * 0.00017 * 4e5, zo: 0, variant: 'int16, random' }));
  // int16 x int16 with accumulators near 2^40 and an output that saturates.
  out.push(bmmCase({ name: 'bmm_i16_extreme', type: 'int16', B: 2, M: 3, K: 300, N: 4, a: randInts(r, 2 * 3 * 300, 30000, 32767), b: randInts(r, 2 * 300 * 4, -32768, 32767).map((v, i) => (i % 4 === 1 ? 32767 : v)), sa: 0.001, za: 0, sb: 0.002, zb: 0, so: 0.001 * 0.002 * 2 ** 22 * 1.37, zo: 0, variant: 'int16, accumulators up to ~3e11, saturating' }));
  // 16x8: int16 a, int8 b (the kernel EvalInt16Int8).
  for (const [adjX, adjY] of [[false, false], [true, true]]) {
    const tag = `${adjX ? 'T' : 'N'}${adjY ? 'T' : 'N'}`;
    out.push(bmmCase({ name: `bmm_i16x8_ties_${tag}`, type: 'int16', bType: 'int8', B, M, K, N, a: sm(B * M * K), b: sm(B * K * N), sa: SX, za: 0, sb: SO / SX * 0.25, zb: 0, so: SO, zo: 0, adjX, adjY, variant: `16x8, both inputs dynamic, ratio 0.25 ties, adj ${tag}` }));
  }
  out.push(bmmCase({ name: 'bmm_i16x8_random_constb', type: 'int16', bType: 'int8', B: 2, M: 6, K: 43, N: 5, a: randInts(r, 2 * 6 * 43, -32768, 32767), b: randInts(r, 2 * 43 * 5, -128, 127), sa: 0.00031, za: 0, sb: 0.0123, zb: 0, so: 0.00031 * 0.0123 * 900, zo: 0, constB: true, variant: '16x8, b constant, random' }));
  out.push(bmmCase({ name: 'bmm_i16x8_rank2b_ties', type: 'int16', bType: 'int8', B: 4, M: 3, K: 19, N: 6, a: sm(4 * 3 * 19), b: sm(19 * 6), sa: SX, za: 0, sb: SO / SX * 0.125, zb: 0, so: SO, zo: 0, constB: true, bRank2: true, variant: '16x8, b constant [K, N] broadcast over the batch, ratio 0.125 ties' }));
  // Per-channel b (constant, one scale per output column): what the einsum
  // exports of the AI Edge quantizer write.
  out.push(bmmCase({ name: 'bmm_i16x8_perchannel', type: 'int16', bType: 'int8', B: 2, M: 4, K: 23, N: 6, a: randInts(r, 2 * 4 * 23, -32768, 32767), b: randInts(r, 23 * 6, -127, 127), sa: 0.00031, za: 0, sb: [0.011, 0.012, 0.013, 0.014, 0.015, 0.016], zb: 0, so: 0.00031 * 0.013 * 500, zo: 0, constB: true, bRank2: true, variant: '16x8, b constant per-channel [K, N]' }));
  out.push(bmmCase({ name: 'bmm_i8_perchannel', type: 'int8', B: 2, M: 4, K: 23, N: 6, a: randInts(r, 2 * 4 * 23, -128, 127), b: randInts(r, 23 * 6, -127, 127), sa: 0.0235, za: -5, sb: [0.011, 0.012, 0.013, 0.014, 0.015, 0.016], zb: 0, so: 0.3, zo: 2, constB: true, bRank2: true, variant: 'int8, b constant per-channel [K, N]' }));
  // Scales whose float32 product (GetQuantizedConvolutionMultipler without a
  // bias: float(s_a * s_b)) and double product give other multipliers, and
  // accumulators (±17359; the 16x8 ones at random) where the outputs differ.
  const sF32 = 0.02388446033000946;
  out.push(bmmCase({ name: 'bmm_i8_zb_f32product', type: 'int8', B: 1, M: 4, K: 2, N: 3, a: [127, 8, -127, -8, 5, -9, 100, 3], b: [127, 3, -50, 120, 7, 99], sa: sF32, za: 0, sb: 0.0123, zb: -2, so: 0.6, zo: 1, constB: true, variant: 'int8, b zero point -2 (builtin), scales whose float and double products give other multipliers' }));
  out.push(bmmCase({ name: 'bmm_i16x8_f32product', type: 'int16', bType: 'int8', B: 2, M: 6, K: 43, N: 5, a: randInts(r, 2 * 6 * 43, -32768, 32767), b: randInts(r, 2 * 43 * 5, -128, 127), sa: 0.0003134669968858361, za: 0, sb: 0.0123, zb: 0, so: 0.00031 * 0.0123 * 700, zo: 0, constB: true, variant: '16x8, scales whose float and double products give other 16-bit multipliers' }));
  // int16 x int16 whose scaled sums pass int32: the kernel's cast wraps them.
  out.push(bmmCase({ name: 'bmm_i16_wrap', type: 'int16', B: 1, M: 3, K: 300, N: 4, a: randInts(r, 3 * 300, 20000, 32767), b: randInts(r, 300 * 4, -32768, 32767).map((v, i) => (i % 4 < 2 ? 32767 - (i % 7) : v)), sa: 0.001, za: 0, sb: 0.002, zb: 0, so: 0.001 * 0.002 / 37.5, zo: 0, variant: 'int16, multiplier 37.5, scaled sums beyond int32 (wrapped by the int32 cast)' }));
  out.push(bmmCase({ name: 'bmm_i8_rank2b_ties', type: 'int8', B: 4, M: 3, K: 19, N: 6, a: sm(4 * 3 * 19), b: sm(19 * 6), sa: SX, za: 0, sb: SO / SX * 0.125, zb: 0, so: SO, zo: 0, constB: true, bRank2: true, variant: 'int8, b constant [K, N] broadcast over the batch, ratio 0.125 ties' }));
  return out;
}
// FULLY_CONNECTED with accumulators placed 1-3 units around .5 ties above 2^24, where
// float32(acc) rounds (ulp 2 or 4): requantization ratio exactly 2^-18.
export function accRoundingCases() {
  const K = 2400;
  const targets = [];
  for (const base of [2 ** 24 + 2 ** 17 * 3, 2 ** 24 + 2 ** 17 * 41, 2 ** 25 - 2 ** 17 * 5, 2 ** 25 + 2 ** 17 * 7]) for (const d of [-3, -2, -1, 0, 1, 2, 3]) targets.push(base + d);
  const rowsX = [];
  for (const t of targets) {
    const S = Math.round(t / 127);
    const rem = t - 127 * S;
    const row = new Array(K).fill(0);
    let left = S;
    for (let i = 0; i < K - 1; i++) { const v = Math.max(-128, Math.min(127, left)); row[i] = v; left -= v; }
    if (left !== 0) throw new Error('cannot place target');
    row[K - 1] = rem;
    rowsX.push(row);
  }
  const w = [...new Array(K - 1).fill(127), 1];
  const m = new Model('fc_i8_acc_f32_rounding', 'FULLY_CONNECTED accumulators around ties above 2^24');
  const x = qin(m, 'x', [targets.length, K], 'int8', 2 ** -6, 0);
  const tw = qconst(m, 'w', [1, K], 'int8', w, 2 ** -6, 0);
  const y = qt(m, 'y', [targets.length, 1], 'int8', 2 ** 6, -128);
  m.op('FULLY_CONNECTED', [x, tw, -1], [y], 'FullyConnectedOptions', { fused_activation_function: 'NONE' });
  m.output(y);
  const res = { acc: targets, channel: targets.map(() => 0) };
  const refs = linearRefs(res, { type: 'int8', sx: 2 ** -6, sw: [2 ** -6], so: 2 ** 6, zo: -128, act: 'NONE' });
  return [{ name: 'fc_i8_acc_f32_rounding', op: 'FULLY_CONNECTED', variant: 'int8 per-tensor, acc = (2k+1)*2^17 + {-3..3} in [2^24, 2^26), ratio 2^-18', model: m, inputs: [tensor('int8', [targets.length, K], rowsX.flat())], refs, tieInfo: tieInfo(res, 2 ** -6, [2 ** -6], 2 ** 6) }];
}
const baseCases = cases;
export function allCases() { return [...baseCases(), ...bmmCases(), ...accRoundingCases()]; }
