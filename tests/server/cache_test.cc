// The conversion cache (--cache-bytes) against the real server: hits over
// gRPC, ConvertStream and HTTP alike, identical concurrent calls converting
// once, eviction within the budget, and the hash reaching the provenance.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <future>

#include "client.h"
#include "http_client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned i = 0; i < size; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

double metric_value(int port, const std::string& series, double at_least) {
  return wait_for_metric(port, series, at_least).value_or(-1);
}

constexpr const char* kHits = R"(lite2onnx_cache_lookups_total{result="hit"})";
constexpr const char* kMisses = R"(lite2onnx_cache_lookups_total{result="miss"})";
constexpr const char* kConversions = R"(lite2onnx_conversions_total{outcome="ok"})";

class CacheTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CacheTest, AnIdenticalCallIsAHitOnEveryProtocol) {
  auto server = ServerProcess::start({"--isolation", GetParam(), "--metrics-listen", "127.0.0.1:0",
                                      "--http-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  const std::string model = read_file(mini_mobilenet_path());
  const ConvertResult first = convert(*channel, model);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  EXPECT_EQ(first.response.diagnostics().cache(), "miss");
  // The provenance carries the hash the cache computed (the worker did not hash again,
  // but the value is the same).
  EXPECT_NE(first.response.onnx_model().find(sha256_hex(model)), std::string::npos);

  const ConvertResult second = convert(*channel, model);
  ASSERT_TRUE(second.status.ok());
  EXPECT_EQ(second.response.diagnostics().cache(), "hit");
  EXPECT_EQ(second.response.onnx_model(), first.response.onnx_model());
  EXPECT_EQ(second.response.diagnostics().emitted_nodes_size(),
            first.response.diagnostics().emitted_nodes_size());

  const StreamResult streamed = convert_stream(*channel, model, {}, 1000);
  ASSERT_TRUE(streamed.status.ok());
  EXPECT_EQ(streamed.diagnostics.cache(), "hit");
  EXPECT_EQ(streamed.onnx_model, first.response.onnx_model());

  HttpRequest r;
  r.target = "/v1/convert";
  r.body = model;
  const HttpResponse http = http_call(server->http_port(), r);
  ASSERT_EQ(http.status, 200);
  EXPECT_EQ(http.body, first.response.onnx_model());
  EXPECT_NE(http.header("x-lite2onnx-diagnostics").find("cache=hit"), std::string::npos);

  // Other options: another conversion.
  v1::ConvertOptions opset17;
  opset17.set_opset(17);
  const ConvertResult other = convert(*channel, model, opset17);
  EXPECT_EQ(other.response.diagnostics().cache(), "miss");

  const int port = server->metrics_port();
  EXPECT_EQ(metric_value(port, kHits, 3), 3);
  EXPECT_EQ(metric_value(port, kMisses, 2), 2);
  EXPECT_EQ(metric_value(port, kConversions, 2), 2);
  EXPECT_EQ(metric_value(port, "lite2onnx_cache_entries", 2), 2);
}

INSTANTIATE_TEST_SUITE_P(Isolation, CacheTest, ::testing::Values("process", "thread"));

TEST(CacheTest, IdenticalConcurrentCallsConvertOnce) {
  auto server = ServerProcess::start({"--workers", "2", "--metrics-listen", "127.0.0.1:0",
                                      "--max-operators", "1000000", "--max-tensors", "1000000"});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  // A conversion of ~0.4 s: the four calls, sent together, overlap it, and
  // two workers would convert two of them without the single flight.
  const std::string model = abs_chain_model(50000);
  std::vector<std::future<ConvertResult>> calls;
  for (int i = 0; i < 4; ++i)
    calls.push_back(std::async(std::launch::async, [&] { return convert(*channel, model); }));
  std::string onnx;
  for (auto& c : calls) {
    const ConvertResult r = c.get();
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    if (onnx.empty()) onnx = r.response.onnx_model();
    EXPECT_EQ(r.response.onnx_model(), onnx);
  }
  const int port = server->metrics_port();
  EXPECT_EQ(metric_value(port, kHits, 3), 3);
  EXPECT_EQ(metric_value(port, kMisses, 1), 1);
  EXPECT_EQ(metric_value(port, kConversions, 1), 1);
}

TEST(CacheTest, EvictsTheLeastRecentlyUsedWithinItsBytes) {
  // Room for one mini MobileNet answer (~3.7 KB and its diagnostics), not two.
  auto server = ServerProcess::start({"--cache-bytes", "7000", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  const std::string model = read_file(mini_mobilenet_path());
  v1::ConvertOptions opset17;
  opset17.set_opset(17);
  ASSERT_EQ(convert(*channel, model).response.diagnostics().cache(), "miss");
  ASSERT_EQ(convert(*channel, model, opset17).response.diagnostics().cache(), "miss");
  // The first was evicted for the second.
  EXPECT_EQ(convert(*channel, model).response.diagnostics().cache(), "miss");
  const int port = server->metrics_port();
  EXPECT_GE(metric_value(port, "lite2onnx_cache_evictions_total", 2), 2);
  EXPECT_LE(metric_value(port, "lite2onnx_cache_bytes", 0), 7000);
  EXPECT_EQ(metric_value(port, "lite2onnx_cache_entries", 1), 1);
}

TEST(CacheTest, FailuresAreNotKeptAndZeroBytesTurnsItOff) {
  auto server = ServerProcess::start({"--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server);
  auto channel = server->channel();
  EXPECT_FALSE(convert(*channel, unsupported_ops_model()).status.ok());
  EXPECT_FALSE(convert(*channel, unsupported_ops_model()).status.ok());
  EXPECT_EQ(metric_value(server->metrics_port(), kMisses, 2), 2);
  EXPECT_EQ(metric_value(server->metrics_port(), "lite2onnx_cache_entries", 0), 0);

  auto uncached = ServerProcess::start({"--cache-bytes", "0"});
  ASSERT_TRUE(uncached);
  const std::string model = read_file(mini_mobilenet_path());
  const ConvertResult r = convert(*uncached->channel(), model);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.response.diagnostics().cache(), "");
  EXPECT_NE(r.response.onnx_model().find(sha256_hex(model)), std::string::npos);
}

}  // namespace
}  // namespace lite2onnx::server_test
