// --quantization exact: what the linear ops (CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, TRANSPOSE_CONV) share: their slots, which kernel TFLite
// runs for a node, the variants covered, and the bias, requantization and
// activation bounds after the integer sum (see exact.h).
#include <algorithm>
#include <cstring>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

LinearSlots linear_slots(LinearOp op) {
  return op == LinearOp::kTransposeConv ? LinearSlots{2, 1, 3} : LinearSlots{0, 1, 2};
}
int weight_channel_axis(LinearOp op) { return op == LinearOp::kDepthwise ? 3 : 0; }

namespace {

// The integers of an int32 or int64 constant.
std::vector<int64_t> constant_integers(const ir::Tensor& t) {
  std::vector<int64_t> out;
  const size_t size = t.data->stored_type == DataType::kInt64 ? 8 : 4;
  for (size_t i = 0; (i + 1) * size <= t.data->bytes.size(); ++i) {
    if (size == 8) {
      int64_t v;
      std::memcpy(&v, t.data->bytes.data() + i * 8, 8);
      out.push_back(v);
    } else {
      int32_t v;
      std::memcpy(&v, t.data->bytes.data() + i * 4, 4);
      out.push_back(v);
    }
  }
  return out;
}

std::vector<float> weight_scales(const ir::Tensor& w) {
  return w.quant ? w.quant->scale : std::vector<float>{};
}

}  // namespace

