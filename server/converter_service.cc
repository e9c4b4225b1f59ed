#include "server/converter_service.h"

#include <random>

#include "common/translate.h"
#include "server/calls/option_texts.h"
#include "server/grpc_call.h"

namespace lite2onnx::server {
namespace {

// A serialized lite2onnx.v1.ConvertResponse whose onnx_model is `onnx` itself,
// not a copy. A message's wire form is the sequence of its fields, so field 1
// (its tag and length, then the ONNX bytes, in a slice that keeps their owner
// alive: the core's string, or the copy of a worker's answer) followed by a
// ConvertResponse holding only field 2 (the diagnostics) is one ConvertResponse.
grpc::ByteBuffer convert_response(const OnnxBytes& onnx, const Diagnostics& diagnostics) {
  v1::ConvertResponse rest;
  to_proto(diagnostics, rest.mutable_diagnostics());
  const grpc::Slice slices[] = {
      grpc::Slice(field_head(v1::ConvertResponse::kOnnxModelFieldNumber, onnx.bytes.size())),
      owned_slice(onnx.bytes, onnx.owner), grpc::Slice(rest.SerializeAsString())};
  return grpc::ByteBuffer(slices, std::size(slices));
}

// Reads a unary request's fields where gRPC received them; the request's
// buffer lets go of its slices, which `slices` owns from then on: the call
// core frees them once the model is in its conversion (a worker's memfd), not
// when the answer has been sent. (gRPC owns the request, declared const, but
// never reads it again: it only destroys it after the call.)
bool read_request(const grpc::ByteBuffer* request, std::vector<WireReader::Field>* fields,
                  std::shared_ptr<const void>* slices) {
  WireReader reader;
  if (!reader.read(*request, fields)) return false;
  const_cast<grpc::ByteBuffer*>(request)->Clear();
  *slices = reader.take_slices();
  return true;
}

// A unary call: the call core's Call, and the answer's send deadline, after
// which the call is cancelled (its answer dropped) and its budget freed.
class UnaryCall : public grpc::ServerUnaryReactor, public Watchdog::Watched {
 public:
  UnaryCall(CallCore& core, grpc::CallbackServerContext* ctx, std::string_view method)
      : core_(core), ctx_(ctx), call_(core, call_info(ctx, method)), headers_(ctx, call_.id()) {}

  void OnCancel() override { call_.stop().cancel(); }
  // The answer left (or the call was cancelled): the Call writes its record.
  void OnDone() override {
    core_.watchdog().unwatch(this);
    if (dropped_)
      call_.answer_dropped(0, why_dropped_);
    else
      call_.answer_sent(answer_bytes_);
    delete this;
  }
  void on_deadline() override {
    dropped_ = true;
    ctx_->TryCancel();
  }

 protected:
  // Finishes the call; an answer of `bytes` must be read by its send deadline.
  void finish(const std::optional<Failure>& failure, uint64_t bytes = 0) {
    call_.finish(failure);
    answer_bytes_ = bytes;
    const Pace pace = call_.start_answer();
    why_dropped_ = "the client read it " + pace.why(bytes) + " (--send-min-rate, --send-timeout)";
    core_.watchdog().watch(this, pace.deadline(bytes));
    Finish(headers_.finish(failure));
  }

  CallCore& core_;
  grpc::CallbackServerContext* ctx_;
  Call call_;
  CallHeaders headers_;

 private:
  uint64_t answer_bytes_ = 0;
  std::atomic<bool> dropped_{false};
  std::string why_dropped_;
};

class ConvertCall final : public UnaryCall {
 public:
  ConvertCall(CallCore& core, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
              grpc::ByteBuffer* response)
      : UnaryCall(core, ctx, "Convert"), request_(request), response_(response) {}

