// The converter's intermediate representation: tensors, nodes and a graph.
// A graph starts with TFLite-dialect nodes (from the reader), and op converters
// lower it to ONNX-dialect nodes, which the emitter serializes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ir/types.h"

namespace lite2onnx::ir {

using TensorId = int32_t;
inline constexpr TensorId kNoTensor = -1;

// Bytes of a constant: a view into the caller's model buffer (no copy), or
// bytes the converter made, kept alive by `owner`.
struct ConstData {
  std::span<const std::byte> bytes;
  DataType stored_type = DataType::kFloat32;  // may differ from Tensor::dtype (f16 -> f32)
  std::shared_ptr<const std::vector<std::byte>> owner;

  static ConstData owned(std::vector<std::byte> data, DataType type);
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

// The bytes of `values` in memory order: the payload of an owned constant.
template <class T>
std::vector<std::byte> to_bytes(std::span<const T> values) {
  std::vector<std::byte> bytes(values.size_bytes());
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}
template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  return to_bytes(std::span<const T>(values));
}

struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = 0;  // quantized_dimension, for per-axis scales
  // Blockwise (TFLite's BlockwiseQuantization, LLM weights): one scale and
  // zero point per run of `block_size` elements along the last axis, in the
  // order of the tensor whose last dimension is divided by it. The reader
  // makes them; passes::fold_blockwise rewrites every such constant before
  // anything else reads a QuantParams (0: not blockwise).
  int64_t block_size = 0;
  // A TOCO-era uint8 hybrid weight read as int8 (passes::plan_qdq): LiteRT.js
  // runs its op in TFLite's builtin hybrid kernel, not XNNPACK's.
  bool uint8_hybrid_weight = false;
  // The output of a DEQUANTIZE of a constant, folded into it (plan_qdq): the
  // ops reading it read TFLite's float values (weight-only quantization),
  // not the integers as a hybrid kernel does.
  bool dequantized_by_op = false;
};

// The K axis of a [N, K] tensor that a Reshape flattened from a permuted
// tensor: K holds `dims` (TFLite order) in the order `perm`. A FULLY_CONNECTED
// reading it permutes its weight columns to match (no Transpose needed).
struct FlattenedAxes {
  Shape dims;
  Perm perm;
};

struct Tensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;  // TFLite axis order; -1 marks a dynamic dimension
  bool has_rank = true;
  std::optional<QuantParams> quant;
  // QDQ: the tensor is float32 in the converted graph but holds TFLite integers
  // of this type (dequantized by `quant`); materialize_qdq writes the
  // QuantizeLinear/DequantizeLinear nodes around it. A constant keeps its
  // integer bytes (data->stored_type is this type).
  std::optional<DataType> quantized_type;
  std::optional<ConstData> data;  // set for constants
  Perm layout;                    // ONNX order is permute_shape(shape, layout)
  bool is_variable = false;
  bool was_sparse = false;  // stored sparse in the file; the reader made it dense
  std::optional<FlattenedAxes> flattened;
  // ONNX dims when they are not permute_shape(shape, layout): a constant
  // permuted in its own axes and then viewed with fewer of them.
  std::optional<Shape> emit_shape;

  bool is_const() const { return data.has_value(); }
  size_t rank() const { return shape.size(); }
  // The axes after the first, as a flatten of this tensor in its ONNX layout
  // orders them (the layout must keep axis 0 first).
  FlattenedAxes flattened_axes() const {
    FlattenedAxes f;
    f.dims.assign(shape.begin() + 1, shape.end());
    for (size_t i = 1; i < layout.size(); ++i) f.perm.push_back(layout[i] - 1);
    return f;
  }
  Shape onnx_shape() const { return emit_shape ? *emit_shape : permute_shape(shape, layout); }
};

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>>;

struct Attr {
  std::string name;
  AttrValue value;
};

// Ordered (so output stays deterministic) name -> value list.
class Attributes {
 public:
  void set(const std::string& name, AttrValue value);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t get_int(const std::string& name, int64_t fallback = 0) const;
  float get_float(const std::string& name, float fallback = 0.f) const;
  std::string get_string(const std::string& name, const std::string& fallback = "") const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<float> get_floats(const std::string& name) const;
  const std::vector<Attr>& list() const { return attrs_; }

 private:
  const Attr* find(const std::string& name) const;
  std::vector<Attr> attrs_;
};

