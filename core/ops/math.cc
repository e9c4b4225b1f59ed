// Elementwise math, comparison, logical and selection ops: CEIL, COS, ELU,
// EXP, FLOOR, LOG, NEG, ROUND, SIN, SQUARE, ZEROS_LIKE, GELU, CAST, the six
// comparisons, LOGICAL_AND/OR/NOT, MAXIMUM, MINIMUM, FLOOR_DIV, SELECT,
// SELECT_V2 and ADD_N. All Transparent except SELECT (v1), whose rank-1
// condition picks whole rows and so needs its own layout plan.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numbers>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::math {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

std::string type_list(std::initializer_list<DataType> ok) {
  std::string s;
  for (DataType t : ok) s += (s.empty() ? "" : ", ") + std::string(ir::to_string(t));
  return s;
}

// "" if input 0 exists and has one of the types.
Check check_input_type(const ir::Graph& g, const ir::Node& n, std::initializer_list<DataType> ok) {
  if (!has_input(g, n, 0)) return refuse(ReasonCode::kOperands, "input 0 is missing");
  DataType t = g.tensor(n.inputs[0]).dtype;
  for (DataType o : ok)
    if (o == t) return {};
  return refuse(ReasonCode::kType, "input type " + std::string(ir::to_string(t)) +
                                       " (supported: " + type_list(ok) + ")");
}

Check check_inputs(const ir::Graph& g, const ir::Node& n, size_t count) {
  if (n.inputs.size() != count)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(count) + " inputs");
  for (size_t i = 0; i < count; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  if (n.outputs.size() != 1) return refuse(ReasonCode::kOperands, "expects one output");
  return {};
}

Check check_float_unary(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  return check_input_type(g, n, {DataType::kFloat32});
}

Check check_neg(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  return check_input_type(g, n, {DataType::kFloat32, DataType::kInt32, DataType::kInt64});
}

Check check_bool_unary(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  return check_input_type(g, n, {DataType::kBool});
}

Check check_bool_binary(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 2)) return s;
  return check_input_type(g, n, {DataType::kBool});
}

Check check_equality(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 2)) return s;
  return check_input_type(g, n,
                          {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kInt8,
                           DataType::kUInt8, DataType::kInt16, DataType::kBool});
}

Check check_numeric_binary(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 2)) return s;
  return check_input_type(g, n,
                          {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kInt8,
                           DataType::kUInt8, DataType::kInt16});
}

// The node's input i, aligned to the op's layout and rank.
TensorId in(LowerContext& ctx, const ir::Node& n, size_t i) {
  const ir::Graph& g = ctx.graph();
  return ctx.operand(n, i, out_layout(g, n), out_rank(g, n));
}

