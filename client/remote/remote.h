// The client library of lite2onnx.v1.Converter: converts, inspects and lists
// operators on a lite2onnx-server, in the core's own terms (ConvertOptions,
// Diagnostics, ModelInfo, OpSupport, Error). The CLI's --server uses it.
//
// No gRPC or protobuf types appear here: only remote.cc and wire.cc see them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "client/remote/status.h"
#include "common/error_reasons.h"
#include "core/convert.h"

namespace lite2onnx::remote {

// Models above this size go through ConvertStream from the start; smaller ones
// are sent in one Convert message, and streamed only when the server refuses
// that message as too large (its --max-unary-bytes, 64 MiB by default, may be
// smaller than this threshold).
inline constexpr uint64_t kStreamThresholdBytes = uint64_t{32} << 20;
// The size of the model pieces sent through ConvertStream (the server sends
// ONNX pieces of the same size).
inline constexpr size_t kStreamChunkBytes = size_t{1} << 20;

struct TlsOptions {
  bool enabled = false;     // TLS; with an empty ca_file the system's roots verify the server
  std::string ca_file;      // PEM CA bundle that signed the server's certificate
  std::string cert_file;    // PEM client certificate chain (mutual TLS), with key_file
  std::string key_file;     // PEM private key of cert_file
  std::string server_name;  // the name to verify instead of the address's host
};

// Retries of calls that failed for a reason the table marks retryable
// (common/error_reasons.h: queue_full, memory_budget, cancelled, shutting_down,
// unavailable). Off by default. gRPC makes them, by the channel's service
// config (common/service_config.h, shared with the Python client): a server's
// refusal says when to come back, an unanswered call waits 250 ms doubling to
// 8 s (jittered); every attempt of one call shares its deadline.
struct RetryOptions {
  int max_attempts = 1;  // 1: no retry; at most kMaxGrpcAttempts (5)
};

// Every client channel balances calls over all the addresses its target
// resolves to (gRPC's round_robin: dns:///NAME:PORT of a headless Service
// reaches every ready pod; ipv4:A:P,B:Q lists them) and pings idle
// connections (keepalive).
struct ClientOptions {
  std::string address;  // HOST:PORT, or any gRPC target (dns:///host:port, unix:/path);
                        // a URL (http://...) is invalid_option with a hint
  TlsOptions tls;
  // Each call's deadline, from its start (a stream fallback included); zero: none.
  std::chrono::milliseconds deadline{0};
  uint64_t stream_threshold_bytes = kStreamThresholdBytes;
  RetryOptions retry;
};

struct Conversion {
  std::string onnx;         // the ONNX model's bytes
  Diagnostics diagnostics;  // what the server's conversion did
  bool streamed = false;    // sent through ConvertStream
  std::string request_id;   // the server's x-request-id for this call (its log names it)
  int attempts = 1;         // calls made, retries included
};

// gRPC logs some failures itself (e.g. a failed TLS handshake) on stderr; a
// program that reports every failure in its own words turns that off.
void silence_grpc_logging();

class Client {
 public:
  // Reads the TLS material and prepares the channel; connects on the first call.
  static Outcome<Client> create(const ClientOptions& options);
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // Convert (or ConvertStream, see kStreamThresholdBytes). Only the options the
  // contract carries are sent: opset, layouts, quantization, float16 weights.
  Outcome<Conversion> convert(std::span<const std::byte> model, const ConvertOptions& options);
  Outcome<ModelInfo> inspect(std::span<const std::byte> model);
  // The server's support matrix (ListOperators).
  Outcome<std::vector<OpSupport>> operators();

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lite2onnx::remote
