// Data-movement ops that work in TFLite order (Terminate class): BROADCAST_TO,
// GATHER_ND, SCATTER_ND, RANGE, WHERE, BATCH_MATMUL. (slice.cc: SLICE, TILE,
// REVERSE_V2, which follow their input's layout.)
#include <algorithm>
#include <limits>
#include <set>

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

std::string type_name(DataType t) { return ir::to_string(t); }

// ---- shared: an int tensor as an ONNX int64 value ----------------------------------

// Constants are rewritten as int64 initializers (same shape), run-time int32
// values get a Cast.
TensorId as_int64(LowerContext& ctx, const ir::Node& n, size_t i, const std::string& tag) {
  ir::Graph& g = ctx.graph();
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (t.dtype == DataType::kInt64) return n.inputs[i];
  if (auto v = ir::const_ints(g, n.inputs[i]))
    return ctx.const_i64(n.name + "/" + tag, *v, t.shape);
  TensorId out = ctx.temp(n.name + "/" + tag + "_i64", DataType::kInt64);
  ir::Node& c = ctx.emit(n, "Cast", {n.inputs[i]}, {out}, "Cast_" + tag);
  c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
  return out;
}

// ---- BROADCAST_TO -------------------------------------------------------------

Check check_broadcast_to(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& s = g.tensor(n.inputs[1]);
  if (!is_index_type(s.dtype))
    return refuse(ReasonCode::kType, "shape of type " + type_name(s.dtype));
  if (s.rank() != 1) return refuse(ReasonCode::kShape, "shape must be a vector");
  if (auto v = ir::const_ints(g, n.inputs[1])) {
    const Shape& xs = g.tensor(n.inputs[0]).shape;
    if (xs.size() > v->size())
      return refuse(ReasonCode::kShape, "shape has lower rank than the input");
    for (size_t i = 0; i < xs.size(); ++i) {
      int64_t want = (*v)[v->size() - xs.size() + i];
      if (xs[i] >= 0 && xs[i] != 1 && xs[i] != want)
        return refuse(
            ReasonCode::kOperands,
            "input " + ir::to_string(xs) + " does not broadcast to " + ir::to_string(Shape(*v)));
    }
  }
  return {};
}

Status lower_broadcast_to(LowerContext& ctx, const ir::Node& n) {
  if (auto st = check_shape_operand(ctx, n, 1); !st) return st;
  TensorId shape = as_int64(ctx, n, 1, "shape");
  ctx.emit(n, "Expand", {n.inputs[0], shape}, {n.outputs[0]});
  return ok_status();
}

// BROADCAST_TO: the constant shape (input 1), which the input must broadcast to.
InferredShapes infer_broadcast_to(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto shape = const_operand(g, n, 1, true, 1);
  if (!x || !shape || n.outputs.size() != 1 || shape->size() < x->size() || shape->size() > 8)
    return std::nullopt;
  const size_t lead = shape->size() - x->size();
  for (int64_t d : *shape)
    if (!dim_value(d)) return std::nullopt;
  for (size_t i = 0; i < x->size(); ++i)
    if ((*x)[i] != 1 && (*x)[i] != (*shape)[lead + i]) return std::nullopt;
  return one_shape(Shape(shape->begin(), shape->end()));
}

// ---- GATHER_ND ----------------------------------------------------------------

Check check_gather_nd(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& idx = g.tensor(n.inputs[1]);
  if (!is_index_type(idx.dtype))
    return refuse(ReasonCode::kType, "indices of type " + type_name(idx.dtype));
  if (!x.has_rank || !idx.has_rank || idx.rank() < 1)
    return refuse(ReasonCode::kShape, "indices must have rank >= 1");
  int64_t depth = idx.shape.back();
  if (depth < 0) return refuse(ReasonCode::kShape, "the last dimension of indices must be static");
  if (depth > static_cast<int64_t>(x.rank()))
    return refuse(ReasonCode::kOperands, "index depth " + std::to_string(depth) +
                                             " exceeds the params rank " +
                                             std::to_string(x.rank()));
  return {};
}

