// Edits a .tflite file through flatc's JSON round trip with lite2onnx's own
// schema (core/tflite/schema.fbs, which covers every field the converter
// reads). For the harness's derived models: per-op slices (slice.mjs) and
// copies whose shape-less outputs get the shapes TFLite's kernels compute, so
// that LiteRT.js can return them (litert.mjs).
//
// flatc writes floats with 6 decimals, which would turn small quantization
// scales (1e-8 is common) into 0: the scales of the edited subgraph are put
// back exactly from the binary. Other float fields (op options) keep 6
// decimals; that changes the derived model, not the check (TFLite and ONNX
// both read the same derived model).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_SCHEMA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..',
  'core', 'tflite', 'schema.fbs');

// flatc writes non-finite floats as bare inf / -inf / nan, which JSON lacks:
// carried through as strings and written back bare.
const NON_FINITE = /(?<=[\[,:]\s*)(-?inf|nan)(?=\s*[\],}])/g;

/**
 * The model as flatc's JSON object, with the quantization scales of
 * subgraph `model.subgraphIndex` (a readTfliteModel result) exact.
 */
export function tfliteToJson(file, model, { schema = DEFAULT_SCHEMA } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-rewrite-'));
  try {
    execFileSync('flatc', ['-t', '--strict-json', '--raw-binary', '--defaults-json', '-o', dir, schema, '--', file]);
    const jsonPath = path.join(dir, `${path.basename(file, path.extname(file))}.json`);
    const full = JSON.parse(fs.readFileSync(jsonPath, 'utf8').replace(NON_FINITE, '"$1"'));
    const graph = full.subgraphs[model.subgraphIndex];
    model.tensors.forEach((t, i) => {
      if (t.quant && graph.tensors[i].quantization) graph.tensors[i].quantization.scale = t.quant.scale;
    });
    return full;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes flatc's JSON object `json` as the binary model `outFile`. */
export function jsonToTflite(json, outFile, { schema = DEFAULT_SCHEMA } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-rewrite-'));
  try {
    const stem = path.basename(outFile, path.extname(outFile));
    const file = path.join(dir, `${stem}.json`);
    // JSON.stringify writes Infinity/NaN as null: flatc's bare words instead.
    const text = JSON.stringify(json, (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? `~${v}` : v));
    fs.writeFileSync(file, text.replace(/"(-?inf|nan)"/g, '$1').replace(/"~(-?Infinity|NaN)"/g,
      (m, v) => ({ Infinity: 'inf', '-Infinity': '-inf', NaN: 'nan' })[v]));
    execFileSync('flatc', ['-b', '-o', dir, schema, file]);
    fs.copyFileSync(path.join(dir, `${stem}.tflite`), outFile);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
