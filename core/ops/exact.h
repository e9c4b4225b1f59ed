// --quantization exact: ONNX integer arithmetic that computes what TFLite's
// quantized kernels compute, bit for bit (docs/quantization-arithmetic.md is
// the specification; core/ops/quant_math.h its arithmetic in C++).
//
// Each op's exact form is its entry's `quantization.exact` (registry.h),
// written in its family file with the helpers below. Quantized tensors are
// the integers TFLite holds (int8, uint8, int16: qdq::store_integers gives
// them their types after lowering). ONNX's integer facts the helpers build on:
// ConvInteger and MatMulInteger accumulate exactly in int32 (ONNX Runtime
// takes int8 x int8 and uint8 x uint8/int8, and no per-channel weight zero
// point: TFLite's per-channel weights are symmetric); Div truncates towards
// zero, Mod (fmod 0) takes the divisor's sign, so floor division is
// (x - Mod(x, d)) / d; QuantizeLinear with scale 1 rounds half to even and
// saturates; Gather takes negative indices from the end (an int8 value
// indexes a 256-entry table directly).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ops/quant_math.h"
#include "core/ops/registry.h"

namespace lite2onnx::ops::exact {

// One per-tensor quantized tensor's parameters and integer range.
struct Params {
  ir::DataType type = ir::DataType::kInt8;
  float scale = 0;
  int64_t zero = 0;
  int64_t lo = -128, hi = 127;
};
bool per_tensor(const ir::Tensor& t);
// The parameters of a quantized tensor (after planning: its quantized_type);
// channel 0's for a per-axis one.
Params params_of(const ir::Tensor& t);
// The integer range of an integer type.
std::pair<int64_t, int64_t> range_of(ir::DataType t);

// An integer value of the arithmetic: a tensor, or a constant (one element
// per channel, written in whatever type the operation it meets needs), with
// the range its elements take. The range chooses int32 or int64 arithmetic.
struct Value {
  ir::TensorId id = ir::kNoTensor;
  ir::DataType type = ir::DataType::kInt32;
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> values;  // a constant: its elements
  ir::Shape shape;              // a constant: its shape (broadcast against the others)
  bool is_const() const { return id == ir::kNoTensor; }
};

// Writes one TFLite node's integer arithmetic as ONNX nodes, named after it.
class Writer {
 public:
  Writer(LowerContext& ctx, const ir::Node& n) : ctx_(ctx), n_(n) {}
  LowerContext& ctx() { return ctx_; }
  const ir::Node& node() const { return n_; }

  // The integers a quantized tensor holds.
  Value integers(ir::TensorId t) const;
  Value constant(int64_t v) const { return {ir::kNoTensor, ir::DataType::kInt64, v, v, {v}, {}}; }
  // A new int32 tensor of any value: what ConvInteger / MatMulInteger write.
  Value accumulator();
  // A constant of one element per channel, shaped to broadcast (e.g. [1, C, 1, 1]).
  Value channels(std::vector<int64_t> values, ir::Shape shape) const;

  // Arithmetic, exact: int32 while every range fits it, else int64; a range
  // beyond int64 is an error of the lowering (Status of result()).
  Value add(const Value& a, const Value& b);
  Value sub(const Value& a, const Value& b);
  Value mul(const Value& a, const Value& b);
  // Division by a positive constant: truncating (C), flooring, rounding half
  // away from zero (RHAZ, TFLite's RoundingDivideByPOT and its C divisions).
  Value trunc_div(const Value& x, const Value& d);
  Value floor_div(const Value& x, const Value& d);
  Value rhaz_div(const Value& x, const Value& d);
  Value clip(const Value& x, int64_t lo, int64_t hi);
  // Where(x < 0, if_negative, otherwise).
  Value select_negative(const Value& x, const Value& if_negative, const Value& otherwise);
  Value cast(const Value& v, ir::DataType type);

