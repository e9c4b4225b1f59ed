// SignalRfft (tflite-micro signal/micro/kernels/rfft.cc, signal/src/
// rfft_int16.cc): each row of the int16 input, zero-padded to fft_length,
// through kissfft v130's kiss_fftr built with FIXED_POINT=16 (TFLM's
// kiss_fft_wrappers), as ONNX int64 arithmetic with every int16 store's
// wrap-around, so the spectrum is the kernel's bit for bit:
//   - the complex FFT of fft_length / 2 points (even samples real, odd
//     imaginary): kf_work's decimation as one Gather of the input, then each
//     stage's butterflies (kf_bfly4, kf_bfly2) over all sub-transforms at
//     once, with C_FIXDIV's scaling by the radix and C_MUL's rounding;
//   - kiss_fftr's split into the real spectrum with its super twiddles.
// The twiddles are computed as kiss_fft_alloc computes them (floor(0.5 +
// 32767 * cos(phase)) in double). Lengths whose factors are all 4 and 2
// (powers of two) are converted; kissfft's radix-3, -5 and generic
// butterflies are not.
#include <cmath>
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/signal.h"

namespace lite2onnx::ops::signal {

using ir::DataType;
using ir::TensorId;
using Kind = CustomField::Kind;

namespace {

constexpr DataType kI64 = DataType::kInt64;
constexpr int64_t kMaxFft = int64_t{1} << 16;
constexpr int64_t kSampMax = 32767;
// kissfft's pi literals (kiss_fft_alloc, kiss_fftr_alloc), as doubles.
constexpr double kPi = 3.141592653589793238462643383279502884197169399375105820974944;
constexpr double kPiR = 3.14159265358979323846264338327;

const CustomField kFields[] = {
    {"T", Kind::kInt, true, 0, 0, 255},
    {"fft_length", Kind::kInt, true, 0, 8, static_cast<double>(kMaxFft)},
};

constexpr int64_t kTensorTypeInt16 = 7;  // tflite::TensorType_INT16

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// kf_factor: radix and remaining length, outermost first.
std::vector<std::pair<int64_t, int64_t>> factors(int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t p = 4;
  const auto floor_sqrt = static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(n))));
  do {
    while (n % p) {
      p = p == 4 ? 2 : p == 2 ? 3 : p + 2;
      if (p > floor_sqrt) p = n;
    }
    n /= p;
    out.emplace_back(p, n);
  } while (n > 1);
  return out;
}

// kf_work's reads: the input element each output position starts from.
void decimate(const std::vector<std::pair<int64_t, int64_t>>& f, size_t depth, int64_t out,
              int64_t in, int64_t stride, std::vector<int64_t>& order) {
  const auto [p, m] = f[depth];
  for (int64_t k = 0; k < p; ++k) {
    if (m == 1)
      order[static_cast<size_t>(out + k)] = in + k * stride;
    else
      decimate(f, depth + 1, out + k * m, in + k * stride, stride * p, order);
  }
}

std::pair<int64_t, int64_t> cexp(double phase) {
  return {static_cast<int64_t>(std::floor(.5 + kSampMax * std::cos(phase))),
          static_cast<int64_t>(std::floor(.5 + kSampMax * std::sin(phase)))};
}

Check check_rfft(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (n.attrs.get_int("T") != kTensorTypeInt16 || x.dtype != DataType::kInt16 ||
      y.dtype != DataType::kInt16)
    return refuse(ReasonCode::kType,
                  "only the int16 RFFT (kissfft fixed point) is converted; float32 and int32 "
                  "are not");
  const int64_t fft = n.attrs.get_int("fft_length");
  if (!power_of_two(fft))
    return refuse(ReasonCode::kOperands,
                  "fft_length " + std::to_string(fft) +
                      " is no power of two (kissfft's radix-3, -5 and generic butterflies are "
                      "not converted)");
  if (!x.has_rank || x.rank() < 1 || !ir::static_shape(x) || !y.has_rank || y.rank() != x.rank() ||
      !ir::static_shape(y))
    return refuse(ReasonCode::kShape, "input and output need static shapes of one rank");
  const int64_t length = x.shape.back();
  const int64_t rows = length > 0 ? ir::element_count(x.shape).value_or(0) / length : 0;
  if (length < 1 || length > fft)
    return refuse(ReasonCode::kShape, "the input's last dimension must be 1..fft_length");
  if (y.shape.back() != fft + 2 || ir::element_count(y.shape).value_or(0) != rows * (fft + 2))
    return refuse(ReasonCode::kShape,
                  "the output needs fft_length + 2 values (re, im of fft_length / 2 + 1 bins) "
                  "per input row");
  if (rows * fft > (int64_t{1} << 24))
    return refuse(ReasonCode::kShape, "rows x fft_length beyond 2^24");
  return {};
}

