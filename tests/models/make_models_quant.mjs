#!/usr/bin/env node
// Writes the quantized (int8 / uint8) test models (core/passes/quantize.cc:
// QuantizeLinear/DequantizeLinear) as FlatBuffer JSON into
// tests/models/json/q_*.json, plus their input domains into
// tests/models/specs_quant.json. Same format and conventions as
// make_models.mjs (see README.md); only q_* files are touched.
//
//   node tests/models/make_models_quant.mjs      # from the repository root
//
// Quantization as TFLite's integer kernels require it: int8 activations
// per-tensor, int8 weights per channel and symmetric (CONV_2D / TRANSPOSE_CONV
// axis 0 of OHWI, DEPTHWISE_CONV_2D axis 3 of 1HWC, FULLY_CONNECTED axis 0),
// uint8 everything per-tensor with nonzero zero points, int32 biases with
// scale = input scale x weight scale and zero point 0, the fixed output
// scales of SOFTMAX / LOGISTIC / TANH, and the same parameters on the input
// and output of every op that copies integers. Output scales cover the real
// output range estimated from the inputs (mean +- 4 standard deviations of
// uniformly distributed integer inputs, within the hard bounds), so outputs
// are not saturated.
//
// Not here, because neither TFLite runtime of the harness loads them (see
// README.md): int8 CONCATENATION with differing input scales, and a bias whose
// quantized_dimension is outside its rank (a C++ unit test covers that one).
//
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bcast, count, roundF16, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_quant.json');

// ---- quantization parameters ---------------------------------------------------

const LIMITS = { INT8: [-128, 127], UINT8: [0, 255], INT16: [-32768, 32767] };

// The shortest decimal that is the same float32 (what flatc stores).
function f32(x) {
  const v = Math.fround(x);
  for (let p = 1; p <= 9; p++) if (Math.fround(Number(v.toPrecision(p))) === v) return Number(v.toPrecision(p));
  return v;
}

// Per-tensor parameters; `q.axis` set means per-axis (scale and zp arrays).
const qp = (type, scale, zp) => ({ type, scale: [f32(scale)], zp: [zp] });
const i8 = (scale, zp = 0) => qp('INT8', scale, zp);
const i16 = (scale) => qp('INT16', scale, 0);
const u8 = (scale, zp) => qp('UINT8', scale, zp);

// Parameters covering the real range [lo, hi] (widened to include 0); int16
// (16x8) is symmetric, zero point 0, as TFLite's int16 kernels require.
function fit(type, lo, hi) {
  const [qmin, qmax] = LIMITS[type];
  lo = Math.min(lo, 0);
  hi = Math.max(hi, 1e-3);
  if (type === 'INT16') return i16(Math.max(-lo, hi) / qmax);
  const scale = f32((hi - lo) / (qmax - qmin));
  return qp(type, scale, Math.max(qmin, Math.min(qmax, Math.round(qmin - lo / scale))));
}

// Real values of the whole integer range.
function realRange(q) {
  const [qmin, qmax] = LIMITS[q.type];
  return [(qmin - q.zp[0]) * q.scale[0], (qmax - q.zp[0]) * q.scale[0]];
}

// Statistics of a tensor filled with uniformly distributed integers.
function uniformStats(q) {
  const [lo, hi] = realRange(q);
  return { lo, hi, mean: (lo + hi) / 2, std: (hi - lo) / Math.sqrt(12) };
}

// Bounds of the fused activations (and of the RELU* ops).
const ACT = { NONE: [-Infinity, Infinity], RELU: [0, Infinity], RELU6: [0, 6], RELU_N1_TO_1: [-1, 1] };

// Output parameters for estimated statistics: mean +- 4 std within the hard
// bounds and the activation's.
function outParams(type, s, act = 'NONE') {
  const lo = Math.max(s.lo, s.mean - 4 * s.std, ACT[act][0]);
  const hi = Math.min(s.hi, s.mean + 4 * s.std, ACT[act][1]);
  return fit(type, lo, hi);
}

// Statistics after an activation (roughly: the clamped central range).
function clampStats(s, act) {
  if (act === 'NONE') return s;
  const lo = Math.max(ACT[act][0], s.mean - 3 * s.std);
  const hi = Math.min(ACT[act][1], s.mean + 3 * s.std);
  return { lo: Math.max(s.lo, ACT[act][0]), hi: Math.min(s.hi, ACT[act][1]), mean: (lo + hi) / 2, std: (hi - lo) / 4 };
}

// ---- tensors ---------------------------------------------------------------------

function quantization(q) {
  const out = { scale: q.scale, zero_point: q.zp };
  if (q.axis !== undefined) out.quantized_dimension = q.axis;
  return out;
}

// Each model keeps the statistics of its tensors in m.stats (by index).
function setQ(m, t, q, stats) {
  m.tensors[t].quantization = quantization(q);
  m.q ??= [];
  m.stats ??= [];
  m.q[t] = q;
  m.stats[t] = stats ?? uniformStats(q);
  return t;
}

const qt = (m, name, shape, q, stats) => setQ(m, m.tensor(name, shape, q.type), q, stats);

function qin(m, name, shape, q) {
  return setQ(m, m.input(name, shape, q.type), q);
}

// A constant of integers in the type of q (INT8, UINT8 or INT32).
function qconst(m, name, shape, q, ints) {
  const t = m.constant(name, shape, q.type, ints);
  m.tensors[t].quantization = quantization(q);
  return t;
}

const i32 = (m, name, values, shape = [values.length]) => m.constant(name, shape, 'INT32', values);

const randInt = (m, lo, hi) => lo + Math.floor(m.rand() * (hi - lo + 1));

// Weights of a filter / matrix with `fanIn` inputs per output: int8 per
// channel on `axis` (symmetric), or uint8 per tensor with a nonzero zero
// point. Returns the tensor, its parameters and per-channel sums of the real
// weights and of their squares (for the output statistics).
function weights(m, name, shape, axis, fanIn, type, perTensor = false) {
  if (type === 'INT16') type = 'INT8';  // 16x8: int16 activations, int8 weights
  const channels = shape[axis];
  const inner = count(shape.slice(axis + 1));
  const base = 1.5 / Math.sqrt(fanIn);
  let q;
  if (type === 'INT8' && perTensor) {
    q = i8(base / 127);
  } else if (type === 'INT8') {
    const scale = Array.from({ length: channels }, () => f32(base * (0.5 + m.rand()) / 127));
    q = { type, scale, zp: scale.map(() => 0), axis };
  } else {
    q = u8(base / 110, randInt(m, 110, 150));
  }
  const ints = Array.from({ length: count(shape) }, () => (type === 'INT8' ? randInt(m, -127, 127) : randInt(m, 0, 255)));
  const sum = new Array(channels).fill(0);
  const sq = new Array(channels).fill(0);
  ints.forEach((v, i) => {
    const c = Math.floor(i / inner) % channels;
    const w = (v - q.zp[q.axis === undefined ? 0 : c]) * q.scale[q.axis === undefined ? 0 : c];
    sum[c] += w;
    sq[c] += w * w;
  });
  return { t: qconst(m, name, shape, q, ints), q, sum, sq };
}

// int32 bias (int64 for int16 inputs) for input parameters qx and weight parameters qw: scale
// qx.scale x qw.scale per channel, zero point 0. `override` replaces the
// tensor's parameters (the kernel ignores them).
function bias(m, name, channels, qx, qw, spread, override = undefined) {
  const scales = Array.from({ length: channels }, (_, c) =>
    f32(Math.fround(qx.scale[0]) * Math.fround(qw.scale[qw.scale.length === 1 ? 0 : c])));
  const real = scales.map(() => (m.rand() * 2 - 1) * spread);
  const ints = real.map((b, c) => Math.round(b / scales[c]));
  const q = override ?? (qw.axis === undefined
    ? { type: 'INT32', scale: [scales[0]], zp: [0] }
    : { type: 'INT32', scale: scales, zp: scales.map(() => 0), axis: 0 });
  const type = qx.type === 'INT16' ? 'INT64' : 'INT32';
  return { t: qconst(m, name, [channels], { ...q, type }, ints), real: ints.map((v, c) => v * scales[c]) };
}

// ---- op helpers: add one op and its output tensor, return the output ------------

const windowOut = (size, k, stride, padding) => (padding === 'SAME' ? Math.ceil(size / stride) : Math.floor((size - k) / stride) + 1);

