// The StableHLO shape builtins: RESHAPE, TRANSPOSE, BROADCAST_IN_DIM,
// CONCATENATE, SLICE, DYNAMIC_SLICE, DYNAMIC_UPDATE_SLICE, PAD and IOTA. All
// work in TFLite order (Terminate) on static shapes, which StableHLO exports
// have; each is the ONNX op of the same meaning, or a few of them.
#include <algorithm>
#include <numeric>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/indexing.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::stablehlo {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

std::vector<int64_t> longs(const flatbuffers::Vector<int64_t>* v) {
  return v ? std::vector<int64_t>(v->begin(), v->end()) : std::vector<int64_t>{};
}

Check static_io(const ir::Graph& g, const ir::Node& n, size_t inputs) {
  if (n.inputs.size() < inputs || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs");
  for (size_t i = 0; i < inputs; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  if (!ir::static_shape(g.tensor(n.inputs[0])) || !ir::static_shape(g.tensor(n.outputs[0])))
    return refuse(ReasonCode::kShape, "needs static operand and result shapes");
  return {};
}

const Shape& shape_of(const ir::Graph& g, TensorId t) { return g.tensor(t).shape; }

// ---- RESHAPE, TRANSPOSE ---------------------------------------------------------------

Check check_reshape(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 1)) return r;
  if (ir::element_count(shape_of(g, n.inputs[0])) != ir::element_count(shape_of(g, n.outputs[0])))
    return refuse(ReasonCode::kOperands, "operand and result have different element counts");
  return {};
}

Status lower_reshape(LowerContext& ctx, const ir::Node& n) {
  const Shape& s = ctx.tensor(n.outputs[0]).shape;
  ctx.emit(n, "Reshape",
           {n.inputs[0], ctx.const_i64(n.name + "/shape", std::vector<int64_t>(s.begin(), s.end()),
                                       Shape{static_cast<int64_t>(s.size())})},
           {n.outputs[0]});
  return ok_status();
}

void read_transpose_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloTransposeOptions();
  a.set("permutation", longs(o ? o->permutation() : nullptr));
}

bool is_permutation(std::vector<int64_t> p, size_t rank) {
  if (p.size() != rank) return false;
  std::sort(p.begin(), p.end());
  for (size_t i = 0; i < rank; ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Check check_transpose(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 1)) return r;
  if (!is_permutation(n.attrs.get_ints("permutation"), g.tensor(n.inputs[0]).rank()))
    return refuse(ReasonCode::kOperands, "permutation is not one of the operand's axes");
  return {};
}

Status lower_transpose(LowerContext& ctx, const ir::Node& n) {
  ir::Node& t = ctx.emit(n, "Transpose", {n.inputs[0]}, {n.outputs[0]});
  t.attrs.set("perm", n.attrs.get_ints("permutation"));
  return ok_status();
}

// ---- BROADCAST_IN_DIM -----------------------------------------------------------------

void read_broadcast_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloBroadcastInDimOptions();
  a.set("broadcast_dimensions", longs(o ? o->broadcast_dimensions() : nullptr));
}

Check check_broadcast_in_dim(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 1)) return r;
  const Shape& in = shape_of(g, n.inputs[0]);
  const Shape& out = shape_of(g, n.outputs[0]);
  const auto dims = n.attrs.get_ints("broadcast_dimensions");
  if (dims.size() != in.size())
    return refuse(ReasonCode::kOperands, "one broadcast dimension per operand axis expected");
  std::vector<bool> seen(out.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= static_cast<int64_t>(out.size()) || seen[static_cast<size_t>(d)])
      return refuse(ReasonCode::kOperands, "broadcast dimension out of range or repeated");
    seen[static_cast<size_t>(d)] = true;
    if (in[i] != 1 && in[i] != out[static_cast<size_t>(d)])
      return refuse(ReasonCode::kOperands, "operand dimension neither 1 nor the result's");
  }
  return {};
}

// Operand axes put in the order of their result axes, given the result's rank
// with unit axes between, then expanded.
Status lower_broadcast_in_dim(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  const Shape& in = ctx.tensor(n.inputs[0]).shape;
  const Shape& out = ctx.tensor(n.outputs[0]).shape;
  const auto dims = n.attrs.get_ints("broadcast_dimensions");
  std::vector<int64_t> order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
    return dims[static_cast<size_t>(a)] < dims[static_cast<size_t>(c)];
  });
  TensorId x = n.inputs[0];
  if (!std::is_sorted(order.begin(), order.end()))
    x = b.add("Transpose", {x}, t, {{"perm", order}});
  std::vector<int64_t> shape(out.size(), 1);
  for (size_t i = 0; i < dims.size(); ++i) shape[static_cast<size_t>(dims[i])] = in[i];
  x = b.reshape(x, shape, t);
  b.into("Expand", {x, b.ints(std::vector<int64_t>(out.begin(), out.end()))}, {n.outputs[0]});
  return ok_status();
}

