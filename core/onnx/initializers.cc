// Constants' bytes as ONNX wants them (emit.h, emit_parts.h): in ONNX axis
// order (permuted in blocks, or element by element for any other
// permutation), float16 widened to float32 where the tensor became float32,
// and state inputs' initial values in their inputs' type.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/onnx/emit_parts.h"

namespace lite2onnx::onnx_emit {
namespace {

using ir::DataType;

// Copies one element, widening float16 to float32 when the types differ (a
// narrower element of another type is zero-extended: the output's bytes never
// depend on what the destination held).
inline void copy_element(const std::byte* src, std::byte* dst, size_t src_size, size_t dst_size,
                         bool widen_half) {
  if (widen_half) {
    uint16_t h;
    std::memcpy(&h, src, 2);
    float f = ir::half_to_float(h);
    std::memcpy(dst, &f, 4);
  } else if (src_size >= dst_size) {
    std::memcpy(dst, src, dst_size);
  } else {
    std::memcpy(dst, src, src_size);
    std::memset(dst + src_size, 0, dst_size - src_size);
  }
}

}  // namespace

// The layouts weights take (OHWI -> OIHW, 1HWC -> C1HW, OHWI -> IOHW, NHWC ->
// NCHW) all swap two blocks of axes after a common prefix: [P..., A..., B...] ->
// [P..., B..., A...]. That is a batch of 2-D transposes of [A, B] matrices
// (kBlock, done in cache-sized tiles); any other permutation is walked element
// by element (kGeneral).
ConstantWriter::ConstantWriter(const ir::Tensor& t) {
  const ir::ConstData& c = *t.data;
  src_ = c.bytes.data();
  src_es_ = ir::element_size(c.stored_type);
  dst_es_ = ir::element_size(t.dtype);
  widen_ = c.stored_type == DataType::kFloat16 && t.dtype == DataType::kFloat32;
  count_ = static_cast<size_t>(ir::element_count(t.shape).value_or(0));

  // Axes of size 1 never change the memory order; only the rest matter.
  const size_t rank = t.shape.size();
  const ir::Perm p = t.layout.empty() ? ir::identity_perm(rank) : t.layout;
  std::vector<int> moving;
  for (int a : p)
    if (t.shape[static_cast<size_t>(a)] != 1) moving.push_back(a);
  bool in_order = true;
  for (size_t i = 1; i < moving.size(); ++i) in_order &= moving[i - 1] < moving[i];
  if (in_order) return;  // kInOrder

  size_t k = 0;
  while (k < rank && p[k] == static_cast<int>(k)) ++k;
  const size_t m = static_cast<size_t>(p[k]);  // B starts at axis m
  bool block = m > k;
  for (size_t i = 0; block && i < rank - m; ++i) block = p[k + i] == static_cast<int>(m + i);
  for (size_t i = 0; block && i < m - k; ++i)
    block = p[k + (rank - m) + i] == static_cast<int>(k + i);
  if (block) {
    kind_ = Kind::kBlock;
    for (size_t a = k; a < m; ++a) rows_ *= t.shape[a];
    for (size_t a = m; a < rank; ++a) cols_ *= t.shape[a];
    return;
  }
  kind_ = Kind::kGeneral;
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t a = rank - 1; a > 0; --a) src_stride[a - 1] = src_stride[a] * t.shape[a];
  out_dim_.resize(rank);
  out_stride_.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dim_[i] = t.shape[static_cast<size_t>(p[i])];
    out_stride_[i] = src_stride[static_cast<size_t>(p[i])];
  }
}

std::optional<std::span<const std::byte>> ConstantWriter::as_stored() const {
  if (kind_ != Kind::kInOrder || widen_ || src_es_ != dst_es_) return std::nullopt;
  return std::span(src_, count_ * dst_es_);
}

void ConstantWriter::write(size_t first, size_t n, std::byte* dst) const {
  if (n == 0) return;
  switch (kind_) {
    case Kind::kInOrder:
      if (!widen_ && src_es_ == dst_es_) {
        std::memcpy(dst, src_ + first * src_es_, n * dst_es_);
      } else {
        for (size_t i = 0; i < n; ++i)
          copy_element(src_ + (first + i) * src_es_, dst + i * dst_es_, src_es_, dst_es_, widen_);
      }
      return;
    case Kind::kBlock:
      return write_block(first, n, dst);
    case Kind::kGeneral:
      return write_general(first, n, dst);
  }
}

