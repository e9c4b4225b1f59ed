#!/usr/bin/env node
// Writes the TFLite test models of the reduction and normalization operators
// (SUM, REDUCE_MAX/MIN/PROD, ARG_MAX/ARG_MIN, LOG_SOFTMAX, L2_NORMALIZATION,
// LOCAL_RESPONSE_NORMALIZATION, TOPK_V2) as FlatBuffer JSON into
// tests/models/json/reduce_*.json, plus tests/models/specs_reduce.json.
//
//   node tests/models/make_models_reduce.mjs     # from the repository root
//
// Same conventions as make_models.mjs (see tests/models/README.md), built with
// lib/model.mjs; only the reduce_* files are touched. Node >= 18, no
// dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatIndented, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_reduce.json');
const PREFIX = 'reduce_';

// ---- op helpers (output shapes as TFLite computes them) ---------------------

// 1x1 or 3x3 SAME stride-1 convolution with bias: its output runs in NCHW.
// `biasOffset` moves the outputs away from 0 (for products).
function conv(m, x, filters, k = 1, biasOffset = 0) {
  const [n, h, w, c] = m.shape(x);
  const wt = m.rand32('conv/weights', [filters, k, k, c], 1 / Math.sqrt(k * k * c));
  const b = m.constant('conv/bias', [filters], 'FLOAT32', m.randomValues(filters, 0.1).map((v) => v + biasOffset));
  const y = m.tensor('conv', [n, h, w, filters]);
  m.op('CONV_2D', [x, wt, b], [y], 'Conv2DOptions', {
    padding: 'SAME', stride_h: 1, stride_w: 1, dilation_h_factor: 1, dilation_w_factor: 1,
    fused_activation_function: 'NONE',
  });
  return y;
}

function reduce(m, kind, x, axes, keepDims) {
  const shape = m.shape(x);
  const norm = axes.map((a) => (a < 0 ? a + shape.length : a));
  const out = [];
  shape.forEach((d, i) => {
    if (!norm.includes(i)) out.push(d);
    else if (keepDims) out.push(1);
  });
  const a = m.constant(`${kind.toLowerCase()}/axes`, [axes.length], 'INT32', axes);
  const y = m.tensor('output', out, m.tensors[x].type);
  m.op(kind, [x, a], [y], 'ReducerOptions', { keep_dims: keepDims });
  return y;
}

function argReduce(m, kind, x, axis, outputType = 'INT32') {
  const shape = m.shape(x);
  const ax = axis < 0 ? axis + shape.length : axis;
  const a = m.constant(`${kind.toLowerCase()}/axis`, [1], 'INT32', [axis]);
  const y = m.tensor('output', shape.filter((_, i) => i !== ax), outputType);
  const optionsType = kind === 'ARG_MAX' ? 'ArgMaxOptions' : 'ArgMinOptions';
  m.op(kind, [x, a], [y], optionsType, { output_type: outputType });
  return y;
}

function sameShape(m, kind, x, optionsType, options) {
  const y = m.tensor('output', m.shape(x));
  m.op(kind, [x], [y], optionsType, options);
  return y;
}

function topk(m, x, k) {
  const shape = m.shape(x);
  const kt = m.constant('topk/k', [], 'INT32', [k]);
  const out = [...shape.slice(0, -1), k];
  const values = m.tensor('output_values', out);
  const indices = m.tensor('output_indices', out, 'INT32');
  m.op('TOPK_V2', [x, kt], [values, indices], 'TopKV2Options', {});
  return [values, indices];
}

// ---- models -------------------------------------------------------------------

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: PREFIX + name, description, build });

const NHWC = [1, 5, 7, 3];

