// Host-side tensors: {type, shape, data} with a typed array in row-major order.
// `type` uses the lower-case TFLite type names (float32, int8, bool, ...).

export const TYPED_ARRAYS = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
};

export function isFloatType(type) {
  return type === 'float32' || type === 'float64' || type === 'float16' || type === 'bfloat16';
}

export function isIntegerType(type) {
  return /^u?int\d+$/.test(type);
}

export function numElements(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function makeTensor(type, shape, data) {
  const n = numElements(shape);
  if (data.length !== n) {
    throw new Error(`tensor data has ${data.length} elements, shape [${shape}] needs ${n}`);
  }
  return { type, shape: [...shape], data };
}

export function allocate(type, shape) {
  const Ctor = TYPED_ARRAYS[type];
  if (!Ctor) throw new Error(`unsupported tensor type ${type}`);
  return makeTensor(type, shape, new Ctor(numElements(shape)));
}

/** Element i as a JS number (int64 via Number(), bool as 0/1). */
export function toNumberArray(t) {
  const d = t.data;
  if (d instanceof BigInt64Array || d instanceof BigUint64Array) {
    const out = new Float64Array(d.length);
    for (let i = 0; i < d.length; i++) out[i] = Number(d[i]);
    return out;
  }
  return d;
}

export function inversePermutation(perm) {
  const inv = new Array(perm.length);
  for (let i = 0; i < perm.length; i++) inv[perm[i]] = i;
  return inv;
}

export function isIdentity(perm) {
  return perm.every((p, i) => p === i);
}

function stridesOf(shape) {
  const s = new Array(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

/**
 * ONNX Transpose semantics: out axis i is input axis perm[i], so
 * out.shape[i] = in.shape[perm[i]]. Works for any rank and typed array.
 */
export function transpose(t, perm) {
  const rank = t.shape.length;
  if (perm.length !== rank) {
    throw new Error(`permutation [${perm}] does not fit a rank-${rank} tensor`);
  }
  if (isIdentity(perm)) return t;
  const outShape = perm.map((p) => t.shape[p]);
  const inStrides = stridesOf(t.shape);
  const srcStride = perm.map((p) => inStrides[p]); // source step per out axis
  const n = numElements(t.shape);
  const out = new t.data.constructor(n);
  if (n === 0) return makeTensor(t.type, outShape, out);
  const idx = new Array(rank).fill(0);
  let src = 0;
  const last = rank - 1;
  const lastLen = outShape[last];
  const lastStride = srcStride[last];
  for (let o = 0; o < n;) {
    // innermost axis as a tight loop
    for (let k = 0; k < lastLen; k++) out[o++] = t.data[src + k * lastStride];
    // carry into the outer axes
    let ax = last - 1;
    while (ax >= 0) {
      idx[ax]++;
      src += srcStride[ax];
      if (idx[ax] < outShape[ax]) break;
      src -= srcStride[ax] * outShape[ax];
      idx[ax] = 0;
      ax--;
    }
  }
  return makeTensor(t.type, outShape, out);
}

/** Converts typed data between element types (numbers / BigInts as needed). */
export function castData(data, toType) {
  const Ctor = TYPED_ARRAYS[toType];
  if (!Ctor) throw new Error(`unsupported tensor type ${toType}`);
  if (data instanceof Ctor) return data;
  const out = new Ctor(data.length);
  const toBig = Ctor === BigInt64Array || Ctor === BigUint64Array;
  const fromBig = data instanceof BigInt64Array || data instanceof BigUint64Array;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (toBig) out[i] = fromBig ? v : BigInt(Math.trunc(Number(v)));
    else out[i] = fromBig ? Number(v) : v;
  }
  return out;
}

/** Dequantizes integer data with per-tensor or per-axis scale/zero point. */
export function dequantize(t, quant) {
  const vals = toNumberArray(t);
  const out = new Float32Array(vals.length);
  if (quant.scale.length <= 1) {
    const s = quant.scale[0];
    const z = quant.zeroPoint[0] ?? 0;
    for (let i = 0; i < vals.length; i++) out[i] = (vals[i] - z) * s;
  } else {
    const axis = quant.axis;
    const inner = numElements(t.shape.slice(axis + 1));
    const dim = t.shape[axis];
    for (let i = 0; i < vals.length; i++) {
      const c = Math.floor(i / inner) % dim;
      out[i] = (vals[i] - (quant.zeroPoint[c] ?? 0)) * quant.scale[c];
    }
  }
  return makeTensor('float32', t.shape, out);
}

/** Quantizes float data (per-tensor only) to the given integer type with saturation. */
export function quantize(t, quant, toType) {
  const [lo, hi] = typeRange(toType);
  const s = quant.scale[0];
  const z = quant.zeroPoint[0] ?? 0;
  const vals = toNumberArray(t);
  const out = new TYPED_ARRAYS[toType](vals.length);
  for (let i = 0; i < vals.length; i++) {
    out[i] = Math.min(hi, Math.max(lo, Math.round(vals[i] / s) + z));
  }
  return makeTensor(toType, t.shape, out);
}

/** Inclusive value range of an integer type. */
export function typeRange(type) {
  switch (type) {
    case 'int8': return [-128, 127];
    case 'uint8': return [0, 255];
    case 'int16': return [-32768, 32767];
    case 'uint16': return [0, 65535];
    case 'int32': return [-2147483648, 2147483647];
    case 'uint32': return [0, 4294967295];
    case 'bool': return [0, 1];
    default: return [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  }
}
