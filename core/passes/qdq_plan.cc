// plan_qdq: checks every quantization parameter and marks quantized tensors
// (see qdq.h), dequantize/quantize of constants folded, biases given the scale
// TFLite's integer kernels use.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes {
namespace {

using ir::DataType;
using ir::TensorId;
using namespace qdq;  // NOLINT: the shared quantization helpers

bool int16_seen(const ir::Graph& g) {
  for (TensorId t = 0; static_cast<size_t>(t) < g.tensor_count(); ++t)
    if (g.tensor(t).quantized_type == DataType::kInt16) return true;
  return false;
}

// Converters write an infinite scale for a channel whose calibration range
// was infinite (dead channels of pruned networks). TFLite's integer kernels
// give such a channel no defined value (its requantization multiplier is not
// finite); read as 0, it adds nothing, which is what the model computes
// wherever the channel feeds a tensor of scale 0 (the case in real files).
void read_non_finite_scales_as_zero(ir::Tensor& t, Diagnostics& diag) {
  size_t count = 0;
  for (float& s : t.quant->scale)
    if (std::isinf(s)) {
      s = 0;
      ++count;
    }
  if (count)
    diag.warnings.push_back("tensor '" + t.name + "': " + std::to_string(count) +
                            " infinite quantization scale" + (count == 1 ? "" : "s") +
                            " read as 0 (no defined value in TFLite's integer kernels)");
}

// TOCO-era hybrid files store weights as uint8 with a zero point (often 128),
// yet TFLite's hybrid CONV_2D and FULLY_CONNECTED read the bytes as int8 with
// zero point 0 (both TFLite runtimes agree: generated models match only so).
// The weight is read that way here.
void read_uint8_hybrid_weights(ir::Graph& g, Diagnostics& diag) {
  std::map<TensorId, TensorId> as_int8;  // one alias per weight
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    const auto& slots = ops::lookup(n).quantization.bias;
    if (!slots || !slots->uint8_hybrid_weights_as_int8 || n.dialect != ir::Dialect::kTflite ||
        n.inputs.size() <= std::max(slots->data, slots->weight))
      continue;
    const TensorId x = n.inputs[slots->data], w = n.inputs[slots->weight];
    if (!g.valid(x) || !g.valid(w) || g.tensor(x).dtype != DataType::kFloat32 ||
        g.tensor(x).quant || g.tensor(w).dtype != DataType::kUInt8 || !g.tensor(w).quant ||
        !g.tensor(w).is_const())
      continue;
    auto [it, added] = as_int8.try_emplace(w, ir::kNoTensor);
    if (added) {
      ir::Tensor alias = g.tensor(w);
      alias.dtype = DataType::kInt8;
      alias.data->stored_type = DataType::kInt8;  // the same bytes
      alias.quant->zero_point.assign(alias.quant->zero_point.size(), 0);
      alias.quant->uint8_hybrid_weight = true;
      it->second = g.add_tensor(std::move(alias));
    }
    g.set_input(k, slots->weight, it->second);
  }
  if (!as_int8.empty())
    diag.warnings.push_back(
        std::to_string(as_int8.size()) + " uint8 weight tensor" + (as_int8.size() == 1 ? "" : "s") +
        " of float (hybrid) ops (first: '" + g.tensor(as_int8.begin()->first).name +
        "') read as int8 with zero point 0, as TFLite's hybrid kernels read them");
}

