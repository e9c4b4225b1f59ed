// Constant folding of the integer shape arithmetic TFLite models carry
// (SHAPE -> STRIDED_SLICE / PACK / ADD ... -> RESHAPE): a TFLite-dialect
// pre-pass that turns nodes whose inputs are all constants, and SHAPE of a
// tensor with a static shape, into constants before layout propagation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/passes/passes.h"
#include "core/passes/shape_eval.h"

namespace lite2onnx::passes {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;
namespace se = shape_eval;

// Folding makes new constants; shape arithmetic is tiny, so larger results
// (a FILL of a huge shape, say) are left to the runtime.
constexpr int64_t kMaxFoldElements = int64_t{1} << 20;

struct Folded {
  Shape shape;
  ir::ConstData data;
};

bool is_int(DataType t) {
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

template <class T>
void put(std::vector<std::byte>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

// Integer values stored as `type`, wrapping like static_cast does.
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

// A constant input whose bytes hold its full static shape in its own type.
const ir::Tensor* plain_const(const ir::Graph& g, TensorId id) {
  if (!g.valid(id)) return nullptr;
  const ir::Tensor& t = g.tensor(id);
  if (!t.is_const() || t.quant || !se::static_shape(t)) return nullptr;
  size_t es = ir::element_size(t.data->stored_type);
  auto count = ir::element_count(t.shape);
  if (!es || !count || t.data->bytes.size() != static_cast<size_t>(*count) * es) return nullptr;
  return &t;
}

// ---- SHAPE ------------------------------------------------------------------

std::optional<std::vector<Folded>> fold_shape(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || !g.valid(n.inputs[0]) || n.outputs.size() != 1) return std::nullopt;
  auto xs = se::static_shape(g.tensor(n.inputs[0]));
  DataType type = g.tensor(n.outputs[0]).dtype;
  if (!xs || (type != DataType::kInt32 && type != DataType::kInt64)) return std::nullopt;
  Folded f;
  f.shape = {static_cast<int64_t>(xs->size())};
  f.data = ir::ConstData::owned(encode_ints(type, *xs), type);
  return std::vector<Folded>{std::move(f)};
}

// ---- data movement ----------------------------------------------------------

std::optional<std::vector<Folded>> fold_data_movement(const ir::Graph& g, const ir::Node& n) {
  for (TensorId t : n.inputs)
    if (g.valid(t) && !plain_const(g, t)) return std::nullopt;
  // Reshapes keep the bytes: the new constant shares them.
  if (n.builtin == se::kReshape || n.builtin == se::kSqueeze || n.builtin == se::kExpandDims) {
    auto ys = se::reshaped_shape(g, n);
    if (!ys || n.outputs.size() != 1) return std::nullopt;
    const ir::Tensor& x = g.tensor(n.inputs[0]);
    if (x.dtype != g.tensor(n.outputs[0]).dtype) return std::nullopt;
    return std::vector<Folded>{{*ys, *x.data}};
  }
  auto maps = se::element_sources(g, n, kMaxFoldElements);
  if (!maps || maps->size() != n.outputs.size()) return std::nullopt;
  std::vector<Folded> out;
  for (size_t o = 0; o < maps->size(); ++o) {
    const se::OutputMap& m = (*maps)[o];
    const ir::Tensor& y = g.tensor(n.outputs[o]);
    // Every input an element comes from has the output's type and storage.
    std::optional<DataType> stored;
    for (const auto& s : m.sources) {
      const ir::Tensor& x = g.tensor(n.inputs[s.input]);
      if (x.dtype != y.dtype || (stored && *stored != x.data->stored_type)) return std::nullopt;
      stored = x.data->stored_type;
    }
    if (!stored) stored = y.dtype;  // an empty result
    const size_t es = ir::element_size(*stored);
    if (!es) return std::nullopt;
    std::vector<std::byte> bytes(m.sources.size() * es);
    for (size_t i = 0; i < m.sources.size(); ++i) {
      const ir::ConstData& src = *g.tensor(n.inputs[m.sources[i].input]).data;
      std::memcpy(bytes.data() + i * es,
                  src.bytes.data() + static_cast<size_t>(m.sources[i].index) * es, es);
    }
    out.push_back({m.shape, ir::ConstData::owned(std::move(bytes), *stored)});
  }
  return out;
}

// ---- elementwise arithmetic --------------------------------------------------

// TFLite's fused activation as a clamp range; nullopt for ones we do not fold.
std::optional<std::pair<double, double>> activation_range(const ir::Node& n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::string a = n.attrs.get_string("fused_activation_function", "NONE");
  if (a == "NONE") return std::pair{-kInf, kInf};
  if (a == "RELU") return std::pair{0.0, kInf};
  if (a == "RELU6") return std::pair{0.0, 6.0};
  if (a == "RELU_N1_TO_1") return std::pair{-1.0, 1.0};
  return std::nullopt;
}

uint64_t bits(int64_t v) { return static_cast<uint64_t>(v); }

// One integer result, or nullopt where TFLite's result is undefined.
std::optional<int64_t> int_op(int op, int64_t a, int64_t b) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (op) {
    case se::kAdd:
      return static_cast<int64_t>(bits(a) + bits(b));
    case se::kSub:
      return static_cast<int64_t>(bits(a) - bits(b));
    case se::kMul:
      return static_cast<int64_t>(bits(a) * bits(b));
    case se::kMaximum:
      return a > b ? a : b;
    case se::kMinimum:
      return a < b ? a : b;
    case se::kFloorDiv: {
      if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
      int64_t q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
    case se::kFloorMod: {
      if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
      int64_t r = a % b;
      return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
    }
    default:
      return std::nullopt;
  }
}

std::optional<float> float_op(int op, float a, float b) {
  switch (op) {
    case se::kAdd:
      return a + b;
    case se::kSub:
      return a - b;
    case se::kMul:
      return a * b;
    case se::kMaximum:
      return a > b ? a : b;
    case se::kMinimum:
      return a < b ? a : b;
    case se::kFloorDiv:  // reference_ops::FloorDiv divides in double
      return static_cast<float>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
    case se::kFloorMod: {  // reference_ops::FloorMod
      float r = std::fmod(a, b);
      return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
    }
    default:
      return std::nullopt;
  }
}

bool is_binary_arith(int builtin) {
  switch (builtin) {
    case se::kAdd:
    case se::kSub:
    case se::kMul:
    case se::kFloorDiv:
    case se::kFloorMod:
    case se::kMaximum:
    case se::kMinimum:
      return true;
    default:
      return false;
  }
}

std::optional<std::vector<Folded>> fold_binary(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const ir::Tensor* a = plain_const(g, n.inputs[0]);
  const ir::Tensor* b = plain_const(g, n.inputs[1]);
  const DataType type = g.tensor(n.outputs[0]).dtype;
  if (!a || !b || a->dtype != type || b->dtype != type || a->data->stored_type != type ||
      b->data->stored_type != type)
    return std::nullopt;
  if (type != DataType::kInt32 && type != DataType::kInt64 && type != DataType::kFloat32)
    return std::nullopt;
  auto range = activation_range(n);
  auto ys = se::broadcast_shape(a->shape, b->shape);
  if (!range || !ys) return std::nullopt;
  auto count = ir::element_count(*ys);
  if (!count || *count > kMaxFoldElements) return std::nullopt;
  std::vector<int64_t> ia = se::broadcast_sources(*ys, a->shape);
  std::vector<int64_t> ib = se::broadcast_sources(*ys, b->shape);
  const size_t size = static_cast<size_t>(*count);
  Folded f;
  f.shape = *ys;
  if (type == DataType::kFloat32) {
    std::span<const float> va = a->data->as<float>(), vb = b->data->as<float>();
    std::vector<std::byte> bytes(size * 4);
    for (size_t i = 0; i < size; ++i) {
      auto v = float_op(n.builtin, va[static_cast<size_t>(ia[i])], vb[static_cast<size_t>(ib[i])]);
      if (!v) return std::nullopt;
      float r = *v;
      if (r < range->first) r = static_cast<float>(range->first);
      if (r > range->second) r = static_cast<float>(range->second);
      put(bytes, i, r);
    }
    f.data = ir::ConstData::owned(std::move(bytes), type);
  } else {
    std::vector<int64_t> values(size);
    for (size_t i = 0; i < size; ++i) {
      auto v = int_op(n.builtin, read_int(*a->data, static_cast<size_t>(ia[i])),
                      read_int(*b->data, static_cast<size_t>(ib[i])));
      if (!v) return std::nullopt;
      // Results wrap to the type as TFLite's kernels do, then clamp.
      int64_t r = type == DataType::kInt32 ? static_cast<int32_t>(*v) : *v;
      if (static_cast<double>(r) < range->first) r = static_cast<int64_t>(range->first);
      if (static_cast<double>(r) > range->second) r = static_cast<int64_t>(range->second);
      values[i] = r;
    }
    f.data = ir::ConstData::owned(encode_ints(type, values), type);
  }
  return std::vector<Folded>{std::move(f)};
}

std::optional<std::vector<Folded>> fold_cast(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  const ir::Tensor* x = plain_const(g, n.inputs[0]);
  DataType type = g.tensor(n.outputs[0]).dtype;
  if (!x || !is_int(x->dtype) || x->data->stored_type != x->dtype || !is_int(type))
    return std::nullopt;
  auto count = ir::element_count(x->shape);
  if (!count || *count > kMaxFoldElements) return std::nullopt;
  std::vector<int64_t> values(static_cast<size_t>(*count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = read_int(*x->data, i);
  return std::vector<Folded>{{x->shape, ir::ConstData::owned(encode_ints(type, values), type)}};
}

// ---- driver -------------------------------------------------------------------

bool may_fold(const ir::Graph& g, const ir::Node& n) {
  if (n.dialect != ir::Dialect::kTflite || n.outputs.empty()) return false;
  for (TensorId t : n.outputs) {
    if (!g.valid(t)) return false;
    const ir::Tensor& y = g.tensor(t);
    // A graph output stays produced by a node (its name is the interface).
    if (y.is_const() || y.is_variable || y.quant || g.is_graph_output(t) || g.is_graph_input(t))
      return false;
    if (!ir::element_size(y.dtype) || y.dtype == DataType::kString) return false;
  }
  for (TensorId t : n.inputs)
    if (g.valid(t) && (g.tensor(t).quant || g.tensor(t).is_variable)) return false;
  return true;
}

std::optional<std::vector<Folded>> fold_node(const ir::Graph& g, const ir::Node& n) {
  if (n.builtin == se::kShape) return fold_shape(g, n);
  if (n.builtin == se::kCast) return fold_cast(g, n);
  if (is_binary_arith(n.builtin)) return fold_binary(g, n);
  if (se::is_data_movement(n.builtin)) return fold_data_movement(g, n);
  return std::nullopt;
}

// Whether a folded result is (a view of) an input's bytes, not new data.
bool shares_an_input(const ir::Graph& g, const ir::Node& n, const ir::ConstData& data) {
  for (TensorId t : n.inputs)
    if (g.valid(t) && g.tensor(t).is_const() && g.tensor(t).data->bytes.data() == data.bytes.data())
      return true;
  return false;
}

// The declared shape (a static dimension, or the rank) must agree with the result.
bool agrees(const ir::Tensor& y, const Shape& s) {
  if (!y.has_rank) return true;
  if (y.shape.size() != s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (y.shape[i] >= 0 && y.shape[i] != s[i]) return false;
  return true;
}

}  // namespace

Status fold_constants(ir::Graph& g, PassContext& ctx) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (ir::NodeId k : g.order()) {
      if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
      const ir::Node& n = g.node(k);
      if (!may_fold(g, n)) continue;
      auto folded = fold_node(g, n);
      if (!folded || folded->size() != n.outputs.size()) continue;
      bool ok = true;
      for (size_t o = 0; o < n.outputs.size(); ++o)
        ok &= agrees(g.tensor(n.outputs[o]), (*folded)[o].shape);
      if (!ok) continue;
      for (const Folded& f : *folded)
        if (!shares_an_input(g, n, f.data)) g.created.charge(f.data.bytes.size(), n.name);
      if (auto st = check_created_bytes(g); !st) return st;
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        ir::Tensor& y = g.tensor(n.outputs[o]);
        y.shape = std::move((*folded)[o].shape);
        y.has_rank = true;
        y.data = std::move((*folded)[o].data);
      }
      g.remove_node(k);
      changed = true;
    }
  }
  shape_eval::remove_dead_shape_nodes(g);
  return ok_status();
}

}  // namespace lite2onnx::passes
