// The unrolled twin of a model with WHILE loops, for models no TFLite runtime
// here runs as written (spec field `reference_rewrite: "unroll_while"`).
//
// Both runtimes here fail on dynamic tensors: a RESHAPE, SLICE or FILL whose
// shape operand is computed at run time (SHAPE -> STRIDED_SLICE -> PACK, a
// loop counter) makes its output dynamic; tfjs-tflite then aborts at invoke
// (Aborted(), no message) and LiteRT.js returns stale memory or traps (memory
// access out of bounds), measured on ocr_dr cut after each op: the first
// RESHAPE with a computed shape does it, before any WHILE. Keras RNN loops
// are made of exactly that. The twin is the same
// function with the inputs' static shapes: every int32 / int64 / bool value
// that the shapes and constants settle is folded into a constant
// (tflite_fold.mjs), so every shape operand is a constant and no tensor is
// dynamic, and every WHILE whose condition the folding settles is replaced by
// its body's ops once per iteration (the cond and body subgraphs evaluated
// with the loop-carried values of that iteration: the counter a constant, the
// slices it bounds static). IF with a settled condition becomes its branch.
// The float arithmetic is untouched: the same builtins with the same weights
// (the same buffers), so the runtimes compute the model's own numbers.
//
// The twin is derived from the model bytes, never from lite2onnx's output.
import fs from 'node:fs';
import { foldValues, outputShapes, FOLDABLE_TYPES, FOLD_LIMIT, prod } from './tflite_fold.mjs';
import { jsonToTflite, tfliteToJson } from './tflite_rewrite.mjs';
import { operatorName, readAllScales, readTfliteModel } from './tflite_model.mjs';
import { readNodeDef } from './select_tf_twin.mjs';

// Bounds against hostile or runaway loops.
const MAX_ITERATIONS = 100000;
const MAX_OPS = 400000;
// Ops that run other subgraphs (WHILE and IF are handled, the others refused).
const SUBGRAPH_OPTIONS = /subgraph_index$/;

const BYTES = { INT32: 4, INT64: 8, BOOL: 1 };

function decodeValues(type, data, count) {
  if (!FOLDABLE_TYPES.has(type) || !data || count > FOLD_LIMIT) return null;
  const bytes = Uint8Array.from(data);
  if (bytes.length !== count * BYTES[type]) return null;
  const view = new DataView(bytes.buffer);
  return Array.from({ length: count }, (_, i) => (type === 'INT32' ? view.getInt32(4 * i, true)
    : type === 'INT64' ? Number(view.getBigInt64(8 * i, true)) : +(view.getUint8(i) !== 0)));
}

function encodeValues(type, values) {
  const bytes = new Uint8Array(values.length * BYTES[type]);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => {
    if (type === 'INT32') view.setInt32(4 * i, v, true);
    else if (type === 'INT64') view.setBigInt64(8 * i, BigInt(v), true);
    else view.setUint8(i, v ? 1 : 0);
  });
  return Array.from(bytes);
}

// flatc writes builtin_code by name (ADD, its default, in older files that
// set only the deprecated byte) and deprecated_builtin_code as a number: the
// larger code is the op, as TFLite reads it.
const opName = (code) => {
  const wide = code.builtin_code ?? 'ADD';
  const deprecated = Number(code.deprecated_builtin_code ?? 0);
  if (typeof wide === 'string' && !(wide === 'ADD' && deprecated > 0)) return wide;
  return operatorName({ code: Math.max(deprecated, typeof wide === 'number' ? wide : 0) });
};

/**
 * Rewrites flatc's JSON form of a model (tflite_rewrite.mjs) in place into
 * its unrolled twin for subgraph `subgraph` with the given input shapes
 * (Map tensor name -> shape). Returns {loops, iterations, ops}: the WHILE ops
 * unrolled, their iterations in all, and the twin's op count.
 */
