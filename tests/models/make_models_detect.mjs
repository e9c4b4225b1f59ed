#!/usr/bin/env node
// Writes the test models of detection post-processing and MediaPipe's custom
// ops (core/ops/detection.cc, core/ops/conv.cc) and Coral's PosenetDecoderOp
// (core/ops/posenet.cc) as FlatBuffer JSON into
// tests/models/json/det_*.json, plus their input domains into
// tests/models/specs_detect.json. Same format and conventions as
// make_models.mjs (see README.md); only det_* files are touched.
//
//   node tests/models/make_models_detect.mjs      # from the repository root
//
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { conv3x3, flex, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_detect.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `det_${name}`, description, build });

// ---- TFLite_Detection_PostProcess --------------------------------------------

const BOXES = 24;

// Anchors (ycenter, xcenter, h, w) on a 4x6 grid with sizes that vary, so
// that neighbours overlap by different amounts.
function anchorValues(m) {
  const v = [];
  for (let i = 0; i < BOXES; i++) {
    const y = (Math.floor(i / 6) + 0.5) / 4, x = ((i % 6) + 0.5) / 6;
    v.push(y, x, 0.2 + 0.3 * m.model.rand(), 0.15 + 0.3 * m.model.rand());
  }
  return v.map((a) => Math.round(a * 1024) / 1024);
}

// A detection head: box encodings [1, BOXES, coords], class predictions
// [1, BOXES, classes (+1 background)], constant anchors; outputs with
// TFLite's shapes. `quant`: uint8 inputs and anchors.
function postProcess(m, o) {
  const { classes, background = true, coords = 4, quant = false } = o;
  const withBackground = classes + (background ? 1 : 0);
  const slots = o.max_detections * o.max_classes_per_detection;
  let enc, cls, anchors;
  if (quant) {
    enc = m.quantize(m.input('box_encodings', [1, BOXES, coords], 'UINT8'), { scale: [0.05], zero_point: [128] });
    cls = m.quantize(m.input('class_predictions', [1, BOXES, withBackground], 'UINT8'), { scale: [1 / 256], zero_point: [0] });
    anchors = m.quantized('anchors', [BOXES, 4], anchorValues(m), { type: 'UINT8', scale: [1 / 200], zero_point: [0] });
  } else {
    enc = m.input('box_encodings', [1, BOXES, coords], 'FLOAT32', { range: [-2, 2] });
    cls = m.input('class_predictions', [1, BOXES, withBackground], 'FLOAT32', { range: [0, 1] });
    anchors = m.f32('anchors', [BOXES, 4], anchorValues(m));
  }
  const outs = [
    m.tensor('detection_boxes', [1, slots, 4]), m.tensor('detection_classes', [1, slots]),
    m.tensor('detection_scores', [1, slots]), m.tensor('num_detections', [1]),
  ];
  const options = {
    max_detections: o.max_detections, max_classes_per_detection: o.max_classes_per_detection,
    nms_score_threshold: flex.float(o.score), nms_iou_threshold: flex.float(o.iou), num_classes: classes,
    y_scale: flex.float(10), x_scale: flex.float(10), h_scale: flex.float(5), w_scale: flex.float(5),
  };
  if (o.regular !== undefined) options.use_regular_nms = o.regular;
  if (o.detections_per_class !== undefined) options.detections_per_class = o.detections_per_class;
  m.customOp('TFLite_Detection_PostProcess', [enc, cls, anchors], outs, options);
  m.output(...outs);
}

def('postprocess_fast', 'TFLite_Detection_PostProcess, fast NMS, 3 classes + background, 24 boxes, score >= 0.6, IoU 0.4, 6 detections',
  (m) => postProcess(m, { classes: 3, max_detections: 6, max_classes_per_detection: 1, score: 0.6, iou: 0.4 }));
def('postprocess_fast_two_classes', 'TFLite_Detection_PostProcess, fast NMS reporting the top 2 classes per box, no background class, 5 coordinates',
  (m) => postProcess(m, { classes: 4, background: false, coords: 5, max_detections: 5, max_classes_per_detection: 2, score: 0.5, iou: 0.5, regular: false }));
