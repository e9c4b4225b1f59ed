// AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, SUM, REDUCE_MAX on quantized tensors.
import { Model, qin, qt, tensor, rng, randInts, LIMITS, count } from '../lib/qmodel.mjs';
import * as P from '../ref/pool.mjs';
import { actRange } from './elementwise.mjs';

function poolCase({ name, op, type, xShape, x, s, z, f, stride, padding, act = 'NONE', so, zo, variant }) {
  const m = new Model(name, `${op} ${variant}`);
  const tx = qin(m, 'x', xShape, type, s, z);
  const { shape } = P.poolWindows(x, xShape, f, stride, padding, () => 0);
  const y = qt(m, 'y', shape, type, so ?? s, zo ?? z);
  m.op(op, [tx], [y], 'Pool2DOptions', { padding, stride_h: stride[0], stride_w: stride[1], filter_height: f[0], filter_width: f[1], fused_activation_function: act });
  m.output(y);
  const [amin, amax] = actRange(act, type, s, z);
  const refs = {};
  if (op === 'AVERAGE_POOL_2D') {
    refs.tflite = () => P.poolWindows(x, xShape, f, stride, padding, (v) => Math.min(amax, Math.max(amin, P.tfliteAvg(v.reduce((a, b) => a + b, 0), v.length)))).out;
    refs.roundHalfEvenOfMean = () => P.poolWindows(x, xShape, f, stride, padding, (v) => { const q = v.reduce((a, b) => a + b, 0) / v.length; const r = Math.round(q); return Math.min(amax, Math.max(amin, (r - q === 0.5 && r % 2) ? r - 1 : r)); }).out;
  } else {
    refs.max = () => P.poolWindows(x, xShape, f, stride, padding, (v) => Math.min(amax, Math.max(amin, Math.max(...v)))).out;
  }
  let ties = 0;
  if (op === 'AVERAGE_POOL_2D') P.poolWindows(x, xShape, f, stride, padding, (v) => { const q = v.reduce((a, b) => a + b, 0) / v.length; if (Math.abs(q - Math.floor(q) - 0.5) === 0) ties++; return 0; });
  return { name, op, variant, model: m, inputs: [tensor(type, xShape, x)], refs, tieInfo: { exactTies: ties } };
}

function reduceCase({ name, op, type, xShape, x, axes, keepDims, sx, zx, so, zo, variant }) {
  const m = new Model(name, `${op} ${variant}`);
  const tx = qin(m, 'x', xShape, type, sx, zx);
  const ax = m.constant('axes', [axes.length], 'INT32', axes);
  const norm = axes.map((a) => (a < 0 ? a + xShape.length : a));
  const oShape = [];
  xShape.forEach((d, i) => (!norm.includes(i) ? oShape.push(d) : keepDims && oShape.push(1)));
  const y = qt(m, 'y', oShape, type, so, zo);
  m.op(op, [tx, ax], [y], 'ReducerOptions', { keep_dims: keepDims });
  m.output(y);
  const [qmin, qmax] = LIMITS[type];
  const groups = P.reduceGroups(x, xShape, axes);
  const refs = {};
  if (op === 'REDUCE_MAX') {
    refs.max = () => groups.map((g) => Math.max(...g));
  } else {
    const isSum = op === 'SUM';
    refs.tfliteRef = () => groups.map((g) => P.tfliteMeanRef(g, sx, zx, so, zo, qmin, qmax, isSum));
    refs.tfliteFloat = () => groups.map((g) => P.tfliteMeanOrSumFloat(g, sx, zx, so, zo, qmin, qmax, isSum));
    if (!isSum) refs.tfliteMean4D = () => groups.map((g) => P.tfliteMean4D(g, sx, zx, so, zo, qmin, qmax));
    refs.xnnpack = () => groups.map((g) => P.xnnMeanOrSum(g, sx, zx, so, zo, qmin, qmax, isSum));
    if (!isSum) {
      refs.xnnOldGavg = () => groups.map((g) => P.xnnOldGavgpool(g, sx, zx, so, zo, qmin, qmax));
      refs.oldIntMean4D = () => groups.map((g) => P.tfliteOldIntMean4D(g, sx, zx, so, zo, qmin, qmax));
      refs.oldMeanSame = () => groups.map((g) => P.tfliteOldMeanSame(g));
    } else {
      refs.oldSumWrap = () => groups.map((g) => P.tfliteOldSumWrap(g, type === 'int16' ? 16 : 8, type !== 'uint8'));
      refs.oldSumFloatWrap = () => groups.map((g) => P.tfliteOldSumFloatWrap(g, sx, zx, so, zo, type === 'int16' ? 16 : 8, type !== 'uint8'));
    }
  }
  return { name, op, variant, model: m, inputs: [tensor(type, xShape, x)], refs };
}

