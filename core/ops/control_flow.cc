// Control flow: WHILE -> ONNX Loop, IF -> ONNX If.
//
// The reader expands control flow (core/tflite/reader.cc): a WHILE node reads
// [first condition, values...] and owns "body", the TFLite body subgraph with
// the condition subgraph copied after it (outputs: [next condition, next
// values...]); an IF node reads [condition, arguments...] and owns
// "then_branch" and "else_branch", whose inputs are the arguments. The passes
// run on those graphs like on the main one (the layout pass carries layouts
// across the boundary, shape inference shapes), and lower them before the
// node's converter runs, which only wires the lowered graphs into ONNX form:
//   Loop(M = "", cond, values...) with body (iteration, cond, values...) ->
//        (cond, values...);
//   If(cond) whose branches read the arguments from the enclosing graph
//        (Subgraph::captures, NodeInfo::implicit_inputs).
// Every subgraph output becomes a tensor its graph writes, in the layout the
// node's output has (an Identity for an input passed through, a constant or
// a value listed twice; a Transpose where the layouts differ), as ONNX needs.
#include <string>
#include <vector>

#include "core/ir/builtins.h"
#include "core/ops/families.h"
#include "schema_generated.h"

namespace lite2onnx::ops::control {
namespace {

using ir::Perm;
using ir::TensorId;

SubgraphBinding while_binding(const ir::Node& n, size_t) {
  // body: inputs = node inputs 1..; outputs = [condition, values...]
  SubgraphBinding b;
  const size_t values = n.inputs.empty() ? 0 : n.inputs.size() - 1;
  b.outputs.push_back(-1);
  for (size_t i = 0; i < values; ++i) {
    b.inputs.push_back(static_cast<int>(i + 1));
    b.outputs.push_back(static_cast<int>(i));
    b.carried.push_back(static_cast<int>(i + 1));
  }
  return b;
}

SubgraphBinding if_binding(const ir::Node& n, size_t) {
  SubgraphBinding b;
  for (size_t i = 1; i < n.inputs.size(); ++i) b.inputs.push_back(static_cast<int>(i));
  for (size_t j = 0; j < n.outputs.size(); ++j) b.outputs.push_back(static_cast<int>(j));
  return b;
}

// Quantized values crossing the boundary would need the Q/DQ writer to
// agree on integer types across graphs: not done yet.
Check check_boundary(const ir::Graph& g, const ir::Node& n) {
  for (auto list : {&n.inputs, &n.outputs})
    for (TensorId t : *list)
      if (g.valid(t) && g.tensor(t).quantized_type)
        return refuse(
            ReasonCode::kQuantization,
            "quantized tensor '" + g.tensor(t).name +
                "' crosses a subgraph boundary (control flow is converted in float only)");
  for (const ir::Subgraph& sub : n.subgraphs)
    for (auto list : {&sub.graph().inputs(), &sub.graph().outputs()})
      for (TensorId t : *list)
        if (sub.graph().tensor(t).quantized_type)
          return refuse(
              ReasonCode::kQuantization,
              "quantized tensor '" + sub.graph().tensor(t).name +
                  "' crosses a subgraph boundary (control flow is converted in float only)");
  return {};
}

Check check_while(const ir::Graph& g, const ir::Node& n) {
  if (n.subgraphs.size() != 1)
    return refuse(ReasonCode::kOperands, "expected one subgraph (the loop body)");
  const ir::Graph& body = n.subgraphs[0].graph();
  if (body.inputs().size() + 1 != n.inputs.size() || body.outputs().size() != n.inputs.size() ||
      n.outputs.size() + 1 != n.inputs.size())
    return refuse(ReasonCode::kOperands,
                  "the loop body does not match the op's inputs and outputs");
  for (const ir::Tensor* t : {&g.tensor(n.inputs[0]), &body.tensor(body.outputs()[0])}) {
    auto count = ir::element_count(t->shape);
    if (!t->has_rank || !count || *count != 1)
      return refuse(ReasonCode::kShape, "the condition '" + t->name + "' must hold one element");
  }
  return check_boundary(g, n);
}

Check check_if(const ir::Graph& g, const ir::Node& n) {
  if (n.subgraphs.size() != 2)
    return refuse(ReasonCode::kOperands, "expected two subgraphs (then and else)");
  auto count = ir::element_count(g.tensor(n.inputs[0]).shape);
  if (!g.tensor(n.inputs[0]).has_rank || !count || *count != 1)
    return refuse(ReasonCode::kShape,
                  "the condition '" + g.tensor(n.inputs[0]).name + "' must hold one element");
  return check_boundary(g, n);
}

// The subgraph's j-th output as a tensor the subgraph writes itself, in
// layout `need`, never an input, a constant or an output listed before.
TensorId deliver(ir::Graph& sub, TensorId t, const Perm& need, std::vector<bool>& used,
                 const std::string& name) {
  const ir::Tensor& x = sub.tensor(t);
  const bool own = sub.producer(t) != ir::kNoNode && !sub.is_graph_input(t) && !x.is_const();
  const Perm have = x.is_const() ? Perm{} : ir::normalized(x.layout);
  if (own && !used[static_cast<size_t>(t)] && have == ir::normalized(need)) {
    used[static_cast<size_t>(t)] = true;
    return t;
  }
  ir::Tensor copy = x;
  copy.data.reset();
  copy.emit_shape.reset();
  copy.flattened.reset();
  copy.name = name;
  copy.layout = ir::normalized(need);
  const TensorId out = sub.add_tensor(std::move(copy));
  used.resize(sub.tensor_count(), false);
  used[static_cast<size_t>(out)] = true;
  ir::Node n;
  n.dialect = ir::Dialect::kOnnx;
  n.name = name;
  n.inputs = {t};
  n.outputs = {out};
  if (have == ir::normalized(need)) {
    n.op = "Identity";
    n.inserted = ir::Insertion{x.name, "a subgraph output must be a value its graph writes"};
  } else {
    const size_t rank = x.rank();
    const Perm p = ir::full_perm(
        ir::compose(ir::inverse(ir::full_perm(have, rank)), ir::full_perm(need, rank)), rank);
    n.op = "Transpose";
    n.attrs.set("perm", std::vector<int64_t>(p.begin(), p.end()));
    n.inserted = ir::Insertion{x.name, "subgraph output in layout " +
                                           ir::to_string(ir::full_perm(need, rank)) +
                                           ", the layout of the value it becomes"};
  }
  sub.add_node(std::move(n));
  return out;
}

// A one-element boolean as the scalar ONNX wants for a Loop condition,
// computed in `g` (a Loop body) by a Reshape at its end.
TensorId scalar_condition(ir::Graph& g, TensorId t, const std::string& name) {
  if (g.tensor(t).shape.empty()) return t;
  ir::Tensor shape;
  shape.name = name + "/shape";
  shape.dtype = ir::DataType::kInt64;
  shape.shape = {0};
  shape.data = g.own({}, ir::DataType::kInt64, shape.name);
  const TensorId s = g.add_tensor(std::move(shape));
  ir::Tensor scalar = g.tensor(t);
  scalar.name = name;
  scalar.shape = {};
  scalar.layout = {};
  const TensorId r = g.add_tensor(std::move(scalar));
  ir::Node n;
  n.dialect = ir::Dialect::kOnnx;
  n.op = "Reshape";
  n.name = name;
  n.inputs = {t, s};
  n.outputs = {r};
  g.add_node(std::move(n));
  return r;
}

Status lower_while(LowerContext& ctx, const ir::Node& n) {
  std::vector<ir::Subgraph> subs = ctx.take_subgraphs();
  if (subs.size() != 1) return ctx.error(n, "the loop body is missing");
  ir::Graph& body = subs[0].graph();
  // The body's outputs: the next condition (a scalar), then each value in
  // the layout of the Loop output it becomes (that of its input too: the
  // layout pass gave both the same).
  const std::vector<TensorId> results = body.outputs().ids();
  std::vector<bool> used(body.tensor_count(), false);
  std::vector<TensorId> outputs;
  const TensorId again = deliver(body, results[0], {}, used, n.name + "/cond_out");
  outputs.push_back(scalar_condition(body, again, n.name + "/cond_scalar"));
  used.resize(body.tensor_count(), false);
  used[static_cast<size_t>(outputs[0])] = true;
  for (size_t j = 1; j < results.size(); ++j)
    outputs.push_back(deliver(body, results[j], ctx.tensor(n.outputs[j - 1]).layout, used,
                              n.name + "/next_" + std::to_string(j - 1)));
  // The Loop body's inputs: iteration number and condition (unused), then the values.
  ir::Tensor iteration;
  iteration.name = n.name + "/iteration";
  iteration.dtype = ir::DataType::kInt64;
  ir::Tensor condition;
  condition.name = n.name + "/cond_in";
  condition.dtype = ir::DataType::kBool;
  std::vector<TensorId> inputs{body.add_tensor(std::move(iteration)),
                               body.add_tensor(std::move(condition))};
  for (TensorId t : body.inputs()) inputs.push_back(t);
  body.set_inputs(inputs);
  body.set_outputs(outputs);

  // In the enclosing graph: the first condition as a scalar.
  ir::Graph& g = ctx.graph();
  std::vector<TensorId> loop_inputs{ir::kNoTensor};
  const TensorId first = n.inputs[0];
  if (g.tensor(first).shape.empty()) {
    loop_inputs.push_back(first);
  } else {
    const TensorId shape = ctx.const_i64(n.name + "/cond_shape", {}, ir::Shape{0});
    const TensorId scalar = ctx.temp(n.name + "/cond_scalar", ir::DataType::kBool);
    ctx.graph().tensor(scalar).has_rank = true;
    ctx.graph().tensor(scalar).shape = {};
    ctx.emit(n, "Reshape", {first, shape}, {scalar}, "cond_scalar");
    loop_inputs.push_back(scalar);
  }
  loop_inputs.insert(loop_inputs.end(), n.inputs.begin() + 1, n.inputs.end());
  ir::Node& loop = ctx.emit(n, "Loop", loop_inputs, n.outputs);
  loop.subgraphs.push_back(std::move(subs[0]));
  return ok_status();
}

Status lower_if(LowerContext& ctx, const ir::Node& n) {
  std::vector<ir::Subgraph> subs = ctx.take_subgraphs();
  if (subs.size() != 2) return ctx.error(n, "a branch is missing");
  const size_t args = n.inputs.size() - 1;
  for (size_t b = 0; b < 2; ++b) {
    ir::Graph& branch = subs[b].graph();
    // ONNX branches have no inputs: each argument is read from the
    // enclosing graph, through the If's implicit input of the same position.
    std::vector<ir::Capture> captures;
    for (size_t i = 0; i < args; ++i)
      captures.push_back({branch.inputs()[i], static_cast<uint32_t>(i + 1)});
    branch.set_inputs({});
    const std::vector<TensorId> results = branch.outputs().ids();
    std::vector<bool> used(branch.tensor_count(), false);
    std::vector<TensorId> outputs;
    const std::string side = b == 0 ? "/then_" : "/else_";
    for (size_t j = 0; j < results.size(); ++j)
      outputs.push_back(deliver(branch, results[j], ctx.tensor(n.outputs[j]).layout, used,
                                n.name + side + std::to_string(j)));
    branch.set_outputs(outputs);
    subs[b].captures = std::move(captures);
  }
  ir::Node& node = ctx.emit(n, "If", n.inputs, n.outputs);
  node.implicit_inputs = static_cast<uint32_t>(args);
  node.subgraphs = std::move(subs);
  return ok_status();
}

// Resource variables never reach lowering in the main graph:
// passes::expose_state turns them into state pairs once the model is
// validated. Inside a control-flow subgraph they stay, and the preflight
// reports them with this reason.
Check check_resource_op(const ir::Graph&, const ir::Node&) {
  return refuse(ReasonCode::kState,
                "resource variables inside a control-flow subgraph are not converted");
}
Status lower_resource_op(LowerContext& ctx, const ir::Node& n) {
  return ctx.error(n, "a resource variable op left after the state pass");
}

void read_var_handle_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_VarHandleOptions();
  a.set("container", o && o->container() ? o->container()->str() : std::string());
  a.set("shared_name", o && o->shared_name() ? o->shared_name()->str() : std::string());
}

// CALL never reaches the op table's users: the reader copies the called
// subgraph in its place.
Status lower_call(LowerContext& ctx, const ir::Node& n) {
  return ctx.error(n,
                   "a " + n.op + " left after reading (the reader copies its subgraph in place)");
}

}  // namespace

