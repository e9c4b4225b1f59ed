#!/usr/bin/env node
// lite2onnx numeric test harness: converts .tflite models with the lite2onnx
// CLI, runs both sides (TFLite reference in LiteRT.js / tfjs-tflite, ONNX in
// onnxruntime-node) on seeded random inputs and compares the outputs.
// See README.md in this directory.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  EXPECTABLE, normalizeExpectation, expectationFor, variantName, judgeResult, roundFigures, entryFigures, updateKnownFailEntry,
  removeKnownFailVariant, formatJson, formatExpectations,
} from './lib/expect.mjs';
import { formatDistance } from './lib/compare.mjs';
import { readSignatureKeys } from './lib/tflite_model.mjs';
import { matchingKeys, specFor } from './lib/specs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const USAGE = `usage: node run.mjs --cli PATH_TO_lite2onnx [options] PATHS...

PATHS are .tflite files or directories (searched recursively for *.tflite).

options:
  --cli FILE            the lite2onnx executable (required unless --tflite-only)
  --opset N             ONNX opset passed to the converter (default 13)
  --jobs N              worker processes (default: min(2, CPUs); 0 = run in this process)
  --out-dir DIR         keep converted .onnx files here (default: a temp dir, removed)
  --specs FILE          per-model specs (repeatable, merged; default: specs.json beside run.mjs)
  --smooth-specs FILE   input settings of the smooth (image-like) input set
                        (default: specs_smooth.json beside run.mjs)
  --expect FILE         expected outcomes {"name": "pass"|"unsupported"|"skip"|"fail"} or
                        {"name": {"outcome": ..., "transposes": {"VARIANT": N}}}; with CI=true
                        a model missing from it fails
  --known-fail FILE     the measured known-fail list: an expected "fail" is accepted only while
                        its measured distances are as recorded there (see README.md)
  --write-expect FILE   write the observed outcomes and Transpose counts to FILE (merged)
  --write-known-fail FILE  write the figures of the models that failed to FILE (merged; models
                        that no longer fail are removed)
  --variant NAME        the conversion variant the Transpose counts are pinned for
                        (default: opsetN plus the --convert-arg values, e.g. opset13+keep-io-layout)
  --no-skip             SKIP and UNSUPPORTED count as failures (per-op slices)
  --smooth              compare on the smooth (image-like) input set instead of the random one
  --second-opinion      also run tfjs-tflite and report where it disagrees with LiteRT.js
  --tflite-only         no converter/ONNX: compare LiteRT.js with tfjs-tflite only
  --filter REGEX        only models whose name matches REGEX
  --convert-arg ARG     pass ARG to every conversion (repeatable), e.g. --convert-arg=--keep-io-layout
  --timeout SEC         per-model limit in CPU seconds of the worker and its children
                        (default 120; wall time past 10x it ends a model too: a hang)
  --report FILE         also write every model's result as JSON to FILE: an array of
                        {"name", "file", "label", "outcome", "message", "unsupported": [op names]}
  --verbose             print runtime logs of the workers
  -h, --help            this text`;

function usageError(msg) {
  process.stderr.write(`run.mjs: ${msg}\n\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    cli: null, opset: 13, jobs: Math.max(1, Math.min(2, os.cpus().length)), outDir: null,
    specs: [], smoothSpecs: null, expect: null, knownFail: null, writeExpect: null, writeKnownFail: null, variant: null,
    noSkip: false, smooth: false, secondOpinion: false, tfliteOnly: false, filter: null, timeout: 120, verbose: false,
    report: null,
    paths: [], convertArgs: [],
  };
  const takesValue = new Set(['--cli', '--opset', '--jobs', '--out-dir', '--specs', '--smooth-specs', '--expect', '--known-fail',
    '--write-expect', '--write-known-fail', '--variant', '--filter', '--timeout', '--convert-arg', '--report']);
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let value;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { value = a.slice(eq + 1); a = a.slice(0, eq); }
    if (takesValue.has(a) && value === undefined) {
      if (i + 1 >= argv.length) usageError(`${a} needs a value`);
      value = argv[++i];
    }
    switch (a) {
      case '--cli': o.cli = value; break;
      case '--opset': o.opset = Number(value); if (!Number.isInteger(o.opset) || o.opset < 1) usageError('--opset must be a positive integer'); break;
      case '--jobs': o.jobs = Number(value); if (!Number.isInteger(o.jobs) || o.jobs < 0) usageError('--jobs must be an integer >= 0'); break;
      case '--out-dir': o.outDir = value; break;
      case '--specs': o.specs.push(value); break;
      case '--convert-arg': o.convertArgs.push(value); break;
      case '--smooth-specs': o.smoothSpecs = value; break;
      case '--expect': o.expect = value; break;
      case '--known-fail': o.knownFail = value; break;
      case '--write-expect': o.writeExpect = value; break;
      case '--write-known-fail': o.writeKnownFail = value; break;
      case '--variant': o.variant = value; break;
      case '--no-skip': o.noSkip = true; break;
      case '--smooth': o.smooth = true; break;
      case '--filter':
        try { o.filter = new RegExp(value); } catch (e) { usageError(`bad --filter: ${e.message}`); }
        break;
      case '--timeout': o.timeout = Number(value); if (!(o.timeout > 0)) usageError('--timeout must be > 0'); break;
      case '--second-opinion': o.secondOpinion = true; break;
      case '--tflite-only': o.tfliteOnly = true; break;
      case '--verbose': o.verbose = true; break;
      case '--report': o.report = value; break;
      case '-h': case '--help': process.stdout.write(`${USAGE}\n`); process.exit(0); break;
      default:
        if (a.startsWith('-') && a !== '-') usageError(`unknown option ${a}`);
        o.paths.push(argv[i]);
    }
  }
  if (!o.tfliteOnly && !o.cli) usageError('--cli is required');
  if (o.paths.length === 0) usageError('no model paths given');
  return o;
}

