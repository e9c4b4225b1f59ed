// ir::Graph -> onnx::ModelProto (emit.h): names unique across the model,
// inputs, outputs, nodes, value_info, initializers, node subgraphs and the
// metadata; then validation and serialization (serialize.cc), constants'
// bytes written by initializers.cc.
#include "core/onnx/emit.h"

#include "core/ir/names.h"
#include "core/onnx/emit_parts.h"

#include <nlohmann/json.hpp>

#include <onnx/onnx_pb.h>

#include <google/protobuf/arena.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace lite2onnx::onnx_emit {
namespace {

using ir::DataType;
using ir::TensorId;

class Emitter {
 public:
  Emitter(const ir::Graph& g, const EmitOptions& o) : g_(g), opt_(o) {}

  // `output`: an OutputBuffer or an OutputStream.
  template <class Output>
  Result<size_t> run(Output& output) {
    if (auto st = check_graphs(); !st) return st.take_error();
    Scope& main = scopes_.emplace_back();
    main.g = &g_;
    tensor_names_.reserve(g_.tensor_count());
    node_names_.reserve(g_.node_count());
    assign_names(main);
    // The message lives in an arena: a graph of 200,000 nodes is as many
    // NodeProtos and ValueInfoProtos, each several allocations, which the arena
    // makes cheap to create and frees at once.
    google::protobuf::Arena arena;
    onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    model.set_ir_version(opt_.opset >= 14 ? 8 : 7);
    model.set_producer_name("lite2onnx");
    model.set_producer_version(opt_.producer_version);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(opt_.opset);
    for (const auto& [k, v] : opt_.metadata) {
      auto* e = model.add_metadata_props();
      e->set_key(k);
      e->set_value(v);
    }
    if (!g_.state.empty()) {
      auto* e = model.add_metadata_props();
      e->set_key("lite2onnx.state");
      e->set_value(state_json(main));
    }
    main.proto = model.mutable_graph();
    main.proto->set_name(g_.name.empty() ? "main" : g_.name);
    if (auto st = emit_graph(main); !st) return st.take_error();
    // Node subgraphs, breadth-first (emit_graph queues them): each after every
    // name of the graphs enclosing it is taken, so that the names of a graph
    // never depend on the graphs nested in it.
    for (size_t i = 0; i < pending_.size(); ++i)
      if (auto st = emit_subgraph(pending_[i]); !st) return st.take_error();

    if (stop()) return cancelled();
    if (auto st = validate(model, g_); !st) return st.take_error();
    if (stop()) return cancelled();
    return serialize(model, output);
  }

 private:
  // One graph being written: the main graph or a node's subgraph.
  struct Scope {
    const ir::Graph* g = nullptr;
    Scope* parent = nullptr;  // the enclosing graph; null for the main graph
    onnx::GraphProto* proto = nullptr;
    std::vector<std::string> names;  // per tensor: its ONNX name, "" if it has none
    std::vector<uint8_t> written;    // per tensor: its initializer is written
    // For outer-scope references into this graph, built on first use (only
    // models with subgraphs need them): ONNX name -> tensor, and name -> the
    // first constant of that name that had no ONNX name (no node of this
    // graph reads it).
    std::unordered_map<std::string, TensorId> by_name, unread_constants;
    bool indexed = false;
  };
  // A subgraph attribute added to a node, to be filled.
  struct Pending {
    Scope* parent;
    const ir::Node* owner;  // the node owning the subgraph, in the parent graph
    const ir::Subgraph* sub;
    std::string node;  // the ONNX name of the node
    onnx::GraphProto* proto;
  };

  bool stop() { return opt_.checkpoint && opt_.checkpoint->should_stop(); }
  static Error cancelled() { return make_error(ErrorCode::kCancelled, "conversion cancelled"); }

