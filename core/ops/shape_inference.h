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

// GATHER: params[:axis] + indices[batch_dims:] + params[axis+1:] (the
// indices' shape only: they need not be constant).
InferredShapes infer_gather(const ir::Graph& g, const ir::Node& n);
// GATHER_ND: indices[:-1] + params[indices[-1]:].
InferredShapes infer_gather_nd(const ir::Graph& g, const ir::Node& n);
// SLICE: constant begin and size (size -1: to the end).
InferredShapes infer_slice(const ir::Graph& g, const ir::Node& n);
// STRIDED_SLICE: constant begin/end/strides with every mask and offset, as
// TFLite's kernel expands them (nullopt where its reading of the spec and
// TensorFlow's could differ).
InferredShapes infer_strided_slice(const ir::Graph& g, const ir::Node& n);
// SPLIT (axis input 0, equal parts) and SPLIT_V (constant size_splits, one -1).
InferredShapes infer_split(const ir::Graph& g, const ir::Node& n);
InferredShapes infer_split_v(const ir::Graph& g, const ir::Node& n);
// PACK (values_count inputs of one shape, new axis) and UNPACK (num outputs).
InferredShapes infer_pack(const ir::Graph& g, const ir::Node& n);
InferredShapes infer_unpack(const ir::Graph& g, const ir::Node& n);
// TILE: constant multiples.
InferredShapes infer_tile(const ir::Graph& g, const ir::Node& n);
// BROADCAST_TO: the constant shape (input 1), which the input must broadcast to.
InferredShapes infer_broadcast_to(const ir::Graph& g, const ir::Node& n);
// BATCH_MATMUL: broadcast batch dimensions, [rows, cols] after adj_x / adj_y.
InferredShapes infer_batch_matmul(const ir::Graph& g, const ir::Node& n);
// SHAPE: [rank of the input] (only its rank need be known).
InferredShapes infer_shape_op(const ir::Graph& g, const ir::Node& n);
// FILL: the constant dims (input 0).
InferredShapes infer_fill(const ir::Graph& g, const ir::Node& n);
// SELECT / SELECT_V2: x's shape (v1: the condition matches x or is a scalar
// or rank-1 over x's first axis), the broadcast of all three (v2); the file's
// shape stands when every input and the output hold one element.
InferredShapes infer_select(const ir::Graph& g, const ir::Node& n);
// TOPK_V2: both outputs are the input with the last axis k.
InferredShapes infer_topk(const ir::Graph& g, const ir::Node& n);
// EMBEDDING_LOOKUP: [ids, params[1:]...].
InferredShapes infer_embedding_lookup(const ir::Graph& g, const ir::Node& n);
// RANGE: [count] of constant integer start, limit and delta.
InferredShapes infer_range(const ir::Graph& g, const ir::Node& n);
// SCATTER_ND: the constant shape (input 2), checked against indices and updates.
InferredShapes infer_scatter_nd(const ir::Graph& g, const ir::Node& n);
// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (rank 3 or 4): constant block_shape
// and paddings / crops.
InferredShapes infer_space_to_batch(const ir::Graph& g, const ir::Node& n);
InferredShapes infer_batch_to_space(const ir::Graph& g, const ir::Node& n);
// RFFT2D: the last two axes become fft_length[0], fft_length[1] / 2 + 1.
InferredShapes infer_rfft2d(const ir::Graph& g, const ir::Node& n);

// The output shapes of a TFLite-dialect node through its op table entry.
InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n);

}  // namespace lite2onnx::ops