Status lower_gather_nd(LowerContext& ctx, const ir::Node& n) {
  TensorId indices = as_int64(ctx, n, 1, "indices");
  ir::Node& gt = ctx.emit(n, "GatherND", {n.inputs[0], indices}, {n.outputs[0]});
  gt.attrs.set("batch_dims", int64_t{0});
  return ok_status();
}

// GATHER_ND: indices[:-1] + params[indices[-1]:].
InferredShapes infer_gather_nd(const ir::Graph& g, const ir::Node& n) {
  auto params = input_shape(g, n, 0);
  auto idx = input_shape(g, n, 1);
  if (!params || !idx || n.inputs.size() != 2 || n.outputs.size() != 1 || params->empty() ||
      idx->empty() || !is_index_type(g.tensor(n.inputs[1]).dtype))
    return std::nullopt;
  const int64_t depth = idx->back();
  if (depth > static_cast<int64_t>(params->size())) return std::nullopt;
  Shape s(idx->begin(), idx->end() - 1);
  s.insert(s.end(), params->begin() + depth, params->end());
  return one_shape(std::move(s));
}

// ---- SCATTER_ND -----------------------------------------------------------------
// TFLite writes `updates` into zeros of `shape` at `indices` and sums the
// updates that land on the same element; ONNX ScatterND says the same with
// reduction 'add' (opset 16). Before that, only distinct constant indices.

constexpr int kScatterAddOpset = 16;

// The index vectors of constant `indices` (innermost dimension `depth`).
std::vector<std::vector<int64_t>> index_rows(const std::vector<int64_t>& flat, size_t depth) {
  std::vector<std::vector<int64_t>> rows;
  if (depth == 0) return rows;
  for (size_t i = 0; i + depth <= flat.size(); i += depth)
    rows.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i),
                      flat.begin() + static_cast<std::ptrdiff_t>(i + depth));
  return rows;
}

Check check_scatter_nd(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& idx = g.tensor(n.inputs[0]);
  const ir::Tensor& upd = g.tensor(n.inputs[1]);
  const ir::Tensor& shp = g.tensor(n.inputs[2]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!is_index_type(idx.dtype))
    return refuse(ReasonCode::kType, "indices of type " + type_name(idx.dtype));
  if (!is_index_type(shp.dtype))
    return refuse(ReasonCode::kType, "shape of type " + type_name(shp.dtype));
  if (upd.dtype != DataType::kFloat32 && upd.dtype != DataType::kInt32 &&
      upd.dtype != DataType::kInt64)
    return refuse(ReasonCode::kType, "updates of type " + type_name(upd.dtype) +
                                         " (float32, int32 or int64 expected)");
  if (y.dtype != upd.dtype)
    return refuse(ReasonCode::kType, "output type differs from the updates' type");
  if (!idx.has_rank || idx.rank() < 1)
    return refuse(ReasonCode::kShape, "indices must have rank >= 1");
  if (!upd.has_rank || !y.has_rank)
    return refuse(ReasonCode::kShape, "updates and output need a known rank");
  const int64_t depth = idx.shape.back();
  if (depth < 1)
    return refuse(ReasonCode::kShape, "the last dimension of indices must be static and >= 1");
  if (depth > static_cast<int64_t>(y.rank()))
    return refuse(ReasonCode::kOperands, "index depth " + std::to_string(depth) +
                                             " exceeds the output rank " +
                                             std::to_string(y.rank()));
  // updates = indices.shape[:-1] + output.shape[depth:]
  const size_t batch = idx.rank() - 1, tail = y.rank() - static_cast<size_t>(depth);
  if (upd.rank() != batch + tail)
    return refuse(ReasonCode::kOperands, "updates " + ir::to_string(upd.shape) +
                                             " do not match indices " + ir::to_string(idx.shape) +
                                             " and output " + ir::to_string(y.shape));
  auto clash = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  for (size_t i = 0; i < batch; ++i)
    if (clash(upd.shape[i], idx.shape[i]))
      return refuse(ReasonCode::kOperands, "updates " + ir::to_string(upd.shape) +
                                               " do not match indices " + ir::to_string(idx.shape));
  for (size_t i = 0; i < tail; ++i)
    if (clash(upd.shape[batch + i], y.shape[static_cast<size_t>(depth) + i]))
      return refuse(ReasonCode::kOperands, "updates " + ir::to_string(upd.shape) +
                                               " do not match output " + ir::to_string(y.shape));
  if (auto v = ir::const_ints(g, n.inputs[0])) {
    for (const auto& row : index_rows(*v, static_cast<size_t>(depth)))
      for (size_t d = 0; d < row.size(); ++d)
        if (y.shape[d] >= 0 && (row[d] < 0 || row[d] >= y.shape[d]))
          return refuse(ReasonCode::kOperands, "index " + std::to_string(row[d]) +
                                                   " is outside dimension " + std::to_string(d) +
                                                   " of size " + std::to_string(y.shape[d]));
  }
  return {};
}

