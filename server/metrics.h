// Every Prometheus metric of the server, defined once here; call sites use the
// typed record_*/set_* functions. Label values stay bounded: method names,
// gRPC code names, phase names, TFLite builtin names (every custom op is
// `custom`) and outcome names.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "core/status.h"

namespace prometheus {
class Registry;
}

namespace lite2onnx::server {

// Why a worker process stopped serving: the `cause` label's values.
inline constexpr std::string_view kWorkerFailureCauses[] = {
    "crashed", "memory_limit", "time_limit", "deadline", "cancelled", "bad_answer", "start"};

class Metrics {
 public:
  // `builtin_ops`: the TFLite builtin operator names, the only op labels used.
  Metrics(std::set<std::string> builtin_ops, unsigned workers, uint64_t inflight_limit);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  std::shared_ptr<prometheus::Registry> registry() const;

  // One finished call of the Converter service over `protocol` ("grpc" or
  // "http"), by its reason's row of the error table: `code` the row's gRPC
  // code name (an HTTP answer's too), `reason` its name ("ok" for none).
  void record_request(std::string_view protocol, std::string_view method, std::string_view code,
                      std::string_view reason, double seconds);
  // One conversion that ran: phases, model sizes, operators by outcome.
  void record_conversion(const Diagnostics& diagnostics, std::string_view outcome);
  void record_queue_wait(double seconds);
  // A call refused because the server was full: "queue_full", "memory_budget",
  // "shutting_down", "peer_calls", "peer_bytes".
  void record_shed(std::string_view reason);
  // An upload or an answer ended for missing its deadline (`direction`
  // "upload" or "answer"), or an answer its client went away from.
  void record_slow_transfer(std::string_view protocol, std::string_view direction);
  // HTTP connections open, and closed by the server: "head_timeout" (no
  // request in time), "evicted" (made room at the cap).
  void add_http_connections(int delta);
  void record_http_connection_closed(std::string_view why);

  // A worker process started (and warmed up), or stopped serving for `cause`:
  // "crashed", "memory_limit", "time_limit", "deadline", "cancelled",
  // "bad_answer", "start" (kWorkerFailureCauses).
  void record_worker_start();
  void record_worker_failure(std::string_view cause);
  // CPU time of one conversion, as the server measured its worker process.
  void record_conversion_cpu(double seconds);

  // The conversion cache (server/conversion_cache.h).
  void record_cache_lookup(bool hit);
  void record_cache_eviction();
  void set_cache_usage(uint64_t bytes, size_t entries);

  void set_pool_load(size_t queued, size_t busy);
  void set_inflight_bytes(uint64_t bytes);
  void add_inflight_requests(int delta);

 private:
  struct Families;
  std::set<std::string> builtin_ops_;
  std::unique_ptr<Families> f_;
};

}  // namespace lite2onnx::server
