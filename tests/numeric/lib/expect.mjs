// Expectations and the measured known-fail list (see README.md):
//   expectations  {"model": "pass" | {"outcome": "pass", "transposes": {"opset13": 2}}}
//   known-fail    {"model": {"reason": "...", "figures": {
//                     "opset13": {"reference": "litert",
//                                 "random": {"output": {"onnx": {...}, "runtimes": {...}}},
//                                 "smooth": {...}, "self": {...}},
//                     "opset17": "opset13"}}}      (a string: the same figures as that variant)
// judgeResult() turns one model's result into its reported line; it is pure,
// so the self-tests drive it directly.

export const EXPECTABLE = new Set(['pass', 'unsupported', 'skip', 'fail']);
export const LABEL = { pass: 'PASS', fail: 'FAIL', unsupported: 'UNSUPPORTED', skip: 'SKIP', 'convert-error': 'CONVERT-ERROR' };

/** {outcome, transposes?, object} from an expectations value; throws on a bad one. */
export function normalizeExpectation(value) {
  if (typeof value === 'string') {
    if (!EXPECTABLE.has(value)) throw new Error(`expects "${value}"; use pass, unsupported, skip or fail`);
    return { outcome: value, object: false };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('must be an outcome or {"outcome": ..., "transposes": {...}}');
  if (!EXPECTABLE.has(value.outcome)) throw new Error(`expects "${value.outcome}"; use pass, unsupported, skip or fail`);
  const t = value.transposes;
  if (t !== undefined && (!t || typeof t !== 'object' || Object.values(t).some((n) => !Number.isInteger(n) || n < 0))) {
    throw new Error('"transposes" must be {"variant": count, ...} with counts >= 0');
  }
  // "outcomes": {"variant": outcome, ...} overrides "outcome" in those
  // variants (a known failure that shows on one variant's inputs only).
  const o = value.outcomes;
  if (o !== undefined && (!o || typeof o !== 'object' || Object.values(o).some((v) => !EXPECTABLE.has(v)))) {
    throw new Error('"outcomes" must be {"variant": outcome, ...} with pass, unsupported, skip or fail');
  }
  return { outcome: value.outcome, transposes: t, object: true, ...(o ? { outcomes: o } : {}) };
}

/** A normalized expectation as it applies to one variant (its "outcomes" entry, if any). */
export function expectationFor(exp, variant) {
  return exp.outcomes?.[variant] ? { ...exp, outcome: exp.outcomes[variant] } : exp;
}

/** The name of a run's conversion variant: "opset13", "opset13+keep-io-layout", ... */
export function variantName(opset, convertArgs = []) {
  return [`opset${opset}`, ...convertArgs.map((a) => String(a).replace(/^-+/, ''))].join('+');
}

// ---- figures ---------------------------------------------------------------

/** x to 3 significant digits (integers up to 999 stay exact). */
export function sig3(x) {
  if (typeof x !== 'number' || !Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(3));
}

/**
 * A result's measured figures as they are recorded: numbers to 3 significant
 * digits, infinities as the string "Infinity", nulls kept.
 */
export function roundFigures(v) {
  if (typeof v === 'number') return Number.isFinite(v) ? sig3(v) : String(v);
  if (Array.isArray(v)) return v.map(roundFigures);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundFigures(x)]));
  return v;
}

/** The figures a known-fail entry records for a variant (aliases resolved), or null. */
export function entryFigures(entry, variant) {
  let f = entry?.figures?.[variant];
  for (let hops = 0; typeof f === 'string' && hops < 8; hops++) f = entry.figures[f];
  return f && typeof f === 'object' ? f : null;
}

/**
 * The entry after measuring `figures` (rounded) for `variant`: they are
 * recorded as an alias of a variant with the same figures, else in full;
 * aliases of the variant whose figures changed keep the old figures.
 */
export function updateKnownFailEntry(entry, variant, figures, reason = 'TODO: why it fails') {
  const out = { reason: entry?.reason ?? reason };
  // note, reference_differs, slice_of, ...: kept as written
  for (const [k, v] of Object.entries(entry ?? {})) if (k !== 'reason' && k !== 'figures') out[k] = v;
  const all = { ...(entry?.figures ?? {}) };
  const old = entryFigures(entry, variant);
  const changed = !old || !compareFigures(old, figures).same;
  if (changed && typeof all[variant] === 'object') {
    // variants that named this one keep what they recorded
    for (const [v, f] of Object.entries(all)) if (f === variant) all[v] = all[variant];
  }
  delete all[variant];
  const same = Object.keys(all).find((v) => typeof all[v] === 'object' && compareFigures(all[v], figures).same);
  all[variant] = same ?? figures;
  out.figures = Object.fromEntries(Object.keys(all).sort().map((v) => [v, all[v]]));
  return out;
}

