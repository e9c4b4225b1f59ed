// Options of one conversion, filled by the CLI or the server and passed by value.
#pragma once

#include <cstdint>
#include <functional>

namespace lite2onnx {

struct Limits {
  // Models beyond 2 GiB cannot be FlatBuffers (nor protobuf messages).
  uint64_t max_model_bytes = (uint64_t{1} << 31) - 1;
  uint32_t max_tensors = 1u << 20;
  uint32_t max_operators = 1u << 20;
  uint32_t max_rank = 16;
};

struct ConvertOptions {
  int opset = 13;  // ONNX default-domain opset, 13..17
  Limits limits;
  // Polled between operators; returning true stops the conversion with kCancelled.
  std::function<bool()> cancelled;
};

inline constexpr int kMinOpset = 13;
inline constexpr int kMaxOpset = 17;

}  // namespace lite2onnx
