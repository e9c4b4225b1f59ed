// Whether LiteRT's XNNPACK delegate prepares the model at all
// (docs/quantization-arithmetic.md §5). The delegate claims nodes by their
// types and the structure of their quantization (XNNPACK's own checks of
// the scales' values come later), then fails as a whole in Prepare when a
// claimed node's tensor cannot be defined or its operator cannot be created.
// TFLite then restores the plan without the delegate and runs every node with
// its builtin kernel (tfjs-tflite); LiteRT.js refuses the model.
#include <cmath>

#include "core/ops/exact.h"
#include "core/ops/quant_math.h"

namespace lite2onnx::ops::exact {
namespace {

using ir::DataType;

constexpr const char* kBuiltinKernels = "lite2onnx_builtin_kernels";

bool eight_bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

// What the claim checks read (CheckTensorFloat32OrQUInt8Type and friends):
// an 8-bit type and one scale, whatever its value.
bool claimable_activation(const ir::Tensor& t) {
  return t.quant && t.quant->scale.size() == 1 && eight_bit(params_of(t).type);
}

// What GetXNNPackDatatype accepts when Prepare defines the tensor: a normal
// positive scale and a zero point within the type.
bool definable(const ir::Tensor& t) {
  const Params p = params_of(t);
  return std::isnormal(p.scale) && p.scale > 0 && p.zero >= p.lo && p.zero <= p.hi;
}

std::optional<LinearOp> linear_op(const std::string& op) {
  if (op == "CONV_2D") return LinearOp::kConv;
  if (op == "DEPTHWISE_CONV_2D") return LinearOp::kDepthwise;
  if (op == "FULLY_CONNECTED") return LinearOp::kFullyConnected;
  if (op == "TRANSPOSE_CONV") return LinearOp::kTransposeConv;
  return std::nullopt;
}

bool const_input(const ir::Graph& g, const ir::Node& n, size_t slot) {
  return slot < n.inputs.size() && g.valid(n.inputs[slot]) && g.tensor(n.inputs[slot]).is_const();
}

// A linear op the delegate claims: 8-bit activations of one type, constant
// weights it validates at claim time, a constant bias, an activation it fuses.
// Its Prepare fails on an activation it cannot define or a requantization
// scale of 256 or more (xnn_status_unsupported_parameter when the operator is
// created).
std::optional<std::string> linear_failure(const ir::Graph& g, const ir::Node& n, LinearOp op) {
  const LinearSlots s = linear_slots(op);
  if (s.data >= n.inputs.size() || !g.valid(n.inputs[s.data]) || !const_input(g, n, s.weight))
    return std::nullopt;
  if (s.bias < n.inputs.size() && g.valid(n.inputs[s.bias]) && !const_input(g, n, s.bias))
    return std::nullopt;
  const ir::Tensor& x = g.tensor(n.inputs[s.data]);
  const ir::Tensor& w = g.tensor(n.inputs[s.weight]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!claimable_activation(x) || !claimable_activation(y) ||
      params_of(x).type != params_of(y).type)
    return std::nullopt;
  if (!xnnpack_quantization(w, weight_channel_axis(op))) return std::nullopt;
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  if (act != "NONE" && act != "RELU" && act != "RELU6" && act != "RELU_N1_TO_1")
    return std::nullopt;
  if (!definable(x) || !definable(y))
    return "its " + std::string(definable(x) ? "output" : "input") + " '" +
           (definable(x) ? y.name : x.name) + "' has a scale XNNPACK cannot use";
  for (float sw : w.quant->scale)
    if (!(qmath::fp32_scale(params_of(x).scale, sw, params_of(y).scale) < 256.0f))
      return "its requantization scale is 256 or more";
  return std::nullopt;
}

// Data movement the delegate claims for 8-bit tensors with constant
// parameters; its subgraph definition fails when the output is quantized
// unlike the input (the probe's pad/transpose/split cases) or a scale cannot
// be defined.
std::optional<std::string> movement_failure(const ir::Graph& g, const ir::Node& n) {
  const bool movement = n.op == "PAD" || n.op == "TRANSPOSE" || n.op == "SPLIT";
  if (!movement || n.inputs.size() < 2 || n.outputs.empty()) return std::nullopt;
  const size_t data = n.op == "SPLIT" ? 1 : 0, param = n.op == "SPLIT" ? 0 : 1;
  if (!const_input(g, n, param)) return std::nullopt;
  const ir::Tensor& x = g.tensor(n.inputs[data]);
  if (!claimable_activation(x)) return std::nullopt;
  for (ir::TensorId out : n.outputs) {
    const ir::Tensor& y = g.tensor(out);
    if (!claimable_activation(y) || params_of(y).type != params_of(x).type) return std::nullopt;
    if (!definable(x) || !definable(y)) return "a scale XNNPACK cannot use";
    const Params px = params_of(x), py = params_of(y);
    if (px.scale != py.scale || px.zero != py.zero)
      return "its output is quantized unlike its input";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> xnnpack_delegate_failure(const ir::Graph& model) {
  std::optional<std::string> failure;
  ir::for_each_graph(model, [&](const ir::Graph& g) {
    for (const ir::Node& n : g.nodes()) {
      if (failure) return;
      if (n.outputs.empty() || !g.valid(n.outputs[0])) continue;
      const auto op = linear_op(n.op);
      const std::optional<std::string> why =
          op ? linear_failure(g, n, *op) : movement_failure(g, n);
      if (why) failure = n.op + " '" + n.name + "': " + *why;
    }
  });
  return failure;
}

void mark_builtin_kernels(ir::Graph& model) {
  ir::for_each_graph(model, [](ir::Graph& g) {
    for (ir::NodeId id = g.first(); id != ir::kNoNode; id = g.next(id))
      g.info(id).attrs.set(kBuiltinKernels, int64_t{1});
  });
}

bool builtin_kernels_only(const ir::Node& n) { return n.attrs.get_int(kBuiltinKernels, 0) != 0; }

Check refuse_builtin_kernel() {
  return refuse(ReasonCode::kNotImplemented,
                "XNNPACK's delegate cannot prepare this model, so TFLite runs its builtin "
                "kernels, and this op's builtin kernel has no form in --quantization exact yet");
}

}  // namespace lite2onnx::ops::exact