def('postprocess_regular', 'TFLite_Detection_PostProcess, regular (per-class) NMS, 3 classes + background, 3 per class, 8 detections',
  (m) => postProcess(m, { classes: 3, max_detections: 8, max_classes_per_detection: 1, detections_per_class: 3, score: 0.5, iou: 0.45, regular: true }));
def('postprocess_regular_all', 'TFLite_Detection_PostProcess, regular NMS with score threshold 0 (every box a candidate), 10 detections',
  (m) => postProcess(m, { classes: 2, max_detections: 10, max_classes_per_detection: 1, detections_per_class: 4, score: 0, iou: 0.6, regular: true }));
// (The fast path with no detection is not a test model: TFLite leaves every
// output row unwritten there, so its outputs are whatever the arena held.)
def('postprocess_regular_none', 'TFLite_Detection_PostProcess, regular NMS with a score threshold no score reaches: 0 detections',
  (m) => postProcess(m, { classes: 3, max_detections: 4, max_classes_per_detection: 1, score: 1.5, iou: 0.5, regular: true }));
def('postprocess_uint8_fast', 'TFLite_Detection_PostProcess on uint8 box encodings, scores and anchors, fast NMS',
  (m) => postProcess(m, { classes: 3, max_detections: 6, max_classes_per_detection: 1, score: 0.55, iou: 0.5, quant: true }));
def('postprocess_uint8_regular', 'TFLite_Detection_PostProcess on uint8 inputs, regular NMS, 2 per class',
  (m) => postProcess(m, { classes: 3, max_detections: 6, max_classes_per_detection: 1, detections_per_class: 2, score: 0.55, iou: 0.5, quant: true, regular: true }));

// ---- NON_MAX_SUPPRESSION_V4 / V5 -------------------------------------------------

function nms(m, version, { runtime = false } = {}) {
  const n = 30;
  const boxes = m.input('boxes', [n, 4], 'FLOAT32', { range: [-1, 1] });
  const scores = m.input('scores', [n], 'FLOAT32', { range: [0, 1] });
  const scalar = (name, type, value) => (runtime
    ? m.input(name, [], type, { value: [value] })
    : m.constant(name, [], type, [value]));
  const inputs = [boxes, scores, scalar('max_output_size', 'INT32', 7), scalar('iou_threshold', 'FLOAT32', 0.3),
    scalar('score_threshold', 'FLOAT32', 0.25)];
  const selected = m.tensor('selected_indices', [7], 'INT32');
  const valid = m.tensor('valid_outputs', [], 'INT32');
  if (version === 4) {
    m.op('NON_MAX_SUPPRESSION_V4', inputs, [selected, valid], 'NonMaxSuppressionV4Options', {});
    m.output(selected, valid);
  } else {
    inputs.push(m.constant('soft_nms_sigma', [], 'FLOAT32', [0]));
    const selectedScores = m.tensor('selected_scores', [7]);
    m.op('NON_MAX_SUPPRESSION_V5', inputs, [selected, selectedScores, valid], 'NonMaxSuppressionV5Options', {});
    m.output(selected, selectedScores, valid);
  }
}

def('nms_v4', 'NON_MAX_SUPPRESSION_V4 of 30 boxes (corners in any order), constant max 7, IoU 0.3, score 0.25', (m) => nms(m, 4));
def('nms_v5', 'NON_MAX_SUPPRESSION_V5 (soft_nms_sigma 0) of 30 boxes, constant max 7, IoU 0.3, score 0.25', (m) => nms(m, 5));
def('nms_v5_runtime', 'NON_MAX_SUPPRESSION_V5 with max_output_size, IoU and score thresholds as graph inputs', (m) => nms(m, 5, { runtime: true }));

// ---- MediaPipe Convolution2DTransposeBias ------------------------------------------

