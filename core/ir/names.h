// Unique names, deterministically: a taken name gets the first free suffix
// `<name><separator><k>`, k counting up from `first`. Each name remembers the
// last suffix it took, so a name repeated n times costs n probes, not n^2 (a
// hostile model may name every tensor alike).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace lite2onnx::ir {

class UniqueNames {
 public:
  explicit UniqueNames(std::string separator = "_", int first = 2)
      : separator_(std::move(separator)), first_(first) {}

  void reserve(size_t n) { used_.reserve(n); }
  // Marks `name` as taken (a name that exists already).
  void insert(const std::string& name) { used_.insert(name); }
  bool contains(const std::string& name) const { return used_.count(name) > 0; }
  // `name` if it is free, else the first free suffixed form; taken from now on.
  std::string take(const std::string& name) {
    if (used_.insert(name).second) return name;
    auto [next, fresh] = next_.try_emplace(name, first_);
    std::string candidate;
    do candidate = name + separator_ + std::to_string(next->second++);
    while (!used_.insert(candidate).second);
    return candidate;
  }

 private:
  std::string separator_;
  int first_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> next_;  // per name: the next suffix to try
};

}  // namespace lite2onnx::ir
