#include "core/tflite/reader.h"

#include "core/ir/builtins.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "core/tflite/reader_parts.h"
#include "schema_generated.h"

namespace lite2onnx::tflite_reader {
namespace {

using ir::DataType;
using ir::TensorId;

// Reads subgraphs into graphs with their control flow expanded: a CALL's
// subgraph (a STABLEHLO_COMPOSITE's decomposition) is copied in its place; a WHILE's condition is
// copied before it (evaluated on its inputs: the Loop's first condition) and its node owns "body":
// the body subgraph with the condition copied after it, whose outputs are the next condition and
// the next values; an IF owns "then_branch" and "else_branch"; a CALL_ONCE owns "init". Each
// subgraph is read once and copied for every op that runs it; every graph read or copied counts
// against max_operators and max_tensors, so a subgraph run from many places (or from places that
// are copied themselves) cannot multiply without bound. A subgraph reached from itself is an
// invalid model; a chain of calls deeper than max_subgraph_depth is a resource limit.
class SubgraphReader {
 public:
  SubgraphReader(const tflite::Model& model, const std::vector<std::span<const std::byte>>& buffers,
                 const Limits& limits, OptionsReader read_options, Checkpoint& checkpoint,
                 uint64_t& budget, const ir::Graph& budget_owner, uint64_t model_bytes)
      : copy_budget_((uint64_t{16} << 20) + 4 * model_bytes),
        model_(model),
        buffers_(buffers),
        limits_(limits),
        read_options_(read_options),
        checkpoint_(checkpoint),
        budget_(budget),
        owner_(budget_owner),
        entries_(model.subgraphs()->size()) {}

  Result<ir::Graph> read(uint32_t converted) {
    converted_ = converted;
    entries_[converted].state = State::kReading;
    return read_subgraph(converted, 0);
  }
  size_t converted_tensors() const { return converted_tensors_; }
  // The subgraphs read besides the converted one, in index order.
  std::vector<int> reached() const {
    std::vector<int> out;
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].graph) out.push_back(static_cast<int>(i));
    return out;
  }

 private:
  enum class State : uint8_t { kUnread, kReading, kRead };
  struct Entry {
    State state = State::kUnread;
    std::optional<ir::Graph> graph;  // with its control flow expanded
    uint32_t height = 0;             // the longest chain of calls below it
    size_t nodes = 0, tensors = 0;   // in the graph and its node subgraphs
    uint64_t bytes = 0;              // the names and text they hold: what a copy copies
  };

  // "subgraph 3 " for a subgraph other than the one converted (messages).
  std::string in(uint32_t s) const {
    return s == converted_ ? "" : "subgraph " + std::to_string(s) + " ";
  }
  // An error about op k of subgraph s: op_index names ops of the converted subgraph only.
  Error at_op(Error e, uint32_t s, size_t k) const {
    e.op_index = s == converted_ ? static_cast<int>(k) : -1;
    return e;
  }

  // Counts nodes and tensors against the limits (all graphs of the conversion).
  Status charge(size_t nodes, size_t tensors, const std::string& what) {
    nodes_ += nodes;
    tensors_ += tensors;
    if (tensors_ > limits_.max_tensors)
      return make_error(ErrorCode::kResourceLimit,
                        what + ": " + std::to_string(tensors_) + " tensors exceed the limit of " +
                            std::to_string(limits_.max_tensors) +
                            " (max_tensors; every subgraph converted counts, copies included)");
    if (nodes_ > limits_.max_operators)
      return make_error(ErrorCode::kResourceLimit,
                        what + ": " + std::to_string(nodes_) + " operators exceed the limit of " +
                            std::to_string(limits_.max_operators) +
                            " (max_operators; every subgraph converted counts, copies included)");
    return ok_status();
  }