function readJson(file, what) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    process.stderr.write(`run.mjs: cannot read ${what} ${file}: ${e.message}\n`);
    process.exit(2);
  }
  return null;
}

// ---- model discovery and naming -------------------------------------------

function walk(dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    usageError(`cannot read ${dir}: ${e.message}`);
  }
  for (const ent of entries) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) walk(p, out);
    else if ((ent.isFile() || ent.isSymbolicLink()) && /\.tflite$/i.test(ent.name)) out.push(p);
  }
}

const toSlash = (p) => p.split(path.sep).join('/');

// Display name: path below the directory argument, prefixed with that
// directory's name when the model sits directly in it; for a file argument,
// "<parent dir>/<file>". So /models/tflite2onnx and /models both name a model
// "tflite2onnx/conv.float32.tflite".
function collectModels(paths) {
  const models = [];
  const seen = new Set();
  for (const p of paths) {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      usageError(`no such file or directory: ${p}`);
    }
    const files = [];
    if (st.isDirectory()) walk(p, files);
    else files.push(p);
    for (const f of files.sort()) {
      const abs = path.resolve(f);
      let real = abs;
      try { real = fs.realpathSync(abs); } catch { /* keep abs */ }
      if (seen.has(real)) continue;
      seen.add(real);
      let name;
      if (st.isDirectory()) {
        name = toSlash(path.relative(path.resolve(p), abs));
        if (!name.includes('/')) name = `${path.basename(path.resolve(p))}/${name}`;
      } else {
        name = `${path.basename(path.dirname(abs))}/${path.basename(abs)}`;
      }
      models.push({ file: abs, name });
    }
  }
  return models;
}

