#!/usr/bin/env node
// Writes the test models of TFLite's audio custom ops, AudioSpectrogram and
// Mfcc (core/ops/audio.cc), as FlatBuffer JSON into
// tests/models/json/audio_*.json, plus their input domains into
// tests/models/specs_audio.json. Same format and conventions as
// make_models.mjs (see README.md); only audio_* files are touched.
//
//   node tests/models/make_models_audio.mjs      # from the repository root
//
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flex, writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_DIR = join(HERE, 'json');
const SPECS_FILE = join(HERE, 'specs_audio.json');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name: `audio_${name}`, description, build });

const fftBins = (window) => 2 ** Math.ceil(Math.log2(window)) / 2 + 1;

// AudioSpectrogram of `x` [samples, channels]: [channels, frames, bins].
function spectrogram(m, x, { window, stride, squared }) {
  const [samples, channels] = m.shape(x);
  const frames = 1 + Math.floor((samples - window) / stride);
  const y = m.tensor('spectrogram', [channels, frames, fftBins(window)]);
  m.customOp('AudioSpectrogram', [x], [y], { window_size: window, stride, magnitude_squared: squared });
  return y;
}

// Mfcc of a squared-magnitude spectrogram [channels, frames, bins] at `rate`
// (an int32 [1] tensor). Limits are written as floats, as TensorFlow does.
function mfcc(m, spec, rate, { upper, lower, channels, coefficients }) {
  const [c, frames] = m.shape(spec);
  const y = m.tensor('mfcc', [c, frames, coefficients]);
  m.customOp('Mfcc', [spec, rate], [y], {
    upper_frequency_limit: flex.float(upper), lower_frequency_limit: flex.float(lower),
    filterbank_channel_count: channels, dct_coefficient_count: coefficients,
  });
  return y;
}

def('spectrogram_squared', 'AudioSpectrogram of [700, 1] samples in [-1, 1): window 96 (FFT 128), stride 40, squared magnitude -> [1, 16, 65]',
  (m) => m.output(spectrogram(m, m.input('samples', [700, 1], 'FLOAT32', [-1, 1]), { window: 96, stride: 40, squared: true })));
def('spectrogram_magnitude_stereo', 'AudioSpectrogram of 2 channels [513, 2]: window 100 (FFT 128), stride 37, magnitude -> [2, 12, 65]',
  (m) => m.output(spectrogram(m, m.input('samples', [513, 2], 'FLOAT32', [-1, 1]), { window: 100, stride: 37, squared: false })));
def('mfcc_runtime_rate', 'Mfcc of a [2, 7, 129] squared spectrum at a run-time rate of 16 kHz: 40 mel channels 20..4000 Hz, 13 coefficients',
  (m) => {
    const spec = m.input('spectrum', [2, 7, 129], 'FLOAT32', [0, 50]);
    const rate = m.input('sample_rate', [1], 'INT32', { value: [16000] });
    m.output(mfcc(m, spec, rate, { upper: 4000, lower: 20, channels: 40, coefficients: 13 }));
  });
def('mfcc_constant_rate', 'Mfcc of a [1, 5, 129] squared spectrum at a constant 8 kHz: limits 125.7..3800.5 Hz (TFLite truncates them), 23 channels, 23 coefficients',
  (m) => {
    const spec = m.input('spectrum', [1, 5, 129], 'FLOAT32', [0, 20]);
    const rate = m.constant('sample_rate', [1], 'INT32', [8000]);
    m.output(mfcc(m, spec, rate, { upper: 3800.5, lower: 125.7, channels: 23, coefficients: 23 }));
  });
def('mfcc_past_nyquist', 'Mfcc at 6 kHz with an upper limit of 4000 Hz, past the last bin: TFLite gives zeros',
  (m) => {
    const spec = m.input('spectrum', [1, 3, 129], 'FLOAT32', [0, 20]);
    const rate = m.input('sample_rate', [1], 'INT32', { value: [6000] });
    m.output(mfcc(m, spec, rate, { upper: 4000, lower: 20, channels: 40, coefficients: 13 }));
  });
def('speech_front_end', 'A speech-command front end: AudioSpectrogram (window 240, stride 120) of [1600, 1] samples -> Mfcc at a run-time 16 kHz (32 channels 20..7600 Hz, 10 coefficients)',
  (m) => {
    const spec = spectrogram(m, m.input('samples', [1600, 1], 'FLOAT32', [-1, 1]), { window: 240, stride: 120, squared: true });
    const rate = m.input('sample_rate', [1], 'INT32', { value: [16000] });
    m.output(mfcc(m, spec, rate, { upper: 7600, lower: 20, channels: 32, coefficients: 10 }));
  });

writeModels({ dir: JSON_DIR, prefix: 'audio_', models: MODELS, specsFile: SPECS_FILE });