  // The expanded graph of subgraph `index`, which op `where` runs at call depth `depth`.
  Result<const Entry*> called(int64_t index, uint32_t depth, const std::string& where,
                              const char* role) {
    const auto count = entries_.size();
    if (index < 0 || static_cast<uint64_t>(index) >= count)
      return invalid(where + ": " + role + " subgraph index " + std::to_string(index) +
                     " out of range (the model has " + std::to_string(count) + " subgraphs)");
    const auto r = static_cast<uint32_t>(index);
    Entry& e = entries_[r];
    if (e.state == State::kReading)
      return invalid(where + " runs subgraph " + std::to_string(r) +
                     ", which is already running: a subgraph reached from itself (recursion)");
    if (e.state == State::kRead) {
      if (depth + e.height > limits_.max_subgraph_depth)
        return depth_error(where, depth + e.height);
      return &e;
    }
    if (depth > limits_.max_subgraph_depth) return depth_error(where, depth);
    e.state = State::kReading;
    auto g = read_subgraph(r, depth);
    if (!g) return g.take_error();
    e.nodes = ir::total_nodes(*g);
    e.tensors = ir::total_tensors(*g);
    e.bytes = text_bytes(*g);
    e.graph = std::move(*g);
    e.state = State::kRead;
    return &e;
  }
  Error depth_error(const std::string& where, uint32_t depth) const {
    return make_error(ErrorCode::kResourceLimit,
                      where + ": subgraphs run inside one another " + std::to_string(depth) +
                          " deep, more than the limit of " +
                          std::to_string(limits_.max_subgraph_depth) + " (max_subgraph_depth)");
  }

