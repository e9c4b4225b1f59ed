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

const HERE = path.dirname(fileURLToPath(import.meta.url));

const USAGE = `usage: node run.mjs --cli PATH_TO_lite2onnx [options] PATHS...

PATHS are .tflite files or directories (searched recursively for *.tflite).

options:
  --cli FILE            the lite2onnx executable (required unless --tflite-only)
  --opset N             ONNX opset passed to the converter (default 13)
  --jobs N              worker processes (default: min(2, CPUs); 0 = run in this process)
  --out-dir DIR         keep converted .onnx files here (default: a temp dir, removed)
  --specs FILE          per-model specs (repeatable, merged; default: specs.json beside run.mjs)
  --expect FILE         expected outcomes {"name": "pass"|"unsupported"|"skip"|"fail"}
                        ("fail": a known whole-model failure, accepted only when TFLite's
                        own outputs break the tolerance when one input element moves by one
                        step or its quantization scales by an ulp; corpus.sh then checks
                        every op of that model alone, see README.md)
  --write-expect FILE   write the observed outcomes to FILE (merged with its entries)
  --second-opinion      also run tfjs-tflite and report where it disagrees with LiteRT.js
  --tflite-only         no converter/ONNX: compare LiteRT.js with tfjs-tflite only
  --filter REGEX        only models whose name matches REGEX
  --convert-arg ARG     pass ARG to every conversion (repeatable), e.g. --convert-arg=--keep-io-layout
  --timeout SEC         per-model time limit (default 120)
  --verbose             print runtime logs of the workers
  -h, --help            this text`;