// One ONNX node of the type in the entry's `onnx` field, on every input.
Status lower_direct(LowerContext& ctx, const ir::Node& n) {
  std::vector<TensorId> xs;
  for (size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(in(ctx, n, i));
  ctx.emit(n, lookup(n).doc.onnx, std::move(xs), {n.outputs[0]});
  return ok_status();
}

Status lower_square(LowerContext& ctx, const ir::Node& n) {
  TensorId x = in(ctx, n, 0);
  ctx.emit(n, "Mul", {x, x}, {n.outputs[0]});
  return ok_status();
}

Status lower_not_equal(LowerContext& ctx, const ir::Node& n) {
  TensorId eq = ctx.temp_like(n.outputs[0], "equal");
  ctx.emit(n, "Equal", {in(ctx, n, 0), in(ctx, n, 1)}, {eq}, "Equal");
  ctx.emit(n, "Not", {eq}, {n.outputs[0]});
  return ok_status();
}

// Zeros of the input's shape and type: Expand(0, Shape(x)) (x * 0 would keep NaN).
Status lower_zeros_like(LowerContext& ctx, const ir::Node& n) {
  TensorId x = in(ctx, n, 0);
  DataType type = ctx.tensor(n.outputs[0]).dtype;
  TensorId shape = ctx.temp(n.name + "/shape", DataType::kInt64);
  ctx.emit(n, "Shape", {x}, {shape}, "Shape");
  ctx.emit(n, "Expand", {ctx.const_scalar(n.name + "/zero", type, 0), shape}, {n.outputs[0]});
  return ok_status();
}

// reference_ops::Gelu: approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
// exact: 0.5 x (1 + erf(x / sqrt(2))). ONNX Gelu only exists from opset 20.
Status lower_gelu(LowerContext& ctx, const ir::Node& n) {
  TensorId x = in(ctx, n, 0);
  const TensorId y = n.outputs[0];
  auto c = [&](const char* what, double v) {
    return ctx.const_scalar(n.name + "/" + what, DataType::kFloat32, v);
  };
  auto step = [&](const char* op, std::vector<TensorId> args, const char* what) {
    TensorId t = ctx.temp_like(y, what);
    ctx.emit(n, op, std::move(args), {t}, what);
    return t;
  };
  TensorId core;
  if (n.attrs.get_int("approximate", 0) != 0) {
    TensorId x2 = step("Mul", {x, x}, "x2");
    TensorId x3 = step("Mul", {x2, x}, "x3");
    TensorId k = step("Mul", {x3, c("coeff", 0.044715)}, "cubic");
    TensorId s = step("Add", {x, k}, "inner");
    TensorId z = step("Mul", {s, c("sqrt_2_over_pi", std::sqrt(2.0 / std::numbers::pi))}, "scaled");
    core = step("Tanh", {z}, "tanh");
  } else {
    TensorId z = step("Mul", {x, c("sqrt_half", 1.0 / std::numbers::sqrt2)}, "scaled");
    core = step("Erf", {z}, "erf");
  }
  TensorId one_plus = step("Add", {core, c("one", 1.0)}, "one_plus");
  TensorId half_x = step("Mul", {x, c("half", 0.5)}, "half_x");
  ctx.emit(n, "Mul", {half_x, one_plus}, {y});
  return ok_status();
}

Check check_cast(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  for (TensorId t : {n.inputs[0], n.outputs[0]}) {
    const DataType type = g.tensor(t).dtype;
    // ONNX Cast takes every numeric type and bool; not strings here, nor complex.
    if (ir::onnx_type_code(type) == 0 || type == DataType::kString ||
        type == DataType::kComplex64 || type == DataType::kComplex128 ||
        type == DataType::kBFloat16)
      return refuse(ReasonCode::kType, "type " + std::string(ir::to_string(type)) + " of '" +
                                           g.tensor(t).name + "' cannot be cast in ONNX");
  }
  return {};
}

// TFLite casts with static_cast (floats truncate toward zero, != 0 is true),
// as ONNX Cast does. The types come from the tensors, as the kernel takes them.
Status lower_cast(LowerContext& ctx, const ir::Node& n) {
  ir::Node& c = ctx.emit(n, "Cast", {in(ctx, n, 0)}, {n.outputs[0]});
  c.attrs.set("to", int64_t{ir::onnx_type_code(ctx.tensor(n.outputs[0]).dtype)});
  return ok_status();
}

bool is_float(DataType t) { return t == DataType::kFloat32; }

Check check_floor_div(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 2)) return s;
  return check_input_type(
      g, n, {DataType::kFloat32, DataType::kInt32, DataType::kInt16, DataType::kInt8});
}

// reference_ops::FloorDiv: floor(x / y). Floats: Floor(Div). Integers: ONNX
// Div truncates, but Mod (fmod=0) takes the divisor's sign, so x - Mod(x, y)
// is an exact multiple of y and (x - Mod(x, y)) / y is the floored quotient.
Status lower_floor_div(LowerContext& ctx, const ir::Node& n) {
  TensorId a = in(ctx, n, 0);
  TensorId b = in(ctx, n, 1);
  const TensorId y = n.outputs[0];
  if (is_float(ctx.tensor(y).dtype)) {
    TensorId q = ctx.temp_like(y, "div");
    ctx.emit(n, "Div", {a, b}, {q}, "Div");
    ctx.emit(n, "Floor", {q}, {y});
    return ok_status();
  }
  TensorId r = ctx.temp_like(y, "mod");
  ir::Node& m = ctx.emit(n, "Mod", {a, b}, {r}, "Mod");
  m.attrs.set("fmod", int64_t{0});
  TensorId d = ctx.temp_like(y, "multiple");
  ctx.emit(n, "Sub", {a, r}, {d}, "Sub");
  ctx.emit(n, "Div", {d, b}, {y});
  return ok_status();
}

