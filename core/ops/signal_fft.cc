// SignalRfft and SignalIrfft (tflite-micro signal/micro/kernels/rfft.cc,
// irfft.cc; signal/src/rfft_*.cc, irfft_*.cc): each row through kissfft
// v130's kiss_fftr / kiss_fftri as TFLM's kiss_fft_wrappers build it: int16
// with FIXED_POINT=16 and int32 with FIXED_POINT=32, as ONNX int64
// arithmetic with every store's wrap-around; float32 in float32, one ONNX op
// per C operation (kissfft's float macros, no fused multiply-add); so the
// results are the kernels' bit for bit:
//   - the complex FFT of fft_length / 2 points (even samples real, odd
//     imaginary): kf_work's decimation as one Gather of the input, then each
//     stage's butterflies (kf_bfly4, kf_bfly2) over all sub-transforms at
//     once, in fixed point with C_FIXDIV's scaling by the radix and C_MUL's
//     rounding;
//   - kiss_fftr's split into the real spectrum with its super twiddles (the
//     RFFT's input zero-padded to fft_length), or kiss_fftri's merge before
//     the inverse FFT.
// The twiddles are computed as kiss_fft_alloc computes them (floor(0.5 +
// SAMP_MAX * cos(phase)) in double, or (float)cos(phase)). Lengths whose
// factors are all 4 and 2 (powers of two) are converted; kissfft's radix-3,
// -5 and generic butterflies are not.
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
// kissfft's pi literals (kiss_fft_alloc, kiss_fftr_alloc), as doubles.
constexpr double kPi = 3.141592653589793238462643383279502884197169399375105820974944;
constexpr double kPiR = 3.14159265358979323846264338327;

const CustomField kFields[] = {
    {"T", Kind::kInt, true, 0, 0, 255},
    {"fft_length", Kind::kInt, true, 0, 8, static_cast<double>(kMaxFft)},
};

// tflite::TensorType's codes.
constexpr int64_t kTensorTypeInt16 = 7, kTensorTypeInt32 = 2, kTensorTypeFloat32 = 0;

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

// The element type kissfft computes in: FIXED_POINT=16 (int16, Q15),
// FIXED_POINT=32 (int32, Q31) or float.
enum class Scalar { kQ15, kQ31, kFloat };

Scalar scalar_of(const ir::Node& n) {
  const int64_t t = n.attrs.get_int("T");
  return t == kTensorTypeInt16   ? Scalar::kQ15
         : t == kTensorTypeInt32 ? Scalar::kQ31
                                 : Scalar::kFloat;
}

DataType data_type(Scalar s) {
  return s == Scalar::kQ15   ? DataType::kInt16
         : s == Scalar::kQ31 ? DataType::kInt32
                             : DataType::kFloat32;
}

Check check_rfft(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t type = n.attrs.get_int("T");
  if (type != kTensorTypeInt16 && type != kTensorTypeInt32 && type != kTensorTypeFloat32)
    return refuse(ReasonCode::kType, "T must be int16, int32 or float32");
  const DataType want = data_type(scalar_of(n));
  if (x.dtype != want || y.dtype != want)
    return refuse(ReasonCode::kType,
                  std::string("input and output must be ") + ir::to_string(want) + " (T)");
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
  if (rows < 1 || rows * fft > (int64_t{1} << 24))
    return refuse(ReasonCode::kShape, "1 to 2^24 / fft_length rows converted");
  return {};
}

// Butterfly arithmetic on complex tensors [..., 2] (re, im): kissfft's
// fixed-point macros on int16 or int32 values held in int64 (SAMPPROD
// products, sround, the stores' wrap-around), or its float macros in float32
// (one IEEE operation each, as the C's).
class Complex {
 public:
  Complex(Int& x, Scalar s) : x_(x), b_(x.builder()), s_(s) {}
  Scalar scalar() const { return s_; }
  bool fixed() const { return s_ != Scalar::kFloat; }
  DataType type() const { return fixed() ? kI64 : DataType::kFloat32; }
  int64_t samp_max() const { return s_ == Scalar::kQ15 ? 32767 : 2147483647; }

  // Constants of the working type.
  TensorId konst(const std::vector<int64_t>& v, ir::Shape shape) {
    if (fixed()) return b_.ints(v, std::move(shape));
    return b_.floats(std::vector<float>(v.begin(), v.end()), std::move(shape));
  }
  TensorId konst(const std::vector<double>& v, ir::Shape shape) {
    if (!fixed()) return b_.floats(std::vector<float>(v.begin(), v.end()), std::move(shape));
    return b_.ints(std::vector<int64_t>(v.begin(), v.end()), std::move(shape));
  }
  TensorId op(const char* name, TensorId a, TensorId b) { return b_.add(name, {a, b}, type()); }

