// Self-tests of the numeric harness (no converter needed):
//   node --test tests/numeric/test/harness.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { transpose, inversePermutation, makeTensor, dequantize, castData } from '../lib/tensor.mjs';
import { readOnnxMetadata, readIoLayouts, countOnnxOps, withInitializers } from '../lib/onnx_meta.mjs';
import { randomTensor, smoothTensor, makeRng, fnv1a, inputSeed } from '../lib/inputs.mjs';
import {
  compareTensors, outputDistance, toleranceDistance, withinRuntimeSpread, SINGLE_OP_QUANTIZED,
} from '../lib/compare.mjs';
import {
  judgeResult, normalizeExpectation, expectationFor, variantName, roundFigures, compareFigures, entryFigures, updateKnownFailEntry,
  removeKnownFailVariant, formatJson,
} from '../lib/expect.mjs';
import {
  unsupportedOps, onnxFileName, comparedOutputs, mergeInvocations, invocationName, readStatePairs, STATEFUL_INVOCATIONS,
} from '../lib/pipeline.mjs';
import { readTfliteModel, readSignatureKeys, inferIndexRange, isIndexTensor } from '../lib/tflite_model.mjs';

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

// ModelProto with a single-node graph y = Abs(x), x/y float32 of `shape`;
// `extraNodes` are appended NodeProto bytes.
function absModel(shape, metadata = {}, extraNodes = []) {
  const valueInfo = (name) => {
    const dims = shape.flatMap((d) => pbBytes(1, pbVarint(1, d)));
    const tensorType = [...pbVarint(1, 1), ...pbBytes(2, dims)];
    return [...pbString(1, name), ...pbBytes(2, pbBytes(1, tensorType))];
  };
  const node = [...pbString(1, 'x'), ...pbString(2, 'y'), ...pbString(3, 'abs0'), ...pbString(4, 'Abs')];
  const graph = [...pbBytes(1, node), ...extraNodes.flatMap((n) => pbBytes(1, n)), ...pbString(2, 'g'),
    ...pbBytes(11, valueInfo('x')), ...pbBytes(12, valueInfo('y'))];
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

test('distribution rule: two samples of one distribution by Kolmogorov-Smirnov', () => {
  const uniform = (seed, n, scale = 1) => {
    const rng = makeRng(seed);
    return makeTensor('float32', [n], Float32Array.from({ length: n }, () => scale * rng()));
  };
  const ref = uniform(1, 3000);
  const r = compareTensors(ref, uniform(2, 3000), 'distribution');
  assert.ok(r.ok, r.summary);
  assert.ok(Math.abs(r.tol - 1.95 * Math.sqrt(2 / 3000)) < 1e-12);
  const shifted = compareTensors(ref, uniform(2, 3000, 0.9), 'distribution');
  assert.ok(!shifted.ok, 'a uniform on [0, 0.9) is another distribution');
  assert.match(shifted.detail, /not drawn from the reference's distribution/);
  const d = outputDistance(ref, uniform(2, 3000, 0.9), 'distribution');
  assert.ok(d.beyond === 1 && d.max > 1);
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

// A model with state, as lite2onnx writes one: y = x + s, s/next = y; the
// state input s is backed by an initializer (`initial`).
function stateModel(initial = [1, 2]) {
  const valueInfo = (name) => {
    const tensorType = [...pbVarint(1, 1), ...pbBytes(2, pbBytes(1, pbVarint(1, 2)))];
    return [...pbString(1, name), ...pbBytes(2, pbBytes(1, tensorType))];
  };
  const add = [...pbString(1, 'x'), ...pbString(1, 's'), ...pbString(2, 'y'), ...pbString(3, 'add'), ...pbString(4, 'Add')];
  const copy = [...pbString(1, 'y'), ...pbString(2, 's/next'), ...pbString(3, 'copy'), ...pbString(4, 'Identity')];
  const raw = new Uint8Array(Float32Array.from(initial).buffer);
  const init = [...pbVarint(1, 2), ...pbVarint(2, 1), ...pbString(8, 's'), ...pbBytes(9, [...raw])];
  const graph = [...pbBytes(1, add), ...pbBytes(1, copy), ...pbString(2, 'g'), ...pbBytes(5, init),
    ...pbBytes(11, valueInfo('x')), ...pbBytes(11, valueInfo('s')), ...pbBytes(12, valueInfo('y')),
    ...pbBytes(12, valueInfo('s/next'))];
  const state = JSON.stringify([{ input: 's', output: 's/next', kind: 'variable_tensor', tflite: 's' }]);
  const meta = pbBytes(14, [...pbString(1, 'lite2onnx.state'), ...pbString(2, state)]);
  return Uint8Array.from([
    ...pbVarint(1, 7), ...pbString(2, 'test'), ...pbBytes(8, [...pbString(1, ''), ...pbVarint(2, 13)]),
    ...pbBytes(7, graph), ...meta,
  ]);
}

test('stateful models: state pairs, three invocations compared under their own names', () => {
  const bytes = stateModel();
  assert.deepEqual(readStatePairs(readOnnxMetadata(bytes)).map((p) => [p.input, p.output]), [['s', 's/next']]);
  assert.deepEqual(readStatePairs({}), []);
  assert.throws(() => readStatePairs({ 'lite2onnx.state': '[{"input": 1}]' }), /pairs/);
  assert.equal(STATEFUL_INVOCATIONS, 3);
  assert.equal(invocationName('out', 0), 'out');
  assert.equal(invocationName('out', 2), 'out@3');
  const outs = comparedOutputs([{ name: 'a', index: 4 }, { name: 'b', index: 5 }], 3);
  assert.deepEqual(outs.map((t) => t.name), ['a', 'b', 'a@2', 'b@2', 'a@3', 'b@3']);
  assert.deepEqual(outs.map((t) => t.specName ?? t.name), ['a', 'b', 'a', 'b', 'a', 'b']);
  assert.deepEqual(outs.map((t) => t.index), [4, 5, 4, 5, 4, 5]);
  const merged = mergeInvocations([new Map([['a', 1]]), new Map([['a', 2]]), new Map([['a', 3]])]);
  assert.deepEqual([...merged], [['a', 1], ['a@2', 2], ['a@3', 3]]);
});

// What the harness (runOnnx) and the README's advice to onnxruntime-node
// users rely on: onnxruntime-node neither lists nor feeds an input backed by
// an initializer (the feed is dropped without a word), and the state is fed
// by writing it into the initializer's bytes.
test('state inputs: onnxruntime-node drops feeds of inputs with an initializer; writing the initializer feeds them', async () => {
  const { openOnnx } = await import('../lib/ort_runner.mjs');
  const x = makeTensor('float32', [2], Float32Array.from([10, 20]));
  const run = async (bytes, feeds) => {
    const s = await openOnnx(bytes, { threads: 1 });
    try {
      assert.deepEqual(s.inputs.map((m) => m.name), ['x']);
      assert.deepEqual(s.outputs.map((m) => m.name), ['y', 's/next']);
      return await s.run(new Map([['x', x], ...feeds]));
    } finally {
      await s.release();
    }
  };
  const bytes = stateModel([1, 2]);
  assert.deepEqual(Array.from((await run(bytes, [])).get('y').data), [11, 22]);
  const s2 = makeTensor('float32', [2], Float32Array.from([100, 200]));
  assert.deepEqual(Array.from((await run(bytes, [['s', s2]])).get('y').data), [11, 22], 'the feed of s is dropped');
  // Three invocations as the harness runs them: each /next written into the
  // initializer of the next one's copy.
  let state = null;
  const ys = [];
  for (let k = 0; k < 3; k++) {
    const outs = await run(state ? withInitializers(bytes, { s: state }) : bytes, []);
    ys.push(Array.from(outs.get('y').data));
    state = outs.get('s/next').data;
  }
  assert.deepEqual(ys, [[11, 22], [21, 42], [31, 62]]);
  assert.deepEqual(Array.from((await run(bytes, [])).get('y').data), [11, 22], 'the original bytes are left as they are');
  // The copy keeps every byte but the initializer's (metadata included).
  const fed = withInitializers(bytes, { s: Float32Array.from([-1, -2]) });
  assert.equal(fed.length, bytes.length);
  assert.deepEqual(readStatePairs(readOnnxMetadata(fed)).length, 1);
  assert.throws(() => withInitializers(bytes, { s: Float32Array.from([1]) }), /holds 8 bytes/);
  assert.throws(() => withInitializers(bytes, { t: Float32Array.from([1, 2]) }), /no initializer "t"/);
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

test('signatures: the subgraph read, LiteRT.js runs the one chosen, tfjs-tflite subgraph 0 only',
  { skip: !haveModels && `no models at ${MODELS}` }, async () => {
    const { runLiteRt } = await import('../lib/litert.mjs');
    const { runTfjsTflite } = await import('../lib/tfjs_tflite.mjs');
    const bytes = new Uint8Array(fs.readFileSync(path.join(MODELS, 'ai-edge-quantizer', 'toy_model_with_kv_cache_multi_signature.tflite')));
    assert.deepEqual(readSignatureKeys(bytes), ['signature_1', 'signature_2']);
    const first = readTfliteModel(bytes);
    assert.equal(first.signature.key, 'signature_1');
    assert.equal(first.subgraphIndex, 0);
    const second = readTfliteModel(bytes, { signature: 'signature_2' });
    assert.equal(second.subgraphIndex, 1);
    assert.equal(second.signature.inputs.length, 4);
    assert.throws(() => readTfliteModel(bytes, { signature: 'nope' }), /no signature "nope" \(it has "signature_1", "signature_2"\)/);
    const inputs = new Map(second.inputs.map((t, i) => [t.name, randomTensor(t.type, t.shape, i + 1, t.type === 'int32' ? [0, 2] : undefined)]));
    const out = await runLiteRt(bytes, second, inputs);
    assert.deepEqual([...out.keys()].sort(), second.outputs.map((t) => t.name).sort());
    for (const t of second.outputs) assert.deepEqual(out.get(t.name).shape, t.shape);
    await assert.rejects(runTfjsTflite(bytes, second, inputs), /tfjs-tflite runs subgraph 0 only; signature "signature_2" is subgraph 1/);
    // A model without signatures: no signature, subgraph 0.
    const plain = readTfliteModel(fs.readFileSync(path.join(MODELS, 'tflite2onnx', 'conv.float32.tflite')));
    assert.equal(plain.signature, null);
    assert.equal(plain.subgraphIndex, 0);
  });

// ---- the stricter judge -----------------------------------------------------

const q8 = (arr, shape = [arr.length]) => makeTensor('int8', shape, Int8Array.from(arr));

test('single-op quantized rule: 99% exact, none beyond 1 step', () => {
  const ref = Array.from({ length: 1000 }, (_, i) => (i % 200) - 100);
  const rule = (got, extra = {}) => compareTensors(q8(ref), q8(got), 'quantized', { ...SINGLE_OP_QUANTIZED, ...extra });
  // an off-by-one on every element passed the old rule (99% within 1 step)...
  const offByOne = ref.map((v) => v + 1);
  assert.ok(compareTensors(q8(ref), q8(offByOne), 'quantized').ok, 'the whole-model rule allows it');
  // ...and fails the single-op rule
  const r = rule(offByOne);
  assert.ok(!r.ok);
  assert.match(r.detail, /0% exact.*need 99% exact and none beyond 1/);
  const tenOff = ref.slice(); for (let i = 0; i < 10; i++) tenOff[i] += 1; // 99% exact
  assert.ok(rule(tenOff).ok);
  const elevenOff = ref.slice(); for (let i = 0; i < 11; i++) elevenOff[i] += 1;
  assert.ok(!rule(elevenOff).ok);
  const twoSteps = ref.slice(); twoSteps[3] += 2;
  assert.ok(!rule(twoSteps).ok, 'one element 2 steps off');
  // a per-op exception lowers the exact fraction, never the step bound
  const ninetyOff = ref.slice(); for (let i = 0; i < 90; i++) ninetyOff[i] -= 1;
  assert.ok(!rule(ninetyOff).ok);
  assert.ok(rule(ninetyOff, { exact: 0.9 }).ok);
  assert.ok(!rule(twoSteps, { exact: 0.9 }).ok);
});

test('single-op exceptions are written down with a reason and never allow 2 steps', () => {
  const doc = JSON.parse(fs.readFileSync(path.join(HERE, '..', 'single_op_exceptions.json'), 'utf8'));
  for (const [op, e] of Object.entries(doc)) {
    if (op.startsWith('//')) continue;
    assert.match(op, /^[A-Z0-9_]+(:[a-z0-9]+)?$/, `${op}: TFLite operator names (:type)`);
    assert.ok(typeof e.why === 'string' && e.why.length > 40, `${op}: says why`);
    // int16 lookup-table kernels (TANH) leave about half the elements one step off.
    const floor = op.endsWith(':int16') ? 0.4 : 0.5;
    assert.ok(e.tolerance.exact > floor && e.tolerance.exact < SINGLE_OP_QUANTIZED.exact, `${op}: exact`);
    assert.equal(e.tolerance.maxSteps ?? 1, 1, `${op}: no more than 1 step`);
  }
});

test('output distances: steps, tolerance bounds, top-1', () => {
  const ref = Array.from({ length: 100 }, (_, i) => i - 50);
  const got = ref.slice(); got[0] += 3; got[1] += 1; got[2] -= 2;
  assert.deepEqual(outputDistance(q8(ref), q8(got), 'quantized'), { unit: 'step', beyond: 0.02, max: 3, off: 0.03 });
  const f = (a) => makeTensor('float32', [1, a.length], Float32Array.from(a));
  // float: the unit is the tolerance bound 1e-5 + 1e-4 * max(range, max|ref|) = 1e-5 + 1e-4 * 2
  const d = outputDistance(f([1, -1, 0, 0.5]), f([1 + 4.2e-4, -1, 0, 0.5]), 'float');
  assert.equal(d.unit, 'tolerance');
  assert.equal(d.beyond, 0.25);
  assert.ok(Math.abs(d.max - 2) < 1e-3);
  // dequantized classifier: a clear top-1 change counts
  const dq = outputDistance(f([0.1, 0.7, 0.2]), f([0.8, 0.1, 0.2]), 'dequantized', {}, { classifier: true });
  assert.equal(dq.top1, 1);
  assert.equal(outputDistance(q8([1, 2]), q8([1, 2, 3]), 'quantized'), null);
  assert.deepEqual(toleranceDistance('quantized'), { beyond: 0.01, max: 4 });
  assert.deepEqual(toleranceDistance('float'), { beyond: 0, max: 1 });
});

test('runtime-spread rule: at most max(1.5 x the runtimes\' distance, the tolerance)', () => {
  const allowed = toleranceDistance('quantized'); // 1% beyond 1 step, max 4 steps
  const rt = { unit: 'step', beyond: 0.1, max: 6 };
  assert.ok(withinRuntimeSpread({ unit: 'step', beyond: 0.15, max: 9 }, rt, allowed).ok, '1.5 x on both figures');
  const twice = withinRuntimeSpread({ unit: 'step', beyond: 0.2, max: 12 }, rt, allowed);
  assert.ok(!twice.ok, 'twice the runtimes\' disagreement fails');
  assert.equal(twice.limit.max, 9);
  assert.ok(Math.abs(twice.limit.beyond - 0.15) < 1e-12);
  assert.ok(!withinRuntimeSpread({ unit: 'step', beyond: 0.1, max: 10 }, rt, allowed).ok, 'max alone beyond');
  // runtimes that agree exactly leave the tolerance: 14 steps at a peak fails
  const exact = { unit: 'step', beyond: 0, max: 0 };
  assert.ok(!withinRuntimeSpread({ unit: 'step', beyond: 0.003, max: 14 }, exact, allowed).ok);
  assert.ok(withinRuntimeSpread({ unit: 'step', beyond: 0.003, max: 4 }, exact, allowed).ok);
  // end to end on tensors: ONNX 2 steps off everywhere; tfjs-tflite 1 step everywhere, then 2 on 70%
  const ref = Array.from({ length: 200 }, (_, i) => (i % 100) - 50);
  const onnx = outputDistance(q8(ref), q8(ref.map((v) => v + 2)), 'quantized');
  const tfjs = outputDistance(q8(ref), q8(ref.map((v) => v + 1)), 'quantized');
  assert.ok(!withinRuntimeSpread(onnx, tfjs, allowed).ok);
  const tfjs2 = outputDistance(q8(ref), q8(ref.map((v, i) => v + (i % 10 < 7 ? 2 : 1))), 'quantized');
  assert.ok(withinRuntimeSpread(onnx, tfjs2, allowed).ok);
});

test('ONNX Transpose nodes are counted, in subgraphs too', () => {
  const node = (op, extra = []) => [...pbString(1, 'x'), ...pbString(2, `${op}_out`), ...pbString(4, op), ...extra];
  const sub = [...pbBytes(1, node('Transpose')), ...pbBytes(1, node('Relu')), ...pbString(2, 'then')];
  const ifNode = node('If', pbBytes(5, [...pbString(1, 'then_branch'), ...pbBytes(6, sub)]));
  const bytes = absModel([2, 3], {}, [node('Transpose'), node('Transpose'), ifNode]);
  assert.deepEqual(countOnnxOps(bytes), { Abs: 1, Transpose: 3, If: 1, Relu: 1 });
  assert.deepEqual(countOnnxOps(absModel([2])), { Abs: 1 });
});

test('expectations: outcome strings or {outcome, transposes}; variant names', () => {
  assert.deepEqual(normalizeExpectation('pass'), { outcome: 'pass', object: false });
  assert.deepEqual(normalizeExpectation({ outcome: 'fail', transposes: { opset13: 2 } }),
    { outcome: 'fail', transposes: { opset13: 2 }, object: true });
  assert.throws(() => normalizeExpectation('known-fail'), /use pass/);
  assert.throws(() => normalizeExpectation({ outcome: 'pass', transposes: { opset13: -1 } }), /counts/);
  // "outcomes": a variant's own outcome.
  const perVariant = normalizeExpectation({ outcome: 'pass', outcomes: { opset13: 'fail' } });
  assert.equal(expectationFor(perVariant, 'opset13').outcome, 'fail');
  assert.equal(expectationFor(perVariant, 'opset17').outcome, 'pass');
  assert.throws(() => normalizeExpectation({ outcome: 'pass', outcomes: { opset13: 'known' } }), /outcomes/);
  assert.equal(variantName(13, []), 'opset13');
  assert.equal(variantName(17, ['--keep-io-layout']), 'opset17+keep-io-layout');
  assert.equal(variantName(13, ['--quantization=dequantize']), 'opset13+quantization=dequantize');
});

const FIG = {
  reference: 'litert',
  random: { out: { onnx: { unit: 'step', beyond: 0.554, max: 9, off: 0.836 }, runtimes: { unit: 'step', beyond: 0, max: 0, off: 0 } } },
};
const KNOWN = { reason: 'r', figures: { opset13: FIG, opset17: 'opset13' } };
const failed = (measured, extra = {}) => ({ outcome: 'fail', message: 'output "out": 44.6% within 1 step', notes: [], measured, ...extra });
const withOnnx = (onnx) => ({ ...FIG, random: { out: { ...FIG.random.out, onnx: { ...FIG.random.out.onnx, ...onnx } } } });

test('known failures are accepted only while their figures stay as recorded', () => {
  const exp = normalizeExpectation('fail');
  const judge = (r, variant = 'opset13', known = KNOWN) => judgeResult({
    name: 'm', r, exp, expectGiven: true, known, knownFile: 'kf.json', variant,
  });
  // the same figures (to 3 significant digits): KNOWN-FAIL, for an aliased variant too
  assert.equal(judge(failed(withOnnx({ beyond: 0.55412 }))).status, 'known');
  assert.equal(judge(failed(FIG), 'opset17').label, 'KNOWN-FAIL');
  // ONNX worse, ONNX better (with the hint to update), the runtimes' own figures moved
  const worse = judge(failed(withOnnx({ max: 10 })));
  assert.equal(worse.status, 'failed');
  assert.match(worse.message, /further from TFLite than recorded.*max 9 -> 10 \(worse\)/);
  const better = judge(failed(withOnnx({ beyond: 0.5 })));
  assert.equal(better.status, 'failed');
  assert.match(better.message, /closer to TFLite than recorded: update the entry/);
  assert.ok(better.hints.some((h) => h.kind === 'known'));
  const runtimes = { unit: 'step', beyond: 0.01, max: 2, off: 0.1 };
  const moved = judge(failed({ ...FIG, random: { out: { ...FIG.random.out, runtimes } } }));
  assert.match(moved.message, /runtimes' own figures changed/);
  // no figures for this variant, no entry at all, nothing measured (a crash)
  assert.match(judge(failed(FIG), 'opset13+keep-int8-activations').message, /records no figures for opset13\+keep-int8-activations/);
  assert.match(judge(failed(FIG), 'opset13', null).message, /not on the known-fail list kf.json/);
  assert.equal(judge({ outcome: 'fail', message: 'timeout', notes: [] }).status, 'failed');
  // one runtime that is stable under one-step input and ulp scale changes: not justified
  const stable = judge(failed(FIG, { sensitivity: { broken: 0, of: 8, jitterOf: 4 } }));
  assert.match(stable.message, /not justified/);
  assert.equal(judge(failed(FIG, { sensitivity: { broken: 3, of: 8, jitterOf: 4 } })).status, 'known');
  // ... unless the entry says (measured) that the one runtime runs an older kernel
  const older = { ...KNOWN, reference_differs: 'the reference runs an older kernel' };
  assert.equal(judge(failed(FIG, { sensitivity: { broken: 0, of: 8, jitterOf: 4 } }), 'opset13', older).status, 'known');
  // a known failure that now passes fails, so the list gets updated
  const fixed = judge({ outcome: 'pass', message: 'outputs: 1', notes: [] });
  assert.equal(fixed.status, 'failed');
  assert.match(fixed.hints[0].text, /fail -> pass; remove it from kf.json/);
});

test('a failing model that is not expected to fail is a failure', () => {
  const r = judgeResult({ name: 'm', r: failed(FIG), exp: normalizeExpectation('pass'), expectGiven: true, variant: 'opset13' });
  assert.equal(r.status, 'failed');
  assert.ok(r.hints.some((h) => /expect "fail" and record its figures/.test(h.text)));
});

test('models missing from the expectations fail under CI=true', () => {
  const r = { outcome: 'pass', message: 'ok', notes: [], transposes: 2 };
  const local = judgeResult({ name: 'new.tflite', r, expectGiven: true, ci: false });
  assert.equal(local.status, 'passed');
  assert.deepEqual(local.notes, ['not in the expectations file']);
  assert.match(local.hints[0].text, /new.tflite: pass, 2 Transpose/);
  const ci = judgeResult({ name: 'new.tflite', r, expectGiven: true, ci: true, expectFile: 'e.json' });
  assert.equal(ci.status, 'failed');
  assert.match(ci.message, /not in e.json: CI=true requires/);
  // without an expectations file nothing is required
  assert.equal(judgeResult({ name: 'x', r }).status, 'passed');
});

test('Transpose counts: up fails, down hints, missing fails under CI=true', () => {
  const exp = normalizeExpectation({ outcome: 'pass', transposes: { opset13: 3 } });
  const run = (n, variant = 'opset13', ci = false) => judgeResult({
    name: 'm', r: { outcome: 'pass', message: 'ok', notes: [], transposes: n }, exp, expectGiven: true, variant, ci,
  });
  assert.equal(run(3).status, 'passed');
  const up = run(4);
  assert.equal(up.status, 'failed');
  assert.match(up.message, /Transpose nodes went up: 3 -> 4 \(opset13\)/);
  const down = run(1);
  assert.equal(down.status, 'passed');
  assert.match(down.hints[0].text, /3 -> 1 Transpose nodes \(opset13\): lower the recorded count/);
  assert.equal(run(3, 'opset17').status, 'passed');
  assert.equal(run(3, 'opset17', true).status, 'failed');
  // a string entry pins no count
  const plain = judgeResult({
    name: 'm', r: { outcome: 'pass', notes: [], transposes: 9 }, exp: normalizeExpectation('pass'), expectGiven: true,
  });
  assert.equal(plain.status, 'passed');
});

test('--no-skip: a skipped or unsupported slice is a failure', () => {
  for (const outcome of ['skip', 'unsupported']) {
    const r = { outcome, message: 'RFFT2D (op 0)', notes: [] };
    assert.equal(judgeResult({ name: 's', r }).status, 'skipped');
    const strict = judgeResult({ name: 's', r, noSkip: true });
    assert.equal(strict.status, 'failed');
    assert.match(strict.message, /counts as a failure here \(--no-skip\): RFFT2D/);
  }
});

test('known-fail figures: rounding, aliases per variant, removal', () => {
  assert.deepEqual(roundFigures({ a: 0.123456, b: 37, c: Infinity, d: [0.99999] }), { a: 0.123, b: 37, c: 'Infinity', d: [1] });
  assert.ok(compareFigures({ x: 0.123 }, { x: 0.123 }).same);
  assert.ok(compareFigures({ onnx: { max: 9 } }, { onnx: { max: 8 } }).better);
  let e = updateKnownFailEntry(null, 'opset13', FIG);
  assert.equal(e.reason, 'TODO: why it fails');
  e = updateKnownFailEntry({ ...e, reason: 'kept' }, 'opset17', FIG);
  assert.deepEqual(e.figures, { opset13: FIG, opset17: 'opset13' });
  assert.equal(e.reason, 'kept');
  const other = withOnnx({ max: 7 });
  e = updateKnownFailEntry(e, 'opset13+keep-int8-activations', other);
  assert.deepEqual(entryFigures(e, 'opset13+keep-int8-activations'), other);
  // new figures for opset13: its alias keeps the old ones
  e = updateKnownFailEntry(e, 'opset13', other);
  assert.deepEqual(e.figures.opset17, FIG);
  assert.equal(e.figures.opset13, 'opset13+keep-int8-activations');
  const r = removeKnownFailVariant({ reason: 'r', figures: { opset13: FIG, opset17: 'opset13', x: 'opset13' } }, 'opset13');
  assert.deepEqual(r.figures, { opset17: FIG, x: 'opset17' });
  assert.equal(removeKnownFailVariant({ reason: 'r', figures: { opset13: FIG } }, 'opset13'), null);
  // the file format reads back
  assert.deepEqual(JSON.parse(formatJson({ m: e })), { m: e });
});

test('the known-fail list and the expectations agree', () => {
  const read = (f) => JSON.parse(fs.readFileSync(path.join(HERE, '..', f), 'utf8'));
  const known = read('known_fail.json');
  const files = Object.fromEntries(['expect_corpus.json', 'expect_corpus_dequantize.json', 'expect_corpus_exact.json',
    'expect_ops.json'].map((f) => [f, read(f)]));
  // "fail" when any variant expects it.
  const outcome = (v) => (typeof v === 'string' ? v
    : Object.values(v.outcomes ?? {}).includes('fail') ? 'fail' : v.outcome);
  for (const [model, entry] of Object.entries(known)) {
    if (model.startsWith('//')) continue;
    assert.ok(entry.reason && !/^TODO/.test(entry.reason), `${model}: a reason`);
    const variants = Object.keys(entry.figures);
    for (const v of variants) assert.ok(entryFigures(entry, v), `${model}: ${v} resolves`);
    // A per-op slice of a corpus model (corpus.sh) is expected to fail by
    // being on the list; its corpus model must be.
    if (entry.slice_of) {
      assert.ok(known[entry.slice_of], `${model}: slice of ${entry.slice_of}, which is not on the list`);
      continue;
    }
    const expectedIn = Object.entries(files).filter(([, e]) => e[model] && outcome(e[model]) === 'fail').map(([f]) => f);
    assert.ok(expectedIn.length > 0, `${model}: expected "fail" somewhere`);
  }
  for (const [f, e] of Object.entries(files)) {
    for (const [model, v] of Object.entries(e)) {
      if (outcome(v) === 'fail') assert.ok(known[model], `${f}: ${model} expects fail but has no figures`);
    }
  }
});

// ---- MediaPipe's kernels in JS (the "mediapipe" reference) -------------------
import { runMediaPipeKernels } from '../lib/mediapipe_kernels.mjs';

function runKernel(op, inputs, outputs, params = {}) {
  const names = Object.keys(inputs);
  const model = { tensors: outputs.map(([name, shape]) => ({ name, shape })), outputs: outputs.map(([name]) => ({ name })) };
  const program = { ops: [{ op, inputs: names, outputs: outputs.map(([name]) => name), params }] };
  return runMediaPipeKernels(program, model, new Map(Object.entries(inputs)));
}

test('mediapipe kernels: argmax pooling gives the window position + 0.1, the first maximum on ties', () => {
  // [1, 2, 4, 1]: windows 2x2 stride 2 -> two outputs.
  const x = makeTensor('float32', [1, 2, 4, 1], Float32Array.from([1, 5, 7, 7, 2, 3, 0, 7]));
  const out = runKernel('MaxPoolingWithArgmax2D', { x }, [['v', [1, 1, 2, 1]], ['i', [1, 1, 2, 1]]],
    { padding: 'VALID', stride: [2, 2], filter: [2, 2] });
  assert.deepEqual([...out.get('v').data], [5, 7]);
  assert.deepEqual([...out.get('i').data], [Math.fround(1.1), Math.fround(0.1)]);  // (0,1); (0,0) before (0,1), (1,1)
});

test('mediapipe kernels: unpooling puts each value at its window position, zeros elsewhere', () => {
  const v = makeTensor('float32', [1, 1, 2, 1], Float32Array.from([5, 7]));
  const i = makeTensor('float32', [1, 1, 2, 1], Float32Array.from([1.1, 2.1]));
  const out = runKernel('MaxUnpooling2D', { v, i }, [['y', [1, 2, 4, 1]]], { padding: 'VALID', stride: [2, 2], filter: [2, 2] });
  assert.deepEqual([...out.get('y').data], [0, 5, 0, 0, 0, 0, 7, 0]);
});

test('mediapipe kernels: an identity matrix crops the tensor as it is, and moves landmarks by its offset', () => {
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  const data = makeTensor('float32', [1, 3, 3, 1], Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]));
  const m = makeTensor('float32', [1, 4, 4], Float32Array.from(identity));
  const crop = runKernel('TransformTensorBilinear', { data, m }, [['y', [1, 2, 2, 1]]]);
  assert.deepEqual([...crop.get('y').data], [1, 2, 4, 5]);
  const shifted = makeTensor('float32', [1, 4, 4], Float32Array.from([...identity.slice(0, 3), 10, ...identity.slice(4, 7), -1, ...identity.slice(8)]));
  const lm = makeTensor('float32', [1, 2, 3], Float32Array.from([1, 2, 3, 4, 5, 6]));
  const moved = runKernel('TransformLandmarks', { lm, shifted }, [['y', [1, 2, 3]]]);
  assert.deepEqual([...moved.get('y').data], [11, 1, 3, 14, 4, 6]);
});

test('mediapipe kernels: landmarks already at the target angle give scale and shift only', () => {
  // Left (0, 0) -> right (4, 0): angle 0 = target. Subset box [0, 4] x [0, 2]: 4 x 2, centre (2, 1).
  const lm = makeTensor('float32', [1, 3, 3], Float32Array.from([0, 0, 0, 4, 0, 0, 2, 2, 0]));
  const out = runKernel('Landmarks2TransformMatrix', { lm }, [['m', [1, 4, 4]]], {
    subset_idxs: [0, 1, 2], left_rotation_idx: 0, right_rotation_idx: 1, target_rotation_radians: 0,
    output_height: 4, output_width: 8, scale_x: 1, scale_y: 1,
  });
  // scale (4 / 8, 2 / 4); offset centre - scale * output / 2 = (2 - 2, 1 - 1).
  assert.deepEqual([...out.get('m').data].map((x) => x + 0), [0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
});

// ---- detections compared as sets ---------------------------------------------
import { compareDetections, DETECTION_RULES } from '../lib/detections.mjs';
import { readFlexMap } from '../lib/tflite_model.mjs';
import { flexbuffer, flex } from '../../models/lib/model.mjs';

test('readFlexMap reads the scalars of a custom op options map', () => {
  const bytes = Uint8Array.from(flexbuffer({
    max_detections: 10, nms_score_threshold: flex.float(0.25), use_regular_nms: true, y_scale: 10.5, name: 'skipped',
  }));
  assert.deepEqual(readFlexMap(bytes), { max_detections: 10, nms_score_threshold: 0.25, use_regular_nms: true, y_scale: 10.5 });
  assert.deepEqual(readFlexMap(Uint8Array.from([1, 2])), {});
});

function detectionSide(rows, dets) {
  const boxes = new Float32Array(4 * rows), classes = new Float32Array(rows), scores = new Float32Array(rows);
  dets.forEach(([box, cls, score], i) => { boxes.set(box, 4 * i); classes[i] = cls; scores[i] = score; });
  return new Map([
    ['b', makeTensor('float32', [1, rows, 4], boxes)], ['c', makeTensor('float32', [1, rows], classes)],
    ['s', makeTensor('float32', [1, rows], scores)], ['n', makeTensor('float32', [1], Float32Array.from([dets.length]))],
  ]);
}

test('detections: order does not matter, a detection at the threshold may be missing, others may not', () => {
  const group = { outputs: ['b', 'c', 's', 'n'], threshold: 0.5, step: 0 };
  const a = [[0.1, 0.1, 0.4, 0.4], 3, 0.9], b = [[0.5, 0.5, 0.9, 0.8], 1, 0.9], edge = [[0, 0, 0.2, 0.2], 2, 0.500001];
  const ref = detectionSide(4, [a, b, edge]);
  const swapped = compareDetections(group, ref, detectionSide(4, [b, a, edge]), DETECTION_RULES.strict);
  assert.equal(swapped.ok, true, swapped.detail);
  const withoutEdge = compareDetections(group, ref, detectionSide(4, [a, b]), DETECTION_RULES.strict);
  assert.equal(withoutEdge.ok, true, withoutEdge.detail);
  const withoutB = compareDetections(group, ref, detectionSide(4, [a, edge]), DETECTION_RULES.strict);
  assert.equal(withoutB.ok, false);
  assert.match(withoutB.detail, /class 1, score 0.9000\) has no match/);
  const moved = compareDetections(group, ref, detectionSide(4, [a, [[0.5, 0.5, 0.9, 0.7], 1, 0.9], edge]), DETECTION_RULES.strict);
  assert.equal(moved.ok, false);  // IoU 0.75: another box
  const otherClass = compareDetections(group, ref, detectionSide(4, [a, [b[0], 4, 0.9], edge]), DETECTION_RULES.strict);
  assert.equal(otherClass.ok, false);
});

test('detection outputs declared shape-less get the kernel\'s shapes in a copy LiteRT.js runs',
  { skip: !haveModels && `no models at ${MODELS}` }, async () => {
    const { detectionOutputShapes } = await import('../lib/detections.mjs');
    const { tfliteToJson, jsonToTflite } = await import('../lib/tflite_rewrite.mjs');
    const { runLiteRt } = await import('../lib/litert.mjs');
    const file = path.join(MODELS, 'tflite-support', 'coco_ssd_mobilenet_v1_1.0_quant_2018_06_29.tflite');
    const model = readTfliteModel(fs.readFileSync(file));
    const shapes = detectionOutputShapes(model);
    assert.deepEqual(model.outputs.map((t) => shapes.get(t.index)), [[1, 10, 4], [1, 10], [1, 10], [1]]);
    const input = model.inputs[0];
    const inputs = new Map([[input.name, randomTensor(input.type, input.shape, 7)]]);
    await assert.rejects(runLiteRt(fs.readFileSync(file), model, inputs), /unknown shape/);

    const json = tfliteToJson(file, model);
    for (const [index, shape] of shapes) json.subgraphs[model.subgraphIndex].tensors[index].shape = shape;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-shaped-'));
    try {
      const copy = path.join(dir, 'ssd.tflite');
      jsonToTflite(json, copy);
      const bytes = new Uint8Array(fs.readFileSync(copy));
      const shaped = readTfliteModel(bytes);
      // Quantization survives the JSON round trip exactly.
      assert.deepEqual(shaped.inputs[0].quant.scale, model.inputs[0].quant.scale);
      const out = await runLiteRt(bytes, shaped, inputs);
      const count = out.get(model.outputs[3].name).data[0];
      assert.ok(count >= 0 && count <= 10, `count ${count}`);
      assert.deepEqual(out.get(model.outputs[0].name).shape, [1, 10, 4]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

test('judge: an integer TFLite output that became float fails outside --quantization dequantize', async () => {
  const { compareAll } = await import('../lib/judge.mjs');
  const quant = { scale: [0.5], zeroPoint: [0] };
  const model = { outputs: [{ name: 'y', type: 'int16', quant }], operators: [], opName: 'ADD', singleOp: false };
  const ref = new Map([['y', makeTensor('int16', [3], Int16Array.from([2, -4, 6]))]]);
  const got = new Map([['y', makeTensor('float32', [3], Float32Array.from([1, -2, 3]))]]);
  // the same values, dequantized: a float interface only dequantize promises
  const [auto] = compareAll({ convertArgs: [] }, model, ref, got, 'ONNX');
  assert.equal(auto.ok, false);
  assert.match(auto.detail, /type mismatch: TFLite's int16 output is float32/);
  const [dequantized] = compareAll({ convertArgs: ['--quantization=dequantize'] }, model, ref, got, 'ONNX');
  assert.equal(dequantized.ok, true, dequantized.detail);
});
