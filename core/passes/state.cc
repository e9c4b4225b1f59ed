// expose_state and variable_tensor_problem: see passes.h.
#include <cstring>
#include <string>

#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

Error invalid(const ir::Node& n, const std::string& message) {
  Error e = make_error(ErrorCode::kInvalidModel,
                       "op " + std::to_string(n.source_op) + " (" + n.op + "): " + message);
  e.op_index = n.source_op;
  return e;
}

// The bytes TFLite's ResetVariableTensor gives a variable tensor before the
// first invocation: all zero, except int8, whose bytes are its zero point.
std::vector<std::byte> reset_bytes(const ir::Tensor& v, size_t bytes) {
  int value = 0;
  if (v.dtype == ir::DataType::kInt8 && v.quant && !v.quant->zero_point.empty())
    value = static_cast<int>(v.quant->zero_point[0]);
  std::vector<std::byte> out(bytes);
  if (value != 0) std::memset(out.data(), value, bytes);
  return out;
}

}  // namespace

std::string variable_tensor_problem(const ir::Graph& g, ir::TensorId t) {
  const ir::Tensor& v = g.tensor(t);
  if (g.is_graph_input(t) || g.is_graph_output(t))
    return "variable tensor '" + v.name + "' is also a graph input or output";
  if (g.uses(t).size() != 1)
    return "variable tensor '" + v.name + "' is read by " + std::to_string(g.uses(t).size()) +
           " operator inputs: each sees the value the ops before it wrote, which is not converted";
  if (!ir::static_shape(v) || !ir::element_count(v.shape))
    return "variable tensor '" + v.name +
           "' has no static shape: its initial value cannot be "
           "written";
  if (v.quant && v.quant->scale.size() > 1)
    return "variable tensor '" + v.name + "' is quantized per axis";
  return "";
}

Status expose_state(ir::Graph& g, PassContext& ctx) {
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    if (n.dialect != ir::Dialect::kTflite) continue;
    const ops::OpEntry& e = ops::lookup(n);
    if (!e.supported() || e.state_inputs.empty()) continue;
    std::vector<int64_t> at;
    for (int slot : e.state_inputs) {
      const size_t s = static_cast<size_t>(slot);
      const ir::TensorId t = s < n.inputs.size() ? n.inputs[s] : ir::kNoTensor;
      if (!e.state_required && (t == ir::kNoTensor || !g.tensor(t).is_variable)) {
        at.push_back(-1);
        continue;
      }
      if (t == ir::kNoTensor)
        return invalid(n, "state input " + std::to_string(slot) +
                              " is missing: TFLite's kernel requires a variable tensor there");
      if (!g.tensor(t).is_variable)
        return invalid(n, "state input " + std::to_string(slot) + " (tensor '" + g.tensor(t).name +
                              "') is not a variable tensor, which TFLite's kernel requires");
      // Left as it is: the preflight says why.
      if (!variable_tensor_problem(g, t).empty()) {
        at.push_back(-1);
        continue;
      }
      ir::Tensor& v = g.tensor(t);
      if (v.is_const()) {
        // A buffer in the file (which TFLite's interpreter refuses): the
        // initial value.
        v.initial = std::move(*v.data);
        v.data.reset();
      } else {
        const uint64_t bytes =
            static_cast<uint64_t>(*ir::element_count(v.shape)) * ir::element_size(v.dtype);
        if (!g.created.fits(bytes)) {
          g.created.charge(bytes, "the initial value of '" + v.name + "'");
          return check_created_bytes(g);
        }
        v.initial = g.own(reset_bytes(v, static_cast<size_t>(bytes)), v.dtype,
                          "the initial value of '" + v.name + "'");
        if (auto st = check_created_bytes(g); !st) return st;
      }
      v.is_variable = false;
      ir::Tensor next;
      next.name = v.name + "/next";
      next.dtype = v.dtype;
      next.shape = v.shape;
      next.quant = v.quant;
      const ir::TensorId out = g.add_tensor(std::move(next));
      at.push_back(static_cast<int64_t>(g.node(k).outputs.size()));
      g.append_output(k, out);
      g.add_input(t);
      g.add_output(out);
      g.states.push_back({t, out, "variable_tensor", g.tensor(t).name});
    }
    g.info(k).attrs.set("state_outputs", std::move(at));
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