export function unrollWhile(json, { subgraph = 0, inputShapes = new Map() } = {}) {
  const tensors = [];
  const info = [];  // per twin tensor: {shape (null: unknown), type, value?}
  const ops = [];
  const stats = { loops: 0, iterations: 0 };
  const budget = { iterations: 0 };  // every iteration of every loop, nested ones too
  const constants = new Map();  // "subgraph:tensor" -> twin tensor (weights are shared, not copied)
  let emptyBuffer = json.buffers.findIndex((b) => !b.data || b.data.length === 0);
  if (emptyBuffer < 0) emptyBuffer = json.buffers.push({}) - 1;

  const addTensor = (t, meta) => {
    tensors.push(t);
    info.push(meta);
    return tensors.length - 1;
  };
  const constTensor = (name, shape, type, values) => addTensor(
    { name, type, shape, has_rank: true, buffer: json.buffers.push({ data: encodeValues(type, values) }) - 1 },
    { shape, type, value: values });

  // The operator_codes entry of builtin `name` (appended when the model has none).
  const opcode = (name, code) => {
    const at = json.operator_codes.findIndex((c) => opName(c) === name);
    return at >= 0 ? at : json.operator_codes.push({ builtin_code: name, deprecated_builtin_code: code, version: 1 }) - 1;
  };
  const emit = (op) => {
    ops.push(op);
    if (ops.length > MAX_OPS) throw new Error(`the unrolled twin would have more than ${MAX_OPS} ops`);
  };
  const lists = { opcode, emit, addTensor, info, emptyBuffer, buffers: json.buffers };

  function walk(sgIndex, args, tag, depth) {
    if (depth > 32) throw new Error('subgraphs nested more than 32 deep');
    const sg = json.subgraphs[sgIndex];
    if (!sg) throw new Error(`no subgraph ${sgIndex}`);
    if (args.length !== sg.inputs.length) {
      throw new Error(`subgraph ${sgIndex} takes ${sg.inputs.length} operands, given ${args.length}`);
    }
    const local = new Map(sg.inputs.map((t, i) => [t, args[i]]));
    const get = (t) => {
      if (t < 0) return -1;
      if (local.has(t)) return local.get(t);
      const src = sg.tensors[t];
      if (!src) throw new Error(`subgraph ${sgIndex} has no tensor ${t}`);
      const data = json.buffers[src.buffer]?.data;
      const emptyConstant = (src.shape ?? []).length > 0 && prod(src.shape) === 0;
      if (!(data && data.length) && !src.is_variable && !emptyConstant) {
        throw new Error(`tensor ${t} "${src.name}" of subgraph ${sgIndex} is read before anything writes it`);
      }
      const key = `${sgIndex}:${t}`;
      if (!constants.has(key)) {
        const shape = src.shape ?? [];
        constants.set(key, addTensor({ ...src, shape },
          { shape, type: src.type, value: decodeValues(src.type, data, prod(shape)) }));
      }
      return constants.get(key);
    };
    const fresh = (t, shape) => {
      const src = sg.tensors[t];
      const name = tag ? `${src.name}@${tag}` : src.name;
      if (!shape) return addTensor({ ...src, name, buffer: emptyBuffer }, { shape: null, type: src.type });
      // has_rank: a scalar's [] is its shape, not an unknown one.
      const copy = { ...src, name, shape, has_rank: true, buffer: emptyBuffer };
      delete copy.shape_signature;
      return addTensor(copy, { shape, type: src.type });
    };

    sg.operators.forEach((op, opIndex) => {
      const name = opName(json.operator_codes[op.opcode_index]);
      const where = `op ${opIndex} (${name}) of subgraph ${sgIndex}`;
      let inputs = op.inputs.map(get);
      const o = op.builtin_options ?? {};
      // Unrolled TensorArray writes concatenate empty slices at the first and
      // last step; tfjs-tflite aborts on those, and they add nothing.
      const empty = (i) => i >= 0 && info[i].shape && prod(info[i].shape) === 0;
      if (name === 'CONCATENATION' && inputs.some(empty) && !inputs.every(empty)) inputs = inputs.filter((i) => !empty(i));
      if (name === 'WHILE') {
        let values = inputs;
        let n = 0;
        for (;;) {
          const [c] = walk(o.cond_subgraph_index, values, `${tag}${tag ? '.' : ''}w${opIndex}c${n}`, depth + 1);
          if (!(c >= 0 && info[c].value)) throw new Error(`${where}: its condition is not settled by the input shapes`);
          if (!info[c].value[0]) break;
          if (++n > MAX_ITERATIONS || ++budget.iterations > MAX_ITERATIONS) {
            throw new Error(`${where}: more than ${MAX_ITERATIONS} iterations (nested loops counted together)`);
          }
          values = walk(o.body_subgraph_index, values, `${tag}${tag ? '.' : ''}w${opIndex}i${n - 1}`, depth + 1);
        }
        op.outputs.forEach((t, i) => local.set(t, values[i]));
        stats.loops++;
        stats.iterations += n;
        return;
      }
      if (name === 'IF') {
        const cond = inputs[0] >= 0 ? info[inputs[0]].value : null;
        if (!cond) throw new Error(`${where}: its condition is not settled by the input shapes`);
        const branch = cond[0] ? o.then_subgraph_index : o.else_subgraph_index;
        const outs = walk(branch, inputs.slice(1), `${tag}${tag ? '.' : ''}if${opIndex}`, depth + 1);
        op.outputs.forEach((t, i) => local.set(t, outs[i]));
        return;
      }
      const custom = name === 'CUSTOM' ? json.operator_codes[op.opcode_index].custom_code : null;
      if (TENSOR_LISTS[custom]) {
        const outs = TENSOR_LISTS[custom](lists, inputs, op, (t) => sg.tensors[t], tag, where);
        op.outputs.forEach((t, k) => local.set(t, outs[k]));
        return;
      }
      if (Object.keys(o).some((k) => SUBGRAPH_OPTIONS.test(k))) throw new Error(`${where}: the unroller does not inline ${name}`);
      const ins = inputs.map((i) => (i < 0 ? null : info[i]));
      let shapes = null;
      if (ins.every((v) => !v || v.shape)) {
        try {
          shapes = outputShapes(name, ins, o, op.outputs.length);
        } catch (e) {
          if (!e.unknownValue) throw new Error(`${where}: ${e.message}`);
        }
      }
      if (shapes && shapes.length === op.outputs.length && shapes.every((s) => s.every(Number.isInteger))) {
        const outs = op.outputs.map((t, k) => ({ type: sg.tensors[t].type, shape: shapes[k] }));
        const folded = foldValues(name, ins, o, outs);
        if (folded) {
          op.outputs.forEach((t, k) => local.set(t, constTensor(
            tag ? `${sg.tensors[t].name}@${tag}` : sg.tensors[t].name, shapes[k], outs[k].type, folded[k])));
          return;
        }
      } else {
        shapes = null;
      }
      const outputs = op.outputs.map((t, k) => {
        const n = fresh(t, shapes ? shapes[k] : null);
        local.set(t, n);
        return n;
      });
      const copy = { ...op, inputs, outputs };
      if (op.intermediates) copy.intermediates = op.intermediates.map((t) => fresh(t, null));
      emit(copy);
    });
    return sg.outputs.map(get);
  }

  const main = json.subgraphs[subgraph];
  const inputs = main.inputs.map((t) => {
    const src = main.tensors[t];
    const shape = inputShapes.get(src.name) ?? src.shape ?? [];
    const copy = { ...src, shape: [...shape], has_rank: true, buffer: emptyBuffer };
    delete copy.shape_signature;
    return addTensor(copy, { shape: [...shape], type: src.type });
  });
  const outputs = walk(subgraph, inputs, '', 0);
  // Graph outputs keep their tensor names (the harness matches by name).
  outputs.forEach((n, i) => {
    const want = main.tensors[main.outputs[i]].name;
    if (tensors[n].name === want) return;
    if (inputs.includes(n) || outputs.indexOf(n) !== i) {
      throw new Error(`output "${want}" is the same tensor as another input or output in the twin`);
    }
    tensors[n].name = want;
  });
  const graph = compact({ ...main, tensors, inputs, outputs, operators: ops });
  const nested = graph.operators.some((op) => Object.keys(op.builtin_options ?? {}).some((k) => SUBGRAPH_OPTIONS.test(k)));
  const remap = new Map();
  main.inputs.forEach((t, i) => remap.set(t, graph.inputs[i]));
  main.outputs.forEach((t, i) => remap.set(t, graph.outputs[i]));
  const sigs = (json.signature_defs ?? []).filter((s) => nested || (s.subgraph_index ?? 0) === subgraph);
  for (const s of sigs) {
    if ((s.subgraph_index ?? 0) !== subgraph) continue;
    for (const m of [...(s.inputs ?? []), ...(s.outputs ?? [])]) m.tensor_index = remap.get(m.tensor_index) ?? m.tensor_index;
    if (!nested) s.subgraph_index = 0;
  }
  json.signature_defs = sigs;
  if (nested) json.subgraphs[subgraph] = graph;
  else json.subgraphs = [graph];
  // Only the operator codes still used: a Flex code alone makes TFLite look
  // for the Flex delegate at load (tfjs-tflite aborts in dlopen).
  const used = [...new Set(json.subgraphs.flatMap((g) => g.operators.map((op) => op.opcode_index)))].sort((a, b) => a - b);
  const codeAt = new Map(used.map((c, i) => [c, i]));
  json.operator_codes = used.map((c) => json.operator_codes[c]);
  for (const g of json.subgraphs) for (const op of g.operators) op.opcode_index = codeAt.get(op.opcode_index);
  return { ...stats, ops: graph.operators.length };
}

