// Ops that move data around without arithmetic: reshape, squeeze, transpose,
// concatenation, split, slicing and padding. All Attribute class: they follow
// their input's layout and rewrite axes, shapes and paddings to match.
#include <algorithm>
#include <limits>
#include <set>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::shape {
namespace {

using ir::Perm;
using ir::Shape;
using ir::TensorId;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

LayoutPlan plan_for(const ir::Node& n, const Perm& data_layout, size_t data_index,
                    const Perm& out_layout) {
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  if (data_index < plan.inputs.size()) plan.inputs[data_index] = data_layout;
  plan.outputs.assign(n.outputs.size(), out_layout);
  return plan;
}

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
  TensorId shape;
  if (ir::element_count(y.shape)) {
    shape = ctx.const_i64(n.name + "/shape", ir::permute_shape(y.shape, y.layout));
  } else if (auto v = has_input(g, n, 1) ? ir::const_ints(g, n.inputs[1]) : std::nullopt) {
    shape = ctx.const_i64(n.name + "/shape", *v);
  } else if (n.attrs.has("new_shape")) {
    shape = ctx.const_i64(n.name + "/shape", n.attrs.get_ints("new_shape"));
  } else if (has_input(g, n, 1)) {
    if (auto st = check_shape_operand(ctx, n, 1); !st) return st;
    shape = ctx.temp(n.name + "/shape_i64", ir::DataType::kInt64);
    ir::Node& c = ctx.emit(n, "Cast", {n.inputs[1]}, {shape}, "Cast");
    c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
  } else {
    return ctx.error(n, "no target shape (neither a shape input, new_shape, nor a static output)");
  }
  ctx.emit(n, "Reshape", {n.inputs[0], shape}, {n.outputs[0]});
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

// ---- TRANSPOSE --------------------------------------------------------------

Check check_transpose(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 1, "perm")) return r;
  auto perm = ir::const_ints(g, n.inputs[1]);
  size_t rank = g.tensor(n.inputs[0]).rank();
  if (!perm || perm->size() != rank)
    return refuse(ReasonCode::kOperands, "perm must hold one entry per input dimension");
  Perm p(perm->begin(), perm->end());
  if (!ir::is_permutation(p, rank))
    return refuse(ReasonCode::kOperands, "perm " + ir::to_string(p) + " is not a permutation");
  return {};
}

std::optional<LayoutPlan> propagate_transpose(const ir::Graph& g, const ir::Node& n,
                                              std::span<const Perm> in) {
  const Perm data = in.empty() ? Perm{} : in[0];
  // A TRANSPOSE that brings channels-first data into TFLite's channels-last
  // order (a PyTorch export's NCHW input) is no data movement at all when its
  // output is seen channels-first: it becomes an Identity, and the Implicit
  // ops after it get the layout they want. (Not for a graph output, whose
  // axis order is the model's interface.)
  auto perm = ir::const_ints(g, n.inputs[1]);
  const size_t rank = g.tensor(n.outputs[0]).rank();
  if (perm && perm->size() == rank && rank >= 3 && !g.is_graph_output(n.outputs[0])) {
    Perm p(perm->begin(), perm->end());
    Perm identity_out(rank);  // output layout under which the ONNX op is an identity
    const Perm in_order = data.empty() ? ir::identity_perm(rank) : data;
    const Perm inv = ir::inverse(p);
    for (size_t i = 0; i < rank; ++i) identity_out[i] = inv[static_cast<size_t>(in_order[i])];
    if (identity_out == ir::channels_first(rank)) return plan_for(n, data, 0, identity_out);
  }
  // Otherwise it composes with the input's layout; the output is in TFLite order.
  return plan_for(n, data, 0, {});
}

