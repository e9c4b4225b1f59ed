// The operator table: for every TFLite builtin, how to read its options, its
// layout class, and how to lower it to ONNX. One converter file per op family;
// registry.cc holds the one visible table.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/evaluate.h"
#include "core/status.h"

namespace tflite {
struct Operator;
}

namespace lite2onnx {
struct ConvertOptions;
enum class QuantizationMode;
struct Diagnostics;
}  // namespace lite2onnx

namespace lite2onnx::ops {

enum class LayoutClass {
  kImplicit,     // fixes its activation layout: the source of NHWC -> NCHW
  kTransparent,  // layout-insensitive elementwise: all tensors share one layout
  kAttribute,    // follows its input's layout, rewriting attributes (propagate fn)
  kTerminate,    // depends on TFLite memory order: inputs in TFLite order
  kSubgraph,     // control flow: layouts carried into its subgraphs and back out
};
const char* to_string(LayoutClass c);

// Layouts an Attribute op accepts for its non-constant inputs and the layouts
// its outputs then have.
struct LayoutPlan {
  std::vector<ir::Perm> inputs;
  std::vector<ir::Perm> outputs;
};

// How TFLite's integer kernel of an op treats quantized (int8/uint8) tensors,
// which decides whether "dequantize -> float op -> quantize" (QDQ) computes
// the same thing.
enum class QuantizedKernel {
  kRescale,      // computes on real values and requantizes to the output's own scale
  kSameScale,    // copies integers: exact in QDQ only when input and output share scale/zero point
  kReinterpret,  // copies the bytes and reads them with the output's parameters (RESHAPE family)
  kNoQuantized,  // reads raw integers, ignoring quantization (CAST): cannot be expressed in QDQ
};

// Inputs of an op whose bias TFLite's integer kernel adds straight into the
// accumulator, at scale input scale x filter scale.
struct BiasSlots {
  size_t bias, data, weight;
  // Hybrid form (float data, uint8 weights, as TOCO wrote them): TFLite's
  // kernel reads the weight bytes as int8 with zero point 0.
  bool uint8_hybrid_weights_as_int8 = false;
};

class LowerContext;

// How a control-flow node's subgraph meets the node: subgraph input i reads
// node input inputs[i], subgraph output j becomes node output outputs[j]
// (-1: none); a loop body's input i takes its output carried[i] on the next
// iteration (empty: not a loop).
struct SubgraphBinding {
  std::vector<int> inputs, outputs, carried;
};
using SubgraphBindingFn = SubgraphBinding (*)(const ir::Node& n, size_t subgraph);

using ReadOptionsFn = void (*)(const tflite::Operator& op, ir::Attributes& attrs);
// A custom op's options from Operator.custom_options (ops/custom_options.h);
// an error names what is wrong with them.
using CustomOptionsFn = Status (*)(std::span<const uint8_t> bytes, ir::Attributes& attrs);
// nullopt: the op cannot run in these layouts; it then runs in TFLite order.
using PropagateFn = std::optional<LayoutPlan> (*)(const ir::Graph& g, const ir::Node& n,
                                                  std::span<const ir::Perm> input_layouts);
// What a check returns: nothing when the node can be converted, else why it
// cannot (a ReasonCode and the text; core/status.h).
using Check = std::optional<Refusal>;
inline Check refuse(ReasonCode code, std::string text) { return Refusal{code, std::move(text)}; }
using CheckFn = Check (*)(const ir::Graph& g, const ir::Node& n);
// The layout an Attribute op's input 0 would need for its output to come out
// in `wanted` (empty: none); backward hints walk through it.
using HintInputFn = ir::Perm (*)(const ir::Graph& g, const ir::Node& n, const ir::Perm& wanted);
using LowerFn = Status (*)(LowerContext& ctx, const ir::Node& n);
// Output shapes as TFLite's Prepare computes them (ops/shape_inference.h);
// nullopt when they depend on something not known at conversion time.
using InferShapesFn = std::optional<std::vector<ir::Shape>> (*)(const ir::Graph& g,
                                                                const ir::Node& n);
// Bytes of the constants lowering a node will create, from its shapes and
// attributes alone (no work): see OpEntry::lowering_bytes.
using LoweringBytesFn = uint64_t (*)(const ir::Graph& g, const ir::Node& n);

// An op's entry in the table, in named parts. Each family file writes its
// entries with designated initializers, naming only what differs from these
// defaults (docs/architecture.md, "Op table").

// Reading the op from the file.
struct Reading {
  int min_inputs = 1;               // inputs [0, min_inputs) must be present; -1: every input
  ReadOptionsFn options = nullptr;  // FlatBuffer builtin options -> node attributes
  CustomOptionsFn custom_options = nullptr;  // custom ops: Operator.custom_options
  // Custom ops whose versions differ in meaning: the one version converted
  // (0: any). Files with another version are unsupported, naming it.
  int custom_version = 0;
};

// The op under layout propagation (docs/architecture.md, "Layouts").
struct LayoutRule {
  LayoutClass kind = LayoutClass::kTerminate;
  int data_input = 0;               // kImplicit: the activation input
  PropagateFn propagate = nullptr;  // kAttribute (and Terminate ops accepting a layout)
  // kAttribute ops whose outputs take their data input's layout unchanged
  // (propagate_same, SPLIT): layout hints walk back through them.
  bool keeps_layout = false;
  // Other Attribute ops that hints walk back through (RESHAPE).
  HintInputFn hint_input = nullptr;
};

// Which nodes the Q/DQ modes (qdq, auto) compute with an op's integer form
// too, where its check allows (passes/lower.cc).
enum class InQdqGraphs {
  kNo,
  // Hybrid nodes (float data, constant integer weights), as TFLite's kernel
  // runs them, quantizing the data at run time: Q/DQ has no such form (the
  // float form it would take only approximates the kernel). --quantization
  // dequantize keeps the float form.
  kHybrid,
  // 8-bit quantized nodes, in auto: ONNX Runtime's kernels for the op's Q/DQ
  // pattern round differently from TFLite's (docs/quantization-arithmetic.md
  // section 10), and the integer form costs about as much as the float op.
  // (int16 nodes take it whatever this says, the integer LSTM and SVDF too:
  // their states are int16.)
  kQuantized,
  // Both (SVDF: its integer and its hybrid kernel).
  kQuantizedAndHybrid,
};

// The op's integer form in --quantization exact (core/ops/exact.h): ONNX
// integer arithmetic that computes what TFLite's kernel computes, bit for bit
// (docs/quantization-arithmetic.md). An op touching quantized tensors without
// one makes an exact conversion fail naming it.
struct ExactForm {
  LowerFn lower = nullptr;
  // The variants `lower` does not cover yet (the preflight asks, in exact mode).
  CheckFn check = nullptr;
  InQdqGraphs in_qdq_graphs = InQdqGraphs::kNo;
  // Whether this 8-bit node's Q/DQ form rounds unlike TFLite's kernel, so
  // that auto takes the integer form (nullptr: in_qdq_graphs says, for every
  // node of the op).
  bool (*qdq_differs)(const ir::Graph& g, const ir::Node& n) = nullptr;
};

// How the op's integer kernel meets QDQ.
struct Quantization {
  QuantizedKernel kernel = QuantizedKernel::kRescale;
  // The int16 (16x8) kernel's class where it differs from the int8/uint8 one.
  std::optional<QuantizedKernel> int16;
  std::optional<BiasSlots> bias;  // conv / fully connected: see BiasSlots
  ExactForm exact;
  // The kernel dequantizes each quantized input, f32((q - z) * s), and
  // computes in float (post-processing custom ops): --quantization exact
  // reads its inputs through DEQUANTIZE nodes and lowers it as in float.
  bool dequantizes_inputs = false;
};

// State a kernel keeps in its own persistent buffer between invocations
// (TFLite Micro's SignalFilterBankSpectralSubtraction: its noise estimate):
// a name (under the node's), its type and shape, and its value before the
// first invocation is zeros (what the kernel's Prepare and Reset write).
struct OpState {
  std::string name;
  ir::DataType dtype = ir::DataType::kInt32;
  ir::Shape shape;
};
using OpStateFn = std::vector<OpState> (*)(const ir::Graph& g, const ir::Node& n);

// State kept between invocations (docs/architecture.md, "Model state").
struct StateRule {
  // Stateful ops (the recurrent ones): the input slots holding a variable
  // tensor the op reads and updates in place, as TFLite's kernel requires
  // them. expose_state (passes.h) makes each such tensor a graph input with
  // its initial value, and gives the node one more output per slot, in this
  // order, for the value after the op (state_output() finds them); the
  // converter writes those outputs.
  std::vector<int> inputs;
  // Whether each state slot must hold a variable tensor (TFLite's kernel
  // reads it with GetVariableInput: otherwise an invalid model); false: a
  // slot without one is left alone (the LSTM op's two kernels use different
  // slots).
  bool required = true;
  // Ops whose effect is on state, not on outputs (ASSIGN_VARIABLE,
  // CALL_ONCE): having no outputs is no defect.
  bool effect_only = false;
  // Ops keeping state inside the kernel: expose_state gives the node one more
  // input and one more output per piece (node attribute "op_state": their
  // slots, input then output, per piece), a state pair of kind "op_state";
  // op_state_input / op_state_output find them for the converter.
  OpStateFn internal = nullptr;
};

// Evaluation at conversion time (ops/evaluate.h): constant folding and the
// dilated-convolution fusion use whichever is set.
struct Evaluation {
  ElementSourcesFn element_sources = nullptr;  // ops that only copy elements
  Arithmetic arithmetic = Arithmetic::kNone;   // binary arithmetic
  FoldFn fold = nullptr;                       // any other (SHAPE, CAST)
};

// The op in the support matrix (lite2onnx ops, docs/operators.md).
struct Documentation {
  const char* onnx = "";  // the ONNX ops it becomes
  // Element types of the op's data tensors this converter handles, as
  // TFLite allows them.
  const char* dtypes = "float32";
  const char* notes = "";
};

struct OpEntry {
  Reading read;
  LayoutRule layout;
  // Output shapes as TFLite's Prepare computes them, written beside the
  // converter; unset: numpy broadcast for kTransparent ops, the element map's
  // shape for reshapes, else the file's shapes stand.
  InferShapesFn infer_shapes = nullptr;
  CheckFn check = nullptr;  // seen by the preflight
  LowerFn lower = nullptr;  // the converter; an entry is supported iff it has one
  // Ops whose lowering creates large constants (DFT matrices, frame indices):
  // their size, which the lowering stage adds up over every graph before it
  // lowers anything (passes::check_lowering_fits), so a model that would pass
  // the created-bytes budget ends before the first matrix is computed. Unset:
  // the op creates only small constants (shapes, axes, scalars).
  LoweringBytesFn lowering_bytes = nullptr;
  Quantization quantization;
  StateRule state;
  // kSubgraph ops: how each of the node's subgraphs meets it.
  SubgraphBindingFn subgraph_binding = nullptr;
  Evaluation evaluate;
  Documentation doc;

