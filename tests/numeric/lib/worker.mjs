// Worker process: started by run.mjs with child_process.fork(). Loading ONNX
// Runtime and the TFLite Wasm runtimes costs about a second, so one worker
// handles many models, one at a time: {type: 'task', id, task} in,
// {type: 'result', id, result} out.

import { processModel, runtimePoisoned } from './pipeline.mjs';

process.on('message', async (msg) => {
  if (!msg || msg.type !== 'task') return;
  let result;
  try {
    result = await processModel(msg.task);
  } catch (e) {
    result = { name: msg.task.name, outcome: 'fail', message: `harness error: ${e && e.stack ? e.stack : e}`, notes: [] };
  }
  if (runtimePoisoned()) {
    // A Wasm runtime aborted: report, then let the parent start a fresh worker.
    process.send({ type: 'result', id: msg.id, result, retire: true }, () => process.exit(0));
    return;
  }
  process.send({ type: 'result', id: msg.id, result });
});

process.on('disconnect', () => process.exit(0));

// A rejected promise deep inside a runtime must not go unnoticed; report and
// let the parent account the current model as failed.
process.on('unhandledRejection', (e) => {
  process.stderr.write(`unhandled rejection: ${e && e.stack ? e.stack : e}\n`);
  process.exit(70);
});

process.send({ type: 'ready' });
