// The model generator's parts (graph_generator.h), shared by its files:
// graph_generator.cc (decisions, tensors, outputs, serialization),
// graph_generator_ops.cc (the recipe of each builtin), _compute.cc (math,
// convolutions, recurrent ops), _shapes.cc (data movement) and _flow.cc
// (control flow).
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "schema_generated.h"

namespace lite2onnx::fuzz::gen {

using Op = tflite::BuiltinOperator;
using Type = tflite::TensorType;
using Shape = std::vector<int32_t>;
using OptionsFn = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

inline constexpr int kMaxOps = 12;
inline constexpr int kMaxDim = 6;
inline constexpr int64_t kMaxElements = 4096;  // keeps constants and conversions small

struct Quant {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = 0;
};

struct TensorSpec {
  std::string name;
  Type type = Type::FLOAT32;
  Shape shape;
  bool has_shape = true;
  std::vector<uint8_t> data;  // constants only
  bool constant = false;
  int shared_buffer_with = -1;  // a constant reusing another tensor's buffer
  std::optional<Quant> quant;
  bool dynamic_batch = false;  // shape_signature with -1 in axis 0
  bool variable = false;
};

struct OpSpec {
  int code = 0;
  std::string custom_code;
  std::vector<int32_t> inputs, outputs;
  tflite::BuiltinOptions options_type = tflite::BuiltinOptions::NONE;
  OptionsFn options;
  // Set: `options` makes builtin_options_2 of this type instead.
  tflite::BuiltinOptions2 options_2_type = tflite::BuiltinOptions2::NONE;
};

inline int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= std::max<int32_t>(d, 0);
  return n;
}

inline size_t type_size(Type t) {
  switch (t) {
    case Type::FLOAT32:
    case Type::INT32:
    case Type::UINT32:
      return 4;
    case Type::FLOAT16:
    case Type::INT16:
    case Type::UINT16:
    case Type::BFLOAT16:
      return 2;
    case Type::INT64:
    case Type::FLOAT64:
    case Type::UINT64:
    case Type::COMPLEX64:
      return 8;
    case Type::COMPLEX128:
      return 16;
    case Type::STRING:
    case Type::RESOURCE:
    case Type::VARIANT:
      return 0;
    default:
      return 1;
  }
}

inline bool is_quantized_int(Type t) { return t == Type::INT8 || t == Type::UINT8; }

class Generator {
 public:
  explicit Generator(std::span<const uint8_t> bytes) : in_(bytes) {}

  std::vector<uint8_t> run();

 private:
  // ---- decisions ------------------------------------------------------------

  // Whether to break a rule this time: only in the third of the models that
  // bend at all, so the rest stay valid enough to reach the passes.
  bool bend(int n) { return bends_ && in_.one_in(n); }

  int dim() { return in_.one_in(8) ? 1 : in_.range(1, kMaxDim); }

  Shape random_shape(int rank = -1);

  // Element type of a new activation: the model's, now and then another.
  Type data_type();

  Quant random_quant(Type t, size_t channels = 1, int axis = 0);

  // Constant bytes: a style and a seed expand to the whole tensor.
  std::vector<uint8_t> values(Type t, int64_t count);

  // ---- tensors --------------------------------------------------------------

  std::string fresh_name();

  int add_tensor(TensorSpec t);

  int new_input(Shape shape, Type type);

  // A constant of `shape`; its data is fuzz-chosen unless given.
  int new_const(Shape shape, Type type, std::vector<uint8_t> data = {});

  int const_ints(const std::vector<int64_t>& v, Shape shape = {}, bool int64 = false);
  int const_scalar_f(float v);

  // The output of the op being built. Its shape is bent now and then: the
  // converter must notice, not trust it.
  int new_output(Shape shape, Type type, const std::optional<Quant>& like = {});

  const TensorSpec& at(int id) const { return tensors_[static_cast<size_t>(id)]; }
  int rank(int id) const { return static_cast<int>(at(id).shape.size()); }

