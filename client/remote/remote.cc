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

#include "common/translate.h"
#include "lite2onnx/v1/converter.grpc.pb.h"

namespace lite2onnx::remote {
namespace {

using Clock = std::chrono::system_clock;

// The one place where a failed call's status becomes a Failure (failure.h).
Failure to_failure(const grpc::Status& status, const std::string& address) {
  return failure_from_status(static_cast<int>(status.error_code()), status.error_message(),
                             status.error_details(), address);
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

std::string request_id(const grpc::ClientContext& ctx) {
  const auto& md = ctx.GetServerInitialMetadata();
  auto it = md.find("x-request-id");
  return it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

}  // namespace

void silence_grpc_logging() {
  gpr_set_log_function([](gpr_log_func_args*) {});
}

struct Client::Impl {
  std::string address;
  std::chrono::milliseconds deadline{0};
  uint64_t stream_threshold_bytes = kStreamThresholdBytes;
  RetryOptions retry;
  std::mt19937_64 random{std::random_device{}()};
  std::unique_ptr<v1::Converter::Stub> stub;

  // Every call of one operation shares the deadline taken when it started.
  std::optional<Clock::time_point> call_deadline() const {
    if (deadline.count() <= 0) return std::nullopt;
    return Clock::now() + deadline;
  }
  static void prepare(grpc::ClientContext& ctx, std::optional<Clock::time_point> deadline) {
    if (deadline) ctx.set_deadline(*deadline);
  }

  // Runs `call` until it succeeds, fails for a reason that is not retryable,
  // or retry.max_attempts are used; waits between attempts, and never starts
  // one past `deadline`.
  template <class T>
  Outcome<T> with_retries(std::optional<Clock::time_point> deadline,
                          const std::function<Outcome<T>()>& call) {
    auto backoff = retry.initial_backoff;
    for (int attempt = 1;; ++attempt) {
      Outcome<T> outcome = call();
      if (outcome) {
        if constexpr (std::is_same_v<T, Conversion>) outcome->attempts = attempt;
        return outcome;
      }
      Failure failure = outcome.take_error();
      failure.attempts = attempt;
      if (!failure.reason->retryable || attempt >= retry.max_attempts) return failure;
      // Full jitter in [backoff / 2, backoff]: clients refused together do not return together.
      std::uniform_int_distribution<int64_t> pick(backoff.count() / 2, backoff.count());
      const std::chrono::milliseconds wait(pick(random));
      if (deadline && Clock::now() + wait >= *deadline) return failure;
      std::this_thread::sleep_for(wait);
      backoff = std::min(backoff * 2, retry.max_backoff);
    }
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
  if (!status.ok()) return to_failure(status, address);
  Conversion c;
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
  if (!status.ok()) return to_failure(status, address);
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
  grpc::ChannelArguments args;
  // ONNX models may be larger than gRPC's default 4 MiB receive limit.
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (options.tls.enabled && !options.tls.server_name.empty())
    args.SetSslTargetNameOverride(options.tls.server_name);
  auto impl = std::make_unique<Impl>();
  impl->address = options.address;
  impl->deadline = options.deadline;
  impl->stream_threshold_bytes = options.stream_threshold_bytes;
  impl->retry = options.retry;
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
  return impl_->with_retries<Conversion>(deadline, [&]() -> Outcome<Conversion> {
    if (model.size() > impl_->stream_threshold_bytes)
      return impl_->convert_stream(model, wire, deadline);
    auto unary = impl_->convert_unary(model, wire, deadline);
    // The server's unary limit may be below the threshold: stream instead.
    if (!unary && unary.error().reason->name == "model_too_large")
      return impl_->convert_stream(model, wire, deadline);
    return unary;
  });
}

Outcome<ModelInfo> Client::inspect(std::span<const std::byte> model) {
  v1::InspectRequest request;
  request.set_model(reinterpret_cast<const char*>(model.data()), model.size());
  const auto deadline = impl_->call_deadline();
  return impl_->with_retries<ModelInfo>(deadline, [&]() -> Outcome<ModelInfo> {
    grpc::ClientContext ctx;
    Impl::prepare(ctx, deadline);
    v1::InspectResponse response;
    const grpc::Status status = impl_->stub->Inspect(&ctx, request, &response);
    if (!status.ok()) return to_failure(status, impl_->address);
    return from_proto(response);
  });
}

Outcome<std::vector<OpSupport>> Client::operators() {
  const auto deadline = impl_->call_deadline();
  return impl_->with_retries<std::vector<OpSupport>>(
      deadline, [&]() -> Outcome<std::vector<OpSupport>> {
        grpc::ClientContext ctx;
        Impl::prepare(ctx, deadline);
        v1::ListOperatorsResponse response;
        const grpc::Status status =
            impl_->stub->ListOperators(&ctx, v1::ListOperatorsRequest(), &response);
        if (!status.ok()) return to_failure(status, impl_->address);
        return from_proto(response);
      });
}

}  // namespace lite2onnx::remote
