// Integer peepholes of the Q/DQ form: clamps and copies run on the integers,
// DequantizeLinear -> QuantizeLinear pairs that change nothing removed.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ir/onnx_ops.h"
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes::qdq {
namespace {

using ir::DataType;
using ir::TensorId;

// Parameters of a Q/DQ node, as (scale bytes, zero-point bytes, axis).
std::tuple<std::vector<std::byte>, std::vector<std::byte>, int64_t> params_of(const ir::Graph& g,
                                                                              const ir::Node& n) {
  auto bytes = [&](size_t i) {
    if (i >= n.inputs.size() || !g.valid(n.inputs[i]) || !g.tensor(n.inputs[i]).is_const())
      return std::vector<std::byte>{};
    auto b = g.tensor(n.inputs[i]).data->bytes;
    return std::vector<std::byte>(b.begin(), b.end());
  };
  return {bytes(1), bytes(2), n.attrs.get_int("axis", 1)};
}

}  // namespace

// The integer range a Relu or Clip with constant bounds leaves on its
// quantized output, as TFLite computes a fused activation's range:
// [max(qmin, zp + round(lo / s)), min(qmax, zp + round(hi / s))].
std::optional<std::pair<int64_t, int64_t>> clamp_range(const ir::Graph& g, const ir::Node& n) {
  if ((n.op != "Relu" && n.op != "Clip") || n.outputs.size() != 1 || n.inputs.empty())
    return std::nullopt;
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!y.quantized_type || !y.quant || y.quant->scale.size() != 1) return std::nullopt;
  auto bound = [&](size_t i, float none) -> std::optional<float> {
    if (i >= n.inputs.size() || !g.valid(n.inputs[i])) return none;
    return float_scalar(g, n.inputs[i]);
  };
  const float inf = std::numeric_limits<float>::infinity();
  auto lo = n.op == "Relu" ? std::optional<float>(0.f) : bound(1, -inf);
  auto hi = n.op == "Relu" ? std::optional<float>(inf) : bound(2, inf);
  if (!lo || !hi || std::isnan(*lo) || std::isnan(*hi)) return std::nullopt;  // hostile bounds
  const double s = y.quant->scale[0], zp = static_cast<double>(zero_point(*y.quant, 0));
  if (s == 0) return std::nullopt;  // the value is 0 whatever the clamp
  const auto range = integer_range(*y.quantized_type);
  auto level = [&](float v, int64_t none) {
    if (std::isinf(v)) return none;
    return static_cast<int64_t>(std::clamp(zp + std::round(v / s), static_cast<double>(range.lo),
                                           static_cast<double>(range.hi)));
  };
  return std::pair{level(*lo, range.lo), level(*hi, range.hi)};
}

// A Relu or Clip writing a quantized tensor is implied by QuantizeLinear's
// saturation when its bounds quantize to the ends of the integer range:
// Q(clamp(x)) == Q(x) for every x. (TFLite's integer kernels fold fused
// activations into that range the same way.)
bool clamp_implied(const ir::Graph& g, const ir::Node& n) {
  auto r = clamp_range(g, n);
  if (!r) return false;
  const auto range = integer_range(*g.tensor(n.outputs[0]).quantized_type);
  return r->first == range.lo && r->second == range.hi;
}

// TFLite's integer kernels requantize to the output scale, round, then clamp
// to the fused activation's range in integers. A Relu/Clip the output range
// does not imply is written the same way: the value before it is quantized
// with the output's parameters (so ONNX Runtime can run the producer as an
// integer kernel, QLinearConv say), and the clamp acts on dequantized
// integers, which QuantizeLinear maps back exactly.
std::set<TensorId> quantize_clamp_inputs(ir::Graph& g) {
  std::set<TensorId> integer_clamps;
  for (const ir::Node& n : g.nodes()) {
    if (!quantized_activation(g, n.outputs.empty() ? ir::kNoTensor : n.outputs[0]) ||
        !clamp_range(g, n) || clamp_implied(g, n))
      continue;
    TensorId in = n.inputs[0];
    if (!g.valid(in) || g.tensor(in).quantized_type || g.tensor(in).is_const() ||
        g.is_graph_input(in) || g.uses(in).size() != 1)
      continue;
    const ir::Tensor& out = g.tensor(n.outputs[0]);
    if (!out.quant || out.quant->scale.size() != 1) continue;
    g.tensor(in).quant = out.quant;
    g.tensor(in).quantized_type = out.quantized_type;
    integer_clamps.insert(n.outputs[0]);
  }
  return integer_clamps;
}

// Ops that only move values around (TFLite's integer kernels copy the
// integers: same parameters in and out), run on the integer tensors
// themselves instead of between a DequantizeLinear and a QuantizeLinear.
// Every one of them takes int8/uint8 in ONNX at opsets 13..17.
bool copies_integers(const ir::Graph& g, const ir::Node& n) {
  if (!ir::onnx_traits(n).copies_integers || n.outputs.empty()) return false;
  const ir::Tensor* first = nullptr;
  for (TensorId o : n.outputs) {
    if (!quantized_activation(g, o)) return false;
    if (first && !same_quantization(*first, g.tensor(o))) return false;
    first = &g.tensor(o);
  }
  // Inputs were written before this node: a quantized activation is an
  // integer tensor by now (dtype int8/uint8, its parameters in `quant`). A
  // reshape reads them with the output's parameters whatever they are.
  const bool reinterprets = ir::onnx_traits(n).reinterprets;
  auto same_integers = [&](const ir::Tensor& x) {
    return !x.is_const() && x.quant && x.dtype == *first->quantized_type &&
           (reinterprets || same_params(*x.quant, *first->quant));
  };
  bool reads_integers = false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorId t = n.inputs[i];
    if (!g.valid(t)) continue;
    const ir::Tensor& x = g.tensor(t);
    if (n.op == "Pad" && i == 2) {
      // constant_value: a float 0 becomes the zero point; anything else stays float
      if (float_scalar(g, t) != 0.f) return false;
      continue;
    }
    if (x.quantized_type || (x.quant && qdq_integer(x.dtype) && !x.is_const())) {
      if (!same_integers(x)) return false;  // another scale, or a quantized constant
      reads_integers = true;
    } else if (x.dtype == DataType::kFloat32) {
      return false;  // a float operand: not a copy
    }                // else shapes, indices, pads
  }
  if (n.op == "Pad" && n.attrs.get_string("mode", "constant") != "constant") return false;
  return reads_integers;
}

// DequantizeLinear -> QuantizeLinear with the same parameters is the integer
// tensor it started from.
void cancel_pairs(ir::Graph& g, Diagnostics& diag) {
  for (ir::NodeId k : g.order()) {
    const ir::Node& q = g.node(k);
    if (q.op != "QuantizeLinear" || q.inputs.empty() || g.is_graph_output(q.outputs[0])) continue;
    const ir::NodeId p = g.producer(q.inputs[0]);
    if (p == ir::kNoNode || g.node(p).op != "DequantizeLinear") continue;
    const ir::Node& dq = g.node(p);
    if (params_of(g, dq) != params_of(g, q) ||
        g.tensor(dq.inputs[0]).dtype != g.tensor(q.outputs[0]).dtype)
      continue;
    const TensorId integer = dq.inputs[0], out = q.outputs[0];
    g.remove_node(k);
    g.replace_uses(out, integer);
    ++diag.quantization.cancelled_pairs;
  }
  // DequantizeLinear nodes nobody reads any more.
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    if (n.op == "DequantizeLinear" && g.use_count(n.outputs[0]) == 0) g.remove_node(k);
  }
}

}  // namespace lite2onnx::passes::qdq
