// The float yardstick (lib/ulp_weights.mjs): every float32 weight moved by
// exactly one ulp, float16 weights folded through their DEQUANTIZE first, the
// copy runs in LiteRT.js and moves the outputs by rounding-sized amounts only,
// far less than a real error would.
//   LITE2ONNX_TEST_MODELS_OUT=build/tests/models node --test tests/numeric/test/ulp_weights.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { readTfliteModel, operatorName } from '../lib/tflite_model.mjs';
import { runLiteRt } from '../lib/litert.mjs';
import { ulpWeightsCopy } from '../lib/ulp_weights.mjs';
import { withinRuntimeSpread, outputDistance } from '../lib/compare.mjs';

const dir = process.env.LITE2ONNX_TEST_MODELS_OUT;

function load(name) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, name)));
  return { bytes, model: readTfliteModel(bytes) };
}

function inputsOf(model) {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  return new Map(model.inputs.map((t) => [t.name, {
    type: t.type, shape: t.shape, data: Float32Array.from({ length: t.shape.reduce((a, b) => a * b, 1) }, next),
  }]));
}

test('a float model: every float32 weight moves by one ulp, the outputs by rounding only', { skip: !dir }, async () => {
  const { bytes, model } = load('conv2d_k3x5.tflite');
  const copy = ulpWeightsCopy(bytes, model);
  assert.ok(copy, 'a float conv has weights to move');
  assert.equal(copy.length >= bytes.length - 64, true);
  const inputs = inputsOf(model);
  const ref = await runLiteRt(bytes, model, inputs);
  const moved = await runLiteRt(copy, readTfliteModel(copy), inputs);
  for (const [name, r] of ref) {
    const m = moved.get(name);
    let differ = 0;
    let worst = 0;
    const scale = Math.max(...r.data.map(Math.abs));
    for (let i = 0; i < r.data.length; i++) {
      if (r.data[i] !== m.data[i]) differ++;
      worst = Math.max(worst, Math.abs(r.data[i] - m.data[i]) / scale);
    }
    assert.ok(differ > 0, `${name}: the moved weights change some output element`);
    assert.ok(worst < 1e-6, `${name}: rounding-sized changes only (worst ${worst} of the largest)`);
    // A real error (every element 0.1% off) is far beyond 1.5 x this yardstick.
    const wrong = { ...r, data: r.data.map((v) => v * 1.001) };
    const ulp = outputDistance(r, m, 'float');
    const onnx = outputDistance(r, wrong, 'float');
    assert.equal(withinRuntimeSpread(onnx, ulp, {}).ok, false);
  }
});

test('float16 weights: DEQUANTIZE folded into moved float32 constants', { skip: !dir }, async () => {
  const { bytes, model } = load('dequantize_f16_conv.tflite');
  const copy = ulpWeightsCopy(bytes, model);
  assert.ok(copy);
  const moved = readTfliteModel(copy);
  const dequantizes = (m) => m.operators.filter((op) => operatorName(op) === 'DEQUANTIZE').length;
  assert.ok(dequantizes(model) > 0, 'the test model reads float16 weights through DEQUANTIZE');
  assert.equal(dequantizes(moved), 0);
  const inputs = inputsOf(model);
  const ref = await runLiteRt(bytes, model, inputs);
  const out = await runLiteRt(copy, moved, inputs);
  for (const [name, r] of ref) {
    const m = out.get(name);
    for (let i = 0; i < r.data.length; i++)
      assert.ok(Math.abs(r.data[i] - m.data[i]) <= 1e-5 * Math.max(1, Math.abs(r.data[i])), `${name}[${i}]`);
  }
});

test('a model without float weights has nothing to move', { skip: !dir }, () => {
  const { bytes, model } = load('abs.tflite');
  assert.equal(ulpWeightsCopy(bytes, model), null);
});
