// materialize_qdq: writes the QuantizeLinear/DequantizeLinear nodes of the
// planned quantization (see qdq.h).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes {
namespace {

using ir::DataType;
using ir::TensorId;
using namespace qdq;  // NOLINT: the shared quantization helpers

// Writes the Q/DQ nodes; see materialize_qdq.
class QdqWriter {
 public:
  QdqWriter(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint)
      : g_(g), diag_(diag), checkpoint_(checkpoint) {}

  Status run(bool keep_int8_activations) {
    if (!keep_int8_activations) store_int8_as_uint8(g_, diag_);
    readers_.assign(g_.tensor_count(), 0);
    for (TensorId t = 0; static_cast<size_t>(t) < g_.tensor_count(); ++t)
      readers_[static_cast<size_t>(t)] = static_cast<int>(g_.uses(t).size());
    integer_clamps_ = quantize_clamp_inputs(g_);
    replaced_.resize(g_.tensor_count());
    for (size_t i = 0; i < replaced_.size(); ++i) replaced_[i] = static_cast<TensorId>(i);
    ir::GraphEdit edit(g_);

    // Integer constants and graph inputs: one DequantizeLinear each, up front.
    std::set<TensorId> done;
    for (const ir::Node& n : g_.nodes())
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        TensorId t = n.inputs[i];
        if (g_.valid(t) && g_.tensor(t).quantized_type && g_.tensor(t).is_const() &&
            done.insert(t).second)
          if (auto st = dequantize_constant(t, n, i); !st) return st;
      }
    for (TensorId t : g_.inputs())
      if (g_.tensor(t).quantized_type && !g_.tensor(t).is_const()) dequantize_input(t);
    for (ir::Node& n : take_new_nodes()) edit.add_first(std::move(n));

