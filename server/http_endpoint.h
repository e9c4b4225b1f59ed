// The HTTP/1.1 endpoint (--http-listen): POST /v1/convert and /v1/inspect
// with the raw .tflite bytes as the body and options as query parameters,
// GET /v1/operators, /healthz and /readyz; HTTPS only (and mutual TLS) when
// the server has --tls-cert. Served by Boost.Beast over Boost.Asio (and its
// OpenSSL stream): a request head of at most 16 KiB, a bounded number of
// connections, an idle timeout on every read and write (the TLS handshake
// too), keep-alive, no compression and no file serving. Calls share the gRPC
// service's pool, queue, memory budget, metrics (protocol="http") and
// request log (server/call.h); docs/service.md has the API reference and why
// Beast (civetweb's TLS and cpp-httplib's unbounded heads, measured).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/status.h"
#include "server/config.h"

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
  unsigned connections = 8;     // connections served at once; more wait in the backlog
};

class HttpEndpoint {
 public:
  HttpEndpoint();
  ~HttpEndpoint();  // stop()
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Listens on `listen` (HOST:PORT, port 0: any free), in TLS when
  // tls.enabled() (requiring a client certificate signed by tls.client_ca_file
  // when tls.mutual()); `env` outlives the endpoint.
  Status start(const std::string& listen, HttpLimits limits, const TlsOptions& tls,
               CallEnvironment& env);
  int port() const { return port_; }
  // Closes the listener, cancels the calls still in progress, waits for their
  // answers, then closes every connection.
  void stop();

  struct Server;  // the listener, its io threads and the connections (http_endpoint.cc)

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace lite2onnx::server