enum class Dialect : uint8_t { kTflite, kOnnx };

class Graph;

// A graph a node owns (the body of a loop, a branch of a conditional), under
// the attribute name it has in ONNX; copied with the node. `captures` binds
// tensors of the subgraph to values of the enclosing graph (ONNX outer-scope
// references): tensor captures[i].inner reads the node's input slot
// captures[i].slot, one of the node's implicit inputs (NodeInfo::implicit_inputs).
struct Capture {
  TensorId inner = kNoTensor;
  uint32_t slot = 0;
};
class Subgraph {
 public:
  Subgraph(std::string attr, Graph graph);
  Subgraph(const Subgraph& other);
  Subgraph& operator=(const Subgraph& other);
  Subgraph(Subgraph&&) noexcept;
  Subgraph& operator=(Subgraph&&) noexcept;
  ~Subgraph();

  const std::string& attr() const { return attr_; }
  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  std::vector<Capture> captures;

 private:
  std::string attr_;
  std::unique_ptr<Graph> graph_;
};

// Why the converter added a node with no TFLite counterpart (a Transpose where
// two layouts meet, a Reshape, ...): reported in Diagnostics::inserted.
struct Insertion {
  std::string tensor;  // the tensor it acts on
  std::string reason;
};

// Everything about a node but its edges: what a pass may change in place
// (Graph::info()). Edges change only through the Graph, which keeps its index
// of producers and readers in step.
struct NodeInfo {
  Dialect dialect = Dialect::kTflite;
  int builtin = -1;    // TFLite builtin code (TFLite dialect; 32 = CUSTOM)
  std::string op;      // TFLite builtin name / custom code, or ONNX op_type
  std::string domain;  // ONNX domain ("" is the default domain)
  std::string name;    // traceable: Conv2D_3, Conv2D_3/Relu6
  int source_op = -1;  // index of the TFLite operator this node comes from
  // The TFLite subgraph of source_op: -1 for the subgraph converted, else the
  // index of the subgraph a control-flow op called (its nodes were copied here).
  int source_subgraph = -1;
  Attributes attrs;
  std::vector<Subgraph> subgraphs;
  // The last `implicit_inputs` inputs are values of this graph that the
  // node's subgraphs read (Subgraph::captures), not ONNX inputs of the node:
  // listing them keeps every pass aware that the node reads them.
  uint32_t implicit_inputs = 0;
  std::optional<Insertion> inserted;
};

// A node: its info and its edges. A node being built sets its inputs and
// outputs freely; once added to a graph they change through the graph only.
struct Node : NodeInfo {
  std::vector<TensorId> inputs;  // kNoTensor marks an omitted optional input
  std::vector<TensorId> outputs;
};

// State kept between invocations (docs/architecture.md, "Model state"): a
// variable tensor a stateful op updates in place, or a resource variable. A
// graph input carrying the value before the invocation, backed by an
// initializer of the same name holding `initial` (so a caller feeding nothing
// gets TFLite's first invocation), and a graph output with the value after
// it, of the same type, shape and layout. passes::expose_state makes them;
// the emitter writes the initializer, converted to the input's ONNX type and
// layout (integer bytes dequantized by `initial_quant` where the interface is
// float), and lists the pairs in the metadata entry lite2onnx.state.
struct StatePair {
  TensorId input = kNoTensor, output = kNoTensor;
  std::string kind;    // "resource" or "variable_tensor"
  std::string tflite;  // the TFLite tensor's or the resource's name
  ConstData initial;   // TFLite type, TFLite axis order
  std::optional<QuantParams> initial_quant;
};

// A subgraph that is read but not converted (only the primary one is).
struct SubgraphSummary {
  int index = 0;
  std::string name;
  size_t tensors = 0;
  size_t operators = 0;
};

// The graph's inputs or outputs: an ordered list of tensors that also answers
// "is this tensor in the list?" in constant time (models may have hundreds of
// thousands of outputs, and passes ask for every tensor they touch).
class TensorList {
 public:
  using value_type = TensorId;
  using const_iterator = std::vector<TensorId>::const_iterator;
  using iterator = const_iterator;

