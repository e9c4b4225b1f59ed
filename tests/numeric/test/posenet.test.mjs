// Self-tests of lib/posenet_kernel.mjs, Coral's PosenetDecoderOp in JS (the
// "posenet" reference): the facts it must reproduce of the C++ kernel.
import test from 'node:test';
import assert from 'node:assert/strict';

import { Heap, posenetDecoder } from '../lib/posenet_kernel.mjs';

// Coral's decoder takes its root candidates from a std::priority_queue: which
// of two equal scores comes first decides which pose the NMS keeps. The order
// below is what libstdc++ (GCC 12) pops for these pushes (printed by a C++
// program pushing {id, score} with a comparator on score alone).
test('posenet kernel: equal scores pop in the order of libstdc++\'s priority_queue', () => {
  const scores = [2, 5, 2, 7, 5, 2, 7, 5, 1, 2, 7, 5, 2, 1, 7, 2, 5, 5, 1, 7];
  const q = new Heap();
  scores.forEach((score, id) => q.push({ id, score }));
  const order = [];
  while (q.size) order.push(q.pop().id);
  assert.deepEqual(order, [3, 6, 14, 10, 19, 11, 4, 1, 7, 17, 16, 2, 9, 12, 0, 15, 5, 8, 13, 18]);
});

// No candidate (every logit below the threshold's): count 0, every row zero,
// and BodyPix's first mask all ones (the kernel's min_element over no pose).
test('posenet kernel: no pose', () => {
  const map = (h, w, c, v) => ({ type: 'float32', shape: [1, h, w, c], data: new Float32Array(h * w * c).fill(v) });
  const out = posenetDecoder([map(3, 4, 17, -9), map(3, 4, 34, 0), map(3, 4, 64, 0), map(33, 33, 34, 0)],
    { max_detections: 2, score_threshold: 0.5, stride: 8, nms_radius: 10 });
  assert.deepEqual(out.map((t) => t.shape), [[1, 2, 17, 2], [1, 2, 17], [1, 2], [1], [1, 2, 33, 33]]);
  assert.equal(out[3].data[0], 0);
  assert.ok(out[0].data.every((v) => v === 0));
  assert.ok(out[4].data.slice(0, 33 * 33).every((v) => v === 1));
  assert.ok(out[4].data.slice(33 * 33).every((v) => v === 0));
});
