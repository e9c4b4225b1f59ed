// Integer SVDF (reference_ops::EvalIntegerSVDF, tflite/kernels/internal/reference/svdf.h;
// the multipliers from svdf.cc Prepare).
import { f32, clamp } from './common.mjs';
import { quantizeMultiplier, mbqm, wrap32 } from './tflite.mjs';

// The two rescales: svdf.cc multiplies and divides the float scales in float
// (`scale->data[0]` are floats), then QuantizeMultiplier of that double.
// `doubleProducts` forms them in double instead (the candidate to rule out).
export function svdfMultipliers(p, doubleProducts = false) {
  const form = (a, b, c) => (doubleProducts ? (f32(a) * f32(b)) / f32(c) : f32(f32(f32(a) * f32(b)) / f32(c)));
  return {
    feature: quantizeMultiplier(form(p.sx, p.swf, p.sst)),
    time: quantizeMultiplier(form(p.sst, p.swt, p.so)),
  };
}

// One invocation: x [batch, input] int8, wf [filters, input] int8, wt
// [filters, memory] int16, bias [units] int32 (or null), state [batch,
// filters * memory] int16 (updated in place). Returns the int8 output [batch, units].
//   1. the state buffer moves one element towards its start (std::copy of the whole buffer);
//   2. each filter's newest column: clamp(MBQM(Σ wf (x - zx), feature), int16);
//   3. per filter Σ_m wt * state in int32 (wrapping), the rank's filters of a unit
//      summed and the bias added in int32 (wrapping);
//   4. clamp(MBQM(sum, time) + zo, int8). No activation beyond the int8 range.
export function tfliteSvdf(x, wf, wt, bias, state, p, { doubleProducts = false, saturate = false } = {}) {
  const { batch, input, filters, memory, rank } = p;
  const units = filters / rank;
  const m = svdfMultipliers(p, doubleProducts);
  // `saturate`: int32 sums that saturate instead of wrapping (the candidate to rule out).
  const w32 = saturate ? (v) => clamp(v, -2147483648, 2147483647) : wrap32;
  state.copyWithin(0, 1);
  for (let b = 0; b < batch; b++) {
    for (let f = 0; f < filters; f++) {
      let dot = 0;
      for (let i = 0; i < input; i++) dot += wf[f * input + i] * (x[b * input + i] - p.zx);
      state[(b * filters + f) * memory + memory - 1] = clamp(mbqm(dot, ...m.feature), -32768, 32767);
    }
  }
  const scratch = [];
  for (let b = 0; b < batch; b++) {
    for (let f = 0; f < filters; f++) {
      let dot = 0;
      for (let t = 0; t < memory; t++) dot = w32(dot + wt[f * memory + t] * state[(b * filters + f) * memory + t]);
      scratch.push(dot);
    }
  }
  const out = [];
  for (let i = 0; i < batch * units; i++) {
    let acc = 0;
    for (let r = 0; r < rank; r++) acc = w32(acc + scratch[i * rank + r]);
    if (bias) acc = w32(acc + bias[i % units]);
    out.push(clamp(mbqm(acc, ...m.time) + p.zo, -128, 127));
  }
  return out;
}