def('sum_hw_keep', 'SUM over axes [1,2] keep_dims true, [1,5,7,3] -> [1,1,1,3]', (m) => {
  m.output(reduce(m, 'SUM', m.input('input', NHWC), [1, 2], true));
});
def('sum_neg_axes', 'SUM over axes [-1,-3] keep_dims false, [2,5,7,3] -> [2,7]', (m) => {
  m.output(reduce(m, 'SUM', m.input('input', [2, 5, 7, 3]), [-1, -3], false));
});
// An empty constant has no data, which makes it a run-time tensor: the empty
// axes list comes in as a graph input of shape [0].
def('sum_empty_axes', 'SUM over no axes (graph input axes of shape [0]): a copy, [4,5,6]', (m) => {
  // LiteRT.js refuses the empty axes input in a fresh worker ("Failed to get
  // num packed bytes") and returns stale memory after other models: tfjs-tflite.
  m.spec.reference = 'tfjs';
  const x = m.input('input', [4, 5, 6]);
  const axes = m.tensor('axes', [0], 'INT32');
  m.inputs.push(axes);
  const y = m.tensor('output', [4, 5, 6]);
  m.op('SUM', [x, axes], [y], 'ReducerOptions', { keep_dims: false });
  m.output(y);
});
def('sum_after_conv', 'CONV_2D -> SUM over [1,2] keep_dims false, [1,5,7,4] -> [1,4]', (m) => {
  m.output(reduce(m, 'SUM', conv(m, m.input('input', NHWC), 4), [1, 2], false));
});
def('sum_i32', 'SUM of int32 over axis [0] keep_dims false, [3,4] -> [4]', (m) => {
  m.output(reduce(m, 'SUM', m.input('input', [3, 4], 'INT32', [-1000, 1000]), [0], false));
});
def('reduce_max_i32', 'REDUCE_MAX of int32 over axis [-1] keep_dims true, [3,4,5] -> [3,4,1]', (m) => {
  m.output(reduce(m, 'REDUCE_MAX', m.input('input', [3, 4, 5], 'INT32', [-1000, 1000]), [-1], true));
});
def('reduce_max_keep', 'REDUCE_MAX over axis [2] keep_dims true, [2,5,7,3] -> [2,5,1,3]', (m) => {
  m.output(reduce(m, 'REDUCE_MAX', m.input('input', [2, 5, 7, 3]), [2], true));
});
def('reduce_max_after_conv', 'CONV_2D -> REDUCE_MAX over [-1] (channels) keep_dims false, [1,5,7,4] -> [1,5,7]', (m) => {
  m.output(reduce(m, 'REDUCE_MAX', conv(m, m.input('input', NHWC), 4), [-1], false));
});
def('reduce_min_neg', 'REDUCE_MIN over axes [-2,0] keep_dims false, [4,5,6] -> [6]', (m) => {
  m.output(reduce(m, 'REDUCE_MIN', m.input('input', [4, 5, 6]), [-2, 0], false));
});
def('reduce_min_after_conv', 'CONV_2D -> REDUCE_MIN over [1] keep_dims true, [1,5,7,4] -> [1,1,7,4]', (m) => {
  m.output(reduce(m, 'REDUCE_MIN', conv(m, m.input('input', NHWC), 4), [1], true));
});
def('reduce_prod', 'REDUCE_PROD over axis [1] keep_dims false, [3,4,5] -> [3,5]', (m) => {
  m.output(reduce(m, 'REDUCE_PROD', m.input('input', [3, 4, 5], 'FLOAT32', [0.5, 1.5]), [1], false));
});
def('reduce_prod_after_conv', 'CONV_2D (bias near 1) -> REDUCE_PROD over [-1, 2] keep_dims true, [1,5,7,4] -> [1,5,1,1]', (m) => {
  m.output(reduce(m, 'REDUCE_PROD', conv(m, m.input('input', NHWC, 'FLOAT32', [-0.5, 0.5]), 4, 1, 1), [-1, 2], true));
});
def('arg_max', 'ARG_MAX axis 1, int32 output, [3,8,5] -> [3,5]', (m) => {
  m.output(argReduce(m, 'ARG_MAX', m.input('input', [3, 8, 5]), 1));
});
def('arg_max_neg_i64', 'ARG_MAX axis -1, int64 output, [3,8,5] -> [3,8]', (m) => {
  m.output(argReduce(m, 'ARG_MAX', m.input('input', [3, 8, 5]), -1, 'INT64'));
});
def('arg_min', 'ARG_MIN axis 0, int32 output, [3,8,5] -> [8,5]', (m) => {
  m.output(argReduce(m, 'ARG_MIN', m.input('input', [3, 8, 5]), 0));
});
def('arg_max_after_conv', 'CONV_2D -> ARG_MAX axis 3 (channels), [1,5,7,6] -> [1,5,7]', (m) => {
  m.output(argReduce(m, 'ARG_MAX', conv(m, m.input('input', NHWC), 6), 3));
});
def('arg_min_after_conv', 'CONV_2D -> ARG_MIN axis -3 (height), [1,5,7,6] -> [1,7,6]', (m) => {
  m.output(argReduce(m, 'ARG_MIN', conv(m, m.input('input', NHWC), 6), -3));
});
def('log_softmax', 'LOG_SOFTMAX on rank-2 [3,10]', (m) => {
  m.output(sameShape(m, 'LOG_SOFTMAX', m.input('input', [3, 10], 'FLOAT32', [-4, 4]), 'LogSoftmaxOptions', {}));
});
def('log_softmax_after_conv', 'CONV_2D -> LOG_SOFTMAX on rank-4 [1,5,7,6] (channels)', (m) => {
  m.output(sameShape(m, 'LOG_SOFTMAX', conv(m, m.input('input', NHWC), 6), 'LogSoftmaxOptions', {}));
});
def('l2_norm', 'L2_NORMALIZATION on rank-2 [3,10] (last axis)', (m) => {
  m.output(sameShape(m, 'L2_NORMALIZATION', m.input('input', [3, 10]), 'L2NormOptions',
    { fused_activation_function: 'NONE' }));
});
def('l2_norm_tiny', 'L2_NORMALIZATION of inputs in [-1e-7, 1e-7): the norm is below epsilon 1e-6, [3,10]', (m) => {
  m.output(sameShape(m, 'L2_NORMALIZATION', m.input('input', [3, 10], 'FLOAT32', [-1e-7, 1e-7]), 'L2NormOptions',
    { fused_activation_function: 'NONE' }));
});
def('l2_norm_after_conv', 'CONV_2D -> L2_NORMALIZATION on rank-4 [1,5,7,6] (channels)', (m) => {
  m.output(sameShape(m, 'L2_NORMALIZATION', conv(m, m.input('input', NHWC), 6), 'L2NormOptions',
    { fused_activation_function: 'NONE' }));
});
def('lrn', 'LOCAL_RESPONSE_NORMALIZATION radius 2, bias 1, alpha 0.5, beta 0.75 on [1,5,7,6]', (m) => {
  m.output(sameShape(m, 'LOCAL_RESPONSE_NORMALIZATION', m.input('input', [1, 5, 7, 6], 'FLOAT32', [-2, 2]),
    'LocalResponseNormalizationOptions', { radius: 2, bias: 1.0, alpha: 0.5, beta: 0.75 }));
});
def('lrn_after_conv', 'CONV_2D -> LOCAL_RESPONSE_NORMALIZATION radius 1, bias 2, alpha 0.25, beta 0.5 on [1,5,7,8]', (m) => {
  m.output(sameShape(m, 'LOCAL_RESPONSE_NORMALIZATION', conv(m, m.input('input', NHWC), 8, 3),
    'LocalResponseNormalizationOptions', { radius: 1, bias: 2.0, alpha: 0.25, beta: 0.5 }));
});
def('topk', 'TOPK_V2 k 4 along the last axis of [3,10] -> values, int32 indices [3,4]', (m) => {
  m.output(...topk(m, m.input('input', [3, 10]), 4));
});
def('topk_runtime_k', 'TOPK_V2 with k a run-time int32 scalar input (in [0, 9]) along the last axis of [3,9]: [3,?] outputs', (m) => {
  const x = m.input('input', [3, 9]);
  const k = m.input('k', [], 'INT32', { range: [0, 9] });
  const values = m.tensor('output_values', [3, 1], 'FLOAT32', { shape_signature: [3, -1] });
  const indices = m.tensor('output_indices', [3, 1], 'INT32', { shape_signature: [3, -1] });
  m.op('TOPK_V2', [x, k], [values, indices], 'TopKV2Options', {});
  m.output(values, indices);
  // LiteRT.js hands back the declared [3, 1] buffers of outputs whose shape
  // the op computes at run time; tfjs-tflite resizes them.
  m.spec.reference = 'tfjs';
});
def('topk_after_conv', 'CONV_2D -> TOPK_V2 k 3 along channels of [1,5,7,8] -> [1,5,7,3]', (m) => {
  m.output(...topk(m, conv(m, m.input('input', NHWC), 8), 3));
});

writeModels({ dir: JSON_DIR, prefix: PREFIX, models: MODELS, specsFile: SPECS_FILE, style: formatIndented });
