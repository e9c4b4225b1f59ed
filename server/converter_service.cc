#include "server/converter_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <random>

#include "common/translate.h"
#include "server/conversion_runner.h"

namespace lite2onnx::server {
namespace {

using Clock = std::chrono::steady_clock;

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// Reads a lite2onnx.v1.ConvertRequest from the wire without a parse into a
// message: the options (field 2) are parsed, the model (field 1) is found in
// place and copied once, straight to where its conversion reads it (a memfd,
// with --isolation process). The buffer's slices are shared, not copied.
class ConvertRequestReader {
 public:
  // False: not a ConvertRequest.
  bool read(const grpc::ByteBuffer& raw, v1::ConvertOptions* options) {
    if (!raw.Dump(&slices_).ok()) return false;
    bool have_model = false;
    while (!at_end()) {
      uint64_t tag = 0, length = 0;
      if (!varint(&tag)) return false;
      const uint64_t field = tag >> 3, wire_type = tag & 7;
      if (wire_type == 0) {
        if (!varint(&length)) return false;  // an unknown varint field
      } else if (wire_type == 1 || wire_type == 5) {
        if (!skip(wire_type == 1 ? 8 : 4, nullptr)) return false;
      } else if (wire_type == 2) {
        if (!varint(&length)) return false;
        if (field == 1) {  // the model: found, copied later (last one wins, as in protobuf)
          model_slice_ = slice_;
          model_offset_ = offset_;
          model_bytes_ = length;
          have_model = true;
          if (!skip(length, nullptr)) return false;
        } else if (field == 2) {  // the options: merged, as protobuf merges repeated messages
          std::string bytes;
          if (!skip(length, &bytes) || !options->MergeFromString(bytes)) return false;
        } else if (!skip(length, nullptr)) {
          return false;
        }
      } else {
        return false;  // groups: not in this message
      }
    }
    if (!have_model) model_bytes_ = 0;
    return true;
  }

  uint64_t model_bytes() const { return model_bytes_; }

  // Gives `model` the model's bytes where they are, in the request's slices
  // (which this reader keeps alive).
  void refer_model(ModelBuffer& model) {
    slice_ = model_slice_;
    offset_ = model_offset_;
    for (uint64_t left = model_bytes_; left > 0;) {
      const grpc::Slice& s = slices_[slice_];
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, s.size() - offset_));
      model.refer(std::as_bytes(std::span(s.begin() + offset_, n)));
      left -= n;
      offset_ += n;
      next_slice();
    }
  }

 private:
  bool at_end() {
    next_slice();
    return slice_ >= slices_.size();
  }
  void next_slice() {
    while (slice_ < slices_.size() && offset_ >= slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
    }
  }
  bool varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_end()) return false;
      const uint8_t b = slices_[slice_].begin()[offset_++];
      *value |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  // Moves past `n` bytes, appending them to `out` if given.
  bool skip(uint64_t n, std::string* out) {
    while (n > 0) {
      if (at_end()) return false;
      const grpc::Slice& s = slices_[slice_];
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, s.size() - offset_));
      if (out) out->append(reinterpret_cast<const char*>(s.begin()) + offset_, k);
      offset_ += k;
      n -= k;
    }
    return true;
  }

  std::vector<grpc::Slice> slices_;
  size_t slice_ = 0, offset_ = 0;
  size_t model_slice_ = 0, model_offset_ = 0;
  uint64_t model_bytes_ = 0;
};

