// The integer arithmetic of --quantization exact (see exact.h).
#include "core/ops/exact.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ir/shape.h"

namespace lite2onnx::ops::exact {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Ranges stay within +-2^62: sums of two of them still fit int64.
constexpr __int128 kLimit = static_cast<__int128>(1) << 62;

bool fits32(int64_t lo, int64_t hi) { return lo >= kInt32Min && hi <= kInt32Max; }
bool fits32(const Value& v) { return fits32(v.lo, v.hi); }

int64_t floor_div(int64_t x, int64_t d) {
  const int64_t q = x / d;
  return (x % d != 0 && (x < 0) != (d < 0)) ? q - 1 : q;
}
int64_t rhaz_div(int64_t x, int64_t d) { return (x + (x > 0 ? d / 2 : x < 0 ? -(d / 2) : 0)) / d; }

// The shape a constant value is written in: a scalar, its own, or a vector.
Shape const_shape(const Value& v) {
  if (!v.shape.empty()) return v.shape;
  return v.values.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(v.values.size())};
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<int64_t>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    const T v = static_cast<T>(values[i]);
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

}  // namespace

std::pair<int64_t, int64_t> range_of(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kUInt8:
      return {0, 255};
    case DataType::kInt16:
      return {-32768, 32767};
    case DataType::kInt32:
      return {kInt32Min, kInt32Max};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

bool per_tensor(const ir::Tensor& t) { return t.quant && t.quant->scale.size() == 1; }

Params params_of(const ir::Tensor& t) {
  Params p;
  p.type = t.quantized_type ? *t.quantized_type : t.dtype;
  std::tie(p.lo, p.hi) = range_of(p.type);
  if (t.quant && !t.quant->scale.empty()) p.scale = t.quant->scale[0];
  if (t.quant && !t.quant->zero_point.empty()) p.zero = t.quant->zero_point[0];
  return p;
}

Value Writer::integers(TensorId t) const {
  const ir::Tensor& x = ctx_.tensor(t);
  Value v;
  v.id = t;
  v.type = x.quantized_type ? *x.quantized_type : x.dtype;
  std::tie(v.lo, v.hi) = range_of(v.type);
  return v;
}

Value Writer::accumulator() {
  Value v;
  v.id = temp(DataType::kInt32, "accumulator");
  std::tie(v.lo, v.hi) = range_of(DataType::kInt32);
  return v;
}

Value Writer::channels(std::vector<int64_t> values, Shape shape) const {
  Value v;
  v.type = DataType::kInt64;
  v.lo = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  v.hi = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  v.values = std::move(values);
  v.shape = std::move(shape);
  return v;
}

TensorId Writer::temp(DataType type, const std::string& what) {
  return ctx_.temp(n_.name + "/" + suffix(what), type);
}

TensorId Writer::apply(const char* op, std::vector<TensorId> inputs, DataType type) {
  const TensorId out = temp(type, op);
  emit(op, std::move(inputs), out, op);
  return out;
}

ir::Node& Writer::emit(const std::string& op, std::vector<TensorId> inputs, TensorId out,
                       const std::string& what) {
  ir::Node& node = ctx_.emit(n_, op, std::move(inputs), {out}, suffix(what));
  last_ = out;
  last_node_ = &node;
  return node;
}

TensorId Writer::tensor(const Value& v, DataType type) {
  if (!v.is_const()) return cast(v, type).id;
  ir::Tensor c;
  c.name = n_.name + "/" + suffix("const");
  c.dtype = type;
  c.shape = const_shape(v);
  switch (type) {
    case DataType::kInt8:
      c.data = ctx_.graph().own(bytes_of<int8_t>(v.values), type, c.name);
      break;
    case DataType::kUInt8:
      c.data = ctx_.graph().own(bytes_of<uint8_t>(v.values), type, c.name);
      break;
    case DataType::kInt16:
      c.data = ctx_.graph().own(bytes_of<int16_t>(v.values), type, c.name);
      break;
    case DataType::kInt32:
      c.data = ctx_.graph().own(bytes_of<int32_t>(v.values), type, c.name);
      break;
    case DataType::kFloat64:  // integers below 2^53: exact
      c.data = ctx_.graph().own(bytes_of<double>(v.values), type, c.name);
      break;
    default:
      c.dtype = DataType::kInt64;
      c.data = ctx_.graph().own(bytes_of<int64_t>(v.values), DataType::kInt64, c.name);
  }
  return ctx_.graph().add_tensor(std::move(c));
}

Value Writer::cast(const Value& v, DataType type) {
  if (v.type == type) return v;
  Value out = v;
  out.type = type;
  if (v.is_const()) return out;
  out.id = temp(type, "cast");
  emit("Cast", {v.id}, out.id, "cast").attrs.set("to", int64_t{ir::onnx_type_code(type)});
  return out;
}

Value Writer::binary(const char* op, const Value& a, const Value& b, int64_t lo, int64_t hi) {
  const DataType type =
      fits32(lo, hi) && fits32(a) && fits32(b) ? DataType::kInt32 : DataType::kInt64;
  Value out;
  out.type = type;
  out.lo = lo;
  out.hi = hi;
  out.id = temp(type, op);
  emit(op, {tensor(a, type), tensor(b, type)}, out.id, op);
  return out;
}

Value Writer::add(const Value& a, const Value& b) {
  if (b.is_const() && b.lo == 0 && b.hi == 0) return a;
  if (a.is_const() && b.is_const() && (a.values.size() == 1 || b.values.size() == 1)) {
    std::vector<int64_t> v;
    const auto& many = a.values.size() >= b.values.size() ? a : b;
    const auto& one = a.values.size() >= b.values.size() ? b : a;
    for (int64_t x : many.values) v.push_back(x + one.values[0]);
    return channels(std::move(v), many.shape);
  }
  const __int128 lo = static_cast<__int128>(a.lo) + b.lo, hi = static_cast<__int128>(a.hi) + b.hi;
  if (lo < -kLimit || hi > kLimit) return overflow(a);
  return binary("Add", a, b, static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

Value Writer::sub(const Value& a, const Value& b) {
  if (b.is_const() && b.lo == 0 && b.hi == 0) return a;
  const __int128 lo = static_cast<__int128>(a.lo) - b.hi, hi = static_cast<__int128>(a.hi) - b.lo;
  if (lo < -kLimit || hi > kLimit) return overflow(a);
  return binary("Sub", a, b, static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

Value Writer::mul(const Value& a, const Value& b) {
  if (b.is_const() && b.lo == 1 && b.hi == 1) return a;
  if (a.is_const() && b.is_const() && (a.values.size() == 1 || b.values.size() == 1)) {
    std::vector<int64_t> v;
    const auto& many = a.values.size() >= b.values.size() ? a : b;
    const auto& one = a.values.size() >= b.values.size() ? b : a;
    for (int64_t x : many.values) v.push_back(x * one.values[0]);
    return channels(std::move(v), many.shape);
  }
  __int128 p[4] = {static_cast<__int128>(a.lo) * b.lo, static_cast<__int128>(a.lo) * b.hi,
                   static_cast<__int128>(a.hi) * b.lo, static_cast<__int128>(a.hi) * b.hi};
  const __int128 lo = *std::min_element(p, p + 4), hi = *std::max_element(p, p + 4);
  if (lo < -kLimit || hi > kLimit) return overflow(a);
  return binary("Mul", a, b, static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

Value Writer::overflow(const Value& a) {
  if (!problem_)
    problem_ = ctx_.unsupported(
        n_, {ReasonCode::kLimit,
             "its integer arithmetic would pass int64 (--quantization exact computes what "
             "TFLite's kernel computes, and cannot here)"});
  return a;
}

namespace {

// The range of x / d (d > 0 in [d.lo, d.hi]) with rounding `div`.
template <class Div>
std::pair<int64_t, int64_t> quotient_range(const Value& x, const Value& d, Div div) {
  const int64_t c[4] = {div(x.lo, d.lo), div(x.lo, d.hi), div(x.hi, d.lo), div(x.hi, d.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

bool all_ones(const Value& d) { return d.is_const() && d.lo == 1 && d.hi == 1; }

}  // namespace

Value Writer::trunc_div(const Value& x, const Value& d) {
  if (all_ones(d)) return x;
  auto [lo, hi] = quotient_range(x, d, [](int64_t a, int64_t b) { return a / b; });
  return binary("Div", x, d, lo, hi);
}

Value Writer::floor_div(const Value& x, const Value& d) {
  if (all_ones(d)) return x;
  auto [lo, hi] = quotient_range(x, d, [](int64_t a, int64_t b) { return exact::floor_div(a, b); });
  constexpr int64_t kExactInDouble = int64_t{1} << 52;
  if (d.is_const() && d.lo > 0 && d.hi < kExactInDouble && x.lo > -kExactInDouble &&
      x.hi < kExactInDouble) {
    // Floor of the float64 quotient, exact here: a quotient that is not an
    // integer is at least 1/d from the next one, and float64's rounding error
    // of x / d with |x| < 2^52 is less. ONNX Runtime's Cast, Div and Floor on
    // doubles cost a fraction of its integer Mod and Div. A power-of-two
    // divisor (a shift) multiplies by its exact reciprocal.
    const bool shifts =
        std::all_of(d.values.begin(), d.values.end(), [](int64_t v) { return (v & (v - 1)) == 0; });
    TensorId q;
    if (shifts) {
      std::vector<double> inverse;
      for (int64_t v : d.values) inverse.push_back(1.0 / static_cast<double>(v));
      const TensorId by =
          ctx_.const_f64(n_.name + "/" + suffix("inverse"), std::move(inverse), const_shape(d));
      q = apply("Mul", {tensor(x, DataType::kFloat64), by}, DataType::kFloat64);
    } else {
      q = apply("Div", {tensor(x, DataType::kFloat64), tensor(d, DataType::kFloat64)},
                DataType::kFloat64);
    }
    const TensorId whole = apply("Floor", {q}, DataType::kFloat64);
    const DataType type = fits32(lo, hi) ? DataType::kInt32 : DataType::kInt64;
    Value out{apply("Cast", {whole}, type), type, lo, hi, {}, {}};
    last_node_->attrs.set("to", int64_t{ir::onnx_type_code(type)});
    return out;
  }
  // Mod (fmod 0) takes the divisor's sign: x - Mod(x, d) is the multiple of d
  // below x, which Div divides exactly.
  Value rest = binary("Mod", x, d, 0, d.hi - 1);
  last_node_->attrs.set("fmod", int64_t{0});
  return binary("Div", sub(x, rest), d, lo, hi);
}

Value Writer::rhaz_div(const Value& x, const Value& d) {
  if (all_ones(d)) return x;
  auto [lo, hi] = quotient_range(x, d, [](int64_t a, int64_t b) { return exact::rhaz_div(a, b); });
  // (x + sign(x) * (d / 2)) / d, C division: TFLite's rounding divisions.
  std::vector<int64_t> half = d.values;
  for (int64_t& h : half) h /= 2;
  if (!fits32(x)) {
    // ONNX Runtime 1.30's int64 Sign is wrong beyond int32 (Sign(2^31 + 2^29)
    // is -1): x < 0 picks -d/2, otherwise d/2 (the same for x = 0: d/2 < d).
    std::vector<int64_t> negative = half;
    for (int64_t& h : negative) h = -h;
    const Value nudge = select_negative(x, channels(std::move(negative), d.shape),
                                        channels(std::move(half), d.shape));
    return binary("Div", add(x, nudge), d, lo, hi);
  }
  Value sign;
  sign.type = DataType::kInt32;
  sign.lo = -1;
  sign.hi = 1;
  sign.id = temp(sign.type, "sign");
  emit("Sign", {tensor(x, sign.type)}, sign.id, "sign");
  const Value nudged = add(x, mul(sign, channels(std::move(half), d.shape)));
  return binary("Div", nudged, d, lo, hi);
}

Value Writer::clip(const Value& x, int64_t lo, int64_t hi) {
  if (x.lo >= lo && x.hi <= hi) return x;
  Value out = x;
  out.lo = std::clamp(x.lo, lo, hi);
  out.hi = std::clamp(x.hi, lo, hi);
  out.id = temp(x.type, "clip");
  emit("Clip", {tensor(x, x.type), tensor(constant(lo), x.type), tensor(constant(hi), x.type)},
       out.id, "clip");
  return out;
}

Value Writer::select_negative(const Value& x, const Value& if_negative, const Value& otherwise) {
  const int64_t lo = std::min(if_negative.lo, otherwise.lo);
  const int64_t hi = std::max(if_negative.hi, otherwise.hi);
  const DataType type = fits32(lo, hi) && fits32(if_negative) && fits32(otherwise)
                            ? DataType::kInt32
                            : DataType::kInt64;
  const DataType xt = fits32(x) ? DataType::kInt32 : DataType::kInt64;
  TensorId negative = temp(DataType::kBool, "negative");
  emit("Less",
       {tensor(x, x.is_const() ? xt : x.type), tensor(constant(0), x.is_const() ? xt : x.type)},
       negative, "negative");
  Value out;
  out.type = type;
  out.lo = lo;
  out.hi = hi;
  out.id = temp(type, "where");
  emit("Where", {negative, tensor(if_negative, type), tensor(otherwise, type)}, out.id, "where");
  return out;
}

TensorId Writer::to_float(const Value& v) {
  TensorId out = temp(DataType::kFloat32, "float");
  emit("Cast", {tensor(v, v.is_const() ? DataType::kInt64 : v.type)}, out, "float")
      .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kFloat32)});
  return out;
}

TensorId Writer::fmul(TensorId x, std::vector<float> factors, Shape shape) {
  TensorId c =
      factors.size() == 1
          ? ctx_.const_scalar(n_.name + "/" + suffix("scale"), DataType::kFloat32, factors[0])
          : ctx_.const_f32(n_.name + "/" + suffix("scales"), std::move(factors), shape);
  TensorId out = temp(DataType::kFloat32, "scaled");
  emit("Mul", {x, c}, out, "scaled");
  return out;
}

TensorId Writer::fadd(TensorId x, std::vector<float> terms, Shape shape) {
  TensorId c = terms.size() == 1
                   ? ctx_.const_scalar(n_.name + "/" + suffix("term"), DataType::kFloat32, terms[0])
                   : ctx_.const_f32(n_.name + "/" + suffix("terms"), std::move(terms), shape);
  TensorId out = temp(DataType::kFloat32, "sum");
  emit("Add", {x, c}, out, "sum");
  return out;
}

Value Writer::round_to(TensorId x, DataType type, int64_t zero) {
  Value out;
  out.type = type;
  std::tie(out.lo, out.hi) = range_of(type);
  out.id = temp(type, "round");
  emit("QuantizeLinear",
       {x, ctx_.const_scalar(n_.name + "/" + suffix("one"), DataType::kFloat32, 1.0),
        ctx_.const_scalar(n_.name + "/" + suffix("zero"), type, static_cast<double>(zero))},
       out.id, "round");
  return out;
}

TensorId Writer::round_half_away(TensorId x, DataType type) {
  const TensorId magnitude = apply("Abs", {x}, type);
  const TensorId whole = apply("Floor", {magnitude}, type);
  const TensorId fraction = apply("Sub", {magnitude, whole}, type);
  const TensorId up = apply(
      "GreaterOrEqual", {fraction, ctx_.const_scalar(n_.name + "/" + suffix("half"), type, 0.5)},
      DataType::kBool);
  const TensorId one = apply("Cast", {up}, type);
  last_node_->attrs.set("to", int64_t{ir::onnx_type_code(type)});
  const TensorId rounded = apply("Add", {whole, one}, type);
  const TensorId sign = apply("Sign", {x}, type);
  return apply("Mul", {rounded, sign}, type);
}

Value Writer::lookup(const Value& index, std::vector<int64_t> table, DataType type, int64_t lo,
                     int64_t hi) {
  Value t = channels(std::move(table), {});
  t.shape = {static_cast<int64_t>(t.values.size())};
  Value out;
  out.type = type;
  out.lo = lo;
  out.hi = hi;
  out.id = temp(type, "table");
  const TensorId shape = temp(DataType::kInt64, "shape");
  const TensorId idx = tensor(index, DataType::kInt32);
  emit("Shape", {idx}, shape, "shape");
  const TensorId flat = temp(DataType::kInt32, "flat");
  emit("Reshape", {idx, ctx_.const_i64(n_.name + "/" + suffix("minus_one"), {-1})}, flat, "flat");
  const TensorId got = temp(type, "got");
  emit("GatherElements", {tensor(t, type), flat}, got, "table");
  emit("Reshape", {got, shape}, out.id, "table_shape");
  return out;
}

void Writer::store(const Value& v, TensorId out) {
  const DataType type = integers(out).type;
  if (!v.is_const() && v.type == type && v.id == last_ && last_node_) {
    last_node_->outputs[0] = out;  // the last node writes the output itself
    return;
  }
  if (!v.is_const() && v.type == type) {
    emit("Identity", {v.id}, out, "out");
    return;
  }
  emit("Cast", {tensor(v, v.is_const() ? type : v.type)}, out, "out")
      .attrs.set("to", int64_t{ir::onnx_type_code(type)});
}

// static_cast<int32_t>(x) of an int64 x: ((x + 2^31) mod 2^32) - 2^31.
Value wrap_int32(Writer& w, const Value& x) {
  const Value two32 = w.constant(int64_t{1} << 32), two31 = w.constant(int64_t{1} << 31);
  const Value shifted = w.add(x, two31);
  Value low = w.sub(shifted, w.mul(w.floor_div(shifted, two32), two32));
  low.lo = 0;
  low.hi = two32.hi - 1;
  return w.sub(low, two31);
}

Value mbqm(Writer& w, const Value& x, std::span<const qmath::Multiplier> m, const Shape& shape) {
  auto per_channel = [&](auto fn) {
    std::vector<int64_t> v;
    for (const auto& one : m) v.push_back(fn(one));
    return v.size() == 1 ? w.constant(v[0]) : w.channels(std::move(v), shape);
  };
  // RoundingDivideByPOT(SRDHM(x * 2^left, M), right). The kernels shift in
  // int32: where that can leave int32, it wraps (automl_video_traffic's MULs).
  Value shifted = w.mul(x, per_channel([](const qmath::Multiplier& one) {
                          return int64_t{1} << qmath::mbqm_left_shift(one);
                        }));
  if (!fits32(shifted)) shifted = wrap_int32(w, shifted);
  const Value product =
      w.mul(shifted, per_channel([](const qmath::Multiplier& one) { return int64_t{one.m}; }));
  const Value nudged = w.add(product, w.select_negative(product, w.constant(1 - (int64_t{1} << 30)),
                                                        w.constant(int64_t{1} << 30)));
  const Value high = w.trunc_div(nudged, w.constant(int64_t{1} << 31));
  return w.rhaz_div(high, per_channel([](const qmath::Multiplier& one) {
                      return int64_t{1} << std::max(-one.shift, 0);
                    }));
}

Value requantize(Writer& w, const Value& acc, Requantization r, std::span<const double> scales,
                 const Shape& shape, const Params& out, int64_t lo, int64_t hi) {
  const bool one = scales.size() == 1;
  if (r == Requantization::kFp32) {
    std::vector<float> f(scales.begin(), scales.end());
    TensorId v = w.fmul(w.to_float(acc), std::move(f), one ? Shape{} : shape);
    return w.clip(w.round_to(v, out.type, out.zero), lo, hi);
  }
  if (r == Requantization::kDoubleScale) {
    const TensorId acc_d = w.temp(DataType::kFloat64, "double");
    w.emit("Cast", {w.tensor(acc, acc.is_const() ? DataType::kInt64 : acc.type)}, acc_d, "double")
        .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kFloat64)});
    const TensorId factor =
        one ? w.ctx().const_scalar(w.node().name + "/double_scale", DataType::kFloat64, scales[0])
            : w.ctx().const_f64(w.node().name + "/double_scales",
                                std::vector<double>(scales.begin(), scales.end()), shape);
    const TensorId scaled = w.temp(DataType::kFloat64, "scaled");
    w.emit("Mul", {acc_d, factor}, scaled, "scaled");
    const double largest = *std::max_element(
        scales.begin(), scales.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
    const double bound =
        std::ceil(std::abs(largest) * static_cast<double>(std::max(-acc.lo, acc.hi))) + 1;
    Value y;
    y.type = DataType::kInt64;
    y.lo = static_cast<int64_t>(-std::min(bound, 4e18));
    y.hi = -y.lo;
    y.id = w.temp(DataType::kInt64, "rounded");
    w.emit("Cast", {w.round_half_away(scaled, DataType::kFloat64)}, y.id, "rounded")
        .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt64)});
    return w.clip(w.add(y, w.constant(out.zero)), lo, hi);
  }
  std::vector<qmath::Multiplier> m;
  for (double s : scales) m.push_back(qmath::quantize_multiplier(s));
  auto per_channel = [&](auto fn) {
    std::vector<int64_t> v;
    for (const auto& x : m) v.push_back(fn(x));
    return one ? w.constant(v[0]) : w.channels(std::move(v), shape);
  };
  Value y;
  if (r == Requantization::kDouble) {
    y = mbqm(w, acc, m, shape);
  } else if (r == Requantization::kSingle) {
    // (x * M + 2^(30 - shift)) >> (31 - shift).
    const Value product =
        w.mul(acc, per_channel([](const qmath::Multiplier& x) { return int64_t{x.m}; }));
    const Value nudged = w.add(product, per_channel([](const qmath::Multiplier& x) {
                                 return int64_t{1} << std::clamp(30 - x.shift, 0, 61);
                               }));
    y = w.floor_div(nudged, per_channel([](const qmath::Multiplier& x) {
                      return int64_t{1} << std::clamp(31 - x.shift, 1, 62);
                    }));
  } else {
    // The 16x8 kernels: (x * M16 + 2^(14 - shift)) >> (15 - shift).
    const Value product = w.mul(
        acc, per_channel([](const qmath::Multiplier& x) { return qmath::reduced_multiplier(x); }));
    const Value nudged = w.add(product, per_channel([](const qmath::Multiplier& x) {
                                 return int64_t{1} << std::clamp(14 - x.shift, 0, 61);
                               }));
    y = w.floor_div(nudged, per_channel([](const qmath::Multiplier& x) {
                      return int64_t{1} << std::clamp(15 - x.shift, 1, 62);
                    }));
    // The kernels cast the int64 result to int32: it wraps where it leaves int32.
    if (!fits32(y)) y = wrap_int32(w, y);
  }
  return w.clip(w.add(y, w.constant(out.zero)), lo, hi);
}

std::pair<int64_t, int64_t> activation_range(const ir::Node& n, const Params& out, bool xnnpack) {
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  auto bound = [&](float v) {
    return xnnpack ? qmath::xnn_bound(v, out.scale, out.zero, out.lo, out.hi)
                   : qmath::tflite_bound(v, out.scale, out.zero, out.lo, out.hi);
  };
  if (act == "RELU") return {bound(0), out.hi};
  if (act == "RELU6") return {bound(0), bound(6)};
  if (act == "RELU_N1_TO_1") return {bound(-1), bound(1)};
  if (act == "RELU_0_TO_1") return {bound(0), bound(1)};
  return {out.lo, out.hi};  // NONE; TANH and SIGN_BIT: the kernels only clamp to the type
}

Check check_activation_range(const ir::Node& n) {
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  if (act == "NONE" || act == "RELU" || act == "RELU6" || act == "RELU_N1_TO_1" ||
      act == "RELU_0_TO_1" || act == "TANH" || act == "SIGN_BIT")
    return std::nullopt;
  return refuse(ReasonCode::kOption, "fused activation " + act);
}

bool xnnpack_quantization(const ir::Tensor& t, int channel_axis) {
  if (!t.quant || t.quant->scale.empty()) return false;
  const DataType type = t.quantized_type ? *t.quantized_type : t.dtype;
  if (type != DataType::kInt8 && type != DataType::kUInt8) return false;
  if (t.quant->scale.size() > 1 && (channel_axis < 0 || t.quant->axis != channel_axis))
    return false;
  for (float s : t.quant->scale)
    if (!std::isnormal(s) || s <= 0) return false;
  if (t.quant->scale.size() > 1)
    for (int64_t z : t.quant->zero_point)
      if (z != 0) return false;
  return true;
}

Status lower_unary_table(LowerContext& ctx, const ir::Node& n, const TableFn& fn) {
  Writer w(ctx, n);
  const Value x = w.integers(n.inputs[0]);
  const Params y = params_of(ctx.tensor(n.outputs[0]));
  // Ordered by the index the input's integer is: 0, 1, ... then the negative
  // values, which Gather counts from the end.
  const int64_t size = x.hi - x.lo + 1;
  std::vector<int64_t> table(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const int64_t q = x.lo < 0 && i > x.hi ? i - size : i;
    table[static_cast<size_t>(i)] = std::clamp(fn(q), y.lo, y.hi);
  }
  w.store(w.lookup(x, std::move(table), y.type, y.lo, y.hi), n.outputs[0]);
  return w.result();
}

}  // namespace lite2onnx::ops::exact
