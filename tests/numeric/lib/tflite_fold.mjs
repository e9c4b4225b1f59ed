// Static shapes and small integer values of TFLite ops, for the harness's
// unrolled twins (unroll_while.mjs): the output shapes each builtin computes
// from its input shapes and options, as its kernel's Prepare does, and the
// values of the int32 / int64 / bool ops of shape arithmetic (SHAPE ->
// STRIDED_SLICE -> PACK, loop counters) once their inputs are known. Ops work
// on flatc's JSON form of a model (tflite_rewrite.mjs): `op.builtin_options`
// as flatc writes it with --defaults-json.
//
// A value is {shape, type, value}: `value` (an array of numbers, row-major)
// only when known. outputShapes() returns null for an op it has no rule for;
// foldValues() returns null when it cannot or should not fold.

const prod = (shape) => shape.reduce((a, b) => a * b, 1);

function broadcast(...shapes) {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out = [];
  for (let i = 0; i < rank; i++) {
    let d = 1;
    for (const s of shapes) {
      const x = s[s.length - rank + i] ?? 1;
      if (x !== 1) {
        if (d !== 1 && d !== x) throw new Error(`shapes [${shapes.map((v) => `[${v}]`).join(', ')}] do not broadcast`);
        d = x;
      }
    }
    out.push(d);
  }
  return out;
}

const axisOf = (axis, rank) => (axis < 0 ? axis + rank : axis);

// Conv / pool output size along one axis (TFLite's ComputeOutSize).
function outSize(padding, size, filter, stride, dilation = 1) {
  const effective = (filter - 1) * dilation + 1;
  if (padding === 'SAME') return Math.ceil(size / stride);
  if (padding === 'VALID') return Math.floor((size - effective + stride) / stride);
  throw new Error(`padding ${padding}`);
}

// TFLite's StridedSlice geometry for every axis: [{begin, stride, length,
// shrink}]. Null for the masks not handled here (ellipsis, new axis).
export function stridedSliceAxes(shape, begin, end, strides, o) {
  if (o.ellipsis_mask || o.new_axis_mask) return null;
  return shape.map((dim, i) => {
    const s = i < strides.length ? strides[i] : 1;
    if (s === 0) throw new Error('STRIDED_SLICE stride 0');
    const shrink = !!(o.shrink_axis_mask & (1 << i));
    const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
    let b;
    if (i >= begin.length || (o.begin_mask & (1 << i))) b = s > 0 ? 0 : dim - 1;
    else {
      b = begin[i] < 0 ? begin[i] + dim : begin[i];
      b = s > 0 ? clamp(b, 0, dim) : clamp(b, -1, dim - 1);
    }
    let e;
    if (shrink) e = b + 1;
    else if (i >= end.length || (o.end_mask & (1 << i))) e = s > 0 ? dim : -1;
    else {
      e = o.offset ? begin[i] + end[i] : end[i];
      if (!o.offset && e < 0) e += dim;
      else if (o.offset && e < 0 && begin[i] < 0) e += dim;
      e = s > 0 ? clamp(e, 0, dim) : clamp(e, -1, dim - 1);
    }
    const length = shrink ? 1 : Math.max(0, Math.ceil((e - b) / s));
    return { begin: b, stride: s, length, shrink };
  });
}

const UNARY = new Set([
  'LOGISTIC', 'TANH', 'RELU', 'RELU6', 'RELU_N1_TO_1', 'RELU_0_TO_1', 'EXP', 'LOG', 'SQRT', 'RSQRT', 'NEG', 'ABS',
  'CAST', 'QUANTIZE', 'DEQUANTIZE', 'SIN', 'COS', 'FLOOR', 'CEIL', 'ROUND', 'SQUARE', 'LEAKY_RELU', 'HARD_SWISH',
  'ELU', 'GELU', 'LOGICAL_NOT', 'SOFTMAX', 'LOG_SOFTMAX', 'L2_NORMALIZATION', 'ZEROS_LIKE', 'ONES_LIKE', 'SIGN',
  'REVERSE_V2', 'CUMSUM', 'LOCAL_RESPONSE_NORMALIZATION', 'MATRIX_DIAG', 'BITCAST',
]);
const BINARY = new Set([
  'ADD', 'SUB', 'MUL', 'DIV', 'MAXIMUM', 'MINIMUM', 'POW', 'SQUARED_DIFFERENCE', 'FLOOR_DIV', 'FLOOR_MOD', 'LESS',
  'LESS_EQUAL', 'GREATER', 'GREATER_EQUAL', 'EQUAL', 'NOT_EQUAL', 'LOGICAL_AND', 'LOGICAL_OR', 'PRELU', 'SELECT',
  'SELECT_V2', 'ATAN2', 'RIGHT_SHIFT', 'BITWISE_XOR',
]);
const REDUCE = new Set(['MEAN', 'SUM', 'REDUCE_PROD', 'REDUCE_MAX', 'REDUCE_MIN', 'REDUCE_ANY', 'REDUCE_ALL']);

