// What the server and its worker processes (lite2onnx-worker) say to each
// other. The control channel is a SOCK_SEQPACKET socket pair carrying small
// fixed-size frames; every byte of data travels in two memfds each worker
// keeps for its life: its input (owned by the server, which writes the model
// and the options there; the worker has a read-only descriptor) and its output
// (owned by the worker, which writes the ONNX model and the diagnostics or the
// error there; the server seals it against shrinking before it maps it).
// Reusing them spares every call fresh pages, mapping and unmapping (about
// 1 ms of CPU for a 2 MB model and its answer, measured); a memfd that grew
// beyond kReuseBytes is replaced after its job. Options, diagnostics and
// errors are the service's own messages (v1::ConvertOptions, v1::Diagnostics,
// v1::InspectResponse, v1::ConversionError), serialized.
//
// The server treats everything a worker sends as untrusted: frame fields are
// checked, every length is checked against the output memfd's size, and the
// answer is copied out of it before the worker gets its next job (a large
// answer, in a memfd of its own, is sealed against writes instead).
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
enum class Fault : uint32_t {
  kNone = 0,
  kCrash = 1,
  kHang = 2,
  kAllocate = 3,
  kSyscall = 4,
  kDelay = 5,         // sleep fault_bytes milliseconds, then convert as usual
  kMappedAnswer = 6,  // hand over an answer's memfd this worker keeps mapped writable
};

// A memfd up to this size is kept for the next job; a larger one is replaced.
// An answer larger than this goes in a memfd of its own (kAnswerHandedOver).
inline constexpr uint64_t kReuseBytes = uint64_t{16} << 20;

// JobFrame::flags.
inline constexpr uint32_t kSourceSha256Given = 1;  // source_sha256 holds the model's hash

// Server -> worker: the model is in [0, model_bytes) of the input memfd, then
// a serialized v1::ConvertOptions of options_bytes. A read-only descriptor of
// a new input memfd comes with the frame when the server replaced it.
struct JobFrame {
  uint32_t magic = kMagic;
  JobKind kind = JobKind::kConvert;
  Fault fault = Fault::kNone;
  uint32_t flags = 0;
  uint64_t model_bytes = 0;
  uint64_t options_bytes = 0;
  uint64_t fault_bytes = 0;  // Fault::kAllocate: bytes to allocate and touch; kDelay: ms
  // The largest ONNX model this job may write (Limits::max_output_bytes); 0:
  // the worker's own --max-output-bytes.
  uint64_t max_output_bytes = 0;
  // With kSourceSha256Given: the model's SHA-256 in lower-case hex, which the
  // server computed for its cache key (the provenance metadata takes it
  // instead of hashing the model again).
  char source_sha256[64] = {};
};

enum class AnswerKind : uint32_t {
  kReady = 1,        // started and warmed up
  kDone = 2,         // a job's answer
  kOutOfMemory = 3,  // an allocation failed (its memory limit); the answer or the end follows
};

// AnswerFrame::flags.
// The answer is in a memfd of its own, sent with the frame (an answer larger
// than kReuseBytes), which the worker never maps nor writes again: the server
// seals it against any change and sends the ONNX model from it.
inline constexpr uint32_t kAnswerHandedOver = 1;

// Worker -> server, kDone: the output memfd holds the ONNX model in
// [0, onnx_bytes), then info_bytes of a serialized v1::Diagnostics (convert)
// or v1::InspectResponse (inspect), then error_bytes of a serialized
// v1::ConversionError when the job failed (0 when it succeeded). The
// descriptor of a new output memfd comes with the first answer written into
// it; with kAnswerHandedOver, the descriptor is the answer's own memfd (and
// the output memfd stays as it was).
struct AnswerFrame {
  uint32_t magic = kMagic;
  AnswerKind kind = AnswerKind::kDone;
  uint32_t flags = 0;
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
// `fd`); 1 on success, 0 when the peer has closed or died, -1 on a malformed
// frame or an error.
int receive_frame(int socket, void* frame, size_t bytes, UniqueFd* fd);

// A memfd that can be sealed.
UniqueFd make_memfd(const char* name);

// A shared mapping of [0, size) of a descriptor (which it does not own),
// unmapped when destroyed.
class Mapping {
 public:
  Mapping() = default;
  // An empty Mapping (ok() false) on failure; size 0 maps nothing and succeeds.
  static Mapping map(int fd, size_t size, bool writable);
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  ~Mapping();
  bool ok() const { return ok_; }
  std::byte* data() const { return static_cast<std::byte*>(data_); }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes(size_t offset, size_t n) const { return {data() + offset, n}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  bool ok_ = false;
};

}  // namespace lite2onnx::worker
