// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: Implicit (NHWC spatial resize).
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/quant_math.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::resize {
namespace {

using ir::Shape;
using ir::TensorId;

Check check_resize(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4)) return r;
  if (auto r = require_const(g, n, 1, "size")) return r;
  auto size = ir::const_ints(g, n.inputs[1]);
  if (!size || size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1)
    return refuse(ReasonCode::kOperands, "size must be two positive values");
  const ir::Shape& xs = g.tensor(n.inputs[0]).shape;
  if ((xs[0] < 0 || xs[3] < 0) && (xs[1] < 1 || xs[2] < 1))
    return refuse(ReasonCode::kShape,
                  "needs a static batch and depth, or static spatial dimensions");
  if (n.attrs.get_int("align_corners") && n.attrs.get_int("half_pixel_centers"))
    return refuse(ReasonCode::kOperands, "align_corners and half_pixel_centers cannot both be set");
  return {};
}

Status lower_resize(LowerContext& ctx, const ir::Node& n, bool bilinear) {
  const ir::Graph& g = ctx.graph();
  const ir::Shape& xs = g.tensor(n.inputs[0]).shape;
  auto size = *ir::const_ints(g, n.inputs[1]);
  bool align = n.attrs.get_int("align_corners") != 0;
  bool half = n.attrs.get_int("half_pixel_centers") != 0;
  TensorId none = ir::kNoTensor;
  std::vector<TensorId> inputs = {n.inputs[0], none};
  if (xs[0] >= 0 && xs[3] >= 0) {
    inputs.push_back(none);
    inputs.push_back(ctx.const_i64(n.name + "/sizes", {xs[0], xs[3], size[0], size[1]}));
  } else {
    inputs.push_back(ctx.const_f32(
        n.name + "/scales",
        {1.f, 1.f, static_cast<float>(size[0]) / xs[1], static_cast<float>(size[1]) / xs[2]}));
  }
  ir::Node& r = ctx.emit(n, "Resize", inputs, {n.outputs[0]});
  r.attrs.set("mode", std::string(bilinear ? "linear" : "nearest"));
  std::string ctm = align  ? "align_corners"
                    : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nn")
                           : "asymmetric";
  r.attrs.set("coordinate_transformation_mode", ctm);
  if (!bilinear) r.attrs.set("nearest_mode", std::string(align ? "round_prefer_ceil" : "floor"));
  return ok_status();
}

void read_bilinear_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ResizeBilinearOptions();
  a.set("align_corners", int64_t{o && o->align_corners()});
  a.set("half_pixel_centers", int64_t{o && o->half_pixel_centers()});
}

void read_nearest_neighbor_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ResizeNearestNeighborOptions();
  a.set("align_corners", int64_t{o && o->align_corners()});
  a.set("half_pixel_centers", int64_t{o && o->half_pixel_centers()});
}

Status lower_bilinear(LowerContext& ctx, const ir::Node& n) { return lower_resize(ctx, n, true); }
Status lower_nearest_neighbor(LowerContext& ctx, const ir::Node& n) {
  return lower_resize(ctx, n, false);
}

// TFLite's ResizeBilinearInteger along one axis of size `in` resized to
// `out` (reference_ops, docs/quantization-arithmetic.md §4.12): per output
// index, the two input indices it reads and their weights (10 fractional
// bits, 1024 - f and f; f is negative where half-pixel centers reach before
// the first pixel), with C's truncating divisions.
struct IntegerBilinearAxis {
  std::vector<int64_t> low, high, low_weight, high_weight;
};
IntegerBilinearAxis integer_bilinear_axis(int64_t in, int64_t out, bool align, bool half) {
  int64_t scale = (1024 * in + out / 2) / out;
  if (align && out > 1) scale = (1024 * (in - 1) + (out - 1) / 2) / (out - 1);
  IntegerBilinearAxis a;
  for (int64_t v = 0; v < out; ++v) {
    const int64_t p = half ? v * scale + scale / 2 - 512 : v * scale;
    const int64_t low = std::max<int64_t>(p / 1024, 0);
    a.low.push_back(low);
    a.high.push_back(std::min((p + 1023) / 1024, in - 1));
    a.high_weight.push_back(p - 1024 * low);
    a.low_weight.push_back(1024 - (p - 1024 * low));
  }
  return a;
}

