// infer_shapes: see passes.h.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/ops/registry.h"
#include "core/ops/shape_inference.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

// Whether the declared shape says the same as the inferred one (a declared -1
// is a dynamic dimension, not a disagreement).
bool agrees(const ir::Tensor& t, const ir::Shape& inferred) {
  if (!t.has_rank || t.shape.size() != inferred.size()) return false;
  for (size_t i = 0; i < inferred.size(); ++i)
    if (t.shape[i] != inferred[i] && t.shape[i] != -1) return false;
  return true;
}

// The shape both may have: their dimensions where they agree, -1 elsewhere;
// nullopt when the ranks differ.
std::optional<ir::Shape> merge(const ir::Shape& a, const ir::Shape& b) {
  if (a.size() != b.size()) return std::nullopt;
  ir::Shape out = a;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) out[i] = -1;
  return out;
}

// Shapes of every tensor of a graph and of the graphs its nodes own, to run
// inference on a loop body again from the same start.
using Shapes = std::vector<std::pair<ir::Shape, bool>>;
Shapes snapshot(const ir::Graph& g) {
  Shapes out;
  ir::for_each_graph(g, [&](const ir::Graph& x) {
    for (size_t t = 0; t < x.tensor_count(); ++t) {
      const ir::Tensor& y = x.tensor(static_cast<ir::TensorId>(t));
      out.emplace_back(y.shape, y.has_rank);
    }
  });
  return out;
}
void restore(ir::Graph& g, const Shapes& shapes) {
  size_t i = 0;
  ir::for_each_graph(g, [&](ir::Graph& x) {
    for (size_t t = 0; t < x.tensor_count(); ++t) {
      ir::Tensor& y = x.tensor(static_cast<ir::TensorId>(t));
      std::tie(y.shape, y.has_rank) = shapes[i++];
    }
  });
}

class Inferrer {
 public:
  explicit Inferrer(PassContext& ctx)
      : ctx_(ctx), work_limit_(8 * static_cast<size_t>(ctx.options.limits.max_operators) + 1024) {}

