// Data movement with quantization parameters: CONCATENATION / PAD / RESHAPE / SPLIT /
// TRANSPOSE with input and output parameters that differ, and RESIZE_BILINEAR /
// RESIZE_NEAREST_NEIGHBOR.
import { Model, qin, qt, tensor, rng, randInts, LIMITS, count } from '../lib/qmodel.mjs';
import { f32, clamp, roundAway } from '../ref/common.mjs';
import * as R from '../ref/resize.mjs';

// uint8 CONCATENATION with scaling (reference_ops::ConcatenationWithScaling): per input with
// parameters different from the output's: scale = f32(s_i * f32(1/so)), bias = f32(-z_i * scale),
// out = clamp((int)round_away(f32(f32(q * scale) + bias)) + zo, 0, 255); equal parameters copy.
export function concatScaling(q, si, zi, so, zo, qmin, qmax) {
  if (si === so && zi === zo) return q;
  const scale = f32(f32(si) * f32(1 / f32(so)));
  const bias = f32(-zi * scale);
  return clamp(roundAway(f32(f32(q * scale) + bias)) + zo, qmin, qmax);
}

export function cases() {
  const out = [];
  const r = rng(8);
  for (const type of ['int8', 'uint8', 'int16']) {
    const [lo, hi] = LIMITS[type];
    const off = type === 'uint8' ? 128 : 0;
    const ps = type === 'int16' ? [[0.001, 0], [0.0013, 0], [0.0021, 0]] : [[0.05, off + 3], [0.02, off - 10], [0.07, off + 11]];
    const [po] = type === 'int16' ? [[0.0017, 0]] : [[0.043, off - 4]];
    // CONCATENATION of three inputs with different parameters along axis 2
    {
      const shapes = [[2, 3, 4, 5], [2, 3, 7, 5], [2, 3, 1, 5]];
      const m = new Model(`concat_${type}_scales`, 'CONCATENATION');
      const xs = shapes.map((s, i) => qin(m, `x${i}`, s, type, ps[i][0], ps[i][1]));
      const oShape = [2, 3, 12, 5];
      const y = qt(m, 'y', oShape, type, po[0], po[1]);
      m.op('CONCATENATION', xs, [y], 'ConcatenationOptions', { axis: 2, fused_activation_function: 'NONE' });
      m.output(y);
      const inputs = shapes.map((s) => tensor(type, s, randInts(r, count(s), lo, hi)));
      const ref = (scaled) => (ins) => {
        const o = [];
        for (let a = 0; a < 2 * 3; a++) ins.forEach((t, i) => { const inner = shapes[i][2] * 5; for (let j = 0; j < inner; j++) { const q = t.data[a * inner + j]; o.push(scaled ? concatScaling(q, ps[i][0], ps[i][1], po[0], po[1], lo, hi) : q); } });
        return o;
      };
      out.push({ name: `concat_${type}_scales`, op: 'CONCATENATION', variant: `${type}, 3 inputs with scales/zps ${ps.map((p) => p.join('/')).join(', ')} -> ${po.join('/')}`, model: m, inputs, refs: { tfliteScaling: ref(true), copy: ref(false) } });
    }
    // Every integer through each input: a ratio of exactly 0.5 (ties at every
    // odd q), an input with the output's parameters (copied), and an odd one.
    if (type === 'uint8') {
      const pt = [[0.02, 128], [0.04, 128], [0.013, 7]];
      const py = [0.04, 128];
      const m = new Model('concat_uint8_scales_ties', 'CONCATENATION');
      const xs = pt.map((p, i) => qin(m, `x${i}`, [1, 256], type, p[0], p[1]));
      const y = qt(m, 'y', [3, 256], type, py[0], py[1]);
      m.op('CONCATENATION', xs, [y], 'ConcatenationOptions', { axis: 0, fused_activation_function: 'NONE' });
      m.output(y);
      const all = Array.from({ length: 256 }, (_, q) => q);
      const ref = (scaled) => () => pt.flatMap((p) => all.map((q) => (scaled ? concatScaling(q, p[0], p[1], py[0], py[1], lo, hi) : q)));
      out.push({ name: 'concat_uint8_scales_ties', op: 'CONCATENATION', variant: 'uint8, every integer, ratio 0.5 (ties), one input with the output parameters', model: m, inputs: pt.map(() => tensor(type, [1, 256], all)), refs: { tfliteScaling: ref(true), copy: ref(false) } });
    }
    // PAD, RESHAPE, TRANSPOSE, SPLIT with output parameters different from the input's
    const x = randInts(r, 2 * 3 * 4 * 5, lo, hi);
    const [sx, zx] = ps[0];
    const requant = (q) => { // what a requantizing kernel would compute (round half away, float)
      const v = roundAway((q - zx) * f32(sx) / f32(po[0])) + po[1];
      return clamp(v, lo, hi);
    };
    for (const op of ['PAD', 'RESHAPE', 'TRANSPOSE']) {
      const m = new Model(`${op.toLowerCase()}_${type}_params`, op);
      const tx = qin(m, 'x', [2, 3, 4, 5], type, sx, zx);
      let y;
      let refs;
      if (op === 'PAD') {
        const p = m.constant('paddings', [4, 2], 'INT32', [0, 0, 1, 0, 0, 2, 0, 0]);
        y = qt(m, 'y', [2, 4, 6, 5], type, po[0], po[1]);
        m.op('PAD', [tx, p], [y], 'PadOptions', {});
        const padded = (f, padv) => () => { const o = []; for (let a = 0; a < 2; a++) for (let b = 0; b < 4; b++) for (let c = 0; c < 6; c++) for (let d = 0; d < 5; d++) o.push(b < 1 || c >= 4 ? padv : f(x[((a * 3 + b - 1) * 4 + c) * 5 + d])); return o; };
        refs = { copyPadOutZp: padded((q) => q, po[1]), copyPadInZp: padded((q) => q, zx), requantPadOutZp: padded(requant, po[1]) };
      } else if (op === 'RESHAPE') {
        const s = m.constant('shape', [2], 'INT32', [6, 20]);
        y = qt(m, 'y', [6, 20], type, po[0], po[1]);
        m.op('RESHAPE', [tx, s], [y], 'ReshapeOptions', { new_shape: [6, 20] });
        refs = { copy: () => x, requant: () => x.map(requant) };
      } else {
        const p = m.constant('perm', [4], 'INT32', [0, 2, 3, 1]);
        y = qt(m, 'y', [2, 4, 5, 3], type, po[0], po[1]);
        m.op('TRANSPOSE', [tx, p], [y], 'TransposeOptions', {});
        const tr = (f) => () => { const o = []; for (let a = 0; a < 2; a++) for (let c = 0; c < 4; c++) for (let d = 0; d < 5; d++) for (let b = 0; b < 3; b++) o.push(f(x[((a * 3 + b) * 4 + c) * 5 + d])); return o; };
        refs = { copy: tr((q) => q), requant: tr(requant) };
      }
      m.output(y);
      out.push({ name: `${op.toLowerCase()}_${type}_params`, op, variant: `${type}, output scale/zp ${po.join('/')} != input ${sx}/${zx}`, model: m, inputs: [tensor(type, [2, 3, 4, 5], x)], refs });
    }
    {
      const m = new Model(`split_${type}_params`, 'SPLIT');
      const ax = m.constant('axis', [], 'INT32', [2]);
      const tx = qin(m, 'x', [2, 3, 4, 5], type, sx, zx);
      const y0 = qt(m, 'y0', [2, 3, 2, 5], type, po[0], po[1]);
      const y1 = qt(m, 'y1', [2, 3, 2, 5], type, po[0], po[1]);
      m.op('SPLIT', [ax, tx], [y0, y1], 'SplitOptions', { num_splits: 2 });
      m.output(y0, y1);
      const half = (f) => () => { const o = []; for (let a = 0; a < 6; a++) for (let c = 0; c < 2; c++) for (let d = 0; d < 5; d++) o.push(f(x[(a * 4 + c) * 5 + d])); return o; };
      out.push({ name: `split_${type}_params`, op: 'SPLIT', variant: `${type}, outputs with scale/zp ${po.join('/')} != input`, model: m, inputs: [tensor(type, [2, 3, 4, 5], x)], refs: { copy: half((q) => q), requant: half(requant) } });
    }
  }
  // RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR
  for (const type of ['int8', 'uint8', 'int16']) {
    const [lo, hi] = LIMITS[type];
    const z = type === 'uint8' ? 131 : type === 'int8' ? -3 : 0;
    const s = type === 'int16' ? 0.001 : 0.05;
    for (const [inHW, outHW] of [[[5, 7], [10, 14]], [[5, 7], [12, 9]], [[9, 11], [4, 5]], [[4, 4], [16, 16]], [[3, 5], [3, 5]]]) {
      for (const [ac, hp] of [[false, false], [true, false], [false, true]]) {
        for (const op of ['RESIZE_BILINEAR', 'RESIZE_NEAREST_NEIGHBOR']) {
          const name = `${op === 'RESIZE_BILINEAR' ? 'bilinear' : 'nearest'}_${type}_${inHW.join('x')}_to_${outHW.join('x')}${ac ? '_ac' : ''}${hp ? '_hp' : ''}`;
          const m = new Model(name, op);
          const xShape = [2, inHW[0], inHW[1], 3];
          const tx = qin(m, 'x', xShape, type, s, z);
          const size = m.constant('size', [2], 'INT32', outHW);
          const y = qt(m, 'y', [2, outHW[0], outHW[1], 3], type, s, z);
          m.op(op, [tx, size], [y], op === 'RESIZE_BILINEAR' ? 'ResizeBilinearOptions' : 'ResizeNearestNeighborOptions', { align_corners: ac, half_pixel_centers: hp });
          m.output(y);
          const xd = type === 'int16' ? randInts(r, count(xShape), -3000, 3000) : randInts(r, count(xShape), lo, hi);
          // many exact ties: small odd/even values
          for (let i = 0; i < xd.length; i += 2) xd[i] = (xd[i] % 7) + (type === 'uint8' ? 128 : 0);
          const refs = op === 'RESIZE_BILINEAR'
            ? { tfliteInteger: () => R.tfliteBilinearInteger(xd, xShape, outHW, ac, hp), tfliteFloat: () => R.tfliteBilinearFloat(xd, xShape, outHW, ac, hp, type), xnnpack: () => R.xnnBilinear(xd, xShape, outHW, ac, hp, lo, hi) }
            : { tflite: () => R.nearest(xd, xShape, outHW, ac, hp) };
          out.push({ name, op, variant: `${type}, ${inHW.join('x')} -> ${outHW.join('x')}, align_corners=${ac}, half_pixel_centers=${hp}`, model: m, inputs: [tensor(type, xShape, xd)], refs });
        }
      }
    }
  }
  return out;
}
