#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "core/convert.h"

namespace lite2onnx::server {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// Upper bounds growing by `factor` from `start`, `count` of them.
Histogram::BucketBoundaries exponential(double start, double factor, int count) {
  Histogram::BucketBoundaries b;
  for (double v = start; count-- > 0; v *= factor) b.push_back(v);
  return b;
}

const Histogram::BucketBoundaries& latency_buckets() {  // 0.5 ms .. ~65 s
  static const auto b = exponential(0.0005, 2, 18);
  return b;
}

const Histogram::BucketBoundaries& size_buckets() {  // 1 KiB .. 1 GiB
  static const auto b = exponential(1024, 4, 11);
  return b;
}

}  // namespace

struct Metrics::Families {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  Family<Counter>& requests = prometheus::BuildCounter()
                                  .Name("lite2onnx_requests_total")
                                  .Help(
                                      "Finished calls of lite2onnx.v1.Converter by protocol "
                                      "(grpc, http), method, gRPC status code and reason (ok, "
                                      "or the error table's name)")
                                  .Register(*registry);
  Family<Histogram>& request_seconds =
      prometheus::BuildHistogram()
          .Name("lite2onnx_request_duration_seconds")
          .Help("Time from the arrival of a call to its status, by protocol and method")
          .Register(*registry);
  Family<Histogram>& phase_seconds = prometheus::BuildHistogram()
                                         .Name("lite2onnx_conversion_phase_duration_seconds")
                                         .Help(
                                             "Time spent in each conversion phase (read, check, "
                                             "layout, lower, cleanup, emit, total)")
                                         .Register(*registry);
  Family<Histogram>& queue_seconds = prometheus::BuildHistogram()
                                         .Name("lite2onnx_queue_wait_seconds")
                                         .Help("Time an accepted request waited for a worker")
                                         .Register(*registry);
  Family<Histogram>& model_bytes = prometheus::BuildHistogram()
                                       .Name("lite2onnx_model_size_bytes")
                                       .Help(
                                           "Sizes of converted models: TFLite in "
                                           "(direction=in), ONNX out (direction=out)")
                                       .Register(*registry);
  Family<Counter>& conversions = prometheus::BuildCounter()
                                     .Name("lite2onnx_conversions_total")
                                     .Help("Conversions that ran, by outcome")
                                     .Register(*registry);
  Family<Counter>& operators = prometheus::BuildCounter()
                                   .Name("lite2onnx_conversion_operators_total")
                                   .Help(
                                       "TFLite operators in the models that went through a "
                                       "conversion, by op type (custom ops: op=\"custom\") "
                                       "and the conversion's outcome")
                                   .Register(*registry);
  Family<Counter>& unsupported = prometheus::BuildCounter()
                                     .Name("lite2onnx_unsupported_operators_total")
                                     .Help(
                                         "TFLite operators that could not be converted, by op "
                                         "type (custom ops: op=\"custom\")")
                                     .Register(*registry);
  Family<Counter>& shed = prometheus::BuildCounter()
                              .Name("lite2onnx_requests_shed_total")
                              .Help(
                                  "Calls refused at once because the server was full or "
                                  "shutting down, by reason")
                              .Register(*registry);
  Family<Counter>& slow_transfers =
      prometheus::BuildCounter()
          .Name("lite2onnx_transfers_ended_total")
          .Help(
              "Uploads and answers ended for missing their deadline or minimum rate "
              "(--upload-min-rate, --send-min-rate, ...), or answers whose client went away, by "
              "protocol and direction (upload, answer)")
          .Register(*registry);
  Family<Gauge>& http_connections = prometheus::BuildGauge()
                                        .Name("lite2onnx_http_connections")
                                        .Help("HTTP connections open")
                                        .Register(*registry);
  Family<Counter>& http_closed =
      prometheus::BuildCounter()
          .Name("lite2onnx_http_connections_closed_total")
          .Help(
              "HTTP connections the server closed while they waited for a request, by why: "
              "head_timeout (no request within --http-head-timeout), evicted (room for a new "
              "one at --http-max-connections)")
          .Register(*registry);
  Family<Gauge>& queue_depth = prometheus::BuildGauge()
                                   .Name("lite2onnx_queue_depth")
                                   .Help("Accepted requests waiting for a worker")
                                   .Register(*registry);
  Family<Gauge>& workers_busy = prometheus::BuildGauge()
                                    .Name("lite2onnx_workers_busy")
                                    .Help("Workers running a request")
                                    .Register(*registry);
  Family<Gauge>& workers = prometheus::BuildGauge()
                               .Name("lite2onnx_workers")
                               .Help("Workers in the pool")
                               .Register(*registry);
  Family<Gauge>& inflight_requests = prometheus::BuildGauge()
                                         .Name("lite2onnx_inflight_requests")
                                         .Help("Calls of lite2onnx.v1.Converter in progress")
                                         .Register(*registry);
  Family<Gauge>& inflight_bytes = prometheus::BuildGauge()
                                      .Name("lite2onnx_inflight_model_bytes")
                                      .Help(
                                          "Model bytes held by accepted requests (the memory "
                                          "budget in use)")
                                      .Register(*registry);
  Family<Gauge>& inflight_limit = prometheus::BuildGauge()
                                      .Name("lite2onnx_inflight_model_bytes_limit")
                                      .Help("The memory budget: --max-inflight-bytes")
                                      .Register(*registry);
  Family<Gauge>& build_info = prometheus::BuildGauge()
                                  .Name("lite2onnx_build_info")
                                  .Help("Always 1; the converter version as a label")
                                  .Register(*registry);
  Family<Counter>& worker_starts = prometheus::BuildCounter()
                                       .Name("lite2onnx_worker_starts_total")
                                       .Help("Worker processes started (--isolation process)")
                                       .Register(*registry);
  Family<Counter>& worker_failures =
      prometheus::BuildCounter()
          .Name("lite2onnx_worker_failures_total")
          .Help(
              "Worker processes that stopped serving and were replaced, by cause (crashed, "
              "memory_limit, time_limit, deadline, cancelled, bad_answer; start: could not start)")
          .Register(*registry);
  Family<Histogram>& conversion_cpu =
      prometheus::BuildHistogram()
          .Name("lite2onnx_conversion_cpu_seconds")
          .Help("CPU time of one conversion in its worker process, measured by the server")
          .Register(*registry);
  Family<Counter>& cache_lookups =
      prometheus::BuildCounter()
          .Name("lite2onnx_cache_lookups_total")
          .Help("Convert calls looked up in the conversion cache, by result (hit, miss)")
          .Register(*registry);
  Family<Counter>& cache_evictions =
      prometheus::BuildCounter()
          .Name("lite2onnx_cache_evictions_total")
          .Help("Conversions dropped from the cache to make room (least recently used first)")
          .Register(*registry);
  Family<Gauge>& cache_bytes = prometheus::BuildGauge()
                                   .Name("lite2onnx_cache_bytes")
                                   .Help("Bytes the conversion cache holds (of --cache-bytes)")
                                   .Register(*registry);
  Family<Gauge>& cache_entries = prometheus::BuildGauge()
                                     .Name("lite2onnx_cache_entries")
                                     .Help("Conversions the cache holds")
                                     .Register(*registry);
  Counter& cache_hits = cache_lookups.Add({{"result", "hit"}});
  Counter& cache_misses = cache_lookups.Add({{"result", "miss"}});
  Counter& evictions = cache_evictions.Add({});
  Gauge& cached_bytes = cache_bytes.Add({});
  Gauge& cached_entries = cache_entries.Add({});
  Counter& starts = worker_starts.Add({});
  Histogram& cpu = conversion_cpu.Add({}, latency_buckets());
  Gauge& queued = queue_depth.Add({});
  Gauge& open_connections = http_connections.Add({});
  Gauge& busy = workers_busy.Add({});
  Gauge& inflight = inflight_requests.Add({});
  Gauge& bytes_in_flight = inflight_bytes.Add({});
  Histogram& queue_wait = queue_seconds.Add({}, latency_buckets());
  Histogram& size_in = model_bytes.Add({{"direction", "in"}}, size_buckets());
  Histogram& size_out = model_bytes.Add({{"direction", "out"}}, size_buckets());
};

