// Self-tests of the numeric harness (no converter needed):
//   node --test tests/numeric/test/harness.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { transpose, inversePermutation, makeTensor, dequantize, castData } from '../lib/tensor.mjs';
import { readOnnxMetadata, readIoLayouts } from '../lib/onnx_meta.mjs';
import { randomTensor, smoothTensor, makeRng, fnv1a, inputSeed } from '../lib/inputs.mjs';
import { compareTensors } from '../lib/compare.mjs';
import { unsupportedOps, onnxFileName } from '../lib/pipeline.mjs';
import { readTfliteModel, inferIndexRange, isIndexTensor } from '../lib/tflite_model.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// shared/ sits beside the repository (…/main/tests/numeric/test -> …/shared/models)
const MODELS = process.env.LITE2ONNX_MODELS ?? path.resolve(HERE, '../../../../shared/models');
const haveModels = fs.existsSync(path.join(MODELS, 'tflite2onnx', 'abs.float32.tflite'));

// ---- tiny protobuf writer for test fixtures --------------------------------
const enc = new TextEncoder();
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const pbVarint = (field, v) => [...varint(field * 8), ...varint(v)];
const pbBytes = (field, bytes) => [...varint(field * 8 + 2), ...varint(bytes.length), ...bytes];
const pbString = (field, s) => pbBytes(field, [...enc.encode(s)]);

// ModelProto with a single-node graph y = Abs(x), x/y float32 of `shape`.
function absModel(shape, metadata = {}) {
  const valueInfo = (name) => {
    const dims = shape.flatMap((d) => pbBytes(1, pbVarint(1, d)));
    const tensorType = [...pbVarint(1, 1), ...pbBytes(2, dims)];
    return [...pbString(1, name), ...pbBytes(2, pbBytes(1, tensorType))];
  };
  const node = [...pbString(1, 'x'), ...pbString(2, 'y'), ...pbString(3, 'abs0'), ...pbString(4, 'Abs')];
  const graph = [...pbBytes(1, node), ...pbString(2, 'g'), ...pbBytes(11, valueInfo('x')), ...pbBytes(12, valueInfo('y'))];
  const meta = Object.entries(metadata).flatMap(([k, v]) => pbBytes(14, [...pbString(1, k), ...pbString(2, v)]));
  return Uint8Array.from([
    ...pbVarint(1, 7), ...pbString(2, 'test'), ...pbBytes(8, [...pbString(1, ''), ...pbVarint(2, 13)]),
    ...pbBytes(7, graph), ...meta,
  ]);
}

// reference transpose by explicit index arithmetic
function naiveTranspose(t, perm) {
  const outShape = perm.map((p) => t.shape[p]);
  const n = t.data.length;
  const out = new t.data.constructor(n);
  const inStr = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
  for (let o = 0; o < n; o++) {
    let rem = o;
    let src = 0;
    for (let i = outShape.length - 1; i >= 0; i--) {
      const idx = rem % outShape[i];
      rem = Math.floor(rem / outShape[i]);
      src += idx * inStr[perm[i]];
    }
    out[o] = t.data[src];
  }
  return { shape: outShape, data: out };
}

test('transpose follows ONNX Transpose semantics', () => {
  // NHWC [1,2,3,4] -> NCHW with perm [0,3,1,2]
  const data = Float32Array.from({ length: 24 }, (_, i) => i);
  const t = makeTensor('float32', [1, 2, 3, 4], data);
  const nchw = transpose(t, [0, 3, 1, 2]);
  assert.deepEqual(nchw.shape, [1, 4, 2, 3]);
  // nchw[0][c][h][w] == nhwc[0][h][w][c]
  for (let c = 0; c < 4; c++) {
    for (let h = 0; h < 2; h++) {
      for (let w = 0; w < 3; w++) {
        assert.equal(nchw.data[c * 6 + h * 3 + w], data[h * 12 + w * 4 + c]);
      }
    }
  }
  const back = transpose(nchw, inversePermutation([0, 3, 1, 2]));
  assert.deepEqual(back.shape, [1, 2, 3, 4]);
  assert.deepEqual(Array.from(back.data), Array.from(data));
});

