// RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL as ONNX's random ops
// of the same distribution. ONNX has no Philox stream, so the values differ
// from TFLite's; what is kept is the distribution and whether the op is
// seeded: TFLite draws a fresh seed when seed and seed2 are both 0 (no ONNX
// seed then), and a fixed stream otherwise (ONNX seed = seed + 65536 x seed2).
#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::random {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

void read_random_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_RandomOptions();
  a.set("seed", int64_t{o ? o->seed() : 0});
  a.set("seed2", int64_t{o ? o->seed2() : 0});
}

void set_seed(ir::Node& out, const ir::Node& n) {
  const int64_t seed = n.attrs.get_int("seed"), seed2 = n.attrs.get_int("seed2");
  if (seed != 0 || seed2 != 0)
    out.attrs.set("seed", static_cast<float>(static_cast<double>(seed) +
                                             65536.0 * static_cast<double>(seed2)));
}

bool multinomial(const ir::Node& n) { return n.builtin == ir::builtin::kMultinomial; }

Check check_random(const ir::Graph& g, const ir::Node& n) {
  const size_t inputs = multinomial(n) ? 2 : 1;
  if (n.inputs.size() != inputs || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs");
  for (size_t i = 0; i < inputs; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (multinomial(n)) {
    const ir::Tensor& logits = g.tensor(n.inputs[0]);
    if (logits.dtype != DataType::kFloat32 || logits.rank() != 2)
      return refuse(ReasonCode::kType, "logits must be float32 [batch, classes]");
    if (auto r = require_const(g, n, 1, "num_samples")) {
      r->text += "; ONNX Multinomial takes the sample count as an attribute";
      return r;
    }
    auto count = ir::const_ints(g, n.inputs[1]);
    if (!count || count->size() != 1 || (*count)[0] < 1 || !dim_value((*count)[0]))
      return refuse(ReasonCode::kOperands, "num_samples must be one positive value");
    if (!is_index_type(y.dtype)) return refuse(ReasonCode::kType, "output must be int32 or int64");
    return {};
  }
  if (auto r = require_const(g, n, 0, "shape")) {
    r->text += "; ONNX random ops take a constant shape";
    return r;
  }
  auto shape = ir::const_ints(g, n.inputs[0]);
  if (!shape) return refuse(ReasonCode::kOperands, "shape must be int32 or int64");
  for (int64_t d : *shape)
    if (d < 0 || !dim_value(d)) return refuse(ReasonCode::kOperands, "negative or huge dimension");
  if (y.dtype != DataType::kFloat32) return refuse(ReasonCode::kType, "output must be float32");
  return {};
}

Status lower_random(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  if (multinomial(n)) {
    ir::Node& m = ctx.emit(n, "Multinomial", {n.inputs[0]}, {n.outputs[0]});
    m.attrs.set("sample_size", (*ir::const_ints(ctx.graph(), n.inputs[1]))[0]);
    m.attrs.set("dtype", int64_t{ir::onnx_type_code(y.dtype)});
    set_seed(m, n);
    return ok_status();
  }
  const bool normal = n.builtin == ir::builtin::kRandomStandardNormal;
  std::vector<int64_t> shape = *ir::const_ints(ctx.graph(), n.inputs[0]);
  // An empty ints attribute reads as a missing one: a scalar is drawn as [1].
  const bool scalar = shape.empty();
  const TensorId drawn = scalar ? ctx.temp(n.name + "/drawn", DataType::kFloat32) : n.outputs[0];
  ir::Node& r = ctx.emit(n, normal ? "RandomNormal" : "RandomUniform", {}, {drawn});
  r.attrs.set("shape", scalar ? std::vector<int64_t>{1} : std::move(shape));
  r.attrs.set("dtype", int64_t{ir::onnx_type_code(DataType::kFloat32)});
  if (!normal) {
    r.attrs.set("low", 0.0f);
    r.attrs.set("high", 1.0f);
  }
  set_seed(r, n);
  if (scalar)
    ctx.emit(n, "Reshape", {drawn, ctx.const_i64(n.name + "/scalar", {}, ir::Shape{0})},
             {n.outputs[0]}, "scalar");
  return ok_status();
}

InferredShapes infer_random(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.size() != 1 || n.inputs.empty() || !has_input(g, n, 0)) return std::nullopt;
  if (multinomial(n)) {
    auto logits = input_shape(g, n, 0);
    auto count = n.inputs.size() == 2 ? const_operand(g, n, 1, true, -1) : std::nullopt;
    if (!logits || logits->size() != 2 || !count || count->size() != 1) return std::nullopt;
    return one_shape({(*logits)[0], (*count)[0]});
  }
  auto shape = const_operand(g, n, 0, true, 1);
  if (!shape) return std::nullopt;
  return one_shape(Shape(shape->begin(), shape->end()));
}

}  // namespace

OpEntry random_op() {
  return {.read = {.options = read_random_options},
          .infer_shapes = infer_random,
          .check = check_random,
          .lower = lower_random,
          .doc = {.onnx = "RandomUniform [0, 1) / RandomNormal (0, 1) / Multinomial",
                  .dtypes = "float32 (int32/int64 samples)",
                  .notes = "same distribution, not TFLite's values (no Philox stream in ONNX); "
                           "seeded when seed or seed2 is set (seed + 65536 x seed2); constant "
                           "shape and sample count; checked statistically"}};
}

}  // namespace lite2onnx::ops::random
