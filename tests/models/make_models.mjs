#!/usr/bin/env node
// Writes the per-operator TFLite test models of lite2onnx as FlatBuffer JSON
// (against core/tflite/schema.fbs) into tests/models/json/, plus
// tests/models/specs.json (input domains that a test must respect).
//
//   node tests/models/make_models.mjs            # from the repository root
//
// The build compiles each JSON with
//   flatc -b -o OUTDIR core/tflite/schema.fbs tests/models/json/NAME.json
// into NAME.tflite. Output is deterministic: weights come from a seeded PRNG
// whose seed is derived from the model name, so adding a model changes no
// other file. The builder is lib/model.mjs. Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatWrapped, writeModels } from './lib/model.mjs';
import {
  conv2d, depthwise, pool, transposeConv, fullyConnected, binary, unary, reshape, concat, mean,
  padOp, transpose, resize, softmax, split, splitV, squeeze, stridedSlice, shapeOp, pack, unpack,
  gather, expandDims, fill, spaceToDepth, spaceToBatch, batchToSpace, atrousPaddings, atrousConv,
} from './lib/ops.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs.json');

// ---------------------------------------------------------------------------
// The models

const MODELS = [];

// Register a model: build(g) adds inputs, ops and outputs to the graph.
function def(name, description, build) {
  if (MODELS.some((m) => m.name === name)) throw new Error(`duplicate model ${name}`);
  MODELS.push({ name, description, build });
}

// A shape used by many single-op models: every dimension distinct.
const NHWC = [1, 5, 7, 3];

// Integer arithmetic inputs stay small so that no result overflows int32.
const I32_RANGE = [-1000, 1000];

// --- Unary elementwise ------------------------------------------------------

def('abs', 'ABS on [1,5,7,3]', (g) => {
  g.output(unary(g, 'ABS', g.input('input', NHWC), 'output'));
});
def('hard_swish', 'HARD_SWISH on [1,5,7,3]', (g) => {
  g.output(unary(g, 'HARD_SWISH', g.input('input', NHWC, 'FLOAT32', [-5, 5]), 'output'));
});
def('leaky_relu', 'LEAKY_RELU alpha 0.2 on [1,5,7,3]', (g) => {
  g.output(unary(g, 'LEAKY_RELU', g.input('input', NHWC), 'output', 'LeakyReluOptions', { alpha: 0.2 }));
});
def('logistic', 'LOGISTIC on rank-3 [2,3,5]', (g) => {
  g.output(unary(g, 'LOGISTIC', g.input('input', [2, 3, 5], 'FLOAT32', [-6, 6]), 'output'));
});
def('relu', 'RELU on [1,5,7,3]', (g) => {
  g.output(unary(g, 'RELU', g.input('input', NHWC), 'output'));
});
def('relu_n1_to_1', 'RELU_N1_TO_1 on [1,5,7,3]', (g) => {
  g.output(unary(g, 'RELU_N1_TO_1', g.input('input', NHWC, 'FLOAT32', [-3, 3]), 'output'));
});
def('relu6', 'RELU6 on [1,5,7,3]', (g) => {
  g.output(unary(g, 'RELU6', g.input('input', NHWC, 'FLOAT32', [-10, 10]), 'output'));
});
def('rsqrt', 'RSQRT on [1,5,7,3], positive input', (g) => {
  g.output(unary(g, 'RSQRT', g.input('input', NHWC, 'FLOAT32', [0.1, 4]), 'output'));
});
def('sqrt', 'SQRT on [1,5,7,3], non-negative input', (g) => {
  g.output(unary(g, 'SQRT', g.input('input', NHWC, 'FLOAT32', [0, 4]), 'output'));
});
def('tanh', 'TANH on rank-2 [4,6]', (g) => {
  g.output(unary(g, 'TANH', g.input('input', [4, 6], 'FLOAT32', [-3, 3]), 'output'));
});

// --- Binary elementwise -----------------------------------------------------

def('add', 'ADD of two graph inputs [1,5,7,3]', (g) => {
  g.output(binary(g, 'ADD', g.input('input_a', NHWC), g.input('input_b', NHWC), 'output'));
});
def('add_relu', 'ADD of two graph inputs with fused RELU', (g) => {
  g.output(binary(g, 'ADD', g.input('input_a', NHWC), g.input('input_b', NHWC), 'output', 'RELU'));
});
def('add_bcast_c', 'ADD of [1,5,7,3] and a constant [3]', (g) => {
  g.output(binary(g, 'ADD', g.input('input', NHWC), g.rand32('bias', [3]), 'output'));
});
def('add_bcast_111c', 'ADD of [1,5,7,3] and a constant [1,1,1,3]', (g) => {
  g.output(binary(g, 'ADD', g.input('input', NHWC), g.rand32('bias', [1, 1, 1, 3]), 'output'));
});
def('add_bcast_inputs', 'ADD of graph inputs [1,5,7,3] and [7,1] (rank-changing broadcast)', (g) => {
  g.output(binary(g, 'ADD', g.input('input_a', NHWC), g.input('input_b', [7, 1]), 'output'));
});
def('add_i32', 'ADD of two int32 graph inputs [2,3,4]', (g) => {
  g.output(binary(g, 'ADD', g.input('input_a', [2, 3, 4], 'INT32', I32_RANGE), g.input('input_b', [2, 3, 4], 'INT32', I32_RANGE), 'output'));
});
def('sub_relu', 'SUB of two graph inputs with fused RELU', (g) => {
  g.output(binary(g, 'SUB', g.input('input_a', NHWC), g.input('input_b', NHWC), 'output', 'RELU'));
});
def('sub_bcast_w', 'SUB of [1,5,7,3] minus a constant [1,1,7,1] (broadcast along W)', (g) => {
  g.output(binary(g, 'SUB', g.input('input', NHWC), g.rand32('offset', [1, 1, 7, 1]), 'output'));
});
def('sub_i32', 'SUB of two int32 graph inputs [2,3,4]', (g) => {
  g.output(binary(g, 'SUB', g.input('input_a', [2, 3, 4], 'INT32', I32_RANGE), g.input('input_b', [2, 3, 4], 'INT32', I32_RANGE), 'output'));
});
def('mul_relu6', 'MUL of two graph inputs with fused RELU6', (g) => {
  g.output(binary(g, 'MUL', g.input('input_a', NHWC, 'FLOAT32', [-4, 4]), g.input('input_b', NHWC, 'FLOAT32', [-4, 4]), 'output', 'RELU6'));
});
def('mul_bcast_hw', 'MUL of [1,5,7,3] and a constant [1,5,7,1] (broadcast along C)', (g) => {
  g.output(binary(g, 'MUL', g.input('input', NHWC), g.rand32('scale', [1, 5, 7, 1], 2), 'output'));
});
def('mul_i32', 'MUL of an int32 graph input [2,3,4] and an int32 constant [4]', (g) => {
  g.output(binary(g, 'MUL', g.input('input', [2, 3, 4], 'INT32', I32_RANGE), g.randI32('scale', [4], -5, 5), 'output'));
});
def('div', 'DIV of two graph inputs [1,5,7,3] (divisor kept away from 0)', (g) => {
  g.output(binary(g, 'DIV', g.input('input_a', NHWC), g.input('input_b', NHWC, 'FLOAT32', [0.5, 2]), 'output'));
});
def('pow', 'POW of two graph inputs [1,5,7,3] (positive base)', (g) => {
  g.output(binary(g, 'POW', g.input('input_a', NHWC, 'FLOAT32', [0.5, 2]), g.input('input_b', NHWC, 'FLOAT32', [-2, 2]), 'output'));
});
def('squared_difference', 'SQUARED_DIFFERENCE of two graph inputs [1,5,7,3]', (g) => {
  g.output(binary(g, 'SQUARED_DIFFERENCE', g.input('input_a', NHWC), g.input('input_b', NHWC), 'output'));
});
def('prelu_alpha_11c', 'PRELU on [1,5,7,3] with alpha [1,1,3]', (g) => {
  const x = g.input('input', NHWC);
  g.output(binary(g, 'PRELU', x, g.f32('alpha', [1, 1, 3], [0.1, 0.25, 0.5]), 'output'));
});
def('prelu_alpha_c', 'PRELU on [1,5,7,3] with alpha [3]', (g) => {
  const x = g.input('input', NHWC);
  g.output(binary(g, 'PRELU', x, g.f32('alpha', [3], [0.2, -0.5, 0.75]), 'output'));
});