// Output statistics of a weighted sum per channel: mean_c = mean_x * sum w_c + b_c,
// std_c = std_x * sqrt(sum w_c^2) (terms per output: `share` of the fan-in).
function linearStats(sx, w, b, share = 1) {
  let lo = Infinity;
  let hi = -Infinity;
  w.sum.forEach((s, c) => {
    const mean = sx.mean * s * share + (b ? b.real[c] : 0);
    const std = Math.sqrt(sx.std * sx.std * w.sq[c] * share);
    lo = Math.min(lo, mean - 4 * std);
    hi = Math.max(hi, mean + 4 * std);
  });
  return { lo, hi, mean: (lo + hi) / 2, std: (hi - lo) / 8 };
}

// Output tensor of a rescaling op: explicit parameters `out`, an explicit
// real range `range`, or fitted to the statistics.
function rescaled(m, name, shape, type, stats, act = 'NONE', { out, range } = {}) {
  const q = out ?? (range ? fit(type, ...range) : outParams(type, stats, act));
  return qt(m, name, shape, q, clampStats(stats, act));
}

function conv(m, x, name, { filters, k = [3, 3], stride = [1, 1], padding = 'SAME', act = 'NONE', biasQ, ...o }) {
  const [n, h, w, c] = m.shape(x);
  const qx = m.q[x];
  const wt = weights(m, `${name}/weights`, [filters, k[0], k[1], c], 0, k[0] * k[1] * c, qx.type);
  const b = bias(m, `${name}/bias`, filters, qx, wt.q, 0.3, biasQ);
  const shape = [n, windowOut(h, k[0], stride[0], padding), windowOut(w, k[1], stride[1], padding), filters];
  const y = rescaled(m, name, shape, qx.type, linearStats(m.stats[x], wt, b), act, o);
  m.op('CONV_2D', [x, wt.t, b.t], [y], 'Conv2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], dilation_h_factor: 1, dilation_w_factor: 1,
    fused_activation_function: act,
  });
  return y;
}

function depthwise(m, x, name, { multiplier = 1, k = [3, 3], stride = [1, 1], padding = 'SAME', act = 'NONE', ...o }) {
  const [n, h, w, c] = m.shape(x);
  const qx = m.q[x];
  const wt = weights(m, `${name}/weights`, [1, k[0], k[1], c * multiplier], 3, k[0] * k[1], qx.type);
  const b = bias(m, `${name}/bias`, c * multiplier, qx, wt.q, 0.3);
  const shape = [n, windowOut(h, k[0], stride[0], padding), windowOut(w, k[1], stride[1], padding), c * multiplier];
  const y = rescaled(m, name, shape, qx.type, linearStats(m.stats[x], wt, b), act, o);
  m.op('DEPTHWISE_CONV_2D', [x, wt.t, b.t], [y], 'DepthwiseConv2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], depth_multiplier: multiplier,
    fused_activation_function: act,
  });
  return y;
}

// `runtimeShape`: output_shape is a graph input holding these values (TFLite
// resizes the output at run time), instead of the usual constant.
function transposeConv(m, x, name, { filters, k = [3, 3], stride, padding, withBias = true, act = 'NONE', runtimeShape, ...o }) {
  const [n, h, w, c] = m.shape(x);
  const qx = m.q[x];
  const outShape = runtimeShape ?? (padding === 'SAME'
    ? [n, h * stride[0], w * stride[1], filters]
    : [n, (h - 1) * stride[0] + k[0], (w - 1) * stride[1] + k[1], filters]);
  let shapeT;
  if (runtimeShape) {
    shapeT = m.input(`${name}/output_shape`, [4], 'INT32');
    m.spec.inputs = { ...m.spec.inputs, [`${name}/output_shape`]: { value: runtimeShape } };
    // LiteRT.js returns stale buffers for a dynamically shaped output (as for
    // seanet_transpose_conv4, tests/numeric/specs.json).
    m.spec.reference = 'tfjs';
  } else {
    shapeT = i32(m, `${name}/output_shape`, outShape);
  }
  const wt = weights(m, `${name}/weights`, [filters, k[0], k[1], c], 0, k[0] * k[1] * c / (stride[0] * stride[1]), qx.type);
  const inputs = [shapeT, wt.t, x];
  const b = withBias ? bias(m, `${name}/bias`, filters, qx, wt.q, 0.3) : undefined;
  if (b) inputs.push(b.t);
  // Each output sees about 1/(stride_h*stride_w) of the filter taps.
  const stats = linearStats(m.stats[x], wt, b, 1 / (stride[0] * stride[1]));
  const y = rescaled(m, name, outShape, qx.type, stats, act, o);
  m.op('TRANSPOSE_CONV', inputs, [y], 'TransposeConvOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], fused_activation_function: act,
  });
  return y;
}

function fullyConnected(m, x, name, { units, act = 'NONE', perTensor = false, ...o }) {
  const inShape = m.shape(x);
  const k = inShape[inShape.length - 1];
  const qx = m.q[x];
  const wt = weights(m, `${name}/weights`, [units, k], 0, k, qx.type, perTensor);
  const b = bias(m, `${name}/bias`, units, qx, wt.q, 0.3);
  const y = rescaled(m, name, [count(inShape) / k, units], qx.type, linearStats(m.stats[x], wt, b), act, o);
  m.op('FULLY_CONNECTED', [x, wt.t, b.t], [y], 'FullyConnectedOptions', { fused_activation_function: act });
  return y;
}

const BINARY_OPTIONS = { ADD: 'AddOptions', SUB: 'SubOptions', MUL: 'MulOptions' };

function binaryStats(op, a, b) {
  if (op === 'MUL') {
    const corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
    const v = (a.std ** 2 + a.mean ** 2) * (b.std ** 2 + b.mean ** 2) - (a.mean * b.mean) ** 2;
    return { lo: Math.min(...corners), hi: Math.max(...corners), mean: a.mean * b.mean, std: Math.sqrt(v) };
  }
  const std = Math.hypot(a.std, b.std);
  if (op === 'ADD') return { lo: a.lo + b.lo, hi: a.hi + b.hi, mean: a.mean + b.mean, std };
  return { lo: a.lo - b.hi, hi: a.hi - b.lo, mean: a.mean - b.mean, std };
}

function binary(m, op, a, b, name = 'output', act = 'NONE', o = {}) {
  const shape = bcast(m.shape(a), m.shape(b));
  const y = rescaled(m, name, shape, m.q[a].type, binaryStats(op, m.stats[a], m.stats[b]), act, o);
  m.op(op, [a, b], [y], BINARY_OPTIONS[op], { fused_activation_function: act });
  return y;
}

// An op that copies integers: the output has the input's parameters.
function copyOp(m, op, inputs, outShape, name = 'output', optionsType = undefined, options = undefined) {
  const x = inputs[0];
  const y = qt(m, name, outShape, m.q[x], m.stats[x]);
  m.op(op, inputs, [y], optionsType, options);
  return y;
}

function pool(m, op, x, name, { f, stride, padding, act = 'NONE' }) {
  const [n, h, w, c] = m.shape(x);
  const shape = [n, windowOut(h, f[0], stride[0], padding), windowOut(w, f[1], stride[1], padding), c];
  return copyOp(m, op, [x], shape, name, 'Pool2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], filter_height: f[0], filter_width: f[1],
    fused_activation_function: act,
  });
}

// Unary ops that rescale: explicit output parameters `out` or a real range.
function unary(m, op, x, name, outRange, optionsType = undefined, options = undefined, out = undefined) {
  const y = rescaled(m, name, m.shape(x), m.q[x].type, m.stats[x], 'NONE', { out, range: outRange });
  m.op(op, [x], [y], optionsType, options);
  return y;
}

function reduce(m, op, x, name, axes, keepDims, outRange = undefined) {
  const inShape = m.shape(x);
  const norm = axes.map((a) => (a < 0 ? a + inShape.length : a));
  const shape = [];
  inShape.forEach((d, i) => (!norm.includes(i) ? shape.push(d) : keepDims && shape.push(1)));
  const axesT = i32(m, `${name}/axes`, axes);
  if (op === 'REDUCE_MAX') return copyOp(m, op, [x, axesT], shape, name, 'ReducerOptions', { keep_dims: keepDims });
  const k = count(inShape) / count(shape);
  const s = m.stats[x];
  const stats = op === 'MEAN'
    ? { lo: s.lo, hi: s.hi, mean: s.mean, std: s.std / Math.sqrt(k) }
    : { lo: s.lo * k, hi: s.hi * k, mean: s.mean * k, std: s.std * Math.sqrt(k) };
  const y = rescaled(m, name, shape, m.q[x].type, stats, 'NONE', { range: outRange });
  m.op(op, [x, axesT], [y], 'ReducerOptions', { keep_dims: keepDims });
  return y;
}