  Result<ir::Graph> read_subgraph(uint32_t s, uint32_t depth) {
    const tflite::SubGraph* sg = model_.subgraphs()->Get(s);
    if (!sg) return invalid("subgraph " + std::to_string(s) + " is null");
    ir::Graph g;
    g.share_created(owner_);
    g.name = sg->name() ? sg->name()->str() : "";
    const auto* tensors = sg->tensors();
    const size_t num_tensors = tensors ? tensors->size() : 0;
    if (s == converted_) {
      converted_tensors_ = num_tensors;
      if (num_tensors > limits_.max_tensors)
        return make_error(ErrorCode::kResourceLimit,
                          std::to_string(num_tensors) + " tensors exceed the limit of " +
                              std::to_string(limits_.max_tensors) + " (max_tensors)");
    }
    if (auto st = charge(0, num_tensors, in(s) + "tensors"); !st) return st.take_error();
    for (size_t i = 0; i < num_tensors; ++i) {
      if (checkpoint_.should_stop()) return checkpoint_.status().take_error();
      const tflite::Tensor* ft = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
      auto t = read_tensor(ft, i, buffers_, limits_, budget_, g.created(), checkpoint_);
      if (!t) {
        Error e = t.take_error();
        e.tensor = ft && ft->name() ? ft->name()->str() : "";
        if (s != converted_) e.message = in(s) + e.message;
        return e;
      }
      g.add_tensor(std::move(t.value()));
    }

    for (size_t i = 0; i < num_tensors; ++i)
      if (auto st =
              read_blockwise(tensors->Get(static_cast<flatbuffers::uoffset_t>(i)), i, g, budget_);
          !st) {
        Error e = st.take_error();
        if (s != converted_) e.message = in(s) + e.message;
        return e;
      }

    auto check_index = [&](int32_t index, const std::string& where) -> Status {
      if (index < 0 || static_cast<size_t>(index) >= num_tensors)
        return invalid(where + ": tensor index " + std::to_string(index) + " out of range (" +
                       std::to_string(num_tensors) + " tensors)");
      return ok_status();
    };
    if (sg->inputs())
      for (int32_t i : *sg->inputs()) {
        if (auto st = check_index(i, in(s) + "subgraph input"); !st) return st.take_error();
        if (g.is_graph_input(i))
          return invalid(in(s) + "subgraph input: tensor " + std::to_string(i) +
                         " is listed twice");
        g.add_input(i);
      }
    if (sg->outputs())
      for (int32_t i : *sg->outputs()) {
        if (auto st = check_index(i, in(s) + "subgraph output"); !st) return st.take_error();
        g.add_output(i);
      }

    const auto* ops = sg->operators();
    const size_t num_ops = ops ? ops->size() : 0;
    if (s == converted_ && num_ops > limits_.max_operators)
      return make_error(ErrorCode::kResourceLimit,
                        std::to_string(num_ops) + " operators exceed the limit of " +
                            std::to_string(limits_.max_operators) + " (max_operators)");
    if (auto st = charge(num_ops, 0, in(s) + "operators"); !st) return st.take_error();
    const auto* codes = model_.operator_codes();
    std::vector<int> producer(num_tensors, -1);
    uint32_t height = 0;
    for (size_t k = 0; k < num_ops; ++k) {
      if (checkpoint_.should_stop()) return checkpoint_.status().take_error();
      const tflite::Operator* op = ops->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (!op) return invalid(in(s) + "op " + std::to_string(k) + " is null");
      uint32_t ci = op->opcode_index();
      if (!codes || ci >= codes->size())
        return invalid(in(s) + "op " + std::to_string(k) + ": opcode index " + std::to_string(ci) +
                       " out of range (" + std::to_string(codes ? codes->size() : 0) + " codes)");
      auto code = builtin_code(codes->Get(ci), ci);
      if (!code) return code.take_error();
      ir::Node n;
      n.dialect = ir::Dialect::kTflite;
      n.builtin = *code;
      n.source_op = static_cast<int>(k);
      n.source_subgraph = s == converted_ ? -1 : static_cast<int>(s);
      const std::string node_prefix = s == converted_ ? "" : "subgraph" + std::to_string(s) + "/";
      const int version = codes->Get(ci)->version();
      if (*code == ir::builtin::kCustom) {
        const auto* cc = codes->Get(ci)->custom_code();
        if (cc && cc->size() > budget_)
          return at_op(make_error(ErrorCode::kResourceLimit,
                                  in(s) + "the model expands to far more than its size "
                                          "(a long custom code shared by many ops)"),
                       s, k);
        if (cc) budget_ -= cc->size();
        n.op = cc ? cc->str() : "CUSTOM";
        n.name = node_prefix + "Custom_" + std::to_string(k);
      } else {
        n.op = ir::builtin_name(*code);
        n.name = node_prefix + ir::camel_name(n.op) + "_" + std::to_string(k);
      }
      const std::string where = in(s) + op_label(k, n.op);
      // Ops may share one inputs vector: each read counts against the model's
      // expansion budget, so a small file cannot describe billions of edges.
      const size_t edges =
          (op->inputs() ? op->inputs()->size() : 0) + (op->outputs() ? op->outputs()->size() : 0);
      if (op->inputs() && op->inputs()->size() > limits_.max_inputs_per_op)
        return at_op(
            make_error(ErrorCode::kResourceLimit,
                       where + " has " + std::to_string(op->inputs()->size()) +
                           " inputs, more than the limit of " +
                           std::to_string(limits_.max_inputs_per_op) + " (max_inputs_per_op)"),
            s, k);
      if (4 * edges > budget_)
        return at_op(make_error(ErrorCode::kResourceLimit,
                                where + ": the model expands to far more than its size (operators "
                                        "sharing their input lists)"),
                     s, k);
      budget_ -= 4 * edges;
      if (op->inputs())
        for (int32_t i : *op->inputs()) {
          if (i != -1)
            if (auto st = check_index(i, where + " input"); !st)
              return at_op(st.take_error(), s, k);
          n.inputs.push_back(i);
        }
      if (op->outputs())
        for (int32_t o : *op->outputs()) {
          if (auto st = check_index(o, where + " output"); !st) return at_op(st.take_error(), s, k);
          if (producer[o] != -1)
            return at_op(invalid(where + ": output tensor " + std::to_string(o) +
                                 " is already produced by op " + std::to_string(producer[o])),
                         s, k);
          if (g.is_graph_input(o))
            return at_op(invalid(where + ": output tensor " + std::to_string(o) + " '" +
                                 g.tensor(o).name + "' is a graph input"),
                         s, k);
          if (g.tensor(o).is_const())
            return at_op(invalid(where + ": output tensor " + std::to_string(o) + " '" +
                                 g.tensor(o).name + "' is a constant"),
                         s, k);
          producer[o] = static_cast<int>(k);
          n.outputs.push_back(o);
        }
      // Intermediate tensors (the integer LSTM's gate and hidden scales):
      // checked like inputs and kept as their quantization (attributes
      // "intermediate_scales", 0 without one single scale, and
      // "intermediate_zero_points"), which stays right when the node is
      // copied into another graph (CALL, a WHILE's condition) and its tensor
      // ids change.
      if (const auto* mids = op->intermediates(); mids && mids->size() > 0) {
        if (mids->size() > limits_.max_inputs_per_op || 4 * mids->size() > budget_)
          return at_op(
              make_error(ErrorCode::kResourceLimit, where + ": too many intermediate tensors"), s,
              k);
        budget_ -= 4 * mids->size();
        std::vector<float> scales;
        std::vector<int64_t> zero_points;
        for (int32_t i : *mids) {
          if (auto st = check_index(i, where + " intermediate"); !st)
            return at_op(st.take_error(), s, k);
          const auto& q = g.tensor(i).quant;
          scales.push_back(q && q->scale.size() == 1 ? q->scale[0] : 0.f);
          zero_points.push_back(q && !q->zero_point.empty() ? q->zero_point[0] : 0);
        }
        n.attrs.set("intermediate_scales", std::move(scales));
        n.attrs.set("intermediate_zero_points", std::move(zero_points));
      }
      // Strings the options hold and read_options copies (a resource's
      // names): shared by many ops, they would multiply.
      if (*code == ir::builtin::kVarHandle)
        if (const auto* o = op->builtin_options_as_VarHandleOptions()) {
          const uint64_t text = (o->container() ? o->container()->size() : 0) +
                                (o->shared_name() ? o->shared_name()->size() : 0);
          if (text > budget_) return at_op(expansion(where), s, k);
          budget_ -= text;
        }
      if (read_options_)
        if (auto st = read_options_(*code, n.op, version, *op, n.attrs); !st) {
          Error e = st.take_error();
          // An unsupported op is listed when it is in the converted subgraph.
          if (s != converted_) e.unsupported.clear();
          for (UnsupportedOp& u : e.unsupported) {
            u.op_index = static_cast<int>(k);
            u.op = n.op;
          }
          e.message = where + ": " + e.message;
          return at_op(std::move(e), s, k);
        }
      if (is_control_flow(*code)) {
        auto h = expand(g, std::move(n), *op, depth, where);
        if (!h) return at_op(h.take_error(), s, k);
        height = std::max(height, *h);
        continue;
      }
      g.add_node(std::move(n));
    }
    // A constant with no elements (a RESHAPE's shape [0], for a scalar) has an
    // empty buffer, like an activation: one that no op writes and that is no
    // graph input is that constant.
    for (size_t i = 0; i < num_tensors; ++i) {
      ir::Tensor& t = g.tensor(static_cast<TensorId>(i));
      const auto count = ir::element_count(t.shape);
      if (!t.is_const() && producer[i] < 0 && !g.is_graph_input(static_cast<TensorId>(i)) &&
          tensors->Get(static_cast<flatbuffers::uoffset_t>(i))->buffer() != 0 && count &&
          *count == 0 && ir::element_size(t.dtype)) {
        ir::ConstData empty;
        empty.stored_type = t.dtype;
        t.data = empty;
      }
    }
    if (s != converted_) entries_[s].height = height;
    return g;
  }