  // Inputs, outputs, nodes (and their initializers and value_info) of one
  // graph; its nodes' subgraphs are queued in pending_.
  Status emit_graph(Scope& s) {
    const ir::Graph& g = *s.g;
    onnx::GraphProto* graph = s.proto;
    for (TensorId t : g.inputs()) {
      if (g.tensor(t).is_const()) continue;
      fill_value_info(s, graph->add_input(), t, true);
    }
    for (TensorId t : g.outputs()) fill_value_info(s, graph->add_output(), t, true);
    // State inputs default to their initial value: an initializer of the
    // input's name (IR version 4 on: an input a caller may leave out).
    if (!s.parent)
      for (const ir::StatePair& p : g.state)
        if (auto st = add_state_initializer(s, p); !st) return st;

    // Per tensor: described (graph input or output, or given a value_info).
    s.written.resize(g.tensor_count(), 0);
    std::vector<uint8_t> described(g.tensor_count(), 0);
    for (TensorId t : g.inputs()) described[static_cast<size_t>(t)] = 1;
    for (TensorId t : g.outputs()) described[static_cast<size_t>(t)] = 1;
    for (const ir::Node& n : g.nodes()) {
      if (stop()) return cancelled();
      onnx::NodeProto* np = graph->add_node();
      // Names are unique by construction; make sure anyway (ONNX Runtime
      // refuses duplicates), deterministically.
      np->set_name(node_names_.take(n.name));
      np->set_op_type(n.op);
      if (!n.domain.empty()) np->set_domain(n.domain);
      // Implicit inputs (values the node's subgraphs read from this graph)
      // are no ONNX inputs, but a constant among them is this graph's
      // initializer all the same.
      const size_t explicit_inputs =
          n.inputs.size() - std::min<size_t>(n.implicit_inputs, n.inputs.size());
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const TensorId t = n.inputs[i];
        if (i < explicit_inputs) np->add_input(g.valid(t) ? s.names[static_cast<size_t>(t)] : "");
        if (g.valid(t) && g.tensor(t).is_const() && !s.written[static_cast<size_t>(t)])
          add_initializer(s, t);
      }
      for (TensorId t : n.outputs) {
        np->add_output(s.names[static_cast<size_t>(t)]);
        if (!described[static_cast<size_t>(t)] && g.tensor(t).has_rank) {
          described[static_cast<size_t>(t)] = 1;
          fill_value_info(s, graph->add_value_info(), t, false);
        }
      }
      for (const auto& a : n.attrs.list()) add_attribute(np, a);
      for (const ir::Subgraph& sub : n.subgraphs) {
        auto* ap = np->add_attribute();
        ap->set_name(sub.attr());
        ap->set_type(onnx::AttributeProto::GRAPH);
        pending_.push_back({&s, &n, &sub, np->name(), ap->mutable_g()});
      }
    }
    // A constant graph output that no node reads as it is (a folded value,
    // or a weight the nodes read permuted) is an initializer of its own.
    for (TensorId t : g.outputs())
      if (g.tensor(t).is_const() && !s.written[static_cast<size_t>(t)]) add_initializer(s, t);
    return ok_status();
  }

  // `p` by value: emit_graph() adds to pending_.
  Status emit_subgraph(Pending p) {
    Scope& s = scopes_.emplace_back();
    s.g = &p.sub->graph();
    s.parent = p.parent;
    s.proto = p.proto;
    s.proto->set_name(s.g->name.empty() ? p.node + "/" + p.sub->attr() : s.g->name);
    if (auto st = assign_names(s, p); !st) return st;
    return emit_graph(s);
  }

