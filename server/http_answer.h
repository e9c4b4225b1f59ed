// What the HTTP endpoint answers: a head and a body, the one JSON error
// envelope of every non-2xx status, the diagnostics summary header, and the
// JSON form of a conversion written as it is sent (the ONNX bytes in base64,
// a piece at a time, never the whole answer encoded at once).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/failure.h"
#include "core/diagnostics.h"

namespace lite2onnx::server::http {

struct Header {
  std::string name, value;
};

// A whole answer. `close`: the connection ends after it.
struct Answer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<Header> headers;
  bool close = false;
};

// The head of an answer whose body has `body_bytes`.
std::string head_of(int status, std::string_view content_type, uint64_t body_bytes,
                    const std::vector<Header>& headers, bool keep_alive, unsigned version);

// The error envelope, for every non-2xx status: {"error": {"reason", "status",
// "grpc_code", "retryable", "message", "request_id", "op_index", "tensor",
// "unsupported": [{"op_index", "op", "reason", "reason_code", "subgraph"}]}},
// reasons named as the error table (and the CLI's JSON) names them, every
// field present. A refusal a client may retry says when (Retry-After).
Answer error_answer(const Failure& failure, std::string_view request_id);

// X-Lite2onnx-Diagnostics: "opset=17; onnx_bytes=N; nodes=N; transposes=N; warnings=N".
std::string diagnostics_summary(const Diagnostics& d);

// A conversion's answer as the proto3 JSON of lite2onnx.v1.ConvertResponse,
// {"onnxModel":"BASE64","diagnostics":{...}}: the text before the ONNX
// model's base64 and after it, the base64's length, and the base64 of a piece
// of it (a multiple of 3 bytes but for the last).
struct JsonAnswer {
  std::string prefix, suffix;  // suffix: the diagnostics, made off the I/O threads
  static uint64_t base64_bytes(uint64_t bytes) { return (bytes + 2) / 3 * 4; }
  static void append_base64(std::string_view bytes, std::string& out);
};
JsonAnswer json_answer(const Diagnostics& diagnostics);

}  // namespace lite2onnx::server::http