// --- Convolutions -----------------------------------------------------------

def('conv2d_same_s1', 'CONV_2D 3x3 SAME stride 1, [1,7,9,4] -> [1,7,9,6]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 7, 9, 4]), 'output', { filters: 6, kh: 3, kw: 3 }));
});
def('conv2d_valid_s1', 'CONV_2D 3x3 VALID stride 1, [1,7,9,4] -> [1,5,7,6]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 7, 9, 4]), 'output', { filters: 6, kh: 3, kw: 3, padding: 'VALID' }));
});
def('conv2d_same_s2', 'CONV_2D 3x3 SAME stride 2, [1,9,11,4] -> [1,5,6,7]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 9, 11, 4]), 'output', { filters: 7, kh: 3, kw: 3, stride: [2, 2] }));
});
def('conv2d_valid_s2', 'CONV_2D 3x3 VALID stride 2, [1,9,11,4] -> [1,4,5,7]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 9, 11, 4]), 'output', { filters: 7, kh: 3, kw: 3, stride: [2, 2], padding: 'VALID' }));
});
def('conv2d_k3x5', 'CONV_2D non-square 3x5 kernel SAME stride 1, [1,7,9,4] -> [1,7,9,6]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 7, 9, 4]), 'output', { filters: 6, kh: 3, kw: 5 }));
});
def('conv2d_k3x5_valid_s1x2', 'CONV_2D 3x5 kernel VALID, stride h1 w2, [1,7,10,4] -> [1,5,3,6]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 7, 10, 4]), 'output', { filters: 6, kh: 3, kw: 5, stride: [1, 2], padding: 'VALID' }));
});
def('conv2d_dilation2', 'CONV_2D 3x3 dilation 2 SAME, [1,9,11,4] -> [1,9,11,6]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 9, 11, 4]), 'output', { filters: 6, kh: 3, kw: 3, dilation: [2, 2] }));
});
def('conv2d_dilation2x3_valid', 'CONV_2D 3x3 dilation h2 w3 VALID, [1,10,13,4] -> [1,6,7,5]', (g) => {
  g.output(conv2d(g, g.input('input', [1, 10, 13, 4]), 'output', { filters: 5, kh: 3, kw: 3, dilation: [2, 3], padding: 'VALID' }));
});
def('conv2d_1x1', 'CONV_2D pointwise 1x1, [1,5,7,3] -> [1,5,7,8]', (g) => {
  g.output(conv2d(g, g.input('input', NHWC), 'output', { filters: 8, kh: 1, kw: 1 }));
});
// Note: TFLite's CONV_2D kernel ignores a fused TANH (its activation range
// helper only clamps for the RELU family), so the runtime's result for
// conv2d_tanh is the plain convolution. See README.md.
for (const act of ['RELU', 'RELU6', 'RELU_N1_TO_1', 'TANH']) {
  def(`conv2d_${act.toLowerCase()}`, `CONV_2D 3x3 SAME with fused ${act}, [1,6,8,2] -> [1,6,8,5]`, (g) => {
    g.output(conv2d(g, g.input('input', [1, 6, 8, 2], 'FLOAT32', [-8, 8]), 'output', { filters: 5, kh: 3, kw: 3, act }));
  });
}
// No CONV_2D without bias: TFLite's conv kernel rejects it in both spellings
// (bias input -1: "Tensor at index 2 was optional but was expected"; two
// inputs: "has_bias was not true"), and so does DEPTHWISE_CONV_2D. Bias-less
// weights are covered by fully_connected_nobias and the transpose_conv_* models.
def('dequantize_f16_conv', 'float16 constant weights -> DEQUANTIZE -> CONV_2D, [1,7,9,4] -> [1,7,9,6]', (g) => {
  const x = g.input('input', [1, 7, 9, 4]);
  const w16 = g.f16('conv/weights_f16', [6, 3, 3, 4], g.randomValues(6 * 3 * 3 * 4, 1 / 6));
  const w = g.tensor('conv/weights', [6, 3, 3, 4]);
  g.op('DEQUANTIZE', [w16], [w]);
  g.output(conv2d(g, x, 'output', { filters: 6, kh: 3, kw: 3, weight: w }));
});

def('depthwise_m1', 'DEPTHWISE_CONV_2D 3x3 multiplier 1 SAME, [1,7,9,4] -> [1,7,9,4]', (g) => {
  g.output(depthwise(g, g.input('input', [1, 7, 9, 4]), 'output', { kh: 3, kw: 3 }));
});
def('depthwise_m2', 'DEPTHWISE_CONV_2D 3x5 multiplier 2 SAME, [1,7,9,3] -> [1,7,9,6]', (g) => {
  g.output(depthwise(g, g.input('input', [1, 7, 9, 3]), 'output', { kh: 3, kw: 5, multiplier: 2 }));
});
def('depthwise_s2_relu6', 'DEPTHWISE_CONV_2D 3x3 VALID stride 2 fused RELU6, [1,9,11,6] -> [1,4,5,6]', (g) => {
  g.output(depthwise(g, g.input('input', [1, 9, 11, 6], 'FLOAT32', [-8, 8]), 'output', { kh: 3, kw: 3, stride: [2, 2], padding: 'VALID', act: 'RELU6' }));
});
def('depthwise_same_s2', 'DEPTHWISE_CONV_2D 3x3 SAME stride 2, [1,9,11,4] -> [1,5,6,4]', (g) => {
  g.output(depthwise(g, g.input('input', [1, 9, 11, 4]), 'output', { kh: 3, kw: 3, stride: [2, 2] }));
});