// A model with several SignatureDefs is checked once per signature: under its
// own name with the converter's defaults (its first signature), and as
// NAME#KEY with --signature KEY for each other one.
function expandSignatures(models) {
  const out = [];
  for (const m of models) {
    out.push(m);
    let keys = [];
    try {
      keys = [...new Set(readSignatureKeys(fs.readFileSync(m.file)))];
    } catch { /* not readable: the model's own check says why */ }
    for (const key of keys.slice(1)) out.push({ ...m, name: `${m.name}#${key}`, signature: key });
  }
  return out;
}

// The most specific entry of a table (expectations, known-fail list) for a model.
function entryFor(table, model) {
  const keys = matchingKeys(table, model);
  return keys.length ? { key: keys[keys.length - 1], value: table[keys[keys.length - 1]] } : null;
}

// ---- workers ---------------------------------------------------------------

// CPU seconds used so far by process `pid` and the processes below it (the
// converter, ONNX Runtime's child): its own time, its waited children's, and
// the live descendants' read from /proc. 0 where /proc cannot tell.
export function treeCpuSeconds(pid, depth = 0) {
  let ticks = 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized name: utime is the 14th field, cstime the 17th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    if (depth < 4) {
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const kids = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        for (const kid of kids ? kids.split(' ') : []) ticks += 100 * treeCpuSeconds(Number(kid), depth + 1);
      }
    }
  } catch {
    // gone meanwhile, or no /proc
  }
  return ticks / 100;  // USER_HZ is 100 on Linux
}

// A model's time limit is CPU time (the worker's and its children's), which a
// loaded machine does not change; wall time past kWallGuard x the limit ends
// it too (a deadlock uses no CPU).
const kWallGuard = 10;

class WorkerPool {
  constructor(size, { timeoutMs, verbose }) {
    this.size = size;
    this.timeoutMs = timeoutMs;
    this.verbose = verbose;
    this.workers = new Set();
  }

