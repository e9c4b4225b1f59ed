// Output comparison rules (see docs/architecture.md, "Numeric judge"):
//   float        |d| <= atol + rtol * max(range(ref), max|ref|)   (atol 1e-5, rtol 1e-4)
//   exact        integer and bool outputs: every element equal (and every integer
//                output of a --quantization exact conversion)
//   index        ARG_MAX/ARG_MIN-like outputs: >= 99.9% of elements equal
//   quantized    integer outputs with quantization: >= 99% within 1 step, none beyond 4;
//                single-op models (SINGLE_OP_QUANTIZED): >= 99% exact, none beyond 1
//   dequantized  float outputs of dequantized/hybrid models: >= 99% of elements within
//                2% of the reference output range (or one quantization step of a
//                quantized reference, if coarser), and the same top-1 for classifiers
//   distribution outputs drawn at random (the random ops): the values as two samples of
//                one distribution, by the two-sample Kolmogorov-Smirnov test at
//                significance 0.001 (D <= 1.95 sqrt(2 / n)); never the elements

import { numElements, toNumberArray } from './tensor.mjs';

export const DEFAULT_TOLERANCE = Object.freeze({
  atol: 1e-5,
  rtol: 1e-4,
  agree: 0.999, // index: fraction of equal elements
  within1: 0.99, // quantized: fraction within 1 step
  exact: 0, // quantized: fraction exactly equal
  maxSteps: 4, // quantized: no element beyond this many steps
  frac: 0.99, // dequantized: fraction within rel * range
  rel: 0.02, // dequantized: allowed error as a fraction of the output range
  ks: 1.95, // distribution: c(alpha) of the Kolmogorov-Smirnov bound, alpha = 0.001
});

// The quantized rule of a single-op model (one TFLite operator): a correct
// conversion rounds like TFLite but at ties. Per-op exceptions, where TFLite's
// kernel differs by design, are in single_op_exceptions.json.
export const SINGLE_OP_QUANTIZED = Object.freeze({ exact: 0.99, within1: 1, maxSteps: 1 });

// A whole-model output that breaks its tolerance still passes when its
// distance from the reference is at most max(RUNTIME_SPREAD x the distance
// between the two TFLite runtimes, the tolerance), figure by figure.
export const RUNTIME_SPREAD = 1.5;

export const MODES = ['float', 'exact', 'index', 'quantized', 'dequantized', 'distribution'];

function fmt(x) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e4 || a < 1e-3) return x.toExponential(2);
  return Number(x.toPrecision(3)).toString();
}

function pct(x) {
  return `${Number((100 * x).toPrecision(4))}%`;
}

function refStats(ref) {
  let min = Infinity;
  let max = -Infinity;
  let maxAbs = 0;
  for (let i = 0; i < ref.length; i++) {
    const v = ref[i];
    if (!Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
  }
  const range = max >= min ? max - min : 0;
  return { min, max, range, maxAbs };
}

// |a - b| with NaN/Inf handled: same non-finite value -> 0, otherwise Infinity.
function absDiff(a, b) {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b ? 0 : Infinity;
  return Math.abs(a - b);
}

function worstIndex(ref, got) {
  let worst = 0;
  let idx = -1;
  for (let i = 0; i < ref.length; i++) {
    const d = absDiff(ref[i], got[i]);
    if (d > worst || idx < 0) { worst = d; idx = i; }
  }
  return [worst, idx];
}

function unravel(i, shape) {
  const out = new Array(shape.length);
  for (let k = shape.length - 1; k >= 0; k--) {
    out[k] = shape[k] === 0 ? 0 : i % shape[k];
    i = Math.floor(i / (shape[k] || 1));
  }
  return out;
}

function compareFloat(ref, got, tol, shape, label) {
  const st = refStats(ref);
  const scale = Math.max(st.range, st.maxAbs);
  const bound = tol.atol + tol.rtol * scale;
  const [worst, idx] = worstIndex(ref, got);
  let bad = 0;
  for (let i = 0; i < ref.length; i++) if (absDiff(ref[i], got[i]) > bound) bad++;
  const ok = bad === 0;
  const r = { ok, maxAbs: worst, tol: bound, summary: `max |d| = ${fmt(worst)}, tol = ${fmt(bound)}` };
  if (!ok) {
    r.detail = `${bad} of ${ref.length} elements beyond ${fmt(bound)}; worst at [${unravel(idx, shape)}]: ` +
      `ref ${fmt(ref[idx])} vs ${label} ${fmt(got[idx])}`;
  }
  return r;
}

// The two-sample Kolmogorov-Smirnov statistic (the largest distance between
// the two empirical distribution functions; ties step together) and its bound.
function ksStatistic(a, b, c) {
  const x = Float64Array.from(a).sort();
  const y = Float64Array.from(b).sort();
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < x.length && j < y.length) {
    const v = Math.min(x[i], y[j]);
    while (i < x.length && x[i] === v) i++;
    while (j < y.length && y[j] === v) j++;
    d = Math.max(d, Math.abs(i / x.length - j / y.length));
  }
  const bound = c * Math.sqrt((x.length + y.length) / (x.length * y.length));
  return { d, bound };
}

