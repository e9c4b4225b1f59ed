// Unary and activation ops on quantized tensors: every 8-bit input value (and every int16 value).
import { Model, qin, qt, qconst, tensor, rng, randInts, allValues, allPairs, LIMITS, count } from '../lib/qmodel.mjs';
import * as A from '../ref/activations.mjs';
import { f32 } from '../ref/common.mjs';
import * as G from '../ref/gemmlowp16.mjs';

function unaryCase({ name, op, type, outType = type, sx, zx, so, zo, optionsType, options, variant, refs, x, shape }) {
  const m = new Model(name, `${op} ${variant}`);
  const xs = x ?? allValues(type);
  const shp = shape ?? (xs.length === 256 ? [4, 64] : xs.length === 65536 ? [256, 256] : [xs.length]);
  const t = type === 'float32' ? m.input('x', shp, 'FLOAT32') : qin(m, 'x', shp, type, sx, zx);
  const y = outType === 'float32' ? m.tensor('y', shp, 'FLOAT32') : qt(m, 'y', shp, outType, so, zo);
  m.op(op, [t], [y], optionsType, options);
  m.output(y);
  const fullRefs = {};
  for (const [k, f] of Object.entries(refs)) fullRefs[k] = (ins) => Array.from(ins[0].data, (v) => f(v));
  return { name, op, variant, model: m, inputs: [tensor(type, shp, xs)], refs: fullRefs };
}
const lutRef = (lut) => (q) => lut.get(q);

