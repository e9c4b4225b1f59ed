// How every lite2onnx client talks to a set of servers, defined once for the
// C++ client library (the CLI's --server) and the Python client: a gRPC
// service config (round_robin over every address the target resolves to, and
// the retry policy of the error table's retryable reasons) and the channel
// arguments around it (keepalive, the retry buffer). Text and numbers only:
// each client hands them to its own gRPC.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lite2onnx {

// gRPC caps a retry policy at 5 attempts (A6 client retries).
inline constexpr int kMaxGrpcAttempts = 5;
// The backoff between attempts of a call the server did not answer (nothing
// listens, the connection broke): gRPC waits random(0, b) with b starting at
// the initial backoff and doubling up to the maximum. A server's refusal
// (queue_full, memory_budget, shutting_down, cancelled) says itself when to
// come back (server_pushback_ms).
inline constexpr int kInitialBackoffMs = 250;
inline constexpr int kMaxBackoffMs = 8000;
// Keepalive pings on an open connection: a pod that vanished without closing
// its connections (node lost, network partition) is noticed within 30 s.
inline constexpr int kKeepaliveTimeMs = 20'000;
inline constexpr int kKeepaliveTimeoutMs = 10'000;
// What gRPC may hold of one call to send it again: every model that goes in
// one Convert message (32 MiB, client/remote/remote.h) with room to spare; a
// stream beyond it is sent once (not retried once the buffer is exceeded).
inline constexpr int64_t kRetryBufferBytes = int64_t{64} << 20;

// The service config JSON for a client that makes up to `max_attempts`
// attempts per call (clamped to 1..kMaxGrpcAttempts; 1: no retry policy).
// Retried codes: those of the reasons the error table marks retryable
// (RESOURCE_EXHAUSTED, CANCELLED, UNAVAILABLE); the server marks its
// non-retryable answers with those codes final (server_pushback_ms).
std::string client_service_config(int max_attempts);

// The channel arguments every client channel sets, as (name, value) pairs of
// gRPC's channel argument names: the service config above, keepalive,
// unlimited message sizes (ONNX models exceed gRPC's 4 MiB default), the
// retry buffer, and no service config from DNS (ours applies).
struct ChannelArgs {
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, int64_t>> integers;
};
ChannelArgs client_channel_args(int max_attempts);

// The server's grpc-retry-pushback-ms for a failed call of `reason_name`
// (an error-table row) that is attempt `attempt` (1 for the first): for a
// retryable refusal the client's backoff, min(250 ms x 2^(attempt-1), 8 s),
// jittered by `jitter` in [0.5, 1]; -1 (do not retry) for a reason that is not
// retryable although its gRPC code is; "" (no pushback: gRPC's own policy) for
// the others.
std::string server_pushback_ms(std::string_view reason_name, int attempt, double jitter);

// The header with which the server tells the client which attempt of a call
// it answered (1 + grpc-previous-rpc-attempts).
inline constexpr std::string_view kAttemptHeader = "x-lite2onnx-attempt";

}  // namespace lite2onnx
