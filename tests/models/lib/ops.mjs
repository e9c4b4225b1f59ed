// Op builders of the per-operator test models (make_models.mjs): each adds
// one operator and its output tensor to a lib/model.mjs graph, computing the
// output shape the way TFLite does, and returns the output tensor index.

import { bcast, count } from './model.mjs';

// Name prefix for an op's parameter tensors: the op's output name, or the op
// kind when the output is just called 'output'.
export const scope = (name, kind) => (name === 'output' ? kind : name);

// Output size of a windowed op (conv, pool) along one axis.
export function windowOut(size, k, stride, dilation, padding) {
  const effective = (k - 1) * dilation + 1;
  return padding === 'SAME' ? Math.ceil(size / stride) : Math.floor((size - effective) / stride) + 1;
}

export function conv2d(g, x, name, { filters, kh, kw, stride = [1, 1], padding = 'SAME', dilation = [1, 1], act = 'NONE', bias = true, weight = undefined }) {
  const [n, h, w, c] = g.shape(x);
  const wt = weight ?? g.rand32(`${scope(name, 'conv')}/weights`, [filters, kh, kw, c], 1 / Math.sqrt(kh * kw * c));
  const b = bias ? g.rand32(`${scope(name, 'conv')}/bias`, [filters], 0.1) : -1;
  const y = g.tensor(name, [n, windowOut(h, kh, stride[0], dilation[0], padding), windowOut(w, kw, stride[1], dilation[1], padding), filters]);
  g.op('CONV_2D', [x, wt, b], [y], 'Conv2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1],
    dilation_h_factor: dilation[0], dilation_w_factor: dilation[1],
    fused_activation_function: act,
  });
  return y;
}

export function depthwise(g, x, name, { kh, kw, multiplier = 1, stride = [1, 1], padding = 'SAME', act = 'NONE' }) {
  const [n, h, w, c] = g.shape(x);
  const wt = g.rand32(`${scope(name, 'depthwise')}/weights`, [1, kh, kw, c * multiplier], 1 / Math.sqrt(kh * kw));
  const b = g.rand32(`${scope(name, 'depthwise')}/bias`, [c * multiplier], 0.1);
  const y = g.tensor(name, [n, windowOut(h, kh, stride[0], 1, padding), windowOut(w, kw, stride[1], 1, padding), c * multiplier]);
  g.op('DEPTHWISE_CONV_2D', [x, wt, b], [y], 'DepthwiseConv2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], depth_multiplier: multiplier,
    fused_activation_function: act,
  });
  return y;
}

export function pool(g, opName, x, name, { fh, fw, stride, padding, act = 'NONE' }) {
  const [n, h, w, c] = g.shape(x);
  const y = g.tensor(name, [n, windowOut(h, fh, stride[0], 1, padding), windowOut(w, fw, stride[1], 1, padding), c]);
  g.op(opName, [x], [y], 'Pool2DOptions', {
    padding, stride_h: stride[0], stride_w: stride[1], filter_height: fh, filter_width: fw,
    fused_activation_function: act,
  });
  return y;
}

export function transposeConv(g, x, name, { filters, kh, kw, stride, padding, bias = false }) {
  const [n, h, w, c] = g.shape(x);
  const outHW = padding === 'SAME'
    ? [h * stride[0], w * stride[1]]
    : [(h - 1) * stride[0] + kh, (w - 1) * stride[1] + kw];
  const outShape = [n, ...outHW, filters];
  const shapeT = g.i32(`${scope(name, 'transpose_conv')}/output_shape`, [4], outShape);
  const wt = g.rand32(`${scope(name, 'transpose_conv')}/weights`, [filters, kh, kw, c], 1 / Math.sqrt(kh * kw * c));
  const inputs = [shapeT, wt, x];
  if (bias) inputs.push(g.rand32(`${scope(name, 'transpose_conv')}/bias`, [filters], 0.1));
  const y = g.tensor(name, outShape);
  g.op('TRANSPOSE_CONV', inputs, [y], 'TransposeConvOptions', { padding, stride_h: stride[0], stride_w: stride[1] });
  return y;
}

export function fullyConnected(g, x, name, { units, bias = true, act = 'NONE', keepNumDims = false }) {
  const inShape = g.shape(x);
  const k = inShape[inShape.length - 1];
  const wt = g.rand32(`${scope(name, 'fc')}/weights`, [units, k], 1 / Math.sqrt(k));
  const b = bias ? g.rand32(`${scope(name, 'fc')}/bias`, [units], 0.1) : -1;
  const outShape = keepNumDims ? [...inShape.slice(0, -1), units] : [count(inShape) / k, units];
  const y = g.tensor(name, outShape);
  g.op('FULLY_CONNECTED', [x, wt, b], [y], 'FullyConnectedOptions', {
    fused_activation_function: act, keep_num_dims: keepNumDims,
  });
  return y;
}

