#!/usr/bin/env node
// Measures what the two TFLite runtimes of the numeric harness (LiteRT.js and
// tfjs-tflite) compute for quantized ops, and checks the reference arithmetics
// of ref/*.mjs against them bit for bit: the evidence behind the table of
// docs/quantization-arithmetic.md. Each case is a generated single-op model,
// its inputs (adversarial: exhaustive pairs, exact and one-ulp ties, huge
// accumulators) and candidate arithmetics; see README.md.
//
//   node tests/numeric/quant_probe/run.mjs [FAMILY...] [--quick] [--filter REGEX]
//        [--out DIR] [--markdown] [--verbose] [--keep-models DIR]
//
// Prints one line per case, then one row per line of the table (the
// candidates matching every element of every case, per runtime), then checks
// every case against the arithmetic its row names (lib/groups.mjs). Exit code
// 1 when the table no longer holds, 2 on bad usage.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAll } from './lib/runner.mjs';
import { GROUPS, groupOf, checkCase, groupRows, formatRows } from './lib/groups.mjs';

const FAMILIES = ['elementwise', 'linear', 'pool', 'unary', 'movement', 'hybrid', 'recurrent'];
const USAGE = `usage: run.mjs [${FAMILIES.join('|')}...] [--quick] [--filter REGEX] [--out DIR] [--markdown] [--verbose] [--keep-models DIR]
  --quick            two cases per row of the table (its first and last): the ctest numeric_quant_probe
  --filter REGEX     only the cases whose name matches
  --out DIR          write DIR/<family>.json (every case: counts, first mismatches, tie statistics)
                     and DIR/summary.json (per case: the candidates matching all elements, per runtime)
  --markdown         print the rows as a Markdown table
  --verbose          print every candidate's first mismatches [index, runtime value, candidate value]
  --keep-models DIR  keep the generated models (.json, .tflite) in DIR`;

function usage(message) {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

const opts = { families: [], quick: false, filter: null, out: null, markdown: false, verbose: false, keepModels: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
  if (a === '--quick') opts.quick = true;
  else if (a === '--filter') opts.filter = new RegExp(value());
  else if (a === '--out') opts.out = path.resolve(value());
  else if (a === '--markdown') opts.markdown = true;
  else if (a === '--verbose') opts.verbose = true;
  else if (a === '--keep-models') opts.keepModels = path.resolve(value());
  else if (a === '-h' || a === '--help') { process.stdout.write(`${USAGE}\n`); process.exit(0); }
  else if (FAMILIES.includes(a)) opts.families.push(a);
  else usage(`unknown argument ${a}`);
}

const t0 = Date.now();
const modelDir = opts.keepModels ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-quant-probe-'));
const results = [];
const summary = {};
try {
  for (const family of opts.families.length ? opts.families : FAMILIES) {
    const mod = await import(`./cases/${family}.mjs`);
    let list = mod.allCases ? mod.allCases() : mod.cases();
    if (opts.filter) list = list.filter((c) => opts.filter.test(c.name));
    if (opts.quick) {
      // The first and the last case of each row (rows mostly order their
      // cases from plain to adversarial).
      const byRow = new Map();
      for (const c of list) {
        const g = groupOf(c.name);
        if (!byRow.has(g)) byRow.set(g, []);
        byRow.get(g).push(c);
      }
      list = list.filter((c) => {
        const row = byRow.get(groupOf(c.name));
        return c === row[0] || c === row[row.length - 1];
      });
    }
    if (!list.length) continue;
    console.log(`== ${family} (${list.length} cases)`);
    const familyResults = await runAll(list, { modelDir, verbose: opts.verbose });
    results.push(...familyResults);
    for (const r of familyResults) {
      const full = (side) => Object.entries(r.refs ?? {}).filter(([, x]) => x[side] === r.n && r.n > 0).map(([k]) => k);
      summary[r.name] = {
        family, op: r.op, variant: r.variant, n: r.n, kernelTfjs: [...new Set(r.tfjsNodes ?? [])].join('+'),
        runtimesAgree: r.runtimesAgree, liteError: r.liteError, tfjsError: r.tfjsError,
        matchLite: r.liteError ? null : full('lite'), matchTfjs: r.tfjsError ? null : full('tfjs'), tieInfo: r.tieInfo,
      };
    }
    if (opts.out) {
      fs.mkdirSync(opts.out, { recursive: true });
      fs.writeFileSync(path.join(opts.out, `${family}.json`), JSON.stringify(familyResults, null, 1));
    }
  }
} finally {
  if (!opts.keepModels) fs.rmSync(modelDir, { recursive: true, force: true });
}
if (opts.out) fs.writeFileSync(path.join(opts.out, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);

console.log(`\n== the table's rows (${results.length} cases)`);
console.log(formatRows(groupRows(results), { markdown: opts.markdown }));
const problems = results.flatMap(checkCase);
const rowsSeen = new Set(results.map((r) => groupOf(r.name)).filter(Boolean));
console.log(`\n${results.length} cases in ${rowsSeen.size} of ${GROUPS.length} rows, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (problems.length) {
  console.log(`the table no longer holds (${problems.length}):`);
  for (const p of problems) console.log(`  ${p}`);
  process.exit(1);
}
console.log('every case computes what its row of the table says, in both runtimes');