// TfLiteTransposeConvParams {padding (1 SAME, 2 VALID), stride_width,
// stride_height[, activation]} as MediaPipe's kernel reads it.
function transposeConvParams(padding, strideW, strideH, withActivation) {
  const ints = [padding === 'SAME' ? 1 : 2, strideW, strideH];
  if (withActivation) ints.push(0);
  return ints.flatMap((v) => [v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >> 24) & 255]);
}

function transposeConvBias(m, x, filters, k, strides, padding, withActivation) {
  const [n, h, w, c] = m.shape(x);
  const size = (inp, kk, s) => {
    const total = padding === 'SAME' ? Math.max(0, kk - ((inp - 1) % s) - 1) : 0;
    return s * (inp - 1) + kk - total;
  };
  const wt = m.rand32('deconv/weights', [filters, k[0], k[1], c], 1 / Math.sqrt(k[0] * k[1] * c));
  const b = m.rand32('deconv/bias', [filters], 0.1);
  const y = m.tensor('output', [n, size(h, k[0], strides[0]), size(w, k[1], strides[1]), filters]);
  m.customOp('Convolution2DTransposeBias', [x, wt, b], [y], undefined,
    { bytes: transposeConvParams(padding, strides[1], strides[0], withActivation) });
  return y;
}

def('mediapipe_transpose_conv_same_s2', 'MediaPipe Convolution2DTransposeBias 4x4 stride 2 SAME on [1,5,7,3] -> 4 filters (12-byte options)',
  (m) => m.output(transposeConvBias(m, m.input('input', [1, 5, 7, 3]), 4, [4, 4], [2, 2], 'SAME', false)));
def('mediapipe_transpose_conv_valid_s1x2', 'MediaPipe Convolution2DTransposeBias 3x2 stride 1x2 VALID on [1,4,6,2] -> 5 filters (16-byte options)',
  (m) => m.output(transposeConvBias(m, m.input('input', [1, 4, 6, 2]), 5, [3, 2], [1, 2], 'VALID', true)));

// ---- MediaPipe MaxPoolingWithArgmax2D / MaxUnpooling2D ------------------------------
// LiteRT.js runs these only through XNNPACK (filter = stride), whose indices
// differ from MediaPipe's kernel (uint32 bits, column-major); models made only
// of MediaPipe ops take the harness's JS rewrite of MediaPipe's kernels as the
// reference, listing the ops it runs (tests/numeric/lib/mediapipe_kernels.mjs);
// the model with convolutions is checked against LiteRT.js (pool and unpool
// agree with each other there).

function kernelOp(m, op, inputs, outputs, params = {}) {
  const name = (t) => m.tensors[t].name;
  m.spec.reference = 'mediapipe';
  m.spec.program ??= { ops: [] };
  m.spec.program.ops.push({ op, inputs: inputs.map(name), outputs: outputs.map(name), params });
}


// TfLitePoolParams {padding (1 SAME, 2 VALID), stride_width, stride_height,
// filter_width, filter_height, activation, computed padding x4}: 40 bytes.
function poolParams({ padding, stride, filter, activation = 0 }) {
  const ints = [padding === 'SAME' ? 1 : 2, stride[1], stride[0], filter[1], filter[0], activation, 0, 0, 0, 0];
  return ints.flatMap((v) => [v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >> 24) & 255]);
}

function poolArgmax(m, x, params) {
  const [n, h, w, c] = m.shape(x);
  const size = (inp, k, s) => (params.padding === 'SAME' ? Math.ceil(inp / s) : Math.floor((inp - k + s) / s));
  const shape = [n, size(h, params.filter[0], params.stride[0]), size(w, params.filter[1], params.stride[1]), c];
  const values = m.tensor('pool/values', shape);
  const indices = m.tensor('pool/indices', shape);
  m.customOp('MaxPoolingWithArgmax2D', [x], [values, indices], undefined, { bytes: poolParams(params) });
  kernelOp(m, 'MaxPoolingWithArgmax2D', [x], [values, indices], params);
  return [values, indices];
}