test('transpose matches a naive implementation for several ranks and types', () => {
  const rng = makeRng(42);
  const cases = [
    [[5], [0]], [[2, 3], [1, 0]], [[2, 3, 4], [2, 0, 1]], [[3, 1, 4, 2], [0, 2, 3, 1]],
    [[2, 3, 1, 4, 2], [4, 0, 3, 1, 2]], [[2, 0, 3], [2, 1, 0]],
  ];
  for (const [shape, perm] of cases) {
    const n = shape.reduce((a, b) => a * b, 1);
    for (const Ctor of [Float32Array, Int8Array, BigInt64Array]) {
      const data = new Ctor(n);
      for (let i = 0; i < n; i++) data[i] = Ctor === BigInt64Array ? BigInt(i) : Math.floor(rng() * 100) - 50;
      const t = makeTensor('x', shape, data);
      const got = transpose(t, perm);
      const want = naiveTranspose(t, perm);
      assert.deepEqual(got.shape, want.shape);
      assert.deepEqual(Array.from(got.data), Array.from(want.data), `shape ${shape} perm ${perm}`);
    }
  }
});

test('inversePermutation undoes a permutation', () => {
  assert.deepEqual(inversePermutation([0, 3, 1, 2]), [0, 2, 3, 1]);
  assert.deepEqual(inversePermutation([2, 0, 1]), [1, 2, 0]);
});

test('ONNX metadata_props are read from the wire format', () => {
  const layouts = { x: [0, 3, 1, 2], 'y:0': [0, 2, 3, 1] };
  const bytes = absModel([1, 2, 3, 4], { 'lite2onnx.io_layouts': JSON.stringify(layouts), other: 'v' });
  assert.deepEqual(readOnnxMetadata(bytes), { 'lite2onnx.io_layouts': JSON.stringify(layouts), other: 'v' });
  assert.deepEqual(readIoLayouts(bytes), layouts);
  assert.deepEqual(readIoLayouts(absModel([2])), {});
  assert.throws(() => readIoLayouts(absModel([2], { 'lite2onnx.io_layouts': '{"x":[0,0]}' })), /not a permutation/);
});

test('smooth inputs interpolate a coarse grid along the chosen axes', () => {
  // NHWC [1, 33, 17, 2], cell 16: grid points at h, w in {0, 16, 32}; channels independent
  const t = smoothTensor('float32', [1, 33, 17, 2], 5, [0, 1], undefined, 16);
  const at = (h, w, c) => t.data[(h * 17 + w) * 2 + c];
  for (const c of [0, 1]) {
    // halfway between two grid points along W is their mean, along H too
    assert.ok(Math.abs(at(0, 8, c) - (at(0, 0, c) + at(0, 16, c)) / 2) < 1e-6);
    assert.ok(Math.abs(at(8, 0, c) - (at(0, 0, c) + at(16, 0, c)) / 2) < 1e-6);
    // neighbours differ by at most a sixteenth of the range (float32 storage): smooth
    for (let h = 0; h < 33; h++) for (let w = 1; w < 17; w++) assert.ok(Math.abs(at(h, w, c) - at(h, w - 1, c)) <= 1 / 16 + 1e-6);
  }
  assert.notEqual(at(0, 0, 0), at(0, 0, 1));
  for (const v of t.data) assert.ok(v >= 0 && v < 1);
  assert.deepEqual(Array.from(t.data), Array.from(smoothTensor('float32', [1, 33, 17, 2], 5, [0, 1], undefined, 16).data));
  // NCHW int8 over axes 2, 3: values stay integers in the type range
  const q = smoothTensor('int8', [1, 3, 20, 20], 9, undefined, [2, 3], 4);
  for (const v of q.data) assert.ok(Number.isInteger(v) && v >= -128 && v <= 127);
  assert.throws(() => smoothTensor('float32', [4], 1, undefined, undefined, 16), /rank >= 2/);
  assert.throws(() => smoothTensor('float32', [1, 4, 4], 1, undefined, [2, 1], 16), /bad axes/);
});

