// The layout pass's planner (docs/architecture.md, "Layouts"), shared by
// layout_plan.cc, which computes plans, and layout.cc, which resolves the
// options' layouts, chooses the graph inputs' and applies a plan.
#pragma once

#include <map>
#include <span>
#include <vector>

#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes::layout {

using ir::Perm;
using ir::TensorId;

inline bool is_data(const ir::Graph& g, TensorId t) {
  return g.valid(t) && !g.tensor(t).is_const();
}

// An ONNX Identity the reader or a pass put in the TFLite-dialect graph.
inline bool is_identity_copy(const ir::Node& n) {
  return n.dialect == ir::Dialect::kOnnx && n.op == "Identity" && n.inputs.size() == 1 &&
         n.outputs.size() == 1;
}

// What the layouts of a control-flow node's subgraph would best be, seen from
// inside: per input the layout its readers want (backward hints, then what
// all its readers ask for, then, for a loop, the layout its next value comes
// out in, so that no iteration needs a Transpose), per output the layout it
// comes out in. Computed once per subgraph (memoized by address: the graphs
// a node owns stay where they are while the pass runs), so nested loops cost
// linear time.
struct Preference {
  std::vector<Perm> inputs, outputs;
};
using Preferences = std::map<const ir::Graph*, Preference>;

struct Plan {
  std::vector<Perm> layout;                 // per tensor: what readers see
  std::vector<Perm> produced;               // per tensor: what its producer writes
  std::vector<std::vector<Perm>> required;  // per node, per input
  std::vector<bool> flatten_for_fc;         // per node: Reshape flattening a permuted tensor
};

// The plan of one graph: a pure function of the graph, the forced layouts
// and the graph inputs' layouts (make()), plus the backward hints and readers'
// wishes that choose those inputs' layouts.
class Planner {
 public:
  // Plans are indexed by position in `order`.
  Planner(const ir::Graph& g, const std::vector<ir::NodeId>& order,
          const std::vector<ForcedLayout>& forced, Checkpoint& checkpoint,
          Preferences& preferences);

  const ForcedLayout* forced(TensorId t) const { return forced_[static_cast<size_t>(t)]; }

  // The plan when the graph inputs arrive in `input_layouts`.
  Result<Plan> make(const std::vector<Perm>& input_layouts) const;
  // The layout every reader of a graph input asks for, if they all agree on a
  // non-identity one (the input then arrives in it: no Transpose). The
  // converter's own Identities (a variable read, a CALL's result) are looked
  // through: their readers decide.
  Perm wanted_by_readers(const Plan& plan, TensorId t, int depth = 0) const;
  // Backward hints: the layout an op downstream would like a tensor in, found
  // by walking back through ops that keep their input's layout.
  std::vector<Perm> backward_hints() const;
  // The best layouts of a subgraph's inputs and outputs, seen from inside.
  static const Preference& prefer(const ir::Graph& sub, const ops::SubgraphBinding& b,
                                  Checkpoint& checkpoint, Preferences& preferences);

 private:
  ops::LayoutPlan node_plan(const ir::Node& n, const std::vector<Perm>& in) const;
  ops::LayoutPlan subgraph_plan(const ir::Node& n, std::span<const Perm> in) const;
  bool flattens_for_fc(const ir::Node& n, const std::vector<Perm>& in,
                       const ops::LayoutPlan& np) const;
  Status check_implicit_conflict(const ir::Node& n, const ops::LayoutPlan& np) const;
  Error rank_error(const ir::Node& n, size_t t, size_t rank) const;

  const ir::Graph& g_;
  std::vector<const ForcedLayout*> forced_;
  const std::vector<ir::NodeId>& order_;
  std::vector<size_t> position_;  // per node id: its position in order_
  Checkpoint& checkpoint_;
  Preferences& preferences_;
};

}  // namespace lite2onnx::passes::layout
