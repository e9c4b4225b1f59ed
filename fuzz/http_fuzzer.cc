// libFuzzer entry point of the http target: the service's parsers of what an
// HTTP client sends (server/http_request.h, server/text.h,
// server/calls/option_texts.h). Byte 0 chooses:
//   even: the query string and the X-Lite2onnx-Timeout header (the rest split
//         at its first 0 byte), with options (bit 1) or timeout only;
//   odd:  a multipart upload: the Content-Type up to the first '\n', then the
//         body, fed whole and in chunks of (byte 0 >> 2) + 1 bytes.
// Beyond no crash: what parse_parameters accepts serializes to options whose
// texts pass check_option_texts; every message is UTF-8; header_safe and
// escaped leave no control character; a body that both feedings accept gives
// the same model bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lite2onnx/v1/converter.pb.h"
#include "server/calls/option_texts.h"
#include "server/http_request.h"
#include "server/text.h"

namespace lite2onnx::server::http {
namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

void check_failure(const Failure& f) { require(valid_utf8(f.error.message)); }

void check_texts(std::string_view text) {
  for (char c : header_safe(text, 64))
    require(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f);
  const std::string e = escaped(text);
  require(valid_utf8(e));
  for (char c : e) require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
}

void parameters(uint8_t mode, std::string_view rest) {
  const size_t zero = rest.find('\0');
  const std::string_view query = rest.substr(0, zero);
  const std::string_view timeout = zero == std::string_view::npos ? "" : rest.substr(zero + 1);
  check_texts(query);
  auto p = parse_parameters(query, timeout, (mode & 2) != 0);
  if (!p) return check_failure(p.error());
  std::string serialized;
  require(p->options.SerializeToString(&serialized));
  require(!check_option_texts(serialized));
}

struct Upload {
  std::string model;
  std::optional<Failure> failure;
};

// The body fed in pieces of `chunk` bytes (0: whole), then finished.
Upload upload(const std::string& boundary, std::string_view body, size_t chunk, size_t refuse_at) {
  Upload u;
  MultipartModel parser(boundary, [&](std::span<const std::byte> bytes) -> std::optional<Failure> {
    u.model.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (u.model.size() > refuse_at)
      return make_failure(reason_named("resource_limit"), "the model is too large");
    return std::nullopt;
  });
  if (chunk == 0) chunk = body.size() + 1;
  for (size_t at = 0; at < body.size() && !u.failure; at += chunk)
    u.failure = parser.feed(body.substr(at, chunk));
  if (!u.failure) u.failure = parser.finish();
  if (u.failure) check_failure(*u.failure);
  // Only the body's bytes reach the model, never more.
  require(u.model.size() <= body.size());
  return u;
}

void multipart(uint8_t mode, std::string_view rest) {
  const size_t newline = rest.find('\n');
  const std::string_view type = rest.substr(0, newline);
  const std::string_view body = newline == std::string_view::npos ? "" : rest.substr(newline + 1);
  auto boundary = multipart_boundary(type);
  if (!boundary || boundary->empty()) return;
  require(boundary->size() <= 70);
  const size_t refuse_at = (mode & 2) ? body.size() / 2 : body.size();
  Upload whole = upload(*boundary, body, 0, refuse_at);
  Upload pieces = upload(*boundary, body, static_cast<size_t>(mode >> 2) + 1, refuse_at);
  if (!whole.failure && !pieces.failure) require(whole.model == pieces.model);
}

}  // namespace
}  // namespace lite2onnx::server::http

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    lite2onnx::server::http::multipart(data[0], rest);
  else
    lite2onnx::server::http::parameters(data[0], rest);
  return 0;
}
