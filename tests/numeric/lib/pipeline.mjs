// One model through the whole check: convert -> inputs -> TFLite reference ->
// ONNX Runtime -> compare. Runs inside a worker process (see worker.mjs).

import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { readTfliteModel, inferIndexRange, inferShapeValue, operatorName, hasHybridOp } from './tflite_model.mjs';
import { declaredShapesCopy, staticInputsCopy, onnxFileName, unrolledReference } from './reference_copies.mjs';
import { selectTfTwinOf } from './select_tf_twin.mjs';
import { readIoLayouts, readOnnxMetadata, countOnnxOps, withInitializers } from './onnx_meta.mjs';
import { randomTensor, smoothTensor, inputSeed } from './inputs.mjs';
import {
  transpose, inversePermutation, castData, dequantize, makeTensor, allocate, isFloatType, isIntegerType, TYPED_ARRAYS,
} from './tensor.mjs';
import { RUNTIME_SPREAD } from './compare.mjs';
import { compareAll, summarize, failureText, likeOnnx } from './judge.mjs';
import { referenceSensitivity, runtimeSpread } from './yardsticks.mjs';


export const OUTCOMES = ['pass', 'fail', 'unsupported', 'skip', 'convert-error'];

// Exit codes of `lite2onnx convert`.
const EXIT_OK = 0;
const EXIT_UNSUPPORTED = 4;

function firstLine(text) {
  const line = String(text ?? '').split('\n').map((l) => l.trim()).find(Boolean);
  return line ?? '';
}

function errMessage(e) {
  return e && e.message ? e.message : String(e);
}

// First few non-empty lines of a (possibly multi-line) message, on one line.
function compact(text, maxLines = 3, maxChars = 400) {
  const lines = String(text ?? '').split('\n').map((l) => l.trim()).filter(Boolean).slice(0, maxLines);
  const s = lines.join(' / ');
  return s.length > maxChars ? `${s.slice(0, maxChars)}...` : s;
}

export { onnxFileName };

export function runConverter(task, onnxPath) {
  const spec = task.spec ?? {};
  const args = ['convert', task.file, '-o', onnxPath, '--opset', String(spec.opset ?? task.opset), '--json'];
  if (task.signature) args.push('--signature', task.signature);
  if (Array.isArray(task.convertArgs)) args.push(...task.convertArgs.map(String));
  if (Array.isArray(spec.args)) args.push(...spec.args.map(String));
  return new Promise((resolve) => {
    execFile(task.cli, args, { timeout: task.convertTimeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        let code = 0;
        let signal = null;
        if (error) {
          if (typeof error.code === 'number') code = error.code;
          else if (error.signal) { code = -1; signal = error.signal; } else { code = -1; stderr = `${errMessage(error)}\n${stderr}`; }
          if (error.killed && !signal) signal = 'SIGTERM';
        }
        resolve({ code, signal, stdout, stderr, args });
      });
  });
}

// Digs the unsupported operator list out of the CLI's JSON diagnostics,
// accepting a few shapes: {"unsupported": [{"op": "X", "op_index": 3}, ...]},
// plain strings, or the list nested somewhere inside the document.
export function unsupportedOps(stdout) {
  let doc;
  try {
    doc = JSON.parse(stdout);
  } catch {
    return null;
  }
  const found = [];
  const visit = (v, depth) => {
    if (depth > 6 || v == null || typeof v !== 'object') return;
    if (Array.isArray(v)) { for (const x of v) visit(x, depth + 1); return; }
    for (const [k, x] of Object.entries(v)) {
      if (/^unsupported(_ops|_operators)?$/i.test(k) && Array.isArray(x)) {
        for (const item of x) {
          if (typeof item === 'string') found.push({ op: item });
          else if (item && typeof item === 'object') {
            const op = item.op ?? item.name ?? item.opcode ?? item.operator ?? item.type ?? '?';
            const index = item.op_index ?? item.index ?? item.opIndex;
            // An op of a subgraph the converted one runs (control flow).
            found.push({ op: String(op), index: item.subgraph === undefined ? index : `${index} of subgraph ${item.subgraph}` });
          }
        }
      } else {
        visit(x, depth + 1);
      }
    }
  };
  visit(doc, 0);
  return found;
}

