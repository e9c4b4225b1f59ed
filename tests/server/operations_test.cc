// What operators rely on: health, reflection, metrics, logs, graceful shutdown.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(OperationsTest, HealthReportsServing) {
  auto server = ServerProcess::start({});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  EXPECT_EQ(health(*channel), "SERVING");
  EXPECT_EQ(health(*channel, "lite2onnx.v1.Converter"), "SERVING");
}

TEST(OperationsTest, ReflectionDescribesEveryService) {
  auto server = ServerProcess::start({});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  const auto services = reflected_services(*channel);
  EXPECT_TRUE(contains(services, "lite2onnx.v1.Converter"));
  EXPECT_TRUE(contains(services, "grpc.health.v1.Health"));
  EXPECT_TRUE(contains(services, "grpc.reflection.v1alpha.ServerReflection"));
  const auto files = reflected_files(*channel, "lite2onnx.v1.Converter");
  EXPECT_TRUE(contains(files, "lite2onnx/v1/converter.proto"));
  // The error details a client decodes, and the health messages.
  EXPECT_TRUE(contains(reflected_files(*channel, "google.rpc.Status"), "google/rpc/status.proto"));
  EXPECT_FALSE(reflected_files(*channel, "grpc.health.v1.HealthCheckResponse").empty());
}

TEST(OperationsTest, MetricsCountKnownTraffic) {
  // Every call converts: no cache.
  auto server = ServerProcess::start({"--metrics-listen", "127.0.0.1:0", "--workers", "2",
                                      "--cache-bytes", "0", "--max-inflight-bytes", "100MiB",
                                      "--max-operators", "1000000", "--max-tensors", "1000000"});
  ASSERT_TRUE(server);
  ASSERT_GT(server->metrics_port(), 0);
  auto channel = server->channel();
  const std::string model = read_file(mini_mobilenet_path());
  ASSERT_TRUE(convert(*channel, model).status.ok());
  ASSERT_TRUE(convert(*channel, model).status.ok());
  ASSERT_TRUE(convert_stream(*channel, model, {}, 1000).status.ok());
  ASSERT_FALSE(convert(*channel, "garbage").status.ok());
  ASSERT_FALSE(convert(*channel, unsupported_ops_model()).status.ok());

  // Each call is counted just after its answer: wait for the last ones.
  const int port = server->metrics_port();
  wait_for_metric(
      port, R"(lite2onnx_request_duration_seconds_count{method="Convert",protocol="grpc"})", 4);
  wait_for_metric(
      port, R"(lite2onnx_request_duration_seconds_count{method="ConvertStream",protocol="grpc"})",
      1);
  const std::string m = http_get(port, "/metrics");
  auto value = [&m](const std::string& series) { return metric(m, series).value_or(-1); };
  EXPECT_EQ(
      value(R"(lite2onnx_requests_total{code="OK",method="Convert",protocol="grpc",reason="ok"})"),
      2);
  EXPECT_EQ(
      value(
          R"(lite2onnx_requests_total{code="OK",method="ConvertStream",protocol="grpc",reason="ok"})"),
      1);
  EXPECT_EQ(
      value(
          R"(lite2onnx_requests_total{code="INVALID_ARGUMENT",method="Convert",protocol="grpc",reason="invalid_model"})"),
      1);
  EXPECT_EQ(
      value(
          R"(lite2onnx_requests_total{code="UNIMPLEMENTED",method="Convert",protocol="grpc",reason="unsupported"})"),
      1);
  EXPECT_EQ(value(R"(lite2onnx_request_duration_seconds_count{method="Convert",protocol="grpc"})"),
            4);
  EXPECT_EQ(value(R"(lite2onnx_conversions_total{outcome="ok"})"), 3);
  EXPECT_EQ(value(R"(lite2onnx_conversions_total{outcome="invalid_model"})"), 1);
  EXPECT_EQ(value(R"(lite2onnx_conversions_total{outcome="unsupported"})"), 1);
  EXPECT_EQ(value(R"(lite2onnx_conversion_phase_duration_seconds_count{phase="emit"})"), 3);
  // Every conversion that ran has a total, also those that failed.
  EXPECT_EQ(value(R"(lite2onnx_conversion_phase_duration_seconds_count{phase="total"})"), 5);
  EXPECT_EQ(value(R"(lite2onnx_model_size_bytes_count{direction="in"})"), 5);
  EXPECT_EQ(value(R"(lite2onnx_model_size_bytes_count{direction="out"})"), 3);
  EXPECT_GT(value(R"(lite2onnx_model_size_bytes_sum{direction="out"})"), 3000);
  EXPECT_GT(value(R"(lite2onnx_conversion_operators_total{op="CONV_2D",outcome="ok"})"), 0);
  // Custom op names from the network collapse into one label; builtins keep theirs.
  EXPECT_EQ(value(R"(lite2onnx_conversion_operators_total{op="custom",outcome="unsupported"})"), 2);
  EXPECT_EQ(value(R"(lite2onnx_unsupported_operators_total{op="custom"})"), 2);
  EXPECT_EQ(value(R"(lite2onnx_unsupported_operators_total{op="HASHTABLE_LOOKUP"})"), 1);
  EXPECT_EQ(m.find("MyCustomOp"), std::string::npos);
  EXPECT_EQ(value("lite2onnx_queue_depth"), 0);
  // A worker thread marks itself idle just after its call's answer went out.
  EXPECT_EQ(wait_for_metric_at_most(port, "lite2onnx_workers_busy", 0), 0);
  EXPECT_EQ(value("lite2onnx_workers"), 2);
  EXPECT_EQ(value("lite2onnx_inflight_requests"), 0);
  EXPECT_EQ(value("lite2onnx_inflight_model_bytes"), 0);
  EXPECT_EQ(value("lite2onnx_inflight_model_bytes_limit"), 100 * 1024 * 1024);
  EXPECT_EQ(value("lite2onnx_queue_wait_seconds_count"), 5);
  EXPECT_NE(m.find("lite2onnx_build_info{version="), std::string::npos);
}

