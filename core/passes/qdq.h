// Quantization as QuantizeLinear/DequantizeLinear: the helpers the
// quantization passes share (see docs/architecture.md, "Quantization").
//
// plan_qdq (qdq_plan.cc; TFLite dialect, before layout propagation) checks
// every quantization parameter and turns each int8/uint8 quantized tensor into
// a float32 tensor that remembers its integer type (Tensor::quantized_type):
// op converters then lower the float op, and layouts, lowering and cleanup
// treat the tensor like any float one. materialize_qdq (qdq_writer.cc; ONNX
// dialect, last pass before emission) writes the Q/DQ nodes: constants stay
// integer initializers read through one DequantizeLinear, and each quantized
// activation gets one QuantizeLinear -> DequantizeLinear pair after its
// producer, however many readers it has. Before it, int8 activations are
// stored as uint8 (qdq_uint8.cc); around it, integer peepholes (qdq_peepholes.cc)
// run copies and clamps on the integers and cancel DQ -> Q pairs. With
// --quantization dequantize, qdq_dequantize.cc folds everything to float
// instead.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/status.h"

namespace lite2onnx::passes::qdq {

// int8 and uint8: the types QuantizeLinear/DequantizeLinear take at opsets 13..17.
bool qdq_integer(ir::DataType t);
// Zero point of channel i (0 when none is given).
int64_t zero_point(const ir::QuantParams& q, size_t i);

// The values a quantized integer type holds (int32/int64 biases: zero point 0 only).
struct IntegerRange {
  int64_t lo, hi;
};
IntegerRange integer_range(ir::DataType t);

// Elements between two consecutive channels of a per-axis tensor (1 when per-tensor).
size_t channel_stride(const ir::Tensor& t, const ir::QuantParams& q);

// "" when the parameters describe the tensor (as `type`), else what is wrong.
std::string param_problem(const ir::Tensor& t, ir::DataType type);
// An error about a tensor's quantization, naming the tensor.
Error quant_error(ErrorCode code, const ir::Tensor& t, const std::string& message);
bool same_params(const ir::QuantParams& a, const ir::QuantParams& b);

// The float32 values of quantized constant `t`, owned by the graph and
// charged to its created-bytes budget.
Result<ir::ConstData> dequantized_copy(ir::Graph& g, const ir::Tensor& t);

// A quantized non-constant tensor (after planning: float, remembering its type).
bool quantized_activation(const ir::Graph& g, ir::TensorId t);
// The value of a one-element float32 constant, or nothing.
std::optional<float> float_scalar(const ir::Graph& g, ir::TensorId t);

// ---- integer peepholes (qdq_peepholes.cc) ----
// The integer range a Relu or Clip with constant bounds leaves on its quantized output.
std::optional<std::pair<int64_t, int64_t>> clamp_range(const ir::Graph& g, const ir::Node& n);
// Whether that range is the whole integer range (QuantizeLinear saturates there anyway).
bool clamp_implied(const ir::Graph& g, const ir::Node& n);
// Quantizes the inputs of clamps the range does not imply; returns their outputs.
std::set<ir::TensorId> quantize_clamp_inputs(ir::Graph& g);
// Whether node n only copies integers with unchanged parameters.
bool copies_integers(const ir::Graph& g, const ir::Node& n);
// Removes DequantizeLinear -> QuantizeLinear pairs with equal parameters.
void cancel_pairs(ir::Graph& g, Diagnostics& diag);

// ---- the int8 -> uint8 rewrite (qdq_uint8.cc) ----
void store_int8_as_uint8(ir::Graph& g, Diagnostics& diag);

// ---- --quantization exact (qdq_exact.cc) ----
// The exact lowerings (core/ops/exact.h) computed every quantized value in
// integer arithmetic; each quantized tensor becomes the integer tensor it
// holds (activations, graph inputs and outputs, constants), with no Q/DQ node.
Status store_integers(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint);

// ---- --quantization dequantize (qdq_dequantize.cc) ----
Status fold_to_float(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint);
// Default mode: the same for the int16 (16x8) tensors only, with graph inputs
// and outputs kept int16 (Cast around their float values).
Status emulate_int16(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint);

}  // namespace lite2onnx::passes::qdq
