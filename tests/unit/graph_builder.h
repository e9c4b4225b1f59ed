// The one IR graph builder of the unit tests: tensors, constants, quantized
// tensors and TFLite- or ONNX-dialect nodes on an ir::Graph, named the way the
// reader and the lowering name them, plus small queries for assertions.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/options.h"
#include "core/passes/passes.h"

namespace lite2onnx::testing {

// What a pass needs besides the graph, for tests: diagnostics, options (set
// them before ctx()) and a checkpoint that never stops.
struct PassFixture {
  Diagnostics diag;
  ConvertOptions options;
  Checkpoint checkpoint;
  passes::PassContext& ctx() {
    ctx_.emplace(passes::PassContext{diag, options, checkpoint});
    return *ctx_;
  }

 private:
  std::optional<passes::PassContext> ctx_;
};

// The nodes the passes inserted, as Diagnostics::inserted lists them.
inline std::vector<InsertedNode> inserted_nodes(const ir::Graph& g) {
  std::vector<InsertedNode> out;
  for (const ir::Node& n : g.nodes())
    if (n.inserted) out.push_back({n.name, n.op, n.inserted->tensor, n.inserted->reason});
  return out;
}

// The i-th node of a graph in order.
inline const ir::Node& node_at(const ir::Graph& g, size_t i) { return g.node(g.order().at(i)); }

class GraphBuilder : public PassFixture {
 public:
  ir::Graph g;

  // ---- tensors ----
  ir::TensorId tensor(const std::string& name, ir::Shape shape,
                      ir::DataType type = ir::DataType::kFloat32, ir::Perm layout = {}) {
    ir::Tensor t;
    t.name = name;
    t.dtype = type;
    t.shape = std::move(shape);
    t.layout = std::move(layout);
    return g.add_tensor(std::move(t));
  }
  ir::TensorId input(const std::string& name, ir::Shape shape,
                     ir::DataType type = ir::DataType::kFloat32) {
    ir::TensorId t = tensor(name, std::move(shape), type);
    g.add_input(t);
    return t;
  }
  void output(ir::TensorId t) { g.add_output(t); }
  void io(const std::vector<ir::TensorId>& inputs, const std::vector<ir::TensorId>& outputs) {
    g.set_inputs(inputs);
    g.set_outputs(outputs);
  }

  // ---- constants ----
  template <class T>
  ir::TensorId constant(const std::string& name, ir::DataType type, const std::vector<T>& values,
                        ir::Shape shape, ir::Perm layout = {}) {
    std::vector<std::byte> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    ir::Tensor t;
    t.name = name;
    t.dtype = type;
    t.shape = std::move(shape);
    t.layout = std::move(layout);
    t.data = ir::ConstData::owned(std::move(bytes), type);
    return g.add_tensor(std::move(t));
  }
  ir::TensorId f32(const std::string& name, const std::vector<float>& v, ir::Shape shape,
                   ir::Perm layout = {}) {
    return constant(name, ir::DataType::kFloat32, v, std::move(shape), std::move(layout));
  }
  ir::TensorId scalar(const std::string& name, float v) { return f32(name, {v}, {}); }
  ir::TensorId i32(const std::string& name, const std::vector<int32_t>& v, ir::Shape shape) {
    return constant(name, ir::DataType::kInt32, v, std::move(shape));
  }
  ir::TensorId i32(const std::string& name, const std::vector<int32_t>& v) {
    return i32(name, v, {static_cast<int64_t>(v.size())});
  }
  ir::TensorId i64(const std::string& name, const std::vector<int64_t>& v, ir::Shape shape) {
    return constant(name, ir::DataType::kInt64, v, std::move(shape));
  }
  ir::TensorId zeros(const std::string& name, ir::Shape shape) {
    return f32(name, std::vector<float>(elements(shape)), std::move(shape));
  }
  // Distinct small values (0.25 * (i % 7) - 0.6), in `layout`.
  ir::TensorId patterned(const std::string& name, ir::Shape shape, ir::Perm layout = {}) {
    std::vector<float> v(elements(shape));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i % 7) - 0.6f;
    return f32(name, v, std::move(shape), std::move(layout));
  }

