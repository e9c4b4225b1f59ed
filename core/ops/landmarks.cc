// MediaPipe's landmark and crop transforms (mediapipe/util/tflite/operations):
// Landmarks2TransformMatrix turns face landmarks into a crop matrix,
// TransformTensorBilinear samples a feature map through it, and
// TransformLandmarks maps landmarks back. Semantics from MediaPipe's CPU
// kernels, version 2 (the one MediaPipe's op resolvers register).
#include <cmath>
#include <cstdint>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::landmarks {
namespace {

using ir::DataType;
using ir::TensorId;
using Kind = CustomField::Kind;

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI64 = DataType::kInt64;
constexpr int kVersion = 2;
constexpr double kMaxIndex = 1 << 20;  // landmark indices: far beyond real models

// The static element count of input i, or -1.
int64_t elements(const ir::Graph& g, const ir::Node& n, size_t i) {
  auto s = ir::static_shape(g.tensor(n.inputs[i]));
  if (!s) return -1;
  auto count = ir::element_count(*s);
  return count ? static_cast<int64_t>(*count) : -1;
}

Check check_float32(const ir::Graph& g, const ir::Node& n, size_t i, const char* what) {
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (t.dtype != kF32 || t.quantized_type)
    return refuse(ReasonCode::kType,
                  std::string(what) + " must be float32, as MediaPipe's kernel reads it");
  return {};
}

// The kernels read the first two rows of a 4x4 matrix: 8 floats.
Check check_matrix(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (auto r = check_float32(g, n, i, "the matrix")) return r;
  const int64_t count = elements(g, n, i);
  if (count < 8)
    return refuse(ReasonCode::kShape,
                  "the matrix needs a static shape of at least 8 elements (got " +
                      ir::to_string(g.tensor(n.inputs[i]).shape) + ")");
  return {};
}

// The matrix's first 8 elements: rows x and y of the 4x4 transform.
TensorId matrix_rows(NodeBuilder& b, TensorId matrix) {
  return b.slice(b.reshape(matrix, {-1}, kF32), 0, 0, 8, kF32);
}

// ---- TransformTensorBilinear ---------------------------------------------------------

Check check_transform_tensor(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects 2 inputs (data, matrix) and 1 output");
  if (auto r = require_rank(g, n, 0, 4)) return r;
  if (auto r = check_float32(g, n, 0, "the data")) return r;
  if (auto r = check_matrix(g, n, 1)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  auto out = ir::static_shape(y);
  if (!out || out->size() != 4)
    return refuse(ReasonCode::kShape,
                  "the output needs a static 4-D shape (the kernel takes its size from it)");
  if (x.shape[0] != 1 || (*out)[0] != 1)
    return refuse(ReasonCode::kShape, "batch must be 1 (the kernel reads batch 0 only)");
  constexpr int64_t kMaxSpatial = int64_t{1} << 20;  // the per-pixel constants stay small
  if (x.shape[1] > kMaxSpatial || x.shape[2] > kMaxSpatial || (*out)[1] > kMaxSpatial ||
      (*out)[2] > kMaxSpatial)
    return refuse(ReasonCode::kLimit, "spatial sizes beyond " + std::to_string(kMaxSpatial));
  if ((*out)[3] != x.shape[3])
    return refuse(ReasonCode::kOperands, "output channels " + std::to_string((*out)[3]) +
                                             " differ from the input's " +
                                             std::to_string(x.shape[3]));
  return {};
}

// Output pixel (x, y) samples the input at (a x + b y + d) of each matrix
// row, corrected for aligned corners as version 2 does, bilinearly; corners
// past the edge read 0 and a point outside [0, size - 1] gives 0. In NCHW:
// the padded input flattened to [C, (H + 1) * (W + 1)], four Gathers.
Status lower_transform_tensor(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t h = x.shape[1], w = x.shape[2], c = x.shape[3];
  const int64_t oh = y.shape[1], ow = y.shape[2];
  NodeBuilder b(ctx, n);
  const ir::Shape column = {2, 1, 1};  // one value per coordinate (x, y)
  TensorId m = matrix_rows(b, n.inputs[1]);
  TensorId ma = b.add("Gather", {m, b.ints({0, 4}, column)}, kF32);
  TensorId mb = b.add("Gather", {m, b.ints({1, 5}, column)}, kF32);
  TensorId md = b.add("Gather", {m, b.ints({3, 7}, column)}, kF32);
  // d += a * 0.5 + b * 0.5 - 0.5, in the kernel's order.
  TensorId half = b.scalar(kF32, 0.5);
  TensorId shift = b.add(
      "Sub",
      {b.add("Add", {b.add("Mul", {ma, half}, kF32), b.add("Mul", {mb, half}, kF32)}, kF32), half},
      kF32);
  md = b.add("Add", {md, shift}, kF32);
  std::vector<float> xs(static_cast<size_t>(ow)), ys(static_cast<size_t>(oh));
  for (int64_t i = 0; i < ow; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i);
  for (int64_t i = 0; i < oh; ++i) ys[static_cast<size_t>(i)] = static_cast<float>(i);
  TensorId coords = b.add("Add",
                          {b.add("Add",
                                 {b.add("Mul", {ma, b.floats(xs, ir::Shape{1, 1, ow})}, kF32),
                                  b.add("Mul", {mb, b.floats(ys, ir::Shape{1, oh, 1})}, kF32)},
                                 kF32),
                           md},
                          kF32);  // [2, OH, OW]
  TensorId floor = b.add("Floor", {coords}, kF32);
  TensorId frac = b.add("Sub", {coords, floor}, kF32);
  // Inside [0, size - 1] per coordinate; NaN is outside.
  TensorId limit = b.floats({static_cast<float>(w - 1), static_cast<float>(h - 1)}, column);
  TensorId inside2 = b.add("And",
                           {b.add("GreaterOrEqual", {coords, b.scalar(kF32, 0)}, DataType::kBool),
                            b.add("LessOrEqual", {coords, limit}, DataType::kBool)},
                           DataType::kBool);
  auto pick = [&](TensorId t, int64_t k, DataType type) {
    return b.add("Gather", {t, b.scalar(kI64, static_cast<double>(k))}, type);
  };
  TensorId inside =
      b.reshape(b.add("And", {pick(inside2, 0, DataType::kBool), pick(inside2, 1, DataType::kBool)},
                      DataType::kBool),
                {-1}, DataType::kBool);
  // Corner indices: only points inside matter, the others read pixel 0.
  TensorId corner = b.cast(b.add("Where", {inside2, floor, b.scalar(kF32, 0)}, kF32), kI64);
  const int64_t stride = w + 1;  // the padded row
  TensorId top_left = b.reshape(
      b.add("Add",
            {b.add("Mul", {pick(corner, 1, kI64), b.ints({stride})}, kI64), pick(corner, 0, kI64)},
            kI64),
      {-1}, kI64);
  TensorId right = b.reshape(pick(frac, 0, kF32), {-1}, kF32);
  TensorId lower = b.reshape(pick(frac, 1, kF32), {-1}, kF32);
  TensorId padded = b.add("Pad", {n.inputs[0], b.ints({0, 0, 0, 0, 0, 0, 1, 1})}, kF32);
  TensorId plane = b.reshape(padded, {c, -1}, kF32);
  auto read = [&](int64_t offset) {
    TensorId at = offset ? b.add("Add", {top_left, b.ints({offset})}, kI64) : top_left;
    return b.add("Gather", {plane, at}, kF32, {{"axis", int64_t{1}}});
  };
  TensorId q11 = read(0), q21 = read(1), q12 = read(stride), q22 = read(stride + 1);
  TensorId one = b.scalar(kF32, 1);
  auto mix = [&](TensorId weight, TensorId a, TensorId bb) {
    TensorId keep = b.add("Sub", {one, weight}, kF32);
    return b.add("Add", {b.add("Mul", {keep, a}, kF32), b.add("Mul", {weight, bb}, kF32)}, kF32);
  };
  TensorId upper_row = mix(right, q11, q21);
  TensorId lower_row = mix(right, q12, q22);
  // lower * lower_row + (1 - lower) * upper_row, as the kernel sums it.
  TensorId value = b.add("Add",
                         {b.add("Mul", {lower, lower_row}, kF32),
                          b.add("Mul", {b.add("Sub", {one, lower}, kF32), upper_row}, kF32)},
                         kF32);
  TensorId masked = b.add("Where", {inside, value, b.scalar(kF32, 0)}, kF32);
  b.into("Reshape", {masked, b.ints({1, c, oh, ow})}, {n.outputs[0]});
  return ok_status();
}

// ---- TransformLandmarks -------------------------------------------------------------

Check check_transform_landmarks(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects 2 inputs (landmarks, matrix) and 1 output");
  if (auto r = require_rank(g, n, 0, 3)) return r;
  if (auto r = check_float32(g, n, 0, "the landmarks")) return r;
  if (auto r = check_matrix(g, n, 1)) return r;
  const ir::Shape& s = g.tensor(n.inputs[0]).shape;
  if (s[0] != 1)
    return refuse(ReasonCode::kShape,
                  "the first dimension must be 1 (the kernel transforms row 0 only)");
  if (s[2] != 2 && s[2] != 3)
    return refuse(ReasonCode::kShape,
                  "landmarks must have 2 or 3 coordinates (got " + std::to_string(s[2]) + ")");
  return {};
}

// (x, y) -> (a x + b y + d) per matrix row; z passes through.
Status lower_transform_landmarks(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const int64_t dims = g.tensor(n.inputs[0]).shape[2];
  NodeBuilder b(ctx, n);
  TensorId m = matrix_rows(b, n.inputs[1]);
  TensorId linear = b.add("Gather", {m, b.ints({0, 4, 1, 5}, ir::Shape{2, 2})}, kF32);
  TensorId offset = b.add("Gather", {m, b.ints({3, 7})}, kF32);
  TensorId xy = dims == 2 ? n.inputs[0] : b.slice(n.inputs[0], 2, 0, 2, kF32);
  TensorId moved = b.add("Add", {b.add("MatMul", {xy, linear}, kF32), offset}, kF32);
  if (dims == 2) {
    b.into("Identity", {moved}, {n.outputs[0]});
  } else {
    b.into("Concat", {moved, b.slice(n.inputs[0], 2, 2, 3, kF32)}, {n.outputs[0]},
           {{"axis", int64_t{2}}});
  }
  return ok_status();
}

// ---- Landmarks2TransformMatrix ------------------------------------------------------

const CustomField kToMatrixFields[] = {
    {"subset_idxs", Kind::kInts, true, 0, 0, kMaxIndex},
    {"left_rotation_idx", Kind::kInt, false, 0, 0, kMaxIndex},
    {"right_rotation_idx", Kind::kInt, false, 0, 0, kMaxIndex},
    {"target_rotation_radians", Kind::kFloat, false, 0, -1e6, 1e6},
    {"output_height", Kind::kInt, true, 0, 1, 1 << 24},
    {"output_width", Kind::kInt, true, 0, 1, 1 << 24},
    {"scale_x", Kind::kFloat, true, 0, 1e-30, 1e30},
    {"scale_y", Kind::kFloat, true, 0, 1e-30, 1e30},
};

Status read_to_matrix_options(std::span<const uint8_t> bytes, ir::Attributes& a) {
  return read_flex_fields(bytes, kToMatrixFields, a);
}

// The landmark indices the op reads (3 floats each, whatever the shape says).
std::vector<int64_t> read_landmarks(const ir::Node& n) {
  std::vector<int64_t> idx = n.attrs.get_ints("subset_idxs");
  idx.push_back(n.attrs.get_int("left_rotation_idx"));
  idx.push_back(n.attrs.get_int("right_rotation_idx"));
  return idx;
}

Check check_to_matrix(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 1 || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects 1 input (landmarks) and 1 output");
  if (auto r = check_float32(g, n, 0, "the landmarks")) return r;
  const int64_t count = elements(g, n, 0);
  if (count < 0) return refuse(ReasonCode::kShape, "the landmarks need a static shape");
  for (int64_t i : read_landmarks(n))
    if (3 * i + 2 >= count)
      return refuse(ReasonCode::kOperands, "landmark " + std::to_string(i) + " is beyond the " +
                                               std::to_string(count / 3) +
                                               " landmarks of the input");
  return {};
}

// The crop of the subset's landmarks after rotating them so the line from the
// left to the right rotation landmark lies at the target angle: rotation r =
// target - atan2(dy, dx). ONNX has no atan2: cos r and sin r come from the
// unit vector (dx, dy) by the angle-difference identities instead. Then
// M = shift(center) rot(-r) scale(crop / output * scale) shift(-output / 2).
Status lower_to_matrix(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const std::vector<int64_t> subset = n.attrs.get_ints("subset_idxs");
  const int64_t left = n.attrs.get_int("left_rotation_idx");
  const int64_t right = n.attrs.get_int("right_rotation_idx");
  const double target = n.attrs.get_float("target_rotation_radians");
  const auto out_h = static_cast<float>(n.attrs.get_int("output_height"));
  const auto out_w = static_cast<float>(n.attrs.get_int("output_width"));
  TensorId flat = b.reshape(n.inputs[0], {-1}, kF32);
  auto xy_of = [](int64_t i) { return std::vector<int64_t>{3 * i, 3 * i + 1}; };
  TensorId delta = b.add("Sub",
                         {b.add("Gather", {flat, b.ints(xy_of(right))}, kF32),
                          b.add("Gather", {flat, b.ints(xy_of(left))}, kF32)},
                         kF32);
  TensorId length = b.add(
      "Sqrt", {b.add("ReduceSum", {b.add("Mul", {delta, delta}, kF32), b.ints({0})}, kF32)}, kF32);
  // atan2(0, 0) = 0: the unit vector (1, 0).
  TensorId unit = b.add("Where",
                        {b.add("Equal", {length, b.scalar(kF32, 0)}, DataType::kBool),
                         b.floats({1, 0}), b.add("Div", {delta, length}, kF32)},
                        kF32);
  const auto ct = static_cast<float>(std::cos(target)), st = static_cast<float>(std::sin(target));
  TensorId cos_sin =
      b.add("MatMul", {b.floats({ct, st, st, -ct}, ir::Shape{2, 2}), unit}, kF32);  // (c, s)
  TensorId signs = b.add("Concat", {cos_sin, b.add("Neg", {cos_sin}, kF32)}, kF32,
                         {{"axis", int64_t{0}}});  // (c, s, -c, -s)
  // [[c, s], [-s, c]]: row vectors times it rotate by r; it is also rot(-r).
  TensorId rotate = b.add("Gather", {signs, b.ints({0, 1, 3, 0}, ir::Shape{2, 2})}, kF32);
  // [[c, -s], [s, c]]: row vectors times it rotate by -r.
  TensorId unrotate = b.add("Gather", {signs, b.ints({0, 3, 1, 0}, ir::Shape{2, 2})}, kF32);
  std::vector<int64_t> points;
  for (int64_t i : subset)
    for (int64_t k : xy_of(i)) points.push_back(k);
  TensorId xy = b.add(
      "Gather", {flat, b.ints(points, ir::Shape{static_cast<int64_t>(subset.size()), 2})}, kF32);
  TensorId turned = b.add("MatMul", {xy, rotate}, kF32);
  const std::vector<ir::Attr> over_points = {{"axes", std::vector<int64_t>{0}},
                                             {"keepdims", int64_t{0}}};
  TensorId hi = b.add("ReduceMax", {turned}, kF32, over_points);
  TensorId lo = b.add("ReduceMin", {turned}, kF32, over_points);
  TensorId size = b.add("Sub", {hi, lo}, kF32);
  TensorId middle = b.add("Div", {b.add("Add", {lo, hi}, kF32), b.scalar(kF32, 2)}, kF32);
  TensorId center =
      b.reshape(b.add("MatMul", {b.reshape(middle, {1, 2}, kF32), unrotate}, kF32), {2}, kF32);
  const float scale_x = n.attrs.get_float("scale_x"), scale_y = n.attrs.get_float("scale_y");
  TensorId scale = b.add(
      "Div", {b.add("Mul", {b.floats({scale_x, scale_y}), size}, kF32), b.floats({out_w, out_h})},
      kF32);
  TensorId linear = b.add("Mul", {rotate, b.reshape(scale, {1, 2}, kF32)}, kF32);
  TensorId offset = b.add(
      "Add", {b.add("MatMul", {linear, b.floats({-out_w / 2, -out_h / 2})}, kF32), center}, kF32);
  TensorId top =
      b.add("Concat", {linear, b.floats({0, 0}, ir::Shape{2, 1}), b.reshape(offset, {2, 1}, kF32)},
            kF32, {{"axis", int64_t{1}}});
  TensorId matrix = b.add("Concat", {top, b.floats({0, 0, 1, 0, 0, 0, 0, 1}, ir::Shape{2, 4})},
                          kF32, {{"axis", int64_t{0}}});
  b.into("Reshape", {matrix, b.ints({1, 4, 4})}, {n.outputs[0]});
  return ok_status();
}

InferredShapes infer_to_matrix(const ir::Graph&, const ir::Node& n) {
  if (n.outputs.size() != 1) return std::nullopt;
  return std::vector<ir::Shape>{{1, 4, 4}};
}

}  // namespace

// Version 2, the one MediaPipe's resolvers register, of each transform.
OpEntry transform_tensor_bilinear() {
  return {.read = {.min_inputs = -1, .custom_version = kVersion},
          .layout = {.kind = LayoutClass::kImplicit},
          .check = check_transform_tensor,
          .lower = lower_transform_tensor,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Pad, Gather (4 corners), Where",
                  .notes = "MediaPipe, version 2; data in NCHW; output size from the output "
                           "tensor, as the kernel; batch 1"}};
}

OpEntry transform_landmarks() {
  return {.read = {.min_inputs = -1, .custom_version = kVersion},
          .infer_shapes = infer_same_as_input,
          .check = check_transform_landmarks,
          .lower = lower_transform_landmarks,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "MatMul, Add (x, y); z kept",
                  .notes = "MediaPipe, version 2; [1, N, 2 or 3] landmarks"}};
}

OpEntry landmarks_to_transform_matrix() {
  return {.read = {.min_inputs = -1,
                   .custom_options = read_to_matrix_options,
                   .custom_version = kVersion},
          .infer_shapes = infer_to_matrix,
          .check = check_to_matrix,
          .lower = lower_to_matrix,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Gather, MatMul, ReduceMax/Min, Concat",
                  .notes = "MediaPipe, version 2; the rotation from the angle-difference "
                           "identities (ONNX has no atan2)"}};
}

}  // namespace lite2onnx::ops::landmarks
