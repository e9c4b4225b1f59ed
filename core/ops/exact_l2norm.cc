// --quantization exact, int8 L2_NORMALIZATION: TFLite's
// reference_integer_ops::L2Normalization (docs/quantization-arithmetic.md
// §4.10). Per row: acc = Σ (x - z_x)^2 in int32; the inverse square root of
// acc as a multiplier M and shift s (GetInvSqrtQuantizedMultiplierExp, five
// gemmlowp Newton-Raphson steps in F3); y = clamp(MBQM(x - z_x, M, s + 7)).
// XNNPACK takes no L2_NORMALIZATION, so both runtimes run this kernel.
//
// The steps that depend on acc only through its bit length b (how far acc is
// divided or multiplied by 4 into [2^27, 2^29), the shift, MBQM's left and
// right shifts) are tables indexed by b, which the row's 31 comparisons
// against 2^k count; the Newton-Raphson steps are int64 arithmetic.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ops/exact.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::exact {
namespace {

using ir::DataType;
using ir::TensorId;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

// What GetInvSqrtQuantizedMultiplierExp does for an input of bit length b.
struct BitLengthStep {
  int64_t divisor = 1, factor = 1;  // input / divisor * factor: into [2^27, 2^29)
  int64_t pre_factor = 1;           // a negative shift moved into the multiplier
  int64_t left = 1, right = 1;      // MBQM's 2^max(e, 0), 2^max(-e, 0), e = 7 - shift
};
BitLengthStep step_for(int b) {
  BitLengthStep s;
  int shift = 11, bits = b;
  int quarters = 0;
  while (bits >= 30) {  // input >= 2^29: divided by 4
    bits -= 2;
    ++quarters;
  }
  // The kernel: (clz(input) - 1) / 2 - 1 pairs of bits, clz = 32 - bits.
  const int pairs = (31 - bits) / 2 - 1;
  s.divisor = int64_t{1} << (2 * quarters);
  s.factor = int64_t{1} << (2 * pairs);
  shift += quarters - pairs;
  if (shift < 0) {
    s.pre_factor = int64_t{1} << -shift;
    shift = 0;
  }
  // The reverse shift -1 negates the shift; the kernel adds 7 (Q7 output).
  const int e = 7 - shift;
  s.left = int64_t{1} << (e > 0 ? e : 0);
  s.right = int64_t{1} << (e < 0 ? -e : 0);
  return s;
}

// The same table value for every bit length 0..31.
std::vector<int64_t> table(int64_t BitLengthStep::*field) {
  std::vector<int64_t> t;
  for (int b = 0; b <= 31; ++b) t.push_back(step_for(b).*field);
  return t;
}

// gemmlowp's SaturatingRoundingDoublingHighMul of two int32 values (the
// INT32_MIN * INT32_MIN case cannot arise: the operands here are positive
// F3 values or constants).
Value srdhm(Writer& w, const Value& a, const Value& b) {
  const Value product = w.mul(a, b);
  const Value nudged = w.add(product, w.select_negative(product, w.constant(1 - (int64_t{1} << 30)),
                                                        w.constant(int64_t{1} << 30)));
  return w.trunc_div(nudged, w.constant(int64_t{1} << 31));
}

// SaturatingRoundingMultiplyByPOT<exponent > 0>: x * 2^exponent saturated to int32.
Value saturating_shift(Writer& w, const Value& x, int exponent) {
  Value v = w.clip(w.mul(x, w.constant(int64_t{1} << exponent)), kInt32Min, kInt32Max);
  // The Newton-Raphson values stay far from INT32_MIN (they are positive):
  // a range that keeps the next product's nudge within int64 for the Writer.
  v.lo = kInt32Min + 1;
  return v;
}

// RoundingDivideByPOT(x, k) with 2^k a run-time value `p` and half = p / 2:
// RHAZ of x / p.
Value rounding_divide(Writer& w, const Value& x, const Value& p, const Value& half) {
  const Value zero = w.constant(0);
  const Value magnitude = w.select_negative(x, w.sub(zero, x), x);
  const Value q = w.floor_div(w.add(magnitude, half), p);
  return w.select_negative(x, w.sub(zero, q), q);
}

Status lower_l2_normalization_exact(LowerContext& ctx, const ir::Node& n) {
  hold_integers(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const Params px = params_of(x);
  const int64_t axis = ir::onnx_axis(x.layout, static_cast<int>(x.rank()) - 1);
  const int64_t depth = x.shape[static_cast<size_t>(x.rank() - 1)];
  Writer w(ctx, n);
  const Value input = w.sub(w.integers(n.inputs[0]), w.constant(px.zero));
  // acc = Σ input^2 over the row, kept as a size-1 axis.
  const Value squares = w.cast(w.mul(input, input), DataType::kInt32);
  Value acc = squares;
  acc.lo = 0;
  acc.hi = squares.hi * depth;
  acc.id = w.temp(DataType::kInt32, "sum_squares");
  ir::Node& sum = w.emit("ReduceSum", {squares.id}, acc.id, "sum_squares");
  sum.attrs.set("keepdims", int64_t{1});
  if (ctx.opset() >= 13)
    sum.inputs.push_back(ctx.const_i64(n.name + "/sum_axes", {axis}));
  else
    sum.attrs.set("axes", std::vector<int64_t>{axis});

  // The bit length b: how many of 2^0 .. 2^30 acc reaches (0..31).
  std::vector<int64_t> powers;
  for (int k = 0; k <= 30; ++k) powers.push_back(int64_t{1} << k);
  ir::Shape power_shape(x.rank(), 1);
  power_shape[static_cast<size_t>(axis)] = 31;
  const TensorId reached = w.temp(DataType::kBool, "reached");
  w.emit("GreaterOrEqual", {acc.id, w.tensor(w.channels(powers, power_shape), DataType::kInt32)},
         reached, "reached");
  const TensorId reached_int = w.temp(DataType::kInt32, "reached_int");
  w.emit("Cast", {reached}, reached_int, "reached_int")
      .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt32)});
  Value bits;
  bits.lo = 0;
  bits.hi = 31;
  bits.id = w.temp(DataType::kInt32, "bits");
  ir::Node& count = w.emit("ReduceSum", {reached_int}, bits.id, "bits");
  count.attrs.set("keepdims", int64_t{1});
  if (ctx.opset() >= 13)
    count.inputs.push_back(ctx.const_i64(n.name + "/bits_axes", {axis}));
  else
    count.attrs.set("axes", std::vector<int64_t>{axis});
  auto look = [&](int64_t BitLengthStep::*field) {
    std::vector<int64_t> t = table(field);
    const int64_t hi = *std::max_element(t.begin(), t.end());
    return w.lookup(bits, std::move(t), DataType::kInt64, 1, hi);
  };

  // The input normalized into [2^27, 2^29) (0 and 1 stay small).
  Value normalized =
      w.mul(w.floor_div(acc, look(&BitLengthStep::divisor)), look(&BitLengthStep::factor));
  normalized.lo = 0;
  normalized.hi = (int64_t{1} << 29) - 1;
  // half_input = RoundingDivideByPOT(input >> 1, 1) = ceil((input >> 1) / 2).
  const Value half_input =
      w.floor_div(w.add(w.floor_div(normalized, w.constant(2)), w.constant(1)), w.constant(2));
  // Newton-Raphson in F3: x = 1.5 x - (input / 2) x^3, five times from 1.0.
  const Value half_three = w.constant((int64_t{1} << 28) + (int64_t{1} << 27));
  Value estimate = w.constant(int64_t{1} << 28);
  for (int i = 0; i < 5; ++i) {
    const Value cube = saturating_shift(w, srdhm(w, srdhm(w, estimate, estimate), estimate), 6);
    Value difference = w.sub(srdhm(w, half_three, estimate), srdhm(w, half_input, cube));
    difference = wrap_int32(w, difference);
    estimate = saturating_shift(w, difference, 3);
  }
  // Times sqrt(2) / 2 (Q31); a negative shift moves into the multiplier (int32, wraps).
  Value multiplier =
      w.mul(srdhm(w, estimate, w.constant(1518500250)), look(&BitLengthStep::pre_factor));
  multiplier = wrap_int32(w, multiplier);
  // acc <= 1: the kernel's multiplier is INT32_MAX with shift 0 (the tables' e = 7).
  multiplier = w.select_negative(w.sub(acc, w.constant(2)), w.constant(kInt32Max), multiplier);
  multiplier.lo = kInt32Min + 1;

  // MBQM(input, M, 7 - shift): RoundingDivideByPOT(SRDHM(input * 2^left, M), right).
  const Value high = srdhm(w, w.mul(input, look(&BitLengthStep::left)), multiplier);
  const Value right = look(&BitLengthStep::right);
  const Value half = w.floor_div(right, w.constant(2));
  const Value y = rounding_divide(w, high, right, half);
  w.store(w.clip(y, -128, 127), n.outputs[0]);
  return w.result();
}

// int8 as TFLite's Prepare takes it (output scale 1/128, zero point 0);
// rows whose sum of squares stays within int32.
Check check_l2_normalization_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.quantized_type != DataType::kInt8 || y.quantized_type != DataType::kInt8 ||
      !per_tensor(x) || !per_tensor(y))
    return refuse(ReasonCode::kNotImplemented,
                  "L2_NORMALIZATION other than int8 per tensor has no integer form for "
                  "--quantization exact yet");
  if (params_of(y).zero != 0 || params_of(y).scale != 1.0f / 128.0f)
    return refuse(ReasonCode::kQuantization,
                  "an output other than scale 1/128, zero point 0 (TFLite refuses it)");
  if (x.rank() < 1) return refuse(ReasonCode::kShape, "a scalar input");
  const int64_t depth = x.shape[static_cast<size_t>(x.rank() - 1)];
  if (depth < 1 || depth > kInt32Max / (255 * 255))
    return refuse(ReasonCode::kShape, "a row whose sum of squares can pass int32");
  return std::nullopt;
}

}  // namespace

ExactForm l2_normalization_exact() {
  return {lower_l2_normalization_exact, check_l2_normalization_exact, InQdqGraphs::kQuantized};
}

}  // namespace lite2onnx::ops::exact
