// Quantization as QuantizeLinear/DequantizeLinear (DESIGN.md "Quantization").
//
// plan_qdq (TFLite dialect, before layout propagation) checks every
// quantization parameter and turns each int8/uint8 quantized tensor into a
// float32 tensor that remembers its integer type (Tensor::quantized_type):
// op converters then lower the float op, and layouts, lowering and cleanup
// treat the tensor like any float one. materialize_qdq (ONNX dialect, last
// pass before emission) writes the Q/DQ nodes: constants stay integer
// initializers read through one DequantizeLinear, and each quantized
// activation gets one QuantizeLinear -> DequantizeLinear pair after its
// producer, however many readers it has.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "core/ir/builtins.h"
#include "core/ir/onnx_ops.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::DataType;
using ir::TensorId;

bool qdq_integer(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

std::string fmt_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

int64_t zero_point(const ir::QuantParams& q, size_t i) {
  return q.zero_point.empty() ? 0 : q.zero_point[q.zero_point.size() == 1 ? 0 : i];
}

bool int16_seen(const ir::Graph& g) {
  for (TensorId t = 0; static_cast<size_t>(t) < g.tensor_count(); ++t)
    if (g.tensor(t).quantized_type == DataType::kInt16) return true;
  return false;
}

// The values a quantized integer type holds (int32/int64 biases: zero point 0 only).
struct IntegerRange {
  int64_t lo, hi;
};
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

Error quant_error(ErrorCode code, const ir::Tensor& t, const std::string& message) {
  Error e = make_error(code, "tensor '" + t.name + "' (" + ir::to_string(t.dtype) + " " +
                                 ir::to_string(t.shape) + "): " + message);
  e.tensor = t.name;
  return e;
}

// Inputs (bias, data, weight) of the ops whose int32 bias TFLite adds straight
// into the integer accumulator, whose scale is input scale x filter scale.
struct BiasSlots {
  size_t bias, data, weight;
};
std::optional<BiasSlots> bias_slots(int builtin) {
  switch (builtin) {
    case ir::builtin::kConv2d:
    case ir::builtin::kDepthwiseConv2d:
    case ir::builtin::kFullyConnected:
      return BiasSlots{2, 0, 1};
    case ir::builtin::kTransposeConv:
      return BiasSlots{3, 2, 1};
    default:
      return std::nullopt;
  }
}

bool same_params(const ir::QuantParams& a, const ir::QuantParams& b) {
  if (a.scale.size() != b.scale.size()) return false;
  for (size_t i = 0; i < a.scale.size(); ++i)
    if (a.scale[i] != b.scale[i] || zero_point(a, i) != zero_point(b, i)) return false;
  return a.scale.size() <= 1 || a.axis == b.axis;
}

// The scale TFLite's integer kernel gives an int32 bias: input scale x filter
// scale, per output channel. The bias tensor's own parameters are never read
// by the kernel, so this is what the model computes even when they are wrong.
Status plan_biases(ir::Graph& g, Diagnostics& diag) {
  std::map<TensorId, TensorId> derived_alias;  // keeps one alias per bias when shared
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    auto slots = bias_slots(n.builtin);
    if (!slots || n.dialect != ir::Dialect::kTflite || n.inputs.size() <= slots->bias) continue;
    TensorId b = n.inputs[slots->bias];
    if (!g.valid(b) || g.tensor(b).dtype != DataType::kInt32 || !g.tensor(b).is_const()) continue;
    const ir::Tensor& x = g.tensor(n.inputs[slots->data]);
    const ir::Tensor& w = g.tensor(n.inputs[slots->weight]);
    if (!x.quant || !w.quant || x.quant->scale.size() != 1 || !qdq_integer(x.dtype) ||
        !qdq_integer(w.dtype))
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
    bool close = bias.quant && bias.quant->scale.size() == want.scale.size() &&
                 param_problem(bias, DataType::kInt32).empty();
    for (size_t i = 0; close && i < want.scale.size(); ++i)
      close = std::fabs(bias.quant->scale[i] - want.scale[i]) <= 1e-5f * want.scale[i];
    if (!close) {
      std::string had = !bias.quant ? "no quantization"
                                    : std::to_string(bias.quant->scale.size()) +
                                          " scales on axis " + std::to_string(bias.quant->axis);
      std::string problem = bias.quant ? param_problem(bias, DataType::kInt32) : "";
      diag.warnings.push_back(
          "bias '" + bias.name + "' of op " + std::to_string(n.source_op) + " (" + n.op + ") has " +
          had + (problem.empty() ? "" : " (" + problem + ")") +
          "; it is dequantized with input scale x filter scale, the scale TFLite's integer "
          "kernel gives it");
    }
    // A bias shared by ops with different scales gets one alias per scale.
    if (auto it = derived_alias.find(b);
        it != derived_alias.end() && same_params(*g.tensor(it->second).quant, want)) {
      g.set_input(k, slots->bias, it->second);
      continue;
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

// DEQUANTIZE of an integer constant and QUANTIZE of a float one leave a
// quantized constant (its DequantizeLinear comes at emission).
void fold_constant_quantization(ir::Graph& g) {
  for (ir::NodeId k : g.order()) {
    const ir::Node& n = g.node(k);
    bool fold = false;
    if (n.dialect == ir::Dialect::kTflite && n.inputs.size() == 1 && n.outputs.size() == 1 &&
        g.valid(n.inputs[0]) && g.tensor(n.inputs[0]).is_const() &&
        !g.is_graph_output(n.outputs[0])) {
      const ir::Tensor& in = g.tensor(n.inputs[0]);
      ir::Tensor& out = g.tensor(n.outputs[0]);
      if (n.builtin == ir::builtin::kDequantize && in.quantized_type && in.shape == out.shape &&
          out.dtype == DataType::kFloat32) {
        out.data = in.data;
        out.quant = in.quant;
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
  if (auto st = plan_biases(g, diag); !st) return st;
  std::set<TensorId> biases;
  for (const ir::Node& n : g.nodes())
    if (auto slots = bias_slots(n.builtin); slots && n.inputs.size() > slots->bias)
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
    // int16 (16x8) has no QDQ form below opset 21 (the preflight reports it);
    // dequantize mode folds it to float like the rest.
    bool int16 = t.dtype == DataType::kInt16 && dequantize;
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
  fold_constant_quantization(g);
  if (!zero_scale_activations.empty())
    diag.warnings.push_back(
        std::to_string(zero_scale_activations.size()) + " quantized activation" +
        (zero_scale_activations.size() == 1 ? " has" : "s have") + " scale 0 (first: '" +
        zero_scale_activations[0] +
        "'): their real value is 0 whatever the integers, as in TFLite's kernels "
        "(calibration saw only zeros there)");
  diag.quantization.mode = dequantize ? "dequantize" : "qdq";
  if (dequantize && int16_seen(g))
    diag.warnings.push_back(
        "int16 (16x8) quantized tensors are computed in float32: TFLite's integer kernels "
        "round at every op, so results differ by up to a few int16 steps");
  return ok_status();
}

namespace {

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

// The float32 values of quantized constant `t` (scale x (q - zero point), per
// channel), owned by the graph and charged to its created-bytes budget.
Result<ir::ConstData> dequantized_copy(ir::Graph& g, const ir::Tensor& t) {
  const ir::QuantParams& q = *t.quant;
  if (q.scale.size() > 1 &&
      (q.axis < 0 || static_cast<size_t>(q.axis) >= t.rank() ||
       t.shape[static_cast<size_t>(q.axis)] != static_cast<int64_t>(q.scale.size())))
    return quant_error(ErrorCode::kInternal, t, "per-axis scales do not match the shape");
  const size_t inner = channel_stride(t, q);
  const size_t float_bytes =
      t.data->bytes.size() / std::max<size_t>(1, ir::element_size(*t.quantized_type)) * 4;
  if (!g.created.fits(float_bytes)) {
    g.created.charge(float_bytes, t.name);
    return check_created_bytes(g).error();
  }
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
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.own(std::move(bytes), DataType::kFloat32, t.name);
}

// Writes the Q/DQ nodes; see materialize_qdq.
class QdqWriter {
 public:
  QdqWriter(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint)
      : g_(g), diag_(diag), checkpoint_(checkpoint) {}

  Status run(bool keep_int8_activations) {
    if (!keep_int8_activations) store_int8_as_uint8();
    readers_.assign(g_.tensor_count(), 0);
    for (TensorId t = 0; static_cast<size_t>(t) < g_.tensor_count(); ++t)
      readers_[static_cast<size_t>(t)] = static_cast<int>(g_.uses(t).size());
    quantize_clamp_inputs();
    std::vector<ir::Node> nodes = g_.take_nodes();
    replaced_.resize(g_.tensor_count());
    for (size_t i = 0; i < replaced_.size(); ++i) replaced_[i] = static_cast<TensorId>(i);

    // Integer constants and graph inputs: one DequantizeLinear each, up front.
    std::set<TensorId> done;
    for (const auto& n : nodes)
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        TensorId t = n.inputs[i];
        if (g_.valid(t) && g_.tensor(t).quantized_type && g_.tensor(t).is_const() &&
            done.insert(t).second)
          if (auto st = dequantize_constant(t, n, i); !st) return st;
      }
    for (TensorId t : g_.inputs())
      if (g_.tensor(t).quantized_type && !g_.tensor(t).is_const()) dequantize_input(t);

    for (auto& n : nodes) {
      if (checkpoint_.should_stop()) return checkpoint_.status();
      if (!n.outputs.empty() && integer_clamps_.count(n.outputs[0])) {
        clamp_integers(n, n.inputs[0]);  // reads the integers, not their DequantizeLinear
        continue;
      }
      if (copies_integers(n)) {
        run_on_integers(std::move(n));
        continue;
      }
      for (auto& t : n.inputs)
        if (g_.valid(t)) t = replaced_[static_cast<size_t>(t)];
      // An Identity into a quantized tensor (QUANTIZE) is the QuantizeLinear
      // itself, and so is a Relu/Clip whose bounds the quantized range implies.
      bool copy = n.dialect == ir::Dialect::kOnnx && n.outputs.size() == 1 &&
                  quantized_activation(n.outputs[0]) &&
                  ((n.op == "Identity" && n.inputs.size() == 1) || clamp_implied(n));
      if (copy) {
        quantize_output(n.source_op, output_base(n, 0), n.inputs[0], n.outputs[0]);
        continue;
      }
      std::vector<std::tuple<size_t, TensorId, TensorId>> pending;  // (slot, float, quantized)
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        TensorId& o = n.outputs[k];
        if (!quantized_activation(o)) continue;
        if (readers_[static_cast<size_t>(o)] == 0 && !g_.is_graph_output(o)) {
          g_.tensor(o).quantized_type.reset();  // nobody reads it: stays float
          continue;
        }
        ir::Tensor pre = g_.tensor(o);
        pre.name = output_base(n, k) + "/float";
        pre.quantized_type.reset();
        pre.quant.reset();
        TensorId p = g_.add_tensor(std::move(pre));
        pending.emplace_back(k, p, o);
        o = p;
      }
      ir::Node producer = std::move(n);
      out_.push_back(std::move(producer));
      std::vector<std::string> bases;
      for (const auto& p : pending) bases.push_back(output_base(out_.back(), std::get<0>(p)));
      const int source = out_.back().source_op;
      for (size_t j = 0; j < pending.size(); ++j)
        quantize_output(source, bases[j], std::get<1>(pending[j]), std::get<2>(pending[j]));
    }
    g_.set_nodes(std::move(out_));
    cancel_pairs();
    for (const ir::Node& n : g_.nodes())
      if (auto it = why_.find(n.outputs[0]); it != why_.end())
        ++diag_.quantization.nodes[n.op + ": " + it->second];
    return ok_status();
  }

 private:
  // ONNX Runtime's integer kernels on x86 take uint8 activations. It rewrites
  // int8 QuantizeLinear -> DequantizeLinear pairs to uint8 itself, but only
  // where the QuantizeLinear has a single reader, so every op touching an int8
  // tensor read twice (the residual adds of a MobileNetV2) stays in float and
  // rounds differently from TFLite. uint8 with zero point + 128 holds the same
  // values, so inside the graph int8 activations are written as uint8, and so
  // are the int8 constants integer kernels meet beside them (not the weights
  // of Conv/ConvTranspose/Gemm/MatMul: uint8 x int8 is those kernels' pair).
  // Graph inputs and outputs keep int8 through an exact requantization at the
  // boundary (an Identity into the uint8 copy becomes the QuantizeLinear).
  void store_int8_as_uint8() {
    auto int8 = [&](TensorId t) {
      return g_.valid(t) && g_.tensor(t).quantized_type == DataType::kInt8;
    };
    auto widen = [&](ir::Tensor& t) {
      t.quantized_type = DataType::kUInt8;
      for (auto& z : t.quant->zero_point) z += 128;
    };
    auto uint8_copy = [&](TensorId t) {
      ir::Tensor c = g_.tensor(t);
      c.name += "/uint8";
      widen(c);
      return g_.add_tensor(std::move(c));
    };
    auto identity = [&](TensorId in, TensorId out, const std::string& name) {
      ir::Node n;
      n.dialect = ir::Dialect::kOnnx;
      n.op = "Identity";
      n.name = name;
      n.inputs = {in};
      n.outputs = {out};
      return n;
    };
    bool any = false;
    std::vector<bool> boundary(g_.tensor_count(), false);
    std::vector<ir::Node> head;
    // The boundary requantization only where an integer kernel would meet the
    // interface tensor: an input read by an op writing a quantized activation,
    // an output written by an op reading one (not, say, QUANTIZE of a float).
    auto quantized_value = [&](TensorId t) { return quantized_activation(t); };
    // Whether a node reading (writing) t writes (reads) a quantized activation.
    auto meets_integer_op = [&](TensorId t, bool reading) {
      auto touches = [&](const ir::Node& n) {
        const auto& other = reading ? n.outputs : n.inputs;
        return std::any_of(other.begin(), other.end(), quantized_value);
      };
      if (!reading) return g_.producer(t) != ir::kNoNode && touches(g_.node(g_.producer(t)));
      for (const ir::Use& u : g_.uses(t))
        if (touches(g_.node(u.node))) return true;
      return false;
    };
    // Graph inputs and outputs keep int8 whatever happens below.
    for (TensorId t : g_.inputs()) boundary[static_cast<size_t>(t)] = true;
    for (TensorId t : g_.outputs()) boundary[static_cast<size_t>(t)] = true;
    for (TensorId in : g_.inputs()) {
      if (!int8(in) || g_.tensor(in).is_const() || g_.is_graph_output(in) ||
          !meets_integer_op(in, /*reading=*/true))
        continue;
      TensorId c = uint8_copy(in);
      g_.replace_uses(in, c);
      head.push_back(identity(in, c, g_.tensor(in).name + "/to_uint8"));
      any = true;
    }
    std::vector<ir::Node> tail;
    for (TensorId out : g_.outputs()) {
      if (!int8(out) || g_.tensor(out).is_const() || g_.is_graph_input(out) ||
          !meets_integer_op(out, /*reading=*/false))
        continue;
      TensorId c = uint8_copy(out);
      g_.replace_uses(out, c);
      const ir::NodeId p = g_.producer(out);
      const auto& outs = g_.node(p).outputs;
      g_.set_output(p, static_cast<size_t>(std::find(outs.begin(), outs.end(), out) - outs.begin()),
                    c);
      tail.push_back(identity(c, out, g_.tensor(out).name + "/to_int8"));
      any = true;
    }
    boundary.resize(g_.tensor_count(), false);
    // Activations, then the int8 constants read beside a quantized activation.
    for (size_t i = 0; i < boundary.size(); ++i) {
      ir::Tensor& t = g_.tensor(static_cast<TensorId>(i));
      if (!boundary[i] && t.quantized_type == DataType::kInt8 && !t.is_const()) {
        widen(t);
        any = true;
      }
    }
    std::set<TensorId> keep, convert;
    for (const ir::Node& n : g_.nodes()) {
      bool integer_kernel = false;
      for (TensorId t : n.inputs) integer_kernel |= quantized_activation(t);
      for (TensorId t : n.outputs) integer_kernel |= quantized_activation(t);
      const bool weighted = ir::onnx_traits(n).weighted;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        TensorId t = n.inputs[k];
        if (!int8(t) || !g_.tensor(t).is_const()) continue;
        if ((weighted && k == 1) || !integer_kernel)
          keep.insert(t);
        else
          convert.insert(t);
      }
    }
    // Aliases of one constant (layouts, broadcasts) share one uint8 copy.
    std::map<std::pair<const std::byte*, size_t>, ir::ConstData> as_uint8;
    for (TensorId id : convert) {
      if (keep.count(id)) continue;  // also a weight: stays int8 for that reader
      ir::Tensor& t = g_.tensor(id);
      auto [copy, fresh] = as_uint8.try_emplace({t.data->bytes.data(), t.data->bytes.size()});
      if (fresh) {
        std::vector<std::byte> bytes(t.data->bytes.begin(), t.data->bytes.end());
        for (auto& b : bytes) b ^= std::byte{0x80};  // v + 128 in two's complement
        copy->second = g_.own(std::move(bytes), DataType::kUInt8, t.name);
      }
      t.data = copy->second;
      widen(t);
    }
    if (!any) return;
    const ir::NodeId front = g_.first();
    for (auto& n : head)
      front == ir::kNoNode ? g_.add_node(std::move(n)) : g_.add_node_before(front, std::move(n));
    for (auto& n : tail) g_.add_node(std::move(n));
    diag_.quantization.int8_activations_as_uint8 = true;
  }

  bool quantized_activation(TensorId t) const {
    return g_.valid(t) && g_.tensor(t).quantized_type && !g_.tensor(t).is_const();
  }

  // The value of a one-element float32 constant, or nothing.
  std::optional<float> float_scalar(TensorId t) const {
    if (!g_.valid(t)) return std::nullopt;
    const ir::Tensor& b = g_.tensor(t);
    if (!b.is_const() || b.quantized_type || b.data->stored_type != DataType::kFloat32 ||
        b.data->as<float>().size() != 1)
      return std::nullopt;
    return b.data->as<float>()[0];
  }

  // The integer range a Relu or Clip with constant bounds leaves on its
  // quantized output, as TFLite computes a fused activation's range:
  // [max(qmin, zp + round(lo / s)), min(qmax, zp + round(hi / s))].
  std::optional<std::pair<int64_t, int64_t>> clamp_range(const ir::Node& n) const {
    if ((n.op != "Relu" && n.op != "Clip") || n.outputs.size() != 1 || n.inputs.empty())
      return std::nullopt;
    const ir::Tensor& y = g_.tensor(n.outputs[0]);
    if (!y.quantized_type || !y.quant || y.quant->scale.size() != 1) return std::nullopt;
    auto bound = [&](size_t i, float none) -> std::optional<float> {
      if (i >= n.inputs.size() || !g_.valid(n.inputs[i])) return none;
      return float_scalar(n.inputs[i]);
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
  bool clamp_implied(const ir::Node& n) const {
    auto r = clamp_range(n);
    if (!r) return false;
    const auto range = integer_range(*g_.tensor(n.outputs[0]).quantized_type);
    return r->first == range.lo && r->second == range.hi;
  }

  // TFLite's integer kernels requantize to the output scale, round, then clamp
  // to the fused activation's range in integers. A Relu/Clip the output range
  // does not imply is written the same way: the value before it is quantized
  // with the output's parameters (so ONNX Runtime can run the producer as an
  // integer kernel, QLinearConv say), and the clamp acts on dequantized
  // integers, which QuantizeLinear maps back exactly.
  void quantize_clamp_inputs() {
    for (const ir::Node& n : g_.nodes()) {
      if (!quantized_activation(n.outputs.empty() ? ir::kNoTensor : n.outputs[0]) ||
          !clamp_range(n) || clamp_implied(n))
        continue;
      TensorId in = n.inputs[0];
      if (!g_.valid(in) || g_.tensor(in).quantized_type || g_.tensor(in).is_const() ||
          g_.is_graph_input(in) || readers_[static_cast<size_t>(in)] != 1)
        continue;
      const ir::Tensor& out = g_.tensor(n.outputs[0]);
      if (!out.quant || out.quant->scale.size() != 1) continue;
      g_.tensor(in).quant = out.quant;
      g_.tensor(in).quantized_type = out.quantized_type;
      integer_clamps_.insert(n.outputs[0]);
    }
  }

  // Ops that only move values around (TFLite's integer kernels copy the
  // integers: same parameters in and out), run on the integer tensors
  // themselves instead of between a DequantizeLinear and a QuantizeLinear.
  // Every one of them takes int8/uint8 in ONNX at opsets 13..17.
  bool copies_integers(const ir::Node& n) const {
    if (!ir::onnx_traits(n).copies_integers || n.outputs.empty()) return false;
    const ir::Tensor* first = nullptr;
    for (TensorId o : n.outputs) {
      if (!quantized_activation(o)) return false;
      if (first && !same_quantization(*first, g_.tensor(o))) return false;
      first = &g_.tensor(o);
    }
    // Inputs were written before this node: a quantized activation is an
    // integer tensor by now (dtype int8/uint8, its parameters in `quant`).
    auto same_integers = [&](const ir::Tensor& x) {
      return !x.is_const() && x.quant && x.dtype == *first->quantized_type &&
             same_params(*x.quant, *first->quant);
    };
    bool reads_integers = false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const TensorId t = n.inputs[i];
      if (!g_.valid(t)) continue;
      const ir::Tensor& x = g_.tensor(t);
      if (n.op == "Pad" && i == 2) {
        // constant_value: a float 0 becomes the zero point; anything else stays float
        if (float_scalar(t) != 0.f) return false;
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

  // Emits a node copies_integers() accepted: its inputs are the integer
  // tensors themselves (not replaced by their DequantizeLinear), its outputs
  // integer tensors with one DequantizeLinear each for float readers.
  void run_on_integers(ir::Node n) {
    if (n.op == "Pad") {
      const ir::Tensor& q = g_.tensor(n.outputs[0]);
      n.inputs.resize(3, ir::kNoTensor);
      // integer padding is the zero point, as TFLite pads
      n.inputs[2] =
          integer_scalar(n.name + "/zero_point", *q.quantized_type, zero_point(*q.quant, 0));
    }
    std::vector<std::string> bases;
    for (size_t k = 0; k < n.outputs.size(); ++k) bases.push_back(output_base(n, k));
    const std::vector<TensorId> outputs = n.outputs;
    const int source = n.source_op;
    why_[outputs[0]] = "copies integers";
    out_.push_back(std::move(n));
    for (size_t k = 0; k < outputs.size(); ++k)
      dequantize_for_readers(source, bases[k], outputs[k], make_integer(outputs[k], bases[k]),
                             "quantized activation");
  }

  // The clamp of quantize_clamp_inputs() on the integers themselves (ONNX
  // Clip takes int8/uint8 from opset 12): integer tensor in -> Clip with the
  // activation's integer range -> the quantized output, dequantized for its
  // readers. Exactly TFLite's clamp, and no float round trip around it.
  void clamp_integers(const ir::Node& n, TensorId integer_input) {
    const TensorId out = n.outputs[0];
    const auto [lo, hi] = *clamp_range(n);
    const DataType type = *g_.tensor(out).quantized_type;
    const std::string base = output_base(n, 0);
    std::vector<TensorId> params = make_integer(out, base);
    add_node("Clip", n.name, n.source_op,
             {integer_input, integer_scalar(n.name + "/min", type, lo),
              integer_scalar(n.name + "/max", type, hi)},
             out, "fused activation clamped on integers");
    dequantize_for_readers(n.source_op, base, out, params, "quantized activation");
  }

  // A one-element integer constant of `type`.
  TensorId integer_scalar(const std::string& name, DataType type, int64_t v) {
    ir::Tensor c;
    c.name = name;
    c.dtype = type;
    c.data = g_.own({static_cast<std::byte>(v)}, type, name);
    return g_.add_tensor(std::move(c));
  }

  // A quantized activation becomes the integer tensor it holds (TFLite name
  // and type, parameters kept in `quant`); returns its scale and zero-point
  // initializers, named after `base`.
  std::vector<TensorId> make_integer(TensorId tensor, const std::string& base) {
    ir::Tensor& t = g_.tensor(tensor);
    const DataType type = *t.quantized_type;
    std::vector<TensorId> params = param_inputs(t, type, 1, base);
    g_.tensor(tensor).dtype = type;
    g_.tensor(tensor).quantized_type.reset();
    return params;
  }

  // One DequantizeLinear of integer tensor `tensor` for the readers that
  // want its float value (none when nobody reads it).
  void dequantize_for_readers(int source_op, const std::string& base, TensorId tensor,
                              std::vector<TensorId> params, const std::string& why) {
    if (readers_[static_cast<size_t>(tensor)] == 0) return;
    ir::Tensor f = g_.tensor(tensor);
    f.name = base + "/dequantized";
    f.dtype = DataType::kFloat32;
    f.quant.reset();
    const TensorId fid = g_.add_tensor(std::move(f));
    replaced_[static_cast<size_t>(tensor)] = fid;
    add_node("DequantizeLinear", base + "/DequantizeLinear", source_op,
             prepend(tensor, std::move(params)), fid, why);
  }

  // Names: the integer tensors keep the TFLite names (TFLite holds exactly
  // those integers); the float values around them take short names from the
  // node they belong to, so long TFLite names are not repeated (they were 10%
  // of a quantized MobileNet's bytes).
  static std::string output_base(const ir::Node& n, size_t k) {
    return n.outputs.size() == 1 ? n.name : n.name + "_" + std::to_string(k);
  }

  // Scale and zero-point initializers for a tensor's parameters (zero point
  // omitted for int32, which has none), named `base`/scale, `base`/zero_point.
  std::vector<TensorId> param_inputs(const ir::Tensor& t, DataType type, size_t channels,
                                     const std::string& base) {
    const ir::QuantParams& q = *t.quant;
    ir::Shape shape = channels > 1 ? ir::Shape{static_cast<int64_t>(channels)} : ir::Shape{};
    std::vector<std::byte> scale(channels * 4);
    for (size_t c = 0; c < channels; ++c)
      std::memcpy(&scale[c * 4], &q.scale[q.scale.size() == 1 ? 0 : c], 4);
    ir::Tensor s;
    s.name = base + "/scale";
    s.shape = shape;
    s.data = g_.own(std::move(scale), DataType::kFloat32, s.name);
    std::vector<TensorId> out = {g_.add_tensor(std::move(s))};
    if (type == DataType::kInt32) return out;
    // One element of `type` per channel (an int64 bias takes 8 bytes each).
    const size_t size = ir::element_size(type);
    std::vector<std::byte> zp(channels * size);
    for (size_t c = 0; c < channels; ++c) {
      int64_t v = zero_point(q, c);
      std::memcpy(&zp[c * size], &v, std::min(size, sizeof v));  // little-endian: the low bytes
    }
    ir::Tensor z;
    z.name = base + "/zero_point";
    z.dtype = type;
    z.shape = shape;
    z.data = g_.own(std::move(zp), type, z.name);
    out.push_back(g_.add_tensor(std::move(z)));
    return out;
  }

  ir::Node& add_node(const std::string& op, const std::string& name, int source_op,
                     std::vector<TensorId> inputs, TensorId output, const std::string& why) {
    ir::Node n;
    n.dialect = ir::Dialect::kOnnx;
    n.op = op;
    n.name = name;
    n.source_op = source_op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    out_.push_back(std::move(n));
    why_[output] = why;
    return out_.back();
  }

  // ONNX axis of a per-axis constant: its TFLite axis through the layout,
  // then through emit_shape when the data is viewed with other dimensions.
  std::optional<int> onnx_quant_axis(const ir::Tensor& t) const {
    int axis = ir::onnx_axis(t.layout, t.quant->axis);
    if (!t.emit_shape) return axis;
    ir::Shape dims = ir::permute_shape(t.shape, t.layout);
    int64_t before = 1;
    for (int a = 0; a < axis; ++a) before *= dims[static_cast<size_t>(a)];
    int64_t seen = 1;
    for (size_t j = 0; j < t.emit_shape->size(); ++j) {
      if (seen == before && (*t.emit_shape)[j] == dims[static_cast<size_t>(axis)])
        return static_cast<int>(j);
      seen *= (*t.emit_shape)[j];
    }
    return std::nullopt;
  }

  Status dequantize_constant(TensorId c, const ir::Node& reader, size_t slot) {
    ir::Tensor& t = g_.tensor(c);
    const DataType type = *t.quantized_type;
    if (type == DataType::kInt64) {  // DequantizeLinear takes no int64: folded to float
      auto values = dequantized_copy(g_, t);
      if (!values) return values.take_error();
      t.data = *values;
      t.quantized_type.reset();
      ++diag_.quantization.nodes["folded to float32: int64 constant"];
      return ok_status();
    }
    size_t channels = t.quant->scale.size();
    std::optional<int> axis = 0;
    if (channels > 1) {
      if (t.quant->axis < 0 || static_cast<size_t>(t.quant->axis) >= t.rank() ||
          t.shape[static_cast<size_t>(t.quant->axis)] != static_cast<int64_t>(channels) ||
          !(axis = onnx_quant_axis(t)))
        return quant_error(ErrorCode::kInternal, t,
                           "per-axis quantization does not follow the constant's layout " +
                               ir::to_string(t.layout) + " as read by " + reader.name);
    }
    ir::Tensor q = t;
    q.dtype = type;
    q.quantized_type.reset();
    q.quant.reset();
    t.data.reset();
    t.name = reader.name + "/dequantized_" + std::to_string(slot);
    std::vector<TensorId> inputs = param_inputs(t, type, channels, t.name);
    diag_.quantization.integer_initializers++;
    if (auto n = ir::element_count(q.shape))
      diag_.quantization.integer_initializer_bytes +=
          static_cast<size_t>(*n) * ir::element_size(type);
    TensorId qid = g_.add_tensor(std::move(q));
    inputs.insert(inputs.begin(), qid);
    ir::Node& dq = add_node("DequantizeLinear", g_.tensor(c).name, -1, std::move(inputs), c,
                            type == DataType::kInt32 ? "int32 bias" : "integer constant");
    if (channels > 1) dq.attrs.set("axis", int64_t{*axis});
    return ok_status();
  }

  void dequantize_input(TensorId in) {
    ir::Tensor f = g_.tensor(in);
    f.name += "/dequantized";
    f.quantized_type.reset();
    f.quant.reset();
    ir::Tensor& x = g_.tensor(in);
    x.dtype = *x.quantized_type;
    TensorId fid = g_.add_tensor(std::move(f));
    replaced_[static_cast<size_t>(in)] = fid;
    add_node("DequantizeLinear", g_.tensor(fid).name, -1,
             prepend(in, param_inputs(g_.tensor(in), g_.tensor(in).dtype, 1, g_.tensor(fid).name)),
             fid, "quantized graph input");
  }

  static std::vector<TensorId> prepend(TensorId first, std::vector<TensorId> rest) {
    rest.insert(rest.begin(), first);
    return rest;
  }

  // `value` (float) -> QuantizeLinear -> `tensor` as integers (TFLite name and
  // type) -> DequantizeLinear -> float for the readers. `base` names the rest.
  // (`source_op` by value: adding nodes may move the producer.)
  void quantize_output(int source_op, const std::string& base, TensorId value, TensorId tensor) {
    std::vector<TensorId> params = make_integer(tensor, base);
    const bool output = g_.is_graph_output(tensor);
    add_node("QuantizeLinear", base + "/QuantizeLinear", source_op, prepend(value, params), tensor,
             output ? "quantized graph output" : "quantized activation");
    dequantize_for_readers(
        source_op, base, tensor, params,
        output ? "quantized graph output read inside the graph" : "quantized activation");
  }

  // Parameters of a Q/DQ node, as (scale bytes, zero-point bytes, axis).
  std::tuple<std::vector<std::byte>, std::vector<std::byte>, int64_t> params_of(
      const ir::Node& n) const {
    auto bytes = [&](size_t i) {
      if (i >= n.inputs.size() || !g_.valid(n.inputs[i]) || !g_.tensor(n.inputs[i]).is_const())
        return std::vector<std::byte>{};
      auto b = g_.tensor(n.inputs[i]).data->bytes;
      return std::vector<std::byte>(b.begin(), b.end());
    };
    return {bytes(1), bytes(2), n.attrs.get_int("axis", 1)};
  }

  // DequantizeLinear -> QuantizeLinear with the same parameters is the integer
  // tensor it started from.
  void cancel_pairs() {
    for (ir::NodeId k : g_.order()) {
      const ir::Node& q = g_.node(k);
      if (q.op != "QuantizeLinear" || q.inputs.empty() || g_.is_graph_output(q.outputs[0]))
        continue;
      const ir::NodeId p = g_.producer(q.inputs[0]);
      if (p == ir::kNoNode || g_.node(p).op != "DequantizeLinear") continue;
      const ir::Node& dq = g_.node(p);
      if (params_of(dq) != params_of(q) ||
          g_.tensor(dq.inputs[0]).dtype != g_.tensor(q.outputs[0]).dtype)
        continue;
      const TensorId integer = dq.inputs[0], out = q.outputs[0];
      g_.remove_node(k);
      g_.replace_uses(out, integer);
      ++diag_.quantization.cancelled_pairs;
    }
    // DequantizeLinear nodes nobody reads any more.
    for (ir::NodeId k : g_.order()) {
      const ir::Node& n = g_.node(k);
      if (n.op == "DequantizeLinear" && g_.use_count(n.outputs[0]) == 0) g_.remove_node(k);
    }
  }

  ir::Graph& g_;
  Diagnostics& diag_;
  Checkpoint& checkpoint_;
  std::vector<ir::Node> out_;            // the rewritten nodes, in order
  std::vector<TensorId> replaced_;       // readers of a tensor now read this one
  std::vector<int> readers_;             // nodes reading each tensor (graph outputs not counted)
  std::map<TensorId, std::string> why_;  // Q/DQ node output -> why the node exists
  std::set<TensorId> integer_clamps_;    // outputs of Relu/Clip run on integers
};

}  // namespace

namespace {

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

}  // namespace

Status materialize_qdq(ir::Graph& g, PassContext& ctx) {
  Status st = ctx.options.quantization == QuantizationMode::kDequantize
                  ? fold_to_float(g, ctx.diag, ctx.checkpoint)
                  : QdqWriter(g, ctx.diag, ctx.checkpoint).run(ctx.options.keep_int8_activations);
  if (!st) return st;
  return check_created_bytes(g);
}

bool same_quantization(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.quantized_type != b.quantized_type) return false;
  if (!a.quantized_type) return true;
  return a.quant && b.quant && same_params(*a.quant, *b.quant);
}

}  // namespace lite2onnx::passes
