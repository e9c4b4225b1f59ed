#!/usr/bin/env node
// Where does a converted model leave TFLite's arithmetic? Runs the converted
// ONNX model and TFLite tensor by tensor and reports, in execution order, the
// difference at every op output, the first tensor where the two differ, and
// how the difference grows from there (issue 29, item 2).
//
//   node diverge.mjs --cli PATH_TO_lite2onnx [--convert-arg ARG]... [--smooth]
//        [--reference litert|tfjs] [--opset N] [--ort-opt LEVEL] [--specs FILE] [--json]
//        [--out-dir DIR] MODEL.tflite
//
// How. TFLite: a copy of the model whose graph outputs are also every
// intermediate tensor of the converted subgraph (as slice.mjs --outputs
// writes one, lib/tflite_rewrite.mjs). ONNX: the model converted as the
// harness converts it, its values that carry those tensors' names made graph
// outputs with its nodes untouched (a copy of the exposed TFLite model is
// converted too, only for the layouts those values have: lite2onnx.io_layouts).
// Both run on the harness's seeded inputs (random, or smooth with --smooth)
// through lib/pipeline.mjs, as run.mjs runs them.
//
// Exposing values is not free: ONNX Runtime does not remove or merge a node
// whose output is a graph output (its DoubleQDQPairsRemover, for one, merges a
// DequantizeLinear -> QuantizeLinear requantization into one Q/DQ pair with a
// new scale unless the value is a graph output), and XNNPACK may partition a
// TFLite graph otherwise. So the model also runs as it is, and the report ends
// with its final outputs' difference next to the exposed copy's; when they
// differ, both run again with ONNX Runtime's graph optimizations off.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTfliteModel, operatorName } from './lib/tflite_model.mjs';
import { tfliteToJson, jsonToTflite } from './lib/tflite_rewrite.mjs';
import { detectionOutputShapes } from './lib/detections.mjs';
import { makeInputSets, runTflite, runConverter, unsupportedOps } from './lib/pipeline.mjs';
import { runOnnxIsolated } from './lib/ort_child.mjs';
import { outputDistance, compareTensors } from './lib/compare.mjs';
import { readIoLayouts, readGraphValues, withGraphOutputs } from './lib/onnx_meta.mjs';
import {
  isFloatType, isIntegerType, quantize, toNumberArray, transpose, inversePermutation, makeTensor,
} from './lib/tensor.mjs';
import { specFor } from './lib/specs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const USAGE = `usage: node diverge.mjs --cli PATH_TO_lite2onnx [options] MODEL.tflite

Runs the converted model and TFLite tensor by tensor (every intermediate tensor
made a graph output) and reports where they first differ and how the
difference grows.