def('transpose_conv_same_s2', 'TRANSPOSE_CONV 3x3 SAME stride 2, [1,4,5,2] -> [1,8,10,6]', (g) => {
  g.output(transposeConv(g, g.input('input', [1, 4, 5, 2]), 'output', { filters: 6, kh: 3, kw: 3, stride: [2, 2], padding: 'SAME' }));
});
def('transpose_conv_valid_s2', 'TRANSPOSE_CONV 3x4 VALID stride 2, [1,4,5,2] -> [1,9,12,7]', (g) => {
  g.output(transposeConv(g, g.input('input', [1, 4, 5, 2]), 'output', { filters: 7, kh: 3, kw: 4, stride: [2, 2], padding: 'VALID' }));
});
def('transpose_conv_valid_s1', 'TRANSPOSE_CONV 2x4 VALID stride 1, [1,4,5,3] -> [1,5,8,6]', (g) => {
  g.output(transposeConv(g, g.input('input', [1, 4, 5, 3]), 'output', { filters: 6, kh: 2, kw: 4, stride: [1, 1], padding: 'VALID' }));
});
def('transpose_conv_bias', 'TRANSPOSE_CONV 3x3 SAME stride 2 with bias (4th input), [1,4,5,2] -> [1,8,10,6]', (g) => {
  g.output(transposeConv(g, g.input('input', [1, 4, 5, 2]), 'output', { filters: 6, kh: 3, kw: 3, stride: [2, 2], padding: 'SAME', bias: true }));
});

// --- Fully connected --------------------------------------------------------

def('fully_connected', 'FULLY_CONNECTED rank-2 [3,10] -> [3,7] with bias', (g) => {
  g.output(fullyConnected(g, g.input('input', [3, 10]), 'output', { units: 7 }));
});
def('fully_connected_nobias', 'FULLY_CONNECTED rank-2 [3,10] -> [3,7], bias input -1', (g) => {
  g.output(fullyConnected(g, g.input('input', [3, 10]), 'output', { units: 7, bias: false }));
});
def('fully_connected_relu', 'FULLY_CONNECTED rank-2 [3,10] -> [3,7] with fused RELU', (g) => {
  g.output(fullyConnected(g, g.input('input', [3, 10]), 'output', { units: 7, act: 'RELU' }));
});
def('fully_connected_rank3_keep', 'FULLY_CONNECTED rank-3 [2,5,6] keep_num_dims true -> [2,5,4]', (g) => {
  g.output(fullyConnected(g, g.input('input', [2, 5, 6]), 'output', { units: 4, keepNumDims: true }));
});
def('fully_connected_rank3_flat', 'FULLY_CONNECTED rank-3 [2,5,6] keep_num_dims false -> [10,4]', (g) => {
  g.output(fullyConnected(g, g.input('input', [2, 5, 6]), 'output', { units: 4, keepNumDims: false }));
});

// --- Pooling ----------------------------------------------------------------

const POOL_IN = [1, 9, 11, 3];
def('avg_pool_same_s2', 'AVERAGE_POOL_2D 3x2 filter SAME stride 2, [1,9,11,3] -> [1,5,6,3]', (g) => {
  g.output(pool(g, 'AVERAGE_POOL_2D', g.input('input', POOL_IN), 'output', { fh: 3, fw: 2, stride: [2, 2], padding: 'SAME' }));
});
def('avg_pool_valid_s2', 'AVERAGE_POOL_2D 3x2 filter VALID stride 2, [1,9,11,3] -> [1,4,5,3]', (g) => {
  g.output(pool(g, 'AVERAGE_POOL_2D', g.input('input', POOL_IN), 'output', { fh: 3, fw: 2, stride: [2, 2], padding: 'VALID' }));
});
def('avg_pool_relu6', 'AVERAGE_POOL_2D 3x3 SAME stride 2 with fused RELU6, [1,9,11,3] -> [1,5,6,3]', (g) => {
  g.output(pool(g, 'AVERAGE_POOL_2D', g.input('input', POOL_IN, 'FLOAT32', [-10, 10]), 'output', { fh: 3, fw: 3, stride: [2, 2], padding: 'SAME', act: 'RELU6' }));
});
def('max_pool_same_s2', 'MAX_POOL_2D 3x2 filter SAME stride 2, [1,9,11,3] -> [1,5,6,3]', (g) => {
  g.output(pool(g, 'MAX_POOL_2D', g.input('input', POOL_IN), 'output', { fh: 3, fw: 2, stride: [2, 2], padding: 'SAME' }));
});
def('max_pool_valid_s2', 'MAX_POOL_2D 2x3 filter VALID stride 2, [1,9,11,3] -> [1,4,5,3]', (g) => {
  g.output(pool(g, 'MAX_POOL_2D', g.input('input', POOL_IN), 'output', { fh: 2, fw: 3, stride: [2, 2], padding: 'VALID' }));
});

// --- Concatenation ----------------------------------------------------------

def('concat_convs_axis3', 'two CONV_2D branches -> CONCATENATION axis 3, [1,6,8,3] -> [1,6,8,9]', (g) => {
  const x = g.input('input', [1, 6, 8, 3]);
  const a = conv2d(g, x, 'branch_a', { filters: 4, kh: 3, kw: 3 });
  const b = conv2d(g, x, 'branch_b', { filters: 5, kh: 1, kw: 1 });
  g.output(concat(g, [a, b], 'output', 3));
});
def('concat_axis_neg1', 'CONCATENATION axis -1 of graph inputs [2,3,4] and [2,3,5]', (g) => {
  g.output(concat(g, [g.input('input_a', [2, 3, 4]), g.input('input_b', [2, 3, 5])], 'output', -1));
});
def('concat_rank2_axis1', 'CONCATENATION axis 1 of rank-2 [3,4], a constant [3,2] and [3,6]', (g) => {
  const a = g.input('input_a', [3, 4]);
  const c = g.rand32('middle', [3, 2]);
  const b = g.input('input_b', [3, 6]);
  g.output(concat(g, [a, c, b], 'output', 1));
});
def('concat_i32', 'CONCATENATION axis 1 of int32 graph inputs [2,3,4] and [2,5,4]', (g) => {
  g.output(concat(g, [g.input('input_a', [2, 3, 4], 'INT32'), g.input('input_b', [2, 5, 4], 'INT32')], 'output', 1));
});

// --- Reductions -------------------------------------------------------------

def('mean_hw_keep', 'MEAN over axes [1,2] keep_dims true, [1,5,7,3] -> [1,1,1,3]', (g) => {
  g.output(mean(g, g.input('input', NHWC), 'output', [1, 2], true));
});
def('mean_hw', 'MEAN over axes [1,2] keep_dims false, [1,5,7,3] -> [1,3]', (g) => {
  g.output(mean(g, g.input('input', NHWC), 'output', [1, 2], false));
});
def('mean_last', 'MEAN over axis [-1] keep_dims false, [1,5,7,3] -> [1,5,7]', (g) => {
  g.output(mean(g, g.input('input', NHWC), 'output', [-1], false));
});

// --- Padding ----------------------------------------------------------------