  bool supported() const { return lower != nullptr; }
  bool evaluable() const {
    return evaluate.element_sources != nullptr || evaluate.arithmetic != Arithmetic::kNone ||
           evaluate.fold != nullptr;
  }
};

// The entry of a builtin code; a default (unsupported) entry for unknown codes.
const OpEntry& lookup(int builtin);
// The entry of a custom code (the custom-op table); unsupported when unknown.
const OpEntry& lookup_custom(std::string_view custom_code);
// A TFLite node's entry: by its builtin code, or by its custom code for CUSTOM.
const OpEntry& lookup(const ir::NodeInfo& n);
// Reads an op's builtin or custom options into node attributes through its
// entry (the reader's OptionsReader); fails on custom options that are bad,
// and on a custom op it cannot take (kUnsupported listing it, with its
// reason code, at op index -1: the reader knows the index).
Status read_options(int builtin, std::string_view custom_code, int version,
                    const tflite::Operator& op, ir::Attributes& attrs);
// Every builtin code with its entry, in code order (the support matrix).
std::vector<std::pair<int, const OpEntry*>> all_entries();
// Every custom code with its entry, in name order (the support matrix).
std::vector<std::pair<std::string, const OpEntry*>> all_custom_entries();

// Shared propagate functions for Attribute ops.
// Output takes the layout of input 0 (every non-constant input must share it).
std::optional<LayoutPlan> propagate_same(const ir::Graph& g, const ir::Node& n,
                                         std::span<const ir::Perm> in);
// Input 0 and every output in input 0's layout, the other inputs (begin and
// size, paddings, multiples: constant or computed at run time) in TFLite
// order; the converter puts them into the layout's order.
std::optional<LayoutPlan> propagate_data_input(const ir::Graph& g, const ir::Node& n,
                                               std::span<const ir::Perm> in);

// State and helpers a converter uses to append ONNX nodes.
class LowerContext {
 public:
  LowerContext(ir::Graph& graph, std::vector<ir::Node>& out, const ConvertOptions& options,
               Diagnostics& diagnostics);

