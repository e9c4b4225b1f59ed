// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: Implicit (NHWC spatial resize).
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::resize {
namespace {

using ir::TensorId;

std::string check_resize(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4); !r.empty()) return r;
  if (auto r = require_const(g, n, 1, "size"); !r.empty()) return r;
  auto size = ir::const_ints(g, n.inputs[1]);
  if (!size || size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1)
    return "size must be two positive values";
  const ir::Shape& xs = g.tensor(n.inputs[0]).shape;
  if ((xs[0] < 0 || xs[3] < 0) && (xs[1] < 1 || xs[2] < 1))
    return "needs a static batch and depth, or static spatial dimensions";
  if (n.attrs.get_int("align_corners") && n.attrs.get_int("half_pixel_centers"))
    return "align_corners and half_pixel_centers cannot both be set";
  return "";
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

OpEntry entry(bool bilinear) {
  OpEntry e;
  e.layout = LayoutClass::kImplicit;
  e.check = check_resize;
  e.min_inputs = 2;
  e.onnx = "Resize";
  e.notes = "align_corners / half_pixel_centers mapped to coordinate_transformation_mode";
  if (bilinear) {
    e.read_options = [](const tflite::Operator& op, ir::Attributes& a) {
      const auto* o = op.builtin_options_as_ResizeBilinearOptions();
      a.set("align_corners", int64_t{o && o->align_corners()});
      a.set("half_pixel_centers", int64_t{o && o->half_pixel_centers()});
    };
    e.lower = [](LowerContext& ctx, const ir::Node& n) { return lower_resize(ctx, n, true); };
  } else {
    e.read_options = [](const tflite::Operator& op, ir::Attributes& a) {
      const auto* o = op.builtin_options_as_ResizeNearestNeighborOptions();
      a.set("align_corners", int64_t{o && o->align_corners()});
      a.set("half_pixel_centers", int64_t{o && o->half_pixel_centers()});
    };
    e.lower = [](LowerContext& ctx, const ir::Node& n) { return lower_resize(ctx, n, false); };
  }
  e.infer_shapes = infer_resize;
  return e;
}

}  // namespace

OpEntry bilinear() {
  OpEntry e = entry(true);
  e.quantized = QuantizedKernel::kSameScale;
  return e;
}
OpEntry nearest_neighbor() {
  OpEntry e = entry(false);
  e.quantized = QuantizedKernel::kSameScale;
  return e;
}

}  // namespace lite2onnx::ops::resize
