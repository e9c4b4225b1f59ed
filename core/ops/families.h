// Entries of each op family, assembled into the table by registry.cc.
#pragma once

#include "core/ops/registry.h"

namespace lite2onnx::ops {

namespace elementwise {
OpEntry unary(const char* name, const char* onnx_op);
OpEntry relu6();
OpEntry relu_n1_to_1();
OpEntry rsqrt();
OpEntry hard_swish();
OpEntry leaky_relu();
OpEntry binary(const char* name, const char* onnx_op);
OpEntry squared_difference();
OpEntry prelu();
OpEntry dequantize();
}  // namespace elementwise

namespace conv {
OpEntry conv2d();
OpEntry depthwise_conv2d();
OpEntry transpose_conv();
OpEntry average_pool2d();
OpEntry max_pool2d();
}  // namespace conv

namespace shape {
OpEntry reshape();
OpEntry squeeze();
OpEntry transpose();
OpEntry concatenation();
OpEntry split();
OpEntry split_v();
OpEntry strided_slice();
OpEntry pad();
OpEntry padv2();
OpEntry mirror_pad();
}  // namespace shape

namespace reduce {
OpEntry mean();
OpEntry softmax();
}  // namespace reduce

namespace dense {
OpEntry fully_connected();
}  // namespace dense

namespace resize {
OpEntry bilinear();
OpEntry nearest_neighbor();
}  // namespace resize

namespace space {
OpEntry space_to_batch_nd();
OpEntry batch_to_space_nd();
OpEntry space_to_depth();
OpEntry depth_to_space();
}  // namespace space

namespace gather {
OpEntry shape_op();
OpEntry pack();
OpEntry unpack();
OpEntry gather();
OpEntry expand_dims();
OpEntry fill();
}  // namespace gather

namespace arith {
OpEntry floor_mod();
}  // namespace arith

}  // namespace lite2onnx::ops