LinearKernel linear_kernel(const ir::Graph& g, const ir::Node& n, LinearOp op) {
  const LinearSlots s = linear_slots(op);
  const ir::Tensor& x = g.tensor(n.inputs[s.data]);
  const ir::Tensor& w = g.tensor(n.inputs[s.weight]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const Params px = params_of(x), py = params_of(y);
  if (px.type == DataType::kInt16)
    return {op == LinearOp::kFullyConnected ? Requantization::kDoubleScale : Requantization::kInt64,
            false};
  bool xnnpack = !builtin_kernels_only(n) && w.is_const() && xnnpack_quantization(x) &&
                 xnnpack_quantization(y) && xnnpack_quantization(w, weight_channel_axis(op));
  if (s.bias < n.inputs.size() && g.valid(n.inputs[s.bias]))
    xnnpack = xnnpack && g.tensor(n.inputs[s.bias]).is_const();
  // XNNPACK's deconvolution needs a static output_shape (CheckTensorStaticAllocation).
  if (op == LinearOp::kTransposeConv && !g.tensor(n.inputs[0]).is_const()) xnnpack = false;
  // qs8 weights are symmetric: a per-tensor int8 weight with a zero point
  // goes to the builtin kernel.
  if (params_of(w).type == DataType::kInt8 && params_of(w).zero != 0) xnnpack = false;
  // XNNPACK refuses requantization scales of 256 and more.
  for (float sw : weight_scales(w))
    if (xnnpack && !(qmath::fp32_scale(px.scale, sw, py.scale) < 256.0f)) xnnpack = false;
  if (xnnpack) return {Requantization::kFp32, true};
  // The builtin kernels: ruy's single rounding behind cpu_backend_gemm (int8
  // CONV_2D and FULLY_CONNECTED), gemmlowp's double rounding otherwise.
  const bool gemm =
      px.type == DataType::kInt8 && (op == LinearOp::kConv || op == LinearOp::kFullyConnected);
  return {gemm ? Requantization::kSingle : Requantization::kDouble, false};
}

Check check_linear(const ir::Graph& g, const ir::Node& n, LinearOp op) {
  const LinearSlots s = linear_slots(op);
  const ir::Tensor& x = g.tensor(n.inputs[s.data]);
  const ir::Tensor& w = g.tensor(n.inputs[s.weight]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!x.quantized_type || !y.quantized_type)
    return refuse(ReasonCode::kNotImplemented,
                  "hybrid (float input, integer weights) has no integer form for "
                  "--quantization exact yet");
  if (!w.quantized_type || !w.quant || !per_tensor(x) || !per_tensor(y))
    return refuse(ReasonCode::kQuantization,
                  "input and output must be quantized per tensor and "
                  "the weights quantized");
  const DataType wt = *w.quantized_type;
  if (wt != DataType::kInt8 && wt != DataType::kUInt8)
    return refuse(ReasonCode::kType, "weights of type " + std::string(ir::to_string(wt)));
  if (w.quant->scale.size() > 1)
    for (int64_t z : w.quant->zero_point)
      if (z != 0)
        return refuse(ReasonCode::kQuantization,
                      "per-channel weights with zero points (TFLite's are symmetric)");
  // ConvInteger and MatMulInteger take 8-bit operands only: 16x8 is split
  // (sum_16x8, or TRANSPOSE_CONV's two float sums) where the op's lowering does it.
  if (*x.quantized_type == DataType::kInt16 && (params_of(x).zero != 0 || wt != DataType::kInt8))
    return refuse(ReasonCode::kQuantization,
                  "16x8 with an input zero point or uint8 weights (TFLite refuses them)");
  if (op == LinearOp::kFullyConnected && !w.is_const() && *x.quantized_type == DataType::kInt16)
    return refuse(ReasonCode::kNotImplemented,
                  "16x8 with non-constant weights has no integer form for --quantization exact "
                  "yet");
  if (*x.quantized_type == DataType::kUInt8 && wt != DataType::kUInt8)
    return refuse(ReasonCode::kType, "uint8 input with int8 weights");
  return check_activation_range(n);
}

std::vector<TensorId> linear_zero_points(Writer& w, const ir::Node& n, size_t data, size_t weight) {
  const Params px = params_of(w.ctx().tensor(n.inputs[data]));
  const ir::Tensor& wt = w.ctx().tensor(n.inputs[weight]);
  const Params pw = params_of(wt);
  std::vector<TensorId> out = {w.tensor(w.constant(px.zero), px.type)};
  if (pw.zero != 0 && per_tensor(wt)) out.push_back(w.tensor(w.constant(pw.zero), pw.type));
  return out;
}

Value finish_linear(Writer& w, const Value& acc, LinearOp op, const Shape& channel_shape) {
  const ir::Node& n = w.node();
  const ir::Graph& g = w.ctx().graph();
  const LinearSlots s = linear_slots(op);
  const ir::Tensor& wt = g.tensor(n.inputs[s.weight]);
  const Params px = params_of(g.tensor(n.inputs[s.data])), py = params_of(g.tensor(n.outputs[0]));
  const std::vector<float> ws = weight_scales(wt);
  int64_t channels = 1;
  for (int64_t d : channel_shape) channels *= d;
  const LinearKernel k = linear_kernel(g, n, op);
  std::vector<double> scales;
  for (int64_t c = 0; c < channels; ++c) {
    const float sw = ws[ws.size() == 1 ? 0 : static_cast<size_t>(c)];
    scales.push_back(k.rule == Requantization::kFp32
                         ? static_cast<double>(qmath::fp32_scale(px.scale, sw, py.scale))
                         : static_cast<double>(px.scale) * static_cast<double>(sw) /
                               static_cast<double>(py.scale));
  }
  Value sum = acc;
  if (s.bias < n.inputs.size() && g.valid(n.inputs[s.bias])) {
    std::vector<int64_t> bias = constant_integers(g.tensor(n.inputs[s.bias]));
    if (bias.size() == 1 && channels > 1) bias.assign(static_cast<size_t>(channels), bias[0]);
    // A channel whose fixed-point multiplier is 0 (a pruned channel's scale
    // below 2^-32) outputs the zero point whatever it sums: its bias, often
    // near int32's ends there, would only widen the bounds of the products.
    if (k.rule != Requantization::kFp32 && k.rule != Requantization::kDoubleScale)
      for (size_t c = 0; c < bias.size() && c < scales.size(); ++c)
        if (qmath::quantize_multiplier(scales[c]).m == 0) bias[c] = 0;
    sum = w.add(acc, w.channels(std::move(bias), channel_shape));
  }
  // One scale for all channels when they agree (a per-tensor weight).
  if (std::all_of(scales.begin(), scales.end(), [&](double v) { return v == scales[0]; }))
    scales.resize(1);
  const auto [lo, hi] = activation_range(n, py, k.xnnpack);
  return requantize(w, sum, k.rule, scales, channel_shape, py, lo, hi);
}

}  // namespace lite2onnx::ops::exact
