// LowerContext: the helpers every op converter uses to append ONNX nodes.
#include <cstring>
#include <map>
#include <tuple>

#include "core/diagnostics.h"
#include "core/ops/common.h"
#include "core/ops/registry.h"
#include "core/options.h"

namespace lite2onnx::ops {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

LowerContext::LowerContext(ir::Graph& graph, std::vector<ir::Node>& out,
                           const ConvertOptions& options, Diagnostics& diagnostics)
    : graph_(graph), out_(out), options_(options), diag_(diagnostics) {}

int LowerContext::opset() const { return options_.opset; }
QuantizationMode LowerContext::quantization() const { return options_.quantization; }

TensorId LowerContext::operand(const ir::Node& n, size_t i, const Perm& layout, size_t rank) {
  TensorId id = n.inputs[i];
  const ir::Tensor& x = graph_.tensor(id);
  if (!x.is_const() || layout.empty()) return id;
  Shape shape = x.shape;
  if (shape.size() > rank) return id;
  shape.insert(shape.begin(), rank - shape.size(), 1);
  if (shape.size() != layout.size()) return id;
  // One alias per constant, layout and rank: a weight shared by many ops is
  // written once per layout it is read in.
  auto [cached, fresh] = aliases_.try_emplace({id, layout, rank}, ir::kNoTensor);
  if (!fresh) return cached->second;
  bool expanded = shape.size() != x.shape.size();
  // Only leading 1s: a per-axis quantization always follows (checked anyway).
  std::optional<ir::Tensor> view = ir::constant_view(x, std::move(shape));
  if (!view) {
    aliases_.erase(cached);
    return id;
  }
  ir::Tensor alias = std::move(*view);
  alias.layout = layout;
  if (expanded || !ir::keeps_memory_order(alias.shape, layout))
    diag_.rewritten_initializers.push_back(
        {x.name, "operand " + std::to_string(i) + " of " + n.name + " (" + n.op + ")" +
                     (expanded ? " broadcast to rank " + std::to_string(rank) : std::string()) +
                     " in layout " + ir::to_string(layout)});
  cached->second = graph_.add_tensor(std::move(alias));
  return cached->second;
}

TensorId LowerContext::constant_in_layout(TensorId id, const Perm& layout, const std::string& why) {
  const ir::Tensor& x = graph_.tensor(id);
  if (ir::is_identity(layout) || x.layout == layout) return id;
  auto [cached, fresh] = aliases_.try_emplace({id, ir::normalized(layout), 0}, ir::kNoTensor);
  if (!fresh) return cached->second;
  ir::Tensor alias = x;
  alias.layout = ir::normalized(layout);
  if (!ir::keeps_memory_order(alias.shape, alias.layout))
    diag_.rewritten_initializers.push_back({x.name, (why.empty() ? std::string("permuted") : why) +
                                                        " " + ir::to_string(alias.layout)});
  cached->second = graph_.add_tensor(std::move(alias));
  return cached->second;
}

TensorId LowerContext::integer_constant(TensorId id) {
  const ir::Tensor& x = graph_.tensor(id);
  if (!x.quantized_type) return id;
  ir::Tensor integers = x;
  integers.dtype = *x.quantized_type;
  integers.quantized_type.reset();
  integers.quant.reset();
  return graph_.add_tensor(std::move(integers));
}

namespace {

// A constant of `type` holding `values` (a vector of their count without `shape`).
template <class T>
TensorId make_const(ir::Graph& g, const std::string& name, DataType type,
                    const std::vector<T>& values, std::optional<Shape> shape) {
  ir::Tensor t;
  t.name = name;
  t.dtype = type;
  t.shape = shape ? *shape : Shape{static_cast<int64_t>(values.size())};
  t.data = g.own(ir::to_bytes(values), type, name);
  return g.add_tensor(std::move(t));
}
}  // namespace

TensorId LowerContext::const_i64(const std::string& name, std::vector<int64_t> values,
                                 std::optional<Shape> shape) {
  return make_const(graph_, name, DataType::kInt64, values, std::move(shape));
}

TensorId LowerContext::const_f32(const std::string& name, std::vector<float> values,
                                 std::optional<Shape> shape) {
  return make_const(graph_, name, DataType::kFloat32, values, std::move(shape));
}

TensorId LowerContext::const_f64(const std::string& name, std::vector<double> values,
                                 std::optional<Shape> shape) {
  return make_const(graph_, name, DataType::kFloat64, values, std::move(shape));
}

TensorId LowerContext::const_scalar(const std::string& name, DataType type, double value) {
  std::vector<std::byte> bytes;
  switch (type) {
    case DataType::kFloat32:
      bytes = ir::to_bytes(std::vector<float>{static_cast<float>(value)});
      break;
    case DataType::kInt32:
      bytes = ir::to_bytes(std::vector<int32_t>{static_cast<int32_t>(value)});
      break;
    case DataType::kInt64:
      bytes = ir::to_bytes(std::vector<int64_t>{static_cast<int64_t>(value)});
      break;
    case DataType::kInt8:
      bytes = ir::to_bytes(std::vector<int8_t>{static_cast<int8_t>(value)});
      break;
    case DataType::kUInt8:
      bytes = ir::to_bytes(std::vector<uint8_t>{static_cast<uint8_t>(value)});
      break;
    case DataType::kInt16:
      bytes = ir::to_bytes(std::vector<int16_t>{static_cast<int16_t>(value)});
      break;
    case DataType::kFloat64:
      bytes = ir::to_bytes(std::vector<double>{value});
      break;
    default:
      bytes = ir::to_bytes(std::vector<float>{static_cast<float>(value)});
      type = DataType::kFloat32;
  }
  ir::Tensor t;
  t.name = name;
  t.dtype = type;
  t.shape = {};
  t.data = graph_.own(std::move(bytes), type, name);
  return graph_.add_tensor(std::move(t));
}

TensorId LowerContext::temp_like(TensorId like, const std::string& suffix) {
  ir::Tensor t = graph_.tensor(like);
  t.name += "/" + suffix;
  t.data.reset();
  t.is_variable = false;
  t.quant.reset();
  t.quantized_type.reset();
  return graph_.add_tensor(std::move(t));
}

TensorId LowerContext::temp(const std::string& name, DataType type) {
  ir::Tensor t;
  t.name = name;
  t.dtype = type;
  t.has_rank = false;
  return graph_.add_tensor(std::move(t));
}

ir::Node& LowerContext::emit(const ir::Node& source, const std::string& op_type,
                             std::vector<TensorId> inputs, std::vector<TensorId> outputs,
                             const std::string& suffix) {
  ir::Node n;
  n.dialect = ir::Dialect::kOnnx;
  n.op = op_type;
  n.name = suffix.empty() ? source.name : source.name + "/" + suffix;
  n.source_op = source.source_op;
  n.source_subgraph = source.source_subgraph;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  out_.push_back(std::move(n));
  return out_.back();
}

Result<TensorId> LowerContext::fused_activation(const ir::Node& source, TensorId out) {
  std::string act = source.attrs.get_string("fused_activation_function", "NONE");
  if (act == "NONE") return out;
  if (act == "TANH" || act == "SIGN_BIT") {
    // TFLite's kernels only clamp to an activation range, which is unbounded
    // for these: the runtime ignores them, and so do we.
    diag_.warnings.push_back(source.name + ": fused activation " + act +
                             " is ignored, as TFLite's kernels ignore it");
    return out;
  }
  // The main op writes `pre`; the activation turns it into `out`. The caller
  // emits its node first, so the activation node is appended by finish().
  TensorId pre = temp_like(out, "pre_" + act);
  DataType type = graph_.tensor(out).dtype;
  if (act == "RELU") {
    pending_.push_back({source, "Relu", {pre}, out});
  } else if (act == "RELU6" || act == "RELU_N1_TO_1" || act == "RELU_0_TO_1") {
    double lo = act == "RELU_N1_TO_1" ? -1 : 0;
    double hi = act == "RELU6" ? 6 : 1;
    pending_.push_back({source,
                        "Clip",
                        {pre, const_scalar(source.name + "/clip_min", type, lo),
                         const_scalar(source.name + "/clip_max", type, hi)},
                        out});
  } else {
    return error(source, "fused activation " + act + " is not supported");
  }
  return pre;
}

void LowerContext::finish() {
  for (auto& p : pending_) emit(p.source, p.op_type, p.inputs, {p.output}, p.op_type);
  pending_.clear();
}

Error LowerContext::error(const ir::Node& n, const std::string& message) const {
  Error e = make_error(ErrorCode::kInvalidModel,
                       "op " + std::to_string(n.source_op) + " (" + n.op + "): " + message);
  e.op_index = n.source_op;
  return e;
}

Error LowerContext::unsupported(const ir::Node& n, Refusal why) const {
  Error e = make_error(ErrorCode::kUnsupported, "1 operator cannot be converted: op " +
                                                    std::to_string(n.source_op) + " (" + n.op +
                                                    "): " + why.text);
  e.op_index = n.source_op;
  e.unsupported.push_back({n.source_op, n.op, std::move(why.text), to_string(why.code)});
  return e;
}

bool touches_quantized(const ir::Graph& g, const ir::Node& n) {
  for (auto list : {&n.inputs, &n.outputs})
    for (TensorId t : *list)
      if (g.valid(t) && g.tensor(t).quantized_type) return true;
  return false;
}

bool is_hybrid(const ir::Graph& g, const ir::Node& n) {
  // The weights: the first input present after the data (a CIFG LSTM has no
  // input-gate weights in slot 1).
  size_t k = 1;
  while (k < n.inputs.size() && !g.valid(n.inputs[k])) ++k;
  if (k >= n.inputs.size() || !g.valid(n.inputs[0])) return false;
  const ir::Tensor& data = g.tensor(n.inputs[0]);
  const ir::Tensor& weights = g.tensor(n.inputs[k]);
  return data.dtype == ir::DataType::kFloat32 && !data.quantized_type && weights.is_const() &&
         weights.quantized_type.has_value() && weights.quant && !weights.quant->dequantized_by_op;
}

const char* activation_name(int a) {
  switch (a) {
    case 0:
      return "NONE";
    case 1:
      return "RELU";
    case 2:
      return "RELU_N1_TO_1";
    case 3:
      return "RELU6";
    case 4:
      return "TANH";
    case 5:
      return "SIGN_BIT";
    default:
      return "UNKNOWN";
  }
}

ir::TensorId state_output(const ir::Node& n, size_t k) {
  const std::vector<int64_t> at = n.attrs.get_ints("state_outputs");
  if (k >= at.size() || at[k] < 0 || static_cast<size_t>(at[k]) >= n.outputs.size())
    return ir::kNoTensor;
  return n.outputs[static_cast<size_t>(at[k])];
}

size_t own_outputs(const ir::Node& n) {
  size_t exposed = 0;
  for (int64_t at : n.attrs.get_ints("state_outputs")) exposed += at >= 0;
  exposed += n.attrs.get_ints("op_state").size() / 2;
  return n.outputs.size() >= exposed ? n.outputs.size() - exposed : 0;
}

ir::TensorId op_state_input(const ir::Node& n, size_t k) {
  const std::vector<int64_t> at = n.attrs.get_ints("op_state");
  if (2 * k + 1 >= at.size() || at[2 * k] < 0 || static_cast<size_t>(at[2 * k]) >= n.inputs.size())
    return ir::kNoTensor;
  return n.inputs[static_cast<size_t>(at[2 * k])];
}

ir::TensorId op_state_output(const ir::Node& n, size_t k) {
  const std::vector<int64_t> at = n.attrs.get_ints("op_state");
  if (2 * k + 1 >= at.size() || at[2 * k + 1] < 0 ||
      static_cast<size_t>(at[2 * k + 1]) >= n.outputs.size())
    return ir::kNoTensor;
  return n.outputs[static_cast<size_t>(at[2 * k + 1])];
}

std::optional<LayoutPlan> propagate_data_input(const ir::Graph&, const ir::Node& n,
                                               std::span<const Perm> in) {
  const Perm p = in.empty() ? Perm{} : in[0];
  return plan_for(n, p, 0, p);
}

std::optional<LayoutPlan> propagate_same(const ir::Graph& g, const ir::Node& n,
                                         std::span<const ir::Perm> in) {
  // Every non-constant input must share one layout: the first non-identity
  // one among them (so a Concat of a Conv output and a graph input runs in
  // NCHW); the pass transposes the odd ones out.
  Perm p;
  size_t rank = 0;
  bool first = true;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!g.valid(n.inputs[i]) || g.tensor(n.inputs[i]).is_const()) continue;
    if (first) rank = g.tensor(n.inputs[i]).rank();
    if (g.tensor(n.inputs[i]).rank() != rank) break;
    if (first || (p.empty() && !in[i].empty())) p = in[i];
    first = false;
  }
  LayoutPlan plan;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    bool data = g.valid(n.inputs[i]) && !g.tensor(n.inputs[i]).is_const();
    if (data && g.tensor(n.inputs[i]).rank() != rank && !p.empty()) return std::nullopt;
    plan.inputs.push_back(data ? p : Perm{});
  }
  for (TensorId o : n.outputs) {
    if (g.tensor(o).rank() != rank && !p.empty()) return std::nullopt;
    plan.outputs.push_back(p);
  }
  return plan;
}

}  // namespace lite2onnx::ops
