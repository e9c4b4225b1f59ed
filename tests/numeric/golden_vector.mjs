#!/usr/bin/env node
// Checks a converted model against a golden vector that another TFLite
// runtime computed and published as C arrays, such as a TFLite Micro
// example's test data (tensorflow/lite/micro/examples/dtln/dtln_inout_data.cc):
// one int8 input array, one int8 output array, one invocation from the
// model's reset state. A third opinion where the runtimes here are older than
// a kernel (docs/quantization-arithmetic.md §4.13).
//
//   node golden_vector.mjs --onnx MODEL.onnx --data INOUT.cc --input NAME --golden NAME
//
// Prints how many output elements differ from the golden ones and by how much.
// Exit 0 when every element is equal, 1 when some differ, 2 on bad arguments.
import fs from 'node:fs';
import ort from 'onnxruntime-node';

function usage(message) {
  process.stderr.write(`${message}\nusage: golden_vector.mjs --onnx MODEL.onnx --data INOUT.cc --input NAME --golden NAME\n`);
  process.exit(2);
}

const opts = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const key = { '--onnx': 'onnx', '--data': 'data', '--input': 'input', '--golden': 'golden' }[args[i]];
  if (!key || i + 1 >= args.length) usage(`unexpected argument ${args[i]}`);
  opts[key] = args[++i];
}
for (const k of ['onnx', 'data', 'input', 'golden']) if (!opts[k]) usage(`missing --${k}`);

// `TYPE NAME[] = { v, v, ... };` in the C source, as numbers.
function cArray(source, name) {
  const m = source.match(new RegExp(`\\b${name}\\s*\\[\\s*\\d*\\s*\\]\\s*=\\s*\\{([^}]*)\\}`));
  if (!m) usage(`no array ${name}[] in ${opts.data}`);
  const values = m[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < -128 || v > 127)) usage(`${name}[] is not int8`);
  return values;
}

const source = fs.readFileSync(opts.data, 'utf8');
const input = Int8Array.from(cArray(source, opts.input));
const golden = cArray(source, opts.golden);
const session = await ort.InferenceSession.create(opts.onnx, { logSeverityLevel: 3 });
const meta = session.inputMetadata?.[0];
const shape = meta?.shape?.every((d) => typeof d === 'number') ? meta.shape : [input.length];
if (shape.reduce((a, b) => a * b, 1) !== input.length) usage(`the input has ${input.length} values, the model's first input is [${shape}]`);
const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('int8', input, shape) });
const got = out[session.outputNames[0]].data;
if (got.length !== golden.length) usage(`the output has ${got.length} values, ${opts.golden}[] ${golden.length}`);
let differ = 0;
let most = 0;
const first = [];
for (let i = 0; i < golden.length; i++) {
  const d = Math.abs(Number(got[i]) - golden[i]);
  if (d === 0) continue;
  differ++;
  most = Math.max(most, d);
  if (first.length < 8) first.push(`[${i}] ${got[i]} vs ${golden[i]}`);
}
process.stdout.write(`${differ} of ${golden.length} elements differ from ${opts.golden}, by at most ${most} step(s)` +
  `${first.length ? `; first (onnx vs golden): ${first.join(', ')}` : ''}\n`);
process.exit(differ ? 1 : 0);
