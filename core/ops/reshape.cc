// RESHAPE and SQUEEZE: Attribute ops that keep the input's layout when only
// unit dimensions move, or when the layout moves whole groups of the axes a
// reshape merges or splits ([N*T, C, H, W] <-> [N, T, C, H, W]); hints walk
// back through them (docs/architecture.md, "Regrouping reshapes").
#include <algorithm>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::shape {
namespace {

// The opset whose Reshape takes allowzero (a 0 in the shape is a 0).
constexpr int kReshapeAllowzeroOpset = 14;

using ir::Perm;
using ir::Shape;
using ir::TensorId;

std::vector<int64_t> non_unit(const Shape& s, const Perm& order) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.size(); ++i) {
    size_t a = order.empty() ? i : static_cast<size_t>(order[i]);
    if (s[a] != 1) out.push_back(static_cast<int64_t>(a));
  }
  return out;
}

// ---- RESHAPE ----------------------------------------------------------------

// A reshape regroups runs of axes: each group is a run of input axes and a
// run of output axes with the same product ([N, T, H, W, C] -> [N*T, H, W, C]:
// {N, T} -> {N*T}, {H}, {W}, {C}). Empty when the shapes are not static and
// positive, or a group would have no axis on one side.
struct AxisGroup {
  size_t x_begin, x_end, y_begin, y_end;
};

std::vector<AxisGroup> reshape_groups(const Shape& xs, const Shape& ys) {
  const auto xc = ir::element_count(xs), yc = ir::element_count(ys);
  if (!xc || !yc || *xc != *yc || *xc <= 0) return {};
  // Products of runs never exceed the element count: no overflow.
  std::vector<AxisGroup> groups;
  size_t i = 0, j = 0;
  while (i < xs.size() || j < ys.size()) {
    if (i == xs.size() || j == ys.size()) return {};
    AxisGroup g{i, i, j, j};
    int64_t px = xs[i++], py = ys[j++];
    while (px != py) {
      if (px < py) {
        if (i == xs.size()) return {};
        px *= xs[i++];
      } else {
        if (j == ys.size()) return {};
        py *= ys[j++];
      }
    }
    g.x_end = i;
    g.y_end = j;
    groups.push_back(g);
  }
  return groups;
}

// The layout of one side of a reshape given the other side's, when that one
// moves whole groups with their axes in order: the same order of groups.
// `from_input`: `layout` is the input's. nullopt when the groups are split.
std::optional<Perm> through_groups(const std::vector<AxisGroup>& groups, const Perm& layout,
                                   bool from_input) {
  auto from = [&](const AxisGroup& g) {
    return from_input ? std::pair{g.x_begin, g.x_end} : std::pair{g.y_begin, g.y_end};
  };
  auto to = [&](const AxisGroup& g) {
    return from_input ? std::pair{g.y_begin, g.y_end} : std::pair{g.x_begin, g.x_end};
  };
  const size_t rank = from(groups.back()).second;
  if (layout.size() != rank) return std::nullopt;
  std::vector<size_t> group_of(rank);
  for (size_t k = 0; k < groups.size(); ++k)
    for (size_t a = from(groups[k]).first; a < from(groups[k]).second; ++a) group_of[a] = k;
  Perm out;
  for (size_t pos = 0; pos < layout.size();) {
    const AxisGroup& g = groups[group_of[static_cast<size_t>(layout[pos])]];
    for (size_t a = from(g).first; a < from(g).second; ++a, ++pos)
      if (pos >= layout.size() || static_cast<size_t>(layout[pos]) != a) return std::nullopt;
    for (size_t a = to(g).first; a < to(g).second; ++a) out.push_back(static_cast<int>(a));
  }
  return out;
}

// A reshape that only adds or removes unit dimensions, on an input whose
// non-unit dimensions keep their order under its layout, reads the same
// memory order in ONNX: run it on the permuted tensor, output in TFLite order.
// Else, when the input's layout moves whole groups of the reshape (NCHW of
// [N*T, H, W, C]), the reshape of the permuted tensor is a plain Reshape
// whose output has the groups in that order ([N, T, C, H, W]).
std::optional<LayoutPlan> propagate_reshape(const ir::Graph& g, const ir::Node& n,
                                            std::span<const Perm> in) {
  if (in.empty() || in[0].empty()) return plan_for(n, {}, 0, {});
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  const Shape& ys = g.tensor(n.outputs[0]).shape;
  if (!ir::element_count(xs) || !ir::element_count(ys)) return std::nullopt;
  std::vector<int64_t> onnx_order = non_unit(xs, in[0]);
  std::vector<int64_t> xdims, ydims;
  for (int64_t d : xs)
    if (d != 1) xdims.push_back(d);
  for (int64_t d : ys)
    if (d != 1) ydims.push_back(d);
  if (std::is_sorted(onnx_order.begin(), onnx_order.end()) && xdims == ydims)
    return plan_for(n, in[0], 0, {});
  const std::vector<AxisGroup> groups = reshape_groups(xs, ys);
  if (groups.empty()) return std::nullopt;
  auto out = through_groups(groups, ir::full_perm(in[0], xs.size()), true);
  if (!out) return std::nullopt;
  return plan_for(n, in[0], 0, ir::normalized(*out));
}

