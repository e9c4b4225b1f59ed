// Runs cases: compiles each model, runs it in LiteRT.js and tfjs-tflite, compares the two
// runtimes and every candidate reference arithmetic element by element.
import { runTfjs, runLite, compile } from './runtimes.mjs';

function same(a, b) {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  return a === b;
}

// A case: { name, op, variant, model (Model), inputs: [{type, shape, data}],
//           refs: { label: (inputs) => array of outputs (first model output) },
//           expect: label of the candidate that must match (for the summary), note }
// modelDir: where the case's .json and .tflite are written.
export async function runCase(c, { modelDir }) {
  const bytes = compile(c.model.toJSON(), c.name, modelDir);
  const res = { name: c.name, op: c.op, variant: c.variant, note: c.note, tieInfo: c.tieInfo };
  let lite;
  let tf;
  try { lite = await runLite(bytes, c.inputs); } catch (e) { res.liteError = String(e.message ?? e).slice(0, 300); }
  try { tf = await runTfjs(bytes, c.inputs); } catch (e) { res.tfjsError = String(e.message ?? e).slice(0, 300); }
  if (tf) res.tfjsNodes = tf.nodes;
  const outIndex = c.outputIndex ?? 0;
  const lo = lite?.outputs[outIndex]?.data;
  const to = tf?.outputs[outIndex]?.data;
  const ref = lo ?? to;
  if (!ref) { res.n = 0; return res; }
  res.n = ref.length;
  res.outType = (lite ?? tf).outputs[outIndex].type;
  if (lo && to) {
    let agree = 0;
    const diffs = [];
    for (let i = 0; i < lo.length; i++) {
      if (same(lo[i], to[i])) agree++;
      else if (diffs.length < 5) diffs.push([i, lo[i], to[i]]);
    }
    res.runtimesAgree = agree;
    if (diffs.length) res.runtimeDiffs = diffs;
  }
  res.refs = {};
  for (const [label, fn] of Object.entries(c.refs ?? {})) {
    let out;
    try { out = fn(c.inputs); } catch (e) { res.refs[label] = { error: String(e.stack ?? e).slice(0, 400) }; continue; }
    const r = { lite: lo ? 0 : null, tfjs: to ? 0 : null, firstMismatch: [], maxAbsDiff: 0 };
    for (let i = 0; i < ref.length; i++) {
      const d = Math.abs(Number(ref[i]) - Number(out[i]));
      if (d > r.maxAbsDiff) r.maxAbsDiff = d;
      if (to) { const dt = Math.abs(Number(to[i]) - Number(out[i])); if (!(dt <= (r.maxAbsDiffTfjs ?? 0))) r.maxAbsDiffTfjs = dt; }
      if (lo && same(lo[i], out[i])) r.lite++;
      if (to && same(to[i], out[i])) r.tfjs++;
      if (lo && !same(lo[i], out[i]) && r.firstMismatch.length < 4) r.firstMismatch.push([i, lo[i], out[i]]);
      if (to && !same(to[i], out[i]) && (r.firstMismatchTfjs ??= []).length < 4) r.firstMismatchTfjs.push([i, to[i], out[i]]);
    }
    res.refs[label] = r;
  }
  if (c.extra) Object.assign(res, c.extra(lo ?? to, c.inputs));
  return res;
}

export function summarize(res) {
  const parts = [];
  parts.push(`${res.name.padEnd(40)} n=${String(res.n).padStart(6)}`);
  if (res.liteError) parts.push(`LITE-ERR(${res.liteError.slice(0, 120)})`);
  if (res.tfjsError) parts.push(`TFJS-ERR(${res.tfjsError.slice(0, 120)})`);
  if (res.tfjsNodes) parts.push(`kernel=${[...new Set(res.tfjsNodes)].join('+').replace('TfLiteXNNPackDelegate', 'XNNPACK')}`);
  if (res.runtimesAgree !== undefined) parts.push(`rt-agree=${res.runtimesAgree}/${res.n}`);
  for (const [label, r] of Object.entries(res.refs ?? {})) {
    if (r.error) { parts.push(`${label}:ERROR`); continue; }
    const f = (v) => (v === res.n ? 'ALL' : String(v));
    if (r.lite !== null && r.tfjs !== null && r.lite !== r.tfjs) parts.push(`${label}=L:${f(r.lite)}/T:${f(r.tfjs)}`);
    else parts.push(`${label}=${f(r.lite ?? r.tfjs)}`);
    if (res.outType === 'float32' && (r.lite ?? r.tfjs) !== res.n) parts[parts.length - 1] += `(max|d| L ${r.maxAbsDiff.toExponential(1)}${r.maxAbsDiffTfjs !== undefined ? ` T ${r.maxAbsDiffTfjs.toExponential(1)}` : ''})`;
  }
  return parts.join('  ');
}

// Runs the cases in order, printing one line each (and with `verbose` each
// candidate's first mismatches); `onResult` sees every result.
export async function runAll(cases, { modelDir, verbose = false, onResult = () => {} }) {
  const results = [];
  for (const c of cases) {
    const r = await runCase(c, { modelDir });
    results.push(r);
    console.log(summarize(r));
    if (verbose) {
      for (const [label, x] of Object.entries(r.refs ?? {})) {
        if (!x.error && (x.lite ?? x.tfjs) !== r.n) console.log(`    ${label} first mismatches [i, runtime, ref]: LiteRT ${JSON.stringify(x.firstMismatch)} tfjs ${JSON.stringify(x.firstMismatchTfjs ?? [])}`);
        if (x.error) console.log(`    ${label}: ${x.error}`);
      }
      if (r.runtimeDiffs) console.log(`    runtime diffs [i, lite, tfjs]: ${JSON.stringify(r.runtimeDiffs)}`);
    }
    onResult(r);
  }
  return results;
}
