// Convolutions and pools: the Implicit ops that turn NHWC into NCHW.
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::conv {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

const Perm kOhwiToOihw = {0, 3, 1, 2};
const Perm kOhwiToIohw = {3, 0, 1, 2};  // TransposeConv weights; also 1HWC -> C1HW

Check check_window(const ir::Node& n) {
  Window w = read_window(n);
  if (w.stride_h < 1 || w.stride_w < 1)
    return refuse(ReasonCode::kOperands, "strides must be positive (got " +
                                             std::to_string(w.stride_h) + "x" +
                                             std::to_string(w.stride_w) + ")");
  if (w.dilation_h < 1 || w.dilation_w < 1)
    return refuse(ReasonCode::kOperands, "dilation factors must be positive");
  return {};
}

// Sets strides, dilations and explicit pads (TFLite SAME puts the odd pixel at
// the end, as ONNX SAME_UPPER does). Dynamic spatial sizes use auto_pad.
void set_window(ir::Node& out, const Window& w, int64_t in_h, int64_t in_w, int64_t k_h,
                int64_t k_w, bool with_dilation) {
  out.attrs.set("kernel_shape", std::vector<int64_t>{k_h, k_w});
  out.attrs.set("strides", std::vector<int64_t>{w.stride_h, w.stride_w});
  if (with_dilation) out.attrs.set("dilations", std::vector<int64_t>{w.dilation_h, w.dilation_w});
  if (!w.same) {
    out.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    return;
  }
  // At stride 1 the SAME padding does not depend on the input size; a dynamic
  // size with a larger stride needs auto_pad (which ONNX Runtime refuses
  // together with dilations, so dilated convs keep explicit pads).
  if ((in_h < 0 && w.stride_h != 1) || (in_w < 0 && w.stride_w != 1)) {
    out.attrs.set("auto_pad", std::string("SAME_UPPER"));
    return;
  }
  auto total = [](int64_t in, int64_t k, int64_t s, int64_t d) {
    if (in < 0) return (k - 1) * d;  // stride 1
    int64_t out = (in + s - 1) / s;
    int64_t need = (out - 1) * s + (k - 1) * d + 1 - in;
    return need > 0 ? need : 0;
  };
  int64_t th = total(in_h, k_h, w.stride_h, with_dilation ? w.dilation_h : 1);
  int64_t tw = total(in_w, k_w, w.stride_w, with_dilation ? w.dilation_w : 1);
  out.attrs.set("pads", std::vector<int64_t>{th / 2, tw / 2, th - th / 2, tw - tw / 2});
}

// Conv2DOptions and DepthwiseConv2DOptions share these fields.
template <class Options>
void read_conv_like(const Options* o, ir::Attributes& a) {
  a.set("padding", std::string(o && o->padding() == tflite::Padding::VALID ? "VALID" : "SAME"));
  a.set("stride_h", int64_t{o ? o->stride_h() : 1});
  a.set("stride_w", int64_t{o ? o->stride_w() : 1});
  a.set("dilation_h_factor", int64_t{o ? o->dilation_h_factor() : 1});
  a.set("dilation_w_factor", int64_t{o ? o->dilation_w_factor() : 1});
  store_activation(o, a);
}

void read_conv_options(const tflite::Operator& op, ir::Attributes& a) {
  read_conv_like(op.builtin_options_as_Conv2DOptions(), a);
}

void read_depthwise_options(const tflite::Operator& op, ir::Attributes& a) {
  read_conv_like(op.builtin_options_as_DepthwiseConv2DOptions(), a);
}

void read_transpose_conv_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_TransposeConvOptions();
  a.set("padding", std::string(o && o->padding() == tflite::Padding::VALID ? "VALID" : "SAME"));
  a.set("stride_h", int64_t{o ? o->stride_h() : 1});
  a.set("stride_w", int64_t{o ? o->stride_w() : 1});
  store_activation(o, a);
}

void read_pool_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_Pool2DOptions();
  a.set("padding", std::string(o && o->padding() == tflite::Padding::VALID ? "VALID" : "SAME"));
  a.set("stride_h", int64_t{o ? o->stride_h() : 1});
  a.set("stride_w", int64_t{o ? o->stride_w() : 1});
  a.set("filter_height", int64_t{o ? o->filter_height() : 1});
  a.set("filter_width", int64_t{o ? o->filter_width() : 1});
  store_activation(o, a);
}

