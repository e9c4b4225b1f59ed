#include "core/ops/shape_inference.h"

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/registry.h"

namespace lite2onnx::ops {
namespace {

using ir::Shape;

// Inferred shapes larger than this many elements are left to the file (and
// to the size checks that read its shapes).
constexpr int64_t kMaxElements = int64_t{1} << 40;

InferredShapes one(Shape s) {
  auto count = ir::element_count(s);
  if (!count || *count > kMaxElements) return std::nullopt;
  return std::vector<Shape>{std::move(s)};
}

// Output size along one spatial axis, as TFLite's ComputeOutSize.
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

// [N, H', W', channels] of an NHWC window op over input 0.
InferredShapes window_shape(const ir::Graph& g, const ir::Node& n, int64_t filter_h,
                            int64_t filter_w, int64_t channels) {
  auto x = input_shape(g, n, 0);
  if (!x || x->size() != 4 || channels < 0) return std::nullopt;
  const Window win = read_window(n);
  auto h = window_out((*x)[1], filter_h, win.stride_h, win.dilation_h, win.same);
  auto w = window_out((*x)[2], filter_w, win.stride_w, win.dilation_w, win.same);
  if (!h || !w) return std::nullopt;
  return one({(*x)[0], *h, *w, channels});
}

}  // namespace

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
  return one(*out);
}

InferredShapes infer_same_as_input(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  if (!x || n.outputs.size() != 1) return std::nullopt;
  return one(*x);
}

InferredShapes infer_conv2d(const ir::Graph& g, const ir::Node& n) {
  auto w = input_shape(g, n, 1);
  if (!w || w->size() != 4) return std::nullopt;
  return window_shape(g, n, (*w)[1], (*w)[2], (*w)[0]);
}

InferredShapes infer_depthwise_conv2d(const ir::Graph& g, const ir::Node& n) {
  auto w = input_shape(g, n, 1);
  if (!w || w->size() != 4) return std::nullopt;
  return window_shape(g, n, (*w)[1], (*w)[2], (*w)[3]);
}

InferredShapes infer_pool2d(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  if (!x || x->size() != 4) return std::nullopt;
  return window_shape(g, n, n.attrs.get_int("filter_height", 1), n.attrs.get_int("filter_width", 1),
                      (*x)[3]);
}

InferredShapes infer_fully_connected(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto w = input_shape(g, n, 1);
  if (!x || !w || w->size() != 2 || x->empty() || n.outputs.size() != 1) return std::nullopt;
  const int64_t units = (*w)[0], k = (*w)[1];
  auto count = ir::element_count(*x);
  if (!count || k <= 0 || *count % k != 0) return std::nullopt;
  if (n.attrs.get_int("keep_num_dims") != 0) {
    if (x->back() != k) return std::nullopt;
    Shape s(x->begin(), x->end() - 1);
    s.push_back(units);
    return one(std::move(s));
  }
  return one({*count / k, units});
}

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
  return one(*out);
}

InferredShapes infer_reduce(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto axes = input_ints(g, n, 1);
  if (!x || !axes || axes->empty() || n.outputs.size() != 1) return std::nullopt;
  std::vector<bool> reduced(x->size(), false);
  for (int64_t a : *axes) {
    auto r = ir::resolve_axis(a, x->size());
    if (!r) return std::nullopt;
    reduced[static_cast<size_t>(*r)] = true;
  }
  const bool keep = n.attrs.get_int("keep_dims") != 0;
  Shape s;
  for (size_t i = 0; i < x->size(); ++i)
    if (!reduced[i])
      s.push_back((*x)[i]);
    else if (keep)
      s.push_back(1);
  return one(std::move(s));
}

InferredShapes infer_arg(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto axis = input_ints(g, n, 1);
  if (!x || !axis || axis->size() != 1 || n.outputs.size() != 1) return std::nullopt;
  auto a = ir::resolve_axis((*axis)[0], x->size());
  if (!a) return std::nullopt;
  Shape s = *x;
  s.erase(s.begin() + *a);
  return one(std::move(s));
}

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
  return one(std::move(s));
}

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
  return one(std::move(s));
}

InferredShapes infer_resize(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto size = input_ints(g, n, 1);
  if (!x || x->size() != 4 || !size || size->size() != 2 || n.outputs.size() != 1)
    return std::nullopt;
  if ((*size)[0] <= 0 || (*size)[1] <= 0) return std::nullopt;
  return one({(*x)[0], (*size)[0], (*size)[1], (*x)[3]});
}

InferredShapes infer_transpose_conv(const ir::Graph& g, const ir::Node& n) {
  // With a dynamic data input the file's (dynamic) output shape stands: the
  // constant output_shape then holds a converter's placeholder batch.
  auto shape = input_ints(g, n, 0);
  if (!shape || shape->size() != 4 || !input_shape(g, n, 2) || n.outputs.size() != 1)
    return std::nullopt;
  for (int64_t d : *shape)
    if (d < 0) return std::nullopt;
  return one(Shape(shape->begin(), shape->end()));
}

InferredShapes infer_depth_to_space(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t b = n.attrs.get_int("block_size");
  if (!x || x->size() != 4 || b < 1 || b > (int64_t{1} << 15) || (*x)[3] % (b * b) != 0 ||
      n.outputs.size() != 1)
    return std::nullopt;
  return one({(*x)[0], (*x)[1] * b, (*x)[2] * b, (*x)[3] / (b * b)});
}

InferredShapes infer_space_to_depth(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t b = n.attrs.get_int("block_size");
  if (!x || x->size() != 4 || b < 1 || b > (int64_t{1} << 15) || (*x)[1] % b != 0 ||
      (*x)[2] % b != 0 || n.outputs.size() != 1)
    return std::nullopt;
  return one({(*x)[0], (*x)[1] / b, (*x)[2] / b, (*x)[3] * b * b});
}

InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n) {
  if (n.dialect != ir::Dialect::kTflite) return std::nullopt;
  const OpEntry& e = lookup(n.builtin);
  if (e.infer_shapes) return e.infer_shapes(g, n);
  // A Transparent op is elementwise with numpy broadcasting, by the class's
  // definition; its own entry may still say otherwise above.
  if (e.layout == LayoutClass::kTransparent && e.supported()) return infer_broadcast(g, n);
  // An op that only copies elements knows its output shapes (constant
  // operands): a reshape's map is its shape alone.
  if (e.element_sources) {
    auto maps = e.element_sources(g, n, 0);
    if (maps && maps->size() == n.outputs.size() && !maps->empty() && (*maps)[0].in_order)
      return std::vector<Shape>{(*maps)[0].shape};
  }
  return std::nullopt;
}

}  // namespace lite2onnx::ops
