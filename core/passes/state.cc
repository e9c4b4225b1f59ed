// expose_state and variable_tensor_problem: see passes.h. Model state has two
// sources in TFLite and one form in the converted graph (ir::StatePair;
// docs/architecture.md, "Model state"):
//   - variable tensors that a stateful op reads and updates in place, in the
//     input slots its op table entry names (OpEntry::state.inputs): the op
//     gets one more output per slot, which its converter writes;
//   - resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE,
//     initialised by CALL_ONCE): the resource ops go, and an Identity of the
//     resource's last value is its next value.
// Both end in StatePairs::add, which names the pair, makes its graph input
// and output and records its initial value.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/builtins.h"
#include "core/ir/names.h"
#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

namespace builtin = ir::builtin;
using ir::TensorId;

// Where an op sits in the source model, for messages: a copy, as the pass
// adds nodes (which moves the graph's node storage) after noting it.
struct OpSite {
  OpSite() = default;
  OpSite(const ir::Node& n)  // NOLINT: every node names its site
      : source_op(n.source_op), source_subgraph(n.source_subgraph), op(n.op) {}
  int source_op = -1;
  int source_subgraph = -1;
  std::string op;
};

std::string label(const OpSite& n) {
  return (n.source_subgraph >= 0 ? "subgraph " + std::to_string(n.source_subgraph) + " " : "") +
         "op " + std::to_string(n.source_op) + " (" + n.op + ")";
}

Error unsupported(const OpSite& n, ReasonCode code, const std::string& reason) {
  Error e = make_error(ErrorCode::kUnsupported,
                       "1 operator cannot be converted: " + label(n) + ": " + reason);
  e.op_index = n.source_subgraph < 0 ? n.source_op : -1;
  e.unsupported.push_back({n.source_op, n.op, reason, to_string(code), n.source_subgraph});
  return e;
}

Error invalid(const OpSite& n, const std::string& message) {
  Error e = make_error(ErrorCode::kInvalidModel, label(n) + ": " + message);
  e.op_index = n.source_subgraph < 0 ? n.source_op : -1;
  return e;
}

// The value TFLite gives a variable before the first invocation, as its
// ResetVariableTensor does: all bytes zero, except int8, whose bytes are its
// zero point. Charged to the graph's created bytes (checked before the bytes
// are allocated).
Result<ir::ConstData> reset_value(ir::Graph& g, const ir::Tensor& like) {
  const uint64_t bytes = static_cast<uint64_t>(ir::element_count(like.shape).value_or(0)) *
                         ir::element_size(like.dtype);
  const std::string by = "the initial value of '" + like.name + "'";
  if (!g.created().admit(bytes, by)) return check_created_bytes(g).take_error();
  int value = 0;
  if (like.dtype == ir::DataType::kInt8 && like.quant && !like.quant->zero_point.empty())
    value = static_cast<int>(like.quant->zero_point[0]);
  std::vector<std::byte> out(static_cast<size_t>(bytes));
  if (value != 0) std::memset(out.data(), value, out.size());
  return g.own(std::move(out), like.dtype, by);
}

// The pairs of one graph, named alike whatever their source: the input after
// the state (unique among the graph's inputs and outputs: a tensor inside the
// graph of that name is the one the emitter renames), the output
// `<input>/next`.
class StatePairs {
 public:
  explicit StatePairs(ir::Graph& g) : g_(g) {
    for (auto list : {&g.inputs(), &g.outputs()})
      for (TensorId t : *list) names_.insert(g.tensor(t).name);
  }