export function cases() {
  const out = [];
  const r = rng(3);
  // LOGISTIC / TANH / ELU, 8-bit
  for (const type of ['int8', 'uint8']) {
    const [qmin, qmax] = LIMITS[type];
    const off = type === 'uint8' ? 128 : 0;
    for (const [sx, zx] of [[0.05, 3 + off], [0.1234, -17 + off], [1 / 16, off], [0.02, (type === 'uint8' ? 255 : 127)]]) {
      const tag = `s${sx.toFixed(4)}_z${zx}`;
      {
        const so = 1 / 256; const zo = type === 'uint8' ? 0 : -128;
        out.push(unaryCase({ name: `logistic_${type}_${tag}`, op: 'LOGISTIC', type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp_in ${zx}`, refs: {
          tflite: lutRef(A.tfliteLut8(sx, zx, so, zo, A.tfliteLogisticFn, qmin, qmax)),
          xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, A.xnnSigmoidOp, qmin, qmax)),
          xnnOld: lutRef(A.xnnOldLut8(sx, zx, so, zo, A.xnnOldSigmoidFn, qmin, qmax)),
        } }));
      }
      {
        const so = 1 / 128; const zo = off;
        out.push(unaryCase({ name: `tanh_${type}_${tag}`, op: 'TANH', type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp_in ${zx}`, refs: {
          tflite: lutRef(A.tfliteLut8(sx, zx, so, zo, A.tfliteTanhFn, qmin, qmax)),
          xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, A.xnnTanhOp, qmin, qmax)),
          xnnOld: lutRef(A.xnnOldLut8(sx, zx, so, zo, A.tfliteTanhFn, qmin, qmax)),
        } }));
      }
      if (type === 'int8') {
        const so = 0.03; const zo = -90;
        out.push(unaryCase({ name: `elu_${type}_${tag}`, op: 'ELU', type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp_in ${zx}`, refs: {
          tflite: lutRef(A.tfliteLut8(sx, zx, so, zo, A.tfliteEluFn, qmin, qmax)),
          xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, A.xnnEluOp, qmin, qmax)),
          xnnOld: lutRef(A.xnnOldLut8(sx, zx, so, zo, A.tfliteEluFn, qmin, qmax)),
        } }));
      }
      // HARD_SWISH
      for (const [so, zo] of [[sx * 0.75, -20 + off], [0.0371, -128 + off]]) {
        const p = A.hardSwishParams(sx, so);
        out.push(unaryCase({ name: `hardswish_${type}_${tag}_so${so.toFixed(4)}`, op: 'HARD_SWISH', type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp_in ${zx}, s_out ${so}`, refs: {
          tflite: (q) => A.tfliteHardSwish(q, p, zx, zo, qmin, qmax),
          xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, (x) => f32(f32(x / 6) * Math.max(Math.min(f32(x + 3), 6), 0)), qmin, qmax)),
        } }));
      }
      // LEAKY_RELU
      for (const alpha of [0.2, 0.1, 0.5, 1.7]) {
        const so = f32(sx * 0.83); const zo = off + 5;
        out.push(unaryCase({ name: `leakyrelu_${type}_${tag}_a${alpha}`, op: 'LEAKY_RELU', type, sx, zx, so, zo, optionsType: 'LeakyReluOptions', options: { alpha }, variant: `${type}, alpha ${alpha}, s_in ${sx}, s_out ${so}`, refs: {
          tflite: (q) => A.tfliteLeakyRelu(q, sx, zx, so, zo, alpha, qmin, qmax),
          xnnpack: (q) => A.xnnLeakyRelu(q, sx, zx, so, zo, alpha, qmin, qmax),
        } }));
      }
      out.push(unaryCase({ name: `leakyrelu_${type}_${tag}_ties`, op: 'LEAKY_RELU', type, sx, zx, so: sx * 2, zo: off, optionsType: 'LeakyReluOptions', options: { alpha: 0.25 }, variant: `${type}, alpha 0.25, s_out = 2 s_in (ties)`, refs: {
        tflite: (q) => A.tfliteLeakyRelu(q, sx, zx, sx * 2, off, 0.25, qmin, qmax),
        xnnpack: (q) => A.xnnLeakyRelu(q, sx, zx, sx * 2, off, 0.25, qmin, qmax),
      } }));
      // alpha so small that |s_in/s_out * alpha| < 2^-8: XNNPACK refuses, the builtin kernel runs
      out.push(unaryCase({ name: `leakyrelu_${type}_${tag}_builtin`, op: 'LEAKY_RELU', type, sx, zx, so: f32(sx * 0.9), zo: off, optionsType: 'LeakyReluOptions', options: { alpha: 0.0021 }, variant: `${type}, alpha 0.0021 (XNNPACK refuses)`, refs: {
        tflite: (q) => A.tfliteLeakyRelu(q, sx, zx, f32(sx * 0.9), off, 0.0021, qmin, qmax),
        xnnpack: (q) => A.xnnLeakyRelu(q, sx, zx, f32(sx * 0.9), off, 0.0021, qmin, qmax),
      } }));
      out.push(unaryCase({ name: `leakyrelu_${type}_${tag}_builtin_ties`, op: 'LEAKY_RELU', type, sx, zx, so: f32(sx * 2), zo: off, optionsType: 'LeakyReluOptions', options: { alpha: 1 / 512 }, variant: `${type}, alpha 2^-9, s_out = 2 s_in (XNNPACK refuses; ties)`, refs: {
        tflite: (q) => A.tfliteLeakyRelu(q, sx, zx, f32(sx * 2), off, 1 / 512, qmin, qmax),
        xnnpack: (q) => A.xnnLeakyRelu(q, sx, zx, f32(sx * 2), off, 1 / 512, qmin, qmax),
      } }));
      // RELU family with requantization
      for (const [op, lo, hi] of [['RELU', 0, Infinity], ['RELU6', 0, 6], ['RELU_N1_TO_1', -1, 1]]) {
        const so = op === 'RELU' ? sx * 0.5 : op === 'RELU6' ? 6 / 250 : 1 / 120;
        const zo = op === 'RELU_N1_TO_1' ? off : off - 120;
        out.push(unaryCase({ name: `${op.toLowerCase()}_${type}_${tag}`, op, type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, s_out ${f32(so)}`, refs: {
          tflite: (q) => A.tfliteReluX(q, sx, zx, so, zo, lo, hi, qmin, qmax),
        } }));
      }
      // QUANTIZE requantize (same type) and DEQUANTIZE
      for (const ratio of [0.5, 0.37, 1.6]) {
        const so = f32(sx / ratio); const zo = off - 9;
        out.push(unaryCase({ name: `requantize_${type}_${tag}_r${ratio}`, op: 'QUANTIZE', type, sx, zx, so, zo, variant: `${type} -> ${type}, s_in/s_out ${ratio}`, refs: {
          tflite: (q) => A.tfliteRequantize(q, sx, zx, so, zo, qmin, qmax),
          xnnpack: (q) => A.xnnRequantize(q, sx, zx, so, zo, qmin, qmax),
        } }));
      }
      out.push(unaryCase({ name: `dequantize_${type}_${tag}`, op: 'DEQUANTIZE', type, outType: 'float32', sx, zx, variant: `${type} -> float32`, refs: { both: (q) => A.dequantize(q, sx, zx) } }));
    }
    // int8 <-> uint8
    const other = type === 'int8' ? 'uint8' : 'int8';
    const [omin, omax] = LIMITS[other];
    const zx = type === 'int8' ? -3 : 125;
    for (const [so, zo, tag] of [[0.05, zx + (type === 'int8' ? 128 : -128), 'same_scale'], [0.07, type === 'int8' ? 131 : -5, 'diff']]) {
      out.push(unaryCase({ name: `quantize_${type}_to_${other}_${tag}`, op: 'QUANTIZE', type, outType: other, sx: 0.05, zx, so, zo, variant: `${type} -> ${other}, ${tag}`, refs: {
        tflite: (q) => A.tfliteRequantize(q, 0.05, zx, so, zo, omin, omax),
        xnnpack: (q) => A.xnnRequantize(q, 0.05, zx, so, zo, omin, omax),
      } }));
    }
  }
  // float -> quantized: values on and near .5 ties of the grid
  const s = 0.0371;
  const xs = [];
  for (let k = -300; k <= 300; k++) { const v = (k + 0.5) * s; xs.push(f32(v), f32(v * (1 + 2 ** -22)), f32(v * (1 - 2 ** -22)), f32(k * s)); }
  for (const [type, zp] of [['int8', -7], ['uint8', 131], ['int16', 0]]) {
    const [qmin, qmax] = LIMITS[type];
    out.push(unaryCase({ name: `quantize_f32_to_${type}`, op: 'QUANTIZE', type: 'float32', outType: type, so: s, zo: zp, x: xs, shape: [xs.length / 4, 4], variant: `float32 -> ${type}, values on and 1 ulp around .5 ties`, refs: {
      tfliteDouble: (x) => A.tfliteQuantizeI8(x, s, zp, qmin, qmax),
      tfliteFloat: (x) => A.tfliteQuantizeRef(x, s, zp, qmin, qmax),
      xnnpack: (x) => A.xnnQuantize(x, s, zp, qmin, qmax),
    } }));
  }
  // int16
  const v16 = allValues('int16');
  for (const sx of [2 ** -12, 2 ** -11, 0.00037, 2 ** -10]) {
    out.push(unaryCase({ name: `logistic_int16_s${sx.toExponential(2)}`, op: 'LOGISTIC', type: 'int16', sx, zx: 0, so: 1 / 32768, zo: 0, x: v16, variant: `int16, s_in ${sx}`, refs: { tflite: (q) => A.tfliteLogistic16(q, sx), gemmlowp: (q) => G.gemmlowpLogistic16(q) } }));
    out.push(unaryCase({ name: `tanh_int16_s${sx.toExponential(2)}`, op: 'TANH', type: 'int16', sx, zx: 0, so: 1 / 32768, zo: 0, x: v16, variant: `int16, s_in ${sx}`, refs: { tflite: (q) => A.tfliteTanh16(q, sx), gemmlowp: (q) => G.gemmlowpTanh16(q), gemmlowpShift1: (q) => G.gemmlowpTanh16Shift1(q) } }));
  }
  out.push(unaryCase({ name: 'dequantize_int16', op: 'DEQUANTIZE', type: 'int16', outType: 'float32', sx: 0.00037, zx: 0, x: v16, variant: 'int16 -> float32', refs: { both: (q) => A.dequantize(q, 0.00037, 0) } }));
  for (const ratio of [0.5, 0.37]) out.push(unaryCase({ name: `requantize_int16_r${ratio}`, op: 'QUANTIZE', type: 'int16', sx: 0.00037, zx: 0, so: f32(0.00037 / ratio), zo: 0, x: v16, variant: `int16 -> int16, ratio ${ratio}`, refs: { tflite: (q) => A.tfliteRequantize(q, 0.00037, 0, f32(0.00037 / ratio), 0, -32768, 32767) } }));
  // int16 -> int32 (keyword_scrambled's output): every int16, two zero points; a ratio of 1/2 puts odd inputs on ties.
  for (const [sx, zx, so, zo] of [[1 / 65535, -32768, 1 / 32767, 0], [0.00037, 5, 0.00074, -1000]])
    out.push(unaryCase({ name: `requantize_int16_to_int32_z${zx}`, op: 'QUANTIZE', type: 'int16', outType: 'int32', sx, zx, so, zo, x: v16, variant: `int16 -> int32, s ${sx} -> ${so}`, refs: { tflite: (q) => A.tfliteRequantize(q, sx, zx, so, zo, -(2 ** 31), 2 ** 31 - 1) } }));
  out.push(unaryCase({ name: 'requantize_int16_to_int8', op: 'QUANTIZE', type: 'int16', outType: 'int8', sx: 0.00037, zx: 0, so: 0.05, zo: 3, x: v16, variant: 'int16 -> int8', refs: { tflite: (q) => A.tfliteRequantize(q, 0.00037, 0, 0.05, 3, -128, 127) } }));
  // LEAKY_RELU int16 (zero points 0): XNNPACK takes no int16; alpha negative
  // and exact ties (s_out = 2 s_in) tell the two builtin kernels apart.
  for (const [alpha, ratio] of [[0.2, 0.83], [0.25, 2], [-0.25, 2], [-0.3, 0.7], [1.7, 0.5]]) {
    const sx = 0.00037; const so = f32(sx * ratio);
    out.push(unaryCase({ name: `leakyrelu_int16_a${alpha}_r${ratio}`, op: 'LEAKY_RELU', type: 'int16', sx, zx: 0, so, zo: 0, x: v16, optionsType: 'LeakyReluOptions', options: { alpha }, variant: `int16, alpha ${alpha}, s_out = ${ratio} s_in`, refs: {
      tflite: (q) => A.tfliteLeakyRelu(q, sx, 0, so, 0, alpha, -32768, 32767),
      tfliteSigned: (q) => A.tfliteLeakyRelu16(q, sx, so, alpha),
    } }));
  }
  out.push(unaryCase({ name: 'requantize_int8_to_int16', op: 'QUANTIZE', type: 'int8', outType: 'int16', sx: 0.05, zx: 3, so: 0.00037, zo: 0, variant: 'int8 -> int16', refs: { tflite: (q) => A.tfliteRequantize(q, 0.05, 3, 0.00037, 0, -32768, 32767) } }));
  // RSQRT int8 (non-negative real inputs)
  for (const [sx, zx, so, zo] of [[0.05, -128, 0.04, -100], [0.013, -100, 0.3, -128]]) {
    const xsr = allValues('int8').filter((q) => q >= zx);
    out.push(unaryCase({ name: `rsqrt_int8_s${sx}`, op: 'RSQRT', type: 'int8', sx, zx, so, zo, x: xsr, variant: `int8, s_in ${sx}, s_out ${so}`, refs: { tflite: (q) => A.tfliteRsqrtI8(q, sx, zx, so, zo) } }));
  }
  return out;
}

function rowsCase({ name, op, type, outType = type, shape, x, sx, zx, so, zo, optionsType, options, variant, refRow }) {
  const m = new Model(name, `${op} ${variant}`);
  const t = qin(m, 'x', shape, type, sx, zx);
  const y = qt(m, 'y', shape, outType, so, zo);
  m.op(op, [t], [y], optionsType, options);
  m.output(y);
  const n = shape[shape.length - 1];
  const refs = {};
  for (const [k, f] of Object.entries(refRow)) refs[k] = (ins) => { const d = Array.from(ins[0].data); const o = []; for (let i = 0; i < d.length; i += n) o.push(...f(d.slice(i, i + n))); return o; };
  return { name, op, variant, model: m, inputs: [tensor(type, shape, x)], refs };
}

export function rowCases() {
  const out = [];
  const r = rng(17);
  for (const type of ['int8', 'uint8']) {
    const [lo, hi] = LIMITS[type];
    const zo = type === 'int8' ? -128 : 0;
    for (const [shape, sx, beta] of [[[3, 5, 7], 0.1, 1.0], [[2, 16], 0.0625, 1.0], [[4, 1000], 0.05, 1.0], [[6, 33], 0.2, 0.7], [[5, 11], 0.5, 1.0]]) {
      const x = randInts(r, count(shape), lo, hi);
      out.push(rowsCase({ name: `softmax_${type}_${shape.join('x')}_b${beta}`, op: 'SOFTMAX', type, shape, x, sx, zx: type === 'uint8' ? 128 : 0, so: 1 / 256, zo, optionsType: 'SoftmaxOptions', options: { beta }, variant: `${type}, rows of ${shape[shape.length - 1]}, s_in ${sx}, beta ${beta}`, refRow: {
        tfliteFloatTable: (row) => require_softmax(row, sx, beta, zo, type),
      } }));
    }
  }
  // 8-bit input into an int16 output (optimized_ops::Softmax<In, int16_t>: the same float table, RHAZ for
  // int16; Prepare checks no output parameters): keyword_scrambled's zero point -32768 and scale 1/65535, and 0.
  for (const [type, shape, sx, beta, so, zo] of [['int8', [6, 13], 0.07, 1.0, 1 / 65535, -32768], ['int8', [3, 1000], 0.05, 1.0, 1 / 32768, 0], ['uint8', [5, 9], 0.11, 0.8, 1 / 32768, 0]]) {
    const [lo, hi] = LIMITS[type];
    const x = randInts(r, count(shape), lo, hi);
    const zx = type === 'uint8' ? 131 : 2;
    out.push(rowsCase({ name: `softmax_to_int16_${type}_${shape.join('x')}`, op: 'SOFTMAX', type, outType: 'int16', shape, x, sx, zx, so, zo, optionsType: 'SoftmaxOptions', options: { beta }, variant: `${type} -> int16, rows of ${shape[shape.length - 1]}, s_out ${so}, zp_out ${zo}`, refRow: {
      tfliteFloatTable: (row) => A.tfliteSoftmaxRow(row, sx, beta, so, zo, -32768, 32767, false),
    } }));
  }
  for (const [shape, zx] of [[[5, 7], 0], [[3, 64], -3], [[4, 300], 5]]) {
    const x = randInts(r, count(shape), -128, 127);
    out.push(rowsCase({ name: `l2norm_int8_${shape.join('x')}`, op: 'L2_NORMALIZATION', type: 'int8', shape, x, sx: 0.05, zx, so: 1 / 128, zo: 0, optionsType: 'L2NormOptions', options: { fused_activation_function: 'NONE' }, variant: `int8, rows of ${shape[1]}, zx ${zx}`, refRow: { tflite: (row) => A.tfliteL2NormRow(row, zx) } }));
  }
  // The inverse square root's edges: one-element rows of every int8 value (sums of squares from 0 to
  // 65,025: every bit length up to 16, the shifts moved into the multiplier), rows within one step of the
  // zero point (sums 0, 1, 2, ...), and 9,000-element rows of extremes (sums past 2^29: divided by 4).
  const near = Array.from({ length: 12 * 5 }, (_, i) => 4 + [0, 0, 0, 1, -1][(i * 7 + Math.floor(i / 5)) % 5] * (i % 3 === 0 ? 1 : 0));
  const wide = Array.from({ length: 2 * 9000 }, (_, i) => (i % 97 === 0 ? randInts(r, 1, -128, 127)[0] : -128));
  for (const [name, shape, x, zx] of [['single', [256, 1], Array.from({ length: 256 }, (_, i) => i - 128), 3], ['near_zero', [12, 5], near, 4], ['wide', [2, 9000], wide, 127]]) {
    out.push(rowsCase({ name: `l2norm_int8_${name}_${shape.join('x')}`, op: 'L2_NORMALIZATION', type: 'int8', shape, x, sx: 0.05, zx, so: 1 / 128, zo: 0, optionsType: 'L2NormOptions', options: { fused_activation_function: 'NONE' }, variant: `int8, rows of ${shape[1]}, zx ${zx}`, refRow: { tflite: (row) => A.tfliteL2NormRow(row, zx) } }));
  }
  return out;
}
function require_softmax(row, sx, beta, zo, type) {
  const [qmin, qmax] = LIMITS[type];
  return A.tfliteSoftmaxRow(row, sx, beta, 1 / 256, zo, qmin, qmax, type === 'uint8');
}

export function binaryCases() {
  const out = [];
  // SQUARED_DIFFERENCE int8 exhaustive; PRELU with a constant per-channel alpha
  const [a, b] = allPairs('int8');
  for (const [s1, z1, s2, z2, so, zo] of [[0.05, 3, 0.07, -5, 0.05, -128], [0.1, 0, 0.1, 0, 0.32, -128], [0.02, -128, 0.03, 127, 0.0111, -100]]) {
    const name = `sqdiff_int8_${s1}_${s2}_${so}`;
    const m = new Model(name, 'SQUARED_DIFFERENCE int8');
    const ta = qin(m, 'a', [16, 64, 64], 'int8', s1, z1);
    const tb = qin(m, 'b', [16, 64, 64], 'int8', s2, z2);
    const y = qt(m, 'y', [16, 64, 64], 'int8', so, zo);
    m.op('SQUARED_DIFFERENCE', [ta, tb], [y]);
    m.output(y);
    out.push({ name, op: 'SQUARED_DIFFERENCE', variant: `int8, s ${s1}/${s2} -> ${so}`, model: m, inputs: [tensor('int8', [16, 64, 64], a), tensor('int8', [16, 64, 64], b)], refs: {
      tflite: (ins) => Array.from(ins[0].data, (v, i) => A.tfliteSquaredDifference(v, ins[1].data[i], s1, z1, s2, z2, so, zo, -128, 127)),
    } });
  }
  for (const type of ['int8', 'uint8']) {
    const [qmin, qmax] = LIMITS[type];
    const off = type === 'uint8' ? 128 : 0;
    const C = 5;
    const alpha = [off + 20, off - 30, off + 77, off + 1, off - 128 + (type === 'uint8' ? 0 : 0)];
    const sa = 0.01; const za = off;
    for (const [sx, zx, so, zo] of [[0.05, off + 3, 0.04, off - 7], [0.1, off, 0.05, off]]) {
      const name = `prelu_${type}_${sx}_${so}`;
      const m = new Model(name, 'PRELU');
      const shape = [2, 256 / 4, 2, C];
      const n = count(shape);
      const xs = Array.from({ length: n }, (_, i) => qmin + (i % 256));
      const tx = qin(m, 'x', shape, type, sx, zx);
      const ta = qconst(m, 'alpha', [1, 1, C], type, alpha, sa, za);
      const y = qt(m, 'y', shape, type, so, zo);
      m.op('PRELU', [tx, ta], [y]);
      m.output(y);
      out.push({ name, op: 'PRELU', variant: `${type}, alpha per channel (const [1,1,${C}]), s_in ${sx}, s_out ${so}`, model: m, inputs: [tensor(type, shape, xs)], refs: {
        tflite: (ins) => Array.from(ins[0].data, (v, i) => A.tflitePrelu(v, alpha[i % C], sx, zx, sa, za, so, zo, qmin, qmax)),
      } });
    }
  }
  return out;
}
// Many random (scale, zero point) pairs for the LUT-based ops, to find the rare entries where
// the float details (expf vs exp, RNE vs half-away, float vs double) differ.
export function lutSweep() {
  const out = [];
  const r = rng(99);
  for (const type of ['int8', 'uint8']) {
    const [qmin, qmax] = LIMITS[type];
    const off = type === 'uint8' ? 128 : 0;
    for (let i = 0; i < 40; i++) {
      const sx = f32(0.004 + 0.3 * r() ** 2);
      const zx = off + Math.floor(r() * 200) - 100;
      const tag = `${i}`;
      const zl = type === 'uint8' ? 0 : -128;
      out.push(unaryCase({ name: `sweep_logistic_${type}_${tag}`, op: 'LOGISTIC', type, sx, zx, so: 1 / 256, zo: zl, variant: `${type}, s_in ${sx}, zp ${zx}`, refs: {
        tflite: lutRef(A.tfliteLut8(sx, zx, 1 / 256, zl, A.tfliteLogisticFn, qmin, qmax)),
        xnnpack: lutRef(A.xnnLut8(sx, zx, 1 / 256, zl, A.xnnSigmoidOp, qmin, qmax)),
        xnnOld: lutRef(A.xnnOldLut8(sx, zx, 1 / 256, zl, A.xnnOldSigmoidFn, qmin, qmax)),
      } }));
      out.push(unaryCase({ name: `sweep_tanh_${type}_${tag}`, op: 'TANH', type, sx, zx, so: 1 / 128, zo: off, variant: `${type}, s_in ${sx}, zp ${zx}`, refs: {
        tflite: lutRef(A.tfliteLut8(sx, zx, 1 / 128, off, A.tfliteTanhFn, qmin, qmax)),
        xnnpack: lutRef(A.xnnLut8(sx, zx, 1 / 128, off, A.xnnTanhOp, qmin, qmax)),
        xnnOld: lutRef(A.xnnOldLut8(sx, zx, 1 / 128, off, A.tfliteTanhFn, qmin, qmax)),
      } }));
      if (type === 'int8') {
        const so = f32(sx * (0.5 + r())); const zo = Math.floor(r() * 100) - 50;
        out.push(unaryCase({ name: `sweep_elu_${type}_${tag}`, op: 'ELU', type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp ${zx}, s_out ${so}`, refs: {
          tflite: lutRef(A.tfliteLut8(sx, zx, so, zo, A.tfliteEluFn, qmin, qmax)),
          xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, A.xnnEluOp, qmin, qmax)),
          xnnOld: lutRef(A.xnnOldLut8(sx, zx, so, zo, A.tfliteEluFn, qmin, qmax)),
        } }));
      }
    }
  }
  return out;
}
// (scale, zero point) pairs where the three LUT formulas differ in at least one entry (found by
// building the three tables of ref/activations.mjs for 20000 random pairs and keeping those that differ).
export function lutDiscriminating() {
  const out = [];
  const L = {
    logistic: [['int8', 0.1847628802061081, 26], ['uint8', 0.12338805198669434, 31], ['int8', 0.04424818232655525, 68], ['int8', 0.027350571006536484, -111], ['uint8', 0.02123940736055374, 240], ['int8', 0.12338805198669434, -97]],
    tanh: [['uint8', 0.011433340609073639, 43], ['uint8', 0.039617110043764114, 113], ['int8', 0.02971283346414566, -39], ['uint8', 0.009757813066244125, 31], ['int8', 0.039617110043764114, -15], ['uint8', 0.02971283346414566, 89]],
  };
  for (const [op, list] of Object.entries(L)) {
    list.forEach(([type, sx, zx], i) => {
      const [qmin, qmax] = LIMITS[type];
      const off = type === 'uint8' ? 128 : 0;
      const [so, zo] = op === 'logistic' ? [1 / 256, type === 'uint8' ? 0 : -128] : [1 / 128, off];
      const [tf, xf, xo] = op === 'logistic' ? [A.tfliteLogisticFn, A.xnnSigmoidOp, A.xnnOldSigmoidFn] : [A.tfliteTanhFn, A.xnnTanhOp, A.tfliteTanhFn];
      out.push(unaryCase({ name: `lutdisc_${op}_${type}_${i}`, op: op.toUpperCase(), type, sx, zx, so, zo, variant: `${type}, s_in ${sx}, zp ${zx} (formulas differ)`, refs: {
        tflite: lutRef(A.tfliteLut8(sx, zx, so, zo, tf, qmin, qmax)),
        xnnpack: lutRef(A.xnnLut8(sx, zx, so, zo, xf, qmin, qmax)),
        xnnOld: lutRef(A.xnnOldLut8(sx, zx, so, zo, xo, qmin, qmax)),
      } }));
    });
  }
  return out;
}
export function allCases() { return [...cases(), ...rowCases(), ...binaryCases(), ...lutSweep(), ...lutDiscriminating()]; }
