// --quantization exact, 8-bit SOFTMAX: TFLite's kernel with the float table
// (XNNPACK takes no quantized softmax; docs/quantization-arithmetic.md §4.8):
// per row, e_j = table[max - x_j], their float32 sum in index order,
// inv = 1 / (sum * s_y), and each f32(e_j * inv) rounded to the output.
#include <cmath>
#include <limits>

#include "core/ops/exact.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::exact {
namespace {

using ir::DataType;
using ir::TensorId;

// The float32 sum of `e` along ONNX axis `axis`, added in index order as the
// kernel's loop adds (ONNX's ReduceSum may add in any order): a Scan whose
// body adds one slice to the running sum, which starts from the first slice
// (0 + e_0 is e_0, as the kernel starts from 0). `rows`: e's ONNX shape
// without `axis`.
TensorId running_sum(Writer& w, TensorId e, const ir::Shape& rows, int64_t axis) {
  LowerContext& ctx = w.ctx();
  const std::string prefix = w.node().name + "/running_sum";
  ir::Graph body;
  auto body_tensor = [&](const char* what) {
    ir::Tensor t;
    t.name = prefix + "/" + what;
    t.dtype = DataType::kFloat32;
    t.shape = rows;
    return body.add_tensor(std::move(t));
  };
  const TensorId sum_in = body_tensor("sum_in"), slice = body_tensor("slice"),
                 sum_out = body_tensor("sum_out");
  ir::Node add;
  add.dialect = ir::Dialect::kOnnx;
  add.op = "Add";
  add.name = prefix + "/add";
  add.inputs = {sum_in, slice};
  add.outputs = {sum_out};
  body.add_node(std::move(add));
  body.set_inputs({sum_in, slice});
  body.set_outputs({sum_out});

  auto axis_const = [&](const char* what, int64_t v) {
    return ctx.const_i64(prefix + "/" + what, {v});
  };
  const TensorId first_slice = w.temp(DataType::kFloat32, "first");
  w.emit("Slice",
         {e, axis_const("first_start", 0), axis_const("first_end", 1), axis_const("axis", axis)},
         first_slice, "first");
  const TensorId first = w.temp(DataType::kFloat32, "first_row");
  ir::Node& squeeze = w.emit("Squeeze", {first_slice}, first, "first_row");
  if (ctx.opset() >= 13)
    squeeze.inputs.push_back(axis_const("squeeze_axes", axis));
  else
    squeeze.attrs.set("axes", std::vector<int64_t>{axis});
  const TensorId rest = w.temp(DataType::kFloat32, "rest");
  w.emit("Slice",
         {e, axis_const("rest_start", 1),
          axis_const("rest_end", std::numeric_limits<int64_t>::max()), axis_const("axis2", axis)},
         rest, "rest");
  const TensorId sum = w.temp(DataType::kFloat32, "sum");
  ir::Node& scan = w.emit("Scan", {first, rest}, sum, "sum");
  scan.attrs.set("num_scan_inputs", int64_t{1});
  scan.attrs.set("scan_input_axes", std::vector<int64_t>{axis});
  scan.subgraphs.emplace_back("body", std::move(body));
  return sum;
}

Status lower_softmax_exact(LowerContext& ctx, const ir::Node& n) {
  hold_integers(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const Params px = params_of(x), py = params_of(ctx.tensor(n.outputs[0]));
  const int64_t axis = ir::onnx_axis(x.layout, static_cast<int>(x.rank()) - 1);
  const std::vector<int64_t> axes = {axis};
  Writer w(ctx, n);
  // The axes: an input from opset `input_from` on, an attribute before.
  auto set_axes = [&](ir::Node& node, int input_from, const char* what) {
    if (ctx.opset() >= input_from)
      node.inputs.push_back(ctx.const_i64(n.name + "/" + what + "_axes", axes));
    else
      node.attrs.set("axes", axes);
  };
  // The row's maximum, then each element's distance below it (0..255).
  Value max = w.integers(n.inputs[0]);
  max.id = w.temp(px.type, "max");
  ir::Node& reduce = w.emit("ReduceMax", {n.inputs[0]}, max.id, "max");
  reduce.attrs.set("keepdims", int64_t{1});
  set_axes(reduce, 18, "max");
  const Value distance = w.sub(max, w.integers(n.inputs[0]));
  const TensorId table = ctx.const_f32(
      n.name + "/exp_table", qmath::softmax_exp_table(px.scale, n.attrs.get_float("beta", 1.0f)),
      ir::Shape{256});
  const TensorId e = w.temp(DataType::kFloat32, "exp");
  w.emit("Gather", {table, w.tensor(distance, DataType::kInt32)}, e, "exp");

  // inv = f32(1 / f32(sum * s_y)), kept as a row for the broadcast.
  ir::Shape rows = x.onnx_shape();
  rows.erase(rows.begin() + axis);
  const TensorId sum = running_sum(w, e, rows, axis);
  const TensorId row = w.temp(DataType::kFloat32, "sum_row");
  ir::Node& unsqueeze = w.emit("Unsqueeze", {sum}, row, "sum_row");
  set_axes(unsqueeze, 13, "row");
  const TensorId scaled_sum = w.fmul(row, {py.scale}, {});
  const TensorId inv = w.temp(DataType::kFloat32, "inv");
  w.emit("Div", {ctx.const_scalar(n.name + "/one", DataType::kFloat32, 1.0), scaled_sum}, inv,
         "inv");
  const TensorId p = w.temp(DataType::kFloat32, "p");
  w.emit("Mul", {e, inv}, p, "p");

  // int8: RHAZ(p); uint8: (int) f32(p + 0.5f). Then the zero point, the clamp.
  // p is at most 1 / s_y, about 256 for the output scale TFLite requires.
  Value rounded;
  rounded.type = DataType::kFloat32;
  rounded.lo = 0;
  rounded.hi = 258;
  rounded.id =
      py.type == DataType::kInt8 ? w.round_half_away(p, DataType::kFloat32) : w.fadd(p, {0.5f}, {});
  const Value whole = w.cast(rounded, DataType::kInt32);
  w.store(w.clip(w.add(whole, w.constant(py.zero)), py.lo, py.hi), n.outputs[0]);
  return w.result();
}

Check check_softmax_exact(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_8bit(g, n)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!x.quantized_type || !y.quantized_type || !per_tensor(x) || !per_tensor(y) ||
      *x.quantized_type != *y.quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "input and output not quantized per tensor with one 8-bit type");
  if (x.rank() < 1) return refuse(ReasonCode::kShape, "a scalar input");
  // TFLite's Prepare requires it (TF_LITE_ENSURE_NEAR, 0.1%).
  if (std::fabs(params_of(y).scale * 256.0f - 1.0f) > 1e-3f)
    return refuse(ReasonCode::kQuantization,
                  "an output scale other than 1/256 (TFLite refuses it)");
  return std::nullopt;
}

}  // namespace

ExactForm softmax_table() { return {lower_softmax_exact, check_softmax_exact}; }

}  // namespace lite2onnx::ops::exact