function concat(m, xs, name, axis, out = undefined) {
  const shapes = xs.map((t) => m.shape(t));
  const ax = axis < 0 ? axis + shapes[0].length : axis;
  const shape = [...shapes[0]];
  shape[ax] = shapes.reduce((s, sh) => s + sh[ax], 0);
  const st = xs.map((t) => m.stats[t]);
  const lo = Math.min(...st.map((s) => s.lo));
  const hi = Math.max(...st.map((s) => s.hi));
  const y = qt(m, name, shape, out ?? fit(m.q[xs[0]].type, lo, hi), { lo, hi, mean: (lo + hi) / 2, std: (hi - lo) / 4 });
  m.op('CONCATENATION', xs, [y], 'ConcatenationOptions', { axis, fused_activation_function: 'NONE' });
  return y;
}

function resize(m, op, x, size, { alignCorners = false, halfPixelCenters = false } = {}) {
  const [n, , , c] = m.shape(x);
  const optionsType = op === 'RESIZE_BILINEAR' ? 'ResizeBilinearOptions' : 'ResizeNearestNeighborOptions';
  return copyOp(m, op, [x, i32(m, 'resize/size', size)], [n, ...size, c], 'output', optionsType,
    { align_corners: alignCorners, half_pixel_centers: halfPixelCenters });
}

function reshape(m, x, name, shape) {
  return copyOp(m, 'RESHAPE', [x, i32(m, `${name}/shape`, shape)], shape, name);
}

function quantizeOp(m, x, name, q) {
  const y = qt(m, name, m.shape(x), q);
  m.op('QUANTIZE', [x], [y]);
  return y;
}

function dequantizeOp(m, x, name) {
  const y = m.tensor(name, m.shape(x));
  m.op('DEQUANTIZE', [x], [y]);
  return y;
}

// ---- models --------------------------------------------------------------------

const MODELS = [];
const def = (name, description, build) => {
  if (MODELS.some((d) => d.name === `q_${name}`)) throw new Error(`duplicate model ${name}`);
  MODELS.push({ name: `q_${name}`, description, build });
};

const NHWC = [1, 5, 7, 3];
// Graph input parameters: a and b differ in scale and zero point.
const QA = { INT8: i8(0.02, 3), UINT8: u8(0.015, 120), INT16: i16(2 / 32768) };
const QB = { INT8: i8(0.035, -7), UINT8: u8(0.011, 97), INT16: i16(3 / 32768) };
const inA = (m, shape = NHWC, type = 'INT8', name = 'input') => qin(m, name, shape, QA[type]);
const inB = (m, shape = NHWC, type = 'INT8', name = 'input_b') => qin(m, name, shape, QB[type]);

// -- convolutions (int8 per-channel weights, uint8 per-tensor) --
def('conv2d', 'int8 CONV_2D 3x3 SAME s1, per-channel weights (axis 0), int32 bias', (m) =>
  m.output(conv(m, inA(m), 'output', { filters: 4 })));
def('conv2d_valid_s2_k3x5', 'int8 CONV_2D 3x5 VALID stride 2, 6 filters', (m) =>
  m.output(conv(m, inA(m, [1, 9, 11, 3]), 'output', { filters: 6, k: [3, 5], stride: [2, 2], padding: 'VALID' })));
def('conv2d_relu', 'int8 CONV_2D with fused RELU, output range [-1, 5] (the clamp is explicit)', (m) =>
  m.output(conv(m, inA(m), 'output', { filters: 4, act: 'RELU', range: [-1, 5] })));
def('conv2d_relu6', 'int8 CONV_2D with fused RELU6, output [0, 6] (zero point -128, the clamp is implied)', (m) =>
  m.output(conv(m, qin(m, 'input', NHWC, i8(0.05, 0)), 'output', { filters: 4, act: 'RELU6' })));
def('conv2d_relu_n1_to_1', 'int8 CONV_2D with fused RELU_N1_TO_1, output range [-2, 2]', (m) =>
  m.output(conv(m, inA(m), 'output', { filters: 4, act: 'RELU_N1_TO_1', range: [-2, 2] })));
def('conv2d_u8', 'uint8 CONV_2D 3x3 SAME, per-tensor weights with zero point != 0', (m) =>
  m.output(conv(m, inA(m, NHWC, 'UINT8'), 'output', { filters: 4 })));
def('conv2d_u8_relu6_s2', 'uint8 CONV_2D 3x3 SAME stride 2 with fused RELU6', (m) =>
  m.output(conv(m, qin(m, 'input', [1, 9, 11, 3], u8(0.04, 128)), 'output', { filters: 5, stride: [2, 2], act: 'RELU6' })));
def('conv2d_bias_scale_wrong', 'int8 CONV_2D whose int32 bias says scale 1.0 per tensor (the kernel ignores it: input x weight scales)', (m) =>
  m.output(conv(m, inA(m), 'output', { filters: 4, biasQ: { scale: [1], zp: [0] } })));
def('depthwise', 'int8 DEPTHWISE_CONV_2D 3x3 SAME multiplier 2, per-channel weights (axis 3)', (m) =>
  m.output(depthwise(m, inA(m), 'output', { multiplier: 2 })));
def('depthwise_s2_relu6', 'int8 DEPTHWISE_CONV_2D 3x5 VALID stride 2 with fused RELU6', (m) =>
  m.output(depthwise(m, qin(m, 'input', [1, 9, 11, 4], i8(0.06, -10)), 'output', { k: [3, 5], stride: [2, 2], padding: 'VALID', act: 'RELU6' })));
def('depthwise_u8', 'uint8 DEPTHWISE_CONV_2D 3x3 SAME multiplier 1, per-tensor weights', (m) =>
  m.output(depthwise(m, inA(m, NHWC, 'UINT8'), 'output', {})));
def('transpose_conv', 'int8 TRANSPOSE_CONV 3x3 SAME stride 2 with bias, per-channel weights (axis 0 of OHWI)', (m) =>
  m.output(transposeConv(m, inA(m, [1, 4, 5, 3]), 'output', { filters: 6, stride: [2, 2], padding: 'SAME' })));
def('transpose_conv_valid_nobias', 'int8 TRANSPOSE_CONV 3x2 VALID stride 2x1, no bias', (m) =>
  m.output(transposeConv(m, inA(m, [1, 4, 5, 3]), 'output', { filters: 2, k: [3, 2], stride: [2, 1], padding: 'VALID', withBias: false })));
def('transpose_conv_runtime_shape_same', 'int8 TRANSPOSE_CONV 1x2 SAME stride 2x3 with bias, output_shape [1,8,15,6] a graph input: the full convolution [9,14] is cut and padded past its extent (where only the bias is)', (m) =>
  m.output(transposeConv(m, inA(m, [1, 4, 5, 3]), 'output', { filters: 6, k: [1, 2], stride: [2, 3], padding: 'SAME', runtimeShape: [1, 8, 15, 6] })));
def('transpose_conv_runtime_shape_valid', 'int8 TRANSPOSE_CONV 3x2 VALID stride 2x1 with bias, output_shape [1,11,5,7] (the full convolution) a graph input', (m) =>
  m.output(transposeConv(m, inA(m, [1, 5, 4, 3]), 'output', { filters: 7, k: [3, 2], stride: [2, 1], padding: 'VALID', runtimeShape: [1, 11, 5, 7] })));
def('transpose_conv_relu6', 'int8 TRANSPOSE_CONV 3x3 SAME stride 2 with bias and fused RELU6 (range [-2, 8], the clamp is explicit)', (m) =>
  m.output(transposeConv(m, qin(m, 'input', [1, 4, 5, 3], i8(0.06, 0)), 'output', { filters: 4, stride: [2, 2], padding: 'SAME', act: 'RELU6', range: [-2, 8] })));
def('transpose_conv_u8', 'uint8 TRANSPOSE_CONV 3x3 SAME stride 2 with bias, per-tensor weights', (m) =>
  m.output(transposeConv(m, inA(m, [1, 4, 5, 3], 'UINT8'), 'output', { filters: 2, stride: [2, 2], padding: 'SAME' })));
def('fully_connected', 'int8 FULLY_CONNECTED [3,10] x [6,10]^T, per-channel weights (axis 0), bias', (m) =>
  m.output(fullyConnected(m, inA(m, [3, 10]), 'output', { units: 6 })));
def('fully_connected_relu', 'int8 FULLY_CONNECTED, per-tensor weights, fused RELU', (m) =>
  m.output(fullyConnected(m, inA(m, [3, 10]), 'output', { units: 6, act: 'RELU', perTensor: true })));
