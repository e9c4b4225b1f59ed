// A few more ops: SIGN and RELU_0_TO_1 (Transparent), EMBEDDING_LOOKUP and
// REVERSE_SEQUENCE (Terminate), CUMSUM (Attribute: its constant axis follows
// the input layout) and L2_POOL_2D (Implicit: Mul + AveragePool + Sqrt).
#include <initializer_list>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::extra {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

// "" if input i exists and has one of the types.
Check check_type(const ir::Graph& g, const ir::Node& n, size_t i,
                 std::initializer_list<DataType> ok) {
  if (!has_input(g, n, i))
    return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  DataType t = g.tensor(n.inputs[i]).dtype;
  for (DataType o : ok)
    if (o == t) return {};
  std::string list;
  for (DataType o : ok) list += (list.empty() ? "" : ", ") + std::string(ir::to_string(o));
  return refuse(ReasonCode::kType, "input " + std::to_string(i) + " of type " +
                                       std::string(ir::to_string(t)) + " (supported: " + list +
                                       ")");
}

Check check_arity(const ir::Node& n, size_t inputs) {
  if (n.inputs.size() != inputs)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs");
  if (n.outputs.size() != 1) return refuse(ReasonCode::kOperands, "expects one output");
  return {};
}

// ---- SIGN, RELU_0_TO_1 ----------------------------------------------------------

Status lower_sign(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  ctx.emit(n, "Sign", {x}, {n.outputs[0]});
  return ok_status();
}

Status lower_relu_0_to_1(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId x = ctx.operand(n, 0, out_layout(g, n), out_rank(g, n));
  DataType type = g.tensor(n.outputs[0]).dtype;
  ctx.emit(
      n, "Clip",
      {x, ctx.const_scalar(n.name + "/min", type, 0), ctx.const_scalar(n.name + "/max", type, 1)},
      {n.outputs[0]});
  return ok_status();
}

// ---- EMBEDDING_LOOKUP -------------------------------------------------------------

Check check_embedding_lookup(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(n, 2)) return r;
  if (auto r = check_type(g, n, 0, {DataType::kInt32})) return r;
  if (auto r = check_type(g, n, 1, {DataType::kFloat32, DataType::kInt32})) {
    r->text += "; quantized (hybrid) tables need quantization support";
    return r;
  }
  if (g.tensor(n.inputs[0]).rank() != 1) return refuse(ReasonCode::kShape, "ids must be rank 1");
  if (g.tensor(n.inputs[1]).rank() < 1)
    return refuse(ReasonCode::kShape, "params must have rank >= 1");
  if (g.tensor(n.outputs[0]).dtype != g.tensor(n.inputs[1]).dtype)
    return refuse(ReasonCode::kType, "output type differs from the params type");
  return {};
}

Status lower_embedding_lookup(LowerContext& ctx, const ir::Node& n) {
  ir::Node& gt = ctx.emit(n, "Gather", {n.inputs[1], n.inputs[0]}, {n.outputs[0]});
  gt.attrs.set("axis", int64_t{0});
  return ok_status();
}

// EMBEDDING_LOOKUP: [ids, params[1:]...].
InferredShapes infer_embedding_lookup(const ir::Graph& g, const ir::Node& n) {
  auto ids = input_shape(g, n, 0);
  auto params = input_shape(g, n, 1);
  if (!ids || !params || ids->size() != 1 || params->size() < 2 || n.inputs.size() != 2 ||
      n.outputs.size() != 1 || g.tensor(n.inputs[0]).dtype != ir::DataType::kInt32)
    return std::nullopt;
  Shape s = *params;
  s[0] = (*ids)[0];
  return one_shape(std::move(s));
}

// ---- CUMSUM -----------------------------------------------------------------------

std::optional<int> cumsum_axis(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || !has_input(g, n, 1)) return std::nullopt;
  auto v = ir::const_ints(g, n.inputs[1]);
  if (!v || v->size() != 1) return std::nullopt;
  return ir::resolve_axis((*v)[0], g.tensor(n.inputs[0]).rank());
}

