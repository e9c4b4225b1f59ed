// --quantization exact: the 8-bit unary ops whose kernels are a function of
// the input integer alone, as one Gather into a 256-entry table computed here
// with the arithmetic of docs/quantization-arithmetic.md (§3.3, §3.5, §4.7).
#include <cmath>
#include <string>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {

namespace {

bool eight_bit(ir::DataType t) { return t == ir::DataType::kInt8 || t == ir::DataType::kUInt8; }

// Per-tensor 8-bit input and output of one type (the kernels' only variants
// the tables cover; int16 tables are not written yet).
Check check_eight_bit(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!x.quantized_type || !y.quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "input and output must both be quantized for --quantization exact");
  if (!per_tensor(x) || !per_tensor(y))
    return refuse(ReasonCode::kQuantization, "per-axis quantization");
  if (!eight_bit(*x.quantized_type) || *y.quantized_type != *x.quantized_type)
    return refuse(ReasonCode::kNotImplemented,
                  std::string(ir::to_string(*x.quantized_type)) + " -> " +
                      std::string(ir::to_string(*y.quantized_type)) +
                      " has no integer form for --quantization exact yet (int8, uint8 only)");
  return std::nullopt;
}

// The new XNNPACK's table (§3.5; LiteRT.js): the float op on each dequantized
// code, the output zero point added in float before the rounding.
template <float (*Fn)(float)>
Status lower_xnn_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  return lower_unary_table(ctx, n, [=](int64_t q) {
    return qmath::xnn_lut_entry(Fn(qmath::dequantize(q, x.scale, x.zero)), y.scale, y.zero, y.lo,
                                y.hi);
  });
}

// HARD_SWISH: TFLite's int16 fixed point (§4.7), in both runtimes.
Status lower_hard_swish_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  const qmath::HardSwish p = qmath::hard_swish_params(x.scale, y.scale);
  return lower_unary_table(
      ctx, n, [=](int64_t q) { return qmath::hard_swish(q, p, x.zero, y.zero, y.lo, y.hi); });
}

// LEAKY_RELU: XNNPACK's multipliers with 8 fractional bits (§3.3).
struct LeakyMultipliers {
  float positive = 0, negative = 0;  // f32(s_x / s_y), f32(that * alpha)
};
LeakyMultipliers leaky_multipliers(const ir::Graph& g, const ir::Node& n) {
  const Params x = params_of(g.tensor(n.inputs[0])), y = params_of(g.tensor(n.outputs[0]));
  const float p = x.scale / y.scale;
  return {p, p * static_cast<float>(n.attrs.get_float("alpha", 0.2f))};
}

bool xnn_multiplier_range(float p) {
  return std::fabs(p) >= 1.0f / 256.0f && std::fabs(p) <= 128.0f;
}

Check check_leaky_relu_table(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_eight_bit(g, n)) return r;
  const LeakyMultipliers m = leaky_multipliers(g, n);
  if (!xnn_multiplier_range(m.positive) || !xnn_multiplier_range(m.negative))
    return refuse(ReasonCode::kNotImplemented,
                  "scales XNNPACK refuses (TFLite's builtin kernel) have no integer form for "
                  "--quantization exact yet");
  return std::nullopt;
}

Status lower_leaky_relu_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  const LeakyMultipliers m = leaky_multipliers(ctx.graph(), n);
  const int64_t positive = qmath::xnn_multiplier8(m.positive);
  const int64_t negative = qmath::xnn_multiplier8(m.negative);
  return lower_unary_table(ctx, n, [=](int64_t q) {
    return qmath::xnn_requantize8(q, x.zero, q >= x.zero ? positive : negative, y.zero, y.lo, y.hi);
  });
}

}  // namespace

ExactForm logistic_table() { return {lower_xnn_table<qmath::xnn_sigmoid>, check_eight_bit}; }
ExactForm tanh_table() { return {lower_xnn_table<qmath::tanh_f>, check_eight_bit}; }
ExactForm elu_table() { return {lower_xnn_table<qmath::elu_f>, check_eight_bit}; }
ExactForm hard_swish_table() { return {lower_hard_swish_table, check_eight_bit}; }
ExactForm leaky_relu_table() { return {lower_leaky_relu_table, check_leaky_relu_table}; }

}  // namespace lite2onnx::ops::exact
