// Pools: AVERAGE_POOL_2D, MAX_POOL_2D and MediaPipe's MaxPoolingWithArgmax2D
// and MaxUnpooling2D, Implicit ops that turn NHWC into NCHW like the
// convolutions (conv.cc).
#include <algorithm>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::pool {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

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

Status lower_average_pool(LowerContext& ctx, const ir::Node& n) {
  return lower_pool(ctx, n, "AveragePool");
}
Status lower_max_pool(LowerContext& ctx, const ir::Node& n) {
  return lower_pool(ctx, n, "MaxPool");
}

// --quantization exact, AVERAGE_POOL_2D: TFLite's kernel (XNNPACK takes no
// quantized average pooling, docs/quantization-arithmetic.md §4.3) sums the
// raw integers of the window — here ConvInteger with a window of ones per
// channel, whose padding adds nothing (int16: two, sum_16x8) — and divides by
// the number of input pixels in the window, rounding half away from zero;
// then the clamp to the fused activation's range. Input and output share
// their parameters.
Status lower_average_pool_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  const Window win = read_window(n);
  const int64_t fh = n.attrs.get_int("filter_height"), fw = n.attrs.get_int("filter_width");
  const int64_t in_h = x.shape[1], in_w = x.shape[2], out_h = y.shape[1], out_w = y.shape[2];
  const int64_t channels = x.shape[3];
  exact::Writer w(ctx, n);
  const exact::Value ones = w.channels(
      std::vector<int64_t>(static_cast<size_t>(channels * fh * fw), 1), {channels, 1, fh, fw});
  std::vector<int64_t> pads;
  // The window sums of 8-bit integers `in` (less `zero`, -128, where given).
  auto window_sum = [&](TensorId in, TensorId zero, const char* what) {
    exact::Value sum = w.accumulator();
    const exact::Value v = w.integers(in);
    const int64_t z = zero == ir::kNoTensor ? 0 : -128;
    sum.lo = (v.lo - z) * fh * fw;
    sum.hi = (v.hi - z) * fh * fw;
    std::vector<TensorId> inputs = {in, w.tensor(ones, DataType::kInt8)};
    if (zero != ir::kNoTensor) inputs.push_back(zero);
    ir::Node& c = w.emit("ConvInteger", std::move(inputs), sum.id, what);
    set_window(c, win, in_h, in_w, fh, fw, false);
    c.attrs.set("group", channels);
    pads = c.attrs.get_ints("pads");
    return sum;
  };
  // int16 integers are summed as 256 * high + low, two 8-bit sums.
  const exact::Value sum = exact::params_of(x).type == DataType::kInt16
                               ? exact::sum_16x8(w, n.inputs[0], window_sum)
                               : window_sum(n.inputs[0], ir::kNoTensor, "sum");
  // The pixels of each window inside the input (TFLite's filter_count), from
  // the padding before that set_window gave the sum.
  auto inside = [](int64_t origin, int64_t k, int64_t size) {
    return std::min(k, size - origin) - std::max<int64_t>(0, -origin);
  };
  std::vector<int64_t> counts;
  counts.reserve(static_cast<size_t>(out_h * out_w));
  for (int64_t i = 0; i < out_h; ++i)
    for (int64_t j = 0; j < out_w; ++j)
      counts.push_back(inside(i * win.stride_h - pads[0], fh, in_h) *
                       inside(j * win.stride_w - pads[1], fw, in_w));
  const exact::Value mean = w.rhaz_div(sum, w.channels(std::move(counts), {1, 1, out_h, out_w}));
  const auto [lo, hi] = exact::activation_range(n, exact::params_of(y), false);
  w.store(w.clip(mean, lo, hi), n.outputs[0]);
  return w.result();
}

// Per-tensor input and output with one set of parameters (TFLite's Prepare
// requires it), static spatial sizes, no empty window.
Check check_average_pool_exact(const ir::Graph& g, const ir::Node& n) {
  if (auto r = exact::check_activation_range(n)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const exact::Params px = exact::params_of(x), py = exact::params_of(y);
  if (!x.quantized_type || !exact::per_tensor(x) || !exact::per_tensor(y) || px.type != py.type ||
      px.scale != py.scale || px.zero != py.zero)
    return refuse(ReasonCode::kQuantization,
                  "input and output are not quantized per tensor alike (TFLite requires it)");
  for (int a = 1; a < 4; ++a)
    if (x.shape[a] < 1 || y.shape[a] < 1)
      return refuse(ReasonCode::kShape, "dynamic spatial or channel sizes in exact mode");
  const Window win = read_window(n);
  const int64_t fh = n.attrs.get_int("filter_height"), fw = n.attrs.get_int("filter_width");
  if (!win.same && (fh > x.shape[1] || fw > x.shape[2]))
    return refuse(ReasonCode::kShape, "a window larger than the input");
  if (fh * fw > (int64_t{1} << 20))
    return refuse(ReasonCode::kLimit, "a window of more than 2^20 pixels");
  // The kernel sums in int32.
  if (px.type == DataType::kInt16 && fh * fw > (int64_t{1} << 16))
    return refuse(ReasonCode::kLimit, "an int16 window of more than 2^16 pixels");
  return std::nullopt;
}

// --quantization exact: the kernels take the maximum of the integers (the
// preflight keeps input and output parameters equal) and clamp it to the
// fused activation's range, rounded as the kernel that runs rounds it.
Status lower_max_pool_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const bool xnnpack = !exact::builtin_kernels_only(n) && exact::xnnpack_quantization(x) &&
                       exact::xnnpack_quantization(g.tensor(n.outputs[0]));
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

}  // namespace

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
      .quantization = {.kernel = QuantizedKernel::kSameScale,
                       .exact = {lower_average_pool_exact, check_average_pool_exact,
                                 InQdqGraphs::kQuantized}},
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

}  // namespace lite2onnx::ops::pool
