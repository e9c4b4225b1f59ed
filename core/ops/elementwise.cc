// Elementwise ops: unary math, activations, binary arithmetic with broadcast.
// All Transparent: they run in whatever layout their operands have.
#include <cmath>
#include <utility>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/options.h"

namespace lite2onnx::ops::elementwise {
namespace {

using ir::TensorId;

// Unary and binary ops whose ONNX form is one node of the type named in the
// table entry's `onnx` field.
Status lower_unary(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  ctx.emit(n, lookup(n).doc.onnx, {x}, {n.outputs[0]});
  return ok_status();
}

Status lower_clip(LowerContext& ctx, const ir::Node& n, double lo, double hi) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  ir::DataType type = g.tensor(n.outputs[0]).dtype;
  ctx.emit(
      n, "Clip",
      {x, ctx.const_scalar(n.name + "/min", type, lo), ctx.const_scalar(n.name + "/max", type, hi)},
      {n.outputs[0]});
  return ok_status();
}

// Whether int16 power-of-two scales take the shifting kernel: the schema's
// default (true) when the file names the options table but leaves it out.
template <class Options>
void store_pot_scale_int16(const Options* o, ir::Attributes& attrs) {
  attrs.set("pot_scale_int16", int64_t{o ? o->pot_scale_int16() : true});
}

void read_binary_options(const tflite::Operator& op, ir::Attributes& attrs) {
  switch (op.builtin_options_type()) {
    case tflite::BuiltinOptions::AddOptions:
      store_activation(op.builtin_options_as_AddOptions(), attrs);
      store_pot_scale_int16(op.builtin_options_as_AddOptions(), attrs);
      break;
    case tflite::BuiltinOptions::SubOptions:
      store_activation(op.builtin_options_as_SubOptions(), attrs);
      store_pot_scale_int16(op.builtin_options_as_SubOptions(), attrs);
      break;
    case tflite::BuiltinOptions::MulOptions:
      store_activation(op.builtin_options_as_MulOptions(), attrs);
      break;
    case tflite::BuiltinOptions::DivOptions:
      store_activation(op.builtin_options_as_DivOptions(), attrs);
      break;
    default:
      attrs.set("fused_activation_function", std::string("NONE"));
  }
}

Check check_binary(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || !has_input(g, n, 0) || !has_input(g, n, 1))
    return refuse(ReasonCode::kOperands, "expects two inputs");
  return check_activation(g, n);
}

// Inputs 0 and 1 in the output's layout and rank (numpy broadcast).
std::pair<TensorId, TensorId> binary_operands(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Perm& p = out_layout(g, n);
  const size_t rank = out_rank(g, n);
  TensorId a = ctx.operand(n, 0, p, rank);
  TensorId b = ctx.operand(n, 1, p, rank);
  return {a, b};
}

Status lower_binary(LowerContext& ctx, const ir::Node& n) {
  const auto [a, b] = binary_operands(ctx, n);
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ctx.emit(n, lookup(n).doc.onnx, {a, b}, {*y});
  return ok_status();
}

// --quantization exact: the binary ops on the integers (exact_binary.cc).
template <exact::Value (*Fn)(exact::Writer&, const exact::Value&, const exact::Value&)>
Status lower_binary_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const auto [a, b] = binary_operands(ctx, n);
  exact::Writer w(ctx, n);
  w.store(Fn(w, w.integers(a), w.integers(b)), n.outputs[0]);
  return w.result();
}

template <exact::BinaryOp op>
exact::Value arithmetic_of(exact::Writer& w, const exact::Value& a, const exact::Value& b) {
  return exact::arithmetic(w, a, b, op);
}
template <exact::BinaryOp op>
Check check_arithmetic_exact(const ir::Graph& g, const ir::Node& n) {
  return exact::check_arithmetic(g, n, op);
}
template <exact::BinaryOp op>
ExactForm arithmetic_exact() {
  return {.lower = lower_binary_exact<arithmetic_of<op>>,
          .check = check_arithmetic_exact<op>,
          .in_qdq_graphs = InQdqGraphs::kQuantized};
}
ExactForm arithmetic_exact(Arithmetic arithmetic) {
  switch (arithmetic) {
    case Arithmetic::kAdd:
      return arithmetic_exact<exact::BinaryOp::kAdd>();
    case Arithmetic::kSub:
      return arithmetic_exact<exact::BinaryOp::kSub>();
    case Arithmetic::kMul:
      return arithmetic_exact<exact::BinaryOp::kMul>();
    default:
      return {};
  }
}

