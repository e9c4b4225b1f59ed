#include "core/ir/graph.h"

#include <algorithm>

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

void CreatedBytes::charge(uint64_t bytes, std::string_view by) {
  const bool was_over = exceeded();
  used_ = bytes > UINT64_MAX - used_ ? UINT64_MAX : used_ + bytes;
  if (!was_over && exceeded()) exceeded_by_ = by;
}

ConstData Graph::own(std::vector<std::byte> data, DataType type, std::string_view by) {
  created.charge(data.size(), by);
  return ConstData::owned(std::move(data), type);
}

TensorId Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<TensorId>(tensors.size() - 1);
}

void TensorList::push_back(TensorId id) {
  ids_.push_back(id);
  if (id < 0) return;
  if (static_cast<size_t>(id) >= count_.size()) count_.resize(static_cast<size_t>(id) + 1, 0);
  ++count_[static_cast<size_t>(id)];
}

bool Graph::is_graph_input(TensorId id) const { return inputs.contains(id); }

bool Graph::is_graph_output(TensorId id) const { return outputs.contains(id); }

std::vector<int> Graph::producers() const {
  std::vector<int> p(tensors.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n)
    for (TensorId t : nodes[n].outputs)
      if (valid(t)) p[static_cast<size_t>(t)] = static_cast<int>(n);
  return p;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(tensors.size(), 0);
  for (const auto& n : nodes)
    for (TensorId t : n.inputs)
      if (valid(t)) ++uses[static_cast<size_t>(t)];
  for (TensorId t : outputs)
    if (valid(t)) ++uses[static_cast<size_t>(t)];
  return uses;
}

}  // namespace lite2onnx::ir
