// --quantization exact: quantized tensors become the integer tensors they
// hold (see store_integers in qdq.h).
#include <string>
#include <utility>

#include "core/ops/exact.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes::qdq {

using ir::DataType;
using ir::TensorId;

Status store_integers(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint) {
  for (TensorId t = 0; static_cast<size_t>(t) < g.tensor_count(); ++t) {
    if (checkpoint.should_stop()) return checkpoint.status();
    ir::Tensor& x = g.tensor(t);
    if (!x.quantized_type) continue;
    // Exact lowerings read constants' bytes themselves; a quantized constant
    // still read by the graph is one an integer copy (CONCATENATION, GATHER,
    // ...) reads as it is.
    x.dtype = *x.quantized_type;
    x.quantized_type.reset();
    if (x.is_const() && g.use_count(t) > 0) {
      ++diag.quantization.integer_initializers;
      if (auto n = ir::element_count(x.shape))
        diag.quantization.integer_initializer_bytes +=
            static_cast<size_t>(*n) * ir::element_size(x.dtype);
    }
  }
  return ok_status();
}

}  // namespace lite2onnx::passes::qdq

namespace lite2onnx::passes {

// The Q/DQ modes ask too when the model has nodes that take an integer form
// there (lower.cc: hybrid ones, and quantized ones in auto), which depends on
// the kernel.
Status pick_tflite_kernels(ir::Graph& model, PassContext& ctx) {
  const QuantizationMode mode = ctx.options.quantization;
  if (mode == QuantizationMode::kDequantize) return ok_status();
  if (qdq_graph(mode)) {
    bool asks = false;
    ir::for_each_graph(std::as_const(model), [&](const ir::Graph& g) {
      for (const ir::Node& n : g.nodes())
        asks = asks || ops::is_hybrid(g, n) ||
               (mode == QuantizationMode::kAuto && ops::touches_quantized(g, n));
    });
    if (!asks) return ok_status();
  }
  if (auto why = ops::exact::xnnpack_delegate_failure(model)) {
    ops::exact::mark_builtin_kernels(model);
    if (ctx.options.quantization == QuantizationMode::kExact)
      ctx.diag.warnings.push_back("XNNPACK's delegate cannot prepare this model (" + *why +
                                  "), so TFLite runs every node with its builtin kernel, and "
                                  "--quantization exact computes those");
  }
  return ok_status();
}

Status dequantize_float_kernel_inputs(ir::Graph& g, PassContext& ctx) {
  if (ctx.options.quantization != QuantizationMode::kExact) return ok_status();
  for (ir::NodeId id = g.first(); id != ir::kNoNode; id = g.next(id)) {
    if (g.node(id).dialect != ir::Dialect::kTflite ||
        !ops::lookup(g.node(id)).quantization.dequantizes_inputs)
      continue;
    for (size_t slot = 0; slot < g.node(id).inputs.size(); ++slot) {
      const ir::TensorId q = g.node(id).inputs[slot];
      if (!g.valid(q) || !g.tensor(q).quantized_type) continue;
      ir::Tensor real;
      real.name = g.tensor(q).name + "/dequantized";
      real.shape = g.tensor(q).shape;
      real.has_rank = g.tensor(q).has_rank;
      const ir::TensorId f = g.add_tensor(std::move(real));
      ir::Node d;
      d.builtin = 6;  // DEQUANTIZE
      d.op = "DEQUANTIZE";
      d.name = g.node(id).name + "/dequantize_" + std::to_string(slot);
      d.source_op = g.node(id).source_op;
      d.source_subgraph = g.node(id).source_subgraph;
      d.inputs = {q};
      d.outputs = {f};
      d.inserted = ir::Insertion{g.tensor(q).name, "the op's kernel reads it dequantized"};
      g.add_node_before(id, std::move(d));
      g.set_input(id, slot, f);
    }
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