// The layout the input would need for the output to come out in `wanted`.
Perm hint_reshape_input(const ir::Graph& g, const ir::Node& n, const Perm& wanted) {
  if (wanted.empty() || n.inputs.empty() || n.outputs.empty()) return {};
  const std::vector<AxisGroup> groups =
      reshape_groups(g.tensor(n.inputs[0]).shape, g.tensor(n.outputs[0]).shape);
  if (groups.empty()) return {};
  auto in = through_groups(groups, wanted, false);
  return in ? ir::normalized(*in) : Perm{};
}

Status lower_reshape(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  {
    const ir::Tensor& x = g.tensor(n.inputs[0]);
    auto xc = ir::element_count(x.shape), yc = ir::element_count(y.shape);
    if (xc && yc && *xc != *yc)
      return ctx.error(n, "cannot reshape " + ir::to_string(x.shape) + " (" + std::to_string(*xc) +
                              " elements) to " + ir::to_string(y.shape) + " (" +
                              std::to_string(*yc) + " elements)");
  }
  // A 0 in TFLite's shape is a dimension of size 0; in ONNX's Reshape it
  // copies the input's dimension unless allowzero (opset 14) says otherwise.
  // Before opset 14 a 0 becomes -1, which ONNX infers as 0 when the input is
  // empty (the one case TFLite accepts), if it is the shape's only 0 and -1.
  const bool allowzero = ctx.opset() >= kReshapeAllowzeroOpset;
  bool zero_possible = false;
  auto constant_shape = [&](std::vector<int64_t> dims) {
    const auto zeros = std::count(dims.begin(), dims.end(), 0);
    zero_possible = zeros > 0;
    if (!allowzero && zeros == 1 && std::count(dims.begin(), dims.end(), -1) == 0)
      std::replace(dims.begin(), dims.end(), int64_t{0}, int64_t{-1});
    return ctx.const_i64(n.name + "/shape", std::move(dims));
  };
  TensorId shape;
  if (ir::element_count(y.shape)) {
    shape = constant_shape(ir::permute_shape(y.shape, y.layout));
  } else if (auto v = has_input(g, n, 1) ? ir::const_ints(g, n.inputs[1]) : std::nullopt) {
    shape = constant_shape(*v);
  } else if (n.attrs.has("new_shape")) {
    shape = constant_shape(n.attrs.get_ints("new_shape"));
  } else if (has_input(g, n, 1)) {
    if (auto st = check_shape_operand(ctx, n, 1); !st) return st;
    zero_possible = true;
    shape = ctx.temp(n.name + "/shape_i64", ir::DataType::kInt64);
    ir::Node& c = ctx.emit(n, "Cast", {n.inputs[1]}, {shape}, "Cast");
    c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
    if (!allowzero) {
      TensorId zero = ctx.const_scalar(n.name + "/zero", ir::DataType::kInt64, 0);
      TensorId minus_one = ctx.const_scalar(n.name + "/minus_one", ir::DataType::kInt64, -1);
      TensorId is_zero = ctx.temp(n.name + "/shape_is_zero", ir::DataType::kBool);
      TensorId inferred = ctx.temp(n.name + "/shape_zero_inferred", ir::DataType::kInt64);
      ctx.emit(n, "Equal", {shape, zero}, {is_zero}, "Equal");
      ctx.emit(n, "Where", {is_zero, minus_one, shape}, {inferred}, "Where");
      shape = inferred;
    }
  } else {
    return ctx.error(n, "no target shape (neither a shape input, new_shape, nor a static output)");
  }
  ir::Node& r = ctx.emit(n, "Reshape", {n.inputs[0], shape}, {n.outputs[0]});
  if (allowzero && zero_possible) r.attrs.set("allowzero", int64_t{1});
  return ok_status();
}

// ---- SQUEEZE ----------------------------------------------------------------

