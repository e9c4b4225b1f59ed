// lite2onnx-server: wires config, logging, metrics, the worker pool and the
// gRPC and HTTP endpoints; stops them in order on SIGTERM or SIGINT.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "server/calls/budget.h"
#include "server/calls/call.h"
#include "server/config.h"
#include "server/conversion_runner.h"
#include "server/converter_service.h"
#include "server/grpc_endpoint.h"
#include "server/http_endpoint.h"
#include "server/logger.h"
#include "server/metrics.h"
#include "server/metrics_endpoint.h"
#include "server/worker_pool.h"

namespace {

using namespace lite2onnx::server;

// Blocks SIGTERM, SIGINT and SIGCHLD in this thread and every thread started
// after it, so that only wait_for_stop_signal() receives them. (Worker
// processes start with nothing blocked.)
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return set;
}

int wait_for_stop_signal(const sigset_t& set) {
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

// Every request allocates and frees several buffers of the model's size. By
// default glibc maps each one fresh (and unmaps it when freed), so every request
// pays page faults for every byte it touches; with a fixed mmap threshold of
// 32 MiB and a trim threshold of 64 MiB they are reused from the heap instead
// (about 1.6x the throughput at 2 MB models). Larger models still get mappings.
// (With jemalloc, linked by default, buffers are reused without this.)
void keep_large_buffers_in_the_heap() {
#ifndef LITE2ONNX_JEMALLOC
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

// Every connection is a descriptor: the soft limit (often 1024) goes up to
// the hard one, so that --http-max-connections and gRPC's connections fit.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

RateLimit rate(uint64_t min_rate, double timeout, double grace) {
  RateLimit r;
  r.min_bytes_per_second = static_cast<double>(min_rate);
  r.timeout =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(timeout));
  r.grace = std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(grace));
  return r;
}

