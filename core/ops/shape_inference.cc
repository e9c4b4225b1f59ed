#include "core/ops/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ir/builtins.h"
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

// TFLite holds every dimension in an int.
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

bool valid_dims(const Shape& s) {
  auto count = ir::element_count(s);
  if (!count || *count > kMaxElements) return false;
  for (int64_t d : s)
    if (d > kMaxDim) return false;
  return true;
}

InferredShapes one(Shape s) {
  if (!valid_dims(s)) return std::nullopt;
  return std::vector<Shape>{std::move(s)};
}

// Several outputs, each bounded like one().
InferredShapes many(std::vector<Shape> shapes) {
  for (const Shape& s : shapes)
    if (!valid_dims(s)) return std::nullopt;
  return shapes;
}

// Input i as a constant of TFLite's index types (int32, or int64 too when
// `int64_ok`) whose shape has `rank` dimensions (any rank when negative).
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

// A dimension read from a constant: TFLite keeps it in an int.
bool dim_value(int64_t v) { return v >= 0 && v <= kMaxDim; }

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

InferredShapes infer_gather(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto idx = input_shape(g, n, 1);
  if (!x || !idx || n.inputs.size() != 2 || n.outputs.size() != 1 ||
      !is_index_type(g.tensor(n.inputs[1]).dtype))
    return std::nullopt;
  auto axis = ir::resolve_axis(n.attrs.get_int("axis"), x->size());
  if (!axis) return std::nullopt;
  const int64_t a = *axis;
  int64_t batch = n.attrs.get_int("batch_dims");
  if (batch < 0) batch += static_cast<int64_t>(idx->size());
  if (batch < 0 || batch > a || batch >= static_cast<int64_t>(x->size()) ||
      batch > static_cast<int64_t>(idx->size()))
    return std::nullopt;
  for (int64_t i = 0; i < batch; ++i)
    if ((*x)[static_cast<size_t>(i)] != (*idx)[static_cast<size_t>(i)]) return std::nullopt;
  Shape s(x->begin(), x->begin() + a);
  s.insert(s.end(), idx->begin() + batch, idx->end());
  s.insert(s.end(), x->begin() + a + 1, x->end());
  return one(std::move(s));
}

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
  return one(std::move(s));
}

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
  return one(std::move(s));
}

