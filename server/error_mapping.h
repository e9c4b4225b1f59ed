// The one place where failures become gRPC statuses. Every failed call carries
// a short message and, in the standard grpc-status-details-bin trailer, a
// google.rpc.Status whose one detail is a lite2onnx.v1.ConversionError.
#pragma once

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::server {

// Why a call failed: lite2onnx.v1.ConversionError.Reason, the core's error
// codes plus what the server itself refuses.
using Reason = v1::ConversionError::Reason;

struct Failure {
  Reason reason = v1::ConversionError::REASON_INTERNAL;
  std::string message;
  int op_index = -1;
  std::string tensor;
  std::vector<UnsupportedOp> unsupported;
};

Failure failure(Reason reason, std::string message);

// A core error as a failure. kCancelled becomes kDeadlineExceeded when the
// call's deadline is what stopped the conversion.
Failure from_core(const Error& error, bool deadline_passed);

// A failure a worker process described (its reason is checked by status_code()).
Failure from_proto(const v1::ConversionError& error);

// The gRPC code of a reason, from common/error_reasons.h (INTERNAL for a number
// it does not know).
grpc::StatusCode status_code(Reason reason);
grpc::Status to_status(const Failure& failure);
// The HTTP status of a reason (the table's column; 500 where it has none).
int http_status(Reason reason);
// The failure as the wire's ConversionError (every field; the message not shortened).
v1::ConversionError to_proto(const Failure& failure);

// The error-table row (its name) of a status to_status() made, read back
// from its details; "" for OK or a status without a ConversionError.
std::string reason_name_of(const grpc::Status& status);

// "OK", "INVALID_ARGUMENT", ...: the label of metrics and logs.
std::string_view status_code_name(grpc::StatusCode code);

}  // namespace lite2onnx::server
