// Shared by the per-family test model generators (make_models_<family>.mjs):
// a seeded PRNG, little-endian buffer bytes, numpy broadcasting of shapes, and
// a small builder of TFLite FlatBuffer JSON models.

export function seeded(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  let a = h;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const count = (shape) => shape.reduce((a, b) => a * b, 1);

export function le(type, values) {
  const size = { FLOAT32: 4, INT32: 4, BOOL: 1 }[type];
  const view = new DataView(new ArrayBuffer(values.length * size));
  values.forEach((v, i) => {
    if (type === 'FLOAT32') view.setFloat32(i * 4, v, true);
    else if (type === 'INT32') view.setInt32(i * 4, v, true);
    else view.setUint8(i, v ? 1 : 0);
  });
  return Array.from(new Uint8Array(view.buffer));
}

export function bcast(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`cannot broadcast ${a} and ${b}`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

export class Model {
  // codes: TFLite builtin name -> code, for the ops this generator uses.
  constructor(name, description, codes) {
    this.name = name;
    this.codeTable = codes;
    this.description = description;
    this.rand = seeded(name);
    this.tensors = [];
    this.buffers = [{}];
    this.codes = [];
    this.ops = [];
    this.inputs = [];
    this.outputs = [];
    this.spec = {};
  }

  shape(t) { return this.tensors[t].shape; }
  type(t) { return this.tensors[t].type; }

  tensor(name, shape, type = 'FLOAT32') {
    if (this.tensors.some((t) => t.name === name)) throw new Error(`${this.name}: duplicate ${name}`);
    this.tensors.push({ shape: [...shape], type, buffer: 0, name });
    return this.tensors.length - 1;
  }

  // spec: { range: [lo, hi) } or { value: [...] } for the harness.
  input(name, shape, type = 'FLOAT32', spec = undefined) {
    const t = this.tensor(name, shape, type);
    this.inputs.push(t);
    if (spec) this.spec[name] = spec;
    return t;
  }

  constant(name, shape, type, values) {
    if (values.length !== count(shape)) throw new Error(`${this.name}: ${name}: ${values.length} values for ${shape}`);
    this.buffers.push({ data: le(type, values) });
    const t = this.tensor(name, shape, type);
    this.tensors[t].buffer = this.buffers.length - 1;
    return t;
  }

  // Multiples of 1/1024 in [-scale, scale).
  rand32(name, shape, scale) {
    const v = [];
    for (let i = 0; i < count(shape); i++) v.push(Math.round((this.rand() * 2 - 1) * scale * 1024) / 1024);
    return this.constant(name, shape, 'FLOAT32', v);
  }

  op(opName, inputs, outputs, optionsType = undefined, options = undefined) {
    const code = this.codeTable[opName];
    if (code === undefined) throw new Error(`unknown op ${opName}`);
    let index = this.codes.findIndex((c) => c.builtin_code === opName);
    if (index < 0) {
      this.codes.push({ deprecated_builtin_code: Math.min(code, 127), builtin_code: opName });
      index = this.codes.length - 1;
    }
    const op = { opcode_index: index, inputs, outputs };
    if (optionsType) {
      op.builtin_options_type = optionsType;
      op.builtin_options = options ?? {};
    }
    this.ops.push(op);
  }

  output(t) { this.outputs.push(t); }

  toJSON() {
    return {
      version: 3,
      description: `lite2onnx test model ${this.name}: ${this.description}`,
      operator_codes: this.codes,
      subgraphs: [{
        tensors: this.tensors, inputs: this.inputs, outputs: this.outputs, operators: this.ops, name: 'main',
      }],
      buffers: this.buffers,
    };
  }
}

// The committed JSON style: short objects and scalar arrays on one line.
export function format(v, indent = '') {
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.every((x) => x === null || typeof x !== 'object')) return JSON.stringify(v).replaceAll(',', ', ');
    return `[\n${v.map((x) => inner + format(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    const line = `{ ${keys.map((k) => `${JSON.stringify(k)}: ${format(v[k], inner)}`).join(', ')} }`;
    if (keys.length === 0) return '{}';
    if (!line.includes('\n') && line.length + indent.length <= 100) return line;
    return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${format(v[k], inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}
