// --quantization exact, int16 MEAN and SUM: TFLite's builtin kernels, which
// LiteRT.js runs for int16 (XNNPACK takes 8-bit only;
// docs/quantization-arithmetic.md §4.4). The raw integers' int32 sum is the
// caller's (a ReduceSum); zero points are 0 (TFLite requires it).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// MEAN: reference_ops::QuantizedMeanOrSum folds 1/N into the multiplier of
// double(s_x) / double(s_y): k = min(floor(log2 N), 32, 31 + shift),
// M' = trunc(M * 2^k / N), shift' = shift - k.
qmath::Multiplier mean_multiplier(const Params& px, const Params& py, int64_t count) {
  qmath::Multiplier m =
      qmath::quantize_multiplier(static_cast<double>(px.scale) / static_cast<double>(py.scale));
  const int k = std::min(
      {static_cast<int>(std::bit_width(static_cast<uint64_t>(count))) - 1, 32, 31 + m.shift});
  m.m = static_cast<int32_t>((static_cast<int64_t>(m.m) << k) / count);
  m.shift -= k;
  return m;
}

}  // namespace

Value int16_mean_or_sum(Writer& w, const Value& total, int64_t count, const Params& px,
                        const Params& py, bool sum) {
  if (!sum) {
    const qmath::Multiplier m[] = {mean_multiplier(px, py, count)};
    return w.clip(w.add(mbqm(w, total, m, {}), w.constant(py.zero)), py.lo, py.hi);
  }
  // SUM: optimized_ops::QuantizedMeanOrSum in float32: scale = f32(s_x / s_y),
  // y = (int) RHAZ(f32(f32(f32(sum) * scale) + f32(f32(-z_x * scale) * N))) + z_y.
  const float scale = px.scale / py.scale;
  const float bias = (static_cast<float>(-px.zero) * scale) * static_cast<float>(count);
  const ir::TensorId v = w.fadd(w.fmul(w.to_float(total), {scale}, {}), {bias}, {});
  Value rounded;
  rounded.type = ir::DataType::kInt32;
  rounded.lo = -kInt32Max;
  rounded.hi = kInt32Max;
  rounded.id = w.temp(ir::DataType::kInt32, "rounded");
  w.emit("Cast", {w.round_half_away(v, ir::DataType::kFloat32)}, rounded.id, "rounded")
      .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt32)});
  return w.clip(w.add(rounded, w.constant(py.zero)), py.lo, py.hi);
}

Check check_int16_mean_or_sum(int64_t count, const Params& px, const Params& py, bool sum) {
  if (px.zero != 0 || py.zero != 0)
    return refuse(ReasonCode::kQuantization, "int16 zero points other than 0 (TFLite refuses)");
  // The kernels sum in int32.
  if (count > (int64_t{1} << 16))
    return refuse(ReasonCode::kLimit, "more than 2^16 int16 elements reduced into one");
  if (!sum) {
    // MultiplyByQuantizedMultiplier shifts the int32 sum left first.
    const int left = std::max(mean_multiplier(px, py, count).shift, 0);
    if (left > 15 || count * 32768 > (kInt32Max >> left))
      return refuse(ReasonCode::kQuantization,
                    "a mean multiplier whose shifted int32 sum would wrap");
    return std::nullopt;
  }
  // The float sum converted to int32 must stay within int32 (a float-to-int
  // conversion out of range is undefined).
  const double bound = static_cast<double>(count) * 32768.0 * (px.scale / py.scale);
  if (!(bound < 2147483520.0))
    return refuse(ReasonCode::kQuantization, "a sum scaled beyond int32");
  return std::nullopt;
}

}  // namespace lite2onnx::ops::exact
