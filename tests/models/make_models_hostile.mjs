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

// ---- control flow (issue 18): the subgraph indices of WHILE, IF, CALL and
// CALL_ONCE are untrusted. A subgraph reached from itself is an invalid model
// (TFLite's interpreter would recurse until its stack ends), an index out of
// range too; nesting beyond max_subgraph_depth and copies multiplying past
// max_operators are resource limits.

// cond: value < 10 (float scalar); body: value + 1, through `bodyOps`.
function loopParts(m, bodyOps) {
  const cond = m.subgraph('cond', (c) => {
    const v = c.input('value', []);
    const y = c.tensor('again', [], 'BOOL');
    c.op('LESS', [v, c.f32('limit', [], [10])], [y]);
    c.output(y);
  });
  return { cond, body: m.subgraph('body', (b) => bodyOps(b, b.input('value', []))) };
}

def('subgraph_recursive_while', 'WHILE whose body runs a WHILE of the same body (subgraph 2 reached from itself)', (m) => {
  const x = m.input('x', []);
  const { cond, body } = loopParts(m, (b, v) => {
    const y = b.tensor('inner', []);
    b.op('WHILE', [v], [y], 'WhileOptions', { cond_subgraph_index: 1, body_subgraph_index: 2 });
    b.output(y);
  });
  const y = m.tensor('output', []);
  m.op('WHILE', [x], [y], 'WhileOptions', { cond_subgraph_index: cond, body_subgraph_index: body });
  m.output(y);
});

def('subgraph_self_call', 'CALL of subgraph 0 from subgraph 0 (the subgraph converted calls itself)', (m) => {
  const x = m.input('x', [2]);
  const y = m.tensor('output', [2]);
  m.op('CALL', [x], [y], 'CallOptions', { subgraph: 0 });
  m.output(y);
});

def('subgraph_indirect_recursion', 'IF whose then branch CALLs a subgraph whose IF runs the first branch again', (m) => {
  const c = m.input('c', [], 'BOOL');
  const x = m.input('x', []);
  // Subgraph 1 (then) CALLs 2; subgraph 2 IFs back into 1; 3 is a plain else branch.
  m.subgraph('then', (g) => {
    const gc = g.input('c', [], 'BOOL');
    const gx = g.input('x', []);
    const y = g.tensor('called', []);
    g.op('CALL', [gc, gx], [y], 'CallOptions', { subgraph: 2 });
    g.output(y);
  });
  m.subgraph('callee', (g) => {
    const gc = g.input('c', [], 'BOOL');
    const gx = g.input('x', []);
    const y = g.tensor('again', []);
    g.op('IF', [gc, gc, gx], [y], 'IfOptions', { then_subgraph_index: 1, else_subgraph_index: 3 });
    g.output(y);
  });
  m.subgraph('else', (g) => {
    g.input('c', [], 'BOOL');
    const gx = g.input('x', []);
    const y = g.tensor('negated', []);
    g.op('NEG', [gx], [y]);
    g.output(y);
  });
  const y = m.tensor('output', []);
  m.op('IF', [c, c, x], [y], 'IfOptions', { then_subgraph_index: 1, else_subgraph_index: 3 });
  m.output(y);
});

def('subgraph_index_out_of_range', 'WHILE whose cond subgraph index is 2147483647 (the model has 3)', (m) => {
  m.uncheckedSubgraphIndices = true;
  const x = m.input('x', []);
  const { body } = loopParts(m, (b, v) => {
    const y = b.tensor('next', []);
    b.op('ADD', [v, b.f32('one', [], [1])], [y], 'AddOptions', {});
    b.output(y);
  });
  const y = m.tensor('output', []);
  m.op('WHILE', [x], [y], 'WhileOptions', { cond_subgraph_index: 2147483647, body_subgraph_index: body });
  m.output(y);
});

def('subgraph_negative_index', 'IF whose else subgraph index is -5', (m) => {
  m.uncheckedSubgraphIndices = true;
  const c = m.input('c', [], 'BOOL');
  const x = m.input('x', [3]);
  const then = m.subgraph('then', (g) => {
    const gx = g.input('x', [3]);
    const y = g.tensor('abs', [3]);
    g.op('ABS', [gx], [y]);
    g.output(y);
  });
  const y = m.tensor('output', [3]);
  m.op('IF', [c, x], [y], 'IfOptions', { then_subgraph_index: then, else_subgraph_index: -5 });
  m.output(y);
});

def('subgraph_nesting_too_deep', '20 WHILEs nested in each other\'s bodies (the limit is 16)', (m) => {
  const x = m.input('x', []);
  const cond = m.subgraph('cond', (c) => {
    const v = c.input('value', []);
    const y = c.tensor('again', [], 'BOOL');
    c.op('LESS', [v, c.f32('limit', [], [1])], [y]);
    c.output(y);
  });
  // Body k runs a WHILE of body k + 1; the last one adds 1.
  const depth = 20;
  const first = m.graphs.length;
  for (let k = 0; k < depth; ++k) {
    m.subgraph(`body_${k}`, (b) => {
      const v = b.input('value', []);
      const y = b.tensor('next', []);
      if (k + 1 < depth)
        b.op('WHILE', [v], [y], 'WhileOptions', { cond_subgraph_index: cond, body_subgraph_index: first + k + 1 });
      else
        b.op('ADD', [v, b.f32('one', [], [1])], [y], 'AddOptions', {});
      b.output(y);
    });
  }
  const y = m.tensor('output', []);
  m.op('WHILE', [x], [y], 'WhileOptions', { cond_subgraph_index: cond, body_subgraph_index: first });
  m.output(y);
});

def('subgraph_copies_multiply', 'subgraphs 1..14 each CALL the next one four times (4^14 copies of the last one ' +
  'if inlined without a bound)', (m) => {
  const x = m.input('x', [2]);
  const levels = 14;
  for (let k = 1; k <= levels; ++k) {
    m.subgraph(`level_${k}`, (g) => {
      let v = g.input('value', [2]);
      for (let c = 0; c < 4; ++c) {
        const y = g.tensor(`step_${c}`, [2]);
        if (k < levels) g.op('CALL', [v], [y], 'CallOptions', { subgraph: k + 1 });
        else g.op('ADD', [v, g.f32(`one_${c}`, [2], [1, 1])], [y], 'AddOptions', {});
        v = y;
      }
      g.output(v);
    });
  }
  const y = m.tensor('output', [2]);
  m.op('CALL', [x], [y], 'CallOptions', { subgraph: 1 });
  m.output(y);
});

// Its own directory: every file in it is this generator's (prefix '').
writeModels({ dir: OUT_DIR, prefix: '', models: MODELS });
