// Layout propagation: see DESIGN.md "Layout: propagation with four op classes".
#include <map>
#include <utility>

#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::Perm;
using ir::TensorId;
using ops::LayoutClass;

struct Plan {
  std::vector<Perm> layout;                   // per tensor
  std::vector<std::vector<Perm>> required;    // per node, per input
};

bool is_data(const ir::Graph& g, TensorId t) { return g.valid(t) && !g.tensor(t).is_const(); }

// What one node needs of its inputs and gives its outputs, given its inputs' layouts.
ops::LayoutPlan node_plan(const ir::Graph& g, const ir::Node& n, const std::vector<Perm>& in) {
  const ops::OpEntry& e = ops::lookup(n.builtin);
  ops::LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.outputs.assign(n.outputs.size(), Perm{});
  if (n.dialect != ir::Dialect::kTflite || !e.supported()) return plan;
  switch (e.layout) {
    case LayoutClass::kImplicit: {
      size_t d = static_cast<size_t>(e.data_input);
      if (d < n.inputs.size() && is_data(g, n.inputs[d]))
        plan.inputs[d] = ir::channels_first(g.tensor(n.inputs[d]).rank());
      for (size_t o = 0; o < n.outputs.size(); ++o)
        plan.outputs[o] = ir::channels_first(g.tensor(n.outputs[o]).rank());
      return plan;
    }
    case LayoutClass::kTransparent: {
      // Run in the layout of the highest-rank data input that has one.
      size_t out_rank = n.outputs.empty() ? 0 : g.tensor(n.outputs[0]).rank();
      Perm p;
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (is_data(g, n.inputs[i]) && g.tensor(n.inputs[i]).rank() == out_rank && !in[i].empty()) {
          p = in[i];
          break;
        }
      // A lower-rank data operand cannot broadcast against a permuted one
      // without an Unsqueeze; run in TFLite order instead.
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (is_data(g, n.inputs[i]) && g.tensor(n.inputs[i]).rank() != out_rank) p.clear();
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (is_data(g, n.inputs[i])) plan.inputs[i] = p;
      for (size_t o = 0; o < n.outputs.size(); ++o)
        plan.outputs[o] = g.tensor(n.outputs[o]).rank() == out_rank ? p : Perm{};
      return plan;
    }
    case LayoutClass::kAttribute: {
      if (e.propagate)
        if (auto p = e.propagate(g, n, in)) return *p;
      return plan;
    }
    case LayoutClass::kTerminate: return plan;
  }
  return plan;
}

Plan make_plan(const ir::Graph& g, const std::vector<Perm>& input_layouts) {
  Plan plan;
  plan.layout.assign(g.tensors.size(), Perm{});
  for (size_t i = 0; i < g.inputs.size(); ++i)
    plan.layout[static_cast<size_t>(g.inputs[i])] = input_layouts[i];
  plan.required.resize(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const ir::Node& n = g.nodes[k];
    std::vector<Perm> in;
    for (TensorId t : n.inputs) in.push_back(g.valid(t) ? plan.layout[static_cast<size_t>(t)] : Perm{});
    ops::LayoutPlan np = node_plan(g, n, in);
    plan.required[k] = np.inputs;
    for (size_t o = 0; o < n.outputs.size(); ++o)
      plan.layout[static_cast<size_t>(n.outputs[o])] = ir::normalized(np.outputs[o]);
  }
  return plan;
}

// The layout every reader of a graph input asks for, if they all agree on a
// non-identity one (an input then arrives in that layout: no Transpose).
Perm wanted_by_consumers(const ir::Graph& g, const Plan& plan, TensorId t) {
  Perm want;
  bool any = false;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const ir::Node& n = g.nodes[k];
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != t) continue;
      Perm r = ir::normalized(plan.required[k][i]);
      if (any && r != want) return {};
      want = r;
      any = true;
    }
  }
  if (g.is_graph_output(t)) return {};
  return want;
}

// Backward hint: the layout an op downstream would like this tensor in, found by
// walking back through ops that keep their input's layout.
std::vector<Perm> backward_hints(const ir::Graph& g) {
  std::vector<Perm> want(g.tensors.size());
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const ir::Node& n = g.nodes[k];
    const ops::OpEntry& e = ops::lookup(n.builtin);
    if (n.dialect != ir::Dialect::kTflite || !e.supported()) continue;
    if (e.layout == LayoutClass::kImplicit) {
      size_t d = static_cast<size_t>(e.data_input);
      if (d < n.inputs.size() && is_data(g, n.inputs[d]))
        want[static_cast<size_t>(n.inputs[d])] =
            ir::channels_first(g.tensor(n.inputs[d]).rank());
      continue;
    }
    bool keeps = e.layout == LayoutClass::kTransparent ||
                 (e.layout == LayoutClass::kAttribute && e.propagate == ops::propagate_same);
    if (!keeps || n.outputs.empty()) continue;
    const Perm& w = want[static_cast<size_t>(n.outputs[0])];
    size_t rank = g.tensor(n.outputs[0]).rank();
    for (TensorId t : n.inputs)
      if (is_data(g, t) && g.tensor(t).rank() == rank && want[static_cast<size_t>(t)].empty())
        want[static_cast<size_t>(t)] = w;
  }
  return want;
}

}  // namespace

