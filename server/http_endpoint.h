// The HTTP/1.1 endpoint (--http-listen): POST /v1/convert and /v1/inspect
// with the .tflite bytes as the body (raw, or the one part of a
// multipart/form-data upload) and options as query parameters, GET
// /v1/operators, /openapi.yaml, and the probes /healthz, /livez and /readyz;
// HTTPS only (and mutual TLS) when the server has --tls-cert. Served by
// Boost.Beast over Boost.Asio (and its OpenSSL stream) on two I/O threads
// that only move bytes: calls go through the call core (server/calls/call.h),
// JSON is made on a thread of its own. docs/http-api.md has the API,
// docs/openapi.yaml its description (served), docs/service.md why Beast.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "server/calls/pace.h"
#include "server/config.h"

namespace lite2onnx::server {

class CallCore;

struct HttpLimits {
  // A request head (request line and headers) must arrive within this, on a
  // new connection or between the requests of a kept-alive one; the TLS
  // handshake too. A connection that sends none is closed.
  double head_timeout_seconds = 10;
  // Connections open at once; at the cap, a new one closes the connection
  // that has waited longest for a request (never one with a call in progress).
  unsigned max_connections = 512;
  RateLimit send;  // answers outside a call (probes, refusals of a head)
};

class HttpEndpoint {
 public:
  HttpEndpoint();
  ~HttpEndpoint();  // stop()
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Listens on `listen` (HOST:PORT, port 0: any free), in TLS when
  // tls.enabled() (requiring a client certificate signed by tls.client_ca_file
  // when tls.mutual()); `core` outlives the endpoint.
  Status start(const std::string& listen, HttpLimits limits, const TlsOptions& tls, CallCore& core);
  int port() const { return port_; }
  // Closes the listener, cancels the calls still in progress, waits for their
  // answers, then closes every connection.
  void stop();

  struct Server;  // the listener, its I/O threads and the connections (http_server.cc)

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace lite2onnx::server
