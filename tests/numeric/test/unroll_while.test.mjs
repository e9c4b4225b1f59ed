// The unrolled twin (lib/unroll_while.mjs, lib/tflite_fold.mjs): the shape
// arithmetic it folds, and on the generated loop models that both runtimes
// run as written, the twin's outputs against the model's own.
//   LITE2ONNX_TEST_MODELS_OUT=build/tests/models node --test tests/numeric/test/unroll_while.test.mjs
// (the model tests need the generated models and flatc; skipped without them)
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { foldValues, outputShapes, stridedSliceAxes } from '../lib/tflite_fold.mjs';
import { readTfliteModel, operatorName } from '../lib/tflite_model.mjs';
import { randomTensor } from '../lib/inputs.mjs';
import { unrolledTwinOf } from '../lib/unroll_while.mjs';

const dir = process.env.LITE2ONNX_TEST_MODELS_OUT;
const haveFlatc = (() => {
  try {
    execFileSync('flatc', ['--version']);
    return true;
  } catch {
    return false;
  }
})();
const skipModels = !(dir && haveFlatc) && 'needs LITE2ONNX_TEST_MODELS_OUT and flatc';

const int = (shape, value) => ({ type: 'INT32', shape, value });
const vec = (...v) => int([v.length], v);

test('STRIDED_SLICE geometry: masks, negative indices and strides, offset, shrink', () => {
  const none = { begin_mask: 0, end_mask: 0, shrink_axis_mask: 0 };
  assert.deepEqual(stridedSliceAxes([7], [1], [5], [2], none).map((a) => [a.begin, a.length]), [[1, 2]]);
  // end -1 is the last element's index, exclusive
  assert.deepEqual(stridedSliceAxes([7], [-3], [-1], [1], none).map((a) => [a.begin, a.length]), [[4, 2]]);
  // stride -1 over the whole axis: begin and end masks pick the far ends
  assert.deepEqual(stridedSliceAxes([5], [0], [0], [-1], { ...none, begin_mask: 1, end_mask: 1 })
    .map((a) => [a.begin, a.length]), [[4, 5]]);
  // offset: end is begin + end
  assert.deepEqual(stridedSliceAxes([9], [2], [3], [1], { ...none, offset: true }).map((a) => a.length), [3]);
  // shrink keeps one element and drops the axis; axes past `begin` are whole
  const axes = stridedSliceAxes([6, 4], [5], [6], [1], { ...none, shrink_axis_mask: 1 });
  assert.deepEqual(axes.map((a) => [a.begin, a.length, a.shrink]), [[5, 1, true], [0, 4, false]]);
  assert.equal(stridedSliceAxes([3], [0], [1], [1], { ...none, ellipsis_mask: 1 }), null);
});

test('shape arithmetic folds: SHAPE -> STRIDED_SLICE -> PACK -> REDUCE_PROD, counters, comparisons', () => {
  const x = { type: 'FLOAT32', shape: [1, 50, 12, 64] };
  const [shape] = foldValues('SHAPE', [x], {}, [int([4])]);
  assert.deepEqual(shape, [1, 50, 12, 64]);
  const o = { begin_mask: 0, end_mask: 0, shrink_axis_mask: 1 };
  const [batch] = foldValues('STRIDED_SLICE', [vec(...shape), vec(0), vec(1), vec(1)], o, [int([])]);
  assert.deepEqual(batch, [1]);
  assert.deepEqual(foldValues('PACK', [int([], [1]), int([], [-1]), int([], [768])], { axis: 0 }, [int([3])]), [[1, -1, 768]]);
  assert.deepEqual(foldValues('GATHER', [vec(...shape), vec(2, 3)], { axis: 0, batch_dims: 0 }, [int([2])]), [[12, 64]]);
  assert.deepEqual(foldValues('REDUCE_PROD', [vec(12, 64), vec(0)], { keep_dims: false }, [int([])]), [[768]]);
  assert.deepEqual(foldValues('ADD', [int([], [4]), int([], [1])], { fused_activation_function: 'NONE' }, [int([])]), [[5]]);
  assert.deepEqual(foldValues('LESS', [int([], [4]), int([], [50])], {}, [{ type: 'BOOL', shape: [] }]), [[1]]);
  assert.deepEqual(foldValues('FLOOR_DIV', [vec(-7, 7), int([], [2])], {}, [int([2])]), [[-4, 3]]);
  // int32 wraps as TFLite's kernels do
  assert.deepEqual(foldValues('MUL', [int([], [65536]), int([], [65536])], {}, [int([])]), [[0]]);
  // float results never fold: the runtimes compute those
  assert.equal(foldValues('ADD', [{ type: 'FLOAT32', shape: [], value: [1] }, { type: 'FLOAT32', shape: [], value: [2] }],
    {}, [{ type: 'FLOAT32', shape: [] }]), null);
  // nor does an op with a fused activation, nor an out-of-range GATHER
  assert.equal(foldValues('ADD', [int([], [1]), int([], [1])], { fused_activation_function: 'RELU' }, [int([])]), null);
  assert.equal(foldValues('GATHER', [vec(1, 2), vec(2)], { axis: 0 }, [int([1])]), null);
});