function usageError(msg) {
  process.stderr.write(`run.mjs: ${msg}\n\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    cli: null, opset: 13, jobs: Math.max(1, Math.min(2, os.cpus().length)), outDir: null,
    specs: [], expect: null, writeExpect: null, secondOpinion: false,
    tfliteOnly: false, filter: null, timeout: 120, verbose: false, paths: [], convertArgs: [],
  };
  const takesValue = new Set(['--cli', '--opset', '--jobs', '--out-dir', '--specs', '--expect', '--write-expect', '--filter', '--timeout', '--convert-arg']);
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
      case '--expect': o.expect = value; break;
      case '--write-expect': o.writeExpect = value; break;
      case '--filter':
        try { o.filter = new RegExp(value); } catch (e) { usageError(`bad --filter: ${e.message}`); }
        break;
      case '--timeout': o.timeout = Number(value); if (!(o.timeout > 0)) usageError('--timeout must be > 0'); break;
      case '--second-opinion': o.secondOpinion = true; break;
      case '--tflite-only': o.tfliteOnly = true; break;
      case '--verbose': o.verbose = true; break;
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

// A key (from specs.json or the expectations file) matches a model when the
// model's path ends with "/<key>"; "*" in a key matches within one path part.
function keyMatcher(key) {
  const rx = key.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*');
  return new RegExp(`(^|/)${rx}$`);
}

function matchingKeys(table, model) {
  const target = toSlash(model.file);
  return Object.keys(table)
    .filter((k) => !k.startsWith('//') && (keyMatcher(k).test(target) || keyMatcher(k).test(model.name)))
    .sort((a, b) => a.length - b.length);
}

function specFor(specs, model) {
  const merged = {};
  for (const k of matchingKeys(specs, model)) Object.assign(merged, specs[k]);
  return merged;
}

function expectationFor(expect, model) {
  const keys = matchingKeys(expect, model);
  return keys.length ? { key: keys[keys.length - 1], value: expect[keys[keys.length - 1]] } : null;
}

// ---- workers ---------------------------------------------------------------

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
        if (next >= tasks.length) {
          if (w.child.connected) w.child.disconnect();
          return;
        }
        const index = next++;
        w.busy = index;
        w.tail = [];
        w.timer = setTimeout(() => {
          const result = { name: tasks[index].name, outcome: 'fail', message: `timeout after ${this.timeoutMs / 1000} s`, notes: [] };
          w.timedOut = true;
          w.child.kill('SIGKILL');
          finish(w, index, result);
        }, this.timeoutMs);
        w.child.send({ type: 'task', id: index, task: tasks[index] });
      };
      let failedStarts = 0;
      const start = () => {
        const w = this.spawn();
        w.child.on('message', (msg) => {
          if (msg && msg.type === 'ready') { w.ready = true; failedStarts = 0; dispatch(w); return; }
          if (msg && msg.type === 'result' && w.busy === msg.id) {
            finish(w, msg.id, msg.result);
            if (msg.retire) w.retiring = true; // it exits; 'exit' starts a replacement
            else dispatch(w);
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
          if (next < tasks.length) start();
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

const LABEL = { pass: 'PASS', fail: 'FAIL', unsupported: 'UNSUPPORTED', skip: 'SKIP', 'convert-error': 'CONVERT-ERROR' };
const EXPECTABLE = new Set(['pass', 'unsupported', 'skip', 'fail']);

function formatLine(label, name, message) {
  if (label === 'PASS') return `PASS ${name}${message ? ` (${message})` : ''}`;
  return `${label} ${name}${message ? `: ${message}` : ''}`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
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
  const expect = opts.expect ? readJson(opts.expect, 'expectations file') : null;
  if (expect) {
    for (const [k, v] of Object.entries(expect)) {
      if (!k.startsWith('//') && !EXPECTABLE.has(v)) usageError(`${opts.expect}: "${k}" expects "${v}"; use pass, unsupported, skip or fail`);
    }
  }

  let models = collectModels(opts.paths);
  if (opts.filter) models = models.filter((m) => opts.filter.test(m.name));
  if (models.length === 0) usageError(`no .tflite models found${opts.filter ? ` matching ${opts.filter}` : ''}`);

  let outDir = opts.outDir ? path.resolve(opts.outDir) : null;
  const tempOut = !outDir && !opts.tfliteOnly;
  if (tempOut) outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-numeric-'));
  if (outDir) fs.mkdirSync(outDir, { recursive: true });

  const jobs = Math.min(opts.jobs, Math.max(models.length, 1));
  const threads = Math.max(1, Math.floor(os.cpus().length / Math.max(1, jobs)));
  const tasks = models.map((m) => ({
    file: m.file,
    name: m.name,
    spec: specFor(specs, m),
    cli,
    opset: opts.opset,
    convertArgs: opts.convertArgs,
    outDir,
    secondOpinion: opts.secondOpinion,
    tfliteOnly: opts.tfliteOnly,
    convertTimeoutMs: Math.max(1000, Math.floor(opts.timeout * 500)),
    threads,
    // an expected whole-model failure must be one TFLite shows against itself
    measureSensitivity: expect ? expectationFor(expect, m)?.value === 'fail' : false,
  }));

  const counts = { passed: 0, failed: 0, skipped: 0 };
  const observed = {};
  const disagreements = [];
  const expectHints = [];
  const results = new Array(tasks.length);
  let printed = 0;

  const report = (i) => {
    const r = results[i];
    const model = models[i];
    observed[model.name] = r.outcome;
    const exp = expect ? expectationFor(expect, model) : null;
    let label = LABEL[r.outcome] ?? 'FAIL';
    let message = r.message;
    let status;
    if (r.outcome === 'pass') status = 'passed';
    else if (r.outcome === 'unsupported' || r.outcome === 'skip') status = 'skipped';
    else status = 'failed';
    const notes = [...(r.notes ?? [])];
    if (exp && exp.value === 'fail' && r.outcome === 'fail' && !(r.sensitivity?.broken > 0)) {
      // TFLite is stable under one-step input changes and ulp-sized scale
      // changes, so the difference is the converter's: "fail" is not an
      // acceptable expectation for this model.
      message = `${r.message}; expected "fail" is not justified: TFLite itself stays within the ` +
        'tolerance when one input element moves by one step and when its quantization scales move by an ulp' +
        `${r.sensitivity ? ` (${r.sensitivity.of} positions, ${r.sensitivity.jitterOf} scale factors tried)` : ''}`;
    } else if (exp && exp.value === 'fail' && r.outcome === 'fail') {
      // A known whole-model failure: TFLite's own outputs move as much under a
      // one-step input change (its ops are checked one by one instead).
      status = 'skipped';
      label = 'KNOWN-FAIL';
    } else if (exp && exp.value !== r.outcome) {
      if (status !== 'failed') {
        status = 'failed';
        const got = LABEL[r.outcome];
        message = `expected ${exp.value}, got ${got}${r.message ? ` (${r.message})` : ''}`;
        label = 'FAIL';
        expectHints.push(`${model.name}: ${exp.value} -> ${r.outcome}`);
      } else {
        notes.push(`expected ${exp.value}`);
      }
    } else if (expect && !exp) {
      notes.push('not in the expectations file');
    }
    counts[status]++;
    if (r.disagreement) disagreements.push(model.name);
    process.stdout.write(`${formatLine(label, model.name, message)}\n`);
    for (const n of notes) process.stdout.write(`    note: ${n}\n`);
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

  if (expectHints.length) {
    process.stdout.write(`\n${expectHints.length} model(s) changed outcome against ${opts.expect}; ` +
      `if that is intended, update the file (or re-seed it with --write-expect):\n`);
    for (const h of expectHints) process.stdout.write(`  ${h}\n`);
  }
  if (disagreements.length) {
    process.stdout.write(`\nsecond opinion: tfjs-tflite disagrees with LiteRT.js on ${disagreements.length} model(s): ${disagreements.join(', ')}\n`);
  }
  if (opts.writeExpect) {
    const file = path.resolve(opts.writeExpect);
    const merged = fs.existsSync(file) ? readJson(file, 'expectations file') : {};
    const broken = [];
    for (const [name, outcome] of Object.entries(observed)) {
      if (EXPECTABLE.has(outcome)) merged[name] = outcome;
      else { merged[name] = 'pass'; broken.push(name); }
    }
    const sorted = Object.fromEntries(Object.keys(merged).sort().map((k) => [k, merged[k]]));
    fs.writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
    process.stdout.write(`\nwrote ${Object.keys(observed).length} outcome(s) to ${file}` +
      (broken.length ? ` (${broken.length} failing model(s) recorded as "pass": ${broken.join(', ')})` : '') + '\n');
  }
  process.stdout.write(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  process.exitCode = counts.failed > 0 ? 1 : 0;
}

main().catch((e) => {
  process.stderr.write(`run.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