def('pad', 'PAD [[0,0],[1,2],[3,0],[0,1]], [1,5,7,3] -> [1,8,10,4]', (g) => {
  g.output(padOp(g, 'PAD', g.input('input', NHWC), 'output', [[0, 0], [1, 2], [3, 0], [0, 1]]));
});
def('pad_i32', 'PAD int32 [3,4] by [[1,0],[2,3]] -> [4,9]', (g) => {
  g.output(padOp(g, 'PAD', g.input('input', [3, 4], 'INT32'), 'output', [[1, 0], [2, 3]]));
});
def('padv2', 'PADV2 constant value 0.5 [[0,0],[2,1],[0,3],[0,0]], [1,5,7,3] -> [1,8,10,3]', (g) => {
  g.output(padOp(g, 'PADV2', g.input('input', NHWC), 'output', [[0, 0], [2, 1], [0, 3], [0, 0]], { value: 0.5 }));
});
def('mirror_pad_reflect', 'MIRROR_PAD REFLECT [[0,0],[1,2],[2,3],[0,0]], [1,5,7,3] -> [1,8,12,3]', (g) => {
  g.output(padOp(g, 'MIRROR_PAD', g.input('input', NHWC), 'output', [[0, 0], [1, 2], [2, 3], [0, 0]], { mode: 'REFLECT' }));
});
def('mirror_pad_symmetric', 'MIRROR_PAD SYMMETRIC [[0,0],[2,1],[3,2],[1,1]], [1,5,7,3] -> [1,8,12,5]', (g) => {
  g.output(padOp(g, 'MIRROR_PAD', g.input('input', NHWC), 'output', [[0, 0], [2, 1], [3, 2], [1, 1]], { mode: 'SYMMETRIC' }));
});
def('mirror_pad_i32', 'MIRROR_PAD REFLECT int32 [4,6] by [[1,2],[3,0]] -> [7,9]', (g) => {
  g.output(padOp(g, 'MIRROR_PAD', g.input('input', [4, 6], 'INT32'), 'output', [[1, 2], [3, 0]], { mode: 'REFLECT' }));
});

// --- Reshape and friends ----------------------------------------------------

def('reshape', 'RESHAPE [1,5,7,3] -> [5,21], shape from a const int32 input (and new_shape option)', (g) => {
  g.output(reshape(g, g.input('input', NHWC), 'output', [5, 21], { option: true }));
});
def('reshape_neg1', 'RESHAPE [1,5,7,3] -> [-1,15] = [7,15], shape from a const int32 input', (g) => {
  g.output(reshape(g, g.input('input', NHWC), 'output', [-1, 15]));
});
def('reshape_option_only', 'RESHAPE [1,5,7,3] -> [35,3] with only the new_shape option (one input)', (g) => {
  g.output(reshape(g, g.input('input', NHWC), 'output', [35, 3], { shapeInput: false, option: true }));
});
def('reshape_flatten_fc', 'CONV_2D -> RESHAPE flatten [1,3,5,2] -> [1,30] -> FULLY_CONNECTED [1,7]', (g) => {
  const c = conv2d(g, g.input('input', [1, 3, 5, 4]), 'conv', { filters: 2, kh: 3, kw: 3 });
  const f = reshape(g, c, 'flatten', [1, 30]);
  g.output(fullyConnected(g, f, 'output', { units: 7 }));
});
def('reshape_head', 'CONV_2D VALID -> [1,1,1,5] -> RESHAPE [1,5] (classifier head)', (g) => {
  const c = conv2d(g, g.input('input', [1, 3, 4, 2]), 'logits', { filters: 5, kh: 3, kw: 4, padding: 'VALID' });
  g.output(reshape(g, c, 'output', [1, 5]));
});
def('reshape_i32', 'RESHAPE int32 [2,3,4] -> [4,6]', (g) => {
  g.output(reshape(g, g.input('input', [2, 3, 4], 'INT32'), 'output', [4, 6]));
});
def('reshape_i64', 'RESHAPE int64 [2,3,4] -> [6,4]', (g) => {
  g.output(reshape(g, g.input('input', [2, 3, 4], 'INT64'), 'output', [6, 4]));
});
def('reshape_bool', 'RESHAPE bool [2,3,4] -> [6,4]', (g) => {
  g.output(reshape(g, g.input('input', [2, 3, 4], 'BOOL'), 'output', [6, 4]));
});

def('squeeze_dims', 'SQUEEZE dims [1,2], [3,1,1,5] -> [3,5]', (g) => {
  g.output(squeeze(g, g.input('input', [3, 1, 1, 5]), 'output', [1, 2]));
});
def('squeeze_all', 'SQUEEZE without dims, [1,4,1,6] -> [4,6]', (g) => {
  g.output(squeeze(g, g.input('input', [1, 4, 1, 6]), 'output', []));
});
def('squeeze_i32', 'SQUEEZE int32 dims [-2], [2,1,3] -> [2,3]', (g) => {
  g.output(squeeze(g, g.input('input', [2, 1, 3], 'INT32'), 'output', [-2]));
});

def('transpose_nchw', 'TRANSPOSE perm [0,3,1,2] of the graph input, [1,5,7,3] -> [1,3,5,7]', (g) => {
  g.output(transpose(g, g.input('input', NHWC), 'output', [0, 3, 1, 2]));
});
def('transpose_after_conv', 'CONV_2D -> TRANSPOSE perm [0,2,1,3], [1,5,7,3] -> [1,5,7,4] -> [1,7,5,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(transpose(g, c, 'output', [0, 2, 1, 3]));
});
def('transpose_i32', 'TRANSPOSE int32 perm [2,0,1], [2,3,4] -> [4,2,3]', (g) => {
  g.output(transpose(g, g.input('input', [2, 3, 4], 'INT32'), 'output', [2, 0, 1]));
});

// --- Resize -----------------------------------------------------------------

const RESIZE_MODES = [
  ['', {}],
  ['_align_corners', { alignCorners: true }],
  ['_half_pixel', { halfPixelCenters: true }],
];
for (const [suffix, mode] of RESIZE_MODES) {
  def(`resize_bilinear${suffix}`, `RESIZE_BILINEAR ${JSON.stringify(mode)}, [1,5,7,3] -> [1,9,12,3]`, (g) => {
    g.output(resize(g, 'RESIZE_BILINEAR', g.input('input', NHWC), 'output', [9, 12], mode));
  });
  def(`resize_nearest${suffix}`, `RESIZE_NEAREST_NEIGHBOR ${JSON.stringify(mode)}, [1,5,7,3] -> [1,8,13,3]`, (g) => {
    g.output(resize(g, 'RESIZE_NEAREST_NEIGHBOR', g.input('input', NHWC), 'output', [8, 13], mode));
  });
}
def('resize_bilinear_down', 'RESIZE_BILINEAR half_pixel_centers downscale, [1,9,11,3] -> [1,4,6,3]', (g) => {
  g.output(resize(g, 'RESIZE_BILINEAR', g.input('input', [1, 9, 11, 3]), 'output', [4, 6], { halfPixelCenters: true }));
});

// --- Softmax ----------------------------------------------------------------

def('softmax', 'SOFTMAX beta 1.0 on rank-2 [3,10]', (g) => {
  g.output(softmax(g, g.input('input', [3, 10], 'FLOAT32', [-4, 4]), 'output', 1.0));
});
def('softmax_beta05', 'SOFTMAX beta 0.5 on rank-2 [3,10]', (g) => {
  g.output(softmax(g, g.input('input', [3, 10], 'FLOAT32', [-4, 4]), 'output', 0.5));
});
def('softmax_after_conv', 'CONV_2D -> SOFTMAX on rank-4 [1,5,7,6]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 6, kh: 1, kw: 1 });
  g.output(softmax(g, c, 'output', 1.0));
});

