// int16 LOGISTIC and TANH as TFLite computes them (quant_math.h): the
// interpolated 256-entry sigmoid table of reference_integer_ops::Logistic /
// Tanh, and gemmlowp's 16-bit fixed-point logistic / tanh that
// optimized_ops::Logistic / Tanh run for the power-of-two input scales
// (docs/quantization-arithmetic.md §4.6).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/ops/quant_math.h"

namespace lite2onnx::ops::qmath {

namespace {

// sigmoid(i / 24) in 0.16 fixed point, i = 0..255: TFLite's
// sigmoid_table_uint16 (tflite/kernels/internal/common.h, Apache-2.0), data
// the kernels read and no formula reproduces.
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
};

// ---- gemmlowp's FixedPoint<int16_t, k> on raw values (fixedpoint.h) ----
int16_t wrap16(int32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v)); }
int16_t saturate16(int32_t v) {
  return static_cast<int16_t>(std::clamp<int32_t>(v, std::numeric_limits<int16_t>::min(),
                                                  std::numeric_limits<int16_t>::max()));
}
// operator* of two FixedPoints: SaturatingRoundingDoublingHighMul.
int16_t mul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : 1 - (1 << 14);
  return wrap16((ab + nudge) / (1 << 15));
}
int16_t rounding_divide_by_pot16(int16_t x, int exponent) {
  const int32_t mask = (1 << exponent) - 1;
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return wrap16((x >> exponent) + (remainder > threshold ? 1 : 0));
}
// SaturatingRoundingMultiplyByPOT<exponent>.
int16_t multiply_by_pot16(int16_t x, int exponent) {
  if (exponent <= 0) return exponent == 0 ? x : rounding_divide_by_pot16(x, -exponent);
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int16_t>::max();
  if (x < -threshold) return std::numeric_limits<int16_t>::min();
  return wrap16(x * (1 << exponent));
}
// RescaleConstantInitializer: a Q31 constant rounded to 16 bits.
int16_t constant16(int32_t q31) {
  const int32_t mask = (1 << 16) - 1;
  const int32_t remainder = q31 & mask;
  const int32_t threshold = (mask >> 1) + (q31 < 0 ? 1 : 0);
  return wrap16((q31 >> 16) + (remainder > threshold ? 1 : 0));
}
int16_t rounding_half_sum16(int16_t a, int16_t b) {
  const int32_t sum = int32_t{a} + int32_t{b};
  return wrap16((sum + (sum >= 0 ? 1 : -1)) / 2);
}
constexpr int16_t kOne0 = std::numeric_limits<int16_t>::max();  // F0::One()
constexpr int16_t kOne2 = 1 << 13;                              // F2::One()

// exp(a) for a F0 in [-1/4, 0): a Taylor expansion around -1/8.
int16_t exp_on_negative_quarter(int16_t a) {
  const int16_t constant_term = constant16(1895147668);
  const int16_t one_third = constant16(715827883);
  const int16_t x = wrap16(a + (1 << 12));
  const int16_t x2 = mul16(x, x);
  const int16_t x3 = mul16(x2, x);
  const int16_t x4 = mul16(x2, x2);
  const int16_t x4_over_4 = multiply_by_pot16(x4, -2);
  const int16_t poly = multiply_by_pot16(wrap16(mul16(wrap16(x4_over_4 + x3), one_third) + x2), -1);
  return saturate16(constant_term + mul16(constant_term, wrap16(x + poly)));
}

// exp(a) for a F<integer_bits> a <= 0, as F0.
int16_t exp_on_negative_values(int16_t a, int integer_bits) {
  const int fractional_bits = 15 - integer_bits;
  const int16_t quarter = static_cast<int16_t>(1 << (fractional_bits - 2));
  const int16_t mod_quarter_minus_quarter = wrap16((a & (quarter - 1)) - quarter);
  int16_t result =
      exp_on_negative_quarter(multiply_by_pot16(mod_quarter_minus_quarter, integer_bits));
  const int16_t remainder = wrap16(mod_quarter_minus_quarter - a);
  // The barrel shifter: exp(-2^e) for each set bit of the remainder.
  constexpr struct {
    int exponent;
    int32_t multiplier;
  } kBarrel[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                 {2, 39332535},    {3, 720401},      {4, 242}};
  for (const auto& b : kBarrel)
    if (integer_bits > b.exponent && (remainder & (1 << (fractional_bits + b.exponent))) != 0)
      result = mul16(result, constant16(b.multiplier));
  // Beyond 5 integer bits gemmlowp clamps exp(a < -32) to 0.
  if (integer_bits > 5 && a < constant16(-(1 << (36 - integer_bits)))) result = 0;
  return a == 0 ? kOne0 : result;
}