  // An existing activation matching the filter, or a new graph input.
  int activation(const std::function<bool(const TensorSpec&)>& fits,
                 const std::function<Shape()>& make_shape, Type type);
  // An activation of rank r (any rank when r < 0) and element type `type` (the
  // model's activation type for FLOAT32), now and then of any type.
  int data_input(int r = -1, Type type = Type::FLOAT32);
  int image_input() { return data_input(4); }

  // An axis in [-rank, rank), now and then out of range.
  int axis(int r);
  static int norm_axis(int a, int r) { return a < 0 ? a + r : a; }
  static bool in_rank(int a, int r) { return a >= -r && a < r; }

  tflite::ActivationFunctionType activation_fn();

  void push(int code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
            tflite::BuiltinOptions type = tflite::BuiltinOptions::NONE, OptionsFn options = {});

  // ---- op recipes -----------------------------------------------------------

  void add_op();

  void unsupported_op();

  void add_builtin(Op code);

  // numpy broadcast (a mismatch gives the larger shape: the converter must notice).
  static Shape broadcast(Shape a, Shape b);

  // A tensor that broadcasts against x: x itself, an activation of the same
  // shape, or a constant of a trailing sub-shape (or with unit axes).
  int broadcast_partner(int x, Type type);

  int same_shape(int x, std::optional<Type> type = {});

  void binary(Op code);

  // RFFT2D, read by `part` (COMPLEX_ABS, REAL or IMAG) unless that is RFFT2D itself.
  void rfft2d(Op part);

  // Segment reductions: constant ids (sorted for SEGMENT_SUM) over the first axis.
  void segment(Op code);

  // CONV_3D, SAME and stride 1: the output keeps the spatial sizes.
  void conv3d();

  // CONV_3D_TRANSPOSE, SAME and stride 1: output_shape is the input's with
  // the filter's output channels.
  void conv3d_transpose();

  // SCATTER_ND: n rows of `depth` indices into a random shape, updates of
  // shape [n] + shape[depth:].
  void scatter_nd();

  // EMBEDDING_LOOKUP_SPARSE: n (row, column) lookups into a [rows, cols]
  // dense shape, each of a params row, combined by a random combiner.
  void embedding_lookup_sparse();

  // Ops whose two operands share one shape (StableHLO's element-wise ops,
  // ATAN2, the bitwise ones): no broadcasting.
  void same_shape_binary(Op code, Type type);

  void compare(Op code);

  // Weights (and bias) of a convolution-like op: int8 per-channel with an
  // int32 bias in quantized models, float32 otherwise.
  int weights(Shape shape, int channel_axis);
  // Weights of a kernel that is only hybrid (RNN): it reads one scale, so
  // per-axis scales are a bent rule.
  int hybrid_weights(Shape shape);
  int bias(int channels);

  static int conv_out(int in, int k, int stride, int dilation, bool same);

  void conv(Op code);

  void transpose_conv();

  void pool(Op code);

  void fully_connected();

  // ---- recurrent ops: weights, biases and variable states around an input
  // of rank 2 (one step) or 3 (a sequence, batch-major) ----

  // A variable tensor (state TFLite keeps between invocations).
  int state(Shape shape);
  // The sequence input [batch, time, features] (or one step [batch, features]).
  int recurrent_input(bool sequence) { return data_input(sequence ? 3 : 2); }
  // Batch, and input features, of `x` (any rank: the converter checks).
  int batch_of(int x) const { return at(x).shape.empty() ? 1 : std::max(at(x).shape.front(), 1); }
  int features_of(int x) const { return at(x).shape.empty() ? 1 : std::max(at(x).shape.back(), 1); }

  void rnn(Op code);

