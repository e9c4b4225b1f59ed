// Integer accumulators of the linear ops (exact int32 sums, as every kernel computes them):
// acc[o] = bias[c] + sum (x - zx) * (w - zw[c]). Layouts are TFLite's (NHWC, OHWI, 1HWC).
// Each returns { acc: number[], channel: number[] } with the output channel of each element.

const windowOut = (size, k, stride, dil, padding) => {
  const ek = (k - 1) * dil + 1;
  return padding === 'SAME' ? Math.ceil(size / stride) : Math.floor((size - ek) / stride) + 1;
};
const padBefore = (size, k, stride, dil, out) => Math.max(0, Math.floor(((out - 1) * stride + (k - 1) * dil + 1 - size) / 2));

export function conv2dShape(xShape, wShape, { stride = [1, 1], dilation = [1, 1], padding = 'SAME' }) {
  const [n, h, w] = xShape;
  const [o, kh, kw] = wShape;
  return [n, windowOut(h, kh, stride[0], dilation[0], padding), windowOut(w, kw, stride[1], dilation[1], padding), o];
}

export function conv2dAcc(x, xShape, zx, w, wShape, zw, bias, { stride = [1, 1], dilation = [1, 1], padding = 'SAME' }) {
  const [n, h, wd, c] = xShape;
  const [o, kh, kw] = wShape;
  const [, oh, ow] = conv2dShape(xShape, wShape, { stride, dilation, padding });
  const pt = padBefore(h, kh, stride[0], dilation[0], oh);
  const pl = padBefore(wd, kw, stride[1], dilation[1], ow);
  const acc = [];
  const channel = [];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let oc = 0; oc < o; oc++) {
    let s = bias ? bias[oc] : 0;
    const zwc = Array.isArray(zw) ? zw[oc] : zw;
    for (let ky = 0; ky < kh; ky++) {
      const iy = y * stride[0] + ky * dilation[0] - pt;
      if (iy < 0 || iy >= h) continue;
      for (let kx = 0; kx < kw; kx++) {
        const ix = xx * stride[1] + kx * dilation[1] - pl;
        if (ix < 0 || ix >= wd) continue;
        for (let ic = 0; ic < c; ic++) {
          s += (x[((b * h + iy) * wd + ix) * c + ic] - zx) * (w[((oc * kh + ky) * kw + kx) * c + ic] - zwc);
        }
      }
    }
    acc.push(s);
    channel.push(oc);
  }
  return { acc, channel, shape: [n, oh, ow, o] };
}

export function depthwiseAcc(x, xShape, zx, w, wShape, zw, bias, { stride = [1, 1], dilation = [1, 1], padding = 'SAME', multiplier = 1 }) {
  const [n, h, wd, c] = xShape;
  const [, kh, kw, oc] = wShape;
  const oh = windowOut(h, kh, stride[0], dilation[0], padding);
  const ow = windowOut(wd, kw, stride[1], dilation[1], padding);
  const pt = padBefore(h, kh, stride[0], dilation[0], oh);
  const pl = padBefore(wd, kw, stride[1], dilation[1], ow);
  const acc = [];
  const channel = [];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let o = 0; o < oc; o++) {
    const ic = Math.floor(o / multiplier);
    let s = bias ? bias[o] : 0;
    const zwc = Array.isArray(zw) ? zw[o] : zw;
    for (let ky = 0; ky < kh; ky++) {
      const iy = y * stride[0] + ky * dilation[0] - pt;
      if (iy < 0 || iy >= h) continue;
      for (let kx = 0; kx < kw; kx++) {
        const ix = xx * stride[1] + kx * dilation[1] - pl;
        if (ix < 0 || ix >= wd) continue;
        s += (x[((b * h + iy) * wd + ix) * c + ic] - zx) * (w[(ky * kw + kx) * oc + o] - zwc);
      }
    }
    acc.push(s);
    channel.push(o);
  }
  return { acc, channel, shape: [n, oh, ow, oc] };
}

// FULLY_CONNECTED: x [.., K] flattened to rows, w [O, K].
export function fcAcc(x, rows, k, zx, w, o, zw, bias) {
  const acc = [];
  const channel = [];
  for (let r = 0; r < rows; r++) for (let oc = 0; oc < o; oc++) {
    let s = bias ? bias[oc] : 0;
    const zwc = Array.isArray(zw) ? zw[oc] : zw;
    for (let i = 0; i < k; i++) s += (x[r * k + i] - zx) * (w[oc * k + i] - zwc);
    acc.push(s);
    channel.push(oc);
  }
  return { acc, channel };
}

// TRANSPOSE_CONV: x [N,H,W,C], w [O,KH,KW,C], output shape given; padding as TFLite computes it
// (total = max(0, (in-1)*stride + k - out), before = floor(total/2)).
export function transposeConvAcc(x, xShape, zx, w, wShape, zw, bias, outShape, stride) {
  const [n, h, wd, c] = xShape;
  const [o, kh, kw] = wShape;
  const [, oh, ow] = outShape;
  const pt = Math.floor(Math.max(0, (h - 1) * stride[0] + kh - oh) / 2);
  const pl = Math.floor(Math.max(0, (wd - 1) * stride[1] + kw - ow) / 2);
  const acc = new Array(n * oh * ow * o).fill(0);
  for (let b = 0; b < n; b++) for (let iy = 0; iy < h; iy++) for (let ix = 0; ix < wd; ix++) for (let ky = 0; ky < kh; ky++) for (let kx = 0; kx < kw; kx++) {
    const oy = iy * stride[0] + ky - pt;
    const ox = ix * stride[1] + kx - pl;
    if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
    for (let oc = 0; oc < o; oc++) {
      const zwc = Array.isArray(zw) ? zw[oc] : zw;
      let s = 0;
      for (let ic = 0; ic < c; ic++) s += (x[((b * h + iy) * wd + ix) * c + ic] - zx) * (w[((oc * kh + ky) * kw + kx) * c + ic] - zwc);
      acc[((b * oh + oy) * ow + ox) * o + oc] += s;
    }
  }
  const channel = acc.map((_, i) => i % o);
  if (bias) for (let i = 0; i < acc.length; i++) acc[i] += bias[i % o];
  return { acc, channel };
}

// BATCH_MATMUL: a [B, M, K] (adjX: [B, K, M]), b [B, K, N] (adjY: [B, N, K]), or b of
// one batch ([K, N], bBatches 1) broadcast over a's B.
export function batchMatmulAcc(a, b, B, M, K, N, za, zb, adjX = false, adjY = false, bBatches = B) {
  const acc = [];
  const channel = [];
  for (let bb = 0; bb < B; bb++) for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
    let s = 0;
    for (let k = 0; k < K; k++) {
      const av = adjX ? a[(bb * K + k) * M + i] : a[(bb * M + i) * K + k];
      const bb2 = bBatches === 1 ? 0 : bb;
      const bv = adjY ? b[(bb2 * N + j) * K + k] : b[(bb2 * K + k) * N + j];
      s += (av - za) * (bv - zb);
    }
    acc.push(s);
    channel.push(j);
  }
  return { acc, channel };
}