/** The entry without the figures of `variant` (null when none are left). */
export function removeKnownFailVariant(entry, variant) {
  const all = { ...(entry?.figures ?? {}) };
  if (!(variant in all)) return entry;
  const own = all[variant];
  delete all[variant];
  if (typeof own === 'object') {
    // the first alias of the removed variant inherits its figures, the others name it
    const aliases = Object.keys(all).filter((v) => all[v] === variant);
    if (aliases.length) {
      all[aliases[0]] = own;
      for (const v of aliases.slice(1)) all[v] = aliases[0];
    }
  }
  return Object.keys(all).length ? { ...entry, figures: all } : null;
}

const num = (v) => (v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v);

/**
 * Compares recorded figures with measured ones (both rounded). Returns
 * {same, changes, better, worse, referenceChanged}: each change is
 * {path, recorded, measured, onnx, direction}; ONNX figures are distances,
 * so lower is better; any other figure is the TFLite runtimes' own.
 */
export function compareFigures(recorded, measured) {
  const changes = [];
  const walk = (a, b, at) => {
    const isObj = (x) => x && typeof x === 'object';
    if (isObj(a) && isObj(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...at, k]);
      return;
    }
    if (num(a) === num(b)) return;
    const onnx = at.includes('onnx');
    let direction = 'changed';
    if (onnx && typeof num(a) === 'number' && typeof num(b) === 'number') direction = num(b) < num(a) ? 'better' : 'worse';
    changes.push({ path: at.join('.'), recorded: a, measured: b, onnx, direction });
  };
  walk(recorded, measured, []);
  const onnxChanges = changes.filter((c) => c.onnx);
  return {
    same: changes.length === 0,
    changes,
    better: onnxChanges.length > 0 && onnxChanges.every((c) => c.direction === 'better'),
    worse: onnxChanges.some((c) => c.direction !== 'better'),
    referenceChanged: changes.some((c) => !c.onnx),
  };
}

function describeChanges(changes, max = 6) {
  const text = changes.slice(0, max).map((c) => `${c.path} ${JSON.stringify(c.recorded ?? null)} -> ${JSON.stringify(c.measured ?? null)}` +
    (c.onnx && c.direction !== 'changed' ? ` (${c.direction})` : ''));
  return text.join(', ') + (changes.length > max ? `, and ${changes.length - max} more` : '');
}

// ---- one model's verdict ---------------------------------------------------

/**
 * Decides how one result is reported.
 *   r          the pipeline's result {outcome, message, notes, transposes?, measured?, sensitivity?}
 *   exp        normalized expectation or null; expectGiven: an expectations file is in use
 *   known      the model's known-fail entry or null; knownFile: its file (null: none given)
 *   variant    the run's variant name; ci: CI=true; noSkip: SKIP/UNSUPPORTED fail
 * Returns {status: passed|failed|skipped|known, label, message, notes, hints}; hints are
 * {kind, text} for the closing summary (kinds: expect, new, transposes, known).
 */
