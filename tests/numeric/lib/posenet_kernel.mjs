// Coral's PosenetDecoderOp written again in JS (google-coral/libcoral
// coral/pose_estimation/posenet_decoder.cc and posenet_decoder_op.cc, the
// kernel as built with GCC and libstdc++ on x86-64): the reference for
// models no runtime here runs (lib/kernel_reference.mjs). float32 where the
// kernel computes in float (Math.fround after every operation, no fused
// multiply-add), double where it computes in double.
//
// Inputs: heatmaps [1, H, W, 17] (logits), short offsets [1, H, W, 34],
// mid offsets [1, H, W, 64], and for BodyPix long offsets [1, 33, 33, 34];
// uint8 (with their quantization) or float32. Outputs: keypoints
// [1, N, 17, 2] (y, x in pixels), keypoint scores [1, N, 17], pose scores
// [1, N], the pose count [1] (as a float), and for BodyPix instance masks
// [1, N, 33, 33]. Rows past the count are left unwritten by the kernel; here
// they are zeros (only the first mask, which the kernel fills when no pose is
// found, is written past the count).
//
// Orders. The root candidates come out of a std::priority_queue: candidates
// of equal score in the order libstdc++'s heap gives them (emulated below,
// `rootOrder: 'heap'`, the default), or in scan order (`'scan'`: y, x,
// keypoint), which the converter takes. Instance scores are sorted stably
// (the kernel's std::sort leaves equal ones in an unspecified order).

const f = Math.fround;
export const NUM_KEYPOINTS = 17;
const NUM_EDGES = 16;

// Keypoint pairs: 16 forward edges, then the same 16 backward.
const FORWARD = [
  [0, 1], [1, 3], [0, 2], [2, 4], [0, 5], [5, 7], [7, 9], [5, 11],
  [11, 13], [13, 15], [0, 6], [6, 8], [8, 10], [6, 12], [12, 14], [14, 16],
];
export const EDGES = [...FORWARD, ...FORWARD.map(([a, b]) => [b, a])];

const clamp = (v, lo, hi) => (v < lo ? lo : hi < v ? hi : v);

// libstdc++'s std::priority_queue (push_heap / pop_heap) ordered by `score`.
export class Heap {
  constructor() { this.c = []; }
  get size() { return this.c.length; }
  pushUp(hole, top, value) {
    let parent = Math.floor((hole - 1) / 2);
    while (hole > top && this.c[parent].score < value.score) {
      this.c[hole] = this.c[parent];
      hole = parent;
      parent = Math.floor((hole - 1) / 2);
    }
    this.c[hole] = value;
  }
  push(value) {
    this.c.push(value);
    this.pushUp(this.c.length - 1, 0, value);
  }
  pop() {
    const c = this.c;
    const top = c[0];
    const len = c.length - 1;
    if (len > 0) {
      const value = c[len];
      c[len] = top;
      let hole = 0;
      let second = 0;
      while (second < Math.floor((len - 1) / 2)) {
        second = 2 * (second + 1);
        if (c[second].score < c[second - 1].score) second--;
        c[hole] = c[second];
        hole = second;
      }
      if ((len & 1) === 0 && second === Math.floor((len - 2) / 2)) {
        second = 2 * (second + 1);
        c[hole] = c[second - 1];
        hole = second - 1;
      }
      this.pushUp(hole, 0, value);
    }
    c.pop();
    return top;
  }
}

// A queue taking candidates in decreasing score, equal scores in push order.
class ScanQueue {
  constructor() { this.c = []; this.sorted = false; }
  get size() { return this.c.length; }
  push(value) { this.c.push(value); this.sorted = false; }
  pop() {
    if (!this.sorted) {
      this.c = this.c.map((v, i) => ({ v, i })).sort((a, b) => b.v.score - a.v.score || a.i - b.i).map((e) => e.v);
      this.sorted = true;
    }
    return this.c.shift();
  }
}

// A [H, W, C] float map and its bilinear sampling, as the kernel samples.
function sampler(data, height, width, channels) {
  const axis = (v, n) => {
    const p = clamp(v, 0, f(n - 1));
    const lo = Math.floor(p);
    return [lo, Math.ceil(p), f(v - lo)];
  };
  return (y, x, c) => {
    const [y0, y1, ly] = axis(y, height);
    const [x0, x1, lx] = axis(x, width);
    const at = (yy, xx) => data[(yy * width + xx) * channels + c];
    const top = f(f(f(1 - lx) * at(y0, x0)) + f(lx * at(y0, x1)));
    const bottom = f(f(f(1 - lx) * at(y1, x0)) + f(lx * at(y1, x1)));
    return f(f(f(1 - ly) * top) + f(ly * bottom));
  };
}

