// SLICE, TILE and REVERSE_V2: Attribute ops that follow their input's layout
// (the rank stays) and rewrite their constant begin/size, multiples and axes
// into it. The data family's other ops work in TFLite order (data.cc).
#include <algorithm>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::data {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Input 0 in layout `in[0]`, constant operands in TFLite order, output in the
// input's layout.
std::optional<LayoutPlan> propagate_data_input(const ir::Graph&, const ir::Node& n,
                                               std::span<const Perm> in) {
  const Perm p = in.empty() ? Perm{} : in[0];
  return plan_for(n, p, 0, p);
}

// A constant int vector input with exactly `count` entries.
Check check_const_vector(const ir::Graph& g, const ir::Node& n, size_t i, const char* what,
                         size_t count) {
  if (auto r = require_const(g, n, i, what)) return r;
  if (!is_index_type(g.tensor(n.inputs[i]).dtype))
    return refuse(ReasonCode::kType,
                  std::string(what) + " of type " + ir::to_string(g.tensor(n.inputs[i]).dtype));
  auto v = ir::const_ints(g, n.inputs[i]);
  if (!v || v->size() != count)
    return refuse(ReasonCode::kShape, std::string(what) + " must hold " + std::to_string(count) +
                                          " values (one per dimension)");
  return {};
}

// ---- SLICE ------------------------------------------------------------------

Check check_slice(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  const size_t rank = x.rank();
  if (auto r = check_const_vector(g, n, 1, "begin", rank)) return r;
  if (auto r = check_const_vector(g, n, 2, "size", rank)) return r;
  auto begin = *ir::const_ints(g, n.inputs[1]);
  auto size = *ir::const_ints(g, n.inputs[2]);
  for (size_t d = 0; d < rank; ++d) {
    if (begin[d] < 0)
      return refuse(ReasonCode::kOperands, "negative begin " + std::to_string(begin[d]));
    if (size[d] < -1)
      return refuse(ReasonCode::kOperands, "size " + std::to_string(size[d]) + " (>= -1 expected)");
    int64_t dim = x.shape[d];
    if (dim >= 0 && (begin[d] > dim || (size[d] >= 0 && begin[d] + size[d] > dim)))
      return refuse(ReasonCode::kOperands, "slice [" + std::to_string(begin[d]) + ", +" +
                                               std::to_string(size[d]) + ") exceeds dimension " +
                                               std::to_string(d) + " of size " +
                                               std::to_string(dim));
  }
  return {};
}

Status lower_slice(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const Perm& p = x.layout;
  auto begin = *ir::const_ints(g, n.inputs[1]);
  auto size = *ir::const_ints(g, n.inputs[2]);
  std::vector<int64_t> starts, ends, axes;
  for (size_t d = 0; d < begin.size(); ++d) {
    const bool to_end = size[d] == -1 || (x.shape[d] >= 0 && begin[d] + size[d] == x.shape[d]);
    if (begin[d] == 0 && to_end) continue;  // whole dimension
    starts.push_back(begin[d]);
    ends.push_back(size[d] == -1 ? kMax : begin[d] + size[d]);
    axes.push_back(ir::onnx_axis(p, static_cast<int>(d)));
  }
  if (starts.empty()) {
    ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
    return ok_status();
  }
  ctx.emit(n, "Slice",
           {n.inputs[0], ctx.const_i64(n.name + "/starts", starts),
            ctx.const_i64(n.name + "/ends", ends), ctx.const_i64(n.name + "/axes", axes)},
           {n.outputs[0]});
  return ok_status();
}

// SLICE: constant begin and size (size -1: to the end).
InferredShapes infer_slice(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto begin = const_operand(g, n, 1, true, 1);
  auto size = const_operand(g, n, 2, true, 1);
  if (!x || !begin || !size || n.outputs.size() != 1 || x->size() > 5 ||
      begin->size() != x->size() || size->size() != x->size() ||
      g.tensor(n.inputs[1]).dtype != g.tensor(n.inputs[2]).dtype)
    return std::nullopt;
  Shape s;
  for (size_t d = 0; d < x->size(); ++d) {
    const int64_t dim = (*x)[d], b = (*begin)[d], k = (*size)[d];
    if (b < 0 || b > dim) return std::nullopt;
    if (k == -1) {
      s.push_back(dim - b);  // to the end
    } else if (k >= 0 && k <= dim - b) {
      s.push_back(k);
    } else {
      return std::nullopt;
    }
  }
  return one_shape(std::move(s));
}

// ---- TILE -------------------------------------------------------------------

Check check_tile(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  if (!g.tensor(n.inputs[1]).is_const()) {
    // Multiples computed at run time (from a dynamic batch size, say).
    const ir::Tensor& m = g.tensor(n.inputs[1]);
    if (!is_index_type(m.dtype) || m.rank() != 1 || m.shape[0] != static_cast<int64_t>(x.rank()))
      return refuse(ReasonCode::kType,
                    "multiples computed at run time must be an int32 or int64 vector of " +
                        std::to_string(x.rank()) + " elements");
    return {};
  }
  if (auto r = check_const_vector(g, n, 1, "multiples", x.rank())) return r;
  const std::vector<int64_t> multiples = *ir::const_ints(g, n.inputs[1]);
  for (int64_t m : multiples)
    if (m < 0) return refuse(ReasonCode::kOperands, "negative multiple " + std::to_string(m));
  return {};
}

