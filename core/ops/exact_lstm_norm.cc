// --quantization exact: the integer LSTM's layer normalization of a gate
// (portable_tensor_utils.cc ApplyLayerNorm) in ONNX int64 arithmetic, bit
// for bit. Per batch row of n_cell int16 values v:
//
//   mean = (Σ v * 1024) / n            (C division: towards zero)
//   var  = (Σ v² * (2^20 / n) - mean²) / 2^20, the guard where it is below 1
//   (M, s) = GetInvSqrtQuantizedMultiplierExp(var, -1)   (per row, at run time)
//   y    = RDBPOT(SRDHM(1024 v - mean, M), s) * w + bias
//   out  = clamp16(MBQM(int32((y ± 512) / 1024), scale with shift + 12))
//
// The inverse square root is gemmlowp's fixed point as the kernel writes it:
// the input normalized by powers of four into [2^27, 2^29), five Newton
// steps on F3 values, times sqrt(2)/2.
#include <limits>

#include "core/ops/lstm.h"

namespace lite2onnx::ops::recurrent {

using exact::Value;
using ir::DataType;
using ir::TensorId;

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// int64 tensors and the few operations the normalization needs; every value
// stays within int64 (products of two int32 values at most), so no range
// bookkeeping: the callers' Values get their ranges from what the kernel's
// types allow.
class Int64 {
 public:
  explicit Int64(exact::Writer& w) : w_(w) {}

  TensorId k(int64_t v) { return w_.tensor(w_.constant(v), DataType::kInt64); }
  TensorId vec(std::vector<int64_t> v) {
    const auto size = static_cast<int64_t>(v.size());
    return w_.tensor(w_.channels(std::move(v), {size}), DataType::kInt64);
  }
  TensorId op(const char* type, std::vector<TensorId> in, DataType out_type = DataType::kInt64) {
    const TensorId out = w_.temp(out_type, type);
    last_ = &w_.emit(type, std::move(in), out, type);
    return out;
  }
  TensorId add(TensorId a, TensorId b) { return op("Add", {a, b}); }
  TensorId sub(TensorId a, TensorId b) { return op("Sub", {a, b}); }
  TensorId mul(TensorId a, TensorId b) { return op("Mul", {a, b}); }
  TensorId div(TensorId a, TensorId b) { return op("Div", {a, b}); }  // towards zero
  TensorId where(TensorId c, TensorId a, TensorId b) { return op("Where", {c, a, b}); }
  TensorId less(TensorId a, TensorId b) { return op("Less", {a, b}, DataType::kBool); }
  TensorId as_int64(TensorId b) {
    const TensorId out = op("Cast", {b});
    last().attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt64)});
    return out;
  }
  // Saturated to int32 (gemmlowp's saturating shifts left).
  TensorId saturate32(TensorId x) {
    return op("Min", {op("Max", {x, k(kInt32Min)}), k(kInt32Max)});
  }
  // static_cast<int32_t>: ((x + 2^31) mod 2^32) - 2^31 (Mod fmod 0 floors).
  TensorId wrap32(TensorId x) {
    const TensorId m = op("Mod", {add(x, k(int64_t{1} << 31)), k(int64_t{1} << 32)});
    last().attrs.set("fmod", int64_t{0});
    return sub(m, k(int64_t{1} << 31));
  }
  // gemmlowp's SaturatingRoundingDoublingHighMul of int32 values (neither
  // both -2^31 here: the kernel's operands are never).
  TensorId srdhm(TensorId a, TensorId b) {
    const TensorId p = mul(a, b);
    const TensorId nudge = where(less(p, k(0)), k(1 - (int64_t{1} << 30)), k(int64_t{1} << 30));
    return div(add(p, nudge), k(int64_t{1} << 31));
  }
  // RoundingDivideByPOT by `pow2` = 2^e (a tensor): half away from zero.
  TensorId rdbpot(TensorId x, TensorId pow2) {
    const TensorId half = div(pow2, k(2));
    const TensorId nudge = where(less(x, k(0)), sub(k(0), half), half);
    return div(add(x, nudge), pow2);
  }
  // Σ over the last axis of a [B, n] tensor, kept as [B, 1].
  TensorId row_sum(TensorId x) {
    std::vector<TensorId> in = {x};
    const bool axes_input = w_.ctx().opset() >= 13;
    if (axes_input) in.push_back(vec({-1}));
    const TensorId out = op("ReduceSum", std::move(in));
    last().attrs.set("keepdims", int64_t{1});
    if (!axes_input) last().attrs.set("axes", std::vector<int64_t>{-1});
    return out;
  }
  // table[index] of a constant table.
  TensorId lookup(std::vector<int64_t> table, TensorId index) {
    return op("Gather", {vec(std::move(table)), index});
  }

 private:
  ir::Node& last() { return *last_; }
  exact::Writer& w_;
  ir::Node* last_ = nullptr;
};

// GetInvSqrtQuantizedMultiplierExp(var, reverse_shift -1) per row: the
// multiplier and the right shift (>= 0) as 2^shift.
struct InvSqrt {
  TensorId multiplier, pow2;
};

