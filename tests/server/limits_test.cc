// Overload, memory budget, deadlines and cancellation, on a server whose one
// worker is kept busy. Nothing here depends on how fast the machine is: a
// worker that must stay busy runs a call with the test hook "hang" (it
// converts nothing until the call is cancelled), and a test that cancels a
// running conversion waits for the server's log to say the worker has the job.
// Where a conversion must end by itself, a chain of 200,000 ABS operators
// (about 2 s) keeps the worker busy meanwhile; no test asserts on elapsed time.
#include <gtest/gtest.h>

#include <thread>

#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;

const std::string& slow_model() {
  static const std::string model = abs_chain_model(200000);
  return model;
}

class LimitsTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> args) {
    // The slow models are chains of hundreds of thousands of ops: above the default limit.
    // No cache: the same slow model sent twice must convert (and queue) twice.
    // Debug logs: "job sent to the worker" says when a job can be cancelled.
    args.insert(args.end(),
                {"--metrics-listen", "127.0.0.1:0", "--max-operators", "1000000", "--max-tensors",
                 "1000000", "--cache-bytes", "0", "--test-fault-hooks", "--log-level", "debug"});
    server_ = ServerProcess::start(args);
    ASSERT_TRUE(server_);
    channel_ = server_->channel();
  }
  // Starts the slow conversion and returns once a worker runs it.
  std::future<ConvertResult> start_slow_conversion(std::chrono::milliseconds timeout = 0ms) {
    auto channel = server_->channel();  // its own connection
    auto f = std::async(std::launch::async, [channel, timeout] {
      return convert(*channel, slow_model(), {}, timeout);
    });
    EXPECT_EQ(wait_for_metric(server_->metrics_port(), "lite2onnx_workers_busy", 1), 1);
    return f;
  }
  // Starts a hung call and returns once its worker has the job (from then on
  // a stop kills the worker and counts a cancelled conversion).
  std::unique_ptr<HungCall> start_hung_call(std::chrono::milliseconds deadline = 0ms) {
    std::unique_ptr<HungCall> call;
    EXPECT_TRUE(server_->wait_for_job_sent([&] {
      call = std::make_unique<HungCall>(*channel_, deadline);
    })) << "the worker never got the job: "
        << server_->log();
    return call;
  }
  // The call of a stopped worker ends before its worker thread has killed and
  // replaced it: until then the thread is busy and a queue of 0 is full.
  void wait_until_idle() {
    EXPECT_EQ(wait_for_metric_at_most(server_->metrics_port(), "lite2onnx_workers_busy", 0), 0);
  }
  std::optional<double> scrape(const std::string& series) {
    return metric(http_get(server_->metrics_port(), "/metrics"), series);
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(LimitsTest, FullQueueAnswersResourceExhaustedAtOnce) {
  start({"--workers", "1", "--queue-size", "0"});
  auto hung = start_hung_call();
  const std::string model = read_file(mini_mobilenet_path());
  // The hung conversion ends only when cancelled: a refusal that waited for it
  // would end at this call's deadline (a guard against that, not a bound).
  ConvertResult r = convert(*channel_, model, {}, 60s);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << "the refusal must not wait for the running conversion";
  auto detail = error_detail(r.status);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->reason(), v1::ConversionError::REASON_QUEUE_FULL);
  EXPECT_EQ(scrape(R"(lite2onnx_requests_shed_total{reason="queue_full"})"), 1);
  hung->cancel();
  EXPECT_EQ(hung->result().error_code(), grpc::StatusCode::CANCELLED);
  wait_until_idle();
  EXPECT_TRUE(convert(*channel_, model).status.ok()) << "the worker is free again";
}

TEST_F(LimitsTest, QueuedRequestRunsAfterTheBusyWorker) {
  start({"--workers", "1", "--queue-size", "1"});
  auto slow = start_slow_conversion();
  ConvertResult queued = convert(*channel_, read_file(mini_mobilenet_path()));
  EXPECT_TRUE(queued.status.ok()) << queued.status.error_message();
  EXPECT_TRUE(slow.get().status.ok());
}