Check check_conv_common(const ir::Graph& g, const ir::Node& n, size_t data, size_t weight) {
  if (auto r = require_rank(g, n, data, 4)) return r;
  if (auto r = require_rank(g, n, weight, 4)) return r;
  if (g.tensor(n.inputs[weight]).dtype != g.tensor(n.inputs[data]).dtype)
    return refuse(ReasonCode::kQuantization,
                  "hybrid (integer filter, float input) convolution needs quantization support");
  for (size_t a = 1; a < 4; ++a)
    if (g.tensor(n.inputs[weight]).shape[a] < 0)
      return refuse(ReasonCode::kShape, "filter shape must be static");
  if (auto r = check_window(n)) return r;
  return check_activation(g, n);
}

// The convolution's group count: the input channels per filter channel.
Result<int64_t> conv_group(LowerContext& ctx, const ir::Node& n, bool depthwise) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  const int64_t cin = x.shape[3];
  if (depthwise) {
    if (cin <= 0 || w.shape[3] % cin != 0)
      return ctx.error(n, "depthwise filter channels " + std::to_string(w.shape[3]) +
                              " are not a multiple of the input channels " + std::to_string(cin));
    return cin;
  }
  const int64_t per_group = w.shape[3];
  if (per_group <= 0 || cin < 0 || cin % per_group != 0)
    return ctx.error(n, "input channels " + std::to_string(cin) +
                            " are not a multiple of the filter's input channels " +
                            std::to_string(per_group));
  return cin / per_group;
}

Status lower_conv(LowerContext& ctx, const ir::Node& n, bool depthwise) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  auto group = conv_group(ctx, n, depthwise);
  if (!group) return group.take_error();
  TensorId wt = weight_in_layout(ctx, n, 1, depthwise ? kOhwiToIohw : kOhwiToOihw);
  std::vector<TensorId> inputs = {n.inputs[0], wt};
  if (has_input(g, n, 2)) inputs.push_back(n.inputs[2]);
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ir::Node& c = ctx.emit(n, "Conv", inputs, {*y});
  set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
  c.attrs.set("group", *group);
  return ok_status();
}

// --quantization exact: ConvInteger accumulates exactly in int32 (padding
// adds nothing: it pads with the input's zero point), then the bias and the
// requantization of the kernel LiteRT.js runs (exact.h, finish_linear).
Status lower_conv_exact(LowerContext& ctx, const ir::Node& n, bool depthwise) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  auto group = conv_group(ctx, n, depthwise);
  if (!group) return group.take_error();
  exact::Writer out(ctx, n);
  std::vector<TensorId> inputs = {
      n.inputs[0], weight_in_layout(ctx, n, 1, depthwise ? kOhwiToIohw : kOhwiToOihw)};
  for (TensorId z : exact::linear_zero_points(out, n, 0, 1)) inputs.push_back(z);
  const exact::Value acc = out.accumulator();
  ir::Node& c = out.emit("ConvInteger", inputs, acc.id, "accumulator");
  set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
  c.attrs.set("group", *group);
  const int64_t channels = ctx.tensor(n.outputs[0]).shape[3];
  out.store(exact::finish_linear(out, acc,
                                 depthwise ? exact::LinearOp::kDepthwise : exact::LinearOp::kConv,
                                 {1, channels, 1, 1}),
            n.outputs[0]);
  return out.result();
}

