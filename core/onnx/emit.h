// ir::Graph (ONNX dialect) -> serialized onnx::ModelProto, validated by the
// ONNX checker and strict shape inference. Large constants are written once,
// straight from the model buffer into the output bytes (permuted or widened on
// the way), never copied into the protobuf message first.
//
// Node subgraphs (ir::Node::subgraphs: If branches, Loop bodies) become GRAPH
// attributes, recursively. A subgraph is a self-contained ir::Graph: its
// inputs and outputs become the GraphProto's (with types and shapes), its
// constants its initializers (written into the message, never spliced), its
// other tensors value_info. A tensor of a subgraph that is none of its inputs,
// none of its constants and written by none of its nodes is an outer-scope
// reference: bound by Subgraph::captures, it takes the ONNX name of the
// node input it is bound to (the node's implicit inputs are not written as
// ONNX inputs); else it carries the name of the value it reads, as that value is
// named in the ONNX model (for a tensor of the enclosing graph, its own name,
// unless an earlier tensor took that name and it got a suffix). It resolves
// to the nearest enclosing graph with a value of that ONNX name, or else a
// constant of that name no node of that graph reads (then written as that
// graph's initializer); a reference that resolves nowhere is kInternal.
// Tensor names (and node names) are unique across the whole model, as ONNX
// requires: the main graph is named first, exactly as without subgraphs, then
// each subgraph, breadth-first. Subgraphs nested deeper than
// max_subgraph_depth (a node's subgraph of the main graph is at depth 1) are
// kResourceLimit.
//
// State (ir::Graph::state): each state input gets an initializer of its name
// holding the pair's initial value in the input's ONNX type and layout.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/output_buffer.h"
#include "core/status.h"

namespace lite2onnx::onnx_emit {

struct EmitOptions {
  int opset = 13;
  std::string producer_version;
  std::vector<std::pair<std::string, std::string>> metadata;
  // Polled while building the model and writing its constants (the ONNX
  // checker and shape inference in between cannot be interrupted; their work
  // is bounded by the size limits). Null: never stops.
  Checkpoint* checkpoint = nullptr;
  // The largest model emit() writes (Limits::max_output_bytes, resolved).
  uint64_t max_output_bytes = (uint64_t{1} << 31) - 1;
  // The deepest nesting of node subgraphs (Limits::max_subgraph_depth).
  uint32_t max_subgraph_depth = 16;
  // A metadata entry whose value is known only later (the source's SHA-256,
  // hashed while the conversion runs): `metadata` holds it under `key` with a
  // placeholder of the value's exact size, validated and planned as it is; a
  // positional OutputStream gets the value from `value` after everything
  // else, any other output before. Empty key: none.
  struct Late {
    std::string key;
    std::function<std::string()> value;
  } late;
};

// Writes the model into the room `output` gives for its exact size; returns that size.
Result<size_t> emit(const ir::Graph& g, const EmitOptions& options, const OutputBuffer& output);
// The same, streamed into `output` (output_buffer.h OutputStream).
Result<size_t> emit(const ir::Graph& g, const EmitOptions& options, OutputStream& output);
// The same, into a string.
Result<std::string> emit(const ir::Graph& g, const EmitOptions& options);
// An OutputBuffer that sizes `bytes` to the model and hands out its storage.
OutputBuffer string_buffer(std::string& bytes);
// Registers ONNX's operator schemas now (convert.h prepare_validation).
void prepare_validation();

// Writes a constant's data in ONNX axis order and element type into `dst`,
// which holds exactly onnx_byte_size(t) bytes.
void write_constant(const ir::Tensor& t, std::byte* dst);
size_t onnx_byte_size(const ir::Tensor& t);

}  // namespace lite2onnx::onnx_emit