  // Within the limits: the ONNX model's initializers (constants written once
  // per layout they are read in, in every graph) against
  // Limits::max_output_bytes, added up before anything is written, and the
  // nesting of subgraphs against Limits::max_subgraph_depth.
  Status check_graphs() const {
    uint64_t bytes = 0;
    if (auto st = add_up(g_, 0, bytes); !st) return st;
    for (const ir::StatePair& p : g_.state) bytes += 4 * uint64_t{p.initial.bytes.size()};
    if (bytes <= opt_.max_output_bytes) return ok_status();
    return make_error(ErrorCode::kResourceLimit,
                      "the ONNX model would hold " + std::to_string(bytes) +
                          " bytes of initializers, more than the limit of " +
                          std::to_string(opt_.max_output_bytes) + " (max_output_bytes)");
  }
  Status add_up(const ir::Graph& g, uint32_t depth, uint64_t& bytes) const {
    std::vector<bool> seen(g.tensor_count(), false);
    for (const ir::Node& n : g.nodes()) {
      for (TensorId t : n.inputs)
        if (g.valid(t) && g.tensor(t).is_const() && !seen[static_cast<size_t>(t)]) {
          seen[static_cast<size_t>(t)] = true;
          bytes += onnx_byte_size(g.tensor(t));
        }
      for (const ir::Subgraph& sub : n.subgraphs) {
        if (depth + 1 > opt_.max_subgraph_depth)
          return make_error(ErrorCode::kResourceLimit,
                            "subgraph '" + sub.attr() + "' of node '" + n.name +
                                "' is at nesting depth " + std::to_string(depth + 1) +
                                ", more than the limit of " +
                                std::to_string(opt_.max_subgraph_depth) + " (max_subgraph_depth)");
        if (auto st = add_up(sub.graph(), depth + 1, bytes); !st) return st;
      }
    }
    return ok_status();
  }

  // ONNX names, unique across the model: the main graph's tensors take
  // theirs first (a model without subgraphs is named as it always was), each
  // subgraph's own tensors theirs when it is written. A subgraph's tensor that
  // is not its own (no input of it, no constant, no node of it writes it) is an
  // outer-scope reference and takes the name it refers to (resolve()).
  static std::string wanted_name(const ir::Graph& g, TensorId t) {
    return g.tensor(t).name.empty() ? "tensor_" + std::to_string(t) : g.tensor(t).name;
  }
  void assign_names(Scope& s) {
    const ir::Graph& g = *s.g;
    s.names.assign(g.tensor_count(), "");
    auto take = [&](TensorId t) {
      std::string& slot = s.names[static_cast<size_t>(t)];
      if (slot.empty()) slot = tensor_names_.take(wanted_name(g, t));
    };
    for (TensorId t : g.inputs()) take(t);
    for (TensorId t : g.outputs()) take(t);
    for (const ir::Node& n : g.nodes()) {
      for (TensorId t : n.inputs)
        if (g.valid(t)) take(t);
      for (TensorId t : n.outputs) take(t);
    }
  }
  Status assign_names(Scope& s, const Pending& p) {
    const ir::Graph& g = *s.g;
    s.names.assign(g.tensor_count(), "");
    // Captured tensors carry the ONNX name of the node input they are bound to.
    for (const ir::Capture& c : p.sub->captures) {
      if (!g.valid(c.inner) || c.slot >= p.owner->inputs.size() ||
          !p.parent->g->valid(p.owner->inputs[c.slot]))
        return make_error(ErrorCode::kInternal, "subgraph '" + p.sub->attr() + "' of node '" +
                                                    p.node + "' has a capture out of range");
      s.names[static_cast<size_t>(c.inner)] =
          p.parent->names[static_cast<size_t>(p.owner->inputs[c.slot])];
    }
    auto take = [&](TensorId t) -> Status {
      std::string& slot = s.names[static_cast<size_t>(t)];
      if (!slot.empty()) return ok_status();
      const bool own =
          g.is_graph_input(t) || g.tensor(t).is_const() || g.producer(t) != ir::kNoNode;
      if (own) {
        slot = tensor_names_.take(wanted_name(g, t));
        return ok_status();
      }
      auto name = resolve(s, t, p);
      if (!name) return name.take_error();
      slot = std::move(*name);
      return ok_status();
    };
    for (TensorId t : g.inputs())
      if (auto st = take(t); !st) return st;
    for (TensorId t : g.outputs())
      if (auto st = take(t); !st) return st;
    for (const ir::Node& n : g.nodes()) {
      for (TensorId t : n.inputs)
        if (g.valid(t))
          if (auto st = take(t); !st) return st;
      for (TensorId t : n.outputs)
        if (auto st = take(t); !st) return st;
    }
    return ok_status();
  }