Check check_add_n(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects inputs and one output");
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  return check_input_type(g, n, {DataType::kFloat32, DataType::kInt32});
}

// ONNX Sum has no integer types: integers add pairwise.
Status lower_add_n(LowerContext& ctx, const ir::Node& n) {
  const TensorId y = n.outputs[0];
  std::vector<TensorId> xs;
  for (size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(in(ctx, n, i));
  if (is_float(ctx.tensor(y).dtype) || xs.size() == 1) {
    ctx.emit(n, xs.size() == 1 ? "Identity" : "Sum", std::move(xs), {y});
    return ok_status();
  }
  TensorId acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    bool last = i + 1 == xs.size();
    TensorId t = last ? y : ctx.temp_like(y, "sum" + std::to_string(i));
    ctx.emit(n, "Add", {acc, xs[i]}, {t}, last ? "" : "Add" + std::to_string(i));
    acc = t;
  }
  return ok_status();
}

Check check_select(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 3)) return s;
  if (g.tensor(n.inputs[0]).dtype != DataType::kBool)
    return refuse(ReasonCode::kType, "condition must be BOOL");
  return {};
}

// SELECT (v1): the condition has the shape of x, or is rank 1 over x's
// first dimension (then it selects whole rows).
bool selects_rows(const ir::Graph& g, const ir::Node& n) {
  return g.tensor(n.inputs[0]).rank() == 1 && g.tensor(n.outputs[0]).rank() > 1;
}

std::optional<LayoutPlan> propagate_select(const ir::Graph& g, const ir::Node& n,
                                           std::span<const ir::Perm> layouts) {
  if (n.inputs.size() != 3 || n.outputs.size() != 1) return std::nullopt;
  const size_t rank = g.tensor(n.outputs[0]).rank();
  const bool rows = selects_rows(g, n);
  ir::Perm p;
  for (size_t i = rows ? 1 : 0; i < 3 && p.empty(); ++i)
    if (!g.tensor(n.inputs[i]).is_const() && g.tensor(n.inputs[i]).rank() == rank) p = layouts[i];
  LayoutPlan plan;
  for (size_t i = 0; i < 3; ++i) {
    const ir::Tensor& t = g.tensor(n.inputs[i]);
    if (t.is_const()) {
      plan.inputs.push_back({});
    } else if (t.rank() == rank) {
      plan.inputs.push_back(p);
    } else if (rows && i == 0) {
      plan.inputs.push_back({});
    } else {
      return std::nullopt;
    }
  }
  plan.outputs.push_back(p);
  return plan;
}

// TFLite's select.cc keeps the output's own shape when the condition, both
// values and the output hold one element each, whatever their ranks.
bool keeps_one_element_shape(const ir::Graph& g, const ir::Node& n) {
  auto single = [&](TensorId t) {
    const ir::Tensor& x = g.tensor(t);
    return x.has_rank && ir::element_count(x.shape) == 1;
  };
  size_t rank = 0;
  for (size_t i = 0; i < 3; ++i) {
    if (!single(n.inputs[i])) return false;
    rank = std::max(rank, g.tensor(n.inputs[i]).rank());
  }
  return single(n.outputs[0]) && rank != out_rank(g, n);
}

Status lower_select(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  if (keeps_one_element_shape(g, n)) {
    // Where broadcasts the inputs as they are (all ones), Reshape gives the
    // output's rank.
    const ir::Tensor& y = g.tensor(n.outputs[0]);
    TensorId picked = ctx.temp(n.name + "/selected", y.dtype);
    ctx.emit(n, "Where", {n.inputs[0], n.inputs[1], n.inputs[2]}, {picked}, "Where");
    const ir::Shape dims = y.onnx_shape();
    ctx.emit(
        n, "Reshape",
        {picked, ctx.const_i64(n.name + "/shape", std::vector<int64_t>(dims.begin(), dims.end()),
                               ir::Shape{static_cast<int64_t>(dims.size())})},
        {n.outputs[0]});
    return ok_status();
  }
  if (n.builtin == ir::builtin::kSelect && selects_rows(g, n)) {
    // Reshape the condition [N] to N on the ONNX axis that holds TFLite axis 0.
    const ir::Perm& p = out_layout(g, n);
    const size_t rank = out_rank(g, n);
    std::vector<int64_t> shape(rank, 1);
    size_t pos = 0;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] == 0) pos = i;
    shape[pos] = -1;
    TensorId cond = ctx.temp(n.name + "/condition_rows", DataType::kBool);
    ctx.emit(n, "Reshape", {n.inputs[0], ctx.const_i64(n.name + "/rows_shape", shape)}, {cond},
             "Reshape");
    ctx.emit(n, "Where", {cond, in(ctx, n, 1), in(ctx, n, 2)}, {n.outputs[0]});
    return ok_status();
  }
  ctx.emit(n, "Where", {in(ctx, n, 0), in(ctx, n, 1), in(ctx, n, 2)}, {n.outputs[0]});
  return ok_status();
}

