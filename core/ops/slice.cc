// SLICE, TILE and REVERSE_V2: Attribute ops that follow their input's layout
// (the rank stays) and rewrite their constant begin/size, multiples and axes
// into it. The data family's other ops work in TFLite order (data.cc).
#include <algorithm>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/exact.h"
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

// ---- SLICE ------------------------------------------------------------------

Check check_slice(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  const size_t rank = x.rank();
  if (auto r = check_index_vector(g, n, 1, "begin", rank)) return r;
  if (auto r = check_index_vector(g, n, 2, "size", rank)) return r;
  // What is known at conversion time is checked as TFLite's Prepare checks it.
  auto begin = ir::const_ints(g, n.inputs[1]);
  auto size = ir::const_ints(g, n.inputs[2]);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = begin ? (*begin)[d] : 0, k = size ? (*size)[d] : -1;
    if (b < 0) return refuse(ReasonCode::kOperands, "negative begin " + std::to_string(b));
    if (k < -1)
      return refuse(ReasonCode::kOperands, "size " + std::to_string(k) + " (>= -1 expected)");
    const int64_t dim = x.shape[d];
    if (dim >= 0 && (b > dim || (k >= 0 && b + k > dim)))
      return refuse(ReasonCode::kOperands, "slice [" + std::to_string(b) + ", +" +
                                               std::to_string(k) + ") exceeds dimension " +
                                               std::to_string(d) + " of size " +
                                               std::to_string(dim));
  }
  return {};
}

// Begin or size computed at run time (a loop counter slicing a TensorArray):
// ONNX Slice takes the starts and ends as values, in TFLite's axis order with
// the axes permuted; end = begin + size, or past the end where size is -1.
Status lower_runtime_slice(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const Perm p = x.layout;
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> axes;
  for (int d = 0; d < rank; ++d) axes.push_back(ir::onnx_axis(p, d));
  const TensorId starts = int64_vector(ctx, n, 1, {}, "starts");
  const TensorId sizes = int64_vector(ctx, n, 2, {}, "sizes");
  auto vec = [&](const std::string& name, DataType type) {
    const TensorId t = ctx.temp(n.name + "/" + name, type);
    ctx.graph().tensor(t).has_rank = true;
    ctx.graph().tensor(t).shape = {rank};
    return t;
  };
  TensorId ends = vec("ends", DataType::kInt64);
  ctx.emit(n, "Add", {starts, sizes}, {ends}, "ends");
  auto constant_sizes = ir::const_ints(ctx.graph(), n.inputs[2]);
  if (!constant_sizes || std::count(constant_sizes->begin(), constant_sizes->end(), -1) > 0) {
    const TensorId to_end = vec("to_end", DataType::kBool);
    ctx.emit(n, "Equal", {sizes, ctx.const_i64(n.name + "/minus_one", {-1}, Shape{})}, {to_end},
             "to_end");
    const TensorId bounded = vec("ends_bounded", DataType::kInt64);
    ctx.emit(n, "Where", {to_end, ctx.const_i64(n.name + "/past_end", {kMax}, Shape{}), ends},
             {bounded}, "ends_bounded");
    ends = bounded;
  }
  ctx.emit(n, "Slice", {n.inputs[0], starts, ends, ctx.const_i64(n.name + "/axes", axes)},
           {n.outputs[0]});
  return ok_status();
}

Status lower_slice(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  if (!g.tensor(n.inputs[1]).is_const() || !g.tensor(n.inputs[2]).is_const())
    return lower_runtime_slice(ctx, n);
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
  if (auto r = check_index_vector(g, n, 1, "multiples", x.rank())) return r;
  if (auto multiples = ir::const_ints(g, n.inputs[1]))
    for (int64_t m : *multiples)
      if (m < 0) return refuse(ReasonCode::kOperands, "negative multiple " + std::to_string(m));
  return {};
}

// Multiples constant or computed at run time (from a dynamic batch size,
// say), in the layout's axis order: ONNX axis i is TFLite axis p[i].
Status lower_tile(LowerContext& ctx, const ir::Node& n) {
  const Perm& p = ctx.tensor(n.inputs[0]).layout;
  const std::vector<int64_t> order = to_i64(p);
  ctx.emit(n, "Tile", {n.inputs[0], int64_vector(ctx, n, 1, order, "repeats")}, {n.outputs[0]});
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
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Slice",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "begin/size constant or computed at run time (size -1: to the end); "
                           "axes follow the layout"}};
}

OpEntry tile() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_data_input},
          .infer_shapes = infer_tile,
          .check = check_tile,
          .lower = lower_tile,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
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
