// Self-test of diverge.mjs on a small generated int8 model whose first
// difference is known: MAX_POOL_2D (copies integers: exact), then
// AVERAGE_POOL_2D (TFLite rounds the .5 ties of a window mean away from
// zero, ONNX to even: the first difference, one step), then a 1x1 CONV_2D
// that carries it on.
//   LITE2ONNX_CLI=build/lite2onnx node --test tests/numeric/test/diverge.test.mjs
// Needs the converter (LITE2ONNX_CLI, default build/lite2onnx of the
// repository) and flatc (FLATC, default on the PATH); skipped without them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Model } from '../../models/lib/model.mjs';
import { DEFAULT_SCHEMA } from '../lib/tflite_rewrite.mjs';
import { diverge, formatReport, inTfliteLayout, tensorDifference } from '../diverge.mjs';
import { readGraphValues, withGraphOutputs } from '../lib/onnx_meta.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = process.env.LITE2ONNX_CLI ?? path.resolve(HERE, '../../../build/lite2onnx');
const FLATC = process.env.FLATC || 'flatc';

function available(cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const haveCli = fs.existsSync(CLI);
const haveFlatc = available(FLATC, ['--version']);

// input [1,8,8,4] int8 -> MAX_POOL_2D 2x2/1 -> AVERAGE_POOL_2D 2x2/1 -> CONV_2D 1x1 (4 -> 6)
function pipelineModel() {
  const m = new Model('diverge_pool_chain', 'MAX_POOL_2D -> AVERAGE_POOL_2D -> CONV_2D, int8');
  const q = (scale, zp = 0) => ({ scale: [scale], zero_point: [zp] });
  const x = m.input('input', [1, 8, 8, 4], 'INT8');
  m.quantize(x, q(0.05));
  const pool = (op, input, name, shape) => {
    const y = m.tensor(name, shape, 'INT8');
    m.quantize(y, q(0.05));
    m.op(op, [input], [y], 'Pool2DOptions', {
      padding: 'VALID', stride_h: 1, stride_w: 1, filter_height: 2, filter_width: 2, fused_activation_function: 'NONE',
    });
    return y;
  };
  const maxed = pool('MAX_POOL_2D', x, 'maxed', [1, 7, 7, 4]);
  const averaged = pool('AVERAGE_POOL_2D', maxed, 'averaged', [1, 6, 6, 4]);
  const wScales = [0.004, 0.005, 0.006, 0.0045, 0.0055, 0.0035];
  const weights = Array.from({ length: 6 * 4 }, (_, i) => ((i * 37) % 255) - 127);
  const w = m.constant('weights', [6, 1, 1, 4], 'INT8', weights);
  m.quantize(w, { scale: wScales, zero_point: wScales.map(() => 0), axis: 0 });
  const b = m.constant('bias', [6], 'INT32', [100, -50, 0, 25, -75, 10]);
  m.quantize(b, { scale: wScales.map((s) => Math.fround(Math.fround(0.05) * Math.fround(s))), zero_point: wScales.map(() => 0) });
  const y = m.tensor('output', [1, 6, 6, 6], 'INT8');
  m.quantize(y, q(0.04, -3));
  m.op('CONV_2D', [averaged, w, b], [y], 'Conv2DOptions', {
    padding: 'VALID', stride_h: 1, stride_w: 1, dilation_h_factor: 1, dilation_w_factor: 1, fused_activation_function: 'NONE',
  });
  m.output(y);
  return m;
}

test('diverge: the first difference of a pool chain in the qdq form is its AVERAGE_POOL_2D; auto has none', { skip: !(haveCli && haveFlatc) && 'needs lite2onnx (LITE2ONNX_CLI) and flatc' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-diverge-test-'));
  try {
    const json = path.join(dir, 'diverge_pool_chain.json');
    fs.writeFileSync(json, JSON.stringify(pipelineModel().toJSON()));
    execFileSync(FLATC, ['-b', '-o', dir, DEFAULT_SCHEMA, json]);
    const file = path.join(dir, 'diverge_pool_chain.tflite');
    // The default form (auto) computes the AVERAGE_POOL_2D as TFLite does: no difference.
    const auto = await diverge({ cli: CLI, file });
    assert.equal(auto.first, null);
    const res = await diverge({ cli: CLI, file, convertArgs: ['--quantization=qdq'] });

    assert.equal(res.reference, 'litert');
    assert.deepEqual(res.rows.map((r) => r.opName), ['MAX_POOL_2D', 'AVERAGE_POOL_2D', 'CONV_2D']);
    assert.equal(res.exposed, 2);
    assert.equal(res.exposedOnnx, 2, 'both intermediate tensors are values of the converted model');
    // MAX_POOL_2D copies integers: exact.
    assert.equal(res.rows[0].onnx.kind, 'steps');
    assert.equal(res.rows[0].onnx.max, 0);
    // AVERAGE_POOL_2D: one step off at some .5 ties, and there both TFLite runtimes agree.
    assert.equal(res.first?.opName, 'AVERAGE_POOL_2D');
    assert.equal(res.first.onnx.max, 1);
    assert.ok(res.first.onnx.exact > 0.5 && res.first.onnx.exact < 1, `exact ${res.first.onnx.exact}`);
    assert.equal(res.first.runtimes?.differs, false, 'tfjs-tflite agrees with LiteRT.js at the first difference');
    assert.equal(res.growth[0].tensor, res.first.tensor);
    // Only the AVERAGE_POOL_2D starts a difference: the CONV_2D's input already differs.
    assert.deepEqual(res.origins.map((o) => o.opName), ['AVERAGE_POOL_2D']);
    // Exposing the pools' outputs leaves the final output's difference as it is.
    assert.equal(res.finals.length, 1);
    assert.equal(res.finalsSame, true);
    assert.equal(res.finals[0].tfliteUnchanged, true);

    const text = formatReport(res);
    assert.match(text, /AVERAGE_POOL_2D .*<== first difference/);
    assert.match(text, /First difference: op 1 AVERAGE_POOL_2D/);
    assert.match(text, /tfjs-tflite agrees with LiteRT.js/);
    assert.match(text, /did not change the final outputs' difference/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('diverge: a value inside the graph back in the TFLite layout and type', () => {
  const ref = { type: 'int8', shape: [1, 2, 3, 4], data: new Int8Array(24) };
  // NCHW uint8 (zero point + 128) -> NHWC int8
  const data = new Uint8Array(24).map((_, i) => i + 120);
  const got = { type: 'uint8', shape: [1, 4, 2, 3], data };
  const back = inTfliteLayout(got, ref, [0, 3, 1, 2]);
  assert.deepEqual(back.shape, [1, 2, 3, 4]);
  assert.equal(back.type, 'int8');
  // element [0, h=1, w=2, c=3] of NHWC is [0, 3, 1, 2] of NCHW: 3*6 + 1*3 + 2 = 23
  assert.equal(back.data[1 * 12 + 2 * 4 + 3], 23 + 120 - 128);
  // no hint: the one permutation that fits; none when several do
  assert.deepEqual(inTfliteLayout(got, ref, undefined).shape, [1, 2, 3, 4]);
  const square = { type: 'int8', shape: [1, 4, 4, 4], data: new Int8Array(64) };
  assert.equal(inTfliteLayout({ type: 'int8', shape: [1, 4, 4, 4], data: new Int8Array(64) }, square, [0, 3, 1, 2]).shape.join(), '1,4,4,4');
  assert.equal(inTfliteLayout({ type: 'int8', shape: [4, 1, 4, 4], data: new Int8Array(64) }, square, undefined), null);
});

test('diverge: differences in steps, of the range, and exact', () => {
  const quant = { scale: [0.1], zeroPoint: [0], axis: 0 };
  const ref = { type: 'int8', shape: [4], data: Int8Array.from([0, 1, 2, 3]) };
  const steps = tensorDifference({ quant }, ref, { type: 'int8', shape: [4], data: Int8Array.from([0, 2, 2, 6]) });
  assert.deepEqual([steps.kind, steps.max, steps.exact, steps.within1, steps.differs], ['steps', 3, 0.5, 0.75, true]);
  // a dequantize-mode value on the grid
  const onGrid = tensorDifference({ quant }, ref, { type: 'float32', shape: [4], data: Float32Array.from([0, 0.1, 0.2, 0.3]) });
  assert.equal(onGrid.max, 0);
  const f = tensorDifference({}, { type: 'float32', shape: [2], data: Float32Array.from([0, 10]) },
    { type: 'float32', shape: [2], data: Float32Array.from([0, 10.5]) });
  assert.deepEqual([f.kind, f.rel, f.differs], ['float', 0.05, true]);
  const e = tensorDifference({}, { type: 'int32', shape: [2], data: Int32Array.from([1, 2]) }, { type: 'int32', shape: [2], data: Int32Array.from([1, 2]) });
  assert.deepEqual([e.kind, e.differs], ['exact', false]);
  assert.equal(tensorDifference({}, null, ref).kind, 'missing');
});

test('onnx_meta: graph outputs appended to a model', () => {
  // ModelProto { graph { node { output: "a" } node { output: "b" } output { name: "b" } } }
  const enc = new TextEncoder();
  const ld = (field, bytes) => [field * 8 + 2, bytes.length, ...bytes];
  const node = (out) => ld(1, ld(2, [...enc.encode(out)]));
  const graph = [...node('a'), ...node('b'), ...ld(12, ld(1, [...enc.encode('b')]))];
  const model = Uint8Array.from([8, 7, ...ld(7, graph), ...ld(14, ld(1, [...enc.encode('k')]))]);
  assert.deepEqual([...readGraphValues(model).produced], ['a', 'b']);
  const more = withGraphOutputs(model, ['a']);
  assert.deepEqual(readGraphValues(more).outputs, ['b', 'a']);
  assert.equal(more.length, model.length + 5);
});