// ---- CONCATENATE, SLICE ------------------------------------------------------------------

void read_concatenate_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloConcatenateOptions();
  a.set("dimension", int64_t{o ? o->dimension() : 0});
}

Check check_concatenate(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects inputs and one output");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
    if (g.tensor(n.inputs[i]).rank() != g.tensor(n.outputs[0]).rank())
      return refuse(ReasonCode::kOperands, "operands of another rank than the result");
  }
  const int64_t d = n.attrs.get_int("dimension");
  if (d < 0 || d >= static_cast<int64_t>(g.tensor(n.outputs[0]).rank()))
    return refuse(ReasonCode::kOperands, "dimension out of range");
  return {};
}

Status lower_concatenate(LowerContext& ctx, const ir::Node& n) {
  ir::Node& c = ctx.emit(n, "Concat", n.inputs, {n.outputs[0]});
  c.attrs.set("axis", n.attrs.get_int("dimension"));
  return ok_status();
}

void read_slice_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloSliceOptions();
  a.set("start_indices", longs(o ? o->start_indices() : nullptr));
  a.set("limit_indices", longs(o ? o->limit_indices() : nullptr));
  a.set("strides", longs(o ? o->strides() : nullptr));
}

Check check_slice(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 1)) return r;
  const Shape& in = shape_of(g, n.inputs[0]);
  const auto start = n.attrs.get_ints("start_indices"), limit = n.attrs.get_ints("limit_indices"),
             stride = n.attrs.get_ints("strides");
  if (start.size() != in.size() || limit.size() != in.size() || stride.size() != in.size())
    return refuse(ReasonCode::kOperands, "one start, limit and stride per axis expected");
  for (size_t i = 0; i < in.size(); ++i)
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > in[i] || stride[i] < 1)
      return refuse(ReasonCode::kOperands, "slice of axis " + std::to_string(i) + " out of range");
  return {};
}

Status lower_slice(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const size_t r = ctx.tensor(n.inputs[0]).rank();
  std::vector<int64_t> axes(r);
  std::iota(axes.begin(), axes.end(), 0);
  b.into("Slice",
         {n.inputs[0], b.ints(n.attrs.get_ints("start_indices")),
          b.ints(n.attrs.get_ints("limit_indices")), b.ints(axes),
          b.ints(n.attrs.get_ints("strides"))},
         {n.outputs[0]});
  return ok_status();
}

// ---- DYNAMIC_SLICE, DYNAMIC_UPDATE_SLICE ------------------------------------------------

void read_dynamic_slice_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloDynamicSliceOptions();
  a.set("slice_sizes", longs(o ? o->slice_sizes() : nullptr));
}

// Inputs [operand, (update,) one scalar start index per axis].
Check check_start_scalars(const ir::Graph& g, const ir::Node& n, size_t first) {
  const size_t r = g.tensor(n.inputs[0]).rank();
  if (n.inputs.size() != first + r)
    return refuse(ReasonCode::kOperands, "one start index per operand axis expected");
  for (size_t i = first; i < n.inputs.size(); ++i) {
    if (!has_input(g, n, i)) return refuse(ReasonCode::kOperands, "a start index is missing");
    const ir::Tensor& t = g.tensor(n.inputs[i]);
    if (!is_index_type(t.dtype) || ir::element_count(t.shape) != 1)
      return refuse(ReasonCode::kOperands, "start indices must be int32/int64 scalars");
  }
  return {};
}

Check check_dynamic_slice(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 1)) return r;
  if (auto r = check_start_scalars(g, n, 1)) return r;
  const Shape& in = shape_of(g, n.inputs[0]);
  const auto sizes = n.attrs.get_ints("slice_sizes");
  if (sizes.size() != in.size()) return refuse(ReasonCode::kOperands, "one slice size per axis");
  for (size_t i = 0; i < in.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > in[i])
      return refuse(ReasonCode::kOperands, "slice size beyond the operand");
  return {};
}

