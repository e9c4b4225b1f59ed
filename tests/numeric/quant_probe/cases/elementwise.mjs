// ADD, SUB, MUL: int8 / uint8 (exhaustive over all 65536 input pairs, and broadcast shapes),
// int16 (random + extremes), fused activations, scales outside XNNPACK's limits.
import { Model, qin, qt, tensor, rng, randInts, allPairs, LIMITS, bcastIndex, bcastShape, count, fs } from '../lib/qmodel.mjs';
import * as T from '../ref/tflite.mjs';
import * as X from '../ref/xnnpack.mjs';
import { f32, clamp, roundAway } from '../ref/common.mjs';

const OPTS = { ADD: 'AddOptions', SUB: 'SubOptions', MUL: 'MulOptions' };

// Activation range of a fused activation on the output's quantized grid
// (CalculateActivationRangeQuantized: round-half-away of 0/6/-1/1 divided by the scale).
export function actRange(act, type, so, zo) {
  const [qmin, qmax] = LIMITS[type];
  const q = (x) => zo + roundAway(x / f32(so));
  if (act === 'RELU') return [Math.max(qmin, q(0)), qmax];
  if (act === 'RELU6') return [Math.max(qmin, q(0)), Math.min(qmax, q(6))];
  if (act === 'RELU_N1_TO_1') return [Math.max(qmin, q(-1)), Math.min(qmax, q(1))];
  return [qmin, qmax];
}
// XNNPACK's fused range (xnn_qs8_quantize / xnn_qu8_quantize of the float bounds 0 / 6):
// lrintf(clamp(f32(f32(x / so) + zo), qmin, qmax)) — the zero point is added in float, then RNE.
export function actRangeXnn(act, type, so, zo) {
  const [qmin, qmax] = LIMITS[type];
  const q = (x) => { const v = f32(f32(x / f32(so)) + zo); return Math.round(v) - (Math.round(v) - v === 0.5 && Math.round(v) % 2 ? 1 : 0); };
  const c = (v) => Math.min(qmax, Math.max(qmin, v));
  if (act === 'RELU') return [c(Math.max(qmin, q(0))), qmax];
  if (act === 'RELU6') return [c(Math.max(qmin, q(0))), c(Math.min(qmax, q(6)))];
  if (act === 'RELU_N1_TO_1') return [c(q(-1)), c(q(1))];
  return [qmin, qmax];
}

function binaryCase({ name, op, type, aShape, bShape, a, b, sa, za, sb, zb, so, zo, act = 'NONE', variant, int16pot }) {
  const m = new Model(name, `${op} ${variant}`);
  const ta = qin(m, 'a', aShape, type, sa, za);
  const tb = qin(m, 'b', bShape, type, sb, zb);
  const oShape = bcastShape(aShape, bShape);
  const y = qt(m, 'y', oShape, type, so, zo);
  const opts = { fused_activation_function: act };
  if (int16pot !== undefined && op !== 'MUL') opts.pot_scale_int16 = int16pot;
  m.op(op, [ta, tb], [y], OPTS[op], opts);
  m.output(y);
  const inputs = [tensor(type, aShape, a), tensor(type, bShape, b)];
  const n = count(oShape);
  const ia = bcastIndex(oShape, aShape);
  const ib = bcastIndex(oShape, bShape);
  const [tmin, tmax] = actRange(act, type, so, zo);
  const [xmin, xmax] = actRangeXnn(act, type, so, zo);
  const each = (f) => (ins) => {
    const A = ins[0].data; const B = ins[1].data;
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = f(A[ia(i)], B[ib(i)]);
    return out;
  };
  const refs = {};
  if (op === 'ADD' || op === 'SUB') {
    const ls = type === 'int16' ? 15 : 20;
    const tp = T.addParams(sa, sb, so, ls);
    refs.tflite = each((x1, x2) => T.addElement(x1, x2, tp, za, zb, zo, tmin, tmax, op === 'SUB'));
    if (int16pot) refs.tflitePot16 = each((x1, x2) => T.addPot16Element(x1, x2, sa, sb, so, op === 'SUB'));
    const xp = X.addParams(sa, op === 'SUB' ? -f32(sb) : sb, so);
    refs.xnnpack = each((x1, x2) => X.addElement(x1, x2, xp, za, zb, zo, xmin, xmax));
    // float reference: real result rounded half-even / half-away
    refs.exactRNE = each((x1, x2) => {
      const r = (f32(sa) * (x1 - za) + (op === 'SUB' ? -1 : 1) * f32(sb) * (x2 - zb)) / f32(so);
      return clamp(Math.round(r) - (Math.round(r) - r === 0.5 && Math.round(r) % 2 ? 1 : 0) + zo, tmin, tmax);
    });
  } else {
    const tp = T.mulParams(sa, sb, so);
    refs.tflite = each((x1, x2) => T.mulElement(x1, x2, tp, za, zb, zo, tmin, tmax));
    const xs = X.mulScale(sa, sb, so);
    refs.xnnpack = each((x1, x2) => X.mulElement(x1, x2, xs, za, zb, zo, xmin, xmax));
  }
  return { name, op, variant, model: m, inputs, refs };
}

