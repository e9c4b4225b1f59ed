// Lowering: every TFLite-dialect node becomes the ONNX-dialect nodes its op
// converter (core/ops, through ops::LowerContext) writes, in its place.
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

struct Planned {
  uint64_t total = 0, largest = 0;
  std::string largest_by;
};

void add_lowering_bytes(const ir::Graph& g, Planned& p) {
  for (const ir::Node& n : g.nodes()) {
    for (const ir::Subgraph& sub : n.subgraphs) add_lowering_bytes(sub.graph(), p);
    if (n.dialect != ir::Dialect::kTflite) continue;
    const ops::LoweringBytesFn bytes_of = ops::lookup(n).lowering_bytes;
    if (!bytes_of) continue;
    const uint64_t bytes = bytes_of(g, n);
    p.total = bytes > UINT64_MAX - p.total ? UINT64_MAX : p.total + bytes;
    if (bytes > p.largest) p.largest = bytes, p.largest_by = n.name;
  }
}

}  // namespace

Status check_lowering_fits(const ir::Graph& g) {
  Planned p;
  add_lowering_bytes(g, p);
  if (g.created().fits(p.total)) return ok_status();
  return planned_bytes_error(g, "lowering", p.total, p.largest, p.largest_by);
}

Status lower(ir::Graph& g, PassContext& ctx) {
  // Each TFLite node is replaced by what its converter writes; the graph
  // keeps the TFLite nodes (and their index) until every one is lowered.
  std::vector<ir::Node> lowered;
  ops::LowerContext lowering(g, lowered, ctx.options, ctx.diag);
  const bool exact = ctx.options.quantization == QuantizationMode::kExact;
  // --quantization dequantize promises a float model: no integer ops.
  const bool qdq = ctx.options.quantization == QuantizationMode::kQdq;
  ir::GraphEdit edit(g);
  for (ir::NodeId id = g.first(); id != ir::kNoNode; id = g.next(id)) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(id);
    if (n.dialect == ir::Dialect::kOnnx) continue;
    // Control flow: the node's subgraphs are lowered first; its converter
    // wires the lowered graphs into the ONNX node.
    if (!n.subgraphs.empty()) {
      std::vector<ir::Subgraph>& subgraphs = g.info(id).subgraphs;
      for (ir::Subgraph& sub : subgraphs)
        if (auto st = lower_graph(sub.graph(), ctx); !st) return st;
      lowering.give_subgraphs(std::move(subgraphs));
      subgraphs.clear();
    }
    // --quantization exact: ops on quantized tensors take their integer form
    // (the preflight made sure they have one). The QDQ mode: a hybrid op whose
    // integer form is TFLite's kernel takes it where that form's check allows
    // (else its float form, an approximation).
    const ops::OpEntry& e = ops::lookup(n);
    const ops::ExactForm& integer = e.quantization.exact;
    const bool integer_form =
        integer.lower && ops::touches_quantized(g, n) &&
        (exact || (qdq && integer.hybrid_in_qdq_mode && ops::is_hybrid(g, n) &&
                   !(integer.check && integer.check(g, n))));
    const ops::LowerFn lower_fn = integer_form ? integer.lower : e.lower;
    if (auto st = lower_fn(lowering, n); !st) return st;
    lowering.finish();
    edit.replace(id, lowered);
    lowered.clear();  // keeps its capacity for the next node
    if (auto st = check_created_bytes(g); !st) return st;
  }
  g.apply(std::move(edit));
  return ok_status();
}

Status lower_graph(ir::Graph& g, PassContext& ctx) {
  g.compact();
  if (auto st = lower(g, ctx); !st) return st;
  g.compact();
  if (auto st = remove_identities(g, ctx); !st) return st;
  g.compact();
  return merge_reshapes(g, ctx);
}

}  // namespace lite2onnx::passes
