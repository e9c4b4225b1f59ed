// What every call of the Converter service shares: the server's parts it uses,
// and the bookkeeping of one call (request id, timing, stop signal, and the one
// place where a call's status is logged and counted).
#pragma once

#include <grpcpp/support/status.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "server/config.h"
#include "server/conversion_cache.h"
#include "server/conversion_runner.h"
#include "server/error_mapping.h"
#include "server/idle_watcher.h"
#include "server/logger.h"
#include "server/memory_budget.h"
#include "server/metrics.h"
#include "server/stop_signal.h"
#include "server/worker_pool.h"

namespace grpc {
class CallbackServerContext;
}

namespace lite2onnx::server {

struct ServiceLimits {
  uint64_t max_unary_bytes = 0;
  uint64_t max_stream_bytes = 0;
  double stream_idle_seconds = 30;
  bool test_fault_hooks = false;  // honour x-lite2onnx-test-fault
};

// The server's parts a call uses; they outlive every call.
struct CallEnvironment {
  CallEnvironment(ServiceLimits limits, WorkerPool& pool, MemoryBudget& budget,
                  ConversionCache& cache, Metrics& metrics, const Logger& log,
                  std::string id_prefix)
      : limits(limits),
        pool(pool),
        budget(budget),
        cache(cache),
        metrics(metrics),
        log(log),
        id_prefix(std::move(id_prefix)),
        idle(std::chrono::milliseconds(static_cast<int64_t>(limits.stream_idle_seconds * 1000))) {}

  const ServiceLimits limits;
  WorkerPool& pool;
  MemoryBudget& budget;
  ConversionCache& cache;
  Metrics& metrics;
  const Logger& log;
  std::atomic<bool> draining{false};
  std::string id_prefix;  // random per process: request ids are unique across restarts
  std::atomic<uint64_t> next_id{1};
  IdleWatcher idle;  // ends streams that upload nothing for --stream-idle-timeout

  // Calls in progress (every CallTrace not yet completed), for the drain.
  void call_started();
  void call_ended();
  // Waits until no call is in progress; false if `deadline` came first.
  bool wait_idle(std::chrono::system_clock::time_point deadline);

 private:
  std::mutex active_mu_;
  std::condition_variable idle_;
  int active_ = 0;
};

// What is left of a call once its status is known: its metrics and its request
// log line. CallTrace::complete() takes it out of the call before Finish(); it
// is written after Finish(), when the call object may already be gone, so that
// the answer does not wait for the bookkeeping. Written once: by write(), or
// when destroyed.
class CallRecord {
 public:
  CallRecord(CallRecord&& other) noexcept;
  CallRecord& operator=(CallRecord&&) = delete;
  ~CallRecord() { write(); }

  // Counts the call and its conversion, logs its request line, then lets a
  // drain know the call is over.
  void write();

 private:
  friend class CallTrace;
  explicit CallRecord(CallEnvironment& env) : env_(&env) {}

  CallEnvironment* env_;
  bool pending_ = true;
  std::string_view protocol_, method_;
  std::string id_, peer_, options_, error_;
  grpc::StatusCode code_ = grpc::StatusCode::OK;
  uint64_t model_bytes_ = 0, onnx_bytes_ = 0;
  double queue_seconds_ = 0, seconds_ = 0, cpu_seconds_ = -1;
  std::optional<Diagnostics> conversion_;
  std::string_view outcome_;
};

// One call's record: created when the call arrives, completed once with its status.
// HTTP calls carry the gRPC status of their answer too (error_mapping.h): the
// metrics and the log speak one set of codes, with a `protocol` label.
class CallTrace {
 public:
  // A gRPC call: its x-request-id (if usable) is the call's id, sent back in
  // the initial metadata.
  CallTrace(CallEnvironment& env, grpc::CallbackServerContext* ctx, std::string_view method);
  // An HTTP call from `peer` whose X-Request-Id header said `given_id` (empty: none).
  CallTrace(CallEnvironment& env, std::string_view method, std::string_view given_id,
            std::string peer);
  ~CallTrace();
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

  const std::string& id() const { return id_; }
  // gRPC: puts x-request-id in the initial metadata now; a stream calls it
  // before its first answer message, complete() for a successful unary call.
  // A failed call carries the id in its trailers instead: custom initial
  // metadata would make its answer more than Trailers-Only, which commits a
  // call and stops the client's gRPC from retrying it.
  void send_headers();
  // Ends the call's time now. Pass `status` to Finish(), then write the record.
  CallRecord complete(const grpc::Status& status);

  uint64_t model_bytes = 0;
  uint64_t onnx_bytes = 0;
  std::string options;  // summary of the conversion options, for the log

  // The request was queued at `queued_at` and a worker takes it now.
  void dequeued(std::chrono::steady_clock::time_point queued_at);
  // A conversion ran, with `outcome` ("ok" or an error reason's name) and its
  // CPU time (< 0: not measured); counted with the call.
  void conversion_ran(Diagnostics diagnostics, std::string_view outcome, double cpu_seconds = -1);

 private:
  CallTrace(CallEnvironment& env, std::string_view protocol, std::string_view method,
            std::string_view given_id, std::string peer);

  CallEnvironment& env_;
  std::string_view protocol_, method_;
  std::string id_;
  std::string peer_;
  std::chrono::steady_clock::time_point start_;
  // A gRPC call's context: complete() tells the client which attempt this
  // was and, for a refusal, when to retry (grpc-retry-pushback-ms).
  grpc::CallbackServerContext* ctx_ = nullptr;
  int attempt_ = 1;
  bool headers_sent_ = false;
  double queue_seconds_ = 0, cpu_seconds_ = -1;
  std::optional<Diagnostics> conversion_;
  std::string_view outcome_;
  bool completed_ = false;
};

// Finishes a call (unary or stream reactor) with `status`: its record is taken
// before Finish(), after which the call may be gone, and written after it.
template <class Reactor>
void finish_call(Reactor& reactor, CallTrace& trace, grpc::Status status) {
  CallRecord record = trace.complete(status);
  reactor.Finish(std::move(status));
  record.write();
}

// The refusal of a call the server cannot take now (queue full, memory
// budget, shutting down), counted as shed.
Failure refusal(CallEnvironment& env, Reason reason);

// The test hook a call asks for (x-lite2onnx-test-fault: crash, hang, syscall,
// allocate=BYTES or delay=MS), honoured only by a server started with --test-fault-hooks.
TestFault test_fault(const CallEnvironment& env, std::string_view value);
grpc::Status shed(CallEnvironment& env, Reason reason);

}  // namespace lite2onnx::server