Status lower_transpose_conv(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  auto out_shape = ir::const_ints(g, n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& x = g.tensor(n.inputs[2]);
  if (!out_shape || out_shape->size() != 4)
    return ctx.error(n, "output_shape must be a constant of 4 values");
  Window win = read_window(n);
  std::vector<int64_t> pads(4, 0), output_padding(2, 0);
  int64_t strides[2] = {win.stride_h, win.stride_w};
  for (int d = 0; d < 2; ++d) {
    int64_t in = x.shape[1 + d], k = w.shape[1 + d], out = (*out_shape)[1 + d];
    if (in < 0) return ctx.error(n, "spatial input size must be static");
    int64_t full = (in - 1) * strides[d] + k;  // output size without padding
    int64_t before = 0, after = 0;
    if (win.same) {
      int64_t total = full - out;
      if (total < 0) total = 0;
      before = total / 2;
      after = total - before;
    }
    int64_t extra = out - (full - before - after);
    if (extra >= 0) {
      output_padding[d] = extra;
    } else {
      after += -extra;  // TFLite crops the end when output_shape is smaller
    }
    if (output_padding[d] >= strides[d])
      return ctx.error(n, "output_shape " + std::to_string(out) + " cannot come from input size " +
                              std::to_string(in) + " with stride " + std::to_string(strides[d]) +
                              " and filter " + std::to_string(k));
    pads[d] = before;
    pads[2 + d] = after;
  }
  TensorId wt = weight_in_layout(ctx, n, 1, kOhwiToIohw);
  std::vector<TensorId> inputs = {n.inputs[2], wt};
  if (has_input(g, n, 3)) inputs.push_back(n.inputs[3]);
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ir::Node& c = ctx.emit(n, "ConvTranspose", inputs, {*y});
  c.attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  c.attrs.set("strides", std::vector<int64_t>{win.stride_h, win.stride_w});
  c.attrs.set("pads", pads);
  if (output_padding[0] || output_padding[1]) c.attrs.set("output_padding", output_padding);
  return ok_status();
}

// MediaPipe's Convolution2DTransposeBias (inputs: data, OHWI weights, bias):
// its options are a TfLiteTransposeConvParams struct, and it computes its
// output size itself: SAME drops max(0, k - (in - 1) % stride - 1) pixels,
// the smaller half before.
const CustomField kTransposeConvParams[] = {
    {"padding", CustomField::Kind::kInt, true, 0, 1, 2},  // kTfLitePaddingSame, kTfLitePaddingValid
    {"stride_width", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
    {"stride_height", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
};

// Pixels MediaPipe's kernel drops from a spatial dimension of size `in`.
int64_t transpose_conv_bias_crop(int64_t in, int64_t k, int64_t stride, bool same) {
  return same ? std::max<int64_t>(0, k - (in - 1) % stride - 1) : 0;
}

// The fields MediaPipe's structs start with, as the builtin ops' attributes.
void set_padding_and_strides(const ir::Attributes& raw, ir::Attributes& a) {
  a.set("padding", std::string(raw.get_int("padding") == 2 ? "VALID" : "SAME"));
  a.set("stride_h", raw.get_int("stride_height"));
  a.set("stride_w", raw.get_int("stride_width"));
}

Status read_transpose_conv_params(std::span<const uint8_t> bytes, ir::Attributes& a) {
  ir::Attributes raw;
  if (auto st = read_struct_fields(bytes, kTransposeConvParams, raw); !st) return st;
  set_padding_and_strides(raw, a);
  return ok_status();
}

Status lower_transpose_conv_bias(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const Window win = read_window(n);
  const int64_t strides[2] = {win.stride_h, win.stride_w};
  std::vector<int64_t> pads(4, 0);
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x.shape[1 + d], k = w.shape[1 + d];
    if (in < 1) return ctx.error(n, "spatial input size must be static");
    const int64_t total = transpose_conv_bias_crop(in, k, strides[d], win.same);
    pads[d] = total / 2;
    pads[2 + d] = total - total / 2;
  }
  TensorId wt = weight_in_layout(ctx, n, 1, kOhwiToIohw);
  ir::Node& c = ctx.emit(n, "ConvTranspose", {n.inputs[0], wt, n.inputs[2]}, {n.outputs[0]});
  c.attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  c.attrs.set("strides", std::vector<int64_t>{win.stride_h, win.stride_w});
  c.attrs.set("pads", pads);
  return ok_status();
}

Check check_transpose_conv_bias(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 3 || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects 3 inputs (data, weights, bias) and 1 output");
  if (auto r = check_conv_common(g, n, 0, 1)) return r;
  if (auto r = require_const(g, n, 1, "weights")) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& b = g.tensor(n.inputs[2]);
  if (x.dtype != ir::DataType::kFloat32 || x.quantized_type)
    return refuse(ReasonCode::kType, "MediaPipe's kernel takes float32 only");
  if (w.shape[3] != x.shape[3])
    return refuse(ReasonCode::kOperands, "weights " + ir::to_string(w.shape) +
                                             " do not match input channels " +
                                             std::to_string(x.shape[3]));
  if (!b.has_rank || b.rank() != 1 || b.shape[0] != w.shape[0])
    return refuse(ReasonCode::kShape, "bias must be [" + std::to_string(w.shape[0]) + "]");
  return {};
}

InferredShapes infer_transpose_conv_bias(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 3 || n.outputs.size() != 1) return std::nullopt;
  auto x = ir::static_shape(g.tensor(n.inputs[0]));
  auto w = ir::static_shape(g.tensor(n.inputs[1]));
  if (!x || !w || x->size() != 4 || w->size() != 4) return std::nullopt;
  const Window win = read_window(n);
  if (win.stride_h < 1 || win.stride_w < 1) return std::nullopt;
  ir::Shape out = {(*x)[0], 0, 0, (*w)[0]};
  const int64_t strides[2] = {win.stride_h, win.stride_w};
  for (int d = 0; d < 2; ++d) {
    const int64_t in = (*x)[1 + d], k = (*w)[1 + d];
    if (in < 1 || k < 1 || in > (int64_t{1} << 24) || k > (int64_t{1} << 16)) return std::nullopt;
    out[1 + d] = strides[d] * (in - 1) + k - transpose_conv_bias_crop(in, k, strides[d], win.same);
  }
  return std::vector<ir::Shape>{out};
}

Status lower_pool(LowerContext& ctx, const ir::Node& n, const char* op) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ir::Node& p = ctx.emit(n, op, {n.inputs[0]}, {*y});
  set_window(p, read_window(n), x.shape[1], x.shape[2], n.attrs.get_int("filter_height"),
             n.attrs.get_int("filter_width"), false);
  return ok_status();
}