InferredShapes infer_strided_slice(const ir::Graph& g, const ir::Node& n) {
  // TFLite's strided_slice.cc: BuildStridedSliceParams expands the ellipsis
  // and the new axes into an effective input of at most 5 dimensions, then
  // every dimension not shrunk counts ceil((end - begin) / stride) elements
  // (StridedSliceStartForAxis / StridedSliceEndForAxis), or ceil(end / stride)
  // with offset.
  auto x = input_shape(g, n, 0);
  auto begin = const_operand(g, n, 1, false, 1);
  auto end = const_operand(g, n, 2, false, 1);
  auto strides = const_operand(g, n, 3, false, 1);
  if (!x || !begin || !end || !strides || n.inputs.size() != 4 || n.outputs.size() != 1 ||
      x->size() > 5)
    return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t m = static_cast<int64_t>(begin->size());
  if (static_cast<int64_t>(end->size()) != m || static_cast<int64_t>(strides->size()) != m || m > 5)
    return std::nullopt;
  const int64_t ellipsis = n.attrs.get_int("ellipsis_mask");
  const int64_t new_axis = n.attrs.get_int("new_axis_mask");
  const bool offset = n.attrs.get_int("offset") != 0;
  // Mask bits past the spec (TFLite would read them against expanded
  // indices) and a second ellipsis are left to the file.
  if (ellipsis < 0 || new_axis < 0 || (ellipsis >> m) != 0 || (new_axis >> m) != 0 ||
      (ellipsis & (ellipsis - 1)) != 0)
    return std::nullopt;
  auto bit = [&](const char* mask, int64_t i) {
    return i >= 0 && i < m && ((n.attrs.get_int(mask) >> i) & 1) != 0;
  };
  int64_t added = 0;  // new axes outside the ellipsis
  for (int64_t i = 0; i < m; ++i) added += !bit("ellipsis_mask", i) && bit("new_axis_mask", i);
  const int64_t dims = rank + added;
  // More entries than dimensions (an ellipsis then covers nothing, which
  // TFLite widens to one dimension): not TensorFlow's reading.
  if (dims > 5 || m > dims) return std::nullopt;
  if (offset && (ellipsis != 0 || new_axis != 0 || m != rank)) return std::nullopt;

  enum class Kind { kSpec, kEllipsis, kNewAxis };
  std::vector<Kind> kind(static_cast<size_t>(dims), Kind::kSpec);
  int64_t ellipsis_start = dims, expanded = 0;
  for (int64_t i = 0; i < dims;) {
    if (bit("ellipsis_mask", i)) {
      ellipsis_start = i;
      const int64_t stop = std::max(i + 1, std::min(i + 1 + added + rank - m, dims));
      expanded = stop - ellipsis_start - 1;
      for (; i < stop; ++i) kind[static_cast<size_t>(i)] = Kind::kEllipsis;
      continue;
    }
    if (bit("new_axis_mask", i - expanded)) kind[static_cast<size_t>(i)] = Kind::kNewAxis;
    ++i;
  }
  Shape out;
  int64_t added_ellipsis = 0, added_axes = 0;
  for (int64_t i = 0; i < dims; ++i) {
    const Kind k = kind[static_cast<size_t>(i)];
    if (k == Kind::kNewAxis) {
      out.push_back(1);  // [0, 1) of a unit dimension
      ++added_axes;
      continue;
    }
    if (k == Kind::kEllipsis) added_ellipsis = std::max<int64_t>(0, i - ellipsis_start);
    if (i - added_axes < 0 || i - added_axes >= rank) return std::nullopt;
    const int64_t size = (*x)[static_cast<size_t>(i - added_axes)];
    if (size > kMaxDim) return std::nullopt;
    if (k == Kind::kEllipsis || i >= m + expanded) {
      out.push_back(size);  // begin and end masked, stride 1
      continue;
    }
    const int64_t j = i - added_ellipsis;  // the spec entry
    if (j < 0 || j >= m) return std::nullopt;
    const int64_t stride = (*strides)[static_cast<size_t>(j)];
    if (stride == 0) return std::nullopt;
    if (bit("shrink_axis_mask", j)) continue;
    // StridedSliceStartForAxis / StridedSliceEndForAxis (int32 values).
    int64_t b = (*begin)[static_cast<size_t>(j)];
    if (b < 0) b += size;
    b = stride > 0 ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
    if (bit("begin_mask", j)) b = stride > 0 ? 0 : size - 1;
    int64_t e = (*end)[static_cast<size_t>(j)];
    if (offset) {
      e += b;
      if (e < std::numeric_limits<int32_t>::min() || e > kMaxDim) return std::nullopt;
    }
    if (e < 0) e += size;
    e = stride > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
    if (bit("end_mask", j)) e = stride > 0 ? size : -1;
    int64_t count = 0;  // the elements the kernel copies
    if (stride > 0 && e > b) count = (e - b - 1) / stride + 1;
    if (stride < 0 && b > e) count = (b - e - 1) / -stride + 1;
    // What Prepare sizes the output to, in float as it computes it: a
    // different count (float rounding, offset past the end) is not a shape
    // the kernel fills.
    const int64_t span = offset ? (*end)[static_cast<size_t>(j)] : e - b;
    const double prepared =
        std::ceil(static_cast<double>(static_cast<float>(span) / static_cast<float>(stride)));
    if (std::max(prepared, 0.0) != static_cast<double>(count)) return std::nullopt;
    out.push_back(count);
  }
  return one(std::move(out));
}

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
  return many(std::vector<Shape>(static_cast<size_t>(parts), s));
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
  return many(std::move(out));
}

