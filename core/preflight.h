// The preflight: every operator the conversion cannot handle, with the reason,
// found before any op converter runs (after quantization planning, which
// decides what the quantized ops are).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/options.h"
#include "core/status.h"

namespace lite2onnx {

// Every unsupported operator of the graph, by op index.
// With QuantizationMode::kExact, an op touching quantized tensors must also
// have an exact integer form (OpEntry::quantization.exact) for its variant.
std::vector<UnsupportedOp> preflight(const ir::Graph& g,
                                     QuantizationMode mode = QuantizationMode::kQdq);

// A graph input or output ONNX cannot declare (the main graph's interface needs
// a type and a shape): unknown rank, or a type ONNX lacks. Ops that read such a
// tensor are reported by preflight(); this catches the ones no op touches.
std::optional<Error> interface_problem(const ir::Graph& g);

// One line for an error: "3 operators cannot be converted: A x2, B (first
// reason: ...)".
std::string unsupported_message(const std::vector<UnsupportedOp>& ops);

}  // namespace lite2onnx