// The four input integers each output pixel reads: Gathers along H and W of
// the NCHW input with indices computed here.
struct Corners {
  exact::Value top_left, top_right, bottom_left, bottom_right;
};
Corners gather_corners(exact::Writer& w, TensorId x, const std::vector<int64_t>& top,
                       const std::vector<int64_t>& bottom, const std::vector<int64_t>& left,
                       const std::vector<int64_t>& right) {
  const ir::DataType type = w.integers(x).type;
  auto gather = [&](TensorId data, const std::vector<int64_t>& indices, int64_t axis,
                    const char* what) {
    const TensorId out = w.temp(type, what);
    w.emit("Gather", {data, w.tensor(w.channels(indices, {}), ir::DataType::kInt64)}, out, what)
        .attrs.set("axis", axis);
    return w.integers(out);
  };
  const TensorId t = gather(x, top, 2, "top").id;
  const TensorId b = gather(x, bottom, 2, "bottom").id;
  return {gather(t, left, 3, "top_left"), gather(t, right, 3, "top_right"),
          gather(b, left, 3, "bottom_left"), gather(b, right, 3, "bottom_right")};
}

// --quantization exact, int16 RESIZE_BILINEAR: TFLite's ResizeBilinearInteger
// (XNNPACK takes 8-bit only): Σ corner * w_y * w_x in int64, divided by 2^20
// rounding half away from zero.
Status lower_bilinear_int16_exact(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Shape& xs = g.tensor(n.inputs[0]).shape;
  const auto size = *ir::const_ints(g, n.inputs[1]);
  const bool align = n.attrs.get_int("align_corners") != 0;
  const bool half = n.attrs.get_int("half_pixel_centers") != 0;
  const IntegerBilinearAxis rows = integer_bilinear_axis(xs[1], size[0], align, half);
  const IntegerBilinearAxis cols = integer_bilinear_axis(xs[2], size[1], align, half);
  exact::Writer w(ctx, n);
  const Corners c = gather_corners(w, n.inputs[0], rows.low, rows.high, cols.low, cols.high);
  const exact::Value top = w.channels(rows.low_weight, {1, 1, size[0], 1});
  const exact::Value bottom = w.channels(rows.high_weight, {1, 1, size[0], 1});
  const exact::Value left = w.channels(cols.low_weight, {1, 1, 1, size[1]});
  const exact::Value right = w.channels(cols.high_weight, {1, 1, 1, size[1]});
  auto row = [&](const exact::Value& l, const exact::Value& r) {
    return w.add(w.mul(l, left), w.mul(r, right));
  };
  const exact::Value sum = w.add(w.mul(row(c.top_left, c.top_right), top),
                                 w.mul(row(c.bottom_left, c.bottom_right), bottom));
  w.store(w.rhaz_div(sum, w.constant(int64_t{1} << 20)), n.outputs[0]);
  return w.result();
}

