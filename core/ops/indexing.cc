// Ops that place or pick elements by index or value: ONE_HOT, SPARSE_TO_DENSE,
// MATRIX_DIAG, MATRIX_SET_DIAG, BROADCAST_ARGS, BUCKETIZE, DYNAMIC_UPDATE_SLICE,
// UNIQUE, RANK and EMBEDDING_LOOKUP_SPARSE. All work in TFLite order
// (Terminate). Masks are built at run time from Range and Equal, so no
// constant grows with the tensors.
#include "core/ops/indexing.h"

#include <numeric>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::indexing {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

TensorId gather_scalars(NodeBuilder& b, const ir::Node& n, size_t first, size_t count) {
  std::vector<TensorId> parts;
  for (size_t i = 0; i < count; ++i)
    parts.push_back(
        b.reshape(b.cast(n.inputs[first + i], DataType::kInt64), {1}, DataType::kInt64));
  if (parts.size() == 1) return parts[0];
  return b.add("Concat", parts, DataType::kInt64, {{"axis", int64_t{0}}});
}

void update_slice(NodeBuilder& b, TensorId operand, const Shape& operand_shape, TensorId update,
                  const Shape& update_shape, TensorId start, TensorId out) {
  const size_t r = operand_shape.size();
  std::vector<int64_t> room(r);
  for (size_t i = 0; i < r; ++i) room[i] = operand_shape[i] - update_shape[i];
  TensorId low = b.add("Min", {start, b.ints(room)}, DataType::kInt64);
  TensorId begin = b.add("Max", {low, b.ints({0}, Shape{})}, DataType::kInt64);
  // The coordinates of every update element, [update shape..., rank].
  std::vector<int64_t> full(update_shape.begin(), update_shape.end());
  full.push_back(1);
  std::vector<TensorId> axes;
  for (size_t k = 0; k < r; ++k) {
    TensorId line = b.add(
        "Range", {b.ints({0}, Shape{}), b.ints({update_shape[k]}, Shape{}), b.ints({1}, Shape{})},
        DataType::kInt64);
    std::vector<int64_t> shape(r + 1, 1);
    shape[k] = update_shape[k];
    axes.push_back(b.add("Expand", {b.reshape(line, shape, DataType::kInt64), b.ints(full)},
                         DataType::kInt64));
  }
  TensorId grid =
      r == 1 ? axes[0]
             : b.add("Concat", axes, DataType::kInt64, {{"axis", static_cast<int64_t>(r)}});
  TensorId indices = b.add("Add", {grid, begin}, DataType::kInt64);
  b.into("ScatterND", {operand, indices, update}, {out});
}

namespace {

std::string type_name(DataType t) { return ir::to_string(t); }

Check present(const ir::Graph& g, const ir::Node& n, size_t inputs, size_t outputs = 1) {
  if (n.inputs.size() != inputs || n.outputs.size() != outputs)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs and " +
                                             std::to_string(outputs) + " output(s)");
  for (size_t i = 0; i < inputs; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  return {};
}

Check index_input(const ir::Graph& g, const ir::Node& n, size_t i, const char* what) {
  if (!is_index_type(g.tensor(n.inputs[i]).dtype))
    return refuse(ReasonCode::kType, std::string(what) + " must be int32 or int64");
  return {};
}

// Range(0, count) as int64; `count` an int64 scalar tensor.
TensorId range(NodeBuilder& b, TensorId count) {
  return b.add("Range", {b.ints({0}, Shape{}), count, b.ints({1}, Shape{})}, DataType::kInt64);
}

TensorId scalar_of(NodeBuilder& b, int64_t v) { return b.ints({v}, Shape{}); }

// [rows, cols] bool, true on the diagonal.
TensorId diagonal_mask(NodeBuilder& b, int64_t rows, int64_t cols) {
  TensorId r = b.reshape(range(b, scalar_of(b, rows)), {rows, 1}, DataType::kInt64);
  TensorId c = range(b, scalar_of(b, cols));
  return b.add("Equal", {r, c}, DataType::kBool);
}

// ---- ONE_HOT --------------------------------------------------------------------------

void read_one_hot_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_OneHotOptions();
  a.set("axis", int64_t{o ? o->axis() : -1});
}

