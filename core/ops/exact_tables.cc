// --quantization exact: the 8-bit unary ops whose kernels are a function of
// the input integer alone, as one Gather into a 256-entry table computed here
// with the arithmetic of docs/quantization-arithmetic.md (§3.3, §3.5, §4.7).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {

namespace {

bool eight_bit(ir::DataType t) { return t == ir::DataType::kInt8 || t == ir::DataType::kUInt8; }

// Per-tensor 8-bit input and output of one type (the variants most tables
// cover; LEAKY_RELU also takes int16).
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

// The tables of XNNPACK's LOGISTIC, TANH and ELU: TFLite's builtin tables
// are not written yet, so a model XNNPACK's delegate refuses is refused here.
Check check_xnn_table(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_eight_bit(g, n)) return r;
  if (builtin_kernels_only(n)) return refuse_builtin_kernel();
  return std::nullopt;
}

// LOGISTIC and TANH: 8-bit as the new XNNPACK's table; int16 as TFLite's
// kernels (XNNPACK takes no int16, §4.6): the interpolated sigmoid table, or
// gemmlowp's fixed point for the power-of-two input scales.
template <float (*Fn)(float), bool kTanh>
Status lower_sigmoid_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0]));
  if (x.type != ir::DataType::kInt16) return lower_xnn_table<Fn>(ctx, n);
  const qmath::Int16Activation p = qmath::int16_activation_params(x.scale, kTanh);
  return lower_unary_table(
      ctx, n, [=](int64_t q) { return kTanh ? qmath::tanh16(q, p) : qmath::logistic16(q, p); });
}

// 8-bit, or int16 as TFLite's Prepare takes it: zero points 0, an output
// scale of 2^-15, an input scale whose table multiplier stays below 2^16.
Check check_sigmoid_table(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.quantized_type != ir::DataType::kInt16 || y.quantized_type != ir::DataType::kInt16)
    return check_xnn_table(g, n);
  if (!per_tensor(x) || !per_tensor(y))
    return refuse(ReasonCode::kQuantization, "per-axis quantization");
  const Params px = params_of(x), py = params_of(y);
  if (px.zero != 0 || py.zero != 0)
    return refuse(ReasonCode::kQuantization, "int16 zero points other than 0 (TFLite refuses)");
  if (!(py.scale > 0) || std::lround(std::log2(py.scale)) != -15)
    return refuse(ReasonCode::kQuantization,
                  "an int16 output scale other than 2^-15 (TFLite "
                  "refuses)");
  if (!(px.scale > 0) || !(static_cast<double>(px.scale) * 4096.0 * 3.0 < 65536.0))
    return refuse(ReasonCode::kQuantization, "an int16 input scale of 16/3 or more");
  return std::nullopt;
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

// XNNPACK takes 8-bit LEAKY_RELU when both multipliers are within its range;
// TFLite's builtin kernel runs it otherwise (§4.9): MBQM of x - z_x with
// the identity multiplier, or with |alpha's| (negated for a negative alpha).
Status lower_leaky_relu_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  const LeakyMultipliers m = leaky_multipliers(ctx.graph(), n);
  if (x.type != ir::DataType::kInt16 && !builtin_kernels_only(n) &&
      xnn_multiplier_range(m.positive) && xnn_multiplier_range(m.negative)) {
    const int64_t positive = qmath::xnn_multiplier8(m.positive);
    const int64_t negative = qmath::xnn_multiplier8(m.negative);
    return lower_unary_table(ctx, n, [=](int64_t q) {
      return qmath::xnn_requantize8(q, x.zero, q >= x.zero ? positive : negative, y.zero, y.lo,
                                    y.hi);
    });
  }
  const float alpha = n.attrs.get_float("alpha", 0.2f);
  const qmath::Multiplier identity = qmath::quantize_multiplier(x.scale / y.scale);
  const float alpha_scale = (x.scale * alpha) / y.scale;
  const qmath::Multiplier slope = qmath::quantize_multiplier(alpha_scale);
  const qmath::Multiplier magnitude{slope.m < 0 ? -slope.m : slope.m, slope.shift};
  // int16 runs optimized_integer_ops::QuantizeLeakyRelu: MBQM with the signed
  // alpha multiplier itself, which rounds ties of a negative alpha the other
  // way (zero points are 0).
  if (x.type == ir::DataType::kInt16)
    return lower_unary_table(ctx, n, [=](int64_t q) {
      const auto v = static_cast<int32_t>(q);
      return std::clamp<int64_t>(qmath::mbqm(v, v >= 0 ? identity : slope), y.lo, y.hi);
    });
  return lower_unary_table(ctx, n, [=](int64_t q) {
    const auto v = static_cast<int32_t>(q - x.zero);
    int64_t out = qmath::mbqm(v, identity);
    if (v < 0) {
      out = qmath::mbqm(v, magnitude);
      if (slope.m < 0) out = -out;
    }
    return std::clamp(out + y.zero, y.lo, y.hi);
  });
}

