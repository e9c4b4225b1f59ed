// Transpose cleanup (docs/architecture.md, "Layouts"): after lowering, push Transposes down
// through layout-agnostic ONNX ops and cancel inverse pairs, the idea of ONNX
// Runtime's transpose optimizer. Every rewrite leaves fewer Transpose nodes (or
// as many, moving fewer bytes, and never more of either), so the pass ends;
// graph inputs and outputs keep their names and ONNX shapes.
//
// The rewrites, tried on each Transpose T(p) (input x, output t) in node order:
//  - identity: a Transpose that does nothing goes;
//  - constant: a Transpose of a constant becomes an alias of the constant with
//    a composed layout (the emitter permutes the data);
//  - merge: Transposes reading t take x with the composed perm (and go when that
//    is the identity); T goes when nothing else reads t;
//  - sink: T moves past the elementwise ops it feeds (with other operands that
//    are constants or Transposes with the same perm) to where the values leave
//    them, merging there with the Transposes that read them.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/ir/names.h"
#include "core/ir/onnx_ops.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::Perm;
using ir::TensorId;

bool is_elementwise(const ir::Node& n) {
  return n.outputs.size() == 1 && ir::onnx_traits(n).elementwise;
}

// The perm of a well-formed ONNX Transpose node, or nullopt for any other node.
std::optional<Perm> transpose_perm(const ir::Graph& g, const ir::Node& n) {
  if (n.dialect != ir::Dialect::kOnnx || n.op != "Transpose" || !n.domain.empty() ||
      n.inputs.size() != 1 || n.outputs.size() != 1 || !g.valid(n.inputs[0]) ||
      !g.valid(n.outputs[0]) || !g.tensor(n.inputs[0]).has_rank)
    return std::nullopt;
  const size_t rank = g.tensor(n.inputs[0]).rank();
  if (!n.attrs.has("perm")) {  // ONNX default: reverse the axes
    Perm p = ir::identity_perm(rank);
    std::reverse(p.begin(), p.end());
    return p;
  }
  Perm p;
  for (int64_t a : n.attrs.get_ints("perm")) {
    if (a < 0 || a >= static_cast<int64_t>(rank)) return std::nullopt;
    p.push_back(static_cast<int>(a));
  }
  if (!ir::is_permutation(p, rank)) return std::nullopt;
  return p;
}

// Layout of a tensor's data after an ONNX Transpose with perm q.
Perm transposed_layout(const ir::Tensor& t, const Perm& q) {
  return ir::normalized(ir::compose(ir::full_perm(t.layout, t.rank()), q));
}

// Same naming as layout propagation uses for a tensor seen in another layout.
std::string layout_name(const std::string& base, const Perm& layout) {
  return base + "/" + (layout.empty() ? std::string("tflite_order") : ir::to_string(layout));
}

// Broadcasts the same way in any axis order: a scalar or all-ones tensor of
// rank <= `rank`.
bool layout_free(const ir::Tensor& t, size_t rank) {
  if (!t.has_rank || t.rank() > rank) return false;
  return std::all_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d == 1; });
}

// Bytes a Transpose of the tensor moves; a dynamic dimension counts as 1 (it
// is usually the batch, shared by every tensor compared). Capped at 2^40, so
// sums over a region cannot overflow.
int64_t transposed_bytes(const ir::Tensor& t) {
  constexpr int64_t kCap = int64_t{1} << 40;
  int64_t n = static_cast<int64_t>(std::max<size_t>(ir::element_size(t.dtype), 1));
  for (int64_t d : t.shape) {
    if (d > 1 && n > kCap / d) return kCap;
    n *= std::max<int64_t>(d, 1);
  }
  return n;
}

// Elementwise nodes a Transpose T(perm) is pushed past. Values computed by them
// ("moved" tensors) are, after the rewrite, computed in the untransposed layout.
struct Region {
  Perm perm;
  size_t rank = 0;
  std::vector<ir::NodeId> nodes;  // in graph order
  std::set<ir::NodeId> members;
  std::set<TensorId> moved;
  std::set<ir::NodeId> entries;  // Transposes with `perm` whose outputs region nodes read
};

// Position of a node in the final order: an original node i is (i, 0); a node
// inserted after node k is (k's first, n) for the n-th insertion of the pass.
using OrderKey = std::pair<size_t, size_t>;