Check check_one_hot(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 4)) return r;
  if (auto r = index_input(g, n, 0, "indices")) return r;
  if (auto r = index_input(g, n, 1, "depth")) return r;
  if (ir::element_count(g.tensor(n.inputs[1]).shape) != 1)
    return refuse(ReasonCode::kOperands, "depth must be a scalar");
  const DataType t = g.tensor(n.inputs[2]).dtype;
  if (g.tensor(n.inputs[3]).dtype != t || g.tensor(n.outputs[0]).dtype != t)
    return refuse(ReasonCode::kOperands, "on, off and output types differ");
  for (size_t i : {2, 3})
    if (ir::element_count(g.tensor(n.inputs[i]).shape) != 1)
      return refuse(ReasonCode::kOperands, "on_value and off_value must be scalars");
  const int64_t rank = static_cast<int64_t>(g.tensor(n.inputs[0]).rank());
  const int64_t axis = n.attrs.get_int("axis");
  if (axis < -1 || axis > rank) return refuse(ReasonCode::kOperands, "axis out of range");
  return {};
}

// Equal(indices unsqueezed at the axis, Range(depth) along it): out-of-range
// indices, negative ones included, match nothing and give off values, as in
// TFLite (ONNX OneHot counts negative indices from the end).
Status lower_one_hot(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const size_t in_rank = ctx.tensor(n.inputs[0]).rank();
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis = static_cast<int64_t>(in_rank);
  TensorId idx =
      b.add("Unsqueeze", {b.cast(n.inputs[0], DataType::kInt64), b.ints({axis})}, DataType::kInt64);
  TensorId depth = b.reshape(b.cast(n.inputs[1], DataType::kInt64), {}, DataType::kInt64);
  std::vector<int64_t> shape(in_rank + 1, 1);
  shape[static_cast<size_t>(axis)] = -1;
  TensorId line = b.reshape(range(b, depth), shape, DataType::kInt64);
  TensorId mask = b.add("Equal", {idx, line}, DataType::kBool);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  b.into("Where", {mask, b.reshape(n.inputs[2], {}, t), b.reshape(n.inputs[3], {}, t)},
         {n.outputs[0]});
  return ok_status();
}

// ---- SPARSE_TO_DENSE ------------------------------------------------------------------

Check check_sparse_to_dense(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 4)) return r;
  if (auto r = index_input(g, n, 0, "indices")) return r;
  if (auto r = index_input(g, n, 1, "output_shape")) return r;
  const ir::Tensor& idx = g.tensor(n.inputs[0]);
  const ir::Tensor& shape = g.tensor(n.inputs[1]);
  if (!ir::static_shape(idx) || idx.rank() > 2)
    return refuse(ReasonCode::kShape, "indices need a static shape of rank 0 to 2");
  if (shape.rank() != 1 || shape.shape[0] < 1)
    return refuse(ReasonCode::kShape, "output_shape must be a static 1-D tensor");
  const int64_t depth = idx.rank() == 2 ? idx.shape[1] : 1;
  if (depth != shape.shape[0])
    return refuse(ReasonCode::kOperands, "index depth differs from the output rank");
  const DataType t = g.tensor(n.inputs[2]).dtype;
  if (g.tensor(n.inputs[3]).dtype != t || g.tensor(n.outputs[0]).dtype != t)
    return refuse(ReasonCode::kOperands, "values, default and output types differ");
  const int64_t count = idx.rank() == 0 ? 1 : idx.shape[0];
  const auto values = ir::element_count(g.tensor(n.inputs[2]).shape);
  if (!values || (*values != 1 && *values != count))
    return refuse(ReasonCode::kOperands, "values must be a scalar or one per index");
  if (ir::element_count(g.tensor(n.inputs[3]).shape) != std::optional<int64_t>{1})
    return refuse(ReasonCode::kOperands, "default_value must be a scalar");
  return {};
}

// ScatterND of the values into the default value expanded to the shape
// (repeated indices: the last one wins, as in TFLite's loop).
Status lower_sparse_to_dense(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const ir::Tensor& idx = ctx.tensor(n.inputs[0]);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  const int64_t depth = idx.rank() == 2 ? idx.shape[1] : 1;
  const int64_t count = idx.rank() == 0 ? 1 : idx.shape[0];
  TensorId shape = b.cast(n.inputs[1], DataType::kInt64);
  TensorId dense = b.add("Expand", {b.reshape(n.inputs[3], {}, t), shape}, t);
  TensorId indices =
      b.reshape(b.cast(n.inputs[0], DataType::kInt64), {count, depth}, DataType::kInt64);
  TensorId values = b.add("Expand", {b.reshape(n.inputs[2], {-1}, t), b.ints({count})}, t);
  b.into("ScatterND", {dense, indices, values}, {n.outputs[0]});
  return ok_status();
}