  // Makes `input` (a tensor of the graph that is no graph input yet) the
  // state input named after `name`, and a new tensor of its type, shape and
  // quantization the graph output of its next value; returns that output,
  // which the caller has written.
  TensorId add(TensorId input, const std::string& name, std::string kind, std::string tflite,
               ir::ConstData initial, std::optional<ir::QuantParams> initial_quant) {
    ir::Tensor& in = g_.tensor(input);
    in.name = names_.take(name);
    in.data.reset();
    in.is_variable = false;
    in.layout = {};
    ir::Tensor next = in;
    next.name = names_.take(in.name + "/next");
    const TensorId output = g_.add_tensor(std::move(next));
    g_.add_input(input);
    g_.add_output(output);
    ir::StatePair pair;
    pair.input = input;
    pair.output = output;
    pair.kind = std::move(kind);
    pair.tflite = std::move(tflite);
    pair.initial = std::move(initial);
    pair.initial_quant = std::move(initial_quant);
    g_.state.push_back(std::move(pair));
    return output;
  }

 private:
  ir::Graph& g_;
  ir::UniqueNames names_{"__", 1};
};

// ---- source 1: variable tensors in the state slots of stateful ops ----

Status expose_variable_tensors(ir::Graph& g, PassContext& ctx, StatePairs& pairs) {
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    if (n.dialect != ir::Dialect::kTflite) continue;
    const ops::OpEntry& e = ops::lookup(n);
    if (!e.supported() || e.state.inputs.empty()) continue;
    std::vector<int64_t> at;
    for (int slot : e.state.inputs) {
      const size_t s = static_cast<size_t>(slot);
      const TensorId t = s < g.node(k).inputs.size() ? g.node(k).inputs[s] : ir::kNoTensor;
      if (!e.state.required && (t == ir::kNoTensor || !g.tensor(t).is_variable)) {
        at.push_back(-1);
        continue;
      }
      if (t == ir::kNoTensor)
        return invalid(g.node(k), "state input " + std::to_string(slot) +
                                      " is missing: TFLite's kernel requires a variable tensor "
                                      "there");
      if (!g.tensor(t).is_variable)
        return invalid(g.node(k), "state input " + std::to_string(slot) + " (tensor '" +
                                      g.tensor(t).name +
                                      "') is not a variable tensor, which TFLite's kernel "
                                      "requires");
      // Left as it is: the preflight says why.
      if (!variable_tensor_problem(g, t).empty()) {
        at.push_back(-1);
        continue;
      }
      ir::Tensor& v = g.tensor(t);
      std::optional<ir::ConstData> initial;
      if (v.is_const()) {
        // A buffer in the file (which TFLite's interpreter refuses): the
        // initial value.
        initial = std::move(*v.data);
      } else {
        auto zeros = reset_value(g, v);
        if (!zeros) return zeros.take_error();
        initial = std::move(*zeros);
      }
      const std::string name = v.name;
      const std::optional<ir::QuantParams> quant = v.quant;
      const TensorId next = pairs.add(t, name, "variable_tensor", name, std::move(*initial), quant);
      at.push_back(static_cast<int64_t>(g.node(k).outputs.size()));
      g.append_output(k, next);
    }
    g.info(k).attrs.set("state_outputs", std::move(at));
  }
  return ok_status();
}

// ---- source 3: state kept inside a kernel (OpEntry::state.internal) ----

Status expose_op_state(ir::Graph& g, PassContext& ctx, StatePairs& pairs) {
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    if (g.node(k).dialect != ir::Dialect::kTflite) continue;
    const ops::OpEntry& e = ops::lookup(g.node(k));
    if (!e.supported() || e.state.internal == nullptr) continue;
    std::vector<int64_t> at;
    for (const ops::OpState& piece : e.state.internal(g, g.node(k))) {
      ir::Tensor t;
      // Named after the op's first output (its TFLite tensor name).
      const ir::Node& node = g.node(k);
      t.name =
          (node.outputs.empty() ? node.name : g.tensor(node.outputs[0]).name) + "/" + piece.name;
      t.dtype = piece.dtype;
      t.shape = piece.shape;
      if (!ir::element_count(t.shape))
        return invalid(g.node(k), "the kernel's " + piece.name + " has no static size");
      auto zeros = reset_value(g, t);
      if (!zeros) return zeros.take_error();
      const std::string name = t.name;
      const TensorId input = g.add_tensor(std::move(t));
      const TensorId next =
          pairs.add(input, name, "op_state", g.node(k).name, std::move(*zeros), std::nullopt);
      std::vector<TensorId> inputs = g.node(k).inputs;
      at.push_back(static_cast<int64_t>(inputs.size()));
      at.push_back(static_cast<int64_t>(g.node(k).outputs.size()));
      inputs.push_back(input);
      g.set_inputs(k, std::move(inputs));
      g.append_output(k, next);
    }
    g.info(k).attrs.set("op_state", std::move(at));
  }
  return ok_status();
}