  spawn() {
    const child = fork(path.join(HERE, 'lib', 'worker.mjs'), [], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: [],
    });
    const w = { child, busy: null, tail: [], ready: false };
    const onData = (chunk) => {
      const text = chunk.toString();
      if (this.verbose) process.stderr.write(text.replace(/^(?=.)/gm, `  [worker ${child.pid}] `));
      for (const line of text.split('\n')) if (line.trim()) w.tail.push(line.trim());
      if (w.tail.length > 20) w.tail.splice(0, w.tail.length - 20);
    };
    child.on('error', (e) => { w.tail.push(`worker error: ${e.message}`); });
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    this.workers.add(w);
    return w;
  }

  // Runs all tasks; calls onResult(index, result) as each finishes.
  run(tasks, onResult) {
    return new Promise((resolve) => {
      let next = 0;
      let done = 0;
      // A Wasm runtime that traps may have been corrupted by an earlier model
      // in the same worker (LiteRT.js once read out of bounds on a ONE_HOT
      // model in 1 of 8 runs): the model runs once more on a fresh worker,
      // and that run's result counts, with the first run's message noted.
      // (Not on a used one: ocr_dr traps LiteRT.js at load there.)
      const again = [];
      const firstRun = new Map();
      const pending = () => next < tasks.length || again.length > 0;
      // The model again on a worker that has run nothing yet: each trap
      // retires its worker, whose replacement takes it.
      const take = (w) => (w.fresh && again.length > 0 ? again.shift() : next < tasks.length ? next++ : null);
      if (tasks.length === 0) { resolve(); return; }
      const finish = (w, index, result) => {
        clearTimeout(w.timer);
        w.busy = null;
        onResult(index, result);
        done++;
        if (done === tasks.length) {
          for (const x of this.workers) if (x.child.connected) x.child.disconnect();
          resolve();
        }
      };
      const dispatch = (w) => {
        const index = take(w);
        if (index === null) {
          if (w.child.connected) w.child.disconnect();
          return;
        }
        w.fresh = false;
        w.busy = index;
        w.tail = [];
        const cpuAtStart = treeCpuSeconds(w.child.pid);
        const wallAtStart = Date.now();
        const limit = this.timeoutMs / 1000;
        const check = () => {
          const cpu = treeCpuSeconds(w.child.pid) - cpuAtStart;
          const wall = (Date.now() - wallAtStart) / 1000;
          if (cpu <= limit && wall <= kWallGuard * limit) {
            w.timer = setTimeout(check, 1000);
            return;
          }
          const message = cpu > limit
            ? `timeout: more than ${limit} s of CPU (${wall.toFixed(0)} s of wall time)`
            : `timeout: ${wall.toFixed(0)} s of wall time with ${cpu.toFixed(1)} s of CPU (a hang?)`;
          w.timedOut = true;
          w.child.kill('SIGKILL');
          finish(w, index, { name: tasks[index].name, outcome: 'fail', message, notes: [] });
        };
        w.timer = setTimeout(check, 1000);
        w.child.send({ type: 'task', id: index, task: tasks[index] });
      };
      let failedStarts = 0;
      const start = () => {
        const w = this.spawn();
        w.fresh = true;
        w.child.on('message', (msg) => {
          if (msg && msg.type === 'ready') { w.ready = true; failedStarts = 0; dispatch(w); return; }
          if (msg && msg.type === 'result' && w.busy === msg.id) {
            const result = msg.result;
            if (msg.retire && !firstRun.has(msg.id)) {
              // It exits; 'exit' starts a replacement, which takes this model again.
              clearTimeout(w.timer);
              w.busy = null;
              firstRun.set(msg.id, result);
              again.push(msg.id);
              return;
            }
            const first = firstRun.get(msg.id);
            if (first) result.notes = [...(result.notes ?? []), `ran again on a fresh runtime after a trap: ${first.message ?? first.outcome}`];
            finish(w, msg.id, result);
            if (!msg.retire) dispatch(w); // else it exits and 'exit' starts a replacement
          }
        });
        w.child.on('exit', (code, signal) => {
          this.workers.delete(w);
          if (w.busy !== null && !w.timedOut) {
            const useful = w.tail.filter((l) => !/^(INFO|WARNING)/.test(l) && !/^Node\.js v\d/.test(l));
            const last = useful.filter((l) => /error|abort|fatal/i.test(l)).slice(-1)[0] ?? useful.slice(-1)[0] ?? '';
            finish(w, w.busy, {
              name: tasks[w.busy].name, outcome: 'fail', notes: [],
              message: `runtime crashed (${signal ? `signal ${signal}` : `exit code ${code}`})${last ? `: ${last}` : ''}`,
            });
          }
          if (!w.ready && ++failedStarts >= 3) {
            // Workers die before they can take work: report the rest instead of looping.
            const why = w.tail.filter((l) => /error/i.test(l)).slice(-1)[0] ?? w.tail.slice(-1)[0] ?? `exit code ${code}`;
            while (next < tasks.length) {
              const index = next++;
              finish(w, index, { name: tasks[index].name, outcome: 'fail', notes: [], message: `worker cannot start: ${why}` });
            }
            return;
          }
          if (pending()) start();
        });
      };
      const n = Math.min(this.size, tasks.length);
      for (let i = 0; i < n; i++) start();
    });
  }
}

async function runInProcess(tasks, onResult) {
  const { processModel } = await import('./lib/pipeline.mjs');
  for (let i = 0; i < tasks.length; i++) onResult(i, await processModel(tasks[i]));
}

// ---- main -----------------------------------------------------------------

function formatLine(label, name, message) {
  if (label === 'PASS') return `PASS ${name}${message ? ` (${message})` : ''}`;
  return `${label} ${name}${message ? `: ${message}` : ''}`;
}

const isComment = (k) => k.startsWith('//');