options:
  --cli FILE            the lite2onnx executable (required)
  --convert-arg ARG     pass ARG to the conversion (repeatable), e.g. --convert-arg=--quantization=dequantize
  --opset N             ONNX opset (default 13, or the model's spec)
  --smooth              the harness's smooth (image-like) inputs instead of the random ones
  --reference R         litert or tfjs: the TFLite runtime compared with (default: the spec's,
                        else LiteRT.js, else tfjs-tflite when LiteRT.js cannot run the model)
  --ort-opt LEVEL       ONNX Runtime's graph optimization level: disabled, basic, extended, all
                        (default: its own, all, as the harness runs it)
  --specs FILE          per-model specs (default: specs.json beside this script)
  --json                print the result as JSON instead of the table
  --out-dir DIR         keep the derived .tflite and the .onnx files here (default: a temp dir, removed)
  -h, --help            this text`;

const LABEL = { litert: 'LiteRT.js', tfjs: 'tfjs-tflite' };

// Types both TFLite runtimes return as outputs (tfjs-tflite reads no int64).
const EXPOSABLE = new Set(['float32', 'int8', 'uint8', 'int16', 'int32', 'bool']);

// ---- the exposed copy ----------------------------------------------------------

/**
 * The op outputs of the converted subgraph in execution order:
 * [{op, opName, tensor, exposed, why}] where `why` says why a tensor cannot
 * be a graph output (its type, an unknown shape, a variable, a name another
 * output has).
 */
export function opOutputs(model) {
  const rows = [];
  const names = new Set(model.outputs.map((t) => t.name));
  const isOutput = new Set(model.outputs.map((t) => t.index));
  model.operators.forEach((op, k) => {
    for (const t of op.outputs) {
      if (t < 0) continue;
      const tensor = model.tensors[t];
      let why = null;
      if (isOutput.has(t)) why = null;
      else if (!EXPOSABLE.has(tensor.type)) why = `type ${tensor.type}`;
      else if (tensor.isVariable) why = 'variable';
      else if (tensor.shape.length === 0 && !tensor.hasRank) why = 'unknown shape';
      else if (names.has(tensor.name)) why = 'name shared with another output';
      if (!why && !isOutput.has(t)) names.add(tensor.name);
      rows.push({ op: k, opName: operatorName(op), tensor, exposed: !why, output: isOutput.has(t), why });
    }
  });
  return rows;
}

// Writes `file` with the graph outputs `extra` appended to its converted
// subgraph (and to its signature's outputs, named after the tensors), and
// the shapes of TFLite_Detection_PostProcess outputs declared (LiteRT.js
// returns no output of unknown shape). Returns the written file's bytes.
function writeCopy(file, model, extra, outFile) {
  const json = tfliteToJson(file, model);
  const graph = json.subgraphs[model.subgraphIndex];
  graph.outputs = [...graph.outputs, ...extra];
  if (model.signature) {
    const sig = json.signature_defs.find((s) => s.signature_key === model.signature.key);
    const aliases = new Set(sig.outputs.map((o) => o.name));
    for (const t of extra) {
      let alias = graph.tensors[t].name;
      while (aliases.has(alias)) alias = `${alias}_`;
      aliases.add(alias);
      sig.outputs.push({ name: alias, tensor_index: t });
    }
  }
  for (const [t, shape] of detectionOutputShapes(model)) {
    if (graph.tensors[t].shape.length === 0) graph.tensors[t].shape = shape;
  }
  jsonToTflite(json, outFile);
  return new Uint8Array(fs.readFileSync(outFile));
}

// Every permutation of 0..n-1.
function permutations(n) {
  if (n <= 1) return [[...Array(n).keys()]];
  return permutations(n - 1).flatMap((p) => [...Array(n).keys()].map((i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
}

/**
 * A value read inside the ONNX graph, in the TFLite tensor's layout and
 * representation: transposed back with `hint` (its layout as a graph output
 * of the exposed conversion) when that fits its shape, else with the one
 * permutation that fits, or of several the channels-last to channels-first
 * one (null when none fits); an int8 tensor that
 * is uint8 inside the graph (zero point + 128, README "Quantized models")
 * shifted back.
 */
export function inTfliteLayout(got, ref, hint) {
  const fits = (perm) => perm.length === ref.shape.length && perm.every((p, i) => ref.shape[p] === got.shape[i]);
  // channels-last -> channels-first, the layout change the converter makes
  const channelsFirst = ref.shape.length >= 3 ? [0, ref.shape.length - 1, ...[...ref.shape.keys()].slice(1, -1)] : null;
  let perm = null;
  if (hint && fits(hint)) perm = hint;
  else if (fits([...ref.shape.keys()])) perm = null;
  else {
    const all = ref.shape.length <= 6 ? permutations(ref.shape.length).filter(fits) : [];
    if (all.length === 1) [perm] = all;
    else if (channelsFirst && fits(channelsFirst)) perm = channelsFirst;
    else return null;
  }
  let t = perm ? transpose(got, inversePermutation(perm)) : got;
  if (ref.type === 'int8' && t.type === 'uint8') t = makeTensor('int8', t.shape, Int8Array.from(t.data, (v) => v - 128));
  return t;
}

// ---- differences ---------------------------------------------------------------

function refStats(values) {
  let lo = Infinity;
  let hi = -Infinity;
  let maxAbs = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  return { range: hi >= lo ? hi - lo : 0, maxAbs };
}

/**
 * The difference of `got` from `ref` at one tensor (TFLite layout):
 * quantized tensors in steps {kind: 'steps', max, exact, within1, differs},
 * float tensors {kind: 'float', maxAbs, rel (max |d| / max(range, max |ref|)),
 * differs (beyond the harness's float tolerance)}, other integer and bool
 * tensors {kind: 'exact', off (fraction of elements that differ), max, differs};
 * {kind: 'missing' | 'shape', ...} when they cannot be compared.
 */
export function tensorDifference(tensor, ref, got) {
  if (!ref || !got) return { kind: 'missing', differs: true, side: ref ? 'got' : 'ref' };
  let g = got;
  if (tensor.quant && isIntegerType(ref.type) && isFloatType(got.type) && tensor.quant.scale.length === 1) {
    // A --quantization dequantize conversion: the float values on the grid.
    g = quantize(got, tensor.quant, ref.type);
  }
  if (ref.shape.join() !== g.shape.join() || ref.data.length !== g.data.length) {
    return { kind: 'shape', differs: true, ref: ref.shape, got: g.shape };
  }
  if (tensor.quant && isIntegerType(ref.type) && isIntegerType(g.type)) {
    // Every integer of a scale-0 tensor means 0 (pruned channels).
    if (tensor.quant.scale.every((s) => s === 0)) return { kind: 'steps', max: 0, exact: 1, within1: 1, differs: false, scale0: true };
    const d = outputDistance(ref, g, 'quantized');
    return { kind: 'steps', max: d.max, exact: 1 - d.off, within1: 1 - d.beyond, differs: d.max > 0 };
  }
  if (isFloatType(ref.type)) {
    const a = toNumberArray(ref);
    const b = toNumberArray(g);
    const { range, maxAbs } = refStats(a);
    let worst = 0;
    for (let i = 0; i < a.length; i++) {
      const d = Number.isNaN(a[i]) && Number.isNaN(b[i]) ? 0 : Math.abs(a[i] - b[i]);
      if (!(d <= worst)) worst = d;
    }
    const scale = Math.max(range, maxAbs);
    const ok = compareTensors(ref, g, 'float').ok;
    return { kind: 'float', maxAbs: worst, rel: scale > 0 ? worst / scale : worst, differs: !ok };
  }
  const d = outputDistance(ref, g, 'exact');
  return { kind: 'exact', off: d.beyond, max: d.max, differs: d.max > 0 };
}

// ---- formatting ----------------------------------------------------------------

// A percentage with 4 digits, more when that would round a fraction that is
// not 0 or 1 to 0% or 100%.
function pct(x) {
  for (let digits = 4; digits < 12; digits++) {
    const p = Number((100 * x).toPrecision(digits));
    if ((p !== 100 || x === 1) && (p !== 0 || x === 0)) return `${p}%`;
  }
  return `${100 * x}%`;
}
const num = (x) => (x === 0 ? '0' : Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3 ? x.toExponential(1) : String(Number(x.toPrecision(3))));

/** A difference as text: "exact", "max 3 steps, 97.2% exact, 99.9% within 1", ... */
export function formatDifference(d) {
  if (!d) return '';
  switch (d.kind) {
    case 'missing': return `no ${d.side === 'ref' ? 'reference' : ''} value`.replace('  ', ' ');
    case 'shape': return `shape [${d.got}] vs [${d.ref}]`;
    case 'steps':
      if (d.max === 0) return d.scale0 ? 'exact (scale 0)' : 'exact';
      return `max ${num(d.max)} step${d.max === 1 ? '' : 's'}, ${pct(d.exact)} exact, ${pct(d.within1)} within 1`;
    case 'float':
      if (d.maxAbs === 0) return 'exact';
      return `${d.differs ? '' : '~ '}max |d| ${num(d.maxAbs)} = ${num(d.rel)} of range`;
    case 'exact':
      return d.max === 0 ? 'exact' : `${pct(d.off)} differ, max |d| ${num(d.max)}`;
    default: return '?';
  }
}

// The size of a difference on one scale for "how it grows": steps for
// quantized tensors, the fraction of the range for float ones.
const sizeOf = (d) => (d?.kind === 'steps' ? d.max : d?.kind === 'float' ? d.rel : d?.kind === 'exact' ? d.max : 0);

// Whether two tensors hold the same multiset of values, of at least 16
// distinct ones (a tensor of few values, saturated ones say, can hold the
// same multiset by chance).
function sameValues(a, b) {
  if (!a || !b || a.data.length !== b.data.length) return false;
  const sorted = (t) => Float64Array.from(toNumberArray(t)).sort();
  const x = sorted(a);
  if (new Set(x).size < 16) return false;
  const y = sorted(b);
  return x.every((v, i) => v === y[i] || (Number.isNaN(v) && Number.isNaN(y[i])));
}

function sameDifference(a, b) {
  return !!a && !!b && a.kind === b.kind && sizeOf(a) === sizeOf(b) &&
    (a.kind !== 'steps' || (a.exact === b.exact && a.within1 === b.within1));
}

// ---- the run -------------------------------------------------------------------

function loadJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

async function convert(task, file, onnxPath) {
  const conv = await runConverter({ ...task, file }, onnxPath);
  if (conv.code === 4) {
    const ops = unsupportedOps(conv.stdout) ?? [];
    throw Object.assign(new Error(`unsupported: ${ops.map((o) => o.op).join(', ') || conv.stderr.trim()}`), { unsupported: true });
  }
  if (conv.code !== 0 || !fs.existsSync(onnxPath)) {
    throw new Error(`lite2onnx ${conv.args.join(' ')} failed (${conv.signal ?? conv.code}): ${(conv.stderr || conv.stdout).trim().split('\n')[0]}`);
  }
  return new Uint8Array(fs.readFileSync(onnxPath));
}

// The converted model with its values `names` made graph outputs, in ONNX
// Runtime (each session in a child process: lib/ort_child.mjs). A session
// that crashes is split in two, down to the single values ONNX Runtime cannot
// return (`crashed`). Returns {outputs, crashed, sessions, notes}; the model's
// own outputs come from the first session that returns them.
async function runExposedOnnx(task, onnxBase, names, model, inputs) {
  const outputs = new Map();
  const crashed = [];
  const notes = [];
  let sessions = 0;
  const run = async (list) => {
    sessions++;
    try {
      const r = await runOnnxIsolated(task, withGraphOutputs(onnxBase, list), model, inputs);
      for (const [k, v] of r.outputs) if (!outputs.has(k)) outputs.set(k, v);
      if (!notes.length) notes.push(...r.notes);
    } catch (e) {
      if (!e.crashed || list.length === 0) throw e;
      if (list.length === 1) { crashed.push(list[0]); return; }
      const half = list.length >> 1;
      await run(list.slice(0, half));
      await run(list.slice(half));
    }
  };
  await run(names);
  if (model.outputs.some((t) => !outputs.has(t.name)) && crashed.length) await run([]);
  return { outputs, crashed, sessions, notes };
}

// Runs one TFLite runtime, null (with the reason in `errors`) when it cannot.
async function tryTflite(which, bytes, model, inputs, errors) {
  try {
    return await runTflite(which, bytes, model, inputs);
  } catch (e) {
    errors[which] = String(e?.message ?? e).split('\n')[0].slice(0, 300);
    return null;
  }
}

/**
 * Runs the divergence analysis of one model. Options: cli, file, convertArgs,
 * opset, smooth, reference ('litert' | 'tfjs' | null), ortOptimization (ONNX
 * Runtime's graph optimization level; default its own), specs, smoothSpecs,
 * outDir (kept files; default a temp dir, removed). Returns a plain object
 * (see formatReport); throws when the model cannot be converted or run.
 */
export async function diverge({
  cli, file, convertArgs = [], opset = 13, smooth = false, reference = null, ortOptimization = null,
  specs = {}, smoothSpecs = {}, outDir = null,
}) {
  const abs = path.resolve(file);
  const name = `${path.basename(path.dirname(abs))}/${path.basename(abs)}`;
  const spec = specFor(specs, { file: abs, name });
  const task = {
    file: abs, name, spec, smoothSpec: specFor(smoothSpecs, { file: abs, name }), cli, opset, convertArgs,
    signature: null, convertTimeoutMs: 600_000, threads: Math.max(1, Math.min(os.cpus().length, 4)),
    ortOptimization,
  };
  const work = outDir ? path.resolve(outDir) : fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-diverge-'));
  fs.mkdirSync(work, { recursive: true });
  try {
    const bytes = new Uint8Array(fs.readFileSync(abs));
    const model = readTfliteModel(bytes);
    const rows = opOutputs(model);
    const extra = rows.filter((r) => r.exposed && !r.output).map((r) => r.tensor.index);
    const stem = path.basename(abs, '.tflite');

    // The exposed copy, and the model as it is (with declared detection
    // shapes only, for LiteRT.js).
    const allFile = path.join(work, `${stem}.all_tensors.tflite`);
    const allBytes = writeCopy(abs, model, extra, allFile);
    const allModel = readTfliteModel(allBytes);
    let baseBytes = bytes;
    let baseModel = model;
    if (detectionOutputShapes(model).size && model.outputs.some((t) => t.shape.length === 0 && !t.hasRank)) {
      const baseFile = path.join(work, `${stem}.shaped.tflite`);
      baseBytes = writeCopy(abs, model, [], baseFile);
      baseModel = readTfliteModel(baseBytes);
    }

    // ONNX: the model converted as it is, its values of the exposed tensors
    // made graph outputs (the nodes untouched). The exposed TFLite copy is
    // converted too, for the layouts its graph outputs have in ONNX
    // (lite2onnx.io_layouts), which are those of the values inside the graph.
    const onnxBase = await convert(task, abs, path.join(work, `${stem}.onnx`));
    const notes = [];
    let layouts = {};
    try {
      layouts = readIoLayouts(await convert(task, allFile, path.join(work, `${stem}.all_tensors.onnx`)));
    } catch (e) {
      notes.push(`the exposed copy does not convert, so layouts are told by shape alone (${e.message})`);
    }
    const values = readGraphValues(onnxBase);
    const inOnnx = (r) => values.produced.has(r.tensor.name) && !values.outputs.includes(r.tensor.name);
    const onnxExtra = rows.filter((r) => r.exposed && !r.output && inOnnx(r)).map((r) => r.tensor.name);
    if (outDir) fs.writeFileSync(path.join(work, `${stem}.exposed.onnx`), withGraphOutputs(onnxBase, onnxExtra));

    // The harness's inputs: seeded by the model's own file name.
    const inputs = makeInputSets(task, model, smooth);

    // TFLite: the reference runtime, the other one for a second opinion.
    const errors = {};
    let refWhich = reference ?? spec.reference ?? null;
    if (refWhich && !LABEL[refWhich]) throw new Error(`--reference: ${refWhich} is neither litert nor tfjs`);
    let ref = null;
    if (refWhich) {
      ref = await tryTflite(refWhich, allBytes, allModel, inputs, errors);
      if (!ref) throw new Error(`${LABEL[refWhich]} cannot run the exposed model: ${errors[refWhich]}`);
    } else {
      for (const which of ['litert', 'tfjs']) {
        ref = await tryTflite(which, allBytes, allModel, inputs, errors);
        if (ref) { refWhich = which; break; }
      }
      if (!ref) throw new Error(`no TFLite runtime can run the exposed model (${Object.entries(errors).map(([k, v]) => `${LABEL[k]}: ${v}`).join(' | ')})`);
      if (refWhich !== 'litert') notes.push(`reference is tfjs-tflite: LiteRT.js cannot run it (${errors.litert})`);
    }
    const otherWhich = refWhich === 'litert' ? 'tfjs' : 'litert';
    const other = await tryTflite(otherWhich, allBytes, allModel, inputs, errors);
    if (!other) notes.push(`no second opinion: ${LABEL[otherWhich]} cannot run it (${errors[otherWhich]})`);

    // runOnnx matches the ONNX outputs to the exposed copy's by name and
    // transposes the model's own outputs back; the new ones come as they are
    // inside the graph.
    const onnx = await runExposedOnnx(task, onnxBase, onnxExtra, allModel, inputs);
    notes.push(...onnx.notes);
    if (onnx.crashed.length) {
      notes.push(`ONNX Runtime crashed with all ${onnxExtra.length} values as graph outputs; they ran in ${onnx.sessions} ` +
        `sessions, without the ${onnx.crashed.length} it crashes on (${onnx.crashed.slice(0, 3).map((n) => `"${n}"`).join(', ')}` +
        `${onnx.crashed.length > 3 ? ', ...' : ''})`);
    }
    // The model as it is, in the same runtimes.
    const refBase = await tryTflite(refWhich, baseBytes, baseModel, inputs, errors);
    const onnxAlone = await runOnnxIsolated(task, onnxBase, model, inputs);

    const table = rows.map((r) => {
      const row = {
        op: r.op, opName: r.opName, tensor: r.tensor.index, name: r.tensor.name, type: r.tensor.type,
        quantized: !!r.tensor.quant, output: r.output,
      };
      if (!r.exposed) return { ...row, skipped: r.why };
      if (!r.output && !inOnnx(r)) return { ...row, skipped: 'no ONNX value of that name' };
      if (onnx.crashed.includes(r.tensor.name)) return { ...row, skipped: 'ONNX Runtime crashes with it as a graph output' };
      const refT = ref.get(r.tensor.name);
      let got = onnx.outputs.get(r.tensor.name);
      if (got && refT && !r.output) {
        got = inTfliteLayout(got, refT, layouts[r.tensor.name]);
        if (!got) return { ...row, skipped: `layout unknown (ONNX shape [${onnx.outputs.get(r.tensor.name).shape}])` };
      }
      const difference = tensorDifference(r.tensor, refT, got);
      if (difference.differs && !r.output && sameValues(refT, got)) {
        // A flattened value whose element order inside the graph no
        // transpose describes (the converter reorders the next op's weights
        // instead): the same values, in another order.
        return { ...row, skipped: 'the same values in another element order (a layout inside the graph)' };
      }
      row.onnx = difference;
      if (other) row.runtimes = tensorDifference(r.tensor, refT, other.get(r.tensor.name));
      return row;
    });

    // The first difference, then the growth: the largest difference so far,
    // at each op where it grows (steps and fractions of the range apart).
    const firstIndex = table.findIndex((r) => r.onnx?.differs);
    const growth = [];
    if (firstIndex >= 0) {
      const best = {};
      for (const r of table.slice(firstIndex)) {
        if (!r.onnx || !r.onnx.differs) continue;
        const k = r.onnx.kind;
        if (!(sizeOf(r.onnx) > (best[k] ?? 0))) continue;
        best[k] = sizeOf(r.onnx);
        growth.push({ op: r.op, opName: r.opName, tensor: r.tensor, kind: k, size: best[k] });
      }
    }
    const later = firstIndex >= 0 ? table.slice(firstIndex).filter((r) => r.onnx) : [];
    // Where a difference starts: an op whose output differs although every
    // input that an earlier op produces was compared and equal (graph inputs
    // are the same on both sides).
    const producedBy = new Map(table.map((r) => [r.tensor, r]));
    for (const r of table) {
      if (!r.onnx?.differs) continue;
      r.origin = model.operators[r.op].inputs.every((t) => {
        const p = producedBy.get(t);
        return !p || p.op >= r.op || (p.onnx && !p.onnx.differs);
      });
    }
    // Inputs of the first differing op that could not be compared: the
    // difference may begin there.
    if (firstIndex >= 0) {
      const first = table[firstIndex];
      first.uncomparedInputs = model.operators[first.op].inputs
        .map((t) => table.find((r) => r.tensor === t && r.op < first.op))
        .filter((r) => r && r.skipped)
        .map((r) => ({ op: r.op, opName: r.opName, tensor: r.tensor, name: r.name, why: r.skipped }));
    }

    // Final outputs: the exposed copy's and the model's own.
    const refAlone = refBase ?? ref;
    const finals = model.outputs.map((t) => ({
      tensor: t.index,
      name: t.name,
      exposed: tensorDifference(t, ref.get(t.name), onnx.outputs.get(t.name)),
      alone: tensorDifference(t, refAlone.get(t.name), onnxAlone.outputs.get(t.name)),
      tfliteUnchanged: refBase ? !tensorDifference(t, refBase.get(t.name), ref.get(t.name)).differs : null,
    }));
    const finalsSame = finals.every((f) => sameDifference(f.exposed, f.alone));
    // Exposing changed the result: is it ONNX Runtime's graph optimizations
    // (the ones a graph output blocks)? Both again without any.
    let unoptimized = null;
    if (!finalsSame && ortOptimization !== 'disabled') {
      const off = { ...task, ortOptimization: 'disabled' };
      const exposedOff = await runExposedOnnx(off, onnxBase, onnxExtra, allModel, inputs);
      const aloneOff = await runOnnxIsolated(off, onnxBase, model, inputs);
      const figures = model.outputs.map((t) => ({
        exposed: tensorDifference(t, ref.get(t.name), exposedOff.outputs.get(t.name)),
        alone: tensorDifference(t, refAlone.get(t.name), aloneOff.outputs.get(t.name)),
      }));
      unoptimized = { same: figures.every((f) => sameDifference(f.exposed, f.alone)), finals: figures };
    }

    return {
      model: name,
      file: abs,
      reference: refWhich,
      other: other ? otherWhich : null,
      inputs: smooth ? 'smooth' : 'random',
      convertArgs,
      notes,
      exposed: extra.length,
      exposedOnnx: onnxExtra.length,
      ortOptimization,
      opOutputs: rows.length,
      notExposed: rows.filter((r) => !r.exposed).map((r) => ({ op: r.op, tensor: r.tensor.index, why: r.why })),
      rows: table,
      first: firstIndex >= 0 ? table[firstIndex] : null,
      differing: later.filter((r) => r.onnx.differs).length,
      after: later.length,
      growth,
      origins: table.filter((r) => r.origin).map((r) => ({ op: r.op, opName: r.opName, tensor: r.tensor, difference: r.onnx })),
      finals,
      finalsSame,
      unoptimized,
    };
  } finally {
    if (!outDir) fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The result of diverge() as the text report. */
export function formatReport(res) {
  const ref = LABEL[res.reference];
  const other = res.other ? LABEL[res.other] : null;
  const out = [];
  out.push(`${res.model}: ONNX Runtime vs ${ref}, tensor by tensor, on the harness's ${res.inputs} inputs` +
    `${res.convertArgs.length ? ` (converted with ${res.convertArgs.join(' ')})` : ''}` +
    `${res.ortOptimization ? ` (ONNX Runtime graph optimization: ${res.ortOptimization})` : ''}`);
  out.push(`  ${res.exposed} intermediate tensors made graph outputs of the TFLite model, ${res.exposedOnnx} values of the ` +
    `converted one (${res.opOutputs} op outputs${res.notExposed.length ? `, ${res.notExposed.length} not exposable` : ''}).`);
  out.push('  Caveat: a graph output keeps ONNX Runtime from removing or merging the nodes around it (e.g. its');
  out.push('  DoubleQDQPairsRemover), and XNNPACK may partition the exposed TFLite graph otherwise: the final');
  out.push('  outputs are compared with and without the exposing at the end.');
  for (const n of res.notes) out.push(`  note: ${n}`);
  out.push('');
  const width = 44;
  out.push(`  ${'op'.padStart(4)}  ${'operator'.padEnd(24)} ${'tensor'.padEnd(width)} ${'type'.padEnd(7)} ` +
    `${`ONNX vs ${ref}`.padEnd(44)} ${other ? `${other} vs ${ref}` : ''}`.trimEnd());
  const grew = new Set(res.growth.slice(1).map((g) => g.tensor));
  for (const r of res.rows) {
    const label = `${r.tensor} ${r.name}`;
    const shown = label.length > width ? `${label.slice(0, width - 3)}...` : label;
    const cells = r.skipped ? `(not compared: ${r.skipped})`
      : formatDifference(r.onnx).padEnd(44) + (r.runtimes ? ` ${formatDifference(r.runtimes)}` : '');
    let mark = '';
    if (res.first && r.tensor === res.first.tensor) mark = '  <== first difference';
    else if (r.origin) mark = '  <== starts here too';
    else if (grew.has(r.tensor)) mark = '  (largest so far)';
    if (r.output) mark += '  (model output)';
    out.push(`  ${String(r.op).padStart(4)}  ${r.opName.slice(0, 24).padEnd(24)} ${shown.padEnd(width)} ${r.type.padEnd(7)} ${cells}${mark}`);
  }
  out.push('');
  if (!res.first) {
    out.push(`  No difference: every compared tensor equals ${ref}'s.`);
  } else {
    const f = res.first;
    out.push(`  First difference: op ${f.op} ${f.opName}, tensor ${f.tensor} "${f.name}" (${f.type}): ${formatDifference(f.onnx)}.`);
    if (f.runtimes) {
      out.push(`  There ${other} ${f.runtimes.differs ? `differs from ${ref} too: ${formatDifference(f.runtimes)}`
        : `agrees with ${ref} (${formatDifference(f.runtimes)})`}.`);
    }
    for (const u of f.uncomparedInputs ?? []) {
      out.push(`  Its input ${u.tensor} "${u.name}" (op ${u.op} ${u.opName}) was not compared (${u.why}): the difference may begin there.`);
    }
    out.push(`  From there on ${res.differing} of ${res.after} compared tensors differ.`);
    const size = (g) => (g.kind === 'steps' ? `${num(g.size)} step${g.size === 1 ? '' : 's'}` : g.kind === 'float' ? `${num(g.size)} of range` : `|d| ${num(g.size)}`);
    out.push(`  Growth (largest difference so far): ${res.growth.map((g) => `op ${g.op} ${g.opName} ${size(g)}`).join(' -> ')}`);
    if (res.origins.length) {
      const shown = res.origins.slice(0, 12).map((o) => `op ${o.op} ${o.opName} (${formatDifference(o.difference)})`);
      out.push(`  Differences that start at an op whose inputs equal ${ref}'s (${res.origins.length}): ${shown.join('; ')}` +
        `${res.origins.length > 12 ? '; ...' : ''}`);
    }
  }
  res.finals.forEach((f) => {
    out.push(`  Final output ${f.tensor} "${f.name}": ${formatDifference(f.exposed)} with the tensors exposed, ` +
      `${formatDifference(f.alone)} converted as it is` +
      `${f.tfliteUnchanged === false ? ` (${ref}'s own output moved with the exposing)` : ''}.`);
  });
  if (res.finalsSame) {
    out.push("  Exposing the tensors did not change the final outputs' difference.");
  } else {
    out.push("  Exposing the tensors CHANGED the final outputs' difference: the figures above are those of the exposed model.");
    if (res.unoptimized) {
      const figures = res.unoptimized.finals.map((f) => formatDifference(f.alone)).join('; ');
      out.push(res.unoptimized.same
        ? `  With ONNX Runtime's graph optimizations off both give the same (${figures}): the optimizations the exposing blocks change the result.`
        : `  With ONNX Runtime's graph optimizations off they still differ (as it is: ${figures}).`);
    }
  }
  return out.join('\n');
}

// ---- command line --------------------------------------------------------------

function usageError(message) {
  process.stderr.write(`diverge.mjs: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    cli: null, convertArgs: [], opset: 13, smooth: false, reference: null, ortOptimization: null, specs: [], json: false,
    outDir: null, model: null,
  };
  const takesValue = new Set(['--cli', '--convert-arg', '--opset', '--reference', '--ort-opt', '--specs', '--out-dir']);
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let value;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0 && takesValue.has(a.slice(0, eq))) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    } else if (takesValue.has(a)) {
      if (i + 1 >= argv.length) usageError(`${a} needs a value`);
      value = argv[++i];
    }
    switch (a) {
      case '--cli': o.cli = value; break;
      case '--convert-arg': o.convertArgs.push(value); break;
      case '--opset': o.opset = Number(value); break;
      case '--reference': o.reference = value; break;
      case '--ort-opt': o.ortOptimization = value; break;
      case '--specs': o.specs.push(value); break;
      case '--out-dir': o.outDir = value; break;
      case '--smooth': o.smooth = true; break;
      case '--json': o.json = true; break;
      case '-h': case '--help': process.stdout.write(`${USAGE}\n`); process.exit(0); break;
      default:
        if (a.startsWith('-')) usageError(`unknown option ${a}`);
        if (o.model) usageError(`one model only (${o.model}, ${a})`);
        o.model = a;
    }
  }
  if (!o.cli) usageError('--cli is required');
  if (!o.model) usageError('no model given');
  if (o.reference && !LABEL[o.reference]) usageError(`--reference ${o.reference}: litert or tfjs`);
  if (!Number.isInteger(o.opset)) usageError('--opset needs a number');
  if (o.ortOptimization && !['disabled', 'basic', 'extended', 'all'].includes(o.ortOptimization)) {
    usageError(`--ort-opt ${o.ortOptimization}: disabled, basic, extended or all`);
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const specs = {};
  for (const f of o.specs.length ? o.specs : [path.join(HERE, 'specs.json')]) Object.assign(specs, loadJson(f));
  const smoothSpecs = loadJson(path.join(HERE, 'specs_smooth.json'));
  let res;
  try {
    res = await diverge({
      cli: path.resolve(o.cli), file: o.model, convertArgs: o.convertArgs, opset: o.opset, smooth: o.smooth,
      reference: o.reference, ortOptimization: o.ortOptimization, specs, smoothSpecs, outDir: o.outDir,
    });
  } catch (e) {
    process.stderr.write(`diverge.mjs: ${o.model}: ${e?.message ?? e}\n`);
    process.exit(1);
  }
  process.stdout.write(o.json ? `${JSON.stringify(res, null, 1)}\n` : `${formatReport(res)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