  // C_FIXDIV(c, radix): sround(c * (SAMP_MAX / radix)); nothing in float.
  TensorId fixdiv(TensorId c, int64_t radix) {
    return fixed() ? sround(x_.mul_c(c, samp_max() / radix)) : c;
  }
  // C_MUL(m, a, w): re = a.r w.r - a.i w.i, im = a.r w.i + a.i w.r (each
  // sround in fixed point); `wr` holds (w.r, w.r), `wi` (-w.i, w.i).
  TensorId mul(TensorId a, TensorId wr, TensorId wi) {
    return sround(op("Add", op("Mul", a, wr), op("Mul", swap(a), wi)));
  }
  TensorId add(TensorId a, TensorId b) { return wrap(op("Add", a, b)); }
  TensorId sub(TensorId a, TensorId b) { return wrap(op("Sub", a, b)); }
  // (a.r, -a.i), a store in fixed point.
  TensorId conj(TensorId a) { return wrap(op("Mul", a, konst(std::vector<int64_t>{1, -1}, {2}))); }
  // (a.i, -a.r).
  TensorId rotate(TensorId a) {
    return op("Mul", swap(a), konst(std::vector<int64_t>{1, -1}, {2}));
  }
  TensorId swap(TensorId a) {
    return b_.add("Gather", {a, b_.ints({1, 0})}, type(), {{"axis", int64_t{-1}}});
  }
  // HALF_OF: >> 1 of the int sum (an int32 sum wraps first), or * 0.5f.
  TensorId half_of(TensorId v) {
    if (s_ == Scalar::kQ15) return x_.shr(v, 1);
    if (s_ == Scalar::kQ31) return x_.shr(x_.wrap32(v), 1);
    return op("Mul", v, b_.floats({0.5f}, ir::Shape{}));
  }
  // The store into kiss_fft_scalar of an int result.
  TensorId wrap(TensorId v) {
    return s_ == Scalar::kQ15 ? x_.wrap16(v) : s_ == Scalar::kQ31 ? x_.wrap32(v) : v;
  }

 private:
  // (kiss_fft_scalar)((x + 2^(FRACBITS - 1)) >> FRACBITS).
  TensorId sround(TensorId v) {
    if (s_ == Scalar::kQ15) return x_.wrap16(x_.shr(x_.add_c(v, 1 << 14), 15));
    if (s_ == Scalar::kQ31) return x_.wrap32(x_.shr_wide(x_.add_c(v, int64_t{1} << 30), 31));
    return v;
  }
  Int& x_;
  NodeBuilder& b_;
  Scalar s_;
};

// kf_cexp: floor(0.5 + SAMP_MAX cos) in fixed point, (float)cos in float.
std::pair<double, double> twiddle(double phase, const Complex& c) {
  if (!c.fixed()) return {static_cast<float>(std::cos(phase)), static_cast<float>(std::sin(phase))};
  const auto max = static_cast<double>(c.samp_max());
  return {std::floor(.5 + max * std::cos(phase)), std::floor(.5 + max * std::sin(phase))};
}

// Twiddle constants of one butterfly input: (w.r, w.r) and (-w.i, w.i) for
// each of the stage's m positions, shaped [1, 1, 1, m, 2].
std::pair<TensorId, TensorId> twiddles(Complex& c, int64_t n, int64_t q, int64_t stride, int64_t m,
                                       bool inverse) {
  std::vector<double> wr, wi;
  for (int64_t u = 0; u < m; ++u) {
    const int64_t i = q * u * stride;
    const double phase = -2 * kPi * static_cast<double>(i) / static_cast<double>(n);
    const auto [re, im] = twiddle(inverse ? -phase : phase, c);
    wr.insert(wr.end(), {re, re});
    wi.insert(wi.end(), {-im, im});
  }
  return {c.konst(std::move(wr), ir::Shape{1, 1, 1, m, 2}),
          c.konst(std::move(wi), ir::Shape{1, 1, 1, m, 2})};
}

