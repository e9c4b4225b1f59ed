// CONV_3D and CONV_3D_TRANSPOSE: Implicit ops on NDHWC data, which run as
// NCDHW (the layout class turns rank-5 activations channels-first as it turns
// NHWC ones into NCHW). Filters DHWIO / DHWOI become OIDHW / IODHW, both the
// permutation {4, 3, 0, 1, 2}, in the initializer (a run-time filter gets a
// Transpose). Padding as TFLite computes it: SAME puts the odd element at the
// end, explicit pads.
#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::conv {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

const Perm kDhwToOidhw = {4, 3, 0, 1, 2};

void read_conv3d_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_Conv3DOptions();
  a.set("padding", std::string(o && o->padding() == tflite::Padding::VALID ? "VALID" : "SAME"));
  a.set("strides",
        std::vector<int64_t>{o ? o->stride_d() : 1, o ? o->stride_h() : 1, o ? o->stride_w() : 1});
  a.set("dilations",
        std::vector<int64_t>{o ? o->dilation_d_factor() : 1, o ? o->dilation_h_factor() : 1,
                             o ? o->dilation_w_factor() : 1});
  store_activation(o, a);
}

bool transposed(const ir::Node& n) { return n.builtin == ir::builtin::kConv3dTranspose; }

// Data and filter slots: CONV_3D (data, filter, bias), CONV_3D_TRANSPOSE
// (output_shape, filter, data, bias).
size_t data_slot(const ir::Node& n) { return transposed(n) ? 2 : 0; }

