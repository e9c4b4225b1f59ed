// --quantization exact for ADD, SUB and MUL (docs/quantization-arithmetic.md:
// XNNPACK's add §3.2 and mul §3.1, TFLite's builtin kernels §4.2).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {
namespace {

struct Operands {
  Params a, b, y;
};

Operands operands_of(const ir::Graph& g, const ir::Node& n) {
  return {params_of(g.tensor(n.inputs[0])), params_of(g.tensor(n.inputs[1])),
          params_of(g.tensor(n.outputs[0]))};
}

// The fused activations XNNPACK's delegate takes (it leaves TANH and
// SIGN_BIT to the builtin kernel).
bool xnnpack_activation(const ir::Node& n) {
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  return act == "NONE" || act == "RELU" || act == "RELU6" || act == "RELU_N1_TO_1";
}

// Whether LiteRT.js's XNNPACK delegate takes the node: 8-bit per-tensor
// operands, and the scale ratios its CheckTensorsInputOutputScale (ADD, SUB:
// each input's [2^-10, 256)) or CheckTensorsInputProductOutputScale (MUL:
// [2^-16, 256)) accept, computed in float as it does.
bool xnnpack_takes(const ir::Graph& g, const ir::Node& n, BinaryOp op) {
  if (builtin_kernels_only(n)) return false;
  for (ir::TensorId t : {n.inputs[0], n.inputs[1], n.outputs[0]})
    if (!xnnpack_quantization(g.tensor(t))) return false;
  if (!xnnpack_activation(n)) return false;
  const Operands p = operands_of(g, n);
  if (p.a.type != p.y.type || p.b.type != p.y.type) return false;
  auto within = [](float r, float lo, float hi) { return r >= lo && r < hi; };
  if (op == BinaryOp::kMul)
    return within(qmath::fp32_scale(p.a.scale, p.b.scale, p.y.scale), 0x1p-16f, 256.0f);
  return within(p.a.scale / p.y.scale, 0x1p-10f, 256.0f) &&
         within(p.b.scale / p.y.scale, 0x1p-10f, 256.0f);
}

// log2 of a power-of-two scale, or nullopt (TFLite's CheckedLog2).
std::optional<int> pot_exponent(float scale) {
  const double l = std::log2(static_cast<double>(scale));
  const double rounded = std::round(l);
  if (std::fabs(l - rounded) >= 1e-3) return std::nullopt;
  return static_cast<int>(rounded);
}

// int16 ADD/SUB with pot_scale_int16 (the schema's default) and all three
// scales powers of two: each input's shift to the output's scale (<= 0).
struct PotShifts {
  int a = 0, b = 0;
};
std::optional<PotShifts> pot_shifts(const ir::Node& n, const Operands& p, BinaryOp op) {
  if (op == BinaryOp::kMul || p.y.type != ir::DataType::kInt16 ||
      n.attrs.get_int("pot_scale_int16", 1) == 0)
    return std::nullopt;
  const auto ea = pot_exponent(p.a.scale), eb = pot_exponent(p.b.scale),
             ey = pot_exponent(p.y.scale);
  if (!ea || !eb || !ey) return std::nullopt;
  return PotShifts{*ea - *ey, *eb - *ey};
}

Value xnnpack_add(Writer& w, const Value& a, const Value& b, const Operands& p, BinaryOp op) {
  const qmath::XnnAdd k =
      qmath::xnn_add_params(p.a.scale, p.b.scale, p.y.scale, op == BinaryOp::kSub);
  const int64_t bias = (int64_t{1} << (k.shift - 1)) - k.ma * p.a.zero - k.mb * p.b.zero;
  const auto [lo, hi] = activation_range(w.node(), p.y, true);
  // In float64, as floor(a m_a 2^-shift + b m_b 2^-shift + (bias 2^-shift + z_y)):
  // every term is a multiple of 2^-shift below 2^31 in magnitude, so each
  // product and sum is exact (53 bits), and so is the floor. ONNX Runtime runs
  // these ops several times faster than the integer shift's Mod and Div.
  const double unit = std::ldexp(1.0, -k.shift);
  auto scalar = [&](double v, const char* what) {
    return w.ctx().const_f64(w.node().name + "/" + what, {v}, ir::Shape{});
  };
  using ir::DataType;
  const ir::TensorId sa = w.apply(
      "Mul", {w.tensor(a, DataType::kFloat64), scalar(static_cast<double>(k.ma) * unit, "ma")},
      DataType::kFloat64);
  const ir::TensorId sb = w.apply(
      "Mul", {w.tensor(b, DataType::kFloat64), scalar(static_cast<double>(k.mb) * unit, "mb")},
      DataType::kFloat64);
  const ir::TensorId sum =
      w.apply("Add",
              {w.apply("Add", {sa, sb}, DataType::kFloat64),
               scalar(static_cast<double>(bias) * unit + static_cast<double>(p.y.zero), "bias")},
              DataType::kFloat64);
  const ir::TensorId clipped =
      w.apply("Clip",
              {w.apply("Floor", {sum}, DataType::kFloat64), scalar(static_cast<double>(lo), "lo"),
               scalar(static_cast<double>(hi), "hi")},
              DataType::kFloat64);
  Value y;
  y.type = p.y.type;
  y.lo = lo;
  y.hi = hi;
  y.id = w.temp(y.type, "out");
  w.emit("Cast", {clipped}, y.id, "out").attrs.set("to", int64_t{ir::onnx_type_code(y.type)});
  return y;
}

Value builtin_add(Writer& w, const Value& a, const Value& b, const Operands& p, BinaryOp op) {
  const auto [lo, hi] = activation_range(w.node(), p.y, false);
  if (auto shifts = pot_shifts(w.node(), p, op)) {
    // RoundingDivideByPOT of the shifted input, a saturating int16 add.
    auto scaled = [&](const Value& x, int shift) {
      return shift == 0 ? x : w.rhaz_div(x, w.constant(int64_t{1} << -shift));
    };
    const Value sa = scaled(a, shifts->a), sb = scaled(b, shifts->b);
    const Value raw = op == BinaryOp::kSub ? w.sub(sa, sb) : w.add(sa, sb);
    return w.clip(w.clip(raw, -32768, 32767), lo, hi);
  }
  const qmath::TfliteAdd k = qmath::tflite_add_params(p.a.scale, p.b.scale, p.y.scale,
                                                      p.y.type == ir::DataType::kInt16 ? 15 : 20);
  auto scaled = [&](const Value& x, int64_t zero, const qmath::Multiplier& m) {
    const Value shifted = w.mul(w.sub(x, w.constant(zero)), w.constant(int64_t{1} << k.left_shift));
    return mbqm(w, shifted, std::span(&m, 1), {});
  };
  const Value sa = scaled(a, p.a.zero, k.a), sb = scaled(b, p.b.zero, k.b);
  const Value raw = op == BinaryOp::kSub ? w.sub(sa, sb) : w.add(sa, sb);
  return w.clip(w.add(mbqm(w, raw, std::span(&k.y, 1), {}), w.constant(p.y.zero)), lo, hi);
}

}  // namespace

