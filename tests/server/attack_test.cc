// The attacks of issue 31 against the real server (2 workers, a queue of 2, a
// 256 MiB memory budget, a 128 MiB body/stream limit), each while a good
// client converts over HTTP and gRPC and /healthz is probed: the good client
// keeps being served (at most 10% refused, none wrong), every probe answers,
// the server's peak memory stays under the budget + 160 MiB (docs/service.md,
// Memory), and the server ends what the attacker holds (counted by its
// metrics). The figures over a fixed time are server_attack_bench's.
#include <gtest/gtest.h>

#include "attacks.h"
#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kMiB = 1 << 20;
constexpr long kBudgetMiB = 256;
#ifdef LITE2ONNX_TESTS_SANITIZED
// ASan keeps freed memory in a 256 MiB quarantine and adds shadow memory; its
// conversions are 10-15x slower.
constexpr long kPeakSlackMiB = 160 + 512;
constexpr auto kGuard = std::chrono::seconds(300);
// Slower conversions hold the budget longer while the attack runs: a clean-clone
// CI run refused 3 of the good client's 20 calls under ASan, none in Release.
constexpr double kRefusedPercent = 25.0;
#else
constexpr long kPeakSlackMiB = 160;
constexpr auto kGuard = std::chrono::seconds(30);
constexpr double kRefusedPercent = 10.0;
#endif
constexpr int kGoodCalls = 20;

class AttackTest : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--workers",
                                  "2",
                                  "--queue-size",
                                  "2",
                                  "--max-inflight-bytes",
                                  std::to_string(kBudgetMiB) + "MiB",
                                  "--max-stream-bytes",
                                  "128MiB",
                                  "--http-listen",
                                  "127.0.0.1:0",
                                  "--metrics-listen",
                                  "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = ServerProcess::start(args);
    ASSERT_TRUE(server_);
  }
  // Waits until `series` reaches `value` (a guard, not a bound on speed).
  std::function<void()> metric_reaches(const std::string& series, double value) {
    return [this, series, value] {
      EXPECT_GE(wait_for_metric(server_->metrics_port(), series, value, kGuard).value_or(-1), value)
          << series;
    };
  }
  void expect_served(const AttackFigures& f) {
    EXPECT_EQ(f.good.wrong, 0);
    EXPECT_EQ(f.good.failed, 0);
    EXPECT_LE(f.good.refused_percent(), kRefusedPercent)
        << f.good.refused << " of " << f.good.calls();
    EXPECT_GT(f.probes.answered, 0);
    EXPECT_EQ(f.probes.failed, 0);
    EXPECT_GT(f.peak_rss_kib, 0);
    EXPECT_LT(f.peak_rss_kib, (kBudgetMiB + kPeakSlackMiB) * 1024);
    RecordProperty("healthz_max_ms", std::to_string(f.probes.max_ms));
    RecordProperty("peak_rss_kib", std::to_string(f.peak_rss_kib));
  }
  double metric(const std::string& series, double at_least) {
    return wait_for_metric(server_->metrics_port(), series, at_least, kGuard).value_or(-1);
  }

  std::unique_ptr<ServerProcess> server_;
};

// Another RFFT model every round (none is answered from the cache): 816 bytes
// whose ONNX model has about 16 MiB per pair of 2048.
ModelOfRound spectral(int pairs, int fft) {
  return [pairs, fft, counter = std::make_shared<std::atomic<int>>(0)](int) {
    return spectral_model(pairs, fft, (*counter)++);
  };
}

TEST_F(AttackTest, AnnouncedBodiesReserveOnlyAFirstAllotment) {
  // Two heads announcing the whole stream limit used to reserve the budget.
  start({"--min-rate-grace", "1", "--upload-min-rate", "1MiB"});
  const int port = server_->http_port();
  const AttackFigures f = measure(
      *server_,
      [port] {
        return std::make_unique<Attack>(
            [port](Stop& stop) { return announce_body(port, 128 * kMiB, stop); }, 2);
      },
      // The silent uploads are ended by their minimum rate, not left to
      // hold; the attacker starts over at once.
      metric_reaches(R"(lite2onnx_transfers_ended_total{direction="upload",protocol="http"})", 2),
      kGoodCalls);
  expect_served(f);
}

