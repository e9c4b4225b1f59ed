// Convolutions and pools: the Implicit ops that turn NHWC into NCHW.
#include <algorithm>
#include <cstdlib>

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

// The largest Σ |w - z_w| of one output channel of constant 8-bit weights
// (channels on `channel_axis` of TFLite's layout); nullopt if not such weights.
std::optional<int64_t> largest_channel_l1(const ir::Tensor& w, int channel_axis) {
  if (!w.is_const() || w.rank() == 0 || !w.quantized_type) return std::nullopt;
  const exact::Params pw = exact::params_of(w);
  const auto axis = static_cast<size_t>(channel_axis);
  if (axis >= w.rank() || w.shape[axis] <= 0) return std::nullopt;
  // Sum |w - z_w| per output channel, in TFLite's layout (channels on `axis`).
  const auto& bytes = w.data->bytes;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < w.rank(); ++d) inner *= w.shape[d];
  const int64_t channels = w.shape[axis];
  if (inner <= 0) return std::nullopt;
  std::vector<int64_t> l1(static_cast<size_t>(channels), 0);
  const bool is_signed = pw.type == ir::DataType::kInt8;
  if (pw.type != ir::DataType::kInt8 && pw.type != ir::DataType::kUInt8) return std::nullopt;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int64_t v = is_signed ? static_cast<int8_t>(bytes[i]) : static_cast<uint8_t>(bytes[i]);
    l1[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)] += std::abs(v - pw.zero);
  }
  return *std::max_element(l1.begin(), l1.end());
}

// Whether every partial sum of Σ (x - z_x)(w - z_w) stays below 2^24 in
// magnitude, whatever the order of summation, with |x - z_x| at most
// `x_most`: a float32 sum is then exact.
bool float_sums_exact(int64_t x_most, const ir::Tensor& w, int channel_axis) {
  const std::optional<int64_t> most = largest_channel_l1(w, channel_axis);
  return most && *most * x_most < (int64_t{1} << 24);
}

// The int32 sum Σ (x - z_x)(w - z_w) of an 8-bit convolution as a float32
// Conv of the centred integers x - z_x (`centred`), where float_sums_exact
// proves every partial sum exact in any order (the padding is 0 on both
// sides). ONNX Runtime's float convolutions (with a direct depthwise kernel)
// run several times faster than its ConvInteger, which computes a grouped
// convolution as one GEMM per group: vww_96_int8 in exact mode 2.2 ms -> 0.63 ms.
exact::Value float_accumulator(LowerContext& ctx, const ir::Node& n, exact::Writer& out,
                               const exact::Value& centred, TensorId weights, int64_t group) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  const ir::DataType f32 = ir::DataType::kFloat32;
  const TensorId x_real = out.to_float(centred);
  // A Cast of the constant weights: ONNX Runtime folds it when the session loads.
  TensorId w_real = out.temp(f32, "weights_float");
  out.emit("Cast", {weights}, w_real, "weights_float")
      .attrs.set("to", int64_t{ir::onnx_type_code(f32)});
  if (const int64_t zero = exact::params_of(w).zero; zero != 0) {
    const TensorId raw = w_real;
    w_real = out.temp(f32, "weights_centred");
    out.emit("Sub",
             {raw, ctx.const_scalar(n.name + "/weight_zero", f32, static_cast<double>(zero))},
             w_real, "weights_centred");
  }
  const TensorId sum = out.temp(f32, "float_sum");
  ir::Node& c = out.emit("Conv", {x_real, w_real}, sum, "float_sum");
  set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
  c.attrs.set("group", group);
  exact::Value acc = out.accumulator();
  out.emit("Cast", {sum}, acc.id, "accumulator")
      .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt32)});
  return acc;
}

