// The float yardstick of the runtime-spread rule (docs/architecture.md,
// "Two TFLite implementations as the yardstick"): a copy of the model with
// every float32 constant moved by one ulp, up and down in turn, and every
// float16 weight's DEQUANTIZE folded into such a float32 constant. TFLite run
// on the copy shows how far float rounding alone moves each output. Both
// runtimes here run XNNPACK's float kernels, so they often agree bit for bit
// and their distance says nothing about a network that amplifies rounding:
// ONNX Runtime's other summation order is the same kind of change as this one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tfliteToJson, jsonToTflite } from './tflite_rewrite.mjs';

const f32 = new Float32Array(1);
const bits = new Uint32Array(f32.buffer);

// v moved one float32 ulp (away from zero for even k, towards it for odd k);
// zeros and non-finite values stay.
function moved(v, k) {
  if (v === 0 || !Number.isFinite(v)) return v;
  f32[0] = v;
  bits[0] += k % 2 ? -1 : 1;
  return f32[0];
}

function halfToFloat(h) {
  const sign = h >> 15 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/**
 * The model `bytes` (readTfliteModel result `model`) with its float weights
 * moved one ulp, as .tflite bytes; null when it has none (nothing would move).
 */
export function ulpWeightsCopy(bytes, model) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'l2o-ulp-'));
  try {
    const file = path.join(dir, 'model.tflite');
    fs.writeFileSync(file, bytes);
    const json = tfliteToJson(file, model);
    const codes = json.operator_codes.map((c) => c.builtin_code ?? c.deprecated_builtin_code);
    const done = new Set();  // buffers moved already (tensors may share one)
    let count = 0;
    for (const g of json.subgraphs) {
      // float16 weights: DEQUANTIZE's output becomes a moved float32 constant.
      const folded = new Set();
      g.operators.forEach((op, i) => {
        if (codes[op.opcode_index] !== 'DEQUANTIZE') return;
        const from = g.tensors[op.inputs[0]];
        const data = json.buffers[from.buffer]?.data;
        if (from.type !== 'FLOAT16' || !data?.length) return;
        const values = new Float32Array(data.length / 2);
        for (let k = 0; k < values.length; k++) values[k] = moved(halfToFloat(data[2 * k] | (data[2 * k + 1] << 8)), k);
        json.buffers.push({ data: Array.from(new Uint8Array(values.buffer)) });
        g.tensors[op.outputs[0]].buffer = json.buffers.length - 1;
        done.add(json.buffers.length - 1);
        folded.add(i);
        count += values.length;
      });
      g.operators = g.operators.filter((_, i) => !folded.has(i));
      for (const t of g.tensors) {
        const buffer = json.buffers[t.buffer];
        if (t.type !== 'FLOAT32' || !buffer?.data?.length || done.has(t.buffer)) continue;
        done.add(t.buffer);
        const raw = new Uint8Array(buffer.data);
        const values = new Float32Array(raw.buffer, 0, raw.length >> 2);
        for (let k = 0; k < values.length; k++) values[k] = moved(values[k], k);
        buffer.data = Array.from(raw);
        count += values.length;
      }
    }
    if (!count) return null;
    const out = path.join(dir, 'moved.tflite');
    jsonToTflite(json, out);
    return new Uint8Array(fs.readFileSync(out));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
