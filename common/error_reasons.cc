#include "common/error_reasons.h"

#include <array>

namespace lite2onnx {
namespace {

// gRPC status codes (grpc::StatusCode), by number.
constexpr int kCancelled = 1, kInvalidArgument = 3, kDeadlineExceeded = 4, kPermissionDenied = 7,
              kResourceExhausted = 8, kUnimplemented = 12, kInternal = 13, kUnavailable = 14,
              kUnauthenticated = 16, kNoGrpcCode = -1;

// One row per reason. Proto reason numbers are lite2onnx.v1.ConversionError.Reason's.
constexpr std::array kReasons{
    ErrorReason{"invalid_model", 1, "REASON_INVALID_MODEL", kInvalidArgument, "INVALID_ARGUMENT",
                kExitInvalidModel, false, 422,
                "not a well-formed TFLite model (garbage, truncated, empty); the message names the "
                "op index, tensor and field"},
    ErrorReason{"unsupported", 2, "REASON_UNSUPPORTED", kUnimplemented, "UNIMPLEMENTED",
                kExitUnsupported, false, 422,
                "operators or features the converter lacks; `unsupported` lists all of them"},
    ErrorReason{"invalid_option", 3, "REASON_INVALID_OPTION", kInvalidArgument, "INVALID_ARGUMENT",
                kExitBadOptions, false, 400,
                "a bad option: opset out of range, bad layout string (the message names the "
                "field, e.g. `explicit_layouts[1]: ...`), unknown quantization mode"},
    ErrorReason{"bad_stream", 12, "REASON_BAD_STREAM", kInvalidArgument, "INVALID_ARGUMENT",
                kExitInternal, false, 400,
                "`ConvertStream` messages out of order: no options first, data before options, "
                "fewer or more bytes than `total_bytes` (a client bug)"},
    ErrorReason{"resource_limit", 4, "REASON_RESOURCE_LIMIT", kResourceExhausted,
                "RESOURCE_EXHAUSTED", kExitLimit, false, 413,
                "the model exceeds a conversion limit (operators, tensors, inputs per op, rank, "
                "constants created, ONNX size: the `--max-*` flags)"},
    ErrorReason{"model_too_large", 7, "REASON_MODEL_TOO_LARGE", kResourceExhausted,
                "RESOURCE_EXHAUSTED", kExitLimit, false, 413,
                "the model is larger than `--max-unary-bytes` (use `ConvertStream`) or "
                "`--max-stream-bytes`"},
    ErrorReason{"memory_limit", 13, "REASON_MEMORY_LIMIT", kResourceExhausted, "RESOURCE_EXHAUSTED",
                kExitLimit, false, 413,
                "the conversion needed more memory than `--conversion-memory-limit` (its worker "
                "process is replaced)"},
    ErrorReason{"time_limit", 15, "REASON_TIME_LIMIT", kResourceExhausted, "RESOURCE_EXHAUSTED",
                kExitLimit, false, 413,
                "the conversion ran longer than `--conversion-time-limit` (its worker process is "
                "killed and replaced)"},
    ErrorReason{"queue_full", 8, "REASON_QUEUE_FULL", kResourceExhausted, "RESOURCE_EXHAUSTED",
                kExitRetryLater, true, 429,
                "every worker busy and the queue full: answered at once, retry later"},
    ErrorReason{"memory_budget", 9, "REASON_MEMORY_BUDGET", kResourceExhausted,
                "RESOURCE_EXHAUSTED", kExitRetryLater, true, 429,
                "accepting the model would exceed `--max-inflight-bytes`: answered at once, retry "
                "later"},
    ErrorReason{"deadline_exceeded", 10, "REASON_DEADLINE_EXCEEDED", kDeadlineExceeded,
                "DEADLINE_EXCEEDED", kExitDeadline, false, 504,
                "the call's deadline passed (in the queue, or during the conversion, whose worker "
                "is killed at the deadline)"},
    ErrorReason{"cancelled", 5, "REASON_CANCELLED", kCancelled, "CANCELLED", kExitRetryLater, true,
                499,
                "the client cancelled or went away (the conversion stops), or the server's drain "
                "grace period ended first"},
    ErrorReason{"shutting_down", 11, "REASON_SHUTTING_DOWN", kUnavailable, "UNAVAILABLE",
                kExitUnavailable, true, 503,
                "the server is draining after SIGTERM/SIGINT: retry on another instance"},
    ErrorReason{"worker_crashed", 14, "REASON_WORKER_CRASHED", kInternal, "INTERNAL", kExitInternal,
                false, 500,
                "the worker process converting the model crashed (a signal, or a system call "
                "outside its seccomp allow-list); it is replaced"},
    ErrorReason{"internal", 6, "REASON_INTERNAL", kInternal, "INTERNAL", kExitInternal, false, 500,
                "a bug, e.g. the converter's own output failed the ONNX checker; also an answer "
                "the client does not understand"},
    ErrorReason{"bad_request", 0, "", kInvalidArgument, "INVALID_ARGUMENT", kExitBadOptions, false,
                400,
                "HTTP only: not an HTTP/1.1 request, or a multipart/form-data body without its one "
                "part, the model"},
    ErrorReason{"head_too_large", 0, "", kInvalidArgument, "INVALID_ARGUMENT", kExitBadOptions,
                false, 431, "HTTP only: the request line and headers exceed 16 KiB"},
    ErrorReason{"not_found", 0, "", kUnimplemented, "UNIMPLEMENTED", kExitBadOptions, false, 404,
                "HTTP only: no such path (`GET /openapi.yaml` describes them)"},
    ErrorReason{"method_not_allowed", 0, "", kUnimplemented, "UNIMPLEMENTED", kExitBadOptions,
                false, 405,
                "HTTP only: the path takes another method (the `Allow` header says which)"},
    ErrorReason{"unavailable", 0, "", kUnavailable, "UNAVAILABLE", kExitUnavailable, true, 0,
                "client side: nothing listens at the address, the TLS handshake failed (wrong CA, "
                "missing client certificate, plaintext against TLS)"},
    ErrorReason{"io_error", 0, "", kNoGrpcCode, "", kExitIo, false, 0,
                "client side: the input or output file (or TLS material) could not be read or "
                "written"},
};

const ErrorReason& internal_row() { return reason_named("internal"); }

}  // namespace

std::span<const ErrorReason> error_reasons() { return kReasons; }

const ErrorReason& reason_named(std::string_view name) {
  for (const auto& r : kReasons)
    if (r.name == name) return r;
  return reason_named("internal");
}

const ErrorReason& reason_of_proto(int proto_reason) {
  for (const auto& r : kReasons)
    if (r.proto_reason == proto_reason && proto_reason != 0) return r;
  return internal_row();
}

const ErrorReason& reason_of_bare_grpc_code(int grpc_code) {
  switch (grpc_code) {
    case kUnavailable:
    case kUnauthenticated:
    case kPermissionDenied:
      return reason_named("unavailable");
    case kDeadlineExceeded:
      return reason_named("deadline_exceeded");
    case kResourceExhausted:  // gRPC's own message size limit
      return reason_named("model_too_large");
    case kCancelled:
      return reason_named("cancelled");
    default:
      return internal_row();
  }
}

std::string error_reasons_markdown() {
  std::string md =
      "| name (CLI) | `ConversionError.reason` | gRPC code | exit | retry | HTTP | when |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  auto or_dash = [](std::string_view s) { return s.empty() ? std::string("-") : std::string(s); };
  auto code = [](std::string_view s) {
    return s.empty() ? std::string("-") : "`" + std::string(s) + "`";
  };
  for (const auto& r : kReasons) {
    md += "| `" + std::string(r.name) + "` | " + code(r.proto_name) + " | " +
          code(r.grpc_code_name) + " | " + std::to_string(r.exit_code) + " | " +
          (r.retryable ? "yes" : "no") + " | " +
          (r.http_status ? std::to_string(r.http_status) : or_dash("")) + " | " +
          std::string(r.when) + " |\n";
  }
  return md;
}

}  // namespace lite2onnx
