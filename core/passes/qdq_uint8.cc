// The int8 -> uint8 rewrite of the Q/DQ form (see store_int8_as_uint8).
#include <algorithm>
#include <map>
#include <set>

#include "core/ir/onnx_ops.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes::qdq {

using ir::DataType;
using ir::TensorId;

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
void store_int8_as_uint8(ir::Graph& g, Diagnostics& diag) {
  auto int8 = [&](TensorId t) {
    return g.valid(t) && g.tensor(t).quantized_type == DataType::kInt8;
  };
  auto widen = [&](ir::Tensor& t) {
    t.quantized_type = DataType::kUInt8;
    for (auto& z : t.quant->zero_point) z += 128;
  };
  auto uint8_copy = [&](TensorId t) {
    ir::Tensor c = g.tensor(t);
    c.name += "/uint8";
    widen(c);
    return g.add_tensor(std::move(c));
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
  std::vector<bool> boundary(g.tensor_count(), false);
  std::vector<ir::Node> head;
  // The boundary requantization only where an integer kernel would meet the
  // interface tensor: an input read by an op writing a quantized activation,
  // an output written by an op reading one (not, say, QUANTIZE of a float).
  auto quantized_value = [&](TensorId t) { return quantized_activation(g, t); };
  // Whether a node reading (writing) t writes (reads) a quantized activation.
  auto meets_integer_op = [&](TensorId t, bool reading) {
    auto touches = [&](const ir::Node& n) {
      const auto& other = reading ? n.outputs : n.inputs;
      return std::any_of(other.begin(), other.end(), quantized_value);
    };
    if (!reading) return g.producer(t) != ir::kNoNode && touches(g.node(g.producer(t)));
    for (const ir::Use& u : g.uses(t))
      if (touches(g.node(u.node))) return true;
    return false;
  };
  // Graph inputs and outputs keep int8 whatever happens below.
  for (TensorId t : g.inputs()) boundary[static_cast<size_t>(t)] = true;
  for (TensorId t : g.outputs()) boundary[static_cast<size_t>(t)] = true;
  for (TensorId in : g.inputs()) {
    if (!int8(in) || g.tensor(in).is_const() || g.is_graph_output(in) ||
        !meets_integer_op(in, /*reading=*/true))
      continue;
    TensorId c = uint8_copy(in);
    g.replace_uses(in, c);
    head.push_back(identity(in, c, g.tensor(in).name + "/to_uint8"));
    any = true;
  }
  std::vector<ir::Node> tail;
  for (TensorId out : g.outputs()) {
    if (!int8(out) || g.tensor(out).is_const() || g.is_graph_input(out) ||
        !meets_integer_op(out, /*reading=*/false))
      continue;
    TensorId c = uint8_copy(out);
    g.replace_uses(out, c);
    const ir::NodeId p = g.producer(out);
    const auto& outs = g.node(p).outputs;
    g.set_output(p, static_cast<size_t>(std::find(outs.begin(), outs.end(), out) - outs.begin()),
                 c);
    tail.push_back(identity(c, out, g.tensor(out).name + "/to_int8"));
    any = true;
  }
  boundary.resize(g.tensor_count(), false);
  // Activations, then the int8 constants read beside a quantized activation.
  for (size_t i = 0; i < boundary.size(); ++i) {
    ir::Tensor& t = g.tensor(static_cast<TensorId>(i));
    if (!boundary[i] && t.quantized_type == DataType::kInt8 && !t.is_const()) {
      widen(t);
      any = true;
    }
  }
  std::set<TensorId> keep, convert;
  for (const ir::Node& n : g.nodes()) {
    bool integer_kernel = false;
    for (TensorId t : n.inputs) integer_kernel |= quantized_activation(g, t);
    for (TensorId t : n.outputs) integer_kernel |= quantized_activation(g, t);
    const bool weighted = ir::onnx_traits(n).weighted;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      TensorId t = n.inputs[k];
      if (!int8(t) || !g.tensor(t).is_const()) continue;
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
    ir::Tensor& t = g.tensor(id);
    auto [copy, fresh] = as_uint8.try_emplace({t.data->bytes.data(), t.data->bytes.size()});
    if (fresh) {
      std::vector<std::byte> bytes(t.data->bytes.begin(), t.data->bytes.end());
      for (auto& b : bytes) b ^= std::byte{0x80};  // v + 128 in two's complement
      copy->second = g.own(std::move(bytes), DataType::kUInt8, t.name);
    }
    t.data = copy->second;
    widen(t);
  }
  if (!any) return;
  const ir::NodeId front = g.first();
  for (auto& n : head)
    front == ir::kNoNode ? g.add_node(std::move(n)) : g.add_node_before(front, std::move(n));
  for (auto& n : tail) g.add_node(std::move(n));
  diag.quantization.int8_activations_as_uint8 = true;
}

}  // namespace lite2onnx::passes::qdq
