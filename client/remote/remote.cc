#include "client/remote/remote.h"

#include <grpc/support/log.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "client/remote/wire.h"
#include "lite2onnx/v1/converter.grpc.pb.h"

namespace lite2onnx::remote {
namespace {

using Clock = std::chrono::system_clock;

Failure make_failure(FailureKind kind, ErrorCode code, std::string message) {
  Failure f;
  f.kind = kind;
  f.error = make_error(code, std::move(message));
  return f;
}

// How the CLI tells a ConversionError's reason apart.
std::pair<FailureKind, ErrorCode> classify(v1::ConversionError::Reason reason) {
  using E = v1::ConversionError;
  switch (reason) {
    case E::REASON_INVALID_MODEL:
      return {FailureKind::kConversion, ErrorCode::kInvalidModel};
    case E::REASON_UNSUPPORTED:
      return {FailureKind::kConversion, ErrorCode::kUnsupported};
    case E::REASON_INVALID_OPTION:
      return {FailureKind::kConversion, ErrorCode::kInvalidOption};
    case E::REASON_RESOURCE_LIMIT:
      return {FailureKind::kConversion, ErrorCode::kResourceLimit};
    case E::REASON_CANCELLED:
      return {FailureKind::kConversion, ErrorCode::kCancelled};
    case E::REASON_INTERNAL:
      return {FailureKind::kConversion, ErrorCode::kInternal};
    case E::REASON_MODEL_TOO_LARGE:
      return {FailureKind::kModelTooLarge, ErrorCode::kResourceLimit};
    case E::REASON_QUEUE_FULL:
    case E::REASON_MEMORY_BUDGET:
      return {FailureKind::kOverloaded, ErrorCode::kResourceLimit};
    case E::REASON_DEADLINE_EXCEEDED:
      return {FailureKind::kDeadlineExceeded, ErrorCode::kCancelled};
    case E::REASON_SHUTTING_DOWN:
      return {FailureKind::kUnavailable, ErrorCode::kInternal};
    default:  // REASON_BAD_STREAM (this client's fault) and reasons it does not know
      return {FailureKind::kProtocol, ErrorCode::kInternal};
  }
}

// A failure the server described with a ConversionError.
Failure from_detail(const v1::ConversionError& e) {
  const auto [kind, code] = classify(e.reason());
  Failure f = make_failure(kind, code, e.message());
  f.error.op_index = e.op_index();
  f.error.tensor = e.tensor();
  f.error.unsupported = from_proto(e.unsupported());
  return f;
}

// The one place where a failed call's status becomes a Failure.
Failure to_failure(const grpc::Status& status, const std::string& address) {
  Failure f;
  if (auto detail = conversion_error(status)) {
    f = from_detail(*detail);
  } else {
    // Statuses without details come from gRPC itself, or from something else
    // listening at the address.
    const std::string& why = status.error_message();
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        f = make_failure(FailureKind::kUnavailable, ErrorCode::kInternal,
                         "cannot reach a lite2onnx server at " + address + ": " + why);
        break;
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::PERMISSION_DENIED:
        f = make_failure(FailureKind::kUnavailable, ErrorCode::kInternal,
                         "the server at " + address + " refused this client: " + why);
        break;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        f = make_failure(FailureKind::kDeadlineExceeded, ErrorCode::kCancelled,
                         "no answer from " + address + " before the deadline");
        break;
      case grpc::StatusCode::RESOURCE_EXHAUSTED:  // e.g. gRPC's own message size limit
        f = make_failure(FailureKind::kModelTooLarge, ErrorCode::kResourceLimit,
                         "the server at " + address + " refused the message: " + why);
        break;
      default:
        f = make_failure(FailureKind::kProtocol, ErrorCode::kInternal,
                         "unexpected answer from " + address + " (gRPC status " +
                             std::to_string(static_cast<int>(status.error_code())) + "): " + why);
        break;
    }
  }
  return f;
}

Outcome<std::string> read_pem(const std::string& path, const char* flag) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  if (f) s << f.rdbuf();
  if (!f || s.str().empty())
    return make_failure(FailureKind::kIo, ErrorCode::kInternal,
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

std::string Failure::name() const {
  switch (kind) {
    case FailureKind::kConversion:
      return to_string(error.code);
    case FailureKind::kModelTooLarge:
      return "model_too_large";
    case FailureKind::kOverloaded:
      return "overloaded";
    case FailureKind::kDeadlineExceeded:
      return "deadline_exceeded";
    case FailureKind::kUnavailable:
      return "unavailable";
    case FailureKind::kIo:
      return "io_error";
    case FailureKind::kProtocol:
      break;
  }
  return "internal";
}

void silence_grpc_logging() {
  gpr_set_log_function([](gpr_log_func_args*) {});
}

struct Client::Impl {
  std::string address;
  std::chrono::milliseconds deadline{0};
  uint64_t stream_threshold_bytes = kStreamThresholdBytes;
  std::unique_ptr<v1::Converter::Stub> stub;

  // Every call of one operation shares the deadline taken when it started.
  std::optional<Clock::time_point> call_deadline() const {
    if (deadline.count() <= 0) return std::nullopt;
    return Clock::now() + deadline;
  }
  static void prepare(grpc::ClientContext& ctx, std::optional<Clock::time_point> deadline) {
    if (deadline) ctx.set_deadline(*deadline);
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
  if (!bad_answer.empty())
    return make_failure(FailureKind::kProtocol, ErrorCode::kInternal, bad_answer);
  if (!status.ok()) return to_failure(status, address);
  if (!have_diagnostics || c.onnx.size() != total)
    return make_failure(FailureKind::kProtocol, ErrorCode::kInternal,
                        "the server's ConvertStream answer ended after " +
                            std::to_string(c.onnx.size()) + " of " + std::to_string(total) +
                            " ONNX bytes");
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
  if (!unary && unary.error().kind == FailureKind::kModelTooLarge)
    return impl_->convert_stream(model, wire, deadline);
  return unary;
}

Outcome<ModelInfo> Client::inspect(std::span<const std::byte> model) {
  grpc::ClientContext ctx;
  Impl::prepare(ctx, impl_->call_deadline());
  v1::InspectRequest request;
  request.set_model(reinterpret_cast<const char*>(model.data()), model.size());
  v1::InspectResponse response;
  const grpc::Status status = impl_->stub->Inspect(&ctx, request, &response);
  if (!status.ok()) return to_failure(status, impl_->address);
  return from_proto(response);
}

Outcome<std::vector<OpSupport>> Client::operators() {
  grpc::ClientContext ctx;
  Impl::prepare(ctx, impl_->call_deadline());
  v1::ListOperatorsResponse response;
  const grpc::Status status =
      impl_->stub->ListOperators(&ctx, v1::ListOperatorsRequest(), &response);
  if (!status.ok()) return to_failure(status, impl_->address);
  return from_proto(response);
}

}  // namespace lite2onnx::remote