  // The ONNX name of the outer-scope value a subgraph's tensor refers to: the
  // value of the nearest enclosing graph whose ONNX name is the tensor's name,
  // or else a constant of that graph of that name that no node of the graph
  // reads (it becomes an initializer of that graph).
  Result<std::string> resolve(const Scope& s, TensorId t, const Pending& p) {
    const std::string& name = s.g->tensor(t).name;
    if (!name.empty())
      for (Scope* outer = s.parent; outer; outer = outer->parent) {
        index_names(*outer);
        if (outer->by_name.count(name)) return name;
        auto c = outer->unread_constants.find(name);
        if (c == outer->unread_constants.end()) continue;
        std::string& taken = outer->names[static_cast<size_t>(c->second)];
        if (taken.empty()) {
          taken = tensor_names_.take(name);
          outer->by_name.emplace(taken, c->second);
          add_initializer(*outer, c->second);
        }
        return taken;
      }
    return make_error(ErrorCode::kInternal,
                      "subgraph '" + p.sub->attr() + "' of node '" + p.node + "' reads '" + name +
                          "', which is no input, constant or node output of it and no value of an "
                          "enclosing graph");
  }
  void index_names(Scope& s) {
    if (s.indexed) return;
    s.indexed = true;
    s.by_name.reserve(s.names.size());
    for (size_t t = 0; t < s.names.size(); ++t) {
      const auto id = static_cast<TensorId>(t);
      if (!s.names[t].empty())
        s.by_name.emplace(s.names[t], id);
      else if (s.g->tensor(id).is_const())
        s.unread_constants.emplace(s.g->tensor(id).name, id);
    }
  }

  void fill_value_info(const Scope& s, onnx::ValueInfoProto* vi, TensorId t, bool interface) {
    const ir::Tensor& x = s.g->tensor(t);
    const std::string& name = s.names[static_cast<size_t>(t)];
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(ir::onnx_type_code(x.dtype));
    if (!x.has_rank) return;
    auto* shape = tt->mutable_shape();
    ir::Shape sh = x.onnx_shape();
    for (size_t i = 0; i < sh.size(); ++i) {
      auto* d = shape->add_dim();
      if (sh[i] >= 0) {
        d->set_dim_value(sh[i]);
      } else if (interface) {
        d->set_dim_param(name + "_dim" + std::to_string(i));
      }
    }
  }

  // The main graph's large constants are spliced into the output bytes by
  // serialize(); a subgraph's constants are written into the message.
  void add_initializer(Scope& s, TensorId t) {
    s.written.resize(s.g->tensor_count(), 0);
    s.written[static_cast<size_t>(t)] = 1;
    const ir::Tensor& x = s.g->tensor(t);
    onnx::TensorProto* tp = s.proto->add_initializer();
    tp->set_name(s.names[static_cast<size_t>(t)]);
    tp->set_data_type(ir::onnx_type_code(x.dtype));
    for (int64_t d : x.onnx_shape()) tp->add_dims(d);
    size_t size = onnx_byte_size(x);
    if (size >= kSpliceBytes && !s.parent) {
      // Validated with a placeholder of one element, an int64 one whole;
      // serialize() writes the real bytes in place (emit_parts.h kSpliceBytes
      // says why that validates what the whole would).
      spliced_.push_back(t);
      if (x.dtype != DataType::kInt64) {
        tp->set_raw_data(std::string(ir::element_size(x.dtype), '\0'));
        return;
      }
    }
    std::string* raw = tp->mutable_raw_data();
    raw->resize(size);
    if (size) write_constant(x, reinterpret_cast<std::byte*>(raw->data()));
  }