// ---- source 2: resource variables ----

// One resource variable: a (container, shared_name) pair, as TFLite's
// interpreter keys them across subgraphs.
struct Resource {
  std::string name;  // the state's name
  // Its value at the start of an invocation: set by a CALL_ONCE initialiser.
  std::optional<TensorId> initial;  // a constant of the init graph
  const ir::Graph* initial_graph = nullptr;
  TensorId input = ir::kNoTensor;  // the state input, made at first use
  TensorId current = ir::kNoTensor;
  std::optional<OpSite> first;  // the op that first used it, for messages
};

class Resolver {
 public:
  Resolver(ir::Graph& g, PassContext& ctx, StatePairs& pairs) : g_(g), ctx_(ctx), pairs_(pairs) {}

  Status run() {
    bool any = false;
    for (const ir::Node& n : g_.nodes())
      any = any || (n.dialect == ir::Dialect::kTflite && is_resource_op(n.builtin));
    if (!any) return ok_status();
    for (ir::NodeId k : g_.order()) {
      if (ctx_.checkpoint.should_stop()) return ctx_.checkpoint.status();
      const ir::Node& n = g_.node(k);
      if (n.dialect != ir::Dialect::kTflite || !is_resource_op(n.builtin)) continue;
      if (auto st = step(k); !st) return st;
    }
    return finish();
  }

 private:
  static bool is_resource_op(int code) {
    return code == builtin::kVarHandle || code == builtin::kReadVariable ||
           code == builtin::kAssignVariable || code == builtin::kCallOnce;
  }

  // The resource a VAR_HANDLE names; `graph`/`handle` its output tensor there.
  size_t resource_of(const ir::Node& n, const ir::Graph& graph) {
    const std::string container = n.attrs.get_string("container");
    const std::string shared = n.attrs.get_string("shared_name");
    std::string name = container.empty() ? shared : container + "/" + shared;
    if (name.empty() && !n.outputs.empty() && graph.valid(n.outputs[0]))
      name = graph.tensor(n.outputs[0]).name;
    // Handles without a name are each their own resource, as TFLite's
    // interpreter keys them by (container, shared_name) pairs that then differ
    // by nothing: keyed by the handle instead.
    const std::string key = container.empty() && shared.empty()
                                ? "\n" + std::to_string(resources_.size())
                                : container + "\n" + shared;
    auto [at, fresh] = by_key_.try_emplace(key, resources_.size());
    if (fresh)
      resources_.push_back({name, std::nullopt, nullptr, ir::kNoTensor, ir::kNoTensor, OpSite(n)});
    return at->second;
  }