Check check_cumsum(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(n, 2)) return r;
  if (auto r = check_type(g, n, 0, {DataType::kFloat32, DataType::kInt32, DataType::kInt64}))
    return r;
  if (auto r = require_const(g, n, 1, "axis")) return r;
  if (g.tensor(n.inputs[0]).rank() < 1)
    return refuse(ReasonCode::kShape, "input must have rank >= 1");
  if (!cumsum_axis(g, n))
    return refuse(ReasonCode::kOperands, "axis must be one value in [-rank, rank)");
  return {};
}

Status lower_cumsum(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const int a = *cumsum_axis(g, n);
  const ir::Perm& p = g.tensor(n.inputs[0]).layout;
  TensorId axis = ctx.const_i64(n.name + "/axis", {int64_t{ir::onnx_axis(p, a)}}, ir::Shape{});
  ir::Node& c = ctx.emit(n, "CumSum", {n.inputs[0], axis}, {n.outputs[0]});
  c.attrs.set("exclusive", n.attrs.get_int("exclusive", 0));
  c.attrs.set("reverse", n.attrs.get_int("reverse", 0));
  return ok_status();
}

// ---- L2_POOL_2D -------------------------------------------------------------------

Check check_l2_pool(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4)) return r;
  if (auto r = check_type(g, n, 0, {DataType::kFloat32})) return r;
  if (n.attrs.get_int("filter_height") < 1 || n.attrs.get_int("filter_width") < 1)
    return refuse(ReasonCode::kOperands, "filter size must be positive");
  if (n.attrs.get_int("stride_h", 1) < 1 || n.attrs.get_int("stride_w", 1) < 1)
    return refuse(ReasonCode::kOperands, "strides must be positive");
  return check_activation(g, n);
}

// TFLite SAME padding puts the odd pixel at the end (ONNX SAME_UPPER); a
// dynamic size with stride > 1 is left to auto_pad.
void set_pool_window(ir::Node& out, const ir::Node& n, int64_t in_h, int64_t in_w) {
  const int64_t k[2] = {n.attrs.get_int("filter_height"), n.attrs.get_int("filter_width")};
  const int64_t s[2] = {n.attrs.get_int("stride_h", 1), n.attrs.get_int("stride_w", 1)};
  const int64_t in[2] = {in_h, in_w};
  out.attrs.set("kernel_shape", std::vector<int64_t>{k[0], k[1]});
  out.attrs.set("strides", std::vector<int64_t>{s[0], s[1]});
  if (n.attrs.get_string("padding") != "SAME") {
    out.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    return;
  }
  std::vector<int64_t> pads(4, 0);
  for (int d = 0; d < 2; ++d) {
    int64_t total = k[d] - 1;  // stride 1: independent of the size
    if (in[d] >= 0) {
      int64_t outs = (in[d] + s[d] - 1) / s[d];
      total = (outs - 1) * s[d] + k[d] - in[d];
      if (total < 0) total = 0;
    } else if (s[d] != 1) {
      out.attrs.set("auto_pad", std::string("SAME_UPPER"));
      return;
    }
    pads[static_cast<size_t>(d)] = total / 2;
    pads[static_cast<size_t>(d) + 2] = total - total / 2;
  }
  out.attrs.set("pads", pads);
}

Status lower_l2_pool(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t in_h = x.shape[1], in_w = x.shape[2];
  TensorId sq = ctx.temp_like(n.inputs[0], "square");
  ctx.emit(n, "Mul", {n.inputs[0], n.inputs[0]}, {sq}, "Mul");
  TensorId mean = ctx.temp_like(n.outputs[0], "mean_square");
  ir::Node& p = ctx.emit(n, "AveragePool", {sq}, {mean}, "AveragePool");
  set_pool_window(p, n, in_h, in_w);
  p.attrs.set("count_include_pad", int64_t{0});
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ctx.emit(n, "Sqrt", {mean}, {*y});
  return ok_status();
}

// ---- REVERSE_SEQUENCE -------------------------------------------------------------

