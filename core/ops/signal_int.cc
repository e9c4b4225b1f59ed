// signal::Int (signal.h): the int64 vocabulary the Signal ops' lowerings
// share.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/signal.h"

namespace lite2onnx::ops::signal {

using ir::DataType;
using ir::TensorId;

namespace {
constexpr DataType kI64 = DataType::kInt64;
}  // namespace

TensorId Int::c(int64_t v) { return b_.ints({v}, ir::Shape{}); }
TensorId Int::add(TensorId a, TensorId b) { return b_.add("Add", {a, b}, kI64); }
TensorId Int::sub(TensorId a, TensorId b) { return b_.add("Sub", {a, b}, kI64); }
TensorId Int::mul(TensorId a, TensorId b) { return b_.add("Mul", {a, b}, kI64); }
TensorId Int::div_nonneg(TensorId a, TensorId b) { return b_.add("Div", {a, b}, kI64); }

TensorId Int::shr(TensorId x, int bits) {
  if (bits == 0) return x;
  // floor(x / 2^bits) = (x + 2^60) / 2^bits - 2^(60 - bits): the sum is not
  // negative, where Div's truncation is a floor.
  const int64_t offset = int64_t{1} << 60;
  return sub(div_nonneg(add_c(x, offset), c(int64_t{1} << bits)), c(offset >> bits));
}

TensorId Int::shr_wide(TensorId x, int bits) {
  if (bits == 0) return x;
  // (x - x mod 2^bits) / 2^bits: Mod (fmod 0) takes the divisor's sign, so
  // the difference is a multiple of 2^bits at or below x, divided exactly.
  TensorId d = c(int64_t{1} << bits);
  return div_nonneg(sub(x, b_.add("Mod", {x, d}, kI64)), d);
}

TensorId Int::pow2(TensorId s) {
  std::vector<int64_t> powers;
  for (int k = 0; k <= 62; ++k) powers.push_back(int64_t{1} << k);
  return lookup(s, std::move(powers));
}

TensorId Int::shr_var(TensorId x, TensorId s) { return div_nonneg(x, pow2(s)); }
TensorId Int::shl_var(TensorId x, TensorId s) { return mul(x, pow2(s)); }

TensorId Int::wrap(TensorId x, DataType type) { return from(b_.cast(x, type)); }

TensorId Int::min(TensorId a, TensorId b) { return b_.add("Min", {a, b}, kI64); }
TensorId Int::max(TensorId a, TensorId b) { return b_.add("Max", {a, b}, kI64); }

TensorId Int::clip(TensorId x, int64_t lo, int64_t hi) { return min(max(x, c(lo)), c(hi)); }

TensorId Int::where(TensorId cond, TensorId a, TensorId b) {
  return b_.add("Where", {cond, a, b}, kI64);
}

TensorId Int::less(TensorId a, TensorId b) { return b_.add("Less", {a, b}, DataType::kBool); }

TensorId Int::msb(TensorId x, int bits) {
  // 1 + floor(log2 x) for x > 0: the count of k in [0, bits) with 2^k <= x.
  std::vector<int64_t> powers;
  for (int k = 0; k < bits; ++k) powers.push_back(int64_t{1} << k);
  TensorId expanded = b_.add("Unsqueeze", {x, b_.ints({-1})}, kI64);
  TensorId at_or_below =
      b_.add("GreaterOrEqual", {expanded, b_.ints(std::move(powers))}, DataType::kBool);
  TensorId count = b_.add("ReduceSum", {b_.cast(at_or_below, kI64), b_.ints({-1})}, kI64,
                          {{"keepdims", int64_t{0}}});
  // GCC's 32 - __builtin_clz path: 32 for x = 0.
  return where(b_.add("Equal", {x, c(0)}, DataType::kBool), c(32), count);
}

TensorId Int::lookup(TensorId i, std::vector<int64_t> table) {
  return b_.add("Gather", {b_.ints(std::move(table)), i}, kI64, {{"axis", int64_t{0}}});
}

}  // namespace lite2onnx::ops::signal
