// --quantization dequantize: a float model that computes what the quantized
// one does (constants folded to float32, activations clamped to their
// quantized range and grid).
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "core/ir/onnx_ops.h"
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes::qdq {
namespace {

using ir::DataType;
using ir::TensorId;

// Ops that only move or pick values: their output stays within the range of
// an input quantized like it, so no clamp is needed after them.
bool moves_values(const ir::Node& n) { return ir::onnx_traits(n).picks_values; }

// A quantized activation saturates at the ends of its integer range: the
// float model clamps there too (a Clip after the producer), unless the
// producer only moves values of an input quantized the same way.
void clamp_activations(ir::Graph& g, Diagnostics& diag) {
  std::vector<ir::Node> nodes = g.take_nodes();
  std::vector<ir::Node> rewritten;
  rewritten.reserve(nodes.size());
  for (auto& n : nodes) {
    std::vector<std::pair<TensorId, TensorId>> clamps;  // (float value, clamped tensor)
    bool passthrough = moves_values(n) && !n.inputs.empty() && g.valid(n.inputs[0]);
    for (auto& o : n.outputs) {
      const ir::Tensor& t = g.tensor(o);
      if (!t.quantized_type || t.is_const() || !t.quant || t.quant->scale.size() != 1) continue;
      if (passthrough && same_quantization(g.tensor(n.inputs[0]), t)) continue;
      ir::Tensor pre = t;
      pre.name = n.name + "/unclamped";
      pre.quantized_type.reset();
      pre.quant.reset();
      TensorId p = g.add_tensor(std::move(pre));
      clamps.emplace_back(p, o);
      o = p;
    }
    const std::string producer_name = n.name;
    const int source_op = n.source_op;
    rewritten.push_back(std::move(n));
    for (const auto& clamp : clamps) {
      // Named variables, not a structured binding: clang 14 (the fuzz build)
      // cannot capture a binding in the lambdas below.
      const TensorId value = clamp.first, tensor = clamp.second;
      const ir::Tensor& t = g.tensor(tensor);
      const double s = t.quant->scale[0], zp = static_cast<double>(zero_point(*t.quant, 0));
      const auto range = integer_range(*t.quantized_type);
      const double qmin = static_cast<double>(range.lo), qmax = static_cast<double>(range.hi);
      auto scalar = [&](const std::string& name, double v) {
        float f = static_cast<float>(v);
        std::vector<std::byte> bytes(4);
        std::memcpy(bytes.data(), &f, 4);
        ir::Tensor c;
        c.name = producer_name + name;
        c.data = g.own(std::move(bytes), DataType::kFloat32, c.name);
        return g.add_tensor(std::move(c));
      };
      // x -> Div(scale) -> Round -> Clip(qmin - zp, qmax - zp) -> Mul(scale):
      // DequantizeLinear(QuantizeLinear(x)) in float ops, so the values stay
      // on TFLite's integer grid (rounding matters: dropping it moved 2% of
      // yamnet's scores by more than 2% of their range).
      auto add = [&](const std::string& op, const std::string& suffix, std::vector<TensorId> in,
                     TensorId out) {
        ir::Node node;
        node.dialect = ir::Dialect::kOnnx;
        node.op = op;
        node.name = producer_name + suffix;
        node.source_op = source_op;
        node.inputs = std::move(in);
        node.outputs = {out};
        rewritten.push_back(std::move(node));
      };
      auto temp = [&](const std::string& suffix) {
        ir::Tensor x = g.tensor(value);
        x.name = producer_name + suffix;
        return g.add_tensor(std::move(x));
      };
      const TensorId scale = scalar("/scale", s);
      if (s == 0) {  // the value is 0 (Div by 0 would make it NaN)
        add("Mul", "/zero_scale", {value, scale}, tensor);
        diag.quantization.nodes["Mul: activation of scale 0"] += 1;
        continue;
      }
      const TensorId steps = temp("/steps"), rounded = temp("/rounded"), clamped = temp("/clamped");
      add("Div", "/to_steps", {value, scale}, steps);
      add("Round", "/round", {steps}, rounded);
      add("Clip", "/quantized_range",
          {rounded, scalar("/range_min", qmin - zp), scalar("/range_max", qmax - zp)}, clamped);
      add("Mul", "/from_steps", {clamped, scale}, tensor);
      diag.quantization.nodes["Div/Round/Clip/Mul: activation on its quantized grid"] += 1;
    }
  }
  g.set_nodes(std::move(rewritten));
}

}  // namespace

// --quantization dequantize: integer constants become float32 constants (the
// layout is still applied when they are written), activations are clamped to
// their quantized range, and no Q/DQ node is made.
Status fold_to_float(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint) {
  clamp_activations(g, diag);

  // Aliases of one constant (layouts, broadcasts) share one float copy.
  using Source = std::tuple<const std::byte*, size_t, DataType, size_t, std::vector<float>,
                            std::vector<int64_t>>;
  std::map<Source, ir::ConstData> folded;
  for (TensorId i = 0; static_cast<size_t>(i) < g.tensor_count(); ++i) {
    if (checkpoint.should_stop()) return checkpoint.status();
    ir::Tensor& t = g.tensor(i);
    if (!t.quantized_type) continue;
    if (t.is_const() && !g.uses(i).empty()) {
      const ir::QuantParams& q = *t.quant;
      Source source{t.data->bytes.data(),
                    t.data->bytes.size(),
                    *t.quantized_type,
                    channel_stride(t, q),
                    q.scale,
                    q.zero_point};
      if (auto it = folded.find(source); it != folded.end()) {
        t.data = it->second;
        t.quantized_type.reset();
        continue;
      }
      auto values = dequantized_copy(g, t);
      if (!values) return values.take_error();
      t.data = *values;
      folded.emplace(std::move(source), *t.data);
      ++diag.quantization.nodes["folded to float32: integer constant"];
    }
    t.quantized_type.reset();
  }
  return ok_status();
}

}  // namespace lite2onnx::passes::qdq