  TensorList() = default;
  TensorList(std::initializer_list<TensorId> ids) { assign(ids.begin(), ids.end()); }
  template <class It>
  void assign(It first, It last) {
    ids_.clear();
    count_.clear();
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(TensorId id);
  bool contains(TensorId id) const {
    return id >= 0 && static_cast<size_t>(id) < count_.size() && count_[static_cast<size_t>(id)];
  }

  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  TensorId operator[](size_t i) const { return ids_[i]; }
  const_iterator begin() const { return ids_.begin(); }
  const_iterator end() const { return ids_.end(); }
  const std::vector<TensorId>& ids() const { return ids_; }

 private:
  std::vector<TensorId> ids_;
  std::vector<uint32_t> count_;  // per tensor id: how often it is listed
};

// Bytes of constant data one conversion creates (folded values, lowering
// matrices, converted copies of weights), against Limits::max_created_bytes:
// a small model must not make the converter allocate gigabytes. Passes charge
// what they create through Graph::own(); a charge past the limit is recorded
// and the pass that made it stops at its next check (check_created_bytes()).
class CreatedBytes {
 public:
  void set_limit(uint64_t limit) { limit_ = limit; }
  uint64_t used() const { return used_; }
  uint64_t limit() const { return limit_; }
  // Whether `bytes` more still fit (a check before a large allocation).
  bool fits(uint64_t bytes) const { return bytes <= limit_ - std::min(used_, limit_); }
  // Counts `bytes`; the first charge that passes the limit records `by`.
  void charge(uint64_t bytes, std::string_view by);
  // Before the work that would create `bytes`: whether they still fit. When
  // they do not, the overrun is recorded as charge() records it, so the caller
  // stops before doing the work and check_created_bytes() names `by`. (The
  // bytes are charged when they are made, through Graph::own().)
  bool admit(uint64_t bytes, std::string_view by);
  bool exceeded() const { return used_ > limit_; }
  const std::string& exceeded_by() const { return exceeded_by_; }

 private:
  uint64_t used_ = 0;
  uint64_t limit_ = UINT64_MAX;
  std::string exceeded_by_;
};

using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

// One input slot reading a tensor.
struct Use {
  NodeId node = kNoNode;
  uint32_t slot = 0;
};

// The graph, and the only way passes edit it. Nodes keep stable ids and an
// order (topological once sorted); the graph keeps, for every tensor, the node
// that writes it and the (node, slot) pairs that read it, updated by every
// edit, so passes never build their own index and every edit costs only its
// neighbourhood:
//   add_node, add_node_before/after, remove_node       O(edges of the node)
//   set_input, set_output                              O(readers of the tensors)
//   replace_uses                                       O(readers moved)
//   producer, uses, node, info                         O(1)
//   apply(GraphEdit)                                   O(nodes + edges), any number of edits
// Removed nodes leave a hole until compact(), which renumbers the nodes in
// order and lists every tensor's readers in node order (the pipeline runs it
// between passes, so ids are dense and readers ordered when a pass starts);
// it does nothing when no edit since the last one moved an id or a reader
// (adding nodes at the end keeps that order).
// A pass that rewrites every node (lowering, layout application, the QDQ
// writer) collects its edits in a GraphEdit while it reads the graph, and
// installs them in one apply().
class GraphEdit;
class Graph {
 public:
  std::string name;
  // The main graph's state pairs (their tensors are graph inputs and outputs).
  std::vector<StatePair> state;

  // Constants the conversion created: charged through own(). The graphs of
  // one conversion (a node's subgraphs, and their copies) share one budget.
  CreatedBytes& created() { return *created_; }
  const CreatedBytes& created() const { return *created_; }
  void share_created(const Graph& with) { created_ = with.created_; }

  // ---- tensors: ids are stable, tensors are never removed ----
  TensorId add_tensor(Tensor t);
  Tensor& tensor(TensorId id) { return tensors_[static_cast<size_t>(id)]; }
  const Tensor& tensor(TensorId id) const { return tensors_[static_cast<size_t>(id)]; }
  bool valid(TensorId id) const { return id >= 0 && static_cast<size_t>(id) < tensors_.size(); }
  size_t tensor_count() const { return tensors_.size(); }
  // Constant data made by the converter, charged to `created` (`by` names what
  // made it, for the error).
  ConstData own(std::vector<std::byte> data, DataType type, std::string_view by);

