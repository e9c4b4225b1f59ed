#!/usr/bin/env node
// Extracts data tables the reference arithmetics need from a LiteRT source snapshot:
//   sigmoid_table_uint16 (tflite/kernels/internal/common.h: 256 values of sigmoid(i/24) in
//   0.16 fixed point, used by the int16 LOGISTIC/TANH kernels).
// Usage: node tools/extract_tables.mjs LITERT_GIT_DIR|COMMON_H
// (a bare clone of google-ai-edge/LiteRT, read at HEAD, or the file itself).
// Writes ref/data/sigmoid_table_uint16.json (committed; 256 numbers).
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
const arg = process.argv[2];
if (!arg) {
  process.stderr.write('usage: extract_tables.mjs LITERT_GIT_DIR|COMMON_H\n');
  process.exit(2);
}
const text = arg.endsWith('.h') ? fs.readFileSync(arg, 'utf8')
  : execFileSync('git', ['--git-dir', arg, 'show', 'HEAD:tflite/kernels/internal/common.h'], { encoding: 'utf8' });
const m = text.match(/sigmoid_table_uint16\[256\]\s*=\s*\{([^}]*)\}/);
if (!m) throw new Error('sigmoid_table_uint16 not found');
const values = m[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
if (values.length !== 256) throw new Error(`expected 256 values, got ${values.length}`);
const out = new URL('../ref/data/sigmoid_table_uint16.json', import.meta.url);
fs.writeFileSync(out, JSON.stringify({ source: 'google-ai-edge/LiteRT tflite/kernels/internal/common.h sigmoid_table_uint16 (Apache-2.0)', values }) + '\n');
console.log(`wrote ${values.length} values to ${out.pathname}`);
