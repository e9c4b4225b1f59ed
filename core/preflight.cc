// The preflight: every operator that cannot be converted, found before any
// converter runs, so an error lists all of them at once.
#include "core/preflight.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx {
namespace {

std::string quant_text(const ir::Tensor& t) {
  const ir::QuantParams& q = *t.quant;
  std::string s = q.scale.size() == 1 ? "scale " + std::to_string(q.scale[0]) : "per-axis scales";
  if (q.scale.size() == 1 && !q.zero_point.empty())
    s += ", zero point " + std::to_string(q.zero_point[0]);
  return s;
}

// Why the op's integer kernel cannot be expressed in QDQ, or "".
std::string quantized_kernel_problem(const ir::Graph& g, const ir::Node& n,
                                     ops::QuantizedKernel kind) {
  std::vector<const ir::Tensor*> ins, outs;
  for (ir::TensorId t : n.inputs)
    if (g.valid(t) && g.tensor(t).quantized_type) ins.push_back(&g.tensor(t));
  for (ir::TensorId t : n.outputs)
    if (g.valid(t) && g.tensor(t).quantized_type) outs.push_back(&g.tensor(t));
  if (kind == ops::QuantizedKernel::kNoQuantized && !(ins.empty() && outs.empty()))
    return "TFLite's kernel reads the raw integers of quantized tensor '" +
           (ins.empty() ? outs[0] : ins[0])->name +
           "', ignoring its quantization, which QuantizeLinear/DequantizeLinear cannot express";
  if (kind == ops::QuantizedKernel::kSameScale)
    for (const ir::Tensor* o : outs)
      for (const ir::Tensor* i : ins)
        if (!passes::same_quantization(*i, *o))
          return "input '" + i->name + "' (" + quant_text(*i) + ") and output '" + o->name + "' (" +
                 quant_text(*o) +
                 ") differ in quantization, but TFLite's kernel copies the integers unchanged";
  // The same integers read with the output's parameters: any per-tensor
  // parameters of the same integer type.
  if (kind == ops::QuantizedKernel::kReinterpret && !outs.empty()) {
    const ir::Tensor* data = g.valid(n.inputs[0]) ? &g.tensor(n.inputs[0]) : nullptr;
    for (const ir::Tensor* o : outs)
      if (!data || data->quantized_type != o->quantized_type || data->quant->scale.size() != 1 ||
          o->quant->scale.size() != 1 ||
          (data->is_const() && !passes::same_quantization(*data, *o)))
        return "output '" + o->name + "' is quantized as " + ir::to_string(*o->quantized_type) +
               " " + quant_text(*o) +
               " but its input is not a per-tensor quantized activation of that type";
  }
  return "";
}

// What a user can do about text (tokenizers, string ops), which no ONNX
// operator set computes on as TFLite does.
constexpr const char* kTextAdvice =
    "ONNX has no tokenizers and few string ops; convert the model without its text processing "
    "(export it from the tokenized inputs, the token ids) and tokenize outside the model";

// An op that computes on text: it reads or writes string tensors, or its name
// says it tokenizes.
bool is_text_op(const ir::Graph& g, const ir::Node& n) {
  bool text =
      n.op.find("okeniz") != std::string::npos || n.op.find("entencepiece") != std::string::npos ||
      n.op.find("entencePiece") != std::string::npos || n.op.find("ordpiece") != std::string::npos;
  for (auto list : {&n.inputs, &n.outputs})
    for (ir::TensorId t : *list)
      text = text || (g.valid(t) && g.tensor(t).dtype == ir::DataType::kString);
  return text;
}

// A custom operator the custom-op table lacks: a select-TF op (the Flex
// delegate runs it), one an accelerator's compiler made (it holds the
// compiled program, not the ops), or any other.
Refusal unknown_custom_op(const ir::Graph& g, const ir::Node& n) {
  const std::string& code = n.op;
  if (is_text_op(g, n))
    return {code.starts_with("Flex") ? ReasonCode::kSelectTfOp : ReasonCode::kCustomOp,
            std::string("custom operator on text (a tokenizer or string op), not converted: ") +
                kTextAdvice};
  if (code.starts_with("Flex"))
    return {ReasonCode::kSelectTfOp,
            "TensorFlow op '" + code.substr(4) +
                "' (select-TF), not converted: it is not among the TF ops read as their builtin "
                "twin (docs/operators.md, the Flex rows)"};
  // edgetpu_compiler moves the graph into one op that only an Edge TPU runs.
  if (code == "edgetpu-custom-op")
    return {ReasonCode::kAcceleratorCompiled,
            "custom operator of an Edge TPU model: edgetpu_compiler moved the graph into it, "
            "and only an Edge TPU runs it; convert the CPU .tflite from before edgetpu_compiler "
            "instead"};
  if (code == "ethos-u") return {ReasonCode::kAcceleratorCompiled, "custom operator"};
  return {ReasonCode::kCustomOp, "custom operator"};
}

// Why --quantization exact cannot convert the node, or nothing.
ops::Check exact_problem(const ir::Graph& g, const ir::Node& n, const ops::OpEntry& e) {
  if (!ops::touches_quantized(g, n)) return std::nullopt;
  if (!e.quantization.exact.lower)
    return ops::refuse(ReasonCode::kNotImplemented,
                       "no integer form for --quantization exact yet (qdq and dequantize "
                       "convert it)");
  return e.quantization.exact.check ? e.quantization.exact.check(g, n) : std::nullopt;
}

// Why a node cannot be converted, or nothing if it can.
ops::Check unsupported_reason(const ir::Graph& g, const ir::Node& n, QuantizationMode mode) {
  const ops::OpEntry& e = ops::lookup(n);
  if (n.builtin == ir::builtin::kCustom && !e.supported()) return unknown_custom_op(g, n);
  if (!e.supported()) return Refusal{ReasonCode::kNotImplemented, ""};
  for (auto list : {&n.inputs, &n.outputs}) {
    for (ir::TensorId t : *list) {
      if (!g.valid(t)) continue;
      const ir::Tensor& x = g.tensor(t);
      // A resource handle never reaches ONNX: the op's own check says why
      // it is not converted where it is left.
      if (x.dtype == ir::DataType::kResource && e.state.effect_only) continue;
      if (x.dtype == ir::DataType::kResource &&
          (n.builtin == ir::builtin::kVarHandle || n.builtin == ir::builtin::kReadVariable))
        continue;
      // Nor does a TensorList lower_tensor_lists left: the op says why.
      if (x.dtype == ir::DataType::kVariant && n.attrs.has("tensor_list_problem")) continue;
      if (x.dtype == ir::DataType::kString)
        return ops::refuse(ReasonCode::kType,
                           "tensor '" + x.name +
                               "' has type STRING, text, which is not converted: " + kTextAdvice);
      if (!ir::onnx_representable(x.dtype))
        return ops::refuse(ReasonCode::kType, "tensor '" + x.name + "' has type " +
                                                  std::string(ir::to_string(x.dtype)));
      if (!x.has_rank)
        return ops::refuse(ReasonCode::kShape, "tensor '" + x.name + "' has unknown rank");
    }
  }
  if (n.outputs.empty() && !e.state.effect_only)
    return ops::refuse(ReasonCode::kOperands, "operator has no outputs");
  // Variable tensors expose_state made state are graph inputs now; any other
  // is read where the op keeps no state, or cannot be state.
  for (ir::TensorId t : n.inputs)
    if (g.valid(t) && g.tensor(t).is_variable) {
      std::string why = passes::variable_tensor_problem(g, t);
      return ops::refuse(ReasonCode::kState,
                         why.empty() ? "reads variable tensor '" + g.tensor(t).name +
                                           "', which TFLite lets the op update in place: not "
                                           "converted"
                                     : why);
    }
  bool int16 = false;
  for (auto list : {&n.inputs, &n.outputs})
    for (ir::TensorId t : *list)
      int16 = int16 || (g.valid(t) && g.tensor(t).quantized_type == ir::DataType::kInt16);
  const ops::QuantizedKernel kind =
      int16 && e.quantization.int16 ? *e.quantization.int16 : e.quantization.kernel;
  // Control flow says itself what it cannot carry across the boundary.
  if (e.layout.kind != ops::LayoutClass::kSubgraph)
    if (auto r = quantized_kernel_problem(g, n, kind); !r.empty())
      return ops::refuse(ReasonCode::kQuantization, r);
  if (auto r = e.check ? e.check(g, n) : std::nullopt) return r;
  return mode == QuantizationMode::kExact ? exact_problem(g, n, e) : std::nullopt;
}

}  // namespace