// The rewrites edit the graph through its editing API (which keeps the
// producer/readers index in step), so each costs only its neighbourhood. New
// nodes are appended with an order key; the nodes are put in order once, at
// the end. Node ids are the positions the graph had when the pass started
// (the pipeline compacts it) and grow with every node added.
class Cleanup {
 public:
  Cleanup(ir::Graph& g, Checkpoint& checkpoint) : g_(g), checkpoint_(checkpoint) {
    order_.assign(g_.node_id_bound(), {0, 0});
    size_t position = 0;
    for (const ir::Node& n : g_.nodes()) names_.insert(n.name);
    for (ir::NodeId k : g_.order()) order_[static_cast<size_t>(k)] = {position++, 0};
  }

  Status run() {
    // Sweep until nothing changes; a rewritten node is looked at again. Most
    // graphs settle in one or two sweeps; the bound (and the budget for
    // growing regions) keeps a hostile graph from making the pass quadratic.
    constexpr int kMaxSweeps = 16;
    region_budget_ = 64 * g_.node_count() + 1024;
    bool changed = true;
    for (int sweep = 0; changed && sweep < kMaxSweeps; ++sweep) {
      changed = false;
      for (ir::NodeId i = 0; static_cast<size_t>(i) < g_.node_id_bound();) {
        if (checkpoint_.should_stop()) return checkpoint_.status();
        if (rewrite_at(i))
          changed = true;
        else
          ++i;
      }
    }
    fold_output_identities();
    put_in_order();
    return ok_status();
  }

 private:
  bool rewrite_at(ir::NodeId i) {
    if (!g_.alive(i)) return false;
    auto p = transpose_perm(g_, g_.node(i));
    return p && (drop_identity(i, *p) || fold_into_constant(i, *p) || merge_with_readers(i, *p) ||
                 sink(i, *p));
  }

  // ---- the rewrites ----------------------------------------------------------

  bool drop_identity(ir::NodeId i, const Perm& p) {
    if (!ir::is_identity(p)) return false;
    cancel(i, g_.node(i).inputs[0], "it does nothing");
    return true;
  }

  bool fold_into_constant(ir::NodeId i, const Perm& p) {
    const TensorId c = g_.node(i).inputs[0], t = g_.node(i).outputs[0];
    const ir::Tensor& x = g_.tensor(c);
    if (!x.is_const() || g_.is_graph_output(t)) return false;
    TensorId alias = constant_in_layout(c, transposed_layout(x, p), x.shape);
    remove_node(i);
    reroute(t, alias);
    return true;
  }

  // T(p) -> Tc(q) becomes Tc(p then q) reading x. Cancelled pairs always go;
  // the others are merged only when that lets T go.
  bool merge_with_readers(ir::NodeId i, const Perm& p) {
    const TensorId x = g_.node(i).inputs[0], t = g_.node(i).outputs[0];
    const std::string name = g_.node(i).name;
    const std::vector<ir::NodeId> readers = g_.readers(t);
    bool only_transposes = !g_.is_graph_output(t) && !readers.empty();
    bool any_cancel = false;
    for (ir::NodeId k : readers) {
      auto q = transpose_perm(g_, g_.node(k));
      only_transposes &= q.has_value();
      any_cancel |= q && ir::is_identity(ir::compose(p, *q));
    }
    if (!only_transposes && !any_cancel) return false;

    for (ir::NodeId k : readers) {
      auto q = transpose_perm(g_, g_.node(k));
      if (!q) continue;
      Perm pq = ir::compose(p, *q);
      if (ir::is_identity(pq))
        cancel(k, x, "it undid " + name);
      else if (only_transposes)
        merge(k, x, pq, name);
    }
    if (only_transposes) remove_node(i);
    return true;
  }

  bool sink(ir::NodeId i, const Perm& p) {
    Region r = grow_region(i, p);
    if (r.nodes.empty() || !sink_cost(r).improves()) return false;
    move_past(r, i);
    return true;
  }

  // ---- sinking a Transpose past elementwise nodes -----------------------------

  Region grow_region(ir::NodeId seed, const Perm& p) {
    Region r;
    r.perm = p;
    r.rank = p.size();
    r.entries.insert(seed);
    // Visiting candidates in graph order decides every producer before its
    // readers.
    std::map<OrderKey, ir::NodeId> todo;
    std::set<ir::NodeId> seen;
    auto enqueue_readers = [&](TensorId t) {
      for (ir::NodeId k : g_.readers(t))
        if (seen.insert(k).second) todo.emplace(order_[static_cast<size_t>(k)], k);
    };
    enqueue_readers(g_.node(seed).outputs[0]);
    while (!todo.empty()) {
      if (region_budget_ == 0) return Region{};
      --region_budget_;
      ir::NodeId k = todo.begin()->second;
      todo.erase(todo.begin());
      if (!joins_region(k, r)) continue;
      r.nodes.push_back(k);
      r.members.insert(k);
      r.moved.insert(g_.node(k).outputs[0]);
      enqueue_readers(g_.node(k).outputs[0]);
    }
    return r;
  }