// Newton-Raphson 1 / (1 + a) (logistic) or (1 - a) / (1 + a) (tanh), a F0 in (0, 1).
int16_t divide_one_plus(int16_t a, bool one_minus) {
  const int16_t half_denominator = rounding_half_sum16(a, kOne0);
  int16_t x = wrap16(constant16(1515870810) + mul16(half_denominator, constant16(-1010580540)));
  for (int i = 0; i < 3; ++i) {
    const int16_t one_minus_hx = wrap16(kOne2 - mul16(half_denominator, x));
    x = wrap16(x + multiply_by_pot16(mul16(x, one_minus_hx), 2));
  }
  return one_minus ? multiply_by_pot16(wrap16(x - kOne2), 2) : multiply_by_pot16(x, 1);
}

int16_t gemmlowp_logistic(int16_t a) {  // a: F3
  if (a == 0) return constant16(1 << 30);
  const int16_t magnitude = a > 0 ? a : wrap16(-a);
  const int16_t positive = divide_one_plus(exp_on_negative_values(wrap16(-magnitude), 3), false);
  return a > 0 ? positive : wrap16(kOne0 - positive);
}

int16_t gemmlowp_tanh(int16_t a, int integer_bits) {  // a: F<integer_bits>
  if (a == 0) return 0;
  const int16_t negative = a < 0 ? a : wrap16(-a);
  // ExactMulByPot<1>: the same raw value read with one more integer bit.
  const int16_t t = divide_one_plus(exp_on_negative_values(negative, integer_bits + 1), true);
  return a < 0 ? wrap16(-t) : t;
}

// The table's input: (q * multiplier + round) >> left_shift.
int32_t table_input(int64_t q, const Int16Activation& p) {
  const int64_t round = p.left_shift > 0 ? int64_t{1} << (p.left_shift - 1) : 0;
  return static_cast<int32_t>(floor_shift(q * p.multiplier + round, p.left_shift));
}

}  // namespace

Int16Activation int16_activation_params(float sx, bool tanh) {
  // CheckedLog2: the scale is a power of two within 1e-3 of its log2.
  const float log2 = std::log(sx) * (1.0f / std::log(2.0f));
  const float rounded = static_cast<float>(round_half_away(log2));
  const bool pot = std::abs(log2 - rounded) < 1e-3f;
  Int16Activation p;
  p.left_shift = 12 + static_cast<int>(rounded);
  if (pot && (p.left_shift == 0 || (tanh && p.left_shift == 1))) return p;
  // Otherwise the table's input scale 1 / (3 * 4096).
  double multiplier = static_cast<double>(sx) * 4096.0 * 3.0;
  p.left_shift = 0;
  while (multiplier <= 32767.0 / 2.0 && p.left_shift <= 30) {
    ++p.left_shift;
    multiplier *= 2.0;
  }
  p.multiplier = static_cast<int32_t>(multiplier);
  return p;
}

int64_t logistic16(int64_t q, const Int16Activation& p) {
  if (p.multiplier == 0) return gemmlowp_logistic(wrap16(static_cast<int32_t>(q)));
  const int32_t in = table_input(q, p);
  const uint32_t magnitude = static_cast<uint32_t>(std::abs(in));
  const uint32_t high = magnitude >> 9;
  uint32_t r = 0x7FFFu << 10;
  if (high < 255) {
    const uint32_t a = kSigmoidTable[high], b = kSigmoidTable[high + 1];
    r = (a << 9) + (magnitude & 0x1FF) * (b - a);
  }
  r = in >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return wrap16(static_cast<int32_t>(r >> 10));
}

int64_t tanh16(int64_t q, const Int16Activation& p) {
  if (p.multiplier == 0) {
    const int16_t x = wrap16(static_cast<int32_t>(q));
    return gemmlowp_tanh(p.left_shift == 1 ? multiply_by_pot16(x, 1) : x, 3);
  }
  const int32_t in = table_input(q, p);
  const uint32_t magnitude = static_cast<uint32_t>(std::abs(in));
  const uint32_t high = magnitude >> 8;
  int32_t r = 0xFFFF << 8;
  if (high < 255) {
    const uint32_t a = kSigmoidTable[high], b = kSigmoidTable[high + 1];
    r = static_cast<int32_t>((a << 8) + (magnitude & 0xFF) * (b - a));
  }
  r = in >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return wrap16(r >> 8);
}

int64_t fixed_logistic16(int64_t raw) {
  return gemmlowp_logistic(wrap16(static_cast<int32_t>(raw)));
}

int64_t fixed_tanh16(int64_t raw, int integer_bits) {
  return gemmlowp_tanh(wrap16(static_cast<int32_t>(raw)), integer_bits);
}

}  // namespace lite2onnx::ops::qmath
