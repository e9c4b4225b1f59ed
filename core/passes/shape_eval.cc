#include "core/passes/shape_eval.h"

#include <algorithm>
#include <limits>

#include "core/ops/registry.h"

namespace lite2onnx::passes::shape_eval {
namespace {

using ir::Shape;

std::vector<int64_t> row_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

bool valid_input(const ir::Graph& g, const ir::Node& n, size_t i) {
  return i < n.inputs.size() && g.valid(n.inputs[i]);
}

std::optional<Shape> input_shape(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (!valid_input(g, n, i)) return std::nullopt;
  return static_shape(g.tensor(n.inputs[i]));
}

std::optional<std::vector<int64_t>> input_ints(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (!valid_input(g, n, i)) return std::nullopt;
  return ops::const_ints(g, n.inputs[i]);
}

// Element count of a shape when it is at most `max`, else nullopt.
std::optional<int64_t> bounded_count(const Shape& s, int64_t max) {
  auto c = ir::element_count(s);
  if (!c || *c > max) return std::nullopt;
  return c;
}

// Outputs without elements (the loops below would count through the other
// dimensions for nothing).
std::vector<OutputMap> empty_result(const Shape& shape, size_t outputs) {
  return std::vector<OutputMap>(outputs, OutputMap{shape, {}});
}

OutputMap identity_map(Shape shape, int64_t count) {
  OutputMap m;
  m.shape = std::move(shape);
  m.sources.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) m.sources[static_cast<size_t>(i)] = {0, i};
  return m;
}

// ---- STRIDED_SLICE (TFLite semantics, static input shape) -------------------

struct DenseDim {
  int64_t start = 0, stride = 1, size = 0;  // elements start, start+stride, ... (size of them)
  bool shrink = false;
};

std::optional<std::vector<OutputMap>> strided_slice(const ir::Graph& g, const ir::Node& n,
                                                    int64_t max) {
  auto xs = input_shape(g, n, 0);
  auto begin = input_ints(g, n, 1);
  auto end = input_ints(g, n, 2);
  auto strides = input_ints(g, n, 3);
  if (!xs || !begin || !end || !strides || begin->size() != end->size() ||
      begin->size() != strides->size() || begin->size() > 31)
    return std::nullopt;
  const size_t rank = xs->size();
  const size_t m = begin->size();
  auto bit = [&](const char* mask, size_t i) { return ((n.attrs.get_int(mask) >> i) & 1) != 0; };
  const bool offset = n.attrs.get_int("offset") != 0;

  std::vector<DenseDim> dims;  // one per input dimension
  Shape out_shape;             // final output shape (new axes included, shrunk dims removed)
  bool saw_ellipsis = false;
  size_t dense = 0;
  auto full_dim = [&](size_t d) {
    DenseDim dd;
    dd.size = (*xs)[d];
    dims.push_back(dd);
    out_shape.push_back(dd.size);
  };
  for (size_t i = 0; i < m; ++i) {
    if (bit("ellipsis_mask", i) && !saw_ellipsis) {
      saw_ellipsis = true;
      size_t later = 0;
      for (size_t j = i + 1; j < m; ++j) later += !bit("new_axis_mask", j);
      if (rank < dense + later) return std::nullopt;
      for (size_t cover = rank - dense - later; cover > 0; --cover) full_dim(dense++);
      continue;
    }
    if (bit("new_axis_mask", i)) {
      out_shape.push_back(1);
      continue;
    }
    if (dense >= rank) return std::nullopt;
    const int64_t size = (*xs)[dense];
    const int64_t s = (*strides)[i];
    if (s == 0 || s == std::numeric_limits<int64_t>::min()) return std::nullopt;
    int64_t b = (*begin)[i];
    DenseDim dd;
    dd.stride = s;
    if (bit("shrink_axis_mask", i)) {
      if (b < 0) b += size;
      if (b < 0 || b >= size) return std::nullopt;
      dd.start = b;
      dd.size = 1;
      dd.shrink = true;
    } else {
      // StridedSliceStartForAxis / StridedSliceEndForAxis.
      if (b < 0) b += size;
      b = s > 0 ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
      if (bit("begin_mask", i)) b = s > 0 ? 0 : size - 1;
      int64_t e = (*end)[i];
      if (offset && __builtin_add_overflow(e, b, &e)) return std::nullopt;
      if (e < 0) e += size;
      e = s > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
      if (bit("end_mask", i)) e = s > 0 ? size : -1;
      int64_t count = 0;
      if (s > 0 && e > b) count = (e - b - 1) / s + 1;
      if (s < 0 && b > e) count = (b - e - 1) / -s + 1;
      dd.start = b;
      dd.size = count;
      out_shape.push_back(dd.size);
    }
    dims.push_back(dd);
    ++dense;
  }
  while (dense < rank) full_dim(dense++);  // unspecified trailing dimensions are whole

  Shape walk;  // the sliced (not yet reshaped) extent per input dimension
  for (const auto& d : dims) walk.push_back(d.size);
  auto count = bounded_count(walk, max);
  if (!count) return std::nullopt;
  std::vector<int64_t> in_strides = row_strides(*xs);
  OutputMap out;
  out.shape = out_shape;
  out.sources.reserve(static_cast<size_t>(*count));
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < *count; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d)
      src += (dims[d].start + idx[d] * dims[d].stride) * in_strides[d];
    out.sources.push_back({0, src});
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < walk[d]) break;
      idx[d] = 0;
    }
  }
  return std::vector<OutputMap>{std::move(out)};
}

