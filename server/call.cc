#include "server/call.h"

#include "common/service_config.h"

#include <grpcpp/server_context.h>
#include <sys/eventfd.h>

#include <cstdlib>
#include <random>
#include <utility>

namespace lite2onnx::server {
namespace {

// A client-given x-request-id is used when it is short and plain; else one is made.
bool usable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::string request_id(CallEnvironment& env, std::string_view given) {
  if (usable_request_id(given)) return std::string(given);
  return env.id_prefix + "-" + std::to_string(env.next_id.fetch_add(1));
}

std::string_view given_request_id(grpc::CallbackServerContext* ctx) {
  const auto& md = ctx->client_metadata();
  auto it = md.find("x-request-id");
  return it == md.end() ? std::string_view()
                        : std::string_view(it->second.data(), it->second.size());
}

}  // namespace

void CallEnvironment::call_started() {
  std::lock_guard lock(active_mu_);
  ++active_;
}

void CallEnvironment::call_ended() {
  std::lock_guard lock(active_mu_);
  if (--active_ == 0) idle_.notify_all();
}

bool CallEnvironment::wait_idle(std::chrono::system_clock::time_point deadline) {
  std::unique_lock lock(active_mu_);
  return idle_.wait_until(lock, deadline, [this] { return active_ == 0; });
}

Failure StopSignal::failure() const {
  const bool near_deadline =
      std::chrono::system_clock::now() + std::chrono::milliseconds(50) >= deadline_;
  return near_deadline ? server::failure(v1::ConversionError::REASON_DEADLINE_EXCEEDED,
                                         "the deadline passed before the conversion ended")
                       : server::failure(v1::ConversionError::REASON_CANCELLED,
                                         "the client cancelled the call");
}

void StopSignal::cancel() {
  std::lock_guard lock(mu_);
  cancelled_.store(true);
  if (waker_ >= 0) eventfd_write(waker_, 1);
}

bool StopSignal::set_waker(int fd) {
  std::lock_guard lock(mu_);
  waker_ = fd;
  return cancelled_.load();
}

void StopSignal::clear_waker() {
  std::lock_guard lock(mu_);
  waker_ = -1;
}

CallTrace::CallTrace(CallEnvironment& env, grpc::CallbackServerContext* ctx,
                     std::string_view method)
    : CallTrace(env, "grpc", method, given_request_id(ctx), ctx->peer()) {
  ctx_ = ctx;
  // gRPC's retries send the count of earlier attempts of the same call.
  const auto& md = ctx->client_metadata();
  if (auto it = md.find("grpc-previous-rpc-attempts"); it != md.end()) {
    int n = 0;
    for (char c : it->second) n = c >= '0' && c <= '9' && n < 1000 ? n * 10 + (c - '0') : n;
    attempt_ = 1 + n;
  }
}

CallTrace::CallTrace(CallEnvironment& env, std::string_view method, std::string_view given_id,
                     std::string peer)
    : CallTrace(env, "http", method, given_id, std::move(peer)) {}

CallTrace::CallTrace(CallEnvironment& env, std::string_view protocol, std::string_view method,
                     std::string_view given_id, std::string peer)
    : env_(env),
      protocol_(protocol),
      method_(method),
      id_(request_id(env, given_id)),
      peer_(std::move(peer)),
      start_(std::chrono::steady_clock::now()) {
  env_.metrics.add_inflight_requests(1);
  env_.call_started();
}

CallTrace::~CallTrace() {
  if (completed_) return;
  env_.metrics.add_inflight_requests(-1);
  env_.call_ended();
}

void CallTrace::send_headers() {
  if (!ctx_ || headers_sent_) return;
  headers_sent_ = true;
  ctx_->AddInitialMetadata("x-request-id", id_);
}

CallRecord CallTrace::complete(const grpc::Status& status) {
  completed_ = true;
  if (status.ok()) send_headers();
  if (ctx_ && !headers_sent_) ctx_->AddTrailingMetadata("x-request-id", id_);
  if (ctx_) {
    ctx_->AddTrailingMetadata(std::string(kAttemptHeader), std::to_string(attempt_));
    if (!status.ok()) {
      // The client's retry policy (common/service_config.h) retries by code;
      // the reason says whether, and the server when.
      thread_local std::mt19937 random{std::random_device{}()};
      const std::string pushback = server_pushback_ms(
          reason_name_of(status), attempt_, std::uniform_real_distribution<>(0.5, 1.0)(random));
      if (!pushback.empty()) ctx_->AddTrailingMetadata("grpc-retry-pushback-ms", pushback);
    }
  }
  CallRecord r(env_);
  r.seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  r.protocol_ = protocol_;
  r.method_ = method_;
  r.id_ = std::move(id_);
  r.peer_ = std::move(peer_);
  r.options_ = std::move(options);
  r.error_ = status.error_message();
  r.code_ = status.error_code();
  r.model_bytes_ = model_bytes;
  r.onnx_bytes_ = onnx_bytes;
  r.queue_seconds_ = queue_seconds_;
  r.cpu_seconds_ = cpu_seconds_;
  r.conversion_ = std::move(conversion_);
  r.outcome_ = outcome_;
  return r;
}

CallRecord::CallRecord(CallRecord&& o) noexcept
    : env_(o.env_),
      pending_(std::exchange(o.pending_, false)),
      protocol_(o.protocol_),
      method_(o.method_),
      id_(std::move(o.id_)),
      peer_(std::move(o.peer_)),
      options_(std::move(o.options_)),
      error_(std::move(o.error_)),
      code_(o.code_),
      model_bytes_(o.model_bytes_),
      onnx_bytes_(o.onnx_bytes_),
      queue_seconds_(o.queue_seconds_),
      seconds_(o.seconds_),
      cpu_seconds_(o.cpu_seconds_),
      conversion_(std::move(o.conversion_)),
      outcome_(o.outcome_) {}

void CallRecord::write() {
  if (!pending_) return;
  pending_ = false;
  const std::string_view code = status_code_name(code_);
  if (conversion_) env_->metrics.record_conversion(*conversion_, outcome_);
  if (cpu_seconds_ >= 0) env_->metrics.record_conversion_cpu(cpu_seconds_);
  env_->metrics.add_inflight_requests(-1);
  env_->metrics.record_request(protocol_, method_, code, seconds_);
  const LogLevel level = code_ == grpc::StatusCode::INTERNAL ? LogLevel::kError : LogLevel::kInfo;
  env_->log.log(level, "request",
                {{"request_id", std::string_view(id_)},
                 {"protocol", protocol_},
                 {"method", method_},
                 {"peer", std::string_view(peer_)},
                 {"model_bytes", model_bytes_},
                 {"onnx_bytes", onnx_bytes_},
                 {"options", std::string_view(options_)},
                 {"status", code},
                 {"error", std::string_view(error_)},
                 {"queue_ms", queue_seconds_ * 1000},
                 {"cpu_ms", cpu_seconds_ >= 0 ? cpu_seconds_ * 1000 : 0.0},
                 {"duration_ms", seconds_ * 1000}});
  env_->call_ended();
}

void CallTrace::dequeued(std::chrono::steady_clock::time_point queued_at) {
  queue_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - queued_at).count();
  env_.metrics.record_queue_wait(queue_seconds_);
}

