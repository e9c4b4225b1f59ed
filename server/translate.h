// Translation between the wire messages and the core's values; no conversion
// logic lives here.
#pragma once

#include <string>
#include <vector>

#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::server {

// The core's options from the request's; errors (kInvalidOption) name the field.
Result<ConvertOptions> to_core(const v1::ConvertOptions& options);

void to_proto(const Diagnostics& diagnostics, v1::Diagnostics* out);
void to_proto(const ModelInfo& info, v1::InspectResponse* out);
v1::ListOperatorsResponse to_proto(const std::vector<OpSupport>& matrix);

// "opset=13 quantization=qdq ...": what a request asked for, for the request log.
std::string summary(const v1::ConvertOptions& options);

}  // namespace lite2onnx::server