// --- Split ------------------------------------------------------------------

def('split_3', 'SPLIT axis 1 (const input) into 3, [2,9,5] -> 3 x [2,3,5]', (g) => {
  g.output(...split(g, g.input('input', [2, 9, 5]), 'output', 1, 3));
});
def('split_after_conv', 'CONV_2D -> SPLIT axis 3 into 3, [1,5,7,9] -> 3 x [1,5,7,3]', (g) => {
  const c = conv2d(g, g.input('input', [1, 5, 7, 2]), 'conv', { filters: 9, kh: 1, kw: 1 });
  g.output(...split(g, c, 'output', 3, 3));
});
def('split_v', 'SPLIT_V sizes [2,-1,3] axis 1, [4,12,5] -> [4,2,5], [4,7,5], [4,3,5]', (g) => {
  g.output(...splitV(g, g.input('input', [4, 12, 5]), 'output', 1, [2, -1, 3]));
});

// --- Strided slice ----------------------------------------------------------

const SS_IN = [2, 9, 11, 5];
def('strided_slice', 'STRIDED_SLICE begin/end/strides, [2,9,11,5] -> [2,4,3,5]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [0, 1, 2, 0], end: [2, 8, 10, 5], strides: [1, 2, 3, 1], outShape: [2, 4, 3, 5],
  }));
});
def('strided_slice_begin_mask', 'STRIDED_SLICE begin_mask 0b0110, [2,9,11,5] -> [1,8,5,3]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [1, 5, 7, 1], end: [2, 8, 10, 4], strides: [1, 1, 2, 1], masks: { begin: 0b0110 }, outShape: [1, 8, 5, 3],
  }));
});
def('strided_slice_end_mask', 'STRIDED_SLICE end_mask 0b1010, [2,9,11,5] -> [1,7,3,4]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [0, 2, 3, 1], end: [1, 0, 9, 0], strides: [1, 1, 2, 1], masks: { end: 0b1010 }, outShape: [1, 7, 3, 4],
  }));
});
def('strided_slice_neg_stride', 'STRIDED_SLICE negative strides and indices, [2,9,11,5] -> [2,8,4,3]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [0, -1, 10, 4], end: [2, -9, 0, 1], strides: [1, -1, -3, -1], outShape: [2, 8, 4, 3],
  }));
});
def('strided_slice_shrink', 'STRIDED_SLICE shrink_axis_mask 0b0101, [2,9,11,5] -> [3,5]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [1, 0, 3, 0], end: [2, 9, 4, 5], strides: [1, 3, 1, 1], masks: { shrink: 0b0101 }, outShape: [3, 5],
  }));
});
def('strided_slice_new_axis', 'STRIDED_SLICE new_axis_mask 0b00010, [2,9,11,5] -> [2,1,7,6,5]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [0, 0, 1, 0, 0], end: [2, 0, 8, 11, 5], strides: [1, 1, 1, 2, 1], masks: { newAxis: 0b00010 }, outShape: [2, 1, 7, 6, 5],
  }));
});
def('strided_slice_ellipsis', 'STRIDED_SLICE ellipsis_mask 0b010 ([1:2, ..., 2:4]), [2,9,11,5] -> [1,9,11,2]', (g) => {
  g.output(stridedSlice(g, g.input('input', SS_IN), 'output', {
    begin: [1, 0, 2], end: [2, 0, 4], strides: [1, 1, 1], masks: { ellipsis: 0b010 }, outShape: [1, 9, 11, 2],
  }));
});
def('strided_slice_after_conv', 'CONV_2D -> STRIDED_SLICE on H, W and C, [1,7,9,8] -> [1,4,5,6]', (g) => {
  const c = conv2d(g, g.input('input', [1, 7, 9, 3]), 'conv', { filters: 8, kh: 3, kw: 3 });
  g.output(stridedSlice(g, c, 'output', {
    begin: [0, 1, 0, 2], end: [1, 5, 9, 8], strides: [1, 1, 2, 1], outShape: [1, 4, 5, 6],
  }));
});
def('strided_slice_i32', 'STRIDED_SLICE int32, [3,8,6] -> [2,4,3]', (g) => {
  g.output(stridedSlice(g, g.input('input', [3, 8, 6], 'INT32'), 'output', {
    begin: [1, 0, 1], end: [3, 8, 6], strides: [1, 2, 2], outShape: [2, 4, 3],
  }));
});

// --- Small networks ---------------------------------------------------------

def('mini_mobilenet', 'conv s2 -> RELU6 -> depthwise (RELU6) -> global avg pool -> conv 1x1 -> reshape -> softmax', (g) => {
  const x = g.input('input', [1, 12, 10, 3]);
  const c1 = conv2d(g, x, 'stem/conv', { filters: 8, kh: 3, kw: 3, stride: [2, 2] }); // [1,6,5,8]
  const r1 = unary(g, 'RELU6', c1, 'stem/relu6');
  const dw = depthwise(g, r1, 'block/depthwise', { kh: 3, kw: 3, act: 'RELU6' }); // [1,6,5,8]
  const gp = pool(g, 'AVERAGE_POOL_2D', dw, 'head/pool', { fh: 6, fw: 5, stride: [1, 1], padding: 'VALID' }); // [1,1,1,8]
  const lg = conv2d(g, gp, 'head/logits', { filters: 7, kh: 1, kw: 1 }); // [1,1,1,7]
  const fl = reshape(g, lg, 'head/reshape', [1, 7]);
  g.output(softmax(g, fl, 'output'));
});
def('cnn_chain', 'conv -> pad -> max pool, conv s2; concat -> mean -> fully_connected', (g) => {
  const x = g.input('input', [1, 11, 13, 3]);
  const a = conv2d(g, x, 'branch_a/conv', { filters: 4, kh: 3, kw: 3, act: 'RELU' }); // [1,11,13,4]
  const p = padOp(g, 'PAD', a, 'branch_a/pad', [[0, 0], [1, 0], [0, 1], [0, 0]]); // [1,12,14,4]
  const m = pool(g, 'MAX_POOL_2D', p, 'branch_a/pool', { fh: 2, fw: 2, stride: [2, 2], padding: 'VALID' }); // [1,6,7,4]
  const b = conv2d(g, x, 'branch_b/conv', { filters: 5, kh: 3, kw: 3, stride: [2, 2] }); // [1,6,7,5]
  const cat = concat(g, [m, b], 'concat', 3); // [1,6,7,9]
  const avg = mean(g, cat, 'mean', [1, 2], false); // [1,9]
  g.output(fullyConnected(g, avg, 'output', { units: 10 }));
});

// --- Shape arithmetic, stacking, gathering, space/depth/batch ---------------
// --- SHAPE

