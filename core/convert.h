// The core's entry points. Nothing here knows about gRPC, threads or metrics.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir/types.h"
#include "core/options.h"
#include "core/status.h"
#include "core/version.h"

namespace lite2onnx {

// Converts TFLite model bytes to serialized ONNX bytes. `diagnostics` is filled
// as far as the conversion got, also when it fails.
Result<std::string> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                            Diagnostics& diagnostics);

// What `inspect` reports about a model, without converting it.
struct TensorInfo {
  int index = 0;
  std::string name;
  std::string dtype;
  ir::Shape shape;
  bool constant = false;
  bool variable = false;
  size_t quant_scales = 0;  // 0: not quantized; 1: per-tensor; >1: per-axis
  int quant_axis = 0;
};

struct OpInfo {
  int index = 0;
  std::string op;
  std::vector<int> inputs, outputs;
  bool supported = true;
  std::string reason;  // why it cannot be converted
};

struct ModelInfo {
  uint32_t version = 0;
  std::string description;
  std::vector<std::string> subgraphs;
  std::vector<TensorInfo> tensors;
  std::vector<int> inputs, outputs;
  std::vector<OpInfo> ops;
  std::vector<UnsupportedOp> unsupported;
  // What would stop a conversion besides unsupported ops (e.g. invalid
  // quantization parameters), as the conversion's error message.
  std::vector<std::string> problems;

  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

Result<ModelInfo> inspect(std::span<const std::byte> tflite, const Limits& limits = {});

// One row of the support matrix, read from the op registry.
struct OpSupport {
  int code = 0;
  std::string op;
  bool supported = false;
  std::string layout_class;
  std::string onnx;
  std::string notes;
  std::string dtypes;  // element types of the data tensors handled, ", "-separated
  // int8/uint8 in QDQ form: "rescale", "same scale" or "no" (see docs/operators.md).
  std::string quantized;
};
std::vector<OpSupport> support_matrix();

}  // namespace lite2onnx