Status lower_transpose(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  auto perm = ir::const_ints(g, n.inputs[1]);
  const Perm& in_layout = g.tensor(n.inputs[0]).layout;
  const Perm& out_layout = g.tensor(n.outputs[0]).layout;
  Perm p(perm->begin(), perm->end());
  const size_t rank = p.size();
  // ONNX output axis j is TFLite output axis out_layout[j], which is TFLite
  // input axis p[out_layout[j]], found at ONNX input axis inverse(in_layout)[.].
  const Perm in_pos = ir::inverse(in_layout.empty() ? ir::identity_perm(rank) : in_layout);
  Perm q(rank);
  for (size_t j = 0; j < rank; ++j) {
    size_t out_axis = out_layout.empty() ? j : static_cast<size_t>(out_layout[j]);
    q[j] = in_pos[static_cast<size_t>(p[out_axis])];
  }
  if (q.empty() || ir::is_identity(q)) {
    ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
    return ok_status();
  }
  ir::Node& t = ctx.emit(n, "Transpose", {n.inputs[0]}, {n.outputs[0]});
  t.attrs.set("perm", to_i64(q));
  return ok_status();
}

// ---- CONCATENATION ----------------------------------------------------------

Status lower_concat(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = out_layout(g, n);
  size_t rank = out_rank(g, n);
  auto axis = ir::resolve_axis(n.attrs.get_int("axis"), rank);
  if (!axis)
    return ctx.error(n, "axis " + std::to_string(n.attrs.get_int("axis")) + " out of range");
  std::vector<TensorId> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) inputs.push_back(ctx.operand(n, i, p, rank));
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ir::Node& c = ctx.emit(n, "Concat", inputs, {*y});
  c.attrs.set("axis", int64_t{ir::onnx_axis(p, *axis)});
  return ok_status();
}

// ---- SPLIT / SPLIT_V --------------------------------------------------------

Status emit_split(LowerContext& ctx, const ir::Node& n, size_t data, int axis,
                  std::vector<int64_t> sizes) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[data]).layout;
  std::vector<TensorId> inputs = {n.inputs[data]};
  if (!sizes.empty()) inputs.push_back(ctx.const_i64(n.name + "/split", sizes));
  ir::Node& s = ctx.emit(n, "Split", inputs, n.outputs);
  s.attrs.set("axis", int64_t{ir::onnx_axis(p, axis)});
  return ok_status();
}

std::optional<LayoutPlan> propagate_split(const ir::Graph& g, const ir::Node& n,
                                          std::span<const Perm> in) {
  size_t data =
      n.builtin == ir::builtin::kSplit ? 1 : 0;  // SPLIT takes (axis, x); SPLIT_V (x, sizes, axis)
  if (data >= in.size()) return std::nullopt;
  (void)g;
  return plan_for(n, in[data], data, in[data]);
}

Check check_split(const ir::Graph& g, const ir::Node& n) {
  size_t data = n.builtin == ir::builtin::kSplit ? 1 : 0;
  size_t axis_input = n.builtin == ir::builtin::kSplit ? 0 : 2;
  if (auto r = require_const(g, n, axis_input, "axis")) return r;
  if (!has_input(g, n, data)) return refuse(ReasonCode::kOperands, "data input is missing");
  auto axis = ir::const_ints(g, n.inputs[axis_input]);
  size_t rank = g.tensor(n.inputs[data]).rank();
  if (!axis || axis->size() != 1 || !ir::resolve_axis((*axis)[0], rank))
    return refuse(ReasonCode::kOperands, "axis is out of range");
  int64_t dim =
      g.tensor(n.inputs[data]).shape[static_cast<size_t>(*ir::resolve_axis((*axis)[0], rank))];
  if (n.builtin == ir::builtin::kSplit) {
    if (dim >= 0 && (n.outputs.empty() || dim % static_cast<int64_t>(n.outputs.size()) != 0))
      return refuse(ReasonCode::kOperands, "dimension " + std::to_string(dim) +
                                               " does not split into " +
                                               std::to_string(n.outputs.size()) + " equal parts");
    return {};
  }
  if (auto r = require_const(g, n, 1, "size_splits")) return r;
  auto sizes = ir::const_ints(g, n.inputs[1]);
  if (!sizes || sizes->size() != n.outputs.size())
    return refuse(ReasonCode::kOperands, "size_splits must have one entry per output");
  if (std::count(sizes->begin(), sizes->end(), -1) > 1)
    return refuse(ReasonCode::kOperands, "size_splits has more than one -1");
  if (dim < 0 && std::count(sizes->begin(), sizes->end(), -1) > 0)
    return refuse(ReasonCode::kShape, "size_splits with -1 on a dynamic dimension");
  int64_t known = 0;
  for (int64_t s : *sizes) {
    if (s < -1)
      return refuse(ReasonCode::kOperands,
                    "size_splits entry " + std::to_string(s) + " is negative");
    if (s > 0) known += s;
  }
  bool fill = std::count(sizes->begin(), sizes->end(), -1) > 0;
  if (dim >= 0 && (fill ? known > dim : known != dim))
    return refuse(ReasonCode::kOperands, "size_splits add up to " + std::to_string(known) +
                                             ", not dimension " + std::to_string(dim));
  return {};
}