std::vector<UnsupportedOp> preflight(const ir::Graph& g, QuantizationMode mode) {
  std::vector<UnsupportedOp> out;
  // The graph and every graph its nodes own (control flow); an op of a
  // subgraph copied to several places (a WHILE's condition) is listed once.
  std::set<std::pair<int, int>> listed;
  ir::for_each_graph(g, [&](const ir::Graph& x) {
    for (const ir::Node& n : x.nodes()) {
      // Nodes the converter made itself (the Identity of a CALL's result).
      if (n.dialect != ir::Dialect::kTflite) continue;
      if (auto why = unsupported_reason(x, n, mode);
          why && listed.emplace(n.source_subgraph, n.source_op).second)
        out.push_back(
            {n.source_op, n.op, std::move(why->text), to_string(why->code), n.source_subgraph});
    }
  });
  std::sort(out.begin(), out.end(), [](const UnsupportedOp& a, const UnsupportedOp& b) {
    return std::pair{a.subgraph, a.op_index} < std::pair{b.subgraph, b.op_index};
  });
  return out;
}

std::optional<Error> interface_problem(const ir::Graph& g) {
  // A TFLite graph may output nothing (a file holding only weights); an ONNX
  // model computing nothing does not load in ONNX Runtime.
  if (g.outputs().empty())
    return make_error(ErrorCode::kUnsupported,
                      "the graph has no outputs: an ONNX model computes at least one output");
  for (auto [list, role] : {std::pair{&g.inputs(), "input"}, std::pair{&g.outputs(), "output"}})
    for (ir::TensorId t : *list) {
      const ir::Tensor& x = g.tensor(t);
      std::string why;
      if (!x.has_rank)
        why = "has unknown rank";
      else if (!ir::onnx_representable(x.dtype) || x.dtype == ir::DataType::kString)
        why = std::string("has type ") + ir::to_string(x.dtype);
      if (why.empty()) continue;
      Error e = make_error(ErrorCode::kUnsupported,
                           std::string("graph ") + role + " '" + x.name + "' " + why +
                               ": an ONNX model declares the type and shape of its " +
                               std::string(role) + "s");
      e.tensor = x.name;
      return e;
    }
  return std::nullopt;
}

std::string unsupported_message(const std::vector<UnsupportedOp>& ops) {
  std::map<std::string, int> by_name;
  for (const auto& u : ops) ++by_name[u.op];
  std::string msg = std::to_string(ops.size()) + " operator" + (ops.size() == 1 ? "" : "s") +
                    " cannot be converted:";
  bool first = true;
  for (const auto& [name, count] : by_name) {
    msg += (first ? " " : ", ") + name + (count > 1 ? " x" + std::to_string(count) : "");
    first = false;
  }
  for (const auto& u : ops)
    if (!u.reason.empty()) {
      msg += " (first reason: " + u.label() + ": " + u.reason + ")";
      break;
    }
  return msg;
}

}  // namespace lite2onnx
