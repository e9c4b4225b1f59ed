#include "server/conversion_runner.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

// A core error as a failure; a cancellation is the deadline's when the
// deadline is what stopped the conversion.
Failure failure_of_core(const Error& error, bool deadline_passed) {
  Failure f = failure_of(error);
  if (deadline_passed && f.reason->name == "cancelled")
    f.reason = &reason_named("deadline_exceeded");
  return f;
}

// ---- thread isolation: the core in this process ---------------------------------

class ThreadRunner final : public ConversionRunner {
 public:
  explicit ThreadRunner(const Limits& limits) : limits_(limits) {}

  ConvertOutcome convert(ConvertJob& job) override {
    ConvertOutcome out;
    ConvertOptions options = job.options;
    options.limits = limits_;
    if (job.max_output_bytes) options.limits.max_output_bytes = job.max_output_bytes;
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
      out.failure = failure_of_core(onnx.error(), job.stop.deadline_passed());
    } else if (job.stop.stop_requested()) {
      out.failure = job.stop.failure();
    } else if (job.admit_answer && (out.failure = job.admit_answer(onnx->size()))) {
      // (the answer is dropped)
    } else {
      auto owned = std::make_shared<std::string>(std::move(onnx).value());
      out.onnx = {owned, *owned, nullptr};
    }
    return out;
  }

  InspectOutcome inspect(ModelBuffer& model, StopSignal&, TestFault, std::string_view) override {
    InspectOutcome out;
    try {
      auto info = lite2onnx::inspect(model.bytes(), limits_);
      if (!info)
        out.failure = failure_of(info.error());
      else
        to_proto(*info, &out.response);
    } catch (const std::exception& e) {
      out.failure = make_failure(reason_named("internal"), e.what());
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
std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string copy(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The pages of a memfd mapping this process no longer needs leave its
// resident set (the memfd keeps them): the model it wrote, or the answer it
// copied, is counted once, in the bytes the memory budget holds. (For a large
// one only: a memfd up to kReuseBytes is kept for the next job, mapped.)
void release_pages(const std::byte* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// A copy of an answer; a large one's mapped pages released as it goes.
std::string copy_out(std::span<const std::byte> bytes) {
  if (bytes.size() <= worker::kReuseBytes) return copy(bytes);
  constexpr size_t kStep = size_t{4} << 20;
  std::string out;
  out.reserve(bytes.size());
  for (size_t done = 0; done < bytes.size(); done += kStep) {
    const size_t n = std::min(kStep, bytes.size() - done);
    out.append(reinterpret_cast<const char*>(bytes.data() + done), n);
    release_pages(bytes.data() + done, n);
  }
  return out;
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
                      job.source_sha256, job.max_output_bytes, job.stop, job.fault, job.request_id,
                      &out.failure);
    if (!r.sent) return out;
    out.ran = true;
    out.cpu_seconds = r.cpu_seconds;
    out.diagnostics.model_bytes = job.model.size();
    if (r.end == JobEnd::kAnswered) {
      v1::Diagnostics d;
      if (!d.ParseFromString(r.info)) {
        out.failure = bad_answer("its diagnostics do not parse", job.request_id);
      } else {
        out.diagnostics = lite2onnx::from_proto(d);
      }
    }
    out.outcome = out.failure ? out.failure->reason->name : "ok";
    if (!out.failure && r.end == JobEnd::kAnswered) {
      // A copy (the worker rewrites its output memfd for its next job), once
      // the memory budget holds its bytes; else the answer is dropped.
      if (job.admit_answer) out.failure = job.admit_answer(r.answer.onnx_bytes);
      if (out.failure) {
        // (the answer is dropped)
      } else if (r.answer_file) {
        // A large answer stays in its sealed memfd: sent from there, no copy here.
        out.onnx.file =
            std::make_shared<const AnswerFile>(std::move(r.answer_file), r.answer.onnx_bytes);
      } else {
        auto onnx = std::make_shared<std::string>(copy_out(r.onnx));
        out.onnx = {onnx, *onnx, nullptr};
      }
    }
    // A stopped conversion is counted as the core counts one: cancelled.
    if (r.end == JobEnd::kDeadline || r.end == JobEnd::kCancelled) out.outcome = "cancelled";
    return out;
  }

  InspectOutcome inspect(ModelBuffer& model, StopSignal& stop, TestFault fault,
                         std::string_view request_id) override {
    InspectOutcome out;
    JobResult r =
        run(worker::JobKind::kInspect, model, "", "", 0, stop, fault, request_id, &out.failure);
    if (r.end == JobEnd::kAnswered && !out.failure) {
      if (!out.response.ParseFromString(r.info))
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
                std::string_view source_sha256, uint64_t max_output_bytes, StopSignal& stop,
                TestFault fault, std::string_view request_id, std::optional<Failure>* failure) {
    if (!worker_) after_job();
    if (!worker_) {
      *failure = make_failure(reason_named("internal"),
                              "no worker process could be started (see the server's log)");
      return {};
    }
    worker::JobFrame frame;
    frame.kind = kind;
    frame.fault = fault.fault;
    frame.fault_bytes = fault.bytes;
    frame.model_bytes = model.size();
    frame.options_bytes = options.size();
    frame.max_output_bytes = max_output_bytes;
    if (source_sha256.size() == sizeof frame.source_sha256) {
      frame.flags |= worker::kSourceSha256Given;
      std::memcpy(frame.source_sha256, source_sha256.data(), sizeof frame.source_sha256);
    }
    JobResult r = worker_->run(
        frame,
        [&](std::byte* input) {
          // A large model leaves this process as it is written: its blocks
          // freed, the memfd's pages released (the worker reads its own mapping).
          const size_t model_bytes = model.size();
          const bool large = model_bytes + options.size() > worker::kReuseBytes;
          model.drain_to(input, [&](size_t offset, size_t n) {
            if (large) release_pages(input + offset, n);
          });
          std::memcpy(input + model_bytes, options.data(), options.size());
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
        if (r.out_of_memory || (*failure && (*failure)->reason->name == "memory_limit"))
          worker_failed("memory_limit", r, request_id);
        break;
      case JobEnd::kCancelled:
        *failure = stop.failure();  // the deadline, or the client (StopSignal::failure)
        // A client cancels at its own deadline, often before the server's copy
        // of it passes: the worker was then stopped by the deadline.
        if (r.sent)
          worker_failed((*failure)->name() == "deadline_exceeded" ? "deadline" : "cancelled", r,
                        request_id);
        break;
      case JobEnd::kDeadline:
        worker_failed("deadline", r, request_id);
        *failure = make_failure(reason_named("deadline_exceeded"),
                                "the deadline passed before the conversion ended");
        break;
      case JobEnd::kTimeLimit:
        worker_failed("time_limit", r, request_id);
        *failure = make_failure(reason_named("time_limit"),
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
    if (!e.ParseFromString(r.error) || !worker_may_say(e.reason()))
      return bad_answer("its error does not parse or has a reason it cannot have", request_id);
    return failure_of(e);
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
      return make_failure(
          reason_named("memory_limit"),
          "the conversion needed more memory than this server's per-conversion limit "
          "(its worker process " +
              std::string(signalled ? "was killed by " + signal_name(sig)
                                    : "exited with " + std::to_string(WEXITSTATUS(status))) +
              ")");
    }
    if (sig == SIGXFSZ) {  // its answer outgrew RLIMIT_FSIZE, the memory limit
      worker_failed("memory_limit", r, request_id);
      return make_failure(
          reason_named("memory_limit"),
          "the conversion's answer exceeded this server's per-conversion memory limit");
    }
    worker_failed("crashed", r, request_id);
    std::string why = signalled ? "was killed by " + signal_name(sig)
                                : "exited with " + std::to_string(WEXITSTATUS(status));
    if (sig == SIGSYS) why += " (a system call outside its seccomp allow-list)";
    return make_failure(reason_named("worker_crashed"),
                        "the worker process converting the model " + why + "; it was replaced");
  }

  Failure bad_answer(const std::string& problem, std::string_view request_id) {
    JobResult r;
    if (worker_ && worker_->usable()) worker_.reset();  // killed and reaped
    r.problem = problem;
    worker_failed("bad_answer", r, request_id);
    return make_failure(reason_named("worker_crashed"),
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

bool AnswerFile::read(uint64_t offset, std::span<char> out) const {
  if (offset > size_ || out.size() > size_ - offset) return false;
  for (size_t done = 0; done < out.size();) {
    const ssize_t got =
        pread(fd_.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

std::optional<std::string_view> OnnxBytes::piece(uint64_t offset, size_t n,
                                                 std::string& scratch) const {
  if (!file) return bytes.substr(static_cast<size_t>(offset), n);
  scratch.resize(n);
  if (!file->read(offset, scratch)) return std::nullopt;
  return std::string_view(scratch);
}

std::optional<OnnxBytes> OnnxBytes::in_memory() const {
  if (!file) return *this;
  auto owned = std::make_shared<std::string>();
  if (!piece(0, static_cast<size_t>(file->size()), *owned)) return std::nullopt;
  return OnnxBytes{owned, *owned, nullptr};
}

void ModelBuffer::append(std::span<const std::byte> bytes) {
  size_ += bytes.size();
  while (!bytes.empty()) {
    // The last block, if it is the last piece and has room; else a new one.
    std::string* last = blocks_.empty() ? nullptr : &blocks_.back();
    if (!last || pieces_.empty() || pieces_.back().data() != as_bytes(*last).data() ||
        last->size() == last->capacity()) {
      blocks_.emplace_back().reserve(std::min(kBlockBytes, std::max(bytes.size(), size_t{4096})));
      last = &blocks_.back();
      pieces_.emplace_back();
    }
    const size_t n = std::min(bytes.size(), last->capacity() - last->size());
    last->append(reinterpret_cast<const char*>(bytes.data()), n);
    pieces_.back() = as_bytes(*last);
    bytes = bytes.subspan(n);
  }
}

void ModelBuffer::refer(std::span<const std::byte> bytes, std::shared_ptr<const void> owner) {
  pieces_.push_back(bytes);
  size_ += bytes.size();
  if (owner && (owners_.empty() || owners_.back() != owner)) owners_.push_back(std::move(owner));
}

std::span<const std::byte> ModelBuffer::bytes() {
  // One piece of ours, or any in one buffer of ours: the core reads FlatBuffers
  // in place, from an aligned start.
  const bool aligned =
      pieces_.size() == 1 && reinterpret_cast<uintptr_t>(pieces_.front().data()) % 16 == 0;
  if (!pieces_.empty() && !aligned) {
    std::string all;
    all.reserve(size_);
    for (auto piece : pieces_)
      all.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    blocks_.clear();
    blocks_.push_back(std::move(all));
    pieces_ = {as_bytes(blocks_.back())};
    std::vector<std::shared_ptr<const void>>().swap(owners_);  // the pieces are copied
  }
  return pieces_.empty() ? std::span<const std::byte>() : pieces_.front();
}

void ModelBuffer::drain_to(std::byte* out,
                           const std::function<void(size_t offset, size_t n)>& copied) {
  size_t offset = 0, block = 0;
  for (auto piece : pieces_) {
    std::memcpy(out + offset, piece.data(), piece.size());
    // A block of ours goes as soon as it is copied.
    if (block < blocks_.size() && piece.data() == as_bytes(blocks_[block]).data())
      std::string().swap(blocks_[block++]);
    copied(offset, piece.size());
    offset += piece.size();
  }
  clear();
}

std::string ModelBuffer::sha256() const {
  Sha256 hash;
  for (auto piece : pieces_) hash.update(piece);
  return hash.hex();
}

void ModelBuffer::clear() {
  blocks_.clear();
  blocks_.shrink_to_fit();
  pieces_.clear();
  pieces_.shrink_to_fit();
  std::vector<std::shared_ptr<const void>>().swap(owners_);
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
