#include "client/remote/remote.h"

#include <grpc/support/log.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <type_traits>

#include "common/service_config.h"
#include "common/translate.h"
#include "lite2onnx/v1/converter.grpc.pb.h"

namespace lite2onnx::remote {
namespace {

using Clock = std::chrono::system_clock;

// Which attempt of the call the server answered (it says so in a header,
// from gRPC's grpc-previous-rpc-attempts), or 0 when no server answered.
int answered_attempt(const grpc::ClientContext& ctx) {
  for (const auto* md : {&ctx.GetServerTrailingMetadata(), &ctx.GetServerInitialMetadata()}) {
    auto it = md->find(grpc::string_ref(kAttemptHeader.data(), kAttemptHeader.size()));
    if (it == md->end()) continue;
    int n = 0;
    for (char c : it->second) n = c >= '0' && c <= '9' && n < 1000 ? n * 10 + (c - '0') : n;
    return n;
  }
  return 0;
}

// The one place where a failed call's status becomes a Failure (failure.h).
// gRPC made the attempts (the service config's retry policy): the server
// says which one it answered; a call no server answered (nothing listens)
// was retried as often as the policy allows if its reason is retryable.
Failure to_failure(const grpc::Status& status, const std::string& address,
                   const grpc::ClientContext& ctx, int max_attempts) {
  Failure f = failure_from_status(static_cast<int>(status.error_code()), status.error_message(),
                                  status.error_details(), address);
  const int answered = answered_attempt(ctx);
  f.attempts = answered > 0 ? answered : f.reason->retryable ? max_attempts : 1;
  return f;
}

Outcome<std::string> read_pem(const std::string& path, const char* flag) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  if (f) s << f.rdbuf();
  if (!f || s.str().empty())
    return make_failure(reason_named("io_error"),
                        std::string("cannot read ") + flag + " '" + path + "'");
  return s.str();
}

Outcome<std::shared_ptr<grpc::ChannelCredentials>> credentials(const TlsOptions& tls) {
  if (!tls.enabled) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!tls.ca_file.empty()) {
    auto ca = read_pem(tls.ca_file, "--tls-ca");
    if (!ca) return ca.error();
    ssl.pem_root_certs = std::move(*ca);
  }
  if (!tls.cert_file.empty()) {
    auto cert = read_pem(tls.cert_file, "--tls-cert");
    if (!cert) return cert.error();
    auto key = read_pem(tls.key_file, "--tls-key");
    if (!key) return key.error();
    ssl.pem_cert_chain = std::move(*cert);
    ssl.pem_private_key = std::move(*key);
  }
  return grpc::SslCredentials(ssl);
}

// The server's request id: in the headers of an answer, in the trailers of a refusal.
std::string request_id(const grpc::ClientContext& ctx) {
  for (const auto* md : {&ctx.GetServerInitialMetadata(), &ctx.GetServerTrailingMetadata()})
    if (auto it = md->find("x-request-id"); it != md->end())
      return std::string(it->second.data(), it->second.size());
  return {};
}

}  // namespace

void silence_grpc_logging() {
  gpr_set_log_function([](gpr_log_func_args*) {});
}

struct Client::Impl {
  std::string address;
  std::chrono::milliseconds deadline{0};
  uint64_t stream_threshold_bytes = kStreamThresholdBytes;
  int max_attempts = 1;  // of the channel's retry policy
  std::unique_ptr<v1::Converter::Stub> stub;

  // Every call of one operation shares the deadline taken when it started.
  std::optional<Clock::time_point> call_deadline() const {
    if (deadline.count() <= 0) return std::nullopt;
    return Clock::now() + deadline;
  }
  static void prepare(grpc::ClientContext& ctx, std::optional<Clock::time_point> deadline) {
    if (deadline) ctx.set_deadline(*deadline);
  }

  Failure failed(const grpc::Status& status, const grpc::ClientContext& ctx) const {
    return to_failure(status, address, ctx, max_attempts);
  }

  Outcome<Conversion> convert_unary(std::span<const std::byte> model,
                                    const v1::ConvertOptions& options,
                                    std::optional<Clock::time_point> deadline);
  Outcome<Conversion> convert_stream(std::span<const std::byte> model,
                                     const v1::ConvertOptions& options,
                                     std::optional<Clock::time_point> deadline);
};

Outcome<Conversion> Client::Impl::convert_unary(std::span<const std::byte> model,
                                                const v1::ConvertOptions& options,
                                                std::optional<Clock::time_point> deadline) {
  grpc::ClientContext ctx;
  prepare(ctx, deadline);
  v1::ConvertRequest request;
  request.set_model(reinterpret_cast<const char*>(model.data()), model.size());
  *request.mutable_options() = options;
  v1::ConvertResponse response;
  const grpc::Status status = stub->Convert(&ctx, request, &response);
  if (!status.ok()) return failed(status, ctx);
  Conversion c;
  c.attempts = std::max(1, answered_attempt(ctx));
  c.onnx = std::move(*response.mutable_onnx_model());
  c.diagnostics = from_proto(response.diagnostics());
  c.request_id = request_id(ctx);
  return c;
}

