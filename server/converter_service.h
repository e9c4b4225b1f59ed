// lite2onnx.v1.Converter on the gRPC callback API. Each call is translated to
// the core's values, admitted (size limit, memory budget, queue), run on the
// worker pool with a cancellation hook, and translated back.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "lite2onnx/v1/converter.grpc.pb.h"
#include "server/call.h"

namespace lite2onnx::server {

// Convert is a raw method: its request is parsed and its response written by
// the service (converter_service.cc), so that the ONNX bytes go out without being
// copied into a message first. The other methods use the generated messages.
using ConverterServiceBase = v1::Converter::WithRawCallbackMethod_Convert<
    v1::Converter::WithCallbackMethod_ConvertStream<v1::Converter::WithCallbackMethod_Inspect<
        v1::Converter::WithCallbackMethod_ListOperators<v1::Converter::Service>>>>;

class ConverterService final : public ConverterServiceBase {
 public:
  // `env` (shared with the HTTP endpoint) outlives the service.
  explicit ConverterService(CallEnvironment& env);

  grpc::ServerUnaryReactor* Convert(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>* ConvertStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* Inspect(grpc::CallbackServerContext* ctx,
                                    const v1::InspectRequest* request,
                                    v1::InspectResponse* response) override;
  grpc::ServerUnaryReactor* ListOperators(grpc::CallbackServerContext* ctx,
                                          const v1::ListOperatorsRequest* request,
                                          v1::ListOperatorsResponse* response) override;

 private:
  CallEnvironment& env_;
  const v1::ListOperatorsResponse operators_;  // the support matrix, read once
};

// The TFLite builtin operator names: the op labels metrics may use.
std::set<std::string> builtin_operator_names();

// A random prefix for request ids, so that they are unique across restarts.
std::string random_request_id_prefix();

// A new ConvertStream call (convert_stream.cc).
grpc::ServerBidiReactor<v1::ConvertChunk, v1::ConvertChunk>* start_convert_stream(
    CallEnvironment& env, grpc::CallbackServerContext* ctx);

}  // namespace lite2onnx::server
