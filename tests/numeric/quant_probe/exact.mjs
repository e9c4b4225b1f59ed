#!/usr/bin/env node
// Checks --quantization exact for EQUALITY with both TFLite runtimes on the
// probe's adversarial single-op models (cases/*.mjs: exhaustive input pairs,
// exact and one-ulp ties, accumulators beyond 2^24, zero points at the ends).
// Each case is converted with `--quantization exact --keep-io-layout` and run
// in ONNX Runtime at the graph optimization levels `all` and `disabled`; its
// first output must equal LiteRT.js's on every element, and tfjs-tflite's
// wherever the two runtimes agree (where they differ the exact form follows
// LiteRT.js, docs/quantization-arithmetic.md §2, and the figure is printed).
// A case the converter refuses (exit code 4) is counted apart; the refusal
// must list the case's op (never a silent approximation).
//
// With --qdq (or --auto) it measures that mode instead: each case converted
// with --quantization qdq (auto) and run at ORT level `all`, and per op how
// many elements equal LiteRT.js's and how many steps the worst is off (a
// report: docs/quantization-arithmetic.md's "How far the QDQ form is").
// --auto also fails (exit 1) where auto promises TFLite's arithmetic: a case
// of an op whose 8-bit nodes take the integer form (`lite2onnx ops --json`:
// in_auto "integer"), or an int16 case, that differs anywhere.
//
//   node tests/numeric/quant_probe/exact.mjs --cli build/lite2onnx [FAMILY...]
//        [--filter REGEX] [--opset N] [--qdq | --auto]
//
// Prints one line per case and totals; exit code 1 when a converted case
// differs or the conversion fails otherwise (exact mode only).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { runTfjs, runLite, compile } from './lib/runtimes.mjs';
import { openOnnx } from '../lib/ort_runner.mjs';

// copies: exact-mode cases only (no candidate arithmetics for run.mjs's table).
const FAMILIES = ['elementwise', 'linear', 'pool', 'unary', 'movement', 'hybrid', 'recurrent', 'copies'];
const LEVELS = ['all', 'disabled'];
const USAGE = `usage: exact.mjs --cli LITE2ONNX [${FAMILIES.join('|')}...] [--filter REGEX] [--opset N] [--qdq | --auto]`;

function usage(message) {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

// measure: null (check exact mode), or the mode measured ('qdq', 'auto').
const opts = { cli: null, families: [], filter: null, opset: 13, measure: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
  if (a === '--cli') opts.cli = path.resolve(value());
  else if (a === '--filter') opts.filter = new RegExp(value());
  else if (a === '--opset') opts.opset = Number(value());
  else if (a === '--qdq') opts.measure = 'qdq';
  else if (a === '--auto') opts.measure = 'auto';
  else if (a === '-h' || a === '--help') { process.stdout.write(`${USAGE}\n`); process.exit(0); }
  else if (FAMILIES.includes(a)) opts.families.push(a);
  else usage(`unknown argument ${a}`);
}
if (!opts.cli) usage('--cli is required');

// Converts in exact mode: {onnx} or {refused: [ops], text} or {error}.
function convert(tflite, dir) {
  const out = path.join(dir, 'model.onnx');
  const mode = ['--quantization', opts.measure ?? 'exact'];
  const r = spawnSync(opts.cli, ['convert', tflite, '-o', out, '--opset', String(opts.opset), '--json',
    ...mode, '--keep-io-layout'], { encoding: 'utf8' });
  if (r.status === 0) return { onnx: fs.readFileSync(out) };
  let json = null;
  try { json = JSON.parse(r.stdout); } catch { /* not JSON */ }
  if (r.status === 4 && json?.unsupported?.length)
    return { refused: json.unsupported.map((u) => u.op), text: json.unsupported.map((u) => `${u.op}: ${u.reason}`).join('; ') };
  if (r.status === 4) return { refused: [], text: json?.error?.message ?? r.stderr.trim() };
  return { error: `exit ${r.status}: ${(r.stdout + r.stderr).trim().slice(0, 300)}` };
}

function countEqual(a, b) {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i]))) n++;
  return n;
}

// --qdq: per op, the elements equal to the reference and the worst distance in steps.
const qdqByOp = new Map();
async function measureQdq(c, onnx, ref, k, label) {
  const session = await openOnnx(onnx, { threads: 1, optimization: 'all' });
  const feeds = new Map(session.inputs.map((info, i) => [info.name, c.inputs[i]]));
  const y = (await session.run(feeds)).get(session.outputs[k].name).data;
  await session.release();
  let equal = 0;
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(Number(y[i]) - Number(ref[i]));
    if (d === 0) equal++;
    worst = Math.max(worst, d);
  }
  const op = c.op.split(' ')[0];
  const t = qdqByOp.get(op) ?? { cases: 0, elements: 0, equal: 0, worst: 0, exactCases: 0 };
  t.cases++;
  t.elements += ref.length;
  t.equal += equal;
  t.worst = Math.max(t.worst, worst);
  if (equal === ref.length) t.exactCases++;
  qdqByOp.set(op, t);
  const int16 = /(^|_)(i16|int16|i16x8)(_|$)/.test(c.name);
  if (opts.measure === 'auto' && equal < ref.length && (int16 || integerInAuto.has(op)))
    failures.push(`${c.name}: ${equal}/${ref.length} equal in auto, which computes ${op}${int16 ? ' (int16)' : ''} as TFLite does`);
  totals.elements += ref.length;
  if (equal === ref.length) totals.exact++;
  console.log(`QDQ       ${label} ${equal}/${ref.length} equal to LiteRT.js, worst ${worst} step${worst === 1 ? '' : 's'}`);
}

