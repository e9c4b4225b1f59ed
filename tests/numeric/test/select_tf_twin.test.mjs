// Self-tests of the select-TF builtin twin the harness writes for Flex models
// (lib/select_tf_twin.mjs; no converter, no flatc):
//   node --test tests/numeric/test/select_tf_twin.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';

import { flex, flexbuffer } from '../../models/lib/model.mjs';
import { readNodeDef, rewriteSelectTf } from '../lib/select_tf_twin.mjs';

test('Flex ops become their builtins with the NodeDef options', () => {
  const ld = (field, bytes) => [(field << 3) | 2, bytes.length, ...bytes];
  const str = (s) => [...new TextEncoder().encode(s)];
  const attr = (key, value) => ld(5, [...ld(1, str(key)), ...ld(2, value)]);
  const options = (op, attrs) => flexbuffer([op, flex.blob([...ld(2, str(op)), ...attrs])]);
  const ss = options('StridedSlice', [...attr('begin_mask', [0x18, 5]), ...attr('shrink_axis_mask', [0x18, 2])]);
  assert.deepEqual(readNodeDef(ss).attrs.begin_mask, { i: 5 });
  const json = {
    operator_codes: [{ custom_code: 'FlexStridedSlice' }, { custom_code: 'FlexConcatV2' }],
    buffers: [{}, { data: [255, 255, 255, 255] }],
    subgraphs: [{
      tensors: [{ name: 'x', type: 'FLOAT32' }, { name: 'b', type: 'INT64' }, { name: 'y', type: 'FLOAT32' },
        { name: 'axis', type: 'INT32', buffer: 1 }, { name: 'z', type: 'FLOAT32' }],
      operators: [
        { opcode_index: 0, inputs: [0, 1, 1, 1], outputs: [2], custom_options: ss },
        { opcode_index: 1, inputs: [2, 2, 3], outputs: [4], custom_options: options('ConcatV2', attr('N', [0x18, 2])) },
      ],
    }],
  };
  assert.deepEqual(rewriteSelectTf(json), ['ConcatV2', 'StridedSlice']);
  const [cast1, cast2, cast3, slice, concat] = json.subgraphs[0].operators;
  assert.deepEqual(json.operator_codes.map((c) => c.builtin_code), ['STRIDED_SLICE', 'CAST', 'CONCATENATION']);
  for (const c of [cast1, cast2, cast3]) assert.equal(c.opcode_index, 1);
  assert.equal(slice.builtin_options_type, 'StridedSliceOptions');
  assert.equal(slice.builtin_options.begin_mask, 5);
  assert.equal(slice.builtin_options.shrink_axis_mask, 2);
  assert.deepEqual(slice.inputs, [0, 5, 6, 7]);  // int64 indices through CASTs to int32
  assert.equal(concat.builtin_options.axis, -1);
  assert.deepEqual(concat.inputs, [2, 2]);
  assert.equal(concat.custom_options, undefined);
  // A Flex op with no twin: no twin for the model.
  assert.equal(rewriteSelectTf({ operator_codes: [{ custom_code: 'FlexMatrixInverse' }], subgraphs: [] }), null);
});