// --quantization exact, 8-bit RESIZE_BILINEAR: XNNPACK's ibilinear, which
// both runtimes run (docs/quantization-arithmetic.md §3.7): per output pixel
// the four input integers it reads (Gathers along H and W of the NCHW input
// with indices computed here) blended with 11-bit weights in integers,
// rounded half up by a floor shift of 22.
Status lower_bilinear_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Shape& xs = g.tensor(n.inputs[0]).shape;
  const auto size = *ir::const_ints(g, n.inputs[1]);
  const bool align = n.attrs.get_int("align_corners") != 0;
  const bool half = n.attrs.get_int("half_pixel_centers") != 0;
  if (g.tensor(n.inputs[0]).dtype == ir::DataType::kInt16)
    return lower_bilinear_int16_exact(ctx, n);
  const qmath::XnnBilinearAxis rows = qmath::xnn_bilinear_axis(xs[1], size[0], align, half);
  const qmath::XnnBilinearAxis cols = qmath::xnn_bilinear_axis(xs[2], size[1], align, half);
  exact::Writer w(ctx, n);
  const Corners c = gather_corners(w, n.inputs[0], rows.top, rows.bottom, cols.top, cols.bottom);
  const exact::Value &tl = c.top_left, &tr = c.top_right, &bl = c.bottom_left, &br = c.bottom_right;
  const exact::Value ax = w.channels(cols.weight, {1, 1, 1, size[1]});
  const exact::Value ay = w.channels(rows.weight, {1, 1, size[0], 1});
  const exact::Value one = w.constant(2048);
  auto blend = [&](const exact::Value& a, const exact::Value& b, const exact::Value& weight) {
    return w.add(w.mul(a, one), w.mul(w.sub(b, a), weight));
  };
  const exact::Value t = blend(tl, tr, ax), b = blend(bl, br, ax);
  const exact::Value y = w.floor_div(w.add(blend(t, b, ay), w.constant(int64_t{1} << 21)),
                                     w.constant(int64_t{1} << 22));
  w.store(y, n.outputs[0]);
  return w.result();
}

// 8-bit (XNNPACK) or int16 (TFLite's integer kernel), input and output
// quantized alike (the kernels require it), static spatial sizes.
Check check_bilinear_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const exact::Params px = exact::params_of(x), py = exact::params_of(g.tensor(n.outputs[0]));
  if (px.type != py.type || px.scale != py.scale || px.zero != py.zero)
    return refuse(ReasonCode::kQuantization, "input and output quantized differently");
  // 8-bit: XNNPACK's kernel (TFLite's builtin 8-bit ones have no exact form yet).
  if (px.type != ir::DataType::kInt16 && exact::builtin_kernels_only(n))
    return exact::refuse_builtin_kernel();
  if (px.type != ir::DataType::kInt16 && !exact::xnnpack_quantization(x))
    return refuse(ReasonCode::kQuantization,
                  "quantization XNNPACK's delegate does not take (its builtin kernel is not "
                  "written in exact mode yet)");
  if (x.shape[1] < 1 || x.shape[2] < 1)
    return refuse(ReasonCode::kShape, "dynamic spatial sizes in exact mode");
  return std::nullopt;
}

// RESIZE_*: [N, size..., C] with the constant size (input 1).
InferredShapes infer_resize(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto size = input_ints(g, n, 1);
  if (!x || x->size() != 4 || !size || size->size() != 2 || n.outputs.size() != 1)
    return std::nullopt;
  if ((*size)[0] <= 0 || (*size)[1] <= 0) return std::nullopt;
  return one_shape({(*x)[0], (*size)[0], (*size)[1], (*x)[3]});
}

}  // namespace

OpEntry bilinear() {
  return {.read = {.min_inputs = 2, .options = read_bilinear_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_resize,
          .check = check_resize,
          .lower = lower_bilinear,
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {lower_bilinear_exact, check_bilinear_exact,
                                     InQdqGraphs::kQuantized}},
          .doc = {.onnx = "Resize",
                  .notes = "align_corners / half_pixel_centers mapped to "
                           "coordinate_transformation_mode"}};
}

OpEntry nearest_neighbor() {
  return {.read = {.min_inputs = 2, .options = read_nearest_neighbor_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_resize,
          .check = check_resize,
          .lower = lower_nearest_neighbor,
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {exact::lower_copy_as_float}},
          .doc = {.onnx = "Resize",
                  .notes = "align_corners / half_pixel_centers mapped to "
                           "coordinate_transformation_mode"}};
}

}  // namespace lite2onnx::ops::resize
