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
#include "http_client.h"
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

// The budget holds every form of an answer the server makes: Inspect's
// message and, beside it for a moment, gRPC's serialized copy of it (HTTP's
// JSON). An answer that fits the budget alone, but not with its copy, is
// refused (it never fits: resource_limit), not sent beyond the budget.
TEST_F(LimitsTest, InspectAnswerIsRefusedWhenItsCopyWouldExceedTheBudget) {
  // Long tensor names: the answer is about as large as the model.
  const std::string model = abs_chain_model(200, std::string(200, 'n'));
  start({"--workers", "1", "--http-listen", "127.0.0.1:0"});
  auto stub = v1::Converter::NewStub(channel_);
  v1::InspectRequest request;
  request.set_model(model);
  v1::InspectResponse response;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->Inspect(&ctx, request, &response).ok()) << "a budget with room answers";
  }
  const uint64_t answer = response.ByteSizeLong();
  // Room for the model and for the answer, not for the answer twice.
  const uint64_t budget_kib = (std::max<uint64_t>(model.size(), answer) + 2047) / 1024;
  ASSERT_LT(budget_kib * 1024, 2 * answer) << model.size() << " " << answer;
  const std::string budget = std::to_string(budget_kib) + "KiB";
  start({"--workers", "1", "--http-listen", "127.0.0.1:0", "--max-unary-bytes", budget,
         "--max-inflight-bytes", budget});
  stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  const grpc::Status status = stub->Inspect(&ctx, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  auto detail = error_detail(status);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->reason(), v1::ConversionError::REASON_RESOURCE_LIMIT) << detail->message();

  HttpRequest post;
  post.target = "/v1/inspect";
  post.body = model;
  const HttpResponse r = http_call(server_->http_port(), post);
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_NE(r.body.find("\"resource_limit\""), std::string::npos) << r.body;
  EXPECT_EQ(wait_for_metric_at_most(server_->metrics_port(), "lite2onnx_inflight_model_bytes", 0),
            0)
      << "a refused answer holds nothing";
}

}  // namespace
}  // namespace lite2onnx::server_test
