// Graph passes. Each works on ir::Graph through its small public interface
// (tensors, nodes, inputs, outputs) and is unit-tested on hand-built graphs.
#pragma once

#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/options.h"
#include "core/status.h"

namespace lite2onnx::passes {

// Runs first, right after reading: every supported op has the inputs it
// always reads (an absent optional input is kNoTensor) and an output, and
// every tensor a supported op reads is a graph input, a constant, or written
// by an op. Every later pass may rely on that; patterns that need an absent
// input simply do not match.
Status validate(const ir::Graph& g);

// kResourceLimit when the constants the conversion created so far
// (g.created) passed Limits::max_created_bytes; passes call it after each op
// they create constants for.
Status check_created_bytes(const ir::Graph& g);

// Orders the nodes topologically; a cycle is an invalid model.
Status sort_topologically(ir::Graph& g);

// Every tensor a supported op reads is a graph input, a constant, or written
// by an op (unsupported ops, custom ones among them, may read scratch tensors).
Status check_reads(const ir::Graph& g);

// Folds DEQUANTIZE of float16 constants into float32 constants (the node goes;
// the emitter widens the data while writing it).
Status fold_constant_dequantize(ir::Graph& g);

// A layout a tensor must have, from the user's options.
struct ForcedLayout {
  ir::TensorId tensor = ir::kNoTensor;
  ir::Perm perm;
  std::string source;  // e.g. "explicit layout x=NHWC:NCHW", for messages
  // Explicit layouts contradicting an Implicit op are errors; interface
  // layouts (--io-layout, --keep-io-layout) get a Transpose instead.
  bool strict = false;
};

// Resolves --explicit-layout / --io-layout / --keep-io-layout against the graph.
Result<std::vector<ForcedLayout>> resolve_layouts(const ir::Graph& g, const LayoutOptions& options);

// Layout propagation (DESIGN.md "Layout"): gives every non-constant tensor a
// layout, seeded by Implicit ops and forced layouts and carried through
// Transparent and Attribute ops; inserts one Transpose where a tensor meets an
// op that needs another layout (an Unsqueeze for a lower-rank operand of a
// broadcast). Graph inputs take the layout their consumers want unless forced.
Status propagate_layouts(ir::Graph& g, Diagnostics& diag,
                         const std::vector<ForcedLayout>& forced = {});

// --keep-float16-weights (ONNX dialect, last): float16 constants the emitter
// would widen stay float16 initializers, each read through one Cast to float32.
void keep_float16_constants(ir::Graph& g, Diagnostics& diag);

// ONNX-level cleanup after lowering: Reshape(Reshape(x)) becomes one Reshape.
void merge_reshapes(ir::Graph& g, Diagnostics& diag);

// ONNX-level cleanup after lowering: drops Identity nodes that are not needed
// for a graph output name.
void remove_identities(ir::Graph& g);

// ONNX-level cleanup after lowering (run after remove_identities): pushes
// Transposes through elementwise ops, merges consecutive ones and folds those
// of constants, wherever that leaves fewer Transposes (or as many moving fewer
// bytes); keeps diag.inserted in step with the nodes that remain.
void cleanup_transposes(ir::Graph& g, Diagnostics& diag);

// Constant folding of shape arithmetic (TFLite dialect, before layout
// propagation): nodes whose inputs are all constants (SHAPE: whose input has a
// static shape) become constants — SHAPE, STRIDED_SLICE, PACK, UNPACK,
// CONCATENATION, RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, GATHER, FILL, CAST
// (integers), ADD/SUB/MUL/FLOOR_DIV/FLOOR_MOD/MAXIMUM/MINIMUM (int32, int64,
// float32). Nodes writing graph outputs stay. Shape-arithmetic nodes left
// without readers are removed.
Status fold_constants(ir::Graph& g);

// SPACE_TO_BATCH_ND -> CONV_2D / DEPTHWISE_CONV_2D (VALID) -> BATCH_TO_SPACE_ND
// with constant blocks becomes one convolution with dilation = block, when the
// paddings minus the crops are constants equal to SAME or VALID padding (they
// may be computed at run time from the input shape, as TensorFlow writes them).
// TFLite dialect; run after fold_constants.
Status fuse_dilated_convolutions(ir::Graph& g, Diagnostics& diag);

// Quantization, QDQ form (DESIGN.md "Quantization"; TFLite dialect, after
// fold_constants): checks every quantization parameter (an invalid one is an
// error naming the tensor), gives int32 biases of integer CONV_2D /
// DEPTHWISE_CONV_2D / TRANSPOSE_CONV / FULLY_CONNECTED the scale TFLite's
// kernel uses (input scale x filter scale; a warning when the bias says
// otherwise), and turns each int8/uint8 quantized tensor into a float32 tensor
// with quantized_type set. DEQUANTIZE of an integer constant and QUANTIZE of a
// float constant fold into a quantized constant. int16 tensors are left for
// the preflight to report.
// In kDequantize mode int16 tensors (and int64 biases) are planned too.
Status plan_qdq(ir::Graph& g, Diagnostics& diag, QuantizationMode mode = QuantizationMode::kQdq);

// ONNX dialect, after every other pass: one DequantizeLinear per integer
// constant (int8/uint8/int32 initializer, axis following its layout) and per
// quantized graph input, one QuantizeLinear -> DequantizeLinear pair after
// each quantized activation (a graph output keeps its integer type and name),
// then DequantizeLinear -> QuantizeLinear pairs with equal parameters cancel.
// kDequantize mode instead folds every integer constant to float32 and makes
// no Q/DQ node: a pure float model.
// Unless `keep_int8_activations`, int8 activations (and the non-weight int8
// constants beside them) are written as uint8 with zero point + 128 inside the
// graph, the form ONNX Runtime's x86 integer kernels take; graph inputs and
// outputs stay int8.
Status materialize_qdq(ir::Graph& g, Diagnostics& diag,
                       QuantizationMode mode = QuantizationMode::kQdq,
                       bool keep_int8_activations = false);

// Whether two tensors hold the same quantized values for equal integers
// (same integer type and parameters), or are both unquantized.
bool same_quantization(const ir::Tensor& a, const ir::Tensor& b);

// RFFT2D whose output reaches only COMPLEX_ABS (through reshapes) computes
// the magnitude directly (TFLite dialect, before the preflight): ONNX Runtime
// has no complex tensors.
void fuse_spectral_magnitude(ir::Graph& g);

}  // namespace lite2onnx::passes
