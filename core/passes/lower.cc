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
  std::vector<ir::Node> out;
  out.reserve(g.node_count() * 2);
  ops::LowerContext lowering(g, out, ctx.options, ctx.diag);
  std::vector<ir::Node> nodes = g.take_nodes();
  for (auto& n : nodes) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    if (n.dialect == ir::Dialect::kOnnx) {
      out.push_back(std::move(n));
      continue;
    }
    // Control flow: the node's subgraphs are lowered first; its converter
    // wires the lowered graphs into the ONNX node.
    if (!n.subgraphs.empty()) {
      for (ir::Subgraph& sub : n.subgraphs)
        if (auto st = lower_graph(sub.graph(), ctx); !st) return st;
      lowering.give_subgraphs(std::move(n.subgraphs));
      n.subgraphs.clear();
    }
    if (auto st = ops::lookup(n).lower(lowering, n); !st) return st;
    lowering.finish();
    if (auto st = check_created_bytes(g); !st) return st;
  }
  g.set_nodes(std::move(out));
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