// ---- MATRIX_DIAG, MATRIX_SET_DIAG -----------------------------------------------------

Check check_matrix_diag(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 1)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.rank() < 1 || x.shape.back() < 0)
    return refuse(ReasonCode::kShape, "needs rank >= 1 and a static last dimension");
  return {};
}

Status lower_matrix_diag(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const int64_t d = x.shape.back();
  TensorId row = b.add("Unsqueeze", {n.inputs[0], b.ints({-2})}, x.dtype);
  b.into("Where", {diagonal_mask(b, d, d), row, b.scalar(x.dtype, 0)}, {n.outputs[0]});
  return ok_status();
}

Check check_matrix_set_diag(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 2)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& d = g.tensor(n.inputs[1]);
  if (x.rank() < 2 || x.shape[x.rank() - 1] < 0 || x.shape[x.rank() - 2] < 0)
    return refuse(ReasonCode::kShape, "needs rank >= 2 and static last two dimensions");
  if (d.rank() + 1 != x.rank() || d.dtype != x.dtype)
    return refuse(ReasonCode::kOperands, "diagonal of another rank or type");
  return {};
}

// The diagonal stands along the shorter of the two axes.
Status lower_matrix_set_diag(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
  TensorId diag = b.add("Unsqueeze", {n.inputs[1], b.ints({rows <= cols ? -1 : -2})}, x.dtype);
  b.into("Where", {diagonal_mask(b, rows, cols), diag, n.inputs[0]}, {n.outputs[0]});
  return ok_status();
}

// ---- BROADCAST_ARGS -------------------------------------------------------------------

Check check_broadcast_args(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 2)) return r;
  for (size_t i = 0; i < 2; ++i) {
    const ir::Tensor& s = g.tensor(n.inputs[i]);
    if (auto r = index_input(g, n, i, "shapes")) return r;
    if (s.rank() != 1 || s.shape[0] < 0)
      return refuse(ReasonCode::kShape, "shapes must be 1-D of static length");
    if (s.dtype != g.tensor(n.outputs[0]).dtype)
      return refuse(ReasonCode::kOperands, "shapes and output of different types");
  }
  return {};
}

// Both shapes padded with leading 1s to one length; where one is 1 the other wins.
Status lower_broadcast_args(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  const int64_t la = ctx.tensor(n.inputs[0]).shape[0], lb = ctx.tensor(n.inputs[1]).shape[0];
  const int64_t len = std::max(la, lb);
  auto padded = [&](TensorId s, int64_t l) {
    if (l == len) return s;
    TensorId ones = b.add("Expand", {b.scalar(t, 1), b.ints({len - l})}, t);
    return b.add("Concat", {ones, s}, t, {{"axis", int64_t{0}}});
  };
  TensorId a = padded(n.inputs[0], la), c = padded(n.inputs[1], lb);
  TensorId one = b.add("Equal", {a, b.scalar(t, 1)}, DataType::kBool);
  b.into("Where", {one, c, a}, {n.outputs[0]});
  return ok_status();
}

// ---- BUCKETIZE ------------------------------------------------------------------------

void read_bucketize_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_BucketizeOptions();
  std::vector<float> v;
  if (o && o->boundaries()) v.assign(o->boundaries()->begin(), o->boundaries()->end());
  a.set("boundaries", v);
}

Check check_bucketize(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 1)) return r;
  const DataType t = g.tensor(n.inputs[0]).dtype;
  if (t != DataType::kFloat32 && t != DataType::kInt32 && t != DataType::kInt64)
    return refuse(ReasonCode::kType,
                  "type " + type_name(t) + " (supported: float32, int32, int64)");
  if (g.tensor(n.outputs[0]).dtype != DataType::kInt32)
    return refuse(ReasonCode::kType, "output must be int32");
  const auto bounds = n.attrs.get_floats("boundaries");
  if (!std::is_sorted(bounds.begin(), bounds.end()))
    return refuse(ReasonCode::kOperands, "boundaries must be sorted");
  return {};
}