// CAST of an integer constant to an integer type (wrapping like TFLite).
std::optional<std::vector<Folded>> fold_cast(const ir::Graph& g, const ir::Node& n,
                                             int64_t max_elements) {
  if (n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  const ir::Tensor* x = plain_const(g, n.inputs[0]);
  DataType type = g.tensor(n.outputs[0]).dtype;
  if (!x || !is_integer(x->dtype) || x->data->stored_type != x->dtype || !is_integer(type))
    return std::nullopt;
  auto count = ir::element_count(x->shape);
  if (!count || *count > max_elements) return std::nullopt;
  std::vector<int64_t> values(static_cast<size_t>(*count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = read_int(*x->data, i);
  return std::vector<Folded>{{x->shape, ir::ConstData::owned(encode_ints(type, values), type)}};
}

Check check_zeros_like(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  return check_input_type(g, n, {DataType::kFloat32, DataType::kInt32, DataType::kInt64});
}

void read_gelu_options(const tflite::Operator& op, ir::Attributes& attrs) {
  const auto* o = op.builtin_options_as_GeluOptions();
  attrs.set("approximate", int64_t{o && o->approximate() ? 1 : 0});
}

// SELECT / SELECT_V2: x's shape (v1: the condition matches x or is a scalar
// or rank-1 over x's first axis), the broadcast of all three (v2); the file's
// shape stands when every input and the output hold one element.
InferredShapes infer_select(const ir::Graph& g, const ir::Node& n) {
  auto cond = input_shape(g, n, 0);
  auto x = input_shape(g, n, 1);
  auto y = input_shape(g, n, 2);
  if (!cond || !x || !y || n.inputs.size() != 3 || n.outputs.size() != 1) return std::nullopt;
  // One element everywhere: TFLite keeps the output's own shape.
  const ir::Tensor& out = g.tensor(n.outputs[0]);
  auto single = [](const Shape& s) { return ir::element_count(s) == 1; };
  if (single(*cond) && single(*x) && single(*y) && (!out.has_rank || single(out.shape)))
    return std::nullopt;
  if (n.builtin == ir::builtin::kSelectV2) {
    auto s = ir::broadcast_shape(*cond, *x);
    if (s) s = ir::broadcast_shape(*s, *y);
    if (!s) return std::nullopt;
    return one_shape(std::move(*s));
  }
  if (*x != *y) return std::nullopt;
  const bool low_rank =
      cond->empty() || (cond->size() == 1 && !x->empty() && (*cond)[0] == (*x)[0]);
  if (*cond != *x && !low_rank) return std::nullopt;
  return one_shape(*x);
}

// ---- ATAN2, FAKE_QUANT --------------------------------------------------------------

// atan(y / x), moved by +-pi where x < 0, and +-pi/2 or 0 where x == 0
// (ONNX has no Atan2).
Status lower_atan2(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32;
  TensorId y = in(ctx, n, 0), x = in(ctx, n, 1);
  const double pi = std::numbers::pi;
  TensorId zero = b.scalar(f, 0);
  TensorId base = b.add("Atan", {b.add("Div", {y, x}, f)}, f);
  TensorId y_sign_pi = b.add(
      "Where",
      {b.add("GreaterOrEqual", {y, zero}, DataType::kBool), b.scalar(f, pi), b.scalar(f, -pi)}, f);
  TensorId shift = b.add("Where", {b.add("Less", {x, zero}, DataType::kBool), y_sign_pi, zero}, f);
  TensorId moved = b.add("Add", {base, shift}, f);
  TensorId on_axis = b.add(
      "Where",
      {b.add("Greater", {y, zero}, DataType::kBool), b.scalar(f, pi / 2),
       b.add("Where", {b.add("Less", {y, zero}, DataType::kBool), b.scalar(f, -pi / 2), zero}, f)},
      f);
  b.into("Where", {b.add("Equal", {x, zero}, DataType::kBool), on_axis, moved}, {n.outputs[0]});
  return ok_status();
}

void read_fake_quant_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_FakeQuantOptions();
  a.set("min", o ? o->min() : 0.f);
  a.set("max", o ? o->max() : 0.f);
  a.set("num_bits", int64_t{o ? o->num_bits() : 8});
  a.set("narrow_range", int64_t{o && o->narrow_range() ? 1 : 0});
}

Check check_fake_quant(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 1)) return s;
  if (auto s = check_input_type(g, n, {DataType::kFloat32})) return s;
  const int64_t bits = n.attrs.get_int("num_bits");
  if (bits < 2 || bits > 16) return refuse(ReasonCode::kOption, "num_bits must be in 2..16");
  if (!(n.attrs.get_float("max") > n.attrs.get_float("min")))
    return refuse(ReasonCode::kOption, "max must exceed min");
  if (n.attrs.get_int("narrow_range") != 0)
    return refuse(ReasonCode::kOption, "narrow_range, which TFLite's kernel refuses at run time");
  return {};
}

