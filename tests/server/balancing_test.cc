// The client channel every lite2onnx client uses (common/service_config.h)
// against real servers: calls spread over two servers behind one target
// (round_robin), and the retry policy in gRPC: a refusal the table calls
// retryable is retried when the server says, one it does not is not retried.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "client/remote/remote.h"
#include "common/service_config.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// The server of a request id: each server prefixes its ids with its own random part.
std::string server_of(const std::string& request_id) {
  return request_id.substr(0, request_id.find('-'));
}

TEST(Balancing, CallsOfOneClientAlternateBetweenTwoServersBehindOneTarget) {
  auto a = ServerProcess::start({});
  auto b = ServerProcess::start({});
  ASSERT_TRUE(a && b);
  remote::ClientOptions options;
  options.address = "ipv4:127.0.0.1:" + std::to_string(a->grpc_port()) +
                    ",127.0.0.1:" + std::to_string(b->grpc_port());
  auto client = remote::Client::create(options);
  ASSERT_TRUE(client);
  const std::string model = read_file(mini_mobilenet_path());
  // round_robin connects to both at once; the first calls may find one ready only.
  std::vector<std::string> servers;
  for (int i = 0; i < 40 && std::set(servers.begin(), servers.end()).size() < 2; ++i) {
    auto r = client->convert(bytes_of(model), {});
    ASSERT_TRUE(r) << r.error().error.message;
    servers.push_back(server_of(r->request_id));
  }
  ASSERT_EQ(std::set(servers.begin(), servers.end()).size(), 2u) << "one server took every call";
  // With both ready, every call goes to the other server than the one before.
  std::vector<std::string> next;
  for (int i = 0; i < 10; ++i) {
    auto r = client->convert(bytes_of(model), {});
    ASSERT_TRUE(r) << r.error().error.message;
    next.push_back(server_of(r->request_id));
  }
  for (size_t i = 1; i < next.size(); ++i) EXPECT_NE(next[i], next[i - 1]) << "call " << i;
  // Each server logged its half.
  EXPECT_NE(a->wait_for_log("method=Convert", 5).find("method=Convert"), std::string::npos);
  EXPECT_NE(b->wait_for_log("method=Convert", 5).find("method=Convert"), std::string::npos);
}

// RESOURCE_EXHAUSTED is a retried code, but resource_limit is final: the
// server's pushback of -1 stops gRPC from trying again.
TEST(Balancing, AFinalRefusalIsNotRetriedAndSaysItsAttempt) {
  auto server = ServerProcess::start({"--max-operators", "1"});
  ASSERT_TRUE(server);
  remote::ClientOptions options;
  options.address = server->address();
  options.retry.max_attempts = 5;
  auto client = remote::Client::create(options);
  ASSERT_TRUE(client);
  auto r = client->convert(bytes_of(read_file(mini_mobilenet_path())), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().reason->name, "resource_limit");
  EXPECT_EQ(r.error().attempts, 1);
  const std::string log = server->wait_for_log("method=Convert", 1);
  EXPECT_EQ(log.find("method=Convert", log.find("method=Convert") + 1), std::string::npos) << log;
}

TEST(Balancing, TheServiceConfigRetriesTheRetryableCodesOnly) {
  EXPECT_EQ(client_service_config(1), R"({"loadBalancingConfig":[{"round_robin":{}}]})");
  const std::string config = client_service_config(9);  // clamped to gRPC's 5
  EXPECT_NE(config.find(R"("maxAttempts":5)"), std::string::npos) << config;
  EXPECT_NE(
      config.find(R"("retryableStatusCodes":["RESOURCE_EXHAUSTED","CANCELLED","UNAVAILABLE"])"),
      std::string::npos)
      << config;
  EXPECT_EQ(server_pushback_ms("resource_limit", 1, 1.0), "-1");
  EXPECT_EQ(server_pushback_ms("model_too_large", 1, 1.0), "-1");
  EXPECT_EQ(server_pushback_ms("queue_full", 1, 1.0), "250");
  EXPECT_EQ(server_pushback_ms("queue_full", 3, 0.5), "500");
  EXPECT_EQ(server_pushback_ms("shutting_down", 9, 1.0), "8000");
  EXPECT_EQ(server_pushback_ms("invalid_model", 1, 1.0), "");
}

TEST(Balancing, AUrlIsNotAServerAddress) {
  remote::ClientOptions options;
  options.address = "http://conv.example.com:8080/v1";
  auto client = remote::Client::create(options);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().reason->name, "invalid_option");
  EXPECT_NE(client.error().error.message.find("HOST:PORT: 'conv.example.com:8080'"),
            std::string::npos)
      << client.error().error.message;
}

}  // namespace
}  // namespace lite2onnx::server_test