TEST(OperationsTest, OneTextLogLinePerRequestWithoutModelBytes) {
  auto server = ServerProcess::start({});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  v1::ConvertOptions options;
  options.set_opset(14);
  ConvertResult r = convert(*channel, read_file(mini_mobilenet_path()), options);
  ASSERT_TRUE(r.status.ok());
  ASSERT_FALSE(convert(*channel, "garbage-model-bytes").status.ok());
  const std::string log = server->wait_for_log(" info request ", 2);
  std::istringstream lines(log);
  std::vector<std::string> requests;
  for (std::string line; std::getline(lines, line);)
    if (line.find(" info request ") != std::string::npos) requests.push_back(line);
  ASSERT_EQ(requests.size(), 2u) << log;
  // Each line is written just after its answer, by the worker that ran the call:
  // two calls in a row may log in either order.
  if (requests[0].find("request_id=" + r.request_id) == std::string::npos)
    std::swap(requests[0], requests[1]);
  EXPECT_NE(requests[0].find("request_id=" + r.request_id), std::string::npos) << requests[0];
  for (const char* field :
       {"method=Convert", "model_bytes=3", "options=\"opset=14 ", "status=OK", "duration_ms="})
    EXPECT_NE(requests[0].find(field), std::string::npos) << field << " in " << requests[0];
  EXPECT_NE(requests[1].find("status=INVALID_ARGUMENT"), std::string::npos) << requests[1];
  EXPECT_EQ(log.find("garbage-model-bytes"), std::string::npos) << "model bytes were logged";
}