// The count of boundaries <= x (std::upper_bound), compared in float as the kernel does.
Status lower_bucketize(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const auto bounds = n.attrs.get_floats("boundaries");
  TensorId x = b.cast(n.inputs[0], DataType::kFloat32);
  if (bounds.empty()) {
    b.into("Expand", {b.scalar(DataType::kInt32, 0), b.add("Shape", {x}, DataType::kInt64)},
           {n.outputs[0]});
    return ok_status();
  }
  TensorId col = b.add("Unsqueeze", {x, b.ints({-1})}, DataType::kFloat32);
  TensorId above = b.add("GreaterOrEqual", {col, b.floats(bounds)}, DataType::kBool);
  b.into("ReduceSum", {b.cast(above, DataType::kInt32), b.ints({-1})}, {n.outputs[0]},
         {{"keepdims", int64_t{0}}});
  return ok_status();
}

// ---- DYNAMIC_UPDATE_SLICE -------------------------------------------------------------

Check check_dynamic_update_slice(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 3)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  auto xs = ir::static_shape(x), us = ir::static_shape(g.tensor(n.inputs[1]));
  if (!xs || !us || xs->size() != us->size())
    return refuse(ReasonCode::kShape, "operand and update need static shapes of one rank");
  for (size_t i = 0; i < xs->size(); ++i)
    if ((*us)[i] > (*xs)[i]) return refuse(ReasonCode::kOperands, "update larger than the operand");
  if (auto r = index_input(g, n, 2, "start indices")) return r;
  const ir::Tensor& s = g.tensor(n.inputs[2]);
  if (s.rank() != 1 || s.shape[0] != static_cast<int64_t>(xs->size()))
    return refuse(ReasonCode::kOperands, "one start index per operand axis expected");
  if (g.tensor(n.inputs[1]).dtype != x.dtype)
    return refuse(ReasonCode::kOperands, "update of another type than the operand");
  return {};
}

Status lower_dynamic_update_slice(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  update_slice(b, n.inputs[0], ctx.tensor(n.inputs[0]).shape, n.inputs[1],
               ctx.tensor(n.inputs[1]).shape, b.cast(n.inputs[2], DataType::kInt64), n.outputs[0]);
  return ok_status();
}

// ---- UNIQUE, RANK ---------------------------------------------------------------------

void read_unique_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_UniqueOptions();
  a.set("idx_out_type", int64_t{o ? static_cast<int64_t>(o->idx_out_type()) : 2});
}

Check check_unique(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 1, 2)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.rank() != 1) return refuse(ReasonCode::kShape, "input must be 1-D");
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64 &&
      x.dtype != DataType::kInt8 && x.dtype != DataType::kUInt8 && x.dtype != DataType::kInt16)
    return refuse(ReasonCode::kType, "type " + type_name(x.dtype) +
                                         " (supported: float32, int64, int32, int16, int8, uint8)");
  if (!is_index_type(g.tensor(n.outputs[1]).dtype))
    return refuse(ReasonCode::kType, "idx must be int32 or int64");
  return {};
}

// ONNX Unique, unsorted: values in the order they first occur, as TFLite's.
// ONNX Runtime's kernel takes float, int64 and int8: other integers via int64.
Status lower_unique(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType t = ctx.tensor(n.inputs[0]).dtype;
  const bool direct = t == DataType::kFloat32 || t == DataType::kInt64 || t == DataType::kInt8;
  const DataType work = direct ? t : DataType::kInt64;
  TensorId x = direct ? n.inputs[0] : b.cast(n.inputs[0], work);
  TensorId y = direct ? n.outputs[0] : b.temp(work);
  TensorId inverse = b.temp(DataType::kInt64);
  b.into("Unique", {x}, {y, b.temp(DataType::kInt64), inverse, b.temp(DataType::kInt64)},
         {{"sorted", int64_t{0}}});
  if (!direct) b.into("Cast", {y}, {n.outputs[0]}, {{"to", int64_t{ir::onnx_type_code(t)}}});
  b.into("Cast", {inverse}, {n.outputs[1]},
         {{"to", int64_t{ir::onnx_type_code(ctx.tensor(n.outputs[1]).dtype)}}});
  return ok_status();
}

Check check_rank(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 1)) return r;
  if (!g.tensor(n.inputs[0]).has_rank) return refuse(ReasonCode::kShape, "unknown rank");
  if (!is_index_type(g.tensor(n.outputs[0]).dtype))
    return refuse(ReasonCode::kType, "output must be int32 or int64");
  return {};
}

