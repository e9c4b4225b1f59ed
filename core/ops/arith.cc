// Integer-style arithmetic: FLOOR_MOD. Transparent (elementwise, numpy
// broadcasting).
#include "core/ops/common.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::arith {
namespace {

using ir::DataType;
using ir::TensorId;

bool is_int(DataType t) {
  return t == DataType::kInt8 || t == DataType::kUInt8 || t == DataType::kInt16 ||
         t == DataType::kInt32 || t == DataType::kInt64;
}

Check check_floor_mod(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || !has_input(g, n, 0) || !has_input(g, n, 1))
    return refuse(ReasonCode::kOperands, "expects two inputs");
  DataType t = g.tensor(n.outputs[0]).dtype;
  if (!is_int(t) && t != DataType::kFloat32)
    return refuse(ReasonCode::kType, "type " + std::string(ir::to_string(t)));
  return {};
}

// reference_ops::FloorMod: r = x mod y truncated (C's % / fmod); r + y where r
// is non-zero and its sign differs from y's. ONNX Mod with fmod=0 is exactly
// that for integers; floats need fmod=1 and the correction.
Status lower_floor_mod(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Perm& p = out_layout(g, n);
  const size_t rank = out_rank(g, n);
  TensorId a = ctx.operand(n, 0, p, rank);
  TensorId b = ctx.operand(n, 1, p, rank);
  const DataType type = g.tensor(n.outputs[0]).dtype;
  if (is_int(type)) {
    ir::Node& m = ctx.emit(n, "Mod", {a, b}, {n.outputs[0]});
    m.attrs.set("fmod", int64_t{0});
    return ok_status();
  }
  TensorId r = ctx.temp_like(n.outputs[0], "fmod");
  ir::Node& m = ctx.emit(n, "Mod", {a, b}, {r}, "Mod");
  m.attrs.set("fmod", int64_t{1});
  TensorId zero = ctx.const_scalar(n.name + "/zero", type, 0);
  auto flag = [&](const char* what) { return ctx.temp(n.name + "/" + what, DataType::kBool); };
  TensorId r_neg = flag("r_negative"), y_neg = flag("y_negative"), differ = flag("signs_differ");
  TensorId r_zero = flag("r_zero"), r_nonzero = flag("r_nonzero"), fix = flag("fix");
  ctx.emit(n, "Less", {r, zero}, {r_neg}, "Less_r");
  ctx.emit(n, "Less", {b, zero}, {y_neg}, "Less_y");
  ctx.emit(n, "Xor", {r_neg, y_neg}, {differ}, "Xor");
  ctx.emit(n, "Equal", {r, zero}, {r_zero}, "Equal");
  ctx.emit(n, "Not", {r_zero}, {r_nonzero}, "Not");
  ctx.emit(n, "And", {differ, r_nonzero}, {fix}, "And");
  TensorId shifted = ctx.temp_like(n.outputs[0], "plus_y");
  ctx.emit(n, "Add", {r, b}, {shifted}, "Add");
  ctx.emit(n, "Where", {fix, shifted, r}, {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry floor_mod() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_floor_mod,
          .lower = lower_floor_mod,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .evaluate = {.arithmetic = Arithmetic::kFloorMod},
          .doc = {.onnx = "Mod (fmod=0); floats: Mod (fmod=1) + sign correction",
                  .dtypes = "float32, int32, int64, int8, int16",
                  .notes = "constant operands are folded"}};
}

}  // namespace lite2onnx::ops::arith
