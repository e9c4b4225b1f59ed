#include "server/conversion_runner.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "common/error_reasons.h"
#include "common/translate.h"
#include "core/provenance.h"
#include "server/logger.h"
#include "server/metrics.h"

namespace lite2onnx::server {
namespace {

using v1::ConversionError;

// ---- thread isolation: the core in this process ---------------------------------

class ThreadRunner final : public ConversionRunner {
 public:
  explicit ThreadRunner(const Limits& limits) : limits_(limits) {}

  ConvertOutcome convert(ConvertJob& job) override {
    ConvertOutcome out;
    ConvertOptions options = job.options;
    options.limits = limits_;
    options.cancelled = [&stop = job.stop] { return stop.stop_requested(); };
    if (!job.source_sha256.empty())
      options.source_sha256 = [hash = std::string(job.source_sha256)] { return hash; };
    Result<std::string> onnx = Error{};
    try {
      onnx = lite2onnx::convert(job.model.bytes(), options, out.diagnostics);
    } catch (const std::exception& e) {
      onnx = make_error(ErrorCode::kInternal, e.what());
    }
    job.model.clear();  // free the model before answering
    out.ran = true;
    out.outcome = onnx ? "ok" : to_string(onnx.error().code);
    if (!onnx) {
      out.failure = from_core(onnx.error(), job.stop.deadline_passed());
    } else if (job.stop.stop_requested()) {
      out.failure = job.stop.failure();
    } else {
      auto owned = std::make_shared<std::string>(std::move(onnx).value());
      out.onnx = {owned, *owned};
    }
    return out;
  }

  InspectOutcome inspect(ModelBuffer& model, StopSignal&, TestFault, std::string_view) override {
    InspectOutcome out;
    try {
      auto info = lite2onnx::inspect(model.bytes(), limits_);
      if (!info)
        out.failure = from_core(info.error(), false);
      else
        to_proto(*info, &out.response);
    } catch (const std::exception& e) {
      out.failure = failure(ConversionError::REASON_INTERNAL, e.what());
    }
    return out;
  }

 private:
  Limits limits_;
};

// ---- process isolation: a worker process -----------------------------------------

// Reasons a worker may answer with: the core's, and its memory limit. Anything
// else from it (a server-side reason, a number this server does not know) is
// a malformed answer.
bool worker_may_say(int reason) {
  switch (reason) {
    case ConversionError::REASON_INVALID_MODEL:
    case ConversionError::REASON_UNSUPPORTED:
    case ConversionError::REASON_INVALID_OPTION:
    case ConversionError::REASON_RESOURCE_LIMIT:
    case ConversionError::REASON_INTERNAL:
    case ConversionError::REASON_MEMORY_LIMIT:
      return true;
    default:
      return false;
  }
}

// Bytes of a worker's answer, copied before they are parsed or kept: the
// worker could change them meanwhile.
std::string copy(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string seconds(std::chrono::milliseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(t.count()) / 1000);
  return text;
}

std::string signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return std::string("SIG") + (name ? name : std::to_string(sig));
}

class ProcessRunner final : public ConversionRunner {
 public:
  ProcessRunner(const WorkerOptions& options, ChildRegistry& children, Metrics& metrics,
                const Logger& log)
      : options_(options), children_(children), metrics_(metrics), log_(log) {}

  Status start() {
    auto w = WorkerProcess::start(options_, children_);
    if (!w) {
      metrics_.record_worker_failure("start");
      return w.take_error();
    }
    worker_ = std::move(w).value();
    metrics_.record_worker_start();
    return ok_status();
  }

  ConvertOutcome convert(ConvertJob& job) override {
    ConvertOutcome out;
    JobResult r = run(worker::JobKind::kConvert, job.model, job.wire_options.SerializeAsString(),
                      job.source_sha256, job.stop, job.fault, job.request_id, &out.failure);
    if (!r.sent) return out;
    out.ran = true;
    out.cpu_seconds = r.cpu_seconds;
    out.diagnostics.model_bytes = job.model.size();
    if (r.end == JobEnd::kAnswered) {
      v1::Diagnostics d;
      if (!d.ParseFromString(copy(r.output.subspan(r.answer.onnx_bytes, r.answer.info_bytes)))) {
        out.failure = bad_answer("its diagnostics do not parse", job.request_id);
      } else {
        out.diagnostics = lite2onnx::from_proto(d);
        if (!out.failure) {
          // A copy: the worker rewrites its output memfd for its next job.
          auto onnx = std::make_shared<std::string>(copy(r.output.first(r.answer.onnx_bytes)));
          out.onnx = {onnx, *onnx};
        }
      }
    }
    out.outcome = out.failure ? reason_of_proto(out.failure->reason).name : "ok";
    // A stopped conversion is counted as the core counts one: cancelled.
    if (r.end == JobEnd::kDeadline || r.end == JobEnd::kCancelled) out.outcome = "cancelled";
    return out;
  }

