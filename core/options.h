// Options of one conversion, filled by the CLI or the server and passed by value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lite2onnx {

struct Limits {
  // Models beyond 2 GiB cannot be FlatBuffers (nor protobuf messages).
  uint64_t max_model_bytes = (uint64_t{1} << 31) - 1;
  uint32_t max_tensors = 1u << 20;
  uint32_t max_operators = 1u << 20;
  uint32_t max_rank = 16;
};

// The axis order one tensor should have in ONNX, written as letters: `from` is
// the tensor's TFLite order, `to` its ONNX order (x=NHWC:NCHW). Any
// permutation works (NDHWC:NCDHW, ABC:CAB).
struct LayoutSpec {
  std::string tensor;
  std::string from;
  std::string to;
  std::string text() const { return tensor + "=" + from + ":" + to; }
};

struct LayoutOptions {
  // Seed propagation like Implicit ops; may override what the graph would choose.
  std::vector<LayoutSpec> explicit_layouts;
  // Layout of particular graph inputs/outputs in the ONNX interface.
  std::vector<LayoutSpec> io_layouts;
  // Keep the TFLite axis order for every graph input and output not named above.
  bool keep_io_layout = false;
};

// How quantized tensors are expressed in ONNX.
enum class QuantizationMode {
  kQdq,         // QuantizeLinear/DequantizeLinear pairs; integer weights kept
  kDequantize,  // pure float32: weights folded to float, no Q/DQ nodes
};

struct ConvertOptions {
  int opset = 13;  // ONNX default-domain opset, 13..17
  LayoutOptions layout;
  QuantizationMode quantization = QuantizationMode::kQdq;
  // Keep float16 weights as float16 initializers followed by a Cast to float32
  // (default: widen them to float32 at conversion time).
  bool keep_float16_weights = false;
  // Keep int8 activations int8 inside the graph (default: uint8 with zero
  // point + 128, the same values, which ONNX Runtime's x86 integer kernels
  // take; graph inputs and outputs stay int8 either way).
  bool keep_int8_activations = false;
  Limits limits;
  // Polled between operators; returning true stops the conversion with kCancelled.
  std::function<bool()> cancelled;
};

inline constexpr int kMinOpset = 13;
inline constexpr int kMaxOpset = 17;

}  // namespace lite2onnx
