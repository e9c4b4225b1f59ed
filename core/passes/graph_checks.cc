#include <algorithm>
#include <iterator>
#include <queue>
#include <string>

#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {

Status sort_topologically(ir::Graph& g, PassContext& ctx) {
  const std::vector<ir::NodeId> order = g.order();
  const size_t n = order.size();
  std::vector<size_t> position(
      n == 0 ? 0 : static_cast<size_t>(*std::max_element(order.begin(), order.end())) + 1);
  for (size_t i = 0; i < n; ++i) position[static_cast<size_t>(order[i])] = i;
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (ir::TensorId t : g.node(order[i]).inputs)
      if (g.producer(t) != ir::kNoNode) ++pending[i];
  // Kahn's algorithm, always taking the lowest ready position so a valid order is kept.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<ir::NodeId> sorted;
  sorted.reserve(n);
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const size_t i = ready.top();
    ready.pop();
    done[i] = true;
    sorted.push_back(order[i]);
    for (ir::TensorId t : g.node(order[i]).outputs)
      for (const ir::Use& u : g.uses(t))
        if (--pending[position[static_cast<size_t>(u.node)]] == 0)
          ready.push(position[static_cast<size_t>(u.node)]);
  }
  if (sorted.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      const ir::Node& node = g.node(order[i]);
      Error e = make_error(ErrorCode::kInvalidModel, "cyclic graph: op " +
                                                         std::to_string(node.source_op) + " (" +
                                                         node.op + ") depends on its own output");
      e.op_index = node.source_op;
      return e;
    }
  }
  g.reorder(sorted);
  for (ir::TensorId t : g.outputs()) {
    const ir::Tensor& x = g.tensor(t);
    // A variable tensor is written in place by an op that reads it; the
    // preflight says whether it can be model state.
    const bool in_place = x.is_variable && !g.uses(t).empty();
    if (g.producer(t) == ir::kNoNode && !x.is_const() && !g.is_graph_input(t) && !in_place)
      return make_error(ErrorCode::kInvalidModel,
                        "graph output '" + x.name + "' is never written by any op");
  }
  return ok_status();
}

Error planned_bytes_error(const ir::Graph& g, std::string_view what, uint64_t total,
                          uint64_t largest, std::string_view largest_by) {
  const ir::CreatedBytes& b = g.created();
  return make_error(ErrorCode::kResourceLimit,
                    std::string(what) + " would create " + std::to_string(total) +
                        " bytes of constants (the largest part: " + std::to_string(largest) +
                        " bytes for '" + std::string(largest_by) + "'), more than the " +
                        std::to_string(b.limit() - std::min(b.used(), b.limit())) +
                        " bytes left of the max_created_bytes limit (" + std::to_string(b.limit()) +
                        ")");
}

namespace {

Status check_reads(const ir::Graph& g, PassContext& ctx);

// Every input a supported op always reads must be there (-1 marks an omitted
// one), and it must have an output.
Status check_arity(const ir::Node& n) {
  const ops::OpEntry& e = ops::lookup(n);
  const size_t need = e.read.min_inputs < 0 ? std::max<size_t>(n.inputs.size(), 1)
                                            : static_cast<size_t>(e.read.min_inputs);
  std::string problem;
  if (n.inputs.size() < need)
    problem = "expects at least " + std::to_string(need) + " inputs, has " +
              std::to_string(n.inputs.size());
  for (size_t i = 0; problem.empty() && i < need; ++i)
    if (n.inputs[i] == ir::kNoTensor) problem = "input " + std::to_string(i) + " is missing";
  if (n.outputs.empty() && !e.state.effect_only) problem = "has no outputs";
  if (problem.empty()) return ok_status();
  Error err = make_error(ErrorCode::kInvalidModel,
                         "op " + std::to_string(n.source_op) + " (" + n.op + ") " + problem);
  err.op_index = n.source_op;
  return err;
}

}  // namespace

Status validate(const ir::Graph& g, PassContext& ctx) {
  for (const ir::Node& n : g.nodes()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    for (auto list : {&n.inputs, &n.outputs})
      for (ir::TensorId t : *list)
        if (t != ir::kNoTensor && !g.valid(t))
          return make_error(ErrorCode::kInternal, "op " + std::to_string(n.source_op) +
                                                      " refers to tensor " + std::to_string(t) +
                                                      ", which the reader did not check");
    if (n.dialect == ir::Dialect::kTflite && ops::lookup(n).supported())
      if (auto st = check_arity(n); !st) return st;
  }
  return check_reads(g, ctx);
}

Status check_created_bytes(const ir::Graph& g) {
  if (!g.created().exceeded()) return ok_status();
  return make_error(ErrorCode::kResourceLimit,
                    "the conversion would create more than " + std::to_string(g.created().limit()) +
                        " bytes of constants (the max_created_bytes limit; passed at '" +
                        g.created().exceeded_by() + "')");
}

namespace {

Status check_reads(const ir::Graph& g, PassContext& ctx) {
  for (const ir::Node& n : g.nodes()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    // Custom and other unsupported ops may read scratch tensors; they are
    // reported by the preflight, and no pass looks into them.
    if (n.dialect == ir::Dialect::kTflite && !ops::lookup(n).supported()) continue;
    for (ir::TensorId t : n.inputs) {
      if (!g.valid(t)) continue;
      const ir::Tensor& x = g.tensor(t);
      if (g.producer(t) != ir::kNoNode || x.is_const() || g.is_graph_input(t) || x.is_variable)
        continue;
      Error e = make_error(ErrorCode::kInvalidModel,
                           "op " + std::to_string(n.source_op) + " (" + n.op + ") reads tensor '" +
                               x.name +
                               "', which is neither a graph input, a constant, nor "
                               "written by any op");
      e.op_index = n.source_op;
      e.tensor = x.name;
      return e;
    }
  }
  return ok_status();
}

}  // namespace