// True when the indices name every element at most once: one index row
// (a static shape [..., depth] of one row, whatever its value), or constant
// rows that differ.
bool distinct_constant_indices(const ir::Graph& g, const ir::Node& n) {
  const ir::Shape& shape = g.tensor(n.inputs[0]).shape;
  if (!shape.empty()) {
    const auto rows = ir::element_count(ir::Shape(shape.begin(), shape.end() - 1));
    if (rows && *rows <= 1) return true;
  }
  auto v = ir::const_ints(g, n.inputs[0]);
  if (!v) return false;
  auto rows = index_rows(*v, static_cast<size_t>(g.tensor(n.inputs[0]).shape.back()));
  std::sort(rows.begin(), rows.end());
  return std::adjacent_find(rows.begin(), rows.end()) == rows.end();
}

Status lower_scatter_nd(LowerContext& ctx, const ir::Node& n) {
  const bool add = ctx.opset() >= kScatterAddOpset;
  if (!add && !distinct_constant_indices(ctx.graph(), n))
    return ctx.unsupported(
        n, {ReasonCode::kOpset, "indices that may repeat need ScatterND reduction 'add' (opset " +
                                    std::to_string(kScatterAddOpset) + ")"});
  if (auto st = check_shape_operand(ctx, n, 2); !st) return st;
  const DataType type = ctx.tensor(n.inputs[1]).dtype;
  TensorId zero = ctx.const_scalar(n.name + "/zero", type, 0.0);
  TensorId zeros = ctx.temp(n.name + "/zeros", type);
  ctx.emit(n, "Expand", {zero, as_int64(ctx, n, 2, "shape")}, {zeros}, "Expand");
  TensorId indices = as_int64(ctx, n, 0, "indices");
  ir::Node& s = ctx.emit(n, "ScatterND", {zeros, indices, n.inputs[1]}, {n.outputs[0]});
  if (add) s.attrs.set("reduction", std::string("add"));
  return ok_status();
}

// SCATTER_ND: the constant shape (input 2), checked against indices and updates.
InferredShapes infer_scatter_nd(const ir::Graph& g, const ir::Node& n) {
  auto idx = input_shape(g, n, 0);
  auto updates = input_shape(g, n, 1);
  auto shape = const_operand(g, n, 2, true, 1);
  if (!idx || !updates || !shape || n.outputs.size() != 1 || idx->empty() || updates->empty() ||
      !is_index_type(g.tensor(n.inputs[0]).dtype) ||
      g.tensor(n.inputs[0]).dtype != g.tensor(n.inputs[2]).dtype)
    return std::nullopt;
  for (int64_t d : *shape)
    if (!dim_value(d)) return std::nullopt;
  // TFLite's CheckShapes: updates = indices[:-1] + shape[indices[-1]:].
  const size_t outer = idx->size() - 1;
  const int64_t depth = idx->back();
  if (depth > static_cast<int64_t>(shape->size()) || updates->size() < outer ||
      updates->size() - outer != shape->size() - static_cast<size_t>(depth))
    return std::nullopt;
  for (size_t i = 0; i < outer; ++i)
    if ((*idx)[i] != (*updates)[i]) return std::nullopt;
  for (size_t i = 0; i + outer < updates->size(); ++i)
    if ((*updates)[outer + i] != (*shape)[static_cast<size_t>(depth) + i]) return std::nullopt;
  return one_shape(Shape(shape->begin(), shape->end()));
}

