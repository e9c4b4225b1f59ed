// Runs a .tflite model in both TFLite runtimes available under Node:
//   LiteRT.js (@litertjs/core) through the harness's lib/litert.mjs, and
//   tfjs-tflite (TFLite Web API) loaded here with profiling on, so each run also
//   reports the node types the interpreter executed (e.g. "TfLiteXNNPackDelegate"
//   for nodes XNNPACK took, "ADD" for builtin kernels).
import path from 'node:path';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { runLiteRt, liteRtLogs } from '../../lib/litert.mjs';
import { readTfliteModel } from '../../lib/tflite_model.mjs';
import { installScriptHandler, evaluateCommonJs, packageDir, localRequire } from '../../lib/wasm_loader.mjs';
import { DEFAULT_SCHEMA } from '../../lib/tflite_rewrite.mjs';

const tfLog = [];
let runnerPromise = null;
function loadTfjs() {
  if (runnerPromise) return runnerPromise;
  runnerPromise = (async () => {
    const dir = path.join(packageDir('@tensorflow/tfjs-tflite'), 'wasm');
    installScriptHandler({
      matches: (file) => file.startsWith(dir),
      load: (file) => {
        const script = file.replace(/_threaded\.js$/, '.js');
        const factory = evaluateCommonJs(script);
        const wasmBinary = fs.readFileSync(script.replace(/\.js$/, '.wasm'));
        globalThis.tflite_web_api_ModuleFactory = (arg) =>
          factory({ ...arg, wasmBinary, print: (l) => tfLog.push(String(l)), printErr: (l) => tfLog.push(String(l)) });
      },
    });
    const tflite = localRequire('@tensorflow/tfjs-tflite');
    tflite.setWasmPath(dir + path.sep);
    return globalThis.tfweb.TFLiteWebModelRunner;
  })();
  return runnerPromise;
}

export function tfjsLogs() { return tfLog.slice(); }

// inputs: array of {type, shape, data} in the model's input order.
// Returns { outputs: [{type, shape, data}], nodes: [nodeType...] }.
export async function runTfjs(bytes, inputs, retried = false) {
  const Runner = await loadTfjs();
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const mark = tfLog.length;
  let runner;
  try {
    runner = await Runner.create(ab, { numThreads: -1, enableProfiling: true });
  } catch (e) {
    throw new Error(`tfjs-tflite cannot load: ${e?.message ?? e} ${tfLog.slice(mark).join('; ')}`);
  }
  try {
    const ins = runner.getInputs();
    ins.forEach((info, i) => info.data().set(inputs[i].data));
    if (!runner.infer()) throw new Error(`tfjs-tflite failed: ${tfLog.slice(mark).join('; ')}`);
    const outputs = runner.getOutputs().map((info) => ({
      type: info.dataType, shape: info.shape === '' ? [] : String(info.shape).split(',').map(Number), data: info.data().slice(),
    }));
    const nodes = runner.getProfilingResults().map((p) => p.nodeType);
    // The first runner of a process reports no profile: run once more with a new runner.
    if (!nodes.length && !retried) return runTfjs(bytes, inputs, true);
    return { outputs, nodes };
  } finally {
    runner.cleanUp();
  }
}

export async function runLite(bytes, inputs) {
  const model = readTfliteModel(bytes);
  const m = new Map(model.inputs.map((t, i) => [t.name, inputs[i]]));
  const out = await runLiteRt(bytes, model, m);
  return { outputs: model.outputs.map((t) => out.get(t.name)) };
}
export { liteRtLogs };

// Writes model JSON into `dir` and compiles it with flatc (FLATC, else flatc
// on the PATH) against the project's schema; returns the .tflite bytes.
export function compile(json, name, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(json));
  execFileSync(process.env.FLATC || 'flatc', ['-b', '-o', dir, DEFAULT_SCHEMA, file]);
  return fs.readFileSync(path.join(dir, `${name}.tflite`));
}