// RELU, RELU6, RELU_N1_TO_1 (TFLite's QuantizedReluX, §4.9; XNNPACK takes
// only the float ones): z_y + MBQM(x - z_x, QM(f32(s_x / s_y))), clamped to
// the bounds rounded half away from zero.
template <int kLow, int kHigh>
Status lower_relu_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  const qmath::Multiplier m = qmath::quantize_multiplier(x.scale / y.scale);
  const int64_t lo = qmath::tflite_bound(static_cast<float>(kLow), y.scale, y.zero, y.lo, y.hi);
  const int64_t hi =
      kHigh == kLow ? y.hi
                    : qmath::tflite_bound(static_cast<float>(kHigh), y.scale, y.zero, y.lo, y.hi);
  return lower_unary_table(ctx, n, [=](int64_t q) {
    return std::clamp(y.zero + qmath::mbqm(static_cast<int32_t>(q - x.zero), m), lo, hi);
  });
}

// RSQRT int8 (TFLite's fixed point, §4.10; XNNPACK takes only float RSQRT).
Status lower_rsqrt_table(LowerContext& ctx, const ir::Node& n) {
  const Params x = params_of(ctx.tensor(n.inputs[0])), y = params_of(ctx.tensor(n.outputs[0]));
  return lower_unary_table(
      ctx, n, [=](int64_t q) { return qmath::rsqrt_int8(q, x.scale, x.zero, y.scale, y.zero); });
}

// LEAKY_RELU: 8-bit, or int16 with zero points 0 (TFLite refuses others).
Check check_leaky_relu(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.quantized_type != ir::DataType::kInt16 || y.quantized_type != ir::DataType::kInt16)
    return check_eight_bit(g, n);
  if (!per_tensor(x) || !per_tensor(y))
    return refuse(ReasonCode::kQuantization, "per-axis quantization");
  if (params_of(x).zero != 0 || params_of(y).zero != 0)
    return refuse(ReasonCode::kQuantization, "int16 zero points other than 0 (TFLite refuses)");
  return std::nullopt;
}

Check check_int8(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_eight_bit(g, n)) return r;
  if (*g.tensor(n.inputs[0]).quantized_type != ir::DataType::kInt8)
    return refuse(
        ReasonCode::kNotImplemented,
        "uint8 has no integer form for --quantization exact (TFLite's kernel takes int8)");
  return std::nullopt;
}

