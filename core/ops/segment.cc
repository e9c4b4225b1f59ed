// SEGMENT_SUM and UNSORTED_SEGMENT_SUM/PROD/MAX/MIN. One form serves every
// opset 13-17: a [segments, n] mask (Equal of Range(segments) with the
// flattened segment ids) selects each segment's rows of the data, the others
// taking the reduction's identity, and ReduceSum/Prod/Max/Min over the rows
// gives every segment at once. ScatterND/ScatterElements would need opset 16
// (add, mul) or 18 (max, min). Ids out of [0, segments), which TFLite's
// kernels refuse at run time, match no segment here; an empty segment holds
// the identity (0, 1, the lowest or the highest value), as in TFLite.
// Cost: segments x n x inner elements in the intermediate.
#include <limits>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::segment {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

bool sorted_op(const ir::Node& n) { return n.builtin == ir::builtin::kSegmentSum; }

Check check_segment(const ir::Graph& g, const ir::Node& n) {
  const size_t inputs = sorted_op(n) ? 2 : 3;
  if (n.inputs.size() != inputs || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs");
  for (size_t i = 0; i < inputs; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& ids = g.tensor(n.inputs[1]);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kInt32)
    return refuse(ReasonCode::kType,
                  "type " + std::string(ir::to_string(x.dtype)) + " (supported: float32, int32)");
  if (!is_index_type(ids.dtype))
    return refuse(ReasonCode::kType, "segment ids must be int32/int64");
  auto xs = ir::static_shape(x), is = ir::static_shape(ids);
  if (!xs || !is) return refuse(ReasonCode::kShape, "data and segment ids need static shapes");
  if (is->size() < 1 || is->size() > xs->size() || !std::equal(is->begin(), is->end(), xs->begin()))
    return refuse(ReasonCode::kOperands, "segment ids' shape must begin the data's");
  if (sorted_op(n) && is->size() != 1)
    return refuse(ReasonCode::kOperands, "segment ids must be 1-D");
  if (!sorted_op(n)) {
    if (!is_index_type(g.tensor(n.inputs[2]).dtype) ||
        ir::element_count(g.tensor(n.inputs[2]).shape) != 1)
      return refuse(ReasonCode::kOperands, "num_segments must be one int32/int64 value");
  }
  return {};
}

double identity(int builtin, DataType t) {
  const bool f = t == DataType::kFloat32;
  switch (builtin) {
    case ir::builtin::kUnsortedSegmentProd:
      return 1;
    case ir::builtin::kUnsortedSegmentMax:
      return f ? std::numeric_limits<float>::lowest() : std::numeric_limits<int32_t>::lowest();
    case ir::builtin::kUnsortedSegmentMin:
      return f ? std::numeric_limits<float>::max() : std::numeric_limits<int32_t>::max();
    default:
      return 0;
  }
}

const char* reduction(int builtin) {
  switch (builtin) {
    case ir::builtin::kUnsortedSegmentProd:
      return "ReduceProd";
    case ir::builtin::kUnsortedSegmentMax:
      return "ReduceMax";
    case ir::builtin::kUnsortedSegmentMin:
      return "ReduceMin";
    default:
      return "ReduceSum";
  }
}

Status lower_segment(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const DataType t = x.dtype;
  const Shape& ids_shape = ctx.tensor(n.inputs[1]).shape;
  int64_t rows = 1, inner = 1;
  for (size_t i = 0; i < x.rank(); ++i) (i < ids_shape.size() ? rows : inner) *= x.shape[i];
  TensorId ids = b.reshape(b.cast(n.inputs[1], DataType::kInt64), {1, rows, 1}, DataType::kInt64);
  // SEGMENT_SUM: max(id) + 1 segments (ids are sorted); else num_segments.
  TensorId count =
      sorted_op(n) ? b.add("Add",
                           {b.add("ReduceMax", {ids}, DataType::kInt64, {{"keepdims", int64_t{0}}}),
                            b.ints({1}, Shape{})},
                           DataType::kInt64)
                   : b.reshape(b.cast(n.inputs[2], DataType::kInt64), {}, DataType::kInt64);
  TensorId segments =
      b.add("Range", {b.ints({0}, Shape{}), count, b.ints({1}, Shape{})}, DataType::kInt64);
  TensorId mask =
      b.add("Equal", {b.reshape(segments, {-1, 1, 1}, DataType::kInt64), ids}, DataType::kBool);
  TensorId data = b.reshape(n.inputs[0], {1, rows, inner}, t);
  TensorId picked = b.add("Where", {mask, data, b.scalar(t, identity(n.builtin, t))}, t);
  const char* reduce = reduction(n.builtin);
  TensorId reduced = reduce == std::string_view("ReduceSum")
                         ? b.add(reduce, {picked, b.ints({1})}, t, {{"keepdims", int64_t{0}}})
                         : b.add(reduce, {picked}, t,
                                 {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  // [segments, inner] -> [segments, data.shape[ids rank:]...]
  std::vector<int64_t> shape = {-1};
  shape.insert(shape.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(ids_shape.size()),
               x.shape.end());
  b.into("Reshape", {reduced, b.ints(shape)}, {n.outputs[0]});
  return ok_status();
}

// [segments] + data.shape[ids rank:], when the segment count is a constant.
InferredShapes infer_segment(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || !has_input(g, n, 0) || !has_input(g, n, 1))
    return std::nullopt;
  auto xs = input_shape(g, n, 0);
  const size_t ids_rank = g.tensor(n.inputs[1]).rank();
  std::optional<int64_t> segments;
  if (sorted_op(n)) {
    auto ids = ir::const_ints(g, n.inputs[1]);
    if (ids && !ids->empty()) segments = *std::max_element(ids->begin(), ids->end()) + 1;
  } else if (n.inputs.size() == 3 && has_input(g, n, 2)) {
    auto v = ir::const_ints(g, n.inputs[2]);
    if (v && v->size() == 1) segments = (*v)[0];
  }
  if (!xs || !segments || *segments < 0 || ids_rank < 1 || ids_rank > xs->size())
    return std::nullopt;
  Shape s = {*segments};
  s.insert(s.end(), xs->begin() + static_cast<std::ptrdiff_t>(ids_rank), xs->end());
  return one_shape(std::move(s));
}

}  // namespace

OpEntry segment_op() {
  return {.read = {.min_inputs = 2},
          .infer_shapes = infer_segment,
          .check = check_segment,
          .lower = lower_segment,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Range, Equal mask, Where, ReduceSum/Prod/Max/Min",
                  .dtypes = "float32, int32 (int32/int64 ids)",
                  .notes = "any opset 13-17 (no ScatterElements reduction); empty segments hold "
                           "the reduction's identity; "
                           "segments x rows x inner elements in between"}};
}

}  // namespace lite2onnx::ops::segment
