// The integer arithmetic of TFLite's quantized kernels, as the two TFLite
// runtimes compute it (docs/quantization-arithmetic.md: the table, §3
// XNNPACK, §4 TFLite's builtin kernels). --quantization exact computes tables
// and constants with it at conversion time; the per-element formulas are also
// what the ONNX arithmetic of core/ops/exact.h reproduces. Every float32 step
// is a float operation here (this file is compiled without contraction into
// fused multiply-adds), every integer step exact.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace lite2onnx::ops::qmath {

// ---- rounding ----
int64_t round_half_even(double v);         // nearbyint, lrintf (IEEE default rounding)
int64_t round_half_away(double v);         // std::round, TfLiteRound
int64_t floor_shift(int64_t x, int bits);  // x >> bits, arithmetic: floor(x / 2^bits)

// ---- TFLite's fixed-point multipliers (quantization_util.cc, common.h) ----
struct Multiplier {
  int32_t m = 0;  // Q31
  int shift = 0;  // > 0: left shift
};
// QuantizeMultiplier(double).
Multiplier quantize_multiplier(double real);
// gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT.
int32_t srdhm(int32_t a, int32_t b);
int32_t rdbpot(int32_t x, int exponent);
// MultiplyByQuantizedMultiplier: double rounding (gemmlowp, the default build).
int32_t mbqm(int32_t x, Multiplier m);
// The left shift MBQM applies for `m` (its shift above zero, mod 32).
int mbqm_left_shift(Multiplier m);
// The 16x8 kernels' multiplier, reduced to 16 bits.
int32_t reduced_multiplier(Multiplier m);

// TFLite's 8-bit ADD/SUB (left shift 20) and int16 ADD/SUB with general
// scales (left shift 15), §4.2: y = MBQM(MBQM((a - za) 2^L, a) +- MBQM((b - zb) 2^L, b), y) + zy.
struct TfliteAdd {
  Multiplier a, b, y;
  int left_shift = 20;
};
TfliteAdd tflite_add_params(float sa, float sb, float sy, int left_shift);

// ---- XNNPACK ----
// ADD/SUB (§3.2): y = floor((bias + a * ma + b * mb) / 2^shift) + zy, where
// bias = 2^(shift - 1) - ma * za - mb * zb; SUB negates b's scale.
struct XnnAdd {
  int64_t ma = 0, mb = 0;
  int shift = 0;
};
XnnAdd xnn_add_params(float sa, float sb, float sy, bool subtract);
// MEAN and SUM (§3.4): y = RNE(f32(f32(f32(sum) * inv) + zero_term)), saturated,
// where sum is the raw integers' and `count` how many were summed.
struct XnnReduce {
  float inv = 0, zero_term = 0;
};
// RESIZE_BILINEAR 8-bit (§3.7) along one axis of size `in` resized to `out`:
// per output index, the two input rows it reads and the weight (0..2048, 11
// fractional bits) of the second.
struct XnnBilinearAxis {
  std::vector<int64_t> top, bottom, weight;
};
XnnBilinearAxis xnn_bilinear_axis(int64_t in, int64_t out, bool align_corners,
                                  bool half_pixel_centers);
XnnReduce xnn_reduce_params(float sx, int64_t zx, float sy, int64_t zy, int64_t count, bool sum);
// The fp32 requantization scale of a convolution, fully connected or MUL:
// f32(f32(a * b) / y), float32 operations in C order.
float fp32_scale(float a, float b, float y);
// Requantizations with 8 fractional bits (QUANTIZE qx8 -> qx8, LEAKY_RELU): lrintf(256 * p).
int64_t xnn_multiplier8(float p);
// floor(((q - zx) * m + 128) / 256) + zy, clamped.
int64_t xnn_requantize8(int64_t q, int64_t zx, int64_t m, int64_t zy, int64_t lo, int64_t hi);
// A fused activation's bound v quantized as XNNPACK does: lrintf(clamp(f32(f32(v / s) + z))).
int64_t xnn_bound(float v, float s, int64_t z, int64_t lo, int64_t hi);
// ... and as TFLite's CalculateActivationRangeQuantized does: z + RHAZ(f32(v / s)), clamped.
int64_t tflite_bound(float v, float s, int64_t z, int64_t lo, int64_t hi);

// ---- tables of 8-bit (and int16) unary kernels ----
// The float functions the tables are built from (as the runtimes' libm computes
// them: double precision rounded to float, §3.5, §4.5).
float xnn_sigmoid(float x);
float tanh_f(float x);
float elu_f(float x);
// The new XNNPACK's table entry (§3.5): nearbyint(f32(f32(y * f32(1/sy)) + zy)), clamped.
int64_t xnn_lut_entry(float y, float sy, int64_t zy, int64_t lo, int64_t hi);
// The dequantized input of a table: f32(f32(q - z) * s) (XNNPACK) or f32(s * (q - z)).
float dequantize(int64_t q, float s, int64_t z);
// 8-bit SOFTMAX's float table (§4.8): entry d = expf(f32(-s_x * beta) * d), d = 0..255.
std::vector<float> softmax_exp_table(float sx, float beta);

// int16 LOGISTIC and TANH (activations.cc Prepare, §4.6; quant_math16.cc):
// multiplier 0 is the power-of-two input scale (2^-12; TANH also 2^-11,
// left_shift 1) that gemmlowp's fixed-point functions take, else the table's
// input (q * multiplier + 2^(left_shift - 1)) >> left_shift.
struct Int16Activation {
  int32_t multiplier = 0;
  int left_shift = 0;
};
Int16Activation int16_activation_params(float sx, bool tanh);
int64_t logistic16(int64_t q, const Int16Activation& p);
int64_t tanh16(int64_t q, const Int16Activation& p);
// gemmlowp's 16-bit fixed-point functions on raw values, the integer LSTM's
// ApplySigmoid (input F3) and ApplyTanh (input F<integer_bits>, 0..6): F0 results.
int64_t fixed_logistic16(int64_t raw);
int64_t fixed_tanh16(int64_t raw, int integer_bits);

// RSQRT int8 (§4.10): TFLite's fixed-point inverse square root of q - z_x
// (GetInvSqrtQuantizedMultiplierExp), rescaled to the output.
Multiplier inv_sqrt_multiplier(int32_t input, int reverse_shift);
int64_t rsqrt_int8(int64_t q, float sx, int64_t zx, float sy, int64_t zy);

// HARD_SWISH 8-bit (reference_ops::HardSwish, §4.7).
struct HardSwish {
  int32_t out16 = 0, reluish16 = 0;
  int out_exp = 0, reluish_exp = 0;
};
HardSwish hard_swish_params(float sx, float sy);
int64_t hard_swish(int64_t q, const HardSwish& p, int64_t zx, int64_t zy, int64_t lo, int64_t hi);

}  // namespace lite2onnx::ops::qmath
