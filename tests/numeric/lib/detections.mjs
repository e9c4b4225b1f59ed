// Detections compared the way a user reads them. The four outputs of
// TFLite_Detection_PostProcess (boxes, classes, scores, count) are a set, not
// tensors: equal scores may come in another order, and a box whose score sits
// at the threshold, or at the end of a full list, may be in one set and not
// the other. So: match each reference detection to one of the same class with
// IoU >= `iou`, compare the matched boxes and scores, and excuse an unmatched
// detection only when its score lies within `band` of the score threshold or,
// when a list is full, of the other list's lowest score.
//
// Strict (default) and loose (--quantization dequantize: the network runs in
// float, so boxes and scores move by the quantization noise) rules:
export const DETECTION_RULES = {
  strict: { iou: 0.99, boxRtol: 1e-4, boxAtol: 1e-6, scoreAtol: 1e-5 },
  loose: { iou: 0.9, boxRtol: 0, boxAtol: 0.02, scoreAtol: 0.02 },
};

import { readFlexMap } from './tflite_model.mjs';

const DETECTION_OP = 'TFLite_Detection_PostProcess';

/**
 * The detection post-processing ops whose four outputs are all model outputs:
 * [{ outputs: [boxes, classes, scores, count] names, threshold, step }] where
 * step is the class scores' quantization step (0 for float inputs).
 */
export function detectionGroups(model) {
  const outputNames = new Set(model.outputs.map((t) => t.name));
  const groups = [];
  for (const op of model.operators) {
    if (op.custom !== DETECTION_OP || op.outputs.length !== 4 || op.inputs.length < 2) continue;
    const outputs = op.outputs.map((i) => model.tensors[i]?.name);
    if (!outputs.every((n) => outputNames.has(n))) continue;
    const options = readFlexMap(op.customOptions);
    const scores = model.tensors[op.inputs[1]];
    groups.push({
      outputs,
      threshold: typeof options.nms_score_threshold === 'number' ? options.nms_score_threshold : 0,
      step: scores?.quant ? Math.max(...scores.quant.scale) : 0,
    });
  }
  return groups;
}

/**
 * The shapes TFLite's kernel gives the outputs of every
 * TFLite_Detection_PostProcess op at Prepare (files often declare them
 * shape-less): Map tensor index -> shape. Rows: max_detections x
 * max_classes_per_detection (default 1).
 */
export function detectionOutputShapes(model) {
  const shapes = new Map();
  for (const op of model.operators) {
    if (op.custom !== DETECTION_OP || op.outputs.length !== 4) continue;
    const options = readFlexMap(op.customOptions);
    const rows = Number(options.max_detections) * Number(options.max_classes_per_detection ?? 1);
    if (!(Number.isSafeInteger(rows) && rows > 0)) continue;
    const [boxes, classes, scores, count] = op.outputs;
    shapes.set(boxes, [1, rows, 4]).set(classes, [1, rows]).set(scores, [1, rows]).set(count, [1]);
  }
  return shapes;
}

function detections(boxes, classes, scores, count) {
  const rows = classes.data.length;
  const n = Math.max(0, Math.min(rows, Math.round(Number(count.data[0]))));
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({
      row: i,
      box: Array.from(boxes.data.slice(4 * i, 4 * i + 4), Number),
      cls: Math.round(Number(classes.data[i])),
      score: Number(scores.data[i]),
    });
  }
  return { list: out, full: n === rows };
}

function iou(a, b) {
  const [ay0, ax0, ay1, ax1] = [Math.min(a[0], a[2]), Math.min(a[1], a[3]), Math.max(a[0], a[2]), Math.max(a[1], a[3])];
  const [by0, bx0, by1, bx1] = [Math.min(b[0], b[2]), Math.min(b[1], b[3]), Math.max(b[0], b[2]), Math.max(b[1], b[3])];
  const ih = Math.max(0, Math.min(ay1, by1) - Math.max(ay0, by0));
  const iw = Math.max(0, Math.min(ax1, bx1) - Math.max(ax0, bx0));
  const inter = ih * iw;
  const union = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter;
  if (union <= 0) return a.every((v, i) => v === b[i]) ? 1 : 0;
  return inter / union;
}

/**
 * Compares one group's outputs (Maps name -> host tensor). Returns a result
 * like compareTensors' ({ ok, maxAbs, tol, summary, detail }) with the
 * distance for the runtime-spread rule: the share of detections left
 * unmatched (`beyond`) and the worst matched difference in tolerances (`max`).
 */
export function compareDetections(group, ref, got, rule, label = 'onnx') {
  const [r, g] = [ref, got].map((side) => detections(...group.outputs.map((name) => side.get(name))));
  // Within one score step of the threshold (plus the rule's own slack).
  const band = group.step + rule.scoreAtol;
  const used = new Set();
  let worstBox = 0, worstScore = 0;
  const problems = [];
  const unmatchedRef = [];
  for (const d of r.list) {
    let best = -1, bestIou = -1;
    g.list.forEach((e, j) => {
      if (used.has(j) || e.cls !== d.cls) return;
      const v = iou(d.box, e.box);
      if (v > bestIou) { bestIou = v; best = j; }
    });
    if (best < 0 || bestIou < rule.iou) { unmatchedRef.push(d); continue; }
    used.add(best);
    const e = g.list[best];
    d.box.forEach((v, k) => {
      const diff = Math.abs(v - e.box[k]);
      const allowed = rule.boxAtol + rule.boxRtol * Math.abs(v);
      worstBox = Math.max(worstBox, diff / allowed);
    });
    const scoreDiff = Math.abs(d.score - e.score);
    const scoreAllowed = Math.max(rule.scoreAtol, group.step);
    worstScore = Math.max(worstScore, scoreDiff / scoreAllowed);
    if (scoreDiff > scoreAllowed) problems.push(`row ${d.row} (class ${d.cls}): score ${d.score} vs ${label} ${e.score}`);
  }
  if (worstBox > 1) problems.push(`matched boxes differ by ${worstBox.toFixed(2)}x the box tolerance`);
  const unmatchedGot = g.list.filter((_, j) => !used.has(j));
  const lowest = (side) => (side.list.length ? Math.min(...side.list.map((d) => d.score)) : Infinity);
  const excused = (d, other) => Math.abs(d.score - group.threshold) <= band
    || (other.full && d.score <= lowest(other) + band);
  let forgiven = 0, unmatched = 0;
  const unmatchedIn = (list, other, where) => {
    for (const d of list) {
      if (excused(d, other)) {
        forgiven++;
      } else {
        unmatched++;
        problems.push(`${where} detection row ${d.row} (class ${d.cls}, score ${d.score.toFixed(4)}) has no match`);
      }
    }
  };
  unmatchedIn(unmatchedRef, g, 'reference');
  unmatchedIn(unmatchedGot, r, label);
  const matched = used.size;
  const worst = Math.max(worstBox, worstScore);
  const summary = `${matched} of ${r.list.length} detections matched (IoU >= ${rule.iou})` +
    `${forgiven ? `, ${forgiven} unmatched within ${band.toPrecision(3)} of the threshold or the list's end` : ''}` +
    `, worst ${worst.toPrecision(2)}x tolerance`;
  return {
    ok: problems.length === 0,
    maxAbs: worst,
    tol: 1,
    summary,
    detail: problems.length ? `${problems.slice(0, 3).join('; ')}${problems.length > 3 ? `; ${problems.length - 3} more` : ''}` : undefined,
    distance: { unit: 'tolerance', beyond: unmatched / Math.max(1, r.list.length, g.list.length), max: worst },
    allowed: { beyond: 0, max: 1 },
  };
}
