// Coral's custom op PosenetDecoderOp (google-coral/libcoral,
// coral/pose_estimation/posenet_decoder_op.cc and posenet_decoder.cc):
// multi-person pose decoding (PersonLab) from keypoint heatmaps and short-
// and mid-range offsets, and for BodyPix person masks from long-range
// offsets. Every float operation is the kernel's, in its order (as GCC builds
// it for x86-64: no fused multiply-add), so the poses come out as the kernel
// computes them:
//   - root candidates: local maxima (3x3) of each heatmap channel at or above
//     the score threshold's logit, moved by their short offsets;
//   - a pose from every candidate, keypoint by keypoint along the skeleton
//     from the root (mid-range offsets, then five short-range refinements;
//     the skeleton is a tree, so each keypoint comes from one path), scored
//     by the sigmoid of its heatmap (exp in double, rounded to float: glibc's
//     expf is within an ulp of that, and equal to it but for rare cases);
//   - the poses kept: posenet_select.cc;
//   - soft keypoint NMS rescoring and the final order, then the outputs in
//     pixels; rows past the count are zeros (the kernel leaves them unwritten);
//   - BodyPix: each long-offset cell assigned to the nearest pose.
// Equal instance scores keep the order the poses were kept in: so does the
// kernel's std::sort for up to 16 poses (libstdc++ sorts that few by
// insertion); beyond, their order is unspecified.
// The options (a FlexBuffer map, read as the kernel's Init reads it):
// max_detections, score_threshold, stride (> 0, as its Eval requires) and
// nms_radius (in pixels, divided by the stride in map units).
#include "core/ops/posenet.h"

#include <array>
#include <cmath>
#include <limits>
#include <queue>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"
#include "core/options.h"