InvSqrt inverse_sqrt(Int64& a, TensorId var) {
  // input >= 2^29 (at most once for an int32): /4 and one more shift.
  const TensorId big = a.op("GreaterOrEqual", {var, a.k(int64_t{1} << 29)}, DataType::kBool);
  const TensorId in1 = a.where(big, a.div(var, a.k(4)), var);
  const TensorId shift0 = a.add(a.k(11), a.as_int64(big));
  // Its bit length L (32 - CountLeadingZeros): how many of 2^0..2^30 it reaches.
  std::vector<int64_t> powers;
  for (int b = 0; b <= 30; ++b) powers.push_back(int64_t{1} << b);
  const TensorId reached = a.op("GreaterOrEqual", {in1, a.vec(powers)}, DataType::kBool);
  const TensorId length = a.row_sum(a.as_int64(reached));
  // left_shift_bit_pairs = (31 - L) / 2 - 1; the input times 4^that.
  const TensorId pairs = a.sub(a.div(a.sub(a.k(31), length), a.k(2)), a.k(1));
  const TensorId shift1 = a.sub(shift0, pairs);
  std::vector<int64_t> fours;
  for (int b = 0; b < 16; ++b) fours.push_back(int64_t{1} << (2 * b));
  const TensorId in2 = a.mul(in1, a.lookup(fours, pairs));
  // F3 input (raw >> 1) and its half (SaturatingRoundingMultiplyByPOT<-1>).
  const TensorId input = a.div(in2, a.k(2));
  const TensorId half_input = a.div(a.add(input, a.k(1)), a.k(2));
  const TensorId half_three = a.k((int64_t{1} << 28) + (int64_t{1} << 27));
  TensorId x = a.k(int64_t{1} << 28);  // F3 one
  for (int i = 0; i < 5; ++i) {
    // x3 = Rescale<3>(x * x * x): F9 to F3, a saturating shift left by 6.
    const TensorId x3 = a.saturate32(a.mul(a.srdhm(a.srdhm(x, x), x), a.k(64)));
    // x = Rescale<3>(1.5 x - half_input x3): F6 to F3, shift left by 3.
    const TensorId d = a.sub(a.srdhm(half_three, x), a.srdhm(half_input, x3));
    x = a.saturate32(a.mul(d, a.k(8)));
  }
  x = a.srdhm(x, a.k(1518500250));  // times sqrt(2) / 2 (F0)
  // A negative shift moves into the multiplier (an int32 shift left, wrapping).
  const TensorId negative = a.less(shift1, a.k(0));
  std::vector<int64_t> twos;
  for (int b = 0; b < 16; ++b) twos.push_back(int64_t{1} << b);
  const TensorId up = a.where(negative, a.sub(a.k(0), shift1), a.k(0));
  TensorId m = a.where(negative, a.wrap32(a.mul(x, a.lookup(twos, up))), x);
  TensorId shift = a.where(negative, a.k(0), shift1);
  // An input of 1 or less: the largest multiplier, shift 0.
  const TensorId tiny = a.less(var, a.k(2));
  m = a.where(tiny, a.k(kInt32Max), m);
  shift = a.where(tiny, a.k(0), shift);
  std::vector<int64_t> pow2;
  for (int b = 0; b < 32; ++b) pow2.push_back(int64_t{1} << b);
  return {m, a.lookup(pow2, shift)};
}

}  // namespace

Value integer_layer_norm(exact::Writer& w, const Value& gate, const IntegerLayerNorm& p,
                         int64_t units) {
  Int64 a(w);
  const TensorId v = w.tensor(gate, DataType::kInt64);
  const TensorId sum = a.row_sum(v);
  const TensorId sum_sq = a.row_sum(a.mul(v, v));
  const TensorId mean = a.div(a.mul(sum, a.k(1024)), a.k(units));
  const TensorId variance =
      a.sub(a.mul(sum_sq, a.k((int64_t{1} << 20) / units)), a.mul(mean, mean));
  TensorId var = a.div(variance, a.k(int64_t{1} << 20));
  var = a.where(a.less(var, a.k(1)), a.k(p.variance_guard), var);
  const InvSqrt inv = inverse_sqrt(a, var);
  const TensorId shifted = a.sub(a.mul(v, a.k(1024)), mean);
  const TensorId rescaled = a.rdbpot(a.srdhm(shifted, inv.multiplier), inv.pow2);
  const TensorId y = a.add(a.mul(rescaled, a.vec(p.weights)), a.vec(p.bias));
  const TensorId half = a.where(a.op("Greater", {y, a.k(0)}, DataType::kBool), a.k(512), a.k(-512));
  Value scaled;
  scaled.type = DataType::kInt64;
  scaled.lo = kInt32Min;
  scaled.hi = kInt32Max;
  scaled.id = a.wrap32(a.div(a.add(y, half), a.k(1024)));
  const qmath::Multiplier m{p.scale.m, p.scale.shift + 12};
  return w.clip(exact::mbqm(w, scaled, std::span(&m, 1), {}), -32768, 32767);
}

}  // namespace lite2onnx::ops::recurrent