def('fully_connected_relu_n1_to_1', 'int8 FULLY_CONNECTED, per-channel weights, fused RELU_N1_TO_1, output range [-1.5, 1.5]', (m) =>
  m.output(fullyConnected(m, inA(m, [3, 10]), 'output', { units: 6, act: 'RELU_N1_TO_1', range: [-1.5, 1.5] })));
def('fully_connected_u8', 'uint8 FULLY_CONNECTED of a [2,3,8] input (flattened to [6,8]), per-tensor weights', (m) =>
  m.output(fullyConnected(m, inA(m, [2, 3, 8], 'UINT8'), 'output', { units: 5 })));

// -- elementwise binary --
def('add', 'int8 ADD of two inputs with different scales and zero points', (m) =>
  m.output(binary(m, 'ADD', inA(m, NHWC, 'INT8', 'input_a'), inB(m))));
def('add_bcast_relu6', 'int8 ADD [1,5,7,3] + constant [3] (own scale), fused RELU6', (m) => {
  const c = setQ(m, qconst(m, 'add/constant', [3], i8(0.03, 10), [100, -90, 17]), i8(0.03, 10));
  m.output(binary(m, 'ADD', qin(m, 'input', NHWC, i8(0.04, 0)), c, 'output', 'RELU6'));
});
def('add_relu_n1_to_1', 'int8 ADD [1,5,1,3] + [1,1,7,1] (broadcast of both), fused RELU_N1_TO_1, output range [-1.5, 1.5]', (m) =>
  m.output(binary(m, 'ADD', inA(m, [1, 5, 1, 3], 'INT8', 'input_a'), inB(m, [1, 1, 7, 1]), 'output', 'RELU_N1_TO_1', { range: [-1.5, 1.5] })));
def('add_relu', 'int8 ADD with fused RELU, output range [0, hi] (zero point -128)', (m) =>
  m.output(binary(m, 'ADD', inA(m, NHWC, 'INT8', 'input_a'), inB(m), 'output', 'RELU')));
def('add_u8', 'uint8 ADD [1,5,7,3] + [1,1,7,1], different scales', (m) =>
  m.output(binary(m, 'ADD', inA(m, NHWC, 'UINT8', 'input_a'), inB(m, [1, 1, 7, 1], 'UINT8'))));
def('sub', 'int8 SUB [1,5,7,3] - [1,1,7,1], different scales', (m) =>
  m.output(binary(m, 'SUB', inA(m, NHWC, 'INT8', 'input_a'), inB(m, [1, 1, 7, 1]))));
def('sub_u8_relu', 'uint8 SUB of two [1,5,7,3] inputs with fused RELU', (m) =>
  m.output(binary(m, 'SUB', inA(m, NHWC, 'UINT8', 'input_a'), inB(m, NHWC, 'UINT8'), 'output', 'RELU')));
def('mul', 'int8 MUL [1,5,7,3] * [1,5,1,3], different scales', (m) =>
  m.output(binary(m, 'MUL', inA(m, NHWC, 'INT8', 'input_a'), inB(m, [1, 5, 1, 3]))));
def('mul_u8', 'uint8 MUL [1,5,7,3] * [3], different scales', (m) =>
  m.output(binary(m, 'MUL', inA(m, NHWC, 'UINT8', 'input_a'), inB(m, [3], 'UINT8'))));

// -- concatenation --
def('concat', 'int8 CONCATENATION on axis 1, inputs with the output\'s parameters (what TFLite requires for int8)', (m) =>
  m.output(concat(m, [inA(m, NHWC, 'INT8', 'input_a'), inA(m, [1, 4, 7, 3], 'INT8', 'input_b')], 'output', 1, QA.INT8)));
def('concat_u8_scales', 'uint8 CONCATENATION on axis 3 of three inputs with different scales and zero points', (m) =>
  m.output(concat(m, [inA(m, NHWC, 'UINT8', 'input_a'), inB(m, [1, 5, 7, 2], 'UINT8'),
    qin(m, 'input_c', [1, 5, 7, 4], u8(0.02, 140))], 'output', 3)));

// -- pools (same parameters in and out) --
def('avg_pool', 'int8 AVERAGE_POOL_2D 3x2 SAME stride 2', (m) =>
  m.output(pool(m, 'AVERAGE_POOL_2D', inA(m), 'output', { f: [3, 2], stride: [2, 2], padding: 'SAME' })));
def('avg_pool_u8_relu6', 'uint8 AVERAGE_POOL_2D 2x3 VALID stride 1x2 with fused RELU6', (m) =>
  m.output(pool(m, 'AVERAGE_POOL_2D', qin(m, 'input', [1, 6, 9, 4], u8(0.05, 60)), 'output', { f: [2, 3], stride: [1, 2], padding: 'VALID', act: 'RELU6' })));
def('max_pool', 'int8 MAX_POOL_2D 3x3 VALID stride 2', (m) =>
  m.output(pool(m, 'MAX_POOL_2D', inA(m, [1, 9, 11, 3]), 'output', { f: [3, 3], stride: [2, 2], padding: 'VALID' })));
def('max_pool_relu', 'int8 MAX_POOL_2D 2x2 SAME stride 2 with fused RELU', (m) =>
  m.output(pool(m, 'MAX_POOL_2D', inA(m), 'output', { f: [2, 2], stride: [2, 2], padding: 'SAME', act: 'RELU' })));

// -- shape ops (copies) --
def('reshape', 'int8 RESHAPE [1,5,7,3] -> [5,21]', (m) => m.output(reshape(m, inA(m), 'output', [5, 21])));
// TFLite's RESHAPE family copies the bytes: the output reads the same
// integers with its own parameters (an affine map of the real values).
const reinterpret = (m, op, x, shape, q, optionsType, options, extra = []) => {
  const y = qt(m, 'output', shape, q);
  m.op(op, [x, ...extra], [y], optionsType, options);
  return y;
};
def('reshape_reinterpreted', 'int8 RESHAPE [1,5,7,3] -> [5,21] whose output has its own parameters (scale 0.05, zero point -9)', (m) =>
  m.output(reinterpret(m, 'RESHAPE', inA(m), [5, 21], i8(0.05, -9), undefined, undefined, [i32(m, 'output/shape', [5, 21])])));
def('squeeze_reinterpreted_u8', 'uint8 SQUEEZE [1,5,1,3] dims [0,2], output with its own parameters (scale 0.004, zero point 30)', (m) =>
  m.output(reinterpret(m, 'SQUEEZE', inA(m, [1, 5, 1, 3], 'UINT8'), [5, 3], u8(0.004, 30), 'SqueezeOptions', { squeeze_dims: [0, 2] })));
def('conv_reshape_reinterpreted', 'int8 CONV_2D -> RESHAPE [1,5,7,4] -> [1,140] with other output parameters -> FULLY_CONNECTED', (m) => {
  const c = conv(m, inA(m), 'conv', { filters: 4 });
  const q = m.q[c];
  const r = qt(m, 'reshape', [1, 140], i8(q.scale[0] * 1.5, q.zp[0] + 5));
  m.op('RESHAPE', [c, i32(m, 'reshape/shape', [1, 140])], [r]);
  m.output(fullyConnected(m, r, 'output', { units: 6 }));
});
def('16x8_reshape_reinterpreted', 'int16 RESHAPE [1,5,7,3] -> [5,21] whose output has its own scale (emulated in float32)', (m) =>
  m.output(reinterpret(m, 'RESHAPE', inA(m, NHWC, 'INT16'), [5, 21], i16(5 / 32768), undefined, undefined, [i32(m, 'output/shape', [5, 21])])));
def('squeeze', 'int8 SQUEEZE [1,5,1,3] dims [0,2]', (m) =>
  m.output(copyOp(m, 'SQUEEZE', [inA(m, [1, 5, 1, 3])], [5, 3], 'output', 'SqueezeOptions', { squeeze_dims: [0, 2] })));
def('transpose', 'int8 TRANSPOSE [1,5,7,3] perm [0,3,1,2]', (m) =>
  m.output(copyOp(m, 'TRANSPOSE', [inA(m), i32(m, 'transpose/perm', [0, 3, 1, 2])], [1, 3, 5, 7], 'output', 'TransposeOptions', {})));
def('transpose_after_conv', 'int8 CONV_2D -> TRANSPOSE perm [0,2,1,3] (NCHW input)', (m) => {
  const c = conv(m, inA(m), 'conv', { filters: 4 });
  m.output(copyOp(m, 'TRANSPOSE', [c, i32(m, 'transpose/perm', [0, 2, 1, 3])], [1, 7, 5, 4], 'output', 'TransposeOptions', {}));
});
def('pad', 'int8 PAD [[0,0],[1,2],[2,1],[0,0]] (pads with the zero point)', (m) =>
  m.output(copyOp(m, 'PAD', [inA(m), i32(m, 'pad/paddings', [0, 0, 1, 2, 2, 1, 0, 0], [4, 2])], [1, 8, 10, 3], 'output', 'PadOptions', {})));