// One stage: kf_bfly4 or kf_bfly2 over the `stride` sub-transforms of p * m
// points each; `z` is [rows, n, 2]; `inverse`: the inverse transform's
// twiddles and kf_bfly4's inverse branch.
TensorId stage(NodeBuilder& b, Complex& c, TensorId z, int64_t rows, int64_t n, int64_t p,
               int64_t m, bool inverse) {
  const DataType t = c.type();
  const int64_t stride = n / (p * m);
  TensorId blocks = b.reshape(z, {rows, stride, p, m, 2}, t);
  std::vector<TensorId> f;
  for (int64_t q = 0; q < p; ++q) f.push_back(c.fixdiv(b.slice(blocks, 2, q, q + 1, t), p));
  auto times_twiddle = [&](int64_t q) {
    const auto [wr, wi] = twiddles(c, n, q, stride, m, inverse);
    return c.mul(f[static_cast<size_t>(q)], wr, wi);
  };
  std::vector<TensorId> out;
  if (p == 2) {
    TensorId tw = times_twiddle(1);
    out = {c.add(f[0], tw), c.sub(f[0], tw)};
  } else {
    TensorId s0 = times_twiddle(1), s1 = times_twiddle(2), s2 = times_twiddle(3);
    TensorId s5 = c.sub(f[0], s1);
    TensorId f0 = c.add(f[0], s1);
    TensorId s3 = c.add(s0, s2), s4 = c.sub(s0, s2);
    TensorId f2 = c.sub(f0, s3);
    f0 = c.add(f0, s3);
    TensorId r = c.rotate(s4);
    if (inverse)
      out = {f0, c.sub(s5, r), f2, c.add(s5, r)};
    else
      out = {f0, c.add(s5, r), f2, c.sub(s5, r)};
  }
  TensorId joined = b.add("Concat", std::move(out), t, {{"axis", int64_t{2}}});
  return b.reshape(joined, {rows, n, 2}, t);
}

// kiss_fft of [rows, n, 2]: kf_work's decimation, then its stages from the
// innermost out.
TensorId complex_fft(NodeBuilder& b, Complex& c, TensorId z, int64_t rows, int64_t n,
                     bool inverse) {
  const auto f = factors(n);
  std::vector<int64_t> order(static_cast<size_t>(n));
  decimate(f, 0, 0, 0, 1, order);
  z = b.add("Gather", {z, b.ints(std::move(order))}, c.type(), {{"axis", int64_t{1}}});
  for (size_t d = f.size(); d-- > 0;) z = stage(b, c, z, rows, n, f[d].first, f[d].second, inverse);
  return z;
}

// kiss_fftr's and kiss_fftri's loops over k = 1 .. quarter write bins k and
// half - k; at k = quarter the second write wins. `first` and `last` (may be
// kNoTensor) go before and after.
TensorId assemble(NodeBuilder& b, DataType t, TensorId first, TensorId front, TensorId back,
                  TensorId last, int64_t quarter) {
  std::vector<int64_t> reverse;
  for (int64_t k = quarter - 2; k >= 0; --k) reverse.push_back(k);
  std::vector<TensorId> parts = {
      first, b.slice(front, 1, 0, quarter - 1, t), b.slice(back, 1, quarter - 1, quarter, t),
      b.add("Gather", {back, b.ints(std::move(reverse))}, t, {{"axis", int64_t{1}}})};
  if (last != ir::kNoTensor) parts.push_back(last);
  return b.add("Concat", std::move(parts), t, {{"axis", int64_t{1}}});
}

// kiss_fftr_alloc's super twiddles, as (w.r, w.r) and (-w.i, w.i) [1, quarter, 2].
std::pair<TensorId, TensorId> super_twiddles(Complex& c, int64_t half, bool inverse) {
  std::vector<double> wr, wi;
  for (int64_t i = 0; i < half / 2; ++i) {
    const double phase = -kPiR * (static_cast<double>(i + 1) / static_cast<double>(half) + .5);
    const auto [re, im] = twiddle(inverse ? -phase : phase, c);
    wr.insert(wr.end(), {re, re});
    wi.insert(wi.end(), {-im, im});
  }
  return {c.konst(std::move(wr), ir::Shape{1, half / 2, 2}),
          c.konst(std::move(wi), ir::Shape{1, half / 2, 2})};
}

