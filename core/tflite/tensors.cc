// The reader's buffers and tensors (reader_parts.h): every index, shape, size
// and element count checked; constant data stays a view into the model's
// bytes (sparse data made dense, as TFLite's DENSIFY would).
#include <flatbuffers/flatbuffers.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/tflite/reader_parts.h"
#include "core/tflite/sparse.h"
#include "schema_generated.h"

namespace lite2onnx::tflite_reader {

using ir::DataType;

std::string tensor_label(const tflite::Tensor* t, size_t index) {
  std::string name = t && t->name() ? t->name()->str() : "";
  return "tensor " + std::to_string(index) + (name.empty() ? "" : " '" + name + "'");
}

Result<std::vector<std::span<const std::byte>>> read_buffers(const tflite::Model& model,
                                                             std::span<const std::byte> bytes) {
  std::vector<std::span<const std::byte>> out;
  const auto* buffers = model.buffers();
  if (!buffers) return out;
  out.reserve(buffers->size());
  for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
    const tflite::Buffer* b = buffers->Get(i);
    if (!b) {
      out.emplace_back();
      continue;
    }
    if (b->offset() > 1) {
      uint64_t off = b->offset(), size = b->size();
      if (off > bytes.size() || size > bytes.size() - off)
        return invalid("buffer " + std::to_string(i) + ": data at offset " + std::to_string(off) +
                       " size " + std::to_string(size) + " lies outside the " +
                       std::to_string(bytes.size()) + "-byte file");
      out.push_back(bytes.subspan(off, size));
    } else if (b->data()) {
      out.emplace_back(reinterpret_cast<const std::byte*>(b->data()->data()), b->data()->size());
    } else {
      out.emplace_back();
    }
  }
  return out;
}

