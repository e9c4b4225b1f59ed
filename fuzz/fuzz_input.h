// Reads fuzz input as a stream of small decisions. An exhausted stream reads
// as zeros, so every input, however short, decodes to something.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lite2onnx::fuzz {

class FuzzInput {
 public:
  explicit FuzzInput(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  bool empty() const { return pos_ >= bytes_.size(); }
  uint8_t byte() { return empty() ? 0 : bytes_[pos_++]; }
  // A value in [lo, hi] (lo when the stream is exhausted).
  int range(int lo, int hi) {
    if (hi <= lo) return lo;
    uint32_t width = static_cast<uint32_t>(hi - lo) + 1;
    uint32_t v = byte();
    if (width > 256) v = (v << 8) | byte();
    return lo + static_cast<int>(v % width);
  }
  // True with probability 1/n (false when the stream is exhausted).
  bool one_in(int n) { return range(0, n - 1) == n - 1; }
  bool flag() { return (byte() & 1) != 0; }
  template <class T>
  const T& pick(std::span<const T> items) {
    return items[static_cast<size_t>(range(0, static_cast<int>(items.size()) - 1))];
  }
  // Everything not read yet.
  std::span<const uint8_t> rest() const {
    return empty() ? std::span<const uint8_t>{} : bytes_.subspan(pos_);
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace lite2onnx::fuzz