Status propagate_layouts(ir::Graph& g, Diagnostics& diag) {
  // 1. Graph inputs start in the layout the ops downstream want.
  std::vector<Perm> hints = backward_hints(g);
  std::vector<Perm> input_layouts;
  for (TensorId t : g.inputs) {
    const Perm& h = hints[static_cast<size_t>(t)];
    bool fits = !g.is_graph_output(t) && h.size() == g.tensor(t).rank();
    input_layouts.push_back(fits ? h : Perm{});
  }
  Plan plan = make_plan(g, input_layouts);
  // 2. An input whose readers all want one other layout takes it (siblings of
  //    a Conv output in an Add, say); re-plan once.
  bool changed = false;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    Perm w = wanted_by_consumers(g, plan, g.inputs[i]);
    if (!w.empty() && w != input_layouts[i]) {
      input_layouts[i] = w;
      changed = true;
    }
  }
  if (changed) plan = make_plan(g, input_layouts);

  // Output shapes come from the file: a layout of another rank means the
  // declared shape contradicts the op.
  {
    std::vector<int> producer = g.producers();
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const Perm& p = plan.layout[t];
      if (p.empty() || p.size() == g.tensors[t].rank() || g.tensors[t].is_const()) continue;
      int k = producer[t];
      const ir::Node* n = k >= 0 ? &g.nodes[static_cast<size_t>(k)] : nullptr;
      Error e = make_error(ErrorCode::kInvalidModel,
                           (n ? "op " + std::to_string(n->source_op) + " (" + n->op + "): " : std::string()) +
                               "output tensor '" + g.tensors[t].name + "' has rank " +
                               std::to_string(g.tensors[t].rank()) + ", but the op gives rank " +
                               std::to_string(p.size()));
      if (n) e.op_index = n->source_op;
      e.tensor = g.tensors[t].name;
      return e;
    }
  }
  // 3. Apply: set layouts, insert one Transpose per (tensor, layout) needed.
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (!g.tensors[t].is_const()) g.tensors[t].layout = plan.layout[t];
  std::map<std::pair<TensorId, Perm>, TensorId> transposed;
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    ir::Node n = std::move(g.nodes[k]);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      TensorId t = n.inputs[i];
      if (!is_data(g, t)) continue;
      Perm have = g.tensor(t).layout;
      Perm need = ir::normalized(plan.required[k][i]);
      if (have == need) continue;
      auto key = std::make_pair(t, need);
      auto it = transposed.find(key);
      if (it == transposed.end()) {
        ir::Tensor copy = g.tensor(t);
        copy.name += need.empty() ? "/tflite_order" : "/" + ir::to_string(need);
        copy.layout = need;
        TensorId nt = g.add_tensor(std::move(copy));
        ir::Node tr;
        tr.dialect = ir::Dialect::kOnnx;
        tr.op = "Transpose";
        tr.name = n.name + "/Transpose_in" + std::to_string(i);
        tr.source_op = n.source_op;
        tr.inputs = {t};
        tr.outputs = {nt};
        // ONNX value in layout `have` -> layout `need`: perm = inverse(have) then need.
        Perm p = ir::compose(ir::inverse(have.empty() ? ir::identity_perm(g.tensor(t).rank()) : have),
                             need.empty() ? ir::identity_perm(g.tensor(t).rank()) : need);
        if (p.empty()) p = ir::identity_perm(g.tensor(t).rank());
        tr.attrs.set("perm", std::vector<int64_t>(p.begin(), p.end()));
        const ir::Tensor& src = g.tensor(t);
        diag.inserted.push_back(
            {tr.name, "Transpose", src.name,
             std::string(need.empty() ? "op needs TFLite axis order" : "op needs layout " +
                                                                        ir::to_string(need)) +
                 (have.empty() ? "" : "; tensor has layout " + ir::to_string(have)) + " (" + n.op +
                 ", op " + std::to_string(n.source_op) + ", " +
                 ops::to_string(ops::lookup(n.builtin).layout) + ")"});
        nodes.push_back(std::move(tr));
        it = transposed.emplace(key, nt).first;
      }
      n.inputs[i] = it->second;
    }
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  return ok_status();
}

}  // namespace lite2onnx::passes
