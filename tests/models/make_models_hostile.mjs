#!/usr/bin/env node
// Writes hostile test models: valid FlatBuffers (they pass the schema
// verifier) built to crash or exhaust a converter, as FlatBuffer JSON into
// tests/models/hostile/*.json. The build compiles them like the op models
// (tests/CMakeLists.txt); tests/unit/hostile_test.cc and the server tests
// convert them and expect a clean error or a correct result, within time and
// memory bounds. They are not op models: the numeric suite does not run them.
//
//   node tests/models/make_models_hostile.mjs      # from the repository root
//
// Models whose size comes from shared FlatBuffer tables (one table referenced
// many times) cannot be written as JSON; tests/unit/hostile_graphs.cc builds
// those with the FlatBuffers builder.
// Node >= 18, no dependencies.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeModels } from './lib/model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT_DIR = join(HERE, 'hostile');

const MODELS = [];
const def = (name, description, build) => MODELS.push({ name, description, build });

// SPACE_TO_BATCH_ND whose data input is absent (-1) -> CONV_2D (VALID, stride
// 1) -> BATCH_TO_SPACE_ND: the dilated-convolution pattern, with nothing to
// dilate. A fusion that ran before the arity checks read tensor -1.
def('s2b_absent_input_dilated_conv', 'SPACE_TO_BATCH_ND input -1 -> CONV_2D -> BATCH_TO_SPACE_ND', (m) => {
  const block = m.constant('block', [2], 'INT32', [2, 2]);
  const pads = m.constant('paddings', [2, 2], 'INT32', [0, 0, 0, 0]);
  const s2b = m.tensor('space_to_batch', [4, 3, 3, 2]);
  m.op('SPACE_TO_BATCH_ND', [-1, block, pads], [s2b], 'SpaceToBatchNDOptions', {});
  const w = m.rand32('conv/weights', [2, 1, 1, 2], 0.5);
  const b = m.rand32('conv/bias', [2], 0.1);
  const conv = m.tensor('conv', [4, 3, 3, 2]);
  m.op('CONV_2D', [s2b, w, b], [conv], 'Conv2DOptions',
    { padding: 'VALID', stride_w: 1, stride_h: 1, dilation_w_factor: 1, dilation_h_factor: 1 });
  const crops = m.constant('crops', [2, 2], 'INT32', [0, 0, 0, 0]);
  const y = m.tensor('output', [1, 6, 6, 2]);
  m.op('BATCH_TO_SPACE_ND', [conv, block, crops], [y], 'BatchToSpaceNDOptions', {});
  m.output(y);
});

// RFFT2D -> 34 RESHAPEs, each reading the previous tensor in both input slots
// -> COMPLEX_ABS. A pass listing readers once per input slot doubles the list
// at each step (2^34 entries).
def('rfft_reshape_double_reads', 'RFFT2D -> 34 x RESHAPE(x, x) -> COMPLEX_ABS', (m) => {
  const x = m.input('input', [1, 8]);
  const len = m.constant('fft_length', [1], 'INT32', [8]);
  let t = m.tensor('rfft', [1, 5], 'COMPLEX64');
  m.op('RFFT2D', [x, len], [t], 'Rfft2dOptions', {});
  for (let i = 0; i < 34; ++i) {
    const y = m.tensor(`reshape_${i}`, [1, 5], 'COMPLEX64');
    m.op('RESHAPE', [t, t], [y], 'ReshapeOptions', {});
    t = y;
  }
  const y = m.tensor('output', [1, 5]);
  m.op('COMPLEX_ABS', [t], [y]);
  m.output(y);
});

// Its own directory: every file in it is this generator's (prefix '').
writeModels({ dir: OUT_DIR, prefix: '', models: MODELS });
