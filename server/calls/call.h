// The call core: what every call of lite2onnx.v1.Converter goes through,
// whichever transport carries it (unary gRPC, ConvertStream, HTTP). A
// transport moves bytes and translates; the core admits the call (the drain,
// its peer's share, a worker or queue slot), holds its memory budget as the
// model's bytes arrive and its answer until it is sent, paces the upload,
// looks the conversion up in the cache, queues and runs it, and records the
// call (metrics and request log) by its reason's row of the error table
// (common/error_reasons.h). Failures are lite2onnx::Failure values
// (common/failure.h) from the core to the wire.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "common/failure.h"
#include "lite2onnx/v1/converter.pb.h"
#include "server/calls/budget.h"
#include "server/calls/pace.h"
#include "server/conversion_cache.h"
#include "server/conversion_runner.h"
#include "server/stop_signal.h"

namespace lite2onnx::server {

class Logger;
class Metrics;
class WorkerPool;

struct CallLimits {
  uint64_t max_unary_bytes = 64 << 20;   // a model in one Convert/Inspect message
  uint64_t max_stream_bytes = 1u << 30;  // a model through ConvertStream or an HTTP body
  // The ONNX model of one conversion; 0: kOutputBase + kOutputPerModelByte x the model.
  uint64_t max_output_bytes = 0;
  double idle_seconds = 30;  // the longest silence of an upload
  RateLimit upload, send;
  bool test_fault_hooks = false;  // honour x-lite2onnx-test-fault
};

// The default limit on one answer: proportional to its model, so that a small
// model cannot buy a large answer (docs/limits.md).
inline constexpr uint64_t kOutputBase = uint64_t{16} << 20;
inline constexpr uint64_t kOutputPerModelByte = 4;
// What an announced size reserves before its bytes arrive; an upload's
// reservation grows in steps of this as they do.
inline constexpr uint64_t kUploadAllotment = uint64_t{1} << 20;

// The server's parts every call uses; they outlive every call.
class CallCore {
 public:
  CallCore(CallLimits limits, WorkerPool& pool, Budget& budget, ConversionCache& cache,
           Metrics& metrics, const Logger& log, std::string id_prefix);
  CallCore(const CallCore&) = delete;
  CallCore& operator=(const CallCore&) = delete;

  const CallLimits& limits() const { return limits_; }
  const Logger& log() const { return log_; }
  Metrics& metrics() { return metrics_; }
  Watchdog& watchdog() { return watchdog_; }
  // The id of a call (or of an HTTP answer outside one): the client's own
  // when short and plain ([A-Za-z0-9._-], at most 64), else a new one.
  std::string request_id(std::string_view given);

  // SIGTERM: new calls are refused (shutting_down) from now on.
  void start_draining() { draining_ = true; }
  bool draining() const { return draining_; }
  // Waits until no call is in progress; false if `deadline` came first.
  bool wait_idle(std::chrono::system_clock::time_point deadline);
  // The drain's grace period ended: every call in progress stops.
  void cancel_all();

 private:
  friend class Call;
  const CallLimits limits_;
  WorkerPool& pool_;
  Budget& budget_;
  ConversionCache& cache_;
  Metrics& metrics_;
  const Logger& log_;
  const std::string id_prefix_;  // random per process: ids are unique across restarts
  std::atomic<uint64_t> next_id_{1};
  std::atomic<bool> draining_{false};
  Watchdog watchdog_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::set<StopSignal*> calls_;  // in progress
};

// What a transport knows of a call when it arrives.
struct CallInfo {
  std::string_view protocol;     // "grpc" or "http"
  std::string_view method;       // "Convert", "ConvertStream", "Inspect", "ListOperators"
  std::string address;           // the client's, "ipv4:10.1.2.3:5678"
  std::string_view request_id;   // the client's x-request-id, used when plain and short
  std::string_view traceparent;  // W3C trace context, logged when well-formed
  std::string_view test_fault;   // x-lite2onnx-test-fault
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
};

// A call's answer: a failure, or what it produced.
struct CallResult {
  std::optional<Failure> failure;
  OnnxBytes onnx;                  // Convert, ConvertStream
  Diagnostics diagnostics;         // Convert, ConvertStream
  v1::InspectResponse inspection;  // Inspect
};

// One call, from its arrival to its answer's last byte. Its methods are
// called by one thread at a time (the transport serializes them).
class Call {
 public:
  Call(CallCore& core, const CallInfo& info);
  // Gives back what the call holds, then writes its record (metrics, request
  // log): the answer has left by now.
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  const std::string& id() const { return id_; }
  StopSignal& stop() { return stop_; }
  uint64_t model_bytes() const { return received_; }