// ---- the other data-movement ops ------------------------------------------

std::optional<std::vector<OutputMap>> transpose(const ir::Graph& g, const ir::Node& n,
                                                int64_t max) {
  auto xs = input_shape(g, n, 0);
  auto perm = input_ints(g, n, 1);
  if (!xs || !perm || perm->size() != xs->size()) return std::nullopt;
  ir::Perm p(perm->begin(), perm->end());
  if (!ir::is_permutation(p, xs->size())) return std::nullopt;
  Shape ys = ir::permute_shape(*xs, p);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  std::vector<int64_t> in_strides = row_strides(*xs);
  const size_t rank = ys.size();
  OutputMap out;
  out.shape = ys;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < *count; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += idx[d] * in_strides[static_cast<size_t>(p[d])];
    out.sources.push_back({0, src});
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> pack(const ir::Graph& g, const ir::Node& n, int64_t max) {
  if (n.inputs.empty()) return std::nullopt;
  auto xs = input_shape(g, n, 0);
  if (!xs) return std::nullopt;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (input_shape(g, n, i) != xs) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  Shape ys = *xs;
  const int64_t k = static_cast<int64_t>(n.inputs.size());
  ys.insert(ys.begin() + axis, k);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*xs, 0, a), inner = product(*xs, a, xs->size());
  OutputMap out;
  out.shape = ys;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        out.sources.push_back({static_cast<uint32_t>(j), o * inner + i});
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> unpack(const ir::Graph& g, const ir::Node& n, int64_t max) {
  auto xs = input_shape(g, n, 0);
  if (!xs || xs->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  const int64_t num = (*xs)[a];
  if (num != static_cast<int64_t>(n.outputs.size())) return std::nullopt;
  Shape ys = *xs;
  ys.erase(ys.begin() + axis);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*xs, 0, a), inner = product(*xs, a + 1, xs->size());
  std::vector<OutputMap> outs;
  for (int64_t j = 0; j < num; ++j) {
    OutputMap out;
    out.shape = ys;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) out.sources.push_back({0, (o * num + j) * inner + i});
    outs.push_back(std::move(out));
  }
  return outs;
}

