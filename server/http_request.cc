#include "server/http_request.h"

#include <charconv>
#include <cmath>

#include "common/translate.h"
#include "core/option_table.h"
#include "server/calls/option_texts.h"
#include "server/text.h"

namespace lite2onnx::server::http {
namespace {

// A part's headers are read whole: at most this much.
constexpr size_t kMaxPartHeaderBytes = 16 * 1024;

std::optional<double> parse_seconds(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= 0 ||
      v > 1e7)
    return std::nullopt;
  return v;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::optional<std::string> url_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      unsigned byte = 0;
      if (i + 2 >= text.size()) return std::nullopt;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, byte, 16);
      if (ec != std::errc() || end != text.data() + i + 3) return std::nullopt;
      out += static_cast<char>(byte);
      i += 2;
    }
  }
  return out;
}

Failure invalid_option(std::string message) {
  return make_failure(reason_named("invalid_option"), std::move(message));
}

Failure bad_request(std::string message) {
  return make_failure(reason_named("bad_request"), std::move(message));
}

}  // namespace

std::string header_safe(std::string_view text, size_t max_chars) {
  std::string out(text.substr(0, max_chars));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}

Outcome<CallParameters> parse_parameters(std::string_view query, std::string_view timeout_header,
                                         bool with_options) {
  CallParameters p;
  ConvertOptions options;
  auto set_timeout = [&](std::string_view text) -> std::optional<Failure> {
    auto seconds = parse_seconds(text);
    if (!seconds)
      return invalid_option("timeout: '" + header_safe(text, 64) +
                            "' (seconds, a positive number)");
    p.deadline = std::chrono::system_clock::now() +
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(
                     std::chrono::duration<double>(*seconds));
    return std::nullopt;
  };
  if (!timeout_header.empty())
    if (auto bad = set_timeout(timeout_header)) return *bad;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    auto name = url_decoded(item.substr(0, eq));
    auto value = url_decoded(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (!name || !value)
      return invalid_option("the query parameter '" + header_safe(item, 64) +
                            "' is not URL-encoded");
    // Checked before anything quotes them, or they reach protobuf.
    if (auto bad = check_option_text(*name, *name)) return *bad;
    if (auto bad = check_option_text(*name, *value)) return *bad;
    if (*name == "timeout") {
      if (auto bad = set_timeout(*value)) return *bad;
    } else if (!with_options) {
      return invalid_option("unknown parameter '" + escaped(*name) + "' (only timeout)");
    } else if (auto st = set_option(options, *name, *value); !st) {
      return failure_of(st.take_error());
    }
  }
  if (with_options) p.options = to_proto(options);
  return p;
}

std::optional<std::string> multipart_boundary(std::string_view content_type) {
  const std::string_view kType = "multipart/form-data";
  if (content_type.size() < kType.size()) return std::nullopt;
  for (size_t i = 0; i < kType.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(content_type[i])) != kType[i]) return std::nullopt;
  const size_t at = content_type.find("boundary=");
  if (at == std::string_view::npos) return "";
  std::string_view b = content_type.substr(at + 9);
  b = b.substr(0, b.find(';'));
  if (b.size() >= 2 && b.front() == '"' && b.back() == '"') b = b.substr(1, b.size() - 2);
  if (b.empty() || b.size() > 70) return "";  // RFC 2046: 1..70 characters
  return std::string(b);
}

MultipartModel::MultipartModel(std::string boundary, Sink model)
    : delimiter_("\r\n--" + boundary), model_(std::move(model)) {
  // The first delimiter may start the body: as if a line ended before it.
  pending_ = "\r\n";
}

std::optional<Failure> MultipartModel::feed(std::string_view bytes) {
  pending_.append(bytes);
  return step();
}

std::optional<Failure> MultipartModel::step() {
  for (;;) {
    switch (state_) {
      case State::kPreamble: {
        const size_t at = pending_.find(delimiter_ + "\r\n");
        if (at == std::string::npos) {
          if (pending_.size() > kMaxPartHeaderBytes)
            return bad_request("the multipart body does not start with its boundary");
          return std::nullopt;
        }
        pending_.erase(0, at + delimiter_.size() + 2);
        state_ = State::kHeaders;
        break;
      }
      case State::kHeaders: {
        const size_t end = pending_.find("\r\n\r\n");
        if (end == std::string::npos) {
          if (pending_.size() > kMaxPartHeaderBytes)
            return bad_request("a multipart part's headers exceed 16 KiB");
          return std::nullopt;
        }
        const std::string headers = pending_.substr(0, end);
        pending_.erase(0, end + 4);
        const bool model = headers.find("name=\"model\"") != std::string::npos ||
                           headers.find("filename=") != std::string::npos;
        if (!model || have_model_)
          return bad_request(
              "a multipart upload carries one part, the model (curl -F model=@model.tflite); "
              "options go in the query string");
        have_model_ = true;
        state_ = State::kModel;
        break;
      }
      case State::kModel: {
        const size_t at = pending_.find(delimiter_);
        const size_t keep = at == std::string::npos ? delimiter_.size() - 1 : 0;
        const size_t take = at != std::string::npos  ? at
                            : pending_.size() > keep ? pending_.size() - keep
                                                     : 0;
        if (take > 0)
          if (auto refused = model_(std::as_bytes(std::span(pending_.data(), take))))
            return refused;
        pending_.erase(0, take);
        if (at == std::string::npos) return std::nullopt;
        pending_.erase(0, delimiter_.size());
        state_ = State::kAfterModel;
        break;
      }
      case State::kAfterModel:
        if (pending_.size() < 2) return std::nullopt;
        if (pending_.compare(0, 2, "--") != 0)
          return bad_request(
              "a multipart upload carries one part, the model; options go in the query string");
        state_ = State::kEpilogue;
        break;
      case State::kEpilogue:
        pending_.clear();
        return std::nullopt;
    }
  }
}

std::optional<Failure> MultipartModel::finish() {
  if (state_ != State::kEpilogue)
    return bad_request(have_model_ ? "the multipart body ended inside the model part"
                                   : "the multipart body has no model part (curl -F "
                                     "model=@model.tflite)");
  return std::nullopt;
}

}  // namespace lite2onnx::server::http