  // Before anything is read: the drain, the peer's calls in progress and, for
  // a call that needs a worker, the pool's room.
  std::optional<Failure> admit();

  // The options of a conversion, as the wire carries them (their texts
  // checked first: check_option_texts).
  std::optional<Failure> set_options(const v1::ConvertOptions& options);

  // The model's size, as the client announced it: checked against the limit,
  // and a first allotment of the budget (at most kUploadAllotment) reserved.
  std::optional<Failure> announce(uint64_t total);
  // Model bytes that arrived: counted against the limit and the announced
  // size, held in the budget, then copied (an upload's chunk) or referred to
  // (a unary message's bytes, which `owner` keeps alive until the model is
  // copied into its conversion or the call lets go of it: the transport holds
  // no other reference to them).
  enum class Keep { kCopy, kRefer };
  std::optional<Failure> receive(std::span<const std::byte> bytes, Keep keep,
                                 std::shared_ptr<const void> owner = {});
  // When the upload's next byte must have arrived (its minimum rate, its
  // idle timeout, its overall timeout), and the failure when it did not.
  SteadyClock::time_point upload_deadline() const;
  Failure upload_late();
  // The upload ended: the announced size, if any, must have arrived.
  std::optional<Failure> upload_done();

  // Runs the call: a cache hit or a refusal calls `done` at once, a queued
  // call on a pool thread once it ran. Once, after the upload.
  using Done = std::function<void(CallResult&)>;
  void run(Done done);

  // The transport makes another form of the answer (gRPC's serialized
  // message, HTTP's JSON): the budget holds `bytes` for the answer from now
  // on, before the transport allocates more (the old form and the new side by
  // side), or after it freed the old form (fewer). A refusal when more do not
  // fit: resource_limit beyond the whole budget, else memory_budget.
  std::optional<Failure> resize_answer(uint64_t bytes) { return hold_answer(bytes); }

  // The answer: its schedule from now, and how sending it ended.
  Pace start_answer();
  void answer_sent(uint64_t bytes);
  // The client took too long (or went away): counted, logged.
  void answer_dropped(uint64_t sent, const std::string& why);

  // The call's outcome (no failure: OK), and the HTTP status that carried it.
  void finish(const std::optional<Failure>& failure, int http_status = 0);

 private:
  std::optional<Failure> refuse(std::string_view shed, Failure failure);
  // Model bytes the budget (or the peer's share of it) did not take.
  std::optional<Failure> refuse_bytes(Budget::Refusal why);
  std::optional<Failure> hold_answer(uint64_t bytes);
  void work(ConversionRunner& runner, const Done& done);
  void write_record();

  CallCore& core_;
  const std::string_view protocol_, method_;
  const std::string id_, address_;
  std::string trace_id_, parent_id_;
  const SteadyClock::time_point start_;
  StopSignal stop_;
  TestFault fault_;
  Budget::Ticket ticket_;
  // The upload.
  uint64_t announced_ = 0, received_ = 0;
  bool announced_size_ = false;
  SteadyClock::time_point last_receive_;
  Pace upload_pace_;
  ModelBuffer model_;
  // The conversion.
  v1::ConvertOptions wire_options_;
  ConvertOptions options_;
  std::optional<CacheKey> key_;
  SteadyClock::time_point queued_at_;
  // What the record says.
  std::string options_summary_;
  uint64_t answer_bytes_ = 0;
  double queue_seconds_ = 0, cpu_seconds_ = -1, seconds_ = -1;
  std::optional<Diagnostics> conversion_;
  std::string_view outcome_;
  const ErrorReason* reason_ = nullptr;  // null: OK
  std::string error_;
  int http_status_ = 0;
  std::string dropped_;  // why the answer was not sent whole
  bool finished_ = false;
  bool ran_ = false;  // run() was called: a conversion may read the model
};

// The failure of a call whose peer, budget or queue could not take it, and
// the shed label it is counted with.
Failure refusal(std::string_view reason_name, std::string message);

}  // namespace lite2onnx::server
