#!/usr/bin/env node
// Writes the test models of TensorFlow Lite Micro's Signal library custom ops
// (core/ops/signal.cc, signal_fft.cc) as FlatBuffer JSON into
// tests/models/json/signal_*.json, plus their input domains into
// tests/models/specs_signal.json. Same format and conventions as
// make_models.mjs (see README.md); only signal_* files are touched. No
// runtime here runs these ops: the harness's "signal" reference runs their
// kernels in JS (tests/numeric/lib/signal_kernel.mjs) and any builtin ops
// between them in LiteRT.js.
//
//   node tests/models/make_models_signal.mjs      # from the repository root
//
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_signal.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `signal_${name}`, description, build });

const INT16_FULL = [-32768, 32767];
const UINT32_WIDE = [0, 2 ** 31];

// Random integers in [lo, hi] from the model's PRNG.
const ints = (m, n, lo, hi) => Array.from({ length: n }, () => lo + Math.floor(m.model.rand() * (hi - lo + 1)));

// A triangular filter bank over `bins` spectrum bins with `channels`
// channels, laid out as TFLM's filter bank op reads it: per channel (and the
// scratch channel 0) its first bin, its first weight and its width; weights
// w and unweights 4096 - w (12 bits).
function bank(m, bins, channels) {
  const edges = Array.from({ length: channels + 2 }, (_, i) => 1 + Math.floor((i * (bins - 2)) / (channels + 1)));
  const freq = [], wstart = [], width = [], weights = [], unweights = [];
  for (let c = 0; c <= channels; c++) {
    freq.push(edges[c]);
    wstart.push(weights.length);
    width.push(edges[c + 1] - edges[c]);
    for (let j = 0; j < edges[c + 1] - edges[c]; j++) {
      const w = Math.round((4096 * (j + 0.5)) / (edges[c + 1] - edges[c]));
      weights.push(w);
      unweights.push(4096 - w);
    }
  }
  return [
    m.constant('weights', [weights.length], 'INT16', weights),
    m.constant('unweights', [unweights.length], 'INT16', unweights),
    m.constant('channel_frequency_starts', [channels + 1], 'INT16', freq),
    m.constant('channel_weight_starts', [channels + 1], 'INT16', wstart),
    m.constant('channel_widths', [channels + 1], 'INT16', width),
  ];
}

def('window', 'SignalWindow of int16 [3, 40] by a [40] window (weights in [0, 4096]), shift 12',
  (m) => {
    const x = m.input('frames', [3, 40], 'INT16', INT16_FULL);
    const w = m.constant('window', [40], 'INT16', ints(m, 40, 0, 4096));
    const y = m.tensor('windowed', [3, 40], 'INT16');
    m.customOp('SignalWindow', [x, w], [y], { shift: 12 });
    m.output(y);
  });

def('fft_auto_scale', 'SignalFftAutoScale of int16 [57] in [-300, 300]: the shift that fills 16 bits (int32 scalar) and the shifted input',
  (m) => {
    const x = m.input('frame', [57], 'INT16', [-300, 300]);
    const y = m.tensor('scaled', [57], 'INT16');
    const s = m.tensor('scale_bits', [], 'INT32');
    m.customOp('SignalFftAutoScale', [x], [y, s]);
    m.output(y, s);
  });

for (const [fft, rows, length, range] of [[64, 2, 50, INT16_FULL], [128, 3, 97, [-4000, 4000]]]) {
  def(`rfft_${fft}`, `SignalRfft (int16, kissfft fixed point) of [${rows}, ${length}] zero-padded to ${fft} -> [${rows}, ${fft + 2}] (re, im of ${fft / 2 + 1} bins)`,
    (m) => {
      const x = m.input('frames', [rows, length], 'INT16', range);
      const y = m.tensor('spectrum', [rows, fft + 2], 'INT16');
      m.customOp('SignalRfft', [x], [y], { T: 7, fft_length: fft });
      m.output(y);
    });
}

def('rfft_float_256', 'SignalRfft (float32, kissfft float) of [2, 200] in [-1, 1] zero-padded to 256 -> [2, 258]',
  (m) => {
    const x = m.input('frames', [2, 200], 'FLOAT32', [-1, 1]);
    const y = m.tensor('spectrum', [2, 258], 'FLOAT32');
    m.customOp('SignalRfft', [x], [y], { T: 0, fft_length: 256 });
    m.output(y);
  });

