// Translation between the core's values and the wire messages, for the client:
// the inverse of server/translate.h. No conversion logic lives here.
#pragma once

#include <grpcpp/support/status.h>

#include <optional>
#include <vector>

#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::remote {

// The options the contract carries (the cancellation hook and the core's limits
// stay local). Layouts are sent in their parsed "TENSOR=SRC:DST" form.
v1::ConvertOptions to_proto(const ConvertOptions& options);

Diagnostics from_proto(const v1::Diagnostics& diagnostics);
ModelInfo from_proto(const v1::InspectResponse& info);
std::vector<OpSupport> from_proto(const v1::ListOperatorsResponse& operators);
std::vector<UnsupportedOp> from_proto(
    const google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>& ops);

// The ConversionError a failed call carries in its google.rpc.Status details
// (the grpc-status-details-bin trailer), if any.
std::optional<v1::ConversionError> conversion_error(const grpc::Status& status);

}  // namespace lite2onnx::remote
