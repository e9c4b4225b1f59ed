#include "server/converter_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <random>

#include "common/translate.h"

namespace lite2onnx::server {
namespace {

using Clock = std::chrono::steady_clock;

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

std::string random_prefix() {
  std::random_device rd;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", rd());
  return buf;
}

// A message of the wire, parsed as gRPC parses the generated methods' requests
// (the buffer's slices are shared, not copied, until the parse copies the model).
bool parse(const grpc::ByteBuffer& raw, google::protobuf::Message* message) {
  grpc::ByteBuffer shared(raw);
  grpc::ProtoBufferReader reader(&shared);
  return message->ParseFromZeroCopyStream(&reader);
}

// A serialized lite2onnx.v1.ConvertResponse whose onnx_model is `onnx` itself,
// not a copy. A message's wire form is the sequence of its fields, so field 1
// (its tag and length, then the ONNX bytes, owned by their slice) followed by
// a ConvertResponse holding only field 2 (the diagnostics) is one
// ConvertResponse.
grpc::ByteBuffer convert_response(std::string onnx, const Diagnostics& diagnostics) {
  using google::protobuf::internal::WireFormatLite;
  std::string head;
  {
    google::protobuf::io::StringOutputStream stream(&head);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(WireFormatLite::MakeTag(v1::ConvertResponse::kOnnxModelFieldNumber,
                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint64(onnx.size());
  }
  v1::ConvertResponse rest;
  to_proto(diagnostics, rest.mutable_diagnostics());
  auto* owned = new std::string(std::move(onnx));
  const grpc::Slice slices[] = {grpc::Slice(head),
                                grpc::Slice(
                                    owned->data(), owned->size(),
                                    [](void* s) { delete static_cast<std::string*>(s); }, owned),
                                grpc::Slice(rest.SerializeAsString())};
  return grpc::ByteBuffer(slices, std::size(slices));
}

// A unary call whose work runs on the worker pool: admitted by size, memory
// budget and queue room, then run() on a worker unless the call already stopped.
class PooledCall : public grpc::ServerUnaryReactor {
 public:
  PooledCall(CallEnvironment& env, grpc::CallbackServerContext* ctx, std::string_view method)
      : env_(env), trace_(env, ctx, method), stop_(ctx->deadline()) {}
  void OnCancel() override { stop_.cancel(); }
  void OnDone() override { delete this; }

 protected:
  // The call's work, on a worker thread; returns its status.
  virtual grpc::Status run() = 0;

  // Finishes the call; nothing may touch the call afterwards.
  void finish(grpc::Status status) {
    CallRecord record = trace_.complete(status);
    Finish(std::move(status));
    record.write();
  }

  // Admits a model of `bytes` and queues run(), or finishes with the refusal.
  void admit(uint64_t bytes) {
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
    queued_at_ = Clock::now();
    if (!env_.pool.try_submit([this] { work(); })) {
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

 private:
  void work() {
    trace_.dequeued(queued_at_);
    grpc::Status status;
    try {
      status = stop_.stop_requested() ? to_status(stop_.failure()) : run();
    } catch (const std::exception& e) {
      status = to_status(failure(v1::ConversionError::REASON_INTERNAL, e.what()));
    }
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
    if (!parse(*raw_request_, &request_))
      return finish(to_status(failure(v1::ConversionError::REASON_INVALID_MODEL,
                                      "the request is not a lite2onnx.v1.ConvertRequest")));
    trace_.model_bytes = request_.model().size();
    trace_.options = summary(request_.options());
    auto options = to_core(request_.options());
    if (!options) return finish(to_status(from_core(options.error(), false)));
    options_ = std::move(*options);
    admit(request_.model().size());
  }

 private:
  grpc::Status run() override {
    options_.cancelled = [this] { return stop_.stop_requested(); };
    Diagnostics diagnostics;
    auto onnx = lite2onnx::convert(as_bytes(request_.model()), options_, diagnostics);
    std::string().swap(*request_.mutable_model());  // free the model before answering
    const std::string_view outcome = outcome_name(onnx);
    grpc::Status status = grpc::Status::OK;
    if (!onnx) {
      status = to_status(from_core(onnx.error(), stop_.deadline_passed()));
    } else if (stop_.stop_requested()) {
      status = to_status(stop_.failure());
    } else {
      trace_.onnx_bytes = onnx->size();
      *response_ = convert_response(std::move(onnx).value(), diagnostics);
    }
    trace_.conversion_ran(std::move(diagnostics), outcome);
    return status;
  }

  const grpc::ByteBuffer* raw_request_;
  grpc::ByteBuffer* response_;
  v1::ConvertRequest request_;
  ConvertOptions options_;
};

class InspectCall final : public PooledCall {
 public:
  InspectCall(CallEnvironment& env, grpc::CallbackServerContext* ctx,
              const v1::InspectRequest* request, v1::InspectResponse* response)
      : PooledCall(env, ctx, "Inspect"), request_(request), response_(response) {}

  void start() {
    if (!refuse_if_draining()) admit(request_->model().size());
  }

 private:
  grpc::Status run() override {
    auto info = lite2onnx::inspect(as_bytes(request_->model()));
    if (!info) return to_status(from_core(info.error(), false));
    to_proto(*info, response_);
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
  void finish(grpc::Status status) {
    CallRecord record = trace_.complete(status);
    Finish(std::move(status));
    record.write();
  }

 private:
  CallTrace trace_;
};

}  // namespace

std::set<std::string> builtin_operator_names() {
  std::set<std::string> names;
  for (const auto& s : support_matrix()) names.insert(s.op);
  return names;
}

ConverterService::ConverterService(ServiceLimits limits, WorkerPool& pool, MemoryBudget& budget,
                                   Metrics& metrics, const Logger& log)
    : env_(limits, pool, budget, metrics, log, random_prefix()),
      operators_(to_proto(support_matrix())) {}

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
