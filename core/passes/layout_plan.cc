// The layout plan (layout_plan.h): per node, the layout each input must have
// and each output gets, from the inputs' layouts and the op's layout class.
#include "core/passes/layout_plan.h"

#include "core/ir/builtins.h"

namespace lite2onnx::passes::layout {

using ops::LayoutClass;
namespace builtin = ir::builtin;

Planner::Planner(const ir::Graph& g, const std::vector<ir::NodeId>& order,
                 const std::vector<ForcedLayout>& forced, Checkpoint& checkpoint,
                 Preferences& preferences)
    : g_(g),
      order_(order),
      position_(g.node_id_bound(), 0),
      checkpoint_(checkpoint),
      preferences_(preferences) {
  forced_.resize(g.tensor_count());
  for (const auto& f : forced) forced_[static_cast<size_t>(f.tensor)] = &f;
  for (size_t k = 0; k < order.size(); ++k) position_[static_cast<size_t>(order[k])] = k;
}

Result<Plan> Planner::make(const std::vector<Perm>& input_layouts) const {
  Plan plan;
  plan.layout.assign(g_.tensor_count(), Perm{});
  plan.produced.assign(g_.tensor_count(), Perm{});
  plan.required.resize(order_.size());
  plan.flatten_for_fc.assign(order_.size(), false);
  for (size_t i = 0; i < g_.inputs().size(); ++i)
    plan.layout[static_cast<size_t>(g_.inputs()[i])] = input_layouts[i];
  for (size_t k = 0; k < order_.size(); ++k) {
    if (checkpoint_.should_stop()) return checkpoint_.status().take_error();
    const ir::Node& n = g_.node(order_[k]);
    std::vector<Perm> in;
    for (TensorId t : n.inputs)
      in.push_back(g_.valid(t) ? plan.layout[static_cast<size_t>(t)] : Perm{});
    ops::LayoutPlan np = node_plan(n, in);
    if (flattens_for_fc(n, in, np)) {
      np.inputs[0] = in[0];
      plan.flatten_for_fc[k] = true;
    }
    if (auto st = check_implicit_conflict(n, np); !st) return st.take_error();
    plan.required[k] = np.inputs;
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      auto t = static_cast<size_t>(n.outputs[o]);
      Perm q = ir::normalized(np.outputs[o]);
      if (!q.empty() && q.size() != g_.tensor(static_cast<TensorId>(t)).rank())
        return rank_error(n, t, q.size());
      plan.produced[t] = q;
      plan.layout[t] = forced_[t] ? forced_[t]->perm : q;
    }
  }
  return plan;
}

// The layout every reader of a graph input asks for, if they all agree on a
// non-identity one (the input then arrives in it: no Transpose).
// The converter's own Identities (a variable read, a CALL's result) are
// looked through: their readers decide.
Perm Planner::wanted_by_readers(const Plan& plan, TensorId t, int depth) const {
  Perm want;
  bool any = false;
  for (const ir::Use& u : g_.uses(t)) {
    const ir::Node& reader = g_.node(u.node);
    Perm r = is_identity_copy(reader) && depth < 4 && !g_.is_graph_output(reader.outputs[0])
                 ? wanted_by_readers(plan, reader.outputs[0], depth + 1)
                 : ir::normalized(plan.required[position_[static_cast<size_t>(u.node)]][u.slot]);
    if (r.size() != g_.tensor(t).rank() && !r.empty()) return {};  // a broadcast
    if (any && r != want) return {};
    want = r;
    any = true;
  }
  return want;
}

