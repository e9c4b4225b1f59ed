// The CLI's --server (client/remote/) against the real server: the same output
// as the local conversion, streaming beyond the unary limit, the local CLI's
// error lines and exit codes, TLS and mutual TLS.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include "certificates.h"
#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using Args = std::vector<std::string>;

Args operator+(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// What `convert --json` printed that must not depend on where the conversion
// ran: all but the timings, or for a failure (whose call carries no
// diagnostics) the error and the unsupported operators.
nlohmann::json comparable_json(const CliResult& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return nullptr;  // nothing (or no JSON) on stdout
  if (j.contains("error")) return {{"error", j["error"]}, {"unsupported", j["unsupported"]}};
  j.erase("timings");
  j.erase("cache");  // the server's cache says "miss" or "hit"
  return j;
}

// A loopback port nobody listens on.
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// One server for the suite: the CLI's calls do not change it.
class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = ServerProcess::start({"--workers", "2"}); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override { ASSERT_TRUE(server_); }

  static Args remote() { return {"--server", server_->address()}; }

  // `convert MODEL OPTIONS` in this process and on `server`: the same exit
  // code, ONNX bytes, --json diagnostics (timings aside) and error line.
  // Returns the remote run with -v.
  CliResult expect_same_conversion(const std::string& model, const Args& options,
                                   const Args& server) {
    const std::string local_onnx = dir_.file("local.onnx"), remote_onnx = dir_.file("remote.onnx");
    std::remove(local_onnx.c_str());
    std::remove(remote_onnx.c_str());
    CliResult local = run_cli(Args{"convert", model, "-o", local_onnx, "--json"} + options);
    CliResult there =
        run_cli(Args{"convert", model, "-o", remote_onnx, "--json"} + options + server);
    EXPECT_EQ(there.exit_code, local.exit_code) << there.err;
    EXPECT_EQ(there.err, local.err);
    EXPECT_EQ(comparable_json(there), comparable_json(local)) << there.out;
    const std::string onnx = read_file(remote_onnx);
    EXPECT_EQ(onnx, read_file(local_onnx));
    EXPECT_EQ(onnx.empty(), local.exit_code != 0);
    return run_cli(Args{"convert", model, "-o", remote_onnx, "-v"} + options + server);
  }

  static std::unique_ptr<ServerProcess> server_;
  TempDir dir_;
};

std::unique_ptr<ServerProcess> CliTest::server_;