// The resource ops: passes::expose_state makes them state pairs; one left
// (inside a control-flow subgraph) says why in its check.
constexpr const char* kResourceOnnx =
    "state: a graph input (with an initializer) and an output '<name>/next'";

OpEntry var_handle() {
  return {.read = {.min_inputs = 0, .options = read_var_handle_options},
          .check = check_resource_op,
          .lower = lower_resource_op,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = kResourceOnnx,
                  .dtypes = "any",
                  .notes = "names a resource variable (container, shared_name; shared across "
                           "subgraphs): its state pair is named after it"}};
}

OpEntry read_variable() {
  return {.read = {.min_inputs = 0},
          .check = check_resource_op,
          .lower = lower_resource_op,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = kResourceOnnx,
                  .dtypes = "any",
                  .notes = "an Identity of the value the resource holds at that point"}};
}

OpEntry assign_variable() {
  return {.read = {.min_inputs = 0},
          .check = check_resource_op,
          .lower = lower_resource_op,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .state = {.effect_only = true},
          .doc = {.onnx = kResourceOnnx,
                  .dtypes = "any",
                  .notes = "the value the resource holds from there on, and its next state"}};
}

OpEntry call_once() {
  return {.read = {.min_inputs = 0},
          .check = check_resource_op,
          .lower = lower_resource_op,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .state = {.effect_only = true},
          .doc = {.onnx = kResourceOnnx,
                  .dtypes = "any",
                  .notes = "its init subgraph, folded to constants, gives the resources' initial "
                           "values (the initializers of their state inputs)"}};
}