Check check_pool(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4)) return r;
  if (n.attrs.get_int("filter_height") < 1 || n.attrs.get_int("filter_width") < 1)
    return refuse(ReasonCode::kOperands, "filter size must be positive");
  if (auto r = check_window(n)) return r;
  return check_activation(g, n);
}

// ---- MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D -------------------------

// TfLitePoolParams as MediaPipe's pooling ops keep it in custom_options:
// padding (1 SAME, 2 VALID), strides, filter size, activation (then the
// padding TFLite computes, not read).
const CustomField kPoolParams[] = {
    {"padding", CustomField::Kind::kInt, true, 0, 1, 2},
    {"stride_width", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
    {"stride_height", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
    {"filter_width", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
    {"filter_height", CustomField::Kind::kInt, true, 0, 1, 1 << 16},
    {"activation", CustomField::Kind::kInt, true, 0, 0, 6},  // TfLiteFusedActivation
};

Status read_mediapipe_pool_params(std::span<const uint8_t> bytes, ir::Attributes& a) {
  ir::Attributes raw;
  if (auto st = read_struct_fields(bytes, kPoolParams, raw); !st) return st;
  set_padding_and_strides(raw, a);
  a.set("filter_height", raw.get_int("filter_height"));
  a.set("filter_width", raw.get_int("filter_width"));
  // The kernels clamp to CalculateActivationRange: RELU, RELU_N1_TO_1 and
  // RELU6 clamp, every other activation (tanh, sigmoid) is no clamp at all.
  const int64_t act = raw.get_int("activation");
  a.set("fused_activation_function",
        std::string(act >= 1 && act <= 3 ? activation_name(static_cast<int>(act)) : "NONE"));
  return ok_status();
}

// Per-row and per-column constants are made from the spatial sizes: far
// beyond any image, and small enough that no product overflows.
constexpr int64_t kMaxSpatial = int64_t{1} << 20;

// Input i: a float32 NHWC tensor of static shape.
Check check_mediapipe_spatial(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (auto r = require_rank(g, n, i, 4)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[i]);
  if (x.dtype != ir::DataType::kFloat32 || x.quantized_type)
    return refuse(ReasonCode::kType, "MediaPipe's kernel takes float32 only");
  if (x.shape[1] > kMaxSpatial || x.shape[2] > kMaxSpatial)
    return refuse(ReasonCode::kLimit, "spatial size " + ir::to_string(x.shape) + " beyond " +
                                          std::to_string(kMaxSpatial));
  return {};
}

Check check_pool_argmax(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 1 || n.outputs.size() != 2)
    return refuse(ReasonCode::kOperands, "expects 1 input and 2 outputs (values, indices)");
  if (auto r = check_mediapipe_spatial(g, n, 0)) return r;
  return check_pool(g, n);
}

// ONNX MaxPool's Indices count over the whole NCHW input; MediaPipe's output
// is the position inside the window, y * filter_width + x, as a float plus
// 0.1 (so that a cast back truncates to it). Both take the first maximum in
// row-major order on ties.
Status lower_pool_argmax(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t h = x.shape[1], w = x.shape[2];
  const int64_t fw = n.attrs.get_int("filter_width");
  const Window win = read_window(n);
  auto pooled = ctx.fused_activation(n, n.outputs[0]);
  if (!pooled) return pooled.take_error();
  TensorId flat = ctx.temp(n.name + "/indices", ir::DataType::kInt64);
  ir::Node& p = ctx.emit(n, "MaxPool", {n.inputs[0]}, {*pooled, flat});
  set_window(p, win, h, w, n.attrs.get_int("filter_height"), fw, false);
  // Window origins: out * stride - pad before, per output row and column.
  const std::vector<int64_t> pads = p.attrs.get_ints("pads");
  const int64_t oh = y.shape[1], ow = y.shape[2];
  std::vector<int64_t> row_origin(static_cast<size_t>(oh)), col_origin(static_cast<size_t>(ow));
  for (int64_t i = 0; i < oh; ++i)
    row_origin[static_cast<size_t>(i)] = (i * win.stride_h - pads[0]) * fw;
  for (int64_t j = 0; j < ow; ++j) col_origin[static_cast<size_t>(j)] = j * win.stride_w - pads[1];
  NodeBuilder b(ctx, n);
  const DataType i64 = DataType::kInt64;
  TensorId plane = b.add("Mod", {flat, b.ints({h * w})}, i64);  // y * W + x in the plane
  TensorId row = b.add("Div", {plane, b.ints({w})}, i64);
  TensorId col = b.add("Mod", {plane, b.ints({w})}, i64);
  TensorId local = b.add("Add", {b.add("Mul", {row, b.ints({fw})}, i64), col}, i64);
  local = b.add("Sub", {local, ctx.const_i64(n.name + "/row_origin", row_origin, ir::Shape{oh, 1})},
                i64);
  local = b.add("Sub", {local, ctx.const_i64(n.name + "/col_origin", col_origin, ir::Shape{1, ow})},
                i64);
  b.into("Add", {b.cast(local, DataType::kFloat32), b.scalar(DataType::kFloat32, 0.1)},
         {n.outputs[1]});
  return ok_status();
}

InferredShapes infer_pool_argmax(const ir::Graph& g, const ir::Node& n) {
  auto shapes = infer_pool2d(g, n);
  if (!shapes || shapes->size() != 1 || n.outputs.size() != 2) return std::nullopt;
  shapes->push_back(shapes->front());
  return shapes;
}

// Runs in NCHW like the pool that made its indices: values and indices both.
std::optional<LayoutPlan> propagate_unpool(const ir::Graph& g, const ir::Node& n,
                                           std::span<const Perm>) {
  LayoutPlan plan;
  for (TensorId t : n.inputs)
    plan.inputs.push_back(g.valid(t) && !g.tensor(t).is_const() ? ir::channels_first(4) : Perm{});
  plan.outputs.assign(n.outputs.size(), ir::channels_first(4));
  return plan;
}

Check check_unpool(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects 2 inputs (values, indices) and 1 output");
  for (size_t i = 0; i < 2; ++i)
    if (auto r = check_mediapipe_spatial(g, n, i)) return r;
  if (g.tensor(n.inputs[0]).shape != g.tensor(n.inputs[1]).shape)
    return refuse(ReasonCode::kShape,
                  "values " + ir::to_string(g.tensor(n.inputs[0]).shape) + " and indices " +
                      ir::to_string(g.tensor(n.inputs[1]).shape) + " differ in shape");
  if (auto r = check_window(n)) return r;
  const int64_t fh = n.attrs.get_int("filter_height"), fw = n.attrs.get_int("filter_width");
  if (fh < 1 || fw < 1) return refuse(ReasonCode::kOperands, "filter size must be positive");
  const ir::Shape& s = g.tensor(n.inputs[0]).shape;
  if (static_cast<double>(s[0]) * static_cast<double>(s[1] * fh) * static_cast<double>(s[2] * fw) *
          static_cast<double>(s[3]) >
      static_cast<double>(int64_t{1} << 40))
    return refuse(ReasonCode::kLimit, "the output of " + ir::to_string(s) + " x " +
                                          std::to_string(fh) + "x" + std::to_string(fw) +
                                          " has more than 2^40 elements");
  return {};
}

// MediaPipe's output is input size x filter size; the padding is what
// ComputePadding gives for pooling that output back to the input.
int64_t unpool_pad(int64_t in, int64_t k, int64_t stride) {
  return std::max<int64_t>(((in - 1) * stride + k - in * k) / 2, 0);
}

// Each value goes to its window's origin plus its index (y * filter_width +
// x): ScatterElements into zeros, in the kernel's order (later ones win).
// An index pointing outside the output is an error in ONNX Runtime (the
// kernel writes out of bounds).
Status lower_unpool(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t h = x.shape[1], w = x.shape[2];
  const int64_t fh = n.attrs.get_int("filter_height"), fw = n.attrs.get_int("filter_width");
  const Window win = read_window(n);
  const int64_t oh = h * fh, ow = w * fw;
  const int64_t pad_h = unpool_pad(h, fh, win.stride_h), pad_w = unpool_pad(w, fw, win.stride_w);
  std::vector<int64_t> row_origin(static_cast<size_t>(h)), col_origin(static_cast<size_t>(w));
  for (int64_t i = 0; i < h; ++i) row_origin[static_cast<size_t>(i)] = i * win.stride_h - pad_h;
  for (int64_t j = 0; j < w; ++j) col_origin[static_cast<size_t>(j)] = j * win.stride_w - pad_w;
  NodeBuilder b(ctx, n);
  const DataType i64 = DataType::kInt64, f32 = DataType::kFloat32;
  TensorId index = b.cast(n.inputs[1], i64);  // truncates, as the kernel's int conversion
  TensorId out_row = b.add("Add",
                           {b.add("Div", {index, b.ints({fw})}, i64),
                            ctx.const_i64(n.name + "/row_origin", row_origin, ir::Shape{h, 1})},
                           i64);
  TensorId out_col = b.add("Add",
                           {b.add("Mod", {index, b.ints({fw})}, i64),
                            ctx.const_i64(n.name + "/col_origin", col_origin, ir::Shape{1, w})},
                           i64);
  TensorId target = b.add("Add", {b.add("Mul", {out_row, b.ints({ow})}, i64), out_col}, i64);
  TensorId plane_shape = b.ints({0, 0, -1});
  TensorId batch_channels = b.slice(b.add("Shape", {n.inputs[0]}, i64), 0, 0, 2, i64);
  TensorId zeros_shape =
      b.add("Concat", {batch_channels, b.ints({oh * ow})}, i64, {{"axis", int64_t{0}}});
  TensorId zeros = b.add("Expand", {b.scalar(f32, 0), zeros_shape}, f32);
  TensorId scattered = b.add("ScatterElements",
                             {zeros, b.add("Reshape", {target, plane_shape}, i64),
                              b.add("Reshape", {n.inputs[0], plane_shape}, f32)},
                             f32, {{"axis", int64_t{2}}});
  b.into("Reshape", {scattered, b.ints({0, 0, oh, ow})}, {n.outputs[0]});
  return ok_status();
}

InferredShapes infer_unpool(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || n.outputs.size() != 1) return std::nullopt;
  auto x = ir::static_shape(g.tensor(n.inputs[0]));
  const int64_t fh = n.attrs.get_int("filter_height"), fw = n.attrs.get_int("filter_width");
  if (!x || x->size() != 4 || fh < 1 || fw < 1 || (*x)[1] > kMaxSpatial || (*x)[2] > kMaxSpatial)
    return std::nullopt;
  return std::vector<ir::Shape>{{(*x)[0], (*x)[1] * fh, (*x)[2] * fw, (*x)[3]}};
}

Check check_conv(const ir::Graph& g, const ir::Node& n) { return check_conv_common(g, n, 0, 1); }
Check check_transpose_conv(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 0, "output_shape")) {
    r->text += "; ONNX ConvTranspose cannot take a run-time output shape";
    return r;
  }
  return check_conv_common(g, n, 2, 1);
}
Status lower_conv2d(LowerContext& ctx, const ir::Node& n) { return lower_conv(ctx, n, false); }
Status lower_depthwise_conv2d(LowerContext& ctx, const ir::Node& n) {
  return lower_conv(ctx, n, true);
}
Status lower_conv2d_exact(LowerContext& ctx, const ir::Node& n) {
  return lower_conv_exact(ctx, n, false);
}
Status lower_depthwise_conv2d_exact(LowerContext& ctx, const ir::Node& n) {
  return lower_conv_exact(ctx, n, true);
}
Check check_conv2d_exact(const ir::Graph& g, const ir::Node& n) {
  return exact::check_linear(g, n, exact::LinearOp::kConv);
}
Check check_depthwise_conv2d_exact(const ir::Graph& g, const ir::Node& n) {
  return exact::check_linear(g, n, exact::LinearOp::kDepthwise);
}
Status lower_average_pool(LowerContext& ctx, const ir::Node& n) {
  return lower_pool(ctx, n, "AveragePool");
}
Status lower_max_pool(LowerContext& ctx, const ir::Node& n) {
  return lower_pool(ctx, n, "MaxPool");
}