  // The bytes of names and string attributes of a graph and its subgraphs.
  static uint64_t text_bytes(const ir::Graph& g) {
    uint64_t n = 0;
    ir::for_each_graph(g, [&](const ir::Graph& x) {
      for (size_t t = 0; t < x.tensor_count(); ++t)
        n += x.tensor(static_cast<TensorId>(t)).name.size();
      for (const ir::Node& node : x.nodes()) {
        n += node.name.size() + node.op.size();
        for (const ir::Attr& a : node.attrs.list())
          if (const auto* text = std::get_if<std::string>(&a.value)) n += text->size();
      }
    });
    return n;
  }

  // Checks that the tensors a control-flow op hands over agree in count and
  // type with the subgraph that receives them.
  static Status same_types(const ir::Graph& outer, std::span<const TensorId> outer_ids,
                           const ir::Graph& inner, std::span<const TensorId> inner_ids,
                           const std::string& where, const std::string& what) {
    if (outer_ids.size() != inner_ids.size())
      return invalid(where + ": " + what + ": " + std::to_string(outer_ids.size()) + " vs " +
                     std::to_string(inner_ids.size()));
    for (size_t i = 0; i < outer_ids.size(); ++i) {
      if (!outer.valid(outer_ids[i]))
        return invalid(where + ": " + what + ": tensor " + std::to_string(i) + " is missing");
      const ir::Tensor& a = outer.tensor(outer_ids[i]);
      const ir::Tensor& b = inner.tensor(inner_ids[i]);
      if (a.dtype != b.dtype)
        return invalid(where + ": " + what + ": '" + a.name + "' is " + ir::to_string(a.dtype) +
                       " but '" + b.name + "' is " + ir::to_string(b.dtype));
    }
    return ok_status();
  }