function unpool(m, values, indices, params) {
  const [n, h, w, c] = m.shape(values);
  const y = m.tensor('unpooled', [n, h * params.filter[0], w * params.filter[1], c]);
  // The kernel ignores the padding mode; XNNPACK (which LiteRT.js runs it with) wants VALID.
  m.customOp('MaxUnpooling2D', [values, indices], [y], undefined, { bytes: poolParams({ ...params, padding: 'VALID' }) });
  kernelOp(m, 'MaxUnpooling2D', [values, indices], [y], params);
  return y;
}

def('mediapipe_pool_argmax_same_s2', 'MediaPipe MaxPoolingWithArgmax2D 2x2 stride 2 SAME on [1,7,9,3] (odd sizes: padded windows)',
  (m) => m.output(...poolArgmax(m, m.input('input', [1, 7, 9, 3]), { padding: 'SAME', stride: [2, 2], filter: [2, 2] })));
def('mediapipe_pool_argmax_valid_3x2_relu6', 'MediaPipe MaxPoolingWithArgmax2D 3x2 stride 2x1 VALID, RELU6, on [1,8,6,4] in [-2, 8]',
  (m) => m.output(...poolArgmax(m, m.input('input', [1, 8, 6, 4], 'FLOAT32', { range: [-2, 8] }),
    { padding: 'VALID', stride: [2, 1], filter: [3, 2], activation: 3 })));
def('mediapipe_unpool_after_conv', 'Conv -> MediaPipe MaxPoolingWithArgmax2D 2x2 s2 -> Conv(values) -> MaxUnpooling2D -> Conv: NCHW throughout',
  (m) => {
    const params = { padding: 'SAME', stride: [2, 2], filter: [2, 2] };
    const x = conv3x3(m, m.input('input', [1, 8, 10, 3]), 'conv1', 4);
    const [values, indices] = poolArgmax(m, x, params);
    const y = unpool(m, conv3x3(m, values, 'conv2', 4), indices, params);
    m.output(conv3x3(m, y, 'conv3', 2));
    delete m.spec.reference;  // LiteRT.js runs the convolutions: it is the reference
    delete m.spec.program;
  });
def('mediapipe_unpool_overlapping', 'MediaPipe MaxPoolingWithArgmax2D 3x3 stride 2 VALID then MaxUnpooling2D 3x3 stride 2 (output 3x input)',
  (m) => {
    const params = { padding: 'VALID', stride: [2, 2], filter: [3, 3] };
    const [values, indices] = poolArgmax(m, m.input('input', [1, 9, 7, 2]), params);
    m.output(unpool(m, values, indices, params));
  });

// ---- MediaPipe Landmarks2TransformMatrix / TransformTensorBilinear / TransformLandmarks ---
// No runtime here registers these three: the JS kernels are the reference.


// Landmarks2TransformMatrix version 2: the crop around `subset` rotated so
// that left -> right lies at `target` radians.
function landmarksToMatrix(m, landmarks, { subset, left, right, target, outputSize, scale }) {
  const matrix = m.tensor('matrix', [1, 4, 4]);
  const params = {
    subset_idxs: subset, left_rotation_idx: left, right_rotation_idx: right, target_rotation_radians: target,
    output_height: outputSize[0], output_width: outputSize[1], scale_x: scale[0], scale_y: scale[1],
  };
  m.customOp('Landmarks2TransformMatrix', [landmarks], [matrix], {
    ...params, subset_idxs: flex.ints(subset), target_rotation_radians: flex.float(target),
    scale_x: flex.float(scale[0]), scale_y: flex.float(scale[1]),
  }, { version: 2 });
  kernelOp(m, 'Landmarks2TransformMatrix', [landmarks], [matrix], params);
  return matrix;
}

function transformTensor(m, data, matrix, outputSize) {
  const [n, , , c] = m.shape(data);
  const y = m.tensor('cropped', [n, outputSize[0], outputSize[1], c]);
  m.customOp('TransformTensorBilinear', [data, matrix], [y],
    { output_height: outputSize[0], output_width: outputSize[1] }, { version: 2 });
  kernelOp(m, 'TransformTensorBilinear', [data, matrix], [y]);
  return y;
}

