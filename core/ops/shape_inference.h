// Output shapes as TFLite's kernels compute them in Prepare, from the input
// shapes and constant operands (OpEntry::infer_shapes). Each op's function is
// in its family file, beside its converter; here are the helpers they share.
// A function returns nullopt when the shapes depend on something not known
// here (a dynamic dimension, a run-time operand) or the inputs do not fit
// together: the file's declared shapes then stand, and the checks and
// converters report any problem.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace lite2onnx::ops {

using InferredShapes = std::optional<std::vector<ir::Shape>>;

// Inferred shapes larger than this many elements are left to the file (and
// to the size checks that read its shapes).
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
// TFLite holds every dimension in an int.
inline constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

// Whether a shape is within those bounds.
bool valid_dims(const ir::Shape& s);
// One output of shape `s` / several outputs, each bounded like valid_dims().
InferredShapes one_shape(ir::Shape s);
InferredShapes many_shapes(std::vector<ir::Shape> shapes);
// Input i as a constant of TFLite's index types (int32, or int64 too when
// `int64_ok`) whose shape has `rank` dimensions (any rank when negative).
std::optional<std::vector<int64_t>> const_operand(const ir::Graph& g, const ir::Node& n, size_t i,
                                                  bool int64_ok, int rank);
bool is_index_type(ir::DataType t);
// A dimension read from a constant: TFLite keeps it in an int.
bool dim_value(int64_t v);
// Output size along one spatial axis, as TFLite's ComputeOutSize.
std::optional<int64_t> window_out(int64_t in, int64_t filter, int64_t stride, int64_t dilation,
                                  bool same);
// [N, H', W', channels] of an NHWC window op over input 0 (strides, padding
// and dilations from the node's attributes).
InferredShapes window_shape(const ir::Graph& g, const ir::Node& n, int64_t filter_h,
                            int64_t filter_w, int64_t channels);

// Shape inference several families share.
// numpy broadcast of every present input (the Transparent layout class).
InferredShapes infer_broadcast(const ir::Graph& g, const ir::Node& n);
// Input 0's shape (softmax and other per-element ops of one input).
InferredShapes infer_same_as_input(const ir::Graph& g, const ir::Node& n);
// AVERAGE_POOL_2D / MAX_POOL_2D / L2_POOL_2D (filter_height/width, strides, padding).
InferredShapes infer_pool2d(const ir::Graph& g, const ir::Node& n);

// The output shapes of a TFLite-dialect node through its op table entry.
InferredShapes infer_shapes(const ir::Graph& g, const ir::Node& n);

}  // namespace lite2onnx::ops