def('padv2', 'int8 PADV2 with an int8 constant value 1.0 in the input\'s parameters', (m) => {
  const x = inA(m);
  const v = qconst(m, 'pad/constant_value', [], QA.INT8, [Math.round(1 / QA.INT8.scale[0]) + QA.INT8.zp[0]]);
  m.output(copyOp(m, 'PADV2', [x, i32(m, 'pad/paddings', [0, 0, 2, 0, 1, 3, 0, 0], [4, 2]), v], [1, 7, 11, 3], 'output', 'PadV2Options', {}));
});
def('strided_slice', 'int8 STRIDED_SLICE begin [0,1,0,0] end [1,5,7,3] strides [1,2,3,1]', (m) => {
  const x = inA(m);
  m.output(copyOp(m, 'STRIDED_SLICE', [x, i32(m, 'slice/begin', [0, 1, 0, 0]), i32(m, 'slice/end', [1, 5, 7, 3]),
    i32(m, 'slice/strides', [1, 2, 3, 1])], [1, 2, 3, 3], 'output', 'StridedSliceOptions', {}));
});
def('slice', 'int8 SLICE begin [0,1,2,0] size [1,3,-1,2]', (m) =>
  m.output(copyOp(m, 'SLICE', [inA(m), i32(m, 'slice/begin', [0, 1, 2, 0]), i32(m, 'slice/size', [1, 3, -1, 2])], [1, 3, 5, 2], 'output', 'SliceOptions', {})));
def('split', 'int8 SPLIT [1,5,7,6] on axis 3 into 3', (m) => {
  const x = inA(m, [1, 5, 7, 6]);
  const ys = [0, 1, 2].map((i) => qt(m, `output_${i}`, [1, 5, 7, 2], m.q[x]));
  m.op('SPLIT', [i32(m, 'split/axis', [3], []), x], ys, 'SplitOptions', { num_splits: 3 });
  ys.forEach((y) => m.output(y));
});
def('split_v', 'int8 SPLIT_V [1,5,7,3] on axis 2, sizes [2,-1,4]', (m) => {
  const x = inA(m);
  const ys = [2, 1, 4].map((s, i) => qt(m, `output_${i}`, [1, 5, s, 3], m.q[x]));
  m.op('SPLIT_V', [x, i32(m, 'split_v/size_splits', [2, -1, 4]), i32(m, 'split_v/axis', [2], [])], ys, 'SplitVOptions', { num_splits: 3 });
  ys.forEach((y) => m.output(y));
});
def('pack', 'int8 PACK of two [3,5] inputs on axis 1 (same parameters)', (m) =>
  m.output(copyOp(m, 'PACK', [inA(m, [3, 5], 'INT8', 'input_a'), inA(m, [3, 5], 'INT8', 'input_b')], [3, 2, 5], 'output', 'PackOptions', { values_count: 2, axis: 1 })));
def('unpack', 'int8 UNPACK [3,4,5] on axis 1', (m) => {
  const x = inA(m, [3, 4, 5]);
  const ys = [0, 1, 2, 3].map((i) => qt(m, `output_${i}`, [3, 5], m.q[x]));
  m.op('UNPACK', [x], ys, 'UnpackOptions', { num: 4, axis: 1 });
  ys.forEach((y) => m.output(y));
});
def('gather', 'int8 GATHER [5,7,3] on axis 1 with constant indices [6,0,3,3]', (m) =>
  m.output(copyOp(m, 'GATHER', [inA(m, [5, 7, 3]), i32(m, 'gather/indices', [6, 0, 3, 3])], [5, 4, 3], 'output', 'GatherOptions', { axis: 1 })));
def('depth_to_space', 'int8 DEPTH_TO_SPACE [1,3,4,8] block 2', (m) =>
  m.output(copyOp(m, 'DEPTH_TO_SPACE', [inA(m, [1, 3, 4, 8])], [1, 6, 8, 2], 'output', 'DepthToSpaceOptions', { block_size: 2 })));
def('space_to_depth', 'int8 SPACE_TO_DEPTH [1,6,4,3] block 2', (m) =>
  m.output(copyOp(m, 'SPACE_TO_DEPTH', [inA(m, [1, 6, 4, 3])], [1, 3, 2, 12], 'output', 'SpaceToDepthOptions', { block_size: 2 })));
def('space_to_batch', 'int8 SPACE_TO_BATCH_ND [1,5,7,3] block [2,2] paddings [[1,0],[0,1]]', (m) =>
  m.output(copyOp(m, 'SPACE_TO_BATCH_ND', [inA(m), i32(m, 'space_to_batch/block_shape', [2, 2]),
    i32(m, 'space_to_batch/paddings', [1, 0, 0, 1], [2, 2])], [4, 3, 4, 3], 'output', 'SpaceToBatchNDOptions', {})));
def('batch_to_space', 'int8 BATCH_TO_SPACE_ND [4,3,4,3] block [2,2] crops [[1,0],[0,1]]', (m) =>
  m.output(copyOp(m, 'BATCH_TO_SPACE_ND', [inA(m, [4, 3, 4, 3]), i32(m, 'batch_to_space/block_shape', [2, 2]),
    i32(m, 'batch_to_space/crops', [1, 0, 0, 1], [2, 2])], [1, 5, 7, 3], 'output', 'BatchToSpaceNDOptions', {})));
def('resize_bilinear', 'int8 RESIZE_BILINEAR [1,4,5,3] -> [7,9]', (m) =>
  m.output(resize(m, 'RESIZE_BILINEAR', inA(m, [1, 4, 5, 3]), [7, 9])));
def('resize_bilinear_half_pixel', 'int8 RESIZE_BILINEAR [1,4,5,3] -> [6,8], half_pixel_centers', (m) =>
  m.output(resize(m, 'RESIZE_BILINEAR', inA(m, [1, 4, 5, 3]), [6, 8], { halfPixelCenters: true })));
def('resize_bilinear_u8_align_corners', 'uint8 RESIZE_BILINEAR [1,4,5,3] -> [7,9], align_corners', (m) =>
  m.output(resize(m, 'RESIZE_BILINEAR', inA(m, [1, 4, 5, 3], 'UINT8'), [7, 9], { alignCorners: true })));
def('resize_nearest', 'int8 RESIZE_NEAREST_NEIGHBOR [1,4,5,3] -> [6,11]', (m) =>
  m.output(resize(m, 'RESIZE_NEAREST_NEIGHBOR', inA(m, [1, 4, 5, 3]), [6, 11])));
def('maximum', 'int8 MAXIMUM [1,5,7,3] and [1,1,7,1] with the same parameters', (m) =>
  m.output(copyOp(m, 'MAXIMUM', [inA(m, NHWC, 'INT8', 'input_a'), inA(m, [1, 1, 7, 1], 'INT8', 'input_b')], NHWC)));
def('minimum_const', 'int8 MINIMUM [1,5,7,3] and a constant [3] with the same parameters', (m) => {
  const x = inA(m);
  m.output(copyOp(m, 'MINIMUM', [x, qconst(m, 'minimum/constant', [3], QA.INT8, [40, -20, 90])], NHWC));
});
def('reduce_max', 'int8 REDUCE_MAX over [1,2] keep_dims', (m) => m.output(reduce(m, 'REDUCE_MAX', inA(m), 'output', [1, 2], true)));

// -- ops with their own output scale --
def('softmax', 'int8 SOFTMAX [3,10], output scale 1/256, zero point -128', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [3, 10], i8(0.03, 0)), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, i8(1 / 256, -128))));
// Probabilities that round to 1 (256/256): TFLite clamps them to the
// largest integer; ONNX Runtime's fused QLinearSoftmax wrapped them to 0.
def('softmax_one_class', 'int8 SOFTMAX over a last axis of size 1 [2,5,1]: every probability is 1', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [2, 5, 1], i8(0.05, 3)), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, i8(1 / 256, -128))));
def('softmax_u8_confident', 'uint8 SOFTMAX [4,6], input scale 0.5: the largest logit often takes a probability that rounds to 256/256 (clamped to 255)', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [4, 6], u8(0.5, 120)), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, u8(1 / 256, 0))));
def('softmax_u8_beta05', 'uint8 SOFTMAX [3,10] beta 0.5, output scale 1/256, zero point 0', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [3, 10], u8(0.05, 128)), 'output', undefined, 'SoftmaxOptions', { beta: 0.5 }, u8(1 / 256, 0))));
def('softmax_after_conv', 'int8 CONV_2D -> SOFTMAX on channels (rank 4)', (m) =>
  m.output(unary(m, 'SOFTMAX', conv(m, inA(m), 'conv', { filters: 6 }), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, i8(1 / 256, -128))));
