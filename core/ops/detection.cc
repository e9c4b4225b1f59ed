// Detection post-processing: TFLite's custom op TFLite_Detection_PostProcess
// (SSD box decoding + fast or regular multi-class NMS) and the builtins
// NON_MAX_SUPPRESSION_V4/V5, lowered to ONNX NonMaxSuppression, TopK and
// Gather. Semantics follow TFLite's kernels (kernels/detection_postprocess.cc,
// kernels/non_max_suppression.cc); docs/operators.md lists the differences.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::detection {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;
using Kind = CustomField::Kind;

constexpr double kMaxCount = 1 << 20;   // detections, classes: far beyond real models
constexpr double kMaxScale = 1e30;      // scales and thresholds: finite
constexpr int64_t kMaxSlots = 1 << 24;  // output rows (max_detections x classes)

const CustomField kPostProcessFields[] = {
    {"max_detections", Kind::kInt, true, 0, 0, kMaxCount},
    {"max_classes_per_detection", Kind::kInt, true, 0, 1, kMaxCount},
    {"detections_per_class", Kind::kInt, false, 100, 1, kMaxCount},
    {"use_regular_nms", Kind::kBool, false, 0, 0, 1},
    {"nms_score_threshold", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
    {"nms_iou_threshold", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
    {"num_classes", Kind::kInt, true, 0, 1, kMaxCount},
    {"y_scale", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
    {"x_scale", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
    {"h_scale", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
    {"w_scale", Kind::kFloat, true, 0, -kMaxScale, kMaxScale},
};

// Rows of `rows` (a 1-D or 2-D tensor) followed by zero rows, cut to `length`
// rows (a [1] int64 tensor): TFLite's zero-padded outputs.
TensorId pad_rows(NodeBuilder& b, TensorId rows, TensorId length, std::vector<int64_t> row_shape,
                  DataType type) {
  TensorId shape = row_shape.empty() ? length
                                     : b.add("Concat", {length, b.ints(std::move(row_shape))},
                                             DataType::kInt64, {{"axis", int64_t{0}}});
  TensorId zeros = b.add("Expand", {b.scalar(type, 0), shape}, type);
  TensorId all = b.add("Concat", {rows, zeros}, type, {{"axis", int64_t{0}}});
  return b.add("Slice", {all, b.ints({0}), length, b.ints({0})}, type);
}

// ---- TFLite_Detection_PostProcess ---------------------------------------------

struct PostProcess {
  int64_t boxes = 0, coords = 0, classes_with_background = 0;
  int64_t max_detections, classes_per_detection, detections_per_class, num_classes;
  bool regular;
  float score_threshold, iou_threshold;
  float scale[4];  // y, x, h, w

  explicit PostProcess(const ir::Node& n)
      : max_detections(n.attrs.get_int("max_detections")),
        classes_per_detection(n.attrs.get_int("max_classes_per_detection")),
        detections_per_class(n.attrs.get_int("detections_per_class")),
        num_classes(n.attrs.get_int("num_classes")),
        regular(n.attrs.get_int("use_regular_nms") != 0),
        score_threshold(n.attrs.get_float("nms_score_threshold")),
        iou_threshold(n.attrs.get_float("nms_iou_threshold")),
        scale{n.attrs.get_float("y_scale"), n.attrs.get_float("x_scale"),
              n.attrs.get_float("h_scale"), n.attrs.get_float("w_scale")} {}
  int64_t slots() const { return max_detections * classes_per_detection; }
};

Check input_type_problem(const ir::Tensor& t, const char* what) {
  if (t.dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, std::string(what) + " '" + t.name + "' is " +
                                         ir::to_string(t.dtype) + " (float32 or uint8 expected)");
  if (t.quantized_type && *t.quantized_type != DataType::kUInt8)
    return refuse(ReasonCode::kQuantization, std::string(what) + " '" + t.name +
                                                 "' is quantized as " +
                                                 ir::to_string(*t.quantized_type) +
                                                 "; TFLite's kernel takes float32 or uint8");
  return {};
}

Check check_postprocess(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 3 || n.outputs.size() != 4)
    return refuse(ReasonCode::kOperands,
                  "expects 3 inputs (box encodings, class predictions, anchors) and 4 outputs");
  const PostProcess p(n);
  const ir::Tensor& enc = g.tensor(n.inputs[0]);
  const ir::Tensor& cls = g.tensor(n.inputs[1]);
  const ir::Tensor& anchors = g.tensor(n.inputs[2]);
  if (auto r = require_rank(g, n, 0, 3)) return r;
  if (auto r = require_rank(g, n, 1, 3)) return r;
  if (auto r = require_rank(g, n, 2, 2)) return r;
  for (auto [t, what] : {std::pair{&enc, "box encodings"}, std::pair{&cls, "class predictions"},
                         std::pair{&anchors, "anchors"}})
    if (auto r = input_type_problem(*t, what)) return r;
  const int64_t boxes = enc.shape[1];
  if (enc.shape[0] != 1 || cls.shape[0] != 1)
    return refuse(ReasonCode::kShape, "batch size must be 1, as in TFLite");
  if (enc.shape[2] < 4)
    return refuse(ReasonCode::kShape, "box encodings need at least 4 coordinates");
  if (cls.shape[1] != boxes || anchors.shape[0] != boxes || anchors.shape[1] != 4)
    return refuse(ReasonCode::kOperands, "box encodings " + ir::to_string(enc.shape) +
                                             ", class predictions " + ir::to_string(cls.shape) +
                                             " and anchors " + ir::to_string(anchors.shape) +
                                             " disagree on the number of boxes");
  const int64_t background = cls.shape[2] - p.num_classes;
  if (background != 0 && background != 1)
    return refuse(ReasonCode::kOperands, "class predictions have " + std::to_string(cls.shape[2]) +
                                             " classes for num_classes " +
                                             std::to_string(p.num_classes) +
                                             " (at most one background class)");
  if (!(p.iou_threshold > 0 && p.iou_threshold <= 1))
    return refuse(ReasonCode::kOperands,
                  "nms_iou_threshold must be in (0, 1], as TFLite's kernel requires");
  for (float s : p.scale)
    if (s == 0)
      return refuse(ReasonCode::kOperands, "a zero box scale (y/x/h/w_scale) divides by zero");
  if (p.max_detections < 1) return refuse(ReasonCode::kOperands, "max_detections must be positive");
  if (p.slots() > kMaxSlots)
    return refuse(ReasonCode::kLimit,
                  "max_detections x max_classes_per_detection = " + std::to_string(p.slots()) +
                      " output rows, more than " + std::to_string(kMaxSlots));
  for (TensorId o : n.outputs)
    if (g.tensor(o).dtype != DataType::kFloat32)
      return refuse(ReasonCode::kType, "outputs must be float32");
  return {};
}

InferredShapes infer_postprocess(const ir::Graph&, const ir::Node& n) {
  const PostProcess p(n);
  if (n.outputs.size() != 4 || p.slots() < 1 || p.slots() > kMaxSlots) return std::nullopt;
  return std::vector<Shape>{{1, p.slots(), 4}, {1, p.slots()}, {1, p.slots()}, {1}};
}

// Corner boxes [N, 4] (ymin, xmin, ymax, xmax) from center-size encodings and anchors.
TensorId decode_boxes(NodeBuilder& b, const PostProcess& p, TensorId encodings, TensorId anchors) {
  const DataType f = DataType::kFloat32;
  TensorId enc = b.reshape(encodings, {p.boxes, p.coords}, f);
  if (p.coords > 4) enc = b.slice(enc, 1, 0, 4, f);
  auto split4 = [&](TensorId x) {
    std::vector<TensorId> parts;
    for (int i = 0; i < 4; ++i) parts.push_back(b.slice(x, 1, i, i + 1, f));
    return parts;
  };
  const auto e = split4(enc);      // ty, tx, th, tw
  const auto a = split4(anchors);  // ycenter, xcenter, h, w
  auto mul = [&](TensorId x, TensorId y) { return b.add("Mul", {x, y}, f); };
  auto div_scale = [&](TensorId x, int i) { return b.add("Div", {x, b.floats({p.scale[i]})}, f); };
  TensorId yc = b.add("Add", {mul(div_scale(e[0], 0), a[2]), a[0]}, f);
  TensorId xc = b.add("Add", {mul(div_scale(e[1], 1), a[3]), a[1]}, f);
  TensorId half = b.floats({0.5f});
  TensorId hh = mul(mul(half, b.add("Exp", {div_scale(e[2], 2)}, f)), a[2]);
  TensorId hw = mul(mul(half, b.add("Exp", {div_scale(e[3], 3)}, f)), a[3]);
  return b.add("Concat",
               {b.add("Sub", {yc, hh}, f), b.add("Sub", {xc, hw}, f), b.add("Add", {yc, hh}, f),
                b.add("Add", {xc, hw}, f)},
               f, {{"axis", int64_t{1}}});
}

// TFLite keeps scores >= the threshold, ONNX those above it: the next float
// below gives the same set.
float inclusive_threshold(float t) {
  return std::nextafter(t, -std::numeric_limits<float>::infinity());
}

Status lower_postprocess(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  PostProcess p(n);
  p.boxes = g.tensor(n.inputs[0]).shape[1];
  p.coords = g.tensor(n.inputs[0]).shape[2];
  p.classes_with_background = g.tensor(n.inputs[1]).shape[2];
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32, i64 = DataType::kInt64;

  TensorId decoded = decode_boxes(b, p, n.inputs[0], n.inputs[2]);
  TensorId nms_boxes = b.reshape(decoded, {1, p.boxes, 4}, f);
  TensorId scores = b.reshape(n.inputs[1], {p.boxes, p.classes_with_background}, f);
  if (p.classes_with_background > p.num_classes)
    scores = b.slice(scores, 1, 1, p.classes_with_background, f);  // drop the background class
  TensorId iou = b.floats({p.iou_threshold});
  TensorId threshold = b.floats({inclusive_threshold(p.score_threshold)});
  TensorId slots = b.ints({p.slots()});

  TensorId rows_boxes, rows_classes, rows_scores, count;
  if (!p.regular) {
    // Fast NMS: each box competes with its best class score; it then reports
    // its top classes.
    const int64_t top = std::min(p.classes_per_detection, p.num_classes);
    TensorId top_scores = b.temp(f), top_classes = b.temp(i64);
    b.into("TopK", {scores, b.ints({top})}, {top_scores, top_classes}, {{"axis", int64_t{1}}});
    TensorId best = b.reshape(b.slice(top_scores, 1, 0, 1, f), {1, 1, p.boxes}, f);
    TensorId selected = b.add("NonMaxSuppression",
                              {nms_boxes, best, b.ints({p.max_detections}), iou, threshold}, i64);
    TensorId box_index = b.reshape(b.slice(selected, 1, 2, 3, i64), {-1}, i64);
    TensorId boxes = b.add("Gather", {decoded, box_index}, f, {{"axis", int64_t{0}}});
    TensorId classes = b.cast(b.add("Gather", {top_classes, box_index}, i64), f);
    TensorId class_scores = b.add("Gather", {top_scores, box_index}, f);
    // Row i * classes_per_detection + c holds box i's c-th class; columns past
    // the real classes stay zero.
    boxes = b.add("Expand", {b.reshape(boxes, {-1, 1, 4}, f), b.ints({1, top, 4})}, f);
    if (p.classes_per_detection > top) {
      const int64_t extra = p.classes_per_detection - top;
      boxes = b.add("Pad", {boxes, b.ints({0, 0, 0, 0, extra, 0})}, f);
      classes = b.add("Pad", {classes, b.ints({0, 0, 0, extra})}, f);
      class_scores = b.add("Pad", {class_scores, b.ints({0, 0, 0, extra})}, f);
    }
    rows_boxes = b.reshape(boxes, {-1, 4}, f);
    rows_classes = b.reshape(classes, {-1}, f);
    rows_scores = b.reshape(class_scores, {-1}, f);
    count = b.add("Shape", {box_index}, i64);
  } else {
    // Regular NMS: per class, then the best max_detections across classes.
    TensorId per_class =
        b.reshape(b.add("Transpose", {scores}, f, {{"perm", std::vector<int64_t>{1, 0}}}),
                  {1, p.num_classes, p.boxes}, f);
    TensorId selected =
        b.add("NonMaxSuppression",
              {nms_boxes, per_class, b.ints({p.detections_per_class}), iou, threshold}, i64);
    TensorId selected_scores = b.add("GatherND", {per_class, selected}, f);
    TensorId k =
        b.add("Min", {b.add("Shape", {selected_scores}, i64), b.ints({p.max_detections})}, i64);
    TensorId best_scores = b.temp(f), best = b.temp(i64);
    b.into("TopK", {selected_scores, k}, {best_scores, best}, {{"axis", int64_t{0}}});
    TensorId picked = b.add("Gather", {selected, best}, i64, {{"axis", int64_t{0}}});
    TensorId class_index = b.reshape(b.slice(picked, 1, 1, 2, i64), {-1}, i64);
    TensorId box_index = b.reshape(b.slice(picked, 1, 2, 3, i64), {-1}, i64);
    rows_boxes = b.add("Gather", {decoded, box_index}, f, {{"axis", int64_t{0}}});
    rows_classes = b.cast(class_index, f);
    rows_scores = best_scores;
    count = k;
  }
  b.into("Reshape", {pad_rows(b, rows_boxes, slots, {4}, f), b.ints({1, p.slots(), 4})},
         {n.outputs[0]});
  b.into("Reshape", {pad_rows(b, rows_classes, slots, {}, f), b.ints({1, p.slots()})},
         {n.outputs[1]});
  b.into("Reshape", {pad_rows(b, rows_scores, slots, {}, f), b.ints({1, p.slots()})},
         {n.outputs[2]});
  b.into("Cast", {count}, {n.outputs[3]}, {{"to", int64_t{ir::onnx_type_code(f)}}});
  return ok_status();
}

// ---- NON_MAX_SUPPRESSION_V4 / V5 ------------------------------------------------
// Inputs: boxes [N, 4], scores [N], max_output_size, iou_threshold,
// score_threshold (scalars)[, soft_nms_sigma]. Outputs: selected indices
// padded with zeros to max_output_size[, their scores], the valid count.

constexpr size_t kBoxes = 0, kScores = 1, kMaxOutput = 2, kIou = 3, kScoreThreshold = 4, kSigma = 5;

// The value of a one-element float32 constant.
std::optional<float> float_constant(const ir::Graph& g, TensorId id) {
  if (!g.valid(id)) return std::nullopt;
  const ir::Tensor& t = g.tensor(id);
  if (!t.is_const() || t.data->stored_type != DataType::kFloat32) return std::nullopt;
  auto v = t.data->as<float>();
  if (v.size() != 1) return std::nullopt;
  return v[0];
}

bool is_scalar(const ir::Tensor& t) {
  return t.has_rank && ir::element_count(t.shape).value_or(0) == 1;
}

Check check_nms(const ir::Graph& g, const ir::Node& n, bool v5) {
  const size_t inputs = v5 ? 6 : 5, outputs = v5 ? 3 : 2;
  if (n.inputs.size() != inputs || n.outputs.size() != outputs)
    return refuse(ReasonCode::kOperands, "expects " + std::to_string(inputs) + " inputs and " +
                                             std::to_string(outputs) + " outputs");
  if (auto r = require_rank(g, n, kBoxes, 2)) return r;
  const ir::Tensor& boxes = g.tensor(n.inputs[kBoxes]);
  const ir::Tensor& scores = g.tensor(n.inputs[kScores]);
  if (boxes.shape[1] != 4) return refuse(ReasonCode::kShape, "boxes must be [num_boxes, 4]");
  if (!scores.has_rank || scores.rank() != 1 ||
      (scores.shape[0] >= 0 && scores.shape[0] != boxes.shape[0]))
    return refuse(ReasonCode::kShape, "scores must be [num_boxes]");
  for (auto [t, what] : {std::pair{&boxes, "boxes"}, std::pair{&scores, "scores"}})
    if (t->dtype != DataType::kFloat32 || t->quantized_type)
      return refuse(
          ReasonCode::kType,
          std::string(what) + " must be float32 (the int8/int16 kernels are not converted)");
  const ir::Tensor& max_output = g.tensor(n.inputs[kMaxOutput]);
  if (max_output.dtype != DataType::kInt32 || !is_scalar(max_output))
    return refuse(ReasonCode::kType, "max_output_size must be an int32 scalar");
  for (size_t i : {kIou, kScoreThreshold})
    if (g.tensor(n.inputs[i]).dtype != DataType::kFloat32 || !is_scalar(g.tensor(n.inputs[i])))
      return refuse(ReasonCode::kType, "iou_threshold and score_threshold must be float32 scalars");
  if (v5) {
    auto sigma = float_constant(g, n.inputs[kSigma]);
    if (!sigma) return refuse(ReasonCode::kRuntimeValue, "soft_nms_sigma must be a constant");
    if (*sigma != 0)
      return refuse(ReasonCode::kNotExpressible,
                    "soft-NMS (soft_nms_sigma " + std::to_string(*sigma) +
                        " > 0) decays scores, which ONNX NonMaxSuppression cannot");
  }
  return {};
}

Status lower_nms(LowerContext& ctx, const ir::Node& n, bool v5) {
  const ir::Graph& g = ctx.graph();
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32, i64 = DataType::kInt64, i32 = DataType::kInt32;
  TensorId boxes = b.reshape(n.inputs[kBoxes], {1, -1, 4}, f);
  TensorId scores = b.reshape(n.inputs[kScores], {1, 1, -1}, f);
  // max_output_size as int64 [1]: the selection bound and the padded length
  // (a negative one fails in Expand, as TFLite fails).
  const TensorId length = b.cast(b.reshape(n.inputs[kMaxOutput], {1}, i32), i64);
  TensorId max_output = length;
  // TFLite suppresses at IoU >= threshold, ONNX above it: a constant
  // threshold moves to the next float below (at 0 every later box overlaps
  // "enough": one box stays). ONNX Runtime refuses thresholds outside [0, 1].
  TensorId iou;
  if (auto t = float_constant(g, n.inputs[kIou])) {
    if (*t <= 0) max_output = b.add("Min", {max_output, b.ints({1})}, i64);
    iou = b.floats({std::clamp(inclusive_threshold(*t), 0.f, 1.f)});
  } else {
    iou = b.add("Clip", {b.reshape(n.inputs[kIou], {1}, f), b.scalar(f, 0), b.scalar(f, 1)}, f);
  }
  TensorId threshold = b.reshape(n.inputs[kScoreThreshold], {1}, f);
  TensorId selected = b.add("NonMaxSuppression", {boxes, scores, max_output, iou, threshold}, i64);
  TensorId index = b.reshape(b.slice(selected, 1, 2, 3, i64), {-1}, i64);
  b.into("Identity", {pad_rows(b, b.cast(index, i32), length, {}, i32)}, {n.outputs[0]});
  if (v5) {
    TensorId picked =
        b.add("Gather", {b.reshape(n.inputs[kScores], {-1}, f), index}, f, {{"axis", int64_t{0}}});
    b.into("Identity", {pad_rows(b, picked, length, {}, f)}, {n.outputs[1]});
  }
  TensorId count = b.cast(b.reshape(b.add("Shape", {index}, i64), {}, i64), i32);
  b.into("Identity", {count}, {n.outputs.back()});
  return ok_status();
}

InferredShapes infer_nms(const ir::Graph& g, const ir::Node& n, bool v5) {
  if (n.inputs.size() != (v5 ? 6u : 5u) || n.outputs.size() != (v5 ? 3u : 2u)) return std::nullopt;
  auto m = ir::const_ints(g, n.inputs[kMaxOutput]);
  if (!m || m->size() != 1 || (*m)[0] < 0 || (*m)[0] > INT32_MAX) return std::nullopt;
  std::vector<Shape> out(n.outputs.size(), Shape{(*m)[0]});
  out.back() = Shape{};
  return out;
}

Check check_nms_v4(const ir::Graph& g, const ir::Node& n) { return check_nms(g, n, false); }
Check check_nms_v5(const ir::Graph& g, const ir::Node& n) { return check_nms(g, n, true); }
Status lower_nms_v4(LowerContext& ctx, const ir::Node& n) { return lower_nms(ctx, n, false); }
Status lower_nms_v5(LowerContext& ctx, const ir::Node& n) { return lower_nms(ctx, n, true); }
InferredShapes infer_nms_v4(const ir::Graph& g, const ir::Node& n) {
  return infer_nms(g, n, false);
}
InferredShapes infer_nms_v5(const ir::Graph& g, const ir::Node& n) { return infer_nms(g, n, true); }

Status read_postprocess_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kPostProcessFields, attrs);
}

}  // namespace

OpEntry non_max_suppression_v4() {
  return {.read = {.min_inputs = -1},
          .infer_shapes = infer_nms_v4,
          .check = check_nms_v4,
          .lower = lower_nms_v4,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "NonMaxSuppression + Gather, zero padding (Expand + Concat + Slice)",
                  .dtypes = "float32 (int32 indices)",
                  .notes = "equal scores keep the lower index first"}};
}

