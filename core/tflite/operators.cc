// Operator codes and the subgraphs a control-flow operator names.
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/builtins.h"
#include "core/tflite/reader_parts.h"
#include "schema_generated.h"

namespace lite2onnx::tflite_reader {

std::string op_label(size_t index, const std::string& name) {
  return "op " + std::to_string(index) + " (" + name + ")";
}

Result<int> builtin_code(const tflite::OperatorCode* code, size_t index) {
  if (!code) return invalid("operator code " + std::to_string(index) + " is null");
  // Codes above 127 only fit builtin_code; older files only set the deprecated byte.
  int c = std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
  if (c < 0) return invalid("operator code " + std::to_string(index) + " is negative");
  return c;
}

bool is_control_flow(int code) {
  return code == ir::builtin::kWhile || code == ir::builtin::kIf || code == ir::builtin::kCall ||
         code == ir::builtin::kCallOnce || code == ir::builtin::kStablehloComposite;
}

Result<std::vector<std::pair<const char*, int64_t>>> called_subgraphs(const tflite::Operator& op,
                                                                      int code,
                                                                      const std::string& where) {
  auto missing = [&](const char* table) {
    return invalid(where + " has no " + table + " (the subgraphs it runs)");
  };
  switch (code) {
    case ir::builtin::kWhile: {
      const auto* o = op.builtin_options_as_WhileOptions();
      if (!o) return missing("WhileOptions");
      return std::vector<std::pair<const char*, int64_t>>{{"cond", o->cond_subgraph_index()},
                                                          {"body", o->body_subgraph_index()}};
    }
    case ir::builtin::kIf: {
      const auto* o = op.builtin_options_as_IfOptions();
      if (!o) return missing("IfOptions");
      return std::vector<std::pair<const char*, int64_t>>{{"then", o->then_subgraph_index()},
                                                          {"else", o->else_subgraph_index()}};
    }
    case ir::builtin::kCall: {
      const auto* o = op.builtin_options_as_CallOptions();
      if (!o) return missing("CallOptions");
      return std::vector<std::pair<const char*, int64_t>>{{"callee", int64_t{o->subgraph()}}};
    }
    case ir::builtin::kStablehloComposite: {
      const auto* o = op.builtin_options_2_as_StableHLOCompositeOptions();
      if (!o) return missing("StableHLOCompositeOptions");
      return std::vector<std::pair<const char*, int64_t>>{
          {"decomposition", int64_t{o->decomposition_subgraph_index()}}};
    }
    default: {
      const auto* o = op.builtin_options_as_CallOnceOptions();
      if (!o) return missing("CallOnceOptions");
      return std::vector<std::pair<const char*, int64_t>>{{"init", o->init_subgraph_index()}};
    }
  }
}

}  // namespace lite2onnx::tflite_reader