def('softmax_to_int16', 'int8 SOFTMAX [3,7] -> int16 (scale 1/65535, zero point -32768: the float-table kernel into int16)', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [3, 7], i8(0.07, 2)), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, qp('INT16', 1 / 65535, -32768))));
def('softmax_u8_to_int16', 'uint8 SOFTMAX [2,9] beta 0.8 -> int16 (scale 1/32768, zero point 0)', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [2, 9], u8(0.11, 131)), 'output', undefined, 'SoftmaxOptions', { beta: 0.8 }, qp('INT16', 1 / 32768, 0))));
def('softmax_to_int16_quantize_int32', 'int8 SOFTMAX [4,5] -> int16 -> QUANTIZE int32 (scale 1/32767): keyword_scrambled\'s tail', (m) => {
  const s = unary(m, 'SOFTMAX', qin(m, 'input', [4, 5], i8(0.09, -3)), 'softmax', undefined, 'SoftmaxOptions', { beta: 1 }, qp('INT16', 1 / 65535, -32768));
  const y = m.tensor('output', [4, 5], 'INT32');
  m.tensors[y].quantization = { scale: [f32(1 / 32767)], zero_point: [0] };
  m.op('QUANTIZE', [s], [y]);
  m.output(y);
});
def('l2_normalization', 'int8 L2_NORMALIZATION over the last axis of [2,3,11] (output scale 1/128, zero point 0, as TFLite requires)', (m) =>
  m.output(unary(m, 'L2_NORMALIZATION', qin(m, 'input', [2, 3, 11], i8(0.04, -6)), 'output', undefined, 'L2NormOptions', { fused_activation_function: 'NONE' }, i8(1 / 128, 0))));
def('conv_l2_normalization', 'int8 CONV_2D -> L2_NORMALIZATION over the channels (rank 4, NCHW inside ONNX)', (m) =>
  m.output(unary(m, 'L2_NORMALIZATION', conv(m, inA(m), 'conv', { filters: 6 }), 'output', undefined, 'L2NormOptions', { fused_activation_function: 'NONE' }, i8(1 / 128, 0))));
def('logistic', 'int8 LOGISTIC [2,3,5] of [-6, 6], output scale 1/256, zero point -128', (m) =>
  m.output(unary(m, 'LOGISTIC', qin(m, 'input', [2, 3, 5], i8(0.047, 0)), 'output', undefined, undefined, undefined, i8(1 / 256, -128))));
def('logistic_u8', 'uint8 LOGISTIC [2,3,5], output scale 1/256, zero point 0', (m) =>
  m.output(unary(m, 'LOGISTIC', qin(m, 'input', [2, 3, 5], u8(0.04, 130)), 'output', undefined, undefined, undefined, u8(1 / 256, 0))));
def('tanh', 'int8 TANH [2,3,5] of [-3, 3], output scale 1/128, zero point 0', (m) =>
  m.output(unary(m, 'TANH', qin(m, 'input', [2, 3, 5], i8(0.0235, 0)), 'output', undefined, undefined, undefined, i8(1 / 128, 0))));
def('tanh_u8', 'uint8 TANH [2,3,5], output scale 1/128, zero point 128', (m) =>
  m.output(unary(m, 'TANH', qin(m, 'input', [2, 3, 5], u8(0.02, 125)), 'output', undefined, undefined, undefined, u8(1 / 128, 128))));
def('mean_hw_keep', 'int8 MEAN over [1,2] keep_dims, output scale != input scale', (m) =>
  m.output(reduce(m, 'MEAN', inA(m), 'output', [1, 2], true)));
def('mean_last', 'int8 MEAN over [-1] of [2,5,7]', (m) => m.output(reduce(m, 'MEAN', inA(m, [2, 5, 7]), 'output', [-1], false)));
def('mean_u8_hw', 'uint8 MEAN over [1,2], no keep_dims', (m) =>
  m.output(reduce(m, 'MEAN', inA(m, NHWC, 'UINT8'), 'output', [1, 2], false)));
def('sum', 'int8 SUM over [2] keep_dims of [1,5,7,3]', (m) => m.output(reduce(m, 'SUM', inA(m), 'output', [2], true)));
def('hard_swish', 'int8 HARD_SWISH of [-5, 5], output range [-0.375, 5]', (m) =>
  m.output(unary(m, 'HARD_SWISH', qin(m, 'input', NHWC, i8(10 / 255, 0)), 'output', [-0.375, 5])));
def('leaky_relu', 'int8 LEAKY_RELU alpha 0.2, output range [-0.55, 2.5]', (m) =>
  m.output(unary(m, 'LEAKY_RELU', inA(m), 'output', [-0.55, 2.5], 'LeakyReluOptions', { alpha: 0.2 })));
def('prelu', 'int8 PRELU with an int8 constant alpha [3] (own scale, one negative)', (m) => {
  const x = inA(m);
  const alpha = qconst(m, 'prelu/alpha', [3], i8(1 / 128, 0), [32, -40, 100]);
  const [lo, hi] = realRange(QA.INT8);
  // x >= 0: x; x < 0: alpha * x with alpha in [-40/128, 100/128].
  const y = qt(m, 'output', NHWC, fit('INT8', lo * 100 / 128, Math.max(hi, lo * -40 / 128)));
  m.op('PRELU', [x, alpha], [y]);
  m.output(y);
});
def('relu', 'int8 RELU, output scale != input scale', (m) => m.output(unary(m, 'RELU', inA(m), 'output', [0, 2.5])));
def('relu6', 'int8 RELU6 of [-10, 10], output [0, 6]', (m) =>
  m.output(unary(m, 'RELU6', qin(m, 'input', NHWC, i8(20 / 255, 0)), 'output', [0, 6])));
def('relu_n1_to_1', 'int8 RELU_N1_TO_1 of [-2.6, 2.5], output [-1, 1]', (m) => m.output(unary(m, 'RELU_N1_TO_1', inA(m), 'output', [-1, 1])));
def('relu_u8', 'uint8 RELU with output range [-0.5, 2] (the clamp is explicit)', (m) =>
  m.output(unary(m, 'RELU', inA(m, NHWC, 'UINT8'), 'output', [-0.5, 2])));
def('arg_max', 'int8 ARG_MAX over the last axis of [2,3,5,7] -> int32', (m) => {
  const x = inA(m, [2, 3, 5, 7]);
  const y = m.tensor('output', [2, 3, 5], 'INT32');
  m.op('ARG_MAX', [x, i32(m, 'arg_max/axis', [-1])], [y], 'ArgMaxOptions', { output_type: 'INT32' });
  m.output(y);
});
def('batch_matmul', 'int8 BATCH_MATMUL [2,4,6] x constant int8 [6,5] (per tensor, zero point 0)', (m) => {
  const x = inA(m, [2, 4, 6]);
  const w = weights(m, 'batch_matmul/rhs', [6, 5], 1, 6, 'INT8', true);
  const y = rescaled(m, 'output', [2, 4, 5], 'INT8', linearStats(m.stats[x], w));
  m.op('BATCH_MATMUL', [x, w.t], [y], 'BatchMatMulOptions', {});
  m.output(y);
});
def('batch_matmul_inputs_adj_y', 'int8 BATCH_MATMUL of two inputs [3,4,6] x [3,5,6]^T (adj_y)', (m) => {
  const a = inA(m, [3, 4, 6], 'INT8', 'input_a');
  const b = inB(m, [3, 5, 6]);
  const p = binaryStats('MUL', m.stats[a], m.stats[b]);
  const stats = { lo: 6 * p.lo, hi: 6 * p.hi, mean: 6 * p.mean, std: Math.sqrt(6) * p.std };
  const y = rescaled(m, 'output', [3, 4, 5], 'INT8', stats);
  m.op('BATCH_MATMUL', [a, b], [y], 'BatchMatMulOptions', { adj_y: true });
  m.output(y);
});

// -- QUANTIZE / DEQUANTIZE --
def('quantize', 'QUANTIZE float32 [2,3,5] in [-2.4, 2.4) -> int8 scale 0.02 zero point -5', (m) =>
  m.output(quantizeOp(m, m.input('input', [2, 3, 5], 'FLOAT32', { range: [-2.4, 2.4] }), 'output', i8(0.02, -5))));
