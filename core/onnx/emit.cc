#include "core/onnx/emit.h"

#include "core/ir/names.h"

#include <nlohmann/json.hpp>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <sys/mman.h>

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

// Constants at least this big are spliced into the output bytes directly.
constexpr size_t kSpliceBytes = 4096;

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Copies one element, widening float16 to float32 when the types differ.
inline void copy_element(const std::byte* src, std::byte* dst, size_t src_size, size_t dst_size,
                         bool widen_half) {
  if (widen_half) {
    uint16_t h;
    std::memcpy(&h, src, 2);
    float f = half_to_float(h);
    std::memcpy(dst, &f, 4);
  } else {
    std::memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
  }
}

// The layouts weights take (OHWI -> OIHW, 1HWC -> C1HW, OHWI -> IOHW, NHWC ->
// NCHW) all swap two blocks of axes after a common prefix: [P..., A..., B...] ->
// [P..., B..., A...]. That is a batch of 2-D transposes of [A, B] matrices,
// done here in cache-sized tiles. Returns false for other permutations.
bool write_block_transpose(const ir::Tensor& t, const ir::Perm& p, std::byte* dst) {
  const size_t rank = p.size();
  size_t k = 0;
  while (k < rank && p[k] == static_cast<int>(k)) ++k;
  if (k == rank) return false;
  const size_t m = static_cast<size_t>(p[k]);  // B starts at axis m
  for (size_t i = 0; i < rank - m; ++i)
    if (p[k + i] != static_cast<int>(m + i)) return false;
  for (size_t i = 0; i < m - k; ++i)
    if (p[k + (rank - m) + i] != static_cast<int>(k + i)) return false;
  int64_t batch = 1, rows = 1, cols = 1;
  for (size_t a = 0; a < k; ++a) batch *= t.shape[a];
  for (size_t a = k; a < m; ++a) rows *= t.shape[a];
  for (size_t a = m; a < rank; ++a) cols *= t.shape[a];

  const ir::ConstData& c = *t.data;
  const size_t src_es = ir::element_size(c.stored_type);
  const size_t dst_es = ir::element_size(t.dtype);
  const bool widen = c.stored_type == DataType::kFloat16 && t.dtype == DataType::kFloat32;
  const std::byte* src = c.bytes.data();
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b) {
    const std::byte* s = src + static_cast<size_t>(b * rows * cols) * src_es;
    std::byte* d = dst + static_cast<size_t>(b * rows * cols) * dst_es;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        // dst[col][row] = src[row][col]
        for (int64_t col = c0; col < c1; ++col) {
          std::byte* drow = d + static_cast<size_t>(col * rows) * dst_es;
          if (!widen && src_es == 4) {
            for (int64_t row = r0; row < r1; ++row)
              std::memcpy(drow + row * 4, s + static_cast<size_t>(row * cols + col) * 4, 4);
          } else {
            for (int64_t row = r0; row < r1; ++row)
              copy_element(s + static_cast<size_t>(row * cols + col) * src_es,
                           drow + static_cast<size_t>(row) * dst_es, src_es, dst_es, widen);
          }
        }
      }
    }
  }
  return true;
}

// Large outputs are touched once, page by page: ask for transparent huge pages
// so the kernel maps them 2 MiB at a time (a fraction of the page faults).
void advise_huge_pages(char* data, size_t size) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (size < 4 * kHuge) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)size;
#endif
}

}  // namespace

size_t onnx_byte_size(const ir::Tensor& t) {
  auto n = ir::element_count(t.shape);
  return n ? static_cast<size_t>(*n) * ir::element_size(t.dtype) : 0;
}

