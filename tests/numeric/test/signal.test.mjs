// Self-tests of lib/signal_kernel.mjs, TensorFlow Lite Micro's Signal kernels
// in JS (the "signal" reference): mathematical facts each kernel must show,
// independent of the converter. (The kernels were also compared with
// tflite-micro's C sources, compiled outside the repository, on random
// inputs.)
import test from 'node:test';
import assert from 'node:assert/strict';

import * as k from '../lib/signal_kernel.mjs';

// A tone at bin b in a 256-point RFFT: its energy is in bin b.
test('signal kernel: the int16 RFFT of a tone peaks at its bin', () => {
  for (const bin of [3, 17, 64]) {
    const x = Int16Array.from({ length: 256 }, (_, i) => Math.round(8000 * Math.cos((2 * Math.PI * bin * i) / 256)));
    const spectrum = k.rfftInt16(x, 256, 256);
    const energy = k.spectrumToEnergy(spectrum, 0, 129, 129);
    const peak = energy.indexOf(Math.max(...energy));
    assert.equal(peak, bin);
  }
});

// kissfft's float FFT is unscaled: an impulse gives a flat spectrum of 1s;
// irfft_float.cc divides by fft_length, so the IRFFT inverts the RFFT.
test('signal kernel: the float RFFT of an impulse is flat and the IRFFT inverts it', () => {
  const x = new Float32Array(64);
  x[0] = 1;
  const spectrum = k.rfftFloat(x, 64, 64);
  for (let b = 0; b < 33; b++) {
    assert.ok(Math.abs(spectrum[2 * b] - 1) < 1e-6, `bin ${b} real ${spectrum[2 * b]}`);
    assert.ok(Math.abs(spectrum[2 * b + 1]) < 1e-6, `bin ${b} imag`);
  }
  const y = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i * 0.37) + 0.25 * Math.cos(i * 1.9));
  const back = k.irfftFloat(k.rfftFloat(y, 64, 64), 33, 64);
  for (let i = 0; i < 64; i++) assert.ok(Math.abs(back[i] - y[i]) < 1e-5, `sample ${i}: ${back[i]} vs ${y[i]}`);
});

test('signal kernel: the int16 IRFFT of the RFFT gives the signal scaled down by the stages', () => {
  const x = Int16Array.from({ length: 128 }, (_, i) => Math.round(20000 * Math.sin(i * 0.21)));
  const back = k.irfftInt16(k.rfftInt16(x, 128, 128), 65, 128);
  // In fixed point each stage divides by its radix and the splits by 2: the
  // round trip gives x / fft_length, within the rounding noise of its 14
  // rounded stages (2.4 units here, of an amplitude of 156).
  for (let i = 0; i < 128; i++) assert.ok(Math.abs(back[i] - x[i] / 128) <= 3, `sample ${i}: ${back[i]} vs ${x[i] / 128}`);
});

test('signal kernel: window, auto scale, energy', () => {
  const x = Int16Array.of(100, -200, 300, -32768);
  assert.deepEqual(Array.from(k.applyWindow(x, Int16Array.of(4096, 4096, 2048, 8192), 12)), [100, -200, 150, -32768]);
  const scaled = k.fftAutoScale(Int16Array.of(3, -5, 1));
  assert.equal(scaled.scaleBits, 12);  // |5| has 3 bits: 16 - 3 - 1
  assert.deepEqual(Array.from(scaled.output), [3 << 12, -5 << 12, 1 << 12]);
  // MaxAbs16's int16 negation of -32768 makes the maximum -32768 (no
  // scaling) until a later value exceeds it: the scan's order counts.
  assert.equal(k.fftAutoScale(Int16Array.of(1, 2, -32768)).scaleBits, 0);
  assert.equal(k.fftAutoScale(Int16Array.of(1, -32768, 2)).scaleBits, 13);
  // -32768^2 + -32768^2 wraps int32 and reads as uint32 2^31
  assert.deepEqual(Array.from(k.spectrumToEnergy(Int16Array.of(3, 4, -32768, -32768), 0, 2, 2)), [25, 2 ** 31]);
});