const TYPE_CODE = { INT16: 7, INT32: 2, FLOAT32: 0 };
const KISSFFT = { INT16: 'fixed point Q15', INT32: 'fixed point Q31', FLOAT32: 'float, / fft_length' };
for (const [name, type, rows, fft, range] of [
  ['irfft_int16_64', 'INT16', 3, 64, [-3000, 3000]],
  ['irfft_int32_16', 'INT32', 5, 16, [-(2 ** 31), 2 ** 31 - 1]],
  ['irfft_float_128', 'FLOAT32', 2, 128, [-1, 1]],
]) {
  def(name, `SignalIrfft (${type.toLowerCase()}, kissfft ${KISSFFT[type]}) of [${rows}, ${fft + 2}] (${fft / 2 + 1} bins) -> [${rows}, ${fft}]`,
    (m) => {
      const x = m.input('spectrum', [rows, fft + 2], type, range);
      const y = m.tensor('samples', [rows, fft], type);
      m.customOp('SignalIrfft', [x], [y], { T: TYPE_CODE[type], fft_length: fft });
      m.output(y);
    });
}

def('rfft_int32_32', 'SignalRfft (int32, kissfft fixed point Q31) of [2, 30] over the full int32 range zero-padded to 32 -> [2, 34]',
  (m) => {
    const x = m.input('frames', [2, 30], 'INT32', [-(2 ** 31), 2 ** 31 - 1]);
    const y = m.tensor('spectrum', [2, 34], 'INT32');
    m.customOp('SignalRfft', [x], [y], { T: 2, fft_length: 32 });
    m.output(y);
  });

def('energy', 'SignalEnergy of int16 [66] (33 bins) over bins [3, 29), then CAST to int32 and SLICE [3, 26) (the kernel leaves the other bins unwritten)',
  (m) => {
    const x = m.input('spectrum', [66], 'INT16', INT16_FULL);
    const e = m.tensor('energy', [33], 'UINT32');
    m.customOp('SignalEnergy', [x], [e], { end_index: 29, start_index: 3 });
    const i = m.tensor('energy_i32', [33], 'INT32');
    m.op('CAST', [e], [i]);
    const y = m.tensor('bins', [26], 'INT32');
    m.op('SLICE', [i, m.constant('begin', [1], 'INT32', [3]), m.constant('size', [1], 'INT32', [26])], [y]);
    m.output(y);
  });

def('filter_bank_sqrt', 'SignalFilterBank of uint32 [37] bins into 6 triangular channels (uint64), then SignalFilterBankSquareRoot with a scale_bits input of 3',
  (m) => {
    const x = m.input('energy', [37], 'UINT32', UINT32_WIDE);
    const s = m.input('scale_bits', [], 'INT32', { value: 3 });
    const acc = m.tensor('channels', [6], 'UINT64');
    m.customOp('SignalFilterBank', [x, ...bank(m, 37, 6)], [acc], { num_channels: 6 });
    const y = m.tensor('roots', [6], 'UINT32');
    m.customOp('SignalFilterBankSquareRoot', [acc, s], [y]);
    m.output(y);
  });

// The audio preprocessor's coefficients; the clamped model's adapt fast (the
// estimate is then often above a falling signal, where clamping acts).
const SLOW = { smoothing: 409, one_minus_smoothing: 15975, alternate_smoothing: 983, alternate_one_minus_smoothing: 15401 };
const FAST = { smoothing: 12000, one_minus_smoothing: 4384, alternate_smoothing: 9000, alternate_one_minus_smoothing: 7384 };
for (const [name, channels, clamping, bits, k] of [['spectral_subtraction', 13, false, 10, SLOW], ['spectral_subtraction_clamped', 7, true, 6, FAST]]) {
  def(name, `SignalFilterBankSpectralSubtraction of uint32 [${channels}], smoothing ${k.smoothing} / ${k.alternate_smoothing} of 2^14, smoothing_bits ${bits}, clamping ${clamping}: the noise estimate kept between invocations (state)`,
    (m) => {
      const x = m.input('channels', [channels], 'UINT32', [0, 2 ** 20]);
      const y = m.tensor('subtracted', [channels], 'UINT32');
      const noise = m.tensor('noise_estimate', [channels], 'UINT32');
      m.customOp('SignalFilterBankSpectralSubtraction', [x], [y, noise], {
        ...k, clamping, min_signal_remaining: 819, num_channels: channels, smoothing_bits: bits,
        spectral_subtraction_bits: 14,
      });
      m.output(y, noise);
    });
}

