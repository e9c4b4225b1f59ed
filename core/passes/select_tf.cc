// Select-TF ops read as their builtin twins (passes.h, ops/select_tf.h).
#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ir/types.h"
#include "core/ops/select_tf.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

Error invalid(const ir::Node& n, const std::string& what) {
  return make_error(ErrorCode::kInvalidModel,
                    "op " + std::to_string(n.source_op) + " (" + n.op + "): " + what);
}

// The node's name with its type part ("Custom_7") as the builtin's.
std::string renamed(const std::string& name, const std::string& builtin) {
  const auto at = name.rfind("Custom_");
  if (at == std::string::npos) return name;
  return name.substr(0, at) + ir::camel_name(builtin) + name.substr(at + 6);
}

}  // namespace

Status rewrite_select_tf_ops(ir::Graph& g) {
  for (ir::NodeId id : g.order()) {
    const ir::Node& n = g.node(id);
    if (n.builtin != ir::builtin::kCustom || !n.op.starts_with("Flex")) continue;
    const ops::SelectTfTwin* twin = ops::find_select_tf_twin(std::string_view(n.op).substr(4));
    if (!twin) continue;  // unsupported: the preflight names the TF op
    if (const std::string named = n.attrs.get_string("tf_op"); named != twin->tf_op)
      return invalid(n, "its options name TF op '" + named + "', not " + twin->tf_op);
    std::vector<ir::TensorId> inputs = n.inputs;
    if (twin->count_attr) {
      const int64_t count = n.attrs.get_int("select_tf_count");
      const size_t expected =
          static_cast<size_t>(std::max<int64_t>(count, 0)) + (twin->axis_input >= 0 ? 1 : 0);
      if (count < 1 || inputs.size() != expected)
        return invalid(n, "NodeDef attribute " + std::string(twin->count_attr) + " = " +
                              std::to_string(count) + ", but the op has " +
                              std::to_string(inputs.size()) + " inputs");
    }
    if (twin->axis_input >= 0) {
      const size_t slot = twin->axis_input == ops::kLastInput
                              ? inputs.size() - 1
                              : static_cast<size_t>(twin->axis_input);
      if (inputs.empty() || slot >= inputs.size() || inputs[slot] == ir::kNoTensor)
        return invalid(n, "no axis operand (input " + std::to_string(slot) + ")");
      const auto axis = ir::const_ints(g, inputs[slot]);
      if (!axis || axis->size() != 1 || ir::element_count(g.tensor(inputs[slot]).shape) != 1) {
        g.info(id).attrs.set("select_tf_problem",
                             "the axis operand (input " + std::to_string(slot) +
                                 ") is not a constant scalar; only a constant axis is converted");
        continue;
      }
      g.info(id).attrs.set("axis", (*axis)[0]);
      inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(slot));
      g.set_inputs(id, inputs);
    }
    ir::NodeInfo& info = g.info(id);
    info.attrs.set("select_tf_op", info.op);
    info.builtin = twin->builtin;
    info.op = ir::builtin_name(twin->builtin);
    info.name = renamed(info.name, info.op);
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