Status lower_rank(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  TensorId r = ctx.const_scalar(n.name + "/rank", y.dtype,
                                static_cast<double>(ctx.tensor(n.inputs[0]).rank()));
  TensorId value = y.rank() == 0 ? r : ctx.const_i64(n.name + "/shape", {1}, Shape{1});
  if (y.rank() == 0) {
    ctx.emit(n, "Identity", {r}, {n.outputs[0]});
  } else {
    ctx.emit(n, "Reshape", {r, value}, {n.outputs[0]});
  }
  return ok_status();
}

// ---- EMBEDDING_LOOKUP_SPARSE ----------------------------------------------------------

void read_els_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_EmbeddingLookupSparseOptions();
  a.set("combiner", int64_t{o ? static_cast<int64_t>(o->combiner()) : 0});
}

Check check_els(const ir::Graph& g, const ir::Node& n) {
  if (auto r = present(g, n, 5)) return r;
  for (size_t i = 0; i < 3; ++i)
    if (g.tensor(n.inputs[i]).dtype != DataType::kInt32)
      return refuse(ReasonCode::kType, "ids, indices and dense_shape must be int32");
  if (g.tensor(n.inputs[3]).dtype != DataType::kFloat32 ||
      g.tensor(n.inputs[4]).dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "weights and params must be float32");
  if (auto r = require_const(g, n, 2, "dense_shape")) return r;
  const ir::Tensor& idx = g.tensor(n.inputs[1]);
  const ir::Tensor& params = g.tensor(n.inputs[4]);
  auto dense = ir::const_ints(g, n.inputs[2]);
  if (!ir::static_shape(idx) || idx.rank() != 2 || idx.shape[1] < 2)
    return refuse(ReasonCode::kShape, "indices must be static [n, rank >= 2]");
  if (!dense || static_cast<int64_t>(dense->size()) != idx.shape[1])
    return refuse(ReasonCode::kOperands, "dense_shape must hold one size per index column");
  for (int64_t d : *dense)
    if (d < 0) return refuse(ReasonCode::kOperands, "negative dense_shape");
  int64_t rows = 1;  // the output rows, kept within an int as TFLite's kernel keeps them
  for (size_t k = 0; k + 1 < dense->size(); ++k) {
    rows *= (*dense)[k];
    if (!dim_value(rows)) return refuse(ReasonCode::kShape, "dense_shape holds too many rows");
  }
  if (params.rank() < 2 || !ir::static_shape(params))
    return refuse(ReasonCode::kShape, "params need a static shape of rank >= 2");
  if (g.tensor(n.inputs[0]).shape != Shape{idx.shape[0]} ||
      g.tensor(n.inputs[3]).shape != Shape{idx.shape[0]})
    return refuse(ReasonCode::kOperands, "ids and weights must be [n]");
  if (n.attrs.get_int("combiner") > 2) return refuse(ReasonCode::kOption, "unknown combiner");
  return {};
}