OpEntry non_max_suppression_v5() {
  return {.read = {.min_inputs = -1},
          .infer_shapes = infer_nms_v5,
          .check = check_nms_v5,
          .lower = lower_nms_v5,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "NonMaxSuppression + Gather, zero padding (Expand + Concat + Slice)",
                  .dtypes = "float32 (int32 indices)",
                  .notes = "soft_nms_sigma 0 only (soft-NMS has no ONNX form); equal scores keep "
                           "the lower index first"}};
}

OpEntry detection_postprocess() {
  return {.read = {.min_inputs = -1, .custom_options = read_postprocess_options},
          .infer_shapes = infer_postprocess,
          .check = check_postprocess,
          .lower = lower_postprocess,
          // DequantizeBoxEncodings / DequantizeClassPredictions: (float(q) - z) * s.
          .quantization = {.dequantizes_inputs = true},
          .doc = {.onnx = "Exp/Mul/Add (box decoding) + NonMaxSuppression + TopK + Gather",
                  .dtypes = "float32, uint8 (-> float32 outputs)",
                  .notes = "fast (use_regular_nms false) and regular NMS, background class, "
                           "max_classes_per_detection; rows past num_detections are zeros "
                           "(TFLite's fast path leaves them unwritten); equal scores keep the "
                           "lower index first"}};
}

}  // namespace lite2onnx::ops::detection