// Starts clamped to [0, dim - size], as StableHLO defines them.
Status lower_dynamic_slice(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const Shape& in = ctx.tensor(n.inputs[0]).shape;
  const auto sizes = n.attrs.get_ints("slice_sizes");
  std::vector<int64_t> room(in.size()), axes(in.size());
  for (size_t i = 0; i < in.size(); ++i) room[i] = in[i] - sizes[i];
  std::iota(axes.begin(), axes.end(), 0);
  TensorId start = indexing::gather_scalars(b, n, 1, in.size());
  TensorId low = b.add("Min", {start, b.ints(room)}, DataType::kInt64);
  TensorId begin = b.add("Max", {low, b.ints({0}, Shape{})}, DataType::kInt64);
  TensorId end = b.add("Add", {begin, b.ints(sizes)}, DataType::kInt64);
  b.into("Slice", {n.inputs[0], begin, end, b.ints(axes)}, {n.outputs[0]});
  return ok_status();
}

Check check_dynamic_update_slice(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 2)) return r;
  if (auto r = check_start_scalars(g, n, 2)) return r;
  const Shape& in = shape_of(g, n.inputs[0]);
  auto up = ir::static_shape(g.tensor(n.inputs[1]));
  if (!up || up->size() != in.size())
    return refuse(ReasonCode::kShape, "update must have the operand's rank, statically");
  for (size_t i = 0; i < in.size(); ++i)
    if ((*up)[i] > in[i]) return refuse(ReasonCode::kOperands, "update larger than the operand");
  if (g.tensor(n.inputs[1]).dtype != g.tensor(n.inputs[0]).dtype)
    return refuse(ReasonCode::kOperands, "update of another type than the operand");
  return {};
}

Status lower_dynamic_update_slice(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const Shape& in = ctx.tensor(n.inputs[0]).shape;
  TensorId start = indexing::gather_scalars(b, n, 2, in.size());
  indexing::update_slice(b, n.inputs[0], in, n.inputs[1], ctx.tensor(n.inputs[1]).shape, start,
                         n.outputs[0]);
  return ok_status();
}

// ---- PAD, IOTA ------------------------------------------------------------------------

void read_pad_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloPadOptions();
  a.set("edge_padding_low", longs(o ? o->edge_padding_low() : nullptr));
  a.set("edge_padding_high", longs(o ? o->edge_padding_high() : nullptr));
  a.set("interior_padding", longs(o ? o->interior_padding() : nullptr));
}

Check check_pad(const ir::Graph& g, const ir::Node& n) {
  if (auto r = static_io(g, n, 2)) return r;
  const Shape& in = shape_of(g, n.inputs[0]);
  const auto low = n.attrs.get_ints("edge_padding_low"),
             high = n.attrs.get_ints("edge_padding_high"),
             interior = n.attrs.get_ints("interior_padding");
  if (low.size() != in.size() || high.size() != in.size() || interior.size() != in.size())
    return refuse(ReasonCode::kOperands, "one padding per axis expected");
  for (size_t i = 0; i < in.size(); ++i) {
    if (interior[i] != 0)
      return refuse(ReasonCode::kNotImplemented, "interior padding is not converted");
    if (in[i] + low[i] + high[i] < 0)
      return refuse(ReasonCode::kOperands, "padding removes more than the axis holds");
  }
  if (ir::element_count(shape_of(g, n.inputs[1])) != 1 ||
      g.tensor(n.inputs[1]).dtype != g.tensor(n.inputs[0]).dtype)
    return refuse(ReasonCode::kOperands,
                  "the padding value must be a scalar of the operand's type");
  return {};
}

// Positive edges as Pad, negative ones (StableHLO crops with them) as a Slice after.
Status lower_pad(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const DataType t = ctx.tensor(n.outputs[0]).dtype;
  const Shape& in = ctx.tensor(n.inputs[0]).shape;
  const auto low = n.attrs.get_ints("edge_padding_low"),
             high = n.attrs.get_ints("edge_padding_high");
  const size_t r = in.size();
  std::vector<int64_t> pads(2 * r), starts(r), ends(r), axes(r);
  bool crop = false;
  for (size_t i = 0; i < r; ++i) {
    pads[i] = std::max<int64_t>(low[i], 0);
    pads[r + i] = std::max<int64_t>(high[i], 0);
    starts[i] = std::max<int64_t>(-low[i], 0);
    ends[i] = in[i] + pads[i] + pads[r + i] - std::max<int64_t>(-high[i], 0);
    axes[i] = static_cast<int64_t>(i);
    crop = crop || low[i] < 0 || high[i] < 0;
  }
  TensorId value = b.reshape(n.inputs[1], {}, t);
  if (!crop) {
    b.into("Pad", {n.inputs[0], b.ints(pads), value}, {n.outputs[0]});
    return ok_status();
  }
  TensorId padded = b.add("Pad", {n.inputs[0], b.ints(pads), value}, t);
  b.into("Slice", {padded, b.ints(starts), b.ints(ends), b.ints(axes)}, {n.outputs[0]});
  return ok_status();
}

