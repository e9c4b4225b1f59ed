// Graph passes. Each works on ir::Graph through its small public interface
// (tensors, nodes, inputs, outputs) and is unit-tested on hand-built graphs.
#pragma once

#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/status.h"

namespace lite2onnx::passes {

// Orders the nodes topologically; a cycle is an invalid model.
Status sort_topologically(ir::Graph& g);

// Every tensor an op reads is a graph input, a constant, or written by an op.
// (Run after the unsupported-op check: custom ops may read scratch tensors.)
Status check_reads(const ir::Graph& g);

// Folds DEQUANTIZE of float16 constants into float32 constants (the node goes;
// the emitter widens the data while writing it).
Status fold_constant_dequantize(ir::Graph& g);

// Layout propagation (DESIGN.md "Layout"): gives every non-constant tensor a
// layout, seeded by Implicit ops and carried through Transparent and Attribute
// ops; inserts one Transpose where a tensor meets an op that needs another
// layout. Graph inputs take the layout their consumers want.
Status propagate_layouts(ir::Graph& g, Diagnostics& diag);

// ONNX-level cleanup after lowering: drops Identity nodes that are not needed
// for a graph output name.
void remove_identities(ir::Graph& g);

}  // namespace lite2onnx::passes
