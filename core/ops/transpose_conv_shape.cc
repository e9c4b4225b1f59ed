// TRANSPOSE_CONV whose output_shape is computed at run time: TFLite resizes
// the output to it and computes the padding from it in Eval
// (ComputePaddingHeightWidth on the output size, transpose_conv.cc). ONNX's
// ConvTranspose takes its pads as attributes, so the full transposed
// convolution (no padding) is computed and the rows TFLite keeps are cut
// from it at run time.
#include "core/ops/common.h"

namespace lite2onnx::ops {

using ir::DataType;
using ir::TensorId;

void crop_transpose_conv(LowerContext& ctx, const ir::Node& n, TensorId full, TensorId out,
                         int64_t full_h, int64_t full_w, int64_t k_h, int64_t k_w,
                         const std::string& suffix) {
  const std::string base = n.name + "/" + suffix + "runtime_shape";
  auto name = [&](const char* what) { return base + "/" + what; };
  auto node = [&](const char* op, std::vector<TensorId> inputs, const char* what) {
    const TensorId t = ctx.temp(name(what), DataType::kInt64);
    ctx.emit(n, op, std::move(inputs), {t}, suffix + "runtime_shape_" + what);
    return t;
  };
  const TensorId shape = ctx.temp(name("shape"), DataType::kInt64);
  ctx.emit(n, "Cast", {n.inputs[0]}, {shape}, suffix + "runtime_shape_cast")
      .attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt64)});
  // The output's height and width (NHWC positions 1 and 2), as [2].
  const TensorId size = node(
      "Slice", {shape, ctx.const_i64(name("hw_start"), {1}), ctx.const_i64(name("hw_end"), {3})},
      "size");
  const Window win = read_window(n);
  const TensorId stride = ctx.const_i64(name("stride"), {win.stride_h, win.stride_w});
  const TensorId kernel = ctx.const_i64(name("kernel"), {k_h, k_w});
  const TensorId one = ctx.const_i64(name("one"), {1});
  const TensorId zero = ctx.const_i64(name("zero"), {0});
  // The convolution's output size over the transposed output: SAME
  // ceil(size / stride), VALID (size - k + stride) / stride (C division).
  const TensorId numerator =
      win.same ? node("Sub", {node("Add", {size, stride}, "size_plus_stride"), one}, "numerator")
               : node("Add", {node("Sub", {size, kernel}, "size_minus_k"), stride}, "numerator");
  const TensorId conv = node("Div", {numerator, stride}, "conv_size");
  // total = max((conv - 1) * stride + k - size, 0); the padding before is total / 2.
  const TensorId reach = node(
      "Add", {node("Mul", {node("Sub", {conv, one}, "conv_minus_one"), stride}, "span"), kernel},
      "reach");
  const TensorId total = node("Max", {node("Sub", {reach, size}, "excess"), zero}, "total");
  const TensorId before = node("Div", {total, ctx.const_i64(name("two"), {2})}, "before");
  const TensorId end = node("Add", {before, size}, "end");
  const TensorId cut = ctx.temp(name("cut"), ctx.tensor(full).dtype);
  ctx.emit(n, "Slice", {full, before, end, ctx.const_i64(name("axes"), {2, 3})}, {cut},
           suffix + "runtime_shape_cut");
  // Past the full convolution's extent the kernel's sums are zero: pad the end.
  const TensorId missing =
      node("Max", {node("Sub", {end, ctx.const_i64(name("full"), {full_h, full_w})}, "past"), zero},
           "missing");
  const TensorId pads = ctx.temp(name("pads"), DataType::kInt64);
  ctx.emit(n, "Concat", {ctx.const_i64(name("pads_head"), {0, 0, 0, 0, 0, 0}), missing}, {pads},
           suffix + "runtime_shape_pads")
      .attrs.set("axis", int64_t{0});
  ctx.emit(n, "Pad", {cut, pads}, {out}, suffix + "runtime_shape_pad");
}

}  // namespace lite2onnx::ops
