// --quantization dequantize: a float model that computes what the quantized
// one does (constants folded to float32, activations clamped to their
// quantized range and grid). The default mode uses the same emulation for
// int16 (16x8) tensors, which QuantizeLinear/DequantizeLinear take only from
// opset 21.
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

// Which quantized tensors a pass rewrites.
using TensorFilter = bool (*)(const ir::Tensor&);
bool every_tensor(const ir::Tensor&) { return true; }
bool int16_tensor(const ir::Tensor& t) { return t.quantized_type == DataType::kInt16; }

// A one-element float32 constant.
TensorId float_scalar_constant(ir::Graph& g, const std::string& name, double v) {
  float f = static_cast<float>(v);
  std::vector<std::byte> bytes(4);
  std::memcpy(bytes.data(), &f, 4);
  ir::Tensor c;
  c.name = name;
  c.data = g.own(std::move(bytes), DataType::kFloat32, name);
  return g.add_tensor(std::move(c));
}

// A quantized activation saturates at the ends of its integer range: the
// float model clamps there too (a Clip after the producer), unless the
// producer only moves values of an input quantized the same way.
void clamp_activations(ir::Graph& g, Diagnostics& diag, TensorFilter which) {
  ir::GraphEdit edit(g);
  for (ir::NodeId id = g.first(); id != ir::kNoNode; id = g.next(id)) {
    const ir::Node& n = g.node(id);
    std::vector<std::pair<TensorId, TensorId>> clamps;  // (float value, clamped tensor)
    bool passthrough = moves_values(n) && !n.inputs.empty() && g.valid(n.inputs[0]);
    // A reshape of an activation quantized otherwise reads its integers with
    // the output's parameters: an affine map of the value, not a clamp.
    std::optional<ir::QuantParams> reinterpreted;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const TensorId o = n.outputs[k];
      const ir::Tensor& t = g.tensor(o);
      if (!t.quantized_type || t.is_const() || !t.quant || t.quant->scale.size() != 1 || !which(t))
        continue;
      if (passthrough && same_quantization(g.tensor(n.inputs[0]), t)) continue;
      if (passthrough && ir::onnx_traits(n).reinterprets) {
        const ir::Tensor& in = g.tensor(n.inputs[0]);
        if (in.quantized_type == t.quantized_type && in.quant && in.quant->scale.size() == 1)
          reinterpreted = *in.quant;
      }
      ir::Tensor pre = t;
      pre.name = n.name + "/unclamped";
      pre.quantized_type.reset();
      pre.quant.reset();
      TensorId p = g.add_tensor(std::move(pre));
      clamps.emplace_back(p, o);
      edit.set_output(id, k, p);
    }
    const std::string producer_name = n.name;
    const int source_op = n.source_op;
    for (const auto& clamp : clamps) {
      // Named variables, not a structured binding: clang 14 (the fuzz build)
      // cannot capture a binding in the lambdas below.
      const TensorId value = clamp.first, tensor = clamp.second;
      const ir::Tensor& t = g.tensor(tensor);
      const double s = t.quant->scale[0], zp = static_cast<double>(zero_point(*t.quant, 0));
      const auto range = integer_range(*t.quantized_type);
      const double qmin = static_cast<double>(range.lo), qmax = static_cast<double>(range.hi);
      auto scalar = [&](const std::string& name, double v) {
        return float_scalar_constant(g, producer_name + name, v);
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
        edit.insert_after(id, std::move(node));
      };
      auto temp = [&](const std::string& suffix) {
        ir::Tensor x = g.tensor(value);
        x.name = producer_name + suffix;
        return g.add_tensor(std::move(x));
      };
      if (reinterpreted) {
        // y = (q - zp_out) s_out with q = x / s_in + zp_in:
        // x * (s_out / s_in) + (zp_in - zp_out) s_out (x is 0 when s_in is 0).
        const double s_in = reinterpreted->scale[0];
        const double zp_in = static_cast<double>(zero_point(*reinterpreted, 0));
        const TensorId scaled = temp("/rescaled");
        add("Mul", "/reinterpret_scale", {value, scalar("/scale_ratio", s_in == 0 ? 0 : s / s_in)},
            scaled);
        add("Add", "/reinterpret_zero_point", {scaled, scalar("/offset", (zp_in - zp) * s)},
            tensor);
        diag.quantization.nodes["Mul/Add: integers read with other parameters"] += 1;
        continue;
      }
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
  g.apply(std::move(edit));
}

// Integer constants become float32 constants (the layout is still applied
// when they are written) and the tensors forget their integer type.
Status fold_constants(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint, TensorFilter which) {
  // Aliases of one constant (layouts, broadcasts) share one float copy.
  using Source = std::tuple<const std::byte*, size_t, DataType, size_t, std::vector<float>,
                            std::vector<int64_t>>;
  std::map<Source, ir::ConstData> folded;
  for (TensorId i = 0; static_cast<size_t>(i) < g.tensor_count(); ++i) {
    if (checkpoint.should_stop()) return checkpoint.status();
    ir::Tensor& t = g.tensor(i);
    if (!t.quantized_type || !which(t)) continue;
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

// The nodes between an int16 graph input or output and its float value, named
// after `base`; their float tensors are shaped like `like`.
class Int16Boundary {
 public:
  Int16Boundary(ir::Graph& g, const ir::Tensor& like, std::string base)
      : g_(g), like_(like), base_(std::move(base)) {
    like_.quant.reset();
    like_.quantized_type.reset();
  }
  TensorId float_tensor(const std::string& suffix) {
    ir::Tensor t = like_;
    t.name = base_ + suffix;
    return g_.add_tensor(std::move(t));
  }
  TensorId scalar(const std::string& suffix, double v) {
    return float_scalar_constant(g_, base_ + suffix, v);
  }
  // `cast_to`: the element type of a Cast (ONNX TensorProto code).
  void add(const std::string& op, std::vector<TensorId> inputs, TensorId out, int64_t cast_to = 0) {
    ir::Node n;
    n.dialect = ir::Dialect::kOnnx;
    n.op = op;
    n.name = base_ + "/" + op;
    n.inputs = std::move(inputs);
    n.outputs = {out};
    if (op == "Cast") n.attrs.set("to", cast_to);
    nodes_.push_back(std::move(n));
  }
  std::vector<ir::Node> release() { return std::move(nodes_); }

 private:
  ir::Graph& g_;
  ir::Tensor like_;
  std::string base_;
  std::vector<ir::Node> nodes_;
};

constexpr int64_t kOnnxFloat = 1, kOnnxInt16 = 5;

// An int16 graph input stays int16 in ONNX: Cast -> (Sub zero point) -> Mul
// scale gives its readers the float value.
void dequantize_int16_input(ir::Graph& g, TensorId in, Diagnostics& diag) {
  ir::Tensor& x = g.tensor(in);
  const double scale = x.quant->scale[0];
  const int64_t zp = zero_point(*x.quant, 0);
  Int16Boundary b(g, x, x.name + "/dequantized");
  g.tensor(in).dtype = DataType::kInt16;
  const TensorId value = b.float_tensor("");
  g.replace_uses(in, value);
  TensorId steps = b.float_tensor("/steps");
  b.add("Cast", {in}, steps, kOnnxFloat);
  if (zp != 0) {
    const TensorId centered = b.float_tensor("/centered");
    b.add("Sub", {steps, b.scalar("/zero_point", static_cast<double>(zp))}, centered);
    steps = centered;
  }
  b.add("Mul", {steps, b.scalar("/scale", scale)}, value);
  const ir::NodeId first = g.first();
  for (auto& n : b.release()) g.add_node_before(first, std::move(n));
  ++diag.quantization.nodes["Cast/Mul: int16 graph input"];
}

// An int16 graph output stays int16 in ONNX: the float value (on its int16
// grid already) -> Div scale -> Round -> (Add zero point) -> Cast.
void quantize_int16_output(ir::Graph& g, TensorId out, Diagnostics& diag) {
  ir::Tensor& y = g.tensor(out);
  const double scale = y.quant->scale[0];
  const int64_t zp = zero_point(*y.quant, 0);
  Int16Boundary b(g, y, y.name + "/quantized");
  g.tensor(out).dtype = DataType::kInt16;
  const TensorId value = b.float_tensor("/float");
  const ir::NodeId producer = g.producer(out);
  for (size_t k = 0; k < g.node(producer).outputs.size(); ++k)
    if (g.node(producer).outputs[k] == out) g.set_output(producer, k, value);
  g.replace_uses(out, value);
  const TensorId steps = b.float_tensor("/steps");
  TensorId rounded = b.float_tensor("/rounded");
  b.add("Div", {value, b.scalar("/scale", scale)}, steps);
  b.add("Round", {steps}, rounded);
  if (zp != 0) {
    const TensorId shifted = b.float_tensor("/shifted");
    b.add("Add", {rounded, b.scalar("/zero_point", static_cast<double>(zp))}, shifted);
    rounded = shifted;
  }
  b.add("Cast", {rounded}, out, kOnnxInt16);
  ir::NodeId at = producer;
  for (auto& n : b.release()) at = g.add_node_after(at, std::move(n));
  ++diag.quantization.nodes["Div/Round/Cast: int16 graph output"];
}

}  // namespace

// --quantization dequantize: integer constants become float32 constants,
// activations are clamped to their quantized range, and no Q/DQ node is made.
Status fold_to_float(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint) {
  clamp_activations(g, diag, every_tensor);
  return fold_constants(g, diag, checkpoint, every_tensor);
}

// The Q/DQ modes: int16 tensors as fold_to_float makes them, graph inputs and
// outputs kept int16 (TFLite's interface), one warning naming the tensors an
// op computes in float (a graph input's values are exact on the grid).
Status emulate_int16(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint) {
  std::vector<std::string> names;
  bool any = false;
  for (TensorId i = 0; static_cast<size_t>(i) < g.tensor_count(); ++i) {
    if (!int16_tensor(g.tensor(i)) || g.tensor(i).is_const()) continue;
    any = any || g.is_graph_input(i) || g.producer(i) != ir::kNoNode;
    if (g.producer(i) != ir::kNoNode) names.push_back(g.tensor(i).name);
  }
  if (!any) return ok_status();
  clamp_activations(g, diag, int16_tensor);
  for (TensorId t : std::vector<TensorId>(g.inputs().begin(), g.inputs().end()))
    if (int16_tensor(g.tensor(t)) && g.tensor(t).quant->scale.size() == 1)
      dequantize_int16_input(g, t, diag);
  for (TensorId t : std::vector<TensorId>(g.outputs().begin(), g.outputs().end()))
    if (int16_tensor(g.tensor(t)) && g.tensor(t).quant->scale.size() == 1 &&
        g.producer(t) != ir::kNoNode)
      quantize_int16_output(g, t, diag);
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > 3) list += ", ...";
  if (!names.empty())
    diag.warnings.push_back(
        std::to_string(names.size()) + " int16 (16x8) quantized tensor" +
        (names.size() == 1 ? " is" : "s are") + " computed in float32 on their int16 grid (" +
        list +
        "): QuantizeLinear/DequantizeLinear take int16 only from opset 21, and TFLite's integer "
        "kernels round inside each op, so results may differ by a few int16 steps");
  return fold_constants(g, diag, checkpoint, int16_tensor);
}

}  // namespace lite2onnx::passes::qdq
