// The "posenet" reference (specs.json `"reference": "posenet"`): Coral's
// custom op PosenetDecoderOp is registered by no TFLite runtime here, so the
// model's builtin part runs in LiteRT.js up to the decoder's inputs (a copy of
// the model without the decoder, whose outputs are the decoder's inputs), and
// the decoder runs as posenet_kernel.mjs writes it (the kernel's arithmetic in
// JS) on what LiteRT.js returns. The decoder's outputs must be model outputs;
// the model's other outputs (BodyPix's segments and part heatmaps) are
// LiteRT.js's.
import fs from 'node:fs';
import path from 'node:path';
import { jsonToTflite, tfliteToJson } from './tflite_rewrite.mjs';
import { readFlexMap, readTfliteModel } from './tflite_model.mjs';
import { posenetDecoder } from './posenet_kernel.mjs';

export const POSENET_CODE = 'PosenetDecoderOp';

/**
 * The model's decoder op; its outputs must be model outputs, and read by no
 * other op (BodyPix's model also outputs maps of the network).
 */
export function decoderOp(model) {
  const ops = model.operators.filter((op) => op.custom === POSENET_CODE);
  if (ops.length !== 1) throw new Error(`the posenet reference needs one ${POSENET_CODE} (the model has ${ops.length})`);
  const [op] = ops;
  const outs = new Set(model.outputs.map((t) => t.index));
  const read = new Set(model.operators.flatMap((o) => o.inputs));
  if (op.outputs.some((o) => !outs.has(o) || read.has(o))) {
    throw new Error(`the posenet reference needs the decoder's outputs to be model outputs no op reads`);
  }
  return op;
}

// The model's outputs the network computes (not the decoder).
function networkOutputs(model, op) {
  return model.outputs.map((t) => t.index).filter((i) => !op.outputs.includes(i));
}

/** The decoder's options, as its kernel reads them (a FlexBuffer map). */
export function decoderParams(op) {
  const m = readFlexMap(op.customOptions);
  for (const key of ['max_detections', 'score_threshold', 'stride', 'nms_radius']) {
    if (typeof m[key] !== 'number') throw new Error(`${POSENET_CODE}: option ${key} missing`);
  }
  return m;
}

// The model without its decoder: its outputs are the decoder's inputs, then
// the model's other outputs.
function backboneCopy(file, model, op, outFile) {
  const json = tfliteToJson(file, model);
  const graph = json.subgraphs[model.subgraphIndex];
  const codes = json.operator_codes ?? [];
  graph.operators = graph.operators.filter((o) => (codes[o.opcode_index ?? 0] ?? {}).custom_code !== POSENET_CODE);
  graph.outputs = [...new Set([...op.inputs, ...networkOutputs(model, op)])];
  jsonToTflite(json, outFile);
  const bytes = new Uint8Array(fs.readFileSync(outFile));
  return { bytes, model: readTfliteModel(bytes) };
}

/**
 * The decoder applied to `values` (a Map from the decoder's input tensor
 * names to host tensors): the reference outputs under the model's output names.
 */
export function decodeFrom(model, op, values) {
  const inputs = op.inputs.map((i) => {
    const t = model.tensors[i];
    const v = values.get(t.name);
    if (!v) throw new Error(`the posenet reference has no value for the decoder input "${t.name}"`);
    return { ...v, quant: t.quant ? { scale: t.quant.scale, zeroPoint: t.quant.zeroPoint } : null };
  });
  const outs = posenetDecoder(inputs, decoderParams(op));
  return new Map(op.outputs.map((o, k) => [model.tensors[o].name, outs[k]]));
}

/**
 * Reference outputs of a model ending in PosenetDecoderOp, for every input
 * set (one invocation each), merged as the runtimes' are. `runTflite` is the
 * pipeline's (LiteRT.js runs the builtin part).
 */
export async function runPosenetReference(task, model, inputSets, runTflite) {
  if (inputSets.length !== 1) throw new Error('the posenet reference runs stateless models only');
  const op = decoderOp(model);
  const graphInputs = new Set(model.inputs.map((t) => t.index));
  if (op.inputs.every((i) => graphInputs.has(i))) {
    // The decoder alone (the generated test models): it decodes the inputs.
    return { outputs: decodeFrom(model, op, inputSets[0]), backbone: inputSets[0], op };
  }
  if (!task.file || !task.outDir) throw new Error('the posenet reference needs the model file and an output folder');
  const stem = path.basename(task.file, path.extname(task.file));
  const copy = backboneCopy(task.file, model, op, path.join(task.outDir, `${stem}.backbone.tflite`));
  const values = await runTflite('litert', copy.bytes, copy.model, inputSets);
  const outputs = decodeFrom(model, op, values);
  for (const i of networkOutputs(model, op)) outputs.set(model.tensors[i].name, values.get(model.tensors[i].name));
  return { outputs, backbone: values, op };
}