std::optional<std::vector<OutputMap>> concatenation(const ir::Graph& g, const ir::Node& n,
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
        out.sources.push_back({static_cast<uint32_t>(j), o * block + i});
    }
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> gather(const ir::Graph& g, const ir::Node& n, int64_t max) {
  if (n.attrs.get_int("batch_dims") != 0) return std::nullopt;
  auto ps = input_shape(g, n, 0);
  auto is = input_shape(g, n, 1);
  auto indices = input_ints(g, n, 1);
  if (!ps || !is || !indices || ps->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(ps->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  const int64_t dim = (*ps)[a];
  for (int64_t v : *indices)
    if (v < 0 || v >= dim) return std::nullopt;
  Shape ys(ps->begin(), ps->begin() + axis);
  ys.insert(ys.end(), is->begin(), is->end());
  ys.insert(ys.end(), ps->begin() + axis + 1, ps->end());
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*ps, 0, a), inner = product(*ps, a + 1, ps->size());
  OutputMap out;
  out.shape = ys;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t v : *indices)
      for (int64_t i = 0; i < inner; ++i) out.sources.push_back({0, (o * dim + v) * inner + i});
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> fill(const ir::Graph& g, const ir::Node& n, int64_t max) {
  auto dims = input_ints(g, n, 0);
  auto vs = input_shape(g, n, 1);
  if (!dims || !vs || ir::element_count(*vs) != 1) return std::nullopt;
  Shape ys(dims->begin(), dims->end());
  for (int64_t d : ys)
    if (d < 0) return std::nullopt;
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  OutputMap out;
  out.shape = ys;
  out.sources.assign(static_cast<size_t>(*count), Source{1, 0});
  return std::vector<OutputMap>{std::move(out)};
}

}  // namespace

std::optional<Shape> static_shape(const ir::Tensor& t) {
  if (!t.has_rank) return std::nullopt;
  for (int64_t d : t.shape)
    if (d < 0) return std::nullopt;
  return t.shape;
}

std::optional<Shape> reshaped_shape(const ir::Graph& g, const ir::Node& n) {
  auto xs = input_shape(g, n, 0);
  if (!xs) return std::nullopt;
  auto count = ir::element_count(*xs);
  if (!count) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  switch (n.builtin) {
    case kReshape: {
      std::optional<std::vector<int64_t>> target;
      if (valid_input(g, n, 1)) {
        target = input_ints(g, n, 1);  // a shape computed at run time: unknown here
        if (!target) return std::nullopt;
      } else if (n.attrs.has("new_shape")) {
        target = n.attrs.get_ints("new_shape");
      } else {
        auto ys = static_shape(g.tensor(n.outputs[0]));
        if (!ys) return std::nullopt;
        target = *ys;
      }
      Shape ys(target->begin(), target->end());
      int64_t known = 1;
      int unknown = -1;
      for (size_t i = 0; i < ys.size(); ++i) {
        if (ys[i] == -1 && unknown < 0) {
          unknown = static_cast<int>(i);
        } else if (ys[i] < 0) {
          return std::nullopt;
        } else {
          auto k = ir::element_count({known, ys[i]});
          if (!k) return std::nullopt;
          known = *k;
        }
      }
      if (unknown >= 0) {
        if (known == 0 || *count % known != 0) return std::nullopt;
        ys[static_cast<size_t>(unknown)] = *count / known;
      }
      if (ir::element_count(ys) != count) return std::nullopt;
      return ys;
    }
    case kSqueeze: {
      std::vector<int64_t> dims = n.attrs.get_ints("squeeze_dims");
      std::vector<bool> drop(xs->size(), false);
      if (dims.empty()) {
        for (size_t i = 0; i < xs->size(); ++i) drop[i] = (*xs)[i] == 1;
      }
      for (int64_t d : dims) {
        auto a = ops::resolve_axis(d, xs->size());
        if (!a || (*xs)[static_cast<size_t>(*a)] != 1) return std::nullopt;
        drop[static_cast<size_t>(*a)] = true;
      }
      Shape ys;
      for (size_t i = 0; i < xs->size(); ++i)
        if (!drop[i]) ys.push_back((*xs)[i]);
      return ys;
    }
    case kExpandDims: {
      auto axis = input_ints(g, n, 1);
      if (!axis || axis->size() != 1) return std::nullopt;
      int64_t a = (*axis)[0];
      if (a < 0) a += rank + 1;
      if (a < 0 || a > rank) return std::nullopt;
      Shape ys = *xs;
      ys.insert(ys.begin() + a, 1);
      return ys;
    }
    default:
      return std::nullopt;
  }
}

