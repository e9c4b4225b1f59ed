// Output shapes as TFLite's kernels compute them in Prepare, from the input
// shapes and constant operands (OpEntry::infer_shapes). Each returns nullopt
// when the shapes depend on something not known here (a dynamic dimension, a
// run-time operand) or the inputs do not fit together: the file's declared
// shapes then stand, and the checks and converters report any problem.
#pragma once

#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace lite2onnx::ops {

using InferredShapes = std::optional<std::vector<ir::Shape>>;

// numpy broadcast of every present input (the Transparent layout class).
InferredShapes infer_broadcast(const ir::Graph& g, const ir::Node& n);
// Input 0's shape (softmax and other per-element ops of one input).
InferredShapes infer_same_as_input(const ir::Graph& g, const ir::Node& n);
// NHWC CONV_2D (filter OHWI) and DEPTHWISE_CONV_2D (filter 1HW(C*M)).
InferredShapes infer_conv2d(const ir::Graph& g, const ir::Node& n);
InferredShapes infer_depthwise_conv2d(const ir::Graph& g, const ir::Node& n);
// AVERAGE_POOL_2D / MAX_POOL_2D / L2_POOL_2D (filter_height/width, strides, padding).
InferredShapes infer_pool2d(const ir::Graph& g, const ir::Node& n);
// FULLY_CONNECTED: [count / K, units], or input[:-1] + [units] with keep_num_dims.
InferredShapes infer_fully_connected(const ir::Graph& g, const ir::Node& n);
// CONCATENATION along `axis`.
InferredShapes infer_concatenation(const ir::Graph& g, const ir::Node& n);
// MEAN, SUM, REDUCE_*: constant axes (input 1), keep_dims.
InferredShapes infer_reduce(const ir::Graph& g, const ir::Node& n);
// ARG_MAX / ARG_MIN: the constant axis (input 1) removed.
InferredShapes infer_arg(const ir::Graph& g, const ir::Node& n);
// TRANSPOSE: the constant perm (input 1).
InferredShapes infer_transpose(const ir::Graph& g, const ir::Node& n);
// PAD, PADV2, MIRROR_PAD: constant paddings [rank, 2] (input 1).
InferredShapes infer_pad(const ir::Graph& g, const ir::Node& n);
// RESIZE_*: [N, size..., C] with the constant size (input 1).
InferredShapes infer_resize(const ir::Graph& g, const ir::Node& n);
// TRANSPOSE_CONV: the constant output_shape (input 0).
InferredShapes infer_transpose_conv(const ir::Graph& g, const ir::Node& n);
// DEPTH_TO_SPACE / SPACE_TO_DEPTH with block_size.
InferredShapes infer_depth_to_space(const ir::Graph& g, const ir::Node& n);
InferredShapes infer_space_to_depth(const ir::Graph& g, const ir::Node& n);

// The output shapes of a TFLite-dialect node through its op table entry.
InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n);

}  // namespace lite2onnx::ops
