// Constants' bytes as ONNX wants them (emit.h, emit_parts.h): in ONNX axis
// order (permuted in blocks, or element by element for any other
// permutation), float16 widened to float32 where the tensor became float32,
// and state inputs' initial values in their inputs' type.
#include <cstring>

#include "core/onnx/emit_parts.h"

namespace lite2onnx::onnx_emit {
namespace {

using ir::DataType;

// Copies one element, widening float16 to float32 when the types differ.
inline void copy_element(const std::byte* src, std::byte* dst, size_t src_size, size_t dst_size,
                         bool widen_half) {
  if (widen_half) {
    uint16_t h;
    std::memcpy(&h, src, 2);
    float f = ir::half_to_float(h);
    std::memcpy(dst, &f, 4);
  } else {
    std::memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
  }
}

// The layouts weights take (OHWI -> OIHW, 1HWC -> C1HW, OHWI -> IOHW, NHWC ->
// NCHW) all swap two blocks of axes after a common prefix: [P..., A..., B...] ->
// [P..., B..., A...]. That is a batch of 2-D transposes of [A, B] matrices,
// done here in cache-sized tiles. Returns false for other permutations.
bool write_block_transpose(const ir::Tensor& t, const ir::Perm& p, std::byte* dst) {
  const size_t rank = p.size();
  size_t k = 0;
  while (k < rank && p[k] == static_cast<int>(k)) ++k;
  if (k == rank) return false;
  const size_t m = static_cast<size_t>(p[k]);  // B starts at axis m
  for (size_t i = 0; i < rank - m; ++i)
    if (p[k + i] != static_cast<int>(m + i)) return false;
  for (size_t i = 0; i < m - k; ++i)
    if (p[k + (rank - m) + i] != static_cast<int>(k + i)) return false;
  int64_t batch = 1, rows = 1, cols = 1;
  for (size_t a = 0; a < k; ++a) batch *= t.shape[a];
  for (size_t a = k; a < m; ++a) rows *= t.shape[a];
  for (size_t a = m; a < rank; ++a) cols *= t.shape[a];

  const ir::ConstData& c = *t.data;
  const size_t src_es = ir::element_size(c.stored_type);
  const size_t dst_es = ir::element_size(t.dtype);
  const bool widen = c.stored_type == DataType::kFloat16 && t.dtype == DataType::kFloat32;
  const std::byte* src = c.bytes.data();
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b) {
    const std::byte* s = src + static_cast<size_t>(b * rows * cols) * src_es;
    std::byte* d = dst + static_cast<size_t>(b * rows * cols) * dst_es;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        // dst[col][row] = src[row][col]
        for (int64_t col = c0; col < c1; ++col) {
          std::byte* drow = d + static_cast<size_t>(col * rows) * dst_es;
          if (!widen && src_es == 4) {
            for (int64_t row = r0; row < r1; ++row)
              std::memcpy(drow + row * 4, s + static_cast<size_t>(row * cols + col) * 4, 4);
          } else {
            for (int64_t row = r0; row < r1; ++row)
              copy_element(s + static_cast<size_t>(row * cols + col) * src_es,
                           drow + static_cast<size_t>(row) * dst_es, src_es, dst_es, widen);
          }
        }
      }
    }
  }
  return true;
}

}  // namespace

size_t onnx_byte_size(const ir::Tensor& t) {
  auto n = ir::element_count(t.shape);
  return n ? static_cast<size_t>(*n) * ir::element_size(t.dtype) : 0;
}

void write_constant(const ir::Tensor& t, std::byte* dst) {
  const ir::ConstData& c = *t.data;
  const size_t src_es = ir::element_size(c.stored_type);
  const size_t dst_es = ir::element_size(t.dtype);
  const bool widen = c.stored_type == DataType::kFloat16 && t.dtype == DataType::kFloat32;
  const size_t count = static_cast<size_t>(ir::element_count(t.shape).value_or(0));
  const std::byte* src = c.bytes.data();

  // Axes of size 1 never change the memory order; only the rest matter.
  const size_t rank = t.shape.size();
  ir::Perm p = t.layout.empty() ? ir::identity_perm(rank) : t.layout;
  std::vector<int> moving;
  for (int a : p)
    if (t.shape[static_cast<size_t>(a)] != 1) moving.push_back(a);
  bool in_order = true;
  for (size_t i = 1; i < moving.size(); ++i) in_order &= moving[i - 1] < moving[i];

  if (in_order) {
    if (!widen && src_es == dst_es) {
      std::memcpy(dst, src, count * dst_es);
    } else {
      for (size_t i = 0; i < count; ++i)
        copy_element(src + i * src_es, dst + i * dst_es, src_es, dst_es, widen);
    }
    return;
  }
  if (write_block_transpose(t, p, dst)) return;
  // General permutation: walk the output in order, tracking the source offset.
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t a = rank - 1; a > 0; --a) src_stride[a - 1] = src_stride[a] * t.shape[a];
  std::vector<int64_t> out_dim(rank), out_stride(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dim[i] = t.shape[static_cast<size_t>(p[i])];
    out_stride[i] = src_stride[static_cast<size_t>(p[i])];
  }
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = out_dim[rank - 1];
  const int64_t inner_stride = out_stride[rank - 1];
  int64_t base = 0;
  std::byte* out = dst;
  for (size_t done = 0; done < count; done += static_cast<size_t>(inner)) {
    for (int64_t k = 0; k < inner; ++k, out += dst_es)
      copy_element(src + (base + k * inner_stride) * static_cast<int64_t>(src_es), out, src_es,
                   dst_es, widen);
    // Advance the odometer over the outer axes.
    for (size_t a = rank - 1; a-- > 0;) {
      base += out_stride[a];
      if (++idx[a] < out_dim[a]) break;
      base -= out_stride[a] * out_dim[a];
      idx[a] = 0;
    }
  }
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