// Backward hints: the layout an op downstream would like a tensor in, found
// by walking back through ops that keep their input's layout.
std::vector<Perm> Planner::backward_hints() const {
  std::vector<Perm> want(g_.tensor_count());
  for (size_t t = 0; t < forced_.size(); ++t)
    if (forced_[t]) want[t] = forced_[t]->perm;
  for (size_t k = order_.size(); k-- > 0;) {
    const ir::Node& n = g_.node(order_[k]);
    const ops::OpEntry& e = ops::lookup(n);
    if (is_identity_copy(n)) {
      if (is_data(g_, n.inputs[0]) && want[static_cast<size_t>(n.inputs[0])].empty())
        want[static_cast<size_t>(n.inputs[0])] = want[static_cast<size_t>(n.outputs[0])];
      continue;
    }
    if (n.dialect != ir::Dialect::kTflite || !e.supported()) continue;
    if (e.layout.kind == LayoutClass::kImplicit) {
      size_t d = static_cast<size_t>(e.layout.data_input);
      if (d < n.inputs.size() && is_data(g_, n.inputs[d]))
        want[static_cast<size_t>(n.inputs[d])] = ir::channels_first(g_.tensor(n.inputs[d]).rank());
      continue;
    }
    if (e.layout.kind == LayoutClass::kSubgraph) {
      // The layouts the node's subgraphs would like their inputs in.
      const ops::LayoutPlan p = subgraph_plan(n, std::vector<Perm>(n.inputs.size()));
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (is_data(g_, n.inputs[i]) && want[static_cast<size_t>(n.inputs[i])].empty())
          want[static_cast<size_t>(n.inputs[i])] = p.inputs[i];
      continue;
    }
    if (e.layout.hint_input && !n.inputs.empty() && !n.outputs.empty() &&
        is_data(g_, n.inputs[0]) && want[static_cast<size_t>(n.inputs[0])].empty()) {
      want[static_cast<size_t>(n.inputs[0])] =
          e.layout.hint_input(g_, n, want[static_cast<size_t>(n.outputs[0])]);
      continue;
    }
    bool keeps = e.layout.kind == LayoutClass::kTransparent || e.layout.keeps_layout;
    if (!keeps || n.outputs.empty()) continue;
    const Perm& w = want[static_cast<size_t>(n.outputs[0])];
    size_t rank = g_.tensor(n.outputs[0]).rank();
    // Only the data input when the others stay in TFLite order (PAD's
    // paddings computed at run time).
    const size_t hinted = e.layout.propagate == ops::propagate_data_input ? 1 : n.inputs.size();
    for (size_t i = 0; i < hinted && i < n.inputs.size(); ++i) {
      const TensorId t = n.inputs[i];
      if (is_data(g_, t) && g_.tensor(t).rank() == rank && want[static_cast<size_t>(t)].empty())
        want[static_cast<size_t>(t)] = w;
    }
  }
  return want;
}

// What one node needs of its inputs and gives its outputs, given its inputs' layouts.
ops::LayoutPlan Planner::node_plan(const ir::Node& n, const std::vector<Perm>& in) const {
  const ops::OpEntry& e = ops::lookup(n);
  ops::LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.outputs.assign(n.outputs.size(), Perm{});
  // The converter's own Identity (a CALL's result passed through, a
  // variable read): any layout, kept.
  if (is_identity_copy(n) && !in.empty()) {
    plan.inputs[0] = in[0];
    plan.outputs[0] = in[0];
    return plan;
  }
  if (n.dialect != ir::Dialect::kTflite || !e.supported()) return plan;
  switch (e.layout.kind) {
    case LayoutClass::kImplicit: {
      size_t d = static_cast<size_t>(e.layout.data_input);
      if (d < n.inputs.size() && is_data(g_, n.inputs[d]))
        plan.inputs[d] = ir::channels_first(g_.tensor(n.inputs[d]).rank());
      for (size_t o = 0; o < n.outputs.size(); ++o)
        plan.outputs[o] = ir::channels_first(g_.tensor(n.outputs[o]).rank());
      return plan;
    }
    case LayoutClass::kTransparent: {
      // Run in the layout of the first full-rank data input that has one;
      // lower-rank data operands are unsqueezed into it (numpy broadcast).
      size_t rank = n.outputs.empty() ? 0 : g_.tensor(n.outputs[0]).rank();
      Perm p;
      for (size_t i = 0; i < n.inputs.size() && p.empty(); ++i)
        if (is_data(g_, n.inputs[i]) && g_.tensor(n.inputs[i]).rank() == rank) p = in[i];
      for (size_t i = 0; i < n.inputs.size() && p.empty(); ++i)
        if (is_data(g_, n.inputs[i]) && g_.tensor(n.inputs[i]).rank() == rank && !in[i].empty())
          p = in[i];
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (is_data(g_, n.inputs[i])) plan.inputs[i] = p;
      for (size_t o = 0; o < n.outputs.size(); ++o)
        plan.outputs[o] = g_.tensor(n.outputs[o]).rank() == rank ? p : Perm{};
      return plan;
    }
    case LayoutClass::kAttribute:
    case LayoutClass::kTerminate:
      // A Terminate op may still take a layout that leaves memory order as is.
      if (e.layout.propagate)
        if (auto p = e.layout.propagate(g_, n, in)) return *p;
      return plan;
    case LayoutClass::kSubgraph:
      return subgraph_plan(n, in);
  }
  return plan;
}

