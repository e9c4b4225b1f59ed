// ConvertStream: options, then model chunks in; diagnostics, then ONNX chunks
// out. A raw method: each ConvertChunk is read off the wire (its data where
// gRPC received it, the options' texts checked before they are parsed), and
// each answer chunk written around the ONNX bytes, not copied into a message.
#include <algorithm>

#include "common/translate.h"
#include "server/calls/option_texts.h"
#include "server/converter_service.h"
#include "server/grpc_call.h"

namespace lite2onnx::server {
namespace {

using Reactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;

constexpr size_t kOutChunkBytes = size_t{1} << 20;

// ConvertChunk's fields.
constexpr uint32_t kOptions = 1, kData = 2, kDiagnostics = 3, kTotalBytes = 4;

Failure bad_stream(std::string message) {
  return make_failure(reason_named("bad_stream"), std::move(message));
}

// The reactions of one call may run on several threads at once (a read's, a
// write's, a worker's, the watchdog's): `mu_` guards the Call and whether the
// call is finished. The watchdog is told nothing under `mu_` (its thread
// takes `mu_` in on_deadline() while it holds its own lock), so a write's
// deadline is set between two holds of `mu_`; meanwhile the call may finish
// and gRPC call OnDone(), and a `hold_` keeps the object alive until then.
class ConvertStreamCall final : public Reactor, public Watchdog::Watched {
 public:
  ConvertStreamCall(CallCore& core, grpc::CallbackServerContext* ctx)
      : core_(core),
        ctx_(ctx),
        call_(core, call_info(ctx, "ConvertStream")),
        headers_(ctx, call_.id()) {
    if (auto refused = call_.admit()) {
      finish(refused);
      return;
    }
    core_.watchdog().watch(this, call_.upload_deadline());
    StartRead(&in_);
  }

  void OnCancel() override { call_.stop().cancel(); }
  void OnDone() override {
    core_.watchdog().unwatch(this);
    {
      std::lock_guard lock(mu_);
      done_ = true;
      if (held_) return;  // start_write() deletes it
    }
    delete this;
  }

  void OnReadDone(bool ok) override {
    SteadyClock::time_point next;
    {
      std::unique_lock lock(mu_);
      if (finished_) return;
      if (!ok) {
        lock.unlock();
        return end_of_upload();
      }
      std::optional<Failure> problem = take_chunk();
      // gRPC's copy of the message goes now (its data is the model's, copied
      // and counted), not when the next message replaces it.
      in_.Clear();
      if (problem) {
        lock.unlock();
        return finish(problem);
      }
      next = call_.upload_deadline();
    }
    core_.watchdog().watch(this, next);
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(mu_);
    if (finished_) return;
    if (!ok) {
      call_.answer_dropped(sent_, "the client went away");
      lock.unlock();
      return finish(make_failure(reason_named("cancelled"), "the client went away"), false);
    }
    if (sent_ == onnx_.size()) {
      call_.answer_sent(sent_);
      lock.unlock();
      return finish(std::nullopt);
    }
    const std::optional<SteadyClock::time_point> next = next_chunk();
    if (!next) {
      // The client has part of the model: the call ends with an error status.
      call_.answer_dropped(sent_, "the answer could not be read");
      lock.unlock();
      return finish(make_failure(reason_named("internal"), "the answer could not be read"));
    }
    held_ = true;
    lock.unlock();
    start_write(*next);
  }

  // The upload or the answer missed its deadline (its minimum rate, its idle
  // or overall timeout): the call ends, and its budget is freed with it.
  void on_deadline() override {
    std::optional<Failure> failure;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      if (answering_) {
        call_.answer_dropped(
            sent_, "the client read it " + pace_.why(sent_) + " (--send-min-rate, --send-timeout)");
        ctx_->TryCancel();
        failure = make_failure(reason_named("cancelled"), "the answer was not read in time");
      } else {
        failure = call_.upload_late();
      }
    }
    finish(failure, false);
  }

 private:
  // One message of the upload, under `mu_`.
  std::optional<Failure> take_chunk() {
    std::vector<WireReader::Field> fields;
    WireReader reader;
    if (!reader.read(in_, &fields)) return bad_stream("a message is not a ConvertChunk");
    bool options = false, data = false;
    uint64_t total = 0;
    std::string options_bytes;
    for (const auto& f : fields) {
      if (f.number == kOptions && f.wire_type == 2) {
        options = true;
        options_bytes += f.joined();
      } else if (f.number == kData && f.wire_type == 2) {
        data = true;
      } else if (f.number == kDiagnostics) {
        return bad_stream("a client sends no diagnostics");
      } else if (f.number == kTotalBytes && f.wire_type == 0) {
        total = f.value;
      }
    }
    if (options && data) return bad_stream("a message carries either the options or data");
    if (!have_options_) {
      if (!options) return bad_stream("the first message of ConvertStream must carry the options");
      if (auto bad = check_option_texts(options_bytes)) return bad;
      v1::ConvertOptions wire;
      wire.ParseFromString(options_bytes);
      if (auto bad = call_.set_options(wire)) return bad;
      have_options_ = true;
      if (total > 0) return call_.announce(total);
      return std::nullopt;
    }
    if (!data) return bad_stream("after the options message, the client sends only data chunks");
    for (const auto& f : fields)
      if (f.number == kData && f.wire_type == 2)
        for (auto piece : f.bytes)
          if (auto refused = call_.receive(piece, Call::Keep::kCopy)) return refused;
    return std::nullopt;
  }