Status lower_split(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  bool is_v = n.builtin != ir::builtin::kSplit;
  size_t data = is_v ? 0 : 1;
  const ir::Tensor& x = g.tensor(n.inputs[data]);
  int axis = *ir::resolve_axis((*ir::const_ints(g, n.inputs[is_v ? 2 : 0]))[0], x.rank());
  int64_t dim = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (is_v) {
    sizes = *ir::const_ints(g, n.inputs[1]);
    int64_t known = 0;
    for (int64_t s : sizes) known += s >= 0 ? s : 0;
    for (auto& s : sizes)
      if (s < 0) s = dim - known;
  } else if (dim >= 0) {
    sizes.assign(n.outputs.size(), dim / static_cast<int64_t>(n.outputs.size()));
  }
  return emit_split(ctx, n, data, axis, sizes);
}

// ---- PAD / PADV2 / MIRROR_PAD ----------------------------------------------

Check check_pad(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 1, "paddings")) return r;
  auto pads = ir::const_ints(g, n.inputs[1]);
  size_t rank = g.tensor(n.inputs[0]).rank();
  if (!pads || pads->size() != 2 * rank)
    return refuse(ReasonCode::kShape,
                  "paddings must be a [" + std::to_string(rank) + ", 2] constant");
  for (int64_t v : *pads)
    if (v < 0) return refuse(ReasonCode::kOperands, "negative padding " + std::to_string(v));
  if (n.builtin == ir::builtin::kPadv2 && has_input(g, n, 2)) {
    if (auto r = require_const(g, n, 2, "constant_values")) return r;
    if (ir::element_count(g.tensor(n.inputs[2]).shape).value_or(0) != 1)
      return refuse(ReasonCode::kOperands, "constant_values must hold one value");
  }
  return {};
}

// TFLite [rank, 2] paddings -> ONNX [begins..., ends...] in ONNX axis order.
std::vector<int64_t> onnx_pads(const ir::Graph& g, const ir::Node& n) {
  auto pads = *ir::const_ints(g, n.inputs[1]);
  const Perm& p = g.tensor(n.inputs[0]).layout;
  size_t rank = pads.size() / 2;
  std::vector<int64_t> out(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t a = p.empty() ? i : static_cast<size_t>(p[i]);
    out[i] = pads[2 * a];
    out[rank + i] = pads[2 * a + 1];
  }
  return out;
}

Status lower_pad(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  std::vector<TensorId> inputs = {n.inputs[0], ctx.const_i64(n.name + "/pads", onnx_pads(g, n))};
  if (n.builtin == ir::builtin::kPadv2 && has_input(g, n, 2)) {
    ir::Tensor value = g.tensor(n.inputs[2]);
    value.shape = {};  // ONNX wants a scalar
    inputs.push_back(ctx.graph().add_tensor(std::move(value)));
  }
  ir::Node& pad = ctx.emit(n, "Pad", inputs, {n.outputs[0]});
  pad.attrs.set("mode", std::string("constant"));
  return ok_status();
}

