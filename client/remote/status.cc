#include "client/remote/status.h"

#include "client/remote/wire.h"
#include "common/translate.h"
#include "google/rpc/status.pb.h"

namespace lite2onnx::remote {
namespace {

// gRPC status codes (grpc::StatusCode), by number.
constexpr int kCancelled = 1, kDeadlineExceeded = 4, kPermissionDenied = 7, kResourceExhausted = 8,
              kUnavailable = 14, kUnauthenticated = 16;

}  // namespace

std::optional<v1::ConversionError> conversion_error(std::string_view details) {
  google::rpc::Status status;
  if (details.empty() || !status.ParseFromArray(details.data(), static_cast<int>(details.size())))
    return std::nullopt;
  for (const auto& any : status.details()) {
    v1::ConversionError e;
    if (any.UnpackTo(&e)) return e;
  }
  return std::nullopt;
}

std::string status_code_name(int grpc_code) {
  for (const auto& r : error_reasons())
    if (r.grpc_code == grpc_code) return std::string(r.grpc_code_name);
  return std::to_string(grpc_code);
}

Failure failure_from_status(int grpc_code, std::string_view message, std::string_view details,
                            std::string_view address) {
  Failure f;
  if (auto detail = conversion_error(details)) {
    // A reason this client does not know (a newer server) reads as internal.
    f = make_failure(reason_of_proto(detail->reason()), detail->message());
    f.error.op_index = detail->op_index();
    f.error.tensor = detail->tensor();
    f.error.unsupported = from_proto(detail->unsupported());
  } else {
    // Statuses without details come from gRPC itself, or from something else
    // listening at the address.
    const std::string at(address), why(message);
    std::string text;
    switch (grpc_code) {
      case kUnavailable:
        text = "cannot reach a lite2onnx server at " + at + ": " + why;
        break;
      case kUnauthenticated:
      case kPermissionDenied:
        text = "the server at " + at + " refused this client: " + why;
        break;
      case kDeadlineExceeded:
        text = "no answer from " + at + " before the deadline";
        break;
      case kResourceExhausted:  // e.g. gRPC's own message size limit
        text = "the server at " + at + " refused the message: " + why;
        break;
      case kCancelled:
        text = "the call to " + at + " was cancelled: " + why;
        break;
      default:
        text = "unexpected answer from " + at + " (gRPC status " + std::to_string(grpc_code) +
               "): " + why;
        break;
    }
    f = make_failure(reason_of_bare_grpc_code(grpc_code), std::move(text));
  }
  f.grpc_code = status_code_name(grpc_code);
  return f;
}

std::optional<Failure> address_problem(std::string_view address) {
  for (std::string_view scheme : {"http://", "https://", "grpc://", "grpcs://"}) {
    if (!address.starts_with(scheme)) continue;
    std::string_view rest = address.substr(scheme.size());
    if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
    const bool tls = scheme == "https://" || scheme == "grpcs://";
    std::string host_port(rest);
    if (host_port.find(':') == std::string::npos) host_port += tls ? ":443" : ":80";
    return make_failure(reason_named("invalid_option"),
                        "server address '" + std::string(address) +
                            "' is a URL; give the gRPC endpoint as HOST:PORT: '" + host_port + "'" +
                            (tls ? " with TLS (--tls, or --tls-ca CA.pem)" : "") +
                            " (the HTTP endpoint is for curl: /v1/convert)");
  }
  return std::nullopt;
}

}  // namespace lite2onnx::remote
