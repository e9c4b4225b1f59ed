#include "core/tflite/sparse.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "schema_generated.h"

namespace lite2onnx::tflite_reader {
namespace {

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidModel, "sparse tensor: " + std::move(message));
}

// A SparseIndexVector (int32, uint16 or uint8 values) read in place.
class IndexVector {
 public:
  IndexVector() = default;
  IndexVector(const uint8_t* data, size_t size, size_t width)
      : data_(data), size_(size), width_(width) {}
  size_t size() const { return size_; }
  int64_t operator[](size_t i) const {
    switch (width_) {
      case 1:
        return data_[i];
      case 2: {
        uint16_t v;
        std::memcpy(&v, data_ + 2 * i, 2);
        return flatbuffers::EndianScalar(v);
      }
      default: {
        int32_t v;
        std::memcpy(&v, data_ + 4 * i, 4);
        return flatbuffers::EndianScalar(v);
      }
    }
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t width_ = 4;
};

template <class Table>
IndexVector view(const Table* table) {
  if (!table || !table->values()) return {};
  return {table->values()->Data(), table->values()->size(), sizeof(*table->values()->data())};
}

IndexVector segments_of(const tflite::DimensionMetadata& m) {
  if (const auto* v = m.array_segments_as_Int32Vector()) return view(v);
  if (const auto* v = m.array_segments_as_Uint16Vector()) return view(v);
  return view(m.array_segments_as_Uint8Vector());
}

IndexVector indices_of(const tflite::DimensionMetadata& m) {
  if (const auto* v = m.array_indices_as_Int32Vector()) return view(v);
  if (const auto* v = m.array_indices_as_Uint16Vector()) return view(v);
  return view(m.array_indices_as_Uint8Vector());
}

// One level of the traversal: a tensor dimension (divided by its block size
// when blocked) or a block dimension.
struct Level {
  int dim = 0;     // the tensor dimension it indexes
  int block = -1;  // >= 0: the position in block_map of a block dimension
  int64_t size = 0;
  bool dense = true;
  IndexVector segments, indices;
};

class Densifier {
 public:
  Densifier(std::vector<Level> levels, const ir::Shape& shape, std::vector<int64_t> block_sizes,
            size_t element_size, std::span<const std::byte> values, Checkpoint& checkpoint)
      : levels_(std::move(levels)),
        block_sizes_(std::move(block_sizes)),
        element_size_(element_size),
        values_(values),
        coords_(levels_.size()),
        index_(shape.size()),
        strides_(shape.size(), 1),
        checkpoint_(checkpoint) {
    for (size_t d = shape.size(); d-- > 1;) strides_[d - 1] = strides_[d] * shape[d];
    out_.resize(static_cast<size_t>(strides_.empty() ? 1 : strides_[0] * shape[0]) * element_size);
  }

  Result<std::vector<std::byte>> run() {
    if (auto st = visit(0, 0); !st) return st.take_error();
    if (used_ != values_.size() / element_size_)
      return invalid("it stores " + std::to_string(values_.size() / element_size_) +
                     " values but its metadata places " + std::to_string(used_));
    return std::move(out_);
  }

 private:
  Status visit(size_t level, int64_t position) {
    // Polled per visit: dense levels above empty segments place nothing.
    if ((++visited_ & 0xffff) == 0 && checkpoint_.should_stop()) return checkpoint_.status();
    if (level == levels_.size()) return place();
    const Level& l = levels_[level];
    if (l.dense) {
      for (int64_t i = 0; i < l.size; ++i) {
        coords_[level] = i;
        if (auto st = visit(level + 1, position * l.size + i); !st) return st;
      }
      return ok_status();
    }
    const auto p = static_cast<size_t>(position);
    if (p + 1 >= l.segments.size())
      return invalid("level " + std::to_string(level) + " has " +
                     std::to_string(l.segments.size()) + " segment bounds, position " +
                     std::to_string(p) + " needs " + std::to_string(p + 2));
    const int64_t begin = l.segments[p], end = l.segments[p + 1];
    if (begin < 0 || begin > end || static_cast<uint64_t>(end) > l.indices.size())
      return invalid("level " + std::to_string(level) + " segment [" + std::to_string(begin) +
                     ", " + std::to_string(end) + ") outside its " +
                     std::to_string(l.indices.size()) + " indices");
    for (int64_t i = begin; i < end; ++i) {
      const int64_t c = l.indices[static_cast<size_t>(i)];
      if (c < 0 || c >= l.size)
        return invalid("level " + std::to_string(level) + " index " + std::to_string(c) +
                       " outside its size " + std::to_string(l.size));
      coords_[level] = c;
      if (auto st = visit(level + 1, i); !st) return st;
    }
    return ok_status();
  }

