// Options of one conversion, filled by the CLI or the server and passed by value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lite2onnx {

// What one conversion may cost. The model bytes come from the network: each
// count is checked when the model is read, each byte budget while the
// conversion runs, and exceeding one is ErrorCode::kResourceLimit naming the
// limit. The defaults let every real model through (the shared corpus, LLM-size
// graphs of a few thousand ops) and keep a hostile one well under 1 GiB and
// 10 s (30,000 int8 convolutions in dequantize mode, the costliest per op
// measured, take about 2 s and 550 MB); the byte budgets left at 0 scale
// with the model (resolved()).
struct Limits {
  // Models beyond 2 GiB cannot be FlatBuffers (nor protobuf messages).
  uint64_t max_model_bytes = (uint64_t{1} << 31) - 1;
  uint32_t max_tensors = 200'000;   // tensors in the subgraph converted
  uint32_t max_operators = 30'000;  // operators in the subgraph converted
  uint32_t max_inputs_per_op = 65'536;
  uint32_t max_rank = 16;
  // Subgraphs nested inside one another (control flow): checked when the
  // ONNX model is written (node subgraphs as GRAPH attributes; the main
  // graph's nodes' subgraphs are at depth 1).
  uint32_t max_subgraph_depth = 16;
  // Bytes of constants the conversion creates (folded values, lowering
  // matrices, converted copies of weights); 0: 256 MiB + 4 x the model.
  uint64_t max_created_bytes = 0;
  // Bytes of the ONNX model; 0: 512 MiB + 8 x the model, at most 2 GiB - 1
  // (a protobuf message ends there).
  uint64_t max_output_bytes = 0;

  // The limits for a model of `model_bytes`, the byte budgets filled in.
  Limits resolved(uint64_t model_bytes) const {
    Limits r = *this;
    const uint64_t mib = uint64_t{1} << 20, protobuf_max = (uint64_t{1} << 31) - 1;
    if (r.max_created_bytes == 0) r.max_created_bytes = 256 * mib + 4 * model_bytes;
    if (r.max_output_bytes == 0)
      r.max_output_bytes = std::min(protobuf_max, 512 * mib + 8 * model_bytes);
    r.max_output_bytes = std::min(r.max_output_bytes, protobuf_max);
    return r;
  }
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

// A graph input's shape fixed before shape inference (--input-shape
// x=1,224,224,3): each dimension the model leaves dynamic (-1) takes the given
// value; a static one may only be given its own value.
struct InputShape {
  std::string tensor;
  std::vector<int64_t> dims;
  std::string text() const {
    std::string s = tensor + "=";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s;
  }
};

// How the ONNX graph's inputs and outputs are named.
enum class IoNames {
  kTensor,     // their TFLite tensor names
  kSignature,  // the aliases the converted SignatureDef gives them (others keep theirs)
};

// How quantized tensors are expressed in ONNX.
enum class QuantizationMode {
  kQdq,         // QuantizeLinear/DequantizeLinear pairs; integer weights kept
  kDequantize,  // pure float32: weights folded to float, no Q/DQ nodes
  kExact,       // integer arithmetic reproducing TFLite's kernels bit for bit
  // Q/DQ pairs where ONNX Runtime's integer kernels compute what TFLite's do
  // (convolutions, fully connected), TFLite's integer arithmetic for the ops
  // whose Q/DQ kernels round differently (ExactForm::in_qdq_graphs).
  kAuto,
};
// The modes whose graphs are Q/DQ pairs around float ops (qdq.h).
constexpr bool qdq_graph(QuantizationMode m) {
  return m == QuantizationMode::kQdq || m == QuantizationMode::kAuto;
}
// The mode's name, as --quantization takes it.
constexpr std::string_view to_string(QuantizationMode m) {
  switch (m) {
    case QuantizationMode::kQdq:
      return "qdq";
    case QuantizationMode::kDequantize:
      return "dequantize";
    case QuantizationMode::kExact:
      return "exact";
    case QuantizationMode::kAuto:
      return "auto";
  }
  return "";
}

struct ConvertOptions {
  int opset = 13;  // ONNX default-domain opset, 13..17
  LayoutOptions layout;
  QuantizationMode quantization = QuantizationMode::kAuto;
  // Keep float16 weights as float16 initializers followed by a Cast to float32
  // (default: widen them to float32 at conversion time).
  bool keep_float16_weights = false;
  // Keep int8 activations int8 inside the graph (default: uint8 with zero
  // point + 128, the same values, which ONNX Runtime's x86 integer kernels
  // take; graph inputs and outputs stay int8 either way).
  bool keep_int8_activations = false;
  // Leave the TFLite Metadata (model name, author, license, normalization,
  // value ranges, associated files such as label lists) out of the ONNX
  // model's metadata_props; the provenance entries stay.
  bool no_metadata = false;
  // The SignatureDef whose subgraph is converted, by its key; empty: the
  // model's first signature, or subgraph 0 when it has none.
  std::string signature;
  // Name the graph inputs and outputs after the signature's aliases instead
  // of their tensor names (the tensors inside keep theirs).
  IoNames io_names = IoNames::kTensor;
  // Shapes of graph inputs, fixed right after reading (passes/interface.h), so
  // that shape inference and folding see static shapes.
  std::vector<InputShape> input_shapes;
  // The first dimension of every graph input whose first dimension is dynamic
  // (and that input_shapes does not name); 0: left as the model has it.
  int batch = 0;
  // New names of the graph inputs / outputs, in their order, comma-separated
  // (tf2onnx's --rename-inputs / --rename-outputs); those beyond the list keep
  // theirs. Layout options and input_shapes name a tensor by either name.
  std::string rename_inputs;
  std::string rename_outputs;
  Limits limits;
  // Polled between operators; returning true stops the conversion with kCancelled.
  std::function<bool()> cancelled;
  // The model's SHA-256 (lower-case hex) for the provenance metadata, asked
  // for once when the ONNX model is written, from a caller that has it (a
  // cache key) or hashes it beside the conversion (the CLI). Empty: the core
  // hashes the model then. Streamed to a positional OutputStream (a file),
  // the model asks for it last, after writing everything else, and it must
  // be 64 characters.
  std::function<std::string()> source_sha256;
};

inline constexpr int kMinOpset = 13;
inline constexpr int kMaxOpset = 17;

}  // namespace lite2onnx