// ---- TensorLists (select-TF) --------------------------------------------------
// Once the loops are unrolled, a TensorList's length and every index into it
// are constants, so a list is followed while the twin is built as the twin
// tensors of its items, and becomes tensors again where the model reads it:
// Stack as PACK, FromTensor as UNPACK, GetItem as the item itself. Items never
// set read as zeros of the element shape.

const TF_DTYPES = { 1: 'FLOAT32', 3: 'INT32', 9: 'INT64', 10: 'BOOL' };

function listOf(c, handle, where) {
  const list = handle >= 0 ? c.info[handle].list : null;
  if (!list) throw new Error(`${where}: its list operand is no TensorList the unroller followed`);
  return list;
}

function knownIndex(c, t, list, where) {
  const v = t >= 0 ? c.info[t].value : null;
  if (!v || v.length !== 1) throw new Error(`${where}: its index is not settled by the input shapes`);
  const i = v[0] < 0 ? v[0] + list.items.length : v[0];
  if (!(i >= 0 && i < list.items.length)) throw new Error(`${where}: index ${v[0]} outside a list of ${list.items.length}`);
  return i;
}

function newList(c, src, tag, list) {
  return c.addTensor({ name: tag ? `${src.name}@${tag}` : src.name, type: 'VARIANT', shape: [], buffer: c.emptyBuffer },
    { shape: null, type: 'VARIANT', list });
}

