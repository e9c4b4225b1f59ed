// Hybrid (dynamic-range quantized) FULLY_CONNECTED and CONV_2D: float32 input/output, int8
// weights (per-tensor and per-channel), float32 bias, asymmetric_quantize_inputs true/false;
// and TOCO-era uint8 weights (zero point 128), which TFLite's builtin hybrid kernels read as
// int8 with zero point 0 and XNNPACK does not take.
import { Model, qconst, tensor, rng, randInts, count } from '../lib/qmodel.mjs';
import * as H from '../ref/hybrid.mjs';
import * as L from '../ref/linear.mjs';
import { f32 } from '../ref/common.mjs';

function rows(r, B, K) {
  const out = [];
  for (let b = 0; b < B; b++) {
    const kind = b % 5;
    const row = [];
    for (let k = 0; k < K; k++) {
      let v = (r() * 2 - 1) * 3;
      if (kind === 1) v = Math.abs(v); // all positive: rmin = 0
      if (kind === 2) v = -Math.abs(v) * 0.1; // all negative, small
      if (kind === 3) v = Math.round(v * 8) / 8; // coarse values (exact ties in the quantization grid)
      if (kind === 4 && k % 3 === 0) v = 0;
      row.push(f32(v));
    }
    out.push(row);
  }
  return out;
}

// The weights as the kernels read them: uint8 bytes as int8, zero point 0.
const asInt8 = (v) => (v >= 128 ? v - 256 : v);

function hybridWeights(m, r, shape, perChannel, uint8) {
  const O = shape[0];
  const stored = uint8 ? randInts(r, count(shape), 0, 255) : randInts(r, count(shape), -127, 127);
  const ws = perChannel ? Array.from({ length: O }, () => f32(0.002 + 0.01 * r())) : [f32(0.0071)];
  const zero = uint8 ? 128 : 0;
  const tw = qconst(m, 'w', shape, uint8 ? 'uint8' : 'int8', stored, perChannel ? ws : ws[0],
    perChannel ? ws.map(() => zero) : zero, perChannel ? 0 : undefined);
  return { tw, ws, w: uint8 ? stored.map(asInt8) : stored };
}

// lead: keep_num_dims with an input of shape [...lead, K] (B rows).
function fcHybridCase({ name, B, K, O, perChannel, asym, bias = true, uint8 = false, lead = null, variant }) {
  const r = rng(name.length * 131 + B);
  const m = new Model(name, `hybrid FULLY_CONNECTED ${variant}`);
  const xShape = lead ? [...lead, K] : [B, K];
  const x = m.input('x', xShape, 'FLOAT32');
  const { tw, ws, w } = hybridWeights(m, r, [O, K], perChannel, uint8);
  const bv = Array.from({ length: O }, () => f32((r() * 2 - 1) * 0.5));
  const tb = bias ? m.f32('bias', [O], bv) : -1;
  const y = m.tensor('y', lead ? [...lead, O] : [B, O], 'FLOAT32');
  m.op('FULLY_CONNECTED', [x, tw, tb], [y], 'FullyConnectedOptions', { fused_activation_function: 'NONE', asymmetric_quantize_inputs: asym, keep_num_dims: !!lead });
  m.output(y);
  const X = rows(r, B, K);
  const wsc = (c) => (perChannel ? ws[c] : ws[0]);
  const bb = (c) => (bias ? bv[c] : 0);
  const refs = {
    xnnpackQd8: () => {
      const o = [];
      for (const row of X) {
        const p = H.xnnQd8Params(row); const q = H.xnnQuantizeRow(row, p);
        for (let c = 0; c < O; c++) { let acc = 0; for (let k = 0; k < K; k++) acc += (q[k] - p.zp) * w[c * K + k]; o.push(H.xnnQd8Output(acc, p.ds, wsc(c), bb(c))); }
      }
      return o;
    },
    tfliteSym: () => {
      const o = [];
      for (const row of X) {
        const p = H.tfliteSymParams(row); const q = H.tfliteSymQuantizeRow(row, p);
        for (let c = 0; c < O; c++) { let acc = 0; for (let k = 0; k < K; k++) acc += q[k] * w[c * K + k]; o.push(f32(bb(c) + f32(acc * f32(p.sf * wsc(c))))); }
      }
      return o;
    },
    tfliteAsym: () => {
      const o = [];
      for (const row of X) {
        const p = H.tfliteAsymParams(row); const q = H.tfliteAsymQuantizeRow(row, p);
        for (let c = 0; c < O; c++) { let acc = 0; for (let k = 0; k < K; k++) acc += (q[k] - p.zp) * w[c * K + k]; o.push(f32(bb(c) + f32(acc * f32(p.sf * wsc(c))))); }
      }
      return o;
    },
    tfliteSymScale0: () => {
      const o = [];
      for (const row of X) {
        const p = H.tfliteSymParams(row); const q = H.tfliteSymQuantizeRow(row, p);
        for (let c = 0; c < O; c++) { let acc = 0; for (let k = 0; k < K; k++) acc += q[k] * w[c * K + k]; o.push(f32(bb(c) + f32(acc * f32(p.sf * ws[0])))); }
      }
      return o;
    },
    tfliteAsymScale0: () => {
      const o = [];
      for (const row of X) {
        const p = H.tfliteAsymParams(row); const q = H.tfliteAsymQuantizeRow(row, p);
        for (let c = 0; c < O; c++) { let acc = 0; for (let k = 0; k < K; k++) acc += (q[k] - p.zp) * w[c * K + k]; o.push(f32(bb(c) + f32(acc * f32(p.sf * ws[0])))); }
      }
      return o;
    },
    float: () => {
      const o = [];
      for (const row of X) for (let c = 0; c < O; c++) { let s = 0; for (let k = 0; k < K; k++) s += row[k] * w[c * K + k] * wsc(c); o.push(f32(s + bb(c))); }
      return o;
    },
  };
  return { name, op: 'FULLY_CONNECTED (hybrid)', variant, model: m, inputs: [tensor('float32', xShape, X.flat())], refs };
}