// Each lookup's output row (its index's leading columns, row-major in
// dense_shape) as a [rows, n] mask; the weighted rows summed by MatMul, then
// divided by the weight sum (MEAN) or the root of the squares' sum (SQRTN)
// where a row has lookups, as TFLite's kernel divides.
Status lower_els(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32;
  const auto dense = *ir::const_ints(ctx.graph(), n.inputs[2]);
  const Shape& params = ctx.tensor(n.inputs[4]).shape;
  const int64_t lookups = ctx.tensor(n.inputs[1]).shape[0];
  const size_t lead = dense.size() - 1;
  std::vector<int64_t> strides(lead);
  int64_t rows = 1;
  for (size_t k = lead; k-- > 0;) {
    strides[k] = rows;
    rows *= dense[k];
  }
  int64_t width = 1;
  for (size_t k = 1; k < params.size(); ++k) width *= params[k];
  TensorId idx = b.slice(b.cast(n.inputs[1], DataType::kInt64), 1, 0, static_cast<int64_t>(lead),
                         DataType::kInt64);
  TensorId bucket =
      b.add("ReduceSum", {b.add("Mul", {idx, b.ints(strides)}, DataType::kInt64), b.ints({1})},
            DataType::kInt64, {{"keepdims", int64_t{0}}});
  TensorId slots = b.reshape(range(b, scalar_of(b, rows)), {rows, 1}, DataType::kInt64);
  TensorId mask = b.cast(b.add("Equal", {slots, bucket}, DataType::kBool), f);
  TensorId rows_of = b.add("Gather", {n.inputs[4], n.inputs[0]}, f, {{"axis", int64_t{0}}});
  TensorId w = b.reshape(n.inputs[3], {lookups, 1}, f);
  TensorId weighted = b.add("Mul", {b.reshape(rows_of, {lookups, width}, f), w}, f);
  TensorId sum = b.add("MatMul", {mask, weighted}, f);
  const int64_t combiner = n.attrs.get_int("combiner");
  std::vector<int64_t> out_shape(dense.begin(), dense.end() - 1);
  out_shape.insert(out_shape.end(), params.begin() + 1, params.end());
  if (combiner != 0) {
    TensorId divisor =
        combiner == 1 ? b.add("MatMul", {mask, w}, f)
                      : b.add("Sqrt", {b.add("MatMul", {mask, b.add("Mul", {w, w}, f)}, f)}, f);
    TensorId count = b.add("ReduceSum", {mask, b.ints({1})}, f, {{"keepdims", int64_t{1}}});
    TensorId used = b.add("Greater", {count, b.scalar(f, 0)}, DataType::kBool);
    sum = b.add("Where", {used, b.add("Div", {sum, divisor}, f), sum}, f);
  }
  b.into("Reshape", {sum, b.ints(out_shape)}, {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry one_hot() {
  return {.read = {.min_inputs = 4, .options = read_one_hot_options},
          .check = check_one_hot,
          .lower = lower_one_hot,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Unsqueeze, Range, Equal, Where",
                  .dtypes = "any on/off type (int32/int64 indices)",
                  .notes = "out-of-range and negative indices give off values, as TFLite"}};
}

OpEntry sparse_to_dense() {
  return {.read = {.min_inputs = 4},
          .check = check_sparse_to_dense,
          .lower = lower_sparse_to_dense,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Expand + ScatterND",
                  .dtypes = "any values (int32/int64 indices)",
                  .notes = "static index shape; a repeated index takes the last value"}};
}

OpEntry matrix_diag() {
  return {.check = check_matrix_diag,
          .lower = lower_matrix_diag,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Unsqueeze + Where (Range, Equal mask)", .dtypes = "any"}};
}

OpEntry matrix_set_diag() {
  return {.read = {.min_inputs = 2},
          .check = check_matrix_set_diag,
          .lower = lower_matrix_set_diag,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Unsqueeze + Where (Range, Equal mask)",
                  .dtypes = "any",
                  .notes = "static last two dimensions"}};
}

OpEntry broadcast_args() {
  return {.read = {.min_inputs = 2},
          .check = check_broadcast_args,
          .lower = lower_broadcast_args,
          .doc = {.onnx = "Expand, Concat, Equal, Where",
                  .dtypes = "int32, int64",
                  .notes = "shapes of static length"}};
}

OpEntry bucketize() {
  return {.read = {.options = read_bucketize_options},
          .check = check_bucketize,
          .lower = lower_bucketize,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Cast, Unsqueeze, GreaterOrEqual, ReduceSum",
                  .dtypes = "float32, int32, int64 (int32 out)"}};
}

OpEntry dynamic_update_slice() {
  return {.read = {.min_inputs = 3},
          .infer_shapes = infer_same_as_input,
          .check = check_dynamic_update_slice,
          .lower = lower_dynamic_update_slice,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "Range, Expand, Concat, Min, Max, Add, ScatterND",
                  .dtypes = "any (int32/int64 start indices)",
                  .notes = "run-time starts clamped to [0, dim - update dim], as TFLite; static "
                           "shapes"}};
}

OpEntry unique() {
  return {.read = {.options = read_unique_options},
          .check = check_unique,
          .lower = lower_unique,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Unique (sorted=0) + Cast",
                  .dtypes = "float32, int64, int32, int16, int8, uint8",
                  .notes = "values in order of first occurrence, as TFLite"}};
}

OpEntry rank() {
  return {.check = check_rank,
          .lower = lower_rank,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "a constant", .dtypes = "any (int32/int64 out)"}};
}

OpEntry embedding_lookup_sparse() {
  return {.read = {.min_inputs = 5, .options = read_els_options},
          .check = check_els,
          .lower = lower_els,
          .doc = {.onnx = "Gather, Mul, MatMul over a [rows, n] Equal mask, Div (MEAN, SQRTN)",
                  .notes = "constant dense_shape; SUM, MEAN, SQRTN"}};
}

}  // namespace lite2onnx::ops::indexing