  Status graph(ir::Graph& g) {
    constexpr size_t kNamedWarnings = 20;  // one warning each; then one for the rest
    size_t disagreements = 0;
    work_ += g.node_count();
    for (ir::NodeId k : g.order()) {
      if (ctx_.checkpoint.should_stop()) return ctx_.checkpoint.status();
      const ir::Node& n = g.node(k);
      std::optional<std::vector<ir::Shape>> shapes;
      if (!n.subgraphs.empty()) {
        auto s = control_flow(g, k);
        if (!s) return s.take_error();
        shapes = std::move(*s);
      } else {
        shapes = ops::infer_shapes(g, n);
      }
      if (!shapes || shapes->size() != n.outputs.size()) continue;
      // A rank past the reader's limit (FILL of a long constant dims vector) is
      // not taken: the file's shape stands, and the checks judge it.
      if (std::any_of(shapes->begin(), shapes->end(),
                      [&](const ir::Shape& s) { return s.size() > ctx_.options.limits.max_rank; }))
        continue;
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        ir::Tensor& t = g.tensor(n.outputs[i]);
        const ir::Shape& inferred = (*shapes)[i];
        if (g.is_graph_input(n.outputs[i]) || t.is_const() || (t.has_rank && t.shape == inferred))
          continue;
        // A declared [] on an op's output is how older converters wrote "sized
        // at run time" (TOCO, custom ops' outputs): nothing to warn about.
        const bool declared = t.has_rank && !t.shape.empty();
        if (declared && !agrees(t, inferred) && ++disagreements <= kNamedWarnings)
          ctx_.diag.warnings.push_back("tensor '" + t.name + "': the file declares shape " +
                                       ir::to_string(t.shape) + " but op " +
                                       std::to_string(n.source_op) + " (" + n.op + ") computes " +
                                       ir::to_string(inferred) + "; converted with " +
                                       ir::to_string(inferred) + ", as TFLite runs it");
        t.shape = inferred;
        t.has_rank = true;
      }
    }
    if (disagreements > kNamedWarnings)
      ctx_.diag.warnings.push_back(std::to_string(disagreements - kNamedWarnings) +
                                   " more tensors declare a shape their op does not compute");
    return ok_status();
  }

 private:
  // A control-flow node: its subgraphs' inputs take the shapes of the values
  // it hands them, shapes are inferred inside, and its outputs take the
  // shapes its subgraphs give back (IF: where both branches agree). A loop
  // body whose values change a dimension from one iteration to the next is
  // inferred again with that dimension dynamic (at most three rounds; a
  // model that would make the rounds cost more than 8 x max_operators node
  // visits in all keeps the dimensions that still differ dynamic instead).
  Result<std::optional<std::vector<ir::Shape>>> control_flow(ir::Graph& g, ir::NodeId k) {
    const ir::Node& n = g.node(k);
    const ops::OpEntry& e = ops::lookup(n);
    if (n.dialect != ir::Dialect::kTflite || !e.subgraph_binding)
      return std::optional<std::vector<ir::Shape>>{};
    std::vector<std::optional<ir::Shape>> outs(n.outputs.size());
    std::vector<bool> seen(n.outputs.size(), false);
    for (size_t s = 0; s < n.subgraphs.size(); ++s) {
      ir::Graph& sub = g.info(k).subgraphs[s].graph();
      const ops::SubgraphBinding b = e.subgraph_binding(n, s);
      for (size_t i = 0; i < sub.inputs().size() && i < b.inputs.size(); ++i) {
        const int slot = b.inputs[i];
        if (slot < 0 || static_cast<size_t>(slot) >= n.inputs.size() || !g.valid(n.inputs[slot]))
          continue;
        const ir::Tensor& from = g.tensor(n.inputs[slot]);
        ir::Tensor& to = sub.tensor(sub.inputs()[i]);
        if (!from.has_rank) continue;
        to.shape = from.shape;
        to.has_rank = true;
      }
      if (b.carried.empty()) {
        if (auto st = graph(sub); !st) return st.take_error();
      } else if (auto st = loop(sub, b); !st) {
        return st.take_error();
      }
      for (size_t j = 0; j < sub.outputs().size() && j < b.outputs.size(); ++j) {
        const int slot = b.outputs[j];
        if (slot < 0 || static_cast<size_t>(slot) >= outs.size()) continue;
        // A loop's value has the shape its body input has: what it enters
        // with and what every iteration gives back.
        const int carried_from = loop_input_of(b, j);
        const ir::Tensor& t = carried_from >= 0 ? sub.tensor(sub.inputs()[carried_from])
                                                : sub.tensor(sub.outputs()[j]);
        auto& out = outs[static_cast<size_t>(slot)];
        if (!t.has_rank) {
          seen[static_cast<size_t>(slot)] = true;
          out.reset();
          continue;
        }
        if (!seen[static_cast<size_t>(slot)])
          out = t.shape;
        else if (out)
          out = merge(*out, t.shape);
        seen[static_cast<size_t>(slot)] = true;
      }
    }
    std::vector<ir::Shape> shapes;
    for (size_t j = 0; j < outs.size(); ++j) {
      if (!outs[j]) return std::optional<std::vector<ir::Shape>>{};
      shapes.push_back(*outs[j]);
    }
    return std::optional<std::vector<ir::Shape>>{std::move(shapes)};
  }

  static int loop_input_of(const ops::SubgraphBinding& b, size_t output) {
    for (size_t i = 0; i < b.carried.size(); ++i)
      if (b.carried[i] == static_cast<int>(output)) return static_cast<int>(i);
    return -1;
  }

  Status loop(ir::Graph& body, const ops::SubgraphBinding& b) {
    const Shapes start = snapshot(body);
    const size_t warnings = ctx_.diag.warnings.size();
    constexpr int kRounds = 3;
    for (int round = 1;; ++round) {
      if (auto st = graph(body); !st) return st;
      // The shapes the values enter the next iteration with.
      std::vector<std::pair<size_t, ir::Shape>> changed;
      for (size_t i = 0; i < b.carried.size() && i < body.inputs().size(); ++i) {
        const int o = b.carried[i];
        if (o < 0 || static_cast<size_t>(o) >= body.outputs().size()) continue;
        const ir::Tensor& in = body.tensor(body.inputs()[i]);
        const ir::Tensor& out = body.tensor(body.outputs()[o]);
        if (!in.has_rank || !out.has_rank) continue;
        auto m = merge(in.shape, out.shape);
        if (m && *m != in.shape) changed.emplace_back(i, std::move(*m));
      }
      if (changed.empty()) {
        // A value may come back more static than it enters (the body's file
        // shape standing where inference cannot tell): it leaves as it enters.
        for (size_t i = 0; i < b.carried.size() && i < body.inputs().size(); ++i) {
          const int o = b.carried[i];
          if (o < 0 || static_cast<size_t>(o) >= body.outputs().size()) continue;
          const ir::TensorId out = body.outputs()[o];
          ir::Tensor& t = body.tensor(out);
          const ir::Tensor& in = body.tensor(body.inputs()[i]);
          if (body.is_graph_input(out) || t.is_const() || !t.has_rank || !in.has_rank) continue;
          if (auto m = merge(t.shape, in.shape)) t.shape = *m;
        }
        return ok_status();
      }
      if (round == kRounds || work_ > work_limit_) {
        // Dynamic where the values still differ, inside the body as inferred.
        for (auto& [i, shape] : changed) {
          body.tensor(body.inputs()[i]).shape = shape;
          ir::Tensor& out = body.tensor(body.outputs()[b.carried[i]]);
          if (!body.is_graph_input(body.outputs()[b.carried[i]]) && !out.is_const())
            out.shape = *merge(out.shape, shape);
        }
        return ok_status();
      }
      // Again from the start, with those dimensions dynamic.
      ctx_.diag.warnings.resize(warnings);
      std::vector<ir::Shape> entering;
      for (ir::TensorId t : body.inputs()) entering.push_back(body.tensor(t).shape);
      for (auto& [i, shape] : changed) entering[i] = std::move(shape);
      restore(body, start);
      for (size_t i = 0; i < entering.size(); ++i)
        body.tensor(body.inputs()[i]).shape = entering[i];
    }
  }

  PassContext& ctx_;
  size_t work_ = 0;
  const size_t work_limit_;
};

}  // namespace

Status infer_shapes(ir::Graph& g, PassContext& ctx) { return Inferrer(ctx).graph(g); }

}  // namespace lite2onnx::passes
