// Layout propagation with four op classes: see docs/architecture.md, "Layouts".
//
// A plan is computed first (a pure function of the graph and the graph inputs'
// layouts): the layout each tensor gets, and the layout each op needs of each
// input. Applying it inserts the nodes that reconcile the two: one Transpose
// per (tensor, layout), an Unsqueeze for a lower-rank broadcast operand, and a
// Transpose after a producer whose output has a forced layout.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "core/ir/builtins.h"
#include "core/layout_spec.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::Perm;
using ir::TensorId;
using ops::LayoutClass;

namespace builtin = ir::builtin;

bool is_data(const ir::Graph& g, TensorId t) { return g.valid(t) && !g.tensor(t).is_const(); }

// An ONNX Identity the reader or a pass put in the TFLite-dialect graph.
bool is_identity_copy(const ir::Node& n) {
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

class Planner {
 public:
  // Plans are indexed by position in `order`.
  Planner(const ir::Graph& g, const std::vector<ir::NodeId>& order,
          const std::vector<ForcedLayout>& forced, Checkpoint& checkpoint, Preferences& preferences)
      : g_(g),
        order_(order),
        position_(g.node_id_bound(), 0),
        checkpoint_(checkpoint),
        preferences_(preferences) {
    forced_.resize(g.tensor_count());
    for (const auto& f : forced) forced_[static_cast<size_t>(f.tensor)] = &f;
    for (size_t k = 0; k < order.size(); ++k) position_[static_cast<size_t>(order[k])] = k;
  }

  const ForcedLayout* forced(TensorId t) const { return forced_[static_cast<size_t>(t)]; }

  Result<Plan> make(const std::vector<Perm>& input_layouts) const {
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
  Perm wanted_by_readers(const Plan& plan, TensorId t, int depth = 0) const {
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
  std::vector<Perm> backward_hints() const {
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
          want[static_cast<size_t>(n.inputs[d])] =
              ir::channels_first(g_.tensor(n.inputs[d]).rank());
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
      for (TensorId t : n.inputs)
        if (is_data(g_, t) && g_.tensor(t).rank() == rank && want[static_cast<size_t>(t)].empty())
          want[static_cast<size_t>(t)] = w;
    }
    return want;
  }

 private:
  // What one node needs of its inputs and gives its outputs, given its inputs' layouts.
  ops::LayoutPlan node_plan(const ir::Node& n, const std::vector<Perm>& in) const {
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

 public:
  // The best layouts of a subgraph's inputs and outputs, seen from inside.
  static const Preference& prefer(const ir::Graph& sub, const ops::SubgraphBinding& b,
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
        if (made.size() == sub.tensor(sub.inputs()[i]).rank())
          pref.inputs[i] = ir::normalized(made);
      }
      for (size_t j = 0; j < sub.outputs().size(); ++j)
        pref.outputs[j] = ir::normalized(plan->layout[static_cast<size_t>(sub.outputs()[j])]);
    }
    return preferences.emplace(&sub, std::move(pref)).first->second;
  }

 private:
  // A control-flow node: each value it hands a subgraph goes in the layout
  // the subgraph prefers for it (the first subgraph with a preference), else
  // in the layout it has (no Transpose). A loop's value leaves in the layout
  // it entered with (every iteration must give it back in that layout); an
  // IF's output in the layout its branches make it in (an argument passed
  // through: the layout it was handed in).
  ops::LayoutPlan subgraph_plan(const ir::Node& n, std::span<const Perm> in) const {
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
  bool flattens_for_fc(const ir::Node& n, const std::vector<Perm>& in,
                       const ops::LayoutPlan& np) const {
    if (n.dialect != ir::Dialect::kTflite || n.builtin != builtin::kReshape || in.empty() ||
        in[0].empty() || !np.inputs[0].empty() || n.outputs.size() != 1)
      return false;
    const ir::Tensor& x = g_.tensor(n.inputs[0]);
    const ir::Tensor& y = g_.tensor(n.outputs[0]);
    if (in[0][0] != 0 || y.rank() != 2 || !ir::element_count(x.shape) ||
        !ir::element_count(y.shape) || y.shape[0] != x.shape[0] ||
        g_.is_graph_output(n.outputs[0]) || forced_[static_cast<size_t>(n.outputs[0])])
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

  Status check_implicit_conflict(const ir::Node& n, const ops::LayoutPlan& np) const {
    const ops::OpEntry& e = ops::lookup(n);
    if (n.dialect != ir::Dialect::kTflite || e.layout.kind != LayoutClass::kImplicit)
      return ok_status();
    size_t d = static_cast<size_t>(e.layout.data_input);
    if (d >= n.inputs.size() || !is_data(g_, n.inputs[d])) return ok_status();
    const ForcedLayout* f = forced_[static_cast<size_t>(n.inputs[d])];
    Perm need = ir::normalized(np.inputs[d]);
    if (!f || !f->strict || ir::normalized(f->perm) == need) return ok_status();
    Error err = make_error(
        ErrorCode::kInvalidOption,
        f->source + " gives tensor '" + g_.tensor(n.inputs[d]).name + "' layout " +
            ir::to_string(ir::full_perm(f->perm, g_.tensor(n.inputs[d]).rank())) + ", but op " +
            std::to_string(n.source_op) + " (" + n.op + ", Implicit) reads it as " +
            ir::to_string(ir::full_perm(need, g_.tensor(n.inputs[d]).rank())));
    err.op_index = n.source_op;
    err.tensor = g_.tensor(n.inputs[d]).name;
    return err;
  }

  Error rank_error(const ir::Node& n, size_t t, size_t rank) const {
    Error e = make_error(ErrorCode::kInvalidModel,
                         "op " + std::to_string(n.source_op) + " (" + n.op + "): output tensor '" +
                             g_.tensor(static_cast<TensorId>(t)).name + "' has rank " +
                             std::to_string(g_.tensor(static_cast<TensorId>(t)).rank()) +
                             ", but the op gives rank " + std::to_string(rank));
    e.op_index = n.source_op;
    e.tensor = g_.tensor(static_cast<TensorId>(t)).name;
    return e;
  }

  const ir::Graph& g_;
  std::vector<const ForcedLayout*> forced_;
  const std::vector<ir::NodeId>& order_;
  std::vector<size_t> position_;  // per node id: its position in order_
  Checkpoint& checkpoint_;
  Preferences& preferences_;
};

Status propagate(ir::Graph& g, PassContext& ctx, const std::vector<ForcedLayout>& forced,
                 Preferences& preferences);

// Inserts the reconciling nodes (one GraphEdit, applied at the end).
class Applier {
 public:
  Applier(ir::Graph& g, const Plan& plan, const Planner& planner, PassContext& ctx,
          Preferences& preferences)
      : g_(g),
        plan_(plan),
        planner_(planner),
        checkpoint_(ctx.checkpoint),
        ctx_(ctx),
        preferences_(preferences) {}

  Status run() {
    for (size_t t = 0; t < g_.tensor_count(); ++t)
      if (!g_.tensor(static_cast<TensorId>(t)).is_const())
        g_.tensor(static_cast<TensorId>(t)).layout = plan_.layout[t];
    const std::vector<ir::NodeId> order = g_.order();
    for (size_t k = 0; k < order.size(); ++k) {
      if (checkpoint_.should_stop()) return checkpoint_.status();
      const ir::NodeId id = order[k];
      const ir::Node& n = g_.node(id);
      std::vector<TensorId> inputs = n.inputs;
      for (size_t i = 0; i < inputs.size(); ++i) {
        TensorId t = inputs[i];
        if (!is_data(g_, t)) continue;
        Perm need = ir::normalized(plan_.required[k][i]);
        inputs[i] = need.size() > g_.tensor(t).rank() ? broadcast(t, need, id, i)
                                                      : in_layout(t, need, id, i);
        if (inputs[i] != t) edit_.set_input(id, i, inputs[i]);
      }
      if (plan_.flatten_for_fc[k])  // a Reshape flattening a permuted tensor for an FC
        g_.tensor(n.outputs[0]).flattened = g_.tensor(inputs[0]).flattened_axes();
      if (!n.subgraphs.empty() && n.dialect == ir::Dialect::kTflite)
        if (auto st = into_subgraphs(id, k); !st) return st;
      // Outputs whose forced layout differs from what the op writes.
      for (size_t oi = 0; oi < n.outputs.size(); ++oi) {
        const TensorId o = n.outputs[oi];
        const Perm& made = plan_.produced[static_cast<size_t>(o)];
        if (made == g_.tensor(o).layout) continue;
        ir::Tensor raw = g_.tensor(o);
        raw.name += "/as_produced";
        raw.layout = made;
        TensorId r = g_.add_tensor(std::move(raw));
        edit_.set_output(id, oi, r);
        const ForcedLayout* f = planner_.forced(o);
        edit_.insert_after(
            id,
            transpose(r, o, n.name + "/Transpose_out" + std::to_string(oi), n.source_op,
                      (f ? f->source : std::string("forced layout")) + ": op writes " +
                          ir::to_string(ir::full_perm(g_.tensor(r).layout, g_.tensor(r).rank()))));
      }
    }
    g_.apply(std::move(edit_));
    return ok_status();
  }

 private:
  // Propagates layouts inside each subgraph of control-flow node `n` (the
  // k-th), its inputs in the layouts the node hands them over in. Its outputs
  // are put in the layouts of the node's outputs when it is lowered.
  Status into_subgraphs(ir::NodeId id, size_t k) {
    const ir::Node& n = g_.node(id);
    const ops::OpEntry& e = ops::lookup(n);
    if (!e.subgraph_binding) return ok_status();
    for (size_t s = 0; s < n.subgraphs.size(); ++s) {
      ir::Graph& sub = g_.info(id).subgraphs[s].graph();
      const ops::SubgraphBinding b = e.subgraph_binding(n, s);
      std::vector<ForcedLayout> forced;
      for (size_t i = 0; i < b.inputs.size() && i < sub.inputs().size(); ++i) {
        const int slot = b.inputs[i];
        if (slot < 0 || static_cast<size_t>(slot) >= n.inputs.size()) continue;
        const TensorId t = sub.inputs()[i];
        Perm p = ir::normalized(plan_.required[k][static_cast<size_t>(slot)]);
        if (!p.empty() && p.size() != sub.tensor(t).rank()) p.clear();
        forced.push_back({t, std::move(p),
                          n.name + " hands over input " + std::to_string(slot) + " in this layout",
                          false});
      }
      if (auto st = propagate(sub, ctx_, forced, preferences_); !st) return st;
    }
    return ok_status();
  }

  // The tensor in layout `need`, through one shared Transpose per (tensor,
  // layout), put before the first reader that needs it.
  TensorId in_layout(TensorId t, const Perm& need, ir::NodeId at, size_t i) {
    const ir::Node& reader = g_.node(at);
    if (g_.tensor(t).layout == need) return t;
    auto key = std::make_pair(t, need);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    ir::Tensor copy = g_.tensor(t);
    copy.name += need.empty() ? "/tflite_order" : "/" + ir::to_string(need);
    copy.layout = need;
    TensorId nt = g_.add_tensor(std::move(copy));
    const Perm& have = g_.tensor(t).layout;
    if (only_unit_axes_move(t, nt)) {
      edit_.insert_before(
          at, reshape(t, nt, reader.name + "/Reshape_in" + std::to_string(i), reader.source_op,
                      reason(reader, need, have) + "; only unit axes move, so a Reshape"));
    } else {
      edit_.insert_before(at, transpose(t, nt, reader.name + "/Transpose_in" + std::to_string(i),
                                        reader.source_op, reason(reader, need, have)));
    }
    cache_.emplace(key, nt);
    return nt;
  }

  // Whether going from `from`'s layout to `to`'s leaves the data order as it is
  // (a static shape whose non-unit axes keep their order).
  bool only_unit_axes_move(TensorId from, TensorId to) const {
    const ir::Tensor& a = g_.tensor(from);
    if (!ir::element_count(a.shape)) return false;
    size_t rank = a.rank();
    Perm p = ir::compose(ir::inverse(ir::full_perm(a.layout, rank)),
                         ir::full_perm(g_.tensor(to).layout, rank));
    return ir::keeps_memory_order(a.onnx_shape(), p);
  }

  ir::Node reshape(TensorId from, TensorId to, const std::string& name, int source,
                   const std::string& why) {
    ir::Shape target = g_.tensor(to).onnx_shape();
    ir::Node r;
    r.dialect = ir::Dialect::kOnnx;
    r.op = "Reshape";
    r.name = name;
    r.source_op = source;
    r.inputs = {from, axes_constant(name + "/shape", target)};
    r.outputs = {to};
    r.inserted = ir::Insertion{g_.tensor(from).name, why};
    return r;
  }

  // A lower-rank operand of a broadcast op running in layout `need` (rank n):
  // Unsqueeze it to rank n; when its own axes keep their order in `need`, the
  // Unsqueeze alone puts them in place, else a Transpose follows.
  TensorId broadcast(TensorId t, const Perm& need, ir::NodeId at, size_t i) {
    auto key = std::make_pair(t, need);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    TensorId src = in_layout(t, Perm{}, at, i);  // TFLite order first
    const ir::Node& reader = g_.node(at);
    const size_t k = g_.tensor(src).rank(), n = need.size();
    ir::Tensor expanded = g_.tensor(src);
    expanded.shape.insert(expanded.shape.begin(), n - k, 1);
    std::vector<int64_t> positions;  // ONNX positions of the operand's own axes
    for (size_t j = 0; j < k; ++j)
      positions.push_back(ir::onnx_axis(need, static_cast<int>(n - k + j)));
    bool direct = std::is_sorted(positions.begin(), positions.end());
    std::vector<int64_t> axes;
    for (size_t a = 0; a < n; ++a)
      if (direct ? std::find(positions.begin(), positions.end(), static_cast<int64_t>(a)) ==
                       positions.end()
                 : a < n - k)
        axes.push_back(static_cast<int64_t>(a));
    expanded.name = g_.tensor(t).name + "/rank" + std::to_string(n);
    expanded.layout = direct ? need : Perm{};
    TensorId ex = g_.add_tensor(expanded);
    ir::Node u;
    u.dialect = ir::Dialect::kOnnx;
    u.op = "Unsqueeze";
    u.name = reader.name + "/Unsqueeze_in" + std::to_string(i);
    u.source_op = reader.source_op;
    u.inputs = {src, axes_constant(u.name + "/axes", axes)};
    u.outputs = {ex};
    u.inserted = ir::Insertion{g_.tensor(t).name,
                               "rank-" + std::to_string(k) + " operand broadcast against rank " +
                                   std::to_string(n) + " in layout " + ir::to_string(need) + " (" +
                                   reader.op + ", op " + std::to_string(reader.source_op) + ")"};
    edit_.insert_before(at, std::move(u));
    TensorId out = direct ? ex : in_layout(ex, need, at, i);
    cache_.emplace(key, out);
    return out;
  }

  // An int64 vector constant (axes, shapes).
  TensorId axes_constant(const std::string& name, const std::vector<int64_t>& axes) {
    std::vector<std::byte> bytes(axes.size() * sizeof(int64_t));
    if (!axes.empty()) std::memcpy(bytes.data(), axes.data(), bytes.size());
    ir::Tensor c;
    c.name = name;
    c.dtype = ir::DataType::kInt64;
    c.shape = {static_cast<int64_t>(axes.size())};
    c.data = g_.own(std::move(bytes), ir::DataType::kInt64, name);
    return g_.add_tensor(std::move(c));
  }

  ir::Node transpose(TensorId from, TensorId to, const std::string& name, int source,
                     const std::string& why) {
    size_t rank = g_.tensor(from).rank();
    // ONNX value in layout `have` -> layout `need`: perm = inverse(have), then need.
    Perm p = ir::full_perm(ir::compose(ir::inverse(ir::full_perm(g_.tensor(from).layout, rank)),
                                       ir::full_perm(g_.tensor(to).layout, rank)),
                           rank);
    ir::Node tr;
    tr.dialect = ir::Dialect::kOnnx;
    tr.op = "Transpose";
    tr.name = name;
    tr.source_op = source;
    tr.inputs = {from};
    tr.outputs = {to};
    tr.attrs.set("perm", std::vector<int64_t>(p.begin(), p.end()));
    tr.inserted = ir::Insertion{g_.tensor(from).name, why};
    return tr;
  }

  std::string reason(const ir::Node& reader, const Perm& need, const Perm& have) const {
    const ops::OpEntry& e = ops::lookup(reader);
    std::string s =
        reader.op + " (op " + std::to_string(reader.source_op) + ", " +
        ops::to_string(e.layout.kind) + ") needs " +
        (need.empty() ? std::string("TFLite axis order") : "layout " + ir::to_string(need));
    if (!have.empty()) s += "; tensor has layout " + ir::to_string(have);
    return s;
  }

  ir::Graph& g_;
  const Plan& plan_;
  const Planner& planner_;
  Checkpoint& checkpoint_;
  PassContext& ctx_;
  Preferences& preferences_;
  std::map<std::pair<TensorId, Perm>, TensorId> cache_;
  ir::GraphEdit edit_{g_};  // the reconciling nodes, and the edges they take over
};

}  // namespace

Result<std::vector<ForcedLayout>> resolve_layouts(
    const ir::Graph& g, const LayoutOptions& options,
    std::span<const std::pair<std::string, TensorId>> other_names) {
  std::map<std::string, TensorId> by_name;
  for (TensorId t = 0; static_cast<size_t>(t) < g.tensor_count(); ++t)
    by_name.emplace(g.tensor(t).name, t);
  for (const auto& [name, t] : other_names) by_name.emplace(name, t);
  std::vector<ForcedLayout> out;
  std::map<TensorId, size_t> seen;
  auto add = [&](const LayoutSpec& spec, const std::string& source, bool io) -> Status {
    const bool strict = !io;
    auto it = by_name.find(spec.tensor);
    if (it == by_name.end())
      return make_error(ErrorCode::kInvalidOption,
                        source + ": the model has no tensor named '" + spec.tensor + "'");
    TensorId t = it->second;
    if (io && !g.is_graph_input(t) && !g.is_graph_output(t))
      return make_error(ErrorCode::kInvalidOption,
                        source + ": '" + spec.tensor + "' is not a graph input or output");
    if (g.tensor(t).is_const())
      return make_error(ErrorCode::kInvalidOption,
                        source + ": '" + spec.tensor + "' is a constant");
    auto perm = layout_perm(spec);
    if (!perm) return make_error(ErrorCode::kInvalidOption, source + ": " + perm.error().message);
    if (perm->size() != g.tensor(t).rank())
      return make_error(ErrorCode::kInvalidOption, source + ": '" + spec.tensor + "' has rank " +
                                                       std::to_string(g.tensor(t).rank()) +
                                                       ", the layout has " +
                                                       std::to_string(perm->size()) + " axes");
    Perm p = ir::normalized(*perm);
    if (auto s = seen.find(t); s != seen.end()) {
      if (out[s->second].perm == p) return ok_status();
      return make_error(
          ErrorCode::kInvalidOption,
          source + " contradicts " + out[s->second].source + " for tensor '" + spec.tensor + "'");
    }
    seen.emplace(t, out.size());
    out.push_back({t, p, source, strict});
    return ok_status();
  };
  for (const auto& s : options.explicit_layouts)
    if (auto st = add(s, "explicit layout " + s.text(), false); !st) return st.take_error();
  for (const auto& s : options.io_layouts)
    if (auto st = add(s, "io layout " + s.text(), true); !st) return st.take_error();
  // State: an input and its next value keep one layout, so an output can be
  // fed back as it is. When an option names one of them, the other takes its
  // layout too (else propagate_layouts pairs them up).
  for (const ir::StatePair& p : g.state) {
    const auto in = seen.find(p.input), next = seen.find(p.output);
    if (in != seen.end() && next != seen.end()) {
      if (out[in->second].perm != out[next->second].perm)
        return make_error(ErrorCode::kInvalidOption,
                          out[in->second].source + " and " + out[next->second].source +
                              " give the state input '" + g.tensor(p.input).name +
                              "' and its next value different layouts");
      continue;
    }
    if (in == seen.end() && next == seen.end()) continue;
    const ForcedLayout chosen = out[(in != seen.end() ? in : next)->second];
    const TensorId other = in != seen.end() ? p.output : p.input;
    seen.emplace(other, out.size());
    out.push_back({other, chosen.perm, chosen.source + " (and the state it pairs with)", false});
  }
  // --keep-io-layout keeps both in TFLite's order (below).
  if (options.keep_io_layout) {
    for (auto list : {&g.inputs(), &g.outputs()})
      for (TensorId t : *list)
        if (!seen.count(t) && !g.tensor(t).is_const()) {
          seen.emplace(t, out.size());
          out.push_back({t, Perm{}, "--keep-io-layout", false});
        }
  }
  return out;
}

Status propagate_layouts(ir::Graph& g, PassContext& ctx, const std::vector<ForcedLayout>& forced) {
  Preferences preferences;
  return propagate(g, ctx, forced, preferences);
}

namespace {

Status propagate(ir::Graph& g, PassContext& ctx, const std::vector<ForcedLayout>& forced,
                 Preferences& preferences) {
  const std::vector<ir::NodeId> order = g.order();
  Planner planner(g, order, forced, ctx.checkpoint, preferences);
  // 1. Graph inputs start in their forced layout, else the one ops downstream want.
  std::vector<Perm> hints = planner.backward_hints();
  std::vector<Perm> input_layouts;
  for (TensorId t : g.inputs()) {
    const Perm& h = hints[static_cast<size_t>(t)];
    bool fits = !g.is_graph_output(t) && h.size() == g.tensor(t).rank();
    const ForcedLayout* f = planner.forced(t);
    input_layouts.push_back(f ? f->perm : fits ? h : Perm{});
  }
  auto plan = planner.make(input_layouts);
  if (!plan) return plan.take_error();
  // 2. An unforced input whose readers all want one other layout takes it
  //    (siblings of a Conv output in an Add, say); re-plan once.
  bool changed = false;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    TensorId t = g.inputs()[i];
    if (planner.forced(t) || g.is_graph_output(t)) continue;
    Perm w = planner.wanted_by_readers(*plan, t);
    if (!w.empty() && w != input_layouts[i]) {
      input_layouts[i] = w;
      changed = true;
    }
  }
  if (changed) {
    plan = planner.make(input_layouts);
    if (!plan) return plan.take_error();
  }
  // 3. State: each next value leaves in the layout its input arrived in (an
  //    output fed back as it is), unless an option forced one of the two
  //    (resolve_layouts then forced both).
  std::vector<ForcedLayout> with_state;
  for (const ir::StatePair& p : g.state) {
    if (planner.forced(p.output) || planner.forced(p.input)) continue;
    const auto at = std::find(g.inputs().begin(), g.inputs().end(), p.input);
    if (at == g.inputs().end()) continue;
    if (with_state.empty()) with_state = forced;
    with_state.push_back({p.output, input_layouts[static_cast<size_t>(at - g.inputs().begin())],
                          "state: the layout its input '" + g.tensor(p.input).name + "' arrives in",
                          false});
  }
  if (!with_state.empty()) {
    Planner paired(g, order, with_state, ctx.checkpoint, preferences);
    auto again = paired.make(input_layouts);
    if (!again) return again.take_error();
    return Applier(g, *again, paired, ctx, preferences).run();
  }
  // 4. Apply (and propagate inside the graphs control-flow nodes own).
  return Applier(g, *plan, planner, ctx, preferences).run();
}

}  // namespace

}  // namespace lite2onnx::passes