Check check_arithmetic(const ir::Graph& g, const ir::Node& n, BinaryOp op) {
  if (auto bad = check_activation_range(n)) return bad;
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  for (ir::TensorId t : {n.inputs[0], n.inputs[1]}) {
    const ir::Tensor& x = g.tensor(t);
    if (!x.quantized_type || !per_tensor(x) || !y.quantized_type || !per_tensor(y) ||
        *x.quantized_type != *y.quantized_type)
      return refuse(ReasonCode::kQuantization,
                    "input '" + x.name + "' and output '" + y.name +
                        "' are not both quantized per tensor with one integer type");
  }
  if (xnnpack_takes(g, n, op)) return std::nullopt;
  const Operands p = operands_of(g, n);
  if (p.y.type == ir::DataType::kInt16 && (p.a.zero != 0 || p.b.zero != 0 || p.y.zero != 0))
    return refuse(ReasonCode::kQuantization,
                  "int16 operands with a zero point (TFLite refuses them)");
  if (auto shifts = pot_shifts(n, p, op)) {
    if (shifts->a > 0 || shifts->b > 0 || (shifts->a != 0 && shifts->b != 0))
      return refuse(ReasonCode::kQuantization,
                    "int16 power-of-two scales that TFLite's kernel refuses (both inputs "
                    "rescaled, or one to a finer scale)");
    return std::nullopt;
  }
  // The builtin kernels multiply in int32: MBQM's x * 2^shift of a multiplier
  // above one wraps there, and the exact form wraps it too (mbqm), computing
  // the shift in int64 first, which must not overflow. |x| is at most the
  // product of the operands' reach from their zero points (MUL) or the larger
  // reach shifted left by L (ADD/SUB: each scaled input is at most half of it,
  // and they add).
  const bool mul = op == BinaryOp::kMul;
  const int left_shift = p.y.type == ir::DataType::kInt16 ? 15 : 20;
  const qmath::Multiplier out =
      mul ? qmath::quantize_multiplier(qmath::fp32_scale(p.a.scale, p.b.scale, p.y.scale))
          : qmath::tflite_add_params(p.a.scale, p.b.scale, p.y.scale, left_shift).y;
  auto reach = [](const Params& x) -> __int128 { return std::max(x.zero - x.lo, x.hi - x.zero); };
  const __int128 largest =
      (mul ? reach(p.a) * reach(p.b) : std::max(reach(p.a), reach(p.b)) << left_shift)
      << qmath::mbqm_left_shift(out);
  if (largest > (__int128{1} << 62))
    return refuse(ReasonCode::kQuantization, "an int32 product beyond int64 after its shift");
  return std::nullopt;
}

