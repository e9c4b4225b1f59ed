// The suite's own HTTP/1.1 client: one request per connection over a plain
// socket (or OpenSSL over it), so that tests can also send what no library
// would (a huge header, a body shorter than its Content-Length, chunks, a
// stalled upload).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lite2onnx::server_test {

struct HttpRequest {
  std::string method = "POST";
  std::string target;  // "/v1/convert?opset=17"
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Sends "Expect: 100-continue" and the head alone, then the body only
  // after an interim "100 Continue" (a final answer instead ends the call).
  bool expect_continue = false;
  bool chunked = false;  // Transfer-Encoding: chunked, in 64 KiB chunks
};

struct HttpResponse {
  int status = 0;                              // 0: no answer
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool continued = false;  // an interim "100 Continue" came first
  bool body_sent = false;  // the request's body went out (expect_continue)
  std::string tls_error;   // https_call: why the handshake or a TLS read failed

  std::string header(const std::string& name) const;
};

HttpResponse http_call(int port, const HttpRequest& request,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30));

// HTTPS: the server's certificate must be valid for "localhost" and signed by
// ca_file; cert_file and key_file (optional) are the client's, for mutual TLS.
struct HttpTls {
  std::string ca_file, cert_file, key_file;
};

HttpResponse https_call(int port, const HttpTls& tls, const HttpRequest& request,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Sends `bytes` as they are, then reads one answer (until the connection
// closes or `timeout`).
HttpResponse http_raw(int port, const std::string& bytes,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Sends `start`, then `unit` over and over, until `max_bytes` went out or the
// server stopped taking them (it closed the connection); returns the bytes sent.
size_t http_flood(int port, const std::string& start, const std::string& unit, size_t max_bytes,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace lite2onnx::server_test
