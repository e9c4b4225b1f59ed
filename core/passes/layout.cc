// Layout propagation with four op classes: see docs/architecture.md, "Layouts".
//
// A plan is computed first (layout_plan.h: a pure function of the graph and
// the graph inputs' layouts): the layout each tensor gets, and the layout each
// op needs of each input. Applying it (here) inserts the nodes that reconcile
// the two: one Transpose per (tensor, layout), an Unsqueeze for a lower-rank
// broadcast operand, and a Transpose after a producer whose output has a
// forced layout. Here too: the options' layouts resolved, and the graph
// inputs' layouts chosen.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "core/ir/builtins.h"
#include "core/layout_spec.h"
#include "core/passes/layout_plan.h"

namespace lite2onnx::passes {
namespace {

using ir::Perm;
using ir::TensorId;
using layout::is_data;
using layout::Plan;
using layout::Planner;
using layout::Preferences;

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
      TensorId first_input = n.inputs.empty() ? ir::kNoTensor : n.inputs[0];
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const TensorId t = n.inputs[i];
        if (!is_data(g_, t)) continue;
        Perm need = ir::normalized(plan_.required[k][i]);
        const TensorId in = need.size() > g_.tensor(t).rank() ? broadcast(t, need, id, i)
                                                              : in_layout(t, need, id, i);
        if (in == t) continue;
        edit_.set_input(id, i, in);
        if (i == 0) first_input = in;
      }
      if (plan_.flatten_for_fc[k])  // a Reshape flattening a permuted tensor for an FC
        g_.tensor(n.outputs[0]).flattened = g_.tensor(first_input).flattened_axes();
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