// LiteRT computes SHAPE (and ops on its result) while preparing the model and
// returns stale data for a graph output written that way, so these models
// use the result in an ADD with a graph input; the inputs have a dynamic
// dimension (shape_signature) so that the converter cannot fold the SHAPE.
function dynamicDims(g, t, dims) {
  g.tensors[t].shape_signature = g.shape(t).map((d, i) => (dims.includes(i) ? -1 : d));
  return t;
}
def('shape', 'SHAPE of a [2,3,5,4] graph input with a dynamic batch, + an int32 graph input [4]', (g) => {
  const s = shapeOp(g, dynamicDims(g, g.input('input', [2, 3, 5, 4]), [0]), 'shape');
  g.output(binary(g, 'ADD', s, g.input('input_b', [4], 'INT32'), 'output'));
});
def('shape_i64', 'SHAPE out_type INT64 of a [3,5,2] graph input with dynamic dim 1, + an int64 graph input [3]', (g) => {
  const s = shapeOp(g, dynamicDims(g, g.input('input', [3, 5, 2]), [1]), 'shape', 'INT64');
  g.output(binary(g, 'ADD', s, g.input('input_b', [3], 'INT64'), 'output'));
});
def('shape_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,4] (NCHW in ONNX; H, W dynamic) -> SHAPE in TFLite order, + an int32 graph input [4]', (g) => {
  const x = dynamicDims(g, g.input('input', NHWC), [1, 2]);
  const c = dynamicDims(g, conv2d(g, x, 'conv', { filters: 4, kh: 3, kw: 3 }), [1, 2]);
  g.output(binary(g, 'ADD', shapeOp(g, c, 'shape'), g.input('input_b', [4], 'INT32'), 'output'));
});

// --- PACK / UNPACK

def('pack_axis0', 'PACK axis 0 of two [3,4] graph inputs -> [2,3,4]', (g) => {
  g.output(pack(g, [g.input('input_a', [3, 4]), g.input('input_b', [3, 4])], 'output', 0));
});
def('pack_axis_neg1', 'PACK axis -1 of three [2,5] graph inputs -> [2,5,3]', (g) => {
  g.output(pack(g, [g.input('input_a', [2, 5]), g.input('input_b', [2, 5]), g.input('input_c', [2, 5])], 'output', -1));
});
def('pack_i32', 'PACK axis 1 of an int32 [4,5] graph input and an int32 constant -> [4,2,5]', (g) => {
  g.output(pack(g, [g.input('input', [4, 5], 'INT32'), g.randI32('pack/values', [4, 5], -20, 20)], 'output', 1));
});
def('pack_after_conv', 'two CONV_2D [1,5,7,3] -> [1,5,7,4] -> PACK axis 1 -> [1,2,5,7,4] (axis inserted into NCHW)', (g) => {
  const x = g.input('input', NHWC);
  const a = conv2d(g, x, 'branch_a', { filters: 4, kh: 3, kw: 3 });
  const b = conv2d(g, x, 'branch_b', { filters: 4, kh: 1, kw: 1 });
  g.output(pack(g, [a, b], 'output', 1));
});
def('pack_after_conv_axis4', 'CONV_2D -> [1,5,7,4] and a constant -> PACK axis 4 -> [1,5,7,4,2]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(pack(g, [c, g.rand32('pack/values', [1, 5, 7, 4])], 'output', 4));
});
def('unpack_axis1', 'UNPACK axis 1 of [2,3,4] -> 3 x [2,4]', (g) => {
  g.output(...unpack(g, g.input('input', [2, 3, 4]), 'output', 1));
});
def('unpack_after_conv', 'CONV_2D [1,5,3,2] -> [1,5,3,4] -> UNPACK axis 2 (W) -> 3 x [1,5,4]', (g) => {
  const c = conv2d(g, g.input('input', [1, 5, 3, 2]), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(...unpack(g, c, 'output', 2));
});
def('unpack_after_conv_channels', 'CONV_2D [1,5,7,3] -> [1,5,7,2] -> UNPACK axis -1 (C) -> 2 x [1,5,7]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 2, kh: 3, kw: 3 });
  g.output(...unpack(g, c, 'output', -1));
});

// --- GATHER

def('gather_axis1', 'GATHER axis 1 of [3,7,4] with constant indices [5] -> [3,5,4]', (g) => {
  g.output(gather(g, g.input('input', [3, 7, 4]), g.i32('gather/indices', [5], [6, 0, 3, 3, 1]), 'output', 1));
});
def('gather_indices_2d', 'GATHER axis -1 of [5,8] with constant int64 indices [2,3] -> [5,2,3]', (g) => {
  g.output(gather(g, g.input('input', [5, 8]), g.i64('gather/indices', [2, 3], [7, 0, 2, 2, 5, 1]), 'output', -1));
});
def('gather_embedding', 'GATHER axis 0 of a constant table [10,6] with int32 index input [2,3] -> [2,3,6]', (g) => {
  g.output(gather(g, g.rand32('embedding', [10, 6]), g.input('input', [2, 3], 'INT32'), 'output', 0));
});
def('gather_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,6] -> GATHER axis 3 (channels) indices [4] -> [1,5,7,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 6, kh: 3, kw: 3 });
  g.output(gather(g, c, g.i32('gather/indices', [4], [5, 1, 1, 3]), 'output', 3));
});
def('gather_scalar_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,4] -> GATHER axis 1 (H) scalar index 3 -> [1,7,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(gather(g, c, g.i32('gather/index', [], [3]), 'output', 1));
});
def('gather_2d_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,4] -> GATHER axis 2 (W) indices [2,3] -> [1,5,2,3,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(gather(g, c, g.i32('gather/indices', [2, 3], [6, 0, 2, 2, 5, 1]), 'output', 2));
});

// --- EXPAND_DIMS

def('expand_dims', 'EXPAND_DIMS axis 1 of [3,4] -> [3,1,4]', (g) => {
  g.output(expandDims(g, g.input('input', [3, 4]), 'output', 1));
});
def('expand_dims_neg1_i32', 'EXPAND_DIMS axis -1 of int32 [3,4] -> [3,4,1]', (g) => {
  g.output(expandDims(g, g.input('input', [3, 4], 'INT32'), 'output', -1));
});
def('expand_dims_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,4] -> EXPAND_DIMS axis 3 -> [1,5,7,1,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(expandDims(g, c, 'output', 3));
});
def('expand_dims_after_conv_axis0', 'CONV_2D [1,5,7,3] -> [1,5,7,4] -> EXPAND_DIMS axis 0 -> [1,1,5,7,4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(expandDims(g, c, 'output', 0));
});

// --- FILL

def('fill', 'FILL constant dims [2,3,4] with a scalar float graph input', (g) => {
  g.output(fill(g, g.i32('fill/dims', [3], [2, 3, 4]), g.input('input', []), 'output', [2, 3, 4]));
});
def('fill_i32', 'FILL constant int64 dims [4,5] with a scalar int32 graph input', (g) => {
  g.output(fill(g, g.i64('fill/dims', [2], [4, 5]), g.input('input', [], 'INT32'), 'output', [4, 5]));
});
def('fill_const_add', 'ADD of [1,5,7,3] and FILL([1,1,7,1], 0.75) (constant inputs: folded)', (g) => {
  const f = fill(g, g.i32('fill/dims', [4], [1, 1, 7, 1]), g.f32('fill/value', [], [0.75]), 'fill', [1, 1, 7, 1]);
  g.output(binary(g, 'ADD', g.input('input', NHWC), f, 'output'));
});

// --- FLOOR_MOD