  InspectOutcome inspect(ModelBuffer& model, StopSignal& stop, TestFault fault,
                         std::string_view request_id) override {
    InspectOutcome out;
    JobResult r =
        run(worker::JobKind::kInspect, model, "", "", stop, fault, request_id, &out.failure);
    if (r.end == JobEnd::kAnswered && !out.failure) {
      if (!out.response.ParseFromString(
              copy(r.output.subspan(r.answer.onnx_bytes, r.answer.info_bytes))))
        out.failure = bad_answer("its inspection does not parse", request_id);
    }
    return out;
  }

  void after_job() override {
    if (worker_ && worker_->usable()) return;
    worker_.reset();
    // A failed start is retried a few times; after that the next job tries again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto st = start();
      if (st) return;
      log_.error("cannot start a worker process",
                 {{"error", std::string_view(st.error().message)}});
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    }
  }

 private:
  // Runs one job in the worker; `failure` is set unless it answered without an error.
  // A 64-character `source_sha256` goes to the worker with the job.
  JobResult run(worker::JobKind kind, ModelBuffer& model, const std::string& options,
                std::string_view source_sha256, StopSignal& stop, TestFault fault,
                std::string_view request_id, std::optional<Failure>* failure) {
    if (!worker_) after_job();
    if (!worker_) {
      *failure = server::failure(ConversionError::REASON_INTERNAL,
                                 "no worker process could be started (see the server's log)");
      return {};
    }
    worker::JobFrame frame;
    frame.kind = kind;
    frame.fault = fault.fault;
    frame.fault_bytes = fault.bytes;
    frame.model_bytes = model.size();
    frame.options_bytes = options.size();
    if (source_sha256.size() == sizeof frame.source_sha256) {
      frame.flags |= worker::kSourceSha256Given;
      std::memcpy(frame.source_sha256, source_sha256.data(), sizeof frame.source_sha256);
    }
    JobResult r = worker_->run(
        frame,
        [&](std::byte* input) {
          model.copy_to(input);
          std::memcpy(input + model.size(), options.data(), options.size());
        },
        stop,
        [&] {
          log_.debug("job sent to the worker", {{"request_id", request_id},
                                                {"pid", int64_t{worker_->pid()}},
                                                {"model_bytes", uint64_t{model.size()}}});
        });
    model.clear();
    switch (r.end) {
      case JobEnd::kAnswered:
        if (r.answer.error_bytes > 0) *failure = answered_failure(r, request_id);
        if (r.out_of_memory ||
            (*failure && (*failure)->reason == ConversionError::REASON_MEMORY_LIMIT))
          worker_failed("memory_limit", r, request_id);
        break;
      case JobEnd::kCancelled:
        if (r.sent) worker_failed("cancelled", r, request_id);
        *failure = stop.failure();  // the deadline, or the client (StopSignal::failure)
        break;
      case JobEnd::kDeadline:
        worker_failed("deadline", r, request_id);
        *failure = server::failure(ConversionError::REASON_DEADLINE_EXCEEDED,
                                   "the deadline passed before the conversion ended");
        break;
      case JobEnd::kTimeLimit:
        worker_failed("time_limit", r, request_id);
        *failure = server::failure(ConversionError::REASON_TIME_LIMIT,
                                   "the conversion ran longer than this server's limit of " +
                                       seconds(options_.time_limit));
        break;
      case JobEnd::kDied:
        *failure = died(r, request_id);
        break;
      case JobEnd::kBadAnswer:
        *failure = bad_answer(r.problem, request_id);
        break;
    }
    return r;
  }

  // The error a worker answered with.
  Failure answered_failure(const JobResult& r, std::string_view request_id) {
    ConversionError e;
    if (!e.ParseFromString(copy(
            r.output.subspan(r.answer.onnx_bytes + r.answer.info_bytes, r.answer.error_bytes))) ||
        !worker_may_say(e.reason()))
      return bad_answer("its error does not parse or has a reason it cannot have", request_id);
    return from_proto(e);
  }