// The operand `i` as a list of integers, or throws naming what is missing.
function need(ins, i, what) {
  const v = ins[i];
  if (!v || !v.value) throw Object.assign(new Error(`${what} is not known before running`), { unknownValue: true });
  return v.value;
}

/**
 * Output shapes of builtin `name` with operands `ins` (values, null for an
 * absent optional operand), or null when this table has no rule for it.
 * Throws when a shape needs an operand value that is not known.
 */
export function outputShapes(name, ins, o, outputCount) {
  const s = (i) => ins[i].shape;
  if (UNARY.has(name)) return [s(0)];
  if (BINARY.has(name)) return [broadcast(...ins.filter(Boolean).map((v) => v.shape))];
  if (REDUCE.has(name)) {
    const axes = need(ins, 1, `${name} axes`).map((a) => axisOf(a, s(0).length));
    return [s(0).flatMap((d, i) => (axes.includes(i) ? (o.keep_dims ? [1] : []) : [d]))];
  }
  switch (name) {
    case 'SHAPE': return [[s(0).length]];
    case 'RANK': return [[]];
    case 'RESHAPE': {
      const target = ins[1] ? need(ins, 1, 'RESHAPE shape') : o.new_shape;
      if (!target) return null;
      const known = prod(target.filter((d) => d !== -1));
      return [target.map((d) => (d === -1 ? prod(s(0)) / known : d))];
    }
    case 'FULLY_CONNECTED': {
      const units = s(1)[0];
      if (o.keep_num_dims) return [[...s(0).slice(0, -1), units]];
      return [[prod(s(0)) / s(1)[1], units]];
    }
    case 'CONV_2D':
    case 'DEPTHWISE_CONV_2D': {
      const [n, h, w] = s(0);
      const f = s(1);
      return [[n, outSize(o.padding, h, f[1], o.stride_h, o.dilation_h_factor),
        outSize(o.padding, w, f[2], o.stride_w, o.dilation_w_factor), name === 'CONV_2D' ? f[0] : f[3]]];
    }
    case 'MAX_POOL_2D':
    case 'AVERAGE_POOL_2D':
    case 'L2_POOL_2D': {
      const [n, h, w, c] = s(0);
      return [[n, outSize(o.padding, h, o.filter_height, o.stride_h), outSize(o.padding, w, o.filter_width, o.stride_w), c]];
    }
    case 'TRANSPOSE': return [need(ins, 1, 'TRANSPOSE perm').map((p) => s(0)[p])];
    case 'EXPAND_DIMS': {
      const shape = [...s(0)];
      shape.splice(axisOf(need(ins, 1, 'EXPAND_DIMS axis')[0], shape.length + 1), 0, 1);
      return [shape];
    }
    case 'SQUEEZE': {
      const dims = (o.squeeze_dims ?? []).map((a) => axisOf(a, s(0).length));
      return [s(0).filter((d, i) => (dims.length ? !dims.includes(i) : d !== 1))];
    }
    case 'CONCATENATION': {
      const axis = axisOf(o.axis, s(0).length);
      const shape = [...s(0)];
      shape[axis] = ins.reduce((a, v) => a + v.shape[axis], 0);
      return [shape];
    }
    case 'PACK': {
      const shape = [...s(0)];
      shape.splice(axisOf(o.axis, shape.length + 1), 0, ins.length);
      return [shape];
    }
    case 'UNPACK': {
      const axis = axisOf(o.axis, s(0).length);
      return new Array(s(0)[axis]).fill(s(0).filter((d, i) => i !== axis));
    }
    case 'SPLIT': {
      const axis = axisOf(need(ins, 0, 'SPLIT axis')[0], s(1).length);
      return new Array(o.num_splits).fill(s(1).map((d, i) => (i === axis ? d / o.num_splits : d)));
    }
    case 'SPLIT_V': {
      const axis = axisOf(need(ins, 2, 'SPLIT_V axis')[0], s(0).length);
      const sizes = need(ins, 1, 'SPLIT_V sizes');
      const rest = s(0)[axis] - sizes.filter((d) => d !== -1).reduce((a, b) => a + b, 0);
      return sizes.map((d) => s(0).map((x, i) => (i === axis ? (d === -1 ? rest : d) : x)));
    }
    case 'SLICE': {
      const begin = need(ins, 1, 'SLICE begin');
      const size = need(ins, 2, 'SLICE size');
      return [s(0).map((d, i) => (size[i] === -1 ? d - begin[i] : size[i]))];
    }
    case 'STRIDED_SLICE': {
      const axes = stridedSliceAxes(s(0), need(ins, 1, 'STRIDED_SLICE begin'), need(ins, 2, 'STRIDED_SLICE end'),
        need(ins, 3, 'STRIDED_SLICE strides'), o);
      return axes ? [axes.filter((a) => !a.shrink).map((a) => a.length)] : null;
    }
    case 'GATHER': {
      const axis = axisOf(o.axis, s(0).length);
      const batch = o.batch_dims < 0 ? o.batch_dims + s(1).length : o.batch_dims;
      return [[...s(0).slice(0, axis), ...s(1).slice(batch), ...s(0).slice(axis + 1)]];
    }
    case 'FILL': return [need(ins, 0, 'FILL dims')];
    case 'TILE': return [need(ins, 1, 'TILE multiples').map((m, i) => m * s(0)[i])];
    case 'PAD':
    case 'PADV2':
    case 'MIRROR_PAD': {
      const p = need(ins, 1, `${name} paddings`);
      return [s(0).map((d, i) => d + p[2 * i] + p[2 * i + 1])];
    }
    case 'ARG_MAX':
    case 'ARG_MIN': {
      const axis = axisOf(need(ins, 1, `${name} axis`)[0], s(0).length);
      return [s(0).filter((d, i) => i !== axis)];
    }
    case 'BATCH_MATMUL': {
      const a = s(0);
      const b = s(1);
      const rows = o.adj_x ? a[a.length - 1] : a[a.length - 2];
      const cols = o.adj_y ? b[b.length - 2] : b[b.length - 1];
      return [[...broadcast(a.slice(0, -2), b.slice(0, -2)), rows, cols]];
    }
    case 'RESIZE_BILINEAR':
    case 'RESIZE_NEAREST_NEIGHBOR': {
      const [h, w] = need(ins, 1, `${name} size`);
      return [[s(0)[0], h, w, s(0)[3]]];
    }
    case 'TRANSPOSE_CONV': return [need(ins, 0, 'TRANSPOSE_CONV output shape')];
    case 'RANGE': {
      const [start] = need(ins, 0, 'RANGE start');
      const [limit] = need(ins, 1, 'RANGE limit');
      const [delta] = need(ins, 2, 'RANGE delta');
      return [[Math.max(0, Math.ceil((limit - start) / delta))]];
    }
    case 'ONE_HOT': {
      const shape = [...s(0)];
      shape.splice(o.axis === -1 ? shape.length : o.axis, 0, need(ins, 1, 'ONE_HOT depth')[0]);
      return [shape];
    }
    default: return null;
  }
}