InferredShapes infer_pack(const ir::Graph& g, const ir::Node& n) {
  const int64_t count = static_cast<int64_t>(n.inputs.size());
  if (count < 1 || n.attrs.get_int("values_count") != count || n.outputs.size() != 1)
    return std::nullopt;
  auto x = input_shape(g, n, 0);
  if (!x) return std::nullopt;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (input_shape(g, n, i) != x) return std::nullopt;
  auto a = ir::resolve_axis(n.attrs.get_int("axis"), x->size() + 1);
  if (!a) return std::nullopt;
  Shape s = *x;
  s.insert(s.begin() + *a, count);
  return one(std::move(s));
}

InferredShapes infer_unpack(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t num = static_cast<int64_t>(n.outputs.size());
  if (!x || n.inputs.size() != 1 || num < 1 || n.attrs.get_int("num") != num ||
      ir::element_count(*x).value_or(0) == 0)
    return std::nullopt;
  auto a = ir::resolve_axis(n.attrs.get_int("axis"), x->size());
  if (!a || (*x)[static_cast<size_t>(*a)] != num) return std::nullopt;
  Shape s = *x;
  s.erase(s.begin() + *a);
  return many(std::vector<Shape>(static_cast<size_t>(num), s));
}

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
  return one(std::move(s));
}

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
  return one(Shape(shape->begin(), shape->end()));
}

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
  return one(std::move(s));
}

InferredShapes infer_shape_op(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || n.outputs.size() != 1 || !g.tensor(n.inputs[0]).has_rank)
    return std::nullopt;
  return one({static_cast<int64_t>(g.tensor(n.inputs[0]).rank())});
}

InferredShapes infer_fill(const ir::Graph& g, const ir::Node& n) {
  auto dims = const_operand(g, n, 0, true, 1);
  if (!dims || !has_input(g, n, 1) || n.outputs.size() != 1) return std::nullopt;
  for (int64_t d : *dims)
    if (!dim_value(d)) return std::nullopt;
  return one(Shape(dims->begin(), dims->end()));
}

InferredShapes infer_select(const ir::Graph& g, const ir::Node& n) {
  auto cond = input_shape(g, n, 0);
  auto x = input_shape(g, n, 1);
  auto y = input_shape(g, n, 2);
  if (!cond || !x || !y || n.inputs.size() != 3 || n.outputs.size() != 1) return std::nullopt;
  // One element everywhere: TFLite keeps the output's own shape.
  const ir::Tensor& out = g.tensor(n.outputs[0]);
  auto single = [](const Shape& s) { return ir::element_count(s) == 1; };
  if (single(*cond) && single(*x) && single(*y) && (!out.has_rank || single(out.shape)))
    return std::nullopt;
  if (n.builtin == ir::builtin::kSelectV2) {
    auto s = ir::broadcast_shape(*cond, *x);
    if (s) s = ir::broadcast_shape(*s, *y);
    if (!s) return std::nullopt;
    return one(std::move(*s));
  }
  if (*x != *y) return std::nullopt;
  const bool low_rank =
      cond->empty() || (cond->size() == 1 && !x->empty() && (*cond)[0] == (*x)[0]);
  if (*cond != *x && !low_rank) return std::nullopt;
  return one(*x);
}

InferredShapes infer_topk(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto k = const_operand(g, n, 1, false, -1);
  if (!x || x->empty() || !k || k->size() != 1 || n.outputs.size() != 2) return std::nullopt;
  if ((*k)[0] < 0 || (*k)[0] > x->back()) return std::nullopt;
  Shape s = *x;
  s.back() = (*k)[0];
  return many({s, s});
}

