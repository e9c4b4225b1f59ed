#include <algorithm>
#include <iterator>
#include <queue>
#include <string>

#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {

Status sort_topologically(ir::Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<int> producer = g.producers();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (ir::TensorId t : g.nodes[i].inputs) {
      if (!g.valid(t)) continue;
      int p = producer[static_cast<size_t>(t)];
      if (p >= 0) {
        ++pending[i];
        consumers[static_cast<size_t>(p)].push_back(static_cast<int>(i));
      }
    }
  }
  // Kahn's algorithm, always taking the lowest ready index so a valid order is kept.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<ir::Node> sorted;
  sorted.reserve(n);
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    done[static_cast<size_t>(i)] = true;
    for (int c : consumers[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
    sorted.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
  }
  if (sorted.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      Error e = make_error(ErrorCode::kInvalidModel,
                           "cyclic graph: op " + std::to_string(g.nodes[i].source_op) + " (" +
                               g.nodes[i].op + ") depends on its own output");
      e.op_index = g.nodes[i].source_op;
      return e;
    }
  }
  g.nodes = std::move(sorted);
  for (ir::TensorId t : g.outputs) {
    const ir::Tensor& x = g.tensor(t);
    if (producer[static_cast<size_t>(t)] < 0 && !x.is_const() && !g.is_graph_input(t))
      return make_error(ErrorCode::kInvalidModel,
                        "graph output '" + x.name + "' is never written by any op");
  }
  return ok_status();
}

namespace {

// Every input a supported op always reads must be there (-1 marks an omitted
// one), and it must have an output.
Status check_arity(const ir::Node& n) {
  const ops::OpEntry& e = ops::lookup(n.builtin);
  const size_t need =
      e.min_inputs < 0 ? std::max<size_t>(n.inputs.size(), 1) : static_cast<size_t>(e.min_inputs);
  std::string problem;
  if (n.inputs.size() < need)
    problem = "expects at least " + std::to_string(need) + " inputs, has " +
              std::to_string(n.inputs.size());
  for (size_t i = 0; problem.empty() && i < need; ++i)
    if (n.inputs[i] == ir::kNoTensor) problem = "input " + std::to_string(i) + " is missing";
  if (n.outputs.empty()) problem = "has no outputs";
  if (problem.empty()) return ok_status();
  Error err = make_error(ErrorCode::kInvalidModel,
                         "op " + std::to_string(n.source_op) + " (" + n.op + ") " + problem);
  err.op_index = n.source_op;
  return err;
}

}  // namespace

Status validate(const ir::Graph& g) {
  for (const auto& n : g.nodes) {
    for (auto list : {&n.inputs, &n.outputs})
      for (ir::TensorId t : *list)
        if (t != ir::kNoTensor && !g.valid(t))
          return make_error(ErrorCode::kInternal, "op " + std::to_string(n.source_op) +
                                                      " refers to tensor " + std::to_string(t) +
                                                      ", which the reader did not check");
    if (n.dialect == ir::Dialect::kTflite && ops::lookup(n.builtin).supported())
      if (auto st = check_arity(n); !st) return st;
  }
  return check_reads(g);
}

Status check_created_bytes(const ir::Graph& g) {
  if (!g.created.exceeded()) return ok_status();
  return make_error(ErrorCode::kResourceLimit,
                    "the conversion would create more than " + std::to_string(g.created.limit()) +
                        " bytes of constants (the max_created_bytes limit; passed at '" +
                        g.created.exceeded_by() + "')");
}