  void start() {
    if (auto refused = call_.admit()) return finish(refused);
    std::vector<WireReader::Field> fields;
    std::shared_ptr<const void> slices;
    if (!read_request(request_, &fields, &slices))
      return finish(make_failure(reason_named("invalid_model"),
                                 "the request is not a lite2onnx.v1.ConvertRequest"));
    // Repeated occurrences merge, as protobuf merges them: the last model,
    // the options' fields together.
    std::string options;
    const WireReader::Field* model = nullptr;
    for (const auto& f : fields) {
      if (f.number == 1 && f.wire_type == 2) model = &f;
      if (f.number == 2 && f.wire_type == 2) options += f.joined();
    }
    if (auto bad = check_option_texts(options)) return finish(bad);
    v1::ConvertOptions wire;
    wire.ParseFromString(options);
    if (auto bad = call_.set_options(wire)) return finish(bad);
    if (model)
      for (auto piece : model->bytes)
        if (auto refused = call_.receive(piece, Call::Keep::kRefer, slices)) return finish(refused);
    call_.run([this](CallResult& r) {
      if (r.failure) return finish(r.failure);
      // One message: a large answer a worker handed over is read whole here
      // (the budget holds its bytes already), and its memfd let go of.
      const std::optional<OnnxBytes> onnx = r.onnx.in_memory();
      r.onnx = {};
      if (!onnx)
        return finish(make_failure(reason_named("internal"), "the answer could not be read"));
      *response_ = convert_response(*onnx, r.diagnostics);
      finish(std::nullopt, onnx->bytes.size());
    });
  }

 private:
  const grpc::ByteBuffer* request_;
  grpc::ByteBuffer* response_;
};

class InspectCall final : public UnaryCall {
 public:
  InspectCall(CallCore& core, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
              grpc::ByteBuffer* response)
      : UnaryCall(core, ctx, "Inspect"), request_(request), response_(response) {}

  void start() {
    if (auto refused = call_.admit()) return finish(refused);
    std::vector<WireReader::Field> fields;
    std::shared_ptr<const void> slices;
    if (!read_request(request_, &fields, &slices))
      return finish(make_failure(reason_named("invalid_model"),
                                 "the request is not a lite2onnx.v1.InspectRequest"));
    const WireReader::Field* model = nullptr;  // the last, as protobuf merges them
    for (const auto& f : fields)
      if (f.number == 1 && f.wire_type == 2) model = &f;
    if (model)
      for (auto piece : model->bytes)
        if (auto refused = call_.receive(piece, Call::Keep::kRefer, slices)) return finish(refused);
    call_.run([this](CallResult& r) {
      if (r.failure) return finish(r.failure);
      // The message serialized beside it (held first), then the message freed.
      const uint64_t bytes = r.inspection.ByteSizeLong();
      if (auto refused = call_.resize_answer(2 * bytes)) {
        v1::InspectResponse().Swap(&r.inspection);
        call_.resize_answer(0);  // a short error is all it sends
        return finish(refused);
      }
      auto serialized = std::make_shared<std::string>(r.inspection.SerializeAsString());
      v1::InspectResponse().Swap(&r.inspection);
      call_.resize_answer(serialized->size());  // fewer bytes: always fits
      const grpc::Slice slice = owned_slice(*serialized, serialized);
      *response_ = grpc::ByteBuffer(&slice, 1);
      finish(std::nullopt, serialized->size());
    });
  }

 private:
  const grpc::ByteBuffer* request_;
  grpc::ByteBuffer* response_;
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

ConverterService::ConverterService(CallCore& core)
    : core_(core), operators_(to_proto(support_matrix())) {}

grpc::ServerUnaryReactor* ConverterService::Convert(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request,
                                                    grpc::ByteBuffer* response) {
  auto* call = new ConvertCall(core_, ctx, request, response);
  call->start();
  return call;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ConverterService::ConvertStream(
    grpc::CallbackServerContext* ctx) {
  return start_convert_stream(core_, ctx);
}

grpc::ServerUnaryReactor* ConverterService::Inspect(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request,
                                                    grpc::ByteBuffer* response) {
  auto* call = new InspectCall(core_, ctx, request, response);
  call->start();
  return call;
}

namespace {

// A call answered at once, on the gRPC thread.
class ListOperatorsCall final : public UnaryCall {
 public:
  ListOperatorsCall(CallCore& core, grpc::CallbackServerContext* ctx)
      : UnaryCall(core, ctx, "ListOperators") {}
  void start(const v1::ListOperatorsResponse& operators, v1::ListOperatorsResponse* response) {
    if (auto refused = call_.admit()) return finish(refused);
    *response = operators;
    finish(std::nullopt, response->ByteSizeLong());
  }
};

}  // namespace

grpc::ServerUnaryReactor* ConverterService::ListOperators(grpc::CallbackServerContext* ctx,
                                                          const v1::ListOperatorsRequest*,
                                                          v1::ListOperatorsResponse* response) {
  auto* call = new ListOperatorsCall(core_, ctx);
  call->start(operators_, response);
  return call;
}

}  // namespace lite2onnx::server