// Written whole or not at all (a reader polling for it never sees half).
bool write_port_file(const std::string& path, int grpc_port, int metrics_port, int http_port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << "grpc=" << grpc_port << "\nmetrics=" << metrics_port << "\nhttp=" << http_port << "\n";
    if (!f) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// The runner factory of the pool's threads: a worker process each, or the
// core in this process.
WorkerPool::RunnerFactory runners(const ServerConfig& config, ChildRegistry& children,
                                  Metrics& metrics, const Logger& log) {
  if (config.isolation.mode == Isolation::kThread)
    return [limits = config.limits.conversion] {
      return lite2onnx::Result<std::unique_ptr<ConversionRunner>>(make_thread_runner(limits));
    };
  WorkerOptions worker;
  worker.binary = config.isolation.worker_binary.empty() ? default_worker_binary()
                                                         : config.isolation.worker_binary;
  worker.memory_limit = config.isolation.conversion_memory_limit;
  worker.time_limit = std::chrono::milliseconds(
      static_cast<int64_t>(config.isolation.conversion_time_limit * 1000));
  worker.test_faults = config.isolation.test_fault_hooks;
  worker.conversion_limits = config.limits.conversion;
  return [worker, &children, &metrics, &log] {
    return make_process_runner(worker, children, metrics, log);
  };
}

int serve(const ServerConfig& config, const sigset_t& stop_signals) {
  Logger log(config.log);
  Metrics metrics(builtin_operator_names(), config.pool.workers, config.limits.max_inflight_bytes);
  const LimitOptions& l = config.limits;
  Budget budget({l.max_inflight_bytes, l.max_bytes_per_peer, l.max_calls_per_peer},
                [&metrics](uint64_t used) { metrics.set_inflight_bytes(used); });
  ChildRegistry children;
  WorkerPool pool(config.pool.workers, config.pool.queue_size,
                  [&metrics](size_t queued, size_t busy) { metrics.set_pool_load(queued, busy); });
  if (auto st = pool.start(runners(config, children, metrics, log)); !st) {
    log.error("cannot start", {{"error", std::string_view(st.error().message)}});
    return 1;
  }
  CallLimits limits;
  limits.max_unary_bytes = l.max_unary_bytes;
  limits.max_stream_bytes = l.max_stream_bytes;
  limits.max_output_bytes = l.conversion.max_output_bytes;
  limits.idle_seconds = l.stream_idle_seconds;
  limits.upload = rate(l.upload_min_rate, l.upload_timeout, l.min_rate_grace);
  limits.send = rate(l.send_min_rate, l.send_timeout, l.min_rate_grace);
  limits.test_fault_hooks = config.isolation.test_fault_hooks;
  ConversionCache cache(l.cache_bytes, metrics, &budget);
  CallCore calls(limits, pool, budget, cache, metrics, log, random_request_id_prefix());
  ConverterService service(calls);

  MetricsEndpoint metrics_endpoint;
  if (!config.metrics.listen.empty()) {
    if (auto st = metrics_endpoint.start(config.metrics.listen, metrics.registry()); !st) {
      log.error("cannot start", {{"error", std::string_view(st.error().message)}});
      return 1;
    }
  }
  // The HTTP port serves what the gRPC port serves: with --tls-cert, HTTPS
  // only (and mutual TLS with --tls-client-ca). Started before gRPC, whose
  // error for bad TLS material names no reason, where OpenSSL's does.
  HttpEndpoint http_endpoint;
  if (!config.http.listen.empty()) {
    HttpLimits http_limits;
    http_limits.head_timeout_seconds = config.http.head_timeout;
    http_limits.max_connections = config.http.max_connections;
    http_limits.send = limits.send;
    if (auto st = http_endpoint.start(config.http.listen, http_limits, config.tls, calls); !st) {
      log.error("cannot start", {{"error", std::string_view(st.error().message)}});
      return 1;
    }
  }
  GrpcEndpoint grpc_endpoint;
  if (auto st = grpc_endpoint.start(config.grpc, config.tls, config.limits.max_unary_bytes, service,
                                    lite2onnx::v1::Converter::service_full_name());
      !st) {
    log.error("cannot start", {{"error", std::string_view(st.error().message)}});
    return 1;
  }
  if (!config.grpc.port_file.empty() &&
      !write_port_file(config.grpc.port_file, grpc_endpoint.port(), metrics_endpoint.port(),
                       http_endpoint.port())) {
    log.error("cannot write the port file", {{"path", std::string_view(config.grpc.port_file)}});
    return 1;
  }
  log.info("listening",
           {{"grpc_port", int64_t{grpc_endpoint.port()}},
            {"metrics_port", int64_t{metrics_endpoint.port()}},
            {"http_port", int64_t{http_endpoint.port()}},
            {"tls", config.tls.enabled()},
            {"mutual_tls", config.tls.mutual()},
            {"workers", uint64_t{config.pool.workers}},
            {"isolation",
             std::string_view(config.isolation.mode == Isolation::kThread ? "thread" : "process")},
            {"queue_size", uint64_t{config.pool.queue_size}},
            {"max_inflight_bytes", config.limits.max_inflight_bytes},
            {"max_calls_per_peer", uint64_t{config.limits.max_calls_per_peer}},
            {"max_bytes_per_peer", config.limits.max_bytes_per_peer},
            {"max_unary_bytes", config.limits.max_unary_bytes},
            {"max_stream_bytes", config.limits.max_stream_bytes},
            {"cache_bytes", config.limits.cache_bytes},
            {"max_operators", uint64_t{config.limits.conversion.max_operators}},
            {"max_tensors", uint64_t{config.limits.conversion.max_tensors}}});

  // As PID 1 (the container image's entry point) the server also reaps the
  // orphans re-parented to it, leaving its workers to their owners.
  int sig;
  while ((sig = wait_for_stop_signal(stop_signals)) == SIGCHLD)
    if (getpid() == 1) children.reap_orphans();
  log.info("draining", {{"signal", std::string_view(sig == SIGTERM ? "SIGTERM" : "SIGINT")},
                        {"drain_seconds", config.drain_seconds}});
  // Health says NOT_SERVING and new calls are refused while the server still
  // answers; once the calls in progress are done (or the grace period is over)
  // the listener closes and cancels whatever is left.
  grpc_endpoint.set_serving(false);
  calls.start_draining();
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(config.drain_seconds));
  if (!calls.wait_idle(deadline)) log.warn("grace period over: cancelling the calls left");
  grpc_endpoint.stop(deadline);
  http_endpoint.stop();
  pool.stop();
  log.info("stopped");
  metrics_endpoint.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  keep_large_buffers_in_the_heap();
  raise_descriptor_limit();
  const sigset_t stop_signals = block_stop_signals();
  auto parsed = parse_config(argc, argv);
  if (auto* exit_now = std::get_if<ExitNow>(&parsed)) {
    (exit_now->code == 0 ? std::cout : std::cerr) << exit_now->text;
    return exit_now->code;
  }
  try {
    return serve(std::get<ServerConfig>(parsed), stop_signals);
  } catch (const std::exception& e) {
    std::cerr << "lite2onnx-server: internal error: " << e.what() << "\n";
    return 1;
  }
}