Status lower_rfft(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  Complex c(x, scalar_of(n));
  const bool fixed = c.fixed();
  const DataType t = c.type();
  const ir::Tensor& in = ctx.tensor(n.inputs[0]);
  const int64_t fft = n.attrs.get_int("fft_length"), half = fft / 2, quarter = fft / 4;
  const int64_t length = in.shape.back();
  const int64_t rows = ir::element_count(in.shape).value_or(0) / length;

  TensorId samples = b.reshape(fixed ? x.from(n.inputs[0]) : n.inputs[0], {rows, length}, t);
  samples = b.add("Pad", {samples, b.ints({0, 0, 0, fft - length})}, t);
  TensorId z = complex_fft(b, c, b.reshape(samples, {rows, half, 2}, t), rows, half, false);

  // kiss_fftr: DC and Nyquist from bin 0, then bins k and half - k together.
  TensorId dc = c.fixdiv(b.slice(z, 1, 0, 1, t), 2);  // [rows, 1, 2]
  auto sum = [&](TensorId v, std::vector<int64_t> signs) {
    return c.wrap(b.add("ReduceSum", {c.op("Mul", v, c.konst(signs, {2})), b.ints({-1})}, t,
                        {{"keepdims", int64_t{1}}}));
  };
  auto with_zero = [&](TensorId re) {
    return b.add("Concat", {re, c.op("Mul", re, c.konst(std::vector<int64_t>{0}, {}))}, t,
                 {{"axis", int64_t{-1}}});
  };
  TensorId first = with_zero(sum(dc, {1, 1})), last = with_zero(sum(dc, {1, -1}));
  std::vector<int64_t> ks, mirrored;
  for (int64_t k = 1; k <= quarter; ++k) {
    ks.push_back(k);
    mirrored.push_back(half - k);
  }
  auto gather = [&](TensorId v, std::vector<int64_t> at) {
    return b.add("Gather", {v, b.ints(std::move(at))}, t, {{"axis", int64_t{1}}});
  };
  TensorId fpk = c.fixdiv(gather(z, ks), 2);
  TensorId fpnk = c.fixdiv(c.conj(gather(z, mirrored)), 2);
  TensorId f1k = c.add(fpk, fpnk), f2k = c.sub(fpk, fpnk);
  const auto [wr, wi] = super_twiddles(c, half, false);
  TensorId tw = c.mul(f2k, wr, wi);
  TensorId front = c.half_of(c.op("Add", f1k, tw));
  // (f1k.r - tw.r, tw.i - f1k.i): the difference with its imaginary part negated.
  TensorId back =
      c.half_of(c.op("Mul", c.op("Sub", f1k, tw), c.konst(std::vector<int64_t>{1, -1}, {2})));
  TensorId spectrum = assemble(b, t, first, front, back, last, quarter);
  const ir::Tensor& out = ctx.tensor(n.outputs[0]);
  if (fixed)
    b.into("Cast", {b.reshape(spectrum, out.shape, t)}, {n.outputs[0]},
           {{"to", int64_t{ir::onnx_type_code(data_type(c.scalar()))}}});
  else
    b.into("Reshape", {spectrum, b.ints(out.shape)}, {n.outputs[0]});
  return ok_status();
}

// SignalIrfft (irfft.cc, irfft_int16.cc, irfft_float.cc): kiss_fftri of
// each row's fft_length / 2 + 1 bins: bins k and half - k combined with the
// inverse super twiddles into the complex input of an inverse kiss_fft, whose
// fft_length / 2 complex results are the fft_length samples (float32: then
// divided by fft_length, as irfft_float.cc does).
Check check_irfft(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t type = n.attrs.get_int("T");
  if (type != kTensorTypeInt16 && type != kTensorTypeInt32 && type != kTensorTypeFloat32)
    return refuse(ReasonCode::kType, "T must be int16, int32 or float32");
  const DataType want = data_type(scalar_of(n));
  if (x.dtype != want || y.dtype != want)
    return refuse(ReasonCode::kType,
                  std::string("input and output must be ") + ir::to_string(want) + " (T)");
  const int64_t fft = n.attrs.get_int("fft_length");
  if (!power_of_two(fft))
    return refuse(ReasonCode::kOperands, "fft_length " + std::to_string(fft) +
                                             " is no power of two (kissfft's radix-3, -5 and "
                                             "generic butterflies are not converted)");
  if (!x.has_rank || x.rank() < 1 || !ir::static_shape(x) || !y.has_rank || y.rank() != x.rank() ||
      !ir::static_shape(y))
    return refuse(ReasonCode::kShape, "input and output need static shapes of one rank");
  const int64_t bins = x.shape.back();
  const int64_t rows = bins > 0 ? ir::element_count(x.shape).value_or(0) / bins : 0;
  if (bins % 2 != 0 || bins < fft + 2)
    return refuse(ReasonCode::kShape,
                  "the input needs fft_length / 2 + 1 complex bins per row "
                  "(the kernel reads that many)");
  if (y.shape.back() != fft || ir::element_count(y.shape).value_or(0) != rows * fft)
    return refuse(ReasonCode::kShape,
                  "the output needs fft_length samples per row (the kernel writes that many)");
  if (rows < 1 || rows * fft > (int64_t{1} << 24))
    return refuse(ReasonCode::kShape, "1 to 2^24 / fft_length rows converted");
  return {};
}