// The best layouts of a subgraph's inputs and outputs, seen from inside.
const Preference& Planner::prefer(const ir::Graph& sub, const ops::SubgraphBinding& b,
                                  Checkpoint& checkpoint, Preferences& preferences) {
  if (auto it = preferences.find(&sub); it != preferences.end()) return it->second;
  Preference pref;
  pref.inputs.resize(sub.inputs().size());
  pref.outputs.resize(sub.outputs().size());
  const std::vector<ir::NodeId> order = sub.order();
  Planner p(sub, order, {}, checkpoint, preferences);
  const std::vector<Perm> hints = p.backward_hints();
  for (size_t i = 0; i < sub.inputs().size(); ++i) {
    const TensorId t = sub.inputs()[i];
    const Perm& h = hints[static_cast<size_t>(t)];
    if (h.size() == sub.tensor(t).rank() && !sub.is_graph_output(t)) pref.inputs[i] = h;
  }
  auto plan = p.make(pref.inputs);
  if (plan) {
    bool changed = false;
    for (size_t i = 0; i < sub.inputs().size(); ++i) {
      if (!pref.inputs[i].empty()) continue;
      Perm w = p.wanted_by_readers(*plan, sub.inputs()[i]);
      if (!w.empty()) {
        pref.inputs[i] = std::move(w);
        changed = true;
      }
    }
    if (changed) plan = p.make(pref.inputs);
  }
  if (plan) {
    for (size_t i = 0; i < b.carried.size() && i < sub.inputs().size(); ++i) {
      const int o = b.carried[i];
      if (!pref.inputs[i].empty() || o < 0 || static_cast<size_t>(o) >= sub.outputs().size())
        continue;
      const TensorId out = sub.outputs()[o];
      const Perm& made = plan->layout[static_cast<size_t>(out)];
      if (made.size() == sub.tensor(sub.inputs()[i]).rank()) pref.inputs[i] = ir::normalized(made);
    }
    for (size_t j = 0; j < sub.outputs().size(); ++j)
      pref.outputs[j] = ir::normalized(plan->layout[static_cast<size_t>(sub.outputs()[j])]);
  }
  return preferences.emplace(&sub, std::move(pref)).first->second;
}

// A control-flow node: each value it hands a subgraph goes in the layout
// the subgraph prefers for it (the first subgraph with a preference), else
// in the layout it has (no Transpose). A loop's value leaves in the layout
// it entered with (every iteration must give it back in that layout); an
// IF's output in the layout its branches make it in (an argument passed
// through: the layout it was handed in).
ops::LayoutPlan Planner::subgraph_plan(const ir::Node& n, std::span<const Perm> in) const {
  const ops::OpEntry& e = ops::lookup(n);
  ops::LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.outputs.assign(n.outputs.size(), Perm{});
  std::vector<bool> chosen(n.inputs.size(), false);
  std::vector<ops::SubgraphBinding> bindings;
  for (size_t s = 0; s < n.subgraphs.size(); ++s) {
    const ir::Graph& sub = n.subgraphs[s].graph();
    bindings.push_back(e.subgraph_binding(n, s));
    const ops::SubgraphBinding& b = bindings.back();
    const Preference& pref = prefer(sub, b, checkpoint_, preferences_);
    for (size_t i = 0; i < b.inputs.size() && i < pref.inputs.size(); ++i) {
      const int slot = b.inputs[i];
      if (slot < 0 || static_cast<size_t>(slot) >= n.inputs.size() || chosen[slot] ||
          pref.inputs[i].empty() || !is_data(g_, n.inputs[slot]) ||
          pref.inputs[i].size() != g_.tensor(n.inputs[slot]).rank())
        continue;
      plan.inputs[slot] = pref.inputs[i];
      chosen[slot] = true;
    }
  }
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!chosen[i] && is_data(g_, n.inputs[i]) && i < in.size())
      plan.inputs[i] = ir::normalized(in[i]);
  std::vector<bool> placed(n.outputs.size(), false);
  for (size_t s = 0; s < n.subgraphs.size(); ++s) {
    const ir::Graph& sub = n.subgraphs[s].graph();
    const ops::SubgraphBinding& b = bindings[s];
    const Preference& pref = prefer(sub, b, checkpoint_, preferences_);
    for (size_t j = 0; j < b.outputs.size() && j < sub.outputs().size(); ++j) {
      const int slot = b.outputs[j];
      if (slot < 0 || static_cast<size_t>(slot) >= n.outputs.size() || placed[slot]) continue;
      Perm p;
      // The input this output carries to the next iteration, or the input
      // it passes through.
      int from = -1;
      for (size_t i = 0; i < b.carried.size(); ++i)
        if (b.carried[i] == static_cast<int>(j)) from = static_cast<int>(i);
      if (from < 0)
        for (size_t i = 0; i < sub.inputs().size(); ++i)
          if (sub.inputs()[i] == sub.outputs()[j]) from = static_cast<int>(i);
      if (from >= 0 && static_cast<size_t>(from) < b.inputs.size() && b.inputs[from] >= 0)
        p = plan.inputs[static_cast<size_t>(b.inputs[from])];
      else if (j < pref.outputs.size())
        p = pref.outputs[j];
      if (p.empty() && b.carried.empty() && s + 1 < n.subgraphs.size()) continue;
      if (!p.empty() && p.size() != g_.tensor(n.outputs[slot]).rank()) p.clear();
      plan.outputs[slot] = p;
      placed[slot] = true;
    }
  }
  return plan;
}