test('random inputs are deterministic and respect ranges', () => {
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
  const s = inputSeed('conv.float32.tflite', 0);
  const a = randomTensor('float32', [4, 5], s);
  const b = randomTensor('float32', [4, 5], s);
  assert.deepEqual(Array.from(a.data), Array.from(b.data));
  assert.notDeepEqual(Array.from(a.data), Array.from(randomTensor('float32', [4, 5], inputSeed('conv.float32.tflite', 1)).data));
  for (const v of a.data) assert.ok(v >= -1 && v < 1);
  const ids = randomTensor('int32', [1000], 7, [0, 10003]);
  let max = 0;
  for (const v of ids.data) { assert.ok(v >= 0 && v < 10003); max = Math.max(max, v); }
  assert.ok(max > 9000, 'uses the whole range');
  const i8 = randomTensor('int8', [4000], 3);
  assert.ok(Math.min(...i8.data) === -128 && Math.max(...i8.data) === 127);
  const small = randomTensor('int64', [100], 3);
  for (const v of small.data) assert.ok(v >= 0n && v < 10n);
  const bools = randomTensor('bool', [100], 3);
  for (const v of bools.data) assert.ok(v === 0 || v === 1);
});

test('float tolerance: 1e-5 + 1e-4 * max(range, max|ref|)', () => {
  const ref = makeTensor('float32', [4], Float32Array.from([0, 1, 2, 10]));
  const tol = 1e-5 + 1e-4 * 10;
  const ok = makeTensor('float32', [4], Float32Array.from([0, 1, 2, 10 + tol * 0.9]));
  const bad = makeTensor('float32', [4], Float32Array.from([0, 1, 2 + tol * 1.5, 10]));
  const r1 = compareTensors(ref, ok, 'float');
  assert.ok(r1.ok);
  assert.ok(Math.abs(r1.tol - tol) < 1e-9);
  const r2 = compareTensors(ref, bad, 'float');
  assert.ok(!r2.ok);
  assert.match(r2.detail, /worst at \[2\]/);
  const nan = makeTensor('float32', [1], Float32Array.from([NaN]));
  assert.ok(compareTensors(nan, nan, 'float').ok);
  assert.ok(!compareTensors(nan, makeTensor('float32', [1], Float32Array.from([0])), 'float').ok);
  assert.ok(!compareTensors(ref, makeTensor('float32', [2, 2], ok.data), 'float').ok, 'shape must match');
});

test('exact, index and quantized rules', () => {
  const t = (type, arr) => makeTensor(type, [arr.length], Int32Array.from(arr));
  assert.ok(compareTensors(t('int32', [1, 2, 3]), t('int32', [1, 2, 3]), 'exact').ok);
  assert.ok(!compareTensors(t('int32', [1, 2, 3]), t('int32', [1, 2, 4]), 'exact').ok);
  const many = Array.from({ length: 2000 }, (_, i) => i % 7);
  const twoOff = many.slice(); twoOff[5] = 99; twoOff[6] = 99;
  const threeOff = twoOff.slice(); threeOff[7] = 99;
  assert.ok(compareTensors(t('int32', many), t('int32', twoOff), 'index').ok, '99.9% equal');
  assert.ok(!compareTensors(t('int32', many), t('int32', threeOff), 'index').ok);
  const q = Array.from({ length: 1000 }, (_, i) => i % 200 - 100);
  const q1 = q.map((v, i) => v + (i % 3) - 1); // all within 1 step
  assert.ok(compareTensors(t('int8', q), t('int8', q1), 'quantized').ok);
  const q2 = q1.slice(); for (let i = 0; i < 11; i++) q2[i] = q[i] + 2; // 1.1% at 2 steps
  assert.ok(!compareTensors(t('int8', q), t('int8', q2), 'quantized').ok);
  const q3 = q1.slice(); q3[0] = q[0] + 5; // one element beyond 4 steps
  assert.ok(!compareTensors(t('int8', q), t('int8', q3), 'quantized').ok);
  const q4 = q1.slice(); q4[0] = q[0] + 4;
  assert.ok(compareTensors(t('int8', q), t('int8', q4), 'quantized').ok);
});

