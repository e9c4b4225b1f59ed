// Elementwise ops: unary math, activations, binary arithmetic with broadcast.
// All Transparent: they run in whatever layout their operands have.
#include <cmath>
#include <utility>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
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

void read_binary_options(const tflite::Operator& op, ir::Attributes& attrs) {
  switch (op.builtin_options_type()) {
    case tflite::BuiltinOptions::AddOptions:
      store_activation(op.builtin_options_as_AddOptions(), attrs);
      break;
    case tflite::BuiltinOptions::SubOptions:
      store_activation(op.builtin_options_as_SubOptions(), attrs);
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

OpEntry unary(const char* onnx_op) {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_unary,
          .doc = {.onnx = onnx_op}};
}

OpEntry relu6() {
  return {
      .layout = {.kind = LayoutClass::kTransparent}, .lower = lower_relu6, .doc = {.onnx = "Clip"}};
}

OpEntry relu_n1_to_1() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_relu_n1_to_1,
          .doc = {.onnx = "Clip"}};
}

OpEntry rsqrt() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_rsqrt,
          .doc = {.onnx = "Sqrt + Reciprocal"}};
}

OpEntry hard_swish() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_hard_swish,
          .doc = {.onnx = "HardSwish (opset 14+); x * HardSigmoid(x) below"}};
}

OpEntry leaky_relu() {
  return {.read = {.options = read_leaky_relu_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .lower = lower_leaky_relu,
          .doc = {.onnx = "LeakyRelu"}};
}

OpEntry binary(const char* onnx_op, const char* dtypes, Arithmetic arithmetic) {
  return {.read = {.min_inputs = 2, .options = read_binary_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_binary,
          .lower = lower_binary,
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
          .doc = {.onnx = "Sub + Mul", .dtypes = "float32, int32"}};
}

OpEntry prelu() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_binary,
          .lower = lower_prelu,
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

}  // namespace

OpEntry dequantize() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_quantization_copy,
          .lower = lower_quantization_copy,
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
          .doc = {.onnx = "QuantizeLinear (requantize: DequantizeLinear -> QuantizeLinear)",
                  .dtypes = "float32, int8, uint8 (-> int8, uint8), int16 (-> int32)",
                  .notes = "float -> int, and int -> int requantization between two scales; "
                           "int16 -> int32 as Div, Round, Cast (--quantization dequantize: the "
                           "value on the int32 grid)"}};
}

}  // namespace lite2onnx::ops::elementwise
