#include "server/text.h"

#include <cstdint>

namespace lite2onnx::server {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s`, 0 if none.
size_t sequence_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xc0) == 0x80; };
  const uint8_t b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return continuation(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b == 0xe0 && byte(1) < 0xa0) return 0;   // overlong
    if (b == 0xed && byte(1) >= 0xa0) return 0;  // a surrogate
    return 3;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b == 0xf0 && byte(1) < 0x90) return 0;   // overlong
    if (b == 0xf4 && byte(1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  while (!text.empty()) {
    const size_t n = sequence_length(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

std::string escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t n = sequence_length(text);
    const auto b = static_cast<uint8_t>(text[0]);
    if (n == 0 || b < 0x20 || b == 0x7f) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      text.remove_prefix(1);
      continue;
    }
    if (b == '\\') out += '\\';
    out.append(text.substr(0, n));
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace lite2onnx::server