  // TFLite's LSTM inputs per direction: input weights (4), recurrent weights
  // (4), peepholes (3), gate biases (4), projection weights and bias, then
  // (unidirectional) the output and cell states and 4 layer norms. CIFG,
  // peepholes and projection come and go.
  void lstm(Op code);

  // SVDF: feature weights [units x rank, features], time weights
  // [units x rank, memory], bias [units], state [batch, memory x units x rank].
  void svdf();

  void batch_matmul();

  void reshape();

  void squeeze();

  std::vector<int64_t> permutation(int r);

  void concatenation();

  void split(Op code);

  void strided_slice();

  void pad(Op code);

  void reduce(Op code, Type type = Type::FLOAT32);

  void gather();

  void dequantize();

  void depth_space(Op code);

  void space_batch(Op code);

  void resize(Op code);

  // SPACE_TO_BATCH_ND -> CONV_2D / DEPTHWISE_CONV_2D (VALID) -> BATCH_TO_SPACE_ND,
  // as TensorFlow writes a dilated convolution (fuse_dilated_convolutions).
  void dilated_conv();

  // ---- control flow ------------------------------------------------------------
  // WHILE and IF with subgraphs of their own: a counter and one value through
  // a few iterations, or one value through two branches. Their subgraph
  // indices are bent now and then (out of range, negative, the main graph:
  // recursion), as are the types they hand over.

  struct SubgraphSpec {
    std::string name;
    std::vector<TensorSpec> tensors;
    std::vector<OpSpec> ops;
    std::vector<int32_t> inputs, outputs;
    int add(TensorSpec t) {
      tensors.push_back(std::move(t));
      return static_cast<int>(tensors.size()) - 1;
    }
    int like(const TensorSpec& t, const std::string& tag) {
      TensorSpec c;
      c.name = tag;
      c.type = t.type;
      c.shape = t.shape;
      c.quant = t.quant;
      return add(std::move(c));
    }
    int scalar_i32(int32_t v, const std::string& tag) {
      TensorSpec c;
      c.name = tag;
      c.type = Type::INT32;
      c.constant = true;
      c.data.resize(4);
      std::memcpy(c.data.data(), &v, 4);
      return add(std::move(c));
    }
  };

  // The index a control-flow op names: its subgraph, or a hostile one.
  int subgraph_index(int own);
  int add_subgraph(SubgraphSpec g);

  // One elementwise op of `g` on its tensor v.
  int unary_in(SubgraphSpec& g, int v, const std::string& tag);

  void while_loop();

  // CALL of a subgraph of one elementwise op (or of none: its argument passed
  // through); or STABLEHLO_COMPOSITE with that subgraph as its decomposition
  // (StableHLOCompositeOptions, builtin_options_2).
  void call(bool composite = false);

  void if_then_else();

  // VAR_HANDLE -> ASSIGN_VARIABLE of a value -> READ_VARIABLE: a resource
  // variable (state: an input and a next output); read before it is
  // assigned now and then (unsupported: nothing gives it a value).
  void resource_variable();

  // SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE: shape arithmetic the converter
  // folds to constants (fold_constants).
  void shape_arithmetic();

  // ---- outputs and serialization ---------------------------------------------

  void choose_outputs();

  std::vector<uint8_t> build();

  // The builtin codes the op registry converts. Custom ops are left out: the
  // generator has no recipe for their options (each would be one more
  // unsupported CUSTOM, and the table grows), and their readers have a fuzz
  // target of their own (custom_options).
  static const std::vector<int>& supported_codes();

  FuzzInput in_;
  bool bends_ = false;
  bool quantized_ = false;
  Type activation_type_ = Type::INT8;
  std::vector<TensorSpec> tensors_;
  std::vector<OpSpec> ops_;
  std::vector<int32_t> graph_inputs_, graph_outputs_;
  std::vector<SubgraphSpec> extra_;  // subgraphs 1.. (control flow)
  std::vector<int> activations_;
};

}  // namespace lite2onnx::fuzz::gen