test('output shapes as the kernels prepare them', () => {
  const f = (shape) => ({ type: 'FLOAT32', shape });
  const conv = (padding) => outputShapes('CONV_2D', [f([1, 7, 6, 3]), f([5, 3, 3, 3]), f([5])],
    { padding, stride_h: 2, stride_w: 2, dilation_h_factor: 1, dilation_w_factor: 1 });
  assert.deepEqual(conv('VALID'), [[1, 3, 2, 5]]);
  assert.deepEqual(conv('SAME'), [[1, 4, 3, 5]]);
  assert.deepEqual(outputShapes('RESHAPE', [f([1, 50, 12, 64]), vec(50, -1)], {}), [[50, 768]]);
  assert.deepEqual(outputShapes('SLICE', [f([50, 1, 128]), vec(3, 0, 0), vec(-1, 1, 128)], {}), [[47, 1, 128]]);
  assert.deepEqual(outputShapes('GATHER', [f([50, 1, 64]), int([], [7])], { axis: 0, batch_dims: 0 }), [[1, 64]]);
  assert.deepEqual(outputShapes('FULLY_CONNECTED', [f([2, 5, 8]), f([3, 8])], { keep_num_dims: false }), [[10, 3]]);
  assert.deepEqual(outputShapes('SPLIT', [int([], [1]), f([1, 512])], { num_splits: 4 }), new Array(4).fill([1, 128]));
  assert.throws(() => outputShapes('RESHAPE', [f([4]), int([2])], {}), /not known before running/);
  assert.equal(outputShapes('SOME_NEW_OP', [f([1])], {}), null);
});

// Every generated model with a WHILE whose trip count its constants fix.
const LOOPS = ['flow_while_counter', 'flow_while_rnn', 'flow_while_rnn_strided', 'flow_while_slice_rnn',
  'flow_while_cnn', 'flow_while_scan', 'flow_while_if', 'flow_shared_subgraphs', 'formats_while'];

function twinOf(name, tmp) {
  const file = path.join(dir, `${name}.tflite`);
  const bytes = new Uint8Array(fs.readFileSync(file));
  const model = readTfliteModel(bytes);
  const inputs = new Map(model.inputs.map((t, i) => [t.name, randomTensor(t.type, t.shape, 31 + i)]));
  return { bytes, model, inputs, twin: unrolledTwinOf(file, model, inputs, path.join(tmp, `${name}.tflite`)) };
}

function assertClose(got, want, what) {
  for (const [name, w] of want) {
    const g = got.get(name);
    assert.ok(g, `${what}: no output ${name}`);
    assert.deepEqual(g.shape, w.shape, `${what}: ${name} shape`);
    for (let i = 0; i < w.data.length; i++) {
      const tol = 1e-6 * Math.max(1, Math.abs(Number(w.data[i])));
      assert.ok(Math.abs(Number(g.data[i]) - Number(w.data[i])) <= tol,
        `${what}: ${name}[${i}] ${g.data[i]} vs ${w.data[i]}`);
    }
  }
}

test('the twin of each generated loop model gives tfjs-tflite\'s own answer, in both runtimes', { skip: skipModels }, async () => {
  const { runLiteRt } = await import('../lib/litert.mjs');
  const { runTfjsTflite } = await import('../lib/tfjs_tflite.mjs');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-unroll-'));
  try {
    for (const name of LOOPS) {
      const { bytes, model, inputs, twin } = twinOf(name, tmp);
      assert.ok(twin.loops >= 1 && twin.iterations >= twin.loops, `${name}: unrolled`);
      assert.ok(!twin.model.operators.some((op) => operatorName(op) === 'WHILE'), `${name}: no WHILE left`);
      const want = await runTfjsTflite(bytes, model, inputs);
      assertClose(await runTfjsTflite(twin.bytes, twin.model, inputs), want, `${name} twin in tfjs-tflite`);
      // LiteRT.js runs every twin, also those whose original it cannot
      // (while_counter's shape-less output, while_rnn_strided's zeros).
      assertClose(await runLiteRt(twin.bytes, twin.model, inputs), want, `${name} twin in LiteRT.js`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('TensorList loops (select-TF): the twin equals the hand-written builtin twin', { skip: skipModels }, async () => {
  const { runLiteRt } = await import('../lib/litert.mjs');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-unroll-'));
  try {
    for (const name of ['flow_tensorlist_rnn', 'flow_tensorlist_map']) {
      const { inputs, twin } = twinOf(name, tmp);
      assert.ok(!twin.model.tensors.some((t) => t.type === 'variant'), `${name}: no TensorList left`);
      const builtin = new Uint8Array(fs.readFileSync(path.join(dir, `${name}_builtin.tflite`)));
      const want = await runLiteRt(builtin, readTfliteModel(builtin), inputs);
      assertClose(await runLiteRt(twin.bytes, twin.model, inputs), want, `${name} twin`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('a branch or trip count the input values decide is refused', { skip: skipModels }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-unroll-'));
  try {
    assert.throws(() => twinOf('flow_if_branches', tmp), /IF.*not settled by the input shapes/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
