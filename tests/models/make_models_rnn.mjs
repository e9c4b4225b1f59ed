#!/usr/bin/env node
// Writes the test models of the recurrent ops (core/ops/recurrent.cc,
// core/ops/lstm.cc) as FlatBuffer JSON into tests/models/json/rnn_*.json,
// plus their input domains into tests/models/specs_rnn.json. Same format and
// conventions as make_models.mjs (see README.md); only rnn_* files are touched.
//
//   node tests/models/make_models_rnn.mjs      # from the repository root
//
// Every state is a variable tensor (zero at the first invocation), so the
// numeric suite runs each model three times, feeding the ONNX model's state
// outputs back (tests/numeric/README.md); LiteRT.js refuses variable tensors,
// tfjs-tflite is the reference. Every dimension has a size of its own.
// Deterministic: constants come from a PRNG seeded by the model name.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { count, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_rnn.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `rnn_${name}`, description, build });

const ABSENT = -1;

// A float constant, or with `hybrid` an int8 per-tensor symmetric one. (The
// hybrid cells are judged by the float rule: the converter computes TFLite's
// hybrid kernels, each row of the activations quantized at run time.)
function weights(m, name, shape, scale, hybrid = false) {
  const values = m.randomValues(count(shape), scale);
  if (!hybrid) return m.f32(name, shape, values);
  const max = Math.max(...values.map(Math.abs), 1e-6);
  return m.quantized(name, shape, values, { type: 'INT8', scale: [max / 127], zero_point: [0] });
}

const variable = (m, name, shape, type = 'FLOAT32') => m.tensor(name, shape, type, { is_variable: true });

// ---- RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN ----------------

function rnnCell(m, prefix, input, units, batch, hybrid) {
  return {
    w: weights(m, `${prefix}/weights`, [units, input], 0.6, hybrid),
    r: weights(m, `${prefix}/recurrent_weights`, [units, units], 0.4, hybrid),
    b: m.rand32(`${prefix}/bias`, [units], 0.2),
    h: variable(m, `${prefix}/hidden_state`, [batch, units]),
  };
}

function basicRnn(name, description, { act, hybrid = false, asymmetric = false }) {
  def(name, description, (m) => {
    const [batch, input, units] = [2, 3, 5];
    const x = m.input('input', [batch, input], 'FLOAT32', [-1, 1]);
    const c = rnnCell(m, 'rnn', input, units, batch, hybrid);
    const y = m.tensor('output', [batch, units]);
    m.op('RNN', [x, c.w, c.r, c.b, c.h], [y], 'RNNOptions', { fused_activation_function: act, ...(asymmetric ? { asymmetric_quantize_inputs: true } : {}) });
    m.output(y);
  });
}

basicRnn('basic_relu', 'RNN (RELU), input [2,3], 5 units, hidden state [2,5]', { act: 'RELU' });
basicRnn('basic_tanh', 'RNN (TANH)', { act: 'TANH' });
basicRnn('basic_none', 'RNN without activation (NONE)', { act: 'NONE' });
basicRnn('basic_relu6', 'RNN (RELU6): no ONNX RNN activation', { act: 'RELU6' });
basicRnn('basic_relu_n1_to_1', 'RNN (RELU_N1_TO_1)', { act: 'RELU_N1_TO_1' });
basicRnn('basic_hybrid', 'RNN (TANH) with int8 weights and float activations (hybrid)', { act: 'TANH', hybrid: true });
basicRnn('basic_hybrid_asymmetric', 'hybrid RNN (RELU), asymmetric_quantize_inputs: each row quantized with a zero point', { act: 'RELU', hybrid: true, asymmetric: true });

function sequenceRnn(name, description, { act, timeMajor = false, hybrid = false, asymmetric = false }) {
  def(name, description, (m) => {
    const [batch, steps, input, units] = [2, 4, 3, 5];
    const x = m.input('input', timeMajor ? [steps, batch, input] : [batch, steps, input], 'FLOAT32', [-1, 1]);
    const c = rnnCell(m, 'rnn', input, units, batch, hybrid);
    const y = m.tensor('output', timeMajor ? [steps, batch, units] : [batch, steps, units]);
    m.op('UNIDIRECTIONAL_SEQUENCE_RNN', [x, c.w, c.r, c.b, c.h], [y], 'SequenceRNNOptions',
      { time_major: timeMajor, fused_activation_function: act, ...(asymmetric ? { asymmetric_quantize_inputs: true } : {}) });
    m.output(y);
  });
}