def('quantize_u8', 'QUANTIZE float32 [2,3,5] in [-1, 3) -> uint8 scale 0.016 zero point 64', (m) =>
  m.output(quantizeOp(m, m.input('input', [2, 3, 5], 'FLOAT32', { range: [-1, 3] }), 'output', u8(0.016, 64))));
def('requantize', 'QUANTIZE int8 (0.02, 3) -> int8 (0.033, -11): requantization between two scales', (m) =>
  m.output(quantizeOp(m, inA(m, [2, 3, 5]), 'output', i8(0.033, -11))));
def('requantize_u8_i8', 'QUANTIZE uint8 (0.015, 120) -> int8 (0.015, -8)', (m) =>
  m.output(quantizeOp(m, inA(m, [2, 3, 5], 'UINT8'), 'output', i8(0.015, -8))));
def('dequantize', 'DEQUANTIZE int8 [2,3,5] -> float32', (m) => m.output(dequantizeOp(m, inA(m, [2, 3, 5]), 'output')));
def('dequantize_u8', 'DEQUANTIZE uint8 [2,3,5] -> float32', (m) => m.output(dequantizeOp(m, inA(m, [2, 3, 5], 'UINT8'), 'output')));

// -- hybrid (dynamic-range) ops and weight-only int8: float activations, int8 weights --
// TFLite quantizes the float input on the fly. lite2onnx does so too for
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, whose outputs are held to
// the float rule (`exactForm`); it dequantizes the weights of the others
// (BATCH_MATMUL, blockwise INT4), compared with the dequantized rule. A
// weight-only model computes in float in TFLite too: the float rule.
const F32 = [1, 5, 7, 3];
function hybridInput(m, shape, { floatRule = false } = {}) {
  const x = m.input('input', shape, 'FLOAT32', { range: [-1, 1] });
  if (!floatRule) m.spec.outputs = { output: { mode: 'dequantized' } };
  return x;
}
function floatOutput(m, name, shape) {
  return m.tensor(name, shape);
}
// FULLY_CONNECTED float [2,16] x `type` weights [8,16] (int8 per channel,
// uint8 per tensor), float bias.
function hybridFullyConnected(m, type, options) {
  const x = hybridInput(m, [2, 16], { floatRule: true });
  const wt = weights(m, 'weights', [8, 16], 0, 16, type);
  const b = m.rand32('bias', [8], 0.3);
  const y = floatOutput(m, 'output', [2, 8]);
  m.op('FULLY_CONNECTED', [x, wt.t, b], [y], 'FullyConnectedOptions', options);
  m.output(y);
}
for (const asymmetric of [false, true]) {
  const tag = asymmetric ? '_asymmetric' : '';
  def(`hybrid_fully_connected${tag}`, `FULLY_CONNECTED float32 [2,16] x int8 per-channel weights [8,16], float bias${asymmetric ? ', asymmetric_quantize_inputs' : ''}`, (m) =>
    hybridFullyConnected(m, 'INT8', { fused_activation_function: 'NONE', asymmetric_quantize_inputs: asymmetric }));
}
// FULLY_CONNECTED float `inShape` x blockwise INT4 weights [units, depth]
// (packed two per byte, low nibble first; BlockwiseQuantization: one float16
// scale per `block` weights of a row, scales [units, depth / block]), as
// LLM exports store their linear layers.
function blockwiseFullyConnected(m, inShape, units, block, withBias) {
  const depth = inShape[inShape.length - 1];
  const x = hybridInput(m, inShape);
  const ints = Array.from({ length: units * depth }, () => randInt(m, -8, 7));
  const bytes = new Uint8Array(Math.ceil(ints.length / 2));
  ints.forEach((v, i) => { bytes[i >> 1] |= (v & 0xf) << (i % 2 ? 4 : 0); });
  const w = m.constantBytes('weights', [units, depth], 'INT4', [...bytes]);
  const scales = Array.from({ length: units * (depth / block) }, () => roundF16((0.5 + m.rand()) / (8 * Math.sqrt(depth))));
  const s = m.f16('weights/scales', [units, depth / block], scales);
  m.tensors[w].quantization = { details_type: 'BlockwiseQuantization', details: { scales: s, zero_points: -1, block_size: block } };
  const b = withBias ? m.rand32('bias', [units], 0.3) : -1;
  const y = floatOutput(m, 'output', [...inShape.slice(0, -1), units]);
  m.op('FULLY_CONNECTED', [x, w, b], [y], 'FullyConnectedOptions', { fused_activation_function: 'NONE', keep_num_dims: inShape.length > 2 });
  m.output(y);
}
def('blockwise_int4_fully_connected', 'FULLY_CONNECTED float32 [2,64] x blockwise INT4 weights [6,64] (blocks of 16, float16 scales [6,4]), float bias', (m) =>
  blockwiseFullyConnected(m, [2, 64], 6, 16, true));
def('blockwise_int4_fully_connected_3d', 'FULLY_CONNECTED float32 [1,4,96] (keep_num_dims) x blockwise INT4 weights [5,96] (blocks of 32, float16 scales [5,3]), no bias', (m) =>
  blockwiseFullyConnected(m, [1, 4, 96], 5, 32, false));
// CONV_2D 3x3 SAME of a float [1,5,7,3] input with `type` weights (int8 per
// channel, uint8 per tensor) and a float bias.
function hybridConv2d(m, type, act) {
  const x = hybridInput(m, F32, { floatRule: true });
  const wt = weights(m, 'weights', [4, 3, 3, 3], 0, 27, type);
  const b = m.rand32('bias', [4], 0.3);
  const y = floatOutput(m, 'output', [1, 5, 7, 4]);
  m.op('CONV_2D', [x, wt.t, b], [y], 'Conv2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, dilation_h_factor: 1, dilation_w_factor: 1,
    fused_activation_function: act,
  });
  m.output(y);
}
def('hybrid_conv2d', 'CONV_2D float32 input x int8 per-channel filter (axis 0), float bias, RELU', (m) =>
  hybridConv2d(m, 'INT8', 'RELU'));
def('hybrid_depthwise', 'DEPTHWISE_CONV_2D float32 input x int8 per-channel filter (axis 3), float bias', (m) => {
  const x = hybridInput(m, F32, { floatRule: true });
  const wt = weights(m, 'weights', [1, 3, 3, 3], 3, 9, 'INT8');
  const b = m.rand32('bias', [3], 0.3);
  const y = floatOutput(m, 'output', F32);
  m.op('DEPTHWISE_CONV_2D', [x, wt.t, b], [y], 'DepthwiseConv2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, depth_multiplier: 1, fused_activation_function: 'NONE',
  });
  m.output(y);
});
def('hybrid_batch_matmul', 'BATCH_MATMUL float32 [2,3,8] x int8 constant [8,5] (per-tensor)', (m) => {
  const x = hybridInput(m, [2, 3, 8]);
  const wt = weights(m, 'weights', [8, 5], 0, 8, 'INT8', true);
  const y = floatOutput(m, 'output', [2, 3, 5]);
  m.op('BATCH_MATMUL', [x, wt.t], [y], 'BatchMatMulOptions', { adj_x: false, adj_y: false });
  m.output(y);
});
// TOCO-era hybrid files: uint8 weights (per tensor, zero point != 0) read
// by float ops; TFLite reads the bytes as int8 with zero point 0. (Its
// DEPTHWISE_CONV_2D and TRANSPOSE_CONV refuse uint8 weights with float input.)
def('hybrid_conv2d_u8', 'CONV_2D float32 input x uint8 per-tensor filter (zero point != 0), float bias', (m) =>
  hybridConv2d(m, 'UINT8', 'NONE'));
def('hybrid_fully_connected_u8', 'FULLY_CONNECTED float32 [2,16] x uint8 per-tensor weights [8,16] (zero point != 0), float bias', (m) =>
  hybridFullyConnected(m, 'UINT8', { fused_activation_function: 'NONE' }));
def('weight_only_conv2d', 'int8 per-channel filter -> DEQUANTIZE -> float CONV_2D (weights kept int8)', (m) => {
  const x = hybridInput(m, F32, { floatRule: true });
  const wt = weights(m, 'weights', [4, 3, 3, 3], 0, 27, 'INT8');
  const w = dequantizeOp(m, wt.t, 'weights_float');
  const b = m.rand32('bias', [4], 0.3);
  const y = floatOutput(m, 'output', [1, 5, 7, 4]);
  m.op('CONV_2D', [x, w, b], [y], 'Conv2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, dilation_h_factor: 1, dilation_w_factor: 1,
    fused_activation_function: 'NONE',
  });
  m.output(y);
});