  // Float steps (float32 in ONNX as in the kernels).
  ir::TensorId to_float(const Value& v);
  ir::TensorId fmul(ir::TensorId x, std::vector<float> factors, ir::Shape shape);
  ir::TensorId fadd(ir::TensorId x, std::vector<float> terms, ir::Shape shape);
  // RNE(x) + zero, saturated to `type` (QuantizeLinear with scale 1).
  Value round_to(ir::TensorId x, ir::DataType type, int64_t zero);
  // RHAZ(x) of a float32 or float64 tensor `x`, exactly (Round is half to
  // even, and x + 0.5 rounds): floor(|x|) + (|x| - floor(|x|) >= 0.5), signed.
  ir::TensorId round_half_away(ir::TensorId x, ir::DataType type);

  // table[index] with a constant table of integers of type `type`: a Gather
  // whose indices are `index` (int32); negative ones count from the end.
  Value lookup(const Value& index, std::vector<int64_t> table, ir::DataType type, int64_t lo,
               int64_t hi);

  // Writes `v` (within out's integer range) into the node's output `out`.
  void store(const Value& v, ir::TensorId out);

  // The tensor of a value, as `type` (a constant is written as an initializer).
  ir::TensorId tensor(const Value& v, ir::DataType type);
  // A new intermediate tensor.
  ir::TensorId temp(ir::DataType type, const std::string& what);
  ir::Node& emit(const std::string& op, std::vector<ir::TensorId> inputs, ir::TensorId out,
                 const std::string& what);
  // One ONNX op `op` on `inputs` into a new tensor of `type` (named after the op).
  ir::TensorId apply(const char* op, std::vector<ir::TensorId> inputs, ir::DataType type);

  // The first arithmetic problem met (an int64 overflow), or ok.
  Status result() const { return problem_ ? Status(*problem_) : ok_status(); }

 private:
  Value binary(const char* op, const Value& a, const Value& b, int64_t lo, int64_t hi);
  // Records that a result would pass int64; returns `a` to go on with.
  Value overflow(const Value& a);
  std::string suffix(const std::string& what) {
    return "exact" + std::to_string(++count_) + "_" + what;
  }