sequenceRnn('seq_tanh', 'UNIDIRECTIONAL_SEQUENCE_RNN (TANH), batch-major [2,4,3] -> [2,4,5]', { act: 'TANH' });
sequenceRnn('seq_time_major_relu', 'UNIDIRECTIONAL_SEQUENCE_RNN (RELU), time-major [4,2,3] -> [4,2,5]', { act: 'RELU', timeMajor: true });
sequenceRnn('seq_relu6_hybrid', 'UNIDIRECTIONAL_SEQUENCE_RNN (RELU6) with int8 weights (hybrid)', { act: 'RELU6', hybrid: true });
sequenceRnn('seq_time_major_hybrid_asymmetric', 'hybrid UNIDIRECTIONAL_SEQUENCE_RNN (TANH), time-major, asymmetric_quantize_inputs', { act: 'TANH', timeMajor: true, hybrid: true, asymmetric: true });

function bidiRnn(name, description, { act, timeMajor = false, merge = false, aux = undefined, hybrid = false, auxDepth = aux === 'stacking' ? 7 : 3 }) {
  def(name, description, (m) => {
    const [batch, steps, input, fwUnits, bwUnits] = [2, 4, 3, 5, 6];
    const shape = (depth) => (timeMajor ? [steps, batch, depth] : [batch, steps, depth]);
    const x = m.input('input', shape(input), 'FLOAT32', [-1, 1]);
    const fw = rnnCell(m, 'fw', input, fwUnits, batch, hybrid);
    const bw = rnnCell(m, 'bw', input, bwUnits, batch, hybrid);
    const inputs = [x, fw.w, fw.r, fw.b, fw.h, bw.w, bw.r, bw.b, bw.h];
    // TFLite's kernel takes exactly 12 inputs: the auxiliary ones absent or not.
    if (aux) {
      const a = m.input('aux_input', shape(auxDepth), 'FLOAT32', [-1, 1]);
      if (aux === 'stacking') {
        inputs.push(a, weights(m, 'fw/aux_weights', [fwUnits, auxDepth], 0.5, hybrid), weights(m, 'bw/aux_weights', [bwUnits, auxDepth], 0.5, hybrid));
      } else {
        inputs.push(a, ABSENT, ABSENT);
      }
    } else {
      inputs.push(ABSENT, ABSENT, ABSENT);
    }
    const outs = merge ? [m.tensor('output', shape(fwUnits + bwUnits))]
      : [m.tensor('fw_output', shape(fwUnits)), m.tensor('bw_output', shape(bwUnits))];
    m.op('BIDIRECTIONAL_SEQUENCE_RNN', inputs, outs, 'BidirectionalSequenceRNNOptions',
      { time_major: timeMajor, fused_activation_function: act, merge_outputs: merge });
    m.output(...outs);
    if (timeMajor && !merge) {
      m.spec.outputs = {
        bw_output: {
          reference_shape: shape(bwUnits),
          note: "tfjs-tflite's kernel (an older TFLite) sizes the backward output [batch, time, units] also when " +
            'time-major, and writes it time-major: its elements are read as [time, batch, units]',
        },
      };
    }
  });
}

bidiRnn('bidi_merged', 'BIDIRECTIONAL_SEQUENCE_RNN (TANH), batch-major, 5 forward and 6 backward units, merged output [2,4,11]', { act: 'TANH', merge: true });
bidiRnn('bidi_time_major', 'BIDIRECTIONAL_SEQUENCE_RNN (RELU), time-major, two outputs', { act: 'RELU', timeMajor: true });
bidiRnn('bidi_aux_stacking', 'BIDIRECTIONAL_SEQUENCE_RNN with an auxiliary input of depth 7 and auxiliary weights (stacking), batch-major', { act: 'TANH', aux: 'stacking' });
bidiRnn('bidi_aux_backward_input', 'BIDIRECTIONAL_SEQUENCE_RNN with an auxiliary input and no auxiliary weights: the backward cell\'s input (time-major)', { act: 'TANH', timeMajor: true, aux: 'backward' });
// (TFLite's batch-major hybrid kernel steps through the auxiliary input by
// the input's depth: of the input's depth here. Time-major, it runs the
// sequence max_time times over.)
bidiRnn('bidi_hybrid_aux_stacking', 'hybrid BIDIRECTIONAL_SEQUENCE_RNN (RELU6): int8 weights, auxiliary input with int8 auxiliary weights, merged, batch-major', { act: 'RELU6', aux: 'stacking', merge: true, hybrid: true, auxDepth: 3 });
bidiRnn('bidi_hybrid_time_major', 'hybrid BIDIRECTIONAL_SEQUENCE_RNN (TANH), time-major, two outputs: TFLite\'s hybrid kernel runs the sequence 4 times over', { act: 'TANH', timeMajor: true, hybrid: true });
bidiRnn('bidi_aux_backward_input_batch_major', 'as bidi_aux_backward_input, batch-major: TFLite\'s kernel reads the forward input for the backward cell there', { act: 'TANH', aux: 'backward' });

