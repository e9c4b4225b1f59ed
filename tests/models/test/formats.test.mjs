// The formats_* test models (make_models_formats.mjs) in a real TFLite runtime:
// each compiled model loads in LiteRT.js (@litertjs/core, from tests/numeric's
// node_modules) and computes what its definition says (`m.runs`), which shows
// that TFLite reads every feature lib/model.mjs writes: subgraphs and their
// indices in WHILE / IF / CALL_ONCE options, resource and variable tensors,
// SignatureDefs (keys, aliases, subgraph), metadata, FlexBuffer custom options,
// sparse constants, per-axis quantization and float16 buffers.
//
//   node tests/models/test/formats.test.mjs BUILD/tests/models   # the ctest
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { MODELS } from '../make_models_formats.mjs';
import { Model } from '../lib/model.mjs';
import { initLiteRt } from '../../numeric/lib/litert.mjs';
import { initTfjsTflite } from '../../numeric/lib/tfjs_tflite.mjs';

const DIR = process.argv[2];
if (!DIR || !fs.existsSync(DIR)) {
  console.error('usage: node formats.test.mjs DIR_OF_COMPILED_MODELS');
  process.exit(2);
}

// litert::ElementType and the host arrays of the tensor types these models feed and read.
const TYPES = {
  FLOAT32: { element: 1, array: Float32Array },
  INT32: { element: 2, array: Int32Array },
  BOOL: { element: 6, array: Uint8Array },
};

const vector = (v) => {
  const out = [];
  for (let i = 0; i < v.size(); i++) out.push(v.get(i));
  v.delete();
  return out;
};

// Runs the invocations `runs` one after the other on one compiled model (so
// state carries over) and returns each run's outputs by signature output name.
async function runAll(bytes, model, runs) {
  const liteRt = await initLiteRt();
  const w = liteRt.liteRtWasm;
  const env = liteRt.getDefaultEnvironment().liteRtEnvironment;
  const cleanup = [];
  try {
    const ptr = w._malloc(bytes.length);
    cleanup.push(() => w._free(ptr));
    w.HEAPU8.set(bytes, ptr);
    const lrModel = w.loadModel(env, ptr, bytes.length);
    cleanup.push(() => lrModel.delete());
    const compiled = await w.compileModel(env, lrModel, {
      accelerator: 'wasm', cpuOptions: { numThreads: 1 }, gpuOptions: {}, webNNOptions: {},
    });
    cleanup.push(() => compiled.delete());
    const signatures = [];
    for (let i = 0; i < lrModel.getNumSignatures(); i++) {
      const s = lrModel.getSignature(i);
      signatures.push({ key: s.key(), inputs: vector(s.inputNames()), outputs: vector(s.outputNames()) });
      s.delete();
    }
    const results = [];
    for (const run of runs) {
      const index = run.signature === undefined ? 0 : signatures.findIndex((s) => s.key === run.signature);
      assert.ok(index >= 0, `no signature "${run.signature}" among ${signatures.map((s) => s.key)}`);
      const sig = signatures[index];
      const { graph, inputs: tensorOf, outputs: outTensorOf } = ioOf(model, run.signature);
      const buffers = sig.inputs.map((name) => {
        const t = graph.tensors[tensorOf[name]];
        assert.ok(t, `signature input "${name}" is not an input of the model's definition`);
        const type = TYPES[t.type];
        const data = type.array.from(run.inputs[name]);
        const dims = new w.VectorInt32();
        for (const d of t.shape) dims.push_back(d);
        const layout = w.LiteRtLayout.create(dims);
        dims.delete();
        const tensorType = w.LiteRtRankedTensorType.create({ value: type.element }, layout);
        layout.delete();
        const buf = w.LiteRtTensorBuffer.createManaged(env, w.LiteRtTensorBufferType.HOST_MEMORY, tensorType, data.byteLength);
        tensorType.delete();
        cleanup.push(() => buf.delete());
        const p = buf.lock(w.LiteRtTensorBufferLockMode.WRITE);
        w.HEAPU8.set(new Uint8Array(data.buffer), p);
        buf.unlock();
        return buf;
      });
      const outs = await compiled.run(index, buffers);
      const got = {};
      for (let i = 0; i < outs.length; i++) {
        const r = outs[i];
        cleanup.push(() => r.delete());
        const name = sig.outputs[i];
        const t = graph.tensors[outTensorOf[name]];
        const type = TYPES[t.type];
        const n = t.shape.reduce((a, b) => a * b, 1);
        const p = r.lock(w.LiteRtTensorBufferLockMode.READ);
        got[name] = Array.from(new type.array(w.HEAPU8.slice(p, p + n * type.array.BYTES_PER_ELEMENT).buffer));
        r.unlock();
      }
      results.push(got);
    }
    return { signatures, results };
  } finally {
    for (const f of cleanup.reverse()) {
      try { f(); } catch { /* already released */ }
    }
  }
}