Status lower_mirror_pad(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  std::vector<int64_t> pads = onnx_pads(g, n);
  if (n.attrs.get_string("mode") == "REFLECT") {
    ir::Node& pad =
        ctx.emit(n, "Pad", {n.inputs[0], ctx.const_i64(n.name + "/pads", pads)}, {n.outputs[0]});
    pad.attrs.set("mode", std::string("reflect"));
    return ok_status();
  }
  // SYMMETRIC has no ONNX Pad mode: per padded axis, concatenate reversed edge slices.
  size_t rank = pads.size() / 2;
  std::vector<size_t> padded;
  for (size_t a = 0; a < rank; ++a)
    if (pads[a] || pads[rank + a]) padded.push_back(a);
  TensorId cur = n.inputs[0];
  ir::DataType type = g.tensor(n.outputs[0]).dtype;
  if (padded.empty()) {
    ctx.emit(n, "Identity", {cur}, {n.outputs[0]});
    return ok_status();
  }
  for (size_t k = 0; k < padded.size(); ++k) {
    size_t a = padded[k];
    std::string tag = "axis" + std::to_string(a);
    auto axes = ctx.const_i64(n.name + "/" + tag, {static_cast<int64_t>(a)});
    auto step = ctx.const_i64(n.name + "/reverse_step", {-1});
    std::vector<TensorId> parts;
    if (pads[a]) {
      TensorId left = ctx.temp(n.name + "/" + tag + "_before", type);
      ctx.emit(n, "Slice",
               {cur, ctx.const_i64(n.name + "/start", {pads[a] - 1}),
                ctx.const_i64(n.name + "/end", {kMin}), axes, step},
               {left}, tag + "_before");
      parts.push_back(left);
    }
    parts.push_back(cur);
    if (pads[rank + a]) {
      TensorId right = ctx.temp(n.name + "/" + tag + "_after", type);
      ctx.emit(n, "Slice",
               {cur, ctx.const_i64(n.name + "/start", {-1}),
                ctx.const_i64(n.name + "/end", {-pads[rank + a] - 1}), axes, step},
               {right}, tag + "_after");
      parts.push_back(right);
    }
    TensorId out = k + 1 == padded.size() ? n.outputs[0] : ctx.temp(n.name + "/" + tag, type);
    ir::Node& c = ctx.emit(n, "Concat", parts, {out}, k + 1 == padded.size() ? "" : tag);
    c.attrs.set("axis", static_cast<int64_t>(a));
    cur = out;
  }
  return ok_status();
}

// ---- evaluation at conversion time (OpEntry::element_sources) ------------

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

std::optional<std::vector<OutputMap>> transpose_sources(const ir::Graph& g, const ir::Node& n,
                                                        int64_t max) {
  auto xs = input_shape(g, n, 0);
  auto perm = input_ints(g, n, 1);
  if (!xs || !perm || perm->size() != xs->size()) return std::nullopt;
  ir::Perm p(perm->begin(), perm->end());
  if (!ir::is_permutation(p, xs->size())) return std::nullopt;
  Shape ys = ir::permute_shape(*xs, p);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  std::vector<int64_t> in_strides = ir::row_strides(*xs);
  const size_t rank = ys.size();
  OutputMap out;
  out.shape = ys;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < *count; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += idx[d] * in_strides[static_cast<size_t>(p[d])];
    out.sources.push_back(ElementSource{0, src});
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> concatenation_sources(const ir::Graph& g, const ir::Node& n,
                                                            int64_t max) {
  if (n.inputs.empty()) return std::nullopt;
  if (n.attrs.get_string("fused_activation_function", "NONE") != "NONE") return std::nullopt;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    auto s = input_shape(g, n, i);
    if (!s) return std::nullopt;
    shapes.push_back(*s);
  }
  const int64_t rank = static_cast<int64_t>(shapes[0].size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  Shape ys = shapes[0];
  ys[a] = 0;
  for (const auto& s : shapes) {
    if (s.size() != shapes[0].size()) return std::nullopt;
    for (size_t d = 0; d < s.size(); ++d)
      if (d != a && s[d] != shapes[0][d]) return std::nullopt;
    ys[a] += s[a];
  }
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(ys, 0, a), inner = product(ys, a + 1, ys.size());
  OutputMap out;
  out.shape = ys;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < shapes.size(); ++j) {
      const int64_t block = shapes[j][a] * inner;
      for (int64_t i = 0; i < block; ++i)
        out.sources.push_back(ElementSource{static_cast<uint32_t>(j), o * block + i});
    }
  return std::vector<OutputMap>{std::move(out)};
}

