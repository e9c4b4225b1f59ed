// Coral's PosenetDecoderOp, lowered to ONNX (posenet.cc: the op, its
// candidates, poses and outputs; posenet_select.cc: the root candidates taken
// in the order the kernel's priority queue gives them, and the poses kept).
// Shared between the two files (and the entry, for registry.cc).
#pragma once

#include <cstdint>

#include "core/ops/node_builder.h"

namespace lite2onnx::ops::posenet {

// The op's entry in the custom-op table (registry.cc).
OpEntry decoder();

constexpr int64_t kKeypoints = 17;
constexpr int64_t kEdges = 16;

// A [H, W, C] float map, flattened (NHWC order), as the kernel reads it.
struct Map {
  ir::TensorId data;
  int64_t h, w, c;
};

// The kernel's bilinear sample (SampleTensorAtMultipleChannels) of `m` at
// float positions `y`, `x` and int64 channels `c` (broadcast together): every
// operation in float32, in the kernel's order.
ir::TensorId sample(NodeBuilder& b, const Map& m, ir::TensorId y, ir::TensorId x, ir::TensorId c);
// clamp(v, 0, n - 1) in float.
ir::TensorId clamp_to(NodeBuilder& b, ir::TensorId v, int64_t n);

// The root candidates and what the selection needs of them (int64 and float
// tensors of the lowered graph, one element per candidate, in scan order).
struct Candidates {
  ir::TensorId score;     // [K] float logits
  ir::TensorId instance;  // [K] float: the pose's score (mean keypoint probability)
  ir::TensorId keypoint;  // [K] int64: the root keypoint id
  ir::TensorId root_y;    // [K] float: the root's refined position
  ir::TensorId root_x;    // [K] float
  ir::TensorId pose_y;    // [K, 17] float: the decoded pose, in map units
  ir::TensorId pose_x;    // [K, 17] float
  ir::TensorId count;     // int64 scalar: K
  int64_t max_count;      // H * W * 17, K's bound
};

// The candidates the kernel's loop keeps (DecodeAllPoses up to the soft NMS):
// roots in the order libstdc++'s std::priority_queue pops them, each rejected
// when within the NMS radius of the same keypoint of a pose kept before, kept
// when its pose's score reaches the threshold, until `max_detections` are
// kept. Returns [max_detections] int64 candidate indices (the first `count`
// meaningful) and `count` (int64 scalar).
struct Kept {
  ir::TensorId index, count;
};
Kept select_poses(NodeBuilder& b, const Candidates& c, int64_t max_detections, float squared_radius,
                  float threshold);

}  // namespace lite2onnx::ops::posenet
