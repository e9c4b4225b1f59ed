// What the server and its worker processes (lite2onnx-worker) say to each
// other. The control channel is a SOCK_SEQPACKET socket pair carrying small
// fixed-size frames; every byte of data travels in a memfd passed with the
// frame (SCM_RIGHTS): the model and the options in, the ONNX model and the
// diagnostics (or the error) out. Options, diagnostics and errors are the
// service's own messages (v1::ConvertOptions, v1::Diagnostics,
// v1::InspectResponse, v1::ConversionError), serialized.
//
// The server treats everything a worker sends as untrusted: frame fields are
// checked, the output memfd is sealed against shrinking and growing before it
// is mapped, and every length is checked against its size.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace lite2onnx::worker {

// The worker's end of the control socket: posix_spawn puts it there.
inline constexpr int kControlFd = 3;
inline constexpr uint32_t kMagic = 0x6c326f31;  // "l2o1"

enum class JobKind : uint32_t { kConvert = 1, kInspect = 2 };

// Test hooks (the server's hidden --test-fault-hooks): what a job does instead
// of converting, so that the crash, memory and hang paths stay tested.
enum class Fault : uint32_t { kNone = 0, kCrash = 1, kHang = 2, kAllocate = 3, kSyscall = 4 };

// Server -> worker, with the input memfd (sealed: it cannot change): the model
// in [0, model_bytes), then a serialized v1::ConvertOptions of options_bytes.
struct JobFrame {
  uint32_t magic = kMagic;
  JobKind kind = JobKind::kConvert;
  Fault fault = Fault::kNone;
  uint32_t reserved = 0;
  uint64_t model_bytes = 0;
  uint64_t options_bytes = 0;
  uint64_t fault_bytes = 0;  // Fault::kAllocate: bytes to allocate and touch
};

enum class AnswerKind : uint32_t {
  kReady = 1,        // started and warmed up; no memfd
  kDone = 2,         // a job's answer, with the output memfd
  kOutOfMemory = 3,  // an allocation failed (its memory limit); the answer or the end follows
};

// Worker -> server. kDone comes with the output memfd: the ONNX model in
// [0, onnx_bytes), then info_bytes of a serialized v1::Diagnostics (convert)
// or v1::InspectResponse (inspect), then error_bytes of a serialized
// v1::ConversionError when the job failed (0 when it succeeded).
struct AnswerFrame {
  uint32_t magic = kMagic;
  AnswerKind kind = AnswerKind::kDone;
  uint64_t onnx_bytes = 0;
  uint64_t info_bytes = 0;
  uint64_t error_bytes = 0;
};

// A file descriptor closed with its owner.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Sends one frame with `fd` attached (none when < 0); false on any failure.
bool send_frame(int socket, const void* frame, size_t bytes, int fd);
// Receives one frame of exactly `bytes` (and at most one attached fd, into
// `fd`); 1 on success, 0 when the peer has closed, -1 on a malformed frame or
// an error.
int receive_frame(int socket, void* frame, size_t bytes, UniqueFd* fd);

// A memfd that can be sealed; its content written with write_all().
UniqueFd make_memfd(const char* name);
bool write_all(int fd, std::span<const std::byte> bytes);
bool write_all(int fd, const std::string& bytes);
// The seals that make a memfd immutable: no write (F_SEAL_FUTURE_WRITE: no
// write() and no new writable mapping), no shrinking, no growing.
inline constexpr int kImmutable = F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
// Seals a finished input memfd: immutable, and no further seal.
bool seal_input(int fd);

// A read-only shared mapping of a memfd, unmapped (and the memfd closed) when
// destroyed.
class Mapping {
 public:
  Mapping() = default;
  // Maps [0, size) of `fd`; an empty Mapping (data() == nullptr) on failure.
  // size 0 maps nothing and succeeds.
  static Mapping map(UniqueFd fd, size_t size, bool populate);
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  ~Mapping();
  bool ok() const { return ok_; }
  const std::byte* data() const { return static_cast<const std::byte*>(data_); }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes(size_t offset, size_t n) const { return {data() + offset, n}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  bool ok_ = false;
  UniqueFd fd_;
};

}  // namespace lite2onnx::worker
