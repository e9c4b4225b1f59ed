// ConvertStream: options, then model chunks in; diagnostics, then ONNX chunks out.
#include <grpcpp/server_context.h>

#include <algorithm>

#include "server/converter_service.h"
#include "common/translate.h"

namespace lite2onnx::server {
namespace {

using Clock = std::chrono::steady_clock;
using Reactor = grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>;

constexpr size_t kOutChunkBytes = size_t{1} << 20;

class ConvertStreamCall final : public Reactor {
 public:
  ConvertStreamCall(CallEnvironment& env, grpc::CallbackServerContext* ctx)
      : env_(env), ctx_(ctx), trace_(env, ctx, "ConvertStream"), stop_(ctx->deadline()) {
    if (env_.draining.load()) {
      finish(shed(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
      return;
    }
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
    if (model_.size() + chunk.size() > env_.limits.max_stream_bytes) return too_large();
    if (declared_bytes_ > 0 && model_.size() + chunk.size() > declared_bytes_)
      return fail(v1::ConversionError::REASON_BAD_STREAM,
                  "the data chunks exceed the announced total_bytes");
    const uint64_t need = model_.size() + chunk.size();
    if (need > reservation_.bytes() && !reservation_.grow(need - reservation_.bytes()))
      return finish(shed(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    model_.append(chunk);
    trace_.model_bytes = model_.size();
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok)
      return finish(
          to_status(failure(v1::ConversionError::REASON_CANCELLED, "the client went away")));
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    if (sent_ == onnx_.size()) return finish(grpc::Status::OK);
    write_next_chunk();
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
    declared_bytes_ = in_.total_bytes();
    if (declared_bytes_ > env_.limits.max_stream_bytes) {
      trace_.model_bytes = declared_bytes_;
      return too_large();
    }
    auto reservation = env_.budget.try_reserve(declared_bytes_);
    if (!reservation) return finish(shed(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    reservation_ = std::move(*reservation);
    model_.reserve(declared_bytes_);
    have_options_ = true;
    StartRead(&in_);
  }

  // The client closed its side (or the call ended): convert what arrived.
  void end_of_upload() {
    // A cancelled call may end its reads before OnCancel() runs.
    if (ctx_->IsCancelled()) stop_.cancel();
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    if (!have_options_)
      return fail(v1::ConversionError::REASON_BAD_STREAM, "the stream ended before the options");
    if (declared_bytes_ > 0 && model_.size() != declared_bytes_)
      return fail(v1::ConversionError::REASON_BAD_STREAM,
                  "the stream carried " + std::to_string(model_.size()) +
                      " model bytes, not the announced " + std::to_string(declared_bytes_));
    queued_at_ = Clock::now();
    if (!env_.pool.try_submit([this] { convert(); })) {
      reservation_.release();
      finish(shed(env_, v1::ConversionError::REASON_QUEUE_FULL));
    }
  }

  // On a worker: convert, then start sending.
  void convert() {
    trace_.dequeued(queued_at_);
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    options_.cancelled = [this] { return stop_.stop_requested(); };
    Diagnostics diagnostics;
    Result<std::string> onnx = Error{};
    try {
      onnx = lite2onnx::convert(std::as_bytes(std::span<const char>(model_.data(), model_.size())),
                                options_, diagnostics);
    } catch (const std::exception& e) {
      onnx = make_error(ErrorCode::kInternal, e.what());
    }
    trace_.conversion_ran(diagnostics, outcome_name(onnx));
    model_ = std::string();
    reservation_.release();
    if (!onnx) return finish(to_status(from_core(onnx.error(), stop_.deadline_passed())));
    if (stop_.stop_requested()) return finish(to_status(stop_.failure()));
    onnx_ = std::move(onnx).value();
    trace_.onnx_bytes = onnx_.size();
    out_.Clear();
    to_proto(diagnostics, out_.mutable_diagnostics());
    out_.set_total_bytes(onnx_.size());
    StartWrite(&out_);
  }

  void write_next_chunk() {
    const size_t n = std::min(kOutChunkBytes, onnx_.size() - sent_);
    out_.Clear();
    out_.set_data(onnx_.substr(sent_, n));
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
  // Finishes the call; nothing may touch the call afterwards.
  void finish(grpc::Status status) {
    reservation_.release();
    CallRecord record = trace_.complete(status);
    Finish(std::move(status));
    record.write();
  }

  CallEnvironment& env_;
  grpc::CallbackServerContext* ctx_;
  CallTrace trace_;
  StopSignal stop_;
  v1::ConvertChunk in_, out_;
  bool have_options_ = false;
  uint64_t declared_bytes_ = 0;
  ConvertOptions options_;
  std::string model_;
  MemoryBudget::Reservation reservation_;
  Clock::time_point queued_at_;
  std::string onnx_;
  size_t sent_ = 0;
};

}  // namespace

grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>* start_convert_stream(
    CallEnvironment& env, grpc::CallbackServerContext* ctx) {
  return new ConvertStreamCall(env, ctx);
}

}  // namespace lite2onnx::server
