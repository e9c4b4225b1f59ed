// Lowering: every TFLite-dialect node becomes the ONNX-dialect nodes its op
// converter (core/ops, through ops::LowerContext) writes, in its place.
#include <string>
#include <utility>
#include <vector>

#include "core/ops/exact.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes {
namespace {

struct Planned {
  uint64_t total = 0, largest = 0;
  std::string largest_by;
};

void add_lowering_bytes(const ir::Graph& g, Planned& p) {
  for (const ir::Node& n : g.nodes()) {
    for (const ir::Subgraph& sub : n.subgraphs) add_lowering_bytes(sub.graph(), p);
    if (n.dialect != ir::Dialect::kTflite) continue;
    const ops::LoweringBytesFn bytes_of = ops::lookup(n).lowering_bytes;
    if (!bytes_of) continue;
    const uint64_t bytes = bytes_of(g, n);
    p.total = bytes > UINT64_MAX - p.total ? UINT64_MAX : p.total + bytes;
    if (bytes > p.largest) p.largest = bytes, p.largest_by = n.name;
  }
}

// A quantized activation the Q/DQ modes can hand to an integer form and take
// back: per tensor, not a state, and 8-bit (QuantizeLinear/DequantizeLinear
// take int8 and uint8 at opsets 13..17) or int16 (on its float grid there:
// Div, Round, Cast, and back Cast, Mul). Constants are read as they are.
bool bridgeable(const ir::Tensor& x) {
  if (x.is_variable) return false;
  if (x.is_const()) return true;
  return x.quant && x.quant->scale.size() == 1 &&
         (qdq::qdq_integer(*x.quantized_type) || *x.quantized_type == ir::DataType::kInt16);
}

template <class Pred>
bool any_quantized(const ir::Graph& g, const ir::Node& n, Pred pred) {
  for (auto list : {&n.inputs, &n.outputs})
    for (ir::TensorId t : *list)
      if (g.valid(t) && g.tensor(t).quantized_type && pred(g.tensor(t))) return true;
  return false;
}

// The QDQ mode computing a node with its integer form: each quantized input is
// read as the integers it holds, an 8-bit one through a QuantizeLinear (the
// DequantizeLinear before it, from materialize_qdq, has the same parameters:
// cancel_pairs and ONNX Runtime remove the pair), and each quantized output
// handed back to the Q/DQ graph through a DequantizeLinear (int16: see
// bridgeable). The form sees copies of the node's quantized tensors, shaped
// as in exact mode while it lowers; they are plain integer tensors
// afterwards, which the QDQ passes leave alone. An int16 output handed back
// is on its grid already (Mul(q, s), what the grid form writes): it joins
// `on_grid`, which no longer needs the grid form after lowering. A graph
// output nothing else reads is the form's integers themselves (ONNX
// Runtime 1.30's optimizer breaks some DequantizeLinear -> QuantizeLinear
// pairs back to a graph output: "Node input ... is not a graph input").
Status lower_integer_form_in_qdq(ops::LowerContext& ctx, const ir::Node& n, ops::LowerFn lower,
                                 std::vector<ir::TensorId>& on_grid) {
  ir::Graph& g = ctx.graph();
  const auto first_new = static_cast<ir::TensorId>(g.tensor_count());
  auto copy_of = [&](ir::TensorId t) {
    ir::Tensor c = g.tensor(t);
    c.name += "/integers";
    c.is_variable = false;
    return g.add_tensor(std::move(c));
  };
  auto scalar = [&](const std::string& name, ir::DataType type, double v) {
    return ctx.const_scalar(n.name + "/" + name, type, v);
  };
  auto float_step = [&](const char* op, std::vector<ir::TensorId> in, const std::string& what) {
    const ir::TensorId out = ctx.temp(n.name + "/" + what, ir::DataType::kFloat32);
    ctx.emit(n, op, std::move(in), {out}, what);
    return out;
  };
  // Float `from` on its grid -> the integers `to`, or back (`to_float`).
  auto bridge = [&](ir::TensorId from, ir::TensorId to, const ir::Tensor& x, bool to_float,
                    const std::string& what) {
    const double scale = x.quant->scale[0];
    const auto zero = static_cast<double>(qdq::zero_point(*x.quant, 0));
    const ir::DataType type = *x.quantized_type;
    if (qdq::qdq_integer(type)) {
      ctx.emit(n, to_float ? "DequantizeLinear" : "QuantizeLinear",
               {from, scalar(what + "_scale", ir::DataType::kFloat32, scale),
                scalar(what + "_zero_point", type, zero)},
               {to}, what);
      return;
    }
    if (to_float) {
      ir::TensorId v = ctx.temp(n.name + "/" + what + "_float", ir::DataType::kFloat32);
      ctx.emit(n, "Cast", {from}, {v}, what + "_float")
          .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kFloat32)});
      if (zero != 0)
        v = float_step("Sub", {v, scalar(what + "_zero", ir::DataType::kFloat32, zero)},
                       what + "_centred");
      ctx.emit(n, "Mul", {v, scalar(what + "_scale", ir::DataType::kFloat32, scale)}, {to}, what);
      return;
    }
    // x = f32(q s) within a few ulps of q s, |q| < 2^15: the quotient rounds back to q.
    ir::TensorId v = float_step(
        "Round",
        {float_step("Div", {from, scalar(what + "_scale", ir::DataType::kFloat32, scale)},
                    what + "_steps")},
        what + "_rounded");
    if (zero != 0)
      v = float_step("Add", {v, scalar(what + "_zero", ir::DataType::kFloat32, zero)},
                     what + "_shifted");
    ctx.emit(n, "Cast", {v}, {to}, what).attrs.set("to", int64_t{ir::onnx_type_code(type)});
  };
  ir::Node integer_node = n;
  for (size_t i = 0; i < integer_node.inputs.size(); ++i) {
    ir::TensorId& t = integer_node.inputs[i];
    if (!g.valid(t) || !g.tensor(t).quantized_type) continue;
    const ir::TensorId original = t;
    t = copy_of(original);  // a constant's copy shares its integer bytes
    if (g.tensor(t).is_const()) continue;
    bridge(original, t, g.tensor(original), false, "integers_in" + std::to_string(i));
  }
  std::vector<std::pair<ir::TensorId, ir::TensorId>> handed_back;
  std::vector<ir::TensorId> integer_outputs;
  for (ir::TensorId& t : integer_node.outputs) {
    if (!g.valid(t) || !g.tensor(t).quantized_type) continue;
    // A graph output nothing else reads takes the form's integers as they
    // are (no DequantizeLinear -> QuantizeLinear pair back to them).
    if (g.is_graph_output(t) && g.uses(t).empty()) {
      integer_outputs.push_back(t);
      continue;
    }
    if (*g.tensor(t).quantized_type == ir::DataType::kInt16 && !g.is_graph_output(t))
      on_grid.push_back(t);
    handed_back.emplace_back(copy_of(t), t);
    t = handed_back.back().first;
  }
  if (auto st = lower(ctx, integer_node); !st) return st;
  for (size_t k = 0; k < handed_back.size(); ++k) {
    const auto [integers, out] = handed_back[k];
    bridge(integers, out, g.tensor(out), true, "integers_out" + std::to_string(k));
  }
  // What the form wrote (the copies, and its own quantized temporaries) holds integers.
  auto hold_integers = [&](ir::Tensor& x) {
    if (!x.quantized_type) return;
    x.dtype = *x.quantized_type;
    x.quantized_type.reset();
    x.quant.reset();
  };
  for (auto t = first_new; static_cast<size_t>(t) < g.tensor_count(); ++t)
    hold_integers(g.tensor(t));
  for (ir::TensorId t : integer_outputs) hold_integers(g.tensor(t));
  return ok_status();
}