// ---- RANGE --------------------------------------------------------------------

Check check_range(const ir::Graph& g, const ir::Node& n) {
  DataType t = g.tensor(n.outputs[0]).dtype;
  if (t != DataType::kInt32 && t != DataType::kFloat32 && t != DataType::kInt64)
    return refuse(ReasonCode::kType,
                  "output type " + type_name(t) + " (int32, int64 or float32 expected)");
  for (size_t i = 0; i < 3; ++i) {
    const ir::Tensor& x = g.tensor(n.inputs[i]);
    if (x.dtype != t)
      return refuse(ReasonCode::kType,
                    "input '" + x.name + "' is " + type_name(x.dtype) + ", output " + type_name(t));
    if (ir::element_count(x.shape).value_or(0) != 1)
      return refuse(ReasonCode::kOperands, "input '" + x.name + "' must be a scalar");
  }
  if (g.tensor(n.inputs[2]).is_const() && g.tensor(n.inputs[2]).data->stored_type == t) {
    const ir::Tensor& d = g.tensor(n.inputs[2]);
    bool zero = t == DataType::kFloat32 ? d.data->as<float>()[0] == 0.0f
                                        : (*ir::const_ints(g, n.inputs[2]))[0] == 0;
    if (zero) return refuse(ReasonCode::kOperands, "delta is 0");
  }
  return {};
}

// A scalar (rank-0) view of a one-element input.
TensorId scalar(LowerContext& ctx, const ir::Node& n, size_t i) {
  ir::Graph& g = ctx.graph();
  TensorId id = n.inputs[i];
  if (g.tensor(id).rank() == 0) return id;
  if (g.tensor(id).is_const()) {
    ir::Tensor s = g.tensor(id);
    s.shape = {};
    s.layout = {};
    return g.add_tensor(std::move(s));
  }
  TensorId out = ctx.temp(n.name + "/scalar_" + std::to_string(i), g.tensor(id).dtype);
  ctx.emit(n, "Reshape", {id, ctx.const_i64(n.name + "/scalar_shape", {}, Shape{0})}, {out},
           "Reshape_" + std::to_string(i));
  return out;
}

Status lower_range(LowerContext& ctx, const ir::Node& n) {
  // With run-time operands the length is only known when the graph runs.
  ir::Graph& g = ctx.graph();
  for (size_t i = 0; i < 3; ++i)
    if (!g.tensor(n.inputs[i]).is_const() && g.tensor(n.outputs[0]).rank() == 1)
      g.tensor(n.outputs[0]).shape[0] = -1;
  std::vector<TensorId> in;
  for (size_t i = 0; i < 3; ++i) in.push_back(scalar(ctx, n, i));
  ctx.emit(n, "Range", in, {n.outputs[0]});
  return ok_status();
}

// RANGE: [count] of constant integer start, limit and delta.
InferredShapes infer_range(const ir::Graph& g, const ir::Node& n) {
  // Integers only: a float range's length depends on float rounding.
  if (n.inputs.size() != 3 || n.outputs.size() != 1) return std::nullopt;
  const ir::DataType type = g.tensor(n.outputs[0]).dtype;
  if (!is_index_type(type)) return std::nullopt;
  int64_t v[3];
  for (size_t i = 0; i < 3; ++i) {
    auto c = const_operand(g, n, i, true, -1);
    if (!c || c->size() != 1 || g.tensor(n.inputs[i]).dtype != type) return std::nullopt;
    v[i] = (*c)[0];
  }
  const int64_t start = v[0], limit = v[1], delta = v[2];
  if (delta == 0 || !((start >= limit && delta < 0) || (start <= limit && delta > 0)))
    return std::nullopt;
  // (|limit - start| + |delta| - 1) / |delta| in T: where that overflows T
  // TFLite's size is undefined.
  const int64_t top = type == ir::DataType::kInt32 ? kMaxDim : std::numeric_limits<int64_t>::max();
  int64_t span = 0, sum = 0;
  if (__builtin_sub_overflow(limit, start, &span) || span == std::numeric_limits<int64_t>::min() ||
      delta == std::numeric_limits<int64_t>::min())
    return std::nullopt;
  span = std::abs(span);
  const int64_t step = std::abs(delta);
  if (__builtin_add_overflow(span, step - 1, &sum) || sum > top) return std::nullopt;
  const int64_t count = sum / step;
  if (!dim_value(count)) return std::nullopt;
  return one_shape({count});
}