export const BINARY_OPTIONS = { ADD: 'AddOptions', SUB: 'SubOptions', MUL: 'MulOptions', DIV: 'DivOptions' };

export function binary(g, opName, a, b, name, act = undefined) {
  const y = g.tensor(name, bcast(g.shape(a), g.shape(b)), g.type(a));
  const optionsType = BINARY_OPTIONS[opName];
  if (optionsType) g.op(opName, [a, b], [y], optionsType, { fused_activation_function: act ?? 'NONE' });
  else g.op(opName, [a, b], [y]);
  return y;
}

export function unary(g, opName, x, name, optionsType = undefined, options = undefined) {
  const y = g.tensor(name, g.shape(x), g.type(x));
  g.op(opName, [x], [y], optionsType, options);
  return y;
}

export function reshape(g, x, name, newShape, { shapeInput = true, option = false } = {}) {
  const inCount = count(g.shape(x));
  const known = newShape.filter((d) => d !== -1);
  const outShape = newShape.map((d) => (d === -1 ? inCount / count(known) : d));
  if (count(outShape) !== inCount) throw new Error(`${g.name}: bad reshape to ${newShape}`);
  const inputs = [x];
  if (shapeInput) inputs.push(g.i32(`${scope(name, 'reshape')}/shape`, [newShape.length], newShape));
  const y = g.tensor(name, outShape, g.type(x));
  if (option) g.op('RESHAPE', inputs, [y], 'ReshapeOptions', { new_shape: newShape });
  else g.op('RESHAPE', inputs, [y]);
  return y;
}

export function concat(g, xs, name, axis, act = 'NONE') {
  const shapes = xs.map((t) => g.shape(t));
  const rank = shapes[0].length;
  const ax = axis < 0 ? axis + rank : axis;
  const out = [...shapes[0]];
  out[ax] = shapes.reduce((s, sh) => s + sh[ax], 0);
  const y = g.tensor(name, out, g.type(xs[0]));
  g.op('CONCATENATION', xs, [y], 'ConcatenationOptions', { axis, fused_activation_function: act });
  return y;
}

export function mean(g, x, name, axes, keepDims) {
  const inShape = g.shape(x);
  const rank = inShape.length;
  const norm = axes.map((a) => (a < 0 ? a + rank : a));
  const out = [];
  inShape.forEach((d, i) => {
    if (!norm.includes(i)) out.push(d);
    else if (keepDims) out.push(1);
  });
  const axesT = g.i32(`${scope(name, 'mean')}/axes`, [axes.length], axes);
  const y = g.tensor(name, out);
  g.op('MEAN', [x, axesT], [y], 'ReducerOptions', { keep_dims: keepDims });
  return y;
}

export function padOp(g, opName, x, name, paddings, { value = undefined, mode = undefined } = {}) {
  const inShape = g.shape(x);
  const padT = g.i32(`${scope(name, 'pad')}/paddings`, [inShape.length, 2], paddings.flat());
  const out = inShape.map((d, i) => d + paddings[i][0] + paddings[i][1]);
  const y = g.tensor(name, out, g.type(x));
  if (opName === 'PAD') g.op('PAD', [x, padT], [y], 'PadOptions', {});
  else if (opName === 'PADV2') {
    const v = g.f32(`${scope(name, 'pad')}/constant_value`, [], [value]);
    g.op('PADV2', [x, padT, v], [y], 'PadV2Options', {});
  } else g.op('MIRROR_PAD', [x, padT], [y], 'MirrorPadOptions', { mode });
  return y;
}

export function transpose(g, x, name, perm) {
  const inShape = g.shape(x);
  const permT = g.i32(`${scope(name, 'transpose')}/perm`, [perm.length], perm);
  const y = g.tensor(name, perm.map((p) => inShape[p]), g.type(x));
  g.op('TRANSPOSE', [x, permT], [y], 'TransposeOptions', {});
  return y;
}

export function resize(g, opName, x, name, size, { alignCorners = false, halfPixelCenters = false }) {
  const [n, , , c] = g.shape(x);
  const sizeT = g.i32(`${scope(name, 'resize')}/size`, [2], size);
  const y = g.tensor(name, [n, size[0], size[1], c]);
  const optionsType = opName === 'RESIZE_BILINEAR' ? 'ResizeBilinearOptions' : 'ResizeNearestNeighborOptions';
  g.op(opName, [x, sizeT], [y], optionsType, { align_corners: alignCorners, half_pixel_centers: halfPixelCenters });
  return y;
}

