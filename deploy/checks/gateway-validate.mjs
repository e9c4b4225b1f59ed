#!/usr/bin/env node
// Validates the Gateway API objects (gateway.networking.k8s.io) of rendered
// manifests against the schemas of @kubernetes-models/gateway-api, the same
// family of models chartcheck's k8s-validate uses for the built-in kinds (it
// has no Gateway API models itself, so --strict reports these objects as not
// validated): schema, types, enums, required fields, and fields the schema
// does not know (found as k8s-validate finds them: the validator reads every
// declared property of an object; a key it never read is unknown).
//   node gateway-validate.mjs RENDERED.yaml
// Prints one line per object; exits 1 when one is invalid or none was found.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import YAML from "yaml";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODELS = path.join(HERE, "node_modules", "@kubernetes-models", "gateway-api");

// Runs the model's compiled validator on a proxy of the object that records
// the keys it reads: it reads every declared property of an object, enumerates
// maps and never reads free-form objects; a key of a read, unenumerated
// object that it never read is unknown to the schema.
function check(cls, obj) {
  const records = [];
  const wrap = (value, where) => {
    if (value === null || typeof value !== "object") return value;
    const rec = { where, value, read: new Set(), enumerated: false };
    records.push(rec);
    const cache = new Map();
    return new Proxy(value, {
      get(t, k, recv) {
        const v = Reflect.get(t, k, recv);
        if (typeof k !== "string") return v;
        rec.read.add(k);
        if (v === null || typeof v !== "object") return v;
        if (!cache.has(k)) cache.set(k, wrap(v, `${where}.${k}`));
        return cache.get(k);
      },
      has(t, k) {
        if (typeof k === "string") rec.read.add(k);
        return Reflect.has(t, k);
      },
      ownKeys(t) {
        rec.enumerated = true;
        return Reflect.ownKeys(t);
      },
    });
  };
  const errors = [];
  try {
    cls.prototype.validate.call(wrap(obj, ""));
  } catch (e) {
    if (!e || !Array.isArray(e.errors)) throw e;
    for (const x of e.errors) errors.push(`${x.instancePath || "(root)"}: ${x.message} ${JSON.stringify(x.params)}`);
  }
  for (const r of records) {
    if (Array.isArray(r.value) || r.enumerated || r.read.size === 0) continue;
    for (const k of Object.keys(r.value))
      if (!r.read.has(k)) errors.push(`${r.where.slice(1) || "(root)"}.${k}: unknown field`);
  }
  return errors;
}

async function validate(obj) {
  const [group, version] = obj.apiVersion.split("/");
  const file = path.join(MODELS, group, version || "", `${obj.kind}.js`);
  if (!fs.existsSync(file)) return [`no schema for ${obj.apiVersion} ${obj.kind}`];
  const cls = (await import(pathToFileURL(file).href))[obj.kind];
  return check(cls, obj);
}

const file = process.argv[2];
if (!file) {
  console.error("usage: gateway-validate.mjs RENDERED.yaml");
  process.exit(2);
}
let count = 0,
  bad = 0;
for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
  const obj = doc.toJS();
  if (!obj || typeof obj.apiVersion !== "string" || !obj.apiVersion.startsWith("gateway.networking.k8s.io/"))
    continue;
  count++;
  const errors = await validate(obj);
  const who = `${obj.kind}/${obj.metadata?.name}`;
  if (errors.length) {
    bad++;
    for (const e of errors) console.log(`${file}: ${who}: ${e}`);
  } else console.log(`${file}: ${who}: valid (${obj.apiVersion})`);
}
console.log(`gateway-validate: ${count} Gateway API object(s), ${bad} invalid`);
process.exit(bad > 0 || count === 0 ? 1 : 0);
