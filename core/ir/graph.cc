#include "core/ir/graph.h"

#include <algorithm>
#include <unordered_set>

namespace lite2onnx::ir {

ConstData ConstData::owned(std::vector<std::byte> data, DataType type) {
  auto owner = std::make_shared<const std::vector<std::byte>>(std::move(data));
  ConstData c;
  c.bytes = std::span<const std::byte>(owner->data(), owner->size());
  c.stored_type = type;
  c.owner = std::move(owner);
  return c;
}

void Attributes::set(const std::string& name, AttrValue value) {
  for (auto& a : attrs_) {
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  }
  attrs_.push_back({name, std::move(value)});
}

const Attr* Attributes::find(const std::string& name) const {
  for (const auto& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  const Attr* a = find(name);
  if (!a) return fallback;
  if (auto* v = std::get_if<int64_t>(&a->value)) return *v;
  return fallback;
}

float Attributes::get_float(const std::string& name, float fallback) const {
  const Attr* a = find(name);
  if (!a) return fallback;
  if (auto* v = std::get_if<float>(&a->value)) return *v;
  return fallback;
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  const Attr* a = find(name);
  if (!a) return fallback;
  if (auto* v = std::get_if<std::string>(&a->value)) return *v;
  return fallback;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name) const {
  const Attr* a = find(name);
  if (!a) return {};
  if (auto* v = std::get_if<std::vector<int64_t>>(&a->value)) return *v;
  return {};
}

std::vector<float> Attributes::get_floats(const std::string& name) const {
  const Attr* a = find(name);
  if (!a) return {};
  if (auto* v = std::get_if<std::vector<float>>(&a->value)) return *v;
  return {};
}

void CreatedBytes::charge(uint64_t bytes, std::string_view by) {
  const bool was_over = exceeded();
  used_ = bytes > UINT64_MAX - used_ ? UINT64_MAX : used_ + bytes;
  if (!was_over && exceeded()) exceeded_by_ = by;
}

bool CreatedBytes::admit(uint64_t bytes, std::string_view by) {
  if (fits(bytes)) return true;
  charge(bytes, by);
  return false;
}

ConstData Graph::own(std::vector<std::byte> data, DataType type, std::string_view by) {
  created_->charge(data.size(), by);
  return ConstData::owned(std::move(data), type);
}

void TensorList::push_back(TensorId id) {
  ids_.push_back(id);
  if (id < 0) return;
  if (static_cast<size_t>(id) >= count_.size()) count_.resize(static_cast<size_t>(id) + 1, 0);
  ++count_[static_cast<size_t>(id)];
}

Subgraph::Subgraph(std::string attr, Graph graph)
    : attr_(std::move(attr)), graph_(std::make_unique<Graph>(std::move(graph))) {}
Subgraph::Subgraph(const Subgraph& other)
    : attr_(other.attr_), graph_(std::make_unique<Graph>(*other.graph_)) {}
Subgraph& Subgraph::operator=(const Subgraph& other) {
  if (this != &other) {
    attr_ = other.attr_;
    graph_ = std::make_unique<Graph>(*other.graph_);
  }
  return *this;
}
Subgraph::Subgraph(Subgraph&&) noexcept = default;
Subgraph& Subgraph::operator=(Subgraph&&) noexcept = default;
Subgraph::~Subgraph() = default;

// ---- tensors ----

TensorId Graph::add_tensor(Tensor t) {
  tensors_.push_back(std::move(t));
  grow_index();
  return static_cast<TensorId>(tensors_.size() - 1);
}

void Graph::grow_index() {
  producer_.resize(tensors_.size(), kNoNode);
  uses_.resize(tensors_.size());
}

// ---- nodes ----

NodeId Graph::store(Node n) {
  const auto id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(n));
  alive_.push_back(1);
  prev_.push_back(kNoNode);
  next_.push_back(kNoNode);
  ++live_;
  link(id);
  return id;
}

void Graph::place(NodeId id, NodeId before) {
  const auto i = static_cast<size_t>(id);
  if (before == kNoNode) {
    prev_[i] = tail_;
    next_[i] = kNoNode;
    if (tail_ != kNoNode) next_[static_cast<size_t>(tail_)] = id;
    tail_ = id;
    if (head_ == kNoNode) head_ = id;
    return;
  }
  const auto b = static_cast<size_t>(before);
  prev_[i] = prev_[b];
  next_[i] = before;
  if (prev_[b] != kNoNode)
    next_[static_cast<size_t>(prev_[b])] = id;
  else
    head_ = id;
  prev_[b] = id;
}

NodeId Graph::add_node(Node n) {
  NodeId id = store(std::move(n));
  place(id, kNoNode);
  return id;
}

NodeId Graph::add_node_before(NodeId at, Node n) {
  compact_ = false;
  NodeId id = store(std::move(n));
  place(id, at);
  return id;
}

NodeId Graph::add_node_after(NodeId at, Node n) {
  compact_ = false;
  NodeId id = store(std::move(n));
  place(id, next_[static_cast<size_t>(at)]);
  return id;
}

void Graph::remove_node(NodeId id) {
  const auto i = static_cast<size_t>(id);
  if (!alive(id)) return;
  compact_ = false;
  unlink(id);
  if (prev_[i] != kNoNode)
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  else
    head_ = next_[i];
  if (next_[i] != kNoNode)
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  else
    tail_ = prev_[i];
  alive_[i] = 0;
  --live_;
  nodes_[i] = Node{};  // frees what the node held
}

std::vector<NodeId> Graph::order() const {
  std::vector<NodeId> out;
  out.reserve(live_);
  for (NodeId id = head_; id != kNoNode; id = next_[static_cast<size_t>(id)]) out.push_back(id);
  return out;
}

// ---- edges and the index ----

void Graph::add_use(TensorId t, NodeId id, uint32_t slot) {
  if (valid(t)) uses_[static_cast<size_t>(t)].push_back({id, slot});
}

// Keeps the order of the other readers (passes visit them in that order).
// Searched from both ends at once: passes rewire the readers of a tensor
// read by thousands of nodes (a shared weight or bias) in node order, i.e.
// from the front, or undo their latest edit, at the back; a search from one
// end made the first case quadratic in the readers.
void Graph::remove_use(TensorId t, NodeId id, uint32_t slot) {
  if (!valid(t)) return;
  auto& u = uses_[static_cast<size_t>(t)];
  const auto matches = [&](size_t i) { return u[i].node == id && u[i].slot == slot; };
  for (size_t front = 0, back = u.size(); front < back; ++front) {
    size_t at = matches(front) ? front : matches(--back) ? back : u.size();
    if (at == u.size()) continue;
    u.erase(u.begin() + static_cast<std::ptrdiff_t>(at));
    return;
  }
}

void Graph::link(NodeId id) {
  const Node& n = nodes_[static_cast<size_t>(id)];
  for (size_t s = 0; s < n.inputs.size(); ++s) add_use(n.inputs[s], id, static_cast<uint32_t>(s));
  for (TensorId t : n.outputs)
    if (valid(t)) producer_[static_cast<size_t>(t)] = id;
}

void Graph::unlink(NodeId id) {
  const Node& n = nodes_[static_cast<size_t>(id)];
  for (size_t s = 0; s < n.inputs.size(); ++s)
    remove_use(n.inputs[s], id, static_cast<uint32_t>(s));
  for (TensorId t : n.outputs)
    if (valid(t) && producer_[static_cast<size_t>(t)] == id)
      producer_[static_cast<size_t>(t)] = kNoNode;
}

void Graph::set_input(NodeId id, size_t slot, TensorId t) {
  Node& n = nodes_[static_cast<size_t>(id)];
  if (slot >= n.inputs.size()) n.inputs.resize(slot + 1, kNoTensor);
  if (n.inputs[slot] == t) return;
  compact_ = false;
  remove_use(n.inputs[slot], id, static_cast<uint32_t>(slot));
  n.inputs[slot] = t;
  add_use(t, id, static_cast<uint32_t>(slot));
}

void Graph::set_inputs(NodeId id, std::vector<TensorId> inputs) {
  compact_ = false;
  Node& n = nodes_[static_cast<size_t>(id)];
  for (size_t s = 0; s < n.inputs.size(); ++s)
    remove_use(n.inputs[s], id, static_cast<uint32_t>(s));
  n.inputs = std::move(inputs);
  for (size_t s = 0; s < n.inputs.size(); ++s) add_use(n.inputs[s], id, static_cast<uint32_t>(s));
}

void Graph::set_output(NodeId id, size_t slot, TensorId t) {
  compact_ = false;
  Node& n = nodes_[static_cast<size_t>(id)];
  const TensorId old = n.outputs[slot];
  if (valid(old) && producer_[static_cast<size_t>(old)] == id)
    producer_[static_cast<size_t>(old)] = kNoNode;
  n.outputs[slot] = t;
  if (valid(t)) producer_[static_cast<size_t>(t)] = id;
}

void Graph::append_output(NodeId id, TensorId t) {
  compact_ = false;
  nodes_[static_cast<size_t>(id)].outputs.push_back(t);
  if (valid(t)) producer_[static_cast<size_t>(t)] = id;
}

void Graph::replace_uses(TensorId from, TensorId to) {
  if (!valid(from) || from == to) return;
  compact_ = false;
  std::vector<Use> moved = std::move(uses_[static_cast<size_t>(from)]);
  uses_[static_cast<size_t>(from)].clear();
  for (const Use& u : moved) {
    nodes_[static_cast<size_t>(u.node)].inputs[u.slot] = to;
    add_use(to, u.node, u.slot);
  }
}

std::vector<NodeId> Graph::readers(TensorId t) const {
  std::vector<NodeId> out;
  const auto u = uses(t);
  if (u.size() <= 16) {
    for (const Use& use : u)
      if (std::find(out.begin(), out.end(), use.node) == out.end()) out.push_back(use.node);
    return out;
  }
  std::unordered_set<NodeId> seen;
  for (const Use& use : u)
    if (seen.insert(use.node).second) out.push_back(use.node);
  return out;
}

// ---- wholesale ----

void Graph::compact() {
  if (compact_) return;  // nothing to renumber or reorder
  set_nodes(take_nodes());
}

void Graph::reorder(const std::vector<NodeId>& order) {
  compact_ = false;
  head_ = tail_ = kNoNode;
  for (NodeId id : order) place(id, kNoNode);
}

GraphEdit::GraphEdit(const Graph& g) : replaced_(g.node_id_bound(), 0) {}

void GraphEdit::replace(NodeId at, std::span<Node> nodes) {
  replaced_[static_cast<size_t>(at)] = 1;
  for (Node& n : nodes) queue(at, kInstead, std::move(n));
}

void Graph::apply(GraphEdit edit) {
  for (const GraphEdit::EdgeChange& c : edit.edges_) {
    Node& n = nodes_[static_cast<size_t>(c.at)];
    std::vector<TensorId>& slots = c.output ? n.outputs : n.inputs;
    if (c.slot >= slots.size()) slots.resize(c.slot + 1, kNoTensor);
    slots[c.slot] = c.tensor;
  }
  // The queued nodes by (node, place), each bucket in the order queued: a
  // counting sort, linear in nodes + queued.
  const auto bucket = [](const GraphEdit::Queued& q) {
    return static_cast<size_t>(q.at) * 3 + q.place;
  };
  std::vector<uint32_t> start(nodes_.size() * 3 + 1, 0);
  for (const auto& q : edit.queued_) ++start[bucket(q) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<uint32_t> sorted(edit.queued_.size());
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (size_t i = 0; i < edit.queued_.size(); ++i)
    sorted[fill[bucket(edit.queued_[i])]++] = static_cast<uint32_t>(i);

  std::vector<Node> out;
  out.reserve(live_ + edit.first_.size() + edit.queued_.size());
  for (Node& n : edit.first_) out.push_back(std::move(n));
  const auto take = [&](size_t b) {
    for (uint32_t k = start[b]; k < start[b + 1]; ++k)
      out.push_back(std::move(edit.queued_[sorted[k]].node));
  };
  for (NodeId id = head_; id != kNoNode; id = next_[static_cast<size_t>(id)]) {
    const auto i = static_cast<size_t>(id);
    take(i * 3 + GraphEdit::kBefore);
    if (i < edit.replaced_.size() && edit.replaced_[i])
      take(i * 3 + GraphEdit::kInstead);
    else
      out.push_back(std::move(nodes_[i]));
    take(i * 3 + GraphEdit::kAfter);
  }
  set_nodes(std::move(out));
}

std::vector<Node> Graph::take_nodes() {
  std::vector<Node> out;
  out.reserve(live_);
  for (NodeId id = head_; id != kNoNode; id = next_[static_cast<size_t>(id)])
    out.push_back(std::move(nodes_[static_cast<size_t>(id)]));
  clear_nodes();
  return out;
}

void Graph::clear_nodes() {
  nodes_.clear();
  alive_.clear();
  prev_.clear();
  next_.clear();
  head_ = tail_ = kNoNode;
  live_ = 0;
  std::fill(producer_.begin(), producer_.end(), kNoNode);
  for (auto& u : uses_) u.clear();
  compact_ = true;
}

void Graph::set_nodes(std::vector<Node> nodes) {
  if (live_ != 0) clear_nodes();
  nodes_.reserve(nodes.size());
  for (auto& n : nodes) add_node(std::move(n));
}

std::optional<Tensor> constant_view(const Tensor& c, Shape shape) {
  Tensor view = c;
  if (view.quant && view.quant->scale.size() > 1) {
    std::optional<int> axis = axis_in_view(c.shape, view.quant->axis, shape);
    if (!axis) return std::nullopt;
    view.quant->axis = *axis;
  }
  view.shape = std::move(shape);
  return view;
}

size_t total_nodes(const Graph& g) {
  size_t n = 0;
  for_each_graph(g, [&](const Graph& x) { n += x.node_count(); });
  return n;
}

size_t total_tensors(const Graph& g) {
  size_t n = 0;
  for_each_graph(g, [&](const Graph& x) { n += x.tensor_count(); });
  return n;
}

std::vector<TensorId> inline_graph(Graph& into, const Graph& from, std::span<const TensorId> inputs,
                                   const std::string& prefix, NodeId before) {
  std::vector<TensorId> map(from.tensor_count(), kNoTensor);
  for (size_t i = 0; i < from.inputs().size() && i < inputs.size(); ++i)
    map[static_cast<size_t>(from.inputs()[i])] = inputs[i];
  auto mapped = [&](TensorId t) {
    if (!from.valid(t)) return t;
    TensorId& m = map[static_cast<size_t>(t)];
    if (m == kNoTensor) {
      Tensor copy = from.tensor(t);
      copy.name = prefix + copy.name;
      m = into.add_tensor(std::move(copy));
    }
    return m;
  };
  for (const Node& n : from.nodes()) {
    Node copy = n;
    copy.name = prefix + copy.name;
    for (TensorId& t : copy.inputs) t = mapped(t);
    for (TensorId& t : copy.outputs) t = mapped(t);
    if (before == kNoNode)
      into.add_node(std::move(copy));
    else
      into.add_node_before(before, std::move(copy));
  }
  std::vector<TensorId> out;
  for (TensorId t : from.outputs()) out.push_back(mapped(t));
  return out;
}

}  // namespace lite2onnx::ir