// Output element o of [batch, cols, rows] reads source element (b, row, col)
// of [batch, rows, cols]. A line (one output row: `rows_` elements) cut by
// the range is copied element by element, whole lines in tiles.
void ConstantWriter::write_block(size_t first, size_t n, std::byte* dst) const {
  const auto rows = static_cast<size_t>(rows_), cols = static_cast<size_t>(cols_);
  auto one = [&](size_t o, std::byte* d) {
    const size_t row = o % rows, line = o / rows, col = line % cols, b = line / cols;
    copy_element(src_ + ((b * rows + row) * cols + col) * src_es_, d, src_es_, dst_es_, widen_);
  };
  size_t o = first;
  const size_t end = first + n;
  for (; o < end && o % rows != 0; ++o, dst += dst_es_) one(o, dst);
  while (end - o >= rows) {
    const size_t line = o / rows, b = line / cols, c0 = line % cols;
    const size_t c1 = std::min(cols, c0 + (end - o) / rows);
    transpose_lines(b, c0, c1, dst);
    o += (c1 - c0) * rows;
    dst += (c1 - c0) * rows * dst_es_;
  }
  for (; o < end; ++o, dst += dst_es_) one(o, dst);
}

// A 4-byte tile [r0, r1) x [t0, t1) of output lines from column c0 on:
// dst[col][row] = src[row][col], four rows by four columns at a time with SSE
// where the tile has them (a third of the time of element copies on the
// 108 MiB CNN's filters), the rest element by element.
static void transpose_tile4(const std::byte* s, std::byte* dst, size_t rows, size_t cols, size_t c0,
                            size_t r0, size_t r1, size_t t0, size_t t1) {
  size_t row = r0;
#if defined(__SSE2__)
  for (; row + 4 <= r1; row += 4) {
    size_t col = t0;
    for (; col + 4 <= t1; col += 4) {
      const auto* from = reinterpret_cast<const float*>(s + (row * cols + col) * 4);
      __m128 a = _mm_loadu_ps(from), b = _mm_loadu_ps(from + cols);
      __m128 c = _mm_loadu_ps(from + 2 * cols), d = _mm_loadu_ps(from + 3 * cols);
      _MM_TRANSPOSE4_PS(a, b, c, d);
      auto* to = reinterpret_cast<float*>(dst + ((col - c0) * rows + row) * 4);
      _mm_storeu_ps(to, a);
      _mm_storeu_ps(to + rows, b);
      _mm_storeu_ps(to + 2 * rows, c);
      _mm_storeu_ps(to + 3 * rows, d);
    }
    for (; col < t1; ++col)
      for (size_t r = row; r < row + 4; ++r)
        std::memcpy(dst + ((col - c0) * rows + r) * 4, s + (r * cols + col) * 4, 4);
  }
#endif
  for (; row < r1; ++row)
    for (size_t col = t0; col < t1; ++col)
      std::memcpy(dst + ((col - c0) * rows + row) * 4, s + (row * cols + col) * 4, 4);
}

// Output lines [c0, c1) of batch `b` (dst[col][row] = src[row][col]), in
// tiles that stay in the cache.
void ConstantWriter::transpose_lines(size_t b, size_t c0, size_t c1, std::byte* dst) const {
  const auto rows = static_cast<size_t>(rows_), cols = static_cast<size_t>(cols_);
  constexpr size_t kTile = 32;
  const std::byte* s = src_ + b * rows * cols * src_es_;
  const bool plain4 = !widen_ && src_es_ == 4 && dst_es_ == 4;
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    const size_t r1 = std::min(rows, r0 + kTile);
    for (size_t t0 = c0; t0 < c1; t0 += kTile) {
      const size_t t1 = std::min(c1, t0 + kTile);
      if (plain4) {
        transpose_tile4(s, dst, rows, cols, c0, r0, r1, t0, t1);
        continue;
      }
      for (size_t col = t0; col < t1; ++col) {
        std::byte* drow = dst + (col - c0) * rows * dst_es_;
        for (size_t row = r0; row < r1; ++row)
          copy_element(s + (row * cols + col) * src_es_, drow + row * dst_es_, src_es_, dst_es_,
                       widen_);
      }
    }
  }
}