// Value options written before the model path take one value each, so the
// path stays the positional argument (`convert --quantization exact m.tflite`
// once read the path as a second value and failed with exit 2).
TEST(CliOptionsTest, ValueOptionsBeforeTheModelPath) {
  TempDir dir;
  const std::string model = mini_mobilenet_path();
  for (const Args& options :
       {Args{"--quantization", "dequantize"}, Args{"--quantization=dequantize"},
        Args{"--io-layout", "input=NCHW", "--io-layout", "input=NCHW"},
        Args{"--inputs-as-nchw", "input"}, Args{"--opset", "17"}}) {
    SCOPED_TRACE(::testing::PrintToString(options));
    CliResult r = run_cli(Args{"convert"} + options + Args{model, "-o", dir.file("x.onnx")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

TEST_F(CliTest, ConvertOverTheServerEqualsTheLocalConversion) {
  const std::string model = mini_mobilenet_path();
  for (const Args& options :
       {Args{}, Args{"--opset", "17", "--keep-io-layout"},
        Args{"--io-layout", "input=NCHW", "--explicit-layout", "stem/relu6=NHWC:NCHW"},
        Args{"--quantization", "dequantize", "--keep-float16-weights"}}) {
    SCOPED_TRACE(::testing::PrintToString(options));
    CliResult verbose = expect_same_conversion(model, options, remote());
    EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
    // The local summary line and diagnostics, then where they came from.
    EXPECT_NE(verbose.out.find(" ONNX nodes ("), std::string::npos) << verbose.out;
    EXPECT_NE(verbose.out.find("emitted nodes: "), std::string::npos) << verbose.out;
    EXPECT_NE(verbose.out.find("server " + server_->address() + ": Convert, request id "),
              std::string::npos)
        << verbose.out;
  }
}

// --signature and --io-names reach the server's core: the same bytes.
TEST_F(CliTest, SignatureOptionsEqualTheLocalConversion) {
  const std::string model = dir_.file("signatures.tflite");
  write_file(model, two_signatures_model());
  for (const Args& options : {Args{}, Args{"--signature", "second"},
                              Args{"--signature", "second", "--io-names", "signature"}}) {
    SCOPED_TRACE(::testing::PrintToString(options));
    EXPECT_EQ(expect_same_conversion(model, options, remote()).exit_code, 0);
  }
  CliResult r = run_cli(Args{"convert", model, "--json", "--signature", "second"} + remote());
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["source_ops"]["ABS"], 2) << r.out;
  // A key the model lacks: the local error line and exit code 2.
  expect_same_conversion(model, {"--signature", "third"}, remote());
  r = run_cli(Args{"convert", model, "-o", dir_.file("x.onnx"), "--signature", "third"} + remote());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lite2onnx: invalid_option: signature 'third': the model has no such signature; its "
            "signatures are 'first', 'second'\n");
  for (const Args& command : {Args{"inspect", model}, Args{"inspect", model, "--json"}}) {
    CliResult local = run_cli(command), there = run_cli(command + remote());
    EXPECT_EQ(there.exit_code, 0) << there.err;
    EXPECT_EQ(there.out, local.out);
    EXPECT_NE(there.out.find("second"), std::string::npos) << there.out;
  }
}

TEST_F(CliTest, QuantizedCorpusModelEqualsTheLocalConversion) {
  const std::string model = corpus_path("tflite2onnx/mobilenet_v1_0.25_128_quant.tflite");
  if (model.empty()) GTEST_SKIP() << "the shared model corpus is absent";
  for (const char* mode : {"qdq", "dequantize"})
    EXPECT_EQ(expect_same_conversion(model, {"--quantization", mode}, remote()).exit_code, 0);
}

// TFLite Metadata and the label file of its zip archive (libzip, in the
// sandboxed worker process): the same ONNX bytes, the same inspect output.
TEST_F(CliTest, ModelWithMetadataAndLabelsEqualsTheLocalConversion) {
  const std::string model = corpus_path("coral-test_data/mobilenet_v2_1.0_224_quant.tflite");
  if (model.empty()) GTEST_SKIP() << "the shared model corpus is absent";
  for (const Args& options : {Args{}, Args{"--no-metadata"}})
    EXPECT_EQ(expect_same_conversion(model, options, remote()).exit_code, 0);
  for (const Args& command : {Args{"inspect", model}, Args{"inspect", model, "--json"}}) {
    CliResult local = run_cli(command), there = run_cli(command + remote());
    EXPECT_EQ(there.exit_code, 0) << there.err;
    EXPECT_EQ(there.out, local.out);
    EXPECT_NE(there.out.find("imagenet_labels.txt"), std::string::npos) << there.out;
  }
}

TEST_F(CliTest, ErrorsAreTheLocalCliErrors) {
  const std::string garbage = dir_.file("garbage.tflite"), unsupported = dir_.file("ops.tflite");
  write_file(garbage, std::string(1000, '\x5a'));
  write_file(unsupported, unsupported_ops_model());
  struct Case {
    std::string model;
    Args options;
    int exit_code;
  };
  for (const Case& c : {Case{garbage, {}, 3}, Case{unsupported, {}, 4},
                        Case{mini_mobilenet_path(), {"--opset", "99"}, 2},
                        Case{mini_mobilenet_path(), {"--io-layout", "input=NCH"}, 2},
                        Case{dir_.file("missing.tflite"), {}, 6}}) {
    SCOPED_TRACE(c.model + " " + ::testing::PrintToString(c.options));
    expect_same_conversion(c.model, c.options, remote());
    CliResult r =
        run_cli(Args{"convert", c.model, "-o", dir_.file("x.onnx")} + c.options + remote());
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  }
  // Every unsupported operator is listed, as in the local --json.
  CliResult r = run_cli(Args{"convert", unsupported, "--json"} + remote());
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["error"]["code"], "unsupported");
  EXPECT_EQ(j["unsupported"].size(), 3u) << r.out;
  // A failed --json says so: the outcome first, and (locally, where the stages that
  // ran are described) no subgraph described as converted.
  EXPECT_EQ(j["outcome"], "failed") << r.out;
  CliResult local = run_cli(Args{"convert", unsupported, "--json"});
  auto l = nlohmann::json::parse(local.out, nullptr, false);
  ASSERT_TRUE(l.is_object()) << local.out;
  EXPECT_EQ(l["outcome"], "failed");
  EXPECT_EQ(l["error"]["exit_code"], 4);
  EXPECT_EQ(l["error"]["retryable"], false);
  ASSERT_FALSE(l["subgraphs"].empty()) << local.out;
  for (const auto& sub : l["subgraphs"])
    EXPECT_EQ(sub.get<std::string>().find(", converted"), std::string::npos) << sub;
}

TEST_F(CliTest, AnUnreachableServerIsExitCode7) {
  const std::string address = "127.0.0.1:" + std::to_string(closed_port());
  for (const Args& command : {Args{"convert", mini_mobilenet_path(), "-o", dir_.file("x.onnx")},
                              Args{"inspect", mini_mobilenet_path()}, Args{"ops"}}) {
    CliResult r = run_cli(command + Args{"--server", address});
    EXPECT_EQ(r.exit_code, 7) << r.err;
    EXPECT_EQ(
        r.err.rfind("lite2onnx: unavailable: cannot reach a lite2onnx server at " + address, 0), 0u)
        << r.err;
  }
}

TEST_F(CliTest, InspectAndOpsEqualTheLocalOutput) {
  for (const Args& command :
       {Args{"inspect", mini_mobilenet_path()}, Args{"inspect", mini_mobilenet_path(), "--json"},
        Args{"ops", "--json"}, Args{"ops", "--markdown"}}) {
    SCOPED_TRACE(::testing::PrintToString(command));
    CliResult local = run_cli(command), there = run_cli(command + remote());
    EXPECT_EQ(there.exit_code, 0) << there.err;
    EXPECT_EQ(there.out, local.out);
  }
}

// A model larger than the server's unary limit goes through ConvertStream; one
// larger than its stream limit too is refused as a limit (exit code 5).
TEST_F(CliTest, ModelsBeyondTheUnaryLimitAreStreamed) {
  const std::string model = dir_.file("large.tflite");
  write_file(model, abs_chain_model(20000));  // about 1.4 MB
  auto small = ServerProcess::start({"--workers", "1", "--max-unary-bytes", "1048576"});
  ASSERT_TRUE(small);
  CliResult r = expect_same_conversion(model, {}, {"--server", small->address()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": ConvertStream, request id "), std::string::npos) << r.out;

  auto tiny = ServerProcess::start(
      {"--workers", "1", "--max-unary-bytes", "1048576", "--max-stream-bytes", "1048576"});
  ASSERT_TRUE(tiny);
  r = run_cli({"convert", model, "-o", dir_.file("x.onnx"), "--server", tiny->address()});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.err.rfind("lite2onnx: model_too_large: the model is larger than this server's", 0),
            0u)
      << r.err;
}