def('floor_mod', 'FLOOR_MOD of two float graph inputs [2,3,4], divisor in [0.5, 3)', (g) => {
  g.output(binary(g, 'FLOOR_MOD', g.input('input_a', [2, 3, 4], 'FLOAT32', [-10, 10]), g.input('input_b', [2, 3, 4], 'FLOAT32', [0.5, 3]), 'output'));
});
def('floor_mod_signs', 'FLOOR_MOD of float [2,3,4] by a constant [4] of mixed signs', (g) => {
  g.output(binary(g, 'FLOOR_MOD', g.input('input', [2, 3, 4], 'FLOAT32', [-10, 10]), g.f32('divisor', [4], [1.5, -2.25, 3, -0.75]), 'output'));
});
def('floor_mod_i32', 'FLOOR_MOD of int32 [2,3,4] by an int32 constant [4] of mixed signs', (g) => {
  g.output(binary(g, 'FLOOR_MOD', g.input('input', [2, 3, 4], 'INT32', [-50, 50]), g.i32('divisor', [4], [3, -4, 5, -7]), 'output'));
});
def('floor_mod_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,4] -> FLOOR_MOD by a constant [4]', (g) => {
  const c = conv2d(g, g.input('input', NHWC, 'FLOAT32', [-4, 4]), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(binary(g, 'FLOOR_MOD', c, g.f32('divisor', [4], [0.25, -0.5, 0.75, -0.375]), 'output'));
});

// --- SPACE_TO_DEPTH / DEPTH_TO_SPACE

def('space_to_depth', 'SPACE_TO_DEPTH block 2, [1,4,6,3] -> [1,2,3,12]', (g) => {
  g.output(spaceToDepth(g, 'SPACE_TO_DEPTH', g.input('input', [1, 4, 6, 3]), 'output', 2));
});
def('space_to_depth_after_conv', 'CONV_2D [1,6,9,2] -> [1,6,9,4] -> SPACE_TO_DEPTH block 3 -> [1,2,3,36]', (g) => {
  const c = conv2d(g, g.input('input', [1, 6, 9, 2]), 'conv', { filters: 4, kh: 3, kw: 3 });
  g.output(spaceToDepth(g, 'SPACE_TO_DEPTH', c, 'output', 3));
});
def('depth_to_space', 'DEPTH_TO_SPACE block 2, [1,2,3,12] -> [1,4,6,3]', (g) => {
  g.output(spaceToDepth(g, 'DEPTH_TO_SPACE', g.input('input', [1, 2, 3, 12]), 'output', 2));
});
def('depth_to_space_after_conv', 'CONV_2D [1,3,5,2] -> [1,3,5,8] -> DEPTH_TO_SPACE block 2 -> [1,6,10,2]', (g) => {
  const c = conv2d(g, g.input('input', [1, 3, 5, 2]), 'conv', { filters: 8, kh: 3, kw: 3 });
  g.output(spaceToDepth(g, 'DEPTH_TO_SPACE', c, 'output', 2));
});

// --- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND

def('space_to_batch', 'SPACE_TO_BATCH_ND block [3,2] paddings [[1,0],[1,1]], [2,5,10,3] -> [12,2,6,3]', (g) => {
  g.output(spaceToBatch(g, g.input('input', [2, 5, 10, 3]), 'output', [3, 2], [[1, 0], [1, 1]]));
});
def('batch_to_space', 'BATCH_TO_SPACE_ND block [3,2] crops [[1,0],[1,1]], [12,2,6,3] -> [2,5,10,3]', (g) => {
  g.output(batchToSpace(g, g.input('input', [12, 2, 6, 3]), 'output', [3, 2], [[1, 0], [1, 1]]));
});
def('space_to_batch_after_conv', 'CONV_2D [1,5,7,3] -> [1,5,7,5] -> SPACE_TO_BATCH_ND block [2,3] paddings [[1,2],[1,1]] -> [6,4,3,5]', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 5, kh: 3, kw: 3 });
  g.output(spaceToBatch(g, c, 'output', [2, 3], [[1, 2], [1, 1]]));
});
def('batch_to_space_after_conv', 'CONV_2D [6,4,3,5] -> [6,4,3,2] -> BATCH_TO_SPACE_ND block [3,2] crops [[1,2],[0,1]] -> [1,9,5,2]', (g) => {
  const c = conv2d(g, g.input('input', [6, 4, 3, 5]), 'conv', { filters: 2, kh: 3, kw: 3 });
  g.output(batchToSpace(g, c, 'output', [3, 2], [[1, 2], [0, 1]]));
});

// --- Dilated convolution as TensorFlow writes it (fused into one Conv)

def('dilated_conv_same', 'SPACE_TO_BATCH_ND -> CONV_2D VALID 3x3 -> BATCH_TO_SPACE_ND = dilated conv rate [2,3] SAME, [1,13,11,3] -> [1,13,11,4]', (g) => {
  g.output(atrousConv(g, g.input('input', [1, 13, 11, 3]), 'output', { filters: 4, k: 3, rate: [2, 3], same: true }));
});
def('dilated_conv_valid', 'SPACE_TO_BATCH_ND -> CONV_2D VALID 3x3 -> BATCH_TO_SPACE_ND = dilated conv rate [2,2] VALID, [1,13,11,3] -> [1,9,7,5]', (g) => {
  g.output(atrousConv(g, g.input('input', [1, 13, 11, 3]), 'output', { filters: 5, k: 3, rate: [2, 2], same: false }));
});
def('dilated_depthwise_same', 'SPACE_TO_BATCH_ND -> DEPTHWISE_CONV_2D VALID 3x3 (RELU6) -> BATCH_TO_SPACE_ND = dilated depthwise rate [2,3] SAME, [1,10,9,4]', (g) => {
  g.output(atrousConv(g, g.input('input', [1, 10, 9, 4], 'FLOAT32', [-8, 8]), 'output', { k: 3, rate: [2, 3], same: true, isDepthwise: true, act: 'RELU6' }));
});
def('dilated_conv_explicit', 'SPACE_TO_BATCH_ND [[1,1],[0,2]] -> CONV_2D VALID -> BATCH_TO_SPACE_ND (padding neither SAME nor VALID: not fused), [1,8,10,3] -> [1,6,8,2]', (g) => {
  const s2b = spaceToBatch(g, g.input('input', [1, 8, 10, 3]), 'space_to_batch', [2, 2], [[1, 1], [0, 2]]);
  const c = conv2d(g, s2b, 'conv', { filters: 2, kh: 3, kw: 3, padding: 'VALID' });
  g.output(batchToSpace(g, c, 'output', [2, 2], [[0, 0], [0, 0]]));
});