    for (ir::NodeId id = g_.first(); id != ir::kNoNode; id = g_.next(id)) {
      if (checkpoint_.should_stop()) return checkpoint_.status();
      const ir::Node& n = g_.node(id);
      if (!n.outputs.empty() && integer_clamps_.count(n.outputs[0])) {
        clamp_integers(n, n.inputs[0]);  // reads the integers, not their DequantizeLinear
        replace_with_new_nodes(edit, id);
        continue;
      }
      if (copies_integers(g_, n)) {
        run_on_integers(edit, id);
        continue;
      }
      std::vector<TensorId> inputs = n.inputs;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (g_.valid(inputs[i]) && replaced_[static_cast<size_t>(inputs[i])] != inputs[i]) {
          inputs[i] = replaced_[static_cast<size_t>(inputs[i])];
          edit.set_input(id, i, inputs[i]);
        }
      // An Identity into a quantized tensor (QUANTIZE) is the QuantizeLinear
      // itself, and so is a Relu/Clip whose bounds the quantized range implies.
      bool copy = n.dialect == ir::Dialect::kOnnx && n.outputs.size() == 1 &&
                  quantized_activation(g_, n.outputs[0]) &&
                  ((n.op == "Identity" && n.inputs.size() == 1) || clamp_implied(g_, n));
      if (copy) {
        quantize_output(n.source_op, output_base(n, 0), inputs[0], n.outputs[0]);
        replace_with_new_nodes(edit, id);
        continue;
      }
      std::vector<std::tuple<size_t, TensorId, TensorId>> pending;  // (slot, float, quantized)
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        const TensorId o = n.outputs[k];
        if (!quantized_activation(g_, o)) continue;
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
        edit.set_output(id, k, p);
      }
      for (const auto& [k, value, quantized] : pending)
        quantize_output(n.source_op, output_base(n, k), value, quantized);
      for (ir::Node& q : take_new_nodes()) edit.insert_after(id, std::move(q));
    }
    g_.apply(std::move(edit));
    cancel_pairs(g_, diag_);
    for (const ir::Node& n : g_.nodes())
      if (auto it = why_.find(n.outputs[0]); it != why_.end())
        ++diag_.quantization.nodes[n.op + ": " + it->second];
    return ok_status();
  }

 private:
  // Runs node `id`, which copies_integers(g_, ) accepted, on integers: its
  // inputs are the integer tensors themselves (not replaced by their
  // DequantizeLinear), its outputs integer tensors with one DequantizeLinear
  // each for float readers.
  void run_on_integers(ir::GraphEdit& edit, ir::NodeId id) {
    const ir::Node& n = g_.node(id);
    if (n.op == "Pad") {
      const ir::Tensor& q = g_.tensor(n.outputs[0]);
      // integer padding is the zero point, as TFLite pads
      edit.set_input(
          id, 2,
          integer_scalar(n.name + "/zero_point", *q.quantized_type, zero_point(*q.quant, 0)));
    }
    why_[n.outputs[0]] = "copies integers";
    for (size_t k = 0; k < n.outputs.size(); ++k)
      dequantize_for_readers(n.source_op, output_base(n, k), n.outputs[k],
                             make_integer(n.outputs[k], output_base(n, k)), "quantized activation");
    for (ir::Node& q : take_new_nodes()) edit.insert_after(id, std::move(q));
  }

  // The clamp of quantize_clamp_inputs() on the integers themselves (ONNX
  // Clip takes int8/uint8 from opset 12): integer tensor in -> Clip with the
  // activation's integer range -> the quantized output, dequantized for its
  // readers. Exactly TFLite's clamp, and no float round trip around it.
  void clamp_integers(const ir::Node& n, TensorId integer_input) {
    const TensorId out = n.outputs[0];
    const auto [lo, hi] = *clamp_range(g_, n);
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
    new_nodes_.push_back(std::move(n));
    why_[output] = why;
    return new_nodes_.back();
  }

  // The nodes made since the last call, in order (for the GraphEdit).
  std::vector<ir::Node> take_new_nodes() { return std::exchange(new_nodes_, {}); }
  // Node `id` becomes the nodes made since the last call.
  void replace_with_new_nodes(ir::GraphEdit& edit, ir::NodeId id) {
    edit.replace(id, new_nodes_);
    new_nodes_.clear();
  }

  // ONNX axis of a per-axis constant: its TFLite axis through the layout,
  // then through emit_shape when the data is viewed with other dimensions.
  std::optional<int> onnx_quant_axis(const ir::Tensor& t) const {
    int axis = ir::onnx_axis(t.layout, t.quant->axis);
    if (!t.emit_shape) return axis;
    return ir::axis_in_view(ir::permute_shape(t.shape, t.layout), axis, *t.emit_shape);
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

  ir::Graph& g_;
  Diagnostics& diag_;
  Checkpoint& checkpoint_;
  std::vector<ir::Node> new_nodes_;      // Q/DQ nodes not yet handed to the GraphEdit
  std::vector<TensorId> replaced_;       // readers of a tensor now read this one
  std::vector<int> readers_;             // nodes reading each tensor (graph outputs not counted)
  std::map<TensorId, std::string> why_;  // Q/DQ node output -> why the node exists
  std::set<TensorId> integer_clamps_;    // outputs of Relu/Clip run on integers
};

}  // namespace

Status materialize_qdq(ir::Graph& g, PassContext& ctx) {
  // A float model has nothing to write (and the writer takes every node out
  // and back: 8% of a 200k-op float conversion).
  bool quantized = false;
  for (TensorId t = 0; !quantized && static_cast<size_t>(t) < g.tensor_count(); ++t)
    quantized = g.tensor(t).quantized_type.has_value();
  if (!quantized) return check_created_bytes(g);
  if (ctx.options.quantization == QuantizationMode::kDequantize) {
    if (auto st = fold_to_float(g, ctx.diag, ctx.checkpoint); !st) return st;
  } else if (ctx.options.quantization == QuantizationMode::kExact) {
    if (auto st = store_integers(g, ctx.diag, ctx.checkpoint); !st) return st;
  } else {
    if (auto st = emulate_int16(g, ctx.diag, ctx.checkpoint); !st) return st;
    if (auto st = QdqWriter(g, ctx.diag, ctx.checkpoint).run(ctx.options.keep_int8_activations);
        !st)
      return st;
  }
  return check_created_bytes(g);
}

}  // namespace lite2onnx::passes
