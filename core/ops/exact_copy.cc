// --quantization exact: the ops whose TFLite kernels copy or select the
// integers (RESHAPE, TRANSPOSE, GATHER, CONCATENATION, MAX_POOL_2D's window
// maximum, REDUCE_MAX, nearest RESIZE, ...): the op's own lowering run on the
// integers (exact.h).
#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {

using ir::DataType;
using ir::TensorId;

void hold_integers(LowerContext& ctx, const ir::Node& n) {
  ir::Graph& g = ctx.graph();
  for (auto list : {&n.inputs, &n.outputs})
    for (TensorId t : *list)
      if (g.valid(t) && g.tensor(t).quantized_type) g.tensor(t).dtype = *g.tensor(t).quantized_type;
}

Check check_equal_params(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_string("fused_activation_function", "NONE") != "NONE")
    return refuse(ReasonCode::kOption,
                  "fused activation " + n.attrs.get_string("fused_activation_function", ""));
  if (n.outputs.empty() || !g.valid(n.outputs[0])) return std::nullopt;
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const Params py = params_of(y);
  for (TensorId t : n.inputs) {
    if (!g.valid(t)) continue;
    const ir::Tensor& x = g.tensor(t);
    const Params px = params_of(x);
    if (!x.quantized_type || !per_tensor(x) || !per_tensor(y) || px.type != py.type ||
        px.scale != py.scale || px.zero != py.zero)
      return refuse(ReasonCode::kQuantization,
                    "input '" + x.name + "' is not quantized as output '" + y.name +
                        "' is (per tensor, same type, scale and zero point): the kernels "
                        "requantize it or copy it, which the exact form does not cover yet");
  }
  return std::nullopt;
}

Check check_8bit(const ir::Graph& g, const ir::Node& n) {
  for (auto list : {&n.inputs, &n.outputs})
    for (TensorId t : *list)
      if (g.valid(t) && g.tensor(t).quantized_type == DataType::kInt16)
        return refuse(ReasonCode::kType, "int16 '" + g.tensor(t).name +
                                             "' (the exact form runs on 8-bit integers only)");
  return std::nullopt;
}

Status lower_copy(LowerContext& ctx, const ir::Node& n) {
  hold_integers(ctx, n);
  return ops::lookup(n).lower(ctx, n);
}

Status lower_copy_as_float(LowerContext& ctx, const ir::Node& n) {
  hold_integers(ctx, n);
  ir::Graph& g = ctx.graph();
  const bool wide = std::any_of(n.inputs.begin(), n.inputs.end(), [&](TensorId t) {
    return g.valid(t) && g.tensor(t).dtype == DataType::kInt16 && g.tensor(t).quant;
  });
  if (!wide) return ops::lookup(n).lower(ctx, n);
  // The int16 tensors as float32 (every int16 is exact there); the op
  // selects or copies them, and its outputs come back to int16.
  ir::Node in_float = n;
  auto cast = [&](TensorId from, TensorId to, DataType type, const char* what) {
    ctx.emit(n, "Cast", {from}, {to}, what).attrs.set("to", int64_t{ir::onnx_type_code(type)});
  };
  for (TensorId& t : in_float.inputs) {
    if (!g.valid(t) || g.tensor(t).dtype != DataType::kInt16 || !g.tensor(t).quant) continue;
    const TensorId f = ctx.temp_like(t, "float");
    g.tensor(f).dtype = DataType::kFloat32;
    cast(t, f, DataType::kFloat32, "to_float");
    t = f;
  }
  std::vector<std::pair<TensorId, TensorId>> outputs;
  for (TensorId& t : in_float.outputs) {
    if (!g.valid(t) || g.tensor(t).dtype != DataType::kInt16) continue;
    const TensorId f = ctx.temp_like(t, "float");
    g.tensor(f).dtype = DataType::kFloat32;
    outputs.emplace_back(f, t);
    t = f;
  }
  if (Status s = ops::lookup(n).lower(ctx, in_float); !s.ok()) return s;
  for (auto [f, t] : outputs) cast(f, t, DataType::kInt16, "to_int16");
  return ok_status();
}

}  // namespace lite2onnx::ops::exact