// uint8 CONCATENATION whose inputs are quantized otherwise than its output:
// LiteRT.js runs TFLite's ConcatenationWithScaling (§4.11), which requantizes
// each such input in float, y = clamp((int) RHAZ(f32(f32(q * scale) + bias))
// + z_y, 0, 255) with scale = f32(s_i * f32(1 / s_y)) and bias = f32(-z_i *
// scale), and copies the others: a Gather into a 256-entry table per input,
// then the copy. (tfjs-tflite's older kernel copies every input.)
Status lower_concatenation(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  const Params py = params_of(y);
  ir::Node copy = n;
  Writer w(ctx, n);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Params px = params_of(ctx.tensor(n.inputs[i]));
    if (px.scale == py.scale && px.zero == py.zero) continue;
    const float scale = px.scale * (1.0f / py.scale);
    const float bias = static_cast<float>(-px.zero) * scale;
    std::vector<int64_t> table(256);
    for (int64_t q = 0; q < 256; ++q) {
      const float v = static_cast<float>(q) * scale + bias;
      table[static_cast<size_t>(q)] = std::clamp<int64_t>(
          qmath::round_half_away(static_cast<double>(v)) + py.zero, py.lo, py.hi);
    }
    const ir::TensorId requantized = ctx.temp_like(n.inputs[i], "requantized");
    ctx.graph().tensor(requantized).dtype = ir::DataType::kUInt8;
    w.store(w.lookup(w.integers(n.inputs[i]), std::move(table), ir::DataType::kUInt8, py.lo, py.hi),
            requantized);
    copy.inputs[i] = requantized;
  }
  if (Status s = w.result(); !s.ok()) return s;
  return lower_copy(ctx, copy);
}

// Every input quantized per tensor with the output's parameters, or uint8
// ones with any (those LiteRT.js requantizes); no fused activation.
Check check_concatenation(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (y.quantized_type != ir::DataType::kUInt8 || !per_tensor(y) ||
      n.attrs.get_string("fused_activation_function", "NONE") != "NONE")
    return check_equal_params(g, n);
  for (ir::TensorId t : n.inputs) {
    const ir::Tensor& x = g.tensor(t);
    if (x.quantized_type != ir::DataType::kUInt8 || !per_tensor(x))
      return refuse(ReasonCode::kQuantization, "input '" + x.name +
                                                   "' is not quantized per tensor as uint8 as "
                                                   "the output '" +
                                                   y.name + "' is");
  }
  return std::nullopt;
}

// Whether an input has other parameters than the output (a requantization:
// Q/DQ rounds it half to even, TFLite half away from zero); otherwise the
// concatenation copies integers in its Q/DQ form too.
bool concatenation_requantizes(const ir::Graph& g, const ir::Node& n) {
  const Params py = params_of(g.tensor(n.outputs[0]));
  return std::any_of(n.inputs.begin(), n.inputs.end(), [&](ir::TensorId t) {
    const Params px = params_of(g.tensor(t));
    return px.scale != py.scale || px.zero != py.zero;
  });
}

}  // namespace

ExactForm concatenation_exact() {
  return {lower_concatenation, check_concatenation, InQdqGraphs::kNo, concatenation_requantizes};
}

// The table ops take their table in --quantization auto too: ONNX Runtime
// recomputes the function in float for their Q/DQ pattern, or rounds the
// clamp's bounds otherwise (docs/quantization-arithmetic.md section 10). RELU
// is exact as Q/DQ.
constexpr InQdqGraphs kAuto = InQdqGraphs::kQuantized;
ExactForm rsqrt_table() { return {lower_rsqrt_table, check_int8, kAuto}; }
ExactForm logistic_table() {
  return {lower_sigmoid_table<qmath::xnn_sigmoid, false>, check_sigmoid_table, kAuto};
}
ExactForm tanh_table() {
  return {lower_sigmoid_table<qmath::tanh_f, true>, check_sigmoid_table, kAuto};
}
ExactForm elu_table() { return {lower_xnn_table<qmath::elu_f>, check_xnn_table, kAuto}; }
ExactForm hard_swish_table() { return {lower_hard_swish_table, check_eight_bit, kAuto}; }
ExactForm leaky_relu_table() { return {lower_leaky_relu_table, check_leaky_relu, kAuto}; }
// (RELU has no upper bound: kHigh == kLow.)
ExactForm relu_table() { return {lower_relu_table<0, 0>, check_eight_bit}; }
ExactForm relu6_table() { return {lower_relu_table<0, 6>, check_eight_bit, kAuto}; }
ExactForm relu_n1_to_1_table() { return {lower_relu_table<-1, 1>, check_eight_bit, kAuto}; }

}  // namespace lite2onnx::ops::exact