Status check_reads(const ir::Graph& g) {
  std::vector<int> producer = g.producers();
  for (const auto& n : g.nodes) {
    // Custom and other unsupported ops may read scratch tensors; they are
    // reported by the preflight, and no pass looks into them.
    if (n.dialect == ir::Dialect::kTflite && !ops::lookup(n.builtin).supported()) continue;
    for (ir::TensorId t : n.inputs) {
      if (!g.valid(t)) continue;
      const ir::Tensor& x = g.tensor(t);
      if (producer[static_cast<size_t>(t)] >= 0 || x.is_const() || g.is_graph_input(t)) continue;
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

Status fold_constant_dequantize(ir::Graph& g) {
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (auto& n : g.nodes) {
    bool foldable = n.dialect == ir::Dialect::kTflite && n.builtin == ir::builtin::kDequantize &&
                    n.inputs.size() == 1 && n.outputs.size() == 1 && g.valid(n.inputs[0]) &&
                    g.tensor(n.inputs[0]).is_const() &&
                    g.tensor(n.inputs[0]).dtype == ir::DataType::kFloat16 &&
                    g.tensor(n.outputs[0]).dtype == ir::DataType::kFloat32;
    if (!foldable) {
      kept.push_back(std::move(n));
      continue;
    }
    const ir::Tensor& in = g.tensor(n.inputs[0]);
    ir::Tensor& out = g.tensor(n.outputs[0]);
    if (in.shape != out.shape)
      return make_error(ErrorCode::kInvalidModel,
                        "op " + std::to_string(n.source_op) + " (DEQUANTIZE): input shape " +
                            ir::to_string(in.shape) + " differs from output shape " +
                            ir::to_string(out.shape));
    out.data = in.data;  // float16 bytes; widened to float32 when written
  }
  g.nodes = std::move(kept);
  return ok_status();
}

void keep_float16_constants(ir::Graph& g, Diagnostics& diag) {
  std::vector<ir::Node> casts;
  std::vector<bool> done(g.tensors.size(), false);
  for (const auto& n : g.nodes) {
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
      cast.inputs = {g.add_tensor(std::move(half))};
      cast.outputs = {t};
      cast.attrs.set("to", int64_t{1});  // FLOAT
      casts.push_back(std::move(cast));
      diag.inserted.push_back({casts.back().name, "Cast", g.tensor(casts.back().inputs[0]).name,
                               "--keep-float16-weights: float16 initializer widened at run time"});
    }
  }
  g.nodes.insert(g.nodes.begin(), std::make_move_iterator(casts.begin()),
                 std::make_move_iterator(casts.end()));
}

void merge_reshapes(ir::Graph& g, Diagnostics& diag) {
  // Reshape(Reshape(x, s1), s2) == Reshape(x, s2) when the middle tensor has no
  // other reader and is not a graph output (both targets are static here or
  // come from TFLite shapes, so s2 never refers back to s1 with 0s).
  std::vector<int> producer = g.producers();
  std::vector<int> uses = g.use_counts();
  for (auto& n : g.nodes) {
    if (n.dialect != ir::Dialect::kOnnx || n.op != "Reshape" || n.inputs.empty()) continue;
    ir::TensorId mid = n.inputs[0];
    if (!g.valid(mid) || uses[static_cast<size_t>(mid)] != 1 || g.is_graph_output(mid)) continue;
    int p = producer[static_cast<size_t>(mid)];
    if (p < 0) continue;
    const ir::Node& first = g.nodes[static_cast<size_t>(p)];
    if (first.dialect != ir::Dialect::kOnnx || first.op != "Reshape" || first.inputs.empty())
      continue;
    if (auto shape = n.inputs.size() > 1 ? n.inputs[1] : ir::kNoTensor;
        !g.valid(shape) || !g.tensor(shape).is_const())
      continue;
    for (int64_t d : g.tensor(n.inputs[1]).data->as<int64_t>())
      if (d == 0) goto next;  // 0 would copy a dimension of the intermediate
    --uses[static_cast<size_t>(mid)];
    n.inputs[0] = first.inputs[0];
    // A Reshape the layout pass inserted takes over the model's own one: net,
    // nothing was inserted.
    for (auto it = diag.inserted.begin(); it != diag.inserted.end(); ++it)
      if (it->node == n.name) {
        diag.inserted.erase(it);
        n.name = first.name;
        n.source_op = first.source_op;
        break;
      }
  next:;
  }
  // Drop nodes whose outputs nobody reads any more (the bypassed Reshapes).
  uses = g.use_counts();
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (auto& n : g.nodes) {
    bool dead = n.dialect == ir::Dialect::kOnnx && n.op == "Reshape" && n.outputs.size() == 1 &&
                uses[static_cast<size_t>(n.outputs[0])] == 0 && !g.is_graph_output(n.outputs[0]);
    if (!dead) kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

void remove_identities(ir::Graph& g) {
  // Rewire readers of an Identity's output to its input, unless the output is
  // a graph output (its name is part of the model's interface) or requantizes
  // (QUANTIZE between two scales: its QuantizeLinear comes from the Identity).
  std::vector<ir::TensorId> alias(g.tensors.size());
  for (size_t i = 0; i < alias.size(); ++i) alias[i] = static_cast<ir::TensorId>(i);
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (auto& n : g.nodes) {
    for (auto& t : n.inputs)
      if (g.valid(t)) t = alias[static_cast<size_t>(t)];
    bool removable = n.dialect == ir::Dialect::kOnnx && n.op == "Identity" &&
                     n.inputs.size() == 1 && n.outputs.size() == 1 &&
                     !g.is_graph_output(n.outputs[0]) && !g.tensor(n.inputs[0]).is_const() &&
                     (!g.tensor(n.outputs[0]).quantized_type ||
                      same_quantization(g.tensor(n.inputs[0]), g.tensor(n.outputs[0])));
    if (removable) {
      alias[static_cast<size_t>(n.outputs[0])] = n.inputs[0];
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace lite2onnx::passes
