#include "client/remote/wire.h"

#include "google/rpc/status.pb.h"

namespace lite2onnx::remote {

std::optional<v1::ConversionError> conversion_error(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details()))
    return std::nullopt;
  for (const auto& any : details.details()) {
    v1::ConversionError e;
    if (any.UnpackTo(&e)) return e;
  }
  return std::nullopt;
}

}  // namespace lite2onnx::remote
