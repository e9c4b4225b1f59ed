// Why something failed, in the terms every caller of the core and of the
// service shares: a row of the error-reason table (common/error_reasons.h:
// the name the CLI prints, its exit code, whether a retry may pass) and the
// core's Error (message, op index, tensor, every unsupported operator).
// Header-only; no gRPC or protobuf.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/error_reasons.h"
#include "core/status.h"

namespace lite2onnx {

struct Failure {
  const ErrorReason* reason = &reason_named("internal");  // never null
  // The message and, from the core or the server's ConversionError, op_index,
  // tensor and every unsupported operator. `code` is the core's code when the
  // reason is one of the core's (invalid_model, unsupported, ...), else kInternal.
  Error error;
  std::string grpc_code;  // a call's status code ("UNAVAILABLE", ...); empty when no call failed
  int attempts = 1;       // calls made, retries included

  // "invalid_model", "queue_full", "unavailable", ...: reason->name.
  std::string name() const { return std::string(reason->name); }
};

// A value or a Failure.
template <class T>
using Outcome = Result<T, Failure>;

// The core's code of a reason that is one of the core's, else kInternal.
inline ErrorCode core_code(std::string_view reason_name) {
  for (ErrorCode c : {ErrorCode::kInvalidModel, ErrorCode::kUnsupported, ErrorCode::kInvalidOption,
                      ErrorCode::kResourceLimit, ErrorCode::kCancelled})
    if (reason_name == to_string(c)) return c;
  return ErrorCode::kInternal;
}

// A Failure of `reason` with `message`.
inline Failure make_failure(const ErrorReason& reason, std::string message) {
  Failure f;
  f.reason = &reason;
  f.error = make_error(core_code(reason.name), std::move(message));
  return f;
}

// A core error as a Failure: the row named as its code (invalid_model, ...).
inline Failure failure_of(Error error) {
  Failure f;
  f.reason = &reason_named(to_string(error.code));
  f.error = std::move(error);
  return f;
}

}  // namespace lite2onnx