function describeUnsupported(list) {
  const byOp = new Map();
  for (const { op, index } of list) {
    if (!byOp.has(op)) byOp.set(op, []);
    if (index !== undefined && index !== null) byOp.get(op).push(index);
  }
  const MAX_TYPES = 10;
  const entries = [...byOp.entries()];
  const text = entries.slice(0, MAX_TYPES).map(([op, idx]) => {
    if (idx.length === 0) return op;
    const shown = idx.slice(0, 4).join(', ') + (idx.length > 4 ? ', ...' : '');
    return `${op} (op ${shown})`;
  }).join(', ');
  return entries.length > MAX_TYPES ? `${text} and ${entries.length - MAX_TYPES} more operator types` : text;
}

function perInputSpec(spec, tensor, index) {
  const ins = spec.inputs;
  if (!ins) return {};
  if (Array.isArray(ins)) return ins[index] ?? {};
  return ins[tensor.name] ?? ins[String(index)] ?? {};
}

// How many invocations one check of a model runs: a converted model with
// state (the ONNX metadata entry lite2onnx.state) runs 3, each on its own
// seeded inputs, ONNX Runtime fed the state outputs of one as the state inputs
// of the next, the TFLite runtime keeping its interpreter (README, "What the
// ONNX model looks like"); any other model runs once.
export const STATEFUL_INVOCATIONS = 3;

// The name an output of invocation k (0-based) is compared under: its own for
// the first, `NAME@2`, `NAME@3` for the later ones.
export function invocationName(name, k) {
  return k === 0 ? name : `${name}@${k + 1}`;
}

// The outputs compared for a model run `invocations` times: every output of
// every invocation, the later ones named by invocationName and judged by
// their output's spec.
export function comparedOutputs(outputs, invocations) {
  const all = [...outputs];
  for (let k = 1; k < invocations; k++) {
    outputs.forEach((t, i) => all.push({ ...t, name: invocationName(t.name, k), specName: t.name, specIndex: i }));
  }
  return all;
}

// One Map of every invocation's outputs, named by invocationName.
export function mergeInvocations(runs) {
  const merged = new Map();
  runs.forEach((outs, k) => {
    for (const [name, t] of outs) merged.set(invocationName(name, k), t);
  });
  return merged;
}

