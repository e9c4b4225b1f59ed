// The reference for MediaPipe's custom ops that no runtime here runs as
// MediaPipe's CPU kernels do: Landmarks2TransformMatrix,
// TransformTensorBilinear and TransformLandmarks (version 2; neither LiteRT.js
// nor tfjs-tflite registers them), and MaxPoolingWithArgmax2D /
// MaxUnpooling2D (LiteRT.js runs them only through XNNPACK, only with filter
// = stride, and with XNNPACK's indices: uint32 bits, column-major in the
// window). The kernels (mediapipe/util/tflite/operations/*.cc) written again
// as plain loops, in float32 where they compute in float. They run a small
// program a test model's spec states (the generator knows the op parameters):
//
//   "reference": "mediapipe",
//   "program": {
//     "constants": { "NAME": { "shape": [...], "values": [...] } },
//     "ops": [ { "op": "TransformLandmarks", "inputs": [...], "outputs": [...], "params": {...} } ]
//   }
//
// Tensor names are the model's; graph inputs come from the harness.

import { makeTensor, numElements } from './tensor.mjs';

const f = Math.fround;

function landmarksToMatrix([landmarks], p) {
  const d = landmarks.data;
  const xyz = (i) => [d[3 * i], d[3 * i + 1], d[3 * i + 2]];
  const [lx, ly] = xyz(p.left_rotation_idx);
  const [rx, ry] = xyz(p.right_rotation_idx);
  const r = f(f(p.target_rotation_radians) - f(Math.atan2(f(ry - ly), f(rx - lx))));
  const c = f(Math.cos(r)), s = f(Math.sin(r));
  const pairs = [];
  for (let i = 0; i + 1 < p.subset_idxs.length; i += 2) pairs.push(p.subset_idxs[i], p.subset_idxs[i + 1]);
  if (p.subset_idxs.length % 2) pairs.push(p.subset_idxs.at(-1), p.subset_idxs.at(-1));
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const i of pairs) {
    const [x, y] = xyz(i);
    const tx = f(f(c * x) - f(s * y)), ty = f(f(s * x) + f(c * y));
    minX = Math.min(minX, tx); maxX = Math.max(maxX, tx);
    minY = Math.min(minY, ty); maxY = Math.max(maxY, ty);
  }
  const width = f(maxX - minX), height = f(maxY - minY);
  const mx = f(f(minX + maxX) / 2), my = f(f(minY + maxY) / 2);
  // Back by -r: cos(-r) = c, sin(-r) = -s.
  const cx = f(f(c * mx) + f(s * my)), cy = f(f(-s * mx) + f(c * my));
  const sx = f(f(p.scale_x * width) / p.output_width), sy = f(f(p.scale_y * height) / p.output_height);
  const shx = -p.output_width / 2, shy = -p.output_height / 2;
  // shift(cx, cy) * rot(-r) * scale(sx, sy) * shift(shx, shy)
  const a = f(c * sx), b = f(s * sy), e = f(-s * sx), g = f(c * sy);
  const m = [
    a, b, 0, f(f(f(a * shx) + f(b * shy)) + cx),
    e, g, 0, f(f(f(e * shx) + f(g * shy)) + cy),
    0, 0, 1, 0,
    0, 0, 0, 1,
  ];
  return [makeTensor('float32', [1, 4, 4], Float32Array.from(m))];
}

function transformTensor([data, matrix], _p, [outShape]) {
  const [, h, w, ch] = data.shape;
  const [, oh, ow] = outShape;
  const m = matrix.data;
  const ax = m[0], bx = m[1], dx = f(m[3] + f(f(f(m[0] * 0.5) + f(m[1] * 0.5)) - 0.5));
  const ay = m[4], by = m[5], dy = f(m[7] + f(f(f(m[4] * 0.5) + f(m[5] * 0.5)) - 0.5));
  const out = new Float32Array(oh * ow * ch);
  const read = (y, x, z) => (y < 0 || x < 0 || y >= h || x >= w ? 0 : data.data[(y * w + x) * ch + z]);
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      const tx = f(f(f(ax * ox) + f(bx * oy)) + dx);
      const ty = f(f(f(ay * ox) + f(by * oy)) + dy);
      if (!(tx >= 0 && tx <= w - 1 && ty >= 0 && ty <= h - 1)) continue;  // 0
      const x0 = Math.floor(tx), y0 = Math.floor(ty);
      const right = f(tx - x0), lower = f(ty - y0);
      for (let z = 0; z < ch; z++) {
        const upperRow = f(f((1 - right) * read(y0, x0, z)) + f(right * read(y0, x0 + 1, z)));
        const lowerRow = f(f((1 - right) * read(y0 + 1, x0, z)) + f(right * read(y0 + 1, x0 + 1, z)));
        out[(oy * ow + ox) * ch + z] = f(f(lower * lowerRow) + f((1 - lower) * upperRow));
      }
    }
  }
  return [makeTensor('float32', [1, oh, ow, ch], out)];
}