std::vector<int> squeezed_axes(const ir::Graph& g, const ir::Node& n) {
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  std::vector<int> axes;
  std::vector<int64_t> dims = n.attrs.get_ints("squeeze_dims");
  if (dims.empty()) {
    for (size_t i = 0; i < xs.size(); ++i)
      if (xs[i] == 1) axes.push_back(static_cast<int>(i));
  } else {
    for (int64_t d : dims)
      if (auto a = ir::resolve_axis(d, xs.size())) axes.push_back(*a);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Check check_squeeze(const ir::Graph& g, const ir::Node& n) {
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  for (int64_t d : n.attrs.get_ints("squeeze_dims")) {
    auto a = ir::resolve_axis(d, xs.size());
    if (!a)
      return refuse(ReasonCode::kOperands,
                    "squeeze dimension " + std::to_string(d) + " is out of range");
    if (xs[static_cast<size_t>(*a)] != 1)
      return refuse(ReasonCode::kOperands, "squeeze dimension " + std::to_string(d) + " has size " +
                                               std::to_string(xs[static_cast<size_t>(*a)]));
  }
  return {};
}

std::optional<LayoutPlan> propagate_squeeze(const ir::Graph& g, const ir::Node& n,
                                            std::span<const Perm> in) {
  Perm p = in.empty() ? Perm{} : in[0];
  return plan_for(n, p, 0, ir::drop_axes(p, squeezed_axes(g, n), g.tensor(n.inputs[0]).rank()));
}

Status lower_squeeze(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[0]).layout;
  std::vector<int64_t> axes;
  for (int a : squeezed_axes(g, n)) axes.push_back(ir::onnx_axis(p, a));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) {
    ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
    return ok_status();
  }
  ctx.emit(n, "Squeeze", {n.inputs[0], ctx.const_i64(n.name + "/axes", axes)}, {n.outputs[0]});
  return ok_status();
}

// ---- evaluation at conversion time (OpEntry::evaluate.element_sources) ------------

// RESHAPE: input 0's elements in order, in the target shape (from the shape
// input, else new_shape, else the static output shape; one -1 inferred).
std::optional<std::vector<OutputMap>> reshape_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t) {
  auto xs = input_shape(g, n, 0);
  auto count = xs ? ir::element_count(*xs) : std::nullopt;
  if (!count || n.outputs.size() != 1) return std::nullopt;
  std::optional<std::vector<int64_t>> target;
  if (has_input(g, n, 1)) {
    target = input_ints(g, n, 1);  // a shape computed at run time: unknown here
    if (!target) return std::nullopt;
  } else if (n.attrs.has("new_shape")) {
    target = n.attrs.get_ints("new_shape");
  } else {
    auto ys = ir::static_shape(g.tensor(n.outputs[0]));
    if (!ys) return std::nullopt;
    target = *ys;
  }
  Shape ys(target->begin(), target->end());
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (ys[i] == -1 && unknown < 0) {
      unknown = static_cast<int>(i);
    } else if (ys[i] < 0) {
      return std::nullopt;
    } else {
      auto k = ir::element_count({known, ys[i]});
      if (!k) return std::nullopt;
      known = *k;
    }
  }
  if (unknown >= 0) {
    if (known == 0 || *count % known != 0) return std::nullopt;
    ys[static_cast<size_t>(unknown)] = *count / known;
  }
  if (ir::element_count(ys) != count) return std::nullopt;
  return in_order(std::move(ys));
}

std::optional<std::vector<OutputMap>> squeeze_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t) {
  auto xs = input_shape(g, n, 0);
  if (!xs || !ir::element_count(*xs) || n.outputs.size() != 1) return std::nullopt;
  std::vector<int64_t> dims = n.attrs.get_ints("squeeze_dims");
  std::vector<bool> drop(xs->size(), false);
  if (dims.empty()) {
    for (size_t i = 0; i < xs->size(); ++i) drop[i] = (*xs)[i] == 1;
  }
  for (int64_t d : dims) {
    auto a = ir::resolve_axis(d, xs->size());
    if (!a || (*xs)[static_cast<size_t>(*a)] != 1) return std::nullopt;
    drop[static_cast<size_t>(*a)] = true;
  }
  Shape ys;
  for (size_t i = 0; i < xs->size(); ++i)
    if (!drop[i]) ys.push_back((*xs)[i]);
  return in_order(std::move(ys));
}

// ---- options ----------------------------------------------------------------

void read_reshape_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ReshapeOptions();
  if (o && o->new_shape() && o->new_shape()->size() > 0)
    a.set("new_shape", std::vector<int64_t>(o->new_shape()->begin(), o->new_shape()->end()));
}

void read_squeeze_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SqueezeOptions();
  if (o && o->squeeze_dims())
    a.set("squeeze_dims",
          std::vector<int64_t>(o->squeeze_dims()->begin(), o->squeeze_dims()->end()));
}

}  // namespace

OpEntry reshape() {
  return {.read = {.options = read_reshape_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_reshape,
                     .hint_input = hint_reshape_input},
          .lower = lower_reshape,
          .quantization = {.kernel = QuantizedKernel::kReinterpret, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = reshape_sources},
          .doc = {.onnx = "Reshape",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "layout kept when only unit dimensions move (classifier heads), or "
                           "when the layout moves whole groups of merged or split axes ([N*T, C, "
                           "H, W] <-> [N, T, C, H, W])"}};
}

OpEntry squeeze() {
  return {.read = {.options = read_squeeze_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_squeeze},
          .check = check_squeeze,
          .lower = lower_squeeze,
          .quantization = {.kernel = QuantizedKernel::kReinterpret, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = squeeze_sources},
          .doc = {.onnx = "Squeeze", .dtypes = "float32, int32, int64, bool"}};
}

}  // namespace lite2onnx::ops::shape