void write_constant(const ir::Tensor& t, std::byte* dst) {
  const ir::ConstData& c = *t.data;
  const size_t src_es = ir::element_size(c.stored_type);
  const size_t dst_es = ir::element_size(t.dtype);
  const bool widen = c.stored_type == DataType::kFloat16 && t.dtype == DataType::kFloat32;
  const size_t count = static_cast<size_t>(ir::element_count(t.shape).value_or(0));
  const std::byte* src = c.bytes.data();

  // Axes of size 1 never change the memory order; only the rest matter.
  const size_t rank = t.shape.size();
  ir::Perm p = t.layout.empty() ? ir::identity_perm(rank) : t.layout;
  std::vector<int> moving;
  for (int a : p)
    if (t.shape[static_cast<size_t>(a)] != 1) moving.push_back(a);
  bool in_order = true;
  for (size_t i = 1; i < moving.size(); ++i) in_order &= moving[i - 1] < moving[i];

  if (in_order) {
    if (!widen && src_es == dst_es) {
      std::memcpy(dst, src, count * dst_es);
    } else {
      for (size_t i = 0; i < count; ++i)
        copy_element(src + i * src_es, dst + i * dst_es, src_es, dst_es, widen);
    }
    return;
  }
  if (write_block_transpose(t, p, dst)) return;
  // General permutation: walk the output in order, tracking the source offset.
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t a = rank - 1; a > 0; --a) src_stride[a - 1] = src_stride[a] * t.shape[a];
  std::vector<int64_t> out_dim(rank), out_stride(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dim[i] = t.shape[static_cast<size_t>(p[i])];
    out_stride[i] = src_stride[static_cast<size_t>(p[i])];
  }
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = out_dim[rank - 1];
  const int64_t inner_stride = out_stride[rank - 1];
  int64_t base = 0;
  std::byte* out = dst;
  for (size_t done = 0; done < count; done += static_cast<size_t>(inner)) {
    for (int64_t k = 0; k < inner; ++k, out += dst_es)
      copy_element(src + (base + k * inner_stride) * static_cast<int64_t>(src_es), out, src_es,
                   dst_es, widen);
    // Advance the odometer over the outer axes.
    for (size_t a = rank - 1; a-- > 0;) {
      base += out_stride[a];
      if (++idx[a] < out_dim[a]) break;
      base -= out_stride[a] * out_dim[a];
      idx[a] = 0;
    }
  }
}

namespace {

class Emitter {
 public:
  Emitter(const ir::Graph& g, const EmitOptions& o) : g_(g), opt_(o) {}

  Result<size_t> run(const OutputBuffer& output) {
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
    if (auto st = validate(model); !st) return st.take_error();
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
      // Validated with a one-byte raw_data (the checker does not read the bytes);
      // serialize() writes the real bytes in place.
      tp->set_raw_data(std::string(1, '\0'));
      spliced_.push_back(t);
      return;
    }
    std::string* raw = tp->mutable_raw_data();
    raw->resize(size);
    if (size) write_constant(x, reinterpret_cast<std::byte*>(raw->data()));
  }

