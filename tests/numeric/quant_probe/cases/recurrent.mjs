// Integer SVDF (int8 input and feature weights, int16 time weights and state,
// int32 bias, int8 output). The state is a variable tensor: LiteRT.js refuses
// the model, tfjs-tflite runs it. One invocation from the zero state (the
// probe runs one): the newest column times the time weights' last column;
// the numeric harness's op models (tests/models/make_models_rnn.mjs) run three
// invocations with the state carried.
import { Model, qin, qt, qconst, tensor, rng, randInts } from '../lib/qmodel.mjs';
import * as R from '../ref/recurrent.mjs';

function svdfCase(name, variant, p, r, { timeLo = -32768, timeHi = 32767, withBias = true } = {}) {
  const { batch, input, filters, memory, rank } = p;
  const units = filters / rank;
  const m = new Model(name, `SVDF ${variant}`);
  const wfInts = randInts(r, filters * input, -127, 127);
  const wtInts = randInts(r, filters * memory, timeLo, timeHi);
  const biasInts = withBias ? randInts(r, units, -(2 ** 20), 2 ** 20) : null;
  const x = qin(m, 'x', [batch, input], 'int8', p.sx, p.zx);
  const wf = qconst(m, 'feature', [filters, input], 'int8', wfInts, p.swf, 0);
  const wt = qconst(m, 'time', [filters, memory], 'int16', wtInts, p.swt, 0);
  const b = withBias ? qconst(m, 'bias', [units], 'int32', biasInts, p.sst * p.swt, 0) : -1;
  const state = qt(m, 'state', [batch, filters * memory], 'int16', p.sst, 0);
  m.tensors[state].is_variable = true;
  const y = qt(m, 'y', [batch, units], 'int8', p.so, p.zo);
  m.op('SVDF', [x, wf, wt, b, state], [y], 'SVDFOptions', { rank, fused_activation_function: 'RELU' });
  m.output(y);
  const xs = randInts(r, batch * input, -128, 127);
  const run = (opts) => (ins) => R.tfliteSvdf(Array.from(ins[0].data), wfInts, wtInts, biasInts, new Array(batch * filters * memory).fill(0), p, opts);
  return {
    name, op: 'SVDF', variant, model: m, inputs: [tensor('int8', [batch, input], xs)],
    refs: { tflite: run({}), tfliteDoubleProducts: run({ doubleProducts: true }), saturating: run({ saturate: true }) },
  };
}

export function cases() {
  const r = rng(29);
  const out = [];
  // Scales whose float and double products give other multipliers (both
  // rescales; the outputs tell them apart only where a sum lands near a tie).
  out.push(svdfCase('svdf_i8_rank1', 'int8, rank 1, 37 filters, memory 5, input [6,11]',
    { batch: 6, input: 11, filters: 37, memory: 5, rank: 1, sx: 0.1066427, zx: -128, swf: 0.0077751977, swt: 0.0049257474, sst: 0.0037827399, so: 0.19087338, zo: -128 }, r));
  // A feature rescale above 1 (left shift) that saturates the state; time
  // weights at the int16 ends with rank 4: the int32 sums wrap.
  out.push(svdfCase('svdf_i8_rank4_wrap', 'int8, rank 4 (48 filters), memory 3, input [5,9], saturated state, wrapping sums',
    { batch: 5, input: 9, filters: 48, memory: 3, rank: 4, sx: 0.05, zx: 5, swf: 0.01, swt: 1 / 32767, sst: 0.00013, so: 0.2, zo: 3 }, r,
    { timeLo: 32000, timeHi: 32767 }));
  out.push(svdfCase('svdf_i8_rank2_nobias', 'int8, rank 2 (26 filters), memory 1, no bias, input [7,6]',
    { batch: 7, input: 6, filters: 26, memory: 1, rank: 2, sx: 0.03, zx: 17, swf: 0.004, swt: 0.0005, sst: 0.002, so: 0.011, zo: -7 }, r, { withBias: false }));
  return out;
}

export function allCases() { return cases(); }
