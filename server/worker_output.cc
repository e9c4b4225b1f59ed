#include "server/worker_output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lite2onnx::worker {
namespace {

// Grows the mapped output memfd to hold `bytes` (whole MiB, doubling, at
// most kReuseBytes unless more are needed), keeping what it holds.
bool grow_output(Buffers& b, uint64_t bytes) {
  if (bytes <= b.output_map.size() && b.output_map.ok()) return true;
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  uint64_t size = std::max<uint64_t>(kMiB, (bytes + kMiB - 1) / kMiB * kMiB);
  size = std::max(size, std::min<uint64_t>(2 * b.output_map.size(), kReuseBytes));
  b.output_map = Mapping();
  if (ftruncate(b.output.get(), static_cast<off_t>(size)) != 0) return false;
  b.output_map = Mapping::map(b.output.get(), static_cast<size_t>(size), true);
  return b.output_map.ok();
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool start_output(Buffers& b) {
  if (b.output && b.output_map.size() <= kReuseBytes) return true;
  b.output_map = Mapping();
  b.output = make_memfd("lite2onnx-answer");
  b.output_sent = false;
  return static_cast<bool>(b.output);
}

bool AnswerWriter::write(std::span<const std::byte> bytes) {
  if (large_ || size_ + bytes.size() > kReuseBytes) return write_large(bytes);
  if (!grow_output(b_, size_ + bytes.size())) return false;
  std::memcpy(b_.output_map.data() + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
  return true;
}

bool AnswerWriter::write_large(std::span<const std::byte> bytes) {
  if (!large_) {
    // The answer moves: what the mapped memfd holds so far (at most
    // kReuseBytes) first. A fresh memfd's offset is 0, and write(2) appends.
    UniqueFd fd = make_memfd("lite2onnx-large-answer");
    if (!fd || !write_all(fd.get(), b_.output_map.bytes(0, static_cast<size_t>(size_))))
      return false;
    large_ = std::move(fd);
  }
  if (!write_all(large_.get(), bytes)) return false;
  size_ += bytes.size();
  return true;
}

void AnswerWriter::reset() {
  large_.reset();
  size_ = 0;
}

}  // namespace lite2onnx::worker