// Butterfly arithmetic on complex tensors [..., 2] (re, im) of int16 values
// in int64.
class Complex {
 public:
  explicit Complex(Int& x) : x_(x), b_(x.builder()) {}

  // C_FIXDIV(c, radix): sround(c * (32767 / radix)).
  TensorId fixdiv(TensorId c, int64_t radix) { return sround(x_.mul_c(c, kSampMax / radix)); }
  // C_MUL(m, a, w): re = sround(a.r w.r - a.i w.i), im = sround(a.r w.i + a.i w.r);
  // `wr` holds (w.r, w.r), `wi` (-w.i, w.i).
  TensorId mul(TensorId a, TensorId wr, TensorId wi) {
    return sround(x_.add(x_.mul(a, wr), x_.mul(swap(a), wi)));
  }
  TensorId add(TensorId a, TensorId b) { return x_.wrap16(x_.add(a, b)); }
  TensorId sub(TensorId a, TensorId b) { return x_.wrap16(x_.sub(a, b)); }
  // (a.i, -a.r).
  TensorId rotate(TensorId a) { return x_.mul(swap(a), b_.ints({1, -1})); }
  TensorId swap(TensorId a) {
    return b_.add("Gather", {a, b_.ints({1, 0})}, kI64, {{"axis", int64_t{-1}}});
  }

 private:
  // (kiss_fft_scalar)((x + 2^14) >> 15).
  TensorId sround(TensorId v) { return x_.wrap16(x_.shr(x_.add_c(v, 1 << 14), 15)); }
  Int& x_;
  NodeBuilder& b_;
};

// Twiddle constants of one butterfly input: (w.r, w.r) and (-w.i, w.i) for
// each of the stage's m positions, shaped [1, 1, 1, m, 2].
std::pair<TensorId, TensorId> twiddles(NodeBuilder& b, int64_t n, int64_t q, int64_t stride,
                                       int64_t m) {
  std::vector<int64_t> wr, wi;
  for (int64_t u = 0; u < m; ++u) {
    const int64_t i = q * u * stride;
    const auto [re, im] = cexp(-2 * kPi * static_cast<double>(i) / static_cast<double>(n));
    wr.insert(wr.end(), {re, re});
    wi.insert(wi.end(), {-im, im});
  }
  return {b.ints(std::move(wr), ir::Shape{1, 1, 1, m, 2}),
          b.ints(std::move(wi), ir::Shape{1, 1, 1, m, 2})};
}

// One stage: kf_bfly4 or kf_bfly2 over the `stride` sub-transforms of p * m
// points each; `z` is [rows, n, 2].
TensorId stage(NodeBuilder& b, Complex& c, TensorId z, int64_t rows, int64_t n, int64_t p,
               int64_t m) {
  const int64_t stride = n / (p * m);
  TensorId blocks = b.reshape(z, {rows, stride, p, m, 2}, kI64);
  std::vector<TensorId> f;
  for (int64_t q = 0; q < p; ++q) f.push_back(c.fixdiv(b.slice(blocks, 2, q, q + 1, kI64), p));
  auto times_twiddle = [&](int64_t q) {
    const auto [wr, wi] = twiddles(b, n, q, stride, m);
    return c.mul(f[static_cast<size_t>(q)], wr, wi);
  };
  std::vector<TensorId> out;
  if (p == 2) {
    TensorId t = times_twiddle(1);
    out = {c.add(f[0], t), c.sub(f[0], t)};
  } else {
    TensorId s0 = times_twiddle(1), s1 = times_twiddle(2), s2 = times_twiddle(3);
    TensorId s5 = c.sub(f[0], s1);
    TensorId f0 = c.add(f[0], s1);
    TensorId s3 = c.add(s0, s2), s4 = c.sub(s0, s2);
    TensorId f2 = c.sub(f0, s3);
    f0 = c.add(f0, s3);
    TensorId r = c.rotate(s4);
    out = {f0, c.add(s5, r), f2, c.sub(s5, r)};
  }
  TensorId joined = b.add("Concat", std::move(out), kI64, {{"axis", int64_t{2}}});
  return b.reshape(joined, {rows, n, 2}, kI64);
}