// ---- LSTM family ---------------------------------------------------------------

// The 24 inputs of a float (or hybrid) LSTM cell: see lstm_shared.h.
function lstmCell(m, prefix, { input, cell, output = cell, batch, cifg = false, peephole = false, projection = false,
  projectionBias = true, layerNorm = false, diagonal = false, hybrid = false }) {
  const gates = ['input', 'forget', 'cell', 'output'];
  const w = gates.map((g, k) => (cifg && k === 0 ? ABSENT : weights(m, `${prefix}/${g}_weights`, [cell, input], 0.6, hybrid)));
  const r = gates.map((g, k) => (cifg && k === 0 ? ABSENT
    : weights(m, `${prefix}/${g}_recurrent`, diagonal ? [cell] : [cell, output], 0.5, hybrid)));
  const p = ['input', 'forget', 'output'].map((g, k) => (!peephole || (cifg && k === 0) ? ABSENT
    : weights(m, `${prefix}/${g}_peephole`, [cell], 0.5, hybrid)));
  const b = gates.map((g, k) => (cifg && k === 0 ? ABSENT : m.rand32(`${prefix}/${g}_bias`, [cell], 0.3)));
  const pw = projection ? weights(m, `${prefix}/projection_weights`, [output, cell], 0.6, hybrid) : ABSENT;
  const pb = projection && projectionBias ? m.rand32(`${prefix}/projection_bias`, [output], 0.2) : ABSENT;
  const h = variable(m, `${prefix}/output_state`, [batch, output]);
  const c = variable(m, `${prefix}/cell_state`, [batch, cell]);
  const ln = gates.map((g, k) => (!layerNorm || (cifg && k === 0) ? ABSENT
    : m.f32(`${prefix}/${g}_layer_norm`, [cell], m.randomValues(cell, 0.3).map((v) => v + 1))));
  return { w, r, p, b, pw, pb, h, c, ln };
}

const lstmInputs = (x, c) => [x, ...c.w, ...c.r, ...c.p, ...c.b, c.pw, c.pb, c.h, c.c, ...c.ln];

function sequenceLstm(name, description, o) {
  def(name, description, (m) => {
    const [batch, steps, input, cell] = [2, 4, 3, o.cell ?? 5];
    const output = o.projection ? 4 : cell;
    const x = m.input('input', o.timeMajor ? [steps, batch, input] : [batch, steps, input], 'FLOAT32', o.range ?? [-1, 1]);
    const c = lstmCell(m, 'lstm', { ...o, input, cell, output, batch });
    const y = m.tensor('output', o.timeMajor ? [steps, batch, output] : [batch, steps, output]);
    m.op('UNIDIRECTIONAL_SEQUENCE_LSTM', lstmInputs(x, c), [y], 'UnidirectionalSequenceLSTMOptions', {
      fused_activation_function: o.act ?? 'TANH', cell_clip: o.cellClip ?? 0, proj_clip: o.projClip ?? 0,
      time_major: !!o.timeMajor, diagonal_recurrent_tensors: !!o.diagonal,
      ...(o.asymmetric ? { asymmetric_quantize_inputs: true } : {}),
    });
    m.output(y);
  });
}