  // A worker that died by itself: its memory limit, or a crash.
  Failure died(const JobResult& r, std::string_view request_id) {
    const int status = r.wait_status;
    const bool signalled = WIFSIGNALED(status);
    const int sig = signalled ? WTERMSIG(status) : 0;
    // An allocation failure it reported, or a kill (the OOM killer; ASan's RSS
    // limit exits instead) near its limit.
    const bool near_limit =
        options_.memory_limit > 0 && r.peak_rss_bytes >= options_.memory_limit / 10 * 9;
    if (r.out_of_memory || (near_limit && (sig == SIGKILL || !signalled))) {
      worker_failed("memory_limit", r, request_id);
      return failure(
          ConversionError::REASON_MEMORY_LIMIT,
          "the conversion needed more memory than this server's per-conversion limit "
          "(its worker process " +
              std::string(signalled ? "was killed by " + signal_name(sig)
                                    : "exited with " + std::to_string(WEXITSTATUS(status))) +
              ")");
    }
    if (sig == SIGXFSZ) {  // its answer outgrew RLIMIT_FSIZE, the memory limit
      worker_failed("memory_limit", r, request_id);
      return failure(ConversionError::REASON_MEMORY_LIMIT,
                     "the conversion's answer exceeded this server's per-conversion memory limit");
    }
    worker_failed("crashed", r, request_id);
    std::string why = signalled ? "was killed by " + signal_name(sig)
                                : "exited with " + std::to_string(WEXITSTATUS(status));
    if (sig == SIGSYS) why += " (a system call outside its seccomp allow-list)";
    return failure(ConversionError::REASON_WORKER_CRASHED,
                   "the worker process converting the model " + why + "; it was replaced");
  }

  Failure bad_answer(const std::string& problem, std::string_view request_id) {
    JobResult r;
    if (worker_ && worker_->usable()) worker_.reset();  // killed and reaped
    r.problem = problem;
    worker_failed("bad_answer", r, request_id);
    return failure(ConversionError::REASON_WORKER_CRASHED,
                   "the worker process converting the model answered something malformed (" +
                       problem + "); it was replaced");
  }

  void worker_failed(std::string_view cause, const JobResult& r, std::string_view request_id) {
    metrics_.record_worker_failure(cause);
    log_.warn("worker replaced",
              {{"request_id", request_id},
               {"cause", cause},
               {"pid", int64_t{worker_ ? worker_->pid() : 0}},
               {"status", std::string_view(r.problem)},
               {"peak_rss_mib", static_cast<double>(r.peak_rss_bytes) / (1 << 20)}});
  }

  WorkerOptions options_;
  ChildRegistry& children_;
  Metrics& metrics_;
  const Logger& log_;
  std::unique_ptr<WorkerProcess> worker_;
};

}  // namespace

void ModelBuffer::append(std::span<const std::byte> bytes) {
  bytes_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  size_ += bytes.size();
}

void ModelBuffer::refer(std::span<const std::byte> bytes) {
  pieces_.push_back(bytes);
  size_ += bytes.size();
}

std::span<const std::byte> ModelBuffer::bytes() {
  if (!pieces_.empty()) {
    bytes_.reserve(size_);
    for (auto piece : pieces_)
      bytes_.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    pieces_.clear();
  }
  return std::as_bytes(std::span(bytes_.data(), bytes_.size()));
}

void ModelBuffer::copy_to(std::byte* out) const {
  std::memcpy(out, bytes_.data(), bytes_.size());
  out += bytes_.size();
  for (auto piece : pieces_) {
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
}

std::string ModelBuffer::sha256() const {
  Sha256 hash;
  hash.update(std::as_bytes(std::span(bytes_.data(), bytes_.size())));
  for (auto piece : pieces_) hash.update(piece);
  return hash.hex();
}

void ModelBuffer::clear() {
  std::string().swap(bytes_);
  pieces_.clear();
}

std::unique_ptr<ConversionRunner> make_thread_runner(const Limits& limits) {
  return std::make_unique<ThreadRunner>(limits);
}

Result<std::unique_ptr<ConversionRunner>> make_process_runner(const WorkerOptions& options,
                                                              ChildRegistry& children,
                                                              Metrics& metrics, const Logger& log) {
  auto runner = std::make_unique<ProcessRunner>(options, children, metrics, log);
  if (auto st = runner->start(); !st) return st.take_error();
  return std::unique_ptr<ConversionRunner>(std::move(runner));
}

}  // namespace lite2onnx::server
