// The "signal" reference (chosen for any model with a TFLite Micro Signal
// op): no runtime here registers the Signal library's custom ops (LiteRT.js
// and tfjs-tflite refuse them), so the model runs op by op in its order: each
// Signal op as signal_kernel.mjs writes its kernel (JS, from the C sources),
// each run of builtin ops between them in LiteRT.js (a copy of the model with
// just that run, its inputs the values it reads, its outputs the values read
// after it). Invocations run in turn on one set of kernels, so the state a
// kernel keeps (spectral subtraction's noise estimate) carries from one to
// the next, as in TFLite Micro's interpreter.
import fs from 'node:fs';
import path from 'node:path';
import { jsonToTflite, tfliteToJson } from './tflite_rewrite.mjs';
import { readFlexMap, readTfliteModel } from './tflite_model.mjs';
import { TYPED_ARRAYS, makeTensor } from './tensor.mjs';
import * as k from './signal_kernel.mjs';

export const isSignalOp = (op) => typeof op.custom === 'string' && op.custom.startsWith('Signal');

// A constant tensor's elements from flatc's JSON of the model.
function constant(json, graph, index) {
  const t = graph.tensors[index];
  const bytes = Uint8Array.from(json.buffers[t.buffer ?? 0]?.data ?? []);
  const type = String(t.type ?? 'FLOAT32').toLowerCase();
  const Ctor = TYPED_ARRAYS[type];
  if (!Ctor || bytes.length === 0) throw new Error(`the signal reference needs tensor ${index} to be a constant`);
  return new Ctor(bytes.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
}

// One Signal op: a function of its input values (typed arrays, in order) to
// its outputs, holding the kernel's state.
function signalKernel(op, model, json, graph) {
  const o = op.customOptions?.length ? readFlexMap(op.customOptions) : {};
  const shapeOf = (i) => model.tensors[i].shape;
  switch (op.custom) {
    case 'SignalWindow': return ([x, w]) => [k.applyWindow(x, w, o.shift)];
    case 'SignalFftAutoScale': return ([x]) => { const r = k.fftAutoScale(x); return [r.output, Int32Array.of(r.scaleBits)]; };
    case 'SignalRfft': {
      const run = { 7: k.rfftInt16, 2: k.rfftInt32, 0: k.rfftFloat }[o.T];
      if (!run) throw new Error(`the signal reference has no RFFT of type ${o.T}`);
      const shape = shapeOf(op.inputs[0]);
      return ([x]) => [run(x, shape[shape.length - 1], o.fft_length)];
    }
    case 'SignalIrfft': {
      const run = { 7: k.irfftInt16, 2: k.irfftInt32, 0: k.irfftFloat }[o.T];
      if (!run) throw new Error(`the signal reference has no IRFFT of type ${o.T}`);
      const shape = shapeOf(op.inputs[0]);
      return ([x]) => [run(x, shape[shape.length - 1] / 2, o.fft_length)];
    }
    case 'SignalEnergy': {
      const n = shapeOf(op.outputs[0]).reduce((a, b) => a * b, 1);
      return ([x]) => [k.spectrumToEnergy(x, o.start_index, o.end_index, n)];
    }
    case 'SignalFilterBank': {
      const c = [1, 2, 3, 4, 5].map((i) => constant(json, graph, op.inputs[i]));
      return ([x]) => [k.filterbankAccumulate(x, ...c, o.num_channels)];
    }
    case 'SignalFilterBankSquareRoot': return ([x, s]) => [k.filterbankSqrt(x, s[0])];
    case 'SignalFilterBankSpectralSubtraction': {
      const noise = new Uint32Array(o.num_channels);  // Prepare's reset: zeros
      return ([x]) => { const out = k.spectralSubtraction(o, x, noise); return [out, noise.slice()]; };
    }
    case 'SignalPCAN': return ([x, noise, lut]) => [k.pcan(x, noise, lut, o.snr_shift)];
    case 'SignalFilterBankLog': return ([x]) => [k.filterbankLog(x, o.output_scale, o.input_correction_bits)];
    case 'SignalDelay': {
      const shape = shapeOf(op.inputs[0]), inner = shape[shape.length - 1];
      const run = k.makeDelay(shape.reduce((a, b) => a * b, 1) / inner, inner, o.delay_length);
      return ([x]) => [run(x)];
    }
    case 'SignalFramer': {
      const shape = shapeOf(op.inputs[0]), inner = shape[shape.length - 1];
      const rows = shape.reduce((a, b) => a * b, 1) / inner;
      const run = k.makeFramer(rows, inner, o.frame_size, o.frame_step, !!o.prefill);
      return ([x]) => run(x);
    }
    case 'SignalOverlapAdd': {
      const shape = shapeOf(op.inputs[0]);
      const size = shape[shape.length - 1], frames = shape[shape.length - 2];
      const rows = shape.reduce((a, b) => a * b, 1) / (size * frames);
      if (o.T !== 0 && o.T !== 7) throw new Error('the signal reference runs int16 and float32 overlap-add only');
      const run = k.makeOverlapAdd(rows, frames, size, o.frame_step, o.T === 0);
      return ([x]) => [run(x)];
    }
    case 'SignalStacker': {
      const run = k.makeStacker(o.num_channels, o.stacker_left_context, o.stacker_right_context, o.stacker_step);
      return ([x]) => run(x);
    }
    default: throw new Error(`the signal reference has no kernel for ${op.custom}`);
  }
}

// The model cut into steps: Signal ops, and runs of builtin ops as LiteRT.js
// models of their own.
function plan(task, model) {
  if (!task.file || !task.outDir) throw new Error('the signal reference needs the model file and an output folder');
  const json = tfliteToJson(task.file, model);
  const graph = json.subgraphs[model.subgraphIndex];
  const codes = json.operator_codes ?? [];
  const isConst = (i) => (json.buffers[graph.tensors[i].buffer ?? 0]?.data ?? []).length > 0;
  const outputs = new Set(model.outputs.map((t) => t.index));
  const steps = [];
  let run = [];
  const flush = () => {
    if (!run.length) return;
    const at = steps.length;
    const produced = new Set(run.flatMap((i) => model.operators[i].outputs));
    const later = new Set(model.operators.slice(run[run.length - 1] + 1).flatMap((op) => op.inputs));
    const ins = [...new Set(run.flatMap((i) => model.operators[i].inputs))]
      .filter((i) => i >= 0 && !produced.has(i) && !isConst(i));
    const outs = [...produced].filter((i) => later.has(i) || outputs.has(i));
    const copy = structuredClone(json);
    const g = copy.subgraphs[model.subgraphIndex];
    g.operators = run.map((i) => graph.operators[i]);
    g.inputs = ins;
    g.outputs = outs;
    delete copy.signature_defs;  // the copy's inputs and outputs are its own
    const stem = path.basename(task.file, path.extname(task.file));
    const file = path.join(task.outDir, `${stem}.signal_part${at}.tflite`);
    jsonToTflite(copy, file);
    const bytes = new Uint8Array(fs.readFileSync(file));
    steps.push({ kind: 'litert', bytes, model: readTfliteModel(bytes) });
    run = [];
  };
  model.operators.forEach((op, i) => {
    const code = codes[graph.operators[i].opcode_index ?? 0] ?? {};
    if (isSignalOp(op)) {
      flush();
      const constants = op.inputs.map((t) => (t >= 0 && isConst(t) ? constant(json, graph, t) : undefined));
      steps.push({ kind: 'signal', op, constants, run: signalKernel(op, model, json, graph) });
    } else {
      if (code.custom_code) throw new Error(`the signal reference cannot run custom op ${code.custom_code}`);
      run.push(i);
    }
  });
  flush();
  return steps;
}

/**
 * Reference outputs of a model with Signal ops, one invocation per input set,
 * merged as the runtimes' are (`NAME`, `NAME@2`, ...). `runTflite` is the
 * pipeline's (LiteRT.js runs the builtin runs).
 */
export async function runSignalReference(task, model, inputSets, runTflite, mergeInvocations) {
  const steps = plan(task, model);
  const runs = [];
  for (const inputs of inputSets) {
    const values = new Map(inputs);
    for (const step of steps) {
      if (step.kind === 'litert') {
        const feed = new Map(step.model.inputs.map((t) => {
          const v = values.get(t.name);
          if (!v) throw new Error(`the signal reference has no value for "${t.name}"`);
          return [t.name, v];
        }));
        const outs = await runTflite('litert', step.bytes, step.model, [feed]);
        for (const [name, v] of outs) values.set(name, v);
        continue;
      }
      const { op } = step;
      // Constant inputs (window weights, the PCAN LUT) come from the file.
      const ins = op.inputs.map((i, j) => {
        const d = step.constants[j] ?? values.get(model.tensors[i].name)?.data;
        if (!d) throw new Error(`the signal reference has no value for input ${j} of ${op.custom}`);
        return d;
      });
      const outs = step.run(ins);
      op.outputs.forEach((o, j) => {
        const t = model.tensors[o];
        values.set(t.name, makeTensor(t.type, t.shape, outs[j]));
      });
    }
    runs.push(new Map(model.outputs.map((t) => [t.name, values.get(t.name)])));
  }
  return mergeInvocations(runs);
}
