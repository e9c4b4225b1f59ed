// Integer peepholes of the Q/DQ form: clamps and copies run on the integers,
// DequantizeLinear -> QuantizeLinear pairs that change nothing removed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

// The one zero point of a per-tensor Q/DQ node (0 when absent), or nothing.
std::optional<int64_t> zero_point_of(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() < 3 || !g.valid(n.inputs[2])) return 0;
  const ir::Tensor& z = g.tensor(n.inputs[2]);
  if (!z.is_const() || z.data->bytes.size() != 1) return std::nullopt;
  const auto b = std::to_integer<uint8_t>(z.data->bytes[0]);
  if (z.dtype == DataType::kInt8) return static_cast<int8_t>(b);
  if (z.dtype == DataType::kUInt8) return b;
  return std::nullopt;
}

// Whether QuantizeLinear `q` of DequantizeLinear `dq`'s value only re-types
// the integers: the same scale, and every integer of dq's type lands in q's
// type by the zero-point shift alone (no rounding, no clipping).
bool exact_retype(const ir::Graph& g, const ir::Node& dq, const ir::Node& q) {
  if (dq.inputs.size() < 2 || q.inputs.size() < 2 || !g.valid(dq.inputs[1]) ||
      !g.valid(q.inputs[1]) || !g.tensor(dq.inputs[1]).is_const() ||
      !g.tensor(q.inputs[1]).is_const() || g.tensor(dq.inputs[1]).data->bytes.size() != 4 ||
      !std::equal(
          g.tensor(dq.inputs[1]).data->bytes.begin(), g.tensor(dq.inputs[1]).data->bytes.end(),
          g.tensor(q.inputs[1]).data->bytes.begin(), g.tensor(q.inputs[1]).data->bytes.end()))
    return false;
  const auto from = zero_point_of(g, dq), to = zero_point_of(g, q);
  const DataType from_type = g.tensor(dq.inputs[0]).dtype, to_type = g.tensor(q.outputs[0]).dtype;
  if (!from || !to || !qdq_integer(from_type) || !qdq_integer(to_type)) return false;
  const auto a = integer_range(from_type), b = integer_range(to_type);
  return a.lo - *from + *to >= b.lo && a.hi - *from + *to <= b.hi;
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
  // DQ0 -> Q1 -> DQ1 -> Q2 where Q1 only re-types DQ0's integers (the int8 ->
  // uint8 hand-over at a graph input: same scale, zero point + 128): Q2 reads
  // DQ0's value, which is exactly DQ1's. ONNX Runtime merges such chains of
  // Q/DQ pairs with differing scales into one pair with a combined scale
  // (DoubleQDQPairsRemover), which moves results a step.
  for (ir::NodeId k : g.order()) {
    const ir::Node& q2 = g.node(k);
    if (q2.op != "QuantizeLinear" || q2.inputs.empty()) continue;
    const ir::NodeId d1 = g.producer(q2.inputs[0]);
    if (d1 == ir::kNoNode || g.node(d1).op != "DequantizeLinear") continue;
    const TensorId retyped = g.node(d1).inputs[0];
    const ir::NodeId q1 = g.producer(retyped);
    if (q1 == ir::kNoNode || g.node(q1).op != "QuantizeLinear" || g.is_graph_output(retyped) ||
        params_of(g, g.node(d1)) != params_of(g, g.node(q1)))
      continue;
    const ir::NodeId d0 = g.producer(g.node(q1).inputs[0]);
    if (d0 == ir::kNoNode || g.node(d0).op != "DequantizeLinear" ||
        !exact_retype(g, g.node(d0), g.node(q1)))
      continue;
    g.set_input(k, 0, g.node(d0).outputs[0]);
    ++diag.quantization.cancelled_pairs;
  }
  // Q/DQ nodes nobody reads any more.
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    if ((n.op == "DequantizeLinear" || n.op == "QuantizeLinear") && g.use_count(n.outputs[0]) == 0)
      g.remove_node(k);
  }
}

}  // namespace lite2onnx::passes::qdq