sequenceLstm('lstm_plain', 'UNIDIRECTIONAL_SEQUENCE_LSTM (TANH), batch-major [2,4,3] -> [2,4,5], no clipping (ONNX LSTM computes it exactly)', {});
sequenceLstm('lstm_time_major_peephole', 'UNIDIRECTIONAL_SEQUENCE_LSTM, time-major, peephole weights', { timeMajor: true, peephole: true });
sequenceLstm('lstm_relu', 'UNIDIRECTIONAL_SEQUENCE_LSTM with activation RELU (gates and cell output)', { act: 'RELU', range: [-0.5, 0.5] });
sequenceLstm('lstm_relu6', 'UNIDIRECTIONAL_SEQUENCE_LSTM with activation RELU6 (no ONNX LSTM activation)', { act: 'RELU6' });
sequenceLstm('lstm_cell_clip', 'UNIDIRECTIONAL_SEQUENCE_LSTM with cell clipping at 0.4 (reached) and inputs in [-3, 3]', { cellClip: 0.4, range: [-3, 3] });
sequenceLstm('lstm_projection', 'UNIDIRECTIONAL_SEQUENCE_LSTM, 6 cells projected to 4 outputs with bias, projection clipping at 0.3', { cell: 6, projection: true, projClip: 0.3 });
sequenceLstm('lstm_projection_nobias', 'UNIDIRECTIONAL_SEQUENCE_LSTM, projection without bias, peephole', { cell: 6, projection: true, projectionBias: false, peephole: true });
sequenceLstm('lstm_layer_norm', 'UNIDIRECTIONAL_SEQUENCE_LSTM with layer normalization of every gate', { layerNorm: true });
sequenceLstm('lstm_cifg_peephole', 'UNIDIRECTIONAL_SEQUENCE_LSTM, CIFG (input gate = 1 - forget gate) with peepholes, time-major', { cifg: true, peephole: true, timeMajor: true });
sequenceLstm('lstm_cifg_layer_norm_projection', 'UNIDIRECTIONAL_SEQUENCE_LSTM, CIFG with layer norm and projection', { cifg: true, layerNorm: true, cell: 6, projection: true });
sequenceLstm('lstm_diagonal', 'UNIDIRECTIONAL_SEQUENCE_LSTM with diagonal (rank-1) recurrent weights: not converted (no TFLite runtime here runs them)', { diagonal: true });
def('lstm_dynamic_batch', 'UNIDIRECTIONAL_SEQUENCE_LSTM whose input and output declare a dynamic batch (shape_signature -1), fixed by the states [2,5]', (m) => {
  const [batch, steps, input, cell] = [2, 4, 3, 5];
  const x = m.tensor('input', [batch, steps, input], 'FLOAT32', { shape_signature: [-1, steps, input] });
  m.inputs.push(x);
  m.spec.inputs = { input: { range: [-1, 1], shape: [batch, steps, input] } };
  const c = lstmCell(m, 'lstm', { input, cell, output: cell, batch, peephole: true });
  const y = m.tensor('output', [batch, steps, cell], 'FLOAT32', { shape_signature: [-1, steps, cell] });
  m.op('UNIDIRECTIONAL_SEQUENCE_LSTM', lstmInputs(x, c), [y], 'UnidirectionalSequenceLSTMOptions',
    { fused_activation_function: 'TANH', cell_clip: 10, proj_clip: 0, time_major: false });
  m.output(y);
});
sequenceLstm('lstm_hybrid', 'UNIDIRECTIONAL_SEQUENCE_LSTM with int8 weights and float activations (hybrid), peephole, cell clip 10', { hybrid: true, peephole: true, cellClip: 10 });
sequenceLstm('lstm_hybrid_cifg_projection_asymmetric', 'hybrid UNIDIRECTIONAL_SEQUENCE_LSTM, time-major, CIFG with peepholes, 6 cells projected to 4, asymmetric_quantize_inputs', { hybrid: true, timeMajor: true, cifg: true, peephole: true, cell: 6, projection: true, asymmetric: true });
sequenceLstm('lstm_hybrid_layer_norm', 'hybrid UNIDIRECTIONAL_SEQUENCE_LSTM with layer normalization of every gate, RELU6', { hybrid: true, layerNorm: true, act: 'RELU6' });

function bidiLstm(name, description, o) {
  def(name, description, (m) => {
    // tfjs-tflite's kernel wants one cell size for both directions.
    const [batch, steps, input, fwCell, bwCell] = [2, 4, 3, 5, 5];
    const timeMajor = o.timeMajor ?? true;
    const shape = (d) => (timeMajor ? [steps, batch, d] : [batch, steps, d]);
    const x = m.input('input', shape(input), 'FLOAT32', [-1, 1]);
    // tfjs-tflite's kernel also wants one output size for both.
    const out = o.projection ? 4 : fwCell;
    const fw = lstmCell(m, 'fw', { input, cell: fwCell, output: out, batch, peephole: o.peephole, projection: o.projection, hybrid: o.hybrid });
    const bw = lstmCell(m, 'bw', { input, cell: bwCell, output: out, batch, projection: o.projection, projectionBias: false, hybrid: o.hybrid });
    const fwOut = out, bwOut = out;
    const pick = (c) => [...c.w, ...c.r, ...c.p, ...c.b, c.pw, c.pb];
    const inputs = [x, ...pick(fw), ...pick(bw), fw.h, fw.c, bw.h, bw.c];
    // An auxiliary input as deep as the input: tfjs-tflite's kernel steps
    // through it by the input's depth.
    const auxDepth = input;
    if (o.aux === 'stacking') {
      const a = m.input('aux_input', shape(auxDepth), 'FLOAT32', [-1, 1]);
      const aw = (p, cell) => ['input', 'forget', 'cell', 'output'].map((g) => weights(m, `${p}/aux_${g}_weights`, [cell, auxDepth], 0.5, o.hybrid));
      inputs.push(a, ...aw('fw', fwCell), ...aw('bw', bwCell));
    } else if (o.aux === 'backward') {
      inputs.push(m.input('aux_input', shape(input), 'FLOAT32', [-1, 1]), ...Array(8).fill(ABSENT));
    } else {
      inputs.push(...Array(9).fill(ABSENT));
    }
    const outs = o.merge ? [m.tensor('output', shape(fwOut + bwOut))]
      : [m.tensor('fw_output', shape(fwOut)), m.tensor('bw_output', shape(bwOut))];
    m.op('BIDIRECTIONAL_SEQUENCE_LSTM', inputs, outs, 'BidirectionalSequenceLSTMOptions', {
      fused_activation_function: 'TANH', cell_clip: o.cellClip ?? 0, proj_clip: 0, merge_outputs: !!o.merge, time_major: timeMajor,
    });
    m.output(...outs);
  });
}

