#include "server/calls/call.h"

#include <cctype>
#include <cstdlib>

#include "common/translate.h"
#include "server/logger.h"
#include "server/metrics.h"
#include "server/worker_pool.h"

namespace lite2onnx::server {
namespace {

using std::chrono::duration;

// A client-given request id is used when it is short and plain; else one is made.
bool usable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

bool lower_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// W3C Trace Context: "VERSION-TRACE_ID-PARENT_ID-FLAGS", version 00 (or a
// later one, read as 00); an all-zero id is invalid. Empty ids when not well-formed.
void parse_traceparent(std::string_view text, std::string* trace_id, std::string* parent_id) {
  if (text.size() < 55 || text[2] != '-' || text[35] != '-' || text[52] != '-') return;
  const std::string_view version = text.substr(0, 2), trace = text.substr(3, 32),
                         parent = text.substr(36, 16), flags = text.substr(53, 2);
  if (!lower_hex(version) || version == "ff" || (version == "00" && text.size() != 55) ||
      !lower_hex(trace) || !lower_hex(parent) || !lower_hex(flags) ||
      trace.find_first_not_of('0') == std::string_view::npos ||
      parent.find_first_not_of('0') == std::string_view::npos)
    return;
  *trace_id = std::string(trace);
  *parent_id = std::string(parent);
}

// The test hook a call asks for (crash, hang, syscall, mapped-answer,
// allocate=BYTES or delay=MS), honoured only by a server started with --test-fault-hooks.
TestFault test_fault(bool hooks, std::string_view value) {
  TestFault f;
  if (!hooks) return f;
  auto number_after = [&](std::string_view prefix) {
    return std::strtoull(std::string(value.substr(prefix.size())).c_str(), nullptr, 10);
  };
  if (value == "crash") f.fault = worker::Fault::kCrash;
  if (value == "hang") f.fault = worker::Fault::kHang;
  if (value == "syscall") f.fault = worker::Fault::kSyscall;
  if (value == "mapped-answer") f.fault = worker::Fault::kMappedAnswer;
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

bool needs_worker(std::string_view method) { return method != "ListOperators"; }

std::string bytes_text(uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

Failure refusal(std::string_view reason_name, std::string message) {
  return make_failure(reason_named(reason_name), std::move(message));
}

// ---- CallCore --------------------------------------------------------------------

CallCore::CallCore(CallLimits limits, WorkerPool& pool, Budget& budget, ConversionCache& cache,
                   Metrics& metrics, const Logger& log, std::string id_prefix)
    : limits_(limits),
      pool_(pool),
      budget_(budget),
      cache_(cache),
      metrics_(metrics),
      log_(log),
      id_prefix_(std::move(id_prefix)) {}

std::string CallCore::request_id(std::string_view given) {
  if (usable_request_id(given)) return std::string(given);
  return id_prefix_ + "-" + std::to_string(next_id_.fetch_add(1));
}

bool CallCore::wait_idle(std::chrono::system_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return idle_.wait_until(lock, deadline, [this] { return calls_.empty(); });
}

void CallCore::cancel_all() {
  std::lock_guard lock(mu_);
  for (StopSignal* stop : calls_) stop->cancel();
}

// ---- Call: arrival and admission ---------------------------------------------------

Call::Call(CallCore& core, const CallInfo& info)
    : core_(core),
      protocol_(info.protocol),
      method_(info.method),
      id_(core.request_id(info.request_id)),
      address_(info.address),
      start_(SteadyClock::now()),
      stop_(info.deadline),
      fault_(test_fault(core.limits_.test_fault_hooks, info.test_fault)),
      last_receive_(start_),
      upload_pace_(core.limits_.upload, start_) {
  parse_traceparent(info.traceparent, &trace_id_, &parent_id_);
  core_.metrics_.add_inflight_requests(1);
  std::lock_guard lock(core_.mu_);
  core_.calls_.insert(&stop_);
}

std::optional<Failure> Call::refuse(std::string_view shed, Failure failure) {
  core_.metrics_.record_shed(shed);
  return failure;
}

std::optional<Failure> Call::refuse_bytes(Budget::Refusal why) {
  const bool peer = why == Budget::Refusal::kPeerBytes;
  return refuse(peer ? "peer_bytes" : "memory_budget",
                refusal("memory_budget", peer ? "this client holds as many bytes as one client "
                                                "may (--max-bytes-per-peer); retry later"
                                              : "the server holds too many model bytes now; "
                                                "retry later"));
}

std::optional<Failure> Call::admit() {
  if (core_.draining())
    return refuse("shutting_down", refusal("shutting_down", "the server is shutting down"));
  const std::string peer = peer_of_address(address_);
  Budget::Refusal why{};
  auto ticket = core_.budget_.enter(peer, &why);
  if (!ticket)
    return refuse("peer_calls",
                  refusal("queue_full", "this client (" + peer + ") has " +
                                            std::to_string(core_.budget_.limits().peer_calls) +
                                            " calls in progress, as many as one client may "
                                            "(--max-calls-per-peer); retry later"));
  ticket_ = std::move(*ticket);
  if (needs_worker(method_) && !core_.pool_.has_room())
    return refuse("queue_full",
                  refusal("queue_full", "every worker is busy and the queue is full; retry later"));
  return std::nullopt;
}

std::optional<Failure> Call::set_options(const v1::ConvertOptions& options) {
  options_summary_ = summary(options);
  auto core_options = to_core(options);
  if (!core_options) return failure_of(core_options.error());
  wire_options_ = options;
  options_ = std::move(*core_options);
  return std::nullopt;
}

// ---- the upload ------------------------------------------------------------------

std::optional<Failure> Call::announce(uint64_t total) {
  const uint64_t limit = core_.limits_.max_stream_bytes;  // (a unary message announces nothing)
  announced_ = total;
  announced_size_ = true;
  if (total > limit)
    return refusal("model_too_large", "the model is larger than this server's " +
                                          bytes_text(limit) + " (--max-stream-bytes): it has " +
                                          std::to_string(total));
  if (auto refused = ticket_.hold(std::min(total, kUploadAllotment))) return refuse_bytes(*refused);
  return std::nullopt;
}

std::optional<Failure> Call::receive(std::span<const std::byte> bytes, Keep keep,
                                     std::shared_ptr<const void> owner) {
  received_ += bytes.size();
  last_receive_ = SteadyClock::now();
  const bool unary = protocol_ == "grpc" && method_ != "ConvertStream";
  const uint64_t limit = unary ? core_.limits_.max_unary_bytes : core_.limits_.max_stream_bytes;
  if (received_ > limit)
    return refusal("model_too_large",
                   unary ? "the model has " + bytes_text(received_) + ", more than this server's " +
                               bytes_text(limit) +
                               " for one message (--max-unary-bytes); use ConvertStream"
                         : "the model is larger than this server's " + bytes_text(limit) +
                               " (--max-stream-bytes)");
  if (announced_size_ && announced_ > 0 && received_ > announced_)
    return refusal("bad_stream",
                   "the model's bytes exceed the announced size (" + bytes_text(announced_) + ")");
  if (received_ > ticket_.bytes()) {
    // Held in steps, as the bytes arrive; never beyond an announced size.
    uint64_t hold = (received_ + kUploadAllotment - 1) / kUploadAllotment * kUploadAllotment;
    if (announced_size_ && announced_ >= received_) hold = std::min(hold, announced_);
    if (unary) hold = received_;
    // What the step would add may not fit where the bytes themselves do.
    std::optional<Budget::Refusal> refused = ticket_.hold(hold);
    if (refused && hold > received_) refused = ticket_.hold(received_);
    if (refused) return refuse_bytes(*refused);
  }
  if (keep == Keep::kRefer)
    model_.refer(bytes, std::move(owner));
  else
    model_.append(bytes);
  return std::nullopt;
}

SteadyClock::time_point Call::upload_deadline() const {
  const auto idle = std::chrono::duration_cast<SteadyClock::duration>(
      duration<double>(core_.limits_.idle_seconds));
  return std::min(upload_pace_.deadline(received_), last_receive_ + idle);
}

Failure Call::upload_late() {
  core_.metrics_.record_slow_transfer(protocol_, "upload");
  const auto idle = std::chrono::duration_cast<SteadyClock::duration>(
      duration<double>(core_.limits_.idle_seconds));
  const bool silent = last_receive_ + idle <= upload_pace_.deadline(received_);
  const std::string why =
      silent ? "nothing arrived for " + std::to_string(core_.limits_.idle_seconds) +
                   " s (--stream-idle-timeout)"
             : upload_pace_.why(received_) + " (--upload-min-rate, --upload-timeout)";
  return refusal("bad_stream", "the upload was ended after " + bytes_text(received_) + ": " + why);
}

std::optional<Failure> Call::upload_done() {
  if (announced_size_ && announced_ > 0 && received_ != announced_)
    return refusal("bad_stream", "the upload carried " + std::to_string(received_) +
                                     " model bytes, not the announced " +
                                     std::to_string(announced_));
  return std::nullopt;
}

// ---- the conversion --------------------------------------------------------------

std::optional<Failure> Call::hold_answer(uint64_t bytes) {
  // The model is gone by now (into a worker, or freed): its bytes become the answer's.
  if (auto refused = ticket_.hold(bytes)) {
    if (bytes > core_.budget_.limits().bytes)
      return refusal("resource_limit", "the answer needs " + bytes_text(bytes) +
                                           " here, more than this server's memory budget (" +
                                           bytes_text(core_.budget_.limits().bytes) +
                                           ", --max-inflight-bytes)");
    const bool peer = *refused == Budget::Refusal::kPeerBytes;
    return refuse(peer ? "peer_bytes" : "memory_budget",
                  refusal("memory_budget", "the answer (" + bytes_text(bytes) +
                                               ") does not fit in the memory budget now; "
                                               "retry later"));
  }
  answer_bytes_ = bytes;
  return std::nullopt;
}

void Call::run(Done done) {
  ran_ = true;
  if (method_ != "Inspect" && fault_.fault == worker::Fault::kNone) {  // a fault asks for a worker
    key_ = core_.cache_.key(model_, options_);
    if (key_)
      if (auto hit = core_.cache_.find(*key_)) {
        model_.clear();
        CallResult result;
        result.failure = hold_answer(hit->onnx.size());
        result.onnx = std::move(hit->onnx);
        result.diagnostics = std::move(hit->diagnostics);
        return done(result);
      }
  }
  queued_at_ = SteadyClock::now();
  if (!core_.pool_.try_submit([this, done](ConversionRunner& runner) { work(runner, done); })) {
    model_.clear();
    CallResult result;
    result.failure =
        refuse("queue_full",
               refusal("queue_full", "every worker is busy and the queue is full; retry later"));
    done(result);
  }
}

void Call::work(ConversionRunner& runner, const Done& done) {
  queue_seconds_ = duration<double>(SteadyClock::now() - queued_at_).count();
  core_.metrics_.record_queue_wait(queue_seconds_);
  CallResult result;
  try {
    if (stop_.stop_requested()) {
      result.failure = stop_.failure();
    } else if (method_ == "Inspect") {
      InspectOutcome out = runner.inspect(model_, stop_, fault_, id_);
      result.failure = std::move(out.failure);
      if (!result.failure) result.failure = hold_answer(out.response.ByteSizeLong());
      result.inspection = std::move(out.response);
    } else {
      const uint64_t limit = core_.limits_.max_output_bytes
                                 ? core_.limits_.max_output_bytes
                                 : kOutputBase + kOutputPerModelByte * model_.size();
      ConvertJob job{model_, wire_options_, options_, stop_, fault_, id_};
      job.max_output_bytes = std::min<uint64_t>(limit, (uint64_t{1} << 31) - 1);
      job.admit_answer = [this](uint64_t bytes) { return hold_answer(bytes); };
      ConvertOutcome out = core_.cache_.convert(runner, job, key_ ? &*key_ : nullptr);
      if (out.ran) {
        conversion_ = out.diagnostics;
        outcome_ = out.outcome;
        cpu_seconds_ = out.cpu_seconds;
      }
      result.failure = std::move(out.failure);
      result.onnx = std::move(out.onnx);
      result.diagnostics = std::move(out.diagnostics);
    }
  } catch (const std::exception& e) {
    result.failure = refusal("internal", e.what());
  }
  model_.clear();
  if (result.failure) ticket_.hold(0);  // nothing held but a short error
  done(result);
}

// ---- the answer and the record -----------------------------------------------------

Pace Call::start_answer() { return Pace(core_.limits_.send, SteadyClock::now()); }

void Call::answer_sent(uint64_t bytes) {
  answer_bytes_ = bytes;
  ticket_.hold(0);
}

void Call::answer_dropped(uint64_t sent, const std::string& why) {
  core_.metrics_.record_slow_transfer(protocol_, "answer");
  dropped_ = "after " + std::to_string(sent) + " bytes: " + why;
  ticket_.hold(0);
}

void Call::finish(const std::optional<Failure>& failure, int http_status) {
  if (finished_) return;
  finished_ = true;
  seconds_ = duration<double>(SteadyClock::now() - start_).count();
  http_status_ = http_status;
  if (failure) {
    reason_ = failure->reason;
    error_ = failure->error.message;
    // Refused before it ran: nothing is held but a short error, for the
    // client may call again as soon as it reads it, before the transport has
    // let go of this call (a refused unary message held the pieces that
    // fitted until then). A call that ran let go in work().
    if (!ran_) {
      model_.clear();
      ticket_.hold(0);
    }
  }
}

Call::~Call() {
  ticket_.release();
  model_.clear();
  finish(refusal("cancelled", "the call ended without an answer"));
  write_record();
  std::lock_guard lock(core_.mu_);
  core_.calls_.erase(&stop_);
  if (core_.calls_.empty()) core_.idle_.notify_all();
}

void Call::write_record() {
  Metrics& metrics = core_.metrics_;
  if (conversion_) metrics.record_conversion(*conversion_, outcome_);
  if (cpu_seconds_ >= 0) metrics.record_conversion_cpu(cpu_seconds_);
  metrics.add_inflight_requests(-1);
  const std::string_view code = reason_ ? reason_->grpc_code_name : "OK";
  const std::string_view reason = reason_ ? reason_->name : "ok";
  metrics.record_request(protocol_, method_, code, reason, seconds_);
  const bool bad = reason_ && (reason_->name == "internal" || reason_->name == "worker_crashed");
  const uint64_t onnx_bytes = reason_ ? 0 : answer_bytes_;
  core_.log_.log(bad ? LogLevel::kError : LogLevel::kInfo, "request",
                 {{"request_id", std::string_view(id_)},
                  {"protocol", protocol_},
                  {"method", method_},
                  {"peer", std::string_view(address_)},
                  {"trace_id", std::string_view(trace_id_)},
                  {"parent_id", std::string_view(parent_id_)},
                  {"model_bytes", received_},
                  {"onnx_bytes", onnx_bytes},
                  {"options", std::string_view(options_summary_)},
                  {"status", code},
                  {"reason", reason},
                  {"http_status", int64_t{http_status_}},
                  {"error", std::string_view(error_)},
                  {"dropped", std::string_view(dropped_)},
                  {"queue_ms", queue_seconds_ * 1000},
                  {"cpu_ms", cpu_seconds_ >= 0 ? cpu_seconds_ * 1000 : 0.0},
                  {"duration_ms", seconds_ * 1000}});
}

}  // namespace lite2onnx::server