// --quantization exact: the kernels take the maximum of the integers (the
// preflight keeps input and output parameters equal) and clamp it to the
// fused activation's range, rounded as the kernel that runs rounds it.
Status lower_max_pool_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const bool xnnpack =
      exact::xnnpack_quantization(x) && exact::xnnpack_quantization(g.tensor(n.outputs[0]));
  const auto [lo, hi] =
      exact::activation_range(n, exact::params_of(g.tensor(n.outputs[0])), xnnpack);
  exact::Writer w(ctx, n);
  exact::Value pooled = w.integers(n.outputs[0]);
  // ONNX's MaxPool takes int8 and uint8, not int16, whose integers are
  // exact in float.
  const bool wide = pooled.type == DataType::kInt16;
  const TensorId in = wide ? w.to_float(w.integers(n.inputs[0])) : n.inputs[0];
  const TensorId max =
      wide ? w.temp(DataType::kFloat32, "max") : ctx.temp_like(n.outputs[0], "max");
  ir::Node& p = ctx.emit(n, "MaxPool", {in}, {max});
  set_window(p, read_window(n), x.shape[1], x.shape[2], n.attrs.get_int("filter_height"),
             n.attrs.get_int("filter_width"), false);
  if (wide) {
    exact::Value f = pooled;  // the same integers, as floats
    f.id = max;
    f.type = DataType::kFloat32;
    pooled = w.cast(f, DataType::kInt32);  // ONNX Runtime clips no int16
  } else {
    pooled.id = max;
  }
  w.store(w.clip(pooled, lo, hi), n.outputs[0]);
  return w.result();
}