  Status step(ir::NodeId k) {
    const ir::Node& n = g_.node(k);
    switch (n.builtin) {
      case builtin::kCallOnce:
        if (auto st = initialise(n); !st) return st;
        break;
      case builtin::kVarHandle: {
        if (n.outputs.empty() || !g_.valid(n.outputs[0]))
          return invalid(n, "VAR_HANDLE has no output");
        handle_[n.outputs[0]] = resource_of(n, g_);
        break;
      }
      case builtin::kReadVariable: {
        auto r = resource_read_by(n, "READ_VARIABLE");
        if (!r) return r.take_error();
        if (n.outputs.size() != 1) return invalid(n, "READ_VARIABLE has one output");
        auto value = current(*r, n, n.outputs[0]);
        if (!value) return value.take_error();
        if (auto st = same_kind(*value, n.outputs[0], *r, n); !st) return st;
        // The read becomes a copy of the value the resource holds now.
        ir::Node copy;
        copy.dialect = ir::Dialect::kOnnx;
        copy.op = "Identity";
        copy.name = n.name;
        copy.source_op = n.source_op;
        copy.source_subgraph = n.source_subgraph;
        copy.inputs = {*value};
        copy.outputs = n.outputs;
        g_.add_node_before(k, std::move(copy));
        break;
      }
      case builtin::kAssignVariable: {
        auto r = resource_read_by(n, "ASSIGN_VARIABLE");
        if (!r) return r.take_error();
        if (n.inputs.size() < 2 || !g_.valid(n.inputs[1]))
          return invalid(n, "ASSIGN_VARIABLE needs the value it assigns");
        const TensorId v = n.inputs[1];
        Resource& res = resources_[*r];
        const TensorId like = res.current != ir::kNoTensor ? res.current : res.input;
        if (like != ir::kNoTensor)
          if (auto st = same_kind(like, v, *r, n); !st) return st;
        if (res.initial && res.input == ir::kNoTensor)
          if (auto st = same_kind_as_initial(res, v, n); !st) return st;
        res.current = v;
        if (!res.first) res.first = OpSite(n);
        break;
      }
      default:
        break;
    }
    removed_.push_back(k);
    return ok_status();
  }

  Result<size_t> resource_read_by(const ir::Node& n, const char* what) {
    if (n.inputs.empty() || !g_.valid(n.inputs[0]))
      return invalid(n, std::string(what) + " has no resource input");
    auto it = handle_.find(n.inputs[0]);
    if (it == handle_.end())
      return unsupported(n, ReasonCode::kState,
                         "its resource '" + g_.tensor(n.inputs[0]).name +
                             "' does not come from a VAR_HANDLE of this subgraph");
    return it->second;
  }

  // The value resource r holds at node `n`, which reads it into `like`: what
  // the last ASSIGN_VARIABLE wrote, else the state input.
  Result<TensorId> current(size_t r, const ir::Node& n, TensorId like) {
    Resource& res = resources_[r];
    if (!res.first) res.first = OpSite(n);
    if (res.current != ir::kNoTensor) return res.current;
    if (!res.initial)
      return unsupported(n, ReasonCode::kState,
                         "resource '" + res.name +
                             "' is read before anything assigns it (no CALL_ONCE initialiser "
                             "gives it a value; TFLite's interpreter fails there too)");
    if (auto st = same_kind_as_initial(res, like, n); !st) return st.take_error();
    res.input = state_input(like, res.initial_graph->tensor(*res.initial).shape);
    res.current = res.input;
    return res.current;
  }

  // The tensor that becomes a resource's state input: the type and
  // quantization of `like`, the shape `shape` (StatePairs::add names it).
  TensorId state_input(TensorId like, const ir::Shape& shape) {
    ir::Tensor t = g_.tensor(like);
    t.shape = shape;
    t.has_rank = true;
    t.data.reset();
    t.layout = {};
    t.is_variable = false;
    return g_.add_tensor(std::move(t));
  }

