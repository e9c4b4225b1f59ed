#!/usr/bin/env node
// Writes the ONNX Loop form of a float LSTM layer (TFLite's cell with cell
// clipping, as lite2onnx's unrolled form computes it): the input projection
// of every step in one MatMul, then an ONNX Loop over the steps whose body
// runs one cell (Gather, Gemm, Split, Sigmoid/Tanh, Mul, Add, Clip). Only for
// measuring ONNX Runtime's speed against the unrolled form with ort_bench.mjs
// (docs/architecture.md, "Recurrent ops"); weights are random.
//
//   node tests/numeric/lstm_loop_model.mjs STEPS BATCH INPUT UNITS OUT.onnx
import fs from 'node:fs';
import { makeRng } from './lib/inputs.mjs';

const [steps, batch, input, units] = process.argv.slice(2, 6).map(Number);
const out = process.argv[6];
if (!(steps > 0 && batch > 0 && input > 0 && units > 0) || !out) {
  process.stderr.write('usage: lstm_loop_model.mjs STEPS BATCH INPUT UNITS OUT.onnx\n');
  process.exit(2);
}

// ---- protobuf wire format ----
const enc = new TextEncoder();
function varint(n) {
  const b = [];
  let v = BigInt(n);
  do {
    let x = Number(v & 0x7fn);
    v >>= 7n;
    if (v) x |= 0x80;
    b.push(x);
  } while (v);
  return b;
}
const int = (f, v) => [...varint(f * 8), ...varint(v)];
const bytes = (f, b) => [...varint(f * 8 + 2), ...varint(b.length), ...b];
const str = (f, s) => bytes(f, [...enc.encode(s)]);

const FLOAT = 1, INT64 = 7, BOOL = 9;
const rng = makeRng(7);
function tensor(name, dims, type, raw) {
  return [...dims.flatMap((d) => int(1, d)), ...int(2, type), ...str(8, name), ...bytes(9, [...raw])];
}
function floats(name, dims, scale) {
  const n = dims.reduce((a, b) => a * b, 1);
  const v = Float32Array.from({ length: n }, () => (rng() * 2 - 1) * scale);
  return tensor(name, dims, FLOAT, new Uint8Array(v.buffer));
}
const i64 = (name, values, dims = [values.length]) =>
  tensor(name, dims, INT64, new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer));
function attr(name, kind, value) {
  if (kind === 'int') return bytes(5, [...str(1, name), ...int(20, 2), ...int(3, value)]);
  if (kind === 'float') {
    const f = new Uint8Array(Float32Array.of(value).buffer);
    return bytes(5, [...str(1, name), ...int(20, 1), ...[2 * 8 + 5], ...f]);
  }
  if (kind === 'graph') return bytes(5, [...str(1, name), ...int(20, 5), ...bytes(6, value)]);
  throw new Error(kind);
}
function node(op, inputs, outputs, name, attrs = []) {
  return bytes(1, [...inputs.flatMap((i) => str(1, i)), ...outputs.flatMap((o) => str(2, o)), ...str(3, name),
    ...str(4, op), ...attrs.flat()]);
}
function valueInfo(name, type, dims) {
  const shape = dims === null ? [] : bytes(2, dims.flatMap((d) => bytes(1, int(1, d))));
  return [...str(1, name), ...bytes(2, bytes(1, [...int(1, type), ...shape]))];
}

// ---- the body: one step ----
const u4 = 4 * units;
const body = [
  ...node('Gather', ['projection', 'iter'], ['p_t'], 'input', [attr('axis', 'int', 0)]),
  ...node('Gemm', ['h', 'recurrent_t', 'p_t'], ['pre'], 'pre'),
  ...node('Split', ['pre'], ['gi', 'gf', 'gc', 'go'], 'gates', [attr('axis', 'int', 1)]),
  ...node('Sigmoid', ['gi'], ['i'], 'i'),
  ...node('Sigmoid', ['gf'], ['f'], 'f'),
  ...node('Tanh', ['gc'], ['g'], 'g'),
  ...node('Mul', ['f', 'c'], ['kept'], 'kept'),
  ...node('Mul', ['i', 'g'], ['added'], 'added'),
  ...node('Add', ['kept', 'added'], ['c_sum'], 'c_sum'),
  ...node('Clip', ['c_sum', 'lo', 'hi'], ['c_next'], 'clip'),
  ...node('Sigmoid', ['go'], ['o'], 'o'),
  ...node('Tanh', ['c_next'], ['c_act'], 'c_act'),
  ...node('Mul', ['o', 'c_act'], ['h_next'], 'h'),
  ...node('Identity', ['cond'], ['cond_out'], 'cond'),
  ...node('Identity', ['h_next'], ['y_t'], 'scan'),
  ...str(2, 'body'),
  ...bytes(11, valueInfo('iter', INT64, [])),
  ...bytes(11, valueInfo('cond', BOOL, [])),
  ...bytes(11, valueInfo('h', FLOAT, [batch, units])),
  ...bytes(11, valueInfo('c', FLOAT, [batch, units])),
  ...bytes(12, valueInfo('cond_out', BOOL, [])),
  ...bytes(12, valueInfo('h_next', FLOAT, [batch, units])),
  ...bytes(12, valueInfo('c_next', FLOAT, [batch, units])),
  ...bytes(12, valueInfo('y_t', FLOAT, [batch, units])),
];

// ---- the main graph ----
const graph = [
  ...node('MatMul', ['input', 'weights_t'], ['projected'], 'project'),
  ...node('Add', ['projected', 'bias'], ['projection'], 'bias'),
  ...node('Loop', ['steps', '', 'h0', 'c0'], ['h_last', 'c_last', 'output'], 'loop', [attr('body', 'graph', body)]),
  ...str(2, 'lstm_loop'),
  ...bytes(5, floats('weights_t', [input, u4], 0.5)),
  ...bytes(5, floats('recurrent_t', [units, u4], 0.4)),
  ...bytes(5, floats('bias', [u4], 0.3)),
  ...bytes(5, i64('steps', [steps], [])),
  ...bytes(5, tensor('lo', [], FLOAT, new Uint8Array(Float32Array.of(-10).buffer))),
  ...bytes(5, tensor('hi', [], FLOAT, new Uint8Array(Float32Array.of(10).buffer))),
  ...bytes(5, floats('h0', [batch, units], 0)),
  ...bytes(5, floats('c0', [batch, units], 0)),
  ...bytes(11, valueInfo('input', FLOAT, [steps, batch, input])),
  ...bytes(12, valueInfo('output', FLOAT, [steps, batch, units])),
];
const model = [...int(1, 8), ...str(2, 'lstm_loop_model'), ...bytes(8, [...str(1, ''), ...int(2, 13)]), ...bytes(7, graph)];
fs.writeFileSync(out, Uint8Array.from(model));
process.stdout.write(`${out}: ONNX Loop over ${steps} steps, batch ${batch}, input ${input}, ${units} units\n`);
