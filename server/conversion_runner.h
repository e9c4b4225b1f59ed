// Where conversions run. Each pool thread owns one ConversionRunner: with
// --isolation process, one worker process it forwards its jobs to (and
// replaces when it fails); with --isolation thread, the core in this process
// (for trusted input). Calls hand it their model, options and stop signal,
// and get back the ONNX bytes, the diagnostics or a Failure.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/failure.h"
#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"
#include "server/config.h"
#include "server/stop_signal.h"
#include "server/worker_process.h"

namespace lite2onnx::server {

class Logger;
class Metrics;

// A call's model, as its conversion will read it: pieces of the request
// that gRPC received (unary Convert and Inspect: no copy until a worker takes
// the job), kept alive by their owner, or bytes copied as they arrived
// (ConvertStream, HTTP bodies), in blocks of at most kBlockBytes (no
// reallocation while a large upload grows). A worker copies it once, into its
// worker process's input memfd, or into one string for the core in this
// process; either way the first copy is freed once the second exists (each
// block once copied, the referred pieces' owners once all are), so that the
// process holds the model's bytes once, as the memory budget counts them.
class ModelBuffer {
 public:
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  // A copy of `bytes`, appended.
  void append(std::span<const std::byte> bytes);
  // `bytes` themselves, appended; `owner` keeps them alive until the model is
  // copied or cleared (none: they must outlive the conversion).
  void refer(std::span<const std::byte> bytes, std::shared_ptr<const void> owner = {});
  size_t size() const { return size_; }  // also after clear()
  // All of it, contiguous (copied into one buffer first when in pieces).
  std::span<const std::byte> bytes();
  // Copies all of it to `out` (size() bytes), piece by piece, freeing each
  // copied block; `copied(offset, n)` after each piece.
  void drain_to(std::byte* out, const std::function<void(size_t offset, size_t n)>& copied);
  // Its SHA-256 (lower-case hex), over the pieces where they are.
  std::string sha256() const;
  // Frees what it holds (its blocks, and the owners of referred pieces).
  void clear();
  // Owners of referred pieces it keeps alive (tests).
  size_t owners() const { return owners_.size(); }

 private:
  std::vector<std::string> blocks_;                  // appended bytes
  std::vector<std::span<const std::byte>> pieces_;   // in order: blocks' bytes and referred bytes
  std::vector<std::shared_ptr<const void>> owners_;  // of referred pieces
  size_t size_ = 0;
};

// A large answer a worker handed over (worker::kAnswerHandedOver): its
// memfd, sealed against any change, read a piece at a time and never whole
// (the ONNX model is its first `size` bytes).
class AnswerFile {
 public:
  AnswerFile(worker::UniqueFd fd, uint64_t size) : fd_(std::move(fd)), size_(size) {}
  uint64_t size() const { return size_; }
  // Copies [offset, offset + out.size()) into `out`; false when it cannot.
  bool read(uint64_t offset, std::span<char> out) const;

 private:
  worker::UniqueFd fd_;
  uint64_t size_;
};

// The ONNX bytes of a conversion: in memory (`bytes`, owned by `owner`, the
// core's string or the copy of a worker's small answer, which a gRPC slice
// keeps alive), or in a worker's sealed memfd (`file`), from which the
// transports send it a piece at a time.
struct OnnxBytes {
  std::shared_ptr<const void> owner;
  std::string_view bytes;
  std::shared_ptr<const AnswerFile> file;

  uint64_t size() const { return file ? file->size() : bytes.size(); }
  // [offset, offset + n) (within size()): a view of the bytes in memory, or
  // of `scratch`, which they are read into from the file; nothing when the
  // file cannot be read.
  std::optional<std::string_view> piece(uint64_t offset, size_t n, std::string& scratch) const;
  // The bytes in memory (a file's read into one string: the unary answer,
  // one message); nothing when the file cannot be read.
  std::optional<OnnxBytes> in_memory() const;
};

// A test hook's fault (--test-fault-hooks): what the worker does instead.
struct TestFault {
  worker::Fault fault = worker::Fault::kNone;
  uint64_t bytes = 0;  // kAllocate
};

struct ConvertJob {
  ModelBuffer& model;
  const v1::ConvertOptions& wire_options;  // what a worker process reads
  const ConvertOptions& options;           // what the core in this process reads
  StopSignal& stop;
  TestFault fault;
  std::string_view request_id;  // for the log of a worker failure
  // The model's SHA-256 (hex) when the caller hashed it (the cache key): the
  // provenance metadata takes it instead of hashing again. Empty: none.
  std::string_view source_sha256 = {};
  // The largest ONNX model this conversion may write (Limits::max_output_bytes);
  // 0: the runner's own limits.
  uint64_t max_output_bytes = 0;
  // Told the ONNX model's size before the runner keeps a copy of it: a
  // failure (the memory budget) drops the answer instead.
  std::function<std::optional<Failure>(uint64_t bytes)> admit_answer = {};
};

struct ConvertOutcome {
  std::optional<Failure> failure;
  OnnxBytes onnx;
  Diagnostics diagnostics;   // as far as the conversion got
  bool ran = false;          // a conversion ran: metrics count it with `outcome`
  std::string_view outcome;  // "ok" or an error reason's name
  double cpu_seconds = -1;   // the conversion's CPU time; < 0: not measured
};

struct InspectOutcome {
  std::optional<Failure> failure;
  v1::InspectResponse response;
};

class ConversionRunner {
 public:
  virtual ~ConversionRunner() = default;
  virtual ConvertOutcome convert(ConvertJob& job) = 0;
  virtual InspectOutcome inspect(ModelBuffer& model, StopSignal& stop, TestFault fault,
                                 std::string_view request_id) = 0;
  // After each job, once its answer left: a failed worker process is replaced here.
  virtual void after_job() {}
};

// The core in this process, converting under `limits`.
std::unique_ptr<ConversionRunner> make_thread_runner(const Limits& limits);

// Starts the runner's worker process (converting under options.conversion_limits); counts worker
// starts and failures in `metrics` and logs failures.
Result<std::unique_ptr<ConversionRunner>> make_process_runner(const WorkerOptions& options,
                                                              ChildRegistry& children,
                                                              Metrics& metrics, const Logger& log);

}  // namespace lite2onnx::server
