// --quantization exact for hybrid FULLY_CONNECTED (float input, int8
// weights) as LiteRT.js runs it: XNNPACK's dynamically quantized (qd8)
// kernel, docs/quantization-arithmetic.md §5. Every float step is one ONNX
// float32 operation in the kernel's order; the integer sum is exact.
#include <algorithm>
#include <cstring>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {
namespace {

using ir::DataType;
using ir::TensorId;

}  // namespace

RowQuantization quantize_rows(Writer& w, TensorId x, const std::vector<int64_t>& axes) {
  LowerContext& ctx = w.ctx();
  const std::string prefix = w.node().name + "/rows";
  int constants = 0;
  auto scalar = [&](double v) {
    return ctx.const_scalar(prefix + "/c" + std::to_string(constants++), DataType::kFloat32, v);
  };
  auto step = [&](const char* op, std::vector<TensorId> in, DataType type = DataType::kFloat32) {
    const TensorId out = w.temp(type, op);
    w.emit(op, std::move(in), out, op);
    return out;
  };
  auto reduce = [&](const char* op) {
    const TensorId out = w.temp(DataType::kFloat32, op);
    ir::Node& r = w.emit(op, {x}, out, op);
    r.attrs.set("keepdims", int64_t{1});
    if (ctx.opset() >= 18)
      r.inputs.push_back(ctx.const_i64(prefix + "/" + op + "_axes", axes));
    else
      r.attrs.set("axes", axes);
    return out;
  };
  // The row's range, widened to hold 0; its scale (1 for an all-zero row).
  const TensorId low = step("Min", {reduce("ReduceMin"), scalar(0)});
  const TensorId high = step("Max", {reduce("ReduceMax"), scalar(0)});
  const TensorId ratio = step("Div", {scalar(255), step("Sub", {high, low})});
  const TensorId scale =
      step("Where", {step("Equal", {low, high}, DataType::kBool), scalar(1), ratio});
  // The zero point: from the end of the range with the smaller error, RNE.
  const TensorId dmin = step("Mul", {low, scale}), dmax = step("Mul", {high, scale});
  const TensorId total =
      step("Add", {step("Add", {scalar(-128), dmin}), step("Add", {scalar(127), dmax})});
  const TensorId from_min = step("Sub", {scalar(-128), dmin}),
                 from_max = step("Sub", {scalar(127), dmax});
  const TensorId zero_float = step(
      "Round", {step("Clip", {step("Where", {step("Greater", {total, scalar(0)}, DataType::kBool),
                                             from_min, from_max}),
                              scalar(-128), scalar(127)})});
  // q = clamp(RNE(f32(x * scale)) + zero, -128, 127).
  const TensorId q_float =
      step("Clip", {step("Add", {step("Round", {step("Mul", {x, scale})}), zero_float}),
                    scalar(-128), scalar(127)});
  RowQuantization r;
  r.integers = w.temp(DataType::kInt8, "integers");
  w.emit("Cast", {q_float}, r.integers, "integers")
      .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt8)});
  r.zero.type = DataType::kInt32;
  r.zero.lo = -128;
  r.zero.hi = 127;
  r.zero.id = w.temp(DataType::kInt32, "zero");
  w.emit("Cast", {zero_float}, r.zero.id, "zero")
      .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt32)});
  // Reciprocal, not Div(1, scale): ONNX Runtime's DivMulFusion rewrites
  // Mul(a, Div(1, s)) into Div(a, s), which rounds once where the kernel
  // rounds twice.
  r.inverse_scale = step("Reciprocal", {scale});
  return r;
}

void hybrid_output(Writer& w, const Value& acc, TensorId inverse_scale, LinearOp op,
                   const ir::Shape& channel_shape, TensorId out) {
  LowerContext& ctx = w.ctx();
  const ir::Node& n = w.node();
  const size_t bias_slot = op == LinearOp::kTransposeConv ? 3 : 2;
  const ir::Tensor& weight = ctx.tensor(n.inputs[1]);
  int64_t channels = 1;
  for (int64_t d : channel_shape) channels *= d;
  std::vector<float> scales = weight.quant->scale;
  if (scales.size() == 1) scales.assign(static_cast<size_t>(channels), scales[0]);
  const TensorId dequantized = w.temp(DataType::kFloat32, "dequantized");
  w.emit("Mul", {w.to_float(acc), inverse_scale}, dequantized, "dequantized");
  const TensorId scaled = w.fmul(dequantized, std::move(scales), channel_shape);
  // The bias is added even when the model has none (+0 changes nothing but -0).
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (bias_slot < n.inputs.size() && ctx.graph().valid(n.inputs[bias_slot])) {
    const ir::Tensor& b = ctx.tensor(n.inputs[bias_slot]);
    std::memcpy(bias.data(), b.data->bytes.data(),
                std::min(bias.size() * sizeof(float), b.data->bytes.size()));
  }
  w.emit("Add", {scaled, ctx.const_f32(n.name + "/hybrid_bias", std::move(bias), channel_shape)},
         out, "bias");
}

Check check_hybrid(const ir::Graph& g, const ir::Node& n, LinearOp op) {
  const size_t data = op == LinearOp::kTransposeConv ? 2 : 0,
               bias = op == LinearOp::kTransposeConv ? 3 : 2;
  const ir::Tensor& x = g.tensor(n.inputs[data]);
  const ir::Tensor& weight = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != DataType::kFloat32 || y.dtype != DataType::kFloat32 || y.quantized_type)
    return refuse(ReasonCode::kType, "a hybrid op with other than float32 input and output");
  if (!weight.is_const() || !weight.quant || weight.quantized_type != DataType::kInt8)
    return refuse(ReasonCode::kNotImplemented,
                  "hybrid weights that are not constant int8 have no integer form for "
                  "--quantization exact yet");
  for (int64_t z : weight.quant->zero_point)
    if (z != 0)
      return refuse(ReasonCode::kQuantization,
                    "hybrid weights with a zero point (XNNPACK's qc8w weights are symmetric)");
  if (bias < n.inputs.size() && g.valid(n.inputs[bias]) &&
      (!g.tensor(n.inputs[bias]).is_const() ||
       g.tensor(n.inputs[bias]).dtype != DataType::kFloat32))
    return refuse(ReasonCode::kNotImplemented, "a hybrid bias that is not a float32 constant");
  return check_activation_range(n);
}

std::vector<int64_t> weight_row_sums(const ir::Tensor& weight, int64_t channels) {
  std::vector<int64_t> sums(static_cast<size_t>(channels), 0);
  const auto& bytes = weight.data->bytes;
  const size_t per_channel = channels > 0 ? bytes.size() / static_cast<size_t>(channels) : 0;
  for (size_t i = 0; i < per_channel * static_cast<size_t>(channels); ++i)
    sums[i / per_channel] += static_cast<int8_t>(bytes[i]);
  return sums;
}

}  // namespace lite2onnx::ops::exact
