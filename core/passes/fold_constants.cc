// Constant folding of the integer shape arithmetic TFLite models carry
// (SHAPE -> STRIDED_SLICE / PACK / ADD ... -> RESHAPE): a TFLite-dialect
// pre-pass that turns nodes whose inputs are all constants, and SHAPE of a
// tensor with a static shape, into constants before layout propagation. What
// each op computes is in the op table (OpEntry::evaluate: element_sources,
// arithmetic, fold; ops/evaluate.h); this pass drives it.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;
using ops::Folded;

// Folding makes new constants; shape arithmetic is tiny, so larger results
// (a FILL of a huge shape, say) are left to the runtime.
constexpr int64_t kMaxFoldElements = int64_t{1} << 20;

template <class T>
void put(std::vector<std::byte>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

// ---- data movement ----------------------------------------------------------

std::optional<std::vector<Folded>> fold_data_movement(const ir::Graph& g, const ir::Node& n) {
  for (TensorId t : n.inputs)
    if (g.valid(t) && !ops::plain_const(g, t)) return std::nullopt;
  auto maps = ops::element_sources(g, n, kMaxFoldElements);
  if (!maps) return std::nullopt;
  std::vector<Folded> out;
  for (size_t o = 0; o < maps->size(); ++o) {
    const ops::OutputMap& m = (*maps)[o];
    const ir::Tensor& y = g.tensor(n.outputs[o]);
    if (m.in_order) {  // a reshape keeps the bytes: the new constant shares them
      const ir::Tensor& x = g.tensor(n.inputs[0]);
      if (x.dtype != y.dtype) return std::nullopt;
      out.push_back({m.shape, *x.data});
      continue;
    }
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

std::optional<std::vector<Folded>> fold_binary(const ir::Graph& g, const ir::Node& n,
                                               ops::Arithmetic op) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const ir::Tensor* a = ops::plain_const(g, n.inputs[0]);
  const ir::Tensor* b = ops::plain_const(g, n.inputs[1]);
  const DataType type = g.tensor(n.outputs[0]).dtype;
  if (!a || !b || a->dtype != type || b->dtype != type || a->data->stored_type != type ||
      b->data->stored_type != type)
    return std::nullopt;
  if (type != DataType::kInt32 && type != DataType::kInt64 && type != DataType::kFloat32)
    return std::nullopt;
  auto range = activation_range(n);
  auto ys = ir::broadcast_shape(a->shape, b->shape);
  if (!range || !ys) return std::nullopt;
  auto count = ir::element_count(*ys);
  if (!count || *count > kMaxFoldElements) return std::nullopt;
  std::vector<int64_t> ia = ir::broadcast_sources(*ys, a->shape);
  std::vector<int64_t> ib = ir::broadcast_sources(*ys, b->shape);
  const size_t size = static_cast<size_t>(*count);
  Folded f;
  f.shape = *ys;
  if (type == DataType::kFloat32) {
    std::span<const float> va = a->data->as<float>(), vb = b->data->as<float>();
    std::vector<std::byte> bytes(size * 4);
    for (size_t i = 0; i < size; ++i) {
      auto v = ops::apply(op, va[static_cast<size_t>(ia[i])], vb[static_cast<size_t>(ib[i])]);
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
      auto v = ops::apply(op, ops::read_int(*a->data, static_cast<size_t>(ia[i])),
                          ops::read_int(*b->data, static_cast<size_t>(ib[i])));
      if (!v) return std::nullopt;
      // Results wrap to the type as TFLite's kernels do, then clamp.
      int64_t r = type == DataType::kInt32 ? static_cast<int32_t>(*v) : *v;
      if (static_cast<double>(r) < range->first) r = static_cast<int64_t>(range->first);
      if (static_cast<double>(r) > range->second) r = static_cast<int64_t>(range->second);
      values[i] = r;
    }
    f.data = ir::ConstData::owned(ops::encode_ints(type, values), type);
  }
  return std::vector<Folded>{std::move(f)};
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
  const ops::OpEntry& e = ops::lookup(n);
  if (e.evaluate.fold) return e.evaluate.fold(g, n, kMaxFoldElements);
  if (e.evaluate.arithmetic != ops::Arithmetic::kNone)
    return fold_binary(g, n, e.evaluate.arithmetic);
  if (e.evaluate.element_sources) return fold_data_movement(g, n);
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

// Bytes of a node's results, from the shapes its outputs declare (nullopt
// when one is not static); 0 for a reshape, whose result shares its input's
// bytes (element_sources() maps a reshape whatever the bound, and nothing
// else within a bound of 0 elements).
std::optional<uint64_t> declared_result_bytes(const ir::Graph& g, const ir::Node& n) {
  uint64_t bytes = 0;
  for (TensorId t : n.outputs) {
    const ir::Tensor& y = g.tensor(t);
    const auto count = y.has_rank ? ir::element_count(y.shape) : std::nullopt;
    const uint64_t size = ir::element_size(y.dtype);
    if (!count || !size || static_cast<uint64_t>(*count) > UINT64_MAX / 2 / size / n.outputs.size())
      return std::nullopt;
    bytes += static_cast<uint64_t>(*count) * size;
  }
  if (bytes == 0) return bytes;
  if (auto maps = ops::element_sources(g, n, 0))
    if (std::all_of(maps->begin(), maps->end(), [](const ops::OutputMap& m) { return m.in_order; }))
      return 0;
  return bytes;
}

// What folding would create, added up from the declared shapes before
// anything is folded: the nodes whose inputs are constants, or results of
// nodes before them that fold. Folding that would pass the created-bytes
// budget (thousands of FILLs of a million elements, say) ends here, in
// microseconds per node, instead of after computing the budget's worth of
// constants. An upper bound: a node the evaluator then declines is counted.
Status check_folding_fits(const ir::Graph& g) {
  std::vector<bool> constant(g.tensor_count(), false);
  for (size_t t = 0; t < constant.size(); ++t)
    constant[t] = g.tensor(static_cast<TensorId>(t)).is_const();
  uint64_t total = 0, largest = 0;
  std::string largest_by;
  for (const ir::Node& n : g.nodes()) {
    if (!may_fold(g, n) || !ops::lookup(n).evaluable()) continue;
    bool inputs_constant = true;
    for (TensorId t : n.inputs) inputs_constant &= !g.valid(t) || constant[static_cast<size_t>(t)];
    if (!inputs_constant) continue;
    const auto bytes = declared_result_bytes(g, n);
    if (!bytes) continue;  // a shape known only once folded: checked then
    for (TensorId t : n.outputs) constant[static_cast<size_t>(t)] = true;
    total = *bytes > UINT64_MAX - total ? UINT64_MAX : total + *bytes;
    if (*bytes > largest) largest = *bytes, largest_by = n.name;
  }
  if (g.created().fits(total)) return ok_status();
  return planned_bytes_error(g, "constant folding", total, largest, largest_by);
}

}  // namespace

Status fold_constants(ir::Graph& g, PassContext& ctx) {
  if (auto st = check_folding_fits(g); !st) return st;
  bool changed = true;
  while (changed) {
    changed = false;
    for (ir::NodeId k : g.order()) {
      if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
      const ir::Node& n = g.node(k);
      if (!may_fold(g, n)) continue;
      // Checked before the work: what the declared shapes say it creates.
      if (auto bytes = declared_result_bytes(g, n); bytes && !g.created().admit(*bytes, n.name))
        return check_created_bytes(g);
      auto folded = fold_node(g, n);
      if (!folded || folded->size() != n.outputs.size()) continue;
      bool ok = true;
      for (size_t o = 0; o < n.outputs.size(); ++o)
        ok &= agrees(g.tensor(n.outputs[o]), (*folded)[o].shape);
      if (!ok) continue;
      for (const Folded& f : *folded)
        if (!shares_an_input(g, n, f.data)) g.created().charge(f.data.bytes.size(), n.name);
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
  remove_dead_shape_nodes(g);
  return ok_status();
}

size_t remove_dead_shape_nodes(ir::Graph& g) {
  size_t removed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<ir::NodeId> order = g.order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& n = g.node(*it);
      if (n.dialect != ir::Dialect::kTflite || !ops::lookup(n).evaluable()) continue;
      bool unused = true;
      for (TensorId t : n.outputs)
        if (g.valid(t) && (g.use_count(t) > 0 || g.tensor(t).is_variable)) unused = false;
      if (!unused) continue;
      g.remove_node(*it);
      ++removed;
      changed = true;
    }
  }
  return removed;
}

}  // namespace lite2onnx::passes