export function softmax(g, x, name, beta = 1.0) {
  return unary(g, 'SOFTMAX', x, name, 'SoftmaxOptions', { beta });
}

export function split(g, x, name, axis, numSplits) {
  const inShape = g.shape(x);
  const ax = axis < 0 ? axis + inShape.length : axis;
  const axisT = g.i32(`${scope(name, 'split')}/axis`, [], [axis]);
  const part = [...inShape];
  part[ax] = inShape[ax] / numSplits;
  const ys = [];
  for (let i = 0; i < numSplits; i++) ys.push(g.tensor(`${name}_${i}`, part));
  g.op('SPLIT', [axisT, x], ys, 'SplitOptions', { num_splits: numSplits });
  return ys;
}

export function splitV(g, x, name, axis, sizes) {
  const inShape = g.shape(x);
  const ax = axis < 0 ? axis + inShape.length : axis;
  const known = sizes.filter((s) => s !== -1).reduce((a, b) => a + b, 0);
  const resolved = sizes.map((s) => (s === -1 ? inShape[ax] - known : s));
  const sizesT = g.i32(`${scope(name, 'split_v')}/size_splits`, [sizes.length], sizes);
  const axisT = g.i32(`${scope(name, 'split_v')}/axis`, [], [axis]);
  const ys = resolved.map((s, i) => {
    const sh = [...inShape];
    sh[ax] = s;
    return g.tensor(`${name}_${i}`, sh);
  });
  g.op('SPLIT_V', [x, sizesT, axisT], ys, 'SplitVOptions', { num_splits: sizes.length });
  return ys;
}

export function squeeze(g, x, name, dims) {
  const inShape = g.shape(x);
  const norm = dims.map((d) => (d < 0 ? d + inShape.length : d));
  const out = inShape.filter((d, i) => (dims.length ? !norm.includes(i) : d !== 1));
  const y = g.tensor(name, out, g.type(x));
  g.op('SQUEEZE', [x], [y], 'SqueezeOptions', dims.length ? { squeeze_dims: dims } : {});
  return y;
}

// Strided slice: the output shape is written out by hand in each model (and
// checked against the runtime by the verification run).
export function stridedSlice(g, x, name, { begin, end, strides, outShape, masks = {} }) {
  const n = begin.length;
  const bT = g.i32(`${scope(name, 'slice')}/begin`, [n], begin);
  const eT = g.i32(`${scope(name, 'slice')}/end`, [n], end);
  const sT = g.i32(`${scope(name, 'slice')}/strides`, [n], strides);
  const y = g.tensor(name, outShape, g.type(x));
  g.op('STRIDED_SLICE', [x, bT, eT, sT], [y], 'StridedSliceOptions', {
    begin_mask: masks.begin ?? 0, end_mask: masks.end ?? 0, ellipsis_mask: masks.ellipsis ?? 0,
    new_axis_mask: masks.newAxis ?? 0, shrink_axis_mask: masks.shrink ?? 0,
  });
  return y;
}

// Shape arithmetic, stacking, gathering, space/depth/batch

export function shapeOp(g, x, name, outType = 'INT32') {
  const y = g.tensor(name, [g.shape(x).length], outType);
  g.op('SHAPE', [x], [y], 'ShapeOptions', { out_type: outType });
  return y;
}

export function pack(g, xs, name, axis) {
  const inShape = g.shape(xs[0]);
  const ax = axis < 0 ? axis + inShape.length + 1 : axis;
  const out = [...inShape];
  out.splice(ax, 0, xs.length);
  const y = g.tensor(name, out, g.type(xs[0]));
  g.op('PACK', xs, [y], 'PackOptions', { values_count: xs.length, axis });
  return y;
}

export function unpack(g, x, name, axis) {
  const inShape = g.shape(x);
  const ax = axis < 0 ? axis + inShape.length : axis;
  const part = inShape.filter((d, i) => i !== ax);
  const ys = [];
  for (let i = 0; i < inShape[ax]; i++) ys.push(g.tensor(`${name}_${i}`, part, g.type(x)));
  g.op('UNPACK', [x], ys, 'UnpackOptions', { num: inShape[ax], axis });
  return ys;
}