// --quantization exact (and the QDQ mode), hybrid CONV_2D and
// DEPTHWISE_CONV_2D (float input, int8 weights): the kernel quantizes each
// image (each pixel of a pointwise CONV_2D) at run time (XNNPACK's qd8 for
// CONV_2D, TFLite's builtin per-channel kernel for DEPTHWISE_CONV_2D) and
// sums (q - z) w over the taps inside the image only. Where float_sums_exact
// proves it exact, that sum is a float32 Conv of q - z (its padding 0 adds
// nothing), which ONNX Runtime runs several times faster than ConvInteger.
// Else ConvInteger, which takes one zero point for the whole batch: Σ q w
// over the taps inside the image less z Σ w over the same taps (a
// ConvInteger of ones).
Status lower_hybrid_conv_exact(LowerContext& ctx, const ir::Node& n, exact::Writer& out,
                               TensorId weights, int64_t group, bool depthwise) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  weights = ctx.integer_constant(weights);
  auto result = ctx.fused_activation(n, n.outputs[0]);
  if (!result) return result.take_error();
  const ir::Shape channel_shape = {1, ctx.tensor(n.outputs[0]).shape[3], 1, 1};
  const int channel_axis = depthwise ? 3 : 0;
  auto conv = [&](TensorId in, const char* what) {
    exact::Value acc = out.accumulator();
    ir::Node& c = out.emit("ConvInteger", {in, weights}, acc.id, what);
    set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
    c.attrs.set("group", group);
    const int64_t taps = w.shape[1] * w.shape[2] * (x.shape[3] / group);
    acc.lo = -128 * 127 * taps;
    acc.hi = 128 * 127 * taps;
    return acc;
  };
  auto float_sum = [&](const exact::Value& centred) {
    exact::Value acc = float_accumulator(ctx, n, out, centred, weights, group);
    acc.hi = int64_t{1} << 24;
    acc.lo = -acc.hi;
    return acc;
  };
  if (exact::builtin_hybrid(w)) {
    // TFLite's builtin hybrid kernel: each image quantized symmetrically, so
    // the padding (0) adds nothing.
    const exact::SymmetricRows images =
        exact::quantize_rows_symmetric(out, n.inputs[0], {1, 2, 3}, w.quant->scale[0]);
    const exact::Value acc = float_sums_exact(127, w, channel_axis)
                                 ? float_sum(out.integers(images.integers))
                                 : conv(images.integers, "accumulator");
    exact::builtin_hybrid_output(out, acc, images.scale, channel_shape, *result);
    return out.result();
  }
  // XNNPACK defines a pointwise convolution as a fully connected layer, whose
  // rows (here: pixels) are quantized one by one (docs/quantization-arithmetic.md §5).
  const Window win = read_window(n);
  const bool pointwise = !depthwise && group == 1 && w.shape[1] == 1 && w.shape[2] == 1 &&
                         win.stride_h == 1 && win.stride_w == 1 && x.shape[3] + w.shape[0] > 2;
  const exact::RowQuantization images =
      depthwise   ? exact::quantize_rows_tflite(out, n.inputs[0], {1, 2, 3})
      : pointwise ? exact::quantize_rows(out, n.inputs[0], {1})
                  : exact::quantize_rows(out, n.inputs[0], {1, 2, 3});
  exact::Value acc;
  if (float_sums_exact(255, w, channel_axis)) {
    acc = float_sum(out.sub(out.integers(images.integers), images.zero));
  } else {
    const TensorId ones = out.temp(ir::DataType::kInt8, "ones");
    out.emit("Expand",
             {ctx.const_scalar(n.name + "/one", ir::DataType::kInt8, 1),
              ctx.const_i64(n.name + "/image_shape", {1, x.shape[3], x.shape[1], x.shape[2]})},
             ones, "ones");
    acc = out.sub(conv(images.integers, "accumulator"),
                  out.mul(images.zero, conv(ones, "weights_inside")));
  }
  exact::hybrid_output(out, acc, images.dequantization_scale,
                       depthwise ? exact::LinearOp::kDepthwise : exact::LinearOp::kConv,
                       channel_shape, *result);
  return out.result();
}

