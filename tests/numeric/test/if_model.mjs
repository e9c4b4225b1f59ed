// Numeric check of a node subgraph: ONNX Runtime runs the If model the
// emitter writes (tests/unit/subgraph_graphs.h, if_model()) and must take the
// branch the condition picks, reading the outer-scope values:
//   cond true:  y = (|x| + 1.5) * 2     (then_branch: own k, outer a and scale)
//   cond false: y = |x| - 0.25          (else_branch: own k, outer a)
//
//   node tests/numeric/test/if_model.mjs BUILD/tests/write_if_model
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localRequire } from '../lib/wasm_loader.mjs';

const tool = process.argv[2];
if (!tool) {
  // `node --test tests/numeric/test/` runs every file here, this one without
  // its tool (the ctest numeric_if_subgraph passes it): nothing to check then.
  if (process.env.NODE_TEST_CONTEXT) {
    console.log('if_model.mjs: no WRITE_IF_MODEL given (the ctest numeric_if_subgraph runs it); skipped');
    process.exit(0);
  }
  console.error('usage: if_model.mjs WRITE_IF_MODEL');
  process.exit(2);
}
const ort = localRequire('onnxruntime-node');
ort.env.logLevel = 'error';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lite2onnx-if-'));
const file = path.join(dir, 'if_model.onnx');
let failures = 0;
try {
  execFileSync(tool, [file], { stdio: 'inherit' });
  const session = await ort.InferenceSession.create(file, { executionProviders: ['cpu'] });
  const xs = Float32Array.from([-3, -1.5, 0, 0.5, 2, 7.25]);
  for (const cond of [true, false]) {
    const feeds = {
      x: new ort.Tensor('float32', xs, [2, 3]),
      cond: new ort.Tensor('bool', Uint8Array.from([cond ? 1 : 0]), []),
    };
    const { y } = await session.run(feeds);
    const want = Array.from(xs, (v) => (cond ? (Math.abs(v) + 1.5) * 2 : Math.abs(v) - 0.25));
    const got = Array.from(y.data);
    const same = y.dims.join(',') === '2,3' && want.every((w, i) => got[i] === w);
    console.log(`cond=${cond}: ${same ? 'ok' : 'MISMATCH'} y=[${got}] want=[${want}]`);
    if (!same) failures++;
  }
  await session.release();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