  // The producer of `t` if it is a Transpose with the region's perm whose input
  // is not itself computed in the region.
  std::optional<ir::NodeId> entry_of(TensorId t, const Region& r) const {
    const ir::NodeId k = g_.producer(t);
    if (k == ir::kNoNode) return std::nullopt;
    const ir::Node& n = g_.node(k);
    auto q = transpose_perm(g_, n);
    if (!q || *q != r.perm || r.moved.count(n.inputs[0])) return std::nullopt;
    return k;
  }

  bool joins_region(ir::NodeId k, Region& r) const {
    const ir::Node& n = g_.node(k);
    if (!is_elementwise(n) || !g_.valid(n.outputs[0])) return false;
    const ir::Tensor& y = g_.tensor(n.outputs[0]);
    if (!y.has_rank || y.rank() != r.rank) return false;
    std::vector<ir::NodeId> entries;
    for (TensorId t : n.inputs) {
      if (!g_.valid(t)) continue;  // omitted optional input
      const ir::Tensor& x = g_.tensor(t);
      auto entry = entry_of(t, r);
      if (r.moved.count(t) || entry) {
        if (entry) entries.push_back(*entry);
        continue;
      }
      if (layout_free(x, r.rank)) continue;
      if (x.is_const() && x.has_rank && x.rank() <= r.rank) continue;
      return false;
    }
    r.entries.insert(entries.begin(), entries.end());
    return true;
  }

  bool removable_entry(ir::NodeId e, const Region& r) const {
    TensorId out = g_.node(e).outputs[0];
    if (g_.is_graph_output(out)) return false;
    for (ir::NodeId k : g_.readers(out))
      if (!r.members.count(k)) return false;
    return true;
  }

  // Whether a moved tensor still needs its old layout after the rewrite (a
  // graph output, or read by something other than a region node or a Transpose).
  bool needs_old_layout(TensorId v, const Region& r) const {
    if (g_.is_graph_output(v)) return true;
    for (ir::NodeId k : g_.readers(v))
      if (!r.members.count(k) && !transpose_perm(g_, g_.node(k))) return true;
    return false;
  }

  // Change in the number of Transposes, and in the bytes they move, that the
  // rewrite would make. Merged Transposes move as many bytes as before.
  struct Cost {
    int transposes = 0;
    int64_t bytes = 0;
    bool improves() const { return transposes <= 0 && bytes <= 0 && (transposes < 0 || bytes < 0); }
  };
  Cost sink_cost(const Region& r) const {
    Cost c;
    for (ir::NodeId e : r.entries)
      if (removable_entry(e, r)) {
        --c.transposes;
        c.bytes -= transposed_bytes(g_.tensor(g_.node(e).inputs[0]));
      }
    for (TensorId v : r.moved) {
      const int64_t bytes = transposed_bytes(g_.tensor(v));
      if (needs_old_layout(v, r)) {
        ++c.transposes;
        c.bytes += bytes;
      }
      for (ir::NodeId k : g_.readers(v)) {
        if (r.members.count(k)) continue;
        auto q = transpose_perm(g_, g_.node(k));
        if (q && ir::is_identity(ir::compose(r.perm, *q))) {
          --c.transposes;
          c.bytes -= bytes;
        }
      }
    }
    return c;
  }