// TensorFlow's graph for a dilated conv on an input of unknown size: the
// paddings and crops come from SHAPE at run time (required_space_to_batch_paddings).
function atrousConvShapeChain(g, x, name, { filters, k, rate, dynamic }) {
  const [n, h, w, c] = g.shape(x);
  const base = rate.map((r) => (k - 1) * r);
  const start = base.map((t) => Math.floor(t / 2));
  const end = base.map((t, i) => t - start[i]);
  const shape = shapeOp(g, x, `${name}/shape`);
  const hw = stridedSlice(g, shape, `${name}/input_hw`, { begin: [1], end: [3], strides: [1], outShape: [2] });
  const full = binary(g, 'ADD', hw, g.i32(`${name}/base_paddings_sum`, [2], base), `${name}/full`);
  const blockT = g.i32(`${name}/block`, [2], rate);
  const mod = binary(g, 'FLOOR_MOD', full, blockT, `${name}/mod`);
  const sub = binary(g, 'SUB', blockT, mod, `${name}/sub`);
  const extra = binary(g, 'FLOOR_MOD', sub, blockT, `${name}/extra`);
  const padEnd = binary(g, 'ADD', extra, g.i32(`${name}/base_end`, [2], end), `${name}/pad_end`);
  const elem = (t, i, label) => stridedSlice(g, t, `${name}/${label}`, { begin: [i], end: [i + 1], strides: [1], masks: { shrink: 1 }, outShape: [] });
  const zero = g.i32(`${name}/zero`, [], [0]);
  const rows = [0, 1].map((i) => pack(g, [g.i32(`${name}/start_${i}`, [], [start[i]]), elem(padEnd, i, `pad_end_${i}`)], `${name}/paddings_${i}`, 0));
  const paddings = pack(g, rows, `${name}/paddings`, 0);
  const cropRows = [0, 1].map((i) => pack(g, [zero, elem(extra, i, `extra_${i}`)], `${name}/crops_${i}`, 0));
  const crops = pack(g, cropRows, `${name}/crops`, 0);
  const ph = atrousPaddings(h, k, rate[0], true);
  const pw = atrousPaddings(w, k, rate[1], true);
  const sh = (h + ph.pad[0] + ph.pad[1]) / rate[0];
  const sw = (w + pw.pad[0] + pw.pad[1]) / rate[1];
  const s2b = spaceToBatch(g, x, `${name}/space_to_batch`, rate, paddings, [n * rate[0] * rate[1], sh, sw, c]);
  const conv = conv2d(g, s2b, `${name}/conv`, { filters, kh: k, kw: k, padding: 'VALID' });
  const y = batchToSpace(g, conv, name, rate, crops, [n, h, w, filters]);
  if (dynamic) for (const t of [x, s2b, conv, y]) dynamicDims(g, t, [1, 2]);
  return y;
}

// (A final RELU: LiteRT returns stale data for a graph output whose shape
// depends on values computed while preparing, see SHAPE above.)
def('dilated_conv_shape_chain', 'dilated conv rate [2,3] SAME with paddings/crops computed from SHAPE (folded, then fused) -> RELU, [1,13,11,3] -> [1,13,11,4]', (g) => {
  const y = atrousConvShapeChain(g, g.input('input', [1, 13, 11, 3]), 'atrous', { filters: 4, k: 3, rate: [2, 3] });
  g.output(unary(g, 'RELU', y, 'output'));
});
def('dilated_conv_dynamic', 'as dilated_conv_shape_chain, with H and W unknown (shape_signature -1): fused by evaluating paddings minus crops', (g) => {
  const x = g.input('input', [1, 13, 11, 3]);
  const y = atrousConvShapeChain(g, x, 'atrous', { filters: 4, k: 3, rate: [2, 3], dynamic: true });
  g.output(dynamicDims(g, unary(g, 'RELU', y, 'output'), [1, 2]));
});

// --- Shape arithmetic folded to constants

def('fold_shape_reshape', 'SHAPE -> STRIDED_SLICE (shrink) x3 -> MUL -> PACK -> RESHAPE [2,3,4] -> [6,4] (folded to a constant shape) -> RELU', (g) => {
  const x = g.input('input', [2, 3, 4]);
  const s = shapeOp(g, x, 'shape');
  const dim = (i) => stridedSlice(g, s, `dim_${i}`, { begin: [i], end: [i + 1], strides: [1], masks: { shrink: 1 }, outShape: [] });
  const rows = binary(g, 'MUL', dim(0), dim(1), 'rows');
  const target = pack(g, [rows, dim(2)], 'target_shape', 0);
  const y = g.tensor('reshaped', [6, 4]);
  g.op('RESHAPE', [x, target], [y]);
  g.output(unary(g, 'RELU', y, 'output'));
});
def('fold_shape_after_conv', 'CONV_2D -> [1,5,7,4]; SHAPE -> GATHER [0,3] -> UNPACK -> EXPAND_DIMS -> CONCATENATION with -1 -> RESHAPE [1,-1,4] -> [1,35,4] -> RELU', (g) => {
  const c = conv2d(g, g.input('input', NHWC), 'conv', { filters: 4, kh: 3, kw: 3 });
  const s = shapeOp(g, c, 'shape');
  const nc = gather(g, s, g.i32('shape/indices', [2], [0, 3]), 'batch_channels', 0);
  const parts = unpack(g, nc, 'part', 0);
  const middle = g.i32('middle', [1], [-1]);
  const target = concat(g, [expandDims(g, parts[0], 'batch', 0), middle, expandDims(g, parts[1], 'channels', 0)], 'target_shape', 0);
  const y = g.tensor('reshaped', [1, 35, 4]);
  g.op('RESHAPE', [c, target], [y]);
  g.output(unary(g, 'RELU', y, 'output'));
});
// An op nothing converts or runs (a custom code no table knows): the model
// the tests of failure paths use (batch summaries, the Python exceptions),
// so that they keep failing as more ops convert.
def('unsupported_custom_op', 'ABS -> custom op Lite2OnnxNoSuchOp (no converter, no runtime) on [2,3]: unsupported by design', (g) => {
  const x = unary(g, 'ABS', g.input('input', [2, 3]), 'abs');
  const y = g.tensor('output', [2, 3]);
  g.customOp('Lite2OnnxNoSuchOp', [x], [y]);
  g.output(y);
});
def('fold_int_arith', 'FLOOR_DIV, FLOOR_MOD, MAXIMUM, MINIMUM, SUB, CAST of constants -> FILL dims [4,3,5] -> ADD to [4,3,5] (all folded)', (g) => {
  const a = g.i32('a', [3], [17, -9, 23]);
  const b = g.i32('b', [3], [4, -4, 5]);
  const q = binary(g, 'FLOOR_DIV', a, b, 'quotient');           // [4, 2, 4]
  const r = binary(g, 'FLOOR_MOD', a, b, 'remainder');          // [1, -1, 3]
  const hi = binary(g, 'MAXIMUM', q, r, 'maximum');              // [4, 2, 4]
  const lo = binary(g, 'MINIMUM', hi, g.i32('cap', [3], [9, 3, 5]), 'minimum');  // [4, 2, 4]
  const d = binary(g, 'SUB', lo, g.i32('offset', [3], [0, -1, -1]), 'dims32');  // [4, 3, 5]
  const d64 = g.tensor('dims', [3], 'INT64');
  g.op('CAST', [d], [d64], 'CastOptions', { in_data_type: 'INT32', out_data_type: 'INT64' });
  const f = fill(g, d64, g.f32('fill/value', [], [0.5]), 'fill', [4, 3, 5]);
  const x = g.input('input', [4, 3, 5]);
  g.output(binary(g, 'ADD', x, f, 'output'));
});

// ---------------------------------------------------------------------------

writeModels({ dir: JSON_DIR, prefix: '', models: MODELS, specsFile: SPECS_FILE, style: formatWrapped });