// --quantization exact: ConvInteger accumulates exactly in int32 (padding
// adds nothing: it pads with the input's zero point), or a float Conv where
// that is exact too (float_accumulator), then the bias and the
// requantization of the kernel LiteRT.js runs (exact.h, finish_linear).
Status lower_conv_exact(LowerContext& ctx, const ir::Node& n, bool depthwise) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  auto group = conv_group(ctx, n, depthwise);
  if (!group) return group.take_error();
  exact::Writer out(ctx, n);
  const TensorId weights = weight_in_layout(ctx, n, 1, depthwise ? kOhwiToIohw : kOhwiToOihw);
  if (!x.quantized_type) return lower_hybrid_conv_exact(ctx, n, out, weights, *group, depthwise);
  const int64_t taps = w.shape[1] * w.shape[2] * (x.shape[3] / *group);
  auto conv = [&](std::vector<TensorId> inputs, const char* what) {
    exact::Value acc = out.accumulator();
    ir::Node& c = out.emit("ConvInteger", std::move(inputs), acc.id, what);
    set_window(c, read_window(n), x.shape[1], x.shape[2], w.shape[1], w.shape[2], true);
    c.attrs.set("group", *group);
    if (taps > 0) {
      acc.lo = -256 * 256 * taps;
      acc.hi = 256 * 256 * taps;
    }
    return acc;
  };
  exact::Value acc;
  if (x.quantized_type == ir::DataType::kInt16) {
    acc = exact::sum_16x8(out, n.inputs[0], [&](TensorId in, TensorId zero, const char* what) {
      std::vector<TensorId> inputs = {in, weights};
      if (zero != ir::kNoTensor) inputs.push_back(zero);
      return conv(std::move(inputs), what);
    });
  } else if (const exact::Params px = exact::params_of(x);
             float_sums_exact(std::max(px.zero - px.lo, px.hi - px.zero), w, depthwise ? 3 : 0)) {
    acc = float_accumulator(ctx, n, out, out.sub(out.integers(n.inputs[0]), out.constant(px.zero)),
                            weights, *group);
    acc.hi = std::min<int64_t>(int64_t{256} * 256 * std::max<int64_t>(taps, 0), int64_t{1} << 24);
    acc.lo = -acc.hi;
  } else {
    std::vector<TensorId> inputs = {n.inputs[0], weights};
    for (TensorId z : exact::linear_zero_points(out, n, 0, 1)) inputs.push_back(z);
    acc = conv(std::move(inputs), "accumulator");
  }
  const int64_t channels = ctx.tensor(n.outputs[0]).shape[3];
  out.store(exact::finish_linear(out, acc,
                                 depthwise ? exact::LinearOp::kDepthwise : exact::LinearOp::kConv,
                                 {1, channels, 1, 1}),
            n.outputs[0]);
  return out.result();
}