Result<ir::Tensor> read_tensor(const tflite::Tensor* t, size_t index,
                               const std::vector<std::span<const std::byte>>& buffers,
                               const Limits& limits, uint64_t& budget, ir::CreatedBytes& created,
                               Checkpoint& checkpoint) {
  if (!t) return invalid(tensor_label(t, index) + " is null");
  uint64_t cost = (t->name() ? t->name()->size() : 0) + (t->shape() ? t->shape()->size() * 8 : 0);
  if (const auto* q = t->quantization()) {
    if (q->scale()) cost += q->scale()->size() * 4;
    if (q->zero_point()) cost += q->zero_point()->size() * 8;
  }
  if (cost > budget)
    return make_error(ErrorCode::kResourceLimit,
                      tensor_label(t, index) +
                          ": the model expands to far more than its size "
                          "(tables or strings shared between tensors)");
  budget -= cost;
  ir::Tensor out;
  out.name = t->name() ? t->name()->str() : "";
  int type = static_cast<int>(t->type());
  if (type < 0 || type > static_cast<int>(DataType::kBFloat16))
    return invalid(tensor_label(t, index) + ": unknown type code " + std::to_string(type));
  out.dtype = static_cast<DataType>(type);
  out.is_variable = t->is_variable();
  if (t->shape()) {
    if (t->shape()->size() > limits.max_rank)
      return make_error(ErrorCode::kResourceLimit,
                        tensor_label(t, index) + ": rank " + std::to_string(t->shape()->size()) +
                            " exceeds the limit of " + std::to_string(limits.max_rank) +
                            " (max_rank)");
    for (int32_t d : *t->shape()) {
      if (d < 0)
        return invalid(tensor_label(t, index) + ": negative dimension " + std::to_string(d) +
                       " in shape");
      out.shape.push_back(d);
    }
  }
  out.has_rank = t->shape() != nullptr || t->has_rank();
  if (const auto* sig = t->shape_signature(); sig && sig->size() > 0) {
    if (sig->size() != out.shape.size())
      return invalid(tensor_label(t, index) + ": shape_signature has rank " +
                     std::to_string(sig->size()) + " but shape has rank " +
                     std::to_string(out.shape.size()));
    for (flatbuffers::uoffset_t i = 0; i < sig->size(); ++i) {
      int32_t d = sig->Get(i);
      if (d < -1)
        return invalid(tensor_label(t, index) + ": invalid shape_signature dimension " +
                       std::to_string(d));
      if (d == -1) out.shape[i] = -1;
    }
  }
  // The element count of the static shape must fit (dynamic dims count as 1).
  ir::Shape static_shape = out.shape;
  for (auto& d : static_shape)
    if (d < 0) d = 1;
  auto count = ir::element_count(static_shape);
  if (!count) return invalid(tensor_label(t, index) + ": element count overflows");
  size_t esize = ir::element_size(out.dtype);
  if (esize && static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / esize)
    return invalid(tensor_label(t, index) + ": byte size overflows");

  uint32_t buffer = t->buffer();
  if (buffer >= buffers.size() && !(buffer == 0 && buffers.empty()))
    return invalid(tensor_label(t, index) + ": buffer index " + std::to_string(buffer) +
                   " out of range (model has " + std::to_string(buffers.size()) + " buffers)");
  if (buffer != 0 && !buffers[buffer].empty() && t->sparsity()) {
    // The buffer holds only the values the SparsityParameters place: made
    // dense here, as TFLite's DENSIFY (or a sparse-aware kernel) would.
    if (!esize)
      return make_error(ErrorCode::kUnsupported,
                        tensor_label(t, index) + ": sparse tensor of " + ir::to_string(out.dtype));
    const uint64_t dense_bytes = static_cast<uint64_t>(*count) * esize;
    if (!created.fits(dense_bytes))
      return make_error(ErrorCode::kResourceLimit,
                        tensor_label(t, index) + ": its dense form needs " +
                            std::to_string(dense_bytes) +
                            " bytes, beyond what the conversion may create (max_created_bytes)");
    auto dense = densify(*t->sparsity(), out.shape, esize, buffers[buffer], checkpoint);
    if (!dense) {
      Error e = dense.take_error();
      e.message = tensor_label(t, index) + ": " + e.message;
      return e;
    }
    created.charge(dense_bytes, tensor_label(t, index) + " (densified)");
    out.data = ir::ConstData::owned(std::move(*dense), out.dtype);
    out.was_sparse = true;
  } else if (buffer != 0 && !buffers[buffer].empty() && out.dtype == DataType::kInt4) {
    // Packed INT4: two values per byte, the first in the low nibble (TFLite's
    // UnpackDenseInt4IntoInt8); unpacked here to int8, which every later part
    // reads, its size charged to what the conversion creates.
    if (out.shape.size() != static_shape.size())
      return invalid(tensor_label(t, index) + ": INT4 constant with a dynamic shape");
    const std::span<const std::byte> data = buffers[buffer];
    const uint64_t n = static_cast<uint64_t>(*count);
    if (data.size() != (n + 1) / 2)
      return invalid(tensor_label(t, index) + ": buffer " + std::to_string(buffer) + " holds " +
                     std::to_string(data.size()) + " bytes but " + std::to_string(n) +
                     " packed INT4 values need " + std::to_string((n + 1) / 2));
    if (!created.fits(n))
      return make_error(ErrorCode::kResourceLimit,
                        tensor_label(t, index) + ": its " + std::to_string(n) +
                            " INT4 values unpacked need more than the conversion may create "
                            "(max_created_bytes)");
    std::vector<std::byte> unpacked(n);
    for (uint64_t i = 0; i < n; ++i) {
      const auto byte = static_cast<uint8_t>(data[i / 2]);
      const int nibble = i % 2 == 0 ? byte & 0xf : byte >> 4;
      unpacked[i] = static_cast<std::byte>(static_cast<int8_t>(nibble >= 8 ? nibble - 16 : nibble));
    }
    created.charge(n, tensor_label(t, index) + " (INT4 unpacked)");
    out.dtype = DataType::kInt8;
    out.data = ir::ConstData::owned(std::move(unpacked), DataType::kInt8);
  } else if (buffer != 0 && !buffers[buffer].empty()) {
    std::span<const std::byte> data = buffers[buffer];
    // No shape at all: TFLite reads a one-element constant as a scalar.
    if (!t->shape() && esize && data.size() == esize) out.has_rank = true;
    if (!t->shape() && !out.has_rank)
      return invalid(tensor_label(t, index) + ": a constant without a shape holds " +
                     std::to_string(data.size()) + " bytes; only a scalar (one " +
                     ir::to_string(out.dtype) + ") may omit its shape");
    if (esize) {
      if (out.shape.size() != static_shape.size() || !ir::element_count(out.shape))
        return invalid(tensor_label(t, index) + ": constant with a dynamic shape");
      uint64_t expected = static_cast<uint64_t>(*count) * esize;
      if (data.size() != expected)
        return invalid(tensor_label(t, index) + ": buffer " + std::to_string(buffer) + " holds " +
                       std::to_string(data.size()) + " bytes but shape " +
                       ir::to_string(out.shape) + " of " + ir::to_string(out.dtype) + " needs " +
                       std::to_string(expected));
    }
    ir::ConstData c;
    c.bytes = data;
    c.stored_type = out.dtype;
    // The converter reads constants as typed spans. The verifier checks only
    // that a vector's length is 4-byte aligned, so the data of an 8-byte type
    // (or an external buffer's, at any offset) may be misaligned in a crafted
    // file: such a constant is copied to aligned memory.
    if (esize > 1 && reinterpret_cast<uintptr_t>(data.data()) % std::min<size_t>(esize, 8) != 0)
      c = ir::ConstData::owned({data.begin(), data.end()}, out.dtype);
    out.data = c;
  }

  if (const auto* q = t->quantization(); q && q->scale() && q->scale()->size() > 0) {
    ir::QuantParams qp;
    for (float s : *q->scale()) qp.scale.push_back(s);
    // Read byte-wise: the verifier checks that a vector's length is 4-byte
    // aligned, not that its 8-byte elements are (a crafted file misaligns them).
    if (const auto* zp = q->zero_point())
      for (flatbuffers::uoffset_t i = 0; i < zp->size(); ++i) {
        int64_t z;
        std::memcpy(&z, zp->Data() + i * sizeof z, sizeof z);
        qp.zero_point.push_back(flatbuffers::EndianScalar(z));
      }
    qp.axis = q->quantized_dimension();
    if (!qp.zero_point.empty() && qp.zero_point.size() != qp.scale.size())
      return invalid(tensor_label(t, index) + ": " + std::to_string(qp.scale.size()) +
                     " quantization scales but " + std::to_string(qp.zero_point.size()) +
                     " zero points");
    out.quant = std::move(qp);
  }
  return out;
}