// Row-major strides of `shape`.
function stridesOf(shape) {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) out[i] = out[i + 1] * shape[i + 1];
  return out;
}

// Element `flat` of the output of shape `out` read from a broadcast operand.
function broadcastIndex(flat, out, shape, outStrides) {
  const st = stridesOf(shape);
  let at = 0;
  for (let i = 0; i < out.length; i++) {
    const k = i - (out.length - shape.length);
    if (k < 0) continue;
    const coord = Math.floor(flat / outStrides[i]) % out[i];
    if (shape[k] !== 1) at += coord * st[k];
  }
  return at;
}

const wrap32 = (v) => ((v | 0) === v ? v : Number(BigInt.asIntN(32, BigInt(Math.trunc(v)))));

const ELEMENTWISE = {
  ADD: (a, b) => a + b,
  SUB: (a, b) => a - b,
  MUL: (a, b) => a * b,
  FLOOR_DIV: (a, b) => Math.floor(a / b),
  FLOOR_MOD: (a, b) => a - Math.floor(a / b) * b,
  MAXIMUM: Math.max,
  MINIMUM: Math.min,
  LESS: (a, b) => +(a < b),
  LESS_EQUAL: (a, b) => +(a <= b),
  GREATER: (a, b) => +(a > b),
  GREATER_EQUAL: (a, b) => +(a >= b),
  EQUAL: (a, b) => +(a === b),
  NOT_EQUAL: (a, b) => +(a !== b),
  LOGICAL_AND: (a, b) => +(a && b),
  LOGICAL_OR: (a, b) => +(a || b),
};
const REDUCERS = {
  SUM: [0, (a, b) => a + b], REDUCE_PROD: [1, (a, b) => a * b], REDUCE_MAX: [-Infinity, Math.max],
  REDUCE_MIN: [Infinity, Math.min], REDUCE_ANY: [0, (a, b) => +(a || b)], REDUCE_ALL: [1, (a, b) => +(a && b)],
};