Outcome<Conversion> Client::Impl::convert_stream(std::span<const std::byte> model,
                                                 const v1::ConvertOptions& options,
                                                 std::optional<Clock::time_point> deadline) {
  grpc::ClientContext ctx;
  prepare(ctx, deadline);
  auto stream = stub->ConvertStream(&ctx);
  // Options and the model's size first (the server refuses an oversized model
  // before it is uploaded), then the model in pieces.
  v1::ConvertChunk chunk;
  *chunk.mutable_options() = options;
  chunk.set_total_bytes(model.size());
  bool sending = stream->Write(chunk);
  const char* data = reinterpret_cast<const char*>(model.data());
  for (size_t pos = 0; sending && pos < model.size(); pos += kStreamChunkBytes) {
    chunk.Clear();
    chunk.set_data(data + pos, std::min(kStreamChunkBytes, model.size() - pos));
    sending = stream->Write(chunk);
  }
  stream->WritesDone();

  // The diagnostics first, then the ONNX model in pieces.
  Conversion c;
  c.streamed = true;
  bool have_diagnostics = false;
  uint64_t total = 0;
  std::string bad_answer;
  while (bad_answer.empty() && stream->Read(&chunk)) {
    if (!have_diagnostics) {
      if (!chunk.has_diagnostics()) {
        bad_answer = "the server's first ConvertStream message has no diagnostics";
        break;
      }
      have_diagnostics = true;
      c.diagnostics = from_proto(chunk.diagnostics());
      total = chunk.total_bytes();
      c.onnx.reserve(std::min<uint64_t>(total, uint64_t{1} << 31));
    } else if (chunk.content_case() != v1::ConvertChunk::kData ||
               c.onnx.size() + chunk.data().size() > total) {
      bad_answer = "the server sent more than the announced " + std::to_string(total) +
                   " ONNX bytes, or something else than data";
    } else {
      c.onnx += chunk.data();
    }
  }
  if (!bad_answer.empty()) ctx.TryCancel();
  const grpc::Status status = stream->Finish();
  if (!bad_answer.empty()) return make_failure(reason_named("internal"), bad_answer);
  if (!status.ok()) return failed(status, ctx);
  c.attempts = std::max(1, answered_attempt(ctx));
  if (!have_diagnostics || c.onnx.size() != total)
    return make_failure(reason_named("internal"), "the server's ConvertStream answer ended after " +
                                                      std::to_string(c.onnx.size()) + " of " +
                                                      std::to_string(total) + " ONNX bytes");
  c.request_id = request_id(ctx);
  return c;
}

Outcome<Client> Client::create(const ClientOptions& options) {
  auto creds = credentials(options.tls);
  if (!creds) return creds.error();
  if (auto bad = address_problem(options.address)) return *bad;
  // Round robin over every address of the target, keepalive and the retry
  // policy: one definition for every client (common/service_config.h).
  const int max_attempts = std::clamp(options.retry.max_attempts, 1, kMaxGrpcAttempts);
  grpc::ChannelArguments args;
  const ChannelArgs channel = client_channel_args(max_attempts);
  for (const auto& [name, value] : channel.strings) args.SetString(name, value);
  for (const auto& [name, value] : channel.integers)
    args.SetInt(name, static_cast<int>(std::min<int64_t>(value, INT32_MAX)));
  if (options.tls.enabled && !options.tls.server_name.empty())
    args.SetSslTargetNameOverride(options.tls.server_name);
  auto impl = std::make_unique<Impl>();
  impl->address = options.address;
  impl->deadline = options.deadline;
  impl->stream_threshold_bytes = options.stream_threshold_bytes;
  impl->max_attempts = max_attempts;
  impl->stub = v1::Converter::NewStub(grpc::CreateCustomChannel(options.address, *creds, args));
  return Client(std::move(impl));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Outcome<Conversion> Client::convert(std::span<const std::byte> model,
                                    const ConvertOptions& options) {
  const v1::ConvertOptions wire = to_proto(options);
  const auto deadline = impl_->call_deadline();
  if (model.size() > impl_->stream_threshold_bytes)
    return impl_->convert_stream(model, wire, deadline);
  auto unary = impl_->convert_unary(model, wire, deadline);
  // The server's unary limit may be below the threshold: stream instead.
  if (!unary && unary.error().reason->name == "model_too_large")
    return impl_->convert_stream(model, wire, deadline);
  return unary;
}

Outcome<ModelInfo> Client::inspect(std::span<const std::byte> model) {
  v1::InspectRequest request;
  request.set_model(reinterpret_cast<const char*>(model.data()), model.size());
  grpc::ClientContext ctx;
  Impl::prepare(ctx, impl_->call_deadline());
  v1::InspectResponse response;
  const grpc::Status status = impl_->stub->Inspect(&ctx, request, &response);
  if (!status.ok()) return impl_->failed(status, ctx);
  return from_proto(response);
}

Outcome<std::vector<OpSupport>> Client::operators() {
  grpc::ClientContext ctx;
  Impl::prepare(ctx, impl_->call_deadline());
  v1::ListOperatorsResponse response;
  const grpc::Status status =
      impl_->stub->ListOperators(&ctx, v1::ListOperatorsRequest(), &response);
  if (!status.ok()) return impl_->failed(status, ctx);
  return from_proto(response);
}

}  // namespace lite2onnx::remote
