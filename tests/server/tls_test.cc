// TLS and mutual TLS with a throwaway CA made by openssl at test time.
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include "certificates.h"
#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

std::shared_ptr<grpc::ChannelCredentials> tls_credentials(const Certificates& c,
                                                          const std::string& client = "") {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = c.pem("ca.pem");
  if (!client.empty()) {
    options.pem_private_key = c.pem(client + ".key");
    options.pem_cert_chain = c.pem(client + ".pem");
  }
  return grpc::SslCredentials(options);
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok()) << certs_.log();
    model_ = read_file(mini_mobilenet_path());
  }
  Certificates certs_;
  std::string model_;
};

TEST_F(TlsTest, ServesTls) {
  auto server = ServerProcess::start(
      {"--tls-cert", certs_.path("server.pem"), "--tls-key", certs_.path("server.key")});
  ASSERT_TRUE(server);
  auto secure = server->channel(tls_credentials(certs_), "localhost");
  ConvertResult r = convert(*secure, model_);
  EXPECT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(health(*secure), "SERVING");
  auto plain = server->channel();
  EXPECT_EQ(convert(*plain, model_, {}, std::chrono::seconds(5)).status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// The HTTP endpoint does not serve TLS yet: with --tls-cert it stays off
// (plain HTTP would carry what TLS was asked to protect) and the log says so.
TEST_F(TlsTest, TheHttpEndpointStaysOffWithTls) {
  auto server = ServerProcess::start({"--tls-cert", certs_.path("server.pem"), "--tls-key",
                                      certs_.path("server.key"), "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  EXPECT_EQ(server->http_port(), 0);
  EXPECT_NE(server->log().find("HTTP endpoint off"), std::string::npos) << server->log();
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateFromTheCa) {
  auto server =
      ServerProcess::start({"--tls-cert", certs_.path("server.pem"), "--tls-key",
                            certs_.path("server.key"), "--tls-client-ca", certs_.path("ca.pem")});
  ASSERT_TRUE(server);
  auto with_cert = server->channel(tls_credentials(certs_, "client"), "localhost");
  ConvertResult r = convert(*with_cert, model_);
  EXPECT_TRUE(r.status.ok()) << r.status.error_message();

  auto without_cert = server->channel(tls_credentials(certs_), "localhost");
  EXPECT_EQ(convert(*without_cert, model_, {}, std::chrono::seconds(5)).status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
  auto stranger = server->channel(tls_credentials(certs_, "stranger"), "localhost");
  EXPECT_EQ(convert(*stranger, model_, {}, std::chrono::seconds(5)).status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, AKeyThatIsNotPemIsAStartupError) {
  RunResult r = run_server({"--listen", "127.0.0.1:0", "--metrics-listen", "", "--tls-cert",
                            certs_.path("server.pem"), "--tls-key", certs_.path("san.ext")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot serve gRPC"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lite2onnx::server_test