// The scale TFLite's integer kernel gives an int32 bias: input scale x filter
// scale, per output channel. The bias tensor's own parameters are never read
// by the kernel, so this is what the model computes even when they are wrong.
Status plan_biases(ir::Graph& g, Diagnostics& diag) {
  std::map<TensorId, TensorId> derived_alias;  // keeps one alias per bias when shared
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    const auto& slots = ops::lookup(n).quantization.bias;
    if (!slots || n.dialect != ir::Dialect::kTflite || n.inputs.size() <= slots->bias) continue;
    TensorId b = n.inputs[slots->bias];
    if (!g.valid(b) || !g.tensor(b).is_const() ||
        (g.tensor(b).dtype != DataType::kInt32 && g.tensor(b).dtype != DataType::kInt64))
      continue;
    const ir::Tensor& x = g.tensor(n.inputs[slots->data]);
    const ir::Tensor& w = g.tensor(n.inputs[slots->weight]);
    // int8 x int8 (int32 bias) and 16x8: int16 x int8 (int64 or int32 bias).
    if (!x.quant || !w.quant || x.quant->scale.size() != 1 ||
        !(qdq_integer(x.dtype) || x.dtype == DataType::kInt16) || !qdq_integer(w.dtype))
      continue;  // not an integer op: the bias keeps (and is checked on) its own parameters
    ir::QuantParams want;
    for (float ws : w.quant->scale) want.scale.push_back(x.quant->scale[0] * ws);
    want.axis = 0;
    const ir::Tensor& bias = g.tensor(b);
    if (bias.rank() != 1 ||
        (want.scale.size() > 1 && bias.shape[0] != static_cast<int64_t>(want.scale.size()))) {
      Error e = quant_error(ErrorCode::kInvalidModel, bias,
                            "bias of op " + std::to_string(n.source_op) + " (" + n.op + ") has " +
                                ir::to_string(bias.shape) + " elements for " +
                                std::to_string(want.scale.size()) + " filter scales");
      e.op_index = n.source_op;
      return e;
    }
    if (bias.quant && same_params(*bias.quant, want)) continue;
    // A bias shared by ops with different scales gets one alias per scale
    // (and one warning: the ops after the first read the alias).
    if (auto it = derived_alias.find(b);
        it != derived_alias.end() && same_params(*g.tensor(it->second).quant, want)) {
      g.set_input(k, slots->bias, it->second);
      continue;
    }
    bool close = bias.quant && bias.quant->scale.size() == want.scale.size() &&
                 param_problem(bias, bias.dtype).empty();
    for (size_t i = 0; close && i < want.scale.size(); ++i)
      close = std::fabs(bias.quant->scale[i] - want.scale[i]) <= 1e-5f * want.scale[i];
    if (!close) {
      std::string had = !bias.quant ? "no quantization"
                                    : std::to_string(bias.quant->scale.size()) +
                                          " scales on axis " + std::to_string(bias.quant->axis);
      std::string problem = bias.quant ? param_problem(bias, bias.dtype) : "";
      diag.warnings.push_back(
          "bias '" + bias.name + "' of op " + std::to_string(n.source_op) + " (" + n.op + ") has " +
          had + (problem.empty() ? "" : " (" + problem + ")") +
          "; it is dequantized with input scale x filter scale, the scale TFLite's integer "
          "kernel gives it");
    }
    ir::Tensor alias = g.tensor(b);
    alias.quant = want;
    TensorId a = g.add_tensor(std::move(alias));
    derived_alias[b] = a;
    g.set_input(k, slots->bias, a);
  }
  return ok_status();
}

// QUANTIZE of a float constant: quantized here, as TFLite's kernel would.
void quantize_constant(ir::Graph& g, const ir::Tensor& in, ir::Tensor& out) {
  const ir::QuantParams& q = *out.quant;
  auto values = in.data->as<float>();
  std::vector<std::byte> bytes(values.size());
  const size_t inner = channel_stride(out, q);
  const auto range = integer_range(out.dtype);
  const double lo = static_cast<double>(range.lo), hi = static_cast<double>(range.hi);
  for (size_t i = 0; i < values.size(); ++i) {
    size_t c = q.scale.size() > 1 ? (i / inner) % q.scale.size() : 0;
    // With scale 0 every integer dequantizes to 0: write the zero point.
    double v = (q.scale[c] == 0 ? 0.0 : std::round(static_cast<double>(values[i]) / q.scale[c])) +
               static_cast<double>(zero_point(q, c));
    v = std::min(hi, std::max(lo, v));
    if (out.dtype == DataType::kInt8)
      bytes[i] = static_cast<std::byte>(static_cast<int8_t>(v));
    else
      bytes[i] = static_cast<std::byte>(static_cast<uint8_t>(v));
  }
  out.data = g.own(std::move(bytes), out.dtype, out.name);
}