Status lower_relu6(LowerContext& ctx, const ir::Node& n) { return lower_clip(ctx, n, 0, 6); }
Status lower_relu_n1_to_1(LowerContext& ctx, const ir::Node& n) {
  return lower_clip(ctx, n, -1, 1);
}

Status lower_rsqrt(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  TensorId s = ctx.temp_like(n.outputs[0], "sqrt");
  ctx.emit(n, "Sqrt", {x}, {s}, "Sqrt");
  ctx.emit(n, "Reciprocal", {s}, {n.outputs[0]});
  return ok_status();
}

Status lower_hard_swish(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  if (ctx.opset() >= 14) {
    ctx.emit(n, "HardSwish", {x}, {n.outputs[0]});
    return ok_status();
  }
  TensorId hs = ctx.temp_like(n.outputs[0], "hard_sigmoid");
  ir::Node& h = ctx.emit(n, "HardSigmoid", {x}, {hs}, "HardSigmoid");
  h.attrs.set("alpha", 1.0f / 6.0f);
  h.attrs.set("beta", 0.5f);
  ctx.emit(n, "Mul", {x, hs}, {n.outputs[0]});
  return ok_status();
}

void read_leaky_relu_options(const tflite::Operator& op, ir::Attributes& attrs) {
  const auto* o = op.builtin_options_as_LeakyReluOptions();
  attrs.set("alpha", o ? o->alpha() : 0.2f);
}

Status lower_leaky_relu(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  ir::Node& r = ctx.emit(n, "LeakyRelu", {x}, {n.outputs[0]});
  r.attrs.set("alpha", n.attrs.get_float("alpha", 0.2f));
  return ok_status();
}

Status lower_squared_difference(LowerContext& ctx, const ir::Node& n) {
  const auto [a, b] = binary_operands(ctx, n);
  TensorId d = ctx.temp_like(n.outputs[0], "diff");
  ctx.emit(n, "Sub", {a, b}, {d}, "Sub");
  ctx.emit(n, "Mul", {d, d}, {n.outputs[0]});
  return ok_status();
}

Status lower_prelu(LowerContext& ctx, const ir::Node& n) {
  const auto [x, slope] = binary_operands(ctx, n);
  ctx.emit(n, "PRelu", {x, slope}, {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry unary(const char* onnx_op, ExactForm exact) {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_unary,
          .quantization = {.exact = exact},
          .doc = {.onnx = onnx_op}};
}

OpEntry relu6() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_relu6,
          .quantization = {.exact = exact::relu6_table()},
          .doc = {.onnx = "Clip"}};
}

OpEntry relu_n1_to_1() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_relu_n1_to_1,
          .quantization = {.exact = exact::relu_n1_to_1_table()},
          .doc = {.onnx = "Clip"}};
}

OpEntry rsqrt() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_rsqrt,
          .quantization = {.exact = exact::rsqrt_table()},
          .doc = {.onnx = "Sqrt + Reciprocal"}};
}

OpEntry hard_swish() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_hard_swish,
          .quantization = {.exact = exact::hard_swish_table()},
          .doc = {.onnx = "HardSwish (opset 14+); x * HardSigmoid(x) below"}};
}

OpEntry leaky_relu() {
  return {.read = {.options = read_leaky_relu_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_leaky_relu,
          .quantization = {.exact = exact::leaky_relu_table()},
          .doc = {.onnx = "LeakyRelu"}};
}

OpEntry binary(const char* onnx_op, const char* dtypes, Arithmetic arithmetic) {
  return {.read = {.min_inputs = 2, .options = read_binary_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_binary,
          .lower = lower_binary,
          .quantization = {.exact = arithmetic_exact(arithmetic)},
          .evaluate = {.arithmetic = arithmetic},
          .doc = {.onnx = onnx_op,
                  .dtypes = dtypes,
                  .notes = "numpy broadcasting; constant operands are permuted in their "
                           "initializer"}};
}

OpEntry squared_difference() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_binary,
          .lower = lower_squared_difference,
          .quantization = {.exact = {lower_binary_exact<exact::squared_difference>,
                                     exact::check_squared_difference, InQdqGraphs::kQuantized}},
          .doc = {.onnx = "Sub + Mul", .dtypes = "float32, int32"}};
}

OpEntry prelu() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_binary,
          .lower = lower_prelu,
          .quantization = {.exact = {lower_binary_exact<exact::prelu>, exact::check_prelu,
                                     InQdqGraphs::kQuantized}},
          .doc = {.onnx = "PRelu"}};
}