// The known-fail list as printed at the end of every run that uses one.
function printKnownFails(file, table, seen, variant) {
  const names = Object.keys(table).filter((k) => !isComment(k));
  process.stdout.write(`\nknown failures (${file}; figures of ${variant}): ${names.length}\n`);
  const num = (v) => (v === 'Infinity' ? Infinity : v);
  const dist = (d) => (d ? formatDistance({ ...d, beyond: num(d.beyond), max: num(d.max) }) : 'n/a');
  for (const k of names) {
    const e = table[k];
    const s = seen.get(k);
    const state = s ? (s === 'known' ? 'KNOWN-FAIL, as recorded' : `${s} in this run`) : 'not run here';
    process.stdout.write(`  ${k} [${state}]: ${e.reason}\n`);
    const f = entryFigures(e, variant);
    if (!f) {
      process.stdout.write(`      (no figures for ${variant}; recorded for ${Object.keys(e.figures).join(', ')})\n`);
      continue;
    }
    for (const set of ['random', 'smooth']) {
      for (const [out, o] of Object.entries(f[set] ?? {})) {
        process.stdout.write(`      ${set} "${out}": ONNX ${dist(o.onnx)}${o.runtimes ? `; tfjs-tflite ${dist(o.runtimes)}` : ''}\n`);
      }
    }
    if (f.self) {
      process.stdout.write(`      ${f.reference === 'tfjs' ? 'tfjs-tflite' : 'LiteRT.js'} against itself (the only runtime): ` +
        `${f.self.inputBroken} of ${f.self.of} one-step input changes and ${f.self.jitterBroken} of ${f.self.jitterOf} ` +
        'ulp scale changes break the tolerance\n');
    }
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const ci = process.env.CI === 'true';
  let cli = null;
  if (!opts.tfliteOnly) {
    cli = path.resolve(opts.cli);
    try {
      fs.accessSync(cli, fs.constants.X_OK);
    } catch {
      usageError(`converter not found or not executable: ${cli}`);
    }
  }
  // Every --specs file is merged (later files win); by default specs.json beside run.mjs.
  const specFiles = opts.specs.length ? opts.specs : [path.join(HERE, 'specs.json')];
  const specs = {};
  for (const f of specFiles) {
    if (!fs.existsSync(f)) usageError(`no such specs file: ${f}`);
    Object.assign(specs, readJson(f, 'specs file'));
  }
  const smoothFile = opts.smoothSpecs ?? path.join(HERE, 'specs_smooth.json');
  if (!fs.existsSync(smoothFile)) usageError(`no such smooth specs file: ${smoothFile}`);
  const smoothSpecs = readJson(smoothFile, 'smooth specs file');
  const expect = opts.expect ? readJson(opts.expect, 'expectations file') : null;
  const expectations = {};
  if (expect) {
    for (const [k, v] of Object.entries(expect)) {
      if (isComment(k)) continue;
      try {
        expectations[k] = normalizeExpectation(v);
      } catch (e) {
        usageError(`${opts.expect}: "${k}" ${e.message}`);
      }
    }
    // A file that pins Transpose counts for most of its models (the corpus
    // files) pins them for every model that converts; a few pinned entries in a
    // file of outcomes (the op models) pin only themselves.
    const all = Object.values(expectations);
    if (all.filter((e) => e.transposes).length * 2 > all.length) for (const e of all) e.object = true;
  }
  const knownFail = opts.knownFail ? readJson(opts.knownFail, 'known-fail file') : null;
  if (knownFail) {
    for (const [k, v] of Object.entries(knownFail)) {
      if (isComment(k)) continue;
      if (!v || typeof v !== 'object' || !v.reason || !v.figures || typeof v.figures !== 'object') {
        usageError(`${opts.knownFail}: "${k}" needs {"reason": ..., "figures": {"VARIANT": {...}}}`);
      }
    }
  }
  const variant = opts.variant ?? variantName(opts.opset, opts.convertArgs);

  let models = expandSignatures(collectModels(opts.paths));
  if (opts.filter) models = models.filter((m) => opts.filter.test(m.name));
  if (models.length === 0) usageError(`no .tflite models found${opts.filter ? ` matching ${opts.filter}` : ''}`);

  let outDir = opts.outDir ? path.resolve(opts.outDir) : null;
  // --tflite-only needs a folder too: for the builtin twins of select-TF models.
  const tempOut = !outDir;
  if (tempOut) outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-numeric-'));
  if (outDir) fs.mkdirSync(outDir, { recursive: true });

  const jobs = Math.min(opts.jobs, Math.max(models.length, 1));
  const threads = Math.max(1, Math.floor(os.cpus().length / Math.max(1, jobs)));
  const tasks = models.map((m) => ({
    file: m.file,
    name: m.name,
    signature: m.signature ?? null,
    spec: specFor(specs, m),
    smoothSpec: specFor(smoothSpecs, m),
    cli,
    opset: opts.opset,
    convertArgs: opts.convertArgs,
    outDir,
    secondOpinion: opts.secondOpinion,
    smoothInputs: opts.smooth,
    tfliteOnly: opts.tfliteOnly,
    // A guard against a hung converter; the CPU limit above bounds its work.
    convertTimeoutMs: Math.max(1000, Math.floor(opts.timeout * 1000 * kWallGuard)),
    threads,
  }));

  const counts = { passed: 0, failed: 0, skipped: 0, known: 0 };
  const observed = {};
  const disagreements = [];
  const hints = [];
  const knownSeen = new Map(); // known-fail key -> status in this run
  const results = new Array(tasks.length);
  const reported = [];  // --report
  let printed = 0;

  const report = (i) => {
    const r = results[i];
    const model = models[i];
    observed[model.name] = r;
    const e = expect ? entryFor(expectations, model) : null;
    const k = knownFail ? entryFor(knownFail, model) : null;
    // Without an expectations file, a model on the known-fail list with
    // figures for this variant is expected to fail (the per-op slices of
    // corpus.sh, the --quantization exact run).
    const exp = e ? expectationFor(e.value, variant)
      : !expect && k && entryFigures(k.value, variant) ? { outcome: 'fail', object: false } : null;
    const v = judgeResult({
      name: model.name, r, exp, expectGiven: !!expect, expectFile: opts.expect,
      known: k ? k.value : null, knownFile: opts.knownFail, variant, ci, noSkip: opts.noSkip,
    });
    if (k) knownSeen.set(k.key, v.status === 'known' ? 'known' : v.label);
    counts[v.status]++;
    hints.push(...v.hints);
    if (r.disagreement) disagreements.push(model.name);
    reported.push({
      name: model.name, file: model.file, label: v.label, outcome: r.outcome, message: v.message,
      unsupported: (r.unsupported ?? []).map((u) => u.op),
    });
    process.stdout.write(`${formatLine(v.label, model.name, v.message)}\n`);
    for (const n of v.notes) process.stdout.write(`    note: ${n}\n`);
  };

  const onResult = (i, r) => {
    results[i] = r;
    while (printed < results.length && results[printed]) report(printed++);
  };

  try {
    if (jobs === 0) await runInProcess(tasks, onResult);
    else await new WorkerPool(jobs, { timeoutMs: opts.timeout * 1000, verbose: opts.verbose }).run(tasks, onResult);
  } finally {
    if (tempOut) fs.rmSync(outDir, { recursive: true, force: true });
  }

  const hintBlock = (kind, title) => {
    const list = hints.filter((h) => h.kind === kind);
    if (!list.length) return;
    process.stdout.write(`\n${title(list.length)}\n`);
    for (const h of list) process.stdout.write(`  ${h.text}\n`);
  };
  hintBlock('expect', (n) => `${n} model(s) changed outcome against ${opts.expect}; if that is intended, update the file ` +
    '(or re-seed it with --write-expect):');
  hintBlock('new', (n) => `${n} model(s) not in ${opts.expect}${ci ? ' (a failure under CI=true)' : ''}; ` +
    'pin their outcome and Transpose count (--write-expect FILE):');
  hintBlock('transposes', (n) => `${n} Transpose count(s) differ from ${opts.expect} for ${variant} (up is a failure); ` +
    'update with --write-expect FILE:');
  hintBlock('known', (n) => `${n} model(s) to settle with the known-fail list ${opts.knownFail ?? '(no --known-fail file given)'} ` +
    '(measure with --write-known-fail FILE, after fixing what can be fixed):');
  if (disagreements.length) {
    process.stdout.write(`\nsecond opinion: tfjs-tflite disagrees with LiteRT.js on ${disagreements.length} model(s): ${disagreements.join(', ')}\n`);
  }
  if (opts.writeKnownFail) {
    const file = path.resolve(opts.writeKnownFail);
    const table = fs.existsSync(file) ? readJson(file, 'known-fail file') : {};
    const added = [];
    const removed = [];
    for (const [name, r] of Object.entries(observed)) {
      const key = Object.keys(table).find((k) => !isComment(k) && (k === name || name.endsWith(`/${k}`))) ?? name;
      if (r.outcome === 'fail' && r.measured) {
        table[key] = updateKnownFailEntry(table[key], variant, roundFigures(r.measured));
        added.push(key);
      } else if (table[key] && entryFigures(table[key], variant)) {
        const rest = removeKnownFailVariant(table[key], variant);
        if (rest) table[key] = rest;
        else delete table[key];
        removed.push(key);
      }
    }
    const sorted = Object.fromEntries(Object.keys(table).sort().map((k) => [k, table[k]]));
    fs.writeFileSync(file, `${formatJson(sorted)}\n`);
    process.stdout.write(`\nwrote the figures of ${added.length} failing model(s) to ${file}` +
      (removed.length ? `; removed the ${variant} figures of ${removed.length} that no longer fail: ${removed.join(', ')}` : '') + '\n');
  }
  if (opts.report) fs.writeFileSync(opts.report, `${JSON.stringify(reported, null, 1)}\n`);
  if (opts.writeExpect) {
    const file = path.resolve(opts.writeExpect);
    const merged = fs.existsSync(file) ? readJson(file, 'expectations file') : {};
    const broken = [];
    for (const [name, r] of Object.entries(observed)) {
      let outcome = r.outcome;
      const old = merged[name];
      const was = typeof old === 'string' ? old : old?.outcomes?.[variant] ?? old?.outcome;
      if (!EXPECTABLE.has(outcome) || (outcome === 'fail' && !(r.measured && (opts.writeKnownFail || was === 'fail')))) {
        // a failure is recorded as the outcome it should reach, unless it is
        // (or in this run went) on the known-fail list
        outcome = 'pass';
        broken.push(name);
      }
      const transposes = { ...(old && typeof old === 'object' ? old.transposes ?? {} : {}) };
      if (r.transposes !== undefined) transposes[variant] = r.transposes;
      // A variant with its own outcome ("outcomes") keeps it there.
      const outcomes = old && typeof old === 'object' && old.outcomes ? { ...old.outcomes } : null;
      if (outcomes && variant in outcomes) {
        outcomes[variant] = outcome;
        outcome = old.outcome;
      }
      merged[name] = Object.keys(transposes).length || outcomes
        ? { outcome, ...(outcomes ? { outcomes } : {}), ...(Object.keys(transposes).length ? { transposes } : {}) }
        : outcome;
    }
    fs.writeFileSync(file, formatExpectations(merged));
    process.stdout.write(`\nwrote ${Object.keys(observed).length} outcome(s) to ${file}` +
      (broken.length ? ` (${broken.length} failing model(s) recorded as "pass": ${broken.join(', ')})` : '') + '\n');
  }
  if (knownFail) printKnownFails(opts.knownFail, knownFail, knownSeen, variant);
  process.stdout.write(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.known} known-fail\n`);
  process.exitCode = counts.failed > 0 ? 1 : 0;
}

main().catch((e) => {
  process.stderr.write(`run.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
