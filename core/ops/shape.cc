// Ops that move data around without arithmetic: transpose, concatenation,
// split and padding (reshape.cc: RESHAPE and SQUEEZE; strided_slice.cc). All
// Attribute class: they follow their input's layout and rewrite axes, shapes
// and paddings to match.
#include <algorithm>
#include <limits>
#include <set>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::shape {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

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

// ---- PAD / PADV2 / MIRROR_PAD ----------------------------------------------

Check check_pad(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  const size_t rank = x.rank();
  if (auto r = check_index_vector(g, n, 1, "paddings", 2 * rank)) return r;
  if (auto pads = ir::const_ints(g, n.inputs[1]))
    for (int64_t v : *pads)
      if (v < 0) return refuse(ReasonCode::kOperands, "negative padding " + std::to_string(v));
  if (n.builtin == ir::builtin::kPadv2 && has_input(g, n, 2)) {
    const ir::Tensor& value = g.tensor(n.inputs[2]);
    if (!value.has_rank || ir::element_count(value.shape).value_or(0) != 1)
      return refuse(ReasonCode::kOperands, "constant_values must hold one value");
  }
  return {};
}

// Paddings computed at run time have a form only in ONNX Pad (constant and
// reflect modes); SYMMETRIC slices by them (lower_mirror_pad).
Check check_mirror_pad(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_pad(g, n)) return r;
  if (!g.tensor(n.inputs[1]).is_const() && n.attrs.get_string("mode") != "REFLECT")
    return refuse(ReasonCode::kRuntimeValue,
                  "SYMMETRIC mirror padding by paddings computed at run time");
  return {};
}

// Where ONNX's [begins..., ends...] in ONNX axis order (ONNX axis i is
// TFLite axis p[i]) take their entries from TFLite's flat [rank, 2] paddings.
std::vector<int64_t> pads_order(const ir::Tensor& x) {
  const Perm p = ir::full_perm(x.layout, x.rank());
  const size_t rank = p.size();
  std::vector<int64_t> pick(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    pick[i] = 2 * int64_t{p[i]};
    pick[rank + i] = 2 * int64_t{p[i]} + 1;
  }
  return pick;
}

// The ONNX pads: a constant, or picked from the run-time value by a Gather.
TensorId onnx_pads(LowerContext& ctx, const ir::Node& n) {
  return int64_vector(ctx, n, 1, pads_order(ctx.tensor(n.inputs[0])), "pads");
}

Status lower_pad(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  std::vector<TensorId> inputs = {n.inputs[0], onnx_pads(ctx, n)};
  if (n.builtin == ir::builtin::kPadv2 && has_input(g, n, 2)) {
    ir::Tensor value = g.tensor(n.inputs[2]);
    if (value.is_const()) {
      value.shape = {};  // ONNX wants a scalar
      inputs.push_back(ctx.graph().add_tensor(std::move(value)));
    } else {
      const TensorId scalar = ctx.temp(n.name + "/constant_value", value.dtype);
      ctx.graph().tensor(scalar).has_rank = true;
      ctx.graph().tensor(scalar).shape = {};
      ctx.emit(n, "Reshape",
               {n.inputs[2], ctx.const_i64(n.name + "/scalar_shape", {}, ir::Shape{0})}, {scalar},
               "constant_value");
      inputs.push_back(scalar);
    }
  }
  ir::Node& pad = ctx.emit(n, "Pad", inputs, {n.outputs[0]});
  pad.attrs.set("mode", std::string("constant"));
  return ok_status();
}

// --quantization exact: the kernels pad with the output's zero point, or
// with PADV2's value, whose integers the preflight keeps quantized as the
// output. ONNX Runtime pads no int16: that pads in int32 (PADV2 in float32).
Status lower_pad_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  if (has_input(ctx.graph(), n, 2)) return exact::lower_copy_as_float(ctx, n);
  exact::Writer w(ctx, n);
  const exact::Params out = exact::params_of(ctx.tensor(n.outputs[0]));
  const bool wide = out.type == DataType::kInt16;
  exact::Value padded = w.integers(n.outputs[0]);
  padded.type = wide ? DataType::kInt32 : out.type;
  padded.id = wide ? w.temp(DataType::kInt32, "padded") : n.outputs[0];
  const TensorId data = w.tensor(w.integers(n.inputs[0]), padded.type);
  ir::Node& pad =
      ctx.emit(n, "Pad", {data, onnx_pads(ctx, n), w.tensor(w.constant(out.zero), padded.type)},
               {padded.id});
  pad.attrs.set("mode", std::string("constant"));
  if (wide) w.store(padded, n.outputs[0]);
  return w.result();
}

Check check_pad_exact(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 2)) return std::nullopt;
  const ir::Tensor& value = g.tensor(n.inputs[2]);
  if (!value.quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "pad value '" + value.name + "' is not quantized as the data is");
  return std::nullopt;
}

Status lower_mirror_pad(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  if (n.attrs.get_string("mode") == "REFLECT") {
    ir::Node& pad = ctx.emit(n, "Pad", {n.inputs[0], onnx_pads(ctx, n)}, {n.outputs[0]});
    pad.attrs.set("mode", std::string("reflect"));
    return ok_status();
  }
  // SYMMETRIC: constant paddings (check_mirror_pad).
  const std::vector<int64_t> flat = *ir::const_ints(g, n.inputs[1]);
  std::vector<int64_t> pads;
  for (int64_t k : pads_order(g.tensor(n.inputs[0]))) pads.push_back(flat[static_cast<size_t>(k)]);
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

// ---- evaluation at conversion time (OpEntry::evaluate.element_sources) ------------

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

// ---- options and checks ---------------------------------------------------

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

}  // namespace

OpEntry transpose() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_transpose},
          .infer_shapes = infer_transpose,
          .check = check_transpose,
          .lower = lower_transpose,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = transpose_sources},
          .doc = {.onnx = "Transpose (composed with the input layout)",
                  .dtypes = "float32, int32, int64, bool"}};
}

OpEntry concatenation() {
  return {
      .read = {.min_inputs = -1, .options = read_concatenation_options},
      .layout = {.kind = LayoutClass::kAttribute,
                 .propagate = propagate_same,
                 .keeps_layout = true},
      .infer_shapes = infer_concatenation,
      .check = check_concatenation,
      .lower = lower_concat,
      // uint8 requantizes each input; int16 copies the integers (both TFLite runtimes).
      .quantization = {.int16 = QuantizedKernel::kSameScale, .exact = exact::concatenation_exact()},
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
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
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
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Split", .dtypes = "float32, int32"}};
}

// PAD and PADV2 (whose pad value, input 2, lower_pad reads).
OpEntry pad() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_data_input,
                     .keeps_layout = true},
          .infer_shapes = infer_pad,
          .check = check_pad,
          .lower = lower_pad,
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {lower_pad_exact, check_pad_exact}},
          .doc = {.onnx = "Pad", .dtypes = "float32, int32, int64"}};
}

OpEntry mirror_pad() {
  return {.read = {.min_inputs = 2, .options = read_mirror_pad_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_data_input,
                     .keeps_layout = true},
          .infer_shapes = infer_pad,
          .check = check_mirror_pad,
          .lower = lower_mirror_pad,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Pad (reflect) / Slice + Concat (symmetric)",
                  .dtypes = "float32, int32, int64"}};
}

}  // namespace lite2onnx::ops::shape