function compareDistribution(ref, got, tol, label) {
  const { d, bound } = ksStatistic(ref, got, tol.ks);
  const r = { ok: d <= bound, maxAbs: d, tol: bound, summary: `KS D = ${fmt(d)}, bound ${fmt(bound)} (same distribution)` };
  if (!r.ok) r.detail = `the values of ${label} are not drawn from the reference's distribution: KS D = ${fmt(d)} > ${fmt(bound)} over ${ref.length} values`;
  return r;
}

function compareExact(ref, got, shape, label) {
  let bad = 0;
  let first = -1;
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    if (ref[i] !== got[i]) {
      bad++;
      if (first < 0) first = i;
      worst = Math.max(worst, absDiff(ref[i], got[i]));
    }
  }
  const r = { ok: bad === 0, maxAbs: worst, tol: 0, summary: `max |d| = ${fmt(worst)}, tol = 0 (exact)` };
  if (bad) r.detail = `${bad} of ${ref.length} elements differ; first at [${unravel(first, shape)}]: ref ${ref[first]} vs ${label} ${got[first]}`;
  return r;
}

function compareIndex(ref, got, tol, shape, label) {
  let bad = 0;
  let first = -1;
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    if (ref[i] !== got[i]) {
      bad++;
      if (first < 0) first = i;
      worst = Math.max(worst, absDiff(ref[i], got[i]));
    }
  }
  const agree = ref.length ? 1 - bad / ref.length : 1;
  const ok = agree >= tol.agree;
  const r = {
    ok, maxAbs: worst, tol: 0,
    summary: `max |d| = ${fmt(worst)}, ${pct(agree)} equal, tol = ${pct(tol.agree)} equal (index)`,
  };
  if (!ok) r.detail = `only ${pct(agree)} of indices equal (need ${pct(tol.agree)}); first difference at [${unravel(first, shape)}]: ref ${ref[first]} vs ${label} ${got[first]}`;
  return r;
}

function compareQuantized(ref, got, tol, shape, label) {
  let within1 = 0;
  let exact = 0;
  let beyond = 0;
  let worst = 0;
  let idx = -1;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(ref[i] - got[i]);
    if (d <= 1) within1++;
    if (d === 0) exact++;
    if (d > tol.maxSteps) beyond++;
    if (d > worst || idx < 0) { worst = d; idx = i; }
  }
  const frac = ref.length ? within1 / ref.length : 1;
  const exactFrac = ref.length ? exact / ref.length : 1;
  const ok = frac >= tol.within1 && exactFrac >= tol.exact && beyond === 0;
  const need = [];
  if (tol.exact > 0) need.push(`${pct(tol.exact)} exact`);
  if (tol.within1 < 1 && tol.maxSteps > 1) need.push(`${pct(tol.within1)} within 1 step`);
  need.push(`none beyond ${tol.maxSteps}`);
  const rule = need.join(', ').replace(/, (none beyond)/, ' and $1');
  const r = {
    ok, maxAbs: worst, tol: tol.maxSteps,
    summary: `max |d| = ${worst} steps, ${pct(frac)} within 1 step (${pct(exactFrac)} exact), tol = ${rule}`,
  };
  if (!ok) {
    const steps = `${tol.maxSteps} step${tol.maxSteps === 1 ? '' : 's'}`;
    r.detail = `${pct(frac)} within 1 step (${pct(exactFrac)} exact), ${beyond} beyond ${steps} ` +
      `(need ${rule}); worst at [${unravel(idx, shape)}]: ref ${ref[idx]} vs ${label} ${got[idx]}`;
  }
  return r;
}

function argmaxRows(vals, shape) {
  const k = shape[shape.length - 1] || 1;
  const rows = Math.floor(vals.length / k);
  const out = new Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = r * k;
    for (let j = r * k + 1; j < (r + 1) * k; j++) if (vals[j] > vals[best]) best = j;
    out[r] = best;
  }
  return out;
}