bidiLstm('lstm_bidi_merged', 'BIDIRECTIONAL_SEQUENCE_LSTM, time-major, 5 cells each way, merged output [4,2,10]', { merge: true });
bidiLstm('lstm_bidi_batch_major', 'BIDIRECTIONAL_SEQUENCE_LSTM, batch-major, two outputs, forward peephole, both projected to 4 (the backward without bias), cell clip 0.5', { timeMajor: false, peephole: true, projection: true, cellClip: 0.5 });
bidiLstm('lstm_bidi_aux_stacking', 'BIDIRECTIONAL_SEQUENCE_LSTM with an auxiliary input and auxiliary weights (stacking), time-major, merged', { aux: 'stacking', merge: true });
bidiLstm('lstm_bidi_aux_stacking_batch_major', 'BIDIRECTIONAL_SEQUENCE_LSTM with an auxiliary input and auxiliary weights, batch-major, two outputs', { aux: 'stacking', timeMajor: false });
bidiLstm('lstm_bidi_aux_backward_input', 'BIDIRECTIONAL_SEQUENCE_LSTM with an auxiliary input and no auxiliary weights: the backward cell\'s input', { aux: 'backward', timeMajor: false });
bidiLstm('lstm_bidi_hybrid', 'BIDIRECTIONAL_SEQUENCE_LSTM with int8 weights (hybrid), merged', { hybrid: true, merge: true });
bidiLstm('lstm_bidi_hybrid_aux_projection', 'hybrid BIDIRECTIONAL_SEQUENCE_LSTM, batch-major, forward peephole, both projected to 4, auxiliary input with int8 auxiliary weights', { hybrid: true, timeMajor: false, peephole: true, projection: true, aux: 'stacking' });

def('lstm_full_kernel', 'LSTM (full kernel, one step), input [2,3], 6 cells projected to 4, peephole, cell clip 0.6', (m) => {
  const [batch, input, cell, output] = [2, 3, 6, 4];
  const x = m.input('input', [batch, input], 'FLOAT32', [-2, 2]);
  const c = lstmCell(m, 'lstm', { input, cell, output, batch, peephole: true, projection: true });
  const y = m.tensor('output', [batch, output]);
  m.op('LSTM', lstmInputs(x, c), [y], 'LSTMOptions',
    { fused_activation_function: 'TANH', cell_clip: 0.6, proj_clip: 0, kernel_type: 'FULL' });
  m.output(y);
});

def('lstm_basic_kernel', 'LSTM (basic kernel): concat [input, activation] -> FC [20, 8] -> gates i, j, f, o; four outputs', (m) => {
  const [batch, input, units] = [2, 3, 5];
  const x = m.input('input', [batch, input], 'FLOAT32', [-1, 1]);
  const prev = variable(m, 'lstm/activation_state', [batch, units]);
  const w = m.rand32('lstm/weights', [4 * units, input + units], 0.5);
  const b = m.rand32('lstm/bias', [4 * units], 0.3);
  const state = variable(m, 'lstm/cell_state', [batch, units]);
  const outs = [m.tensor('activation', [batch, units]), m.tensor('state', [batch, units]),
    m.tensor('concat_temp', [batch, input + units]), m.tensor('activation_temp', [batch, 4 * units])];
  m.op('LSTM', [x, prev, w, b, state], outs, 'LSTMOptions',
    { fused_activation_function: 'TANH', cell_clip: 0, proj_clip: 0, kernel_type: 'BASIC' });
  m.output(outs[0], outs[1]);
});

// ---- full-integer LSTM (int8 activations, int16 cell state: the 8x8_16 kernel) ----

// Quantized with a per-tensor symmetric int8 scale fitting `values`.
function int8Weights(m, name, shape, scale) {
  const values = m.randomValues(count(shape), scale);
  const max = Math.max(...values.map(Math.abs), 1e-6);
  return { t: m.quantized(name, shape, values, { type: 'INT8', scale: [max / 127], zero_point: [0] }), scale: max / 127 };
}