export function judgeResult({ name, r, exp = null, expectGiven = false, expectFile = 'the expectations file',
  known = null, knownFile = null, variant = 'opset13', ci = false, noSkip = false }) {
  let label = LABEL[r.outcome] ?? 'FAIL';
  let message = r.message ?? '';
  const notes = [...(r.notes ?? [])];
  const hints = [];
  let status;
  if (r.outcome === 'pass') status = 'passed';
  else if (r.outcome === 'unsupported' || r.outcome === 'skip') status = 'skipped';
  else status = 'failed';
  const fail = (text) => {
    status = 'failed';
    label = 'FAIL';
    message = text;
  };

  if (noSkip && status === 'skipped') fail(`${LABEL[r.outcome]} counts as a failure here (--no-skip)${message ? `: ${message}` : ''}`);

  if (expectGiven && !exp) {
    hints.push({ kind: 'new', text: `${name}: ${r.outcome}${r.transposes !== undefined ? `, ${r.transposes} Transpose` : ''}` });
    if (ci) fail(`not in ${expectFile}: CI=true requires every model's outcome pinned${message ? ` (${LABEL[r.outcome] ?? r.outcome}: ${message})` : ''}`);
    else notes.push('not in the expectations file');
  } else if (exp && exp.outcome === 'fail') {
    if (r.outcome !== 'fail') {
      fail(`expected a known failure, got ${LABEL[r.outcome] ?? r.outcome}${r.message ? ` (${r.message})` : ''}`);
      hints.push({ kind: 'expect', text: `${name}: fail -> ${r.outcome}${known ? `; remove it from ${knownFile}` : ''}` });
    } else if (!known) {
      fail(`${r.message}; expected "fail", but it is not on the known-fail list${knownFile ? ` ${knownFile}` : ' (no --known-fail file given)'}`);
      if (r.measured) hints.push({ kind: 'known', text: `${name}: not on the known-fail list; record its figures with --write-known-fail` });
    } else if (r.sensitivity && !(r.sensitivity.broken > 0) && !known.reference_differs) {
      // One TFLite runtime, and it is stable under one-step input changes and
      // ulp-sized scale changes: the difference is the converter's (unless
      // the entry says, with its measurement, that the one runtime computes
      // what an older TFLite kernel did: reference_differs).
      fail(`${r.message}; expected "fail" is not justified: TFLite itself stays within the tolerance when one input ` +
        `element moves by one step and when its quantization scales move by an ulp (${r.sensitivity.of} positions, ` +
        `${r.sensitivity.jitterOf} scale factors tried)`);
    } else if (!r.measured) {
      fail(`${r.message}; no distances were measured (a crash or a timeout), so it cannot be a known failure`);
    } else if (!entryFigures(known, variant)) {
      fail(`${r.message}; ${knownFile} records no figures for ${variant}`);
      hints.push({ kind: 'known', text: `${name}: no figures for ${variant}; record them with --write-known-fail` });
    } else {
      const c = compareFigures(roundFigures(entryFigures(known, variant)), roundFigures(r.measured));
      if (c.same) {
        status = 'known';
        label = 'KNOWN-FAIL';
        message = `${r.message} (figures as recorded in ${knownFile})`;
      } else {
        let why;
        if (c.better && !c.referenceChanged) why = 'ONNX is closer to TFLite than recorded: update the entry';
        else if (c.referenceChanged) why = 'the TFLite runtimes\' own figures changed (inputs or runtimes changed): re-measure';
        else why = 'ONNX is further from TFLite than recorded';
        fail(`${r.message}; measured figures differ from ${knownFile} (${why}): ${describeChanges(c.changes)}`);
        hints.push({ kind: 'known', text: `${name}: ${why}; ${describeChanges(c.changes, 3)}` });
      }
    }
  } else if (exp && exp.outcome !== r.outcome) {
    if (status !== 'failed') {
      fail(`expected ${exp.outcome}, got ${LABEL[r.outcome]}${r.message ? ` (${r.message})` : ''}`);
      hints.push({ kind: 'expect', text: `${name}: ${exp.outcome} -> ${r.outcome}` });
    } else {
      notes.push(`expected ${exp.outcome}`);
      if (r.measured) {
        hints.push({ kind: 'known', text: `${name}: fails; if it cannot be fixed yet, expect "fail" and record its figures with --write-known-fail` });
      }
    }
  }

  // The ONNX Transpose count, pinned per variant by object entries.
  if (exp && exp.object && r.transposes !== undefined) {
    const rec = exp.transposes?.[variant];
    if (rec === undefined) {
      hints.push({ kind: 'transposes', text: `${name}: no recorded Transpose count for ${variant} (now ${r.transposes})` });
      if (ci && status !== 'failed') fail(`no Transpose count recorded for ${variant} in ${expectFile} (now ${r.transposes}); CI=true requires it`);
      else notes.push(`no Transpose count recorded for ${variant}`);
    } else if (r.transposes > rec) {
      hints.push({ kind: 'transposes', text: `${name}: ${rec} -> ${r.transposes} Transpose nodes (${variant}): went up` });
      const text = `ONNX Transpose nodes went up: ${rec} -> ${r.transposes} (${variant})`;
      if (status === 'failed') message = `${message}; ${text}`;
      else fail(`${text}${r.outcome === 'pass' ? '; numerically it passes' : ''}`);
    } else if (r.transposes < rec) {
      hints.push({ kind: 'transposes', text: `${name}: ${rec} -> ${r.transposes} Transpose nodes (${variant}): lower the recorded count` });
      notes.push(`ONNX Transpose nodes went down: ${rec} -> ${r.transposes} (${variant}); lower the recorded count`);
    }
  }
  return { status, label, message, notes, hints };
}

// ---- writing the files -----------------------------------------------------

// JSON on one line, with a space after each comma and colon.
function oneLine(v) {
  if (!v || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(oneLine).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${oneLine(x)}`).join(', ')}}`;
}

// JSON with one line per leaf object (an object or array of primitives only).
export function formatJson(value, indent = '') {
  const leaf = (v) => !v || typeof v !== 'object' || Object.values(v).every((x) => x === null || typeof x !== 'object');
  if (leaf(value)) return oneLine(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + formatJson(v, inner)).join(',\n')}\n${indent}]`;
  return `{\n${Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${formatJson(v, inner)}`).join(',\n')}\n${indent}}`;
}

/** An expectations file: one model per line, sorted. */
export function formatExpectations(entries) {
  const lines = Object.keys(entries).sort().map((k) => `  ${JSON.stringify(k)}: ${oneLine(entries[k])}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}
