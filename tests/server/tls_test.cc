// TLS and mutual TLS with a throwaway CA made by openssl at test time.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include "certificates.h"
#include "client.h"
#include "http_client.h"
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

HttpRequest post_model(const std::string& model) {
  HttpRequest r;
  r.target = "/v1/convert?opset=17";
  r.body = model;
  return r;
}

// With --tls-cert the HTTP port serves HTTPS only: the same bytes as gRPC; a
// plaintext request or a broken handshake ends that connection alone.
TEST_F(TlsTest, TheHttpEndpointServesHttps) {
  auto server = ServerProcess::start({"--tls-cert", certs_.path("server.pem"), "--tls-key",
                                      certs_.path("server.key"), "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  ASSERT_GT(port, 0);
  v1::ConvertOptions options;
  options.set_opset(17);
  const ConvertResult grpc_answer =
      convert(*server->channel(tls_credentials(certs_), "localhost"), model_, options);
  ASSERT_TRUE(grpc_answer.status.ok()) << grpc_answer.status.error_message();
  const HttpTls tls{certs_.path("ca.pem"), "", ""};
  const HttpResponse answer = https_call(port, tls, post_model(model_));
  ASSERT_EQ(answer.status, 200) << answer.tls_error << answer.body;
  EXPECT_TRUE(answer.body == grpc_answer.response.onnx_model());

  // Plaintext HTTP and bytes that are not TLS get no answer.
  EXPECT_EQ(http_call(port, post_model(model_), std::chrono::seconds(5)).status, 0);
  http_raw(port, std::string(300, '\x16'), std::chrono::seconds(5));
  // A client that does not trust the server's CA refuses it.
  const HttpResponse untrusting =
      https_call(port, {certs_.path("other.pem"), "", ""}, post_model(model_));
  EXPECT_EQ(untrusting.status, 0);
  EXPECT_NE(untrusting.tls_error.find("certificate verify failed"), std::string::npos)
      << untrusting.tls_error;

  // The server is still well.
  HttpRequest ready;
  ready.method = "GET";
  ready.target = "/readyz";
  EXPECT_EQ(https_call(port, tls, ready).status, 200);
  const HttpResponse again = https_call(port, tls, post_model(model_));
  EXPECT_EQ(again.status, 200) << again.tls_error;
  EXPECT_TRUE(again.body == grpc_answer.response.onnx_model());
}

// Answers of many TLS records and of several writes arrive whole (a head
// written with its body once lost the body over TLS).
TEST_F(TlsTest, LargeHttpsAnswersArriveWhole) {
  auto server = ServerProcess::start({"--tls-cert", certs_.path("server.pem"), "--tls-key",
                                      certs_.path("server.key"), "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  const HttpTls tls{certs_.path("ca.pem"), "", ""};
  HttpRequest operators;
  operators.method = "GET";
  operators.target = "/v1/operators";
  const HttpResponse list = https_call(port, tls, operators);
  ASSERT_EQ(list.status, 200) << list.tls_error;
  EXPECT_GT(list.body.size(), size_t{16} << 10);
  v1::ListOperatorsResponse parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(list.body, &parsed).ok());
  EXPECT_GT(parsed.operators_size(), 100);

  const std::string big = abs_chain_model(20000);
  const ConvertResult grpc_answer =
      convert(*server->channel(tls_credentials(certs_), "localhost"), big);
  ASSERT_TRUE(grpc_answer.status.ok()) << grpc_answer.status.error_message();
  HttpRequest r;
  r.target = "/v1/convert";
  r.body = big;
  r.headers.push_back({"Accept", "application/json"});
  const HttpResponse answer = https_call(port, tls, r);
  ASSERT_EQ(answer.status, 200) << answer.tls_error;
  EXPECT_GT(answer.body.size(), size_t{1} << 20);  // more than one write
  v1::ConvertResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(answer.body, &response).ok());
  EXPECT_TRUE(response.onnx_model() == grpc_answer.response.onnx_model());
}

TEST_F(TlsTest, TheHttpEndpointRequiresAClientCertificateWithMutualTls) {
  auto server = ServerProcess::start({"--tls-cert", certs_.path("server.pem"), "--tls-key",
                                      certs_.path("server.key"), "--tls-client-ca",
                                      certs_.path("ca.pem"), "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  const std::string ca = certs_.path("ca.pem");
  const HttpResponse with_cert = https_call(
      port, {ca, certs_.path("client.pem"), certs_.path("client.key")}, post_model(model_));
  EXPECT_EQ(with_cert.status, 200) << with_cert.tls_error << with_cert.body;

  // TLS 1.3 clients learn of the refusal on their first read.
  const HttpResponse without_cert = https_call(port, {ca, "", ""}, post_model(model_));
  EXPECT_EQ(without_cert.status, 0);
  EXPECT_NE(without_cert.tls_error, "");
  const HttpResponse stranger = https_call(
      port, {ca, certs_.path("stranger.pem"), certs_.path("stranger.key")}, post_model(model_));
  EXPECT_EQ(stranger.status, 0);
  EXPECT_NE(stranger.tls_error, "");
  EXPECT_EQ(http_call(port, post_model(model_), std::chrono::seconds(5)).status, 0);

  EXPECT_EQ(https_call(port, {ca, certs_.path("client.pem"), certs_.path("client.key")},
                       post_model(model_))
                .body,
            with_cert.body);
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
  RunResult r =
      run_server({"--listen", "127.0.0.1:0", "--metrics-listen", "", "--http-listen", "",
                  "--tls-cert", certs_.path("server.pem"), "--tls-key", certs_.path("san.ext")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot serve gRPC"), std::string::npos) << r.output;
}

// The HTTP port starts first and names OpenSSL's reason.
TEST_F(TlsTest, BadTlsMaterialIsAStartupErrorOfTheHttpPort) {
  RunResult r =
      run_server({"--listen", "127.0.0.1:0", "--metrics-listen", "", "--http-listen", "127.0.0.1:0",
                  "--tls-cert", certs_.path("server.pem"), "--tls-key", certs_.path("san.ext")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot serve HTTP on '127.0.0.1:0': bad TLS key"), std::string::npos)
      << r.output;
  r = run_server({"--listen", "127.0.0.1:0", "--metrics-listen", "", "--http-listen", "127.0.0.1:0",
                  "--tls-cert", certs_.path("server.pem"), "--tls-key", certs_.path("client.key")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("bad TLS key"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mismatch"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lite2onnx::server_test
