// Every reason a conversion or a call can fail, in one table: the word the CLI
// prints (`lite2onnx: <name>: message`), the lite2onnx.v1.ConversionError.Reason
// the server sends, the gRPC status code, the CLI's exit code, whether a client
// should retry, and the HTTP status of the HTTP endpoint. The server's
// error mapping, the client library's retries and the CLI's exit codes all read
// it; docs/service.md's error table is generated from it (`lite2onnx errors
// --markdown`, checked by a test).
//
// No gRPC or protobuf here: reasons and status codes are their wire numbers
// (tests/server/error_reasons_test.cc checks them against the generated enums).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace lite2onnx {

// The CLI's exit codes. Several reasons share one: the code says what to do
// (fix the model, fix the options, retry later, ...), the name says why.
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,      // a bug on one side (or a worker crash)
  kExitBadOptions = 2,    // bad options or usage
  kExitInvalidModel = 3,  // not a well-formed TFLite model
  kExitUnsupported = 4,   // operators or features the converter lacks
  kExitLimit = 5,         // beyond a limit of this server: retrying the same call fails again
  kExitIo = 6,            // a local file could not be read or written
  kExitUnavailable = 7,   // --server unreachable, TLS refused, or draining: retry (elsewhere)
  kExitRetryLater = 8,    // the server is full now (queue, memory budget): retry later
  kExitDeadline = 9,      // the call's deadline (--deadline) passed
};

struct ErrorReason {
  std::string_view name;            // printed by the CLI; the metrics' outcome label
  int proto_reason;                 // lite2onnx.v1.ConversionError.Reason; 0: none (client side)
  std::string_view proto_name;      // "REASON_INVALID_MODEL"; empty when none
  int grpc_code;                    // grpc::StatusCode number
  std::string_view grpc_code_name;  // "INVALID_ARGUMENT"
  int exit_code;                    // ExitCode
  bool retryable;                   // the same call may succeed later
  int http_status;                  // of the HTTP endpoint; 0: not an HTTP answer
  std::string_view when;            // what happened, one sentence for the docs
};

// Every row, in the order of the docs.
std::span<const ErrorReason> error_reasons();

// The row named `name`, the row of a proto reason number, the row of a gRPC
// code that carried no ConversionError (answers of gRPC itself); the
// "internal" row when there is none.
const ErrorReason& reason_named(std::string_view name);
const ErrorReason& reason_of_proto(int proto_reason);
const ErrorReason& reason_of_bare_grpc_code(int grpc_code);

// docs/service.md's error table, as Markdown.
std::string error_reasons_markdown();

}  // namespace lite2onnx
