// ConvertStream: options, then model chunks in; diagnostics, then ONNX chunks out.
#include <grpcpp/server_context.h>

#include <algorithm>

#include "common/translate.h"
#include "server/conversion_runner.h"
#include "server/converter_service.h"

namespace lite2onnx::server {
namespace {

using Clock = std::chrono::steady_clock;
using Reactor = grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>;

constexpr size_t kOutChunkBytes = size_t{1} << 20;

// The reactions of one call may run on several threads at once (a read's,
// the idle watcher's, a worker's): `mu_` guards whether the call is finished,
// and what the upload writes.
class ConvertStreamCall final : public Reactor, public IdleWatcher::Watched {
 public:
  ConvertStreamCall(CallEnvironment& env, grpc::CallbackServerContext* ctx)
      : env_(env), ctx_(ctx), trace_(env, ctx, "ConvertStream"), stop_(ctx->deadline()) {
    if (env_.draining.load()) {
      finish(shed(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
      return;
    }
    env_.idle.watch(this);
    StartRead(&in_);
  }

  void OnCancel() override { stop_.cancel(); }
  void OnDone() override { delete this; }

  void OnReadDone(bool ok) override {
    if (!ok) return end_of_upload();
    if (!have_options_) return take_options();
    if (in_.content_case() != v1::ConvertChunk::kData)
      return fail(v1::ConversionError::REASON_BAD_STREAM,
                  "after the options message, the client sends only data chunks");
    const std::string& chunk = in_.data();
    {
      std::unique_lock lock(mu_);
      if (finished_) return;
      const uint64_t need = model_.size() + chunk.size();
      if (need > env_.limits.max_stream_bytes) {
        lock.unlock();
        return too_large();
      }
      if (declared_bytes_ > 0 && need > declared_bytes_) {
        lock.unlock();
        return fail(v1::ConversionError::REASON_BAD_STREAM,
                    "the data chunks exceed the announced total_bytes");
      }
      if (need > reservation_.bytes() && !reservation_.grow(need - reservation_.bytes())) {
        lock.unlock();
        return finish(shed(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
      }
      model_.append(std::as_bytes(std::span(chunk.data(), chunk.size())));
      trace_.model_bytes = model_.size();
    }
    env_.idle.watch(this);
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok)
      return finish(
          to_status(failure(v1::ConversionError::REASON_CANCELLED, "the client went away")));
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    if (sent_ == onnx_.bytes.size()) return finish(grpc::Status::OK);
    write_next_chunk();
  }

  // Nothing arrived for --stream-idle-timeout: end the call, so that its
  // memory budget is freed (with the call, once gRPC is done with it).
  void on_idle() override {
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      finished_ = true;
    }
    const grpc::Status status =
        to_status(failure(v1::ConversionError::REASON_BAD_STREAM,
                          "nothing arrived for " + std::to_string(env_.limits.stream_idle_seconds) +
                              " s (--stream-idle-timeout); the stream was ended"));
    finish_call(*this, trace_, status);
  }

 private:
  // The first message: options, and maybe the model's size.
  void take_options() {
    if (in_.content_case() != v1::ConvertChunk::kOptions)
      return fail(v1::ConversionError::REASON_BAD_STREAM,
                  "the first message of ConvertStream must carry the options");
    trace_.options = summary(in_.options());
    auto options = to_core(in_.options());
    if (!options) return finish(to_status(from_core(options.error(), false)));
    options_ = std::move(*options);
    wire_options_ = in_.options();
    declared_bytes_ = in_.total_bytes();
    if (declared_bytes_ > env_.limits.max_stream_bytes) {
      trace_.model_bytes = declared_bytes_;
      return too_large();
    }
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      auto reservation = env_.budget.try_reserve(declared_bytes_);
      if (reservation) {
        reservation_ = std::move(*reservation);
        model_.reserve(declared_bytes_);
      }
    }
    if (!reservation_.bytes() && declared_bytes_ > 0)
      return finish(shed(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    have_options_ = true;
    env_.idle.watch(this);
    StartRead(&in_);
  }

  // The client closed its side (or the call ended): convert what arrived.
  void end_of_upload() {
    env_.idle.unwatch(this);
    // A cancelled call may end its reads before OnCancel() runs.
    if (ctx_->IsCancelled()) stop_.cancel();
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    if (!have_options_)
      return fail(v1::ConversionError::REASON_BAD_STREAM, "the stream ended before the options");
    if (declared_bytes_ > 0 && model_.size() != declared_bytes_)
      return fail(v1::ConversionError::REASON_BAD_STREAM,
                  "the stream carried " + std::to_string(model_.size()) +
                      " model bytes, not the announced " + std::to_string(declared_bytes_));
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
    }
    key_ = env_.cache.key(model_, options_);
    if (key_)
      if (auto hit = env_.cache.find(*key_)) {
        model_.clear();
        reservation_.release();
        return answer(std::move(*hit));
      }
    queued_at_ = Clock::now();
    if (!env_.pool.try_submit([this](ConversionRunner& runner) { convert(runner); }))
      finish(shed(env_, v1::ConversionError::REASON_QUEUE_FULL));
  }

  // On a worker: convert, then start sending.
  void convert(ConversionRunner& runner) {
    trace_.dequeued(queued_at_);
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    ConvertJob job{model_, wire_options_, options_, stop_, {}, trace_.id()};
    ConvertOutcome out;
    try {
      out = env_.cache.convert(runner, job, key_ ? &*key_ : nullptr);
    } catch (const std::exception& e) {
      out.failure = failure(v1::ConversionError::REASON_INTERNAL, e.what());
    }
    if (out.ran) trace_.conversion_ran(out.diagnostics, out.outcome, out.cpu_seconds);
    model_.clear();
    reservation_.release();
    answer(std::move(out));
  }

  // Starts sending a conversion's answer (or finishes with its failure).
  void answer(ConvertOutcome out) {
    if (out.failure) return finish(to_status(*out.failure));
    onnx_ = std::move(out.onnx);
    trace_.onnx_bytes = onnx_.bytes.size();
    out_.Clear();
    to_proto(out.diagnostics, out_.mutable_diagnostics());
    out_.set_total_bytes(onnx_.bytes.size());
    trace_.send_headers();
    StartWrite(&out_);
  }

  void write_next_chunk() {
    const size_t n = std::min(kOutChunkBytes, onnx_.bytes.size() - sent_);
    out_.Clear();
    out_.set_data(onnx_.bytes.data() + sent_, n);
    sent_ += n;
    StartWrite(&out_);
  }

  void too_large() {
    fail(v1::ConversionError::REASON_MODEL_TOO_LARGE,
         "the model is larger than this server's " + std::to_string(env_.limits.max_stream_bytes) +
             " bytes for ConvertStream");
  }
  void fail(Reason reason, std::string message) {
    finish(to_status(failure(reason, std::move(message))));
  }
  // Finishes the call (once); nothing may touch the call afterwards.
  void finish(grpc::Status status) {
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      finished_ = true;
    }
    env_.idle.unwatch(this);
    reservation_.release();
    finish_call(*this, trace_, std::move(status));
  }

  CallEnvironment& env_;
  grpc::CallbackServerContext* ctx_;
  CallTrace trace_;
  StopSignal stop_;
  v1::ConvertChunk in_, out_;
  bool have_options_ = false;
  uint64_t declared_bytes_ = 0;
  v1::ConvertOptions wire_options_;
  ConvertOptions options_;
  std::mutex mu_;
  bool finished_ = false;
  ModelBuffer model_;
  MemoryBudget::Reservation reservation_;
  Clock::time_point queued_at_;
  std::optional<CacheKey> key_;
  OnnxBytes onnx_;
  size_t sent_ = 0;
};

}  // namespace

grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>* start_convert_stream(
    CallEnvironment& env, grpc::CallbackServerContext* ctx) {
  return new ConvertStreamCall(env, ctx);
}

}  // namespace lite2onnx::server