// Integer and bool types whose values are folded (float tensors never are:
// the runtimes must compute those themselves).
export const FOLDABLE_TYPES = new Set(['INT32', 'INT64', 'BOOL']);
// Folded results stay small: shape arithmetic, counters, index vectors.
export const FOLD_LIMIT = 4096;

/**
 * The values of the outputs of builtin `name`, given every operand's value
 * (SHAPE: its shape only) and the output shapes; null when it does not fold.
 * Only int32 / int64 / bool outputs of at most FOLD_LIMIT elements fold, and
 * only ops without a fused activation.
 */
export function foldValues(name, ins, o, outs) {
  if (!outs.every((t) => FOLDABLE_TYPES.has(t.type) && prod(t.shape) <= FOLD_LIMIT)) return null;
  if (o && o.fused_activation_function && o.fused_activation_function !== 'NONE') return null;
  if (name === 'SHAPE') return [ins[0].shape.slice()];
  if (name === 'RANK') return [[ins[0].shape.length]];
  if (!ins.every((v) => !v || v.value)) return null;
  const int32 = outs.every((t) => t.type !== 'INT64');
  const fix = (vals) => (int32 ? vals.map(wrap32) : vals);
  const v = (i) => ins[i].value;
  const out = outs[0].shape;
  if (ELEMENTWISE[name]) {
    if (name === 'FLOOR_DIV' || name === 'FLOOR_MOD') { if (v(1).includes(0)) return null; }
    const f = ELEMENTWISE[name];
    const os = stridesOf(out);
    const vals = new Array(prod(out));
    for (let k = 0; k < vals.length; k++) {
      vals[k] = f(v(0)[broadcastIndex(k, out, ins[0].shape, os)], v(1)[broadcastIndex(k, out, ins[1].shape, os)]);
    }
    return [fix(vals)];
  }
  switch (name) {
    case 'RESHAPE': case 'EXPAND_DIMS': case 'SQUEEZE': return [v(0).slice()];
    case 'CAST': return [outs[0].type === 'BOOL' ? v(0).map((x) => +(x !== 0)) : fix(v(0).map(Math.trunc))];
    case 'NEG': return [fix(v(0).map((x) => -x))];
    case 'ABS': return [fix(v(0).map(Math.abs))];
    case 'LOGICAL_NOT': return [v(0).map((x) => +!x)];
    case 'ZEROS_LIKE': return [v(0).map(() => 0)];
    case 'ONES_LIKE': return [v(0).map(() => 1)];
    case 'FILL': return [new Array(prod(out)).fill(v(1)[0])];
    case 'RANGE': return [Array.from({ length: out[0] }, (_, i) => v(0)[0] + i * v(2)[0])];
    case 'PACK':
    case 'CONCATENATION': {
      // Along axis 0 only (the shape vectors of shape arithmetic).
      const rank = name === 'PACK' ? ins[0].shape.length + 1 : ins[0].shape.length;
      if (axisOf(o.axis, rank) !== 0) return null;
      return [ins.flatMap((x) => x.value)];
    }
    case 'GATHER': {
      if (ins[0].shape.length !== 1 || o.batch_dims) return null;
      const n = ins[0].shape[0];
      if (v(1).some((i) => i < 0 || i >= n)) return null;
      return [v(1).map((i) => v(0)[i])];
    }
    case 'SLICE':
    case 'STRIDED_SLICE': {
      if (ins[0].shape.length !== 1) return null;
      const n = ins[0].shape[0];
      let begin;
      let stride = 1;
      let length;
      if (name === 'SLICE') [begin, length] = [v(1)[0], v(2)[0] === -1 ? n - v(1)[0] : v(2)[0]];
      else {
        const axes = stridedSliceAxes(ins[0].shape, v(1), v(2), v(3), o);
        if (!axes) return null;
        ({ begin, stride, length } = axes[0]);
      }
      const vals = Array.from({ length }, (_, i) => v(0)[begin + i * stride]);
      return vals.some((x) => x === undefined) ? null : [vals];
    }
    default:
      if (REDUCERS[name]) {
        if (ins[0].shape.length !== 1) return null;
        const [init, f] = REDUCERS[name];
        return [fix([v(0).reduce(f, init)])];
      }
      return null;
  }
}

export { prod };
