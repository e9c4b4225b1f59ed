// Configuration by flags and LITE2ONNX_* variables; bad values stop the start.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

void expect_config_error(const std::vector<std::string>& args, const Env& env,
                         const std::string& mention) {
  RunResult r = run_server(args, env);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("invalid configuration"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(mention), std::string::npos) << r.output;
}

TEST(ConfigTest, HelpDocumentsEveryFlagAndVariable) {
  RunResult r = run_server({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--listen",
                           "--metrics-listen",
                           "--workers",
                           "--queue-size",
                           "--max-inflight-bytes",
                           "--max-unary-bytes",
                           "--max-stream-bytes",
                           "--tls-cert",
                           "--tls-key",
                           "--tls-client-ca",
                           "--log-level",
                           "--log-format",
                           "--drain-seconds",
                           "--port-file",
                           "--isolation",
                           "--worker-binary",
                           "--conversion-memory-limit",
                           "--conversion-time-limit",
                           "--stream-idle-timeout",
                           "--http-listen"}) {
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
    std::string env = "LITE2ONNX_";
    for (const char* c = flag + 2; *c; ++c) env += *c == '-' ? '_' : static_cast<char>(toupper(*c));
    EXPECT_NE(r.output.find(env), std::string::npos) << env;
  }
}

TEST(ConfigTest, BadValuesAreClearStartupErrors) {
  expect_config_error({"--workers", "many"}, {}, "--workers");
  expect_config_error({"--workers", "2000"}, {}, "--workers");
  expect_config_error({"--queue-size", "-1"}, {}, "--queue-size");
  expect_config_error({"--max-stream-bytes", "2GiB"}, {}, "--max-stream-bytes");
  expect_config_error({"--max-unary-bytes", "12 parsecs"}, {}, "--max-unary-bytes");
  expect_config_error({"--max-unary-bytes", "10MiB", "--max-inflight-bytes", "1MiB"}, {},
                      "--max-inflight-bytes");
  expect_config_error({"--log-format", "xml"}, {}, "--log-format");
  expect_config_error({"--log-level", "loud"}, {}, "--log-level");
  expect_config_error({"--drain-seconds", "-1"}, {}, "--drain-seconds");
  expect_config_error({"--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/k.pem"},
                      {}, "cannot read '/nonexistent/cert.pem'");
  expect_config_error({"--tls-client-ca", "/nonexistent/ca.pem"}, {}, "--tls-client-ca");
  expect_config_error({"--no-such-flag"}, {}, "--no-such-flag");
  expect_config_error({"--isolation", "container"}, {}, "--isolation");
  expect_config_error({"--conversion-memory-limit", "1MiB"}, {}, "--conversion-memory-limit");
  expect_config_error({"--conversion-time-limit", "-1"}, {}, "--conversion-time-limit");
  expect_config_error({"--stream-idle-timeout", "0"}, {}, "--stream-idle-timeout");
}

TEST(ConfigTest, TheTestHooksAreHidden) {
  RunResult r = run_server({"--help"});
  EXPECT_EQ(r.output.find("test-fault"), std::string::npos) << r.output;
}

TEST(ConfigTest, AMissingWorkerProgramIsAStartupError) {
  RunResult r = run_server({"--listen", "127.0.0.1:0", "--metrics-listen", "", "--http-listen", "",
                            "--worker-binary", "/nonexistent/lite2onnx-worker"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot start the worker '/nonexistent/lite2onnx-worker'"),
            std::string::npos)
      << r.output;
}

TEST(ConfigTest, BadEnvironmentValuesAreStartupErrorsToo) {
  expect_config_error({}, {{"LITE2ONNX_WORKERS", "zero"}}, "--workers");
  expect_config_error({}, {{"LITE2ONNX_MAX_STREAM_BYTES", "4GiB"}}, "--max-stream-bytes");
}

TEST(ConfigTest, AnAddressInUseIsAStartupError) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  RunResult r = run_server({"--listen", taken, "--metrics-listen", "", "--http-listen", ""});
  close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot serve gRPC on '" + taken + "'"), std::string::npos) << r.output;
}

TEST(ConfigTest, EnvironmentVariablesConfigureTheServer) {
  auto server = ServerProcess::start({}, {{"LITE2ONNX_MAX_UNARY_BYTES", "1000"},
                                          {"LITE2ONNX_MAX_INFLIGHT_BYTES", "1MiB"},
                                          {"LITE2ONNX_WORKERS", "3"},
                                          {"LITE2ONNX_LOG_FORMAT", "json"}});
  ASSERT_TRUE(server);
  ConvertResult r = convert(*server->channel(), read_file(mini_mobilenet_path()));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  auto d = error_detail(r.status);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason(), v1::ConversionError::REASON_MODEL_TOO_LARGE);
  const std::string log = server->log();
  EXPECT_NE(log.find(R"("workers":3)"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("max_unary_bytes":1000)"), std::string::npos) << log;
}

TEST(ConfigTest, AnEmptyMetricsVariableTurnsTheEndpointOff) {
  // ServerProcess passes --metrics-listen "" and --http-listen "" only when
  // the variable is absent.
  auto server =
      ServerProcess::start({}, {{"LITE2ONNX_METRICS_LISTEN", ""}, {"LITE2ONNX_HTTP_LISTEN", ""}});
  ASSERT_TRUE(server);
  EXPECT_EQ(server->metrics_port(), 0) << server->log();
  EXPECT_EQ(server->http_port(), 0) << server->log();
  EXPECT_TRUE(convert(*server->channel(), read_file(mini_mobilenet_path())).status.ok());
}

TEST(ConfigTest, DefaultWorkersFollowTheCpusTheProcessMayUse) {
  // Pinned to one CPU (as a cgroup quota or affinity does on Kubernetes), the
  // default is one worker, whatever the machine has.
  auto server = ServerProcess::start({"--log-format", "json"}, {}, /*cpu=*/0);
  ASSERT_TRUE(server);
  const std::string log = server->log();
  EXPECT_NE(log.find(R"("workers":1)"), std::string::npos) << log;
}

TEST(ConfigTest, FlagsWinOverEnvironmentVariables) {
  auto server =
      ServerProcess::start({"--max-unary-bytes", "1MiB"}, {{"LITE2ONNX_MAX_UNARY_BYTES", "1000"}});
  ASSERT_TRUE(server);
  EXPECT_TRUE(convert(*server->channel(), read_file(mini_mobilenet_path())).status.ok());
}

}  // namespace
}  // namespace lite2onnx::server_test