// DEQUANTIZE of an integer constant (unless `keep_dequantize`) and QUANTIZE
// of a float one leave a quantized constant (its DequantizeLinear comes at
// emission).
void fold_constant_quantization(ir::Graph& g, bool keep_dequantize) {
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    bool fold = false;
    if (n.dialect == ir::Dialect::kTflite && n.inputs.size() == 1 && n.outputs.size() == 1 &&
        g.valid(n.inputs[0]) && g.tensor(n.inputs[0]).is_const() &&
        !g.is_graph_output(n.outputs[0])) {
      const ir::Tensor& in = g.tensor(n.inputs[0]);
      ir::Tensor& out = g.tensor(n.outputs[0]);
      if (n.builtin == ir::builtin::kDequantize && !keep_dequantize && in.quantized_type &&
          in.shape == out.shape && out.dtype == DataType::kFloat32) {
        out.data = in.data;
        out.quant = in.quant;
        out.quant->dequantized_by_op = true;
        out.quantized_type = in.quantized_type;
        fold = true;
      } else if (n.builtin == ir::builtin::kQuantize && in.dtype == DataType::kFloat32 &&
                 !in.quantized_type && in.data->stored_type == DataType::kFloat32 &&
                 out.quantized_type && in.shape == out.shape) {
        out.dtype = *out.quantized_type;
        quantize_constant(g, in, out);
        out.dtype = DataType::kFloat32;
        fold = true;
      }
    }
    if (fold) g.remove_node(k);
  }
}

}  // namespace

Status plan_qdq(ir::Graph& g, PassContext& ctx) {
  Diagnostics& diag = ctx.diag;
  const bool dequantize = ctx.options.quantization == QuantizationMode::kDequantize;
  read_uint8_hybrid_weights(g, diag);
  if (auto st = plan_biases(g, diag); !st) return st;
  std::set<TensorId> biases;
  for (const ir::Node& n : g.nodes())
    if (const auto& slots = ops::lookup(n).quantization.bias;
        slots && n.inputs.size() > slots->bias)
      biases.insert(n.inputs[slots->bias]);
  std::vector<std::string> zero_scale_activations;
  for (TensorId i = 0; static_cast<size_t>(i) < g.tensor_count(); ++i) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    // Only tensors the graph uses: a model may carry unused ones.
    if (g.producer(i) == ir::kNoNode && g.uses(i).empty() && !g.is_graph_input(i) &&
        !g.is_graph_output(i))
      continue;
    ir::Tensor& t = g.tensor(i);
    if (!t.quant || t.quantized_type) continue;
    bool bias = (t.dtype == DataType::kInt32 || t.dtype == DataType::kInt64) && t.is_const() &&
                biases.count(static_cast<TensorId>(i));
    // int16 (16x8) has no QDQ form below opset 21: computed in float32 on its
    // grid in either mode (emulate_int16, fold_to_float).
    bool int16 = t.dtype == DataType::kInt16;
    if (!qdq_integer(t.dtype) && !bias && !int16) continue;
    if (t.is_const()) read_non_finite_scales_as_zero(t, diag);
    if (auto p = param_problem(t, t.dtype); !p.empty())
      return quant_error(ErrorCode::kInvalidModel, t, "invalid quantization: " + p);
    if (!t.is_const() && t.quant->scale.size() == 1 && t.quant->scale[0] == 0)
      zero_scale_activations.push_back(t.name);
    if (!t.is_const() && t.quant->scale.size() > 1)
      return quant_error(ErrorCode::kUnsupported, t,
                         "per-axis quantization of a non-constant tensor is not supported");
    t.quantized_type = t.dtype;
    t.dtype = DataType::kFloat32;
    if (!t.is_const()) ++diag.quantization.quantized_activations;
  }
  // In exact mode a DEQUANTIZE of a constant stays: its float values are the
  // kernel's f32((q - z) * s), which its exact form computes.
  fold_constant_quantization(g, ctx.options.quantization == QuantizationMode::kExact);
  if (!zero_scale_activations.empty())
    diag.warnings.push_back(
        std::to_string(zero_scale_activations.size()) + " quantized activation" +
        (zero_scale_activations.size() == 1 ? " has" : "s have") + " scale 0 (first: '" +
        zero_scale_activations[0] +
        "'): their real value is 0 whatever the integers, as in TFLite's kernels "
        "(calibration saw only zeros there)");
  diag.quantization.mode = std::string(to_string(ctx.options.quantization));
  if (dequantize && int16_seen(g))
    diag.warnings.push_back(
        "int16 (16x8) quantized tensors are computed in float32: TFLite's integer kernels "
        "round at every op, so results differ by up to a few int16 steps");
  return ok_status();
}

}  // namespace lite2onnx::passes
