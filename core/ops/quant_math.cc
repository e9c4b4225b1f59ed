// TFLite's and XNNPACK's quantized arithmetic (see quant_math.h). Ported from
// the formulas of docs/quantization-arithmetic.md, which the probe
// (tests/numeric/quant_probe/ref/*.mjs) checks against both runtimes.
#include "core/ops/quant_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lite2onnx::ops::qmath {
namespace {

// A double as an int64 without undefined behaviour for values beyond it
// (NaN reads as 0): results are clamped to 8- or 16-bit ranges after.
int64_t to_int(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  return static_cast<int64_t>(std::clamp(v, -kLimit, kLimit));
}

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return std::min(hi, std::max(lo, v)); }

// C's int32 arithmetic wrapping around (TFLite's x * (1 << left_shift)).
int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

}  // namespace

int64_t round_half_even(double v) { return to_int(std::nearbyint(v)); }
int64_t round_half_away(double v) { return to_int(std::round(v)); }

int64_t floor_shift(int64_t x, int bits) {
  if (bits <= 0) return x;
  const int64_t d = int64_t{1} << bits;
  const int64_t q = x / d;
  return q * d > x ? q - 1 : q;
}

Multiplier quantize_multiplier(double real) {
  if (real == 0 || !std::isfinite(real)) return {};
  int shift = 0;
  const double q = std::frexp(real, &shift);
  int64_t fixed = round_half_away(q * static_cast<double>(int64_t{1} << 31));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  return {static_cast<int32_t>(fixed), shift};
}

int32_t srdhm(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min())
    return std::numeric_limits<int32_t>::max();
  const int64_t ab = int64_t{a} * int64_t{b};
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30);
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // C division truncates
}

int32_t rdbpot(int32_t x, int exponent) {
  if (exponent <= 0) return x;
  if (exponent > 31) exponent = 31;
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = int64_t{x} & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>(floor_shift(x, exponent) + (remainder > threshold ? 1 : 0));
}

int mbqm_left_shift(Multiplier m) {
  // TFLite's int32 `1 << left_shift`: a shift count of 32 or more is undefined
  // behaviour in C++, and x86 and WebAssembly shift by the count mod 32.
  return std::max(m.shift, 0) & 31;
}

int32_t mbqm(int32_t x, Multiplier m) {
  const int right = std::max(-m.shift, 0);
  return rdbpot(srdhm(wrap32(int64_t{x} * (int64_t{1} << mbqm_left_shift(m))), m.m), right);
}

int32_t reduced_multiplier(Multiplier m) {
  return m.m < 0x7FFF0000 ? static_cast<int32_t>((int64_t{m.m} + (1 << 15)) >> 16) : 0x7FFF;
}

TfliteAdd tflite_add_params(float sa, float sb, float sy, int left_shift) {
  // add.cc Prepare: twice the larger scale, formed in float, then the
  // multipliers in double.
  const double twice = static_cast<double>(2 * std::max(sa, sb));
  return {quantize_multiplier(static_cast<double>(sa) / twice),
          quantize_multiplier(static_cast<double>(sb) / twice),
          quantize_multiplier(
              twice / (static_cast<double>(int64_t{1} << left_shift) * static_cast<double>(sy))),
          left_shift};
}

XnnAdd xnn_add_params(float sa, float sb, float sy, bool subtract) {
  const float as = sa / sy;
  const float bs = subtract ? -(sb / sy) : sb / sy;
  // 21-bit multipliers: the shift puts the larger one's exponent at 20
  // (scaling by 2^shift is exact, lrintf rounds half to even).
  const int shift = 20 - std::ilogb(std::max(std::fabs(as), std::fabs(bs)));
  auto multiplier = [&](float v) {
    const int64_t m = round_half_even(std::ldexp(static_cast<double>(std::fabs(v)), shift));
    return v < 0 ? -m : m;
  };
  return {multiplier(as), multiplier(bs), shift};
}

XnnBilinearAxis xnn_bilinear_axis(int64_t in, int64_t out, bool align_corners,
                                  bool half_pixel_centers) {
  const int64_t adjust = align_corners && out != 1 ? 1 : 0;
  const float scale = static_cast<float>(in - adjust) / static_cast<float>(out - adjust);
  const bool legacy = align_corners || !half_pixel_centers;
  const float offset = 0.5f * scale - 0.5f;
  const float last = static_cast<float>(in - 1);
  XnnBilinearAxis axis;
  for (int64_t v = 0; v < out; ++v) {
    const float scaled = static_cast<float>(v) * scale;
    const float pos = legacy ? std::min(scaled, last) : std::clamp(scaled + offset, 0.0f, last);
    const auto top = static_cast<int64_t>(pos);  // truncation, pos >= 0
    axis.top.push_back(top);
    axis.bottom.push_back(std::min(top + 1, in - 1));
    axis.weight.push_back(round_half_even((pos - static_cast<float>(top)) * 2048.0f));
  }
  return axis;
}

XnnReduce xnn_reduce_params(float sx, int64_t zx, float sy, int64_t zy, int64_t count, bool sum) {
  const float base = sx / sy;
  const float inv = sum ? base : base * (1.0f / static_cast<float>(count));
  const float shifted = static_cast<float>(count * zx) * inv;
  return {inv, static_cast<float>(zy) - shifted};
}

float fp32_scale(float a, float b, float y) {
  const float product = a * b;
  return product / y;
}

int64_t xnn_multiplier8(float p) { return round_half_even(256.0f * p); }

int64_t xnn_requantize8(int64_t q, int64_t zx, int64_t m, int64_t zy, int64_t lo, int64_t hi) {
  return clamp(floor_shift((q - zx) * m + 128, 8) + zy, lo, hi);
}

