// The HTTP endpoint against the real server: the same answers as gRPC, the
// error table's statuses, refusals before the body is read, and requests no
// well-behaved client sends.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client.h"
#include "http_client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

std::unique_ptr<ServerProcess> start_http(std::vector<std::string> args = {}) {
  args.insert(args.end(), {"--http-listen", "127.0.0.1:0"});
  auto server = ServerProcess::start(args);
  if (server) {
    EXPECT_GT(server->http_port(), 0);
  }
  return server;
}

HttpRequest get(const std::string& target) {
  HttpRequest r;
  r.method = "GET";
  r.target = target;
  return r;
}

HttpRequest post(const std::string& target, std::string body) {
  HttpRequest r;
  r.target = target;
  r.body = std::move(body);
  return r;
}

// As a client honouring Retry-After would: a worker being replaced keeps its
// pool slot busy for a moment (with --queue-size 0 the call is refused).
HttpResponse call_while_busy(int port, const HttpRequest& r) {
  HttpResponse answer;
  for (int attempt = 0; attempt < 50; ++attempt) {
    answer = http_call(port, r);
    if (answer.status != 429) break;
    std::this_thread::sleep_for(100ms);
  }
  return answer;
}

// The error envelope's "error" object (every non-2xx answer has one).
json error_of(const HttpResponse& r) {
  EXPECT_EQ(r.header("content-type"), "application/json");
  const json envelope = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(envelope.is_object() && envelope.contains("error")) << r.body;
  return envelope.is_object() ? envelope.value("error", json()) : json();
}

TEST(HttpTest, ConvertAnswersTheGrpcBytes) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const std::string model = read_file(mini_mobilenet_path());
  v1::ConvertOptions options;
  options.set_opset(17);
  options.set_keep_io_layout(true);
  const ConvertResult grpc_answer = convert(*server->channel(), model, options);
  ASSERT_TRUE(grpc_answer.status.ok()) << grpc_answer.status.error_message();

  HttpRequest r = post("/v1/convert?opset=17&keep_io_layout=true", model);
  r.headers.push_back({"X-Request-Id", "hook-42"});
  const HttpResponse answer = http_call(server->http_port(), r);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.header("content-type"), "application/octet-stream");
  EXPECT_EQ(answer.body, grpc_answer.response.onnx_model());
  EXPECT_EQ(answer.header("x-request-id"), "hook-42");
  EXPECT_NE(answer.header("x-lite2onnx-diagnostics").find("opset=17"), std::string::npos);

  // A chunked upload, and one announced with "Expect: 100-continue" (curl's
  // way for bodies over 1 MiB), give the same bytes.
  r.chunked = true;
  EXPECT_EQ(http_call(server->http_port(), r).body, grpc_answer.response.onnx_model());
  r.chunked = false;
  r.expect_continue = true;
  const HttpResponse continued = http_call(server->http_port(), r);
  EXPECT_TRUE(continued.continued);
  EXPECT_EQ(continued.status, 200);
  EXPECT_EQ(continued.body, grpc_answer.response.onnx_model());
}

// signature and io_names as query parameters, as the gRPC fields.
TEST(HttpTest, SignatureParametersReachTheCore) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const std::string model = two_signatures_model();
  v1::ConvertOptions options;
  options.set_signature("second");
  options.set_io_names(v1::IO_NAMES_SIGNATURE);
  const ConvertResult grpc_answer = convert(*server->channel(), model, options);
  ASSERT_TRUE(grpc_answer.status.ok()) << grpc_answer.status.error_message();
  const HttpResponse answer = http_call(
      server->http_port(), post("/v1/convert?signature=second&io_names=signature", model));
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body, grpc_answer.response.onnx_model());
  EXPECT_NE(answer.body, convert(*server->channel(), model).response.onnx_model());

  const HttpResponse unknown =
      http_call(server->http_port(), post("/v1/convert?signature=third", model));
  EXPECT_EQ(unknown.status, 400);
  const json error = error_of(unknown);
  EXPECT_EQ(error.value("reason", ""), "invalid_option") << unknown.body;
  EXPECT_NE(error.value("message", "").find("its signatures are 'first', 'second'"),
            std::string::npos)
      << unknown.body;

  const HttpResponse inspected = http_call(server->http_port(), post("/v1/inspect", model));
  ASSERT_EQ(inspected.status, 200) << inspected.body;
  const json info = json::parse(inspected.body);
  ASSERT_EQ(info["signatures"].size(), 2u) << inspected.body;
  EXPECT_EQ(info["signatures"][1]["key"], "second");
  EXPECT_EQ(info["signatures"][1]["inputs"][0]["alias"], "x");
}

