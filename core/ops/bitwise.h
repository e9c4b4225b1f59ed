// Bitwise arithmetic on integer tensors at opsets 13-17, where ONNX has no
// BitwiseAnd/Or/Xor (opset 18) and BitShift takes unsigned types only. Shared
// by BITWISE_XOR, RIGHT_SHIFT and the integer forms of STABLEHLO_AND/OR.
#pragma once

#include "core/ops/node_builder.h"

namespace lite2onnx::ops::bitwise {

enum class BitOp { kAnd, kOr, kXor };

// Whether `t` is an integer type these helpers take (8, 16 and 32 bits,
// signed or not).
bool integer_type(ir::DataType t);

// a OP b, both of integer type `type`, numpy broadcast, written to `out`:
// each operand as its two's-complement bits (int64 Div and Mod by 2^k along a
// new last axis), the bits combined, summed back with their weights.
void combine(NodeBuilder& b, ir::TensorId a, ir::TensorId c, ir::DataType type, BitOp op,
             ir::TensorId out);

}  // namespace lite2onnx::ops::bitwise
