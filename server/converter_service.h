// lite2onnx.v1.Converter on the gRPC callback API: each call is read off the
// wire, handed to the call core (server/calls/call.h) and its answer written
// back. No admission, budget, cache or queue here.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "lite2onnx/v1/converter.grpc.pb.h"
#include "server/calls/call.h"

namespace lite2onnx::server {

// Convert, ConvertStream and Inspect are raw methods: their requests are read
// off the wire (the model where gRPC received it, freed once it is in its
// conversion; the options' texts checked before they are parsed) and their
// answers written around the ONNX bytes without copying them into a message
// (Inspect's: serialized once, its message freed). ListOperators uses the messages.
using ConverterServiceBase = v1::Converter::WithRawCallbackMethod_Convert<
    v1::Converter::WithRawCallbackMethod_ConvertStream<v1::Converter::WithRawCallbackMethod_Inspect<
        v1::Converter::WithCallbackMethod_ListOperators<v1::Converter::Service>>>>;

class ConverterService final : public ConverterServiceBase {
 public:
  // `core` (shared with the HTTP endpoint) outlives the service.
  explicit ConverterService(CallCore& core);

  grpc::ServerUnaryReactor* Convert(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ConvertStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* Inspect(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListOperators(grpc::CallbackServerContext* ctx,
                                          const v1::ListOperatorsRequest* request,
                                          v1::ListOperatorsResponse* response) override;

 private:
  CallCore& core_;
  const v1::ListOperatorsResponse operators_;  // the support matrix, read once
};

// The TFLite builtin operator names: the op labels metrics may use.
std::set<std::string> builtin_operator_names();

// A random prefix for request ids, so that they are unique across restarts.
std::string random_request_id_prefix();

// A new ConvertStream call (convert_stream.cc).
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* start_convert_stream(
    CallCore& core, grpc::CallbackServerContext* ctx);

}  // namespace lite2onnx::server