function convHybridCase({ name, xShape, wShape, perChannel, asym, padding = 'SAME', uint8 = false, act = 'NONE', variant, stride = 1 }) {
  const r = rng(name.length * 7 + 3);
  const m = new Model(name, `hybrid CONV_2D ${variant}`);
  const x = m.input('x', xShape, 'FLOAT32');
  const O = wShape[0];
  const { tw, ws, w } = hybridWeights(m, r, wShape, perChannel, uint8);
  const bv = Array.from({ length: O }, () => f32((r() * 2 - 1) * 0.5));
  const tb = m.f32('bias', [O], bv);
  const oShape = L.conv2dShape(xShape, wShape, { padding, stride: [stride, stride] });
  const y = m.tensor('y', oShape, 'FLOAT32');
  m.op('CONV_2D', [x, tw, tb], [y], 'Conv2DOptions', { padding, stride_h: stride, stride_w: stride, dilation_h_factor: 1, dilation_w_factor: 1, fused_activation_function: act });
  const clampAct = (v) => (act === 'RELU6' ? Math.min(Math.max(v, 0), 6) : act === 'RELU' ? Math.max(v, 0) : v);
  m.output(y);
  const X = rows(r, xShape[0], count(xShape) / xShape[0]);
  const wsc = (c) => (perChannel ? ws[c] : ws[0]);
  const per = count(xShape) / xShape[0];
  const quantRef = (paramsFn, quantFn, symmetric) => () => {
    const o = [];
    for (let b = 0; b < xShape[0]; b++) {
      const p = paramsFn(X[b]); const q = quantFn(X[b], p);
      const zp = symmetric ? 0 : p.zp;
      const { acc, channel } = L.conv2dAcc(q, [1, ...xShape.slice(1)], zp, w, wShape, 0, null, { padding, stride: [stride, stride] });
      acc.forEach((a, i) => o.push(clampAct(symmetric || paramsFn === H.tfliteAsymParams ? f32(bv[channel[i]] + f32(a * f32(p.sf * wsc(channel[i])))) : H.xnnQd8Output(a, p.ds, wsc(channel[i]), bv[channel[i]]))));
    }
    return o;
  };
  // XNNPACK runs a 1x1 stride-1 convolution as a fully connected layer: one
  // quantization per pixel (a row of C values), as its FC does per row.
  const perPixel = () => {
    const C = xShape[3];
    const o = [];
    for (let b = 0; b < xShape[0]; b++) {
      for (let px = 0; px < per / C; px++) {
        const row = X[b].slice(px * C, (px + 1) * C);
        const p = H.xnnQd8Params(row); const q = H.xnnQuantizeRow(row, p);
        const { acc, channel } = L.conv2dAcc(q, [1, 1, 1, C], p.zp, w, wShape, 0, null, { padding: 'VALID' });
        acc.forEach((a, i) => o.push(clampAct(H.xnnQd8Output(a, p.ds, wsc(channel[i]), bv[channel[i]]))));
      }
    }
    return o;
  };
  const refs = {
    xnnpackQd8: quantRef(H.xnnQd8Params, H.xnnQuantizeRow, false),
    ...(wShape[1] === 1 && wShape[2] === 1 ? { xnnpackQd8PerPixel: perPixel } : {}),
    tfliteSym: quantRef(H.tfliteSymParams, H.tfliteSymQuantizeRow, true),
    tfliteAsym: quantRef(H.tfliteAsymParams, H.tfliteAsymQuantizeRow, false),
  };
  return { name, op: 'CONV_2D (hybrid)', variant, model: m, inputs: [tensor('float32', xShape, X.flat())], refs };
}