namespace {

// After plan_qdq a quantized tensor is float32 carrying its quantization
// (quantized_type): DEQUANTIZE and QUANTIZE are then value copies, and the
// Q/DQ nodes materialize_qdq adds around the tensors do the work (an
// int -> int QUANTIZE becomes DequantizeLinear -> QuantizeLinear: a requantize).
Status lower_int16_to_int32(LowerContext& ctx, const ir::Node& n);
bool int16_to_int32(const ir::Graph& g, const ir::Node& n);

Status lower_quantization_copy(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  if (int16_to_int32(g, n)) return lower_int16_to_int32(ctx, n);
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  if (g.tensor(x).dtype == ir::DataType::kFloat16) {
    ir::Node& c = ctx.emit(n, "Cast", {x}, {n.outputs[0]});
    c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kFloat32)});
  } else {
    ctx.emit(n, "Identity", {x}, {n.outputs[0]});
  }
  return ok_status();
}

// QUANTIZE from int16 to int32 (TFLite's requantization of a 16x8 result,
// e.g. a softmax, into an int32 output): the int16 side is computed in float
// on its grid (emulate_int16), so the output is that value on the int32 grid.
bool int16_to_int32(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  return n.builtin == ir::builtin::kQuantize && x.quantized_type == ir::DataType::kInt16 &&
         y.dtype == ir::DataType::kInt32 && y.quant && y.quant->scale.size() == 1 &&
         y.quant->scale[0] > 0 && std::isfinite(y.quant->scale[0]);
}

Status lower_int16_to_int32(LowerContext& ctx, const ir::Node& n) {
  ir::Tensor& y = ctx.graph().tensor(n.outputs[0]);
  const double scale = y.quant->scale[0];
  const double zp = y.quant->zero_point.empty() ? 0.0 : static_cast<double>(y.quant->zero_point[0]);
  const bool dequantize = ctx.quantization() == QuantizationMode::kDequantize;
  const ir::DataType f32 = ir::DataType::kFloat32;
  auto temp = [&](const std::string& s) { return ctx.temp(n.name + "/" + s, f32); };
  TensorId steps = temp("steps"), rounded = temp("rounded");
  ctx.emit(n, "Div", {n.inputs[0], ctx.const_scalar(n.name + "/scale", f32, scale)}, {steps},
           "steps");
  ctx.emit(n, "Round", {steps}, {rounded}, "round");
  if (dequantize) {
    // --quantization dequantize: the value on the int32 grid, as float32.
    y.dtype = f32;
    ctx.emit(n, "Mul", {rounded, ctx.const_scalar(n.name + "/step", f32, scale)}, {n.outputs[0]},
             "value");
    return ok_status();
  }
  TensorId shifted = rounded;
  if (zp != 0) {
    shifted = temp("shifted");
    ctx.emit(n, "Add", {rounded, ctx.const_scalar(n.name + "/zero_point", f32, zp)}, {shifted},
             "zero_point");
  }
  ctx.emit(n, "Cast", {shifted}, {n.outputs[0]}, "cast")
      .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt32)});
  return ok_status();
}

Check check_quantization_copy(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0)) return refuse(ReasonCode::kOperands, "input is missing");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (int16_to_int32(g, n)) return {};
  if (y.dtype != ir::DataType::kFloat32)
    return refuse(ReasonCode::kType, "output '" + y.name + "' has type " + ir::to_string(y.dtype) +
                                         " (a quantized int8/uint8 or float32 tensor expected)");
  bool from_ok = x.dtype == ir::DataType::kFloat32 ||
                 (n.builtin == ir::builtin::kDequantize && x.dtype == ir::DataType::kFloat16);
  if (!from_ok)
    return refuse(ReasonCode::kType, "input '" + x.name + "' has type " + ir::to_string(x.dtype) +
                                         " (a quantized int8/uint8 or float tensor expected)");
  if (n.builtin == ir::builtin::kQuantize && !y.quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "output '" + y.name + "' has no quantization parameters");
  return {};
}

