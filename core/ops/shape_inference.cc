// The shared helpers of shape inference; each op's own function is in its
// family file, beside its converter (OpEntry::infer_shapes).
#include "core/ops/shape_inference.h"

#include <algorithm>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/registry.h"

namespace lite2onnx::ops {

using ir::Shape;

bool valid_dims(const Shape& s) {
  auto count = ir::element_count(s);
  if (!count || *count > kMaxElements) return false;
  for (int64_t d : s)
    if (d > kMaxDim) return false;
  return true;
}

InferredShapes one_shape(Shape s) {
  if (!valid_dims(s)) return std::nullopt;
  return std::vector<Shape>{std::move(s)};
}

InferredShapes many_shapes(std::vector<Shape> shapes) {
  for (const Shape& s : shapes)
    if (!valid_dims(s)) return std::nullopt;
  return shapes;
}

std::optional<std::vector<int64_t>> const_operand(const ir::Graph& g, const ir::Node& n, size_t i,
                                                  bool int64_ok, int rank) {
  if (!has_input(g, n, i)) return std::nullopt;
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (t.dtype != ir::DataType::kInt32 && !(int64_ok && t.dtype == ir::DataType::kInt64))
    return std::nullopt;
  if (!t.has_rank || (rank >= 0 && t.rank() != static_cast<size_t>(rank))) return std::nullopt;
  auto v = input_ints(g, n, i);
  auto count = ir::element_count(t.shape);
  if (!v || !count || static_cast<int64_t>(v->size()) != *count) return std::nullopt;
  return v;
}

bool is_index_type(ir::DataType t) {
  return t == ir::DataType::kInt32 || t == ir::DataType::kInt64;
}

bool dim_value(int64_t v) { return v >= 0 && v <= kMaxDim; }

std::optional<int64_t> window_out(int64_t in, int64_t filter, int64_t stride, int64_t dilation,
                                  bool same) {
  if (in < 0 || filter < 1 || stride < 1 || dilation < 1 || filter > (int64_t{1} << 31) ||
      dilation > (int64_t{1} << 31))
    return std::nullopt;
  if (same) return (in + stride - 1) / stride;
  const int64_t effective = (filter - 1) * dilation + 1;
  if (in < effective) return std::nullopt;
  return (in - effective + stride) / stride;
}

InferredShapes window_shape(const ir::Graph& g, const ir::Node& n, int64_t filter_h,
                            int64_t filter_w, int64_t channels) {
  auto x = input_shape(g, n, 0);
  if (!x || x->size() != 4 || channels < 0) return std::nullopt;
  const Window win = read_window(n);
  auto h = window_out((*x)[1], filter_h, win.stride_h, win.dilation_h, win.same);
  auto w = window_out((*x)[2], filter_w, win.stride_w, win.dilation_w, win.same);
  if (!h || !w) return std::nullopt;
  return one_shape({(*x)[0], *h, *w, channels});
}

InferredShapes infer_broadcast(const ir::Graph& g, const ir::Node& n) {
  std::optional<Shape> out;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!g.valid(n.inputs[i])) continue;
    auto s = input_shape(g, n, i);
    if (!s) return std::nullopt;
    out = out ? ir::broadcast_shape(*out, *s) : s;
    if (!out) return std::nullopt;
  }
  if (!out || n.outputs.size() != 1) return std::nullopt;
  return one_shape(*out);
}

InferredShapes infer_same_as_input(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  if (!x || n.outputs.size() != 1) return std::nullopt;
  return one_shape(*x);
}

InferredShapes infer_pool2d(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  if (!x || x->size() != 4) return std::nullopt;
  return window_shape(g, n, n.attrs.get_int("filter_height", 1), n.attrs.get_int("filter_width", 1),
                      (*x)[3]);
}

InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n) {
  if (n.dialect != ir::Dialect::kTflite) return std::nullopt;
  const OpEntry& e = lookup(n);
  if (e.infer_shapes) {
    auto shapes = e.infer_shapes(g, n);
    // The outputs expose_state added: the state's own shape.
    if (shapes && !e.state.inputs.empty())
      for (size_t k = 0; k < e.state.inputs.size(); ++k)
        if (state_output(n, k) != ir::kNoTensor)
          shapes->push_back(g.tensor(n.inputs[static_cast<size_t>(e.state.inputs[k])]).shape);
    return shapes;
  }
  // A Transparent op is elementwise with numpy broadcasting, by the class's
  // definition; its own entry may still say otherwise above.
  if (e.layout.kind == LayoutClass::kTransparent && e.supported()) return infer_broadcast(g, n);
  // An op that only copies elements knows its output shapes (constant
  // operands): a reshape's map is its shape alone.
  if (e.evaluate.element_sources) {
    auto maps = e.evaluate.element_sources(g, n, 0);
    if (maps && maps->size() == n.outputs.size() && !maps->empty() && (*maps)[0].in_order)
      return std::vector<Shape>{(*maps)[0].shape};
  }
  return std::nullopt;
}

}  // namespace lite2onnx::ops
