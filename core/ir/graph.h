// The converter's intermediate representation: tensors, nodes and a graph.
// A graph starts with TFLite-dialect nodes (from the reader), and op converters
// lower it to ONNX-dialect nodes, which the emitter serializes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

// The graph's inputs or outputs: an ordered list of tensors that also answers
// "is this tensor in the list?" in constant time (models may have hundreds of
// thousands of outputs, and passes ask for every tensor they touch).
class TensorList {
 public:
  using value_type = TensorId;
  using const_iterator = std::vector<TensorId>::const_iterator;
  using iterator = const_iterator;

  TensorList() = default;
  TensorList(std::initializer_list<TensorId> ids) { assign(ids.begin(), ids.end()); }
  TensorList& operator=(std::initializer_list<TensorId> ids) {
    assign(ids.begin(), ids.end());
    return *this;
  }
  template <class It>
  void assign(It first, It last) {
    ids_.clear();
    count_.clear();
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(TensorId id);
  bool contains(TensorId id) const {
    return id >= 0 && static_cast<size_t>(id) < count_.size() && count_[static_cast<size_t>(id)];
  }

  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  TensorId operator[](size_t i) const { return ids_[i]; }
  const_iterator begin() const { return ids_.begin(); }
  const_iterator end() const { return ids_.end(); }
  const std::vector<TensorId>& ids() const { return ids_; }

 private:
  std::vector<TensorId> ids_;
  std::vector<uint32_t> count_;  // per tensor id: how often it is listed
};

// Bytes of constant data one conversion creates (folded values, lowering
// matrices, converted copies of weights), against Limits::max_created_bytes:
// a small model must not make the converter allocate gigabytes. Passes charge
// what they create through Graph::own(); a charge past the limit is recorded
// and the pass that made it stops at its next check (Graph::created_status()).
class CreatedBytes {
 public:
  void set_limit(uint64_t limit) { limit_ = limit; }
  uint64_t used() const { return used_; }
  uint64_t limit() const { return limit_; }
  // Whether `bytes` more still fit (a check before a large allocation).
  bool fits(uint64_t bytes) const { return bytes <= limit_ - std::min(used_, limit_); }
  // Counts `bytes`; the first charge that passes the limit records `by`.
  void charge(uint64_t bytes, std::string_view by);
  bool exceeded() const { return used_ > limit_; }
  const std::string& exceeded_by() const { return exceeded_by_; }

 private:
  uint64_t used_ = 0;
  uint64_t limit_ = UINT64_MAX;
  std::string exceeded_by_;
};

class Graph {
 public:
  std::string name;
  // A deque, so references to tensors stay valid while passes add new ones.
  std::deque<Tensor> tensors;
  std::vector<Node> nodes;
  TensorList inputs;
  TensorList outputs;

  // Constants the conversion created: charged to `created`.
  CreatedBytes created;

  TensorId add_tensor(Tensor t);
  // Constant data made by the converter, charged to `created` (`by` names
  // what made it, for the error).
  ConstData own(std::vector<std::byte> data, DataType type, std::string_view by);
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