// -- int16 activations, int8 weights (16x8): no QDQ form below opset 21, so the
// default mode computes them in float32 on their int16 grid --
def('16x8_conv2d', 'int16 CONV_2D 3x3 SAME, int8 per-channel weights, int64 bias', (m) =>
  m.output(conv(m, inA(m, NHWC, 'INT16'), 'output', { filters: 4 })));
def('16x8_depthwise_relu6', 'int16 DEPTHWISE_CONV_2D 3x3 SAME multiplier 2 with fused RELU6, int64 bias', (m) =>
  m.output(depthwise(m, inA(m, NHWC, 'INT16'), 'output', { multiplier: 2, act: 'RELU6' })));
def('16x8_fully_connected', 'int16 FULLY_CONNECTED [3,10] x [6,10]^T, per-tensor int8 weights, int64 bias', (m) =>
  m.output(fullyConnected(m, inA(m, [3, 10], 'INT16'), 'output', { units: 6, perTensor: true })));
def('16x8_add', 'int16 ADD [1,5,7,3] + [1,1,7,1], different scales', (m) =>
  m.output(binary(m, 'ADD', inA(m, NHWC, 'INT16'), inB(m, [1, 1, 7, 1], 'INT16'))));
def('16x8_pool_reshape', 'int16 MAX_POOL_2D 2x2 SAME stride 2 -> RESHAPE (integer copies)', (m) => {
  const p = pool(m, 'MAX_POOL_2D', inA(m, NHWC, 'INT16'), 'pool', { f: [2, 2], stride: [2, 2], padding: 'SAME' });
  m.output(reshape(m, p, 'output', [1, 36]));
});
def('16x8_mul', 'int16 MUL [1,5,7,3] * [1,5,1,3], different scales', (m) =>
  m.output(binary(m, 'MUL', inA(m, NHWC, 'INT16', 'input_a'), inB(m, [1, 5, 1, 3], 'INT16'))));
def('16x8_concat', 'int16 CONCATENATION on axis 3, inputs with the output\'s parameters', (m) =>
  m.output(concat(m, [inA(m, NHWC, 'INT16', 'input_a'), inA(m, [1, 5, 7, 2], 'INT16', 'input_b')], 'output', 3, QA.INT16)));
def('16x8_concat_scales', 'int16 CONCATENATION of inputs with different scales: TFLite copies the integers (unsupported, unlike uint8)', (m) =>
  m.output(concat(m, [inA(m, NHWC, 'INT16', 'input_a'), inB(m, [1, 5, 7, 2], 'INT16')], 'output', 3)));
def('16x8_avg_pool', 'int16 AVERAGE_POOL_2D 3x2 SAME stride 2', (m) =>
  m.output(pool(m, 'AVERAGE_POOL_2D', inA(m, NHWC, 'INT16'), 'output', { f: [3, 2], stride: [2, 2], padding: 'SAME' })));
def('16x8_mean', 'int16 MEAN over [1,2] keep_dims, own output scale', (m) =>
  m.output(reduce(m, 'MEAN', inA(m, NHWC, 'INT16'), 'output', [1, 2], true)));
def('16x8_softmax', 'int16 SOFTMAX [3,10], output scale 1/32768 (TFLite: lookup tables)', (m) =>
  m.output(unary(m, 'SOFTMAX', qin(m, 'input', [3, 10], i16(4 / 32768)), 'output', undefined, 'SoftmaxOptions', { beta: 1 }, i16(1 / 32768))));
def('16x8_logistic', 'int16 LOGISTIC [2,3,5] of [-6, 6], output scale 1/32768 (TFLite: lookup table)', (m) =>
  m.output(unary(m, 'LOGISTIC', qin(m, 'input', [2, 3, 5], i16(6 / 32768)), 'output', undefined, undefined, undefined, i16(1 / 32768))));
def('16x8_tanh', 'int16 TANH [2,3,5] of [-3, 3], output scale 1/32768 (TFLite: lookup table)', (m) =>
  m.output(unary(m, 'TANH', qin(m, 'input', [2, 3, 5], i16(3 / 32768)), 'output', undefined, undefined, undefined, i16(1 / 32768))));
def('16x8_transpose_conv', 'int16 TRANSPOSE_CONV 3x3 SAME stride 2, int8 per-channel weights, int64 bias', (m) =>
  m.output(transposeConv(m, inA(m, [1, 4, 5, 3], 'INT16'), 'output', { filters: 4, stride: [2, 2], padding: 'SAME' })));
def('16x8_quantize_dequantize', 'float32 -> QUANTIZE int16 -> LEAKY_RELU -> DEQUANTIZE -> float32', (m) => {
  const x = m.input('input', [2, 3, 5], 'FLOAT32', { range: [-2, 2] });
  m.spec.outputs = { output: { mode: 'dequantized' } };
  const q = quantizeOp(m, x, 'quantize', fit('INT16', -2, 2));
  const r = unary(m, 'LEAKY_RELU', q, 'leaky', [-0.5, 2], 'LeakyReluOptions', { alpha: 0.2 });
  m.output(dequantizeOp(m, r, 'output'));
});
def('16x8_mixed_with_int8', 'float32 -> QUANTIZE int8 -> CONV_2D int8 -> DEQUANTIZE -> QUANTIZE int16 -> CONV_2D 16x8 -> DEQUANTIZE -> float32 (the int8 part stays QDQ)', (m) => {
  const x = m.input('input', NHWC, 'FLOAT32', { range: [-2, 2] });
  m.spec.outputs = { output: { mode: 'dequantized' } };
  const c8 = conv(m, quantizeOp(m, x, 'quantize_int8', fit('INT8', -2, 2)), 'conv_int8', { filters: 4, act: 'RELU6' });
  const f = dequantizeOp(m, c8, 'conv_int8_float');
  const q16 = quantizeOp(m, f, 'quantize_int16', fit('INT16', 0, 6));
  m.stats[q16] = m.stats[c8];
  const c16 = conv(m, q16, 'conv_int16', { filters: 3 });
  m.output(dequantizeOp(m, c16, 'output'));
});

// -- small graphs --
def('float_io_chain', 'float32 -> QUANTIZE -> CONV_2D (RELU6) -> DEPTHWISE_CONV_2D -> ADD -> AVERAGE_POOL_2D -> DEQUANTIZE -> float32', (m) => {
  const x = m.input('input', NHWC, 'FLOAT32', { range: [-2, 2] });
  m.spec.outputs = { output: { mode: 'dequantized' } };
  const q = quantizeOp(m, x, 'quantize', fit('INT8', -2, 2));
  const c = conv(m, q, 'conv', { filters: 4, act: 'RELU6' });
  const d = depthwise(m, c, 'depthwise', {});
  const a = binary(m, 'ADD', d, c, 'add');
  const p = pool(m, 'AVERAGE_POOL_2D', a, 'pool', { f: [2, 2], stride: [2, 2], padding: 'SAME' });
  m.output(dequantizeOp(m, p, 'output'));
});
def('two_consumers', 'int8 CONV_2D read by MAX_POOL_2D, RELU (own scale) and as a graph output; ADD of the two', (m) => {
  const c = conv(m, inA(m), 'conv', { filters: 4 });
  const p = pool(m, 'MAX_POOL_2D', c, 'pool', { f: [3, 3], stride: [1, 1], padding: 'SAME' });
  const r = unary(m, 'RELU', c, 'relu', [0, m.stats[c].hi]);
  m.output(binary(m, 'ADD', p, r, 'output'));
  m.output(c);
});
def('mini_mobilenet', 'int8 CONV_2D s2 (RELU6) -> DEPTHWISE_CONV_2D (RELU6) -> global AVERAGE_POOL_2D -> CONV_2D 1x1 -> RESHAPE -> SOFTMAX', (m) => {
  let t = conv(m, qin(m, 'input', [1, 9, 11, 3], i8(1 / 128, 0)), 'stem/conv', { filters: 8, stride: [2, 2], act: 'RELU6' });
  t = depthwise(m, t, 'block/depthwise', { act: 'RELU6' });
  t = pool(m, 'AVERAGE_POOL_2D', t, 'head/pool', { f: [5, 6], stride: [1, 1], padding: 'VALID' });
  t = conv(m, t, 'head/conv', { filters: 5, k: [1, 1] });
  t = reshape(m, t, 'head/reshape', [1, 5]);
  m.output(unary(m, 'SOFTMAX', t, 'output', undefined, 'SoftmaxOptions', { beta: 1 }, i8(1 / 256, -128)));
});

writeModels({ dir: JSON_DIR, prefix: 'q_', models: MODELS, specsFile: SPECS_FILE });