void CallTrace::conversion_ran(Diagnostics diagnostics, std::string_view outcome,
                               double cpu_seconds) {
  conversion_ = std::move(diagnostics);
  outcome_ = outcome;
  cpu_seconds_ = cpu_seconds;
}

Failure refusal(CallEnvironment& env, Reason reason) {
  switch (reason) {
    case v1::ConversionError::REASON_QUEUE_FULL:
      env.metrics.record_shed("queue_full");
      return failure(reason, "every worker is busy and the queue is full; retry later");
    case v1::ConversionError::REASON_MEMORY_BUDGET:
      env.metrics.record_shed("memory_budget");
      return failure(reason, "the server holds too many model bytes now; retry later");
    default:
      env.metrics.record_shed("shutting_down");
      return failure(v1::ConversionError::REASON_SHUTTING_DOWN, "the server is shutting down");
  }
}

TestFault test_fault(const CallEnvironment& env, std::string_view value) {
  TestFault f;
  if (!env.limits.test_fault_hooks) return f;
  auto number_after = [&](std::string_view prefix) {
    return std::strtoull(std::string(value.substr(prefix.size())).c_str(), nullptr, 10);
  };
  if (value == "crash") f.fault = worker::Fault::kCrash;
  if (value == "hang") f.fault = worker::Fault::kHang;
  if (value == "syscall") f.fault = worker::Fault::kSyscall;
  if (value.starts_with("delay=")) {
    f.fault = worker::Fault::kDelay;
    f.bytes = number_after("delay=");
  }
  if (value.starts_with("allocate=")) {
    f.fault = worker::Fault::kAllocate;
    f.bytes = number_after("allocate=");
  }
  return f;
}

grpc::Status shed(CallEnvironment& env, Reason reason) { return to_status(refusal(env, reason)); }

}  // namespace lite2onnx::server