  // ---- the interface ----
  const TensorList& inputs() const { return inputs_; }
  const TensorList& outputs() const { return outputs_; }
  void set_inputs(const std::vector<TensorId>& ids) { inputs_.assign(ids.begin(), ids.end()); }
  void set_outputs(const std::vector<TensorId>& ids) { outputs_.assign(ids.begin(), ids.end()); }
  void add_input(TensorId id) { inputs_.push_back(id); }
  void add_output(TensorId id) { outputs_.push_back(id); }
  bool is_graph_input(TensorId id) const { return inputs_.contains(id); }
  bool is_graph_output(TensorId id) const { return outputs_.contains(id); }

  // ---- nodes ----
  // Adds a node at the end of the order, or before/after node `at`.
  NodeId add_node(Node n);
  NodeId add_node_before(NodeId at, Node n);
  NodeId add_node_after(NodeId at, Node n);
  void remove_node(NodeId id);
  bool alive(NodeId id) const {
    return id >= 0 && static_cast<size_t>(id) < nodes_.size() && alive_[static_cast<size_t>(id)];
  }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  // The node's info, to edit in place (its edges stay as they are).
  NodeInfo& info(NodeId id) { return nodes_[static_cast<size_t>(id)]; }
  size_t node_count() const { return live_; }
  // One past the largest node id: the size of a per-node array.
  size_t node_id_bound() const { return nodes_.size(); }
  // Node ids in order.
  std::vector<NodeId> order() const;
  NodeId first() const { return head_; }
  NodeId last() const { return tail_; }
  NodeId next(NodeId id) const { return next_[static_cast<size_t>(id)]; }
  // Every live node in order, read-only: for (const Node& n : g.nodes()).
  class NodeRange;
  NodeRange nodes() const;

  // ---- edges ----
  void set_input(NodeId id, size_t slot, TensorId t);
  void set_inputs(NodeId id, std::vector<TensorId> inputs);
  void set_output(NodeId id, size_t slot, TensorId t);
  // Gives the node one more output, `t`, after its others.
  void append_output(NodeId id, TensorId t);
  // Every node reading `from` reads `to` instead (graph outputs stay).
  void replace_uses(TensorId from, TensorId to);

  // ---- the index ----
  // The node writing `t`, or kNoNode (graph input, constant, or unwritten).
  NodeId producer(TensorId t) const {
    return valid(t) ? producer_[static_cast<size_t>(t)] : kNoNode;
  }
  // The (node, slot) pairs reading `t`, in the order they were linked.
  std::span<const Use> uses(TensorId t) const {
    if (!valid(t)) return {};
    return uses_[static_cast<size_t>(t)];
  }
  // Nodes reading `t`, each once, in the order of uses().
  std::vector<NodeId> readers(TensorId t) const;
  // Nodes reading `t` plus one if it is a graph output.
  size_t use_count(TensorId t) const { return uses(t).size() + (is_graph_output(t) ? 1 : 0); }

  // ---- wholesale ----
  // Renumbers the live nodes 0.. in order and rebuilds the index in node order.
  void compact();
  // Puts the live nodes in this order (every live id once, e.g. a topological sort).
  void reorder(const std::vector<NodeId>& order);
  // Installs a batch of edits made against this graph (GraphEdit): one walk
  // over the nodes, then the index rebuilt in the new order, as compact()
  // leaves it. O(nodes + edges), however many edits the batch holds.
  void apply(GraphEdit edit);

 private:
  // Moves every node out, in order, leaving the graph without nodes; and
  // installs a node list (ids are positions). compact() and apply() use them.
  std::vector<Node> take_nodes();
  void set_nodes(std::vector<Node> nodes);
  void clear_nodes();
  void link(NodeId id);
  void unlink(NodeId id);
  void add_use(TensorId t, NodeId id, uint32_t slot);
  void remove_use(TensorId t, NodeId id, uint32_t slot);
  NodeId store(Node n);
  void place(NodeId id, NodeId before);  // before == kNoNode: at the end
  void grow_index();

  std::shared_ptr<CreatedBytes> created_ = std::make_shared<CreatedBytes>();
  // A deque, so references to tensors stay valid while passes add new ones.
  std::deque<Tensor> tensors_;
  TensorList inputs_, outputs_;
  std::vector<Node> nodes_;
  std::vector<uint8_t> alive_;
  std::vector<NodeId> prev_, next_;
  NodeId head_ = kNoNode, tail_ = kNoNode;
  size_t live_ = 0;
  bool compact_ = true;                 // ids dense and in order, readers in node order
  std::vector<NodeId> producer_;        // per tensor
  std::vector<std::vector<Use>> uses_;  // per tensor
};

// Edits of many nodes, collected while a pass reads the graph and installed
// at once by Graph::apply(). Until then the graph, its order and its index
// stay as they are, so the pass reads one consistent graph throughout. Each
// call here is O(1) amortized (plus the nodes it is given); apply() costs
// O(nodes + edges) for the whole batch. Ids are the graph's when the edit is
// made: apply() it before any other edit of the graph's nodes.
class GraphEdit {
 public:
  explicit GraphEdit(const Graph& g);

