// Text that comes from clients and models: checked as UTF-8 before it reaches
// protobuf (whose proto3 strings must be UTF-8) or a worker, and escaped
// before it reaches a log line.
#pragma once

#include <string>
#include <string_view>

namespace lite2onnx::server {

// Well-formed UTF-8: no overlong forms, no surrogates, nothing beyond U+10FFFF.
bool valid_utf8(std::string_view text);

// `text` with every control character (below 0x20, and DEL) and every byte
// that is not part of well-formed UTF-8 written as \xNN (a backslash as \\):
// a log line can neither be split nor forged, and keeps every byte legible.
std::string escaped(std::string_view text);

}  // namespace lite2onnx::server