  // ---- quantized tensors ----
  static ir::QuantParams params(std::vector<float> scale, std::vector<int64_t> zero_point,
                                int axis = 0) {
    ir::QuantParams q;
    q.scale = std::move(scale);
    q.zero_point = std::move(zero_point);
    q.axis = axis;
    return q;
  }
  // A TFLite tensor as the reader makes it (`type` int8/uint8/int32 with `q`).
  ir::TensorId tflite_tensor(const std::string& name, ir::Shape shape, ir::DataType type,
                             std::optional<ir::QuantParams> q) {
    ir::TensorId t = tensor(name, std::move(shape), type);
    g.tensor(t).quant = std::move(q);
    return t;
  }
  // The same with zero bytes as its data.
  ir::TensorId tflite_const(const std::string& name, ir::Shape shape, ir::DataType type,
                            std::optional<ir::QuantParams> q) {
    ir::TensorId t = tflite_tensor(name, shape, type, std::move(q));
    g.tensor(t).data = ir::ConstData::owned(
        std::vector<std::byte>(elements(shape) * ir::element_size(type)), type);
    return t;
  }
  // A quantized activation as QDQ planning leaves it: float32, remembering
  // its integer type.
  ir::TensorId activation(const std::string& name, ir::Shape shape, ir::QuantParams q,
                          ir::DataType type = ir::DataType::kInt8) {
    ir::TensorId t = tensor(name, std::move(shape));
    g.tensor(t).quant = std::move(q);
    g.tensor(t).quantized_type = type;
    return t;
  }
  // A quantized int8 constant (bytes 0, 1, 2, ...) seen in `layout`.
  ir::TensorId weight(const std::string& name, ir::Shape shape, ir::QuantParams q,
                      ir::Perm layout = {}) {
    std::vector<std::byte> bytes(elements(shape));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
    ir::TensorId t = tensor(name, std::move(shape), ir::DataType::kFloat32, std::move(layout));
    g.tensor(t).quant = std::move(q);
    g.tensor(t).quantized_type = ir::DataType::kInt8;
    g.tensor(t).data = ir::ConstData::owned(std::move(bytes), ir::DataType::kInt8);
    return t;
  }

  // ---- nodes ----
  // A TFLite-dialect node, named as the reader names it (Conv2D_3).
  ir::NodeId tflite(int code, std::vector<ir::TensorId> in, std::vector<ir::TensorId> out) {
    ir::Node n;
    n.builtin = code;
    n.op = ir::builtin_name(code);
    n.source_op = static_cast<int>(g.node_count());
    n.name = ir::camel_name(n.op) + "_" + std::to_string(n.source_op);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return g.add_node(std::move(n));
  }
  // An ONNX-dialect node, named <op>_<index>.
  ir::NodeId onnx(const std::string& op, std::vector<ir::TensorId> in,
                  std::vector<ir::TensorId> out) {
    ir::Node n;
    n.dialect = ir::Dialect::kOnnx;
    n.op = op;
    n.source_op = static_cast<int>(g.node_count());
    n.name = op + "_" + std::to_string(g.node_count());
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return g.add_node(std::move(n));
  }
  ir::Attributes& attrs(ir::NodeId id) { return g.info(id).attrs; }

  // ---- queries ----
  std::vector<const ir::Node*> nodes(const std::string& op) const {
    std::vector<const ir::Node*> out;
    for (const ir::Node& n : g.nodes())
      if (n.op == op) out.push_back(&n);
    return out;
  }
  size_t count(const std::string& op) const { return nodes(op).size(); }
  // The i-th node in order, the last one.
  const ir::Node& at(size_t i) const { return g.node(g.order().at(i)); }
  const ir::Node& last() const { return g.node(g.last()); }
  ir::NodeInfo& info_at(size_t i) { return g.info(g.order().at(i)); }
  const ir::Node* producer(ir::TensorId t) const {
    ir::NodeId p = g.producer(t);
    return p == ir::kNoNode ? nullptr : &g.node(p);
  }
  std::vector<InsertedNode> inserted() const { return inserted_nodes(g); }

  static size_t elements(const ir::Shape& shape) {
    return static_cast<size_t>(ir::element_count(shape).value());
  }
};

}  // namespace lite2onnx::testing
