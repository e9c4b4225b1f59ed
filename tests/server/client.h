// Calls to a running server through the generated stubs, for the tests and the
// load benchmark.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lite2onnx/v1/converter.grpc.pb.h"

namespace lite2onnx::server_test {

struct ConvertResult {
  grpc::Status status;
  v1::ConvertResponse response;
  std::string request_id;  // the x-request-id the server answered with
};

// Request metadata, e.g. {"x-lite2onnx-test-fault", "crash"} (--test-fault-hooks).
using Metadata = std::map<std::string, std::string>;

// One unary Convert; `timeout` zero means no deadline.
ConvertResult convert(grpc::Channel& channel, const std::string& model,
                      const v1::ConvertOptions& options = {},
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                      const Metadata& metadata = {});
// The same with a request built once (the load benchmark reuses it).
ConvertResult convert(grpc::Channel& channel, const v1::ConvertRequest& request,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                      const Metadata& metadata = {});

// A Convert call of the mini model whose worker hangs (the test hook "hang";
// the server needs --test-fault-hooks) until the call is cancelled or its
// deadline passes: a worker kept busy for as long as a test needs, on any
// machine. The destructor cancels it and waits for its end.
class HungCall {
 public:
  explicit HungCall(grpc::Channel& channel,
                    std::chrono::milliseconds deadline = std::chrono::milliseconds(0));
  ~HungCall();
  HungCall(const HungCall&) = delete;
  HungCall& operator=(const HungCall&) = delete;
  void cancel() { ctx_.TryCancel(); }
  // Its status, once it ended.
  grpc::Status result();

 private:
  std::unique_ptr<v1::Converter::Stub> stub_;
  grpc::ClientContext ctx_;
  v1::ConvertRequest request_;
  v1::ConvertResponse response_;
  std::promise<grpc::Status> done_;
  std::optional<grpc::Status> status_;
};

// One Inspect; its status.
grpc::Status inspect_status(grpc::Channel& channel, const std::string& model,
                            const Metadata& metadata = {});

struct StreamResult {
  grpc::Status status;
  v1::Diagnostics diagnostics;
  std::string onnx_model;
  size_t chunks_received = 0;
  bool diagnostics_first = false;
};

// One ConvertStream call: the options (with total_bytes when `announce_size`),
// then `model` in chunks of `chunk_bytes`, then the answer.
StreamResult convert_stream(grpc::Channel& channel, const std::string& model,
                            const v1::ConvertOptions& options, size_t chunk_bytes,
                            bool announce_size = true);

// The ConversionError inside the status's google.rpc.Status details, if any.
std::optional<v1::ConversionError> error_detail(const grpc::Status& status);

// grpc.health.v1.Health/Check of `service` ("" is the whole server):
// "SERVING", "NOT_SERVING", ..., or "error: <code> <message>".
std::string health(grpc::Channel& channel, const std::string& service = "");

// The service names that server reflection (v1alpha) lists.
std::vector<std::string> reflected_services(grpc::Channel& channel);

// The names of the files reflection returns for a symbol (the file defining it
// and its dependencies); empty when unknown.
std::vector<std::string> reflected_files(grpc::Channel& channel, const std::string& symbol);

}  // namespace lite2onnx::server_test

namespace lite2onnx::server_test {

// The value of one series in a Prometheus text exposition, e.g.
// `lite2onnx_requests_total{code="OK",method="Convert",protocol="grpc"}` (labels in
// alphabetical order, as prometheus-cpp writes them).
std::optional<double> metric(const std::string& exposition, const std::string& series);

// Scrapes http://127.0.0.1:port/metrics until `series` has at least `value`;
// its last value (nullopt if never seen) when `timeout` passes first.
// (The timeouts are guards against a wait that never ends, not bounds on
// speed: generous, so that a loaded machine still passes.)
std::optional<double> wait_for_metric(int port, const std::string& series, double value,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
// The same until `series` is at most `value` (a gauge going back down).
std::optional<double> wait_for_metric_at_most(
    int port, const std::string& series, double value,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace lite2onnx::server_test