int64_t xnn_bound(float v, float s, int64_t z, int64_t lo, int64_t hi) {
  float q = v / s + static_cast<float>(z);
  q = std::clamp(q, static_cast<float>(lo), static_cast<float>(hi));
  return round_half_even(q);
}

int64_t tflite_bound(float v, float s, int64_t z, int64_t lo, int64_t hi) {
  const float q = v / s;
  if (std::isinf(q)) return q > 0 ? hi : lo;
  return clamp(z + round_half_away(q), lo, hi);
}

float xnn_sigmoid(float x) {
  if (x > 100) return 1;
  if (x < -100) return 0;
  const double e = std::exp(static_cast<double>(x));
  return static_cast<float>(e / (1 + e));
}

float tanh_f(float x) { return static_cast<float>(std::tanh(static_cast<double>(x))); }

float elu_f(float x) { return x < 0 ? static_cast<float>(std::expm1(static_cast<double>(x))) : x; }

int64_t xnn_lut_entry(float y, float sy, int64_t zy, int64_t lo, int64_t hi) {
  const float inv = 1.0f / sy;
  const float scaled = y * inv;
  const float shifted = scaled + static_cast<float>(zy);
  return clamp(round_half_even(shifted), lo, hi);
}

float dequantize(int64_t q, float s, int64_t z) { return static_cast<float>(q - z) * s; }

std::vector<float> softmax_exp_table(float sx, float beta) {
  const float scale = -sx * beta;
  std::vector<float> table(256);
  for (int d = 0; d < 256; ++d) {
    const float x = scale * static_cast<float>(d);
    table[static_cast<size_t>(d)] = static_cast<float>(std::exp(static_cast<double>(x)));
  }
  return table;
}

namespace {

int32_t srdhm16(int32_t a, int32_t b) {
  if (a == -32768 && b == -32768) return 32767;
  const int32_t ab = a * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : 1 - (1 << 14);
  return (ab + nudge) / 32768;
}

int32_t saturate16(int64_t v) { return static_cast<int32_t>(clamp(v, -32768, 32767)); }

// DownScaleInt32ToInt16Multiplier.
int32_t down_scale16(int32_t m) {
  return m >= 2147483647 - 32768 ? 32767 : static_cast<int32_t>((int64_t{m} + 32768) >> 16);
}

}  // namespace

namespace {

// gemmlowp's SaturatingRoundingMultiplyByPOT on int32.
int32_t saturating_pow2(int32_t x, int exponent) {
  if (exponent == 0) return x;
  if (exponent < 0) return rdbpot(x, -exponent);
  const int64_t threshold = (int64_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return x * (1 << exponent);
}

}  // namespace

Multiplier inv_sqrt_multiplier(int32_t input, int reverse_shift) {
  if (input <= 1) return {std::numeric_limits<int32_t>::max(), 0};
  int shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++shift;
  }
  const int pairs = (__builtin_clz(static_cast<uint32_t>(input)) - 1) / 2 - 1;
  shift -= pairs;
  input <<= 2 * pairs;
  // Newton-Raphson in gemmlowp's F3: x = 1.5 x - (input / 2) x^3.
  const int32_t half_input = saturating_pow2(input >> 1, -1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = saturating_pow2(srdhm(srdhm(x, x), x), 6);
    x = saturating_pow2(wrap32(int64_t{srdhm(half_three, x)} - srdhm(half_input, x3)), 3);
  }
  x = srdhm(x, 1518500250);  // sqrt(2) / 2 in Q31
  if (shift < 0) {
    x = wrap32(int64_t{x} << -shift);
    shift = 0;
  }
  return {x, shift * reverse_shift};
}

int64_t rsqrt_int8(int64_t q, float sx, int64_t zx, float sy, int64_t zy) {
  const auto value = static_cast<int32_t>(q - zx);
  // 0 is 127 in the kernel; a negative value fails its invocation (no answer to match).
  if (value <= 0) return 127;
  const Multiplier inv = inv_sqrt_multiplier(value, -1);
  const int32_t data = mbqm(1, {inv.m, inv.shift + 20});
  const Multiplier m = quantize_multiplier(1.0 / static_cast<double>(std::sqrt(sx) * sy));
  return clamp(int64_t{mbqm(data, {m.m, m.shift - 20})} + zy, -128, 127);
}

HardSwish hard_swish_params(float sx, float sy) {
  const float hires = (1.0f / 128.0f) * sx;
  const float out = hires / sy;
  const float reluish = hires / (3.0f / 32768.0f);
  const Multiplier om = quantize_multiplier(out), rm = quantize_multiplier(reluish);
  return {down_scale16(om.m), down_scale16(rm.m), om.shift, rm.shift};
}

int64_t hard_swish(int64_t q, const HardSwish& p, int64_t zx, int64_t zy, int64_t lo, int64_t hi) {
  const int32_t in = static_cast<int16_t>(static_cast<uint16_t>(q - zx));
  const int32_t high = static_cast<int16_t>(static_cast<uint16_t>(in * 128));
  const int32_t pre = srdhm16(high, p.out16);
  int32_t r = high;
  if (p.reluish_exp > 0) r = saturate16(int64_t{r} << (p.reluish_exp - 1));
  r = srdhm16(r, p.reluish16);
  if (p.reluish_exp > 0) r = saturate16(int64_t{r} * 2);
  if (p.reluish_exp < 0) r = rdbpot(r, -p.reluish_exp);
  r = (r + 32768) >> 1;
  // SaturatingDoublingHighMul truncates.
  const int32_t product =
      (r == -32768 && pre == -32768) ? 32767 : static_cast<int32_t>((int64_t{r} * pre) / 32768);
  return clamp(int64_t{rdbpot(product, -p.out_exp)} + zy, lo, hi);
}

}  // namespace lite2onnx::ops::qmath