  // Tensors a resource's value passes through must agree: one type, one
  // shape, one quantization (TFLite copies the bytes as they are).
  Status same_kind(TensorId a, TensorId b, size_t r, const ir::Node& n) {
    const ir::Tensor& x = g_.tensor(a);
    const ir::Tensor& y = g_.tensor(b);
    if (x.dtype != y.dtype || !same_quantization(x, y))
      return unsupported(n, ReasonCode::kState,
                         "resource '" + resources_[r].name + "' holds '" + x.name + "' (" +
                             ir::to_string(x.dtype) + ") and '" + y.name + "' (" +
                             ir::to_string(y.dtype) +
                             ") of another type or quantization: TFLite copies the bytes as "
                             "they are");
    if (x.has_rank && y.has_rank && ir::element_count(x.shape) && ir::element_count(y.shape) &&
        x.shape != y.shape)
      return unsupported(n, ReasonCode::kState,
                         "resource '" + resources_[r].name + "' holds '" + x.name + "' " +
                             ir::to_string(x.shape) + " and '" + y.name + "' " +
                             ir::to_string(y.shape) +
                             ": a state whose shape changes between invocations");
    return ok_status();
  }
  Status same_kind_as_initial(const Resource& res, TensorId t, const ir::Node& n) {
    const ir::Tensor& init = res.initial_graph->tensor(*res.initial);
    const ir::Tensor& x = g_.tensor(t);
    if (init.dtype != x.dtype || !same_quantization(init, x) ||
        (x.has_rank && ir::element_count(x.shape) && init.shape != x.shape))
      return unsupported(n, ReasonCode::kState,
                         "resource '" + res.name + "' is initialised with '" + init.name + "' " +
                             ir::to_string(init.dtype) + " " + ir::to_string(init.shape) +
                             " but holds '" + x.name + "' " + ir::to_string(x.dtype) + " " +
                             ir::to_string(x.shape));
    return ok_status();
  }

  // A CALL_ONCE: its init graph's assignments, folded to constants, are the
  // resources' values at the start of the first invocation.
  Status initialise(const ir::Node& n) {
    if (n.subgraphs.size() != 1) return invalid(n, "CALL_ONCE without its init subgraph");
    inits_.push_back(std::make_unique<ir::Graph>(n.subgraphs[0].graph()));
    ir::Graph& init = *inits_.back();
    if (auto st = validate(init, ctx_); !st) return st;
    if (auto st = sort_topologically(init, ctx_); !st) return st;
    init.compact();
    if (auto st = fold_constants(init, ctx_); !st) return st;
    init.compact();
    std::map<TensorId, size_t> handles;
    for (const ir::Node& m : init.nodes()) {
      if (m.dialect == ir::Dialect::kTflite && m.builtin == builtin::kVarHandle &&
          !m.outputs.empty() && init.valid(m.outputs[0])) {
        handles[m.outputs[0]] = resource_of(m, init);
        continue;
      }
      if (m.dialect == ir::Dialect::kTflite && m.builtin == builtin::kAssignVariable &&
          m.inputs.size() >= 2 && init.valid(m.inputs[0]) && init.valid(m.inputs[1])) {
        auto h = handles.find(m.inputs[0]);
        if (h == handles.end())
          return unsupported(m, ReasonCode::kState,
                             "assigns a resource that no VAR_HANDLE of its subgraph names");
        const ir::Tensor& v = init.tensor(m.inputs[1]);
        if (!v.is_const() || !ir::element_count(v.shape))
          return unsupported(m, ReasonCode::kRuntimeValue,
                             "the initial value of resource '" + resources_[h->second].name +
                                 "' ('" + v.name + "') is computed at run time, not a constant");
        if (v.quant && v.quant->scale.size() > 1)
          return unsupported(m, ReasonCode::kQuantization,
                             "the initial value of resource '" + resources_[h->second].name +
                                 "' is quantized per axis");
        Resource& res = resources_[h->second];
        if (res.input != ir::kNoTensor || res.current != ir::kNoTensor) continue;  // too late
        res.initial = m.inputs[1];
        res.initial_graph = &init;
        continue;
      }
      // Anything else there (ops the folding left, a READ_VARIABLE) has no
      // effect on a resource's value, or one this pass cannot see.
      if (m.dialect == ir::Dialect::kTflite &&
          (m.builtin == builtin::kReadVariable || m.builtin == builtin::kCallOnce))
        return unsupported(m, ReasonCode::kState,
                           "a CALL_ONCE initialiser that reads resources or calls another");
    }
    return ok_status();
  }