bool is_data_movement(int builtin) {
  switch (builtin) {
    case kReshape:
    case kSqueeze:
    case kExpandDims:
    case kTranspose:
    case kStridedSlice:
    case kPack:
    case kUnpack:
    case kConcatenation:
    case kGather:
    case kFill:
      return true;
    default:
      return false;
  }
}

std::optional<std::vector<OutputMap>> element_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t max_elements) {
  if (n.dialect != ir::Dialect::kTflite || n.outputs.empty()) return std::nullopt;
  for (ir::TensorId t : n.outputs)
    if (!g.valid(t)) return std::nullopt;
  switch (n.builtin) {
    case kReshape:
    case kSqueeze:
    case kExpandDims: {
      if (n.outputs.size() != 1) return std::nullopt;
      auto ys = reshaped_shape(g, n);
      if (!ys) return std::nullopt;
      auto count = bounded_count(*ys, max_elements);
      if (!count) return std::nullopt;
      return std::vector<OutputMap>{identity_map(*ys, *count)};
    }
    case kTranspose:
      return transpose(g, n, max_elements);
    case kStridedSlice:
      return strided_slice(g, n, max_elements);
    case kPack:
      return pack(g, n, max_elements);
    case kUnpack:
      return unpack(g, n, max_elements);
    case kConcatenation:
      return concatenation(g, n, max_elements);
    case kGather:
      return gather(g, n, max_elements);
    case kFill:
      return fill(g, n, max_elements);
    default:
      return std::nullopt;
  }
}

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_sources(const Shape& out, const Shape& in) {
  const size_t rank = out.size();
  const size_t lead = rank - in.size();
  std::vector<int64_t> in_strides = row_strides(in);
  // Stride of each output axis in the input (0 where the input broadcasts).
  std::vector<int64_t> step(rank, 0);
  for (size_t i = 0; i < in.size(); ++i) step[lead + i] = in[i] == 1 ? 0 : in_strides[i];
  const int64_t count = ir::element_count(out).value_or(0);
  std::vector<int64_t> src;
  src.reserve(static_cast<size_t>(count));
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < count; ++k) {
    src.push_back(offset);
    for (size_t d = rank; d-- > 0;) {
      offset += step[d];
      if (++idx[d] < out[d]) break;
      offset -= step[d] * out[d];
      idx[d] = 0;
    }
  }
  return src;
}

bool is_pure_shape_op(int builtin) {
  switch (builtin) {
    case kShape:
    case kAdd:
    case kSub:
    case kMul:
    case kFloorDiv:
    case kFloorMod:
    case kMaximum:
    case kMinimum:
    case kCast:
      return true;
    default:
      return is_data_movement(builtin);
  }
}

size_t remove_dead_shape_nodes(ir::Graph& g) {
  size_t removed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<ir::NodeId> order = g.order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& n = g.node(*it);
      if (n.dialect != ir::Dialect::kTflite || !is_pure_shape_op(n.builtin)) continue;
      bool unused = true;
      for (ir::TensorId t : n.outputs)
        if (g.valid(t) && (g.use_count(t) > 0 || g.tensor(t).is_variable)) unused = false;
      if (!unused) continue;
      g.remove_node(*it);
      ++removed;
      changed = true;
    }
  }
  return removed;
}

}  // namespace lite2onnx::passes::shape_eval