  // A node to run before every node of the graph (in the order added).
  void add_first(Node n) { first_.push_back(std::move(n)); }
  // A node to run right before / right after node `at` (in the order added).
  void insert_before(NodeId at, Node n) { queue(at, kBefore, std::move(n)); }
  void insert_after(NodeId at, Node n) { queue(at, kAfter, std::move(n)); }
  // Node `at` becomes `nodes` (moved from), in that order (none: it is
  // removed); the nodes inserted before and after it stay around them.
  void replace(NodeId at, std::span<Node> nodes);
  // Node `at` reads `t` in input slot `slot` / writes `t` in output slot `slot`.
  void set_input(NodeId at, size_t slot, TensorId t) { edges_.push_back({at, slot, t, false}); }
  void set_output(NodeId at, size_t slot, TensorId t) { edges_.push_back({at, slot, t, true}); }

 private:
  friend class Graph;
  enum Place : uint8_t { kBefore, kInstead, kAfter };  // the order around a node
  struct Queued {
    NodeId at;
    Place place;
    Node node;
  };
  struct EdgeChange {
    NodeId at;
    size_t slot;
    TensorId tensor;
    bool output;
  };
  void queue(NodeId at, Place place, Node n) { queued_.push_back({at, place, std::move(n)}); }

  std::vector<Node> first_;
  std::vector<Queued> queued_;
  std::vector<uint8_t> replaced_;  // per node id
  std::vector<EdgeChange> edges_;
};

class Graph::NodeRange {
 public:
  class iterator {
   public:
    using value_type = Node;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const Graph* g, NodeId id) : g_(g), id_(id) {}
    const Node& operator*() const { return g_->node(id_); }
    const Node* operator->() const { return &g_->node(id_); }
    iterator& operator++() {
      id_ = g_->next(id_);
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& o) const { return id_ == o.id_; }
    NodeId id() const { return id_; }

   private:
    const Graph* g_ = nullptr;
    NodeId id_ = kNoNode;
  };
  explicit NodeRange(const Graph* g) : g_(g) {}
  iterator begin() const { return {g_, g_->first()}; }
  iterator end() const { return {g_, kNoNode}; }

 private:
  const Graph* g_;
};

inline Graph::NodeRange Graph::nodes() const { return NodeRange(this); }

// Calls fn(graph) for `g` and then, depth first, for every graph its nodes own
// (a parent before its subgraphs).
template <class F>
void for_each_graph(Graph& g, F&& fn) {
  fn(g);
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id))
    for (Subgraph& sub : g.info(id).subgraphs) for_each_graph(sub.graph(), fn);
}
template <class F>
void for_each_graph(const Graph& g, F&& fn) {
  fn(g);
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id))
    for (const Subgraph& sub : g.node(id).subgraphs) for_each_graph(sub.graph(), fn);
}

// Nodes and tensors of `g` and of every graph its nodes own.
// The constant `c` viewed with the TFLite dims `shape` (the same elements in
// the same order: leading 1s, other axes split): a per-axis quantization
// moves to the axis that holds its channels; nullopt when the view splits or
// merges that axis (no per-axis DequantizeLinear can read it then). The
// caller sets the view's layout.
std::optional<Tensor> constant_view(const Tensor& c, Shape shape);

size_t total_nodes(const Graph& g);
size_t total_tensors(const Graph& g);

// Copies `from` into `into`: its nodes (with their subgraphs) in order before
// node `before` (kNoNode: at the end), and the tensors they use. `from`'s
// inputs are `inputs` (as many); every copied tensor and node name gets
// `prefix`. Returns the tensors `from`'s outputs became.
std::vector<TensorId> inline_graph(Graph& into, const Graph& from, std::span<const TensorId> inputs,
                                   const std::string& prefix, NodeId before = kNoNode);

}  // namespace lite2onnx::ir
