#include "server/http_answer.h"

#include <google/protobuf/util/json_util.h>

#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>
#include <numeric>

#include "common/translate.h"

namespace lite2onnx::server::http {

std::string head_of(int status, std::string_view content_type, uint64_t body_bytes,
                    const std::vector<Header>& headers, bool keep_alive, unsigned version) {
  const auto reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " +
                     std::string(reason.data(), reason.size()) +
                     "\r\nContent-Type: " + std::string(content_type) +
                     "\r\nContent-Length: " + std::to_string(body_bytes) + "\r\n";
  for (const Header& h : headers) head += h.name + ": " + h.value + "\r\n";
  if (!keep_alive)
    head += "Connection: close\r\n";
  else if (version == 10)  // HTTP/1.0 closes unless told otherwise
    head += "Connection: keep-alive\r\n";
  return head + "\r\n";
}

Answer error_answer(const Failure& f, std::string_view request_id) {
  const ErrorReason& r = *f.reason;
  nlohmann::ordered_json unsupported = nlohmann::ordered_json::array();
  for (const auto& u : f.error.unsupported)
    unsupported.push_back({{"op_index", u.op_index},
                           {"op", u.op},
                           {"reason", u.reason},
                           {"reason_code", u.reason_code},
                           {"subgraph", u.subgraph}});
  const nlohmann::ordered_json error = {{"error",
                                         {{"reason", r.name},
                                          {"status", r.http_status ? r.http_status : 500},
                                          {"grpc_code", r.grpc_code_name},
                                          {"retryable", r.retryable},
                                          {"message", f.error.message},
                                          {"request_id", request_id},
                                          {"op_index", f.error.op_index},
                                          {"tensor", f.error.tensor},
                                          {"unsupported", std::move(unsupported)}}}};
  Answer a;
  a.status = r.http_status ? r.http_status : 500;
  a.content_type = "application/json";
  a.body = error.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  a.headers.push_back({"X-Request-Id", std::string(request_id)});
  if (a.status == 429 || a.status == 503) a.headers.push_back({"Retry-After", "1"});
  return a;
}

std::string diagnostics_summary(const Diagnostics& d) {
  const int64_t nodes =
      std::accumulate(d.emitted_nodes.begin(), d.emitted_nodes.end(), int64_t{0},
                      [](int64_t sum, const auto& kv) { return sum + kv.second; });
  return "opset=" + std::to_string(d.opset) + "; onnx_bytes=" + std::to_string(d.onnx_bytes) +
         "; nodes=" + std::to_string(nodes) +
         "; transposes=" + std::to_string(d.transposes_after_cleanup) +
         "; warnings=" + std::to_string(d.warnings.size()) +
         (d.cache.empty() ? "" : "; cache=" + d.cache);
}

void JsonAnswer::append_base64(std::string_view bytes, std::string& out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  out.reserve(out.size() + base64_bytes(n));
  for (; n >= 3; n -= 3, p += 3) {
    const uint32_t v = uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (n > 0) {
    const uint32_t v = uint32_t{p[0]} << 16 | (n > 1 ? uint32_t{p[1]} << 8 : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += n > 1 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

JsonAnswer json_answer(const Diagnostics& diagnostics) {
  v1::Diagnostics message;
  to_proto(diagnostics, &message);
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json).ok()) json = "{}";
  return {R"({"onnxModel":")", R"(","diagnostics":)" + json + "}"};
}

}  // namespace lite2onnx::server::http
