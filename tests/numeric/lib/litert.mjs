// Reference runtime: @litertjs/core (LiteRT compiled to WebAssembly) under Node.
//
// Loading: loadLiteRt(dir) picks the Wasm build (relaxed-SIMD or "compat") and
// loads its script through importScripts(), which wasm_loader.mjs provides.
// Running: the package's high-level Tensor/CompiledModel API only knows
// float32/int32/uint8 and cannot create inputs for models whose signature has
// dynamic (-1) dimensions, so this adapter drives the Embind classes exposed as
// `liteRt.liteRtWasm` directly: loadModel -> compileModel -> TensorBuffers ->
// run(signature, buffers). That path handles int8/int16/int64/bool as well.
// The signature run is the model's (readTfliteModel) chosen one, found by its
// key; a model without SignatureDefs has one LiteRT makes for subgraph 0.

import path from 'node:path';
import { installScriptHandler, evaluateCommonJs, packageDir } from './wasm_loader.mjs';
import { TYPED_ARRAYS, numElements } from './tensor.mjs';
import { signatureNameToTensor } from './tflite_model.mjs';

// litert::ElementType values (see @litertjs/core dist/index.d.ts)
const ELEMENT_TYPE = {
  float32: 1, int32: 2, uint8: 3, int64: 4, string: 5, bool: 6, int16: 7,
  int8: 9, float16: 10, float64: 11, uint64: 13, uint32: 16, uint16: 17,
};
const ELEMENT_NAME = Object.fromEntries(Object.entries(ELEMENT_TYPE).map(([k, v]) => [v, k]));

let liteRtPromise = null;
// The last 200 log lines; logged counts every line ever logged, so a mark
// taken before a run stays valid once old lines are dropped (a mark into the
// capped array itself would see nothing new once it is full, and kernel
// errors of long-running workers went unnoticed).
const logLines = [];
let logged = 0;

function logSink(line) {
  logLines.push(String(line));
  logged++;
  if (logLines.length > 200) logLines.splice(0, logLines.length - 200);
}

// Distinct error lines logged since the mark `since` (a value of `logged`),
// at most `max` (plus a count of the rest).
function recentErrors(since, max = 4) {
  const fresh = logLines.slice(Math.max(0, logLines.length - (logged - since)));
  const lines = [...new Set(fresh.filter((l) => /^(ERROR|FATAL)\b/.test(l)))];
  return lines.length > max ? [...lines.slice(0, max), `... ${lines.length - max} more`] : lines;
}

export function liteRtLogs() {
  return logLines.slice();
}

async function load() {
  const dir = path.join(packageDir('@litertjs/core'), 'wasm');
  installScriptHandler({
    matches: (file) => file.startsWith(dir),
    load: (file) => {
      globalThis.ModuleFactory = evaluateCommonJs(file);
      // Picked up by createWasmLib as the Emscripten module argument.
      globalThis.Module = { print: logSink, printErr: logSink };
    },
  });
  const core = await import('@litertjs/core');
  // Environment.create() warns that there is no WebGPU (no `navigator.gpu` in Node).
  const warn = console.warn;
  console.warn = () => {};
  try {
    return await core.loadLiteRt(dir + path.sep);
  } finally {
    console.warn = warn;
  }
}

export function initLiteRt() {
  if (!liteRtPromise) liteRtPromise = load();
  return liteRtPromise;
}

function vectorToArray(vec) {
  const out = [];
  for (let i = 0; i < vec.size(); i++) out.push(vec.get(i));
  vec.delete();
  return out;
}

function errorText(e) {
  const msg = e && e.message ? e.message : String(e);
  return msg.split('\n').map((l) => l.replace(/^\W*└\s*/, '').trim()).filter(Boolean).join(' / ');
}

/**
 * Runs a .tflite model once, or once per element of an array of inputs with
 * one compiled model (its state carried from one invocation to the next).
 * inputs: Map tensorName -> host tensor (TFLite layout and type), or an array
 * of them. Returns Map tensorName -> host tensor for every output of the
 * model's signature (model.signature; the first one without), or an array of
 * them.
 */
