// NodeBuilder and LoopBuilder: see node_builder.h.
#include "core/ops/node_builder.h"

#include <algorithm>
#include <cstring>

namespace lite2onnx::ops {

using ir::DataType;
using ir::TensorId;

ir::Graph& NodeBuilder::graph() { return body_ ? *body_ : ctx_->graph(); }

TensorId NodeBuilder::add(const std::string& op, std::vector<TensorId> inputs, DataType type,
                          std::vector<ir::Attr> attrs) {
  const std::string suffix = unique(op);
  const TensorId out = body_ ? typed(type, {}) : ctx_->temp(prefix_ + "/" + suffix, type);
  if (body_) {
    body_->tensor(out).has_rank = false;
    body_->tensor(out).name = prefix_ + "/" + suffix;
  }
  into(op, std::move(inputs), {out}, std::move(attrs), suffix);
  return out;
}

ir::NodeInfo& NodeBuilder::into(const std::string& op, std::vector<TensorId> inputs,
                                std::vector<TensorId> outputs, std::vector<ir::Attr> attrs,
                                std::string suffix) {
  if (suffix.empty()) suffix = unique(op);
  ir::NodeInfo* node;
  if (body_) {
    ir::Node n;
    n.dialect = ir::Dialect::kOnnx;
    n.op = op;
    n.name = prefix_ + "/" + suffix;
    n.source_op = n_->source_op;
    n.source_subgraph = n_->source_subgraph;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    for (auto& a : attrs) n.attrs.set(a.name, std::move(a.value));
    node = &body_->info(body_->add_node(std::move(n)));
  } else {
    node = &ctx_->emit(*n_, op, std::move(inputs), std::move(outputs), suffix);
    for (auto& a : attrs) node->attrs.set(a.name, std::move(a.value));
  }
  return *node;
}

TensorId NodeBuilder::temp(DataType type) {
  if (!body_) return ctx_->temp(prefix_ + "/t" + std::to_string(count_++), type);
  const TensorId t = typed(type, {});
  body_->tensor(t).has_rank = false;
  return t;
}

TensorId NodeBuilder::typed(DataType type, const ir::Shape& shape) {
  ir::Tensor t;
  t.name = prefix_ + "/t" + std::to_string(count_++);
  t.dtype = type;
  t.shape = shape;
  t.has_rank = true;
  return graph().add_tensor(std::move(t));
}

TensorId NodeBuilder::constant(DataType type, std::vector<std::byte> bytes, ir::Shape shape) {
  ir::Tensor t;
  t.name = prefix_ + "/c" + std::to_string(count_++);
  t.dtype = type;
  t.shape = std::move(shape);
  t.data = graph().own(std::move(bytes), type, t.name);
  return graph().add_tensor(std::move(t));
}

TensorId NodeBuilder::ints(std::vector<int64_t> values, std::optional<ir::Shape> shape) {
  if (!body_)
    return ctx_->const_i64(prefix_ + "/c" + std::to_string(count_++), std::move(values),
                           std::move(shape));
  const ir::Shape s = shape ? *shape : ir::Shape{static_cast<int64_t>(values.size())};
  return constant(DataType::kInt64, ir::to_bytes(values), s);
}

TensorId NodeBuilder::floats(std::vector<float> values, std::optional<ir::Shape> shape) {
  if (!body_)
    return ctx_->const_f32(prefix_ + "/c" + std::to_string(count_++), std::move(values),
                           std::move(shape));
  const ir::Shape s = shape ? *shape : ir::Shape{static_cast<int64_t>(values.size())};
  return constant(DataType::kFloat32, ir::to_bytes(values), s);
}

TensorId NodeBuilder::doubles(std::vector<double> values, std::optional<ir::Shape> shape) {
  if (!body_)
    return ctx_->const_f64(prefix_ + "/c" + std::to_string(count_++), std::move(values),
                           std::move(shape));
  const ir::Shape s = shape ? *shape : ir::Shape{static_cast<int64_t>(values.size())};
  return constant(DataType::kFloat64, ir::to_bytes(values), s);
}

TensorId NodeBuilder::scalar(DataType type, double v) {
  if (!body_) return ctx_->const_scalar(prefix_ + "/c" + std::to_string(count_++), type, v);
  switch (type) {
    case DataType::kInt64:
      return constant(type, ir::to_bytes(std::vector<int64_t>{static_cast<int64_t>(v)}), {});
    case DataType::kInt32:
      return constant(type, ir::to_bytes(std::vector<int32_t>{static_cast<int32_t>(v)}), {});
    case DataType::kFloat64:
      return constant(type, ir::to_bytes(std::vector<double>{v}), {});
    case DataType::kBool:
      return constant(type, ir::to_bytes(std::vector<uint8_t>{static_cast<uint8_t>(v != 0)}), {});
    default:
      return constant(DataType::kFloat32, ir::to_bytes(std::vector<float>{static_cast<float>(v)}),
                      {});
  }
}

// ---- LoopBuilder ----

LoopBuilder::LoopBuilder(NodeBuilder& outer, const std::string& name)
    : outer_(outer),
      name_(outer.prefix() + "/" + name),
      graph_(std::make_unique<ir::Graph>()),
      body_builder_(*graph_, outer.source(), name_) {
  graph_->share_created(outer.graph());
  graph_->name = name_ + "/body";
  iteration_ = body_builder_.typed(DataType::kInt64, {});
  condition_ = body_builder_.typed(DataType::kBool, {});
}

TensorId LoopBuilder::carry(TensorId initial, DataType type, const ir::Shape& shape) {
  initial_.push_back(initial);
  carried_.push_back(body_builder_.typed(type, shape));
  return carried_.back();
}

TensorId LoopBuilder::capture(TensorId outer) {
  for (size_t i = 0; i < captured_outer_.size(); ++i)
    if (captured_outer_[i] == outer) return captures_[i].inner;
  const ir::Tensor& x = outer_.graph().tensor(outer);
  ir::Tensor inner;
  inner.name = x.name;
  inner.dtype = x.dtype;
  inner.shape = x.shape;
  inner.has_rank = x.has_rank;
  const TensorId t = graph_->add_tensor(std::move(inner));
  captures_.push_back({t, 0});
  captured_outer_.push_back(outer);
  return t;
}

std::vector<TensorId> LoopBuilder::finish(TensorId trips, TensorId condition,
                                          TensorId next_condition, std::vector<TensorId> next) {
  if (next_condition == ir::kNoTensor) next_condition = body_builder_.scalar(DataType::kBool, 1);
  std::vector<TensorId> body_inputs{iteration_, condition_};
  body_inputs.insert(body_inputs.end(), carried_.begin(), carried_.end());
  graph_->set_inputs(body_inputs);
  std::vector<TensorId> body_outputs{next_condition};
  for (TensorId t : next) {
    // A value the iteration leaves as it is: its own output all the same.
    const bool input = std::find(carried_.begin(), carried_.end(), t) != carried_.end() ||
                       t == iteration_ || t == condition_;
    body_outputs.push_back(input ? body_builder_.add("Identity", {t}, graph_->tensor(t).dtype) : t);
  }
  graph_->set_outputs(body_outputs);

  std::vector<TensorId> inputs{trips, condition};
  inputs.insert(inputs.end(), initial_.begin(), initial_.end());
  // Captured values: implicit inputs after the explicit ones.
  for (size_t i = 0; i < captures_.size(); ++i)
    captures_[i].slot = static_cast<uint32_t>(inputs.size() + i);
  inputs.insert(inputs.end(), captured_outer_.begin(), captured_outer_.end());
  std::vector<TensorId> outputs;
  for (TensorId t : carried_) outputs.push_back(outer_.temp(graph_->tensor(t).dtype));
  ir::Subgraph body("body", std::move(*graph_));
  body.captures = std::move(captures_);
  ir::NodeInfo& loop = outer_.into("Loop", std::move(inputs), outputs);
  loop.implicit_inputs = static_cast<uint32_t>(captured_outer_.size());
  loop.subgraphs.push_back(std::move(body));
  return outputs;
}

}  // namespace lite2onnx::ops