function transformLandmarks(m, landmarks, matrix) {
  const y = m.tensor('transformed', m.shape(landmarks));
  m.customOp('TransformLandmarks', [landmarks, matrix], [y], {}, { version: 2 });
  kernelOp(m, 'TransformLandmarks', [landmarks, matrix], [y]);
  return y;
}

const CROP = { subset: [0, 3, 5, 7, 9, 11, 13], left: 2, right: 6, target: 0.3, outputSize: [12, 10], scale: [1.25, 1.5] };
const MATRIX = [0.8, -0.6, 0.25, 3, 0.6, 0.8, -0.5, -2, 0, 0, 1, 0, 0, 0, 0, 1];

def('mediapipe_landmarks_to_matrix', 'MediaPipe Landmarks2TransformMatrix v2 of 16 landmarks [1,16,3] in [0,40]: odd subset, target 0.3 rad, 12x10 output',
  (m) => m.output(landmarksToMatrix(m, m.input('landmarks', [1, 16, 3], 'FLOAT32', { range: [0, 40] }), CROP)));
def('mediapipe_transform_landmarks_3d', 'MediaPipe TransformLandmarks v2 of [1,20,3] landmarks by a run-time [1,4,4] matrix (z kept)',
  (m) => m.output(transformLandmarks(m, m.input('landmarks', [1, 20, 3], 'FLOAT32', { range: [-5, 5] }),
    m.input('matrix', [1, 4, 4], 'FLOAT32', { range: [-2, 2] }))));
def('mediapipe_transform_landmarks_2d', 'MediaPipe TransformLandmarks v2 of [1,7,2] landmarks by a constant matrix',
  (m) => {
    const matrix = m.constant('matrix', [1, 4, 4], 'FLOAT32', MATRIX);
    m.output(transformLandmarks(m, m.input('landmarks', [1, 7, 2], 'FLOAT32', { range: [-5, 5] }), matrix));
    m.spec.program.constants = { matrix: { shape: [1, 4, 4], values: MATRIX } };
  });
def('mediapipe_transform_tensor_runtime', 'MediaPipe TransformTensorBilinear v2 of [1,9,11,5] by a run-time matrix in [-1.5,1.5] (points inside and outside) -> [1,8,6,5]',
  (m) => m.output(transformTensor(m, m.input('data', [1, 9, 11, 5]),
    m.input('matrix', [1, 4, 4], 'FLOAT32', { range: [-1.5, 1.5] }), [8, 6])));
def('mediapipe_attention_crop', 'The face-attention pattern: TransformTensorBilinear of a [1,32,32,4] map by Landmarks2TransformMatrix, and TransformLandmarks by the same matrix',
  (m) => {
    const landmarks = m.input('landmarks', [1, 16, 3], 'FLOAT32', { range: [4, 28] });
    const matrix = landmarksToMatrix(m, landmarks, CROP);
    const crop = transformTensor(m, m.input('features', [1, 32, 32, 4]), matrix, CROP.outputSize);
    const local = m.input('local_landmarks', [1, 5, 3], 'FLOAT32', { range: [0, 12] });
    m.output(crop, transformLandmarks(m, local, matrix));
  });

// ---- Coral's PosenetDecoderOp ------------------------------------------------

