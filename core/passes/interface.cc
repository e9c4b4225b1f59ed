// rename_interface and fix_input_shapes: see interface.h.
#include "core/passes/interface.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

namespace lite2onnx::passes {
namespace {

Error invalid(const std::string& message) { return make_error(ErrorCode::kInvalidOption, message); }

std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    out.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string shape_text(const ir::Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// Elements of a shape of positive dimensions, or nullopt past 2^31 - 1.
std::optional<int64_t> bounded_count(const ir::Shape& shape) {
  constexpr int64_t kMax = 0x7fffffff;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > kMax / n) return std::nullopt;
    n *= d;
  }
  return n;
}

}  // namespace

Status rename_interface(ir::Graph& g, const ConvertOptions& options, OtherNames& other_names) {
  if (options.rename_inputs.empty() && options.rename_outputs.empty()) return ok_status();
  std::set<std::string> taken;  // the interface's names after the renames
  std::map<ir::TensorId, std::string> renames;
  for (auto [list, text, what] :
       {std::tuple{&g.inputs(), &options.rename_inputs, "rename_inputs"},
        std::tuple{&g.outputs(), &options.rename_outputs, "rename_outputs"}}) {
    if (text->empty()) continue;
    const auto names = split_names(*text);
    if (names.size() > list->size())
      return invalid(std::string(what) + ": " + std::to_string(names.size()) +
                     " names for the model's " + std::to_string(list->size()) + " graph " +
                     (list == &g.inputs() ? "inputs" : "outputs"));
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty())
        return invalid(std::string(what) + ": name " + std::to_string(i + 1) + " is empty");
      const ir::TensorId t = (*list)[i];
      if (auto [at, fresh] = renames.emplace(t, names[i]); !fresh && at->second != names[i])
        return invalid(std::string(what) + ": tensor '" + g.tensor(t).name +
                       "' is a graph input and output, named '" + at->second + "' and '" +
                       names[i] + "'");
    }
  }
  for (auto list : {&g.inputs(), &g.outputs()})
    for (ir::TensorId t : *list) {
      auto it = renames.find(t);
      const std::string& name = it != renames.end() ? it->second : g.tensor(t).name;
      if (!taken.insert(name).second && !(g.is_graph_input(t) && g.is_graph_output(t)))
        return invalid(
            "rename_inputs/rename_outputs: two graph inputs or outputs would be "
            "named '" +
            name + "'");
    }
  for (auto& [t, name] : renames) {
    if (g.tensor(t).name == name) continue;
    other_names.emplace_back(g.tensor(t).name, t);
    g.tensor(t).name = name;
  }
  return ok_status();
}

Status fix_input_shapes(ir::Graph& g, const ConvertOptions& options,
                        std::span<const std::pair<std::string, ir::TensorId>> other_names,
                        std::vector<std::string>& warnings) {
  if (options.input_shapes.empty() && options.batch == 0) return ok_status();
  std::map<std::string, ir::TensorId> by_name;
  for (ir::TensorId t : g.inputs()) by_name.emplace(g.tensor(t).name, t);
  for (const auto& [name, t] : other_names)
    if (g.is_graph_input(t)) by_name.emplace(name, t);
  std::set<ir::TensorId> fixed;
  for (const InputShape& spec : options.input_shapes) {
    const std::string where = "input_shapes '" + spec.text() + "'";
    auto it = by_name.find(spec.tensor);
    if (it == by_name.end()) {
      std::string names;
      for (ir::TensorId t : g.inputs()) names += (names.empty() ? "" : ", ") + g.tensor(t).name;
      return invalid(where + ": the model has no graph input named '" + spec.tensor +
                     "' (its inputs: " + names + ")");
    }
    ir::Tensor& t = g.tensor(it->second);
    if (!fixed.insert(it->second).second)
      return invalid(where + ": '" + spec.tensor + "' is given a shape twice");
    if (!t.has_rank || t.shape.size() != spec.dims.size())
      return invalid(where + ": '" + t.name + "' has " +
                     (t.has_rank
                          ? "rank " + std::to_string(t.shape.size()) + " " + shape_text(t.shape)
                          : std::string("no known rank")) +
                     ", the shape has " + std::to_string(spec.dims.size()) + " dimensions");
    for (size_t i = 0; i < spec.dims.size(); ++i)
      if (t.shape[i] != -1 && t.shape[i] != spec.dims[i])
        return invalid(where + ": dimension " + std::to_string(i) + " of '" + t.name + "' " +
                       shape_text(t.shape) + " is static (" + std::to_string(t.shape[i]) +
                       "); only dynamic (-1) dimensions can be set");
    ir::Shape shape(spec.dims.begin(), spec.dims.end());
    if (!bounded_count(shape))
      return invalid(where + ": " + shape_text(shape) + " has 2^31 elements or more");
    t.shape = std::move(shape);
  }
  if (options.batch > 0) {
    int changed = 0;
    for (ir::TensorId id : g.inputs()) {
      ir::Tensor& t = g.tensor(id);
      if (fixed.contains(id) || !t.has_rank || t.shape.empty() || t.shape[0] != -1) continue;
      ir::Shape shape = t.shape;
      shape[0] = options.batch;
      ir::Shape known = shape;  // the other dynamic dimensions count as 1
      for (auto& d : known)
        if (d == -1) d = 1;
      if (!bounded_count(known))
        return invalid("batch " + std::to_string(options.batch) + ": input '" + t.name + "' " +
                       shape_text(shape) + " would have 2^31 elements or more");
      t.shape = std::move(shape);
      ++changed;
    }
    if (changed == 0)
      warnings.push_back("batch " + std::to_string(options.batch) +
                         ": no graph input has a dynamic first dimension; nothing changed");
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
