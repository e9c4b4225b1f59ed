// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR on quantized tensors (the raw integers are
// interpolated; input and output share scale and zero point).
import { f32, rne, clamp } from './common.mjs';

// TFLite reference_ops::ResizeBilinearInteger (int8, int16; both kernel variants):
// scale_10 = ((1<<10) * in + out/2) / out (align_corners: ((1<<10)*(in-1) + (out-1)/2)/(out-1)),
// C integer division; pos = v * scale_10 (+ scale_10/2 - 512 with half_pixel_centers);
// lo = max(pos / 1024, 0) (C division, truncates toward 0), hi = min((pos + 1023) / 1024, in - 1);
// out = (sum of the four raw values * (1024 - fy)(1024 - fx) etc. + (sum > 0 ? 2^19 : -2^19)) / 2^20
// with fy = pos_y - 1024 * y0 (C division: round half away from zero).
export function tfliteBilinearInteger(x, [n, h, w, c], [oh, ow], ac, hp) {
  const sc = (i, o) => (ac && o > 1 ? Math.trunc((1024 * (i - 1) + Math.trunc((o - 1) / 2)) / (o - 1)) : Math.trunc((1024 * i + Math.trunc(o / 2)) / o));
  const hs = sc(h, oh); const ws = sc(w, ow);
  const interp = (v, s, size) => {
    const p = hp ? v * s + Math.trunc(s / 2) - 512 : v * s;
    return [p, Math.max(Math.trunc(p / 1024), 0), Math.min(Math.trunc((p + 1023) / 1024), size - 1)];
  };
  const out = [];
  const at = (b, y, xx, ch) => x[((b * h + y) * w + xx) * c + ch];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) {
    const [py, y0, y1] = interp(y, hs, h);
    for (let xx = 0; xx < ow; xx++) {
      const [px, x0, x1] = interp(xx, ws, w);
      const fy = py - 1024 * y0; const fx = px - 1024 * x0;
      for (let ch = 0; ch < c; ch++) {
        const s = at(b, y0, x0, ch) * (1024 - fy) * (1024 - fx) + at(b, y1, x0, ch) * fy * (1024 - fx)
          + at(b, y0, x1, ch) * (1024 - fy) * fx + at(b, y1, x1, ch) * fy * fx;
        out.push(Math.trunc((s + (s > 0 ? 2 ** 19 : -(2 ** 19))) / 2 ** 20));
      }
    }
  }
  return out;
}

// TFLite optimized ResizeBilinearGenericSmallChannel<uint8_t> (float): scale = in/out (float;
// align_corners (in-1)/(out-1)); pos = v*scale (half_pixel: (v + 0.5f)*scale - 0.5f);
// y0 = max(floor(pos), 0), y1 = min(ceil(pos), in-1); weights in float
// w = [(1-(py-y0))(1-(px-x0)), (1-(py-y0))(px-x0), (py-y0)(1-(px-x0)), (py-y0)(px-x0)];
// out = (uint8)(((((q00*w0 + q01*w1) + q10*w2) + q11*w3) + 0.5f)) (truncation), float32 ops.
export function tfliteBilinearFloat(x, [n, h, w, c], [oh, ow], ac, hp) {
  const sc = (i, o) => (ac && o > 1 ? f32(f32(i - 1) / (o - 1)) : f32(f32(i) / o));
  const hs = sc(h, oh); const ws = sc(w, ow);
  const interp = (v, s, size) => {
    const p = hp ? f32(f32(f32(v + 0.5) * s) - 0.5) : f32(v * s);
    return [p, Math.max(Math.floor(p), 0), Math.min(Math.ceil(p), size - 1)];
  };
  const out = [];
  const at = (b, y, xx, ch) => x[((b * h + y) * w + xx) * c + ch];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) {
    const [py, y0, y1] = interp(y, hs, h);
    const dy = f32(py - y0);
    for (let xx = 0; xx < ow; xx++) {
      const [px, x0, x1] = interp(xx, ws, w);
      const dx = f32(px - x0);
      const wts = [f32(f32(1 - dy) * f32(1 - dx)), f32(f32(1 - dy) * dx), f32(dy * f32(1 - dx)), f32(dy * dx)];
      for (let ch = 0; ch < c; ch++) {
        let s = f32(at(b, y0, x0, ch) * wts[0]);
        s = f32(s + f32(at(b, y0, x1, ch) * wts[1]));
        s = f32(s + f32(at(b, y1, x0, ch) * wts[2]));
        s = f32(s + f32(at(b, y1, x1, ch) * wts[3]));
        out.push(Math.trunc(f32(s + 0.5)));
      }
    }
  }
  return out;
}

