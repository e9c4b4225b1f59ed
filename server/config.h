// The server's configuration: nested option structs, filled from flags and
// LITE2ONNX_* environment variables in main() only, passed by value.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "core/options.h"

namespace lite2onnx::server {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

struct GrpcOptions {
  std::string listen = "0.0.0.0:50051";
  std::string port_file;  // written once listening: "grpc=PORT\nmetrics=PORT\nhttp=PORT\n"
};

struct HttpOptions {
  std::string listen = "0.0.0.0:8080";  // empty: no HTTP endpoint
  double head_timeout = 10;             // seconds for a connection's request head
  unsigned max_connections = 512;       // open at once; at the cap the longest idle one closes
};

struct TlsOptions {
  std::string cert_file;       // PEM server certificate chain; empty: plaintext
  std::string key_file;        // PEM private key of cert_file
  std::string client_ca_file;  // PEM CA bundle: clients must present a certificate it signed
  bool enabled() const { return !cert_file.empty(); }
  bool mutual() const { return !client_ca_file.empty(); }
};

struct PoolOptions {
  unsigned workers = 0;      // conversions in parallel; 0 means one per core
  unsigned queue_size = 16;  // accepted requests waiting for a worker
};

struct LimitOptions {
  uint64_t max_unary_bytes = 64 * kMiB;    // model bytes in one Convert/Inspect message
  uint64_t max_stream_bytes = kGiB;        // model bytes in one ConvertStream, at most kGiB
  uint64_t max_inflight_bytes = 2 * kGiB;  // model bytes held by all accepted requests
  Limits conversion;                       // what one conversion may cost (core/options.h)
  double stream_idle_seconds = 30;         // an upload silent this long is ended
  uint64_t cache_bytes = 256 * kMiB;       // the conversion cache (conversion_cache.h); 0: none
  // Every upload and every answer: a minimum rate (bytes per second, on
  // average once the grace has passed) and an overall timeout (seconds).
  uint64_t upload_min_rate = 64 * 1024;
  double upload_timeout = 900;
  uint64_t send_min_rate = 64 * 1024;
  double send_timeout = 900;
  double min_rate_grace = 10;
  // One peer's (client address's) share: calls in progress and budget
  // bytes; 0: max(4, (workers + queue size) / 2) calls, half the budget.
  unsigned max_calls_per_peer = 0;
  uint64_t max_bytes_per_peer = 0;
};

// Where conversions run (server/conversion_runner.h).
enum class Isolation { kProcess, kThread };

struct IsolationOptions {
  Isolation mode = Isolation::kProcess;
  std::string worker_binary;                    // empty: lite2onnx-worker beside the server
  uint64_t conversion_memory_limit = 2 * kGiB;  // per conversion, on top of a warm worker
  double conversion_time_limit = 300;           // seconds of wall time per conversion; 0: none
  bool test_fault_hooks = false;                // hidden: honour x-lite2onnx-test-fault
};

enum class LogFormat { kText, kJson };

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn, error, off
  LogFormat format = LogFormat::kText;
};

struct MetricsOptions {
  std::string listen = "0.0.0.0:9464";  // empty: no metrics endpoint
};

struct ServerConfig {
  GrpcOptions grpc;
  HttpOptions http;
  TlsOptions tls;
  PoolOptions pool;
  IsolationOptions isolation;
  LimitOptions limits;
  MetricsOptions metrics;
  LogOptions log;
  double drain_seconds = 30;  // grace period for in-flight calls on SIGTERM/SIGINT
};

// What parse_config() decided: run with a config, or exit at once with a code
// after printing `text` (help, version, or a configuration error).
struct ExitNow {
  int code = 0;
  std::string text;
};
using ParsedConfig = std::variant<ServerConfig, ExitNow>;

// Reads flags, then LITE2ONNX_<FLAG> environment variables for flags not given,
// then defaults; validates the result.
ParsedConfig parse_config(int argc, const char* const* argv);

}  // namespace lite2onnx::server
