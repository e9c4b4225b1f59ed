// Sparse constants (Tensor.sparsity) made dense, as TFLite's DENSIFY and its
// sparse-aware FULLY_CONNECTED read them: the dimensions are visited in
// `traversal_order` (the tensor's, then the blocks'), a DENSE level lists
// every coordinate, a SPARSE_CSR level the coordinates of its segment, and
// each position reached takes the next stored value. Everything the file says
// is checked: orders, block sizes, every segment and index against its level,
// and that the values are used exactly once each. O(dense elements), polled.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/checkpoint.h"
#include "core/ir/types.h"
#include "core/status.h"

namespace tflite {
struct SparsityParameters;
}

namespace lite2onnx::tflite_reader {

// The dense bytes (row-major `shape`, zeros where nothing is stored) of the
// `values` (elements of `element_size` bytes) a sparse tensor stores.
// kInvalidModel explains what is inconsistent (the caller names the tensor).
Result<std::vector<std::byte>> densify(const tflite::SparsityParameters& sparsity,
                                       const ir::Shape& shape, size_t element_size,
                                       std::span<const std::byte> values, Checkpoint& checkpoint);

}  // namespace lite2onnx::tflite_reader
