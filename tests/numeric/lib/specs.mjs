// Which entries of a per-model table (specs.json, the expectations and
// known-fail files) apply to a model: shared by run.mjs and diverge.mjs.
import path from 'node:path';

const toSlash = (p) => p.split(path.sep).join('/');

// A key (from specs.json or the expectations file) matches a model when the
// model's path ends with "/<key>"; "*" in a key matches within one path part.
// A signature's model (NAME#KEY) has the path FILE#KEY.
export function keyMatcher(key) {
  const rx = key.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*');
  return new RegExp(`(^|/)${rx}$`);
}

export function matchingKeys(table, model) {
  const target = toSlash(model.file) + (model.signature ? `#${model.signature}` : '');
  return Object.keys(table)
    .filter((k) => !k.startsWith('//') && (keyMatcher(k).test(target) || keyMatcher(k).test(model.name)))
    .sort((a, b) => a.length - b.length);
}

// A signature's model takes the spec of its file, then its own (NAME#KEY).
export function specFor(specs, model) {
  const merged = {};
  const keys = model.signature
    ? [...matchingKeys(specs, { file: model.file, name: model.name.slice(0, model.name.lastIndexOf('#')) }),
      ...matchingKeys(specs, model)]
    : matchingKeys(specs, model);
  for (const k of keys) Object.assign(merged, specs[k]);
  return merged;
}