// TFLite's Nudge and FakeQuantizeArray, in float32 as the kernel computes
// them: round half away from zero of a value >= 0 is Floor(v + 0.5).
Status lower_fake_quant(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32;
  const float qmin = n.attrs.get_int("narrow_range") != 0 ? 1.f : 0.f;
  const float qmax = static_cast<float>((int64_t{1} << n.attrs.get_int("num_bits")) - 1);
  const float lo = n.attrs.get_float("min"), hi = n.attrs.get_float("max");
  const float scale = (hi - lo) / (qmax - qmin);
  const float zero_from_min = qmin - lo / scale;
  const float zero = zero_from_min < qmin   ? qmin
                     : zero_from_min > qmax ? qmax
                                            : std::round(zero_from_min);
  const float nudged_min = (qmin - zero) * scale, nudged_max = (qmax - zero) * scale;
  TensorId low = b.add("Max", {in(ctx, n, 0), b.floats({nudged_min}, ir::Shape{})}, f);
  TensorId clamped = b.add("Min", {low, b.floats({nudged_max}, ir::Shape{})}, f);
  TensorId shifted = b.add("Sub", {clamped, b.floats({nudged_min}, ir::Shape{})}, f);
  TensorId steps = b.add("Mul", {shifted, b.floats({1.0f / scale}, ir::Shape{})}, f);
  TensorId rounded = b.add("Floor", {b.add("Add", {steps, b.floats({0.5f}, ir::Shape{})}, f)}, f);
  TensorId back = b.add("Mul", {rounded, b.floats({scale}, ir::Shape{})}, f);
  b.into("Add", {back, b.floats({nudged_min}, ir::Shape{})}, {n.outputs[0]});
  return ok_status();
}

Check check_atan2(const ir::Graph& g, const ir::Node& n) {
  if (auto s = check_inputs(g, n, 2)) return s;
  return check_input_type(g, n, {DataType::kFloat32});
}

}  // namespace

OpEntry float_unary(const char* onnx_op, ExactForm exact) {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_float_unary,
          .lower = lower_direct,
          .quantization = {.exact = exact},
          .doc = {.onnx = onnx_op}};
}

OpEntry neg() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_neg,
          .lower = lower_direct,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Neg", .dtypes = "float32, int32, int64"}};
}

OpEntry square() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_float_unary,
          .lower = lower_square,
          .doc = {.onnx = "Mul", .notes = "x * x"}};
}

OpEntry zeros_like() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_zeros_like,
          .lower = lower_zeros_like,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Shape + Expand", .dtypes = "float32, int32, int64"}};
}