Check check_reverse_sequence(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(n, 2)) return r;
  if (!has_input(g, n, 0)) return refuse(ReasonCode::kOperands, "input is missing");
  if (auto r = check_type(g, n, 1, {DataType::kInt32, DataType::kInt64})) return r;
  const size_t rank = g.tensor(n.inputs[0]).rank();
  if (rank < 2) return refuse(ReasonCode::kShape, "input must have rank >= 2");
  auto seq = ir::resolve_axis(n.attrs.get_int("seq_dim"), rank);
  auto batch = ir::resolve_axis(n.attrs.get_int("batch_dim"), rank);
  if (!seq || !batch) return refuse(ReasonCode::kOperands, "seq_dim or batch_dim out of range");
  if (!((*seq == 0 && *batch == 1) || (*seq == 1 && *batch == 0)))
    return refuse(ReasonCode::kNotExpressible,
                  "seq_dim " + std::to_string(*seq) + " with batch_dim " + std::to_string(*batch) +
                      ": ONNX ReverseSequence only takes batch/time axes 0 and 1");
  return {};
}

Status lower_reverse_sequence(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const size_t rank = g.tensor(n.inputs[0]).rank();
  const int seq = *ir::resolve_axis(n.attrs.get_int("seq_dim"), rank);
  const int batch = *ir::resolve_axis(n.attrs.get_int("batch_dim"), rank);
  TensorId lens = n.inputs[1];
  if (g.tensor(lens).dtype != DataType::kInt64) {
    TensorId cast = ctx.temp(n.name + "/seq_lengths_i64", DataType::kInt64);
    ir::Node& c = ctx.emit(n, "Cast", {lens}, {cast}, "Cast");
    c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
    lens = cast;
  }
  ir::Node& r = ctx.emit(n, "ReverseSequence", {n.inputs[0], lens}, {n.outputs[0]});
  r.attrs.set("time_axis", int64_t{seq});
  r.attrs.set("batch_axis", int64_t{batch});
  return ok_status();
}

Check check_sign(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(n, 1)) return r;
  return check_type(g, n, 0, {DataType::kFloat32, DataType::kInt32});
}

Check check_relu_0_to_1(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_arity(n, 1)) return r;
  return check_type(g, n, 0, {DataType::kFloat32});
}

void read_cumsum_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_CumsumOptions();
  a.set("exclusive", int64_t{o && o->exclusive() ? 1 : 0});
  a.set("reverse", int64_t{o && o->reverse() ? 1 : 0});
}

void read_reverse_sequence_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ReverseSequenceOptions();
  a.set("seq_dim", int64_t{o ? o->seq_dim() : 0});
  a.set("batch_dim", int64_t{o ? o->batch_dim() : 0});
}

}  // namespace

OpEntry sign() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_sign,
          .lower = lower_sign,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Sign", .dtypes = "float32, int32"}};
}

OpEntry relu_0_to_1() {
  return {.layout = {.kind = LayoutClass::kTransparent},
          .check = check_relu_0_to_1,
          .lower = lower_relu_0_to_1,
          .doc = {.onnx = "Clip"}};
}

OpEntry embedding_lookup() {
  return {.read = {.min_inputs = 2},
          .infer_shapes = infer_embedding_lookup,
          .check = check_embedding_lookup,
          .lower = lower_embedding_lookup,
          .doc = {.onnx = "Gather (axis 0)", .dtypes = "float32, int32", .notes = "int32 ids"}};
}

OpEntry cumsum() {
  return {.read = {.min_inputs = 2, .options = read_cumsum_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_same_as_input,
          .check = check_cumsum,
          .lower = lower_cumsum,
          .doc = {.onnx = "CumSum",
                  .dtypes = "float32, int32, int64",
                  .notes = "constant axis, mapped through the input layout"}};
}

OpEntry l2_pool2d() {
  return {.read = {.options = read_pool_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_pool2d,
          .check = check_l2_pool,
          .lower = lower_l2_pool,
          .doc = {.onnx = "Mul + AveragePool + Sqrt",
                  .notes = "sqrt of the mean square over in-bounds elements (padding excluded)"}};
}

OpEntry reverse_sequence() {
  return {.read = {.min_inputs = 2, .options = read_reverse_sequence_options},
          .infer_shapes = infer_same_as_input,
          .check = check_reverse_sequence,
          .lower = lower_reverse_sequence,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "ReverseSequence (+ Cast)",
                  .dtypes = "float32, int32, int64",
                  .notes = "seq_dim/batch_dim must be 0/1 or 1/0 (ONNX limit)"}};
}

}  // namespace lite2onnx::ops::extra
