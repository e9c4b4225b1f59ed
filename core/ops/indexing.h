// What the indexing ops share with the StableHLO shape ops (indexing.cc).
#pragma once

#include "core/ops/node_builder.h"

namespace lite2onnx::ops::indexing {

// `out` = `operand` with `update` written at `start` (int64 [rank], clamped
// as TFLite and StableHLO clamp it: to [0, dim - update dim]), by ScatterND
// over indices built at run time (no constant of the update's size). Both
// shapes static, of one rank.
void update_slice(NodeBuilder& b, ir::TensorId operand, const ir::Shape& operand_shape,
                  ir::TensorId update, const ir::Shape& update_shape, ir::TensorId start,
                  ir::TensorId out);

// Scalars (int32/int64 inputs `first`..`first + count`) as one int64 [count] vector.
ir::TensorId gather_scalars(NodeBuilder& b, const ir::Node& n, size_t first, size_t count);

}  // namespace lite2onnx::ops::indexing
