// The element-wise StableHLO builtins (STABLEHLO_ADD ... STABLEHLO_CLAMP), as
// JAX and PyTorch exports write them: each is one ONNX op, or a few where the
// ONNX op differs (rsqrt, remainder, clamp, the integer and/or). All are
// Transparent; StableHLO's operands have one shape, ONNX broadcasts anyway.
// The shape ops are in stablehlo_shape.cc.
#include <cstring>
#include <string_view>

#include "core/ops/bitwise.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::stablehlo {
namespace {

using ir::DataType;
using ir::TensorId;

// Element types of each ONNX form, as ONNX Runtime's kernels register them.
enum class Types { kFloat, kNumeric, kSigned, kLogical, kAny };

struct Form {
  const char* onnx;
  Types types;
  int inputs;
};

// By the ONNX op the entry names (OpEntry::doc.onnx).
Form form_of(std::string_view onnx) {
  static const Form kForms[] = {
      {"Add", Types::kNumeric, 2},
      {"Sub", Types::kNumeric, 2},
      {"Mul", Types::kNumeric, 2},
      {"Div", Types::kNumeric, 2},
      {"Max", Types::kNumeric, 2},
      {"Min", Types::kNumeric, 2},
      {"Pow", Types::kNumeric, 2},
      {"Mod (fmod)", Types::kNumeric, 2},
      {"Abs", Types::kSigned, 1},
      {"Neg", Types::kSigned, 1},
      {"Exp", Types::kFloat, 1},
      {"Log", Types::kFloat, 1},
      {"Tanh", Types::kFloat, 1},
      {"Sigmoid", Types::kFloat, 1},
      {"Floor", Types::kFloat, 1},
      {"Cos", Types::kFloat, 1},
      {"Sqrt + Reciprocal", Types::kFloat, 1},
      {"And", Types::kLogical, 2},
      {"Or", Types::kLogical, 2},
  };
  for (const Form& f : kForms)
    if (onnx == f.onnx) return f;
  return {"", Types::kAny, 1};
}

bool type_ok(Types types, DataType t) {
  const bool number = t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kInt64;
  switch (types) {
    case Types::kFloat:
      return t == DataType::kFloat32;
    case Types::kNumeric:
      return number;
    case Types::kSigned:
      return number || t == DataType::kInt8;
    case Types::kLogical:
      return t == DataType::kBool || bitwise::integer_type(t);
    case Types::kAny:
      return true;
  }
  return false;
}

const char* type_text(Types types) {
  switch (types) {
    case Types::kFloat:
      return "float32";
    case Types::kNumeric:
      return "float32, int32, int64";
    case Types::kSigned:
      return "float32, int32, int64, int8";
    case Types::kLogical:
      return "bool, int8, uint8, int16, uint16, int32, uint32";
    case Types::kAny:
      return "any";
  }
  return "";
}

Check check_arity(const ir::Graph& g, const ir::Node& n, size_t inputs) {
  if (n.inputs.size() != inputs || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands,
                  "expects " + std::to_string(inputs) + " inputs and one output");
  for (size_t i = 0; i < inputs; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  return {};
}

Check check_elementwise(const ir::Graph& g, const ir::Node& n) {
  const Form f = form_of(lookup(n).doc.onnx);
  if (auto r = check_arity(g, n, static_cast<size_t>(f.inputs))) return r;
  const DataType t = g.tensor(n.inputs[0]).dtype;
  if (!type_ok(f.types, t))
    return refuse(ReasonCode::kType, "type " + std::string(ir::to_string(t)) +
                                         " (supported: " + type_text(f.types) + ")");
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (g.tensor(n.inputs[i]).dtype != t)
      return refuse(ReasonCode::kOperands, "operands of different types");
  return {};
}

// Input i in the op's layout and rank.
TensorId in(LowerContext& ctx, const ir::Node& n, size_t i) {
  const ir::Graph& g = ctx.graph();
  return ctx.operand(n, i, out_layout(g, n), out_rank(g, n));
}

Status lower_elementwise(LowerContext& ctx, const ir::Node& n) {
  const std::string_view onnx = lookup(n).doc.onnx;
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  std::vector<TensorId> xs;
  for (size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(in(ctx, n, i));
  NodeBuilder b(ctx, n);
  if (onnx == "Sqrt + Reciprocal") {
    b.into("Reciprocal", {b.add("Sqrt", {xs[0]}, t)}, {n.outputs[0]});
  } else if (onnx == "Mod (fmod)") {
    // StableHLO's remainder takes the dividend's sign, as C's fmod.
    b.into("Mod", xs, {n.outputs[0]}, {{"fmod", int64_t{1}}});
  } else if ((onnx == "And" || onnx == "Or") && t != DataType::kBool) {
    bitwise::combine(b, xs[0], xs[1], t, onnx == "And" ? bitwise::BitOp::kAnd : bitwise::BitOp::kOr,
                     n.outputs[0]);
  } else {
    b.into(std::string(onnx), xs, {n.outputs[0]});
  }
  return ok_status();
}

// ---- STABLEHLO_COMPARE --------------------------------------------------------------

void read_compare_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloCompareOptions();
  a.set("comparison_direction", int64_t{o ? static_cast<int64_t>(o->comparison_direction()) : 0});
  a.set("compare_type", int64_t{o ? static_cast<int64_t>(o->compare_type()) : 0});
}

Check check_compare(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(g, n, 2)) return r;
  const DataType t = g.tensor(n.inputs[0]).dtype;
  if (!type_ok(Types::kNumeric, t) && t != DataType::kBool)
    return refuse(ReasonCode::kType, "type " + std::string(ir::to_string(t)) +
                                         " (supported: float32, int32, int64, bool)");
  if (n.attrs.get_int("comparison_direction") > 5)
    return refuse(ReasonCode::kOperands, "unknown comparison direction");
  if (n.attrs.get_int("compare_type") ==
      static_cast<int64_t>(
          tflite::StablehloComparisonType::STABLEHLO_COMPARISON_TYPE_FLOAT_TOTAL_ORDER))
    return refuse(ReasonCode::kNotExpressible,
                  "total-order comparison (NaNs and signed zeros ordered) has no ONNX form");
  if (n.attrs.get_int("compare_type") ==
          static_cast<int64_t>(
              tflite::StablehloComparisonType::STABLEHLO_COMPARISON_TYPE_UNSIGNED) &&
      t != DataType::kBool)
    return refuse(ReasonCode::kNotImplemented, "unsigned comparison of signed values");
  if (t == DataType::kBool && n.attrs.get_int("comparison_direction") > 1)
    return refuse(ReasonCode::kType, "ordered comparison of bool values");
  return {};
}

Status lower_compare(LowerContext& ctx, const ir::Node& n) {
  // EQ, NE, GE, GT, LE, LT in the schema's order.
  static const char* const kOps[] = {"Equal",   "Equal",       "GreaterOrEqual",
                                     "Greater", "LessOrEqual", "Less"};
  const int64_t d = n.attrs.get_int("comparison_direction");
  TensorId a = in(ctx, n, 0), c = in(ctx, n, 1);
  NodeBuilder b(ctx, n);
  if (d == 1)
    b.into("Not", {b.add("Equal", {a, c}, DataType::kBool)}, {n.outputs[0]});
  else
    b.into(kOps[d], {a, c}, {n.outputs[0]});
  return ok_status();
}

// ---- STABLEHLO_SELECT, STABLEHLO_CONVERT, STABLEHLO_CLAMP ---------------------------

Check check_select(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(g, n, 3)) return r;
  if (g.tensor(n.inputs[0]).dtype != DataType::kBool)
    return refuse(ReasonCode::kType, "the predicate must be bool");
  if (g.tensor(n.inputs[1]).dtype != g.tensor(n.inputs[2]).dtype)
    return refuse(ReasonCode::kOperands, "the two branches have different types");
  return {};
}