// The kernel's float copy of an input: (q - zero point) * (scale * extra) for
// uint8, x * extra for float32.
function dequantized(t, extra) {
  const out = new Float32Array(t.data.length);
  if (t.type === 'uint8') {
    if (!t.quant) throw new Error('PosenetDecoderOp: a uint8 input without quantization');
    const scale = f(f(t.quant.scale[0]) * extra);
    const zero = t.quant.zeroPoint[0];
    for (let i = 0; i < out.length; i++) out[i] = f((t.data[i] - zero) * scale);
  } else {
    for (let i = 0; i < out.length; i++) out[i] = f(t.data[i] * extra);
  }
  return out;
}

const sigmoid = (x) => f(1 / f(1 + f(Math.exp(-x))));
const squaredDistance = (a, b) => {
  const dy = f(b[0] - a[0]);
  const dx = f(b[1] - a[1]);
  return f(f(dy * dy) + f(dx * dx));
};
// Sum of the values in decreasing order (std::sort by value, then a loop).
function sumDecreasing(values, keep = () => true) {
  const order = values.map((v, i) => i).sort((a, b) => values[b] - values[a] || a - b);
  let total = 0;
  for (const k of order) if (keep(k)) total = f(total + values[k]);
  return total;
}

// For each keypoint, the child keypoints and edges leaving it (kEdgeList order).
function adjacency() {
  const children = Array.from({ length: NUM_KEYPOINTS }, () => []);
  EDGES.forEach(([a, b], e) => children[a].push([b, e]));
  return children;
}

/**
 * Runs the decoder. inputs: host tensors (heatmaps, shorts, mids[, longs]),
 * each {type, shape, data, quant?}; params: the op's options (max_detections,
 * score_threshold, stride, nms_radius). Returns the output tensors in order.
 */