  LowerContext& ctx_;
  const ir::Node& n_;
  int count_ = 0;
  std::optional<Error> problem_;
  // The last node written and its output (store() lets it write the output).
  ir::TensorId last_ = ir::kNoTensor;
  ir::Node* last_node_ = nullptr;
};

// ---- requantizations ----

// How an accumulator becomes the output's integers.
enum class Requantization {
  kFp32,         // XNNPACK: RNE(f32(f32(acc) * scale)) (§3.1)
  kDouble,       // TFLite MultiplyByQuantizedMultiplier, gemmlowp double rounding (§4.1)
  kSingle,       // ruy's single rounding
  kInt64,        // the 16x8 kernels' reduced 16-bit multiplier
  kDoubleScale,  // LiteRT's 16x8 FULLY_CONNECTED: RHAZ(double(acc) * double scale) (§2)
};
// acc (one value per channel along `shape`'s non-unit axis) scaled by
// `scales[c]` with rule `r`, plus the output's zero point, clamped to [lo, hi].
// kFp32 takes the scales as they are (f32(f32(s_x s_w) / s_y)); the fixed-point
// rules take QuantizeMultiplier of them (the real multiplier, in double).
Value requantize(Writer& w, const Value& acc, Requantization r, std::span<const double> scales,
                 const ir::Shape& shape, const Params& out, int64_t lo, int64_t hi);

// TFLite's MultiplyByQuantizedMultiplier, gemmlowp's double rounding (§4.1):
// RoundingDivideByPOT(SRDHM(x * 2^left, M), right), one multiplier per
// channel along `shape`'s non-unit axis (or one). Exact: the callers keep
// x * 2^left within int32, where TFLite's int32 product would wrap.
Value mbqm(Writer& w, const Value& x, std::span<const qmath::Multiplier> m, const ir::Shape& shape);
// static_cast<int32_t>(x) of an int64 value: ((x + 2^31) mod 2^32) - 2^31,
// the wrap of a kernel's int32 sums.
Value wrap_int32(Writer& w, const Value& x);

// The integer range a fused activation leaves (XNNPACK's rounding of its
// bounds, or TFLite's), within the type's.
std::pair<int64_t, int64_t> activation_range(const ir::Node& n, const Params& out, bool xnnpack);
// Whether the node's fused activation is one the integer kernels clamp to.
Check check_activation_range(const ir::Node& n);

// ---- kernel choice: does LiteRT.js's XNNPACK delegate take the node? ----
// Quantization XNNPACK accepts on a tensor: per-tensor (or per-channel on
// `channel_axis` >= 0), normal positive scales.
bool xnnpack_quantization(const ir::Tensor& t, int channel_axis = -1);

// ---- does LiteRT's XNNPACK delegate prepare at all? (exact_delegate.cc) ----
// It claims nodes by the structure of their quantization and fails as a whole
// in Prepare when a claimed node has a scale it cannot define, a conv or FC
// requantization scale of 256 or more, or a PAD/TRANSPOSE/SPLIT quantized
// unlike its input; TFLite then runs every node with its builtin kernel
// (§5). Names the first such node, or nothing.
std::optional<std::string> xnnpack_delegate_failure(const ir::Graph& model);
// Marks every node of the model (and the graphs its nodes own) as run by
// TFLite's builtin kernel; the kernel choices below then never pick XNNPACK.
void mark_builtin_kernels(ir::Graph& model);
bool builtin_kernels_only(const ir::Node& n);
// The refusal of an op whose builtin kernel has no exact form yet, in such a model.
Check refuse_builtin_kernel();

// ---- convolutions and fully connected ----
enum class LinearOp { kConv, kDepthwise, kFullyConnected, kTransposeConv };
// Input, weight and bias slots of a linear op.
struct LinearSlots {
  size_t data, weight, bias;
};
LinearSlots linear_slots(LinearOp op);
// The per-channel axis of the TFLite weight.
int weight_channel_axis(LinearOp op);
// The kernel of a linear op: whether XNNPACK takes it in LiteRT.js (fp32
// requantization, XNNPACK's activation bounds) or which builtin kernel runs.
struct LinearKernel {
  Requantization rule = Requantization::kFp32;
  bool xnnpack = true;
};
LinearKernel linear_kernel(const ir::Graph& g, const ir::Node& n, LinearOp op);
// ExactForm::qdq_differs of the linear ops: TFLite runs a builtin kernel
// (fixed-point requantization) for the node, where ONNX Runtime's Q/DQ
// kernels round as XNNPACK's fp32 requantization does.
template <LinearOp op>
bool runs_builtin_kernel(const ir::Graph& g, const ir::Node& n) {
  return !linear_kernel(g, n, op).xnnpack;
}
// The variants the exact linear forms do not cover (hybrid, int16 weights, ...).
Check check_linear(const ir::Graph& g, const ir::Node& n, LinearOp op);
// The zero points ConvInteger / MatMulInteger take: the input's, and the
// weight's when it has one (uint8; TFLite's int8 weights have none).
std::vector<ir::TensorId> linear_zero_points(Writer& w, const ir::Node& n, size_t data,
                                             size_t weight);
// The int32 accumulator `acc` of node n's op (one channel per element along
// `channel_shape`'s non-unit axis), with its bias added, requantized as the
// kernel computes it and clamped to the fused activation's range.
Value finish_linear(Writer& w, const Value& acc, LinearOp op, const ir::Shape& channel_shape);
// One 8-bit ConvInteger / MatMulInteger of the op: `in` (int8) with its zero
// point `zero` (a tensor, or kNoTensor for 0) against the weights; returns the
// int32 accumulator.
using IntegerProduct = std::function<Value(ir::TensorId in, ir::TensorId zero, const char* what)>;
// The sum Σ x w of a 16x8 op (int16 input `x`, zero point 0) from 8-bit
// products, which is all ConvInteger and MatMulInteger take: x = 256 hi + lo
// with hi = floor(x / 256) and lo in [0, 255], read as lo - 128 with zero
// point -128 so both parts are int8; the padding (0) splits into 0 and 0.
Value sum_16x8(Writer& w, ir::TensorId x, const IntegerProduct& product);

// ---- binary arithmetic: ADD, SUB, MUL (exact_binary.cc) ----
enum class BinaryOp { kAdd, kSub, kMul };
// The variants not covered: operands not quantized per tensor alike, the
// kernels' parameters that would wrap int32, int16 zero points.
Check check_arithmetic(const ir::Graph& g, const ir::Node& n, BinaryOp op);
// The node's output integers from its operands' integers `a` and `b`
// (broadcast against each other), as the kernel LiteRT.js runs computes them:
// XNNPACK's where its delegate takes the node, else TFLite's builtin kernel.
Value arithmetic(Writer& w, const Value& a, const Value& b, BinaryOp op);
// SQUARED_DIFFERENCE (8-bit; TFLite's kernel, left shift 7) and PRELU (its
// alpha as the second operand; TFLite's two multipliers), §4.2, §4.9.
Check check_squared_difference(const ir::Graph& g, const ir::Node& n);
Value squared_difference(Writer& w, const Value& a, const Value& b);
Check check_prelu(const ir::Graph& g, const ir::Node& n);
Value prelu(Writer& w, const Value& x, const Value& alpha);

// ---- int16 MEAN, SUM (exact_reduce.cc) ----
// The output integers from the int32 sum `total` of `count` raw int16
// integers: TFLite's reference MEAN (MBQM of the sum, 1/N folded into the
// multiplier) or its optimized SUM (float32), as LiteRT.js runs them.
Value int16_mean_or_sum(Writer& w, const Value& total, int64_t count, const Params& px,
                        const Params& py, bool sum);
Check check_int16_mean_or_sum(int64_t count, const Params& px, const Params& py, bool sum);

// ---- hybrid linear ops: float input, int8 weights (exact_hybrid.cc) ----
// A float input quantized at run time, per row (the elements that share all
// axes but `axes`): the row's int8 integers, zero point and dequantization
// scale (the factor of the int32 sum Σ (q - z) w).
struct RowQuantization {
  ir::TensorId integers = ir::kNoTensor;              // int8, x's shape
  Value zero;                                         // int32, x's shape with `axes` kept as 1
  ir::TensorId dequantization_scale = ir::kNoTensor;  // float32, the same shape as zero
};
// XNNPACK's dynamic quantization (LiteRT.js's qd8 kernels,
// docs/quantization-arithmetic.md §5); dequantization_scale is f32(1 / scale).
RowQuantization quantize_rows(Writer& w, ir::TensorId x, const std::vector<int64_t>& axes);
// TFLite's AsymmetricQuantizeFloats (its builtin hybrid kernels with an input
// zero point: DEPTHWISE_CONV_2D always), in double where it computes in double.
RowQuantization quantize_rows_tflite(Writer& w, ir::TensorId x, const std::vector<int64_t>& axes,
                                     const std::string& what = "tflite_rows");
// The float output of XNNPACK's qd8 kernels and of TFLite's per-channel
// hybrid ones into `out`: f32(f32(f32(f32(acc) * dequantization_scale) * s_w[c])
// + bias[c]), `acc` the exact int32 sum of (q - z) w, one channel along
// `channel_shape`'s non-unit axis.
void hybrid_output(Writer& w, const Value& acc, ir::TensorId dequantization_scale, LinearOp op,
                   const ir::Shape& channel_shape, ir::TensorId out);
// TOCO-era uint8 hybrid weights (read as int8 with zero point 0): XNNPACK
// does not take them, so LiteRT.js runs TFLite's builtin hybrid kernel, which
// quantizes each row symmetrically (§5.2).
bool builtin_hybrid(const ir::Tensor& weight);
struct SymmetricRows {
  ir::TensorId integers = ir::kNoTensor;  // int8 in [-127, 127], x's shape
  ir::TensorId scale = ir::kNoTensor;     // f32(f32(range / 127) * s_w), `axes` kept as 1
};
// `weight_scales`: one, or one per column of the product.
SymmetricRows quantize_rows_symmetric(Writer& w, ir::TensorId x, const std::vector<int64_t>& axes,
                                      const std::vector<float>& weight_scales,
                                      const std::string& what = "symmetric_rows");
inline SymmetricRows quantize_rows_symmetric(Writer& w, ir::TensorId x,
                                             const std::vector<int64_t>& axes, float weight_scale) {
  return quantize_rows_symmetric(w, x, axes, std::vector<float>{weight_scale});
}
// The builtin kernel's float output: f32(f32(f32(acc) * scale) + bias[c]).
void builtin_hybrid_output(Writer& w, const Value& acc, ir::TensorId scale,
                           const ir::Shape& channel_shape, ir::TensorId out);
// The hybrid variants the exact forms cover: constant symmetric int8
// weights, float32 input and output, a constant float bias.
Check check_hybrid(const ir::Graph& g, const ir::Node& n, LinearOp op);
// Σ_k w[c, k] of a constant int8 weight with `channels` rows.
std::vector<int64_t> weight_row_sums(const ir::Tensor& weight, int64_t channels);
// The recurrent ops' builtin hybrid product (TFLite's BatchQuantizeFloats,
// then MatrixBatchVectorMultiplyAccumulate): each row of the float `x` (its
// last axis, `depth` elements) quantized at run time, symmetrically or with a
// zero point (`asymmetric`: the op's asymmetric_quantize_inputs), against the
// constant int8 `weights` [units_k, depth] of one scale s_w each, stacked
// along their units (an LSTM's gates). Returns the float
// f32(f32(Σ (q - z) w) * f32(sf * s_w)), x's shape with Σ units_k last.
ir::TensorId builtin_hybrid_rows(Writer& w, ir::TensorId x,
                                 const std::vector<ir::TensorId>& weights, bool asymmetric,
                                 const std::string& what);
// Nothing, or why the recurrent hybrid product cannot take `weight`: a
// constant int8 [units, depth] with one scale and zero point 0.
Check check_builtin_hybrid_weight(const ir::Tensor& weight);

// ---- table ops (one Gather) ----
// An 8-bit (256 entries) or int16 (65,536) table of the output integers for
// every input integer, indexed by the input as it is.
using TableFn = std::function<int64_t(int64_t q)>;
Status lower_unary_table(LowerContext& ctx, const ir::Node& n, const TableFn& fn);

// ---- integer copies (exact_copy.cc) ----
// The node's quantized tensors take the integer types they hold now, so that
// the op's own lowering, and the intermediates it makes like them, carry the
// integers (store_integers does the same for the rest after lowering).
void hold_integers(LowerContext& ctx, const ir::Node& n);
// The op's own lowering run on the integers: the exact form of ops whose
// TFLite kernel copies the integers unchanged (RESHAPE, TRANSPOSE, GATHER,
// SLICE, ...: the preflight's kSameScale / kReinterpret rules already refuse
// the parameters under which a kernel would requantize). Only for lowerings
// that make no constant of the data's type (PAD's value would be a float).
Status lower_copy(LowerContext& ctx, const ir::Node& n);
// lower_copy for ops whose ONNX operator ONNX Runtime runs on 8-bit integers
// and floats but not int16 (Resize, ReduceMax): int16 tensors go through
// float32, where every int16 is exact, and come back.
Status lower_copy_as_float(LowerContext& ctx, const ir::Node& n);
// The copies of ops whose kernels requantize an input whose parameters
// differ from the output's (uint8 CONCATENATION in LiteRT.js): every input
// quantized per tensor with the output's parameters, no fused activation.
Check check_equal_params(const ir::Graph& g, const ir::Node& n);
// The copies whose ONNX operator ONNX Runtime runs on 8-bit integers only
// (Resize, ReduceMax, ReduceMin): int16 is refused.
Check check_8bit(const ir::Graph& g, const ir::Node& n);

}  // namespace lite2onnx::ops::exact