namespace lite2onnx::ops::posenet {

using ir::DataType;
using ir::TensorId;
using Kind = CustomField::Kind;

namespace {

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI64 = DataType::kInt64;
constexpr DataType kBool = DataType::kBool;
constexpr int64_t kMaskSize = 33;  // the kernel's instance masks are 33x33, whatever the input
constexpr int64_t kMaxCells = int64_t{1} << 22;  // H * W * 17: far beyond real heatmaps

const CustomField kFields[] = {
    {"max_detections", Kind::kInt, true, 0, 1, 1 << 16},
    {"score_threshold", Kind::kFloat, true, 0, -1e30, 1e30},
    {"stride", Kind::kInt, true, 0, 1, 1 << 16},
    {"nms_radius", Kind::kFloat, true, 0, -1e30, 1e30},
};

// kEdgeList: 16 forward edges (parent, child), then the same backward.
constexpr std::array<std::array<int64_t, 2>, 16> kForward = {{{0, 1},
                                                              {1, 3},
                                                              {0, 2},
                                                              {2, 4},
                                                              {0, 5},
                                                              {5, 7},
                                                              {7, 9},
                                                              {5, 11},
                                                              {11, 13},
                                                              {13, 15},
                                                              {0, 6},
                                                              {6, 8},
                                                              {8, 10},
                                                              {6, 12},
                                                              {12, 14},
                                                              {14, 16}}};

struct Params {
  int64_t max_detections, stride;
  float threshold, nms_radius;
  explicit Params(const ir::Node& n)
      : max_detections(n.attrs.get_int("max_detections")),
        stride(n.attrs.get_int("stride")),
        threshold(n.attrs.get_float("score_threshold")),
        nms_radius(n.attrs.get_float("nms_radius")) {}
  // In map units, squared, as the kernel computes it in float.
  float squared_radius() const {
    const float r = nms_radius / static_cast<float>(stride);
    return r * r;
  }
  // Logodds(threshold): in double, returned as float.
  float min_logit() const {
    return static_cast<float>(-std::log(1.0 / (static_cast<double>(threshold) + 1E-6) - 1.0));
  }
  // The extra scale of the offsets: 1.0 / stride in double, passed as float.
  float extra() const { return static_cast<float>(1.0 / static_cast<double>(stride)); }
};

// For each root keypoint, the skeleton walked from it: 16 steps (parent,
// child, the mid-offset channels of y and x), every parent before its
// children. The kernel's queue visits them in another order, to the same
// positions: each keypoint is reached from its one neighbour towards the root.
std::vector<int64_t> walks() {
  std::vector<std::vector<std::array<int64_t, 2>>> children(kKeypoints);  // (child, edge)
  for (int64_t e = 0; e < 2 * kEdges; ++e) {
    const auto& [a, b] = kForward[static_cast<size_t>(e % kEdges)];
    const int64_t parent = e < kEdges ? a : b, child = e < kEdges ? b : a;
    children[static_cast<size_t>(parent)].push_back({child, e});
  }
  std::vector<int64_t> table;
  for (int64_t root = 0; root < kKeypoints; ++root) {
    std::vector<bool> seen(kKeypoints, false);
    std::queue<int64_t> next;
    next.push(root);
    seen[static_cast<size_t>(root)] = true;
    while (!next.empty()) {
      const int64_t p = next.front();
      next.pop();
      for (const auto& [child, edge] : children[static_cast<size_t>(p)]) {
        if (seen[static_cast<size_t>(child)]) continue;
        seen[static_cast<size_t>(child)] = true;
        next.push(child);
        // Backward edges read the second half of the mid offsets.
        const int64_t channel = edge >= kEdges ? edge + kEdges : edge;
        table.insert(table.end(), {p, child, channel, kEdges + channel});
      }
    }
  }
  return table;  // [17, 16, 4]
}

Check check_input(const ir::Graph& g, const ir::Node& n, size_t i, const char* what,
                  int64_t channels) {
  if (auto r = require_rank(g, n, i, 4)) return r;
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (t.dtype != kF32 || (t.quantized_type && *t.quantized_type != DataType::kUInt8))
    return refuse(ReasonCode::kType,
                  std::string(what) + " must be float32 or uint8, as the kernel reads them");
  if (t.quantized_type && (!t.quant || t.quant->scale.size() != 1))
    return refuse(ReasonCode::kQuantization,
                  std::string(what) + " must be quantized per tensor, as the kernel reads them");
  if (t.shape[0] != 1 || t.shape[3] != channels)
    return refuse(ReasonCode::kShape, std::string(what) + " must be [1, H, W, " +
                                          std::to_string(channels) + "] (got " +
                                          ir::to_string(t.shape) + ")");
  return {};
}

Check check_decoder(const ir::Graph& g, const ir::Node& n) {
  const bool masks = n.inputs.size() == 4;
  if (!((n.inputs.size() == 3 && n.outputs.size() == 4) || (masks && n.outputs.size() == 5)))
    return refuse(ReasonCode::kOperands,
                  "expects 3 inputs and 4 outputs, or 4 inputs and 5 outputs (BodyPix)");
  if (auto r = check_input(g, n, 0, "heatmaps", kKeypoints)) return r;
  if (auto r = check_input(g, n, 1, "short offsets", 2 * kKeypoints)) return r;
  if (auto r = check_input(g, n, 2, "mid offsets", 4 * kEdges)) return r;
  const ir::Shape& heat = g.tensor(n.inputs[0]).shape;
  for (size_t i : {1, 2})
    if (g.tensor(n.inputs[i]).shape[1] != heat[1] || g.tensor(n.inputs[i]).shape[2] != heat[2])
      return refuse(ReasonCode::kShape,
                    "the offsets must have the heatmaps' height and width (the kernel reads "
                    "them with the heatmaps' sizes)");
  if (heat[1] < 1 || heat[2] < 1)
    return refuse(ReasonCode::kShape, "heatmaps " + ir::to_string(heat) +
                                          ": the height and width must be known and not 0");
  if (heat[1] > kMaxCells || heat[2] > kMaxCells || heat[1] * heat[2] * kKeypoints > kMaxCells)
    return refuse(ReasonCode::kLimit, "heatmaps " + ir::to_string(heat) + ": more than " +
                                          std::to_string(kMaxCells) + " scores");
  if (masks) {
    if (auto r = check_input(g, n, 3, "long offsets", 2 * kKeypoints)) return r;
    const ir::Shape& longs = g.tensor(n.inputs[3]).shape;
    if (longs[1] != kMaskSize || longs[2] != kMaskSize)
      return refuse(ReasonCode::kShape,
                    "long offsets must be 33x33, the size of the kernel's instance masks (got " +
                        ir::to_string(longs) + ")");
  }
  for (TensorId o : n.outputs)
    if (g.tensor(o).dtype != kF32)
      return refuse(ReasonCode::kType, "the outputs must be float32, as the kernel writes them");
  return {};
}

InferredShapes infer_decoder(const ir::Graph&, const ir::Node& n) {
  const int64_t m = n.attrs.get_int("max_detections");
  if (m < 1 || (n.outputs.size() != 4 && n.outputs.size() != 5)) return std::nullopt;
  std::vector<ir::Shape> shapes{{1, m, kKeypoints, 2}, {1, m, kKeypoints}, {1, m}, {1}};
  if (n.outputs.size() == 5) shapes.push_back({1, m, kMaskSize, kMaskSize});
  return shapes;
}

// The kernel's float copy of input i, flattened: (q - zero point) * (scale *
// extra) for uint8, x * extra for float. Quantized inputs arrive dequantized
// by DequantizeLinear ((q - zero point) * scale): with another factor, the
// integer is taken back first (exact: it rounds a value within an ulp).
TensorId kernel_copy(NodeBuilder& b, LowerContext& ctx, const ir::Node& n, size_t i, float extra) {
  const ir::Tensor& t = ctx.tensor(n.inputs[i]);
  TensorId x = b.reshape(n.inputs[i], {-1}, kF32);
  if (extra == 1.0f) return x;
  if (t.quantized_type && qdq_graph(ctx.quantization())) {
    const float scale = t.quant->scale[0];
    TensorId integer = b.add("Round", {b.add("Div", {x, b.scalar(kF32, scale)}, kF32)}, kF32);
    return b.add("Mul", {integer, b.scalar(kF32, scale * extra)}, kF32);
  }
  return b.add("Mul", {x, b.scalar(kF32, extra)}, kF32);
}

TensorId column(NodeBuilder& b, TensorId x, int64_t k, DataType type) {
  return b.slice(x, 1, k, k + 1, type);
}

// Sum of each row's values in decreasing order, in float, one add at a time
// (DecreasingArgSort, then the kernel's loop), divided by 17.
// The rows get one row of zeros more for the sort, dropped after it: ONNX
// Runtime's TopK divides by the row count, and with no candidate or no pose
// there are none (SIGFPE, onnxruntime-node 1.30).
TensorId mean_decreasing(NodeBuilder& b, TensorId values, TensorId order_by) {
  const TensorId zeros = b.floats(std::vector<float>(kKeypoints, 0.0f), ir::Shape{1, kKeypoints});
  auto grown = [&](TensorId rows) {
    return b.add("Concat", {rows, zeros}, kF32, {{"axis", int64_t{0}}});
  };
  TensorId sorted = b.temp(kF32), order = b.temp(kI64);
  b.into("TopK", {grown(order_by), b.ints({kKeypoints})}, {sorted, order}, {{"axis", int64_t{1}}});
  if (values != order_by)
    sorted = b.add("GatherElements", {grown(values), order}, kF32, {{"axis", int64_t{1}}});
  sorted = b.add("Slice", {sorted, b.ints({0}), b.ints({-1}), b.ints({0})}, kF32);
  TensorId total = column(b, sorted, 0, kF32);
  for (int64_t k = 1; k < kKeypoints; ++k)
    total = b.add("Add", {total, column(b, sorted, k, kF32)}, kF32);
  return b.reshape(b.add("Div", {total, b.scalar(kF32, kKeypoints)}, kF32), {-1}, kF32);
}

TensorId sigmoid(NodeBuilder& b, TensorId x) {
  TensorId e = b.cast(
      b.add("Exp", {b.cast(b.add("Neg", {x}, kF32), DataType::kFloat64)}, DataType::kFloat64),
      kF32);
  return b.add("Div", {b.scalar(kF32, 1), b.add("Add", {b.scalar(kF32, 1), e}, kF32)}, kF32);
}

// The root candidates: positions, ids, refined roots.
Candidates find_candidates(NodeBuilder& b, const Params& p, const Map& heat, const Map& shorts) {
  Candidates c;
  const int64_t h = heat.h, w = heat.w;
  c.max_count = h * w * kKeypoints;
  // Local maxima: no neighbour (3x3, within the map) strictly greater.
  TensorId planes = b.add("Transpose", {b.reshape(heat.data, {1, h, w, kKeypoints}, kF32)}, kF32,
                          {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
  TensorId pooled = b.add("MaxPool", {planes}, kF32,
                          {{"kernel_shape", std::vector<int64_t>{3, 3}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                           {"strides", std::vector<int64_t>{1, 1}}});
  TensorId neighbourhood = b.reshape(
      b.add("Transpose", {pooled}, kF32, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}), {-1}, kF32);
  TensorId wanted =
      b.add("And",
            {b.add("Equal", {heat.data, neighbourhood}, kBool),
             b.add("GreaterOrEqual", {heat.data, b.scalar(kF32, p.min_logit())}, kBool)},
            kBool);
  TensorId index = b.reshape(b.add("NonZero", {wanted}, kI64), {-1}, kI64);  // scan order
  c.count = b.reshape(b.add("Shape", {index}, kI64), {}, kI64);
  c.score = b.add("Gather", {heat.data, index}, kF32);
  TensorId cell = b.add("Div", {index, b.scalar(kI64, kKeypoints)}, kI64);
  c.keypoint = b.add("Mod", {index, b.scalar(kI64, kKeypoints)}, kI64);
  TensorId row = b.add("Div", {cell, b.scalar(kI64, w)}, kI64);
  TensorId col = b.add("Mod", {cell, b.scalar(kI64, w)}, kI64);
  TensorId at =
      b.add("Add", {b.add("Mul", {cell, b.scalar(kI64, shorts.c)}, kI64), c.keypoint}, kI64);
  TensorId dy = b.add("Gather", {shorts.data, at}, kF32);
  TensorId dx =
      b.add("Gather", {shorts.data, b.add("Add", {at, b.scalar(kI64, kKeypoints)}, kI64)}, kF32);
  c.root_y = clamp_to(b, b.add("Add", {b.cast(row, kF32), dy}, kF32), h);
  c.root_x = clamp_to(b, b.add("Add", {b.cast(col, kF32), dx}, kF32), w);
  return c;
}

// One displacement: position += sample of `m` at (channel cy, cx), clamped.
void displace(NodeBuilder& b, const Map& m, TensorId& y, TensorId& x, TensorId cy, TensorId cx,
              int64_t h, int64_t w) {
  TensorId oy = sample(b, m, y, x, cy);
  TensorId ox = sample(b, m, y, x, cx);
  y = clamp_to(b, b.add("Add", {y, oy}, kF32), h);
  x = clamp_to(b, b.add("Add", {x, ox}, kF32), w);
}

// Every candidate's pose ([K, 17] y and x), walked from its root along the
// skeleton: a Loop over the 16 steps, all candidates at once.
void decode_poses(NodeBuilder& b, Candidates& c, const Map& shorts, const Map& mids) {
  const int64_t h = shorts.h, w = shorts.w;
  TensorId walk =
      b.add("Gather", {b.ints(walks(), ir::Shape{kKeypoints, kKeypoints - 1, 4}), c.keypoint},
            kI64);  // [K, 16, 4]
  TensorId zeros = b.add(
      "Expand",
      {b.scalar(kF32, 0), b.add("Concat", {b.reshape(c.count, {1}, kI64), b.ints({kKeypoints})},
                                kI64, {{"axis", int64_t{0}}})},
      kF32);
  TensorId root = b.reshape(c.keypoint, {-1, 1}, kI64);
  auto start = [&](TensorId v) {
    return b.add("ScatterElements", {zeros, root, b.reshape(v, {-1, 1}, kF32)}, kF32,
                 {{"axis", int64_t{1}}});
  };
  LoopBuilder loop(b, "walk");
  NodeBuilder& body = loop.body();
  TensorId py = loop.carry(start(c.root_y), kF32, {-1, kKeypoints});
  TensorId px = loop.carry(start(c.root_x), kF32, {-1, kKeypoints});
  TensorId step = body.add("Gather", {loop.capture(walk), loop.iteration()}, kI64,
                           {{"axis", int64_t{1}}});  // [K, 4]
  const Map inner_shorts{loop.capture(shorts.data), h, w, shorts.c};
  const Map inner_mids{loop.capture(mids.data), h, w, mids.c};
  TensorId parent = column(body, step, 0, kI64), child = column(body, step, 1, kI64);
  TensorId y = body.add("GatherElements", {py, parent}, kF32, {{"axis", int64_t{1}}});
  TensorId x = body.add("GatherElements", {px, parent}, kF32, {{"axis", int64_t{1}}});
  displace(body, inner_mids, y, x, column(body, step, 2, kI64), column(body, step, 3, kI64), h, w);
  TensorId short_x = body.add("Add", {child, body.scalar(kI64, kKeypoints)}, kI64);
  for (int refinement = 0; refinement < 5; ++refinement)
    displace(body, inner_shorts, y, x, child, short_x, h, w);
  auto put = [&](TensorId plane, TensorId v) {
    return body.add("ScatterElements", {plane, child, v}, kF32, {{"axis", int64_t{1}}});
  };
  auto out = loop.finish(b.scalar(kI64, kKeypoints - 1), ir::kNoTensor, ir::kNoTensor,
                         {put(py, y), put(px, x)});
  c.pose_y = out[0];
  c.pose_x = out[1];
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// Squared distances between [.., 17] keypoint sets (b - a, as the kernel).
TensorId squared_distance(NodeBuilder& b, TensorId ay, TensorId ax, TensorId by, TensorId bx) {
  TensorId dy = b.add("Sub", {by, ay}, kF32), dx = b.add("Sub", {bx, ax}, kF32);
  return b.add("Add", {b.add("Mul", {dy, dy}, kF32), b.add("Mul", {dx, dx}, kF32)}, kF32);
}

// Rows of `rows` ([N, ...]) then zero rows, `length` rows in all.
TensorId padded(NodeBuilder& b, TensorId rows, int64_t length, std::vector<int64_t> row_shape) {
  std::vector<int64_t> shape{length};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  TensorId zeros = b.add("Expand", {b.scalar(kF32, 0), b.ints(shape)}, kF32);
  TensorId all = b.add("Concat", {rows, zeros}, kF32, {{"axis", int64_t{0}}});
  return b.slice(all, 0, 0, length, kF32);
}

// BodyPix's instance masks: each cell's embedding (its position moved along
// the long offsets three times, in pixels) goes to the pose nearest in summed
// squared keypoint distance (the first of equals; pose 0 when there is none).
void instance_masks(NodeBuilder& b, const Params& p, const Map& longs, TensorId pose_y,
                    TensorId pose_x, TensorId mask_out) {
  const int64_t cells = longs.h * longs.w;
  std::vector<float> ys, xs;
  for (int64_t y = 0; y < longs.h; ++y)
    for (int64_t x = 0; x < longs.w; ++x) {
      ys.push_back(static_cast<float>(y));
      xs.push_back(static_cast<float>(x));
    }
  TensorId spread = b.ints({1, kKeypoints});
  TensorId y = b.add("Expand", {b.floats(ys, ir::Shape{cells, 1}), spread}, kF32);
  TensorId x = b.add("Expand", {b.floats(xs, ir::Shape{cells, 1}), spread}, kF32);
  TensorId cy = b.ints(iota(kKeypoints), ir::Shape{1, kKeypoints});
  TensorId cx = b.add("Add", {cy, b.scalar(kI64, kKeypoints)}, kI64);
  for (int step = 0; step < 3; ++step) displace(b, longs, y, x, cy, cx, longs.h, longs.w);
  TensorId stride = b.scalar(kF32, static_cast<float>(p.stride));
  auto pixels = [&](TensorId v) {
    return b.add("Unsqueeze", {b.add("Mul", {v, stride}, kF32), b.ints({1})},
                 kF32);  // [cells, 1, 17]
  };
  auto poses = [&](TensorId v) {
    return b.add("Unsqueeze", {v, b.ints({0})}, kF32);
  };  // [1, N, 17]
  TensorId d = squared_distance(b, pixels(y), pixels(x), poses(pose_y), poses(pose_x));
  auto keypoint = [&](int64_t k) {
    return b.add("Squeeze", {b.slice(d, 2, k, k + 1, kF32), b.ints({2})}, kF32);  // [cells, N]
  };
  TensorId total = keypoint(0);
  for (int64_t k = 1; k < kKeypoints; ++k) total = b.add("Add", {total, keypoint(k)}, kF32);
  // A last column of +inf: pose 0 when there are none, never chosen otherwise.
  TensorId inf = b.add(
      "Expand", {b.scalar(kF32, std::numeric_limits<float>::infinity()), b.ints({cells, 1})}, kF32);
  TensorId nearest = b.add("ArgMin", {b.add("Concat", {total, inf}, kF32, {{"axis", int64_t{1}}})},
                           kI64, {{"axis", int64_t{1}}});  // [cells, 1]
  const int64_t m = p.max_detections;
  TensorId onehot =
      b.cast(b.add("Equal", {nearest, b.ints(iota(m), ir::Shape{1, m})}, kBool), kF32);
  b.into("Reshape",
         {b.add("Transpose", {onehot}, kF32, {{"perm", std::vector<int64_t>{1, 0}}}),
          b.ints({1, m, longs.h, longs.w})},
         {mask_out});
}

Status lower_decoder(LowerContext& ctx, const ir::Node& n) {
  const Params p(n);
  NodeBuilder b(ctx, n);
  const ir::Shape& shape = ctx.tensor(n.inputs[0]).shape;
  const int64_t h = shape[1], w = shape[2];
  const Map heat{kernel_copy(b, ctx, n, 0, 1.0f), h, w, kKeypoints};
  const Map shorts{kernel_copy(b, ctx, n, 1, p.extra()), h, w, 2 * kKeypoints};
  const Map mids{kernel_copy(b, ctx, n, 2, p.extra()), h, w, 4 * kEdges};

  Candidates c = find_candidates(b, p, heat, shorts);
  decode_poses(b, c, shorts, mids);
  // Keypoint scores: the heatmap sampled at each keypoint, as probabilities.
  TensorId logits =
      sample(b, heat, c.pose_y, c.pose_x, b.ints(iota(kKeypoints), ir::Shape{1, kKeypoints}));
  TensorId probability = sigmoid(b, logits);  // [K, 17]
  c.instance = mean_decreasing(b, probability, probability);
  const Kept kept = select_poses(b, c, p.max_detections, p.squared_radius(), p.threshold);

  // PerformSoftKeypointNMS: in decreasing instance score, keypoints within
  // the radius of the same keypoint of a higher pose no longer count.
  TensorId taken =
      b.add("Slice", {kept.index, b.ints({0}), b.reshape(kept.count, {1}, kI64), b.ints({0})},
            kI64);  // [N]
  TensorId ky = b.add("Gather", {c.pose_y, taken}, kF32),
           kx = b.add("Gather", {c.pose_x, taken}, kF32);
  TensorId kscores = b.add("Gather", {probability, taken}, kF32);
  TensorId first_order = b.temp(kI64), unused = b.temp(kF32);
  b.into("TopK", {b.add("Gather", {c.instance, taken}, kF32), b.reshape(kept.count, {1}, kI64)},
         {unused, first_order}, {{"axis", int64_t{0}}});
  TensorId rank =
      b.add("ScatterElements",
            {b.add("Expand", {b.scalar(kI64, 0), b.reshape(kept.count, {1}, kI64)}, kI64),
             first_order, b.add("Range", {b.scalar(kI64, 0), kept.count, b.scalar(kI64, 1)}, kI64)},
            kI64, {{"axis", int64_t{0}}});
  TensorId before = b.add("Less", {b.reshape(rank, {1, -1}, kI64), b.reshape(rank, {-1, 1}, kI64)},
                          kBool);  // [i, j]: j ranks above i
  auto pairs = [&](TensorId v, int64_t axis) {
    return b.add("Unsqueeze", {v, b.ints({axis})}, kF32);
  };
  TensorId overlap =
      b.add("LessOrEqual",
            {squared_distance(b, pairs(ky, 1), pairs(kx, 1), pairs(ky, 0), pairs(kx, 0)),
             b.scalar(kF32, p.squared_radius())},
            kBool);  // [i, j, 17]
  TensorId occluded = b.add(
      "Greater",
      {b.add(
           "ReduceSum",
           {b.cast(b.add("And", {overlap, b.add("Unsqueeze", {before, b.ints({2})}, kBool)}, kBool),
                   kI64),
            b.ints({1})},
           kI64, {{"keepdims", int64_t{0}}}),
       b.scalar(kI64, 0)},
      kBool);  // [N, 17]
  TensorId counted = b.add("Where", {occluded, b.scalar(kF32, 0), kscores}, kF32);
  TensorId rescored = mean_decreasing(b, counted, kscores);  // [N]
  TensorId final_scores = b.temp(kF32), final_order = b.temp(kI64);
  b.into("TopK", {rescored, b.reshape(kept.count, {1}, kI64)}, {final_scores, final_order},
         {{"axis", int64_t{0}}});
  TensorId shown = b.add(
      "ReduceSum",
      {b.cast(b.add("GreaterOrEqual", {final_scores, b.scalar(kF32, p.threshold)}, kBool), kI64)},
      kI64, {{"keepdims", int64_t{1}}});  // [1]
  TensorId rows = b.add("Slice", {final_order, b.ints({0}), shown, b.ints({0})}, kI64);

  const int64_t m = p.max_detections;
  TensorId stride = b.scalar(kF32, static_cast<float>(p.stride));
  TensorId out_y = b.add("Mul", {b.add("Gather", {ky, rows}, kF32), stride}, kF32);
  TensorId out_x = b.add("Mul", {b.add("Gather", {kx, rows}, kF32), stride}, kF32);
  TensorId points =
      b.add("Concat", {pairs(out_y, 2), pairs(out_x, 2)}, kF32, {{"axis", int64_t{2}}});
  b.into("Reshape", {padded(b, points, m, {kKeypoints, 2}), b.ints({1, m, kKeypoints, 2})},
         {n.outputs[0]});
  b.into("Reshape",
         {padded(b, b.add("Gather", {kscores, rows}, kF32), m, {kKeypoints}),
          b.ints({1, m, kKeypoints})},
         {n.outputs[1]});
  TensorId pose_scores = b.add("Slice", {final_scores, b.ints({0}), shown, b.ints({0})}, kF32);
  b.into("Reshape", {padded(b, pose_scores, m, {}), b.ints({1, m})}, {n.outputs[2]});
  b.into("Cast", {shown}, {n.outputs[3]}, {{"to", int64_t{ir::onnx_type_code(kF32)}}});
  if (n.outputs.size() == 5) {
    const Map longs{kernel_copy(b, ctx, n, 3, p.extra()), kMaskSize, kMaskSize, 2 * kKeypoints};
    instance_masks(b, p, longs, out_y, out_x, n.outputs[4]);
  }
  return ok_status();
}

Status read_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kFields, attrs);
}

}  // namespace

TensorId clamp_to(NodeBuilder& b, TensorId v, int64_t n) {
  return b.add("Clip", {v, b.scalar(kF32, 0), b.scalar(kF32, static_cast<float>(n - 1))}, kF32);
}

TensorId sample(NodeBuilder& b, const Map& m, TensorId y, TensorId x, TensorId c) {
  // BuildLinearInterpolation: floor and ceil of the clamped position, the
  // weight from the unclamped one.
  auto axis = [&](TensorId v, int64_t size) {
    TensorId clamped = clamp_to(b, v, size);
    TensorId lo = b.add("Floor", {clamped}, kF32);
    TensorId hi = b.add("Ceil", {clamped}, kF32);
    TensorId lerp = b.add("Sub", {v, lo}, kF32);
    return std::array<TensorId, 4>{b.cast(lo, kI64), b.cast(hi, kI64), lerp,
                                   b.add("Sub", {b.scalar(kF32, 1), lerp}, kF32)};
  };
  const auto [y0, y1, ly, rest_y] = axis(y, m.h);
  const auto [x0, x1, lx, rest_x] = axis(x, m.w);
  auto at = [&](TensorId row, TensorId col) {
    TensorId cell = b.add("Add", {b.add("Mul", {row, b.scalar(kI64, m.w)}, kI64), col}, kI64);
    TensorId index = b.add("Add", {b.add("Mul", {cell, b.scalar(kI64, m.c)}, kI64), c}, kI64);
    return b.add("Gather", {m.data, index}, kF32);
  };
  auto mix = [&](TensorId rest, TensorId a, TensorId weight, TensorId z) {
    return b.add("Add", {b.add("Mul", {rest, a}, kF32), b.add("Mul", {weight, z}, kF32)}, kF32);
  };
  TensorId top = mix(rest_x, at(y0, x0), lx, at(y0, x1));
  TensorId bottom = mix(rest_x, at(y1, x0), lx, at(y1, x1));
  return mix(rest_y, top, ly, bottom);
}

OpEntry decoder() {
  return {.read = {.min_inputs = -1, .custom_options = read_options},
          .infer_shapes = infer_decoder,
          .check = check_decoder,
          .lower = lower_decoder,
          // libcoral's DequantizeTensor: (float(q) - z) * s, then float decoding.
          .quantization = {.dequantizes_inputs = true},
          .doc = {.onnx = "MaxPool + NonZero (candidates), Loop (poses along the skeleton), Loop "
                          "(libstdc++'s priority queue and the NMS), TopK, GatherElements, "
                          "ScatterElements, ArgMin (BodyPix masks)",
                  .dtypes = "float32, uint8 (-> float32 outputs)",
                  .notes = "the kernel's float arithmetic and its queue's order of equal "
                           "scores; rows past the pose count are zeros (the kernel leaves them "
                           "unwritten); equal instance scores keep their decoding order"}};
}

}  // namespace lite2onnx::ops::posenet