// Any other permutation: the output walked in order from element `first`,
// an odometer over the output axes tracking the source offset.
void ConstantWriter::write_general(size_t first, size_t n, std::byte* dst) const {
  const size_t rank = out_dim_.size();
  std::vector<int64_t> idx(rank, 0);
  auto rest = static_cast<int64_t>(first);
  for (size_t a = rank; a-- > 0;) {
    idx[a] = rest % out_dim_[a];
    rest /= out_dim_[a];
  }
  int64_t base = 0;  // the source offset of the outer axes' indices
  for (size_t a = 0; a + 1 < rank; ++a) base += idx[a] * out_stride_[a];
  const int64_t inner = out_dim_[rank - 1], inner_stride = out_stride_[rank - 1];
  auto left = static_cast<int64_t>(n);
  std::byte* out = dst;
  for (;;) {
    const int64_t k0 = idx[rank - 1];
    const int64_t run = std::min(inner - k0, left);
    for (int64_t k = k0; k < k0 + run; ++k, out += dst_es_)
      copy_element(src_ + static_cast<size_t>(base + k * inner_stride) * src_es_, out, src_es_,
                   dst_es_, widen_);
    left -= run;
    if (left == 0) return;
    idx[rank - 1] = 0;
    // Advance the odometer over the outer axes.
    for (size_t a = rank - 1; a-- > 0;) {
      base += out_stride_[a];
      if (++idx[a] < out_dim_[a]) break;
      base -= out_stride_[a] * out_dim_[a];
      idx[a] = 0;
    }
  }
}

size_t onnx_byte_size(const ir::Tensor& t) {
  auto n = ir::element_count(t.shape);
  return n ? static_cast<size_t>(*n) * ir::element_size(t.dtype) : 0;
}

void write_constant(const ir::Tensor& t, std::byte* dst) {
  const ConstantWriter writer(t);
  writer.write(0, writer.count(), dst);
}

Result<ir::ConstData> state_initial_data(const ir::Tensor& x, const ir::StatePair& p) {
  const ir::ConstData& d = p.initial;
  const auto count = ir::element_count(x.shape);
  const size_t from = ir::element_size(d.stored_type);
  if (!count || !from || d.bytes.size() != static_cast<size_t>(*count) * from)
    return make_error(ErrorCode::kInternal,
                      "the initial value of state '" + x.name + "' does not fit its shape");
  if (d.stored_type == x.dtype ||
      (d.stored_type == DataType::kFloat16 && x.dtype == DataType::kFloat32))
    return d;
  if (x.dtype == DataType::kFloat32 && p.initial_quant && p.initial_quant->scale.size() == 1) {
    const float scale = p.initial_quant->scale[0];
    const int64_t zero = p.initial_quant->zero_point.empty() ? 0 : p.initial_quant->zero_point[0];
    std::vector<std::byte> bytes(static_cast<size_t>(*count) * 4);
    for (size_t i = 0; i < static_cast<size_t>(*count); ++i) {
      int64_t q = 0;
      const std::byte* at = d.bytes.data() + i * from;
      switch (d.stored_type) {
        case DataType::kInt8:
          q = static_cast<int8_t>(at[0]);
          break;
        case DataType::kUInt8:
          q = static_cast<uint8_t>(at[0]);
          break;
        case DataType::kInt16: {
          int16_t v;
          std::memcpy(&v, at, 2);
          q = v;
          break;
        }
        default: {
          int32_t v;
          std::memcpy(&v, at, 4);
          q = v;
        }
      }
      const float f = static_cast<float>(q - zero) * scale;
      std::memcpy(bytes.data() + i * 4, &f, 4);
    }
    return ir::ConstData::owned(std::move(bytes), DataType::kFloat32);
  }
  return make_error(ErrorCode::kInternal, "the initial value of state '" + x.name + "' (" +
                                              ir::to_string(d.stored_type) +
                                              ") cannot be written as " + ir::to_string(x.dtype));
}

}  // namespace lite2onnx::onnx_emit
