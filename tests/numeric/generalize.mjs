#!/usr/bin/env node
// The generalization check: any folder of .tflite files, converted and judged
// with no expectations, no specs written for them and no known-fail list, as a
// user would meet them. One line per model (run.mjs's), then the totals per
// model class and per class of failure. Point it at models the suite has not
// seen (README.md, "The generalization check").
//
//   node tests/numeric/generalize.mjs --cli build/lite2onnx [--opset N] [--jobs N]
//        [--timeout SEC] [--report FILE] DIR_OR_FILES...
//
// A model's class comes from `lite2onnx inspect --json`: "quantized" when an
// activation (a non-constant tensor) is an 8- or 16-bit integer with
// quantization parameters, "hybrid" when only constants are (int8 weights of
// float ops), "float16" when constants are float16, else "float32". A model
// no TFLite runtime here runs is counted apart (nothing can check it): SKIP,
// and the models the converter refused that neither runtime runs either (a
// second pass with run.mjs --tflite-only asks the runtimes about those).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const USAGE = 'usage: node generalize.mjs --cli PATH_TO_lite2onnx [--opset N] [--jobs N] ' +
  '[--timeout SEC] [--report FILE] DIR_OR_FILES...';

function parseArgs(argv) {
  const o = { cli: null, passThrough: [], report: null, paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--cli') o.cli = value();
    else if (a === '--report') o.report = value();
    else if (['--opset', '--jobs', '--timeout'].includes(a)) o.passThrough.push(a, value());
    else if (a === '-h' || a === '--help') { process.stdout.write(`${USAGE}\n`); process.exit(0); }
    else if (a.startsWith('-')) fail(`unknown option ${a}`);
    else o.paths.push(a);
  }
  if (!o.cli || o.paths.length === 0) fail('--cli and at least one folder or file are required');
  return o;
}

function fail(message) {
  process.stderr.write(`generalize.mjs: ${message}\n${USAGE}\n`);
  process.exit(2);
}

// The class of a model, from the converter's own inspection of it.
export function modelClass(inspection) {
  const tensors = inspection?.tensors ?? [];
  const integer = new Set(['INT8', 'UINT8', 'INT16']);
  const quantized = (t) => integer.has(t.type) && t.quantization;
  if (tensors.some((t) => !t.constant && quantized(t))) return 'quantized';
  if (tensors.some((t) => t.constant && quantized(t))) return 'hybrid';
  if (tensors.some((t) => t.constant && t.type === 'FLOAT16')) return 'float16';
  return 'float32';
}

function classOf(cli, file) {
  try {
    const out = execFileSync(cli, ['inspect', file, '--json'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] });
    return modelClass(JSON.parse(out));
  } catch {
    return 'unreadable';
  }
}

// What kind of failure a result is, for the totals: the first unsupported op,
// the converter's error word, or the numeric judge's verdict.
export function failureClass(r) {
  if (r.outcome === 'unsupported') return `unsupported: ${r.unsupported[0] ?? 'operators'}`;
  if (r.outcome === 'convert-error') {
    const m = /^\S+ lite2onnx: (\w+):/.exec(r.message) ?? /(\w+):/.exec(r.message);
    return `convert-error: ${m ? m[1] : 'other'}`;
  }
  if (r.outcome === 'fail') return 'numeric: beyond the tolerance';
  return null;
}

// Runs run.mjs with `args`, echoing its per-model lines when `echo`, and
// returns the report it wrote to `report`.
async function runHarness(args, report, echo) {
  const child = spawn(process.execPath, [path.join(HERE, 'run.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  // run.mjs's per-model lines, as they come; its closing summary is replaced by ours.
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const l of lines) {
      if (echo && /^(PASS|FAIL|SKIP|UNSUPPORTED|CONVERT-ERROR|KNOWN-FAIL) |^ {4}note:/.test(l)) process.stdout.write(`${l}\n`);
    }
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (!fs.existsSync(report)) {
    process.stderr.write(`generalize.mjs: run.mjs ended with ${code} and wrote no report\n`);
    process.exit(2);
  }
  return JSON.parse(fs.readFileSync(report, 'utf8'));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const cli = path.resolve(o.cli);
  const report = o.report ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-general-')), 'report.json');
  // No specs of the suite's (an empty specs file): inputs only as the model declares them.
  const noSpecs = path.join(path.dirname(report), 'no-specs.json');
  fs.writeFileSync(noSpecs, '{}\n');
  const results = await runHarness([cli ? ['--cli', cli] : [], o.passThrough, '--specs', noSpecs,
    '--report', report, o.paths].flat(), report, true);
  // Refused models: does a TFLite runtime here run them?
  const refused = results.filter((r) => r.outcome === 'unsupported' || r.outcome === 'convert-error');
  const runs = new Set();
  if (refused.length) {
    const again = `${report}.tflite-only.json`;
    const asked = await runHarness([o.passThrough, '--tflite-only', '--specs', noSpecs, '--report', again,
      refused.map((r) => r.file)].flat(), again, false);
    for (const r of asked) if (r.outcome !== 'skip') runs.add(r.file);
  }
  const totals = new Map();
  const failures = new Map();
  for (const r of results) {
    const cls = classOf(cli, r.file);
    const t = totals.get(cls) ?? { models: 0, checked: 0, pass: 0, skip: 0 };
    t.models++;
    const refusedAndUnrun = (r.outcome === 'unsupported' || r.outcome === 'convert-error') && !runs.has(r.file);
    if (r.outcome === 'skip' || refusedAndUnrun) t.skip++;
    else t.checked++;
    if (r.outcome === 'pass') t.pass++;
    totals.set(cls, t);
    const f = failureClass(r);
    const key = f && (refusedAndUnrun ? `${f} (no runtime here runs it either)` : f);
    if (f) failures.set(key, [...(failures.get(key) ?? []), r.name]);
  }
  process.stdout.write('\nby class (checked = a TFLite runtime here runs it):\n');
  let all = { models: 0, checked: 0, pass: 0, skip: 0 };
  for (const [cls, t] of [...totals].sort()) {
    const pct = t.checked ? ((100 * t.pass) / t.checked).toFixed(1) : '-';
    process.stdout.write(`  ${cls.padEnd(10)} ${t.models} models, ${t.checked} checked, ${t.pass} pass (${pct}%), ${t.skip} no runtime\n`);
    all = { models: all.models + t.models, checked: all.checked + t.checked, pass: all.pass + t.pass, skip: all.skip + t.skip };
  }
  const pct = all.checked ? ((100 * all.pass) / all.checked).toFixed(1) : '-';
  process.stdout.write(`  ${'all'.padEnd(10)} ${all.models} models, ${all.checked} checked, ${all.pass} pass (${pct}%), ${all.skip} no runtime\n`);
  process.stdout.write('\nfailures by class:\n');
  for (const [f, names] of [...failures].sort((a, b) => b[1].length - a[1].length)) {
    process.stdout.write(`  ${String(names.length).padStart(3)}  ${f}: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', ...' : ''}\n`);
  }
  if (!o.report) fs.rmSync(path.dirname(report), { recursive: true, force: true });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