Status lower_irfft(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  Complex c(x, scalar_of(n));
  const bool fixed = c.fixed();
  const DataType t = c.type();
  const ir::Tensor& in = ctx.tensor(n.inputs[0]);
  const int64_t fft = n.attrs.get_int("fft_length"), half = fft / 2, quarter = fft / 4;
  const int64_t bins = in.shape.back() / 2;
  const int64_t rows = ir::element_count(in.shape).value_or(0) / (2 * bins);
  TensorId freq = b.reshape(fixed ? x.from(n.inputs[0]) : n.inputs[0], {rows, bins, 2}, t);
  auto gather = [&](std::vector<int64_t> at) {
    return b.add("Gather", {freq, b.ints(std::move(at))}, t, {{"axis", int64_t{1}}});
  };
  // tmpbuf[0] = (f[0].r + f[half].r, f[0].r - f[half].r), each an int16 store, / 2.
  TensorId ends = gather({0, half});                                                 // [rows, 2, 2]
  TensorId reals = b.add("Gather", {ends, b.ints({0})}, t, {{"axis", int64_t{2}}});  // [rows, 2, 1]
  TensorId signs = c.konst(std::vector<int64_t>{1, 1, 1, -1}, {2, 2});
  TensorId pair = b.add("ReduceSum", {c.op("Mul", reals, signs), b.ints({1})}, t,
                        {{"keepdims", int64_t{0}}});  // [rows, 2]
  TensorId first = c.fixdiv(c.wrap(b.reshape(pair, {rows, 1, 2}, t)), 2);
  std::vector<int64_t> ks, mirrored;
  for (int64_t k = 1; k <= quarter; ++k) {
    ks.push_back(k);
    mirrored.push_back(half - k);
  }
  TensorId fk = c.fixdiv(gather(ks), 2);
  TensorId fnkc = c.fixdiv(c.conj(gather(mirrored)), 2);
  TensorId fek = c.add(fk, fnkc), diff = c.sub(fk, fnkc);
  const auto [wr, wi] = super_twiddles(c, half, true);
  TensorId fok = c.mul(diff, wr, wi);
  TensorId front = c.add(fek, fok);
  TensorId back = c.conj(c.sub(fek, fok));  // tmpbuf[half - k].i *= -1
  TensorId z = assemble(b, t, first, front, back, ir::kNoTensor, quarter);
  z = complex_fft(b, c, z, rows, half, true);
  const ir::Tensor& out = ctx.tensor(n.outputs[0]);
  if (fixed)
    b.into("Cast", {b.reshape(z, out.shape, t)}, {n.outputs[0]},
           {{"to", int64_t{ir::onnx_type_code(data_type(c.scalar()))}}});
  else  // irfft_float.cc divides by fft_length (kissfft's inverse is unscaled)
    b.into("Div", {b.reshape(z, out.shape, t), b.floats({static_cast<float>(fft)}, ir::Shape{})},
           {n.outputs[0]});
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
          .doc = {.onnx = "Gather (decimation) + per stage Slice, Mul, Add (+ Div: kissfft's "
                          "fixed-point rounding, int64) + Concat",
                  .dtypes = "int16, int32, float32",
                  .notes = "TFLite Micro Signal library; kissfft v130 (FIXED_POINT=16 for int16, "
                           "32 for int32, float), bit-exact; power-of-two fft_length"}};
}

OpEntry irfft() {
  return {.read = {.min_inputs = -1, .custom_options = read_options},
          .check = check_irfft,
          .lower = lower_irfft,
          .lowering_bytes = rfft_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Gather + Mul + Add (kiss_fftri's split) + the inverse FFT's stages "
                          "(Slice, Mul, Add, + Div in fixed point) + Concat",
                  .dtypes = "int16, int32, float32",
                  .notes = "TFLite Micro Signal library; kissfft v130 (FIXED_POINT=16 for int16, "
                           "32 for int32, float), bit-exact; power-of-two fft_length"}};
}

}  // namespace lite2onnx::ops::signal
