// The gRPC listener: the Converter service plus grpc.health.v1 and server
// reflection, in plaintext or (mutual) TLS.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "server/config.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace lite2onnx::server {

class GrpcEndpoint {
 public:
  GrpcEndpoint();
  ~GrpcEndpoint();  // stop() at once if still running
  GrpcEndpoint(const GrpcEndpoint&) = delete;
  GrpcEndpoint& operator=(const GrpcEndpoint&) = delete;

  // Listens on options.listen and serves `service`, named `service_name` for
  // the health service (it must outlive this).
  Status start(const GrpcOptions& options, const TlsOptions& tls, uint64_t max_message_bytes,
               grpc::Service& service, const std::string& service_name);
  int port() const { return port_; }
  // Health of every service, as grpc.health.v1 reports it.
  void set_serving(bool serving);
  // Refuses new calls, waits for running ones until `deadline`, cancels the rest.
  void stop(std::chrono::system_clock::time_point deadline);

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace lite2onnx::server