// A serialized lite2onnx.v1.ConvertResponse whose onnx_model is `onnx` itself,
// not a copy. A message's wire form is the sequence of its fields, so field 1
// (its tag and length, then the ONNX bytes, in a slice that keeps their owner
// alive: the core's string, or the mapping of a worker's answer) followed by
// a ConvertResponse holding only field 2 (the diagnostics) is one ConvertResponse.
grpc::ByteBuffer convert_response(const OnnxBytes& onnx, const Diagnostics& diagnostics) {
  using google::protobuf::internal::WireFormatLite;
  std::string head;
  {
    google::protobuf::io::StringOutputStream stream(&head);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(WireFormatLite::MakeTag(v1::ConvertResponse::kOnnxModelFieldNumber,
                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint64(onnx.bytes.size());
  }
  v1::ConvertResponse rest;
  to_proto(diagnostics, rest.mutable_diagnostics());
  auto* owner = new std::shared_ptr<const void>(onnx.owner);
  const grpc::Slice slices[] = {
      grpc::Slice(head),
      grpc::Slice(
          const_cast<char*>(onnx.bytes.data()), onnx.bytes.size(),
          [](void* o) { delete static_cast<std::shared_ptr<const void>*>(o); }, owner),
      grpc::Slice(rest.SerializeAsString())};
  return grpc::ByteBuffer(slices, std::size(slices));
}

TestFault test_fault(const CallEnvironment& env, grpc::CallbackServerContext* ctx) {
  const auto& md = ctx->client_metadata();
  auto it = md.find("x-lite2onnx-test-fault");
  if (it == md.end()) return {};
  return test_fault(env, std::string_view(it->second.data(), it->second.size()));
}

// A unary call whose work runs on the worker pool: admitted by size, memory
// budget and queue room, then run() on a worker unless the call already stopped.
class PooledCall : public grpc::ServerUnaryReactor {
 public:
  PooledCall(CallEnvironment& env, grpc::CallbackServerContext* ctx, std::string_view method)
      : env_(env), trace_(env, ctx, method), stop_(ctx->deadline()), fault_(test_fault(env, ctx)) {}
  void OnCancel() override { stop_.cancel(); }
  void OnDone() override { delete this; }

 protected:
  // The call's work, on a worker thread with its runner; returns its status.
  virtual grpc::Status run(ConversionRunner& runner) = 0;
  // The status of a call answered without the pool once its model is in
  // model_ (a cache hit); nothing: the call is queued.
  virtual std::optional<grpc::Status> answer_at_once() { return std::nullopt; }

  // Finishes the call; nothing may touch the call afterwards.
  void finish(grpc::Status status) { finish_call(*this, trace_, std::move(status)); }

  // Admits a model of `bytes`: its size, the memory budget; then `fill`
  // gives it to model_ and run() is queued. Or finishes with the refusal.
  template <class Fill>
  void admit(uint64_t bytes, Fill fill) {
    trace_.model_bytes = bytes;
    if (bytes > env_.limits.max_unary_bytes)
      return finish(to_status(failure(v1::ConversionError::REASON_MODEL_TOO_LARGE,
                                      "the model has " + std::to_string(bytes) +
                                          " bytes, more than this server's " +
                                          std::to_string(env_.limits.max_unary_bytes) +
                                          " for one message; use ConvertStream")));
    auto reservation = env_.budget.try_reserve(bytes);
    if (!reservation) return finish(shed(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    reservation_ = std::move(*reservation);
    fill(model_);
    if (auto status = answer_at_once()) {
      model_.clear();
      reservation_.release();
      return finish(std::move(*status));
    }
    queued_at_ = Clock::now();
    if (!env_.pool.try_submit([this](ConversionRunner& runner) { work(runner); })) {
      model_.clear();
      reservation_.release();
      finish(shed(env_, v1::ConversionError::REASON_QUEUE_FULL));
    }
  }

  // Whether the call may start at all.
  bool refuse_if_draining() {
    if (!env_.draining.load()) return false;
    finish(shed(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
    return true;
  }

  CallEnvironment& env_;
  CallTrace trace_;
  StopSignal stop_;
  TestFault fault_;
  ModelBuffer model_;

 private:
  void work(ConversionRunner& runner) {
    trace_.dequeued(queued_at_);
    grpc::Status status;
    try {
      status = stop_.stop_requested() ? to_status(stop_.failure()) : run(runner);
    } catch (const std::exception& e) {
      status = to_status(failure(v1::ConversionError::REASON_INTERNAL, e.what()));
    }
    model_.clear();
    reservation_.release();
    finish(std::move(status));
  }

  MemoryBudget::Reservation reservation_;
  Clock::time_point queued_at_;
};

class ConvertCall final : public PooledCall {
 public:
  ConvertCall(CallEnvironment& env, grpc::CallbackServerContext* ctx,
              const grpc::ByteBuffer* request, grpc::ByteBuffer* response)
      : PooledCall(env, ctx, "Convert"), raw_request_(request), response_(response) {}

  void start() {
    if (refuse_if_draining()) return;
    if (!reader_.read(*raw_request_, &wire_options_))
      return finish(to_status(failure(v1::ConversionError::REASON_INVALID_MODEL,
                                      "the request is not a lite2onnx.v1.ConvertRequest")));
    trace_.model_bytes = reader_.model_bytes();
    trace_.options = summary(wire_options_);
    auto options = to_core(wire_options_);
    if (!options) return finish(to_status(from_core(options.error(), false)));
    options_ = std::move(*options);
    admit(reader_.model_bytes(), [this](ModelBuffer& model) { reader_.refer_model(model); });
  }

 private:
  std::optional<grpc::Status> answer_at_once() override {
    // A test fault asks for a worker: no cache.
    if (fault_.fault != worker::Fault::kNone) return std::nullopt;
    key_ = env_.cache.key(model_, options_);
    if (!key_) return std::nullopt;
    auto hit = env_.cache.find(*key_);
    if (!hit) return std::nullopt;
    trace_.onnx_bytes = hit->onnx.bytes.size();
    *response_ = convert_response(hit->onnx, hit->diagnostics);
    return grpc::Status::OK;
  }

  grpc::Status run(ConversionRunner& runner) override {
    ConvertJob job{model_, wire_options_, options_, stop_, fault_, trace_.id()};
    ConvertOutcome out = env_.cache.convert(runner, job, key_ ? &*key_ : nullptr);
    grpc::Status status = grpc::Status::OK;
    if (out.failure) {
      status = to_status(*out.failure);
    } else {
      trace_.onnx_bytes = out.onnx.bytes.size();
      *response_ = convert_response(out.onnx, out.diagnostics);
    }
    if (out.ran) trace_.conversion_ran(std::move(out.diagnostics), out.outcome, out.cpu_seconds);
    return status;
  }

  const grpc::ByteBuffer* raw_request_;
  grpc::ByteBuffer* response_;
  ConvertRequestReader reader_;
  v1::ConvertOptions wire_options_;
  ConvertOptions options_;
  std::optional<CacheKey> key_;
};

class InspectCall final : public PooledCall {
 public:
  InspectCall(CallEnvironment& env, grpc::CallbackServerContext* ctx,
              const v1::InspectRequest* request, v1::InspectResponse* response)
      : PooledCall(env, ctx, "Inspect"), request_(request), response_(response) {}

  void start() {
    if (refuse_if_draining()) return;
    admit(request_->model().size(),
          [this](ModelBuffer& model) { model.refer(as_bytes(request_->model())); });
  }

 private:
  grpc::Status run(ConversionRunner& runner) override {
    InspectOutcome out = runner.inspect(model_, stop_, fault_, trace_.id());
    if (out.failure) return to_status(*out.failure);
    response_->Swap(&out.response);
    return grpc::Status::OK;
  }

  const v1::InspectRequest* request_;
  v1::InspectResponse* response_;
};

// A call answered at once on the gRPC thread.
class ImmediateCall final : public grpc::ServerUnaryReactor {
 public:
  ImmediateCall(CallEnvironment& env, grpc::CallbackServerContext* ctx, std::string_view method)
      : trace_(env, ctx, method) {}
  void OnDone() override { delete this; }
  void finish(grpc::Status status) { finish_call(*this, trace_, std::move(status)); }

 private:
  CallTrace trace_;
};

}  // namespace

std::set<std::string> builtin_operator_names() {
  std::set<std::string> names;
  for (const auto& s : support_matrix()) names.insert(s.op);
  return names;
}

std::string random_request_id_prefix() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", rd());
  return buf;
}

ConverterService::ConverterService(CallEnvironment& env)
    : env_(env), operators_(to_proto(support_matrix())) {}

grpc::ServerUnaryReactor* ConverterService::Convert(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request,
                                                    grpc::ByteBuffer* response) {
  auto* call = new ConvertCall(env_, ctx, request, response);
  call->start();
  return call;
}

grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>* ConverterService::ConvertStream(
    grpc::CallbackServerContext* ctx) {
  return start_convert_stream(env_, ctx);
}

grpc::ServerUnaryReactor* ConverterService::Inspect(grpc::CallbackServerContext* ctx,
                                                    const v1::InspectRequest* request,
                                                    v1::InspectResponse* response) {
  auto* call = new InspectCall(env_, ctx, request, response);
  call->start();
  return call;
}

grpc::ServerUnaryReactor* ConverterService::ListOperators(grpc::CallbackServerContext* ctx,
                                                          const v1::ListOperatorsRequest*,
                                                          v1::ListOperatorsResponse* response) {
  auto* call = new ImmediateCall(env_, ctx, "ListOperators");
  if (env_.draining.load()) {
    call->finish(shed(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
  } else {
    *response = operators_;
    call->finish(grpc::Status::OK);
  }
  return call;
}

}  // namespace lite2onnx::server