const GENERATABLE = new Set(['float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'bool']);

// The inputs of one run. `smooth`: image-like inputs instead of the spec's
// (the second input set of the runtime-spread rule): every float, quantized
// or uint8 input of rank >= 2 without a fixed value becomes spatially smooth
// along `axes` (task.smoothSpec's, else the two before the last, or both of a
// rank-2 input), in its spec range; index and token inputs stay as they are.
// Returns the inputs, and with `smooth` their count made smooth as `.smoothed`.
function makeInputs(task, model, smooth = false, invocation = 0) {
  const spec = task.spec ?? {};
  const inputs = new Map();
  // Invocation k > 0 of a stateful model: other seeds.
  const fileName = invocation === 0 ? path.basename(task.file) : `${path.basename(task.file)}@${invocation + 1}`;
  let smoothed = 0;
  model.inputs.forEach((t, i) => {
    if (!GENERATABLE.has(t.type)) throw Object.assign(new Error(`input "${t.name}" has type ${t.type}, which the harness cannot generate`), { skip: true });
    let ispec = perInputSpec(spec, t, i);
    const shape = ispec.shape ?? t.shape;
    if (shape.some((d) => !(d >= 0))) throw new Error(`input "${t.name}" has no static shape [${shape}]; give "shape" in the spec`);
    if (smooth && ispec.value === undefined && shape.length >= 2 &&
        (isFloatType(t.type) || t.type === 'uint8' || (isIntegerType(t.type) && t.quant))) {
      const sspec = perInputSpec(task.smoothSpec ?? {}, t, i);
      ispec = { ...ispec, pattern: 'smooth', axes: shape.length === 2 ? [0, 1] : undefined, ...sspec };
      smoothed++;
    }
    if (ispec.value === undefined && isIntegerType(t.type) && !t.quant) {
      const value = inferShapeValue(model, t);
      if (value) ispec = { ...ispec, value };
    }
    if (ispec.value !== undefined) {
      // a fixed input, e.g. the output_shape operand of TRANSPOSE_CONV
      const values = Array.isArray(ispec.value) ? ispec.value.flat(Infinity) : [ispec.value];
      const t2 = allocate(t.type, shape);
      if (values.length !== t2.data.length) throw new Error(`spec: input "${t.name}" value has ${values.length} elements, shape [${shape}] needs ${t2.data.length}`);
      t2.data.set(castData(Float64Array.from(values), t.type));
      inputs.set(t.name, t2);
      return;
    }
    const range = ispec.range ?? (isIntegerType(t.type) && !t.quant ? inferIndexRange(model, t) : null);
    const seed = inputSeed(fileName, i);
    if (ispec.pattern === 'smooth') {
      inputs.set(t.name, smoothTensor(t.type, shape, seed, range ?? undefined, ispec.axes, ispec.cell ?? 16));
    } else if (ispec.pattern === undefined || ispec.pattern === 'uniform') {
      inputs.set(t.name, randomTensor(t.type, shape, seed, range ?? undefined));
    } else {
      throw new Error(`spec: input "${t.name}" has unknown pattern "${ispec.pattern}" (uniform or smooth)`);
    }
  });
  if (smooth) inputs.smoothed = smoothed;
  return inputs;
}

// The inputs of every invocation (model.invocations, 1 unless the model has
// state): an array of Maps; with `smooth`, `.smoothed` counts the inputs made
// smooth in one invocation.
export function makeInputSets(task, model, smooth = false) {
  const sets = [];
  for (let k = 0; k < (model.invocations ?? 1); k++) sets.push(makeInputs(task, model, smooth, k));
  if (smooth) sets.smoothed = sets[0].smoothed;
  return sets;
}

// Set when a Wasm runtime aborted or trapped: its module is no longer usable,
// so the worker asks to be replaced after reporting the current model.
let poisoned = false;
export function runtimePoisoned() {
  return poisoned;
}

const FATAL_WASM = /Aborted\(|RuntimeError|unreachable|memory access out of bounds|Out of memory/i;

// `inputs`: the inputs of every invocation (makeInputSets); one interpreter
// runs them in order. Returns every invocation's outputs in one Map
// (mergeInvocations).
export async function runTflite(which, bytes, model, inputs) {
  try {
    if (which === 'litert') {
      const { runLiteRt } = await import('./litert.mjs');
      if (model.shapedCopy) return mergeInvocations(await runLiteRt(model.shapedCopy.bytes, model.shapedCopy.model, inputs));
      return mergeInvocations(await runLiteRt(bytes, model, inputs));
    }
    const { runTfjsTflite } = await import('./tfjs_tflite.mjs');
    return mergeInvocations(await runTfjsTflite(bytes, model, inputs));
  } catch (e) {
    if (FATAL_WASM.test(errMessage(e)) || (e && e.name === 'RuntimeError')) poisoned = true;
    throw e;
  }
}

const RUNTIME_LABEL = {
  litert: 'LiteRT.js', tfjs: 'tfjs-tflite', mediapipe: "MediaPipe's kernels (JS)",
  posenet: "LiteRT.js + Coral's posenet decoder (JS)",
  signal: "TFLite Micro's Signal kernels (JS) + LiteRT.js",
};

// Reference outputs: LiteRT.js first, tfjs-tflite when LiteRT.js refuses the
// model (or when the spec asks for it). Returns {which, outputs} or throws a
// skip-marked error when neither runtime can run the model.
async function runReference(task, bytes, model, inputs) {
  const spec = task.spec ?? {};
  if (spec.reference === 'mediapipe') {
    // Ops no runtime here registers: their kernels rewritten in JS (mediapipe_kernels.mjs).
    const { runMediaPipeKernels } = await import('./mediapipe_kernels.mjs');
    if (inputs.length !== 1) throw new Error('the MediaPipe reference runs stateless models only');
    return { which: 'mediapipe', outputs: runMediaPipeKernels(spec.program, model, inputs[0]), errors: [] };
  }
  if (spec.reference === 'posenet' || (!spec.reference && model.operators.some((op) => op.custom === 'PosenetDecoderOp'))) {
    // Coral's PosenetDecoderOp: the builtin part in LiteRT.js, the decoder in JS (posenet_reference.mjs).
    const { runPosenetReference } = await import('./posenet_reference.mjs');
    const r = await runPosenetReference(task, model, inputs, runTflite);
    return { which: 'posenet', outputs: r.outputs, errors: [], posenet: r };
  }
  if (spec.reference === 'signal' || (!spec.reference && model.operators.some((op) => op.custom?.startsWith('Signal')))) {
    // TensorFlow Lite Micro's Signal ops: their kernels in JS, the builtin runs between them in LiteRT.js (signal_reference.mjs).
    const { runSignalReference } = await import('./signal_reference.mjs');
    return { which: 'signal', outputs: await runSignalReference(task, model, inputs, runTflite, mergeInvocations), errors: [] };
  }
  // An output sized at run time by a shape input (TRANSPOSE_CONV's output_shape):
  // LiteRT.js returns its declared-size buffer stale, tfjs-tflite the result.
  const runTimeOutput = !spec.reference && model.inputs.some((t) => inferShapeValue(model, t));
  const order = spec.reference === 'tfjs' || runTimeOutput ? ['tfjs'] : spec.reference === 'litert' ? ['litert'] : ['litert', 'tfjs'];
  const errors = [];
  for (const which of order) {
    try {
      return { which, outputs: await runTflite(which, bytes, model, inputs), errors };
    } catch (e) {
      errors.push(`${RUNTIME_LABEL[which]}: ${errMessage(e)}`);
    }
  }
  throw Object.assign(new Error(`no TFLite runtime can run it (${errors.join(' | ')})`), { skip: true });
}

// What the ONNX graph's input or output names stand for: with
// --io-names signature (lite2onnx.options says so) the signature's aliases,
// which lite2onnx.signature maps to TFLite tensor names ({alias: tensor});
// otherwise the TFLite names themselves (null).
function signatureAliases(meta, kind) {
  if (!/(^| )io_names=signature( |$)/.test(meta['lite2onnx.options'] ?? '')) return null;
  if (!meta['lite2onnx.signature']) return null;
  return JSON.parse(meta['lite2onnx.signature'])[kind] ?? null;
}

// Matches ONNX graph inputs/outputs to TFLite tensors by name (through the
// signature's aliases when the ONNX model is named after them), else by order.
function matchByName(onnxNames, tflTensors, what, notes, aliases = null) {
  const byName = new Map(tflTensors.map((t) => [t.name, t]));
  const names = aliases ? onnxNames.map((n) => (Object.hasOwn(aliases, n) ? aliases[n] : n)) : onnxNames;
  if (names.every((n) => byName.has(n))) return names.map((n) => byName.get(n));
  if (onnxNames.length !== tflTensors.length) {
    throw new Error(`ONNX model has ${onnxNames.length} ${what}s, the TFLite model ${tflTensors.length}`);
  }
  notes.push(`ONNX ${what} names differ from the TFLite tensor names; matched by order`);
  return tflTensors;
}

// The state pairs of a converted model (lite2onnx.state): [{input, output,
// kind, tflite}], [] without state.
export function readStatePairs(meta) {
  const text = meta['lite2onnx.state'];
  if (!text) return [];
  const pairs = JSON.parse(text);
  if (!Array.isArray(pairs) || pairs.some((p) => typeof p.input !== 'string' || typeof p.output !== 'string')) {
    throw new Error('lite2onnx.state is not a list of {input, output} pairs');
  }
  return pairs;
}

// Runs every invocation of `inputs` (makeInputSets): the first on the model as
// it is, the state inputs not fed (their initializers hold the initial state),
// each later one on a copy of the model whose state initializers hold the
// state outputs of the one before (withInitializers: the same bytes, other
// values). onnxruntime-node lists no input that has an initializer and drops a
// feed of one without a word (the harness's self-test pins that), so this is
// how it is fed. Returns every invocation's outputs in one Map
// (mergeInvocations), and the layouts.
export async function runOnnx(task, onnxBytes, model, inputs, notes) {
  const layouts = readIoLayouts(onnxBytes);
  const meta = readOnnxMetadata(onnxBytes);
  const pairs = readStatePairs(meta);
  const stateIn = new Set(pairs.map((p) => p.input));
  const stateOut = new Set(pairs.map((p) => p.output));
  const { openOnnx } = await import('./ort_runner.mjs');
  const runs = [];
  let state = null;
  for (const invocation of inputs) {
    let bytes = onnxBytes;
    if (state) {
      const values = {};
      for (const p of pairs) values[p.input] = state.get(p.output).data;
      bytes = withInitializers(onnxBytes, values);
    }
    let session;
    try {
      session = await openOnnx(bytes, { threads: task.threads, optimization: task.ortOptimization });
    } catch (e) {
      throw new Error(`onnxruntime cannot load the ONNX model: ${compact(errMessage(e))}`);
    }
    try {
      for (const p of pairs) {
        // onnxruntime-node lists only the inputs without an initializer.
        if (session.inputs.some((m) => m.name === p.input)) throw new Error(`state input "${p.input}" has no initial value`);
        if (!session.outputs.some((m) => m.name === p.output)) throw new Error(`state output "${p.output}" is no graph output`);
      }
      const dataInputs = session.inputs.filter((m) => !stateIn.has(m.name));
      const inTensors = matchByName(dataInputs.map((m) => m.name), model.inputs, 'input', runs.length ? [] : notes,
        signatureAliases(meta, 'inputs'));
      const outNames = session.outputs.map((m) => m.name).filter((name) => !stateOut.has(name));
      const outTensors = matchByName(outNames, model.outputs, 'output', runs.length ? [] : notes, signatureAliases(meta, 'outputs'));
      const feeds = new Map();
      dataInputs.forEach((m, i) => {
        const tfl = inTensors[i];
        let host = invocation.get(tfl.name);
        const perm = layouts[m.name] ?? layouts[tfl.name];
        if (perm) host = transpose(host, perm);
        const want = m.type;
        if (want && want !== host.type) {
          if (isFloatType(want) && isIntegerType(host.type) && tfl.quant) {
            host = dequantize(host, tfl.quant);
            if (want !== 'float32') host = makeTensor(want, host.shape, castData(host.data, want));
          } else if (TYPED_ARRAYS[want] && !isFloatType(want) && !isFloatType(host.type)) {
            host = makeTensor(want, host.shape, castData(host.data, want));
          } else {
            throw new Error(`ONNX input "${m.name}" is ${want}, the TFLite input is ${host.type}`);
          }
        }
        feeds.set(m.name, host);
      });
      let outs;
      try {
        outs = await session.run(feeds);
      } catch (e) {
        throw new Error(`onnxruntime failed to run: ${compact(errMessage(e))}`);
      }
      state = outs;
      const result = new Map();
      outNames.forEach((name, i) => {
        let t = outs.get(name);
        const perm = layouts[name] ?? layouts[outTensors[i].name];
        if (perm) {
          if (perm.length !== t.shape.length) throw new Error(`io_layouts perm [${perm}] does not fit output "${name}" of shape [${t.shape}]`);
          t = transpose(t, inversePermutation(perm));
        }
        result.set(outTensors[i].name, t);
      });
      runs.push(result);
    } finally {
      await session.release();
    }
  }
  return { outputs: mergeInvocations(runs), layouts };
}

// What the yardsticks (yardsticks.mjs) run models with.
const RUNNERS = { runTflite, runOnnx, makeInputSets };

/** Processes one model. Never throws: errors become outcomes. */
export async function processModel(task) {
  const spec = task.spec ?? {};
  const res = { name: task.name, outcome: 'fail', message: '', notes: [] };
  // skip_with: { "<convert arg>": "reason" } skips the model in that conversion mode only.
  const skipWith = Object.entries(spec.skip_with ?? {}).find(([arg]) => (task.convertArgs ?? []).map(String).includes(arg));
  if (spec.skip || skipWith) {
    res.outcome = 'skip';
    res.message = String(spec.skip ?? skipWith[1]);
    return res;
  }
  try {
    let bytes = new Uint8Array(fs.readFileSync(task.file));
    let onnxPath = null;
    if (!task.tfliteOnly) {
      onnxPath = path.join(task.outDir, onnxFileName(task.name));
      try { fs.unlinkSync(onnxPath); } catch { /* not there */ }
      const conv = await runConverter(task, onnxPath);
      if (conv.code === EXIT_UNSUPPORTED) {
        const ops = unsupportedOps(conv.stdout);
        res.outcome = 'unsupported';
        res.unsupported = ops ?? [];
        res.message = ops && ops.length ? describeUnsupported(ops) : (firstLine(conv.stderr) || 'unsupported operators');
        return res;
      }
      if (conv.code !== EXIT_OK) {
        res.outcome = 'convert-error';
        const why = conv.signal ? `killed by ${conv.signal}${conv.signal === 'SIGTERM' ? ' (timeout?)' : ''}` : String(conv.code);
        res.message = `${why} ${firstLine(conv.stderr) || firstLine(conv.stdout)}`.trim();
        return res;
      }
      if (!fs.existsSync(onnxPath)) {
        res.message = `converter exited 0 but wrote no ${onnxPath}`;
        return res;
      }
    }

    // Select-TF ops no runtime here runs: the TFLite runtimes run the
    // model's builtin twin (lib/select_tf_twin.mjs), the same tensors with
    // each Flex op as the builtin its NodeDef describes.
    let tfliteTask = task;
    let twin = null;
    if (!spec.reference_model && task.file && task.outDir) {
      try {
        twin = selectTfTwinOf(task.file, bytes, path.join(task.outDir,
          onnxFileName(task.name).replace(/\.onnx$/, '.twin.tflite')), task.signature ?? null);
      } catch (e) {
        res.message = `harness cannot write the builtin twin: ${errMessage(e)}`;
        return res;
      }
      if (twin) [bytes, tfliteTask] = [twin.bytes, { ...task, file: twin.file }];
    }

    let model;
    try {
      model = readTfliteModel(bytes, { signature: task.signature ?? null });
      model.singleOp = model.subgraphCount === 1 && model.operators.length === 1;
      model.hybrid = hasHybridOp(model);
      model.opName = model.operators.length ? operatorName(model.operators[0]) : null;
      model.shapedCopy = declaredShapesCopy(tfliteTask, model);
    } catch (e) {
      res.message = `harness cannot read the TFLite model: ${errMessage(e)}`;
      return res;
    }

    // A converted model with state runs several invocations (STATEFUL_INVOCATIONS).
    let onnxBytes = null;
    if (!task.tfliteOnly) {
      onnxBytes = new Uint8Array(fs.readFileSync(onnxPath));
      if (readStatePairs(readOnnxMetadata(onnxBytes)).length) {
        model.invocations = STATEFUL_INVOCATIONS;
        model.compared = comparedOutputs(model.outputs, model.invocations);
        res.notes.push(`stateful: ${model.invocations} invocations, the state carried from one to the next`);
      }
    }
    const inputs = makeInputSets(task, model, !!task.smoothInputs);
    const unrolled = unrolledReference(task, tfliteTask, model, inputs[0]);
    const staticCopy = spec.reference_model || unrolled ? null : staticInputsCopy(tfliteTask, model, inputs[0]);
    if (twin) res.notes.push(`reference: the builtin twin (select-TF ${twin.ops.join(', ')} as builtins)`);
    if (staticCopy) {
      // The runtimes run the copy; the comparison keeps the model's own view.
      bytes = staticCopy.bytes;
      model.shapedCopy = null;
      res.notes.push('the TFLite runtimes run a copy whose inputs declare the shapes given');
    }
    if (spec.reference_model) {
      // Ops no runtime here runs (select-TF): the TFLite runtimes run a twin
      // of the same function in builtins, beside the model, with the same
      // inputs and outputs.
      bytes = new Uint8Array(fs.readFileSync(path.join(path.dirname(task.file), spec.reference_model)));
      model = Object.assign(readTfliteModel(bytes, { signature: task.signature ?? null }),
        { invocations: model.invocations, compared: model.compared, shapedCopy: null });
    }
    if (unrolled) {
      // WHILE loops no TFLite runtime here runs as written (lib/unroll_while.mjs).
      bytes = unrolled.bytes;
      // Its loop bodies are in line: hybrid ops there count too.
      model = Object.assign(unrolled.model, { invocations: model.invocations, compared: model.compared, shapedCopy: null,
        singleOp: model.singleOp, opName: model.opName, hybrid: model.hybrid || hasHybridOp(unrolled.model) });
      res.notes.push(unrolled.note);
    }
    const ref = await runReference(task, bytes, model, inputs);
    res.reference = ref.which;
    if (spec.reference_model) res.notes.push(`reference: ${spec.reference_model}, a twin in builtins`);
    if (ref.which !== 'litert' && ref.errors.length && !task.tfliteOnly) res.notes.push(`reference is tfjs-tflite (${ref.errors[0]})`);

    if (task.tfliteOnly) {
      // Compare the two TFLite runtimes with each other.
      if (ref.which !== 'litert') {
        res.outcome = 'skip';
        res.message = ref.errors.length
          ? `only ${RUNTIME_LABEL[ref.which]} can run it (${ref.errors.join(' | ')})`
          : `the spec makes ${RUNTIME_LABEL[ref.which]} the reference; nothing to compare it with`;
        return res;
      }
      let other;
      try {
        other = await runTflite('tfjs', bytes, model, inputs);
      } catch (e) {
        res.outcome = 'skip';
        res.message = `second opinion unavailable: ${errMessage(e)}`;
        return res;
      }
      const cmp = compareAll(task, model, ref.outputs, other, 'tfjs-tflite');
      const worst = summarize(cmp);
      res.outcome = cmp.every((r) => r.ok) ? 'pass' : 'fail';
      res.message = res.outcome === 'pass'
        ? `outputs: ${cmp.length}, ${worst.summary} (tfjs-tflite vs LiteRT.js)`
        : `tfjs-tflite disagrees with LiteRT.js: ${failureText(cmp)}`;
      return res;
    }

    // The converter must have converted the signature the runtimes run.
    const converted = readOnnxMetadata(onnxBytes)['lite2onnx.signature'];
    const convertedKey = converted ? JSON.parse(converted).key : null;
    if (convertedKey !== (model.signature?.key ?? null)) {
      res.message = `lite2onnx converted ${convertedKey === null ? 'no signature' : `signature "${convertedKey}"`}, ` +
        `the TFLite runtimes run ${model.signature ? `signature "${model.signature.key}"` : 'subgraph 0'}`;
      return res;
    }
    try {
      res.transposes = countOnnxOps(onnxBytes).Transpose ?? 0;
    } catch (e) {
      res.notes.push(`cannot count the ONNX Transpose nodes: ${errMessage(e)}`);
    }
    const onnx = await runOnnx(task, onnxBytes, model, inputs, res.notes);
    const cmp = compareAll(task, model, ref.outputs, onnx.outputs, 'onnx');
    const worst = summarize(cmp);
    const passed = cmp.every((r) => r.ok);

    // tfjs-tflite on the same inputs, run at most once (null: it cannot)
    let other;
    let otherError = '';
    const runOther = async () => {
      if (other === undefined) {
        try {
          other = await runTflite('tfjs', bytes, model, inputs);
        } catch (e) {
          other = null;
          otherError = errMessage(e);
        }
      }
      return other;
    };

    if (task.secondOpinion && ref.which === 'litert') {
      if (await runOther()) {
        const c2 = compareAll(task, model, ref.outputs, other, 'tfjs-tflite');
        if (c2.every((r) => r.ok)) {
          res.notes.push(`second opinion: tfjs-tflite agrees with LiteRT.js (${summarize(c2).summary})`);
        } else {
          res.disagreement = true;
          res.notes.push(`second opinion: tfjs-tflite DISAGREES with LiteRT.js: ${failureText(c2)}`);
          if (!passed) {
            const c3 = compareAll(task, model, other, onnx.outputs, 'onnx');
            if (c3.every((r) => r.ok)) res.notes.push('the ONNX outputs do match tfjs-tflite');
          }
        }
      } else {
        res.notes.push(`second opinion unavailable: ${otherError}`);
      }
    }

    const layoutNote = Object.keys(onnx.layouts).length ? `, ${Object.keys(onnx.layouts).length} I/O transposed` : '';
    const refNote = ref.which !== 'litert' ? `, ref ${RUNTIME_LABEL[ref.which]}` : '';
    if (passed) {
      res.outcome = 'pass';
      res.message = `outputs: ${cmp.length}, ${worst.summary}${refNote}${layoutNote}`;
      return res;
    }
    res.outcome = 'fail';
    res.message = `${failureText(cmp)}${ref.which !== 'litert' ? ` [ref ${RUNTIME_LABEL[ref.which]}]` : ''}`;
    if (ref.which === 'posenet' || ref.which === 'signal') return res;  // no second runtime, no sensitivity probe: the failure stands
    if (model.singleOp) {
      // The single-op rules have no runtime-spread escape; the figures are
      // measured for the known-fail list all the same.
      const rt = ref.which === 'litert' && await runOther()
        ? compareAll(task, model, ref.outputs, likeOnnx(model, other, onnx.outputs), 'tfjs-tflite') : null;
      const figures = (c, i) => (rt ? { onnx: c.distance ?? null, runtimes: rt[i].distance ?? null } : { onnx: c.distance ?? null });
      res.measured = { reference: ref.which, random: Object.fromEntries(cmp.map((c, i) => [c.name, figures(c, i)])) };
      return res;
    }

    if (ref.which === 'litert' && await runOther()) {
      // Two TFLite runtimes: the runtime-spread rule, on random and smooth inputs.
      const spread = await runtimeSpread(RUNNERS, task, bytes, model, onnxBytes,
        { inputs, ref: ref.outputs, onnx: onnx.outputs, other, cmp });
      res.measured = spread.measured;
      res.notes.push(...spread.notes);
      if (spread.ok) {
        res.outcome = 'pass';
        const yardstick = spread.byUlp ? "LiteRT.js's own distance with its float weights moved one ulp"
          : 'LiteRT.js vs tfjs-tflite';
        res.message = `outputs: ${cmp.length}, within ${RUNTIME_SPREAD} x ${yardstick} on random and ` +
          `smooth inputs (${worst.summary} on random inputs)${layoutNote}`;
      }
      return res;
    }
    // One TFLite runtime: TFLite against itself under one-step input changes
    // and ulp-sized scale changes.
    const s = await referenceSensitivity(RUNNERS, task, ref.which, bytes, model, inputs, ref.outputs, onnx.outputs);
    res.sensitivity = s;
    res.measured = {
      reference: ref.which,
      random: Object.fromEntries(cmp.map((c) => [c.name, { onnx: c.distance ?? null }])),
      self: { inputBroken: s.inputBroken, of: s.of, jitterBroken: s.jitterBroken, jitterOf: s.jitterOf },
    };
    let why = 'the spec pins tfjs-tflite';
    if (ref.which === 'litert') why = `tfjs-tflite cannot run it: ${otherError}`;
    else if (ref.errors.length) why = 'LiteRT.js cannot run it';
    res.notes.push(`one TFLite runtime (${why})`);
    res.notes.push(`${RUNTIME_LABEL[ref.which]} against itself: one input element moved one step breaks ` +
      `the tolerance at ${s.inputBroken} of ${s.of} positions; every quantization scale times 1 +- 2^-22 or 2^-21 ` +
      `breaks it in ${s.jitterBroken} of ${s.jitterOf} copies${s.worst ? ` (e.g. ${s.worst})` : ''}`);
    return res;
  } catch (e) {
    if (e && e.skip) {
      res.outcome = 'skip';
      res.message = errMessage(e);
    } else {
      res.outcome = 'fail';
      res.message = errMessage(e);
    }
    return res;
  }
}
