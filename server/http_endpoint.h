// The HTTP/1.1 endpoint (--http-listen): POST /v1/convert and /v1/inspect
// with the raw .tflite bytes as the body and options as query parameters,
// GET /v1/operators, /healthz and /readyz. Served by civetweb (Debian's
// libcivetweb, already in the process for /metrics): bounded request headers,
// a fixed set of connection threads, per-read timeouts, no compression and no
// file serving. Calls share the gRPC service's pool, queue, memory budget,
// metrics (protocol="http") and request log (server/call.h); docs/service.md
// has the API reference.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "core/status.h"

struct mg_context;

namespace lite2onnx::server {

struct CallEnvironment;
class StopSignal;

// The stop signals of the calls in progress: stop() cancels what the drain's
// grace period left.
class ActiveCalls {
 public:
  void add(StopSignal* stop);
  void remove(StopSignal* stop);
  void cancel_all();

 private:
  std::mutex mu_;
  std::set<StopSignal*> calls_;
};

struct HttpLimits {
  uint64_t max_body_bytes = 0;  // largest model in one request body
  double idle_seconds = 30;     // longest wait for one read or write of the connection
  unsigned threads = 8;         // connections served at once
};

class HttpEndpoint {
 public:
  HttpEndpoint() = default;
  ~HttpEndpoint();  // stop()
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Listens on `listen` (HOST:PORT, port 0: any free); `env` outlives the endpoint.
  Status start(const std::string& listen, HttpLimits limits, CallEnvironment& env);
  int port() const { return port_; }
  // Cancels the calls still in progress, waits for their answers, then closes
  // the listener.
  void stop();

  struct Handlers;  // the request handlers (http_endpoint.cc)

 private:
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  HttpLimits limits_;
  CallEnvironment* env_ = nullptr;
  ActiveCalls active_;
  std::string operators_json_;  // GET /v1/operators, written once
  std::string last_message_;    // civetweb's last log message, for start()'s error
};

}  // namespace lite2onnx::server