InferredShapes infer_embedding_lookup(const ir::Graph& g, const ir::Node& n) {
  auto ids = input_shape(g, n, 0);
  auto params = input_shape(g, n, 1);
  if (!ids || !params || ids->size() != 1 || params->size() < 2 || n.inputs.size() != 2 ||
      n.outputs.size() != 1 || g.tensor(n.inputs[0]).dtype != ir::DataType::kInt32)
    return std::nullopt;
  Shape s = *params;
  s[0] = (*ids)[0];
  return one(std::move(s));
}

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
  return one({count});
}

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
  return one(Shape(shape->begin(), shape->end()));
}

namespace {

// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: input 0 of rank 3 or 4, block_shape
// [rank - 2] and paddings or crops [rank - 2, 2], int32 constants.
struct BlockOperands {
  Shape x;
  std::vector<int64_t> block, pads;
};
std::optional<BlockOperands> block_operands(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto block = const_operand(g, n, 1, false, 1);
  auto pads = const_operand(g, n, 2, false, 2);
  if (!x || (x->size() != 3 && x->size() != 4) || !block || !pads || n.inputs.size() != 3 ||
      n.outputs.size() != 1)
    return std::nullopt;
  const size_t spatial = x->size() - 2;
  if (block->size() != spatial ||
      g.tensor(n.inputs[2]).shape != Shape{static_cast<int64_t>(spatial), 2})
    return std::nullopt;
  for (int64_t b : *block)
    if (b < 1 || b > kMaxDim) return std::nullopt;
  for (int64_t p : *pads)
    if (!dim_value(p)) return std::nullopt;
  return BlockOperands{*x, *block, *pads};
}

}  // namespace

InferredShapes infer_space_to_batch(const ir::Graph& g, const ir::Node& n) {
  auto op = block_operands(g, n);
  if (!op) return std::nullopt;
  Shape s = op->x;
  int64_t batch = s[0];
  for (size_t d = 0; d + 2 < s.size(); ++d) {
    const int64_t padded = s[d + 1] + op->pads[2 * d] + op->pads[2 * d + 1];
    const int64_t b = op->block[d];
    if (padded % b != 0 || (batch > 0 && b > kMaxElements / batch)) return std::nullopt;
    s[d + 1] = padded / b;
    batch *= b;
  }
  s[0] = batch;
  return one(std::move(s));
}

InferredShapes infer_batch_to_space(const ir::Graph& g, const ir::Node& n) {
  auto op = block_operands(g, n);
  if (!op) return std::nullopt;
  Shape s = op->x;
  int64_t batch = s[0];
  for (size_t d = 0; d + 2 < s.size(); ++d) {
    const int64_t b = op->block[d];
    if (batch % b != 0 || s[d + 1] > kMaxDim / b) return std::nullopt;
    batch /= b;
    const int64_t size = s[d + 1] * b - op->pads[2 * d] - op->pads[2 * d + 1];
    if (size < 0) return std::nullopt;
    s[d + 1] = size;
  }
  s[0] = batch;
  return one(std::move(s));
}

InferredShapes infer_rfft2d(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto len = const_operand(g, n, 1, false, 1);
  if (!x || x->size() < 2 || !len || len->size() != 2 || n.outputs.size() != 1) return std::nullopt;
  // fft2d takes powers of two only.
  for (int64_t v : *len)
    if (v < 1 || v > kMaxDim || (v & (v - 1)) != 0) return std::nullopt;
  Shape s = *x;
  s[s.size() - 2] = (*len)[0];
  s[s.size() - 1] = (*len)[1] / 2 + 1;
  return one(std::move(s));
}

InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n) {
  if (n.dialect != ir::Dialect::kTflite) return std::nullopt;
  const OpEntry& e = lookup(n);
  if (e.infer_shapes) {
    auto shapes = e.infer_shapes(g, n);
    // The outputs expose_state added: the state's own shape.
    if (shapes && !e.state_inputs.empty())
      for (size_t k = 0; k < e.state_inputs.size(); ++k)
        if (state_output(n, k) != ir::kNoTensor)
          shapes->push_back(g.tensor(n.inputs[static_cast<size_t>(e.state_inputs[k])]).shape);
    return shapes;
  }
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
