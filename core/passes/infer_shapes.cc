// infer_shapes: see passes.h.
#include <algorithm>

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

}  // namespace

Status infer_shapes(ir::Graph& g, PassContext& ctx) {
  constexpr size_t kNamedWarnings = 20;  // one warning each; then one for the rest
  size_t disagreements = 0;
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    auto shapes = ops::infer_shapes(g, n);
    if (!shapes || shapes->size() != n.outputs.size()) continue;
    // A rank past the reader's limit (FILL of a long constant dims vector) is
    // not taken: the file's shape stands, and the checks judge it.
    if (std::any_of(shapes->begin(), shapes->end(),
                    [&](const ir::Shape& s) { return s.size() > ctx.options.limits.max_rank; }))
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
        ctx.diag.warnings.push_back("tensor '" + t.name + "': the file declares shape " +
                                    ir::to_string(t.shape) + " but op " +
                                    std::to_string(n.source_op) + " (" + n.op + ") computes " +
                                    ir::to_string(inferred) + "; converted with " +
                                    ir::to_string(inferred) + ", as TFLite runs it");
      t.shape = inferred;
      t.has_rank = true;
    }
  }
  if (disagreements > kNamedWarnings)
    ctx.diag.warnings.push_back(std::to_string(disagreements - kNamedWarnings) +
                                " more tensors declare a shape their op does not compute");
  return ok_status();
}

}  // namespace lite2onnx::passes