Metrics::Metrics(std::set<std::string> builtin_ops, unsigned workers, uint64_t inflight_limit)
    : builtin_ops_(std::move(builtin_ops)), f_(std::make_unique<Families>()) {
  f_->workers.Add({}).Set(workers);
  f_->inflight_limit.Add({}).Set(static_cast<double>(inflight_limit));
  f_->build_info.Add({{"version", version()}}).Set(1);
  for (auto cause : kWorkerFailureCauses) f_->worker_failures.Add({{"cause", std::string(cause)}});
}

Metrics::~Metrics() = default;

std::shared_ptr<prometheus::Registry> Metrics::registry() const { return f_->registry; }

void Metrics::record_request(std::string_view protocol, std::string_view method,
                             std::string_view code, std::string_view reason, double seconds) {
  f_->requests
      .Add({{"protocol", std::string(protocol)},
            {"method", std::string(method)},
            {"code", std::string(code)},
            {"reason", std::string(reason)}})
      .Increment();
  f_->request_seconds
      .Add({{"protocol", std::string(protocol)}, {"method", std::string(method)}},
           latency_buckets())
      .Observe(seconds);
}

void Metrics::record_conversion(const Diagnostics& d, std::string_view outcome) {
  const std::string result(outcome);
  f_->conversions.Add({{"outcome", result}}).Increment();
  f_->size_in.Observe(static_cast<double>(d.model_bytes));
  if (outcome == "ok") f_->size_out.Observe(static_cast<double>(d.onnx_bytes));
  for (const auto& t : d.timings)
    f_->phase_seconds.Add({{"phase", t.phase}}, latency_buckets()).Observe(t.ms / 1000.0);
  auto label = [this](const std::string& op) { return builtin_ops_.count(op) ? op : "custom"; };
  std::map<std::string, int> by_label;
  for (const auto& [op, count] : d.source_ops) by_label[label(op)] += count;
  for (const auto& [op, count] : by_label)
    f_->operators.Add({{"op", op}, {"outcome", result}}).Increment(count);
  for (const auto& u : d.unsupported) f_->unsupported.Add({{"op", label(u.op)}}).Increment();
}