// Item i of `list` as a twin tensor: the one set, else zeros.
function itemOf(c, list, i, where) {
  if (list.items[i] !== null) return list.items[i];
  const shape = list.elementShape;
  if (!shape || shape.some((d) => d < 0) || !BYTES_OF[list.dtype]) {
    throw new Error(`${where}: item ${i} was never set and the element shape is not static`);
  }
  const data = new Array(prod(shape) * BYTES_OF[list.dtype]).fill(0);
  return c.addTensor({ name: `${list.name}/zeros`, type: list.dtype, shape, has_rank: true,
    buffer: c.buffers.push({ data }) - 1 }, { shape, type: list.dtype });
}
const BYTES_OF = { FLOAT32: 4, INT32: 4, INT64: 8, BOOL: 1 };

const TENSOR_LISTS = {
  FlexTensorListReserve(c, [shapeT, countT], op, src, tag, where) {
    const count = c.info[countT]?.value;
    if (!count) throw new Error(`${where}: the list length is not settled by the input shapes`);
    const attrs = readNodeDef(op.custom_options).attrs;
    const shape = c.info[shapeT]?.value;
    return [newList(c, src(op.outputs[0]), tag, { name: src(op.outputs[0]).name, items: new Array(count[0]).fill(null),
      elementShape: shape && c.info[shapeT].shape.length === 1 ? shape : null, dtype: TF_DTYPES[attrs.element_dtype?.type] }),
    ];
  },
  FlexTensorListSetItem(c, [handle, index, item], op, src, tag, where) {
    const list = listOf(c, handle, where);
    const items = list.items.slice();
    items[knownIndex(c, index, list, where)] = item;
    return [newList(c, src(op.outputs[0]), tag, { ...list, items, dtype: list.dtype ?? c.info[item].type })];
  },
  FlexTensorListGetItem(c, [handle, index], op, src, tag, where) {
    const list = listOf(c, handle, where);
    return [itemOf(c, list, knownIndex(c, index, list, where), where)];
  },
  FlexTensorListLength(c, [handle], op, src, tag, where) {
    const n = listOf(c, handle, where).items.length;
    const name = tag ? `${src(op.outputs[0]).name}@${tag}` : src(op.outputs[0]).name;
    return [c.addTensor({ name, type: 'INT32', shape: [], has_rank: true,
      buffer: c.buffers.push({ data: [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24] }) - 1 },
    { shape: [], type: 'INT32', value: [n] })];
  },
  FlexTensorListStack(c, [handle], op, src, tag, where) {
    const list = listOf(c, handle, where);
    if (list.items.length === 0) throw new Error(`${where}: stacks an empty list`);
    const items = list.items.map((x, i) => itemOf(c, list, i, where));
    const shape = c.info[items[0]].shape;
    if (!shape || items.some((t) => String(c.info[t].shape) !== String(shape))) {
      throw new Error(`${where}: the list's items differ in shape`);
    }
    const out = { ...src(op.outputs[0]), name: tag ? `${src(op.outputs[0]).name}@${tag}` : src(op.outputs[0]).name,
      shape: [items.length, ...shape], has_rank: true, buffer: c.emptyBuffer };
    delete out.shape_signature;
    const y = c.addTensor(out, { shape: out.shape, type: out.type });
    c.emit({ opcode_index: c.opcode('PACK', 83), inputs: items, outputs: [y], builtin_options_type: 'PackOptions',
      builtin_options: { values_count: items.length, axis: 0 } });
    return [y];
  },
  FlexTensorListFromTensor(c, [x], op, src, tag, where) {
    const shape = c.info[x].shape;
    if (!shape || shape.length === 0) throw new Error(`${where}: its tensor has no static shape`);
    const name = tag ? `${src(op.outputs[0]).name}@${tag}` : src(op.outputs[0]).name;
    const items = Array.from({ length: shape[0] }, (_, i) => c.addTensor({ name: `${name}/${i}`, type: c.info[x].type,
      shape: shape.slice(1), has_rank: true, buffer: c.emptyBuffer }, { shape: shape.slice(1), type: c.info[x].type }));
    c.emit({ opcode_index: c.opcode('UNPACK', 88), inputs: [x], outputs: items, builtin_options_type: 'UnpackOptions',
      builtin_options: { num: shape[0], axis: 0 } });
    return [newList(c, src(op.outputs[0]), tag, { name, items, elementShape: shape.slice(1), dtype: c.info[x].type })];
  },
};