Status lower_select(LowerContext& ctx, const ir::Node& n) {
  ctx.emit(n, "Where", {in(ctx, n, 0), in(ctx, n, 1), in(ctx, n, 2)}, {n.outputs[0]});
  return ok_status();
}

bool convertible(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kInt64 ||
         t == DataType::kBool || t == DataType::kInt8 || t == DataType::kUInt8 ||
         t == DataType::kInt16 || t == DataType::kFloat16;
}

Check check_convert(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(g, n, 1)) return r;
  for (TensorId t : {n.inputs[0], n.outputs[0]})
    if (!convertible(g.tensor(t).dtype))
      return refuse(ReasonCode::kType,
                    "type " + std::string(ir::to_string(g.tensor(t).dtype)) +
                        " (supported: float32, float16, int64, int32, int16, int8, uint8, bool)");
  return {};
}

Status lower_convert(LowerContext& ctx, const ir::Node& n) {
  ir::Node& c = ctx.emit(n, "Cast", {in(ctx, n, 0)}, {n.outputs[0]});
  c.attrs.set("to", int64_t{ir::onnx_type_code(ctx.tensor(n.outputs[0]).dtype)});
  return ok_status();
}

// Inputs (min, operand, max); min and max are scalars or the operand's shape.
Check check_clamp(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(g, n, 3)) return r;
  const DataType t = g.tensor(n.inputs[1]).dtype;
  if (!type_ok(Types::kNumeric, t))
    return refuse(ReasonCode::kType,
                  "type " + std::string(ir::to_string(t)) + " (supported: float32, int32, int64)");
  if (g.tensor(n.inputs[0]).dtype != t || g.tensor(n.inputs[2]).dtype != t)
    return refuse(ReasonCode::kOperands, "bounds of another type than the operand");
  return {};
}

