#include "client.h"

#include <google/protobuf/descriptor.pb.h>

#include "client/remote/wire.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server_process.h"
#include "test_models.h"

#include <thread>

namespace lite2onnx::server_test {

ConvertResult convert(grpc::Channel& channel, const std::string& model,
                      const v1::ConvertOptions& options, std::chrono::milliseconds timeout,
                      const Metadata& metadata) {
  v1::ConvertRequest request;
  request.set_model(model);
  *request.mutable_options() = options;
  return convert(channel, request, timeout, metadata);
}

ConvertResult convert(grpc::Channel& channel, const v1::ConvertRequest& request,
                      std::chrono::milliseconds timeout, const Metadata& metadata) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  grpc::ClientContext ctx;
  if (timeout.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  ConvertResult r;
  r.status = stub->Convert(&ctx, request, &r.response);
  // In the headers of an answer, in the trailers of a refusal.
  for (const auto* md : {&ctx.GetServerInitialMetadata(), &ctx.GetServerTrailingMetadata()})
    if (auto it = md->find("x-request-id"); it != md->end() && r.request_id.empty())
      r.request_id.assign(it->second.data(), it->second.size());
  return r;
}

grpc::Status inspect_status(grpc::Channel& channel, const std::string& model,
                            const Metadata& metadata) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  grpc::ClientContext ctx;
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  v1::InspectRequest request;
  request.set_model(model);
  v1::InspectResponse response;
  return stub->Inspect(&ctx, request, &response);
}

StreamResult convert_stream(grpc::Channel& channel, const std::string& model,
                            const v1::ConvertOptions& options, size_t chunk_bytes,
                            bool announce_size) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  grpc::ClientContext ctx;
  auto stream = stub->ConvertStream(&ctx);
  v1::ConvertChunk chunk;
  *chunk.mutable_options() = options;
  if (announce_size) chunk.set_total_bytes(model.size());
  bool sending = stream->Write(chunk);
  for (size_t pos = 0; sending && pos < model.size(); pos += chunk_bytes) {
    chunk.Clear();
    chunk.set_data(model.substr(pos, chunk_bytes));
    sending = stream->Write(chunk);
  }
  stream->WritesDone();
  StreamResult r;
  while (stream->Read(&chunk)) {
    if (chunk.has_diagnostics()) {
      r.diagnostics_first = r.chunks_received == 0;
      r.diagnostics = chunk.diagnostics();
    } else {
      r.onnx_model += chunk.data();
    }
    ++r.chunks_received;
  }
  r.status = stream->Finish();
  return r;
}

std::optional<v1::ConversionError> error_detail(const grpc::Status& status) {
  return remote::conversion_error(status.error_details());
}

HungCall::HungCall(grpc::Channel& channel, std::chrono::milliseconds deadline)
    : stub_(v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}))) {
  ctx_.AddMetadata("x-lite2onnx-test-fault", "hang");
  if (deadline.count() > 0) ctx_.set_deadline(std::chrono::system_clock::now() + deadline);
  request_.set_model(read_file(mini_mobilenet_path()));
  stub_->async()->Convert(&ctx_, &request_, &response_,
                          [this](grpc::Status s) { done_.set_value(std::move(s)); });
}

HungCall::~HungCall() {
  cancel();
  result();
}

grpc::Status HungCall::result() {
  if (!status_) status_ = done_.get_future().get();
  return *status_;
}

std::string health(grpc::Channel& channel, const std::string& service) {
  auto stub =
      grpc::health::v1::Health::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));  // a guard
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status s = stub->Check(&ctx, request, &response);
  if (!s.ok()) return "error: " + std::to_string(s.error_code()) + " " + s.error_message();
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

namespace {

using grpc::reflection::v1alpha::ServerReflection;
using grpc::reflection::v1alpha::ServerReflectionRequest;
using grpc::reflection::v1alpha::ServerReflectionResponse;

std::optional<ServerReflectionResponse> reflect(grpc::Channel& channel,
                                                const ServerReflectionRequest& request) {
  auto stub = ServerReflection::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));  // a guard
  auto stream = stub->ServerReflectionInfo(&ctx);
  ServerReflectionResponse response;
  const bool ok = stream->Write(request) && stream->Read(&response);
  stream->WritesDone();
  if (!stream->Finish().ok() || !ok) return std::nullopt;
  return response;
}

}  // namespace

std::vector<std::string> reflected_services(grpc::Channel& channel) {
  ServerReflectionRequest request;
  request.set_list_services("");
  std::vector<std::string> names;
  if (auto r = reflect(channel, request))
    for (const auto& s : r->list_services_response().service()) names.push_back(s.name());
  return names;
}

std::vector<std::string> reflected_files(grpc::Channel& channel, const std::string& symbol) {
  ServerReflectionRequest request;
  request.set_file_containing_symbol(symbol);
  std::vector<std::string> files;
  if (auto r = reflect(channel, request))
    for (const auto& bytes : r->file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      if (file.ParseFromString(bytes)) files.push_back(file.name());
    }
  return files;
}

}  // namespace lite2onnx::server_test

namespace lite2onnx::server_test {

std::optional<double> metric(const std::string& exposition, const std::string& series) {
  size_t pos = 0;
  while ((pos = exposition.find(series + " ", pos)) != std::string::npos) {
    if (pos == 0 || exposition[pos - 1] == '\n')
      return std::strtod(exposition.c_str() + pos + series.size() + 1, nullptr);
    pos += series.size();
  }
  return std::nullopt;
}

namespace {

template <class Reached>
std::optional<double> wait_until(int port, const std::string& series,
                                 std::chrono::milliseconds timeout, Reached reached) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  std::optional<double> last;
  for (;;) {
    last = metric(http_get(port, "/metrics"), series);
    if (reached(last) || std::chrono::steady_clock::now() >= end) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::optional<double> wait_for_metric(int port, const std::string& series, double value,
                                      std::chrono::milliseconds timeout) {
  return wait_until(port, series, timeout,
                    [value](std::optional<double> v) { return v && *v >= value; });
}

std::optional<double> wait_for_metric_at_most(int port, const std::string& series, double value,
                                              std::chrono::milliseconds timeout) {
  return wait_until(port, series, timeout,
                    [value](std::optional<double> v) { return v && *v <= value; });
}

}  // namespace lite2onnx::server_test