// Drops the ops whose outputs nothing reads and the tensors nothing names.
function compact(graph) {
  const live = new Set([...graph.outputs]);
  const kept = [];
  for (let i = graph.operators.length - 1; i >= 0; i--) {
    const op = graph.operators[i];
    if (op.outputs.length && !op.outputs.some((t) => live.has(t))) continue;
    kept.push(op);
    for (const t of op.inputs) if (t >= 0) live.add(t);
  }
  kept.reverse();
  const index = new Map();
  const tensors = [];
  const use = (t) => {
    if (t < 0) return t;
    if (!index.has(t)) index.set(t, tensors.push(graph.tensors[t]) - 1);
    return index.get(t);
  };
  const inputs = graph.inputs.map(use);
  const operators = kept.map((op) => ({
    ...op, inputs: op.inputs.map(use), outputs: op.outputs.map(use),
    ...(op.intermediates ? { intermediates: op.intermediates.map(use) } : {}),
  }));
  return { ...graph, tensors, inputs, outputs: graph.outputs.map(use), operators };
}

/**
 * Writes the unrolled twin of `file` (model: its readTfliteModel view) for
 * the shapes of `inputs` (Map name -> host tensor) to `outFile`. Returns
 * {bytes, model, loops, iterations, ops}; throws when a loop's trip count
 * is not settled by the input shapes.
 */
export function unrolledTwinOf(file, model, inputs, outFile, signature = null) {
  const json = tfliteToJson(file, model);
  // The loop bodies' scales exact too (tfliteToJson fixes the converted subgraph's only).
  readAllScales(new Uint8Array(fs.readFileSync(file))).forEach((scales, g) => scales.forEach((scale, t) => {
    const q = json.subgraphs[g]?.tensors[t]?.quantization;
    if (scale && q) q.scale = scale;
  }));
  const shapes = new Map(model.inputs.map((t) => [t.name, inputs.get(t.name)?.shape ?? t.shape]));
  const stats = unrollWhile(json, { subgraph: model.subgraphIndex, inputShapes: shapes });
  jsonToTflite(json, outFile);
  const bytes = new Uint8Array(fs.readFileSync(outFile));
  return { bytes, model: readTfliteModel(bytes, { signature }), ...stats };
}
