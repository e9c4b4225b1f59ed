#include "server/grpc_endpoint.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <fstream>
#include <sstream>

#include "grpc/health/v1/health.pb.h"

namespace lite2onnx::server {
namespace {

// Room for the options and framing around a model of the largest allowed size.
constexpr uint64_t kMessageOverheadBytes = uint64_t{1} << 20;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::shared_ptr<grpc::ServerCredentials> credentials(const TlsOptions& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.mutual() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({read_file(tls.key_file), read_file(tls.cert_file)});
  if (tls.mutual()) options.pem_root_certs = read_file(tls.client_ca_file);
  return grpc::SslServerCredentials(options);
}

}  // namespace

GrpcEndpoint::GrpcEndpoint() = default;

GrpcEndpoint::~GrpcEndpoint() {
  if (server_) stop(std::chrono::system_clock::now());
}

Status GrpcEndpoint::start(const GrpcOptions& options, const TlsOptions& tls,
                           uint64_t max_message_bytes, grpc::Service& service,
                           const std::string& service_name) {
  // Both must come before the builder exists.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  // Reflection describes only messages linked in: keep the health messages.
  (void)grpc::health::v1::HealthCheckResponse::descriptor();

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials(tls), &port_);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<uint64_t>(max_message_bytes + kMessageOverheadBytes, INT32_MAX)));
  // Clients ping idle connections every 20 s (common/service_config.h), to
  // notice a pod that vanished; accept that instead of answering too_many_pings.
  // gRPC receives a unary message whole before the call core admits it (and
  // counts it in the budget): a resource quota bounds what gRPC's buffers hold,
  // one largest message and some room, so that many large unary calls at once
  // wait or are refused instead of being received together (docs/service.md).
  grpc::ResourceQuota quota("lite2onnx-grpc");
  quota.Resize(static_cast<size_t>(max_message_bytes + kMessageOverheadBytes + (16u << 20)));
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10'000);
  builder.RegisterService(&service);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    server_.reset();
    return make_error(ErrorCode::kInvalidOption,
                      "cannot serve gRPC on '" + options.listen +
                          "' (address in use or not valid, or bad TLS certificate or key)");
  }
  server_->GetHealthCheckService()->SetServingStatus(service_name, true);
  return ok_status();
}

void GrpcEndpoint::set_serving(bool serving) {
  if (server_) server_->GetHealthCheckService()->SetServingStatus(serving);
}

void GrpcEndpoint::stop(std::chrono::system_clock::time_point deadline) {
  if (!server_) return;
  server_->Shutdown(deadline);
  server_->Wait();
  server_.reset();
}

}  // namespace lite2onnx::server
