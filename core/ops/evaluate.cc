#include "core/ops/evaluate.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/registry.h"

namespace lite2onnx::ops {
namespace {

using ir::DataType;

uint64_t bits(int64_t v) { return static_cast<uint64_t>(v); }

template <class T>
void put(std::vector<std::byte>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

std::optional<std::vector<OutputMap>> element_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t max_elements) {
  if (n.dialect != ir::Dialect::kTflite || n.outputs.empty()) return std::nullopt;
  for (ir::TensorId t : n.outputs)
    if (!g.valid(t)) return std::nullopt;
  ElementSourcesFn sources = lookup(n).evaluate.element_sources;
  if (!sources) return std::nullopt;
  auto maps = sources(g, n, max_elements);
  if (maps && maps->size() != n.outputs.size()) return std::nullopt;
  return maps;
}

std::optional<int64_t> apply(Arithmetic op, int64_t a, int64_t b) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (op) {
    case Arithmetic::kAdd:
      return static_cast<int64_t>(bits(a) + bits(b));
    case Arithmetic::kSub:
      return static_cast<int64_t>(bits(a) - bits(b));
    case Arithmetic::kMul:
      return static_cast<int64_t>(bits(a) * bits(b));
    case Arithmetic::kMaximum:
      return a > b ? a : b;
    case Arithmetic::kMinimum:
      return a < b ? a : b;
    case Arithmetic::kFloorDiv: {
      if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
      int64_t q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
    case Arithmetic::kFloorMod: {
      if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
      int64_t r = a % b;
      return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
    }
    case Arithmetic::kNone:
      break;
  }
  return std::nullopt;
}

std::optional<float> apply(Arithmetic op, float a, float b) {
  switch (op) {
    case Arithmetic::kAdd:
      return a + b;
    case Arithmetic::kSub:
      return a - b;
    case Arithmetic::kMul:
      return a * b;
    case Arithmetic::kMaximum:
      return a > b ? a : b;
    case Arithmetic::kMinimum:
      return a < b ? a : b;
    case Arithmetic::kFloorDiv:  // reference_ops::FloorDiv divides in double
      return static_cast<float>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
    case Arithmetic::kFloorMod: {  // reference_ops::FloorMod
      float r = std::fmod(a, b);
      return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
    }
    case Arithmetic::kNone:
      break;
  }
  return std::nullopt;
}

bool is_integer(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kInt64:
      return true;
    default:
      return false;
  }
}

int64_t read_int(const ir::ConstData& c, size_t i) {
  switch (c.stored_type) {
    case DataType::kInt8:
      return c.as<int8_t>()[i];
    case DataType::kUInt8:
      return c.as<uint8_t>()[i];
    case DataType::kInt16:
      return c.as<int16_t>()[i];
    case DataType::kUInt16:
      return c.as<uint16_t>()[i];
    case DataType::kInt32:
      return c.as<int32_t>()[i];
    case DataType::kUInt32:
      return c.as<uint32_t>()[i];
    case DataType::kInt64:
      return c.as<int64_t>()[i];
    default:
      return 0;
  }
}

std::vector<std::byte> encode_ints(DataType type, const std::vector<int64_t>& v) {
  std::vector<std::byte> out(v.size() * ir::element_size(type));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (type) {
      case DataType::kInt8:
        put(out, i, static_cast<int8_t>(v[i]));
        break;
      case DataType::kUInt8:
        put(out, i, static_cast<uint8_t>(v[i]));
        break;
      case DataType::kInt16:
        put(out, i, static_cast<int16_t>(v[i]));
        break;
      case DataType::kUInt16:
        put(out, i, static_cast<uint16_t>(v[i]));
        break;
      case DataType::kInt32:
        put(out, i, static_cast<int32_t>(v[i]));
        break;
      case DataType::kUInt32:
        put(out, i, static_cast<uint32_t>(v[i]));
        break;
      case DataType::kInt64:
        put(out, i, v[i]);
        break;
      default:
        break;
    }
  }
  return out;
}

const ir::Tensor* plain_const(const ir::Graph& g, ir::TensorId id) {
  if (!g.valid(id)) return nullptr;
  const ir::Tensor& t = g.tensor(id);
  if (!t.is_const() || t.quant || !ir::static_shape(t)) return nullptr;
  size_t es = ir::element_size(t.data->stored_type);
  auto count = ir::element_count(t.shape);
  if (!es || !count || t.data->bytes.size() != static_cast<size_t>(*count) * es) return nullptr;
  return &t;
}

std::optional<ir::Shape> input_shape(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || !g.valid(n.inputs[i])) return std::nullopt;
  return ir::static_shape(g.tensor(n.inputs[i]));
}

std::optional<std::vector<int64_t>> input_ints(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || !g.valid(n.inputs[i])) return std::nullopt;
  return ir::const_ints(g, n.inputs[i]);
}

std::optional<int64_t> bounded_count(const ir::Shape& s, int64_t max) {
  auto c = ir::element_count(s);
  if (!c || *c > max) return std::nullopt;
  return c;
}

int64_t product(const ir::Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

std::vector<OutputMap> empty_result(const ir::Shape& shape, size_t outputs) {
  return std::vector<OutputMap>(outputs, OutputMap{shape, false, {}});
}

std::vector<OutputMap> in_order(ir::Shape shape) { return {OutputMap{std::move(shape), true, {}}}; }

}  // namespace lite2onnx::ops
