#include "core/ir/shape.h"

#include <algorithm>

namespace lite2onnx::ir {

std::optional<Shape> static_shape(const Tensor& t) {
  if (!t.has_rank) return std::nullopt;
  for (int64_t d : t.shape)
    if (d < 0) return std::nullopt;
  return t.shape;
}

std::optional<std::vector<int64_t>> const_ints(const Graph& g, TensorId id) {
  if (!g.valid(id)) return std::nullopt;
  const Tensor& t = g.tensor(id);
  if (!t.is_const()) return std::nullopt;
  std::vector<int64_t> v;
  if (t.data->stored_type == DataType::kInt32) {
    for (int32_t x : t.data->as<int32_t>()) v.push_back(x);
  } else if (t.data->stored_type == DataType::kInt64) {
    for (int64_t x : t.data->as<int64_t>()) v.push_back(x);
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<int> resolve_axis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

std::vector<int64_t> row_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
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
  const int64_t count = element_count(out).value_or(0);
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

}  // namespace lite2onnx::ir