function compareDequantized(ref, got, tol, shape, classifier, label, step) {
  const st = refStats(ref);
  const range = st.range > 0 ? st.range : Math.max(st.maxAbs, 1e-6);
  // A reference rounded to a quantization step coarser than 2% of its range
  // (an output spanning fewer than 50 steps) is only known to within a step.
  const bound = Math.max(tol.rel * range, step ?? 0);
  let within = 0;
  for (let i = 0; i < ref.length; i++) if (absDiff(ref[i], got[i]) <= bound) within++;
  const [worst, idx] = worstIndex(ref, got);
  const frac = ref.length ? within / ref.length : 1;
  let ok = frac >= tol.frac;
  let detail = ok ? '' : `${pct(frac)} of elements within ${fmt(bound)} (need ${pct(tol.frac)}); worst at [${unravel(idx, shape)}]: ref ${fmt(ref[idx])} vs ${label} ${fmt(got[idx])}`;
  let top1 = '';
  if (classifier && shape.length >= 1 && (shape[shape.length - 1] || 0) >= 2) {
    const a = argmaxRows(ref, shape);
    const b = argmaxRows(got, shape);
    let flips = 0;
    for (let r = 0; r < a.length; r++) {
      // A flip only counts when the reference clearly prefers its class:
      // near-ties (within the element tolerance) may legitimately swap.
      if (a[r] !== b[r] && ref[a[r]] - ref[b[r]] > bound) flips++;
    }
    top1 = flips ? `, top-1 differs in ${flips} of ${a.length} rows` : ', same top-1';
    if (flips) {
      ok = false;
      detail = (detail ? `${detail}; ` : '') + `top-1 differs in ${flips} of ${a.length} rows`;
    }
  }
  const r = {
    ok, maxAbs: worst, tol: bound,
    summary: `max |d| = ${fmt(worst)}, ${pct(frac)} within ${fmt(bound)}${top1}, tol = ${pct(tol.frac)} within ${pct(tol.rel)} of range`,
  };
  if (!ok) r.detail = detail;
  return r;
}

/**
 * Compares one output. ref and got are host tensors in the same (TFLite) layout.
 * mode: one of MODES. Returns {ok, maxAbs, tol, summary, detail?}.
 */
export function compareTensors(ref, got, mode, tolerance = {}, options = {}) {
  const tol = { ...DEFAULT_TOLERANCE, ...tolerance };
  const label = options.label ?? 'onnx';
  if (ref.shape.length !== got.shape.length || ref.shape.some((d, i) => d !== got.shape[i])) {
    return {
      ok: false, maxAbs: Infinity, tol: 0, summary: 'shape mismatch',
      detail: `shape mismatch: reference [${ref.shape}] vs ${label} [${got.shape}]`,
    };
  }
  if (numElements(ref.shape) !== ref.data.length || ref.data.length !== got.data.length) {
    return { ok: false, maxAbs: Infinity, tol: 0, summary: 'size mismatch', detail: `element count ${ref.data.length} vs ${got.data.length}` };
  }
  const a = toNumberArray(ref);
  const b = toNumberArray(got);
  switch (mode) {
    case 'float': return compareFloat(a, b, tol, ref.shape, label);
    case 'exact': return compareExact(a, b, ref.shape, label);
    case 'index': return compareIndex(a, b, tol, ref.shape, label);
    case 'quantized': return compareQuantized(a, b, tol, ref.shape, label);
    case 'dequantized': return compareDequantized(a, b, tol, ref.shape, options.classifier ?? false, label, options.step);
    case 'distribution': return compareDistribution(a, b, tol, label);
    default: throw new Error(`unknown comparison mode ${mode}`);
  }
}

// ---- distances, for the runtime-spread rule ---------------------------------
//
// The distance of an output from the reference, in units of its rule: one
// quantization step (quantized), the float bound (float), the dequantized bound
// (dequantized), one element (exact, index). Figures: `beyond`, the fraction
// of elements more than one unit off; `max`, the largest difference in units;
// `top1` (dequantized classifiers), rows whose top-1 class moved although the
// reference clearly prefers its own; `off` (steps), the fraction not exactly
// equal, recorded for the known-fail list (the spread rule does not use it).

