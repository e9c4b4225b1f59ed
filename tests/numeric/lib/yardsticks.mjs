// The yardsticks a whole-model failure is measured against (docs/architecture.md,
// "Two TFLite implementations as the yardstick"): the distance between the two
// TFLite runtimes, LiteRT.js's own distance with its float weights moved one
// ulp, and a lone runtime's sensitivity to itself. `runners` are the pipeline's
// {runTflite, runOnnx, makeInputSets}.
import { ulpWeightsCopy } from './ulp_weights.mjs';
import { dequantize, isFloatType, isIntegerType, typeRange } from './tensor.mjs';
import { withinRuntimeSpread, formatDistance, RUNTIME_SPREAD } from './compare.mjs';
import { compareAll, failureText, likeOnnx } from './judge.mjs';

// How a model's own TFLite outputs move when one input element moves by one
// step (integers +-1; floats 1/256 of the input's range), at `count`
// positions spread over each float, quantized or uint8 input. A deep quantized
// network fed noise can amplify a single one-step difference into many-step
// output differences; when TFLite breaks the tolerance against itself this
// way, a whole-model failure says nothing about the converter (run.mjs then
// accepts an expected "fail", whose ops corpus.sh checks one by one). Second
// probe below: the model's quantization scales moved by about two ulps.
export async function referenceSensitivity({ runTflite }, task, which, bytes, model, inputs, refOutputs, onnxOutputs, positions = 8) {
  let worst = null;
  // TFLite on changed inputs or model bytes, judged by the rule the ONNX
  // outputs were (dequantized where they are float); true when it breaks it.
  const breaks = async (modelBytes, modelInputs, label) => {
    const got = await runTflite(which, modelBytes, model, modelInputs);
    for (const t of model.compared ?? model.outputs) {
      const g = got.get(t.name);
      const o = onnxOutputs.get(t.name);
      if (g && o && t.quant && isFloatType(o.type) && isIntegerType(g.type)) got.set(t.name, dequantize(g, t.quant));
    }
    const cmp = compareAll(task, model, refOutputs, got, label);
    if (cmp.every((r) => r.ok)) return false;
    if (!worst) worst = failureText(cmp);
    return true;
  };
  // Float, quantized and uint8 (image) inputs; not indices or token ids.
  const targets = model.inputs.filter((t) => isFloatType(t.type) || t.type === 'uint8' || (isIntegerType(t.type) && t.quant));
  const count = targets.length ? positions : 0;
  let broken = 0;
  for (let p = 0; p < count; p++) {
    // The first invocation's inputs moved; a stateful model's later ones kept.
    const changed = inputs.map((m) => new Map(m));
    for (const t of targets) {
      const x = inputs[0].get(t.name);
      const data = x.data.slice();
      const i = Math.min(data.length - 1, Math.floor(((p + 0.5) / count) * data.length));
      if (isFloatType(t.type)) {
        let lo = Infinity;
        let hi = -Infinity;
        for (const v of x.data) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        data[i] += (hi > lo ? hi - lo : 1) / 256;
      } else {
        const [tlo, thi] = typeRange(t.type);
        data[i] = data[i] < thi ? data[i] + 1 : Math.max(tlo, data[i] - 1);
      }
      changed[0].set(t.name, { ...x, data });
    }
    if (await breaks(bytes, changed, 'perturbed')) broken++;
  }
  // The same model with every quantization scale multiplied by one factor
  // 1 +- 2^-22 or 1 +- 2^-21 (one or two float32 ulps; one factor for all, so
  // scales that must be equal stay equal): every requantization multiplier
  // moves by that much. A model whose outputs then break the tolerance is
  // decided below float32 precision, which no float or float-requantizing
  // runtime reproduces (yamnet in --quantization dequantize mode is one).
  let jitterBroken = 0;
  let jitterRefused = 0;
  const factors = model.tensors.some((t) => t.quant) ? [1 + 2 ** -22, 1 - 2 ** -22, 1 + 2 ** -21, 1 - 2 ** -21] : [];
  for (const factor of factors) {
    const copy = bytes.slice();
    const view = new DataView(copy.buffer, copy.byteOffset, copy.byteLength);
    for (const t of model.tensors) {
      if (!t.quant) continue;
      for (let i = 0; i < t.quant.scale.length; i++) {
        const at = t.quant.scaleAt + 4 * i;
        view.setFloat32(at, view.getFloat32(at, true) * factor, true);
      }
    }
    try {
      if (await breaks(copy, inputs, 'scales moved')) jitterBroken++;
    } catch (e) {
      // A kernel that requires an exact scale (TFLite's int8 LOGISTIC wants
      // 1/256) refuses the moved copy: that copy says nothing.
      if (!/cannot load the model|failed to prepare/i.test(String(e?.message ?? e))) throw e;
      jitterRefused++;
    }
  }
  return {
    broken: broken + jitterBroken, of: count, worst, jitterBroken, jitterOf: factors.length - jitterRefused, inputBroken: broken,
  };
}

