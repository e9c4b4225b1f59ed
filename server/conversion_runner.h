// Where conversions run. Each pool thread owns one ConversionRunner: with
// --isolation process, one worker process it forwards its jobs to (and
// replaces when it fails); with --isolation thread, the core in this process
// (for trusted input). Calls hand it their model, options and stop signal,
// and get back the ONNX bytes, the diagnostics or a Failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"
#include "server/config.h"
#include "server/error_mapping.h"
#include "server/stop_signal.h"
#include "server/worker_process.h"

namespace lite2onnx::server {

class Logger;
class Metrics;

// Where a call's model waits for its conversion, filled as the request
// arrives: a string (thread isolation), or a memfd that a worker process maps
// (process isolation), so that the request's bytes are copied once.
class ModelBuffer {
 public:
  ModelBuffer() = default;
  // Empty when a memfd cannot be made.
  static std::optional<ModelBuffer> create(Isolation isolation);
  bool append(std::span<const std::byte> bytes);  // false: the memfd could not take them
  void reserve(size_t bytes);
  size_t size() const { return size_; }
  // The bytes (thread isolation only).
  std::span<const std::byte> bytes() const;
  // The memfd with `tail` (serialized options) after the model, sealed
  // (process isolation only); empty on failure.
  worker::UniqueFd seal(const std::string& tail);
  void clear();

 private:
  std::string bytes_;
  worker::UniqueFd memfd_;
  size_t size_ = 0;
};

// The ONNX bytes of a conversion: the core's string (thread isolation) or the
// mapping of a worker's sealed answer (process isolation); `owner` keeps them
// alive, e.g. inside a gRPC slice.
struct OnnxBytes {
  std::shared_ptr<const void> owner;
  std::string_view bytes;
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

std::unique_ptr<ConversionRunner> make_thread_runner();

// Starts the runner's worker process; counts worker starts and failures in
// `metrics` and logs failures.
Result<std::unique_ptr<ConversionRunner>> make_process_runner(const WorkerOptions& options,
                                                              ChildRegistry& children,
                                                              Metrics& metrics, const Logger& log);

}  // namespace lite2onnx::server