  void move_past(const Region& r, ir::NodeId seed) {
    const Perm back = ir::inverse(r.perm);  // moved values in the untransposed layout
    const std::string seed_name = g_.node(seed).name;
    // Decided before any node changes: which entries go, which moved values
    // keep a Transpose back to their old layout (after the node making them).
    std::vector<ir::NodeId> gone_entries;
    for (ir::NodeId k : r.entries)
      if (removable_entry(k, r)) gone_entries.push_back(k);
    std::vector<std::pair<TensorId, ir::NodeId>> keep_old;
    for (ir::NodeId k : r.nodes)
      if (needs_old_layout(g_.node(k).outputs[0], r))
        keep_old.push_back({g_.node(k).outputs[0], k});
    const int removed = static_cast<int>(keep_old.size()) - sink_cost(r).transposes;

    // New tensors for the moved values; the old ones stay for readers outside.
    std::map<TensorId, TensorId> relaid;
    for (TensorId v : r.moved) {
      ir::Tensor copy = g_.tensor(v);
      copy.layout = transposed_layout(copy, back);
      copy.name = layout_name(copy.name, copy.layout);
      relaid[v] = add_tensor(std::move(copy));
    }
    for (ir::NodeId k : r.nodes) rewire_moved_node(k, r, relaid, back);
    // Transposes reading moved values (now the only readers of the old
    // tensors, with the readers that need the old layout) take the new ones.
    for (TensorId v : r.moved) {
      const std::vector<ir::NodeId> readers = g_.readers(v);
      for (ir::NodeId k : readers) {
        auto q = transpose_perm(g_, g_.node(k));
        if (!q) continue;
        Perm pq = ir::compose(r.perm, *q);
        if (ir::is_identity(pq))
          cancel(k, relaid.at(v), "it undid the moved " + seed_name);
        else
          merge(k, relaid.at(v), pq, seed_name);
      }
    }
    const std::string reason = "Transpose " + ir::to_string(r.perm) + " of " + seed_name +
                               " moved through " + node_list(r.nodes) + ", removing " +
                               std::to_string(removed) + " Transposes";
    for (auto [v, k] : keep_old)
      add_node_after(k, new_transpose(relaid.at(v), v, r.perm, g_.node(k), reason));
    for (ir::NodeId k : gone_entries) remove_node(k);
  }

  // A region node now reads its inputs in the untransposed layout: moved values
  // in their new tensors, entry Transposes' inputs, constants re-laid out.
  void rewire_moved_node(ir::NodeId k, const Region& r, const std::map<TensorId, TensorId>& relaid,
                         const Perm& back) {
    for (size_t slot = 0; slot < g_.node(k).inputs.size(); ++slot) {
      TensorId t = g_.node(k).inputs[slot];
      if (!g_.valid(t)) continue;
      const ir::NodeId p = g_.producer(t);
      if (auto it = relaid.find(t); it != relaid.end()) {
        set_input(k, slot, it->second);
      } else if (p != ir::kNoNode && r.entries.count(p)) {
        set_input(k, slot, g_.node(p).inputs[0]);
      } else if (!layout_free(g_.tensor(t), r.rank)) {
        set_input(k, slot, constant_relaid(t, back, r.rank));
      }
    }
    set_output(k, g_.node(k).outputs[0], relaid.at(g_.node(k).outputs[0]));
  }

  // ---- constants ---------------------------------------------------------------

  // A constant seen with `layout` (and `shape`: the constant's, with leading
  // 1s for broadcasting); the same alias serves every reader.
  TensorId constant_in_layout(TensorId c, const Perm& layout, const ir::Shape& shape) {
    const ir::Tensor& x = g_.tensor(c);
    if (layout == x.layout && shape == x.shape) return c;
    auto key = std::make_tuple(c, layout, shape);
    if (auto it = aliases_.find(key); it != aliases_.end()) return it->second;
    // Broadcast aliases only gain leading 1s: a per-axis quantization
    // always follows.
    std::optional<ir::Tensor> view = ir::constant_view(x, shape);
    if (!view) return c;
    ir::Tensor alias = std::move(*view);
    alias.layout = layout;
    alias.name = layout_name(x.name, layout);
    TensorId id = add_tensor(std::move(alias));
    aliases_.emplace(key, id);
    return id;
  }

  // A constant operand of a moved node, transposed by q after being brought to
  // the region's rank (a broadcast operand gains leading 1s, which leaves its
  // data as it is).
  TensorId constant_relaid(TensorId c, const Perm& q, size_t rank) {
    const ir::Tensor& x = g_.tensor(c);
    const size_t extra = rank - x.rank();
    ir::Shape shape(extra, 1);
    shape.insert(shape.end(), x.shape.begin(), x.shape.end());
    Perm layout = ir::identity_perm(extra);
    for (int a : ir::full_perm(x.layout, x.rank())) layout.push_back(a + static_cast<int>(extra));
    return constant_in_layout(c, ir::normalized(ir::compose(layout, q)), shape);
  }

  // ---- Transpose nodes -----------------------------------------------------------

  void merge(ir::NodeId k, TensorId input, const Perm& perm, const std::string& with) {
    set_input(k, 0, input);
    ir::NodeInfo& n = g_.info(k);
    n.attrs.set("perm", std::vector<int64_t>(perm.begin(), perm.end()));
    if (n.inserted) n.inserted->reason += "; merged with " + with;
  }

