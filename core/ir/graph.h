// The converter's intermediate representation: tensors, nodes and a graph.
// A graph starts with TFLite-dialect nodes (from the reader), and op converters
// lower it to ONNX-dialect nodes, which the emitter serializes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/types.h"

namespace lite2onnx::ir {

using TensorId = int32_t;
inline constexpr TensorId kNoTensor = -1;

// Bytes of a constant: a view into the caller's model buffer (no copy), or
// bytes the converter made, kept alive by `owner`.
struct ConstData {
  std::span<const std::byte> bytes;
  DataType stored_type = DataType::kFloat32;  // may differ from Tensor::dtype (f16 -> f32)
  std::shared_ptr<const std::vector<std::byte>> owner;

  static ConstData owned(std::vector<std::byte> data, DataType type);
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = 0;  // quantized_dimension, for per-axis scales
};

// The K axis of a [N, K] tensor that a Reshape flattened from a permuted
// tensor: K holds `dims` (TFLite order) in the order `perm`. A FULLY_CONNECTED
// reading it permutes its weight columns to match (no Transpose needed).
struct FlattenedAxes {
  Shape dims;
  Perm perm;
};

struct Tensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;  // TFLite axis order; -1 marks a dynamic dimension
  bool has_rank = true;
  std::optional<QuantParams> quant;
  // QDQ: the tensor is float32 in the converted graph but holds TFLite integers
  // of this type (dequantized by `quant`); materialize_qdq writes the
  // QuantizeLinear/DequantizeLinear nodes around it. A constant keeps its
  // integer bytes (data->stored_type is this type).
  std::optional<DataType> quantized_type;
  std::optional<ConstData> data;  // set for constants
  Perm layout;                    // ONNX order is permute_shape(shape, layout)
  bool is_variable = false;
  std::optional<FlattenedAxes> flattened;
  // ONNX dims when they are not permute_shape(shape, layout): a constant
  // permuted in its own axes and then viewed with fewer of them.
  std::optional<Shape> emit_shape;

  bool is_const() const { return data.has_value(); }
  size_t rank() const { return shape.size(); }
  Shape onnx_shape() const { return emit_shape ? *emit_shape : permute_shape(shape, layout); }
};

using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;

struct Attr {
  std::string name;
  AttrValue value;
};

// Ordered (so output stays deterministic) name -> value list.
class Attributes {
 public:
  void set(const std::string& name, AttrValue value);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t get_int(const std::string& name, int64_t fallback = 0) const;
  float get_float(const std::string& name, float fallback = 0.f) const;
  std::string get_string(const std::string& name, const std::string& fallback = "") const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  const std::vector<Attr>& list() const { return attrs_; }

 private:
  const Attr* find(const std::string& name) const;
  std::vector<Attr> attrs_;
};

enum class Dialect : uint8_t { kTflite, kOnnx };

struct Node {
  Dialect dialect = Dialect::kTflite;
  int builtin = -1;              // TFLite builtin code (TFLite dialect; 32 = CUSTOM)
  std::string op;                // TFLite builtin name / custom code, or ONNX op_type
  std::string domain;            // ONNX domain ("" is the default domain)
  std::string name;              // traceable: Conv2D_3, Conv2D_3/Relu6
  int source_op = -1;            // index of the TFLite operator this node comes from
  std::vector<TensorId> inputs;  // kNoTensor marks an omitted optional input
  std::vector<TensorId> outputs;
  Attributes attrs;
};

// A subgraph that is read but not converted (only the primary one is).
struct SubgraphSummary {
  int index = 0;
  std::string name;
  size_t tensors = 0;
  size_t operators = 0;
};

class Graph {
 public:
  std::string name;
  // A deque, so references to tensors stay valid while passes add new ones.
  std::deque<Tensor> tensors;
  std::vector<Node> nodes;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;

  TensorId add_tensor(Tensor t);
  Tensor& tensor(TensorId id) { return tensors[static_cast<size_t>(id)]; }
  const Tensor& tensor(TensorId id) const { return tensors[static_cast<size_t>(id)]; }
  bool valid(TensorId id) const { return id >= 0 && static_cast<size_t>(id) < tensors.size(); }
  bool is_graph_input(TensorId id) const;
  bool is_graph_output(TensorId id) const;

  // Index of the node producing each tensor (-1: graph input or constant).
  std::vector<int> producers() const;
  // Number of nodes (and graph outputs) reading each tensor.
  std::vector<int> use_counts() const;
};

}  // namespace lite2onnx::ir