Status lower_clamp(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  TensorId low = b.add("Max", {in(ctx, n, 1), in(ctx, n, 0)}, t);
  b.into("Min", {low, in(ctx, n, 2)}, {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry elementwise(const char* onnx_op) {
  const Form f = form_of(onnx_op);
  return {.read = {.min_inputs = f.inputs},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_elementwise,
          .lower = lower_elementwise,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = onnx_op,
                  .dtypes = type_text(f.types),
                  .notes = f.types == Types::kLogical
                               ? "integers: bit by bit (Cast, Mod, Div, ReduceSum; BitwiseAnd/Or "
                                 "are opset 18); checked against a builtin twin"
                               : "checked against a builtin twin"}};
}

OpEntry compare() {
  return {.read = {.min_inputs = 2, .options = read_compare_options},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_compare,
          .lower = lower_compare,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Equal, Not, Greater(OrEqual), Less(OrEqual)",
                  .dtypes = "float32, int32, int64, bool (EQ, NE)",
                  .notes = "FLOAT, SIGNED and NOTYPE comparisons; TOTALORDER refused; checked "
                           "against a builtin twin"}};
}

OpEntry select() {
  return {.read = {.min_inputs = 3},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_select,
          .lower = lower_select,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Where",
                  .dtypes = "any (bool predicate)",
                  .notes = "checked against a builtin twin"}};
}

OpEntry convert() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_convert,
          .lower = lower_convert,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Cast",
                  .dtypes = "float32, float16, int64, int32, int16, int8, uint8, bool",
                  .notes = "float to integer truncates toward zero, as StableHLO; checked against "
                           "a builtin twin"}};
}

OpEntry clamp() {
  return {.read = {.min_inputs = 3},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_clamp,
          .lower = lower_clamp,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Max + Min",
                  .dtypes = "float32, int32, int64",
                  .notes = "min(max(operand, min), max); bounds scalar or of the operand's shape; "
                           "checked against a builtin twin"}};
}

}  // namespace lite2onnx::ops::stablehlo