export async function runLiteRt(bytes, model, inputs) {
  const runs = Array.isArray(inputs) ? inputs : [inputs];
  // An output declared with shape [] and no has_rank flag has an unknown shape
  // (e.g. TFLite_Detection_PostProcess): this build then hands back scalar
  // buffers of stale memory instead of failing, so refuse such models.
  const unknown = model.outputs.find((t) => t.shape.length === 0 && !t.hasRank);
  if (unknown) throw new Error(`LiteRT.js cannot return output "${unknown.name}" of unknown shape`);
  // A tensor that is both an input and an output of the signature: the
  // compiled model binds the output's buffer to it, so the ops read that
  // buffer's stale memory instead of the input (a MediaPipe feedback model
  // read 813624 for an input of 7, where tfjs-tflite reads 7): refuse it.
  const inputNames = new Set(model.inputs.map((t) => t.name));
  const echoed = model.outputs.find((t) => inputNames.has(t.name));
  if (echoed) throw new Error(`LiteRT.js reads an output's buffer for tensor "${echoed.name}", which is also an input`);
  const liteRt = await initLiteRt();
  const w = liteRt.liteRtWasm;
  const env = liteRt.getDefaultEnvironment().liteRtEnvironment;
  const mark = logged;
  const cleanup = [];
  const fail = (what, e) => {
    const extra = recentErrors(mark).filter((l) => !errorText(e).includes(l));
    return new Error(`LiteRT.js ${what}: ${errorText(e)}${extra.length ? ` (${extra.join('; ')})` : ''}`);
  };
  try {
    const ptr = w._malloc(bytes.length);
    cleanup.push(() => w._free(ptr));
    w.HEAPU8.set(bytes, ptr);
    let lrModel;
    try {
      lrModel = w.loadModel(env, ptr, bytes.length);
    } catch (e) {
      throw fail('cannot load the model', e);
    }
    cleanup.push(() => lrModel.delete());
    let compiled;
    try {
      compiled = await w.compileModel(env, lrModel, {
        accelerator: 'wasm',
        cpuOptions: { numThreads: 1 },
        gpuOptions: {},
        webNNOptions: {},
      });
    } catch (e) {
      throw fail('cannot compile the model', e);
    }
    cleanup.push(() => compiled.delete());
    if (lrModel.getNumSignatures() < 1) throw new Error('LiteRT.js: model has no signature');
    let index = 0;
    if (model.signature) {
      const keys = [];
      for (let i = 0; i < lrModel.getNumSignatures(); i++) {
        const s = lrModel.getSignature(i);
        keys.push(s.key());
        s.delete();
      }
      index = keys.indexOf(model.signature.key);
      if (index < 0) throw new Error(`LiteRT.js: no signature "${model.signature.key}" (it has ${keys.map((k) => `"${k}"`).join(', ')})`);
    }
    const sig = lrModel.getSignature(index);
    cleanup.push(() => sig.delete());
    const inNames = vectorToArray(sig.inputNames());
    const outNames = vectorToArray(sig.outputNames());

    const outputs = [];
    for (const inputs of runs) {
      const buffers = [];
      for (let i = 0; i < inNames.length; i++) {
        const tensor = signatureNameToTensor(model, inNames[i], 'inputs') ?? model.inputs[i];
        const host = tensor ? inputs.get(tensor.name) : null;
        if (!host) throw new Error(`LiteRT.js: no input data for signature input "${inNames[i]}"`);
        const et = ELEMENT_TYPE[host.type];
        if (et === undefined) throw new Error(`LiteRT.js: unsupported input type ${host.type}`);
        const dims = new w.VectorInt32();
        for (const d of host.shape) dims.push_back(d);
        const layout = w.LiteRtLayout.create(dims);
        dims.delete();
        const type = w.LiteRtRankedTensorType.create({ value: et }, layout);
        layout.delete();
        const byteLength = host.data.byteLength;
        const buf = w.LiteRtTensorBuffer.createManaged(env, w.LiteRtTensorBufferType.HOST_MEMORY, type, byteLength);
        type.delete();
        buffers.push(buf);
        cleanup.push(() => buf.delete());
        const p = buf.lock(w.LiteRtTensorBufferLockMode.WRITE);
        try {
          w.HEAPU8.set(new Uint8Array(host.data.buffer, host.data.byteOffset, byteLength), p);
        } finally {
          buf.unlock();
        }
      }

      let results;
      try {
        results = await compiled.run(index, buffers);
      } catch (e) {
        throw fail('failed to run', e);
      }
      const out = new Map();
      const resultList = [];
      for (let i = 0; i < results.length; i++) resultList.push(results[i]);
      for (const r of resultList) cleanup.push(() => r.delete());
      // The Wasm build reports kernel failures (e.g. "gather index out of
      // bounds") only through its log, while run() still returns buffers.
      const runErrors = recentErrors(mark);
      if (runErrors.length) throw new Error(`LiteRT.js failed to run: ${runErrors.join('; ')}`);

      for (let i = 0; i < resultList.length; i++) {
        const r = resultList[i];
        const type = r.tensorType();
        const etObj = type.elementType();
        if (!etObj) {
          type.delete();
          throw new Error(`LiteRT.js cannot describe output ${i} "${outNames[i]}" (dynamic output shape?)`);
        }
        const et = etObj.value;
        const layout = type.layout();
        const shape = vectorToArray(layout.dimensions());
        layout.delete();
        type.delete();
        const typeName = ELEMENT_NAME[et];
        const Ctor = TYPED_ARRAYS[typeName];
        if (!Ctor) throw new Error(`LiteRT.js: unsupported output element type ${et}`);
        const n = numElements(shape);
        const byteLength = n * Ctor.BYTES_PER_ELEMENT;
        const p = r.lock(w.LiteRtTensorBufferLockMode.READ);
        let data;
        try {
          const copy = w.HEAPU8.slice(p, p + byteLength);
          data = new Ctor(copy.buffer, 0, n);
        } finally {
          r.unlock();
        }
        const tensor = signatureNameToTensor(model, outNames[i], 'outputs') ?? model.outputs[i];
        const name = tensor ? tensor.name : outNames[i];
        out.set(name, { type: typeName, shape, data });
      }
      outputs.push(out);
    }
    return Array.isArray(inputs) ? outputs : outputs[0];
  } finally {
    for (const f of cleanup.reverse()) {
      try { f(); } catch { /* already released */ }
    }
  }
}