Check check_conv3d(const ir::Graph& g, const ir::Node& n) {
  const size_t data = data_slot(n);
  if (n.outputs.size() != 1 || !has_input(g, n, data) || !has_input(g, n, 1))
    return refuse(ReasonCode::kOperands, "data or filter missing");
  if (auto r = require_rank(g, n, data, 5)) return r;
  if (auto r = require_rank(g, n, 1, 5)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[data]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  if (x.dtype != DataType::kFloat32 || w.dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "float32 data and filter only (TFLite's kernel)");
  if (!ir::static_shape(w)) return refuse(ReasonCode::kShape, "filter shape must be static");
  // The filter's input channels: DHWIO's 3 (CONV_3D), DHWOI's 4 (transpose).
  const int64_t channels = w.shape[transposed(n) ? 4 : 3];
  if (x.shape[4] >= 0 && x.shape[4] != channels)
    return refuse(ReasonCode::kOperands, "input channels differ from the filter's");
  for (int64_t v : n.attrs.get_ints("strides"))
    if (v < 1) return refuse(ReasonCode::kOperands, "strides must be positive");
  for (int64_t v : n.attrs.get_ints("dilations"))
    if (v < 1) return refuse(ReasonCode::kOperands, "dilation factors must be positive");
  if (transposed(n)) {
    if (auto r = require_const(g, n, 0, "output_shape")) {
      r->text += "; ONNX ConvTranspose cannot take a run-time output shape";
      return r;
    }
    auto out = ir::const_ints(g, n.inputs[0]);
    if (!out || out->size() != 5)
      return refuse(ReasonCode::kOperands, "output_shape needs 5 values");
    for (int d = 0; d < 3; ++d)
      if (x.shape[static_cast<size_t>(1 + d)] < 0)
        return refuse(ReasonCode::kShape, "spatial input sizes must be static");
  }
  return check_activation(g, n);
}

std::vector<TensorId> conv_inputs(LowerContext& ctx, const ir::Node& n) {
  std::vector<TensorId> in = {n.inputs[data_slot(n)], weight_in_layout(ctx, n, 1, kDhwToOidhw)};
  const size_t bias = transposed(n) ? 3 : 2;
  if (has_input(ctx.graph(), n, bias)) in.push_back(n.inputs[bias]);
  return in;
}

// The Conv or ConvTranspose node after its fused activation, with the
// kernel, strides and dilations both take.
Result<ir::Node*> emit_conv(LowerContext& ctx, const ir::Node& n, const char* op) {
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  ir::Node& c = ctx.emit(n, op, conv_inputs(ctx, n), {*y});
  c.attrs.set("kernel_shape", std::vector<int64_t>{w.shape[0], w.shape[1], w.shape[2]});
  c.attrs.set("strides", n.attrs.get_ints("strides"));
  c.attrs.set("dilations", n.attrs.get_ints("dilations"));
  return &c;
}

Status lower_conv3d(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  const auto strides = n.attrs.get_ints("strides"), dilations = n.attrs.get_ints("dilations");
  const bool same = n.attrs.get_string("padding") == "SAME";
  std::vector<int64_t> pads(6, 0);
  bool dynamic = false;
  for (size_t d = 0; d < 3; ++d) {
    const int64_t in = x.shape[1 + d], k = (w.shape[d] - 1) * dilations[d] + 1;
    if (!same) continue;
    if (in < 0) {
      dynamic = dynamic || strides[d] != 1;
      const int64_t total = k - 1;
      pads[d] = total / 2;
      pads[3 + d] = total - total / 2;
      continue;
    }
    const int64_t out = (in + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>((out - 1) * strides[d] + k - in, 0);
    pads[d] = total / 2;
    pads[3 + d] = total - total / 2;
  }
  auto c = emit_conv(ctx, n, "Conv");
  if (!c) return c.take_error();
  if (dynamic)
    (*c)->attrs.set("auto_pad", std::string("SAME_UPPER"));
  else
    (*c)->attrs.set("pads", pads);
  return ok_status();
}

// The output size from output_shape: SAME pads as the forward convolution
// from the output to the input would; what output_shape adds beyond the
// padded size is output_padding, what it lacks is cropped at the end.
Status lower_conv3d_transpose(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[2]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  const auto out_shape = *ir::const_ints(ctx.graph(), n.inputs[0]);
  const auto strides = n.attrs.get_ints("strides"), dilations = n.attrs.get_ints("dilations");
  const bool same = n.attrs.get_string("padding") == "SAME";
  std::vector<int64_t> pads(6, 0), output_padding(3, 0);
  for (size_t d = 0; d < 3; ++d) {
    const int64_t in = x.shape[1 + d], k = (w.shape[d] - 1) * dilations[d] + 1;
    const int64_t out = out_shape[1 + d];
    const int64_t full = (in - 1) * strides[d] + k;
    int64_t before = 0, after = 0;
    if (same) {
      const int64_t total = std::max<int64_t>(full - out, 0);
      before = total / 2;
      after = total - before;
    }
    const int64_t extra = out - (full - before - after);
    if (extra >= 0)
      output_padding[d] = extra;
    else
      after += -extra;
    if (output_padding[d] >= std::max(strides[d], dilations[d]))
      return ctx.error(n, "output_shape " + std::to_string(out) + " cannot come from input size " +
                              std::to_string(in) + " with stride " + std::to_string(strides[d]));
    pads[d] = before;
    pads[3 + d] = after;
  }
  auto c = emit_conv(ctx, n, "ConvTranspose");
  if (!c) return c.take_error();
  (*c)->attrs.set("pads", pads);
  if (output_padding != std::vector<int64_t>(3, 0))
    (*c)->attrs.set("output_padding", output_padding);
  return ok_status();
}

InferredShapes infer_conv3d(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto w = input_shape(g, n, 1);
  const auto strides = n.attrs.get_ints("strides"), dilations = n.attrs.get_ints("dilations");
  if (!x || !w || x->size() != 5 || w->size() != 5 || strides.size() != 3 ||
      dilations.size() != 3 || n.outputs.size() != 1)
    return std::nullopt;
  const bool same = n.attrs.get_string("padding") == "SAME";
  Shape s = {(*x)[0], 0, 0, 0, (*w)[4]};
  for (size_t d = 0; d < 3; ++d) {
    auto o = window_out((*x)[1 + d], (*w)[d], strides[d], dilations[d], same);
    if (!o) return std::nullopt;
    s[1 + d] = *o;
  }
  return one_shape(std::move(s));
}

InferredShapes infer_conv3d_transpose(const ir::Graph& g, const ir::Node& n) {
  auto shape = const_operand(g, n, 0, false, 1);
  if (!shape || shape->size() != 5 || !input_shape(g, n, 2) || n.outputs.size() != 1)
    return std::nullopt;
  for (int64_t d : *shape)
    if (!dim_value(d) || d < 0) return std::nullopt;
  return one_shape(Shape(shape->begin(), shape->end()));
}

}  // namespace

OpEntry conv3d() {
  return {.read = {.min_inputs = 2, .options = read_conv3d_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_conv3d,
          .check = check_conv3d,
          .lower = lower_conv3d,
          .doc = {.onnx = "Conv (3-D)",
                  .notes = "NDHWC runs as NCDHW; filter DHWIO -> OIDHW in the initializer; "
                           "dilations"}};
}

OpEntry conv3d_transpose() {
  return {.read = {.min_inputs = 3, .options = read_conv3d_options},
          .layout = {.kind = LayoutClass::kImplicit, .data_input = 2},
          .infer_shapes = infer_conv3d_transpose,
          .check = check_conv3d,
          .lower = lower_conv3d_transpose,
          .doc = {.onnx = "ConvTranspose (3-D)",
                  .notes = "filter DHWOI -> IODHW; explicit pads and output_padding from the "
                           "constant output_shape"}};
}

}  // namespace lite2onnx::ops::conv