Check check_max_pool_exact(const ir::Graph&, const ir::Node& n) {
  return exact::check_activation_range(n);
}

// NHWC CONV_2D (filter OHWI) and DEPTHWISE_CONV_2D (filter 1HW(C*M)).
InferredShapes infer_conv2d(const ir::Graph& g, const ir::Node& n) {
  auto w = input_shape(g, n, 1);
  if (!w || w->size() != 4) return std::nullopt;
  return window_shape(g, n, (*w)[1], (*w)[2], (*w)[0]);
}

InferredShapes infer_depthwise_conv2d(const ir::Graph& g, const ir::Node& n) {
  auto w = input_shape(g, n, 1);
  if (!w || w->size() != 4) return std::nullopt;
  return window_shape(g, n, (*w)[1], (*w)[2], (*w)[3]);
}

// TRANSPOSE_CONV: the constant output_shape (input 0).
InferredShapes infer_transpose_conv(const ir::Graph& g, const ir::Node& n) {
  // With a dynamic data input the file's (dynamic) output shape stands: the
  // constant output_shape then holds a converter's placeholder batch.
  auto shape = input_ints(g, n, 0);
  if (!shape || shape->size() != 4 || !input_shape(g, n, 2) || n.outputs.size() != 1)
    return std::nullopt;
  for (int64_t d : *shape)
    if (d < 0) return std::nullopt;
  return one_shape(Shape(shape->begin(), shape->end()));
}

}  // namespace