  // Expands control-flow op `n` (`where`) into `g`; returns the
  // height of the chain of calls below it.
  Result<uint32_t> expand(ir::Graph& g, ir::Node n, const tflite::Operator& op, uint32_t depth,
                          const std::string& where) {
    auto roles = called_subgraphs(op, n.builtin, where);
    if (!roles) return roles.take_error();
    std::vector<const Entry*> callee;
    uint32_t height = 0;
    for (auto [role, index] : *roles) {
      auto e = called(index, depth + 1, where, role);
      if (!e) return e.take_error();
      callee.push_back(*e);
      height = std::max(height, (*e)->height + 1);
    }
    const std::vector<TensorId> ins(n.inputs.begin(), n.inputs.end());
    const std::vector<TensorId> outs(n.outputs.begin(), n.outputs.end());
    const std::string prefix = n.name + "/";
    // A copy copies names too: they count against a budget of their own
    // (copy_budget_), so a few long names copied many times cannot make
    // gigabytes.
    auto charge_copy = [&](const Entry& e) -> Status {
      const uint64_t text = e.bytes + uint64_t{prefix.size() + 16} * (e.nodes + e.tensors);
      if (text > copy_budget_)
        return make_error(ErrorCode::kResourceLimit,
                          where +
                              " (copying the subgraph it runs): the copies would hold more than "
                              "16 MiB + 4 x the model of names; the model expands to far more "
                              "than its size");
      copy_budget_ -= text;
      return charge(e.nodes, e.tensors, where + " (copying the subgraph it runs)");
    };
    switch (n.builtin) {
      case ir::builtin::kCall:
      case ir::builtin::kStablehloComposite: {
        // A composite is a call of its decomposition: TFLite's kernel runs
        // that subgraph (a delegate may run the whole block its own way).
        const ir::Graph& f = *callee[0]->graph;
        if (auto st = same_types(g, ins, f, f.inputs().ids(), where, "inputs and the callee's");
            !st)
          return st.take_error();
        if (auto st = same_types(g, outs, f, f.outputs().ids(), where, "outputs and the callee's");
            !st)
          return st.take_error();
        if (auto st = charge_copy(*callee[0]); !st) return st.take_error();
        const size_t before = g.tensor_count();
        const std::vector<TensorId> results = ir::inline_graph(g, f, ins, prefix);
        // The callee's results become the CALL's outputs: a tensor a copied
        // node writes is replaced by the output; anything else (an input
        // passed through, a constant, a result listed twice) is copied by an
        // Identity.
        std::vector<bool> taken(g.tensor_count(), false);
        for (size_t j = 0; j < outs.size(); ++j) {
          const TensorId r = results[j], o = outs[j];
          const ir::NodeId p = g.producer(r);
          if (p != ir::kNoNode && static_cast<size_t>(r) >= before && !taken[r]) {
            taken[r] = true;
            const auto& pouts = g.node(p).outputs;
            const auto slot =
                static_cast<size_t>(std::find(pouts.begin(), pouts.end(), r) - pouts.begin());
            g.replace_uses(r, o);
            g.set_output(p, slot, o);
            continue;
          }
          ir::Node copy;
          copy.dialect = ir::Dialect::kOnnx;
          copy.op = "Identity";
          copy.name = prefix + "output_" + std::to_string(j);
          copy.source_op = n.source_op;
          copy.source_subgraph = n.source_subgraph;
          copy.inputs = {r};
          copy.outputs = {o};
          g.add_node(std::move(copy));
        }
        return height;
      }
      case ir::builtin::kWhile: {
        const ir::Graph& cond = *callee[0]->graph;
        const ir::Graph& body = *callee[1]->graph;
        if (std::find(ins.begin(), ins.end(), ir::kNoTensor) != ins.end())
          return invalid(where + ": an input is missing");
        if (auto st = same_types(g, ins, g, outs, where, "inputs and outputs"); !st)
          return st.take_error();
        if (auto st = same_types(g, ins, cond, cond.inputs().ids(), where, "inputs and cond's");
            !st)
          return st.take_error();
        if (auto st = same_types(g, ins, body, body.inputs().ids(), where, "inputs and body's");
            !st)
          return st.take_error();
        if (auto st = same_types(g, outs, body, body.outputs().ids(), where, "outputs and body's");
            !st)
          return st.take_error();
        if (cond.outputs().size() != 1 ||
            cond.tensor(cond.outputs()[0]).dtype != ir::DataType::kBool)
          return invalid(where + ": its cond subgraph must have one output, of type BOOL");
        if (auto st = charge_copy(*callee[0]); !st) return st.take_error();
        if (auto st = charge_copy(*callee[1]); !st) return st.take_error();
        if (auto st = charge_copy(*callee[0]); !st) return st.take_error();
        // The first condition, before the loop; the next one at the end of
        // each iteration, on the values it computed.
        const TensorId first = ir::inline_graph(g, cond, ins, prefix + "cond/")[0];
        ir::Graph loop = body;
        const std::vector<TensorId> next = loop.outputs().ids();
        const TensorId again = ir::inline_graph(loop, cond, next, prefix + "cond_next/")[0];
        std::vector<TensorId> loop_outputs{again};
        loop_outputs.insert(loop_outputs.end(), next.begin(), next.end());
        loop.set_outputs(loop_outputs);
        n.inputs.insert(n.inputs.begin(), first);
        n.subgraphs.emplace_back("body", std::move(loop));
        break;
      }
      case ir::builtin::kIf: {
        if (ins.empty() || !g.valid(ins[0]) || g.tensor(ins[0]).dtype != ir::DataType::kBool)
          return invalid(where + ": input 0 (the condition) must be a BOOL tensor");
        const std::span<const TensorId> args(ins.begin() + 1, ins.end());
        for (size_t b = 0; b < 2; ++b) {
          const ir::Graph& branch = *callee[b]->graph;
          const std::string which = b == 0 ? "then" : "else";
          if (auto st =
                  same_types(g, args, branch, branch.inputs().ids(), where, "inputs and " + which);
              !st)
            return st.take_error();
          if (auto st = same_types(g, outs, branch, branch.outputs().ids(), where,
                                   "outputs and " + which);
              !st)
            return st.take_error();
          if (auto st = charge_copy(*callee[b]); !st) return st.take_error();
          n.subgraphs.emplace_back(b == 0 ? "then_branch" : "else_branch", branch);
        }
        break;
      }
      default: {  // CALL_ONCE
        const ir::Graph& init = *callee[0]->graph;
        if (!init.inputs().empty() || !init.outputs().empty())
          return invalid(where + ": its init subgraph must have no inputs and no outputs");
        if (auto st = charge_copy(*callee[0]); !st) return st.take_error();
        n.subgraphs.emplace_back("init", init);
        break;
      }
    }
    g.add_node(std::move(n));
    return height;
  }