// Hybrid DEPTHWISE_CONV_2D: TFLite requires per-channel weight scales for it.
function depthwiseHybridCase({ name, xShape, kernel, multiplier, stride = [1, 1], padding = 'SAME', act = 'NONE', variant }) {
  const r = rng(name.length * 17 + 5);
  const m = new Model(name, `hybrid DEPTHWISE_CONV_2D ${variant}`);
  const x = m.input('x', xShape, 'FLOAT32');
  const O = xShape[3] * multiplier;
  const wShape = [1, kernel[0], kernel[1], O];
  const w = randInts(r, count(wShape), -127, 127);
  const ws = Array.from({ length: O }, () => f32(0.002 + 0.01 * r()));
  const tw = qconst(m, 'w', wShape, 'int8', w, ws, ws.map(() => 0), 3);
  const bv = Array.from({ length: O }, () => f32((r() * 2 - 1) * 0.5));
  const tb = m.f32('bias', [O], bv);
  const [n, h, wd] = xShape;
  const oh = padding === 'SAME' ? Math.ceil(h / stride[0]) : Math.floor((h - kernel[0]) / stride[0]) + 1;
  const ow = padding === 'SAME' ? Math.ceil(wd / stride[1]) : Math.floor((wd - kernel[1]) / stride[1]) + 1;
  const y = m.tensor('y', [n, oh, ow, O], 'FLOAT32');
  m.op('DEPTHWISE_CONV_2D', [x, tw, tb], [y], 'DepthwiseConv2DOptions', { padding, stride_h: stride[0], stride_w: stride[1], dilation_h_factor: 1, dilation_w_factor: 1, depth_multiplier: multiplier, fused_activation_function: act });
  m.output(y);
  const X = rows(r, n, count(xShape) / n);
  // TFLite's EvalHybridPerChannel: asymmetric per image; out = f32(f32(f32(acc) * sf) * s_w[c]) + bias[c].
  const refs = {
    tfliteAsym: () => {
      const o = [];
      for (let b = 0; b < n; b++) {
        const p = H.tfliteAsymParams(X[b]); const q = H.tfliteAsymQuantizeRow(X[b], p);
        const { acc, channel } = L.depthwiseAcc(q, [1, h, wd, xShape[3]], p.zp, w, wShape, 0, null, { stride, padding, multiplier });
        const [lo, hi] = act === 'RELU6' ? [0, 6] : act === 'RELU' ? [0, Infinity] : [-Infinity, Infinity];
        acc.forEach((a, i) => o.push(Math.min(hi, Math.max(lo, f32(f32(f32(a * p.sf) * ws[channel[i]]) + bv[channel[i]])))));
      }
      return o;
    },
  };
  return { name, op: 'DEPTHWISE_CONV_2D (hybrid)', variant, model: m, inputs: [tensor('float32', xShape, X.flat())], refs };
}