export function posenetDecoder(inputs, params, { rootOrder = 'heap' } = {}) {
  const [heat, shorts, mids, longs] = inputs;
  const [, height, width] = heat.shape;
  const maxDetections = params.max_detections;
  const stride = params.stride;
  const threshold = f(params.score_threshold);
  const extra = f(1 / stride);
  const scores = dequantized(heat, 1);
  const shortData = dequantized(shorts, extra);
  const midData = dequantized(mids, extra);
  const sampleScore = sampler(scores, height, width, NUM_KEYPOINTS);
  const sampleShort = sampler(shortData, height, width, 2 * NUM_KEYPOINTS);
  const sampleMid = sampler(midData, height, width, 4 * NUM_EDGES);
  const nmsRadius = f(f(params.nms_radius) / stride);
  const squaredRadius = f(nmsRadius * nmsRadius);
  // Logodds in double, returned as float.
  const minLogit = f(-Math.log(1 / (threshold + 1e-6) - 1));

  // Root candidates: local maxima (radius 1) at or above the threshold.
  const queue = rootOrder === 'heap' ? new Heap() : new ScanQueue();
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let j = 0; j < NUM_KEYPOINTS; j++) {
        const s = scores[(y * width + x) * NUM_KEYPOINTS + j];
        if (!(s >= minLogit)) continue;
        let maximum = true;
        for (let yy = Math.max(y - 1, 0); maximum && yy < Math.min(y + 2, height); yy++) {
          for (let xx = Math.max(x - 1, 0); xx < Math.min(x + 2, width); xx++) {
            if (scores[(yy * width + xx) * NUM_KEYPOINTS + j] > s) { maximum = false; break; }
          }
        }
        if (!maximum) continue;
        const o = (y * width + x) * 2 * NUM_KEYPOINTS + j;
        const point = [clamp(f(y + shortData[o]), 0, f(height - 1)), clamp(f(x + shortData[o + NUM_KEYPOINTS]), 0, f(width - 1))];
        queue.push({ point, id: j, score: s });
      }
    }
  }

  const children = adjacency();
  const decode = (root) => {
    const keypoints = Array.from({ length: NUM_KEYPOINTS }, () => [-1, -1]);
    const keypointScores = new Array(NUM_KEYPOINTS).fill(-1e5);
    const done = new Array(NUM_KEYPOINTS).fill(false);
    const pending = new Heap();
    pending.push({ point: root.point, id: root.id, score: sampleScore(root.point[0], root.point[1], root.id) });
    while (pending.size) {
      const current = pending.pop();
      if (done[current.id]) continue;
      keypoints[current.id] = current.point;
      keypointScores[current.id] = current.score;
      done[current.id] = true;
      for (const [child, edge] of children[current.id]) {
        if (done[child]) continue;
        const e = edge >= NUM_EDGES ? edge + NUM_EDGES : edge;
        let [y, x] = current.point;
        const my = sampleMid(y, x, e);
        const mx = sampleMid(y, x, NUM_EDGES + e);
        y = clamp(f(y + my), 0, f(height - 1));
        x = clamp(f(x + mx), 0, f(width - 1));
        for (let step = 0; step < 5; step++) {
          const sy = sampleShort(y, x, child);
          const sx = sampleShort(y, x, NUM_KEYPOINTS + child);
          y = clamp(f(y + sy), 0, f(height - 1));
          x = clamp(f(x + sx), 0, f(width - 1));
        }
        pending.push({ point: [y, x], id: child, score: sampleScore(y, x, child) });
      }
    }
    return { keypoints, keypointScores };
  };

  const poses = [];
  while (poses.length < maxDetections && queue.size) {
    const root = queue.pop();
    if (poses.some((p) => squaredDistance(root.point, p.keypoints[root.id]) <= squaredRadius)) continue;
    const pose = decode(root);
    pose.keypointScores = pose.keypointScores.map(sigmoid);
    pose.score = f(sumDecreasing(pose.keypointScores) / NUM_KEYPOINTS);
    if (pose.score >= threshold) poses.push(pose);
  }

  // Soft keypoint NMS in decreasing instance score, then rescoring.
  const byScore = (list) => list.map((p, i) => i).sort((a, b) => list[b] - list[a] || a - b);
  const order = byScore(poses.map((p) => p.score));
  const rescored = new Array(poses.length);
  order.forEach((current, i) => {
    const occluded = new Array(NUM_KEYPOINTS).fill(false);
    for (let j = 0; j < i; j++) {
      for (let k = 0; k < NUM_KEYPOINTS; k++) {
        if (squaredDistance(poses[current].keypoints[k], poses[order[j]].keypoints[k]) <= squaredRadius) occluded[k] = true;
      }
    }
    rescored[current] = f(sumDecreasing(poses[current].keypointScores, (k) => !occluded[k]) / NUM_KEYPOINTS);
  });
  const final = byScore(rescored);

  const outKeypoints = new Float32Array(maxDetections * NUM_KEYPOINTS * 2);
  const outKeypointScores = new Float32Array(maxDetections * NUM_KEYPOINTS);
  const outScores = new Float32Array(maxDetections);
  let count = 0;
  for (const index of final) {
    if (rescored[index] < threshold) break;
    for (let k = 0; k < NUM_KEYPOINTS; k++) {
      outKeypoints[(count * NUM_KEYPOINTS + k) * 2] = f(poses[index].keypoints[k][0] * stride);
      outKeypoints[(count * NUM_KEYPOINTS + k) * 2 + 1] = f(poses[index].keypoints[k][1] * stride);
      outKeypointScores[count * NUM_KEYPOINTS + k] = poses[index].keypointScores[k];
    }
    outScores[count] = rescored[index];
    count++;
  }
  const outputs = [
    { type: 'float32', shape: [1, maxDetections, NUM_KEYPOINTS, 2], data: outKeypoints },
    { type: 'float32', shape: [1, maxDetections, NUM_KEYPOINTS], data: outKeypointScores },
    { type: 'float32', shape: [1, maxDetections], data: outScores },
    { type: 'float32', shape: [1], data: Float32Array.of(count) },
  ];
  if (longs) outputs.push(instanceMasks(longs, outKeypoints, count, maxDetections, stride, extra));
  return outputs;
}

// DecodeInstanceMasks: each long-offset cell goes to the pose whose keypoints
// lie nearest (in squared distance summed over keypoints) to the cell's
// embedding, its position moved along the long offsets three times.
function instanceMasks(longs, keypoints, count, maxDetections, stride, extra) {
  const [, height, width] = longs.shape;
  const data = dequantized(longs, extra);
  const sample = sampler(data, height, width, 2 * NUM_KEYPOINTS);
  const masks = new Float32Array(maxDetections * height * width);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const embedding = [];
      for (let k = 0; k < NUM_KEYPOINTS; k++) {
        let py = y;
        let px = x;
        for (let step = 0; step <= 2; step++) {
          const oy = sample(py, px, k);
          const ox = sample(py, px, NUM_KEYPOINTS + k);
          py = clamp(f(py + oy), 0, f(height - 1));
          px = clamp(f(px + ox), 0, f(width - 1));
        }
        embedding.push([f(py * stride), f(px * stride)]);
      }
      // std::min_element over no poses is the end: instance 0.
      let best = 0;
      let bestDistance = Infinity;
      for (let p = 0; p < count; p++) {
        let d = 0;
        for (let k = 0; k < NUM_KEYPOINTS; k++) {
          const at = (p * NUM_KEYPOINTS + k) * 2;
          d = f(d + squaredDistance(embedding[k], [keypoints[at], keypoints[at + 1]]));
        }
        if (p === 0 || d < bestDistance) { best = p; bestDistance = d; }
      }
      masks[(best * width + y) * height + x] = 1;
    }
  }
  return { type: 'float32', shape: [1, maxDetections, height, width], data: masks };
}
