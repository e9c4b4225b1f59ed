#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>

#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes {
namespace qdq {

using ir::DataType;
using ir::TensorId;

namespace {

std::string fmt_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

template <class T>
void dequantize_values(std::span<const std::byte> bytes, const ir::QuantParams& q, size_t inner,
                       std::vector<float>& out) {
  const size_t count = bytes.size() / sizeof(T);
  out.resize(count);
  const size_t channels = q.scale.size();
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    size_t c = channels > 1 ? (i / inner) % channels : 0;
    out[i] = static_cast<float>(static_cast<double>(v) - static_cast<double>(zero_point(q, c))) *
             q.scale[c];
  }
}

}  // namespace

bool qdq_integer(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

int64_t zero_point(const ir::QuantParams& q, size_t i) {
  return q.zero_point.empty() ? 0 : q.zero_point[q.zero_point.size() == 1 ? 0 : i];
}

IntegerRange integer_range(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kUInt8:
      return {0, 255};
    case DataType::kInt16:
      return {-32768, 32767};
    default:
      return {0, 0};
  }
}

// Elements between two consecutive channels of a per-axis tensor (1 when per-tensor).
size_t channel_stride(const ir::Tensor& t, const ir::QuantParams& q) {
  size_t s = 1;
  for (size_t a = static_cast<size_t>(q.axis) + 1; q.scale.size() > 1 && a < t.rank(); ++a)
    s *= static_cast<size_t>(t.shape[a]);
  return s;
}

// "" when the parameters describe the tensor, else what is wrong with them.
// A scale may be 0: converters write one where calibration saw only zeros (a
// channel whose weights are all zero, a dead activation). TFLite's kernels
// accept it (the effective multiplier is 0: the value is 0), and so does
// DequantizeLinear, which gives the same zeros.
std::string param_problem(const ir::Tensor& t, DataType type) {
  const ir::QuantParams& q = *t.quant;
  for (size_t i = 0; i < q.scale.size(); ++i)
    if (!std::isfinite(q.scale[i]) || q.scale[i] < 0)
      return "scale " + std::to_string(i) + " is " + fmt_float(q.scale[i]) +
             " (a finite number >= 0 expected)";
  const auto [lo, hi] = integer_range(type);
  for (size_t i = 0; i < q.zero_point.size(); ++i)
    if (q.zero_point[i] < lo || q.zero_point[i] > hi)
      return "zero point " + std::to_string(q.zero_point[i]) + " is outside " +
             ir::to_string(type) + " [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (q.scale.size() > 1) {
    if (q.axis < 0 || static_cast<size_t>(q.axis) >= t.rank())
      return std::to_string(q.scale.size()) + " per-axis scales on axis " + std::to_string(q.axis) +
             " of a rank-" + std::to_string(t.rank()) + " tensor";
    if (t.shape[static_cast<size_t>(q.axis)] != static_cast<int64_t>(q.scale.size()))
      return std::to_string(q.scale.size()) + " per-axis scales but axis " +
             std::to_string(q.axis) + " has " +
             std::to_string(t.shape[static_cast<size_t>(q.axis)]) + " elements";
  }
  return "";
}

Error quant_error(ErrorCode code, const ir::Tensor& t, const std::string& message) {
  Error e = make_error(code, "tensor '" + t.name + "' (" + ir::to_string(t.dtype) + " " +
                                 ir::to_string(t.shape) + "): " + message);
  e.tensor = t.name;
  return e;
}

bool same_params(const ir::QuantParams& a, const ir::QuantParams& b) {
  if (a.scale.size() != b.scale.size()) return false;
  for (size_t i = 0; i < a.scale.size(); ++i)
    if (a.scale[i] != b.scale[i] || zero_point(a, i) != zero_point(b, i)) return false;
  return a.scale.size() <= 1 || a.axis == b.axis;
}

Result<ir::ConstData> dequantized_copy(ir::Graph& g, const ir::Tensor& t) {
  const ir::QuantParams& q = *t.quant;
  if (q.scale.size() > 1 &&
      (q.axis < 0 || static_cast<size_t>(q.axis) >= t.rank() ||
       t.shape[static_cast<size_t>(q.axis)] != static_cast<int64_t>(q.scale.size())))
    return quant_error(ErrorCode::kInternal, t, "per-axis scales do not match the shape");
  const size_t inner = channel_stride(t, q);
  const size_t float_bytes =
      t.data->bytes.size() / std::max<size_t>(1, ir::element_size(*t.quantized_type)) * 4;
  if (!g.created().admit(float_bytes, t.name)) return check_created_bytes(g).error();
  std::vector<float> values;
  switch (*t.quantized_type) {
    case DataType::kInt8:
      dequantize_values<int8_t>(t.data->bytes, q, inner, values);
      break;
    case DataType::kUInt8:
      dequantize_values<uint8_t>(t.data->bytes, q, inner, values);
      break;
    case DataType::kInt16:
      dequantize_values<int16_t>(t.data->bytes, q, inner, values);
      break;
    case DataType::kInt32:
      dequantize_values<int32_t>(t.data->bytes, q, inner, values);
      break;
    case DataType::kInt64:
      dequantize_values<int64_t>(t.data->bytes, q, inner, values);
      break;
    default:
      return quant_error(ErrorCode::kInternal, t, "unexpected quantized type");
  }
  return g.own(ir::to_bytes(values), DataType::kFloat32, t.name);
}

bool quantized_activation(const ir::Graph& g, TensorId t) {
  return g.valid(t) && g.tensor(t).quantized_type && !g.tensor(t).is_const();
}

// The value of a one-element float32 constant, or nothing.
std::optional<float> float_scalar(const ir::Graph& g, TensorId t) {
  if (!g.valid(t)) return std::nullopt;
  const ir::Tensor& b = g.tensor(t);
  if (!b.is_const() || b.quantized_type || b.data->stored_type != DataType::kFloat32 ||
      b.data->as<float>().size() != 1)
    return std::nullopt;
  return b.data->as<float>()[0];
}

}  // namespace qdq

bool same_quantization(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.quantized_type != b.quantized_type) return false;
  if (!a.quantized_type) return true;
  return a.quant && b.quant && qdq::same_params(*a.quant, *b.quant);
}

}  // namespace lite2onnx::passes
