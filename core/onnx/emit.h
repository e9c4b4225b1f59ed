// ir::Graph (ONNX dialect) -> serialized onnx::ModelProto, validated by the
// ONNX checker and strict shape inference. Large constants are written once,
// straight from the model buffer into the output bytes (permuted or widened on
// the way), never copied into the protobuf message first.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/graph.h"
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
};

Result<std::string> emit(const ir::Graph& g, const EmitOptions& options);

// Writes a constant's data in ONNX axis order and element type into `dst`,
// which holds exactly onnx_byte_size(t) bytes.
void write_constant(const ir::Tensor& t, std::byte* dst);
size_t onnx_byte_size(const ir::Tensor& t);

}  // namespace lite2onnx::onnx_emit