TEST_F(AttackTest, TricklingStreamsReserveOnlyAFirstAllotment) {
  start({"--min-rate-grace", "1", "--upload-min-rate", "1MiB"});
  auto channel = server_->channel();
  const AttackFigures f = measure(
      *server_,
      [channel] {
        return std::make_unique<Attack>(
            [channel](Stop& stop) { return trickle_stream(*channel, 128 * kMiB - 1, 200ms, stop); },
            2);
      },
      metric_reaches(R"(lite2onnx_transfers_ended_total{direction="upload",protocol="grpc"})", 2),
      kGoodCalls);
  expect_served(f);
}

TEST_F(AttackTest, UnreadAnswersCountInTheBudgetAndAreDropped) {
  // The old output limit, so that each answer is large (16 MiB), a send rate
  // no unread answer meets, and room for the attacker's six calls beside the
  // good client's (they share the loopback address, one peer).
  start({"--max-output-bytes", "1GiB", "--min-rate-grace", "1", "--send-min-rate", "4MiB",
         "--max-calls-per-peer", "16"});
  const int port = server_->http_port();
  auto channel = server_->channel();
  const ModelOfRound model = spectral(1, 2048);
  const AttackFigures f = measure(
      *server_,
      [&] {
        auto attack = std::make_unique<Attack>(
            [channel, model](Stop& stop) { return unread_stream(*channel, model, stop); }, 4);
        attack->add([port, model](Stop& stop) { return slow_reader(port, model, kMiB, 2s, stop); },
                    2);
        return attack;
      },
      metric_reaches(R"(lite2onnx_conversions_total{outcome="ok"})", 4), kGoodCalls);
  expect_served(f);
  EXPECT_GE(metric(R"(lite2onnx_transfers_ended_total{direction="answer",protocol="http"})", 1), 1);
  EXPECT_GE(metric(R"(lite2onnx_transfers_ended_total{direction="answer",protocol="grpc"})", 1), 1);
}

TEST_F(AttackTest, JsonAnswersAreWrittenOffTheIoThreads) {
  start({"--max-output-bytes", "1GiB"});
  const int port = server_->http_port();
  const ModelOfRound model = spectral(1, 2048);
  const AttackFigures f = measure(
      *server_,
      [port, model] {
        return std::make_unique<Attack>(
            [port, model](Stop& stop) { return json_answer(port, model, stop); }, 2);
      },
      // Two JSON answers sent whole (the good client's calls come after).
      metric_reaches(
          R"(lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"})", 2),
      kGoodCalls);
  expect_served(f);
}

TEST_F(AttackTest, IdleConnectionsAreClosedAndProbesGetIn) {
  // The issue's eight silent sockets (the old cap was workers + queue + 4).
  start({"--http-head-timeout", "2"});
  const int port = server_->http_port();
  const AttackFigures f = measure(
      *server_,
      [port] {
        return std::make_unique<Attack>([port](Stop& stop) { return idle_connection(port, stop); },
                                        8);
      },
      metric_reaches(R"(lite2onnx_http_connections_closed_total{why="head_timeout"})", 8),
      kGoodCalls);
  expect_served(f);
}

TEST_F(AttackTest, AtTheConnectionCapTheLongestIdleMakesRoom) {
  start({"--http-max-connections", "8"});
  const int port = server_->http_port();
  const AttackFigures f = measure(
      *server_,
      [port] {
        return std::make_unique<Attack>([port](Stop& stop) { return idle_connection(port, stop); },
                                        12);
      },
      metric_reaches(R"(lite2onnx_http_connections_closed_total{why="evicted"})", 4), kGoodCalls);
  expect_served(f);
}

}  // namespace
}  // namespace lite2onnx::server_test