// Conv -> Reshape(flatten) -> FULLY_CONNECTED: flatten the permuted tensor
// as it is and permute the FC's weight columns instead (the CMSIS-NN trick).
bool Planner::flattens_for_fc(const ir::Node& n, const std::vector<Perm>& in,
                              const ops::LayoutPlan& np) const {
  if (n.dialect != ir::Dialect::kTflite || n.builtin != builtin::kReshape || in.empty() ||
      in[0].empty() || !np.inputs[0].empty() || n.outputs.size() != 1)
    return false;
  const ir::Tensor& x = g_.tensor(n.inputs[0]);
  const ir::Tensor& y = g_.tensor(n.outputs[0]);
  if (in[0][0] != 0 || y.rank() != 2 || !ir::element_count(x.shape) ||
      !ir::element_count(y.shape) || y.shape[0] != x.shape[0] || g_.is_graph_output(n.outputs[0]) ||
      forced_[static_cast<size_t>(n.outputs[0])])
    return false;
  const auto readers = g_.uses(n.outputs[0]);
  if (readers.empty()) return false;
  for (const ir::Use& u : readers) {
    const ir::Node& fc = g_.node(u.node);
    if (fc.builtin != builtin::kFullyConnected || fc.inputs.size() < 2 ||
        fc.inputs[0] != n.outputs[0] || fc.inputs[1] == n.outputs[0] || !g_.valid(fc.inputs[1]) ||
        !g_.tensor(fc.inputs[1]).is_const())
      return false;
  }
  return true;
}

Status Planner::check_implicit_conflict(const ir::Node& n, const ops::LayoutPlan& np) const {
  const ops::OpEntry& e = ops::lookup(n);
  if (n.dialect != ir::Dialect::kTflite || e.layout.kind != LayoutClass::kImplicit)
    return ok_status();
  size_t d = static_cast<size_t>(e.layout.data_input);
  if (d >= n.inputs.size() || !is_data(g_, n.inputs[d])) return ok_status();
  const ForcedLayout* f = forced_[static_cast<size_t>(n.inputs[d])];
  Perm need = ir::normalized(np.inputs[d]);
  if (!f || !f->strict || ir::normalized(f->perm) == need) return ok_status();
  Error err = make_error(ErrorCode::kInvalidOption,
                         f->source + " gives tensor '" + g_.tensor(n.inputs[d]).name + "' layout " +
                             ir::to_string(ir::full_perm(f->perm, g_.tensor(n.inputs[d]).rank())) +
                             ", but op " + std::to_string(n.source_op) + " (" + n.op +
                             ", Implicit) reads it as " +
                             ir::to_string(ir::full_perm(need, g_.tensor(n.inputs[d]).rank())));
  err.op_index = n.source_op;
  err.tensor = g_.tensor(n.inputs[d]).name;
  return err;
}

Error Planner::rank_error(const ir::Node& n, size_t t, size_t rank) const {
  Error e = make_error(ErrorCode::kInvalidModel,
                       "op " + std::to_string(n.source_op) + " (" + n.op + "): output tensor '" +
                           g_.tensor(static_cast<TensorId>(t)).name + "' has rank " +
                           std::to_string(g_.tensor(static_cast<TensorId>(t)).rank()) +
                           ", but the op gives rank " + std::to_string(rank));
  e.op_index = n.source_op;
  e.tensor = g_.tensor(static_cast<TensorId>(t)).name;
  return e;
}

}  // namespace lite2onnx::passes::layout