  // The initial value of a state input, in the input's ONNX type and layout:
  // TFLite's bytes, or (an integer state at a float interface, as
  // --quantization dequantize makes it) their dequantized values.
  Status add_state_initializer(Scope& s, const ir::StatePair& p) {
    const ir::Graph& g = *s.g;
    if (!g.valid(p.input) || !g.is_graph_input(p.input))
      return make_error(ErrorCode::kInternal, "a state pair names no graph input");
    ir::Tensor x = g.tensor(p.input);
    x.emit_shape.reset();
    const ir::ConstData& d = p.initial;
    const auto count = ir::element_count(x.shape);
    const size_t from = ir::element_size(d.stored_type);
    if (!count || !from || d.bytes.size() != static_cast<size_t>(*count) * from)
      return make_error(ErrorCode::kInternal,
                        "the initial value of state '" + x.name + "' does not fit its shape");
    if (d.stored_type == x.dtype ||
        (d.stored_type == DataType::kFloat16 && x.dtype == DataType::kFloat32)) {
      x.data = d;
    } else if (x.dtype == DataType::kFloat32 && p.initial_quant &&
               p.initial_quant->scale.size() == 1) {
      const float scale = p.initial_quant->scale[0];
      const int64_t zero = p.initial_quant->zero_point.empty() ? 0 : p.initial_quant->zero_point[0];
      std::vector<std::byte> bytes(static_cast<size_t>(*count) * 4);
      for (size_t i = 0; i < static_cast<size_t>(*count); ++i) {
        int64_t q = 0;
        const std::byte* at = d.bytes.data() + i * from;
        switch (d.stored_type) {
          case DataType::kInt8:
            q = static_cast<int8_t>(at[0]);
            break;
          case DataType::kUInt8:
            q = static_cast<uint8_t>(at[0]);
            break;
          case DataType::kInt16: {
            int16_t v;
            std::memcpy(&v, at, 2);
            q = v;
            break;
          }
          default: {
            int32_t v;
            std::memcpy(&v, at, 4);
            q = v;
          }
        }
        const float f = static_cast<float>(q - zero) * scale;
        std::memcpy(bytes.data() + i * 4, &f, 4);
      }
      x.data = ir::ConstData::owned(std::move(bytes), DataType::kFloat32);
    } else {
      return make_error(ErrorCode::kInternal, "the initial value of state '" + x.name + "' (" +
                                                  ir::to_string(d.stored_type) +
                                                  ") cannot be written as " +
                                                  ir::to_string(x.dtype));
    }
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

  // ONNX's own passes allocate by the model's declared shapes; a failed
  // allocation there means shapes beyond what any memory holds.
  static Error out_of_memory(const std::string& who) {
    return make_error(ErrorCode::kResourceLimit,
                      who + " ran out of memory on the model's declared shapes");
  }

  Status validate(onnx::ModelProto& model) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::bad_alloc&) {
      return out_of_memory("the ONNX checker");
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInternal,
                        std::string("the ONNX checker rejected the converted model: ") + e.what());
    }
    try {
      onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict_mode=*/1);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::bad_alloc&) {
      return out_of_memory("ONNX shape inference");
    } catch (const std::exception& e) {
      // A node traced to a TFLite op whose declared output shape contradicts
      // its inputs: the model's shapes are inconsistent, not our lowering.
      std::string what = e.what();
      size_t at = what.find("node name: ");
      if (at != std::string::npos) {
        size_t from = at + 11, to = what.find(')', from);
        std::string node =
            what.substr(from, to == std::string::npos ? std::string::npos : to - from);
        for (const ir::Node& n : g_.nodes()) {
          if (n.name != node || n.source_op < 0) continue;
          std::string outs;
          for (TensorId t : n.outputs)
            outs += (outs.empty() ? "'" : ", '") + g_.tensor(t).name + "' " +
                    ir::to_string(g_.tensor(t).shape);
          Error err =
              make_error(ErrorCode::kInvalidModel, "op " + std::to_string(n.source_op) + " (" +
                                                       node + "): the declared shape of " + outs +
                                                       " contradicts its inputs: " + what);
          err.op_index = n.source_op;
          return err;
        }
      }
      return make_error(
          ErrorCode::kInternal,
          std::string("ONNX shape inference disagrees with the converted model: ") + what);
    }
    return ok_status();
  }

  // Protobuf accepts a message's fields in any order and merges repeated
  // fields, so the model is written as: everything but the graph, then the
  // graph without the spliced initializers, then each of those with its bytes
  // written directly into the output. `model` is allocated on an arena (its
  // graph is taken out without a copy).
  Result<size_t> serialize(onnx::ModelProto& model, const OutputBuffer& output) {
    using google::protobuf::io::CodedOutputStream;
    constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
    constexpr uint32_t kLen = 2;  // wire type: length-delimited

    std::set<std::string> spliced_names;
    for (TensorId t : spliced_) spliced_names.insert(scopes_.front().names[static_cast<size_t>(t)]);
    // Still owned by the arena.
    onnx::GraphProto& graph = *model.unsafe_arena_release_graph();

    // Pull the spliced initializers out, keeping the order of both kinds.
    std::vector<std::string> headers;
    {
      auto* inits = graph.mutable_initializer();
      int kept = 0;
      for (int i = 0; i < inits->size(); ++i) {
        onnx::TensorProto& tp = *inits->Mutable(i);
        if (spliced_names.count(tp.name())) {
          tp.clear_raw_data();
          headers.push_back(tp.SerializeAsString());
        } else {
          if (i != kept) inits->SwapElements(i, kept);
          ++kept;
        }
      }
      inits->DeleteSubrange(kept, inits->size() - kept);
    }
    std::string head = model.SerializeAsString();
    std::string graph_bytes = graph.SerializeAsString();

    auto varint_size = [](uint64_t v) { return CodedOutputStream::VarintSize64(v); };
    std::vector<size_t> entry_len;
    size_t graph_len = graph_bytes.size();
    for (size_t i = 0; i < spliced_.size(); ++i) {
      size_t raw = onnx_byte_size(g_.tensor(spliced_[i]));
      size_t len = headers[i].size() + 1 + varint_size(raw) + raw;
      entry_len.push_back(len);
      graph_len += 1 + varint_size(len) + len;
    }
    size_t total = head.size() + 1 + varint_size(graph_len) + graph_len;
    if (total >= (size_t{1} << 31))
      return make_error(ErrorCode::kResourceLimit, "the ONNX model would be " +
                                                       std::to_string(total) +
                                                       " bytes; protobuf messages stop at 2 GiB");
    if (total > opt_.max_output_bytes)
      return make_error(ErrorCode::kResourceLimit,
                        "the ONNX model would be " + std::to_string(total) +
                            " bytes, more than the limit of " +
                            std::to_string(opt_.max_output_bytes) + " (max_output_bytes)");

    std::byte* out = output(total);
    if (out == nullptr)
      return make_error(ErrorCode::kResourceLimit,
                        "no room for the ONNX model of " + std::to_string(total) + " bytes");
    auto* p = reinterpret_cast<uint8_t*>(out);
    auto put = [&](const std::string& s) {
      std::memcpy(p, s.data(), s.size());
      p += s.size();
    };
    auto tag = [&](int field) { p = CodedOutputStream::WriteTagToArray((field << 3) | kLen, p); };
    auto len = [&](uint64_t v) { p = CodedOutputStream::WriteVarint64ToArray(v, p); };
    put(head);
    tag(kModelGraph);
    len(graph_len);
    put(graph_bytes);
    for (size_t i = 0; i < spliced_.size(); ++i) {
      if (stop()) return cancelled();
      const ir::Tensor& x = g_.tensor(spliced_[i]);
      size_t raw = onnx_byte_size(x);
      tag(kGraphInitializer);
      len(entry_len[i]);
      put(headers[i]);
      tag(kTensorRawData);
      len(raw);
      write_constant(x, reinterpret_cast<std::byte*>(p));
      p += raw;
    }
    if (p != reinterpret_cast<uint8_t*>(out) + total)
      return make_error(ErrorCode::kInternal, "ONNX serialization size mismatch");
    return total;
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

Result<std::string> emit(const ir::Graph& g, const EmitOptions& options) {
  std::string bytes;
  auto written = emit(g, options, string_buffer(bytes));
  if (!written) return written.take_error();
  return bytes;
}

OutputBuffer string_buffer(std::string& bytes) {
  return [&bytes](size_t size) {
    bytes.reserve(size);
    advise_huge_pages(bytes.data(), size);
    bytes.resize(size);
    return reinterpret_cast<std::byte*>(bytes.data());
  };
}

}  // namespace lite2onnx::onnx_emit
