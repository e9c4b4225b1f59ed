// Where a serialized ONNX model is written: into memory of its size, or
// streamed in pieces (a file, a pipe).
#pragma once

#include <cstddef>
#include <functional>
#include <span>

namespace lite2onnx {

// In memory: given the model's exact size, the callee returns that many
// writable bytes (or null when it has no room). The model is written once,
// straight into them; the server's workers pass the memory they answer
// through, saving a copy of every answer.
using OutputBuffer = std::function<std::byte*(size_t bytes)>;

// Streamed: the model's bytes in order, in pieces, so that no buffer of the
// model's size is needed. A large constant that ONNX stores as TFLite does
// comes as a span of the TFLite model's own bytes (a memory-mapped model's
// pages go to a file without a copy in user space); a permuted or widened one
// through a bounded buffer. Nothing is written before the conversion has
// succeeded but for writing its bytes.
class OutputStream {
 public:
  virtual ~OutputStream() = default;
  // Appends `bytes`; false when they cannot be written (the stream knows why).
  virtual bool write(std::span<const std::byte> bytes) = 0;
  // Whether write_at() can write again over bytes written before (a file):
  // then the source model's SHA-256 in the metadata is written last, so that
  // a caller can hash the model while the conversion runs.
  virtual bool positional() const { return false; }
  // Writes `bytes` over the ones at `offset` (all written before).
  virtual bool write_at(size_t offset, std::span<const std::byte> bytes) {
    (void)offset;
    (void)bytes;
    return false;
  }
};

}  // namespace lite2onnx