// --quantization exact, QUANTIZE between integer types: one table over the
// input's integers, with the arithmetic of the kernel LiteRT.js runs:
// XNNPACK's 8-fractional-bit multiplier for int8 -> int8 and uint8 -> uint8
// with a scale ratio in [2^-8, 128] (§3.3), else TFLite's requantization
// (MultiplyByQuantizedMultiplier with double(s_x) / double(s_y), or the 0x80
// flip between int8 and uint8 of one scale, §4.11).
exact::TableFn requantization(const ir::Node& n, const ir::Tensor& x, const ir::Tensor& y) {
  const exact::Params px = exact::params_of(x), py = exact::params_of(y);
  const float ratio = px.scale / py.scale;
  if (!exact::builtin_kernels_only(n) && px.type == py.type && exact::xnnpack_quantization(x) &&
      exact::xnnpack_quantization(y) && ratio >= 1.0f / 256.0f && ratio <= 128.0f) {
    const int64_t m = qmath::xnn_multiplier8(ratio);
    return [=](int64_t q) { return qmath::xnn_requantize8(q, px.zero, m, py.zero, py.lo, py.hi); };
  }
  const bool flip = px.scale == py.scale && px.type != py.type &&
                    (px.type == ir::DataType::kInt8 || px.type == ir::DataType::kUInt8) &&
                    (py.type == ir::DataType::kInt8 || py.type == ir::DataType::kUInt8) &&
                    (py.zero - px.zero == 128 || px.zero - py.zero == 128);
  if (flip) return [=](int64_t q) { return q - px.zero + py.zero; };
  const auto m =
      qmath::quantize_multiplier(static_cast<double>(px.scale) / static_cast<double>(py.scale));
  return [=](int64_t q) {
    return std::clamp<int64_t>(int64_t{qmath::mbqm(static_cast<int32_t>(q - px.zero), m)} + py.zero,
                               py.lo, py.hi);
  };
}

// --quantization exact, QUANTIZE from float: XNNPACK's RNE(f32(x * f32(1 / s))) + z
// for 8-bit outputs it takes, else TFLite's RHAZ(double(x) / double(s)) + z.
Status lower_quantize_exact(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  if (x.quantized_type) return exact::lower_unary_table(ctx, n, requantization(n, x, y));
  const exact::Params py = exact::params_of(y);
  exact::Writer w(ctx, n);
  const TensorId in = ctx.operand(n, 0, out_layout(ctx.graph(), n), out_rank(ctx.graph(), n));
  if (!exact::builtin_kernels_only(n) && py.type != ir::DataType::kInt16 &&
      exact::xnnpack_quantization(y)) {
    w.store(w.round_to(w.fmul(in, {1.0f / py.scale}, {}), py.type, py.zero), n.outputs[0]);
    return w.result();
  }
  const ir::DataType f64 = ir::DataType::kFloat64;
  const TensorId wide = w.temp(f64, "double");
  w.emit("Cast", {in}, wide, "double").attrs.set("to", int64_t{ir::onnx_type_code(f64)});
  const TensorId steps = w.temp(f64, "steps");
  w.emit("Div", {wide, ctx.const_scalar(n.name + "/scale", f64, py.scale)}, steps, "steps");
  const TensorId shifted = w.temp(f64, "shifted");
  w.emit("Add",
         {w.round_half_away(steps, f64),
          ctx.const_scalar(n.name + "/zero", f64, static_cast<double>(py.zero))},
         shifted, "shifted");
  const TensorId clipped = w.temp(f64, "clipped");
  w.emit("Clip",
         {shifted, ctx.const_scalar(n.name + "/lo", f64, static_cast<double>(py.lo)),
          ctx.const_scalar(n.name + "/hi", f64, static_cast<double>(py.hi))},
         clipped, "clipped");
  w.emit("Cast", {clipped}, n.outputs[0], "out")
      .attrs.set("to", int64_t{ir::onnx_type_code(py.type)});
  return w.result();
}

Check check_quantize_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if ((x.quantized_type && !exact::per_tensor(x)) || (y.quantized_type && !exact::per_tensor(y)))
    return refuse(ReasonCode::kQuantization, "per-axis QUANTIZE");
  // The table of an integer input has one entry per input value.
  auto small = [](const ir::Tensor& t) {
    return !t.quantized_type || *t.quantized_type == ir::DataType::kInt8 ||
           *t.quantized_type == ir::DataType::kUInt8 || *t.quantized_type == ir::DataType::kInt16;
  };
  // int16 -> int32 (TFLite's Requantize into an int32 output): MBQM's left
  // shift and the zero point must stay within int32, as the kernel computes.
  if (x.quantized_type == ir::DataType::kInt16 && y.dtype == ir::DataType::kInt32 && y.quant &&
      y.quant->scale.size() == 1) {
    const exact::Params px = exact::params_of(x), py = exact::params_of(y);
    const double ratio = static_cast<double>(px.scale) / static_cast<double>(py.scale);
    if (!(ratio > 0) || !(ratio < 16384.0) || py.zero < -(int64_t{1} << 30) ||
        py.zero > (int64_t{1} << 30))
      return refuse(ReasonCode::kQuantization,
                    "an int16 -> int32 requantization whose int32 arithmetic would wrap");
    return std::nullopt;
  }
  if (!small(x) || !small(y) || !y.quantized_type)
    return refuse(ReasonCode::kType,
                  "QUANTIZE from or to other than int8, uint8 and int16 (int16 -> int32 aside) "
                  "has no integer form for --quantization exact yet");
  return std::nullopt;
}

