// docs/openapi.yaml, the description of the HTTP API, compiled into the
// server (server/embed.cmake): GET /openapi.yaml serves it, and a test checks
// the server against it (tests/server/openapi_test.py).
#pragma once

#include <string_view>

namespace lite2onnx::server {

std::string_view openapi_yaml();

}  // namespace lite2onnx::server
