// runOnnx (pipeline.mjs) in a child process, for diverge.mjs: ONNX Runtime
// 1.30 crashes (SIGSEGV at its default optimization level) on some graphs
// whose inner values are graph outputs, and a crash must cost one session,
// not the tool. The child gets {task, onnx, model, inputs} and sends back
// {outputs, notes} or {error}; both sides use the structured clone of
// typed arrays and Maps ('advanced' serialization).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

/**
 * runOnnx(task, onnxBytes, model, inputs) in a fresh child process. Resolves
 * to {outputs, notes}; rejects with an Error whose `crashed` is the signal or
 * exit code when the child died.
 */
export function runOnnxIsolated(task, onnx, model, inputs) {
  return new Promise((resolve, reject) => {
    const child = fork(SELF, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    let settled = false;
    child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-2000); });
    child.on('message', (m) => {
      settled = true;
      if (m.error) reject(new Error(m.error));
      else resolve(m);
      child.kill();
    });
    child.on('exit', (code, signal) => {
      if (settled) return;
      const why = signal ?? `exit code ${code}`;
      reject(Object.assign(new Error(`ONNX Runtime's process died (${why})${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`), { crashed: why }));
    });
    child.send({ task, onnx, model, inputs });
  });
}

if (process.argv[1] === SELF && process.send) {
  process.on('message', async ({ task, onnx, model, inputs }) => {
    const { runOnnx } = await import('./pipeline.mjs');
    try {
      const notes = [];
      const { outputs } = await runOnnx(task, onnx, model, inputs, notes);
      process.send({ outputs, notes });
    } catch (e) {
      process.send({ error: String(e?.message ?? e) });
    }
  });
}
