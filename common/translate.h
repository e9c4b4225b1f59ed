// Translation between the core's values and the lite2onnx.v1 messages, both
// directions: the server reads requests and writes answers with it, the worker
// process reads options and writes diagnostics, the client library reads
// answers. No conversion logic lives here, and no gRPC (protobuf only).
#pragma once

#include <string>
#include <vector>

#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx {

// The core's options from the request's; errors (kInvalidOption) name the field.
Result<ConvertOptions> to_core(const v1::ConvertOptions& options);
// The options the contract carries (the cancellation hook and the core's
// limits stay local). Layouts are sent in their parsed "TENSOR=SRC:DST" form.
v1::ConvertOptions to_proto(const ConvertOptions& options);

void to_proto(const Diagnostics& diagnostics, v1::Diagnostics* out);
Diagnostics from_proto(const v1::Diagnostics& diagnostics);

void to_proto(const ModelInfo& info, v1::InspectResponse* out);
ModelInfo from_proto(const v1::InspectResponse& info);

v1::ListOperatorsResponse to_proto(const std::vector<OpSupport>& matrix);
std::vector<OpSupport> from_proto(const v1::ListOperatorsResponse& operators);

std::vector<UnsupportedOp> from_proto(
    const google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>& ops);

// A core error as the ConversionError of the wire (reason from
// common/error_reasons.h).
v1::ConversionError to_proto(const Error& error);

// "opset=13 quantization=qdq ...": what a request asked for, for the request log.
std::string summary(const v1::ConvertOptions& options);

}  // namespace lite2onnx