// TRANSPOSE_CONV as ONNX ConvTranspose of `x` and `weights` (IOHW; `bias`
// optional) into `out`: explicit pads and output_padding that give
// output_shape (input 0). `suffix` names the node apart from others of n.
Status emit_transpose_conv(LowerContext& ctx, const ir::Node& n, TensorId x_in, TensorId weights,
                           TensorId bias, TensorId out, const std::string& suffix = "") {
  const ir::Graph& g = ctx.graph();
  auto out_shape = ir::const_ints(g, n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& x = g.tensor(n.inputs[2]);
  Window win = read_window(n);
  if (!g.tensor(n.inputs[0]).is_const()) {
    // A run-time output_shape: the full transposed convolution, cut at run
    // time; the bias after the cut (TFLite adds it to the zeros past the
    // full extent too).
    const int64_t in_h = x.shape[1], in_w = x.shape[2], k_h = w.shape[1], k_w = w.shape[2];
    if (in_h < 1 || in_w < 1) return ctx.error(n, "spatial input size must be static");
    const TensorId full = ctx.temp(n.name + "/" + suffix + "full", ctx.tensor(out).dtype);
    ir::Node& c = ctx.emit(n, "ConvTranspose", {x_in, weights}, {full}, suffix + "full");
    c.attrs.set("kernel_shape", std::vector<int64_t>{k_h, k_w});
    c.attrs.set("strides", std::vector<int64_t>{win.stride_h, win.stride_w});
    const TensorId cut = bias == ir::kNoTensor
                             ? out
                             : ctx.temp(n.name + "/" + suffix + "cut", ctx.tensor(out).dtype);
    crop_transpose_conv(ctx, n, full, cut, (in_h - 1) * win.stride_h + k_h,
                        (in_w - 1) * win.stride_w + k_w, k_h, k_w, suffix);
    if (bias != ir::kNoTensor) {
      const TensorId channels =
          ctx.temp(n.name + "/" + suffix + "bias_channels", ctx.tensor(bias).dtype);
      ctx.emit(n, "Reshape",
               {bias, ctx.const_i64(n.name + "/" + suffix + "bias_shape", {-1, 1, 1})}, {channels},
               suffix + "bias_channels");
      ctx.emit(n, "Add", {cut, channels}, {out}, suffix + "bias");
    }
    return ok_status();
  }
  if (!out_shape || out_shape->size() != 4)
    return ctx.error(n, "output_shape must be a constant of 4 values");
  std::vector<int64_t> pads(4, 0), output_padding(2, 0);
  int64_t strides[2] = {win.stride_h, win.stride_w};
  for (int d = 0; d < 2; ++d) {
    int64_t in = x.shape[1 + d], k = w.shape[1 + d], size = (*out_shape)[1 + d];
    if (in < 0) return ctx.error(n, "spatial input size must be static");
    int64_t full = (in - 1) * strides[d] + k;  // output size without padding
    int64_t before = 0, after = 0;
    if (win.same) {
      int64_t total = full - size;
      if (total < 0) total = 0;
      before = total / 2;
      after = total - before;
    }
    int64_t extra = size - (full - before - after);
    if (extra >= 0) {
      output_padding[d] = extra;
    } else {
      after += -extra;  // TFLite crops the end when output_shape is smaller
    }
    if (output_padding[d] >= strides[d])
      return ctx.error(n, "output_shape " + std::to_string(size) + " cannot come from input size " +
                              std::to_string(in) + " with stride " + std::to_string(strides[d]) +
                              " and filter " + std::to_string(k));
    pads[d] = before;
    pads[2 + d] = after;
  }
  std::vector<TensorId> inputs = {x_in, weights};
  if (bias != ir::kNoTensor) inputs.push_back(bias);
  ir::Node& c = ctx.emit(n, "ConvTranspose", inputs, {out}, suffix);
  c.attrs.set("kernel_shape", std::vector<int64_t>{w.shape[1], w.shape[2]});
  c.attrs.set("strides", std::vector<int64_t>{win.stride_h, win.stride_w});
  c.attrs.set("pads", pads);
  if (output_padding[0] || output_padding[1]) c.attrs.set("output_padding", output_padding);
  return ok_status();
}

Status lower_transpose_conv(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  return emit_transpose_conv(ctx, n, n.inputs[2], weight_in_layout(ctx, n, 1, kOhwiToIohw),
                             has_input(g, n, 3) ? n.inputs[3] : ir::kNoTensor, *y);
}

// --quantization exact, TRANSPOSE_CONV: ONNX has no integer ConvTranspose,
// so the accumulator is a float32 ConvTranspose of x - z_x and w - z_w,
// exact when every partial sum is an integer below 2^24 (the check bounds
// them from the weights' values and how many terms meet in one output); then
// the bias and the requantization of the kernel that runs (finish_linear).
// 16x8: x = 256 * high + low (low in [0, 255]), one ConvTranspose each.
Status lower_transpose_conv_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  exact::Writer w(ctx, n);
  const exact::Params px = exact::params_of(ctx.tensor(n.inputs[2]));
  const ir::Tensor& weight = ctx.tensor(n.inputs[1]);
  const exact::Params pw = exact::params_of(weight);
  TensorId wf = w.to_float(w.integers(weight_in_layout(ctx, n, 1, kOhwiToIohw)));
  if (pw.zero != 0 && exact::per_tensor(weight))
    wf = w.fadd(wf, {-static_cast<float>(pw.zero)}, {});
  // The exact sum of one part of x (its integers as floats) into int32.
  Status status = ok_status();
  auto product = [&](TensorId x, const char* what) {
    exact::Value acc;
    acc.type = DataType::kFloat32;
    acc.lo = -(int64_t{1} << 24);
    acc.hi = int64_t{1} << 24;
    acc.id = w.temp(DataType::kFloat32, what);
    if (auto st = emit_transpose_conv(ctx, n, x, wf, ir::kNoTensor, acc.id, what); !st) status = st;
    return w.cast(acc, DataType::kInt32);
  };
  const exact::Value in = w.integers(n.inputs[2]);
  exact::Value acc;
  if (px.type == DataType::kInt16) {
    const exact::Value high = w.floor_div(in, w.constant(256));
    const exact::Value low = w.sub(in, w.mul(high, w.constant(256)));
    acc = w.add(w.mul(product(w.to_float(high), "high"), w.constant(256)),
                product(w.to_float(low), "low"));
  } else {
    acc = product(w.fadd(w.to_float(in), {-static_cast<float>(px.zero)}, {}), "");
  }
  if (!status) return status;
  const int64_t channels = ctx.tensor(n.outputs[0]).shape[3];
  w.store(exact::finish_linear(w, acc, exact::LinearOp::kTransposeConv, {1, channels, 1, 1}),
          n.outputs[0]);
  return w.result();
}