test('dequantized rule: 99% within 2% of range, same top-1', () => {
  const ref = makeTensor('float32', [1, 4], Float32Array.from([0.1, 0.7, 0.15, 0.05]));
  const close = makeTensor('float32', [1, 4], Float32Array.from([0.11, 0.69, 0.15, 0.05]));
  assert.ok(compareTensors(ref, close, 'dequantized', {}, { classifier: true }).ok);
  const flipped = makeTensor('float32', [1, 4], Float32Array.from([0.8, 0.7, 0.15, 0.05]));
  const r = compareTensors(ref, flipped, 'dequantized', {}, { classifier: true });
  assert.ok(!r.ok);
  assert.match(r.detail, /top-1/);
});

test('dequantize handles per-tensor and per-axis parameters', () => {
  const t = makeTensor('int8', [2, 2], Int8Array.from([10, 20, 30, 40]));
  assert.deepEqual(Array.from(dequantize(t, { scale: [0.5], zeroPoint: [10], axis: 0 }).data), [0, 5, 10, 15]);
  assert.deepEqual(Array.from(dequantize(t, { scale: [1, 2], zeroPoint: [0, 0], axis: 1 }).data), [10, 40, 30, 80]);
  assert.deepEqual(Array.from(castData(Int32Array.from([1, 2]), 'int64')), [1n, 2n]);
});

test('unsupported operator lists are found in the CLI JSON', () => {
  const doc = JSON.stringify({ error: { code: 4 }, unsupported: [{ op_index: 3, op: 'LSTM' }, { op_index: 9, op: 'LSTM' }, 'CUSTOM:Foo'] });
  assert.deepEqual(unsupportedOps(doc), [{ op: 'LSTM', index: 3 }, { op: 'LSTM', index: 9 }, { op: 'CUSTOM:Foo' }]);
  assert.deepEqual(unsupportedOps(JSON.stringify({ diagnostics: { unsupported: [{ op: 'X' }] } })), [{ op: 'X', index: undefined }]);
  assert.equal(unsupportedOps('not json'), null);
  assert.equal(onnxFileName('tflite2onnx/conv.float32.tflite'), 'tflite2onnx__conv.float32.onnx');
});

test('onnxruntime runs a hand-encoded model', async () => {
  const { openOnnx } = await import('../lib/ort_runner.mjs');
  const s = await openOnnx(absModel([2, 3]), { threads: 1 });
  try {
    assert.deepEqual(s.inputs.map((m) => [m.name, m.type]), [['x', 'float32']]);
    const x = makeTensor('float32', [2, 3], Float32Array.from([-1, 2, -3, 4, -5, 6]));
    const out = await s.run(new Map([['x', x]]));
    assert.deepEqual(Array.from(out.get('y').data), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(out.get('y').shape, [2, 3]);
  } finally {
    await s.release();
  }
});

test('TFLite reader and both TFLite runtimes on shared models', { skip: !haveModels && `no models at ${MODELS}` }, async () => {
  const { runLiteRt } = await import('../lib/litert.mjs');
  const { runTfjsTflite } = await import('../lib/tfjs_tflite.mjs');
  const bytes = new Uint8Array(fs.readFileSync(path.join(MODELS, 'tflite2onnx', 'conv.float32.tflite')));
  const m = readTfliteModel(bytes);
  assert.equal(m.inputs[0].type, 'float32');
  assert.deepEqual(m.inputs[0].shape, [1, 32, 32, 8]);
  const inputs = new Map([[m.inputs[0].name, randomTensor('float32', m.inputs[0].shape, 1)]]);
  const a = await runLiteRt(bytes, m, inputs);
  const b = await runTfjsTflite(bytes, m, inputs);
  const name = m.outputs[0].name;
  assert.deepEqual(a.get(name).shape, [1, 32, 32, 16]);
  assert.ok(compareTensors(a.get(name), b.get(name), 'float').ok);

  const review = readTfliteModel(fs.readFileSync(path.join(MODELS, 'tflite-support', 'movie_review.tflite')));
  assert.deepEqual(inferIndexRange(review, review.inputs[0]), [0, 10003]);
  const deeplab = readTfliteModel(fs.readFileSync(path.join(MODELS, 'coral-test_data', 'deeplabv3_mnv2_dm05_pascal_quant.tflite')));
  assert.ok(isIndexTensor(deeplab, deeplab.outputs[0]));
  assert.equal(deeplab.inputs[0].quant.zeroPoint[0], 128);
});