function transformLandmarks([landmarks, matrix]) {
  const [, n, dims] = landmarks.shape;
  const m = matrix.data;
  const out = Float32Array.from(landmarks.data);
  for (let i = 0; i < n; i++) {
    const x = landmarks.data[i * dims], y = landmarks.data[i * dims + 1];
    out[i * dims] = f(f(f(m[0] * x) + f(m[1] * y)) + m[3]);
    out[i * dims + 1] = f(f(f(m[4] * x) + f(m[5] * y)) + m[7]);
  }
  return [makeTensor('float32', landmarks.shape, out)];
}

// TFLite's ComputePadding (dilation 1).
const computePadding = (stride, inSize, filter, outSize) => Math.max(Math.trunc(((outSize - 1) * stride + filter - inSize) / 2), 0);
const CLAMP = { 0: [-Infinity, Infinity], 1: [0, Infinity], 2: [-1, 1], 3: [0, 6] };

// params: { padding: 'SAME' | 'VALID', stride: [h, w], filter: [h, w], activation: TfLiteFusedActivation }
function maxPoolArgmax([input], p) {
  const [n, h, w, ch] = input.shape;
  const [sh, sw] = p.stride, [fh, fw] = p.filter;
  const size = (inp, k, s) => (p.padding === 'SAME' ? Math.trunc((inp + s - 1) / s) : Math.trunc((inp - k + s) / s));
  const oh = size(h, fh, sh), ow = size(w, fw, sw);
  const padH = computePadding(sh, h, fh, oh), padW = computePadding(sw, w, fw, ow);
  const [lo, hi] = CLAMP[p.activation ?? 0] ?? CLAMP[0];
  const values = new Float32Array(n * oh * ow * ch), indices = new Float32Array(n * oh * ow * ch);
  for (let b = 0; b < n; b++) {
    for (let oy = 0; oy < oh; oy++) {
      for (let ox = 0; ox < ow; ox++) {
        for (let c = 0; c < ch; c++) {
          const y0 = oy * sh - padH, x0 = ox * sw - padW;
          let max = -3.4028234663852886e38, maxX = 0, maxY = 0;
          for (let fy = Math.max(0, -y0); fy < Math.min(fh, h - y0); fy++) {
            for (let fx = Math.max(0, -x0); fx < Math.min(fw, w - x0); fx++) {
              const v = input.data[((b * h + y0 + fy) * w + x0 + fx) * ch + c];
              if (v > max) { max = v; maxX = fx; maxY = fy; }
            }
          }
          const at = ((b * oh + oy) * ow + ox) * ch + c;
          values[at] = Math.min(Math.max(max, lo), hi);
          indices[at] = f(maxY * fw + maxX + f(0.1));
        }
      }
    }
  }
  const shape = [n, oh, ow, ch];
  return [makeTensor('float32', shape, values), makeTensor('float32', shape, indices)];
}

function maxUnpool([input, indices], p) {
  const [n, h, w, ch] = input.shape;
  const [sh, sw] = p.stride, [fh, fw] = p.filter;
  const oh = h * fh, ow = w * fw;
  const padH = computePadding(sh, oh, fh, h), padW = computePadding(sw, ow, fw, w);
  const out = new Float32Array(n * oh * ow * ch);
  for (let b = 0; b < n; b++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        for (let c = 0; c < ch; c++) {
          const at = ((b * h + y) * w + x) * ch + c;
          const idx = Math.trunc(indices.data[at]);
          const oy = y * sh - padH + Math.trunc(idx / fw), ox = x * sw - padW + (idx % fw);
          if (oy < 0 || ox < 0 || oy >= oh || ox >= ow) throw new Error(`MaxUnpooling2D: index ${idx} lands outside the output`);
          out[((b * oh + oy) * ow + ox) * ch + c] = input.data[at];
        }
      }
    }
  }
  return [makeTensor('float32', [n, oh, ow, ch], out)];
}

const KERNELS = {
  MaxPoolingWithArgmax2D: maxPoolArgmax,
  MaxUnpooling2D: maxUnpool,
  Landmarks2TransformMatrix: landmarksToMatrix,
  TransformTensorBilinear: transformTensor,
  TransformLandmarks: transformLandmarks,
};

/**
 * Runs spec.program on `inputs` (Map name -> host tensor); returns the
 * model's outputs as a Map name -> host tensor, like the runtimes do.
 */
export function runMediaPipeKernels(program, model, inputs) {
  const values = new Map(inputs);
  for (const [name, { shape, values: v }] of Object.entries(program.constants ?? {})) {
    if (numElements(shape) !== v.length) throw new Error(`constant ${name}: ${v.length} values for shape [${shape}]`);
    values.set(name, makeTensor('float32', shape, Float32Array.from(v)));
  }
  const shapeOf = (name) => model.tensors.find((t) => t.name === name)?.shape;
  for (const op of program.ops) {
    const kernel = KERNELS[op.op];
    if (!kernel) throw new Error(`no reference kernel for ${op.op}`);
    const args = op.inputs.map((name) => {
      if (!values.has(name)) throw new Error(`${op.op}: no value for input "${name}"`);
      return values.get(name);
    });
    const results = kernel(args, op.params ?? {}, op.outputs.map(shapeOf));
    op.outputs.forEach((name, i) => values.set(name, results[i]));
  }
  const out = new Map();
  for (const t of model.outputs) {
    if (!values.has(t.name)) throw new Error(`the program leaves output "${t.name}" unset`);
    out.set(t.name, values.get(t.name));
  }
  return out;
}