  // The initial value of a state input, in the input's ONNX type and layout.
  Status add_state_initializer(Scope& s, const ir::StatePair& p) {
    const ir::Graph& g = *s.g;
    if (!g.valid(p.input) || !g.is_graph_input(p.input))
      return make_error(ErrorCode::kInternal, "a state pair names no graph input");
    ir::Tensor x = g.tensor(p.input);
    x.emit_shape.reset();
    auto data = state_initial_data(x, p);
    if (!data) return data.take_error();
    x.data = std::move(*data);
    onnx::TensorProto* tp = s.proto->add_initializer();
    tp->set_name(s.names[static_cast<size_t>(p.input)]);
    tp->set_data_type(ir::onnx_type_code(x.dtype));
    for (int64_t dim : x.onnx_shape()) tp->add_dims(dim);
    std::string* raw = tp->mutable_raw_data();
    raw->resize(onnx_byte_size(x));
    if (!raw->empty()) write_constant(x, reinterpret_cast<std::byte*>(raw->data()));
    return ok_status();
  }

  // lite2onnx.state: the state pairs under their ONNX names, in graph-input
  // order (README, "Model state").
  std::string state_json(const Scope& main) const {
    std::unordered_map<TensorId, const ir::StatePair*> by_input;
    for (const ir::StatePair& p : g_.state) by_input.emplace(p.input, &p);
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (TensorId t : g_.inputs()) {
      auto it = by_input.find(t);
      if (it == by_input.end()) continue;
      const ir::StatePair& p = *it->second;
      j.push_back({{"input", main.names[static_cast<size_t>(p.input)]},
                   {"output", main.names[static_cast<size_t>(p.output)]},
                   {"kind", p.kind},
                   {"tflite", p.tflite}});
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }

  static void add_attribute(onnx::NodeProto* np, const ir::Attr& a) {
    auto* ap = np->add_attribute();
    ap->set_name(a.name);
    if (auto* i = std::get_if<int64_t>(&a.value)) {
      ap->set_type(onnx::AttributeProto::INT);
      ap->set_i(*i);
    } else if (auto* f = std::get_if<float>(&a.value)) {
      ap->set_type(onnx::AttributeProto::FLOAT);
      ap->set_f(*f);
    } else if (auto* s = std::get_if<std::string>(&a.value)) {
      ap->set_type(onnx::AttributeProto::STRING);
      ap->set_s(*s);
    } else if (auto* is = std::get_if<std::vector<int64_t>>(&a.value)) {
      ap->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : *is) ap->add_ints(v);
    } else if (auto* fs = std::get_if<std::vector<float>>(&a.value)) {
      ap->set_type(onnx::AttributeProto::FLOATS);
      for (float v : *fs) ap->add_floats(v);
    } else if (auto* ss = std::get_if<std::vector<std::string>>(&a.value)) {
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& v : *ss) ap->add_strings(v);
    }
  }

  // The model's bytes, with the main graph's large constants spliced in.
  template <class Output>
  Result<size_t> serialize(onnx::ModelProto& model, Output& output) {
    std::vector<SplicedConstant> spliced;
    for (TensorId t : spliced_)
      spliced.push_back({scopes_.front().names[static_cast<size_t>(t)], &g_.tensor(t)});
    return serialize_model(model, spliced, opt_, output);
  }

  const ir::Graph& g_;
  const EmitOptions& opt_;
  // The main graph first; a deque, so that scopes stay where they are.
  std::deque<Scope> scopes_;
  std::vector<Pending> pending_;
  ir::UniqueNames tensor_names_{"__", 1};
  ir::UniqueNames node_names_{"__", 1};
  std::vector<TensorId> spliced_;  // main-graph constants, written by serialize()
};

}  // namespace

Result<size_t> emit(const ir::Graph& g, const EmitOptions& options, const OutputBuffer& output) {
  return Emitter(g, options).run(output);
}

Result<size_t> emit(const ir::Graph& g, const EmitOptions& options, OutputStream& output) {
  return Emitter(g, options).run(output);
}

Result<std::string> emit(const ir::Graph& g, const EmitOptions& options) {
  std::string bytes;
  auto written = emit(g, options, string_buffer(bytes));
  if (!written) return written.take_error();
  return bytes;
}

}  // namespace lite2onnx::onnx_emit
