// What the gRPC transports (converter_service.cc, convert_stream.cc) share:
// a call's CallInfo from its context, the request's pieces read off the wire
// without a parse into a message, and the one place a Failure becomes a gRPC
// status: a short message and, in the standard grpc-status-details-bin
// trailer, a google.rpc.Status whose one detail is a lite2onnx.v1.ConversionError.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/failure.h"
#include "server/calls/call.h"

namespace lite2onnx::server {

// The call as the core knows it: peer, x-request-id, traceparent, the test
// fault, the deadline.
CallInfo call_info(grpc::CallbackServerContext* ctx, std::string_view method);

grpc::Status to_status(const Failure& failure);

// The headers a call's answer carries: x-request-id (the initial metadata of
// an answer, the trailers of a failure: custom initial metadata would make a
// refusal more than Trailers-Only, which commits the call and stops the
// client's gRPC from retrying it), the attempt it answered (1 +
// grpc-previous-rpc-attempts) and, for a failure, grpc-retry-pushback-ms.
class CallHeaders {
 public:
  CallHeaders(grpc::CallbackServerContext* ctx, std::string id);
  // Before an answer's first message (or a unary answer's Finish()).
  void send();
  // The status of `failure` (OK when none), the trailers added.
  grpc::Status finish(const std::optional<Failure>& failure);

 private:
  grpc::CallbackServerContext* ctx_;
  std::string id_;
  int attempt_ = 1;
  bool sent_ = false;
};

// The fields of one serialized message, read from a ByteBuffer's slices where
// they are: varints and 64/32-bit fields by value, length-delimited ones as
// the pieces of the slices that hold them. The buffer's slices are shared,
// not copied, and live as long as the reader.
class WireReader {
 public:
  struct Field {
    uint32_t number = 0;
    uint32_t wire_type = 0;
    uint64_t value = 0;                             // varint, fixed64, fixed32
    std::vector<std::span<const std::byte>> bytes;  // length-delimited: in pieces
    std::string joined() const;                     // the pieces in one string
  };
  // False: not a message's wire form.
  bool read(const grpc::ByteBuffer& buffer, std::vector<Field>* fields);
  // The slices the fields' pieces are in, as one owner (the reader lets go
  // of them): the pieces live as long as it does.
  std::shared_ptr<const void> take_slices();

 private:
  bool at_end();
  bool varint(uint64_t* value);
  bool take(uint64_t n, std::vector<std::span<const std::byte>>* pieces);

  std::vector<grpc::Slice> slices_;
  size_t slice_ = 0, offset_ = 0;
};

// A slice of `bytes` that keeps `owner` alive (no copy).
grpc::Slice owned_slice(std::string_view bytes, std::shared_ptr<const void> owner);
// A length-delimited field's tag and length.
std::string field_head(uint32_t number, uint64_t length);

}  // namespace lite2onnx::server