OpEntry conv2d() {
  return {.read = {.min_inputs = 2, .options = read_conv_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_conv2d,
          .check = check_conv,
          .lower = lower_conv2d,
          .quantization = {.bias = BiasSlots{2, 0, 1, /*uint8_hybrid_weights_as_int8=*/true},
                           .exact = {lower_conv2d_exact, check_conv2d_exact}},
          .doc = {.onnx = "Conv",
                  .notes = "filter OHWI -> OIHW in the initializer; grouped convolution from the "
                           "filter shape"}};
}

OpEntry depthwise_conv2d() {
  return {.read = {.min_inputs = 2, .options = read_depthwise_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_depthwise_conv2d,
          .check = check_conv,
          .lower = lower_depthwise_conv2d,
          .quantization = {.bias = BiasSlots{2, 0, 1},
                           .exact = {lower_depthwise_conv2d_exact, check_depthwise_conv2d_exact}},
          .doc = {.onnx = "Conv (group = C)",
                  .notes = "filter 1HW(C*M) -> (C*M)1HW; any multiplier, taken from the shapes"}};
}

OpEntry transpose_conv() {
  return {.read = {.min_inputs = 3, .options = read_transpose_conv_options},
          .layout = {.kind = LayoutClass::kImplicit, .data_input = 2},
          .infer_shapes = infer_transpose_conv,
          .check = check_transpose_conv,
          .lower = lower_transpose_conv,
          .quantization = {.bias = BiasSlots{3, 2, 1}},
          .doc = {.onnx = "ConvTranspose",
                  .notes = "filter OHWI -> IOHW; explicit pads and output_padding from "
                           "output_shape"}};
}

OpEntry mediapipe_transpose_conv_bias() {
  return {.read = {.min_inputs = 3, .custom_options = read_transpose_conv_params},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_transpose_conv_bias,
          .check = check_transpose_conv_bias,
          .lower = lower_transpose_conv_bias,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "ConvTranspose",
                  .notes = "MediaPipe; filter OHWI -> IOHW; output size and pads as MediaPipe's "
                           "kernel computes them"}};
}

OpEntry mediapipe_max_pool_argmax() {
  return {.read = {.custom_options = read_mediapipe_pool_params},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_pool_argmax,
          .check = check_pool_argmax,
          .lower = lower_pool_argmax,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "MaxPool (with Indices), Mod, Div, Sub, Cast",
                  .notes = "MediaPipe; indices are the position in the window (y * filter_width "
                           "+ x + 0.1, float), from MaxPool's; ties: the first maximum, as in the "
                           "kernel"}};
}

OpEntry mediapipe_max_unpool() {
  return {.read = {.min_inputs = 2, .custom_options = read_mediapipe_pool_params},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_unpool},
          .infer_shapes = infer_unpool,
          .check = check_unpool,
          .lower = lower_unpool,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "ScatterElements into zeros",
                  .notes = "MediaPipe; values and indices in NCHW; output = input size x filter "
                           "size; an index outside the output fails in ONNX Runtime (the kernel "
                           "writes out of bounds)"}};
}

OpEntry average_pool2d() {
  return {
      .read = {.options = read_pool_options},
      .layout = {.kind = LayoutClass::kImplicit},
      .infer_shapes = infer_pool2d,
      .check = check_pool,
      .lower = lower_average_pool,
      .quantization = {.kernel = QuantizedKernel::kSameScale},
      .doc = {.onnx = "AveragePool", .notes = "padding excluded from the average, as in TFLite"}};
}

OpEntry max_pool2d() {
  return {.read = {.options = read_pool_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_pool2d,
          .check = check_pool,
          .lower = lower_max_pool,
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {lower_max_pool_exact, check_max_pool_exact}},
          .doc = {.onnx = "MaxPool"}};
}

}  // namespace lite2onnx::ops::conv