// How a node is lowered: its converter's own form (float, or the Q/DQ
// writer's), its integer form (ExactForm), or the integer form inside a Q/DQ
// graph.
enum class Form { kOwn, kInteger, kIntegerInQdq };

Form form_of(const ir::Graph& g, const ir::Node& n, QuantizationMode mode) {
  const ops::Quantization& q = ops::lookup(n).quantization;
  const ops::ExactForm& integer = q.exact;
  if (!integer.lower || !ops::touches_quantized(g, n)) return Form::kOwn;
  // --quantization exact: the preflight made sure the node has one.
  if (mode == QuantizationMode::kExact) return Form::kInteger;
  // --quantization dequantize promises a float model: no integer ops.
  if (!qdq_graph(mode)) return Form::kOwn;
  // The Q/DQ modes: hybrid nodes where the op table says (Q/DQ has no form
  // for them); auto: the nodes whose Q/DQ form rounds unlike TFLite.
  const bool hybrid = (integer.in_qdq_graphs == ops::InQdqGraphs::kHybrid ||
                       integer.in_qdq_graphs == ops::InQdqGraphs::kQuantizedAndHybrid) &&
                      ops::is_hybrid(g, n);
  bool wanted = hybrid;
  // (Quantized activations, not only a constant: a weight-only op computes in
  // float in TFLite too.)
  if (!hybrid && mode == QuantizationMode::kAuto &&
      any_quantized(g, n, [](const ir::Tensor& x) { return !x.is_const(); }) &&
      !any_quantized(g, n, [](const ir::Tensor& x) { return !bridgeable(x); })) {
    const bool int16 = any_quantized(g, n, [](const ir::Tensor& x) {
      return !x.is_const() && *x.quantized_type == ir::DataType::kInt16;
    });
    if (int16) {
      // int16 has no Q/DQ kernel in ONNX Runtime: its Q/DQ form computes in
      // float on the int16 grid, TFLite's arithmetic only where the op copies
      // (the integer LSTM and SVDF too: their int16 states are graph inputs
      // and outputs, bridged like any other).
      wanted = integer.lower != ops::exact::lower_copy &&
               integer.lower != ops::exact::lower_copy_as_float;
    } else {
      wanted = integer.qdq_differs
                   ? integer.qdq_differs(g, n)
                   : integer.in_qdq_graphs == ops::InQdqGraphs::kQuantized ||
                         integer.in_qdq_graphs == ops::InQdqGraphs::kQuantizedAndHybrid;
    }
  }
  if (!wanted || (integer.check && integer.check(g, n))) return Form::kOwn;
  return hybrid ? Form::kInteger : Form::kIntegerInQdq;
}

}  // namespace