export function gather(g, x, indices, name, axis) {
  const p = g.shape(x);
  const ax = axis < 0 ? axis + p.length : axis;
  const out = [...p.slice(0, ax), ...g.shape(indices), ...p.slice(ax + 1)];
  const y = g.tensor(name, out, g.type(x));
  g.op('GATHER', [x, indices], [y], 'GatherOptions', { axis, batch_dims: 0 });
  return y;
}

export function expandDims(g, x, name, axis) {
  const inShape = g.shape(x);
  const ax = axis < 0 ? axis + inShape.length + 1 : axis;
  const out = [...inShape];
  out.splice(ax, 0, 1);
  const axisT = g.i32(`${scope(name, 'expand_dims')}/axis`, [], [axis]);
  const y = g.tensor(name, out, g.type(x));
  g.op('EXPAND_DIMS', [x, axisT], [y], 'ExpandDimsOptions', {});
  return y;
}

export function fill(g, dims, value, name, outShape) {
  const y = g.tensor(name, outShape, g.type(value));
  g.op('FILL', [dims, value], [y], 'FillOptions', {});
  return y;
}

export function spaceToDepth(g, opName, x, name, block) {
  const [n, h, w, c] = g.shape(x);
  const out = opName === 'SPACE_TO_DEPTH'
    ? [n, h / block, w / block, c * block * block]
    : [n, h * block, w * block, c / (block * block)];
  const y = g.tensor(name, out, g.type(x));
  g.op(opName, [x], [y], opName === 'SPACE_TO_DEPTH' ? 'SpaceToDepthOptions' : 'DepthToSpaceOptions', { block_size: block });
  return y;
}

// paddings / crops: a constant [[top, bottom], [left, right]], or a tensor.
export function spaceToBatch(g, x, name, block, paddings, outShape = undefined) {
  const [n, h, w, c] = g.shape(x);
  const blockT = g.i32(`${scope(name, 'space_to_batch')}/block_shape`, [2], block);
  const padT = Array.isArray(paddings) ? g.i32(`${scope(name, 'space_to_batch')}/paddings`, [2, 2], paddings.flat()) : paddings;
  const pads = Array.isArray(paddings) ? paddings : [[0, 0], [0, 0]];
  const out = outShape ?? [n * block[0] * block[1], (h + pads[0][0] + pads[0][1]) / block[0], (w + pads[1][0] + pads[1][1]) / block[1], c];
  const y = g.tensor(name, out, g.type(x));
  g.op('SPACE_TO_BATCH_ND', [x, blockT, padT], [y], 'SpaceToBatchNDOptions', {});
  return y;
}

export function batchToSpace(g, x, name, block, crops, outShape = undefined) {
  const [n, h, w, c] = g.shape(x);
  const blockT = g.i32(`${scope(name, 'batch_to_space')}/block_shape`, [2], block);
  const cropT = Array.isArray(crops) ? g.i32(`${scope(name, 'batch_to_space')}/crops`, [2, 2], crops.flat()) : crops;
  const cr = Array.isArray(crops) ? crops : [[0, 0], [0, 0]];
  const out = outShape ?? [n / (block[0] * block[1]), h * block[0] - cr[0][0] - cr[0][1], w * block[1] - cr[1][0] - cr[1][1], c];
  const y = g.tensor(name, out, g.type(x));
  g.op('BATCH_TO_SPACE_ND', [x, blockT, cropT], [y], 'BatchToSpaceNDOptions', {});
  return y;
}

// TensorFlow's atrous convolution for TFLite: SPACE_TO_BATCH_ND -> VALID conv
// -> BATCH_TO_SPACE_ND, paddings and crops as required_space_to_batch_paddings
// computes them for a static input.
export function atrousPaddings(size, k, rate, same) {
  const total = same ? (k - 1) * rate : 0;
  const start = Math.floor(total / 2);
  const end = total - start;
  const extra = (rate - ((size + start + end) % rate)) % rate;
  return { pad: [start, end + extra], crop: [0, extra] };
}

export function atrousConv(g, x, name, { filters, k, rate, same, isDepthwise = false, act = 'NONE' }) {
  const [n, h, w, c] = g.shape(x);
  const ph = atrousPaddings(h, k, rate[0], same);
  const pw = atrousPaddings(w, k, rate[1], same);
  const s2b = spaceToBatch(g, x, `${name}/space_to_batch`, rate, [ph.pad, pw.pad]);
  const inner = isDepthwise
    ? depthwise(g, s2b, `${name}/depthwise`, { kh: k, kw: k, padding: 'VALID', act })
    : conv2d(g, s2b, `${name}/conv`, { filters, kh: k, kw: k, padding: 'VALID', act });
  return batchToSpace(g, inner, name, rate, [ph.crop, pw.crop]);
}
