#!/usr/bin/env node
// Writes the test models of detection post-processing and MediaPipe's custom
// ops (core/ops/detection.cc, core/ops/conv.cc) as FlatBuffer JSON into
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
import { flex, writeModels } from './lib/model.mjs';

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

writeModels({ dir: JSON_DIR, prefix: 'det_', models: MODELS, specsFile: SPECS_FILE });