export function cases() {
  const out = [];
  const r = rng(5);
  for (const type of ['int8', 'uint8', 'int16']) {
    const [lo, hi] = LIMITS[type];
    const mid = type === 'uint8' ? 128 : 0;
    const xShape = [2, 9, 11, 5];
    const n = count(xShape);
    const small = randInts(r, n, mid - 6, mid + 6);
    const full = randInts(r, n, lo, hi);
    const z = type === 'int16' ? 0 : type === 'uint8' ? 131 : -3;
    for (const [f, st, pad] of [[[2, 2], [2, 2], 'VALID'], [[3, 3], [1, 1], 'SAME'], [[3, 2], [2, 1], 'SAME'], [[9, 11], [1, 1], 'VALID']]) {
      const tag = `${f.join('x')}_s${st.join('')}_${pad}`;
      out.push(poolCase({ name: `avgpool_${type}_${tag}_ties`, op: 'AVERAGE_POOL_2D', type, xShape, x: small, s: 0.05, z, f, stride: st, padding: pad, variant: `${type}, filter ${f}, stride ${st}, ${pad}, small values (ties)` }));
      out.push(poolCase({ name: `avgpool_${type}_${tag}_full`, op: 'AVERAGE_POOL_2D', type, xShape, x: full, s: 0.05, z, f, stride: st, padding: pad, variant: `${type}, filter ${f}, stride ${st}, ${pad}, full range` }));
    }
    out.push(poolCase({ name: `avgpool_${type}_relu6`, op: 'AVERAGE_POOL_2D', type, xShape, x: full, s: 0.05, z, f: [3, 3], stride: [1, 1], padding: 'SAME', act: 'RELU6', variant: `${type}, fused RELU6` }));
    out.push(poolCase({ name: `maxpool_${type}`, op: 'MAX_POOL_2D', type, xShape, x: full, s: 0.05, z, f: [3, 2], stride: [2, 1], padding: 'SAME', variant: `${type}, 3x2 SAME` }));
    out.push(poolCase({ name: `maxpool_${type}_relu`, op: 'MAX_POOL_2D', type, xShape, x: full, s: 0.05, z, f: [2, 2], stride: [2, 2], padding: 'VALID', act: 'RELU', variant: `${type}, fused RELU` }));
    // 6 / 12 = 0.5: RELU6's upper bound is a tie, which XNNPACK rounds to even and TFLite away from zero
    out.push(poolCase({ name: `maxpool_${type}_relu6_tie`, op: 'MAX_POOL_2D', type, xShape, x: full.map((v) => Math.max(lo, Math.min(hi, z + ((v - z) % 3)))), s: 12, z, f: [3, 3], stride: [1, 1], padding: 'SAME', act: 'RELU6', variant: `${type}, fused RELU6 whose bound 6/s is a tie` }));
    // reductions
    const zs = type === 'int16' ? [0, 0] : type === 'uint8' ? [131, 120] : [-3, 5];
    const rs = [[[1, 2], true, '4d_hw_keep'], [[1, 2], false, '4d_hw'], [[-1], false, 'last'], [[0, 3], true, 'n_c'], [[1], false, 'h']];
    for (const op of ['MEAN', 'SUM']) {
      for (const [axes, keep, tag] of rs) {
        for (const [sl, so] of [['same', 0.05], ['diff', op === 'SUM' ? 0.05 * 7.3 : 0.0371]]) {
          const zo = sl === 'same' ? zs[0] : zs[1];
          out.push(reduceCase({ name: `${op.toLowerCase()}_${type}_${tag}_${sl}_full`, op, type, xShape, x: full, axes, keepDims: keep, sx: 0.05, zx: zs[0], so, zo, variant: `${type}, axes ${axes}${keep ? ' keep_dims' : ''}, ${sl === 'same' ? 'same in/out params' : 'different scales/zero points'}, full range` }));
          out.push(reduceCase({ name: `${op.toLowerCase()}_${type}_${tag}_${sl}_ties`, op, type, xShape, x: small, axes, keepDims: keep, sx: 0.05, zx: zs[0], so: sl === 'same' ? 0.05 : op === 'SUM' ? 0.05 * 2 : 0.05 / 2, zo, variant: `${type}, axes ${axes}${keep ? ' keep_dims' : ''}, small values, ${sl === 'same' ? 'same params' : 'pot scale ratio'} (ties)` }));
        }
      }
    }
    // larger global average pooling (MEAN over H, W) cases
    const gShape = [3, 7, 9, 64];
    const gx = randInts(r, count(gShape), lo, hi);
    const gs = randInts(r, count(gShape), mid - 6, mid + 6);
    out.push(reduceCase({ name: `mean_${type}_gap_keep_diff_full`, op: 'MEAN', type, xShape: gShape, x: gx, axes: [1, 2], keepDims: true, sx: 0.05, zx: zs[0], so: 0.0371, zo: zs[1], variant: `${type}, [3,7,9,64] axes 1,2 keep_dims (global average pool), different params` }));
    out.push(reduceCase({ name: `mean_${type}_gap_keep_same_ties`, op: 'MEAN', type, xShape: gShape, x: gs, axes: [1, 2], keepDims: true, sx: 0.05, zx: zs[0], so: 0.05, zo: zs[0], variant: `${type}, global average pool, same params, small values` }));
    out.push(reduceCase({ name: `mean_${type}_gap_diff_full`, op: 'MEAN', type, xShape: gShape, x: gx, axes: [1, 2], keepDims: false, sx: 0.05, zx: zs[0], so: 0.0371, zo: zs[1], variant: `${type}, global average pool without keep_dims` }));
    // tie-heavy: reductions over 2 and 4 elements with scale ratio 1 and 1/2
    const tShape = [3, 2, 2, 40];
    const tx = randInts(r, count(tShape), lo, hi);
    for (const [axes, keep, tag] of [[[-2], false, 'n2'], [[1, 2], true, 'gap2x2']]) {
      out.push(reduceCase({ name: `mean_${type}_${tag}_ratio1`, op: 'MEAN', type, xShape: tShape, x: tx, axes, keepDims: keep, sx: 0.05, zx: zs[0], so: 0.05, zo: zs[1], variant: `${type}, mean of ${tag === 'n2' ? 2 : 4} elements, scale ratio 1, zero points ${zs[0]}/${zs[1]} (exact ties)` }));
      out.push(reduceCase({ name: `mean_${type}_${tag}_ratio_half`, op: 'MEAN', type, xShape: tShape, x: tx, axes, keepDims: keep, sx: 0.05, zx: zs[0], so: 0.1, zo: zs[1], variant: `${type}, mean of ${tag === 'n2' ? 2 : 4} elements, scale ratio 1/2 (exact ties)` }));
      out.push(reduceCase({ name: `sum_${type}_${tag}_ratio_half`, op: 'SUM', type, xShape: tShape, x: tx, axes, keepDims: keep, sx: 0.05, zx: zs[0], so: 0.1 * (tag === 'n2' ? 2 : 4), zo: zs[1], variant: `${type}, sum of ${tag === 'n2' ? 2 : 4} elements, ratio 1/(2N) (exact ties)` }));
    }
    out.push(reduceCase({ name: `reducemax_${type}`, op: 'REDUCE_MAX', type, xShape, x: full, axes: [1, 2], keepDims: true, sx: 0.05, zx: zs[0], so: 0.05, zo: zs[0], variant: `${type}, axes 1,2` }));
  }
  return out;
}
