// Appends the ONNX nodes of one TFLite node that lowers to many (detection,
// MediaPipe's transforms, Coral's pose decoder): each node and constant gets
// a unique name under the TFLite node's, and intermediate tensors are typed,
// shape unknown. A builder writes into the graph being lowered, or into the
// body of a Loop it builds (LoopBuilder), with the same vocabulary.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace lite2onnx::ops {

class NodeBuilder {
 public:
  // Into the graph being lowered, for TFLite node `n`.
  NodeBuilder(LowerContext& ctx, const ir::Node& n) : ctx_(&ctx), n_(&n), prefix_(n.name) {}
  // Into `body`, a subgraph being built (LoopBuilder), names under `prefix`;
  // `source` is the TFLite node it lowers.
  NodeBuilder(ir::Graph& body, const ir::Node& source, std::string prefix)
      : body_(&body), n_(&source), prefix_(std::move(prefix)) {}

  // The graph the nodes go into.
  ir::Graph& graph();
  const ir::Node& source() const { return *n_; }
  const std::string& prefix() const { return prefix_; }

  // A node with one new output of `type`.
  ir::TensorId add(const std::string& op, std::vector<ir::TensorId> inputs, ir::DataType type,
                   std::vector<ir::Attr> attrs = {});
  // A node writing given outputs; returns it (e.g. to give it subgraphs).
  ir::NodeInfo& into(const std::string& op, std::vector<ir::TensorId> inputs,
                     std::vector<ir::TensorId> outputs, std::vector<ir::Attr> attrs = {},
                     std::string suffix = "");
  ir::TensorId temp(ir::DataType type);
  // A new tensor of `type` and static `shape` (e.g. a Loop body's input).
  ir::TensorId typed(ir::DataType type, const ir::Shape& shape);
  ir::TensorId ints(std::vector<int64_t> values, std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId floats(std::vector<float> values, std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId doubles(std::vector<double> values, std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId scalar(ir::DataType type, double v);

  ir::TensorId reshape(ir::TensorId x, std::vector<int64_t> shape, ir::DataType type) {
    return add("Reshape", {x, ints(std::move(shape))}, type);
  }
  // x[begin:end] along `axis`.
  ir::TensorId slice(ir::TensorId x, int64_t axis, int64_t begin, int64_t end, ir::DataType type) {
    return add("Slice", {x, ints({begin}), ints({end}), ints({axis})}, type);
  }
  ir::TensorId cast(ir::TensorId x, ir::DataType to) {
    return add("Cast", {x}, to, {{"to", int64_t{ir::onnx_type_code(to)}}});
  }

 private:
  std::string unique(const std::string& what) { return what + "_" + std::to_string(count_++); }
  ir::TensorId constant(ir::DataType type, std::vector<std::byte> bytes, ir::Shape shape);

  LowerContext* ctx_ = nullptr;
  ir::Graph* body_ = nullptr;
  const ir::Node* n_;
  std::string prefix_;
  int count_ = 0;
};

// An ONNX Loop built by a converter: its body takes the iteration number, the
// condition and the carried values, and gives the next condition and the
// carried values after the iteration; values of the enclosing graph it reads
// are captured (implicit inputs of the Loop node).
//
//   LoopBuilder loop(outer, "heap_push");
//   TensorId h = loop.carry(initial_h, DataType::kInt64, {k});
//   ... loop.body().add(...) ... loop.capture(outer_value) ...
//   std::vector<TensorId> out = loop.finish(trips, {}, {}, {h_next});
class LoopBuilder {
 public:
  LoopBuilder(NodeBuilder& outer, const std::string& name);

  NodeBuilder& body() { return body_builder_; }
  ir::TensorId iteration() const { return iteration_; }  // int64 scalar in the body
  // A carried value: its value before the first iteration (of the enclosing
  // graph) and the tensor the body reads it from.
  ir::TensorId carry(ir::TensorId initial, ir::DataType type, const ir::Shape& shape);
  // The body's view of a value of the enclosing graph (captured once).
  ir::TensorId capture(ir::TensorId outer);
  // Emits the Loop: at most `trips` iterations (an int64 scalar of the
  // enclosing graph; kNoTensor: no bound) while `condition` holds (a bool
  // scalar of the enclosing graph; kNoTensor: true), the body ending with
  // `next_condition` (kNoTensor: true) and the carried values `next` (one per
  // carry(), in order). Returns the final carried values.
  std::vector<ir::TensorId> finish(ir::TensorId trips, ir::TensorId condition,
                                   ir::TensorId next_condition, std::vector<ir::TensorId> next);

 private:
  NodeBuilder& outer_;
  std::string name_;
  std::unique_ptr<ir::Graph> graph_;
  NodeBuilder body_builder_;
  ir::TensorId iteration_, condition_;
  std::vector<ir::TensorId> initial_, carried_;
  std::vector<ir::Capture> captures_;
  std::vector<ir::TensorId> captured_outer_;
};

}  // namespace lite2onnx::ops