  ir::Graph& graph() { return graph_; }
  const ir::Tensor& tensor(ir::TensorId id) const { return graph_.tensor(id); }
  int opset() const;
  QuantizationMode quantization() const;
  Diagnostics& diagnostics() { return diag_; }

  // Input i of the node as an ONNX value in `layout` for an op of rank `rank`:
  // non-constants are returned as they are (the layout pass made them agree);
  // constants get an aliased tensor whose data is broadcast to `rank` and
  // permuted at emission time (no node).
  ir::TensorId operand(const ir::Node& n, size_t i, const ir::Perm& layout, size_t rank);
  // A constant seen through a permutation of its own axes (e.g. OHWI -> OIHW);
  // `why` goes into the diagnostics.
  ir::TensorId constant_in_layout(ir::TensorId id, const ir::Perm& layout,
                                  const std::string& why = "");
  // A quantized constant as the plain integers it holds, for an integer op
  // that reads them in any mode (the hybrid forms); the default mode's QDQ
  // writer would hand its readers DequantizeLinear's float values instead.
  ir::TensorId integer_constant(ir::TensorId id);

  ir::TensorId const_i64(const std::string& name, std::vector<int64_t> values,
                         std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId const_f32(const std::string& name, std::vector<float> values,
                         std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId const_f64(const std::string& name, std::vector<double> values,
                         std::optional<ir::Shape> shape = std::nullopt);
  ir::TensorId const_scalar(const std::string& name, ir::DataType type, double value);

  // A new intermediate tensor with the same type, shape and layout as `like`.
  ir::TensorId temp_like(ir::TensorId like, const std::string& suffix);
  // A new intermediate tensor of unknown shape.
  ir::TensorId temp(const std::string& name, ir::DataType type);

  // Appends an ONNX node; its name is `<source name>` or `<source name>/<suffix>`.
  ir::Node& emit(const ir::Node& source, const std::string& op_type,
                 std::vector<ir::TensorId> inputs, std::vector<ir::TensorId> outputs,
                 const std::string& suffix = "");

  // Applies the node's TFLite fused activation ("NONE", "RELU", ...): returns
  // the tensor the main op must write; the activation node that turns it into
  // `out` is appended by finish(), after the main node.
  Result<ir::TensorId> fused_activation(const ir::Node& source, ir::TensorId out);
  // Appends pending activation nodes; the lowering driver calls it after each op.
  void finish();

  // The subgraphs of the node being lowered, already lowered themselves
  // (control flow); the lowering pass hands them over before the converter runs.
  void give_subgraphs(std::vector<ir::Subgraph> subgraphs) { subgraphs_ = std::move(subgraphs); }
  std::vector<ir::Subgraph> take_subgraphs() { return std::move(subgraphs_); }

  Error error(const ir::Node& n, const std::string& message) const;
  // The node cannot be converted with these options (the preflight could not
  // tell: it does not know the opset): kUnsupported listing the node.
  Error unsupported(const ir::Node& n, Refusal why) const;

 private:
  ir::Graph& graph_;
  std::vector<ir::Node>& out_;
  const ConvertOptions& options_;
  Diagnostics& diag_;
  // Constant aliases made so far: (constant, layout, rank; 0 for a
  // permutation of its own axes) -> alias.
  std::map<std::tuple<ir::TensorId, ir::Perm, size_t>, ir::TensorId> aliases_;
  struct PendingActivation {
    ir::Node source;
    std::string op_type;
    std::vector<ir::TensorId> inputs;
    ir::TensorId output;
  };
  std::vector<PendingActivation> pending_;
  std::vector<ir::Subgraph> subgraphs_;
};

// Whether a TFLite node reads or writes quantized tensors (after planning):
// in --quantization exact it is lowered by its entry's exact form.
bool touches_quantized(const ir::Graph& g, const ir::Node& n);
// A hybrid (dynamic-range) node: float data (input 0) and quantized
// constant weights (the first input present after it) that its kernel reads
// as integers (not the folded output of a DEQUANTIZE).
bool is_hybrid(const ir::Graph& g, const ir::Node& n);

// Helpers for converters.
const char* activation_name(int tflite_activation);
// The output of a stateful node that carries the value of its entry's k-th
// state input after the op (OpEntry::state.inputs), or kNoTensor.
ir::TensorId state_output(const ir::Node& n, size_t k);
// How many of the node's outputs the TFLite operator has (expose_state
// appends the state outputs after them).
size_t own_outputs(const ir::Node& n);
// The input carrying piece k of a node's kernel state before the op, and the
// output for its value after it (StateRule::internal); kNoTensor when absent.
ir::TensorId op_state_input(const ir::Node& n, size_t k);
ir::TensorId op_state_output(const ir::Node& n, size_t k);

}  // namespace lite2onnx::ops