  // The next value goes to the dense position of the current coordinates.
  Status place() {
    if (used_ >= values_.size() / element_size_)
      return invalid("its metadata places more than the " +
                     std::to_string(values_.size() / element_size_) + " values it stores");
    for (size_t i = 0; i < levels_.size(); ++i) {
      const Level& l = levels_[i];
      const auto d = static_cast<size_t>(l.dim);
      // Tensor levels come first: a block level refines its dimension's block index.
      index_[d] = l.block < 0 ? coords_[i]
                              : index_[d] * block_sizes_[static_cast<size_t>(l.block)] + coords_[i];
    }
    int64_t flat = 0;
    for (size_t d = 0; d < index_.size(); ++d) flat += index_[d] * strides_[d];
    std::memcpy(out_.data() + static_cast<size_t>(flat) * element_size_,
                values_.data() + used_ * element_size_, element_size_);
    ++used_;
    return ok_status();
  }

  std::vector<Level> levels_;
  std::vector<int64_t> block_sizes_;
  size_t element_size_;
  std::span<const std::byte> values_;
  std::vector<int64_t> coords_, index_, strides_;
  std::vector<std::byte> out_;
  size_t used_ = 0;
  uint64_t visited_ = 0;
  Checkpoint& checkpoint_;
};

}  // namespace

Result<std::vector<std::byte>> densify(const tflite::SparsityParameters& sparsity,
                                       const ir::Shape& shape, size_t element_size,
                                       std::span<const std::byte> values, Checkpoint& checkpoint) {
  const size_t rank = shape.size();
  for (int64_t d : shape)
    if (d < 0) return invalid("its shape " + ir::to_string(shape) + " is not static");
  if (element_size == 0 || values.size() % element_size != 0)
    return invalid("its buffer of " + std::to_string(values.size()) +
                   " bytes is no whole number of elements");
  const auto* order = sparsity.traversal_order();
  const auto* map = sparsity.block_map();
  const auto* meta = sparsity.dim_metadata();
  const size_t blocks = map ? map->size() : 0, levels = rank + blocks;
  if (!order || order->size() != levels)
    return invalid("traversal_order must list " + std::to_string(levels) + " dimensions (rank " +
                   std::to_string(rank) + " + " + std::to_string(blocks) + " block dimensions)");
  if (!meta || meta->size() != levels)
    return invalid("dim_metadata must hold " + std::to_string(levels) + " entries");

  // The tensor dimensions come first, in any order, then the block dimensions.
  std::vector<bool> seen(levels, false);
  for (size_t i = 0; i < levels; ++i) {
    const int o = order->Get(static_cast<flatbuffers::uoffset_t>(i));
    const bool ok = i < rank ? o >= 0 && static_cast<size_t>(o) < rank
                             : static_cast<size_t>(o) >= rank && static_cast<size_t>(o) < levels;
    if (!ok || seen[static_cast<size_t>(o)])
      return invalid("traversal_order entry " + std::to_string(i) + " (" + std::to_string(o) +
                     ") is out of place");
    seen[static_cast<size_t>(o)] = true;
  }
  // Block sizes: the dense sizes of the block levels.
  std::vector<int64_t> block_sizes(blocks, 0);
  std::vector<int64_t> block_of_dim(rank, 1);
  for (size_t i = rank; i < levels; ++i) {
    const auto b = static_cast<size_t>(order->Get(static_cast<flatbuffers::uoffset_t>(i))) - rank;
    const auto* m = meta->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (!m || m->format() != tflite::DimensionType::DENSE || m->dense_size() <= 0)
      return invalid("block dimension " + std::to_string(b) + " must be DENSE with a size");
    const int d = map->Get(static_cast<flatbuffers::uoffset_t>(b));
    if (d < 0 || static_cast<size_t>(d) >= rank || block_of_dim[static_cast<size_t>(d)] != 1)
      return invalid("block_map entry " + std::to_string(b) + " (" + std::to_string(d) +
                     ") is out of place");
    if (shape[static_cast<size_t>(d)] % m->dense_size() != 0)
      return invalid("block size " + std::to_string(m->dense_size()) +
                     " does not divide dimension " + std::to_string(d) + " of " +
                     ir::to_string(shape));
    block_sizes[b] = m->dense_size();
    block_of_dim[static_cast<size_t>(d)] = m->dense_size();
  }
  std::vector<Level> plan(levels);
  for (size_t i = 0; i < levels; ++i) {
    const int o = order->Get(static_cast<flatbuffers::uoffset_t>(i));
    const auto* m = meta->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (!m) return invalid("dim_metadata entry " + std::to_string(i) + " is null");
    Level& l = plan[i];
    if (i < rank) {
      l.dim = o;
      l.size = shape[static_cast<size_t>(o)] / block_of_dim[static_cast<size_t>(o)];
    } else {
      l.block = o - static_cast<int>(rank);
      l.dim = map->Get(static_cast<flatbuffers::uoffset_t>(l.block));
      l.size = block_sizes[static_cast<size_t>(l.block)];
    }
    l.dense = m->format() == tflite::DimensionType::DENSE;
    if (l.dense && m->dense_size() != l.size)
      return invalid("level " + std::to_string(i) + " is DENSE of size " +
                     std::to_string(m->dense_size()) + " but its dimension has " +
                     std::to_string(l.size));
    if (!l.dense) {
      l.segments = segments_of(*m);
      l.indices = indices_of(*m);
    }
  }
  return Densifier(std::move(plan), shape, std::move(block_sizes), element_size, values, checkpoint)
      .run();
}

}  // namespace lite2onnx::tflite_reader