// The decoder alone: heatmaps [1, h, w, 17] (logits), short offsets
// [1, h, w, 34] and mid offsets [1, h, w, 64] (pixels), BodyPix's long
// offsets [1, 33, 33, 34] with `masks` -> keypoints [1, N, 17, 2], keypoint
// scores [1, N, 17], pose scores [1, N], the count [1] (float) and the masks
// [1, N, 33, 33]. `declared`: the outputs declare the kernel's shapes (Coral's
// models leave them unknown). uint8 maps as Coral's models have them, or float.
function posenet(m, o) {
  const { h, w, n, stride, quant = false, masks = false, declared = false } = o;
  // o.quant: true (parameters from the range) or [scale, zero point] per map
  const map = (name, hh, ww, c, lo, hi) => {
    if (!quant) return m.input(name, [1, hh, ww, c], 'FLOAT32', { range: [lo, hi] });
    const [scale, zp] = Array.isArray(quant) ? quant[name] : [(hi - lo) / 255, Math.round(-lo * 255 / (hi - lo))];
    return m.quantize(m.input(name, [1, hh, ww, c], 'UINT8'), { scale: [scale], zero_point: [zp] });
  };
  const inputs = [
    map('heatmaps', h, w, 17, -6, 3),
    map('short_offsets', h, w, 34, -1.5 * stride, 1.5 * stride),
    map('mid_offsets', h, w, 64, -3 * stride, 3 * stride),
  ];
  if (masks) inputs.push(map('long_offsets', 33, 33, 34, -2 * stride, 2 * stride));
  const shapes = [[1, n, 17, 2], [1, n, 17], [1, n], [1], [1, n, 33, 33]];
  const names = ['keypoints', 'keypoint_scores', 'pose_scores', 'pose_count', 'instance_masks'];
  const outs = names.slice(0, masks ? 5 : 4).map((name, i) => m.tensor(name, declared ? shapes[i] : []));
  m.customOp('PosenetDecoderOp', inputs, outs, {
    max_detections: n, score_threshold: flex.float(o.threshold), stride, nms_radius: flex.float(o.radius),
  });
  m.output(...outs);
  m.spec.reference = 'posenet';
  m.spec.outputs = { pose_count: { mode: 'exact' }, ...(masks ? { instance_masks: { mode: 'exact' } } : {}) };
}

def('posenet_float', 'Coral PosenetDecoderOp on float maps [1,9,13,*], stride 8, 5 poses, threshold 0.3, NMS radius 12 px, declared output shapes',
  (m) => posenet(m, { h: 9, w: 13, n: 5, stride: 8, threshold: 0.3, radius: 12, declared: true }));
def('posenet_uint8', 'Coral PosenetDecoderOp on uint8 maps [1,11,7,*] (as Coral\'s models), stride 16, 6 poses, threshold 0.25, NMS radius 20 px',
  (m) => posenet(m, { h: 11, w: 7, n: 6, stride: 16, threshold: 0.25, radius: 20, quant: true }));
def('posenet_bodypix_uint8', 'Coral PosenetDecoderOp with BodyPix long offsets [1,33,33,34] -> 4 instance masks 33x33; uint8 maps [1,10,14,*], stride 16',
  (m) => posenet(m, { h: 10, w: 14, n: 4, stride: 16, threshold: 0.2, radius: 20, quant: true, masks: true }));
// The decoder of Coral's posenet_mobilenet_v1_075_353_481_16_quant_decoder.tflite: its
// sizes, quantization and options (the harness's random maps give 17 poses).
const CORAL_POSENET = {
  heatmaps: [0.08941768854856491, 180], short_offsets: [0.7224140167236328, 134],
  mid_offsets: [1.4816304445266724, 118],
};
def('posenet_coral_23x31', 'The decoder of Coral\'s PoseNet 353x481 model (uint8 maps [1,23,31,*] with its scales and zero points, stride 16, 20 poses, threshold 0.2, NMS radius 10 px)',
  (m) => posenet(m, { h: 23, w: 31, n: 20, stride: 16, threshold: 0.2, radius: 10, quant: CORAL_POSENET }));
def('posenet_rejected', 'Coral PosenetDecoderOp with threshold 0.9: root candidates (logits above 2.2) but no pose whose mean score reaches it: count 0',
  (m) => posenet(m, { h: 8, w: 3, n: 2, stride: 8, threshold: 0.9, radius: 10, quant: true }));
def('posenet_none', 'Coral PosenetDecoderOp with a threshold no pose reaches (0.99): count 0, every row zero; BodyPix mask 0 all ones as the kernel writes it',
  (m) => posenet(m, { h: 6, w: 5, n: 3, stride: 16, threshold: 0.99, radius: 20, quant: true, masks: true }));

writeModels({ dir: JSON_DIR, prefix: 'det_', models: MODELS, specsFile: SPECS_FILE });
