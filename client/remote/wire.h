// What a failed call's status carries: the ConversionError in its
// google.rpc.Status details. Protobuf types, so not in status.h (whose users,
// remote.h's among them, see no wire types). Defined in status.cc.
#pragma once

#include <optional>
#include <string_view>

#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::remote {

// The ConversionError in the google.rpc.Status of `details` (a failed call's
// grpc-status-details-bin trailer), if any.
std::optional<v1::ConversionError> conversion_error(std::string_view details);

}  // namespace lite2onnx::remote