// ---- WHERE --------------------------------------------------------------------

Check check_where(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 1)
    return refuse(ReasonCode::kNotImplemented,
                  "only the one-input form (coordinates of true elements)");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input of unknown rank");
  DataType t = g.tensor(n.outputs[0]).dtype;
  if (t != DataType::kInt64 && t != DataType::kInt32)
    return refuse(ReasonCode::kType, "output type " + type_name(t));
  return {};
}

Status lower_where(LowerContext& ctx, const ir::Node& n) {
  ir::Graph& g = ctx.graph();
  // The number of true elements is data-dependent, whatever the model declares.
  if (g.tensor(n.outputs[0]).rank() == 2) g.tensor(n.outputs[0]).shape[0] = -1;
  TensorId nz = ctx.temp(n.name + "/nonzero", DataType::kInt64);
  ctx.emit(n, "NonZero", {n.inputs[0]}, {nz}, "NonZero");
  const bool cast = g.tensor(n.outputs[0]).dtype != DataType::kInt64;
  TensorId tr = cast ? ctx.temp(n.name + "/coords", DataType::kInt64) : n.outputs[0];
  ir::Node& t = ctx.emit(n, "Transpose", {nz}, {tr}, cast ? "Transpose" : "");
  t.attrs.set("perm", std::vector<int64_t>{1, 0});
  if (cast) {
    ir::Node& c = ctx.emit(n, "Cast", {tr}, {n.outputs[0]});
    c.attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt32)});
  }
  return ok_status();
}

// ---- BATCH_MATMUL -------------------------------------------------------------

Check check_batch_matmul(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& a = g.tensor(n.inputs[0]);
  const ir::Tensor& b = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (a.dtype != DataType::kFloat32 || b.dtype != DataType::kFloat32 ||
      y.dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "only float32 operands (" + type_name(a.dtype) + " x " +
                                         type_name(b.dtype) + ")");
  if (!a.has_rank || !b.has_rank || a.rank() < 2 || b.rank() < 2)
    return refuse(ReasonCode::kShape, "operands must have rank >= 2");
  const int64_t ka = a.shape[a.rank() - (n.attrs.get_int("adj_x") ? 2 : 1)];
  const int64_t kb = b.shape[b.rank() - (n.attrs.get_int("adj_y") ? 1 : 2)];
  if (ka >= 0 && kb >= 0 && ka != kb)
    return refuse(ReasonCode::kOperands, "inner dimensions differ (" + std::to_string(ka) + " vs " +
                                             std::to_string(kb) + ")");
  return {};
}

// Operand i with its last two axes swapped: constants in the initializer,
// run-time values with a Transpose.
TensorId swap_last_two(LowerContext& ctx, const ir::Node& n, size_t i, const char* tag) {
  const ir::Tensor& x = ctx.graph().tensor(n.inputs[i]);
  const size_t r = x.rank();
  Perm p = ir::identity_perm(r);
  std::swap(p[r - 1], p[r - 2]);
  if (x.is_const()) return ctx.constant_in_layout(n.inputs[i], p, "adjoint of " + n.name + ":");
  TensorId out = ctx.temp(n.name + "/" + tag, x.dtype);
  ir::Node& t = ctx.emit(n, "Transpose", {n.inputs[i]}, {out}, tag);
  t.attrs.set("perm", to_i64(p));
  return out;
}

Status lower_batch_matmul(LowerContext& ctx, const ir::Node& n) {
  TensorId a = n.attrs.get_int("adj_x") ? swap_last_two(ctx, n, 0, "adj_x") : n.inputs[0];
  TensorId b = n.attrs.get_int("adj_y") ? swap_last_two(ctx, n, 1, "adj_y") : n.inputs[1];
  ctx.emit(n, "MatMul", {a, b}, {n.outputs[0]});
  return ok_status();
}