// ---- options, checks and shapes -------------------------------------------

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

void read_concatenation_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ConcatenationOptions();
  a.set("axis", int64_t{o ? o->axis() : 0});
  store_activation(o, a);
}

Check check_concatenation(const ir::Graph& g, const ir::Node& n) {
  if (!ir::resolve_axis(n.attrs.get_int("axis"), out_rank(g, n)))
    return refuse(ReasonCode::kOperands, "axis out of range");
  return check_activation(g, n);
}

void read_split_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SplitOptions();
  a.set("num_splits", int64_t{o ? o->num_splits() : 0});
}

void read_split_v_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SplitVOptions();
  a.set("num_splits", int64_t{o ? o->num_splits() : 0});
}

void read_mirror_pad_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_MirrorPadOptions();
  a.set("mode",
        std::string(o && o->mode() == tflite::MirrorPadMode::SYMMETRIC ? "SYMMETRIC" : "REFLECT"));
}

// CONCATENATION along `axis`.
InferredShapes infer_concatenation(const ir::Graph& g, const ir::Node& n) {
  std::optional<Shape> out;
  std::optional<int> axis;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    auto s = input_shape(g, n, i);
    if (!s) return std::nullopt;
    if (!out) {
      axis = ir::resolve_axis(n.attrs.get_int("axis"), s->size());
      if (!axis) return std::nullopt;
      out = *s;
      continue;
    }
    if (s->size() != out->size()) return std::nullopt;
    for (size_t a = 0; a < s->size(); ++a) {
      if (static_cast<int>(a) == *axis) continue;
      if ((*s)[a] != (*out)[a]) return std::nullopt;
    }
    const size_t a = static_cast<size_t>(*axis);
    if ((*out)[a] > kMaxElements || (*s)[a] > kMaxElements) return std::nullopt;
    (*out)[a] += (*s)[a];
  }
  if (!out || n.outputs.size() != 1) return std::nullopt;
  return one_shape(*out);
}

// TRANSPOSE: the constant perm (input 1).
InferredShapes infer_transpose(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto perm = input_ints(g, n, 1);
  if (!x || !perm || perm->size() != x->size() || n.outputs.size() != 1) return std::nullopt;
  std::vector<bool> seen(x->size(), false);
  Shape s;
  for (int64_t p : *perm) {
    if (p < 0 || static_cast<size_t>(p) >= x->size() || seen[static_cast<size_t>(p)])
      return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
    s.push_back((*x)[static_cast<size_t>(p)]);
  }
  return one_shape(std::move(s));
}

// PAD, PADV2, MIRROR_PAD: constant paddings [rank, 2] (input 1).
InferredShapes infer_pad(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto pads = input_ints(g, n, 1);
  if (!x || !pads || pads->size() != 2 * x->size() || n.outputs.size() != 1) return std::nullopt;
  Shape s = *x;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    if (before < 0 || after < 0 || before > kMaxElements || after > kMaxElements)
      return std::nullopt;
    s[i] += before + after;
  }
  return one_shape(std::move(s));
}

// SPLIT (axis input 0, equal parts) and SPLIT_V (constant size_splits, one -1).
InferredShapes infer_split(const ir::Graph& g, const ir::Node& n) {
  auto axis = const_operand(g, n, 0, false, -1);
  auto x = input_shape(g, n, 1);
  const int64_t parts = static_cast<int64_t>(n.outputs.size());
  if (!axis || axis->size() != 1 || !x || n.inputs.size() != 2 || parts < 1 ||
      n.attrs.get_int("num_splits", parts) != parts)
    return std::nullopt;
  auto a = ir::resolve_axis((*axis)[0], x->size());
  if (!a) return std::nullopt;
  const int64_t dim = (*x)[static_cast<size_t>(*a)];
  if (dim % parts != 0) return std::nullopt;
  Shape s = *x;
  s[static_cast<size_t>(*a)] = dim / parts;
  return many_shapes(std::vector<Shape>(static_cast<size_t>(parts), s));
}