OpEntry gelu() {
  return {.read = {.options = read_gelu_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_float_unary,
          .lower = lower_gelu,
          .doc = {.onnx = "Erf form (approximate=false) / Tanh form (approximate=true)",
                  .notes = "decomposed (ONNX Gelu needs opset 20)"}};
}

OpEntry cast() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_cast,
          .lower = lower_cast,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .evaluate = {.fold = fold_cast},
          .doc = {.onnx = "Cast",
                  .dtypes = "float32, int32, int64, int16, int8, uint8, bool",
                  .notes = "types taken from the input and output tensors"}};
}

OpEntry equal() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_equality,
          .lower = lower_direct,
          .doc = {.onnx = "Equal",
                  .dtypes = "float32, int32, int64, int8, int16, uint8, bool (-> bool)",
                  .notes = "numpy broadcasting"}};
}

OpEntry compare(const char* onnx_op) {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_numeric_binary,
          .lower = lower_direct,
          .doc = {.onnx = onnx_op,
                  .dtypes = "float32, int32, int64, int8, int16, uint8 (-> bool)",
                  .notes = "numpy broadcasting"}};
}

OpEntry not_equal() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_equality,
          .lower = lower_not_equal,
          .doc = {.onnx = "Equal + Not",
                  .dtypes = "float32, int32, int64, int8, int16, uint8, bool (-> bool)",
                  .notes = "numpy broadcasting"}};
}

OpEntry logical_binary(const char* onnx_op) {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_bool_binary,
          .lower = lower_direct,
          .doc = {.onnx = onnx_op, .dtypes = "bool", .notes = "numpy broadcasting"}};
}

OpEntry logical_not() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_bool_unary,
          .lower = lower_direct,
          .doc = {.onnx = "Not", .dtypes = "bool"}};
}

OpEntry min_max(const char* onnx_op, Arithmetic arithmetic) {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_numeric_binary,
          .lower = lower_direct,
          // TFLite's kernel compares the integers as they are.
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {exact::lower_copy, exact::check_equal_params}},
          .evaluate = {.arithmetic = arithmetic},
          .doc = {.onnx = onnx_op,
                  .dtypes = "float32, int32, int64, int8, int16, uint8",
                  .notes = "numpy broadcasting"}};
}

OpEntry floor_div() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_floor_div,
          .lower = lower_floor_div,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .evaluate = {.arithmetic = Arithmetic::kFloorDiv},
          .doc = {.onnx = "Div + Floor; integers: Mod + Sub + Div",
                  .dtypes = "float32, int32, int16, int8",
                  .notes = "floored toward -inf like TFLite"}};
}

OpEntry select() {
  return {.read = {.min_inputs = 3},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_select},
          .infer_shapes = infer_select,
          .check = check_select,
          .lower = lower_select,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Where (+ Reshape of a rank-1 condition)",
                  .dtypes = "float32, int32, int64, int8, int16, uint8, bool (bool condition)",
                  .notes = "a rank-1 condition selects whole rows (first axis)"}};
}

OpEntry select_v2() {
  return {.read = {.min_inputs = 3},
          .layout = {.kind = LayoutClass::kTransparent},
          // not the broadcast: one-element operands keep the file's shape
          .infer_shapes = infer_select,
          .check = check_select,
          .lower = lower_select,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Where",
                  .dtypes = "float32, int32, int64, int8, int16, uint8, bool (bool condition)",
                  .notes = "numpy broadcasting"}};
}

OpEntry add_n() {
  return {.read = {.min_inputs = -1},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_add_n,
          .lower = lower_add_n,
          .doc = {.onnx = "Sum; int32: Add chain", .dtypes = "float32, int32"}};
}

OpEntry atan2() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_atan2,
          .lower = lower_atan2,
          .doc = {.onnx = "Div, Atan, Where (quadrants), Add",
                  .notes = "atan(y/x) moved by +-pi for x < 0; +-pi/2 or 0 for x = 0"}};
}

OpEntry fake_quant() {
  return {.read = {.options = read_fake_quant_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_fake_quant,
          .lower = lower_fake_quant,
          .doc = {.onnx = "Max, Min, Sub, Mul, Add, Floor",
                  .notes = "TFLite's nudged min, max and scale, computed when converting"}};
}

}  // namespace lite2onnx::ops::math
