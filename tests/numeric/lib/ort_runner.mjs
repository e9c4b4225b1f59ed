// ONNX side: onnxruntime-node on CPU at its default graph optimization level.

import os from 'node:os';
import { localRequire } from './wasm_loader.mjs';

let ort = null;

function getOrt() {
  if (!ort) {
    ort = localRequire('onnxruntime-node');
    ort.env.logLevel = 'error';
  }
  return ort;
}

// IEEE 754 binary16 bit patterns (Uint16Array) -> Float32Array.
function halfToFloat32(bits) {
  if (!(bits instanceof Uint16Array)) return Float32Array.from(bits); // already decoded
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) out[i] = sign * frac * 2 ** -24;
    else if (exp === 31) out[i] = frac ? NaN : sign * Infinity;
    else out[i] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return out;
}

const ORT_TYPES = new Set(['float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'bool']);

/**
 * Opens an ONNX model (`optimization`: ONNX Runtime's graph optimization
 * level, disabled|basic|extended|all). Returns {inputs: [{name, type, shape}], outputs: [...], run(feeds), release()}.
 * feeds: Map name -> host tensor (already in ONNX layout and type).
 */
export async function openOnnx(onnxBytes, { threads, optimization } = {}) {
  const o = getOrt();
  const options = { executionProviders: ['cpu'], logSeverityLevel: 3 };
  // Debugging aid: LITE2ONNX_ORT_OPT=disabled|basic|extended|all (default: ORT's default, all);
  // `optimization` (diverge.mjs) sets it for one session.
  const level = optimization ?? process.env.LITE2ONNX_ORT_OPT;
  if (level) options.graphOptimizationLevel = level;
  const n = threads ?? Math.max(1, Math.min(os.cpus().length, 4));
  options.intraOpNumThreads = n;
  options.interOpNumThreads = 1;
  const session = await o.InferenceSession.create(onnxBytes, options);
  const meta = (list, names) => names.map((name, i) => {
    const m = list && list[i];
    return { name, type: m && m.isTensor ? m.type : undefined, shape: m && m.isTensor ? m.shape : undefined };
  });
  return {
    inputs: meta(session.inputMetadata, session.inputNames),
    outputs: meta(session.outputMetadata, session.outputNames),
    async run(feeds) {
      const ortFeeds = {};
      for (const [name, t] of feeds) {
        if (!ORT_TYPES.has(t.type)) throw new Error(`cannot feed ${t.type} input "${name}" to onnxruntime`);
        ortFeeds[name] = new o.Tensor(t.type, t.data, t.shape);
      }
      const results = await session.run(ortFeeds);
      const out = new Map();
      for (const name of session.outputNames) {
        const v = results[name];
        if (!v || typeof v.dims === 'undefined') throw new Error(`onnxruntime output "${name}" is not a tensor`);
        let data = v.data;
        let type = v.type;
        if (type === 'bool' && !(data instanceof Uint8Array)) data = Uint8Array.from(data, (x) => (x ? 1 : 0));
        if (type === 'float16') {
          data = halfToFloat32(data);
          type = 'float32';
        }
        out.set(name, { type, shape: Array.from(v.dims, Number), data });
      }
      return out;
    },
    async release() {
      try { await session.release(); } catch { /* ignore */ }
    },
  };
}
