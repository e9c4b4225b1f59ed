// What an HTTP request asks for, read from its head: the path, the query's
// conversion options (named as the option table's entries, their texts
// checked as UTF-8 and bounded) and deadline, the headers the call core
// takes, and the model part of a multipart/form-data body.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/failure.h"
#include "lite2onnx/v1/converter.pb.h"

namespace lite2onnx::server::http {

// What the query string asks for: the conversion options and the call's
// deadline (`timeout`, seconds; also the header X-Lite2onnx-Timeout).
struct CallParameters {
  v1::ConvertOptions options;
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
};

// `with_options` false: only `timeout` is taken (Inspect).
Outcome<CallParameters> parse_parameters(std::string_view query, std::string_view timeout_header,
                                         bool with_options);

// Header values come from diagnostics that quote a model's own strings:
// control characters and non-ASCII bytes become '?', so nothing can end a
// header line early.
std::string header_safe(std::string_view text, size_t max_chars);

// The boundary of a multipart/form-data Content-Type; nullopt for any other
// type, "" for a multipart one without a usable boundary.
std::optional<std::string> multipart_boundary(std::string_view content_type);

// The model in a multipart/form-data body (curl -F model=@m.tflite), as the
// body arrives: the bytes of the part named "model" (or of the first part
// with a filename) go to `model`; a body with another part, or none, is
// bad_request.
class MultipartModel {
 public:
  using Sink = std::function<std::optional<Failure>(std::span<const std::byte>)>;
  MultipartModel(std::string boundary, Sink model);
  // The body's next bytes.
  std::optional<Failure> feed(std::string_view bytes);
  // The body ended: it must have ended with the closing delimiter.
  std::optional<Failure> finish();

 private:
  enum class State { kPreamble, kHeaders, kModel, kAfterModel, kEpilogue };
  std::optional<Failure> step();

  const std::string delimiter_;  // "\r\n--BOUNDARY"
  Sink model_;
  State state_ = State::kPreamble;
  std::string pending_;  // bytes not yet taken
  bool have_model_ = false;
};

}  // namespace lite2onnx::server::http