  // Removes the resource ops and adds each resource's state pair, its next
  // value an Identity of its last one.
  Status finish() {
    for (ir::NodeId k : removed_) g_.remove_node(k);
    for (Resource& res : resources_) {
      if (res.current == ir::kNoTensor && res.input == ir::kNoTensor) continue;  // only a handle
      std::optional<ir::ConstData> initial;
      std::optional<ir::QuantParams> quant;
      if (res.initial) {
        const ir::Tensor& v = res.initial_graph->tensor(*res.initial);
        initial = *v.data;
        quant = v.quant;
      }
      if (res.input == ir::kNoTensor) {
        // Written before it is read (or never read): its value on entry is
        // unused, but it is a pair all the same; its initial value is the
        // CALL_ONCE one, else TFLite's reset value.
        if (!res.initial && !ir::element_count(g_.tensor(res.current).shape))
          return unsupported(
              *res.first, ReasonCode::kState,
              "resource '" + res.name + "' has no initial value and a dynamic shape");
        res.input =
            state_input(res.current, res.initial ? res.initial_graph->tensor(*res.initial).shape
                                                 : g_.tensor(res.current).shape);
      }
      if (!initial) {
        auto zeros = reset_value(g_, g_.tensor(res.input));
        if (!zeros) return zeros.take_error();
        initial = std::move(*zeros);
        quant = g_.tensor(res.input).quant;
      }
      const TensorId out =
          pairs_.add(res.input, res.name, "resource", res.name, std::move(*initial), quant);
      ir::Node copy;
      copy.dialect = ir::Dialect::kOnnx;
      copy.op = "Identity";
      copy.name = g_.tensor(out).name;
      copy.source_op = res.first ? res.first->source_op : -1;
      copy.inputs = {res.current};
      copy.outputs = {out};
      copy.inserted =
          ir::Insertion{g_.tensor(res.input).name, "the state's value after the invocation"};
      g_.add_node(std::move(copy));
    }
    return check_created_bytes(g_);
  }

  ir::Graph& g_;
  PassContext& ctx_;
  StatePairs& pairs_;
  std::vector<Resource> resources_;
  std::map<std::string, size_t> by_key_;
  std::map<TensorId, size_t> handle_;  // VAR_HANDLE output -> resource
  std::vector<std::unique_ptr<ir::Graph>> inits_;
  std::vector<ir::NodeId> removed_;
};

}  // namespace

std::string variable_tensor_problem(const ir::Graph& g, ir::TensorId t) {
  const ir::Tensor& v = g.tensor(t);
  if (g.is_graph_input(t) || g.is_graph_output(t))
    return "variable tensor '" + v.name + "' is also a graph input or output";
  if (g.uses(t).size() != 1)
    return "variable tensor '" + v.name + "' is read by " + std::to_string(g.uses(t).size()) +
           " operator inputs: each sees the value the ops before it wrote, which is not converted";
  if (!ir::static_shape(v) || !ir::element_count(v.shape))
    return "variable tensor '" + v.name +
           "' has no static shape: its initial value cannot be "
           "written";
  if (v.quant && v.quant->scale.size() > 1)
    return "variable tensor '" + v.name + "' is quantized per axis";
  return "";
}

Status expose_state(ir::Graph& g, PassContext& ctx) {
  StatePairs pairs(g);
  if (auto st = Resolver(g, ctx, pairs).run(); !st) return st;
  if (auto st = expose_variable_tensors(g, ctx, pairs); !st) return st;
  if (auto st = expose_op_state(g, ctx, pairs); !st) return st;
  return check_created_bytes(g);
}

}  // namespace lite2onnx::passes