Status read_blockwise(const tflite::Tensor* t, size_t index, ir::Graph& g, uint64_t& budget) {
  const auto* q = t ? t->quantization() : nullptr;
  const auto* b = q ? q->details_as_BlockwiseQuantization() : nullptr;
  if (!b) return ok_status();
  ir::Tensor& x = g.tensor(static_cast<ir::TensorId>(index));
  const std::string label = tensor_label(t, index) + ": blockwise quantization: ";
  const int64_t block = b->block_size();
  if (x.shape.empty() || block <= 0 || x.shape.back() <= 0 || x.shape.back() % block != 0)
    return invalid(label + "block size " + std::to_string(block) +
                   " does not divide the last "
                   "dimension of shape " +
                   ir::to_string(x.shape));
  const auto count = ir::element_count(x.shape);
  if (!count || *count <= 0) return invalid(label + "shape " + ir::to_string(x.shape));
  const auto blocks = static_cast<size_t>(*count / block);
  // The scales and zero points are constants of this subgraph, one per block
  // (TFLite reads them as tensors; a shape other than the blocks' is refused).
  auto values = [&](int32_t id, const char* what) -> Result<std::vector<double>> {
    if (id < 0 || static_cast<size_t>(id) >= g.tensor_count())
      return invalid(label + what + " tensor index " + std::to_string(id) + " out of range");
    const ir::Tensor& s = g.tensor(id);
    const auto n = ir::element_count(s.shape);
    if (!s.is_const() || !n || static_cast<size_t>(*n) != blocks)
      return invalid(label + what + " '" + s.name + "' must be a constant of " +
                     std::to_string(blocks) + " values (one per block of " + std::to_string(block) +
                     ")");
    if (blocks * 8 > budget) return expansion(label + what);
    budget -= blocks * 8;
    std::vector<double> out(blocks);
    const ir::ConstData& d = *s.data;
    for (size_t i = 0; i < blocks; ++i) {
      switch (d.stored_type) {
        case DataType::kFloat32:
          out[i] = d.as<float>()[i];
          break;
        case DataType::kFloat16:
          out[i] = ir::half_to_float(d.as<uint16_t>()[i]);
          break;
        case DataType::kInt32:
          out[i] = d.as<int32_t>()[i];
          break;
        case DataType::kInt64:
          out[i] = static_cast<double>(d.as<int64_t>()[i]);
          break;
        case DataType::kInt8:
          out[i] = d.as<int8_t>()[i];
          break;
        default:
          return invalid(label + what + " '" + s.name + "' of type " +
                         ir::to_string(d.stored_type));
      }
    }
    return out;
  };
  auto scales = values(b->scales(), "scales");
  if (!scales) return scales.take_error();
  ir::QuantParams qp;
  qp.block_size = block;
  qp.axis = static_cast<int>(x.shape.size()) - 1;
  for (double v : *scales) {
    if (!std::isfinite(v) || v < 0) return invalid(label + "a scale of " + std::to_string(v));
    qp.scale.push_back(static_cast<float>(v));
  }
  qp.zero_point.assign(blocks, 0);
  if (b->zero_points() >= 0) {
    auto zps = values(b->zero_points(), "zero points");
    if (!zps) return zps.take_error();
    for (size_t i = 0; i < blocks; ++i) {
      const double z = (*zps)[i];
      if (z != std::floor(z) || z < -128 || z > 127)
        return invalid(label + "a zero point of " + std::to_string(z));
      qp.zero_point[i] = static_cast<int64_t>(z);
    }
  }
  x.quant = std::move(qp);
  return ok_status();
}

}  // namespace lite2onnx::tflite_reader
