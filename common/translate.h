// Translation between the core's values and the lite2onnx.v1 messages, both
// directions: the server reads requests and writes answers with it, the worker
// process reads options and writes diagnostics, the client library reads
// answers. No conversion logic lives here, and no gRPC (protobuf only).
#pragma once

#include <string>
#include <vector>

#include "common/failure.h"
#include "core/convert.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx {

// The options' fields and the option table (core/option_table.h) match by name;
// both directions go through the table's text forms.
// The core's options from the request's; errors (kInvalidOption) name the
// field, e.g. "explicit_layouts[1]: layout ...", "opset 12 is not supported ...".
Result<ConvertOptions> to_core(const v1::ConvertOptions& options);
// The options the contract carries (the cancellation hook and the core's
// limits stay local), each in its canonical form: layouts as "TENSOR=SRC:DST".
v1::ConvertOptions to_proto(const ConvertOptions& options);

void to_proto(const Diagnostics& diagnostics, v1::Diagnostics* out);
Diagnostics from_proto(const v1::Diagnostics& diagnostics);

void to_proto(const ModelInfo& info, v1::InspectResponse* out);
ModelInfo from_proto(const v1::InspectResponse& info);

v1::ListOperatorsResponse to_proto(const std::vector<OpSupport>& matrix);
std::vector<OpSupport> from_proto(const v1::ListOperatorsResponse& operators);

void to_proto(const std::vector<UnsupportedOp>& ops,
              google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>* out);
std::vector<UnsupportedOp> from_proto(
    const google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>& ops);

// A core error as the ConversionError of the wire (reason from
// common/error_reasons.h).
v1::ConversionError to_proto(const Error& error);
// A failure as the ConversionError of the wire (its row's reason number, every
// field, the message whole), and back: a reason number this side does not
// know reads as `internal`.
v1::ConversionError to_proto(const Failure& failure);
Failure failure_of(const v1::ConversionError& error);

// What a request asked for, for the request log: options_summary() of the
// fields' texts ("opset=13 keep_io_layout=false quantization=qdq ..."), valid
// or not, at most 256 characters.
std::string summary(const v1::ConvertOptions& options);

}  // namespace lite2onnx