  // Transpose k goes; its readers read `replacement` (same ONNX shape). A graph
  // output keeps its name through an Identity, folded away at the end if the
  // replacement's producer can write the output itself.
  void cancel(ir::NodeId k, TensorId replacement, const std::string& why) {
    const TensorId out = g_.node(k).outputs[0];
    if (!g_.is_graph_output(out)) {
      remove_node(k);
      reroute(out, replacement);
      return;
    }
    set_input(k, 0, replacement);
    ir::NodeInfo& n = g_.info(k);
    n.op = "Identity";
    n.attrs = ir::Attributes{};
    output_identities_.insert(k);
    if (n.inserted) n.inserted->reason += "; became an Identity (keeps the output name): " + why;
  }

  ir::Node new_transpose(TensorId in, TensorId out, const Perm& perm, const ir::Node& after,
                         const std::string& reason) {
    ir::Node n;
    n.dialect = ir::Dialect::kOnnx;
    n.op = "Transpose";
    n.name = names_.take(after.name + "/Transpose_out");
    n.source_op = after.source_op;
    n.inputs = {in};
    n.outputs = {out};
    n.attrs.set("perm", std::vector<int64_t>(perm.begin(), perm.end()));
    n.inserted = ir::Insertion{g_.tensor(out).name, reason};
    return n;
  }

  std::string node_list(const std::vector<ir::NodeId>& nodes) const {
    std::string s;
    for (size_t i = 0; i < nodes.size() && i < 3; ++i)
      s += (i ? ", " : "") + g_.node(nodes[i]).name;
    if (nodes.size() > 3) s += " and " + std::to_string(nodes.size() - 3) + " more";
    return s;
  }

  // An Identity this pass left for a graph output goes when the producer of
  // its input can write the output directly (nothing else reads that input).
  void fold_output_identities() {
    for (ir::NodeId k : output_identities_) {
      const ir::Node& n = g_.node(k);
      if (!g_.alive(k) || n.op != "Identity" || !g_.is_graph_output(n.outputs[0])) continue;
      const TensorId in = n.inputs[0], out = n.outputs[0];
      const ir::NodeId p = g_.producer(in);
      if (p == ir::kNoNode || g_.is_graph_output(in) || g_.readers(in).size() != 1) continue;
      remove_node(k);
      set_output(p, in, out);
    }
  }

  // ---- the node list and its index ---------------------------------------------
  //
  // Every rewrite keeps each node after the producers of its inputs in key
  // order: it rewires nodes to tensors made earlier, and inserts a node right
  // after the one making its input, ahead of that tensor's readers.

  void put_in_order() {
    std::vector<ir::NodeId> alive = g_.order();
    std::stable_sort(alive.begin(), alive.end(), [&](ir::NodeId a, ir::NodeId b) {
      return order_[static_cast<size_t>(a)] < order_[static_cast<size_t>(b)];
    });
    g_.reorder(alive);
  }

  TensorId add_tensor(ir::Tensor t) { return g_.add_tensor(std::move(t)); }

  void add_node_after(ir::NodeId k, ir::Node n) {
    order_.push_back({order_[static_cast<size_t>(k)].first, ++insertions_});
    g_.add_node(std::move(n));
  }

  void remove_node(ir::NodeId k) { g_.remove_node(k); }

  void set_input(ir::NodeId k, size_t slot, TensorId t) { g_.set_input(k, slot, t); }

  void set_output(ir::NodeId k, TensorId old, TensorId t) {
    const auto& outputs = g_.node(k).outputs;
    g_.set_output(
        k, static_cast<size_t>(std::find(outputs.begin(), outputs.end(), old) - outputs.begin()),
        t);
  }

  // Readers of `from` read `to` instead.
  void reroute(TensorId from, TensorId to) { g_.replace_uses(from, to); }

  ir::Graph& g_;
  Checkpoint& checkpoint_;
  std::vector<OrderKey> order_;  // per node id
  size_t insertions_ = 0;
  size_t region_budget_ = 0;  // candidate visits left for growing regions
  ir::UniqueNames names_;
  std::set<ir::NodeId> output_identities_;
  std::map<std::tuple<TensorId, Perm, ir::Shape>, TensorId> aliases_;
};

}  // namespace

Status cleanup_transposes(ir::Graph& g, PassContext& ctx) {
  return Cleanup(g, ctx.checkpoint).run();
}

}  // namespace lite2onnx::passes
