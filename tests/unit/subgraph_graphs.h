// ONNX-dialect IR graphs with node subgraphs (If branches), for the emitter's
// tests (emit_subgraph_test.cc) and the numeric check of the If model
// (tests/tools/write_if_model.cc + tests/numeric/test/if_model.mjs).
#pragma once

#include <string>
#include <utility>

#include "core/ir/graph.h"
#include "graph_builder.h"

namespace lite2onnx::testing {

// x [2, 3] float and cond (bool scalar) in; a = Abs(x); y = If(cond):
//   then_branch: then_out = (a + k) * scale
//   else_branch: else_out = a - k
// Both branches read `a` (a node output of the main graph) from the outer
// scope; `scale` is a constant of the main graph that only the then branch
// reads; each branch has its own constant named `k` (1.5 and 0.25).
inline ir::Graph if_model() {
  GraphBuilder then_b;
  {
    ir::TensorId a = then_b.tensor("a", {2, 3});  // outer-scope reference
    ir::TensorId k = then_b.f32("k", {1.5f}, {1});
    ir::TensorId scale = then_b.tensor("scale", {1});  // outer-scope reference
    ir::TensorId t = then_b.tensor("t", {2, 3});
    ir::TensorId out = then_b.tensor("then_out", {2, 3});
    then_b.onnx("Add", {a, k}, {t});
    then_b.onnx("Mul", {t, scale}, {out});
    then_b.output(out);
  }
  GraphBuilder else_b;
  {
    ir::TensorId a = else_b.tensor("a", {2, 3});  // outer-scope reference
    ir::TensorId k = else_b.f32("k", {0.25f}, {1});
    ir::TensorId out = else_b.tensor("else_out", {2, 3});
    else_b.onnx("Sub", {a, k}, {out});
    else_b.output(out);
  }
  GraphBuilder b;
  ir::TensorId x = b.input("x", {2, 3});
  ir::TensorId cond = b.input("cond", {}, ir::DataType::kBool);
  b.f32("scale", {2.f}, {1});  // read by no node of the main graph
  ir::TensorId a = b.tensor("a", {2, 3});
  ir::TensorId y = b.tensor("y", {2, 3});
  b.onnx("Abs", {x}, {a});
  ir::NodeId if_node = b.onnx("If", {cond}, {y});
  b.g.info(if_node).subgraphs.emplace_back("then_branch", std::move(then_b.g));
  b.g.info(if_node).subgraphs.emplace_back("else_branch", std::move(else_b.g));
  b.output(y);
  return std::move(b.g);
}

// `depth` Ifs nested in each other's then_branch (depth 0: no If). Each level
// reads x and cond of the main graph from the outer scope; the innermost
// then_branch computes x + 1, every else_branch x - 1.
inline ir::Graph nested_if_model(int depth) {
  // The graph at nesting level `level` (0: the main graph), with `levels_below`
  // Ifs inside it.
  auto level = [](auto& self, int at, int levels_below) -> ir::Graph {
    GraphBuilder b;
    const std::string suffix = "_" + std::to_string(at);
    ir::TensorId x = at == 0 ? b.input("x", {2, 3}) : b.tensor("x", {2, 3});
    ir::TensorId cond = at == 0 ? b.input("cond", {}, ir::DataType::kBool)
                                : b.tensor("cond", {}, ir::DataType::kBool);
    ir::TensorId out = b.tensor("out" + suffix, {2, 3});
    if (levels_below == 0) {
      b.onnx("Add", {x, b.f32("one" + suffix, {1.f}, {1})}, {out});
    } else {
      GraphBuilder else_b;
      ir::TensorId ex = else_b.tensor("x", {2, 3});
      ir::TensorId eo = else_b.tensor("else_out" + suffix, {2, 3});
      else_b.onnx("Sub", {ex, else_b.f32("one" + suffix, {1.f}, {1})}, {eo});
      else_b.output(eo);
      ir::NodeId n = b.onnx("If", {cond}, {out});
      b.g.info(n).subgraphs.emplace_back("then_branch", self(self, at + 1, levels_below - 1));
      b.g.info(n).subgraphs.emplace_back("else_branch", std::move(else_b.g));
    }
    b.output(out);
    return std::move(b.g);
  };
  return level(level, 0, depth);
}

}  // namespace lite2onnx::testing
