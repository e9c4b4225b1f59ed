// Second TFLite runtime: @tensorflow/tfjs-tflite (the TFLite interpreter in
// WebAssembly, via the TFLite Web API "model runner"). It runs stateful models
// (variable tensors: LSTM / SVDF) that LiteRT.js refuses, but it cannot read
// int64 or string tensors, and it runs subgraph 0 only (no signature runner):
// a signature of another subgraph is LiteRT.js's alone.
//
// Under Node the package believes it is in a web worker (no `window`), so it
// loads its Emscripten script through importScripts() — served by
// wasm_loader.mjs. We always load the single-threaded SIMD build (the threaded
// build needs browser Workers from blob URLs) and hand it the .wasm bytes
// directly, so nothing is fetched.

import fs from 'node:fs';
import path from 'node:path';
import { installScriptHandler, evaluateCommonJs, packageDir, localRequire } from './wasm_loader.mjs';
import { TYPED_ARRAYS } from './tensor.mjs';

let runnerPromise = null;
// The last 200 log lines; `logged` counts every line, so a mark stays valid
// once old lines are dropped (see litert.mjs).
const logLines = [];
let logged = 0;

function logSink(line) {
  logLines.push(String(line));
  logged++;
  if (logLines.length > 200) logLines.splice(0, logLines.length - 200);
}

async function load() {
  const dir = path.join(packageDir('@tensorflow/tfjs-tflite'), 'wasm');
  installScriptHandler({
    matches: (file) => file.startsWith(dir),
    load: (file) => {
      // never the threaded variants
      const script = file.replace(/_threaded\.js$/, '.js');
      const factory = evaluateCommonJs(script);
      const wasmBinary = fs.readFileSync(script.replace(/\.js$/, '.wasm'));
      globalThis.tflite_web_api_ModuleFactory = (arg) =>
        factory({ ...arg, wasmBinary, print: logSink, printErr: logSink });
    },
  });
  const tflite = localRequire('@tensorflow/tfjs-tflite');
  tflite.setWasmPath(dir + path.sep);
  const runner = globalThis.tfweb && globalThis.tfweb.TFLiteWebModelRunner;
  if (!runner) throw new Error('tfjs-tflite: TFLiteWebModelRunner not found');
  return runner;
}

export function initTfjsTflite() {
  if (!runnerPromise) runnerPromise = load();
  return runnerPromise;
}

const READABLE = new Set(['float32', 'int32', 'uint8', 'int8', 'int16', 'bool', 'float64', 'uint32']);

/**
 * Runs a .tflite model once with a fresh interpreter (so variable tensors start
 * from zero). inputs: Map tensorName -> host tensor. Returns Map name -> tensor.
 */
// `inputs`: one Map, or an array of them for consecutive invocations of one
// interpreter (variables carried), returning an array of output Maps.
export async function runTfjsTflite(bytes, model, inputs) {
  const invocations = Array.isArray(inputs) ? inputs : [inputs];
  // The interpreter's inputs and outputs are those of its primary subgraph:
  // the Web API has no signature runner.
  if (model.subgraphIndex) {
    throw new Error(`tfjs-tflite runs subgraph 0 only; signature "${model.signature.key}" is subgraph ${model.subgraphIndex}`);
  }
  for (const t of [...model.inputs, ...model.outputs]) {
    if (!READABLE.has(t.type)) throw new Error(`tfjs-tflite cannot handle ${t.type} tensor "${t.name}"`);
  }
  const Runner = await initTfjsTflite();
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  let runner;
  try {
    runner = await Runner.create(ab, { numThreads: -1 });
  } catch (e) {
    throw new Error(`tfjs-tflite cannot load the model: ${e && e.message ? e.message : e}`);
  }
  try {
    const results = [];
    for (const invocationInputs of invocations) results.push(invoke(runner, model, invocationInputs));
    return Array.isArray(inputs) ? results : results[0];
  } finally {
    runner.cleanUp();
  }
}

function invoke(runner, model, inputs) {
  {
    const ins = runner.getInputs();
    for (let i = 0; i < ins.length; i++) {
      const info = ins[i];
      const host = inputs.get(info.name) ?? inputs.get(model.inputs[i]?.name);
      if (!host) throw new Error(`tfjs-tflite: no input data for "${info.name}"`);
      const view = info.data();
      if (!view || view.length !== host.data.length) {
        throw new Error(`tfjs-tflite: input "${info.name}" has ${view ? view.length : 0} elements, expected ${host.data.length}`);
      }
      if (host.type === 'bool') view.set(host.data.map((v) => (v ? 1 : 0)));
      else view.set(host.data);
    }
    const mark = logged;
    if (!runner.infer()) {
      const errs = logLines.slice(Math.max(0, logLines.length - (logged - mark))).join('; ');
      throw new Error(`tfjs-tflite failed to run${errs ? `: ${errs}` : ''}`);
    }
    const out = new Map();
    const outs = runner.getOutputs();
    for (let i = 0; i < outs.length; i++) {
      const info = outs[i];
      const view = info.data();
      const type = info.dataType;
      if (!TYPED_ARRAYS[type] || !view || typeof view.slice !== 'function') {
        throw new Error(`tfjs-tflite cannot read output "${info.name}" (${type})`);
      }
      const shape = info.shape === '' ? [] : String(info.shape).split(',').map(Number);
      const data = type === 'bool' ? Uint8Array.from(view, (v) => (v ? 1 : 0)) : view.slice();
      const name = model.outputs.some((t) => t.name === info.name) ? info.name : (model.outputs[i]?.name ?? info.name);
      out.set(name, { type, shape, data });
    }
    return out;
  }
}