TEST(OperationsTest, JsonLogsAreOneObjectPerLine) {
  auto server = ServerProcess::start({"--log-format", "json", "--log-level", "debug"});
  ASSERT_TRUE(server);
  ConvertResult r = convert(*server->channel(), read_file(mini_mobilenet_path()));
  ASSERT_TRUE(r.status.ok());
  std::istringstream lines(server->wait_for_log(R"("msg":"request")"));
  int requests = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << line;
    EXPECT_TRUE(j.contains("time") && j.contains("level") && j.contains("msg")) << line;
    if (j["msg"] != "request") continue;
    ++requests;
    EXPECT_EQ(j["request_id"], r.request_id);
    EXPECT_EQ(j["method"], "Convert");
    EXPECT_EQ(j["status"], "OK");
    EXPECT_GT(j["model_bytes"].get<uint64_t>(), 0u);
    EXPECT_TRUE(j["duration_ms"].is_number());
  }
  EXPECT_EQ(requests, 1);
}

TEST(OperationsTest, SigtermDrainsInFlightWorkThenExitsZero) {
  // The call in flight: a small model whose worker first waits 5 s (a test
  // hook), so that its answer is small too (a large answer raced the server's
  // exit: see docs/service.md, Shutdown), and so that the signal, the health
  // check and the refused call below happen while it waits, even on a loaded
  // machine.
  auto server =
      ServerProcess::start({"--workers", "1", "--metrics-listen", "127.0.0.1:0", "--drain-seconds",
                            "300", "--test-fault-hooks", "--log-level", "debug"});
  ASSERT_TRUE(server);
  const std::string model = read_file(mini_mobilenet_path());
  std::future<ConvertResult> in_flight;
  ASSERT_TRUE(server->wait_for_job_sent([&] {
    in_flight = std::async(std::launch::async, [&server, &model] {
      return convert(*server->channel(), model, {}, std::chrono::milliseconds(0),
                     {{"x-lite2onnx-test-fault", "delay=5000"}});
    });
  }));
  auto channel = server->channel();
  ASSERT_EQ(health(*channel), "SERVING");
  server->send_signal(SIGTERM);
  // While the conversion runs: health says NOT_SERVING and new calls are refused.
  std::string status;
  for (auto end = std::chrono::steady_clock::now() + 30s;
       (status = health(*channel)) != "NOT_SERVING" && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(status, "NOT_SERVING");
  ConvertResult refused = convert(*channel, read_file(mini_mobilenet_path()));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  if (auto d = error_detail(refused.status)) {
    EXPECT_EQ(d->reason(), v1::ConversionError::REASON_SHUTTING_DOWN);
  }
  // The conversion in flight completes; then the server exits 0.
  ConvertResult done = in_flight.get();
  ASSERT_TRUE(done.status.ok()) << done.status.error_message() << "\n" << server->log();
  EXPECT_EQ(done.response.diagnostics().source_ops().count("CONV_2D"), 1u);
  EXPECT_FALSE(done.response.onnx_model().empty());
  EXPECT_EQ(server->wait_exit(60s), 0) << server->log();  // a guard
  const std::string log = server->log();
  EXPECT_NE(log.find("draining signal=SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("info stopped"), std::string::npos) << log;
}

TEST(OperationsTest, DrainGracePeriodIsBounded) {
  auto server = ServerProcess::start({"--workers", "1", "--drain-seconds", "0.1",
                                      "--metrics-listen", "127.0.0.1:0", "--max-operators",
                                      "1000000", "--max-tensors", "1000000"});
  ASSERT_TRUE(server);
  const std::string model = abs_chain_model(200000);
  auto in_flight = std::async(std::launch::async,
                              [&server, &model] { return convert(*server->channel(), model); });
  ASSERT_EQ(wait_for_metric(server->metrics_port(), "lite2onnx_workers_busy", 1), 1);
  server->send_signal(SIGINT);
  EXPECT_FALSE(in_flight.get().status.ok());
  EXPECT_EQ(server->wait_exit(60s), 0) << server->log();  // a guard
  EXPECT_NE(server->log().find("grace period over"), std::string::npos) << server->log();
}

}  // namespace
}  // namespace lite2onnx::server_test
