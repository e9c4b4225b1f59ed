// Both TFLite runtimes ship Emscripten builds that their packages load with a
// browser <script> tag or, in a web worker, with importScripts(). Under Node we
// provide a minimal "worker" environment: `self`, `location` and an
// importScripts() that evaluates the Emscripten script as a CommonJS module
// and hands its factory back through the global the package expects.

import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// handlers keyed by a predicate on the script path
const scriptHandlers = [];

export function evaluateCommonJs(file) {
  const code = fs.readFileSync(file, 'utf8');
  const fn = vm.compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], {
    filename: file,
  });
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, require, mod, file, path.dirname(file));
  return mod.exports;
}

function importScriptsShim(...urls) {
  for (const url of urls) {
    let file = String(url);
    if (file.startsWith('file://')) file = new URL(file).pathname;
    const handler = scriptHandlers.find((h) => h.matches(file));
    if (!handler) throw new Error(`importScripts: no handler for ${file}`);
    handler.load(file);
  }
}

/** Installs the worker-like globals once; `handler` = {matches(file), load(file)}. */
export function installScriptHandler(handler) {
  if (globalThis.self === undefined) globalThis.self = globalThis;
  if (globalThis.location === undefined) globalThis.location = { href: '', origin: '' };
  if (globalThis.importScripts === undefined) globalThis.importScripts = importScriptsShim;
  scriptHandlers.push(handler);
}

export function packageDir(name) {
  return path.dirname(require.resolve(`${name}/package.json`));
}

export { require as localRequire };
