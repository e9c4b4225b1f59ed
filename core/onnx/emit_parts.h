// The emitter's parts (emit.h), shared by its files: emit.cc builds the
// ModelProto (names, nodes, value_info, subgraphs); initializers.cc writes
// constants' bytes in ONNX order and type; serialize.cc validates the model and
// writes its bytes, large constants spliced straight into the output.
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/onnx/emit.h"

namespace lite2onnx::onnx_emit {

// Constants at least this big are spliced into the output bytes directly.
inline constexpr size_t kSpliceBytes = 4096;

// ---- initializers.cc ----

// The initial value of a state input `x` (its tensor, shape and ONNX type) as
// the bytes of its initializer: TFLite's bytes, or (an integer state at a
// float interface, as --quantization dequantize makes it) their dequantized
// values.
Result<ir::ConstData> state_initial_data(const ir::Tensor& x, const ir::StatePair& p);

// ---- serialize.cc ----

// The ONNX checker and strict shape inference on our output: kInternal when
// they refuse it, kInvalidModel when a TFLite op's declared output shape
// contradicts its inputs (named after the op of `g`), kResourceLimit when
// ONNX runs out of memory on the declared shapes.
Status validate(onnx::ModelProto& model, const ir::Graph& g);

// A main-graph constant whose bytes serialize_model() writes into the output
// itself (its initializer holds a one-byte placeholder until then).
struct SplicedConstant {
  std::string name;  // its ONNX name
  const ir::Tensor* tensor;
};
// Writes `model` into the room `output` gives for its exact size, the spliced
// constants' bytes written in place; returns the size. `model` lives on an
// arena (its graph is taken out without a copy). kResourceLimit past 2 GiB or
// options.max_output_bytes.
Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, const OutputBuffer& output);

}  // namespace lite2onnx::onnx_emit