TEST(HttpTest, JsonAnswerIsTheProtoJsonOfConvertResponse) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const std::string model = read_file(mini_mobilenet_path());
  const ConvertResult grpc_answer = convert(*server->channel(), model);
  ASSERT_TRUE(grpc_answer.status.ok());
  HttpRequest r = post("/v1/convert", model);
  r.headers.push_back({"Accept", "application/json"});
  const HttpResponse answer = http_call(server->http_port(), r);
  ASSERT_EQ(answer.status, 200);
  EXPECT_EQ(answer.header("content-type"), "application/json");
  v1::ConvertResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(answer.body, &parsed).ok());
  EXPECT_EQ(parsed.onnx_model(), grpc_answer.response.onnx_model());
  EXPECT_EQ(parsed.diagnostics().opset(), grpc_answer.response.diagnostics().opset());
  EXPECT_GT(parsed.diagnostics().emitted_nodes_size(), 0);
}

TEST(HttpTest, InspectAndOperators) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const HttpResponse inspected =
      http_call(server->http_port(), post("/v1/inspect", read_file(mini_mobilenet_path())));
  ASSERT_EQ(inspected.status, 200) << inspected.body;
  v1::InspectResponse info;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(inspected.body, &info).ok());
  EXPECT_GT(info.tensors_size(), 0);

  const HttpResponse ops = http_call(server->http_port(), get("/v1/operators"));
  ASSERT_EQ(ops.status, 200);
  v1::ListOperatorsResponse list;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ops.body, &list).ok());
  EXPECT_GT(list.operators_size(), 100);

  EXPECT_EQ(http_call(server->http_port(), get("/healthz")).status, 200);
  EXPECT_EQ(http_call(server->http_port(), get("/readyz")).status, 200);
  EXPECT_EQ(http_call(server->http_port(), get("/v1/nothing")).status, 404);
  const HttpResponse wrong_method = http_call(server->http_port(), get("/v1/convert"));
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(wrong_method.header("allow"), "POST");
}

TEST(HttpTest, ErrorsCarryTheTableStatusAndTheConversionError) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const int port = server->http_port();

  HttpResponse r = http_call(port, post("/v1/convert", "not a model at all"));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(error_of(r)["reason"], "invalid_model");

  r = http_call(port, post("/v1/convert", unsupported_ops_model()));
  EXPECT_EQ(r.status, 422);
  json e = error_of(r);
  EXPECT_EQ(e["reason"], "unsupported");
  ASSERT_EQ(e["unsupported"].size(), 3u);
  EXPECT_EQ(e["unsupported"][1]["op"], "OtherCustomOp");
  EXPECT_EQ(e["unsupported"][1]["reason_code"], "custom_op");

  const std::string model = read_file(mini_mobilenet_path());
  r = http_call(port, post("/v1/convert?opset=12", model));
  EXPECT_EQ(r.status, 400);
  e = error_of(r);
  EXPECT_EQ(e["reason"], "invalid_option");
  EXPECT_NE(e["message"].get<std::string>().find("opset 12"), std::string::npos);

  r = http_call(port, post("/v1/convert?opset=17&colour=blue", model));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_of(r)["message"].get<std::string>().find("unknown option 'colour'"),
            std::string::npos);
  r = http_call(port, post("/v1/convert?explicit_layouts=x%3DNHWC%3ANCHW&timeout=zero", model));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_of(r)["message"].get<std::string>().find("timeout"), std::string::npos);
  // Options are for /v1/convert only.
  EXPECT_EQ(http_call(port, post("/v1/inspect?opset=17", model)).status, 400);
}

