#include "server/config.h"

#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "common/size_value.h"
#include "core/convert.h"

namespace lite2onnx::server {
namespace {

constexpr const char* kEnvPrefix = "LITE2ONNX_";

// "--max-unary-bytes" -> "LITE2ONNX_MAX_UNARY_BYTES".
std::string env_name(const std::string& flag) {
  std::string env = kEnvPrefix;
  for (char c : flag.substr(2)) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

// Every option reads its LITE2ONNX_<FLAG> variable when the flag is absent.
template <class T>
CLI::Option* option(CLI::App& app, const std::string& flag, T& value, const std::string& help) {
  return app.add_option(flag, value, help)->envname(env_name(flag))->capture_default_str();
}

// CPUs this process may use: its affinity mask, capped by a cgroup CPU quota
// (a Kubernetes CPU limit) rounded up. hardware_concurrency() counts the
// node's cores, which on a shared node would start a worker per node core.
unsigned usable_cpus() {
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    cpus = static_cast<unsigned>(CPU_COUNT(&set));
  auto cap = [&](double quota, double period) {
    if (quota > 0 && period > 0)
      cpus = std::min(cpus, std::max(1u, static_cast<unsigned>(std::ceil(quota / period))));
  };
  std::string quota;
  double period = 0;
  if (std::ifstream v2("/sys/fs/cgroup/cpu.max"); v2 >> quota >> period) {
    if (quota != "max") cap(std::atof(quota.c_str()), period);  // "max 100000": no limit
  } else {
    double q = -1, p = 0;  // cgroup v1; a quota of -1 means no limit
    std::ifstream("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") >> q;
    std::ifstream("/sys/fs/cgroup/cpu/cpu.cfs_period_us") >> p;
    cap(q, p);
  }
  return cpus;
}

std::string readable_file_problem(const std::string& flag, const std::string& path) {
  if (path.empty()) return "";
  std::ifstream f(path, std::ios::binary);
  if (!f) return flag + ": cannot read '" + path + "'";
  return "";
}

// Checks what CLI11 cannot express; returns the first problem, "" when none.
std::string validate(const ServerConfig& c) {
  if (c.grpc.listen.empty()) return "--listen: must not be empty";
  if (c.limits.max_unary_bytes == 0) return "--max-unary-bytes: must be at least 1";
  if (c.limits.max_stream_bytes == 0 || c.limits.max_stream_bytes > kGiB)
    return "--max-stream-bytes: must be between 1 and 1GiB (1073741824): FlatBuffers and "
           "protobuf stop at 2 GiB";
  if (c.limits.max_unary_bytes > kGiB)
    return "--max-unary-bytes: must be at most 1GiB (1073741824); use ConvertStream beyond";
  if (c.limits.max_inflight_bytes < c.limits.max_unary_bytes)
    return "--max-inflight-bytes: must be at least --max-unary-bytes (" +
           std::to_string(c.limits.max_unary_bytes) + "), or no model of the allowed size fits";
  if (c.limits.stream_idle_seconds <= 0 || c.limits.stream_idle_seconds > 3600)
    return "--stream-idle-timeout: must be above 0 and at most 3600";
  for (auto [flag, seconds] : {std::pair{"--upload-timeout", c.limits.upload_timeout},
                               std::pair{"--send-timeout", c.limits.send_timeout},
                               std::pair{"--http-head-timeout", c.http.head_timeout}})
    if (seconds <= 0 || seconds > 86400)
      return std::string(flag) + ": must be above 0 and at most 86400";
  if (c.limits.min_rate_grace < 0 || c.limits.min_rate_grace > 3600)
    return "--min-rate-grace: must be between 0 and 3600";
  for (auto [flag, rate] : {std::pair{"--upload-min-rate", c.limits.upload_min_rate},
                            std::pair{"--send-min-rate", c.limits.send_min_rate}})
    if (rate == 0) return std::string(flag) + ": must be at least 1 (byte per second)";
  if (c.http.max_connections < 8 || c.http.max_connections > 65536)
    return "--http-max-connections: must be between 8 and 65536";
  if (c.limits.max_bytes_per_peer != 0 && c.limits.max_bytes_per_peer > c.limits.max_inflight_bytes)
    return "--max-bytes-per-peer: must be at most --max-inflight-bytes";
  if (c.isolation.conversion_time_limit < 0 || c.isolation.conversion_time_limit > 86400)
    return "--conversion-time-limit: must be between 0 (none) and 86400";
  if (c.isolation.mode == Isolation::kProcess && c.isolation.conversion_memory_limit != 0 &&
      c.isolation.conversion_memory_limit < 16 * kMiB)
    return "--conversion-memory-limit: must be 0 (none) or at least 16MiB";
  if (c.drain_seconds < 0 || c.drain_seconds > 3600)
    return "--drain-seconds: must be between 0 and 3600";
  if (!c.tls.key_file.empty() && c.tls.cert_file.empty()) return "--tls-key: needs --tls-cert";
  if (!c.tls.cert_file.empty() && c.tls.key_file.empty()) return "--tls-cert: needs --tls-key";
  if (!c.tls.client_ca_file.empty() && c.tls.cert_file.empty())
    return "--tls-client-ca: mutual TLS needs --tls-cert and --tls-key";
  for (auto [flag, path] :
       {std::pair{"--tls-cert", &c.tls.cert_file}, std::pair{"--tls-key", &c.tls.key_file},
        std::pair{"--tls-client-ca", &c.tls.client_ca_file}})
    if (auto problem = readable_file_problem(flag, *path); !problem.empty()) return problem;
  return "";
}

}  // namespace

ParsedConfig parse_config(int argc, const char* const* argv) {
  ServerConfig c;
  CLI::App app{"lite2onnx-server " + version() +
                   ": converts TensorFlow Lite models to ONNX over gRPC (service "
                   "lite2onnx.v1.Converter, with grpc.health.v1 and server reflection) and "
                   "HTTP/1.1.\n"
                   "Every flag can also be set by the environment variable shown; a flag on the "
                   "command line wins.",
               "lite2onnx-server"};
  app.set_version_flag("--version", version());
  app.get_formatter()->column_width(34);

  option(app, "--listen", c.grpc.listen, "gRPC address to listen on, HOST:PORT (port 0: any free)");
  option(app, "--port-file", c.grpc.port_file,
         "once listening, write 'grpc=PORT', 'metrics=PORT' and 'http=PORT' lines to this file "
         "(0: that endpoint is off)");
  option(app, "--http-listen", c.http.listen,
         "HTTP/1.1 address (POST /v1/convert, /v1/inspect, GET /v1/operators, /healthz, "
         "/readyz), HOST:PORT; empty: no HTTP endpoint");
  option(app, "--metrics-listen", c.metrics.listen,
         "Prometheus /metrics address, HOST:PORT; empty: no metrics endpoint");
  option(app, "--workers", c.pool.workers,
         "conversions running in parallel; 0: one per CPU this process may use (affinity, "
         "capped by a cgroup CPU quota: " +
             std::to_string(usable_cpus()) + " here)")
      ->check(CLI::Range(0u, 1024u));
  option(app, "--queue-size", c.pool.queue_size,
         "accepted requests waiting for a worker; beyond: RESOURCE_EXHAUSTED at once")
      ->check(CLI::Range(0u, 100000u));
  std::string isolation = "process";
  option(app, "--isolation", isolation,
         "process: each conversion runs in a sandboxed worker process (lite2onnx-worker: "
         "seccomp, memory and time limits), which a crash, a memory blow-up or a hang of a "
         "hostile model only replaces; thread: in this process (trusted input only)")
      ->check(CLI::IsMember({"process", "thread"}));
  option(app, "--worker-binary", c.isolation.worker_binary,
         "the lite2onnx-worker program (default: beside this server's)");
  option(app, "--conversion-memory-limit", c.isolation.conversion_memory_limit,
         "--isolation process: memory one conversion may use in its worker process (on top of "
         "the worker's own ~30 MiB); beyond, RESOURCE_EXHAUSTED (memory_limit); 0: none")
      ->transform(size_value());
  option(app, "--conversion-time-limit", c.isolation.conversion_time_limit,
         "--isolation process: seconds of wall time one conversion may take; beyond, its worker "
         "is killed and the call answered RESOURCE_EXHAUSTED (time_limit); 0: none");
  app.add_flag("--test-fault-hooks", c.isolation.test_fault_hooks,
               "tests only: honour the x-lite2onnx-test-fault request header")
      ->group("");
  option(app, "--max-inflight-bytes", c.limits.max_inflight_bytes,
         "memory budget of every copy of the model and answer bytes all calls hold together; "
         "beyond: RESOURCE_EXHAUSTED at once (sizes take b, kb = 1000, kib = 1024, mb, mib, gb, "
         "gib)")
      ->transform(size_value());
  option(app, "--max-unary-bytes", c.limits.max_unary_bytes,
         "largest model in one Convert or Inspect message")
      ->transform(size_value());
  option(app, "--max-stream-bytes", c.limits.max_stream_bytes,
         "largest model sent through ConvertStream, at most 1GiB")
      ->transform(size_value());
  option(app, "--cache-bytes", c.limits.cache_bytes,
         "bytes of converted models kept to answer identical Convert calls again (key: the "
         "model's SHA-256, the options, the converter version; least recently used out first); "
         "0: no cache")
      ->transform(size_value());
  option(app, "--stream-idle-timeout", c.limits.stream_idle_seconds,
         "seconds an upload (a ConvertStream, an HTTP body) may send nothing; then it is ended "
         "(INVALID_ARGUMENT / 400, bad_stream) and its memory budget freed");
  const char* kRates = "Uploads, answers and clients (docs/service.md, Memory and attacks)";
  option(app, "--upload-min-rate", c.limits.upload_min_rate,
         "bytes per second every upload must bring on average once --min-rate-grace has "
         "passed; slower: ended (bad_stream)")
      ->transform(size_value())
      ->group(kRates);
  option(app, "--upload-timeout", c.limits.upload_timeout,
         "seconds one upload may take in all (100 MiB at 1 Mbit/s take 840)")
      ->group(kRates);
  option(app, "--send-min-rate", c.limits.send_min_rate,
         "bytes per second a client must read every answer at on average once --min-rate-grace "
         "has passed; slower: the answer is dropped (counted) and its budget freed")
      ->transform(size_value())
      ->group(kRates);
  option(app, "--send-timeout", c.limits.send_timeout, "seconds one answer may take to send")
      ->group(kRates);
  option(app, "--min-rate-grace", c.limits.min_rate_grace,
         "seconds an upload or an answer may take before the minimum rates apply")
      ->group(kRates);
  option(app, "--max-calls-per-peer", c.limits.max_calls_per_peer,
         "calls one client address may have in progress (beyond: RESOURCE_EXHAUSTED / 429, "
         "queue_full); 0: max(4, (workers + queue size) / 2)")
      ->check(CLI::Range(0u, 100000u))
      ->group(kRates);
  option(app, "--max-bytes-per-peer", c.limits.max_bytes_per_peer,
         "memory budget one client address's calls may hold together (beyond: "
         "RESOURCE_EXHAUSTED / 429, memory_budget); 0: half of --max-inflight-bytes, or the "
         "largest model (--max-stream-bytes) if that is more")
      ->transform(size_value())
      ->group(kRates);
  option(app, "--http-head-timeout", c.http.head_timeout,
         "seconds a connection may take to send a request head (a new one, or the next on a "
         "kept-alive one); then it is closed")
      ->group(kRates);
  option(app, "--http-max-connections", c.http.max_connections,
         "HTTP connections open at once; at the cap a new one closes the connection that has "
         "waited longest for a request (probes always get in)")
      ->group(kRates);
  const char* kLimits = "Conversion limits (beyond one: RESOURCE_EXHAUSTED, reason RESOURCE_LIMIT)";
  option(app, "--max-operators", c.limits.conversion.max_operators, "operators in one model")
      ->group(kLimits);
  option(app, "--max-tensors", c.limits.conversion.max_tensors, "tensors in one model")
      ->group(kLimits);
  option(app, "--max-inputs-per-op", c.limits.conversion.max_inputs_per_op,
         "inputs of one operator")
      ->group(kLimits);
  option(app, "--max-created-bytes", c.limits.conversion.max_created_bytes,
         "bytes of constants one conversion may create (folded values, DFT matrices, converted "
         "weights); 0: 256MiB + 4 x the model")
      ->transform(size_value())
      ->group(kLimits);
  option(app, "--max-output-bytes", c.limits.conversion.max_output_bytes,
         "bytes of one ONNX model; 0: 16MiB + 4 x the model, at most 2GiB - 1")
      ->transform(size_value())
      ->group(kLimits);
  option(app, "--tls-cert", c.tls.cert_file, "PEM server certificate chain: serve TLS");
  option(app, "--tls-key", c.tls.key_file, "PEM private key of --tls-cert");
  option(app, "--tls-client-ca", c.tls.client_ca_file,
         "PEM CA certificates: require client certificates signed by them (mutual TLS)");
  option(app, "--log-level", c.log.level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  std::string log_format = "text";
  option(app, "--log-format", log_format,
         "text (one line per event, key=value) or json (one object per line)")
      ->check(CLI::IsMember({"text", "json"}));
  option(app, "--drain-seconds", c.drain_seconds,
         "on SIGTERM/SIGINT: report NOT_SERVING, refuse new calls, and give in-flight calls "
         "this long to finish before cancelling them");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ExitNow{0, app.help()};
  } catch (const CLI::CallForVersion&) {
    return ExitNow{0, version() + "\n"};
  } catch (const CLI::ParseError& e) {
    return ExitNow{2, std::string("lite2onnx-server: invalid configuration: ") + e.what() +
                          " (from a flag or its LITE2ONNX_* variable; see --help)\n"};
  }
  c.log.format = log_format == "json" ? LogFormat::kJson : LogFormat::kText;
  c.isolation.mode = isolation == "thread" ? Isolation::kThread : Isolation::kProcess;
  // CLI11 skips an empty variable, but "empty: no metrics endpoint" holds for
  // LITE2ONNX_METRICS_LISTEN= as for --metrics-listen "" (and for HTTP alike).
  for (auto [flag, listen] : {std::pair{"--metrics-listen", &c.metrics.listen},
                              std::pair{"--http-listen", &c.http.listen}})
    if (const char* v = std::getenv(env_name(flag).c_str()); v && !*v && app[flag]->count() == 0)
      listen->clear();
  if (auto problem = validate(c); !problem.empty())
    return ExitNow{2, "lite2onnx-server: invalid configuration: " + problem + " (see --help)\n"};
  if (c.pool.workers == 0) c.pool.workers = usable_cpus();
  if (c.limits.max_calls_per_peer == 0)
    c.limits.max_calls_per_peer = std::max(4u, (c.pool.workers + c.pool.queue_size) / 2);
  if (c.limits.max_bytes_per_peer == 0)  // half the budget, or the largest model if that is more
    c.limits.max_bytes_per_peer =
        std::max(c.limits.max_inflight_bytes / 2,
                 std::min(std::max(c.limits.max_stream_bytes, c.limits.max_unary_bytes),
                          c.limits.max_inflight_bytes));
  return c;
}

}  // namespace lite2onnx::server