export function cases() {
  const out = [];
  const r = rng(29);
  // Scale sets: [label, sa, sb, so] — 'pot': exact ratios (exact .5 ties in real arithmetic),
  // 'rand': generic, 'near': ratios one float32 ulp off a power of two.
  const scaleSets = {
    pot: [0.5, 0.25, 1.0],
    rand: [0.0173, 0.0311, 0.047],
    near: [f32(0.5 * (1 + 2 ** -22)), f32(0.75 * (1 - 2 ** -21)), 1.0],
    big: [0.9, 0.05, 0.0625],
  };
  const zps = {
    int8: [[3, -5, 1], [-128, 127, -128], [127, -128, 127]],
    uint8: [[131, 120, 128], [0, 255, 0], [255, 0, 255]],
  };
  for (const op of ['ADD', 'SUB', 'MUL']) {
    for (const type of ['int8', 'uint8']) {
      const [a, b] = allPairs(type);
      for (const [sl, [sa, sb, so0]] of Object.entries(scaleSets)) {
        for (const [zi, [za, zb, zo]] of zps[type].entries()) {
          if (zi > 0 && sl !== 'rand' && sl !== 'pot') continue;
          let so = so0;
          if (op === 'MUL') so = sl === 'pot' ? 0.25 : sl === 'rand' ? 0.0173 * 0.0311 * 37.3 : sl === 'near' ? 0.75 : 0.9 * 0.05 * 3;
          out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_${sl}_zp${zi}`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa, za, sb, zb, so, zo, variant: `${type}, same shape, scales ${sl}, zero points ${za}/${zb}/${zo}` }));
        }
      }
      // broadcast: scalar b (XNNPACK vaddc/vmulc), a row vector, a 4-D broadcast of odd dims
      const [lo, hi] = LIMITS[type];
      const z = zps[type][0];
      const so = op === 'MUL' ? 0.0173 * 0.0311 * 37.3 : 0.047;
      const A = randInts(r, 2 * 3 * 5 * 7 * 11, lo, hi);
      out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_bcast_scalar`, op, type, aShape: [2, 3, 5, 7, 11], bShape: [1], a: A, b: [randInts(r, 1, lo, hi)[0]], sa: 0.0173, za: z[0], sb: 0.0311, zb: z[1], so, zo: z[2], variant: `${type}, [2,3,5,7,11] op [1]` }));
      out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_bcast_4d`, op, type, aShape: [3, 1, 5, 256], bShape: [1, 7, 1, 256], a: randInts(r, 3 * 5 * 256, lo, hi), b: randInts(r, 7 * 256, lo, hi), sa: 0.0173, za: z[0], sb: 0.0311, zb: z[1], so, zo: z[2], variant: `${type}, [3,1,5,256] op [1,7,1,256]` }));
      out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_bcast_first`, op, type, aShape: [1, 1, 13], bShape: [5, 9, 13], a: randInts(r, 13, lo, hi), b: randInts(r, 5 * 9 * 13, lo, hi), sa: 0.0173, za: z[0], sb: 0.0311, zb: z[1], so, zo: z[2], variant: `${type}, [1,1,13] op [5,9,13]` }));
      // fused activations on the exhaustive set
      for (const act of ['RELU', 'RELU6']) {
        out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_${act.toLowerCase()}`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 0.0173 * 2, za: z[0], sb: 0.0311 * 2, zb: z[1], so: op === 'MUL' ? 0.0173 * 0.0311 * 50 : 0.047, zo: z[2], act, variant: `${type}, fused ${act}` }));
      }
      // scales XNNPACK refuses (input/output ratio >= 256 for ADD/SUB, product ratio < 2^-16 for MUL)
      if (op === 'MUL') {
        out.push(binaryCase({ name: `mul_${type}_xnn_refused`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 0.001, za: z[0], sb: 0.002, zb: z[1], so: 40, zo: z[2], variant: `${type}, product/output scale 5e-8 < 2^-16 (XNNPACK refuses)` }));
        // a multiplier shift of 32 or more: TFLite's int32 `1 << shift` is undefined behaviour (automl_video_traffic's LSTM MULs)
        out.push(binaryCase({ name: `mul_${type}_shift_ge32`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 0.0235, za: z[0], sb: 0.00390625, zb: z[1], so: 2.97e-35, zo: z[2], variant: `${type}, product/output scale 3e30 (multiplier shift 102 >= 32; XNNPACK refuses)` }));
      } else {
        out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_xnn_refused`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 3.0, za: z[0], sb: 0.0311, zb: z[1], so: 0.01, zo: z[2], variant: `${type}, input/output scale 300 >= 256 (XNNPACK refuses)` }));
        out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_xnn_refused_small`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 0.00041, za: z[0], sb: 0.0311, zb: z[1], so: 0.5, zo: z[2], variant: `${type}, input/output scale 8.2e-4 < 2^-10 (XNNPACK refuses)` }));
        out.push(binaryCase({ name: `${op.toLowerCase()}_${type}_xnn_refused_pot`, op, type, aShape: [16, 64, 64], bShape: [16, 64, 64], a, b, sa: 512, za: z[0], sb: 0.25, zb: z[1], so: 1, zo: z[2], variant: `${type}, pot scales, ratio 512 (XNNPACK refuses)` }));
      }
    }
    // int16 (symmetric)
    const r16 = rng(16);
    const n16 = 64 * 1024;
    const a16 = randInts(r16, n16, -32768, 32767);
    const b16 = randInts(r16, n16, -32768, 32767);
    for (let i = 0; i < 512; i++) { a16[i] = [-32768, 32767, 0, 1, -1][i % 5]; b16[i] = [-32768, 32767, 0, 1, -1][Math.floor(i / 5) % 5]; }
    const s16 = op === 'MUL' ? [[1 / 4096, 1 / 2048, 1 / 512, 'pot'], [0.00031, 0.00017, 0.00031 * 0.00017 * 40000, 'rand']] : [[1 / 4096, 1 / 2048, 1 / 1024, 'pot'], [0.00031, 0.00017, 0.00041, 'rand']];
    for (const [sa, sb, so, sl] of s16) {
      out.push(binaryCase({ name: `${op.toLowerCase()}_int16_${sl}`, op, type: 'int16', aShape: [16, 64, 64], bShape: [16, 64, 64], a: a16, b: b16, sa, za: 0, sb, zb: 0, so, zo: 0, variant: `int16 (zero points 0), scales ${sl}${op !== 'MUL' ? ', pot_scale_int16=false' : ''}`, int16pot: false }));
    }
    if (op !== 'MUL') {
      out.push(binaryCase({ name: `${op.toLowerCase()}_int16_pot_flag`, op, type: 'int16', aShape: [16, 64, 64], bShape: [16, 64, 64], a: a16, b: b16, sa: 1 / 2048, za: 0, sb: 1 / 4096, zb: 0, so: 1 / 2048, zo: 0, variant: 'int16, power-of-two scales, pot_scale_int16=true (saturating shift path)', int16pot: true }));
    }
  }
  return out;
}
