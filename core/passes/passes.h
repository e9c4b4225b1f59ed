// Graph passes. Each edits ir::Graph through its editing API (see
// core/ir/graph.h), polls the context's checkpoint in its loops (so a
// cancelled conversion stops within about a millisecond), and is unit-tested
// on hand-built graphs. The pipeline (core/pipeline.h) runs them in order and
// compacts the graph between them, so a pass starts with dense node ids and
// every tensor's readers in node order.
//
// Cost: n nodes, t tensors, e edges (input slots); every pass is O(n + t + e)
// unless its comment says otherwise.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/options.h"
#include "core/status.h"

namespace lite2onnx::passes {

// What every pass gets besides the graph.
struct PassContext {
  Diagnostics& diag;
  const ConvertOptions& options;
  Checkpoint& checkpoint;
};

// Runs first, right after reading: every supported op has the inputs it
// always reads (an absent optional input is kNoTensor) and an output, and
// every tensor a supported op reads is a graph input, a constant, a variable
// tensor (state: expose_state) or written by an op (unsupported ops, custom
// ones among them, may read scratch tensors: the preflight reports them).
// Every later pass may rely on that; patterns that need an absent input
// simply do not match.
Status validate(const ir::Graph& g, PassContext& ctx);

// Model state (ir::StatePair, g.state; README, "Model state";
// docs/architecture.md, "Model state"), on the main graph, right after
// validate. Two sources, one form: each becomes a graph input named after the
// state (unique among the graph's inputs and outputs) whose StatePair::initial
// the emitter writes as its initializer, and a graph output '<input>/next'.
// 1. Resource variables: every VAR_HANDLE names a resource ((container,
//    shared_name), shared across subgraphs as TFLite's interpreter shares
//    them); CALL_ONCE's init subgraph, folded, gives their initial values;
//    walking the ops in order, a READ_VARIABLE becomes an Identity of the value
//    the resource holds then (the state input, or what the last
//    ASSIGN_VARIABLE wrote) and ASSIGN_VARIABLE changes that value. The
//    resource ops go; the next value is an Identity of the last one.
//    Unsupported: a resource read before anything gives it a value, an
//    initial value computed at run time, values of differing type,
//    quantization or shape; resource ops inside control-flow subgraphs stay
//    (the preflight names them).
// 2. Variable tensors: each one that a supported op reads in one of its state
//    slots (OpEntry::state.inputs) and nothing else reads; its initial value is
//    TFLite's (zeros, an int8 tensor's zero point, as ResetVariableTensor sets
//    it; the buffer if the file has one), and the op gets one more output per
//    slot for the value after the invocation (node attribute "state_outputs":
//    their positions, -1 for a slot left alone), which its converter writes. A
//    state slot that is absent or holds no variable tensor is an invalid model,
//    as in TFLite. Variable tensors it leaves alone (variable_tensor_problem)
//    stay variable: the preflight names them.
// Initial values made here count against max_created_bytes.
Status expose_state(ir::Graph& g, PassContext& ctx);
// Blockwise-quantized constants (QuantParams::block_size, as the reader
// reads TFLite's BlockwiseQuantization: LLM weights, packed INT4 with
// float16 scales per block) become float32 constants, (q - zero point) x
// scale per block; a warning in the default mode, where integer weights are
// otherwise kept (ONNX dequantizes by blocks only from opset 21). Runs first,
// before anything reads quantization; the floats count against
// max_created_bytes, admitted before they are made.
Status fold_blockwise(ir::Graph& g, PassContext& ctx);
// Select-TF ops with a builtin twin (ops/select_tf.h) become that builtin:
// its code, name and attributes (the reader read the NodeDef into them),
// the axis operand the builtin has as an attribute taken from its constant
// (ConcatV2, GatherV2). Runs right after reading, so every later pass sees
// the builtin; the node keeps the file's op in attribute "select_tf_op". An
// options op name that is not the custom code's, or an input count that is
// not the NodeDef's N, is kInvalidModel; an axis computed at run time leaves
// the node as it is with attribute "select_tf_problem" (the preflight names
// it).
Status rewrite_select_tf_ops(ir::Graph& g);
// Keras' TensorList loops (select-TF TensorList ops, the lists carried
// through WHILE loops) as dense tensors [length, element shape], rewritten
// into builtins (tensor_lists.cc); a list it cannot make dense leaves its ops
// with the reason (attribute "tensor_list_problem"), which the preflight
// names. Constants it makes count against max_created_bytes.
Status lower_tensor_lists(ir::Graph& g, PassContext& ctx);

// Why a variable tensor cannot become state, or "".
std::string variable_tensor_problem(const ir::Graph& g, ir::TensorId t);

// kResourceLimit when the constants the conversion created so far
// (g.created()) passed Limits::max_created_bytes; passes call it after each op
// they create constants for. O(1).
Status check_created_bytes(const ir::Graph& g);
// The kResourceLimit error of a pass that added up, before any work, what it
// would create (`total` bytes, the largest part `largest` bytes for
// `largest_by`) and found it beyond what the budget has left.
Error planned_bytes_error(const ir::Graph& g, std::string_view what, uint64_t total,
                          uint64_t largest, std::string_view largest_by);

// Orders the nodes topologically (Kahn's algorithm, lowest position first, so
// a valid order is kept); a cycle is an invalid model. O(n log n + e).
Status sort_topologically(ir::Graph& g, PassContext& ctx);

// Shapes as TFLite computes them at Prepare (ops/shape_inference.h), in
// topological order: an intermediate tensor (written by a node, not a graph
// input) takes the inferred shape, with one warning per tensor whose declared
// shape differs (a -1 there is not a difference); graph inputs and constants
// keep the file's. Where inference cannot tell, or infers a rank past
// Limits::max_rank, the file's shape stands.
Status infer_shapes(ir::Graph& g, PassContext& ctx);

// Folds DEQUANTIZE of float16 constants into float32 constants (the node goes;
// the emitter widens the data while writing it).
Status fold_constant_dequantize(ir::Graph& g, PassContext& ctx);

// Constant folding of shape arithmetic (TFLite dialect, before layout
// propagation): nodes whose inputs are all constants (SHAPE: whose input has a
// static shape) become constants — SHAPE, STRIDED_SLICE, PACK, UNPACK,
// CONCATENATION, RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, GATHER, FILL, CAST
// (integers), ADD/SUB/MUL/FLOOR_DIV/FLOOR_MOD/MAXIMUM/MINIMUM (int32, int64,
// float32). Nodes writing graph outputs stay. Shape-arithmetic nodes left
// without readers are removed. O(n + e + folded elements), each fold at most
// 2^20 elements, all of them against Limits::max_created_bytes.
Status fold_constants(ir::Graph& g, PassContext& ctx);
// Deletes TFLite-dialect nodes of ops the table can evaluate (pure shape
// arithmetic) none of whose outputs is read, repeatedly; returns how many.
// O(n) per round, two rounds as nodes are in order.
size_t remove_dead_shape_nodes(ir::Graph& g);

// SPACE_TO_BATCH_ND -> CONV_2D / DEPTHWISE_CONV_2D (VALID) -> BATCH_TO_SPACE_ND
// with constant blocks becomes one convolution with dilation = block, when the
// paddings minus the crops are constants equal to SAME or VALID padding (they
// may be computed at run time from the input shape, as TensorFlow writes them).
// TFLite dialect; run after fold_constants. The padding arithmetic is
// evaluated through at most 64 producers per operand (memoized).
Status fuse_dilated_convolutions(ir::Graph& g, PassContext& ctx);

// RFFT2D whose output reaches only COMPLEX_ABS (through reshapes) computes
// the magnitude directly (TFLite dialect, before the preflight): ONNX Runtime
// has no complex tensors.
Status fuse_spectral_magnitude(ir::Graph& g, PassContext& ctx);

// Quantization, QDQ form (TFLite dialect, after fold_constants): checks every
// quantization parameter (an invalid one is an error naming the tensor), gives
// int32 biases of integer CONV_2D / DEPTHWISE_CONV_2D / TRANSPOSE_CONV /
// FULLY_CONNECTED the scale TFLite's kernel uses (input scale x filter scale;
// a warning when the bias says otherwise), and turns each int8/uint8
// quantized tensor into a float32 tensor with quantized_type set. DEQUANTIZE
// of an integer constant and QUANTIZE of a float constant fold into a
// quantized constant. int16 tensors are left for the preflight to report;
// with options.quantization kDequantize they are planned too (and int64
// biases).
Status plan_qdq(ir::Graph& g, PassContext& ctx);
// --quantization exact computes the kernels TFLite runs: when XNNPACK's
// delegate cannot prepare the model (ops::exact::xnnpack_delegate_failure),
// every node of every graph is marked as run by TFLite's builtin kernel, with
// a warning naming why. The whole model at once: a delegate fails as a whole.
Status pick_tflite_kernels(ir::Graph& model, PassContext& ctx);
// --quantization exact: the quantized inputs of an op whose kernel
// dequantizes them (OpEntry quantization.dequantizes_inputs) are read through
// a TFLite DEQUANTIZE node each, so the op itself lowers as in float.
Status dequantize_float_kernel_inputs(ir::Graph& g, PassContext& ctx);

// A layout a tensor must have, from the user's options.
struct ForcedLayout {
  ir::TensorId tensor = ir::kNoTensor;
  ir::Perm perm;
  std::string source;  // e.g. "explicit layout x=NHWC:NCHW", for messages
  // Explicit layouts contradicting an Implicit op are errors; interface
  // layouts (--io-layout, --keep-io-layout) get a Transpose instead.
  bool strict = false;
};

// Resolves --explicit-layout / --io-layout / --keep-io-layout against the
// graph. The options name tensors by their names in `g`, or by one of
// `other_names` (the TFLite names of graph inputs and outputs named after
// signature aliases).
Result<std::vector<ForcedLayout>> resolve_layouts(
    const ir::Graph& g, const LayoutOptions& options,
    std::span<const std::pair<std::string, ir::TensorId>> other_names = {});

// Layout propagation (docs/architecture.md, "Layouts"): gives every
// non-constant tensor a layout, seeded by Implicit ops and forced layouts and
// carried through Transparent and Attribute ops; inserts one Transpose where a
// tensor meets an op that needs another layout (an Unsqueeze for a lower-rank
// operand of a broadcast). Graph inputs take the layout their consumers want
// unless forced. Plans at most twice.
Status propagate_layouts(ir::Graph& g, PassContext& ctx,
                         const std::vector<ForcedLayout>& forced = {});

// Lowering: each TFLite-dialect node becomes the ONNX-dialect nodes its op
// converter writes (core/ops), in its place. A control-flow node's subgraphs
// are lowered first (lower_graph), then handed to its converter.
Status lower(ir::Graph& g, PassContext& ctx);
// lower, remove_identities and merge_reshapes: the lowering stage of one graph.
Status lower_graph(ir::Graph& g, PassContext& ctx);
// Before lowering: the large constants lowering `g` and the graphs its nodes
// own would create (OpEntry::lowering_bytes), added up; kResourceLimit when
// they pass what the created-bytes budget has left, naming the largest.
Status check_lowering_fits(const ir::Graph& g);

// ONNX-level cleanup after lowering: drops Identity nodes that are not needed
// for a graph output name.
Status remove_identities(ir::Graph& g, PassContext& ctx);

// ONNX-level cleanup after lowering: Reshape(Reshape(x)) becomes one Reshape.
Status merge_reshapes(ir::Graph& g, PassContext& ctx);

// ONNX-level cleanup after lowering (run after remove_identities): pushes
// Transposes through elementwise ops, merges consecutive ones and folds those
// of constants, wherever that leaves fewer Transposes (or as many moving fewer
// bytes). At most 16 sweeps, and the regions grown for sinking visit at most
// 64 nodes per node of the graph in all.
Status cleanup_transposes(ir::Graph& g, PassContext& ctx);

// ONNX dialect, after every other pass: one DequantizeLinear per integer
// constant (int8/uint8/int32 initializer, axis following its layout) and per
// quantized graph input, one QuantizeLinear -> DequantizeLinear pair after
// each quantized activation (a graph output keeps its integer type and name),
// then DequantizeLinear -> QuantizeLinear pairs with equal parameters cancel.
// options.quantization kDequantize instead folds every integer constant to
// float32 and makes no Q/DQ node: a pure float model.
// Unless options.keep_int8_activations, int8 activations (and the non-weight
// int8 constants beside them) are written as uint8 with zero point + 128
// inside the graph, the form ONNX Runtime's x86 integer kernels take; graph
// inputs and outputs stay int8.
Status materialize_qdq(ir::Graph& g, PassContext& ctx);

// --keep-float16-weights (ONNX dialect, last): float16 constants the emitter
// would widen stay float16 initializers, each read through one Cast to float32.
Status keep_float16_constants(ir::Graph& g, PassContext& ctx);

// Whether two tensors hold the same quantized values for equal integers
// (same integer type and parameters), or are both unquantized.
bool same_quantization(const ir::Tensor& a, const ir::Tensor& b);

}  // namespace lite2onnx::passes
