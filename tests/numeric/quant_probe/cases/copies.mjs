// The ops whose TFLite kernels copy the integers, with equal input and output
// parameters (the exact forms of --quantization exact; exact.mjs checks them
// for equality with both runtimes): full-range values with both ends of the
// range, zero points at the ends of the range (PAD pads with it).
import { Model, qin, qt, qconst, tensor, rng, randInts, LIMITS, count } from '../lib/qmodel.mjs';

// One case of an op that copies integers: input x (shape xShape) and, when
// given, more quantized inputs; every output with x's parameters.
function copyCase(r, type, name, op, xShape, outShapes, build, variant, extra = []) {
  const [lo, hi] = LIMITS[type];
  // a zero point at an end of the range, and both ends among the values
  const [s, z] = type === 'int16' ? [0.0007, 0] : [0.031, type === 'uint8' ? 255 : -128];
  const m = new Model(`copy_${name}_${type}`, op);
  const tx = qin(m, 'x', xShape, type, s, z);
  const more = extra.map((shape, i) => qin(m, `x${i + 1}`, shape, type, s, z));
  const ys = outShapes.map((shape, i) => qt(m, `y${i}`, shape, type, s, z));
  build(m, [tx, ...more], ys);
  m.output(...ys);
  const data = (shape) => {
    const v = randInts(r, count(shape), lo, hi);
    v[0] = lo;
    v[v.length - 1] = hi;
    return tensor(type, shape, v);
  };
  return { name: `copy_${name}_${type}`, op, variant: `${type}, ${variant}, equal parameters ${s}/${z}`, model: m, inputs: [xShape, ...extra].map(data) };
}