Status lower_tile(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[0]).layout;
  if (!g.tensor(n.inputs[1]).is_const()) {
    // int64, in ONNX axis order.
    ir::TensorId repeats = n.inputs[1];
    const ir::Shape shape = g.tensor(repeats).shape;
    auto vec = [&](const std::string& suffix) {
      const ir::TensorId t = ctx.temp(n.name + "/" + suffix, ir::DataType::kInt64);
      ctx.graph().tensor(t).has_rank = true;
      ctx.graph().tensor(t).shape = shape;
      return t;
    };
    if (g.tensor(repeats).dtype != ir::DataType::kInt64) {
      const ir::TensorId cast = vec("repeats_int64");
      ctx.emit(n, "Cast", {repeats}, {cast}, "repeats_int64")
          .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
      repeats = cast;
    }
    if (!ir::is_identity(p)) {
      const ir::TensorId permuted = vec("repeats_permuted");
      ctx.emit(n, "Gather",
               {repeats, ctx.const_i64(n.name + "/repeats_order", {p.begin(), p.end()})},
               {permuted}, "repeats_permuted");
      repeats = permuted;
    }
    ctx.emit(n, "Tile", {n.inputs[0], repeats}, {n.outputs[0]});
    return ok_status();
  }
  auto m = *ir::const_ints(g, n.inputs[1]);
  // ONNX axis i is TFLite axis p[i].
  std::vector<int64_t> repeats(m.size());
  for (size_t i = 0; i < m.size(); ++i) repeats[i] = m[p.empty() ? i : static_cast<size_t>(p[i])];
  ctx.emit(n, "Tile", {n.inputs[0], ctx.const_i64(n.name + "/repeats", repeats)}, {n.outputs[0]});
  return ok_status();
}

// TILE: constant multiples.
InferredShapes infer_tile(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto multiples = const_operand(g, n, 1, true, 1);
  if (!x || !multiples || multiples->size() != x->size() || n.outputs.size() != 1)
    return std::nullopt;
  Shape s = *x;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t k = (*multiples)[i];
    if (k < 0 || (k > 0 && s[i] > kMaxDim / k)) return std::nullopt;
    s[i] *= k;
  }
  return one_shape(std::move(s));
}

// ---- REVERSE_V2 ---------------------------------------------------------------

std::optional<std::vector<int>> reverse_axes(const ir::Graph& g, const ir::Node& n) {
  auto v = ir::const_ints(g, n.inputs[1]);
  if (!v) return std::nullopt;
  std::set<int> axes;
  for (int64_t a : *v) {
    auto r = ir::resolve_axis(a, g.tensor(n.inputs[0]).rank());
    if (!r) return std::nullopt;
    axes.insert(*r);
  }
  return std::vector<int>(axes.begin(), axes.end());
}

Check check_reverse(const ir::Graph& g, const ir::Node& n) {
  if (!g.tensor(n.inputs[0]).has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  if (auto r = require_const(g, n, 1, "axis")) return r;
  if (!is_index_type(g.tensor(n.inputs[1]).dtype))
    return refuse(ReasonCode::kType, "axis must be int32 or int64");
  if (!reverse_axes(g, n)) return refuse(ReasonCode::kOperands, "axis out of range");
  return {};
}

Status lower_reverse(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[0]).layout;
  std::vector<int64_t> axes;
  const std::vector<int> tflite_axes = *reverse_axes(g, n);
  for (int a : tflite_axes) axes.push_back(ir::onnx_axis(p, a));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) {
    ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
    return ok_status();
  }
  const size_t k = axes.size();
  ctx.emit(n, "Slice",
           {n.inputs[0], ctx.const_i64(n.name + "/starts", std::vector<int64_t>(k, -1)),
            ctx.const_i64(n.name + "/ends", std::vector<int64_t>(k, kMin)),
            ctx.const_i64(n.name + "/axes", axes),
            ctx.const_i64(n.name + "/steps", std::vector<int64_t>(k, -1))},
           {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry slice() {
  return {.read = {.min_inputs = 3},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_data_input},
          .infer_shapes = infer_slice,
          .check = check_slice,
          .lower = lower_slice,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Slice",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant begin/size (size -1: to the end); axes follow the layout"}};
}

OpEntry tile() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_data_input},
          .infer_shapes = infer_tile,
          .check = check_tile,
          .lower = lower_tile,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Tile",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant multiples, permuted by the layout; run-time multiples: Cast "
                           "+ Gather into the layout's order"}};
}

OpEntry reverse_v2() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_data_input},
          .infer_shapes = infer_same_as_input,
          .check = check_reverse,
          .lower = lower_reverse,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Slice (step -1)",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant axis; axes follow the layout"}};
}

}  // namespace lite2onnx::ops::data
