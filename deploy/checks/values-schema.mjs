#!/usr/bin/env node
// Tests helm/lite2onnx/values.schema.json with Ajv, as Helm applies it: to the chart's
// values.yaml merged with the user's values (maps merged, lists replaced, null deletes).
//  - values.yaml alone and merged with every ci/*-values.yaml must pass;
//  - every bad-values/*.yaml merged over values.yaml must fail, with the error its
//    "# expect: KEYWORD PATH" line names (so it fails for the intended reason);
//  - the schema and values.yaml describe the same keys (no option without a default,
//    no default the schema does not know), and every key of values.yaml has a comment.
//   values-schema.mjs [CHART_DIR]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";
import YAML from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const chart = process.argv[2] || path.join(here, "../../helm/lite2onnx");
const problems = [];
const fail = (m) => problems.push(m);

// Helm reads values with YAML 1.1 rules (sigs.k8s.io/yaml).
const load = (f) => YAML.parse(fs.readFileSync(f, "utf8"), { version: "1.1" }) ?? {};
const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
function coalesce(base, over) {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = coalesce(out[k], v);
    else out[k] = v;
  }
  return out;
}

const schema = JSON.parse(fs.readFileSync(path.join(chart, "values.schema.json"), "utf8"));
const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
const validate = ajv.compile(schema);
const errorsOf = () =>
  (validate.errors || []).map(
    (e) =>
      `${e.keyword} ${e.params?.additionalProperty ? `${e.instancePath}/${e.params.additionalProperty}` : e.instancePath || "/"}: ${e.message}`,
  );

const defaults = load(path.join(chart, "values.yaml"));
let passed = 0;
const good = [["values.yaml", {}]];
for (const f of fs.readdirSync(path.join(chart, "ci")).filter((f) => f.endsWith(".yaml")).sort()) {
  good.push([`ci/${f}`, load(path.join(chart, "ci", f))]);
}
for (const [name, over] of good) {
  if (validate(coalesce(defaults, over))) passed++;
  else fail(`${name} is rejected:\n    ${errorsOf().join("\n    ")}`);
}

const badDir = path.join(here, "bad-values");
const bad = fs.readdirSync(badDir).filter((f) => f.endsWith(".yaml")).sort();
let rejected = 0;
for (const f of bad) {
  const text = fs.readFileSync(path.join(badDir, f), "utf8");
  const expect = /^# expect: (.+)$/m.exec(text)?.[1].trim();
  if (!expect) {
    fail(`bad-values/${f} has no "# expect: KEYWORD PATH" line`);
    continue;
  }
  if (validate(coalesce(defaults, load(path.join(badDir, f))))) {
    fail(`bad-values/${f} is accepted; it must fail with ${expect}`);
    continue;
  }
  const errors = errorsOf();
  if (errors.some((e) => e.startsWith(`${expect}:`))) rejected++;
  else fail(`bad-values/${f} is rejected, but not with "${expect}":\n    ${errors.join("\n    ")}`);
}

// Same keys in the schema and in values.yaml (objects with declared properties only;
// $ref'd definitions and free-form maps are not walked).
const SCHEMA_ONLY = new Set(["global"]);
function compareKeys(s, v, at) {
  if (!s || !s.properties || !isMap(v)) return;
  for (const k of Object.keys(s.properties)) {
    const p = at ? `${at}.${k}` : k;
    if (!(k in v) && !SCHEMA_ONLY.has(p)) fail(`values.yaml has no default for ${p} (the schema declares it)`);
    else compareKeys(s.properties[k], v[k], p);
  }
  for (const k of Object.keys(v)) {
    if (!(k in s.properties)) fail(`the schema does not declare ${at ? `${at}.` : ""}${k} (values.yaml has it)`);
  }
}
compareKeys(schema, defaults, "");

// Every key line of values.yaml follows a comment line (or a list item's parent).
const lines = fs.readFileSync(path.join(chart, "values.yaml"), "utf8").split("\n");
let undocumented = 0;
lines.forEach((line, i) => {
  const m = /^(\s*)([A-Za-z0-9_.-]+|"[^"]+"):(\s|$)/.exec(line);
  if (!m) return;
  let j = i - 1;
  while (j >= 0 && lines[j].trim() === "") j--;
  if (j < 0 || !/^\s*#/.test(lines[j])) {
    fail(`values.yaml:${i + 1}: ${m[2]} has no comment above it`);
    undocumented++;
  }
});

if (problems.length) {
  for (const p of problems) console.log(`FAIL: ${p}`);
  console.log(`values schema: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(
  `values schema: ${passed} good value sets accepted (values.yaml, ${good.length - 1} ci files), ` +
    `${rejected} bad ones rejected for the expected reason, schema and values.yaml agree, every key documented`,
);