// The float accumulator's bound: max |x - z_x| * max |w - z_w| times the
// terms of one output (input channels x the window's taps one stride apart).
Check check_transpose_conv_exact(const ir::Graph& g, const ir::Node& n) {
  if (auto r = exact::check_linear(g, n, exact::LinearOp::kTransposeConv)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[2]);
  const ir::Tensor& weight = g.tensor(n.inputs[1]);
  const exact::Params px = exact::params_of(x), pw = exact::params_of(weight);
  // int16 is summed in two parts, high (|.| <= 128) and low (0..255).
  const int64_t reach_x =
      px.type == DataType::kInt16 ? 255 : std::max(px.zero - px.lo, px.hi - px.zero);
  int64_t reach_w = std::max(pw.zero - pw.lo, pw.hi - pw.zero);
  if (weight.is_const() && weight.data && weight.data->bytes.size() > 0) {
    reach_w = 0;
    for (std::byte b : weight.data->bytes) {
      const int64_t v =
          pw.type == DataType::kInt8 ? static_cast<int8_t>(b) : static_cast<uint8_t>(b);
      reach_w = std::max(reach_w, v > pw.zero ? v - pw.zero : pw.zero - v);
    }
  }
  const Window win = read_window(n);
  auto taps = [](int64_t k, int64_t s) { return (k + s - 1) / s; };
  const __int128 terms = static_cast<__int128>(std::max<int64_t>(x.shape[3], 1)) *
                         taps(weight.shape[1], win.stride_h) * taps(weight.shape[2], win.stride_w);
  if (terms * reach_x * reach_w >= (__int128{1} << 24))
    return refuse(ReasonCode::kNotImplemented,
                  "an accumulator that can reach 2^24 (its exact form sums in float32) has no "
                  "integer form for --quantization exact yet");
  return std::nullopt;
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

Check check_conv(const ir::Graph& g, const ir::Node& n) { return check_conv_common(g, n, 0, 1); }
// A run-time output_shape: 4 int32 values, over an input of static spatial
// size (the full transposed convolution it is cut from has a static size).
Check check_transpose_conv(const ir::Graph& g, const ir::Node& n) {
  if (!g.tensor(n.inputs[0]).is_const()) {
    if (auto r = check_index_vector(g, n, 0, "output_shape", 4)) return r;
    const ir::Tensor& x = g.tensor(n.inputs[2]);
    if (!x.has_rank || x.rank() != 4 || x.shape[1] < 1 || x.shape[2] < 1)
      return refuse(ReasonCode::kShape,
                    "a run-time output_shape needs a static spatial input size");
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
// A hybrid convolution's image size must be known: the ones that count the
// taps inside the image have its shape.
Check check_hybrid_image(const ir::Tensor& x) {
  for (int a = 1; a < 4; ++a)
    if (x.shape[a] < 1)
      return refuse(ReasonCode::kShape, "a hybrid convolution over dynamic spatial sizes");
  return std::nullopt;
}
Check check_conv2d_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.quantized_type) {
    if (auto bad = check_hybrid_image(x)) return bad;
    const ir::Tensor& w = g.tensor(n.inputs[1]);
    if (exact::builtin_hybrid(w) && w.shape.size() == 4 && w.shape[3] != x.shape[3])
      return refuse(ReasonCode::kNotImplemented,
                    "a grouped uint8 hybrid convolution (TFLite's per-channel hybrid kernel) has "
                    "no integer form for --quantization exact yet");
    return exact::check_hybrid(g, n, exact::LinearOp::kConv);
  }
  return exact::check_linear(g, n, exact::LinearOp::kConv);
}
Check check_depthwise_conv2d_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.quantized_type) {
    if (auto bad = check_hybrid_image(x)) return bad;
    // TFLite's hybrid depthwise kernel reads one scale per output channel
    // (its Prepare requires them).
    const ir::Tensor& w = g.tensor(n.inputs[1]);
    if (w.quant && w.shape.size() == 4 && static_cast<int64_t>(w.quant->scale.size()) != w.shape[3])
      return refuse(ReasonCode::kQuantization,
                    "hybrid depthwise weights without one scale per output channel (TFLite "
                    "refuses them)");
    if (exact::builtin_hybrid(w))
      return refuse(ReasonCode::kNotImplemented,
                    "uint8 hybrid depthwise weights have no integer form for --quantization "
                    "exact yet");
    return exact::check_hybrid(g, n, exact::LinearOp::kDepthwise);
  }
  return exact::check_linear(g, n, exact::LinearOp::kDepthwise);
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
                           .exact = {lower_conv2d_exact, check_conv2d_exact, InQdqGraphs::kHybrid,
                                     exact::runs_builtin_kernel<exact::LinearOp::kConv>}},
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
                           .exact = {lower_depthwise_conv2d_exact, check_depthwise_conv2d_exact,
                                     InQdqGraphs::kHybrid,
                                     exact::runs_builtin_kernel<exact::LinearOp::kDepthwise>}},
          .doc = {.onnx = "Conv (group = C)",
                  .notes = "filter 1HW(C*M) -> (C*M)1HW; any multiplier, taken from the shapes"}};
}

OpEntry transpose_conv() {
  return {.read = {.min_inputs = 3, .options = read_transpose_conv_options},
          .layout = {.kind = LayoutClass::kImplicit, .data_input = 2},
          .infer_shapes = infer_transpose_conv,
          .check = check_transpose_conv,
          .lower = lower_transpose_conv,
          .quantization = {.bias = BiasSlots{3, 2, 1},
                           .exact = {lower_transpose_conv_exact, check_transpose_conv_exact,
                                     InQdqGraphs::kNo,
                                     exact::runs_builtin_kernel<exact::LinearOp::kTransposeConv>}},
          .doc = {.onnx = "ConvTranspose",
                  .notes = "filter OHWI -> IOHW; explicit pads and output_padding from a "
                           "constant output_shape; a run-time one: the full transposed "
                           "convolution cut (Slice, Pad) by TFLite's padding rule at run time"}};
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

}  // namespace lite2onnx::ops::conv