def('pcan', 'SignalPCAN of uint32 [9] with a noise estimate [9] and a 125-entry int16 gain LUT, snr_shift 6',
  (m) => {
    const x = m.input('channels', [9], 'UINT32', [0, 2 ** 24]);
    const noise = m.input('noise_estimate', [9], 'UINT32', UINT32_WIDE);
    const lut = [];
    for (let s = 0; s < 32; s++) lut.push(...ints(m, 1, 0, 8000), ...ints(m, 2, -2000, 2000), 0);
    const y = m.tensor('normalized', [9], 'UINT32');
    m.customOp('SignalPCAN', [x, noise, m.constant('gain_lut', [125], 'INT16', lut.slice(0, 125))], [y], { snr_shift: 6 });
    m.output(y);
  });

for (const [name, n, bits, scale] of [['log', 19, 3, 64], ['log_scaled', 11, 0, 1 << 10]]) {
  def(name, `SignalFilterBankLog of uint32 [${n}], input_correction_bits ${bits}, output_scale ${scale} -> int16`,
    (m) => {
      const x = m.input('channels', [n], 'UINT32', UINT32_WIDE);
      const y = m.tensor('log', [n], 'INT16');
      m.customOp('SignalFilterBankLog', [x], [y], { input_correction_bits: bits, output_scale: scale });
      m.output(y);
    });
}

// ---- the stream ops: buffers kept between invocations (state) ----

def('delay', 'SignalDelay of int16 [2, 3, 17] by 5 samples per row (6 delay lines, state)',
  (m) => {
    const x = m.input('samples', [2, 3, 17], 'INT16', INT16_FULL);
    const y = m.tensor('delayed', [2, 3, 17], 'INT16');
    m.customOp('SignalDelay', [x], [y], { delay_length: 5 });
    m.output(y);
  });

def('framer', 'SignalFramer of int16 [2, 24], frames of 10 every 4 samples with prefill -> [2, 6, 10] and output_valid (the last 6 samples of each row are state)',
  (m) => {
    const x = m.input('samples', [2, 24], 'INT16', INT16_FULL);
    const y = m.tensor('frames', [2, 6, 10], 'INT16');
    const valid = m.tensor('valid', [], 'BOOL');
    m.customOp('SignalFramer', [x], [y, valid], { frame_size: 10, frame_step: 4, prefill: true });
    m.output(y, valid);
  });

def('framer_filling', 'SignalFramer of int16 [3, 15], frames of 7 every 3 samples without prefill -> [3, 5, 7] and output_valid: the first two frames unwritten while the queue fills (zeros; its content and length are state)',
  (m) => {
    const x = m.input('samples', [3, 15], 'INT16', INT16_FULL);
    const y = m.tensor('frames', [3, 5, 7], 'INT16');
    const valid = m.tensor('valid', [], 'BOOL');
    m.customOp('SignalFramer', [x], [y, valid], { frame_size: 7, frame_step: 3, prefill: false });
    m.output(y, valid);
  });

for (const [name, type, shape, step, range] of [
  ['overlap_add_int16', 'INT16', [3, 4, 12], 5, INT16_FULL],
  ['overlap_add_float', 'FLOAT32', [2, 3, 9], 4, [-1, 1]],
]) {
  const out = [shape[0], shape[1] * step];
  def(name, `SignalOverlapAdd (${type.toLowerCase()}${type === 'INT16' ? ', saturating' : ''}) of [${shape}] (frames of ${shape[2]}) every ${step} samples -> [${out}] (the overlap buffer is state)`,
    (m) => {
      const x = m.input('frames', shape, type, range);
      const y = m.tensor('samples', out, type);
      m.customOp('SignalOverlapAdd', [x], [y], { T: type === 'INT16' ? 7 : 0, frame_step: step });
      m.output(y);
    });
}

for (const [name, channels, left, right, step] of [['stacker', 7, 2, 1, 1], ['stacker_step2', 5, 1, 0, 2]]) {
  const size = channels * (left + right + 1);
  def(name, `SignalStacker of int16 [${channels}] frames: left context ${left}, right ${right}, step ${step} -> [${size}] and output_valid (the queue and its fill are state)`,
    (m) => {
      const x = m.input('frame', [channels], 'INT16', INT16_FULL);
      const y = m.tensor('stacked', [size], 'INT16');
      const valid = m.tensor('valid', [], 'BOOL');
      m.customOp('SignalStacker', [x], [y, valid], {
        num_channels: channels, stacker_left_context: left, stacker_right_context: right, stacker_step: step,
      });
      m.output(y, valid);
    });
}

writeModels({ dir: JSON_DIR, prefix: 'signal_', models: MODELS, specsFile: SPECS_FILE });