function integerLstm(name, description, o) {
  def(name, description, (m) => {
    const [batch, steps, input, cell] = [o.batch ?? 2, o.steps ?? 4, o.input ?? 3, o.cell ?? 5];
    const output = o.projection ? o.output ?? 4 : cell;
    // The one-step LSTM op (o.oneStep) takes [batch, input] and gives [batch, output].
    const seq = (n) => (o.oneStep ? [batch, n] : o.timeMajor ? [steps, batch, n] : [batch, steps, n]);
    const xq = { scale: [2 / 255], zero_point: [o.inputZp ?? 3] };
    const x = m.quantize(m.input('input', seq(input), 'INT8'), xq);
    const gates = ['input', 'forget', 'cell', 'output'];
    const w = gates.map((g, k) => (o.cifg && k === 0 ? null : int8Weights(m, `lstm/${g}_weights`, [cell, input], 0.6)));
    const r = gates.map((g, k) => (o.cifg && k === 0 ? null : int8Weights(m, `lstm/${g}_recurrent`, [cell, output], 0.5)));
    const lnScale = 2 ** -13;
    const ln = gates.map((g, k) => (!o.layerNorm || (o.cifg && k === 0) ? ABSENT
      : m.quantized(`lstm/${g}_layer_norm`, [cell], m.randomValues(cell, 0.3).map((v) => v + 1), { type: 'INT16', scale: [lnScale], zero_point: [0] })));
    // Biases at the scale the kernel reads them with: input x weights, or the
    // layer norm coefficients' / 1024.
    const b = gates.map((g, k) => (o.cifg && k === 0 ? ABSENT
      : m.quantized(`lstm/${g}_bias`, [cell], m.randomValues(cell, 0.3),
        { type: 'INT32', scale: [o.layerNorm ? lnScale / 1024 : xq.scale[0] * w[k].scale], zero_point: [0] })));
    const cellScale = 2 ** (o.cellExponent ?? -11);
    // Peephole weights: int16 per tensor (cell_to_gate_weights).
    const p = ['input', 'forget', 'output'].map((g, k) => (!o.peephole || (o.cifg && k === 0) ? ABSENT
      : m.quantized(`lstm/${g}_peephole`, [cell], m.randomValues(cell, 0.5), { type: 'INT16', scale: [0.5 / 32767 * (k + 1)], zero_point: [0] })));
    const hidden = { scale: [o.hiddenScale ?? 1 / 128], zero_point: [o.hiddenZp ?? 0] };
    const stateQ = o.projection ? { scale: [1.5 / 128], zero_point: [o.stateZp ?? -2] } : hidden;
    let pw = ABSENT, pb = ABSENT;
    if (o.projection) {
      const p = int8Weights(m, 'lstm/projection_weights', [output, cell], 0.6);
      pw = p.t;
      pb = m.quantized('lstm/projection_bias', [output], m.randomValues(output, 0.2), { type: 'INT32', scale: [p.scale * hidden.scale[0]], zero_point: [0] });
    }
    const h = m.quantize(variable(m, 'lstm/output_state', [batch, output], 'INT8'), stateQ);
    const c = m.quantize(variable(m, 'lstm/cell_state', [batch, cell], 'INT16'), { scale: [cellScale], zero_point: [0] });
    // Intermediates: the gates' pre-activation scales (read with layer norm)
    // and the hidden value's.
    const mids = gates.map((g) => m.quantize(m.tensor(`lstm/${g}_intermediate`, [0], 'INT16'), { scale: [2 ** -10], zero_point: [0] }));
    mids.push(m.quantize(m.tensor('lstm/hidden_intermediate', [0], 'INT8'), hidden));
    const y = m.quantize(m.tensor('output', seq(output), 'INT8'), stateQ);
    const ws = w.map((v) => (v ? v.t : ABSENT));
    const rs = r.map((v) => (v ? v.t : ABSENT));
    const inputs = [x, ...ws, ...rs, ...p, ...b, pw, pb, h, c, ...ln];
    const clips = { fused_activation_function: 'TANH', cell_clip: o.cellClip ?? 0, proj_clip: o.projClip ?? 0 };
    if (o.oneStep) {
      m.op('LSTM', inputs, [y], 'LSTMOptions', { ...clips, kernel_type: 'FULL' }, { intermediates: mids });
    } else {
      m.op('UNIDIRECTIONAL_SEQUENCE_LSTM', inputs, [y], 'UnidirectionalSequenceLSTMOptions',
        { ...clips, time_major: !!o.timeMajor }, { intermediates: mids });
    }
    m.output(y);
  });
}

