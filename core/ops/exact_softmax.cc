// --quantization exact, SOFTMAX of an 8-bit input (to the same type or to
// int16): TFLite's kernel with the float table (XNNPACK takes no quantized
// softmax; docs/quantization-arithmetic.md §4.8):
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

// The float32 sum of `e` along ONNX axis `axis` (kept, of size 1), added in
// index order as the kernel's loop adds (ONNX's ReduceSum may add in any
// order): the last of CumSum's running sums, which ONNX Runtime computes
// slice by slice in index order (its CumSum: each output slice is the
// previous one plus the input's). A Scan adding one slice per iteration
// computed the same, 50 times slower on a 1001-class row.
TensorId in_order_sum(Writer& w, TensorId e, int64_t axis) {
  LowerContext& ctx = w.ctx();
  const std::string prefix = w.node().name + "/in_order_sum";
  const TensorId running = w.temp(DataType::kFloat32, "running_sums");
  w.emit("CumSum",
         {e, ctx.const_scalar(prefix + "/axis", DataType::kInt64, static_cast<double>(axis))},
         running, "running_sums");
  const TensorId last = w.temp(DataType::kFloat32, "sum_row");
  w.emit("Slice",
         {running, ctx.const_i64(prefix + "/start", {-1}),
          ctx.const_i64(prefix + "/end", {std::numeric_limits<int64_t>::max()}),
          ctx.const_i64(prefix + "/slice_axis", {axis})},
         last, "sum_row");
  return last;
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
  const TensorId scaled_sum = w.fmul(in_order_sum(w, e, axis), {py.scale}, {});
  const TensorId inv = w.temp(DataType::kFloat32, "inv");
  w.emit("Div", {ctx.const_scalar(n.name + "/one", DataType::kFloat32, 1.0), scaled_sum}, inv,
         "inv");
  const TensorId p = w.temp(DataType::kFloat32, "p");
  w.emit("Mul", {e, inv}, p, "p");

  // uint8 output: (int) f32(p + 0.5f); int8 and int16: RHAZ(p) (std::round).
  // Then the zero point, the clamp. p is at most about 1 / s_y (the check
  // keeps it far below 2^31).
  Value rounded;
  rounded.type = DataType::kFloat32;
  rounded.lo = 0;
  rounded.hi = static_cast<int64_t>(std::ceil(1.01 / static_cast<double>(py.scale))) + 1;
  rounded.id = py.type == DataType::kUInt8 ? w.fadd(p, {0.5f}, {})
                                           : w.round_half_away(p, DataType::kFloat32);
  const Value whole = w.cast(rounded, DataType::kInt32);
  w.store(w.clip(w.add(whole, w.constant(py.zero)), py.lo, py.hi), n.outputs[0]);
  return w.result();
}

// 8-bit input; the output of the input's type with TFLite's fixed scale, or
// int16 (optimized_ops::Softmax<In, int16_t>: any parameters, which its
// Prepare does not check).
Check check_softmax_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const bool eight_bit =
      x.quantized_type == DataType::kInt8 || x.quantized_type == DataType::kUInt8;
  const bool to_int16 = y.quantized_type == DataType::kInt16;
  if (!eight_bit || !per_tensor(x) || !y.quantized_type || !per_tensor(y) ||
      (*y.quantized_type != *x.quantized_type && !to_int16))
    return refuse(ReasonCode::kQuantization,
                  "input and output not quantized per tensor as 8-bit -> the same type or int16");
  if (x.rank() < 1) return refuse(ReasonCode::kShape, "a scalar input");
  const float sy = params_of(y).scale;
  if (to_int16) {
    if (!(sy > 0) || !(sy >= 1.0f / (1 << 24)))
      return refuse(ReasonCode::kQuantization, "an int16 output scale below 2^-24");
    return std::nullopt;
  }
  // TFLite's Prepare requires it (TF_LITE_ENSURE_NEAR, 0.1%).
  if (std::fabs(sy * 256.0f - 1.0f) > 1e-3f)
    return refuse(ReasonCode::kQuantization,
                  "an output scale other than 1/256 (TFLite refuses it)");
  return std::nullopt;
}

}  // namespace

// In auto too: ONNX Runtime fuses the Q/DQ form into QLinearSoftmax, whose
// uint8 result wraps where a probability rounds to 1 (256/256 -> 0; measured
// on a softmax over one channel, ONNX Runtime 1.30, optimization level all:
// every element 0 where TFLite and the unfused graph give 255).
ExactForm softmax_table() {
  return {lower_softmax_exact, check_softmax_exact, InQdqGraphs::kQuantized};
}

}  // namespace lite2onnx::ops::exact
