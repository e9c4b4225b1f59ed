// What a conversion did: returned with every result, printable as text or JSON.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/types.h"
#include "core/model_metadata.h"
#include "core/status.h"

namespace lite2onnx {

// A node the converter added that has no TFLite counterpart (Transpose, Reshape, ...).
struct InsertedNode {
  std::string node;     // ONNX node name
  std::string op_type;  // ONNX op type
  std::string tensor;   // tensor it acts on
  std::string reason;
};

// A constant whose data was re-laid out (permuted, or broadcast to a higher
// rank) on its way into the ONNX initializer: no node, but worth knowing.
struct RewrittenInitializer {
  std::string tensor;
  std::string reason;
};

// Layout of a graph input or output in the ONNX model.
struct IoLayout {
  std::string tensor;
  bool is_input = true;
  ir::Perm perm;  // empty: same axis order as TFLite
};

struct PhaseTiming {
  std::string phase;
  double ms = 0;
};

// What quantization became: Q/DQ nodes by the reason they exist.
struct QuantizationReport {
  std::string mode;  // "auto", "qdq", "exact" or "dequantize"
  // "QuantizeLinear: quantized activation" -> count, ...
  std::map<std::string, int> nodes;
  int cancelled_pairs = 0;       // DequantizeLinear -> QuantizeLinear pairs removed
  int integer_initializers = 0;  // constants kept as int8/uint8/int32
  size_t integer_initializer_bytes = 0;
  int quantized_activations = 0;  // non-constant tensors with Q/DQ
  // int8 activations written as uint8 (zero point + 128) inside the graph
  bool int8_activations_as_uint8 = false;
};

struct Diagnostics {
  int opset = 0;
  size_t model_bytes = 0;
  size_t onnx_bytes = 0;
  std::map<std::string, int> source_ops;     // TFLite op name -> count
  std::map<std::string, int> emitted_nodes;  // ONNX op type -> count
  std::vector<InsertedNode> inserted;
  int transposes_before_cleanup = 0;  // after layout propagation
  int transposes_after_cleanup = 0;   // in the emitted model
  std::vector<RewrittenInitializer> rewritten_initializers;
  std::vector<IoLayout> io_layouts;
  QuantizationReport quantization;
  std::vector<std::string> warnings;
  std::vector<UnsupportedOp> unsupported;
  std::vector<PhaseTiming> timings;
  std::vector<std::string> subgraphs;  // every subgraph, "index name (N ops)"
  // A server's conversion cache: "hit" (no conversion ran) or "miss"; empty: no cache.
  std::string cache;

  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

// What `inspect` reports about a model, without converting it.
struct TensorInfo {
  int index = 0;
  std::string name;
  std::string dtype;
  ir::Shape shape;
  bool constant = false;
  bool variable = false;
  bool sparse = false;      // stored sparse (SparsityParameters) in the file
  size_t quant_scales = 0;  // 0: not quantized; 1: per-tensor; >1: per-axis
  int quant_axis = 0;
};

struct OpInfo {
  int index = 0;
  std::string op;
  std::vector<int> inputs, outputs;
  bool supported = true;
  std::string reason;       // why it cannot be converted
  std::string reason_code;  // UnsupportedOp::reason_code
};

// One input or output of a SignatureDef.
struct SignatureTensorInfo {
  std::string alias;  // the signature's name for it
  int tensor = 0;     // index in the signature's subgraph
  std::string name;   // the tensor's name
  std::string dtype;
  ir::Shape shape;  // TFLite order; -1: known at run time only
};

struct SignatureInfo {
  std::string key;
  int subgraph = 0;
  std::vector<SignatureTensorInfo> inputs, outputs;
};

struct ModelInfo {
  uint32_t version = 0;
  std::string description;
  std::vector<std::string> subgraphs;
  // Every SignatureDef, in the model's order.
  std::vector<SignatureInfo> signatures;
  // The subgraph the tensors and ops below are of: the one converted with
  // the default options (the first signature's, else 0).
  int subgraph = 0;
  std::vector<TensorInfo> tensors;
  std::vector<int> inputs, outputs;
  std::vector<OpInfo> ops;
  std::vector<UnsupportedOp> unsupported;
  // What would stop a conversion besides unsupported ops (e.g. invalid
  // quantization parameters), as the conversion's error message.
  std::vector<std::string> problems;
  // The TFLite Metadata and associated files (what the ONNX model would carry
  // in its metadata_props, file contents included).
  TfliteMetadata metadata;

  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

}  // namespace lite2onnx
