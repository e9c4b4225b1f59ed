// Reductions and normalizations along axes: MEAN, SOFTMAX. Attribute class:
// their axes follow the input layout.
#include <algorithm>

#include "core/ops/common.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::reduce {
namespace {

using ir::Perm;
using ir::TensorId;

std::vector<int> reduced_axes(const ir::Graph& g, const ir::Node& n) {
  std::vector<int> axes;
  size_t rank = g.tensor(n.inputs[0]).rank();
  if (auto v = const_ints(g, n.inputs[1]))
    for (int64_t a : *v)
      if (auto r = resolve_axis(a, rank)) axes.push_back(*r);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::string check_reduce(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 1, "axes"); !r.empty()) return r;
  size_t rank = g.tensor(n.inputs[0]).rank();
  auto axes = const_ints(g, n.inputs[1]);
  if (!axes) return "axes must be an int32 or int64 constant";
  for (int64_t a : *axes)
    if (!resolve_axis(a, rank)) return "axis " + std::to_string(a) + " out of range";
  return "";
}

std::optional<LayoutPlan> propagate_reduce(const ir::Graph& g, const ir::Node& n,
                                           std::span<const Perm> in) {
  Perm p = in.empty() ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  bool keep = n.attrs.get_int("keep_dims") != 0;
  Perm out = keep ? p : ir::drop_axes(p, reduced_axes(g, n), g.tensor(n.inputs[0]).rank());
  plan.outputs.assign(n.outputs.size(), out);
  return plan;
}

Status lower_reduce(LowerContext& ctx, const ir::Node& n, const char* op) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[0]).layout;
  std::vector<int64_t> axes;
  for (int a : reduced_axes(g, n)) axes.push_back(ir::onnx_axis(p, a));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) {  // TFLite reduces nothing; ONNX would reduce everything
    ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
    return ok_status();
  }
  ir::Node& r = ctx.emit(n, op, {n.inputs[0]}, {n.outputs[0]});
  r.attrs.set("axes", axes);
  r.attrs.set("keepdims", int64_t{n.attrs.get_int("keep_dims") != 0});
  return ok_status();
}

void read_reducer(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ReducerOptions();
  a.set("keep_dims", int64_t{o && o->keep_dims() ? 1 : 0});
}

}  // namespace

OpEntry mean() {
  OpEntry e;
  e.name = "MEAN";
  e.layout = LayoutClass::kAttribute;
  e.read_options = read_reducer;
  e.propagate = propagate_reduce;
  e.check = check_reduce;
  e.min_inputs = 2;
  e.lower = [](LowerContext& ctx, const ir::Node& n) { return lower_reduce(ctx, n, "ReduceMean"); };
  e.onnx = "ReduceMean";
  e.notes = "axes follow the layout; without keep_dims the reduced axes leave it";
  return e;
}

OpEntry softmax() {
  OpEntry e;
  e.name = "SOFTMAX";
  e.layout = LayoutClass::kAttribute;
  e.read_options = [](const tflite::Operator& op, ir::Attributes& a) {
    const auto* o = op.builtin_options_as_SoftmaxOptions();
    a.set("beta", o ? o->beta() : 1.0f);
  };
  e.propagate = propagate_same;
  e.lower = [](LowerContext& ctx, const ir::Node& n) {
    const ir::Graph& g = ctx.graph();
    const ir::Tensor& x = g.tensor(n.inputs[0]);
    TensorId in = n.inputs[0];
    float beta = n.attrs.get_float("beta", 1.0f);
    if (beta != 1.0f) {
      TensorId scaled = ctx.temp_like(n.outputs[0], "scaled");
      ctx.emit(n, "Mul", {in, ctx.const_scalar(n.name + "/beta", x.dtype, beta)}, {scaled}, "beta");
      in = scaled;
    }
    ir::Node& s = ctx.emit(n, "Softmax", {in}, {n.outputs[0]});
    s.attrs.set("axis", int64_t{ir::onnx_axis(x.layout, static_cast<int>(x.rank()) - 1)});
    return ok_status();
  };
  e.check = [](const ir::Graph& g, const ir::Node& n) -> std::string {
    if (g.tensor(n.inputs[0]).rank() < 1) return "input must have at least one dimension";
    return "";
  };
  e.onnx = "Softmax (Mul by beta first when beta != 1)";
  return e;
}

}  // namespace lite2onnx::ops::reduce