TEST(HttpTest, RefusalsComeBeforeTheBody) {
  auto server = start_http({"--max-stream-bytes", "1000", "--workers", "1"});
  ASSERT_TRUE(server);
  HttpRequest r = post("/v1/convert", std::string(5000, 'x'));
  r.expect_continue = true;
  const HttpResponse refused = http_call(server->http_port(), r);
  EXPECT_EQ(refused.status, 413);
  EXPECT_FALSE(refused.continued);
  EXPECT_EQ(error_of(refused)["reason"], "model_too_large");
  EXPECT_EQ(refused.header("connection"), "close");

  // A chunked body is counted as it arrives.
  r.expect_continue = false;
  r.chunked = true;
  EXPECT_EQ(http_call(server->http_port(), r).status, 413);

  // The server is still well.
  EXPECT_EQ(http_call(server->http_port(), get("/healthz")).status, 200);
}

TEST(HttpTest, OverloadAndDeadlineAnswers) {
  auto server = start_http(
      {"--workers", "1", "--queue-size", "0", "--test-fault-hooks", "--log-level", "debug"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  const std::string model = read_file(mini_mobilenet_path());
  HttpRequest slow = post("/v1/convert", model);
  slow.headers.push_back({"X-Lite2onnx-Test-Fault", "delay=1500"});
  // The worker busy with the slow call (waited for, not slept for).
  std::future<HttpResponse> busy;
  ASSERT_TRUE(server->wait_for_job_sent(
      [&] { busy = std::async(std::launch::async, [&] { return http_call(port, slow); }); }));
  const HttpResponse full = http_call(port, post("/v1/convert", model));
  EXPECT_EQ(full.status, 429);
  EXPECT_EQ(full.header("retry-after"), "1");
  EXPECT_EQ(error_of(full)["reason"], "queue_full");
  EXPECT_EQ(busy.get().status, 200);

  HttpRequest late = post("/v1/convert?timeout=0.3", model);
  late.headers.push_back({"X-Lite2onnx-Test-Fault", "delay=3000"});
  const HttpResponse deadline = call_while_busy(port, late);
  EXPECT_EQ(deadline.status, 504);
  EXPECT_EQ(error_of(deadline)["reason"], "deadline_exceeded");

  HttpRequest crash = post("/v1/convert", model);
  crash.headers.push_back({"X-Lite2onnx-Test-Fault", "crash"});
  const HttpResponse crashed = call_while_busy(port, crash);
  EXPECT_EQ(crashed.status, 500);
  EXPECT_EQ(error_of(crashed)["reason"], "worker_crashed");
  // The worker was replaced.
  EXPECT_EQ(call_while_busy(port, post("/v1/convert", model)).status, 200);
}

TEST(HttpTest, HostileRequestsLeaveTheServerServing) {
  auto server = start_http({"--stream-idle-timeout", "1"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  // A request line, or a header, beyond the 16 KiB a head may have: 431.
  EXPECT_EQ(
      http_raw(port, "GET /healthz?" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n", 10s).status,
      431);
  const HttpResponse huge = http_raw(
      port, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n", 10s);
  EXPECT_NE(huge.status, 200);
  // Not HTTP.
  http_raw(port, std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + "\r\n\r\n", 5s);
  // A body shorter than announced, then silence: ended by the idle timeout.
  const HttpResponse short_body =
      http_raw(port, "POST /v1/convert HTTP/1.1\r\nContent-Length: 100000\r\n\r\nTFL3", 10s);
  EXPECT_EQ(short_body.status, 400);
  EXPECT_EQ(error_of(short_body)["reason"], "bad_stream");
  // A negative or absurd Content-Length.
  EXPECT_NE(http_raw(port, "POST /v1/convert HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 5s).status,
            200);
  EXPECT_EQ(
      http_raw(port, "POST /v1/convert HTTP/1.1\r\nContent-Length: 99999999999999\r\n\r\n", 5s)
          .status,
      413);
  EXPECT_EQ(http_call(port, get("/healthz")).status, 200);
  EXPECT_EQ(http_call(port, post("/v1/convert", read_file(mini_mobilenet_path()))).status, 200);
}

long peak_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Endless heads, on several connections at once: the server reads 16 KiB of
// each (and drops at most 1 MiB more while it closes), so what a client can
// push is bounded by the sockets' buffers, and the server's memory stays put.
TEST(HttpTest, EndlessHeadsLeaveTheServerBoundedAndServing) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const int port = server->http_port();
  ASSERT_EQ(http_call(port, post("/v1/convert", read_file(mini_mobilenet_path()))).status, 200);
  const long peak_before = peak_rss_kib(server->pid());
  constexpr size_t kOffered = size_t{300} << 20;
  const std::string header_line = "X-Filler: " + std::string(8180, 'a') + "\r\n";
  std::vector<std::future<size_t>> floods;
  for (int i = 0; i < 3; ++i)
    floods.push_back(std::async(std::launch::async, [&] {
      return http_flood(port, "GET /healthz HTTP/1.1\r\n", header_line, kOffered);
    }));
  floods.push_back(std::async(std::launch::async, [&] {
    return http_flood(port, "GET /", std::string(8192, 'a'), kOffered);  // an endless request line
  }));
  size_t most = 0;
  for (auto& f : floods) {
    const size_t sent = f.get();
    most = std::max(most, sent);
    EXPECT_GT(sent, size_t{16} << 10);
    EXPECT_LT(sent, size_t{64} << 20) << "the server kept reading an endless head";
  }
  const long peak_after = peak_rss_kib(server->pid());
  EXPECT_LT(peak_after - peak_before, 32 * 1024)
      << "peak RSS " << peak_before << " KiB before, " << peak_after << " KiB after";
  EXPECT_EQ(http_call(port, get("/healthz")).status, 200);
  EXPECT_EQ(http_call(port, post("/v1/convert", read_file(mini_mobilenet_path()))).status, 200);
  std::printf("endless heads: at most %zu bytes sent; peak RSS %ld KiB before, %ld KiB after\n",
              most, peak_before, peak_after);
}

// Every field of the one error envelope, on every non-2xx answer.
void expect_envelope(const HttpResponse& r, const std::string& reason) {
  const json e = error_of(r);
  EXPECT_EQ(e.value("reason", ""), reason) << r.body;
  EXPECT_EQ(e.value("status", 0), r.status) << r.body;
  for (const char* field :
       {"grpc_code", "retryable", "message", "request_id", "op_index", "tensor", "unsupported"})
    EXPECT_TRUE(e.contains(field)) << field << " in " << r.body;
  EXPECT_EQ(e.value("request_id", ""), r.header("x-request-id"));
}

TEST(HttpTest, EveryErrorIsTheOneEnvelope) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const int port = server->http_port();
  expect_envelope(http_call(port, get("/v1/nothing")), "not_found");
  HttpRequest wrong_method = get("/healthz");
  wrong_method.method = "DELETE";
  const HttpResponse not_allowed = http_call(port, wrong_method);
  expect_envelope(not_allowed, "method_not_allowed");
  EXPECT_EQ(not_allowed.header("allow"), "GET");
  // Every field of every unsupported operator, zero values included.
  const HttpResponse unsupported = http_call(port, post("/v1/convert", unsupported_ops_model()));
  expect_envelope(unsupported, "unsupported");
  const json error = error_of(unsupported);  // kept: the loop reads into it
  for (const json& op : error.at("unsupported"))
    for (const char* field : {"op_index", "op", "reason", "reason_code", "subgraph"})
      EXPECT_TRUE(op.contains(field)) << field << " in " << unsupported.body;
}

TEST(HttpTest, AnOptionThatIsNotUtf8IsTheClientsErrorNamingIt) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const std::string model = read_file(mini_mobilenet_path());
  for (const std::string option : {"signature", "explicit_layouts", "io_layouts"}) {
    const HttpResponse r =
        http_call(server->http_port(), post("/v1/convert?" + option + "=%ff%fe", model));
    EXPECT_EQ(r.status, 400) << option;
    expect_envelope(r, "invalid_option");
    EXPECT_NE(error_of(r).value("message", "").find("'" + option), std::string::npos) << r.body;
  }
  // The same over gRPC: the server reads the options' texts before protobuf does.
  v1::ConvertOptions options;
  options.set_signature("\xff\xfe");
  const ConvertResult r = convert(*server->channel(), model, options, 60s);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(r.status.error_message().find("signature"), std::string::npos)
      << r.status.error_message();
  // The log escapes what the client sent.
  EXPECT_EQ(server->log().find("\xff"), std::string::npos);
}

TEST(HttpTest, TheServedDescriptionIsTheDocumentedOneAndEveryPathAnswers) {
  auto server = start_http();
  ASSERT_TRUE(server);
  const int port = server->http_port();
  const HttpResponse served = http_call(port, get("/openapi.yaml"));
  ASSERT_EQ(served.status, 200);
  EXPECT_EQ(served.header("content-type"), "application/yaml");
  EXPECT_EQ(served.body, read_file(LITE2ONNX_OPENAPI_PATH));
  // Each path ("  /path:") with its method ("    get:" or "    post:") on the next line.
  const std::string model = read_file(mini_mobilenet_path());
  int paths = 0;
  std::istringstream lines(served.body);
  for (std::string line, next; std::getline(lines, line);) {
    if (line.rfind("  /", 0) != 0 || line.back() != ':') continue;
    const std::string path = line.substr(2, line.size() - 3);
    ASSERT_TRUE(std::getline(lines, next));
    const bool is_post = next == "    post:";
    ASSERT_TRUE(is_post || next == "    get:") << path;
    const HttpResponse r = http_call(port, is_post ? post(path, model) : get(path));
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    ++paths;
  }
  EXPECT_EQ(paths, 7);
}

TEST(HttpTest, TheTraceparentGoesIntoTheRequestLog) {
  auto server = start_http();
  ASSERT_TRUE(server);
  HttpRequest r = post("/v1/convert", read_file(mini_mobilenet_path()));
  r.headers.push_back({"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"});
  ASSERT_EQ(http_call(server->http_port(), r).status, 200);
  const std::string log = server->wait_for_log("protocol=http method=Convert");
  EXPECT_NE(log.find("trace_id=4bf92f3577b34da6a3ce929d0e0e4736 parent_id=00f067aa0ba902b7"),
            std::string::npos)
      << log;
}

TEST(HttpTest, MetricsAndLogsCountHttpCalls) {
  auto server = start_http({"--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  const std::string model = read_file(mini_mobilenet_path());
  ASSERT_EQ(http_call(server->http_port(), post("/v1/convert", model)).status, 200);
  ASSERT_EQ(http_call(server->http_port(), post("/v1/convert", "junk")).status, 422);
  const int port = server->metrics_port();
  EXPECT_EQ(
      wait_for_metric(
          port,
          R"(lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"})", 1),
      1);
  EXPECT_EQ(
      wait_for_metric(
          port,
          R"(lite2onnx_requests_total{code="INVALID_ARGUMENT",method="Convert",protocol="http",reason="invalid_model"})",
          1),
      1);
  EXPECT_NE(server->wait_for_log("protocol=http method=Convert", 2).find("status=INVALID_ARGUMENT"),
            std::string::npos);
}

TEST(HttpTest, DrainingAnswers503AndFinishesCallsInProgress) {
  auto server = start_http({"--test-fault-hooks", "--drain-seconds", "60", "--log-level", "debug"});
  ASSERT_TRUE(server);
  const int port = server->http_port();
  const std::string model = read_file(mini_mobilenet_path());
  HttpRequest slow = post("/v1/convert", model);
  slow.headers.push_back({"X-Lite2onnx-Test-Fault", "delay=1500"});
  std::future<HttpResponse> in_progress;
  ASSERT_TRUE(server->wait_for_job_sent([&] {
    in_progress = std::async(std::launch::async, [&] { return http_call(port, slow); });
  }));
  server->send_signal(SIGTERM);
  // Not ready once the server has taken the signal (polled: a guard of 30 s).
  int ready = 200;
  for (auto end = std::chrono::steady_clock::now() + 30s;
       ready != 503 && std::chrono::steady_clock::now() < end;)
    ready = http_call(port, get("/readyz")).status;
  EXPECT_EQ(ready, 503);
  const HttpResponse refused = http_call(port, post("/v1/convert", model));
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(error_of(refused)["reason"], "shutting_down");
  EXPECT_EQ(in_progress.get().status, 200);
  EXPECT_EQ(server->wait_exit(60s), 0);
}

}  // namespace
}  // namespace lite2onnx::server_test