Status fold_constant_dequantize(ir::Graph& g, PassContext& ctx) {
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    bool foldable = n.dialect == ir::Dialect::kTflite && n.builtin == ir::builtin::kDequantize &&
                    n.inputs.size() == 1 && n.outputs.size() == 1 && g.valid(n.inputs[0]) &&
                    g.tensor(n.inputs[0]).is_const() &&
                    g.tensor(n.inputs[0]).dtype == ir::DataType::kFloat16 &&
                    g.tensor(n.outputs[0]).dtype == ir::DataType::kFloat32;
    if (!foldable) continue;
    const ir::Tensor& in = g.tensor(n.inputs[0]);
    ir::Tensor& out = g.tensor(n.outputs[0]);
    if (in.shape != out.shape)
      return make_error(ErrorCode::kInvalidModel,
                        "op " + std::to_string(n.source_op) + " (DEQUANTIZE): input shape " +
                            ir::to_string(in.shape) + " differs from output shape " +
                            ir::to_string(out.shape));
    out.data = in.data;  // float16 bytes; widened to float32 when written
    g.remove_node(k);
  }
  return ok_status();
}

Status keep_float16_constants(ir::Graph& g, PassContext& ctx) {
  std::vector<bool> done(g.tensor_count(), false);
  std::vector<ir::Node> casts;
  for (const ir::Node& n : g.nodes()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    for (ir::TensorId t : n.inputs) {
      if (!g.valid(t) || done[static_cast<size_t>(t)]) continue;
      ir::Tensor& x = g.tensor(t);
      if (!x.is_const() || x.data->stored_type != ir::DataType::kFloat16 ||
          x.dtype != ir::DataType::kFloat32)
        continue;
      done[static_cast<size_t>(t)] = true;
      ir::Tensor half = x;
      half.dtype = ir::DataType::kFloat16;
      x.data.reset();
      x.name += "/float32";
      ir::Node cast;
      cast.dialect = ir::Dialect::kOnnx;
      cast.op = "Cast";
      cast.name = x.name;
      cast.outputs = {t};
      cast.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kFloat32)});
      cast.inputs = {ir::kNoTensor};
      casts.push_back(std::move(cast));
      casts.back().inputs[0] = g.add_tensor(std::move(half));
      casts.back().inserted =
          ir::Insertion{g.tensor(casts.back().inputs[0]).name,
                        "--keep-float16-weights: float16 initializer widened at run time"};
    }
  }
  // At the front, in the order they were found.
  const ir::NodeId front = g.first();
  for (auto& c : casts) {
    if (front == ir::kNoNode)
      g.add_node(std::move(c));
    else
      g.add_node_before(front, std::move(c));
  }
  return ok_status();
}

Status merge_reshapes(ir::Graph& g, PassContext& ctx) {
  // Reshape(Reshape(x, s1), s2) == Reshape(x, s2) when the middle tensor has no
  // other reader and is not a graph output (both targets are static here or
  // come from TFLite shapes, so s2 never refers back to s1 with 0s).
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    if (n.dialect != ir::Dialect::kOnnx || n.op != "Reshape" || n.inputs.empty()) continue;
    const ir::TensorId mid = n.inputs[0];
    if (!g.valid(mid) || g.use_count(mid) != 1 || g.is_graph_output(mid)) continue;
    const ir::NodeId p = g.producer(mid);
    if (p == ir::kNoNode) continue;
    const ir::Node& first = g.node(p);
    if (first.dialect != ir::Dialect::kOnnx || first.op != "Reshape" || first.inputs.empty())
      continue;
    if (auto shape = n.inputs.size() > 1 ? n.inputs[1] : ir::kNoTensor;
        !g.valid(shape) || !g.tensor(shape).is_const())
      continue;
    const auto target = g.tensor(n.inputs[1]).data->as<int64_t>();
    if (std::find(target.begin(), target.end(), int64_t{0}) != target.end())
      continue;  // 0 would copy a dimension of the intermediate
    g.set_input(k, 0, first.inputs[0]);
    // A Reshape the layout pass inserted takes over the model's own one: net,
    // nothing was inserted.
    if (n.inserted) {
      ir::NodeInfo& info = g.info(k);
      info.inserted.reset();
      info.name = first.name;
      info.source_op = first.source_op;
    }
  }
  // Drop Reshapes whose outputs nobody reads any more (the bypassed ones).
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    if (n.dialect == ir::Dialect::kOnnx && n.op == "Reshape" && n.outputs.size() == 1 &&
        g.use_count(n.outputs[0]) == 0)
      g.remove_node(k);
  }
  return ok_status();
}

Status remove_identities(ir::Graph& g, PassContext& ctx) {
  // Rewire readers of an Identity's output to its input, unless the output is
  // a graph output (its name is part of the model's interface) or requantizes
  // (QUANTIZE between two scales: its QuantizeLinear comes from the Identity).
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    bool removable = n.dialect == ir::Dialect::kOnnx && n.op == "Identity" &&
                     n.inputs.size() == 1 && n.outputs.size() == 1 &&
                     !g.is_graph_output(n.outputs[0]) && !g.tensor(n.inputs[0]).is_const() &&
                     (!g.tensor(n.outputs[0]).quantized_type ||
                      same_quantization(g.tensor(n.inputs[0]), g.tensor(n.outputs[0])));
    if (!removable) continue;
    const ir::TensorId in = n.inputs[0], out = n.outputs[0];
    g.remove_node(k);
    g.replace_uses(out, in);
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
