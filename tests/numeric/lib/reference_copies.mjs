// The copies of a model that the TFLite runtimes run in its place, written
// into the harness's output directory beside the converted model: one that
// declares the shapes of shape-less detection outputs, one that declares the
// input shapes given, and the unrolled twin of a model with WHILE loops
// (unroll_while.mjs). Each computes the model's own function; none is derived
// from lite2onnx's output.
import fs from 'node:fs';
import path from 'node:path';
import { detectionOutputShapes } from './detections.mjs';
import { readTfliteModel, operatorName } from './tflite_model.mjs';
import { jsonToTflite, tfliteToJson } from './tflite_rewrite.mjs';
import { unrolledTwinOf } from './unroll_while.mjs';

export function onnxFileName(name) {
  return name.replace(/\.tflite$/i, '').replace(/[\\/]+/g, '__') + '.onnx';
}

// LiteRT.js returns only outputs whose shape the file declares. A model whose
// shape-less outputs are all TFLite_Detection_PostProcess's (their kernel
// sizes them at Prepare) runs in LiteRT.js as a copy that declares the shapes
// the kernel computes; the copy is otherwise the same model. Null when the
// model needs no copy or when some shape-less output is not known.
export function declaredShapesCopy(task, model) {
  const shapeless = model.outputs.filter((t) => t.shape.length === 0 && !t.hasRank);
  if (shapeless.length === 0 || !task.file || !task.outDir) return null;
  const shapes = detectionOutputShapes(model);
  if (!shapeless.every((t) => shapes.has(t.index))) return null;
  const json = tfliteToJson(task.file, model);
  const graph = json.subgraphs[model.subgraphIndex];
  for (const [index, shape] of shapes) graph.tensors[index].shape = shape;
  const file = path.join(task.outDir, onnxFileName(task.name).replace(/\.onnx$/, '.shaped.tflite'));
  jsonToTflite(json, file);
  const bytes = new Uint8Array(fs.readFileSync(file));
  return { bytes, model: readTfliteModel(bytes, { signature: task.signature ?? null }) };
}

// A model whose inputs have dynamic dimensions (shape_signature -1) declares
// placeholder sizes (often 1) that the TFLite runtimes prepare the graph with:
// a convolution then fails ("BytesRequired number of elements overflowed"),
// or LiteRT.js reads past its buffers. When the inputs made (a spec's `shape`)
// differ from the declared ones, the runtimes run a copy declaring them, as
// an application would resize them before AllocateTensors. Null otherwise.
export function staticInputsCopy(task, model, inputs) {
  const resized = model.inputs.filter((t) => {
    const given = inputs.get(t.name);
    return given && (given.shape.length !== t.shape.length || given.shape.some((d, i) => d !== t.shape[i]));
  });
  if (resized.length === 0 || !task.file || !task.outDir) return null;
  const json = tfliteToJson(task.file, model);
  const graph = json.subgraphs[model.subgraphIndex];
  for (const t of resized) {
    graph.tensors[t.index].shape = [...inputs.get(t.name).shape];
    delete graph.tensors[t.index].shape_signature;
  }
  const file = path.join(task.outDir, onnxFileName(task.name).replace(/\.onnx$/, '.static.tflite'));
  jsonToTflite(json, file);
  const bytes = new Uint8Array(fs.readFileSync(file));
  return { bytes, model: readTfliteModel(bytes, { signature: task.signature ?? null }) };
}

// Whether the runtimes run the unrolled twin: never beside a spec's
// `reference_model` or with `reference_rewrite: "none"`; when the spec says
// `reference_rewrite: "unroll_while"`; and unasked for a model whose loops
// carry TensorLists (variant tensors, which neither runtime here loads).
function wantsUnrolledTwin(spec, model) {
  const rewrite = spec.reference_rewrite;
  if (rewrite !== undefined && rewrite !== 'unroll_while' && rewrite !== 'none') {
    throw new Error(`spec: unknown reference_rewrite "${rewrite}" (unroll_while or none)`);
  }
  if (spec.reference_model || rewrite === 'none') return false;
  if (rewrite === 'unroll_while') return true;
  return model.operators.some((op) => operatorName(op) === 'WHILE') && model.tensors.some((t) => t.type === 'variant');
}

/**
 * The unrolled twin for the input shapes of `inputs` (one invocation's Map),
 * as {bytes, model, note}, or null when the model does not want one.
 * `source`: the task whose file is rewritten (the select-TF twin's, if any).
 */
export function unrolledReference(task, source, model, inputs) {
  if (!task.outDir || !source.file || !wantsUnrolledTwin(task.spec ?? {}, model)) return null;
  const file = path.join(task.outDir, onnxFileName(task.name).replace(/\.onnx$/, '.unrolled.tflite'));
  let twin;
  try {
    twin = unrolledTwinOf(source.file, model, inputs, file, task.signature ?? null);
  } catch (e) {
    throw new Error(`harness cannot write the unrolled twin: ${e && e.message ? e.message : e}`);
  }
  const note = `reference: the unrolled twin (${twin.loops} WHILE ops, ${twin.iterations} iterations, ` +
    `${twin.ops} builtin ops, shape arithmetic folded)`;
  return { bytes: twin.bytes, model: twin.model, note };
}