// The same with tfjs-tflite (the models LiteRT.js refuses: `m.runtime`), main
// subgraph only.
async function runAllTfjs(bytes, model, runs) {
  const Runner = await initTfjsTflite();
  const runner = await Runner.create(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), { numThreads: -1 });
  try {
    return {
      signatures: [],
      results: runs.map((run) => {
        assert.equal(run.signature, undefined, 'tfjs-tflite runs the main subgraph only');
        for (const info of runner.getInputs()) info.data().set(run.inputs[info.name]);
        assert.ok(runner.infer(), 'tfjs-tflite failed to run');
        return Object.fromEntries(runner.getOutputs().map((info) => [info.name, Array.from(info.data())]));
      }),
    };
  } finally {
    runner.cleanUp();
  }
}

// The subgraph a run reads and its input / output names -> tensor indices:
// the signature's aliases, or the main subgraph's tensor names.
function ioOf(model, key) {
  if (key !== undefined) {
    const s = model.signatures.find((x) => x.signature_key === key);
    const names = (list) => Object.fromEntries(list.map((m) => [m.name, m.tensor_index]));
    return { graph: model.graphs[s.subgraph_index], inputs: names(s.inputs), outputs: names(s.outputs) };
  }
  const names = (list) => Object.fromEntries(list.map((t) => [model.tensors[t].name, t]));
  return { graph: model, inputs: names(model.inputs), outputs: names(model.outputs) };
}

function assertClose(got, want, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const tol = 1e-5 + 1e-5 * Math.abs(want[i]);
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]}, expected ${want[i]}`);
  }
}

for (const { name, description, build } of MODELS) {
  test(`${name}: ${description}`, async () => {
    const model = new Model(name, description);
    build(model);
    const file = path.join(DIR, `${name}.tflite`);
    const run = model.runtime === 'tfjs-tflite' ? runAllTfjs : runAll;
    const { signatures, results } = await run(new Uint8Array(fs.readFileSync(file)), model, model.runs);
    if (model.signatures.length) {
      // TFLite reports the model's own SignatureDefs: keys and aliases.
      assert.deepEqual(signatures.map((s) => s.key).sort(), model.signatures.map((s) => s.signature_key).sort());
      for (const s of model.signatures) {
        const got = signatures.find((x) => x.key === s.signature_key);
        assert.deepEqual([...got.inputs].sort(), s.inputs.map((m) => m.name).sort());
        assert.deepEqual([...got.outputs].sort(), s.outputs.map((m) => m.name).sort());
      }
    }
    model.runs.forEach((run, r) => {
      for (const [output, want] of Object.entries(run.outputs)) {
        assert.ok(results[r][output], `run ${r}: no output "${output}" (got ${Object.keys(results[r])})`);
        assertClose(results[r][output], want, `run ${r} ${output}`);
      }
    });
  });
}