Status check_lowering_fits(const ir::Graph& g) {
  Planned p;
  add_lowering_bytes(g, p);
  if (g.created().fits(p.total)) return ok_status();
  return planned_bytes_error(g, "lowering", p.total, p.largest, p.largest_by);
}

Status lower(ir::Graph& g, PassContext& ctx) {
  // Each TFLite node is replaced by what its converter writes; the graph
  // keeps the TFLite nodes (and their index) until every one is lowered.
  std::vector<ir::Node> lowered;
  ops::LowerContext lowering(g, lowered, ctx.options, ctx.diag);
  std::vector<ir::TensorId> on_grid;
  ir::GraphEdit edit(g);
  for (ir::NodeId id = g.first(); id != ir::kNoNode; id = g.next(id)) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(id);
    if (n.dialect == ir::Dialect::kOnnx) continue;
    // Control flow: the node's subgraphs are lowered first; its converter
    // wires the lowered graphs into the ONNX node.
    if (!n.subgraphs.empty()) {
      std::vector<ir::Subgraph>& subgraphs = g.info(id).subgraphs;
      for (ir::Subgraph& sub : subgraphs)
        if (auto st = lower_graph(sub.graph(), ctx); !st) return st;
      lowering.give_subgraphs(std::move(subgraphs));
      subgraphs.clear();
    }
    const ops::OpEntry& e = ops::lookup(n);
    const Form form = form_of(g, n, ctx.options.quantization);
    Status st = form == Form::kOwn ? e.lower(lowering, n)
                : form == Form::kInteger
                    ? e.quantization.exact.lower(lowering, n)
                    : lower_integer_form_in_qdq(lowering, n, e.quantization.exact.lower, on_grid);
    if (!st) return st;
    lowering.finish();
    edit.replace(id, lowered);
    lowered.clear();  // keeps its capacity for the next node
    if (auto st = check_created_bytes(g); !st) return st;
  }
  g.apply(std::move(edit));
  // Every reader has been lowered: these are plain float32 tensors now.
  for (ir::TensorId t : on_grid) {
    g.tensor(t).quantized_type.reset();
    g.tensor(t).quant.reset();
  }
  return ok_status();
}

Status lower_graph(ir::Graph& g, PassContext& ctx) {
  g.compact();
  if (auto st = lower(g, ctx); !st) return st;
  g.compact();
  if (auto st = remove_identities(g, ctx); !st) return st;
  g.compact();
  return merge_reshapes(g, ctx);
}

}  // namespace lite2onnx::passes