void Metrics::record_queue_wait(double seconds) { f_->queue_wait.Observe(seconds); }

void Metrics::record_shed(std::string_view reason) {
  f_->shed.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::record_slow_transfer(std::string_view protocol, std::string_view direction) {
  f_->slow_transfers
      .Add({{"protocol", std::string(protocol)}, {"direction", std::string(direction)}})
      .Increment();
}

void Metrics::add_http_connections(int delta) { f_->open_connections.Increment(delta); }

void Metrics::record_http_connection_closed(std::string_view why) {
  f_->http_closed.Add({{"why", std::string(why)}}).Increment();
}

void Metrics::record_worker_start() { f_->starts.Increment(); }

void Metrics::record_worker_failure(std::string_view cause) {
  f_->worker_failures.Add({{"cause", std::string(cause)}}).Increment();
}

void Metrics::record_conversion_cpu(double seconds) { f_->cpu.Observe(seconds); }

void Metrics::set_pool_load(size_t queued, size_t busy) {
  f_->queued.Set(static_cast<double>(queued));
  f_->busy.Set(static_cast<double>(busy));
}

void Metrics::set_inflight_bytes(uint64_t bytes) {
  f_->bytes_in_flight.Set(static_cast<double>(bytes));
}

void Metrics::add_inflight_requests(int delta) { f_->inflight.Increment(delta); }

void Metrics::record_cache_lookup(bool hit) {
  (hit ? f_->cache_hits : f_->cache_misses).Increment();
}

void Metrics::record_cache_eviction() { f_->evictions.Increment(); }

void Metrics::set_cache_usage(uint64_t bytes, size_t entries) {
  f_->cached_bytes.Set(static_cast<double>(bytes));
  f_->cached_entries.Set(static_cast<double>(entries));
}

}  // namespace lite2onnx::server
