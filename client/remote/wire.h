// What the client reads from a failed call's status: the ConversionError in
// its google.rpc.Status details. The message translations are common/translate.h.
#pragma once

#include <grpcpp/support/status.h>

#include <optional>

#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::remote {

// The ConversionError a failed call carries in its google.rpc.Status details
// (the grpc-status-details-bin trailer), if any.
std::optional<v1::ConversionError> conversion_error(const grpc::Status& status);

}  // namespace lite2onnx::remote