integerLstm('lstm_int8', 'UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations and weights, int16 cell state (2^-11), cell clip 10', { cellClip: 10 });
integerLstm('lstm_int8_layer_norm_projection', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM with layer norm, 6 cells projected to 4 (output zero point -2), projection clip 1', { layerNorm: true, projection: true, cell: 6, projClip: 1, hiddenZp: 3 });
integerLstm('lstm_int8_cifg', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, CIFG, cell clip 1.5', { cifg: true, cellClip: 1.5 });
integerLstm('lstm_int8_peephole_time_major', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, time-major [5,3,6] -> [5,3,7], int16 peephole weights, input zero point -7, cell state 2^-12, cell clip 3',
  { timeMajor: true, peephole: true, batch: 3, steps: 5, input: 6, cell: 7, inputZp: -7, cellExponent: -12, cellClip: 3 });
integerLstm('lstm_int8_projection', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, [4,6,3] -> 9 cells projected to 5 (hidden zero point 5, output zero point 6), peephole, projection clip 0.9',
  { projection: true, peephole: true, batch: 4, steps: 6, input: 3, cell: 9, output: 5, hiddenZp: 5, stateZp: 6, projClip: 0.9 });
integerLstm('lstm_int8_peephole_projection_time_major', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, time-major [2,3,4], peepholes and projection (6 cells to 5: the kernel\'s peephole walk over n_output elements of the batches together), cell state 2^-13, cell clip 2, projection clip 0.7',
  { timeMajor: true, peephole: true, projection: true, batch: 3, steps: 2, input: 4, cell: 6, output: 5, hiddenZp: -3, stateZp: 1, cellExponent: -13, cellClip: 2, projClip: 0.7 });
integerLstm('lstm_int8_one_step', 'integer LSTM (full kernel, one step), input [3,2], 7 cells projected to 4, peepholes, hidden zero point 4',
  { oneStep: true, peephole: true, projection: true, batch: 3, input: 2, cell: 7, output: 4, hiddenZp: 4 });
integerLstm('lstm_int8_layer_norm', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM with layer norm (the kernel\'s integer ApplyLayerNorm), [4,2,6] -> 8 cells, input zero point 9',
  { layerNorm: true, batch: 4, steps: 2, input: 6, cell: 8, inputZp: 9 });
integerLstm('lstm_int8_layer_norm_cifg_peephole_time_major', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, time-major [3,3,5], layer norm over 7 cells (not a power of two), CIFG, peepholes, cell state 2^-12, cell clip 2.5',
  { layerNorm: true, cifg: true, peephole: true, timeMajor: true, batch: 3, steps: 3, input: 5, cell: 7, cellExponent: -12, cellClip: 2.5 });
integerLstm('lstm_int8_cell_2e-9', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, cell state 2^-9 (the cell tanh reads F6: gemmlowp\'s exp clamp below -32), [2,5,4] -> 3 cells',
  { batch: 2, steps: 5, input: 4, cell: 3, cellExponent: -9 });
integerLstm('lstm_int8_cell_2e-15', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, cell state 2^-15 (the cell tanh reads F0; the cell saturates), time-major [6,1,2] -> 4 cells',
  { timeMajor: true, batch: 1, steps: 6, input: 2, cell: 4, cellExponent: -15 });
integerLstm('lstm_int8_cifg_peephole_projection', 'integer UNIDIRECTIONAL_SEQUENCE_LSTM, [1,7,5], CIFG with peepholes and projection (8 cells to 3, no clipping), cell state 2^-10',
  { cifg: true, peephole: true, projection: true, batch: 1, steps: 7, input: 5, cell: 8, output: 3, hiddenZp: -9, cellExponent: -10 });

// ---- SVDF --------------------------------------------------------------------------

function svdf(name, description, { rank, act = 'NONE', hybrid = false, bias = true, asymmetric = false }) {
  def(name, description, (m) => {
    const [batch, input, units, memory] = [2, 3, 5, 4];
    const filters = units * rank;
    const x = m.input('input', [batch, input], 'FLOAT32', [-1, 1]);
    const wf = weights(m, 'svdf/feature_weights', [filters, input], 0.6, hybrid);
    const wt = weights(m, 'svdf/time_weights', [filters, memory], 0.5, hybrid);
    const b = bias ? m.rand32('svdf/bias', [units], 0.2) : ABSENT;
    const state = variable(m, 'svdf/state', [batch, memory * filters]);
    const y = m.tensor('output', [batch, units]);
    m.op('SVDF', [x, wf, wt, b, state], [y], 'SVDFOptions', { rank, fused_activation_function: act, ...(asymmetric ? { asymmetric_quantize_inputs: true } : {}) });
    m.output(y);
  });
}

svdf('svdf_rank1', 'SVDF rank 1: input [2,3], 5 filters, memory 4, bias', { rank: 1 });
svdf('svdf_rank2_relu', 'SVDF rank 2 (10 filters, 5 units), RELU, no bias', { rank: 2, act: 'RELU', bias: false });
svdf('svdf_rank3_hybrid', 'SVDF rank 3 with int8 feature and time weights (hybrid)', { rank: 3, hybrid: true });
svdf('svdf_rank2_hybrid_asymmetric', 'hybrid SVDF rank 2, RELU, asymmetric_quantize_inputs', { rank: 2, act: 'RELU', hybrid: true, asymmetric: true });

def('svdf_int8', 'integer SVDF rank 2: int8 input and feature weights, int16 time weights and state, int32 bias, int8 output', (m) => {
  const [batch, input, units, rank, memory] = [2, 3, 5, 2, 4];
  const filters = units * rank;
  const xq = { scale: [2 / 255], zero_point: [-5] };
  const x = m.quantize(m.input('input', [batch, input], 'INT8'), xq);
  const wf = int8Weights(m, 'svdf/feature_weights', [filters, input], 0.6);
  const stateScale = 1 / 4096;
  const wtScale = 0.5 / 32767;
  const wt = m.quantized('svdf/time_weights', [filters, memory], m.randomValues(filters * memory, 0.5), { type: 'INT16', scale: [wtScale], zero_point: [0] });
  const b = m.quantized('svdf/bias', [units], m.randomValues(units, 0.2), { type: 'INT32', scale: [stateScale * wtScale], zero_point: [0] });
  const state = m.quantize(variable(m, 'svdf/state', [batch, memory * filters], 'INT16'), { scale: [stateScale], zero_point: [0] });
  const y = m.quantize(m.tensor('output', [batch, units], 'INT8'), { scale: [2.5 / 128], zero_point: [4] });
  m.op('SVDF', [x, wf.t, wt, b, state], [y], 'SVDFOptions', { rank, fused_activation_function: 'RELU' });
  m.output(y);
});

// The integer kernel's edges (--quantization exact computes them bit for
// bit): a feature rescale above 1 (a left shift) that saturates the int16
// state, time weights near the int16 ends, so that by the third invocation the
// kernel's int32 time sums pass 2^31 and wrap; the input zero point at -128.
def('svdf_int8_wrap', 'integer SVDF rank 3 (12 filters, 4 units), input [3,7], memory 5: the int16 state saturates and the int32 time sums wrap', (m) => {
  const [batch, input, units, rank, memory] = [3, 7, 4, 3, 5];
  const filters = units * rank;
  const x = m.quantize(m.input('input', [batch, input], 'INT8'), { scale: [0.05], zero_point: [-128] });
  const wf = int8Weights(m, 'svdf/feature_weights', [filters, input], 0.6);
  const stateScale = (0.05 * wf.scale) / 3.7;  // feature rescale 3.7: left shift 2
  const wtScale = 1 / 32767;
  const time = Array.from({ length: filters * memory }, (_, i) => (Math.floor(i / memory) % 2 ? -1 : 1) * (0.9 + 0.1 * m.rand()));
  const wt = m.quantized('svdf/time_weights', [filters, memory], time, { type: 'INT16', scale: [wtScale], zero_point: [0] });
  const b = m.quantized('svdf/bias', [units], m.randomValues(units, 0.2), { type: 'INT32', scale: [stateScale * wtScale], zero_point: [0] });
  const state = m.quantize(variable(m, 'svdf/state', [batch, memory * filters], 'INT16'), { scale: [stateScale], zero_point: [0] });
  const y = m.quantize(m.tensor('output', [batch, units], 'INT8'), { scale: [stateScale * 32767 * 2 / 128], zero_point: [-3] });
  m.op('SVDF', [x, wf.t, wt, b, state], [y], 'SVDFOptions', { rank, fused_activation_function: 'RELU' });
  m.output(y);
});
def('svdf_int8_memory1_nobias', 'integer SVDF rank 1, memory 1 (the state is the newest column only), no bias, input [2,6], 3 units, output zero point -128', (m) => {
  const [batch, input, units, memory] = [2, 6, 3, 1];
  const x = m.quantize(m.input('input', [batch, input], 'INT8'), { scale: [0.02], zero_point: [7] });
  const wf = int8Weights(m, 'svdf/feature_weights', [units, input], 0.8);
  const stateScale = 1 / 2048;
  const wt = m.quantized('svdf/time_weights', [units, memory], m.randomValues(units * memory, 0.7), { type: 'INT16', scale: [0.7 / 32767], zero_point: [0] });
  const state = m.quantize(variable(m, 'svdf/state', [batch, memory * units], 'INT16'), { scale: [stateScale], zero_point: [0] });
  const y = m.quantize(m.tensor('output', [batch, units], 'INT8'), { scale: [1 / 128], zero_point: [-128] });
  m.op('SVDF', [x, wf.t, wt, ABSENT, state], [y], 'SVDFOptions', { rank: 1, fused_activation_function: 'RELU' });
  m.output(y);
});

writeModels({ dir: JSON_DIR, prefix: 'rnn_', models: MODELS, specsFile: SPECS_FILE });