// --quantization exact, DEQUANTIZE: f32((q - z) * s), as both kernels compute
// it (DequantizeLinear does the same for 8-bit; int16 through int32).
Status lower_dequantize_exact(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const TensorId in = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  const ir::Tensor& x = ctx.tensor(in);
  const exact::Params px = exact::params_of(x);
  exact::Writer w(ctx, n);
  if (px.type == ir::DataType::kInt16) {
    const TensorId v = w.to_float(w.sub(w.integers(in), w.constant(px.zero)));
    w.emit("Mul", {v, ctx.const_scalar(n.name + "/scale", ir::DataType::kFloat32, px.scale)},
           n.outputs[0], "value");
    return w.result();
  }
  const size_t channels = x.quant->scale.size();
  std::vector<int64_t> zeros;
  for (size_t c = 0; c < channels; ++c)
    zeros.push_back(x.quant->zero_point.empty()
                        ? 0
                        : x.quant->zero_point[std::min(c, x.quant->zero_point.size() - 1)]);
  const ir::Shape shape = channels > 1 ? ir::Shape{static_cast<int64_t>(channels)} : ir::Shape{};
  exact::Value zero = w.channels(zeros, shape);
  ir::Node& dq =
      w.emit("DequantizeLinear",
             {in, ctx.const_f32(n.name + "/scale", x.quant->scale, shape), w.tensor(zero, px.type)},
             n.outputs[0], "value");
  if (channels > 1) dq.attrs.set("axis", int64_t{ir::onnx_axis(x.layout, x.quant->axis)});
  return w.result();
}

}  // namespace

OpEntry dequantize() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_quantization_copy,
          .lower = lower_quantization_copy,
          .quantization = {.exact = {lower_dequantize_exact}},
          .doc = {.onnx = "Identity (DequantizeLinear at the input) / Cast",
                  .dtypes = "int8, uint8 (-> float32), float16 (-> float32)",
                  .notes = "float16 constants are folded to float32 initializers; int8/uint8 "
                           "constants stay integer initializers with a DequantizeLinear"}};
}

namespace {

// DENSIFY: the reader already made its sparse constant dense, so it is a copy
// that constant folding removes.
Check check_densify(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 0, "the sparse input")) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != y.dtype || x.shape != y.shape)
    return refuse(ReasonCode::kType, "output " + ir::to_string(y.shape) + " " +
                                         ir::to_string(y.dtype) + " differs from the input " +
                                         ir::to_string(x.shape) + " " + ir::to_string(x.dtype));
  return {};
}

std::optional<std::vector<OutputMap>> densify_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t) {
  auto shape = ir::static_shape(g.tensor(n.inputs[0]));
  if (!shape) return std::nullopt;
  return in_order(std::move(*shape));
}

}  // namespace

OpEntry densify() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_densify,
          .lower = lower_unary,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .evaluate = {.element_sources = densify_sources},
          .doc = {.onnx = "Identity",
                  .dtypes = "float32, float16, int8 (any the reader densifies)",
                  .notes = "sparse constants (CSR, block-sparse) are densified when the model is "
                           "read"}};
}

OpEntry quantize() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_quantization_copy,
          .lower = lower_quantization_copy,
          .quantization = {.exact = {lower_quantize_exact, check_quantize_exact,
                                     InQdqGraphs::kQuantized}},
          .doc = {.onnx = "QuantizeLinear (requantize: DequantizeLinear -> QuantizeLinear)",
                  .dtypes = "float32, int8, uint8 (-> int8, uint8), int16 (-> int32)",
                  .notes = "float -> int, and int -> int requantization between two scales; "
                           "int16 -> int32 as Div, Round, Cast (--quantization dequantize: the "
                           "value on the int32 grid)"}};
}

}  // namespace lite2onnx::ops::elementwise
