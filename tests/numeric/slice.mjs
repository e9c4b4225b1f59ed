#!/usr/bin/env node
// Cuts a TFLite model into one model per operator (the operator, its constants,
// and its other inputs as graph inputs), so run.mjs can check every converted
// op against TFLite in isolation; ops joined by a complex tensor (RFFT2D ->
// COMPLEX_ABS) stay together. For deep quantized models whose whole-model
// check cannot pass because single-step rounding differences between two
// correct integer runtimes amplify layer after layer (see README.md).
//
//   node slice.mjs --schema core/tflite/schema.fbs --out DIR MODEL.tflite
//
//   node slice.mjs --schema core/tflite/schema.fbs --out DIR --outputs 12,40 MODEL.tflite
//
// writes instead one copy of the whole model whose graph outputs are the given
// tensors (to find where a whole-model difference starts).
//
// Uses flatc's JSON round trip with lite2onnx's own schema (lib/tflite_rewrite.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { readTfliteModel } from './lib/tflite_model.mjs';
import { jsonToTflite, tfliteToJson } from './lib/tflite_rewrite.mjs';

function usage(message) {
  process.stderr.write(`${message}\nusage: slice.mjs --schema SCHEMA.fbs --out DIR MODEL.tflite\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let schema = null;
let out = null;
let model = null;
let outputs = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--schema') schema = args[++i];
  else if (args[i] === '--out') out = args[++i];
  else if (args[i] === '--outputs') outputs = args[++i].split(',').map(Number);
  else if (!model) model = args[i];
  else usage(`unexpected argument ${args[i]}`);
}
if (!schema || !out || !model) usage('missing argument');

fs.mkdirSync(out, { recursive: true });
const stem = path.basename(model, '.tflite');
// The subgraph a conversion with the default options converts: the first
// signature's (subgraph 0 without signatures).
const tflite = readTfliteModel(fs.readFileSync(model));
const full = tfliteToJson(model, tflite, { schema });
const graph = full.subgraphs[tflite.subgraphIndex];

function writeModel(json, name) {
  jsonToTflite(json, path.join(out, `${name}.tflite`), { schema });
}

if (outputs) {
  if (outputs.some((t) => !(t >= 0 && t < graph.tensors.length))) usage(`--outputs: tensor index out of range`);
  writeModel({ ...full, signature_defs: [], subgraphs: [{ ...graph, outputs }] }, `${stem}.outputs${outputs[0]}`);
  process.stdout.write(`${stem} with outputs ${outputs.join(', ')} in ${out}\n`);
  process.exit(0);
}
const hasData = (t) => {
  const b = graph.tensors[t].buffer ?? 0;
  return b > 0 && (full.buffers[b].data ?? []).length > 0;
};

// Ops joined by a complex tensor (RFFT2D -> COMPLEX_ABS) go into one slice:
// neither the harness nor the converter's graph I/O carries complex numbers.
const COMPLEX = new Set(['COMPLEX64', 'COMPLEX128']);
const group = graph.operators.map((_, k) => k);
const find = (k) => (group[k] === k ? k : (group[k] = find(group[k])));
const producer = new Map();
graph.operators.forEach((op, k) => op.outputs.forEach((t) => producer.set(t, k)));
graph.operators.forEach((op, k) => {
  for (const t of op.inputs) {
    if (t >= 0 && producer.has(t) && COMPLEX.has(graph.tensors[t].type)) group[find(k)] = find(producer.get(t));
  }
});
const slices = new Map();
graph.operators.forEach((_, k) => {
  const g = find(k);
  if (!slices.has(g)) slices.set(g, []);
  slices.get(g).push(k);
});

let written = 0;
for (const members of slices.values()) {
  const ops = members.map((k) => graph.operators[k]);
  const produced = new Set(ops.flatMap((op) => op.outputs));
  const consumed = ops.flatMap((op) => op.inputs.filter((t) => t >= 0));
  const used = new Set(consumed.map((t) => graph.tensors[t].buffer ?? 0));
  const slice = {
    ...full,
    signature_defs: [],
    // Only these ops' constants keep their bytes.
    buffers: full.buffers.map((b, i) => (used.has(i) ? b : {})),
    subgraphs: [{
      ...graph,
      operators: ops,
      inputs: [...new Set(consumed.filter((t) => !produced.has(t) && !hasData(t)))],
      outputs: [...produced].filter((t) => !COMPLEX.has(graph.tensors[t].type)),
    }],
  };
  const first = String(members[0]).padStart(3, '0');
  const last = String(members[members.length - 1]).padStart(3, '0');
  writeModel(slice, `${stem}.op${first}${members.length > 1 ? `-${last}` : ''}`);
  written++;
}
const joined = written < graph.operators.length ? ' (ops joined by complex tensors in one)' : '';
process.stdout.write(`${written} single-op models of ${model} in ${out}${joined}\n`);
