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

// The output shapes of a TFLite-dialect node through its op table entry.
InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n);

}  // namespace lite2onnx::ops