OpEntry call() {
  return {.read = {.min_inputs = 0},
          .lower = lower_call,
          .doc = {.onnx = "the called subgraph's nodes, copied in place",
                  .dtypes = "any",
                  .notes = "inlined when the model is read (its results become the CALL's "
                           "outputs; an argument passed through: an Identity); no TFLite runtime "
                           "here runs CALL, so it is checked against the same ops written "
                           "inline"}};
}

OpEntry composite() {
  return {.read = {.min_inputs = 0},
          .lower = lower_call,
          .doc = {.onnx = "the decomposition subgraph's nodes, copied in place",
                  .dtypes = "any",
                  .notes = "inlined when the model is read, as CALL (attention, norms and other "
                           "blocks of PyTorch and JAX exports: odml.scaled_dot_product_attention, "
                           "odml.l2_norm, odml.group_norm, ...); what the decomposition computes, "
                           "whatever the composite's name"}};
}

OpEntry while_loop() {
  return {.layout = {.kind = LayoutClass::kSubgraph},
          .check = check_while,
          .lower = lower_while,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .subgraph_binding = while_binding,
          .doc = {.onnx = "Loop (the condition subgraph copied before it and at the end of its "
                          "body)",
                  .dtypes = "any",
                  .notes = "cond and body subgraphs; loop-carried values keep one layout across "
                           "iterations (a CNN body runs in NCHW without a Transpose per "
                           "iteration); dimensions that change between iterations become "
                           "dynamic; float values only at the boundary"}};
}

OpEntry if_then_else() {
  return {.layout = {.kind = LayoutClass::kSubgraph},
          .check = check_if,
          .lower = lower_if,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .subgraph_binding = if_binding,
          .doc = {.onnx = "If (the branches read its arguments from the enclosing graph)",
                  .dtypes = "any",
                  .notes = "then and else subgraphs; an output whose branches disagree on a "
                           "dimension gets a dynamic one; float values only at the boundary"}};
}

}  // namespace lite2onnx::ops::control