function unitOf(a, mode, tol, step) {
  if (mode === 'float') {
    const st = refStats(a);
    return { unit: 'tolerance', size: tol.atol + tol.rtol * Math.max(st.range, st.maxAbs) };
  }
  if (mode === 'dequantized') {
    const st = refStats(a);
    const range = st.range > 0 ? st.range : Math.max(st.maxAbs, 1e-6);
    return { unit: 'tolerance', size: Math.max(tol.rel * range, step ?? 0) };
  }
  if (mode === 'quantized') return { unit: 'step', size: 1 };
  return { unit: 'element', size: 0 };
}

/**
 * Distance of `got` from `ref` (same arguments as compareTensors):
 * {unit, beyond, max[, top1]}; null when shapes or sizes differ.
 */
export function outputDistance(ref, got, mode, tolerance = {}, options = {}) {
  const tol = { ...DEFAULT_TOLERANCE, ...tolerance };
  if (ref.shape.length !== got.shape.length || ref.shape.some((d, i) => d !== got.shape[i])) return null;
  if (ref.data.length !== got.data.length) return null;
  const a = toNumberArray(ref);
  const b = toNumberArray(got);
  if (mode === 'distribution') {
    const { d, bound } = ksStatistic(a, b, tol.ks);
    return { unit: 'ks bound', beyond: d > bound ? 1 : 0, max: d / bound };
  }
  const { unit, size } = unitOf(a, mode, tol, options.step);
  let beyond = 0;
  let off = 0;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = absDiff(a[i], b[i]);
    const units = size > 0 ? d / size : d;
    if (size > 0 ? d > size : d > 0) beyond++;
    if (d > 0) off++;
    if (units > max) max = units;
  }
  const out = { unit, beyond: a.length ? beyond / a.length : 0, max };
  if (unit === 'step') out.off = a.length ? off / a.length : 0;
  const shape = ref.shape;
  if (mode === 'dequantized' && options.classifier && shape.length >= 1 && (shape[shape.length - 1] || 0) >= 2) {
    const ra = argmaxRows(a, shape);
    const rb = argmaxRows(b, shape);
    let flips = 0;
    for (let r = 0; r < ra.length; r++) if (ra[r] !== rb[r] && a[ra[r]] - a[rb[r]] > size) flips++;
    out.top1 = flips;
  }
  return out;
}

/** What the tolerance of `mode` allows, in the units of outputDistance. */
export function toleranceDistance(mode, tolerance = {}) {
  const tol = { ...DEFAULT_TOLERANCE, ...tolerance };
  const rest = (x) => Number((1 - x).toPrecision(12)); // 1 - 0.99 = 0.01, not 0.010000000000000009
  switch (mode) {
    case 'float': return { beyond: 0, max: 1 };
    case 'exact': return { beyond: 0, max: 0 };
    case 'index': return { beyond: rest(tol.agree), max: Infinity };
    case 'quantized': return { beyond: rest(tol.within1), max: tol.maxSteps };
    case 'dequantized': return { beyond: rest(tol.frac), max: Infinity, top1: 0 };
    case 'distribution': return { beyond: 0, max: 1 };
    default: throw new Error(`unknown comparison mode ${mode}`);
  }
}

/**
 * The runtime-spread rule: every figure of the ONNX distance is at most
 * max(factor x the runtimes' figure, the tolerance's). Returns {ok, limit}.
 */
export function withinRuntimeSpread(onnx, runtimes, allowed, factor = RUNTIME_SPREAD) {
  if (!onnx || !runtimes) return { ok: false, limit: null };
  const limit = {};
  let ok = true;
  for (const k of ['beyond', 'max', 'top1']) {
    if (onnx[k] === undefined) continue;
    limit[k] = Math.max(factor * (runtimes[k] ?? 0), allowed[k] ?? 0);
    // a little slack for float rounding of the fractions
    if (onnx[k] > limit[k] * (1 + 1e-9) + 1e-12) ok = false;
  }
  return { ok, limit };
}

/** A distance as text: "99.4% exact, 0.3% beyond 1 step, max 14 steps". */
export function formatDistance(d) {
  if (!d) return 'n/a';
  const exact = d.off !== undefined ? `${pct(1 - d.off)} exact, ` : '';
  let text;
  if (d.unit === 'step') text = `${exact}${pct(d.beyond)} beyond 1 step, max ${fmt(d.max)} step${d.max === 1 ? '' : 's'}`;
  else if (d.unit === 'tolerance') text = `${pct(d.beyond)} beyond the bound, max ${fmt(d.max)} x the bound`;
  else text = `${pct(d.beyond)} differ, max |d| ${fmt(d.max)}`;
  if (d.top1 !== undefined) text += `, top-1 moved in ${d.top1} row${d.top1 === 1 ? '' : 's'}`;
  return text;
}