Status lower_rfft(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  Complex c(x);
  const ir::Tensor& in = ctx.tensor(n.inputs[0]);
  const int64_t fft = n.attrs.get_int("fft_length"), half = fft / 2, quarter = fft / 4;
  const int64_t length = in.shape.back();
  const int64_t rows = ir::element_count(in.shape).value_or(0) / length;

  TensorId samples = b.reshape(x.from(n.inputs[0]), {rows, length}, kI64);
  samples = b.add("Pad", {samples, b.ints({0, 0, 0, fft - length})}, kI64);
  TensorId z = b.reshape(samples, {rows, half, 2}, kI64);
  const auto f = factors(half);
  std::vector<int64_t> order(static_cast<size_t>(half));
  decimate(f, 0, 0, 0, 1, order);
  z = b.add("Gather", {z, b.ints(std::move(order))}, kI64, {{"axis", int64_t{1}}});
  for (size_t d = f.size(); d-- > 0;) z = stage(b, c, z, rows, half, f[d].first, f[d].second);

  // kiss_fftr: DC and Nyquist from bin 0, then bins k and half - k together.
  TensorId dc = c.fixdiv(b.slice(z, 1, 0, 1, kI64), 2);  // [rows, 1, 2]
  auto sum = [&](TensorId v, std::vector<int64_t> signs) {
    return x.wrap16(b.add("ReduceSum", {x.mul(v, b.ints(std::move(signs))), b.ints({-1})}, kI64,
                          {{"keepdims", int64_t{1}}}));
  };
  auto with_zero = [&](TensorId re) {
    return b.add("Concat", {re, x.mul_c(re, 0)}, kI64, {{"axis", int64_t{-1}}});
  };
  TensorId first = with_zero(sum(dc, {1, 1})), last = with_zero(sum(dc, {1, -1}));
  std::vector<int64_t> ks, mirrored;
  for (int64_t k = 1; k <= quarter; ++k) {
    ks.push_back(k);
    mirrored.push_back(half - k);
  }
  auto gather = [&](TensorId v, std::vector<int64_t> at) {
    return b.add("Gather", {v, b.ints(std::move(at))}, kI64, {{"axis", int64_t{1}}});
  };
  TensorId fpk = c.fixdiv(gather(z, ks), 2);
  // (re, -im) of bin half - k: the negation an int16 store.
  TensorId fpnk = c.fixdiv(x.wrap16(x.mul(gather(z, mirrored), b.ints({1, -1}))), 2);
  TensorId f1k = c.add(fpk, fpnk), f2k = c.sub(fpk, fpnk);
  std::vector<int64_t> wr, wi;
  for (int64_t i = 0; i < quarter; ++i) {
    const auto [re, im] =
        cexp(-kPiR * (static_cast<double>(i + 1) / static_cast<double>(half) + .5));
    wr.insert(wr.end(), {re, re});
    wi.insert(wi.end(), {-im, im});
  }
  TensorId tw = c.mul(f2k, b.ints(std::move(wr), ir::Shape{1, quarter, 2}),
                      b.ints(std::move(wi), ir::Shape{1, quarter, 2}));
  // HALF_OF: >> 1 of the int sums (within int16).
  TensorId front = x.shr(x.add(f1k, tw), 1);
  TensorId back = x.shr(x.mul(x.sub(f1k, tw), b.ints({1, -1})), 1);
  // Bins 1 .. quarter - 1 from the front, quarter from the back (written
  // last), quarter + 1 .. half - 1 from the back in reverse.
  std::vector<int64_t> reverse;
  for (int64_t k = quarter - 2; k >= 0; --k) reverse.push_back(k);
  TensorId spectrum =
      b.add("Concat",
            {first, b.slice(front, 1, 0, quarter - 1, kI64),
             b.slice(back, 1, quarter - 1, quarter, kI64), gather(back, reverse), last},
            kI64, {{"axis", int64_t{1}}});
  const ir::Tensor& out = ctx.tensor(n.outputs[0]);
  b.into("Cast", {b.reshape(spectrum, out.shape, kI64)}, {n.outputs[0]},
         {{"to", int64_t{ir::onnx_type_code(DataType::kInt16)}}});
  return ok_status();
}

Status read_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kFields, attrs);
}

uint64_t rfft_bytes(const ir::Graph&, const ir::Node& n) {
  // Twiddles of every stage, two int64 pairs per point.
  return static_cast<uint64_t>(n.attrs.get_int("fft_length")) * 8 * 4 * 8;
}

}  // namespace

OpEntry rfft() {
  return {.read = {.min_inputs = -1, .custom_options = read_options},
          .check = check_rfft,
          .lower = lower_rfft,
          .lowering_bytes = rfft_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Gather (decimation) + per stage Slice, Mul, Add, Div (kissfft's fixed-"
                          "point butterflies) + Concat, int64",
                  .dtypes = "int16",
                  .notes = "TFLite Micro Signal library; kissfft v130 FIXED_POINT=16, bit-exact; "
                           "power-of-two fft_length; float32 and int32 RFFT not converted"}};
}

}  // namespace lite2onnx::ops::signal
