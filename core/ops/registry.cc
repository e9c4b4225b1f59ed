// The one visible operator table (ArmNN style): a dense vector indexed by the
// TFLite builtin code, pre-filled with "unsupported", one line per supported op.
#include <array>

#include "core/ops/families.h"

namespace lite2onnx::ops {
namespace {

constexpr int kNumBuiltins = 162;
using Table = std::array<OpEntry, kNumBuiltins>;

Table make_table() {
  Table t{};
  t[0] = elementwise::binary("ADD", "Add");
  t[1] = conv::average_pool2d();
  t[2] = shape::concatenation();
  t[3] = conv::conv2d();
  t[4] = conv::depthwise_conv2d();
  t[6] = elementwise::dequantize();
  t[9] = dense::fully_connected();
  t[14] = elementwise::unary("LOGISTIC", "Sigmoid");
  t[17] = conv::max_pool2d();
  t[18] = elementwise::binary("MUL", "Mul");
  t[19] = elementwise::unary("RELU", "Relu");
  t[20] = elementwise::relu_n1_to_1();
  t[21] = elementwise::relu6();
  t[22] = shape::reshape();
  t[23] = resize::bilinear();
  t[25] = reduce::softmax();
  t[28] = elementwise::unary("TANH", "Tanh");
  t[34] = shape::pad();
  t[39] = shape::transpose();
  t[40] = reduce::mean();
  t[41] = elementwise::binary("SUB", "Sub");
  t[42] = elementwise::binary("DIV", "Div");
  t[43] = shape::squeeze();
  t[45] = shape::strided_slice();
  t[49] = shape::split();
  t[54] = elementwise::prelu();
  t[60] = shape::padv2();
  t[67] = conv::transpose_conv();
  t[75] = elementwise::unary("SQRT", "Sqrt");
  t[76] = elementwise::rsqrt();
  t[78] = elementwise::binary("POW", "Pow");
  t[97] = resize::nearest_neighbor();
  t[98] = elementwise::leaky_relu();
  t[99] = elementwise::squared_difference();
  t[100] = shape::mirror_pad();
  t[101] = elementwise::unary("ABS", "Abs");
  t[102] = shape::split_v();
  t[117] = elementwise::hard_swish();
  t[5] = space::depth_to_space();
  t[26] = space::space_to_depth();
  t[36] = gather::gather();
  t[37] = space::batch_to_space_nd();
  t[38] = space::space_to_batch_nd();
  t[70] = gather::expand_dims();
  t[77] = gather::shape_op();
  t[83] = gather::pack();
  t[88] = gather::unpack();
  t[94] = gather::fill();
  t[95] = arith::floor_mod();
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