  // The client closed its side (or the call ended): convert what arrived.
  void end_of_upload() {
    core_.watchdog().unwatch(this);
    // A cancelled call may end its reads before OnCancel() runs.
    if (ctx_->IsCancelled()) call_.stop().cancel();
    std::optional<Failure> problem;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      if (call_.stop().stop_requested())
        problem = call_.stop().failure();
      else if (!have_options_)
        problem = bad_stream("the stream ended before the options");
      else
        problem = call_.upload_done();
    }
    if (problem) return finish(problem);
    call_.run([this](CallResult& r) { answer(r); });
  }

  // The conversion's answer: the diagnostics first, then the ONNX chunks.
  void answer(CallResult& r) {
    if (r.failure) return finish(r.failure);
    SteadyClock::time_point next;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      onnx_ = std::move(r.onnx);
      v1::ConvertChunk first;
      to_proto(r.diagnostics, first.mutable_diagnostics());
      first.set_total_bytes(onnx_.size());
      const std::string bytes = first.SerializeAsString();
      grpc::Slice slice(bytes);
      out_ = grpc::ByteBuffer(&slice, 1);
      answering_ = true;
      pace_ = call_.start_answer();
      next = pace_.deadline(bytes.size());
      headers_.send();
      held_ = true;
    }
    start_write(next);
  }

  // Under `mu_`: the next ONNX chunk into `out_`; returns its write's
  // deadline (nothing when a handed-over answer cannot be read). A chunk of a
  // handed-over answer is read from its memfd into a buffer of its own, freed
  // once gRPC has sent it: one write is in flight at a time, so a client that
  // reads slowly makes the call hold one chunk, never the model.
  std::optional<SteadyClock::time_point> next_chunk() {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kOutChunkBytes, onnx_.size() - sent_));
    grpc::Slice data;
    if (onnx_.file) {
      auto chunk = std::make_shared<std::string>();
      const std::optional<std::string_view> piece = onnx_.piece(sent_, n, *chunk);
      if (!piece) return std::nullopt;
      data = owned_slice(*piece, chunk);
    } else {
      data = owned_slice(onnx_.bytes.substr(sent_, n), onnx_.owner);
    }
    const grpc::Slice slices[] = {grpc::Slice(field_head(kData, n)), std::move(data)};
    out_ = grpc::ByteBuffer(slices, std::size(slices));
    sent_ += n;
    return pace_.deadline(sent_);
  }

  // Writes `out_` by `deadline`, with `held_` set (and `mu_` not held): the
  // deadline is set before the write starts, as the write may complete, and
  // the next one set its own deadline, as soon as it starts.
  void start_write(SteadyClock::time_point deadline) {
    core_.watchdog().watch(this, deadline);
    std::unique_lock lock(mu_);
    held_ = false;
    if (!finished_) return StartWrite(&out_);
    if (!done_) return;  // OnDone() will delete it
    lock.unlock();
    core_.watchdog().unwatch(this);  // the deadline just set
    delete this;
  }

  // Finishes the call (once); nothing may touch the call afterwards. From
  // on_deadline() (`unwatch` false) the watchdog has let go of it already.
  void finish(const std::optional<Failure>& failure, bool unwatch = true) {
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      finished_ = true;
      call_.finish(failure);
    }
    if (unwatch) core_.watchdog().unwatch(this);
    Finish(headers_.finish(failure));
  }

  CallCore& core_;
  grpc::CallbackServerContext* ctx_;
  std::mutex mu_;
  Call call_;
  CallHeaders headers_;
  grpc::ByteBuffer in_, out_;
  bool have_options_ = false;
  bool finished_ = false;
  bool done_ = false;  // OnDone() ran
  bool held_ = false;  // start_write() is running
  bool answering_ = false;
  Pace pace_;
  OnnxBytes onnx_;
  size_t sent_ = 0;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* start_convert_stream(
    CallCore& core, grpc::CallbackServerContext* ctx) {
  return new ConvertStreamCall(core, ctx);
}

}  // namespace lite2onnx::server