void read_iota_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_2_as_StablehloIotaOptions();
  a.set("iota_dimension", int64_t{o ? o->iota_dimension() : 0});
}

Check check_iota(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.size() != 1 || !ir::static_shape(g.tensor(n.outputs[0])))
    return refuse(ReasonCode::kShape, "needs a static result shape");
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t d = n.attrs.get_int("iota_dimension");
  if (d < 0 || d >= static_cast<int64_t>(y.rank()))
    return refuse(ReasonCode::kOperands, "iota dimension out of range");
  if (y.dtype != DataType::kFloat32 && y.dtype != DataType::kInt32 && y.dtype != DataType::kInt64)
    return refuse(ReasonCode::kType, "result type " + std::string(ir::to_string(y.dtype)) +
                                         " (supported: float32, int32, int64)");
  return {};
}

// Range along the dimension, reshaped to it and expanded to the result.
Status lower_iota(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  const DataType t = y.dtype;
  const size_t d = static_cast<size_t>(n.attrs.get_int("iota_dimension"));
  TensorId range = b.add(
      "Range", {b.scalar(t, 0), b.scalar(t, static_cast<double>(y.shape[d])), b.scalar(t, 1)}, t);
  std::vector<int64_t> shape(y.rank(), 1);
  shape[d] = y.shape[d];
  TensorId line = b.reshape(range, shape, t);
  b.into("Expand", {line, b.ints(std::vector<int64_t>(y.shape.begin(), y.shape.end()))},
         {n.outputs[0]});
  return ok_status();
}

}  // namespace

OpEntry reshape() {
  return {.check = check_reshape,
          .lower = lower_reshape,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Reshape",
                  .dtypes = "any",
                  .notes = "static result shape; checked against a builtin twin"}};
}

OpEntry transpose() {
  return {.read = {.options = read_transpose_options},
          .check = check_transpose,
          .lower = lower_transpose,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Transpose", .dtypes = "any", .notes = "checked against a builtin twin"}};
}

OpEntry broadcast_in_dim() {
  return {.read = {.options = read_broadcast_options},
          .check = check_broadcast_in_dim,
          .lower = lower_broadcast_in_dim,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "(Transpose) + Reshape + Expand",
                  .dtypes = "any",
                  .notes = "broadcast_dimensions in any order; checked against a builtin twin"}};
}

OpEntry concatenate() {
  return {.read = {.options = read_concatenate_options},
          .check = check_concatenate,
          .lower = lower_concatenate,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Concat", .dtypes = "any", .notes = "checked against a builtin twin"}};
}

OpEntry slice() {
  return {.read = {.options = read_slice_options},
          .check = check_slice,
          .lower = lower_slice,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Slice",
                  .dtypes = "any",
                  .notes = "strides >= 1; checked against a builtin twin"}};
}

OpEntry dynamic_slice() {
  return {.read = {.min_inputs = -1, .options = read_dynamic_slice_options},
          .check = check_dynamic_slice,
          .lower = lower_dynamic_slice,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Concat, Min, Max, Add, Slice",
                  .dtypes = "any (int32/int64 start indices)",
                  .notes = "run-time starts clamped to [0, dim - size] as StableHLO does; checked "
                           "against a builtin twin"}};
}

OpEntry dynamic_update_slice() {
  return {
      .read = {.min_inputs = -1},
      .check = check_dynamic_update_slice,
      .lower = lower_dynamic_update_slice,
      .quantization = {.kernel = QuantizedKernel::kNoQuantized},
      .doc = {
          .onnx = "Range, Expand, Concat, Min, Max, Add, ScatterND",
          .dtypes = "any (int32/int64 start indices)",
          .notes =
              "run-time starts clamped to [0, dim - update dim]; checked against a builtin twin"}};
}

OpEntry pad() {
  return {.read = {.min_inputs = 2, .options = read_pad_options},
          .check = check_pad,
          .lower = lower_pad,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Pad (+ Slice for negative edges)",
                  .dtypes = "any",
                  .notes = "no interior padding; checked against a builtin twin"}};
}

OpEntry iota() {
  return {.read = {.min_inputs = 0, .options = read_iota_options},
          .check = check_iota,
          .lower = lower_iota,
          .doc = {.onnx = "Range + Reshape + Expand",
                  .dtypes = "float32, int32, int64",
                  .notes = "checked against a builtin twin"}};
}

}  // namespace lite2onnx::ops::stablehlo
