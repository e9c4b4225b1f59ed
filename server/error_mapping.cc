#include "server/error_mapping.h"

#include "common/error_reasons.h"
#include "common/translate.h"
#include "google/rpc/status.pb.h"

namespace lite2onnx::server {
namespace {

// Status messages stay short; the full list of unsupported ops is in the details.
constexpr size_t kMaxMessageChars = 1024;

// The core's codes are rows of the table under their own names.
Reason reason_of(ErrorCode code) {
  return static_cast<Reason>(reason_named(to_string(code)).proto_reason);
}

}  // namespace

Failure failure(Reason reason, std::string message) {
  Failure f;
  f.reason = reason;
  f.message = std::move(message);
  return f;
}

Failure from_core(const Error& error, bool deadline_passed) {
  Failure f;
  f.reason = reason_of(error.code);
  if (f.reason == v1::ConversionError::REASON_CANCELLED && deadline_passed)
    f.reason = v1::ConversionError::REASON_DEADLINE_EXCEEDED;
  f.message = error.message;
  f.op_index = error.op_index;
  f.tensor = error.tensor;
  f.unsupported = error.unsupported;
  return f;
}

grpc::StatusCode status_code(Reason reason) {
  return static_cast<grpc::StatusCode>(reason_of_proto(reason).grpc_code);
}

Failure from_proto(const v1::ConversionError& error) {
  Failure f;
  f.reason = error.reason();
  f.message = error.message();
  f.op_index = error.op_index();
  f.tensor = error.tensor();
  f.unsupported = lite2onnx::from_proto(error.unsupported());
  return f;
}

int http_status(Reason reason) {
  const int status = reason_of_proto(reason).http_status;
  return status ? status : 500;
}

v1::ConversionError to_proto(const Failure& f) {
  v1::ConversionError detail;
  detail.set_reason(f.reason);
  detail.set_message(f.message);
  detail.set_op_index(f.op_index);
  detail.set_tensor(f.tensor);
  lite2onnx::to_proto(f.unsupported, detail.mutable_unsupported());
  return detail;
}

grpc::Status to_status(const Failure& f) {
  const v1::ConversionError detail = to_proto(f);
  const grpc::StatusCode code = status_code(f.reason);
  std::string message = f.message.size() > kMaxMessageChars
                            ? f.message.substr(0, kMaxMessageChars - 3) + "..."
                            : f.message;
  google::rpc::Status status;
  status.set_code(static_cast<int>(code));
  status.set_message(message);
  status.add_details()->PackFrom(detail);
  return grpc::Status(code, std::move(message), status.SerializeAsString());
}

std::string reason_name_of(const grpc::Status& status) {
  if (status.ok() || status.error_details().empty()) return "";
  google::rpc::Status details;
  v1::ConversionError error;
  if (!details.ParseFromString(status.error_details()) || details.details_size() == 0 ||
      !details.details(0).UnpackTo(&error))
    return "";
  return std::string(reason_of_proto(static_cast<int>(error.reason())).name);
}

std::string_view status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace lite2onnx::server
