#include "common/service_config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/error_reasons.h"

namespace lite2onnx {
namespace {

// The gRPC codes of the retryable rows, in the table's order.
std::vector<std::string> retryable_codes() {
  std::vector<std::string> codes;
  for (const auto& r : error_reasons())
    if (r.retryable && !r.grpc_code_name.empty() &&
        std::find(codes.begin(), codes.end(), r.grpc_code_name) == codes.end())
      codes.emplace_back(r.grpc_code_name);
  return codes;
}

std::string seconds(int ms) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3fs", ms / 1000.0);
  return s;
}

}  // namespace

std::string client_service_config(int max_attempts) {
  max_attempts = std::clamp(max_attempts, 1, kMaxGrpcAttempts);
  std::string json = R"({"loadBalancingConfig":[{"round_robin":{}}])";
  if (max_attempts > 1) {
    std::string codes;
    for (const auto& c : retryable_codes()) codes += (codes.empty() ? "\"" : ",\"") + c + "\"";
    json += R"(,"methodConfig":[{"name":[{"service":"lite2onnx.v1.Converter"}],"retryPolicy":{)";
    json += "\"maxAttempts\":" + std::to_string(max_attempts) + ",\"initialBackoff\":\"" +
            seconds(kInitialBackoffMs) + "\",\"maxBackoff\":\"" + seconds(kMaxBackoffMs) +
            "\",\"backoffMultiplier\":2,\"retryableStatusCodes\":[" + codes + "]}}]";
  }
  return json + "}";
}

ChannelArgs client_channel_args(int max_attempts) {
  ChannelArgs a;
  a.strings.emplace_back("grpc.service_config", client_service_config(max_attempts));
  a.integers = {
      {"grpc.service_config_disable_resolution", 1},
      {"grpc.enable_retries", 1},
      {"grpc.per_rpc_retry_buffer_size", kRetryBufferBytes},
      {"grpc.keepalive_time_ms", kKeepaliveTimeMs},
      {"grpc.keepalive_timeout_ms", kKeepaliveTimeoutMs},
      {"grpc.keepalive_permit_without_calls", 1},
      {"grpc.http2.max_pings_without_data", 0},
      {"grpc.max_receive_message_length", -1},
      {"grpc.max_send_message_length", -1},
  };
  return a;
}

std::string server_pushback_ms(std::string_view reason_name, int attempt, double jitter) {
  const ErrorReason& r = reason_named(reason_name);
  static const std::vector<std::string> codes = retryable_codes();
  const bool retried_code = std::find(codes.begin(), codes.end(), r.grpc_code_name) != codes.end();
  if (!retried_code) return "";
  if (!r.retryable) return "-1";
  const int shift = std::clamp(attempt - 1, 0, 16);
  const double backoff =
      std::min<double>(kMaxBackoffMs, static_cast<double>(kInitialBackoffMs) * (1 << shift));
  return std::to_string(std::lround(backoff * std::clamp(jitter, 0.5, 1.0)));
}

}  // namespace lite2onnx