// A full queue is exit 8 (retry later); --retries waits it out.
TEST(CliRetryTest, AFullQueueIsExit8AndRetriesWaitItOut) {
  auto server = ServerProcess::start({"--workers", "1", "--queue-size", "0", "--metrics-listen",
                                      "127.0.0.1:0", "--test-fault-hooks", "--log-level", "debug"});
  ASSERT_TRUE(server);
  // The one worker hangs until the test cancels its call.
  auto channel = server->channel();
  std::unique_ptr<HungCall> busy;
  ASSERT_TRUE(server->wait_for_job_sent([&] { busy = std::make_unique<HungCall>(*channel); }));
  TempDir dir;
  const Args convert_mini{"convert",  mini_mobilenet_path(), "-o", dir.file("m.onnx"),
                          "--server", server->address()};
  CliResult refused = run_cli(convert_mini);
  EXPECT_EQ(refused.exit_code, 8) << refused.err;
  EXPECT_EQ(refused.err.rfind("lite2onnx: queue_full: ", 0), 0u) << refused.err;
  // Retrying: refused at least once more while the worker is busy, then the
  // worker comes free and a retry converts.
  auto retried = std::async(std::launch::async, [&] {
    return run_cli(convert_mini + Args{"--retries", "6"});
  });
  const char* shed = R"(lite2onnx_requests_shed_total{reason="queue_full"})";
  EXPECT_EQ(wait_for_metric(server->metrics_port(), shed, 2), 2);
  busy->cancel();
  EXPECT_EQ(busy->result().error_code(), grpc::StatusCode::CANCELLED);
  const CliResult done = retried.get();
  EXPECT_EQ(done.exit_code, 0) << done.err;
}

TEST(CliTlsTest, TlsAndMutualTlsThroughTheFlags) {
  Certificates certs;
  ASSERT_TRUE(certs.ok()) << certs.log();
  auto server =
      ServerProcess::start({"--tls-cert", certs.path("server.pem"), "--tls-key",
                            certs.path("server.key"), "--tls-client-ca", certs.path("ca.pem")});
  ASSERT_TRUE(server);
  TempDir dir;
  const std::string model = mini_mobilenet_path(), onnx = dir.file("m.onnx");
  const Args tls{"--server",           server->address(),   "--tls-ca",
                 certs.path("ca.pem"), "--tls-server-name", "localhost"};
  const Args client_cert{"--tls-cert", certs.path("client.pem"), "--tls-key",
                         certs.path("client.key")};

  CliResult r = run_cli(Args{"convert", model, "-o", onnx} + tls + client_cert);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run_cli({"convert", model, "-o", dir.file("local.onnx")}).exit_code, 0);
  EXPECT_EQ(read_file(onnx), read_file(dir.file("local.onnx")));
  // "localhost" is the name in the server's certificate.
  r = run_cli(Args{"ops", "--server", "localhost:" + std::to_string(server->grpc_port()),
                   "--tls-ca", certs.path("ca.pem")} +
              client_cert);
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // No client certificate, a plaintext client, a CA that did not sign the server.
  for (const Args& refused : {tls, Args{"--server", server->address()},
                              Args{"--server", server->address(), "--tls-ca",
                                   certs.path("other.pem"), "--tls-server-name", "localhost"} +
                                  client_cert}) {
    r = run_cli(Args{"convert", model, "-o", onnx, "--deadline", "10"} + refused);
    EXPECT_EQ(r.exit_code, 7) << r.err;
    EXPECT_EQ(r.err.rfind("lite2onnx: unavailable: ", 0), 0u) << r.err;
  }
  // A certificate needs its key; TLS flags need --server.
  r = run_cli(Args{"convert", model, "--tls-cert", certs.path("client.pem")} + tls);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli({"convert", model, "--tls-ca", certs.path("ca.pem")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace lite2onnx::server_test
