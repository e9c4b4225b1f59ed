#!/usr/bin/env node
// Cuts a TFLite model into one model per operator (the operator, its constants,
// and its other inputs as graph inputs), so run.mjs can check every converted
// op against TFLite in isolation. For deep quantized models whose whole-model
// check cannot pass because single-step rounding differences between two
// correct integer runtimes amplify layer after layer (see README.md).
//
//   node slice.mjs --schema core/tflite/schema.fbs --out DIR MODEL.tflite
//
// Uses flatc's JSON round trip with lite2onnx's own schema, which covers every
// field the converter reads. Float fields pass through JSON with 6 significant
// digits; that changes the slice, not the check (TFLite and ONNX both read the
// slice).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function usage(message) {
  process.stderr.write(`${message}\nusage: slice.mjs --schema SCHEMA.fbs --out DIR MODEL.tflite\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let schema = null;
let out = null;
let model = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--schema') schema = args[++i];
  else if (args[i] === '--out') out = args[++i];
  else if (!model) model = args[i];
  else usage(`unexpected argument ${args[i]}`);
}
if (!schema || !out || !model) usage('missing argument');

fs.mkdirSync(out, { recursive: true });
const stem = path.basename(model, '.tflite');
execFileSync('flatc', ['-t', '--strict-json', '--raw-binary', '--defaults-json', '-o', out, schema, '--', model]);
const jsonPath = path.join(out, `${stem}.json`);
const full = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
fs.rmSync(jsonPath);
const graph = full.subgraphs[0];
const hasData = (t) => {
  const b = graph.tensors[t].buffer ?? 0;
  return b > 0 && (full.buffers[b].data ?? []).length > 0;
};

let written = 0;
graph.operators.forEach((op, k) => {
  const used = new Set(op.inputs.filter((t) => t >= 0).map((t) => graph.tensors[t].buffer ?? 0));
  const slice = {
    ...full,
    signature_defs: [],
    // Only this op's constants keep their bytes.
    buffers: full.buffers.map((b, i) => (used.has(i) ? b : {})),
    subgraphs: [{
      ...graph,
      operators: [op],
      inputs: [...new Set(op.inputs.filter((t) => t >= 0 && !hasData(t)))],
      outputs: op.outputs,
    }],
  };
  const name = `${stem}.op${String(k).padStart(3, '0')}`;
  const file = path.join(out, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(slice));
  execFileSync('flatc', ['-b', '-o', out, schema, file]);
  fs.rmSync(file);
  written++;
});
process.stdout.write(`${written} single-op models of ${model} in ${out}\n`);