TEST_F(LimitsTest, MemoryBudgetRefusesWhatDoesNotFit) {
  start({"--max-unary-bytes", "1MiB", "--max-inflight-bytes", "1536KiB"});
  // A stream that announced 1 MiB holds its reservation while it uploads.
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  auto stream = stub->ConvertStream(&ctx);
  v1::ConvertChunk chunk;
  chunk.mutable_options();
  chunk.set_total_bytes(1024 * 1024);
  ASSERT_TRUE(stream->Write(chunk));
  ASSERT_EQ(wait_for_metric(server_->metrics_port(), "lite2onnx_inflight_model_bytes", 1048576),
            1048576);

  ConvertResult r = convert(*channel_, std::string(600 * 1024, 'x'));
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  auto detail = error_detail(r.status);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->reason(), v1::ConversionError::REASON_MEMORY_BUDGET);
  EXPECT_EQ(scrape(R"(lite2onnx_requests_shed_total{reason="memory_budget"})"), 1);
  // What fits still runs.
  EXPECT_TRUE(convert(*channel_, read_file(mini_mobilenet_path())).status.ok());

  ctx.TryCancel();
  stream->Finish();
  EXPECT_EQ(
      wait_for_metric(
          server_->metrics_port(),
          R"(lite2onnx_requests_total{code="CANCELLED",method="ConvertStream",protocol="grpc",reason="cancelled"})",
          1),
      1)
      << server_->log();
  EXPECT_EQ(scrape("lite2onnx_inflight_model_bytes"), 0);
}

TEST_F(LimitsTest, DeadlineStopsARunningConversion) {
  start({"--workers", "1"});
  // The worker has the job well before the deadline on any machine (the job is
  // sent within milliseconds of the call's arrival), and it hangs until stopped.
  auto hung = start_hung_call(3s);
  EXPECT_EQ(hung->result().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The deadline stopped the conversion: the worker was killed and replaced.
  EXPECT_EQ(wait_for_metric(server_->metrics_port(),
                            R"(lite2onnx_conversions_total{outcome="cancelled"})", 1),
            1);
  EXPECT_EQ(scrape(R"(lite2onnx_conversions_total{outcome="ok"})"), std::nullopt);
  EXPECT_EQ(wait_for_metric(server_->metrics_port(),
                            R"(lite2onnx_worker_failures_total{cause="deadline"})", 1),
            1);
  EXPECT_EQ(
      wait_for_metric(
          server_->metrics_port(),
          R"(lite2onnx_requests_total{code="DEADLINE_EXCEEDED",method="Convert",protocol="grpc",reason="deadline_exceeded"})",
          1),
      1);
  wait_until_idle();
  EXPECT_TRUE(convert(*channel_, read_file(mini_mobilenet_path())).status.ok());
}

TEST_F(LimitsTest, ClientCancellationStopsARunningConversion) {
  start({"--workers", "1"});
  // Cancelled once the worker has the job: a call cancelled before that is
  // refused, not counted as a conversion.
  auto hung = start_hung_call();
  hung->cancel();
  EXPECT_EQ(hung->result().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(wait_for_metric(server_->metrics_port(),
                            R"(lite2onnx_conversions_total{outcome="cancelled"})", 1),
            1);
  EXPECT_EQ(
      wait_for_metric(
          server_->metrics_port(),
          R"(lite2onnx_requests_total{code="CANCELLED",method="Convert",protocol="grpc",reason="cancelled"})",
          1),
      1);
}

TEST_F(LimitsTest, RequestWhoseDeadlinePassesInTheQueueNeverRuns) {
  start({"--workers", "1", "--queue-size", "1"});
  auto hung = start_hung_call();
  ConvertResult queued = convert(*channel_, read_file(mini_mobilenet_path()), {}, 100ms);
  EXPECT_EQ(queued.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The worker comes free; the queued call, taken next, finds its deadline past.
  hung->cancel();
  EXPECT_EQ(hung->result().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(
      wait_for_metric(
          server_->metrics_port(),
          R"(lite2onnx_requests_total{code="DEADLINE_EXCEEDED",method="Convert",protocol="grpc",reason="deadline_exceeded"})",
          1),
      1);
  EXPECT_EQ(wait_for_metric(server_->metrics_port(),
                            R"(lite2onnx_conversions_total{outcome="cancelled"})", 1),
            1);
  // Only the hung conversion ran (and was cancelled); the queued one never did.
  EXPECT_EQ(scrape(R"(lite2onnx_conversions_total{outcome="ok"})"), std::nullopt);
  wait_until_idle();
  EXPECT_TRUE(convert(*channel_, read_file(mini_mobilenet_path())).status.ok());
}

}  // namespace
}  // namespace lite2onnx::server_test
