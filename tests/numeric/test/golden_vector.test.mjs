// Self-test of golden_vector.mjs: a generated int8 op model converted with
// --quantization exact, its ONNX output written as a C array beside its input
// (as TFLite Micro's examples publish theirs), then checked equal, one
// element off, and with a missing array.
//   LITE2ONNX_CLI=build/lite2onnx node --test tests/numeric/test/golden_vector.test.mjs
// Needs the converter and the generated op models beside it (build/tests/models).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = process.env.LITE2ONNX_CLI ?? path.resolve(HERE, '../../../build/lite2onnx');
const MODEL = path.join(path.dirname(CLI), 'tests', 'models', 'q_requantize.tflite');
const TOOL = path.resolve(HERE, '..', 'golden_vector.mjs');

function cArray(name, values) {
  return `int8_t ${name}[] = {\n    ${values.join(', ')}};\n`;
}

function check(onnx, data) {
  const r = spawnSync(process.execPath,
    [TOOL, '--onnx', onnx, '--data', data, '--input', 'feature_data', '--golden', 'golden_ref'],
    { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('golden_vector counts the elements that differ from a published output', {
  skip: !fs.existsSync(MODEL) && `no ${MODEL}`,
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'golden-vector-'));
  try {
    const onnx = path.join(dir, 'model.onnx');
    execFileSync(CLI, ['convert', '--quantization', 'exact', '--keep-io-layout', MODEL, '-o', onnx],
      { stdio: 'ignore' });
    const session = await ort.InferenceSession.create(onnx, { logSeverityLevel: 3 });
    const shape = session.inputMetadata[0].shape;
    const count = shape.reduce((a, b) => a * b, 1);
    const input = Int8Array.from({ length: count }, (_, i) => ((i * 53) % 256) - 128);
    const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('int8', input, shape) });
    const golden = Array.from(out[session.outputNames[0]].data);

    const data = path.join(dir, 'inout.cc');
    fs.writeFileSync(data, `// generated\n${cArray('feature_data', Array.from(input))}${cArray('golden_ref', golden)}`);
    let r = check(onnx, data);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`^0 of ${golden.length} elements differ`));

    const off = golden.slice();
    off[7] = off[7] > 0 ? off[7] - 2 : off[7] + 2;
    fs.writeFileSync(data, `${cArray('feature_data', Array.from(input))}${cArray('golden_ref', off)}`);
    r = check(onnx, data);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, new RegExp(`^1 of ${golden.length} elements differ from golden_ref, by at most 2 step`));
    assert.match(r.out, new RegExp(`\\[7\\] ${golden[7]} vs ${off[7]}`));

    fs.writeFileSync(data, cArray('feature_data', Array.from(input)));
    r = check(onnx, data);
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /no array golden_ref\[\]/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
