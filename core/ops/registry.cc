// The one visible operator table (ArmNN style): a dense vector indexed by the
// TFLite builtin code, pre-filled with "unsupported", one line per supported op.
#include <array>

#include "core/ir/builtins.h"
#include "core/ops/families.h"

namespace lite2onnx::ops {
namespace {

constexpr int kNumBuiltins = ir::builtin::kCount;
namespace builtin = ir::builtin;
using Table = std::array<OpEntry, kNumBuiltins>;

Table make_table() {
  Table t{};
  t[builtin::kAdd] = elementwise::binary("ADD", "Add");
  t[builtin::kAveragePool2d] = conv::average_pool2d();
  t[builtin::kConcatenation] = shape::concatenation();
  t[builtin::kConv2d] = conv::conv2d();
  t[builtin::kDepthwiseConv2d] = conv::depthwise_conv2d();
  t[builtin::kDequantize] = elementwise::dequantize();
  t[builtin::kFullyConnected] = dense::fully_connected();
  t[builtin::kLogistic] = elementwise::unary("LOGISTIC", "Sigmoid");
  t[builtin::kMaxPool2d] = conv::max_pool2d();
  t[builtin::kMul] = elementwise::binary("MUL", "Mul");
  t[builtin::kRelu] = elementwise::unary("RELU", "Relu");
  t[builtin::kReluN1To1] = elementwise::relu_n1_to_1();
  t[builtin::kRelu6] = elementwise::relu6();
  t[builtin::kReshape] = shape::reshape();
  t[builtin::kResizeBilinear] = resize::bilinear();
  t[builtin::kSoftmax] = reduce::softmax();
  t[builtin::kTanh] = elementwise::unary("TANH", "Tanh");
  t[builtin::kPad] = shape::pad();
  t[builtin::kTranspose] = shape::transpose();
  t[builtin::kMean] = reduce::mean();
  t[builtin::kSub] = elementwise::binary("SUB", "Sub");
  t[builtin::kDiv] = elementwise::binary("DIV", "Div");
  t[builtin::kSqueeze] = shape::squeeze();
  t[builtin::kStridedSlice] = shape::strided_slice();
  t[builtin::kSplit] = shape::split();
  t[builtin::kPrelu] = elementwise::prelu();
  t[builtin::kPadv2] = shape::padv2();
  t[builtin::kTransposeConv] = conv::transpose_conv();
  t[builtin::kSqrt] = elementwise::unary("SQRT", "Sqrt");
  t[builtin::kRsqrt] = elementwise::rsqrt();
  t[builtin::kPow] = elementwise::binary("POW", "Pow");
  t[builtin::kResizeNearestNeighbor] = resize::nearest_neighbor();
  t[builtin::kLeakyRelu] = elementwise::leaky_relu();
  t[builtin::kSquaredDifference] = elementwise::squared_difference();
  t[builtin::kMirrorPad] = shape::mirror_pad();
  t[builtin::kAbs] = elementwise::unary("ABS", "Abs");
  t[builtin::kSplitV] = shape::split_v();
  t[builtin::kHardSwish] = elementwise::hard_swish();
  t[builtin::kDepthToSpace] = space::depth_to_space();
  t[builtin::kSpaceToDepth] = space::space_to_depth();
  t[builtin::kGather] = gather::gather();
  t[builtin::kBatchToSpaceNd] = space::batch_to_space_nd();
  t[builtin::kSpaceToBatchNd] = space::space_to_batch_nd();
  t[builtin::kExpandDims] = gather::expand_dims();
  t[builtin::kShape] = gather::shape_op();
  t[builtin::kPack] = gather::pack();
  t[builtin::kUnpack] = gather::unpack();
  t[builtin::kFill] = gather::fill();
  t[builtin::kFloorMod] = arith::floor_mod();
  return t;
}

const Table& table() {
  static const Table t = make_table();  // immutable after first use
  return t;
}

}  // namespace

const char* to_string(LayoutClass c) {
  switch (c) {
    case LayoutClass::kImplicit: return "Implicit";
    case LayoutClass::kTransparent: return "Transparent";
    case LayoutClass::kAttribute: return "Attribute";
    case LayoutClass::kTerminate: return "Terminate";
  }
  return "?";
}

const OpEntry& lookup(int builtin) {
  static const OpEntry kUnsupported{};
  if (builtin < 0 || builtin >= kNumBuiltins) return kUnsupported;
  return table()[static_cast<size_t>(builtin)];
}

std::vector<std::pair<int, const OpEntry*>> all_entries() {
  std::vector<std::pair<int, const OpEntry*>> out;
  for (int i = 0; i < kNumBuiltins; ++i) out.emplace_back(i, &table()[static_cast<size_t>(i)]);
  return out;
}

}  // namespace lite2onnx::ops