Value arithmetic(Writer& w, const Value& a, const Value& b, BinaryOp op) {
  const ir::Graph& g = w.ctx().graph();
  const ir::Node& n = w.node();
  const Operands p = operands_of(g, n);
  const bool xnnpack = xnnpack_takes(g, n, op);
  if (op != BinaryOp::kMul)
    return xnnpack ? xnnpack_add(w, a, b, p, op) : builtin_add(w, a, b, p, op);
  const Value product = w.mul(w.sub(a, w.constant(p.a.zero)), w.sub(b, w.constant(p.b.zero)));
  const double scale = qmath::fp32_scale(p.a.scale, p.b.scale, p.y.scale);
  const auto [lo, hi] = activation_range(n, p.y, xnnpack);
  return requantize(w, product, xnnpack ? Requantization::kFp32 : Requantization::kDouble,
                    std::span(&scale, 1), {}, p.y, lo, hi);
}

Check check_squared_difference(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_8bit(g, n)) return r;
  for (ir::TensorId t : {n.inputs[0], n.inputs[1], n.outputs[0]}) {
    const ir::Tensor& x = g.tensor(t);
    if (!x.quantized_type || !per_tensor(x) ||
        *x.quantized_type != *g.tensor(n.outputs[0]).quantized_type)
      return refuse(ReasonCode::kQuantization,
                    "'" + x.name + "' is not quantized per tensor with the output's type");
  }
  // MBQM(d * d, M_y): d * d must not wrap TFLite's int32 product shifted left.
  const Operands p = operands_of(g, n);
  const double twice = static_cast<double>(2 * std::max(p.a.scale, p.b.scale));
  const qmath::Multiplier out = qmath::quantize_multiplier(
      twice * twice / (static_cast<double>(1 << 14) * static_cast<double>(p.y.scale)));
  const __int128 d = __int128{256} << 7;
  if ((d * d) << std::max(out.shift, 0) > std::numeric_limits<int32_t>::max())
    return refuse(ReasonCode::kQuantization,
                  "scales for which TFLite's kernel's int32 product can wrap");
  return std::nullopt;
}

Value squared_difference(Writer& w, const Value& a, const Value& b) {
  const Operands p = operands_of(w.ctx().graph(), w.node());
  const double twice = static_cast<double>(2 * std::max(p.a.scale, p.b.scale));
  const qmath::Multiplier ma = qmath::quantize_multiplier(static_cast<double>(p.a.scale) / twice);
  const qmath::Multiplier mb = qmath::quantize_multiplier(static_cast<double>(p.b.scale) / twice);
  const qmath::Multiplier my = qmath::quantize_multiplier(
      twice * twice / (static_cast<double>(1 << 14) * static_cast<double>(p.y.scale)));
  auto scaled = [&](const Value& x, int64_t zero, const qmath::Multiplier& m) {
    return mbqm(w, w.mul(w.sub(x, w.constant(zero)), w.constant(128)), std::span(&m, 1), {});
  };
  const Value d = w.sub(scaled(a, p.a.zero, ma), scaled(b, p.b.zero, mb));
  const Value y = w.add(mbqm(w, w.mul(d, d), std::span(&my, 1), {}), w.constant(p.y.zero));
  return w.clip(y, p.y.lo, p.y.hi);
}

Check check_prelu(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_8bit(g, n)) return r;
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  for (ir::TensorId t : {n.inputs[0], n.inputs[1]}) {
    const ir::Tensor& x = g.tensor(t);
    if (!x.quantized_type || !per_tensor(x) || !y.quantized_type ||
        *x.quantized_type != *y.quantized_type)
      return refuse(ReasonCode::kQuantization,
                    "'" + x.name + "' is not quantized per tensor with the output's type");
  }
  return std::nullopt;
}

Value prelu(Writer& w, const Value& x, const Value& alpha) {
  const Operands p = operands_of(w.ctx().graph(), w.node());
  const float identity_scale = p.a.scale / p.y.scale;
  const float alpha_scale = (p.a.scale * p.b.scale) / p.y.scale;
  const qmath::Multiplier identity = qmath::quantize_multiplier(identity_scale);
  const qmath::Multiplier slope = qmath::quantize_multiplier(alpha_scale);
  // x >= z_x: MBQM(x - z_x, identity); below: MBQM((x - z_x)(alpha - z_alpha), slope).
  const Value v = w.sub(x, w.constant(p.a.zero));
  const Value positive = mbqm(w, v, std::span(&identity, 1), {});
  const Value negative =
      mbqm(w, w.mul(v, w.sub(alpha, w.constant(p.b.zero))), std::span(&slope, 1), {});
  const Value y = w.add(w.select_negative(v, negative, positive), w.constant(p.y.zero));
  return w.clip(y, p.y.lo, p.y.hi);
}

}  // namespace lite2onnx::ops::exact
