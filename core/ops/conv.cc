// Convolutions and pools: the Implicit ops that turn NHWC into NCHW.
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::conv {
namespace {

using ir::Perm;
using ir::TensorId;

const Perm kOhwiToOihw = {0, 3, 1, 2};
const Perm kOhwiToIohw = {3, 0, 1, 2};  // TransposeConv weights; also 1HWC -> C1HW

std::string check_window(const ir::Node& n) {
  Window w = read_window(n);
  if (w.stride_h < 1 || w.stride_w < 1)
    return "strides must be positive (got " + std::to_string(w.stride_h) + "x" +
           std::to_string(w.stride_w) + ")";
  if (w.dilation_h < 1 || w.dilation_w < 1) return "dilation factors must be positive";
  return "";
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

// Weights arrive as constants (or folded float16 constants): permute them in
// the initializer. A weight computed at run time gets a Transpose node.
TensorId weight_in_layout(LowerContext& ctx, const ir::Node& n, size_t i, const Perm& perm) {
  TensorId w = n.inputs[i];
  if (ctx.tensor(w).is_const())
    return ctx.constant_in_layout(w, perm, "filter of " + n.name + " permuted");
  ir::Tensor t = ctx.tensor(w);
  t.name += '/';
  t.name += ir::to_string(perm);
  t.layout = perm;
  TensorId out = ctx.graph().add_tensor(std::move(t));
  ir::Node& tr = ctx.emit(n, "Transpose", {w}, {out}, "weight_Transpose");
  tr.attrs.set("perm", to_i64(perm));
  tr.inserted = ir::Insertion{ctx.tensor(w).name, "filter computed at run time"};
  return out;
}

std::string check_conv_common(const ir::Graph& g, const ir::Node& n, size_t data, size_t weight) {
  if (auto r = require_rank(g, n, data, 4); !r.empty()) return r;
  if (auto r = require_rank(g, n, weight, 4); !r.empty()) return r;
  if (g.tensor(n.inputs[weight]).dtype != g.tensor(n.inputs[data]).dtype)
    return "hybrid (integer filter, float input) convolution needs quantization support";
  for (size_t a = 1; a < 4; ++a)
    if (g.tensor(n.inputs[weight]).shape[a] < 0) return "filter shape must be static";
  if (auto r = check_window(n); !r.empty()) return r;
  return check_activation(g, n);
}

Status lower_conv(LowerContext& ctx, const ir::Node& n, bool depthwise) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  int64_t cin = x.shape[3];
  int64_t group = 1;
  if (depthwise) {
    group = cin;
    if (cin <= 0 || w.shape[3] % cin != 0)
      return ctx.error(n, "depthwise filter channels " + std::to_string(w.shape[3]) +
                              " are not a multiple of the input channels " + std::to_string(cin));
  } else {
    int64_t per_group = w.shape[3];
    if (per_group <= 0 || cin < 0 || cin % per_group != 0)
      return ctx.error(n, "input channels " + std::to_string(cin) +
                              " are not a multiple of the filter's input channels " +
                              std::to_string(per_group));
    group = cin / per_group;
  }
  TensorId wt = weight_in_layout(ctx, n, 1, depthwise ? kOhwiToIohw : kOhwiToOihw);
  std::vector<TensorId> inputs = {n.inputs[0], wt};
  if (has_input(g, n, 2)) inputs.push_back(n.inputs[2]);
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ir::Node& c = ctx.emit(n, "Conv", inputs, {*y});
  set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
  c.attrs.set("group", group);
  return ok_status();
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

Status read_transpose_conv_params(std::span<const uint8_t> bytes, ir::Attributes& a) {
  ir::Attributes raw;
  if (auto st = read_struct_fields(bytes, kTransposeConvParams, raw); !st) return st;
  a.set("padding", std::string(raw.get_int("padding") == 2 ? "VALID" : "SAME"));
  a.set("stride_h", raw.get_int("stride_height"));
  a.set("stride_w", raw.get_int("stride_width"));
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

std::string check_transpose_conv_bias(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 3 || n.outputs.size() != 1)
    return "expects 3 inputs (data, weights, bias) and 1 output";
  if (auto r = check_conv_common(g, n, 0, 1); !r.empty()) return r;
  if (auto r = require_const(g, n, 1, "weights"); !r.empty()) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& b = g.tensor(n.inputs[2]);
  if (x.dtype != ir::DataType::kFloat32 || x.quantized_type)
    return "MediaPipe's kernel takes float32 only";
  if (w.shape[3] != x.shape[3])
    return "weights " + ir::to_string(w.shape) + " do not match input channels " +
           std::to_string(x.shape[3]);
  if (!b.has_rank || b.rank() != 1 || b.shape[0] != w.shape[0])
    return "bias must be [" + std::to_string(w.shape[0]) + "]";
  return "";
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

std::string check_pool(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4); !r.empty()) return r;
  if (n.attrs.get_int("filter_height") < 1 || n.attrs.get_int("filter_width") < 1)
    return "filter size must be positive";
  if (auto r = check_window(n); !r.empty()) return r;
  return check_activation(g, n);
}

OpEntry implicit(const char* onnx, ReadOptionsFn read, CheckFn check, LowerFn lower) {
  OpEntry e;
  e.layout = LayoutClass::kImplicit;
  e.read_options = read;
  e.check = check;
  e.lower = lower;
  e.onnx = onnx;
  return e;
}

}  // namespace

OpEntry conv2d() {
  OpEntry e = implicit(
      "Conv", read_conv_options,
      [](const ir::Graph& g, const ir::Node& n) { return check_conv_common(g, n, 0, 1); },
      [](LowerContext& ctx, const ir::Node& n) { return lower_conv(ctx, n, false); });
  e.notes = "filter OHWI -> OIHW in the initializer; grouped convolution from the filter shape";
  e.min_inputs = 2;
  e.bias = BiasSlots{2, 0, 1, /*uint8_hybrid_weights_as_int8=*/true};
  e.infer_shapes = infer_conv2d;
  return e;
}

OpEntry depthwise_conv2d() {
  OpEntry e = implicit(
      "Conv (group = C)", read_depthwise_options,
      [](const ir::Graph& g, const ir::Node& n) { return check_conv_common(g, n, 0, 1); },
      [](LowerContext& ctx, const ir::Node& n) { return lower_conv(ctx, n, true); });
  e.notes = "filter 1HW(C*M) -> (C*M)1HW; any multiplier, taken from the shapes";
  e.min_inputs = 2;
  e.bias = BiasSlots{2, 0, 1};
  e.infer_shapes = infer_depthwise_conv2d;
  return e;
}

OpEntry transpose_conv() {
  OpEntry e = implicit(
      "ConvTranspose", read_transpose_conv_options,
      [](const ir::Graph& g, const ir::Node& n) -> std::string {
        if (auto r = require_const(g, n, 0, "output_shape"); !r.empty())
          return r + "; ONNX ConvTranspose cannot take a run-time output shape";
        return check_conv_common(g, n, 2, 1);
      },
      lower_transpose_conv);
  e.data_input = 2;
  e.min_inputs = 3;
  e.notes = "filter OHWI -> IOHW; explicit pads and output_padding from output_shape";
  e.bias = BiasSlots{3, 2, 1};
  e.infer_shapes = infer_transpose_conv;
  return e;
}

OpEntry mediapipe_transpose_conv_bias() {
  OpEntry e =
      implicit("ConvTranspose", nullptr, check_transpose_conv_bias, lower_transpose_conv_bias);
  e.custom_options = read_transpose_conv_params;
  e.min_inputs = 3;
  e.quantized = QuantizedKernel::kNoQuantized;
  e.notes =
      "MediaPipe; filter OHWI -> IOHW; output size and pads as MediaPipe's kernel computes "
      "them";
  e.infer_shapes = infer_transpose_conv_bias;
  return e;
}

OpEntry average_pool2d() {
  OpEntry e = implicit(
      "AveragePool", read_pool_options, check_pool,
      [](LowerContext& ctx, const ir::Node& n) { return lower_pool(ctx, n, "AveragePool"); });
  e.notes = "padding excluded from the average, as in TFLite";
  e.quantized = QuantizedKernel::kSameScale;
  e.infer_shapes = infer_pool2d;
  return e;
}

OpEntry max_pool2d() {
  OpEntry e =
      implicit("MaxPool", read_pool_options, check_pool,
               [](LowerContext& ctx, const ir::Node& n) { return lower_pool(ctx, n, "MaxPool"); });
  e.quantized = QuantizedKernel::kSameScale;
  e.infer_shapes = infer_pool2d;
  return e;
}

}  // namespace lite2onnx::ops::conv