function printQdqTable() {
  console.log('\n| op | cases (all elements equal) | elements equal | worst |');
  console.log('| --- | --- | --- | --- |');
  for (const [op, t] of [...qdqByOp].sort((a, b) => a[0].localeCompare(b[0]))) {
    const pct = ((100 * t.equal) / t.elements).toFixed(t.equal === t.elements ? 0 : 2);
    console.log(`| ${op} | ${t.cases} (${t.exactCases}) | ${pct}% of ${t.elements} | ${t.worst} step${t.worst === 1 ? '' : 's'} |`);
  }
}

// The ops whose 8-bit nodes take their integer form in auto (the support matrix).
const integerInAuto = new Set();
if (opts.measure === 'auto') {
  const r = spawnSync(opts.cli, ['ops', '--json'], { encoding: 'utf8' });
  for (const o of JSON.parse(r.stdout)) if (o.in_auto === 'integer') integerInAuto.add(o.op);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-exact-'));
const totals = { cases: 0, exact: 0, refused: 0, failed: 0, skipped: 0, elements: 0 };
const refusedOps = new Map();
const failures = [];
try {
  for (const family of opts.families.length ? opts.families : FAMILIES) {
    const mod = await import(`./cases/${family}.mjs`);
    let list = mod.allCases ? mod.allCases() : mod.cases();
    if (opts.filter) list = list.filter((c) => opts.filter.test(c.name));
    if (!list.length) continue;
    console.log(`== ${family} (${list.length} cases)`);
    for (const c of list) {
      totals.cases++;
      const bytes = compile(c.model.toJSON(), c.name, dir);
      const tflite = path.join(dir, `${c.name}.tflite`);
      const k = c.outputIndex ?? 0;
      let lite = null;
      let tf = null;
      try { lite = (await runLite(bytes, c.inputs)).outputs[k].data; } catch { /* LiteRT.js refuses it */ }
      try { tf = (await runTfjs(bytes, c.inputs)).outputs[k].data; } catch { /* tfjs-tflite refuses it */ }
      const label = c.name.padEnd(40);
      if (!lite && !tf) { totals.skipped++; console.log(`SKIP      ${label} no runtime runs it`); continue; }
      const conv = convert(tflite, dir);
      if (conv.refused) {
        totals.refused++;
        for (const op of conv.refused) refusedOps.set(op, (refusedOps.get(op) ?? 0) + 1);
        console.log(`REFUSED   ${label} ${conv.text.slice(0, 140)}`);
        // An exact-mode refusal names the case's op; a refusal listing no op is
        // one every mode makes (the model itself is not convertible).
        const op = c.op.split(' ')[0];  // 'FULLY_CONNECTED (hybrid)'
        if (conv.refused.length && !conv.refused.includes(op)) failures.push(`${c.name}: refused naming ${conv.refused.join(', ')}, not ${op}`);
        continue;
      }
      if (conv.error) { totals.failed++; failures.push(`${c.name}: ${conv.error}`); console.log(`ERROR     ${label} ${conv.error}`); continue; }
      const agree = lite && tf ? countEqual(lite, tf) : null;
      const ref = lite ?? tf;
      if (opts.measure) {
        await measureQdq(c, conv.onnx, ref, k, label);
        continue;
      }
      const parts = [];
      let ok = true;
      for (const level of LEVELS) {
        const session = await openOnnx(conv.onnx, { threads: 1, optimization: level });
        const feeds = new Map(session.inputs.map((info, i) => [info.name, c.inputs[i]]));
        const y = (await session.run(feeds)).get(session.outputs[k].name).data;
        await session.release();
        const vsLite = lite ? countEqual(y, lite) : null;
        const vsTf = tf ? countEqual(y, tf) : null;
        // Equal to LiteRT.js everywhere, and to tfjs-tflite wherever it agrees with LiteRT.js.
        const good = (vsLite === null || vsLite === ref.length) &&
          (vsTf === null || vsTf === tf.length || (agree !== null && agree < ref.length && vsTf >= agree));
        if (!good) ok = false;
        parts.push(`${level}: L ${vsLite ?? '-'}/${ref.length} T ${vsTf ?? '-'}/${ref.length}`);
      }
      if (agree !== null && agree < ref.length) parts.push(`(runtimes agree on ${agree})`);
      if (ok) { totals.exact++; totals.elements += ref.length; } else { totals.failed++; failures.push(`${c.name}: ${parts.join(', ')}`); }
      console.log(`${ok ? 'EXACT    ' : 'DIFFERS  '} ${label} ${parts.join(', ')}`);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
if (opts.measure) {
  printQdqTable();
  if (failures.length) {
    console.log(`failures (${failures.length}):`);
    for (const f of failures) console.log(`  ${f}`);
  }
  console.log(`\n${totals.cases} cases: ${totals.exact} equal on every element in the ${opts.measure} form, ${totals.refused} refused, ` +
    `${totals.skipped} skipped; opset ${opts.opset}, ORT level all`);
  process.exit(failures.length ? 1 : 0);
}
console.log(`\n${totals.cases} cases: ${totals.exact} exact (${totals.elements} elements, ORT levels ${LEVELS.join(' and ')}), ` +
  `${totals.refused} refused, ${totals.failed} failed, ${totals.skipped} skipped; opset ${opts.opset}`);
if (refusedOps.size) console.log(`refused ops: ${[...refusedOps].map(([op, n]) => `${op} (${n})`).join(', ')}`);
if (failures.length) {
  console.log(`failures (${failures.length}):`);
  for (const f of failures) console.log(`  ${f}`);
  process.exit(1);
}