// XNNPACK s8/u8 ibilinear (indirection q11 weights): scale = f32((in - adj) / (out - adj)),
// adj = align_corners && out != 1; legacy (no half-pixel) or align_corners:
// pos = min(f32(v * scale), in - 1); else pos = clamp(f32(v*scale + f32(0.5*scale - 0.5)), 0, in-1).
// top = trunc(pos), bottom = min(top+1, in-1); a = lrintf(f32(pos - top) * 2048);
// t = (tl << 11) + (tr - tl)*ax; b = (bl << 11) + (br - bl)*ax; out = ((t << 11) + (b - t)*ay + 2^21) >> 22.
export function xnnBilinear(x, [n, h, w, c], [oh, ow], ac, hp, qmin, qmax) {
  const adjH = ac && oh !== 1 ? 1 : 0; const adjW = ac && ow !== 1 ? 1 : 0;
  const hs = f32(f32(h - adjH) / f32(oh - adjH)); const ws = f32(f32(w - adjW) / f32(ow - adjW));
  const legacy = ac || !hp;
  const pos = (v, s, size) => {
    if (legacy) return Math.min(f32(v * s), size - 1);
    const off = f32(f32(0.5 * s) - 0.5);
    return Math.min(Math.max(f32(f32(v * s) + off), 0), size - 1);
  };
  const out = [];
  const at = (b, y, xx, ch) => x[((b * h + y) * w + xx) * c + ch];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) {
    const py = pos(y, hs, h); const t = Math.trunc(py); const bo = Math.min(t + 1, h - 1);
    const ay = rne(f32(f32(py - t) * 2048));
    for (let xx = 0; xx < ow; xx++) {
      const px = pos(xx, ws, w); const l = Math.trunc(px); const r = Math.min(l + 1, w - 1);
      const ax = rne(f32(f32(px - l) * 2048));
      for (let ch = 0; ch < c; ch++) {
        const tl = at(b, t, l, ch); const tr = at(b, t, r, ch); const bl = at(b, bo, l, ch); const br = at(b, bo, r, ch);
        const vt = tl * 2048 + (tr - tl) * ax;
        const vb = bl * 2048 + (br - bl) * ax;
        const acc = vt * 2048 + (vb - vt) * ay;
        out.push(clamp(Math.floor((acc + 2 ** 21) / 2 ** 22), qmin, qmax));
      }
    }
  }
  return out;
}

// RESIZE_NEAREST_NEIGHBOR (reference_ops::ResizeNearestNeighbor): scale = in/out (float;
// align_corners (in-1)/(out-1)); index = min(align_corners ? round_away(v*scale)
// : floor(half_pixel ? (v + 0.5)*scale : v*scale), in - 1), also max(.., 0) with half_pixel.
export function nearest(x, [n, h, w, c], [oh, ow], ac, hp) {
  const sc = (i, o) => (ac && o > 1 ? f32(f32(i - 1) / (o - 1)) : f32(f32(i) / o));
  const hs = sc(h, oh); const ws = sc(w, ow);
  const idx = (v, s, size) => {
    const off = hp ? 0.5 : 0;
    const p = f32(f32(v + off) * s);
    let i = Math.min(ac ? (p < 0 ? -Math.round(-p) : Math.round(p)) : Math.floor(p), size - 1);
    if (hp) i = Math.max(0, i);
    return i;
  };
  const out = [];
  for (let b = 0; b < n; b++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let ch = 0; ch < c; ch++) {
    out.push(x[((b * h + idx(y, hs, h)) * w + idx(xx, ws, w)) * c + ch]);
  }
  return out;
}