test('signal kernel: square roots round to nearest; the log is monotone', () => {
  // Rounded up when the remainder exceeds the root (15 -> 4, 24 -> 5, but
  // 2^40 + 2^20 -> 2^20: its remainder equals the root).
  const sq = k.filterbankSqrt(BigUint64Array.of(0n, 1n, 15n, 16n, 17n, 24n, 25n, 1n << 40n,
    (1n << 40n) + (1n << 20n), (1n << 40n) + (1n << 20n) + 1n), 0);
  assert.deepEqual(Array.from(sq), [0, 1, 4, 4, 4, 5, 5, 1 << 20, 1 << 20, (1 << 20) + 1]);
  const inputs = Uint32Array.from({ length: 200 }, (_, i) => Math.floor(1.11 ** i) + i);
  const logs = k.filterbankLog(inputs, 64, 0);
  for (let i = 1; i < logs.length; i++) assert.ok(logs[i] >= logs[i - 1], `log not monotone at ${inputs[i]}`);
  // ln(2^20) * 64 = 887.2
  assert.ok(Math.abs(k.filterbankLog(Uint32Array.of(1 << 20), 64, 0)[0] - 887) <= 1);
});

test('signal kernel: the filter bank splits a bin between two channels', () => {
  // Channel 1 takes bin 2 with weight 1000 and its unweight 3096 goes to channel 2.
  const out = k.filterbankAccumulate(Uint32Array.of(0, 0, 10, 0), Int16Array.of(1000), Int16Array.of(3096),
    Int16Array.of(0, 2, 0), Int16Array.of(0, 0, 0), Int16Array.of(0, 1, 0), 2);
  assert.deepEqual(Array.from(out), [10000n, 30960n]);
});

test('signal kernel: spectral subtraction keeps its noise estimate between calls', () => {
  const cfg = {
    num_channels: 2, smoothing: 8192, one_minus_smoothing: 8192, alternate_smoothing: 8192,
    alternate_one_minus_smoothing: 8192, smoothing_bits: 0, spectral_subtraction_bits: 14, min_signal_remaining: 0, clamping: false,
  };
  const noise = new Uint32Array(2);
  assert.deepEqual(Array.from(k.spectralSubtraction(cfg, Uint32Array.of(100, 40), noise)), [50, 20]);
  assert.deepEqual(Array.from(noise), [50, 20]);
  assert.deepEqual(Array.from(k.spectralSubtraction(cfg, Uint32Array.of(100, 40), noise)), [25, 10]);
  assert.deepEqual(Array.from(noise), [75, 30]);
});

test('signal kernel: delay, framer, stacker and overlap-add stream', () => {
  const delay = k.makeDelay(1, 3, 2);
  assert.deepEqual(Array.from(delay(Int16Array.of(1, 2, 3))), [0, 0, 1]);
  assert.deepEqual(Array.from(delay(Int16Array.of(4, 5, 6))), [2, 3, 4]);
  const framer = k.makeFramer(1, 4, 3, 2, true);
  const [frames, valid] = framer(Int16Array.of(1, 2, 3, 4));
  assert.deepEqual(Array.from(frames), [0, 1, 2, 2, 3, 4]);
  assert.equal(valid[0], 1);
  const unfilled = k.makeFramer(1, 2, 3, 2, false);
  assert.equal(unfilled(Int16Array.of(1, 2))[1][0], 0);
  assert.deepEqual(Array.from(unfilled(Int16Array.of(3, 4))[0]), [1, 2, 3]);
  const stacker = k.makeStacker(1, 1, 1, 1);
  assert.equal(stacker(Int16Array.of(5))[1][0], 0);  // [5, 5]: one frame short
  assert.deepEqual(Array.from(stacker(Int16Array.of(6))[0]), [5, 5, 6]);
  assert.deepEqual(Array.from(stacker(Int16Array.of(7))[0]), [5, 6, 7]);
  // Overlap-add of frames [1 1 1 1] every 2 samples: 1 1 2 2 2 2 ...
  const ola = k.makeOverlapAdd(1, 3, 4, 2, false);
  assert.deepEqual(Array.from(ola(Int16Array.from({ length: 12 }, () => 1))), [1, 1, 2, 2, 2, 2]);
  const saturating = k.makeOverlapAdd(1, 2, 2, 1, false);
  assert.deepEqual(Array.from(saturating(Int16Array.of(30000, 30000, 30000, 30000))), [30000, 32767]);
});
