#!/usr/bin/env node
// Times ONNX Runtime (onnxruntime-node, CPU, default optimization level) on
// ONNX models, to choose between two ONNX forms of one op (docs/architecture.md,
// "Recurrent ops"): every model gets the same deterministic inputs, rounds
// alternate between the models (so load on the machine hits all alike), and
// the median and minimum per inference are printed.
//
//   node tests/numeric/ort_bench.mjs [--runs N] [--rounds R] [--threads T] A.onnx B.onnx ...
//
// Inputs with an initializer (state inputs) are not fed.
import fs from 'node:fs';
import { makeRng } from './lib/inputs.mjs';
import { localRequire } from './lib/wasm_loader.mjs';

const args = process.argv.slice(2);
let runs = 200;
let rounds = 5;
let threads = 1;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else files.push(args[i]);
}
if (!files.length || !(runs > 0) || !(rounds > 0)) {
  process.stderr.write('usage: ort_bench.mjs [--runs N] [--rounds R] [--threads T] MODEL.onnx...\n');
  process.exit(2);
}

const ort = localRequire('onnxruntime-node');
const ARRAYS = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, int32: Int32Array };

async function open(file) {
  const session = await ort.InferenceSession.create(new Uint8Array(fs.readFileSync(file)), {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3,
  });
  const rng = makeRng(1);
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const m = session.inputMetadata[i];
    const shape = m.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    const Ctor = ARRAYS[m.type];
    if (!Ctor) throw new Error(`${file}: input ${name} has type ${m.type}`);
    const data = new Ctor(shape.reduce((a, b) => a * b, 1));
    for (let k = 0; k < data.length; k++) data[k] = m.type === 'float32' ? rng() * 2 - 1 : Math.floor(rng() * 100) - 50;
    feeds[name] = new ort.Tensor(m.type, data, shape);
  });
  return { file, session, feeds, times: [] };
}

const models = [];
for (const f of files) models.push(await open(f));
for (const m of models) for (let i = 0; i < 20; i++) await m.session.run(m.feeds);  // warm-up
for (let r = 0; r < rounds; r++) {
  for (const m of models) {
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      await m.session.run(m.feeds);
      m.times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  }
}
for (const m of models) {
  m.times.sort((a, b) => a - b);
  const median = m.times[Math.floor(m.times.length / 2)];
  process.stdout.write(`${m.file}: median ${median.toFixed(1)} us, min ${m.times[0].toFixed(1)} us ` +
    `(${m.times.length} inferences, ${threads} thread${threads === 1 ? '' : 's'})\n`);
  await m.session.release();
}