export function cases() {
  const out = [];
  for (const asym of [false, true]) {
    for (const perChannel of [false, true]) {
      const tag = `${perChannel ? 'pc' : 'pt'}_${asym ? 'asym' : 'sym'}`;
      out.push(fcHybridCase({ name: `hybrid_fc_${tag}`, B: 10, K: 37, O: 9, perChannel, asym, variant: `int8 ${perChannel ? 'per-channel' : 'per-tensor'} weights, asymmetric_quantize_inputs=${asym}` }));
      out.push(fcHybridCase({ name: `hybrid_fc_${tag}_keepdims`, B: 12, K: 29, O: 5, perChannel, asym, lead: [3, 4], variant: `keep_num_dims, input [3, 4, 29], ${perChannel ? 'per-channel' : 'per-tensor'}, asym=${asym}` }));
      out.push(fcHybridCase({ name: `hybrid_fc_${tag}_nobias`, B: 5, K: 300, O: 4, perChannel, asym, bias: false, variant: `no bias, K=300, ${perChannel ? 'per-channel' : 'per-tensor'}, asym=${asym}` }));
      out.push(convHybridCase({ name: `hybrid_conv_${tag}`, xShape: [5, 6, 7, 3], wShape: [4, 3, 2, 3], perChannel, asym, variant: `int8 ${perChannel ? 'per-channel' : 'per-tensor'} weights, asymmetric_quantize_inputs=${asym} (Conv2DOptions has no such field)` }));
    }
  }
  // 1x1 kernels, which XNNPACK may run as a fully connected layer (yolov8n_int8's
  // pointwise convolutions), stride 1 and 2.
  for (const perChannel of [false, true]) {
    const tag = perChannel ? 'pc' : 'pt';
    out.push(convHybridCase({ name: `hybrid_conv1x1_${tag}`, xShape: [2, 5, 6, 13], wShape: [7, 1, 1, 13], perChannel, asym: false, variant: `1x1 kernel, ${perChannel ? 'per-channel' : 'per-tensor'}` }));
    out.push(convHybridCase({ name: `hybrid_conv_${tag}_1x1_s2`, xShape: [2, 7, 6, 11], wShape: [5, 1, 1, 11], perChannel, asym: false, stride: 2, variant: `1x1 kernel, stride 2, ${perChannel ? 'per-channel' : 'per-tensor'}` }));
  }
  // A wide image (64 channels, 1x3 kernel) with RELU6, as a TCN license-plate reader has it.
  out.push(convHybridCase({ name: 'hybrid_conv_pc_wide_relu6', xShape: [1, 12, 17, 64], wShape: [32, 1, 3, 64], perChannel: true, asym: false, act: 'RELU6', variant: 'per-channel, 1x3 kernel, 64 input channels, RELU6' }));
  out.push(depthwiseHybridCase({ name: 'hybrid_dw', xShape: [3, 7, 6, 5], kernel: [3, 3], multiplier: 1, variant: 'per-channel int8, 3x3 SAME' }));
  out.push(depthwiseHybridCase({ name: 'hybrid_dw_m2_s2', xShape: [2, 9, 8, 3], kernel: [3, 2], multiplier: 2, stride: [2, 2], variant: 'depth multiplier 2, stride 2, 3x2 SAME' }));
  out.push(depthwiseHybridCase({ name: 'hybrid_dw_valid_relu6', xShape: [2, 8, 7, 4], kernel: [2, 3], multiplier: 1, padding: 'VALID', act: 'RELU6', variant: 'VALID, RELU6' }));
  out.push(fcHybridCase({ name: 'hybrid_fc_u8', B: 10, K: 41, O: 7, perChannel: false, asym: false, uint8: true, variant: 'uint8 weights (zero point 128), TFLite builtin kernel' }));
  out.push(fcHybridCase({ name: 'hybrid_fc_u8_nobias', B: 5, K: 260, O: 3, perChannel: false, asym: false, bias: false, uint8: true, variant: 'uint8 weights, no bias, K=260' }));
  out.push(convHybridCase({ name: 'hybrid_conv_u8', xShape: [3, 7, 5, 4], wShape: [6, 3, 3, 4], perChannel: false, asym: false, uint8: true, variant: 'uint8 weights (zero point 128), TFLite builtin kernel, 3x3 SAME' }));
  out.push(convHybridCase({ name: 'hybrid_conv_u8_valid', xShape: [2, 9, 6, 2], wShape: [5, 2, 3, 2], perChannel: false, asym: false, padding: 'VALID', uint8: true, variant: 'uint8 weights, VALID' }));
  return out;
}