void read_batch_matmul_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_BatchMatMulOptions();
  a.set("adj_x", int64_t{o && o->adj_x() ? 1 : 0});
  a.set("adj_y", int64_t{o && o->adj_y() ? 1 : 0});
}

// BATCH_MATMUL: broadcast batch dimensions, [rows, cols] after adj_x / adj_y.
InferredShapes infer_batch_matmul(const ir::Graph& g, const ir::Node& n) {
  auto lhs = input_shape(g, n, 0);
  auto rhs = input_shape(g, n, 1);
  if (!lhs || !rhs || n.outputs.size() != 1 || lhs->size() < 2 || rhs->size() < 2 ||
      lhs->size() > 5 || rhs->size() > 5)
    return std::nullopt;
  const size_t rank = std::max(lhs->size(), rhs->size());
  lhs->insert(lhs->begin(), rank - lhs->size(), 1);
  rhs->insert(rhs->begin(), rank - rhs->size(), 1);
  Shape s;
  for (size_t i = 0; i + 2 < rank; ++i) {
    const int64_t l = (*lhs)[i], r = (*rhs)[i];
    if (l != r && l != 1 && r != 1) return std::nullopt;
    s.push_back(l == 1 ? r : l);
  }
  const bool adj_x = n.attrs.get_int("adj_x") != 0, adj_y = n.attrs.get_int("adj_y") != 0;
  const int64_t rows = (*lhs)[adj_x ? rank - 1 : rank - 2];
  const int64_t inner_l = (*lhs)[adj_x ? rank - 2 : rank - 1];
  const int64_t inner_r = (*rhs)[adj_y ? rank - 1 : rank - 2];
  const int64_t cols = (*rhs)[adj_y ? rank - 2 : rank - 1];
  if (inner_l != inner_r) return std::nullopt;
  s.push_back(rows);
  s.push_back(cols);
  return one_shape(std::move(s));
}

}  // namespace

OpEntry broadcast_to() {
  return {.read = {.min_inputs = 2},
          .infer_shapes = infer_broadcast_to,
          .check = check_broadcast_to,
          .lower = lower_broadcast_to,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Expand",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant or run-time shape"}};
}

OpEntry gather_nd() {
  return {.read = {.min_inputs = 2},
          .infer_shapes = infer_gather_nd,
          .check = check_gather_nd,
          .lower = lower_gather_nd,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "GatherND (+ Cast of int32 indices)",
                  .dtypes = "float32, int32, int64",
                  .notes = "batch_dims 0"}};
}

OpEntry scatter_nd() {
  return {.read = {.min_inputs = 3},
          .infer_shapes = infer_scatter_nd,
          .check = check_scatter_nd,
          .lower = lower_scatter_nd,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Expand + ScatterND (reduction 'add')",
                  .dtypes = "float32, int32, int64 (indices int32/int64)",
                  .notes = "duplicate indices sum (opset 16+); at opset 13-15 constant distinct "
                           "indices or a single index row only"}};
}

OpEntry range() {
  return {.read = {.min_inputs = 3},
          .infer_shapes = infer_range,
          .check = check_range,
          .lower = lower_range,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Range", .dtypes = "float32, int32, int64"}};
}

OpEntry where() {
  return {.check = check_where,
          .lower = lower_where,
          .doc = {.onnx = "NonZero + Transpose",
                  .dtypes = "bool, float32, int32, int64 (-> int32/int64)",
                  .notes = "one input only (coordinates of the true elements)"}};
}

OpEntry batch_matmul() {
  return {.read = {.min_inputs = 2, .options = read_batch_matmul_options},
          .infer_shapes = infer_batch_matmul,
          .check = check_batch_matmul,
          .lower = lower_batch_matmul,
          .quantization = {.exact = exact::batch_matmul_exact()},
          .doc = {.onnx = "MatMul (+ Transpose of the last two axes for adj_x/adj_y)",
                  .notes = "adjoint constants are transposed in the initializer; batch dims "
                           "broadcast"}};
}

}  // namespace lite2onnx::ops::data