InferredShapes infer_split_v(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto sizes = const_operand(g, n, 1, true, -1);
  auto axis = const_operand(g, n, 2, false, -1);
  if (!x || !sizes || !axis || axis->size() != 1 || n.inputs.size() != 3 ||
      sizes->size() != n.outputs.size() || sizes->empty() ||
      n.attrs.get_int("num_splits", static_cast<int64_t>(sizes->size())) !=
          static_cast<int64_t>(sizes->size()))
    return std::nullopt;
  auto a = ir::resolve_axis((*axis)[0], x->size());
  if (!a) return std::nullopt;
  const int64_t dim = (*x)[static_cast<size_t>(*a)];
  std::optional<size_t> fill;  // the one -1
  int64_t sum = 0;
  for (size_t i = 0; i < sizes->size(); ++i) {
    const int64_t v = (*sizes)[i];
    if (v == -1 && !fill) {
      fill = i;
    } else if (v < 0 || v > dim - sum) {
      return std::nullopt;  // a second -1, a negative size, more than the dimension
    } else {
      sum += v;
    }
  }
  if (!fill && sum != dim) return std::nullopt;
  std::vector<Shape> out;
  for (size_t i = 0; i < sizes->size(); ++i) {
    Shape s = *x;
    s[static_cast<size_t>(*a)] = fill && *fill == i ? dim - sum : (*sizes)[i];
    out.push_back(std::move(s));
  }
  return many_shapes(std::move(out));
}

}  // namespace

OpEntry reshape() {
  return {.read = {.options = read_reshape_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_reshape,
                     .hint_input = hint_reshape_input},
          .lower = lower_reshape,
          .quantization = {.kernel = QuantizedKernel::kReinterpret},
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
          .quantization = {.kernel = QuantizedKernel::kReinterpret},
          .evaluate = {.element_sources = squeeze_sources},
          .doc = {.onnx = "Squeeze", .dtypes = "float32, int32, int64, bool"}};
}

OpEntry transpose() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_transpose},
          .infer_shapes = infer_transpose,
          .check = check_transpose,
          .lower = lower_transpose,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .evaluate = {.element_sources = transpose_sources},
          .doc = {.onnx = "Transpose (composed with the input layout)",
                  .dtypes = "float32, int32, int64, bool"}};
}

OpEntry concatenation() {
  return {.read = {.min_inputs = -1, .options = read_concatenation_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_concatenation,
          .check = check_concatenation,
          .lower = lower_concat,
          // uint8 requantizes each input; int16 copies the integers (both TFLite runtimes).
          .quantization = {.int16 = QuantizedKernel::kSameScale},
          .evaluate = {.element_sources = concatenation_sources},
          .doc = {.onnx = "Concat", .dtypes = "float32, int32, int64, bool"}};
}

OpEntry split() {
  return {.read = {.min_inputs = 2, .options = read_split_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_split,
                     .keeps_layout = true},
          .infer_shapes = infer_split,
          .check = check_split,
          .lower = lower_split,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Split", .dtypes = "float32, int32"}};
}

OpEntry split_v() {
  return {.read = {.min_inputs = 3, .options = read_split_v_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_split,
                     .keeps_layout = true},
          .infer_shapes = infer_split_v,
          .check = check_split,
          .lower = lower_split,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Split", .dtypes = "float32, int32"}};
}

// PAD and PADV2 (whose pad value, input 2, lower_pad reads).
OpEntry pad() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_pad,
          .check = check_pad,
          .lower = lower_pad,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Pad", .dtypes = "float32, int32, int64"}};
}

OpEntry mirror_pad() {
  return {.read = {.min_inputs = 2, .options = read_mirror_pad_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_pad,
          .check = check_pad,
          .lower = lower_mirror_pad,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Pad (reflect) / Slice + Concat (symmetric)",
                  .dtypes = "float32, int32, int64"}};
}

}  // namespace lite2onnx::ops::shape