// One input set under the runtime-spread rule: per output, the ONNX distance
// from LiteRT.js, LiteRT.js's from tfjs-tflite, and whether it passes (its
// tolerance, or every figure within max(1.5 x the runtimes', the tolerance's)).
// A float output may instead stay within 1.5 x LiteRT.js's own distance on
// the copy with its float weights moved one ulp (run.ulp, ulp_weights.mjs).
function spreadSet(task, model, run) {
  const rt = compareAll(task, model, run.ref, likeOnnx(model, run.other, run.onnx), 'tfjs-tflite');
  const ulp = run.ulp ? compareAll(task, model, run.ref, run.ulp, 'one-ulp weights') : null;
  const outputs = {};
  let ok = true;
  run.cmp.forEach((c, i) => {
    let within = c.ok ? { ok: true, limit: null } : withinRuntimeSpread(c.distance, rt[i].distance, c.allowed ?? {});
    let byUlp = false;
    if (!within.ok && ulp && c.mode === 'float') {
      const moved = withinRuntimeSpread(c.distance, ulp[i].distance, c.allowed ?? {});
      if (moved.ok) [within, byUlp] = [moved, true];
    }
    outputs[c.name] = {
      onnx: c.distance ?? null, runtimes: rt[i].distance ?? null, ulp: ulp?.[i].distance ?? null,
      tolerance: c.ok, ok: within.ok, limit: within.limit, byUlp,
    };
    if (!within.ok) ok = false;
  });
  return { ok, outputs };
}

// The runtime-spread rule: a whole-model output that breaks its tolerance
// passes when, on the random inputs and on smooth (image-like) ones, its
// distance from LiteRT.js is at most max(1.5 x tfjs-tflite's, the tolerance);
// a float output also when it is at most 1.5 x LiteRT.js's own distance on
// the copy with every float weight moved one ulp (computed only when needed).
// Returns {ok, measured, notes}; measured holds the figures of both input sets
// (run.mjs compares them with the known-fail list).
export async function runtimeSpread({ runTflite, runOnnx, makeInputSets }, task, bytes, model, onnxBytes, random) {
  let copy;
  const withUlp = async (run, inputs) => {
    const first = spreadSet(task, model, run);
    if (first.ok) return first;
    if (copy === undefined) {
      try { copy = ulpWeightsCopy(bytes, model); } catch { copy = null; }
    }
    if (!copy) return first;
    try {
      return spreadSet(task, model, { ...run, ulp: await runTflite('litert', copy, model, inputs) });
    } catch {
      return first;  // LiteRT.js refuses the copy: no yardstick
    }
  };
  const sets = { random: await withUlp(random, random.inputs) };
  const smoothInputs = makeInputSets(task, model, true);
  if (smoothInputs.smoothed > 0) {
    const ref = await runTflite('litert', bytes, model, smoothInputs);
    const other = await runTflite('tfjs', bytes, model, smoothInputs);
    const onnx = (await runOnnx(task, onnxBytes, model, smoothInputs, [])).outputs;
    sets.smooth = await withUlp({ ref, other, onnx, cmp: compareAll(task, model, ref, onnx, 'onnx') }, smoothInputs);
  }
  const notes = [];
  const measured = { reference: 'litert' };
  for (const [set, r] of Object.entries(sets)) {
    measured[set] = {};
    for (const [name, o] of Object.entries(r.outputs)) {
      measured[set][name] = { onnx: o.onnx, runtimes: o.runtimes };
      const verdict = o.tolerance ? 'within its tolerance'
        : o.byUlp ? `within ${RUNTIME_SPREAD} x LiteRT.js's own distance with its float weights moved one ulp`
          : o.ok ? `within ${RUNTIME_SPREAD} x the runtimes'` : `BEYOND ${RUNTIME_SPREAD} x the runtimes' and the tolerance`;
      const ulpText = o.ulp && !o.tolerance ? `; LiteRT.js with its float weights moved one ulp ${formatDistance(o.ulp)}` : '';
      notes.push(`${set} inputs, output "${name}": ONNX ${formatDistance(o.onnx)}; ` +
        `tfjs-tflite ${formatDistance(o.runtimes)} (vs LiteRT.js)${ulpText}: ${verdict}`);
    }
  }
  if (!sets.smooth) notes.push('no input can be made smooth: random inputs only');
  const byUlp = Object.values(sets).some((r) => Object.values(r.outputs).some((o) => o.byUlp));
  return { ok: Object.values(sets).every((r) => r.ok), measured, notes, byUlp };
}