  uint64_t copy_budget_;  // bytes of names copies may hold
  const tflite::Model& model_;
  const std::vector<std::span<const std::byte>>& buffers_;
  const Limits& limits_;
  OptionsReader read_options_;
  Checkpoint& checkpoint_;
  uint64_t& budget_;
  const ir::Graph& owner_;
  std::vector<Entry> entries_;
  uint32_t converted_ = 0;
  size_t converted_tensors_ = 0;
  size_t nodes_ = 0, tensors_ = 0;
};

}  // namespace

Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                       OptionsReader read_options, Checkpoint& checkpoint,
                       std::string_view signature) {
  if (bytes.empty()) return invalid("empty input: expected a TFLite model");
  if (bytes.size() < 8)
    return invalid("input of " + std::to_string(bytes.size()) +
                   " bytes is too short to be a TFLite model");
  if (bytes.size() > limits.max_model_bytes)
    return make_error(ErrorCode::kResourceLimit,
                      "model of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_model_bytes) + " bytes (max_model_bytes)");
  // FlatBuffers reads fields in place, trusting the buffer's own alignment; a
  // file read into memory (or mapped) always starts aligned.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0)
    return make_error(ErrorCode::kInvalidOption,
                      "the model bytes must start at an 8-byte aligned address");
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (!tflite::ModelBufferHasIdentifier(data)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(data[i]);
      id += (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(data[i]);
    }
    return invalid("not a TFLite model: file identifier is '" + id + "', expected 'TFL3'");
  }
  // Buffers beyond a 2 GiB FlatBuffer are addressed by offset; verify the FlatBuffer part.
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 64;
  size_t fb_size = std::min<size_t>(bytes.size(), FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  // Every table takes at least 4 bytes: this admits any model without shared
  // tables, bounds the verifier's work by the input size, and leaves the
  // count limits to the checks below (kResourceLimit).
  vopts.max_tables = static_cast<flatbuffers::uoffset_t>(fb_size / 4 + 1);
  flatbuffers::Verifier verifier(data, fb_size, vopts);
  if (!tflite::VerifyModelBuffer(verifier))
    return invalid(
        "corrupt TFLite model: the FlatBuffer failed verification (truncated or "
        "damaged file, or offsets pointing outside it)");
  const tflite::Model* model = tflite::GetModel(data);

  ReadModel out;
  out.version = model->version();
  if (model->description()) out.description = model->description()->str();
  const auto* subgraphs = model->subgraphs();
  if (!subgraphs || subgraphs->size() == 0) return invalid("model has no subgraphs");

  // What the file may make the reader copy: names, shapes, scales, operator
  // inputs, signatures. FlatBuffers let many entries share one table or
  // vector, so a small file could otherwise describe billions of reads.
  uint64_t budget = 4 * static_cast<uint64_t>(bytes.size()) + (64u << 10);
  for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
    if (checkpoint.should_stop()) return checkpoint.status().take_error();
    const tflite::SubGraph* sg = subgraphs->Get(s);
    ir::SubgraphSummary sum;
    sum.index = static_cast<int>(s);
    const uint64_t cost = 4 + (sg && sg->name() ? sg->name()->size() : 0);
    if (cost > budget) return expansion("subgraph " + std::to_string(s));
    budget -= cost;
    if (sg && sg->name()) sum.name = sg->name()->str();
    if (sg && sg->tensors()) sum.tensors = sg->tensors()->size();
    if (sg && sg->operators()) sum.operators = sg->operators()->size();
    out.subgraphs.push_back(sum);
  }
  auto signatures = read_signatures(*model, limits, budget, checkpoint);
  if (!signatures) return signatures.take_error();
  out.signatures = std::move(*signatures);
  auto selected = select_signature(out.signatures, signature);
  if (!selected) return selected.take_error();
  out.signature = *selected;
  if (out.signature >= 0)
    out.subgraph = out.signatures[static_cast<size_t>(out.signature)].subgraph;

  auto buffers = read_buffers(*model, bytes);
  if (!buffers) return buffers.take_error();
  if (const auto* entries = model->metadata()) {
    // A bounded count: each entry is a table of at least 4 bytes anyway.
    for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
      const tflite::Metadata* m = entries->Get(i);
      if (!m || !m->name() || m->buffer() >= buffers->size()) continue;
      out.metadata.push_back({m->name()->str(), (*buffers)[m->buffer()]});
    }
  }

  const ir::Graph budget_owner = [&] {
    ir::Graph owner;
    // Densified sparse constants are the first bytes a conversion creates.
    owner.created().set_limit(limits.resolved(bytes.size()).max_created_bytes);
    return owner;
  }();
  SubgraphReader reader(*model, *buffers, limits, read_options, checkpoint, budget, budget_owner,
                        bytes.size());
  auto graph = reader.read(static_cast<uint32_t>(out.subgraph));
  if (!graph) return graph.take_error();
  out.graph = std::move(*graph);
  out.tensors = reader.converted_tensors();
  out.reached = reader.reached();
  return out;
}

}  // namespace lite2onnx::tflite_reader