export function cases() {
  const out = [];
  const r = rng(11);
  const i32 = (m, name, values, shape = [values.length]) => m.constant(name, shape, 'INT32', values);
  for (const type of ['int8', 'uint8', 'int16']) {
    const c = (...args) => out.push(copyCase(r, type, ...args));
    c('reshape', 'RESHAPE', [2, 3, 4, 5], [[6, 20]], (m, [x], [y]) => m.op('RESHAPE', [x, i32(m, 'shape', [6, 20])], [y], 'ReshapeOptions', { new_shape: [6, 20] }), '2x3x4x5 -> 6x20');
    c('squeeze', 'SQUEEZE', [2, 1, 5, 1, 3], [[2, 5, 3]], (m, [x], [y]) => m.op('SQUEEZE', [x], [y], 'SqueezeOptions', { squeeze_dims: [1, 3] }), 'axes 1, 3');
    c('expand_dims', 'EXPAND_DIMS', [2, 3, 4], [[2, 3, 1, 4]], (m, [x], [y]) => m.op('EXPAND_DIMS', [x, i32(m, 'axis', [2], [])], [y]), 'axis 2');
    c('transpose', 'TRANSPOSE', [2, 3, 4, 5], [[5, 2, 4, 3]], (m, [x], [y]) => m.op('TRANSPOSE', [x, i32(m, 'perm', [3, 0, 2, 1])], [y], 'TransposeOptions', {}), 'perm 3,0,2,1');
    c('gather', 'GATHER', [4, 7, 3], [[4, 5, 3]], (m, [x], [y]) => m.op('GATHER', [x, i32(m, 'indices', [6, 0, 3, 3, 1])], [y], 'GatherOptions', { axis: 1, batch_dims: 0 }), 'axis 1, indices 6,0,3,3,1');
    c('gather_2d', 'GATHER', [7, 3, 2], [[2, 2, 3, 2]], (m, [x], [y]) => m.op('GATHER', [x, i32(m, 'indices', [5, 0, 6, 2], [2, 2])], [y], 'GatherOptions', { axis: 0, batch_dims: 0 }), 'axis 0, 2x2 indices');
    c('slice', 'SLICE', [3, 5, 7, 2], [[2, 3, 4, 2]], (m, [x], [y]) => m.op('SLICE', [x, i32(m, 'begin', [1, 2, 3, 0]), i32(m, 'size', [2, 3, -1, 2])], [y], 'SliceOptions', {}), 'begin 1,2,3,0 size 2,3,-1,2');
    c('strided_slice', 'STRIDED_SLICE', [3, 6, 7, 2], [[2, 3, 2]], (m, [x], [y]) => m.op('STRIDED_SLICE', [x, i32(m, 'begin', [0, 5, 1, 1]), i32(m, 'end', [3, 0, 7, 2]), i32(m, 'strides', [2, -2, 3, 1])], [y], 'StridedSliceOptions', { begin_mask: 0, end_mask: 0, ellipsis_mask: 0, new_axis_mask: 0, shrink_axis_mask: 8 }), 'strides 2,-2,3,1, shrink axis 3');
    c('space_to_depth', 'SPACE_TO_DEPTH', [2, 4, 6, 3], [[2, 2, 3, 12]], (m, [x], [y]) => m.op('SPACE_TO_DEPTH', [x], [y], 'SpaceToDepthOptions', { block_size: 2 }), 'block 2');
    c('depth_to_space', 'DEPTH_TO_SPACE', [2, 3, 5, 12], [[2, 6, 10, 3]], (m, [x], [y]) => m.op('DEPTH_TO_SPACE', [x], [y], 'DepthToSpaceOptions', { block_size: 2 }), 'block 2');
    c('pack', 'PACK', [3, 5], [[3, 3, 5]], (m, xs, [y]) => m.op('PACK', xs, [y], 'PackOptions', { values_count: 3, axis: 1 }), '3 inputs, axis 1', [[3, 5], [3, 5]]);
    c('unpack', 'UNPACK', [3, 4, 5], [[3, 5], [3, 5], [3, 5], [3, 5]], (m, [x], ys) => m.op('UNPACK', [x], ys, 'UnpackOptions', { num: 4, axis: 1 }), '4 outputs, axis 1');
    // FILL (TFLite takes int8 and int16): the scalar value's integer everywhere
    if (type !== 'uint8') c('fill', 'FILL', [], [[3, 4, 5]], (m, [x], [y]) => m.op('FILL', [i32(m, 'dims', [3, 4, 5]), x], [y], 'FillOptions', {}), 'dims 3,4,5 of a scalar');
    c('split', 'SPLIT', [2, 9, 5], [[2, 3, 5], [2, 3, 5], [2, 3, 5]], (m, [x], ys) => m.op('SPLIT', [i32(m, 'axis', [1], []), x], ys, 'SplitOptions', { num_splits: 3 }), '3 splits, axis 1');
    c('concat', 'CONCATENATION', [2, 3, 4, 5], [[2, 3, 12, 5]], (m, xs, [y]) => m.op('CONCATENATION', xs, [y], 'ConcatenationOptions', { axis: 2, fused_activation_function: 'NONE' }), '3 inputs, axis 2', [[2, 3, 7, 5], [2, 3, 1, 5]]);
    c('concat_const', 'CONCATENATION', [2, 3, 4], [[2, 5, 4]], (m, [x], [y]) => {
      const k = m.tensors[x].quantization;
      const w = qconst(m, 'k', [2, 2, 4], type, randInts(r, 16, LIMITS[type][0], LIMITS[type][1]));
      m.tensors[w].quantization = k;
      m.op('CONCATENATION', [w, x], [y], 'ConcatenationOptions', { axis: -2, fused_activation_function: 'NONE' });
    }, 'a quantized constant first, axis -2');
    // the zero point (an end of the range) pads, not 0
    c('pad', 'PAD', [2, 3, 4, 5], [[2, 4, 7, 5]], (m, [x], [y]) => m.op('PAD', [x, i32(m, 'paddings', [0, 0, 1, 0, 2, 1, 0, 0], [4, 2])], [y], 'PadOptions', {}), 'paddings 1,0 / 2,1');
    c('padv2', 'PADV2', [2, 3, 4], [[3, 5, 4]], (m, [x], [y]) => {
      const v = qconst(m, 'value', [], type, [type === 'uint8' ? 7 : -5]);
      m.tensors[v].quantization = m.tensors[x].quantization;
      m.op('PADV2', [x, i32(m, 'paddings', [1, 0, 0, 2, 0, 0], [3, 2]), v], [y], 'PadV2Options', {});
    }, 'a quantized constant value');
    c('split_v', 'SPLIT_V', [2, 3, 10], [[2, 3, 2], [2, 3, 7], [2, 3, 1]], (m, [x], ys) => m.op('SPLIT_V', [x, i32(m, 'sizes', [2, -1, 1]), i32(m, 'axis', [-1], [])], ys, 'SplitVOptions', { num_splits: 3 }), 'sizes 2,-1,1, axis -1');
  }
  // a later output of the multi-output ops
  for (const c of out.filter((c) => /^copy_(unpack|split|split_v)_/.test(c.name))) out.push({ ...c, name: `${c.name}_out1`, outputIndex: 1 });
  return out;
}
