// Constant folding of shape arithmetic and the dilated-convolution fusion, on
// hand-built TFLite-dialect graphs, on tflite-support/dilated_conv.tflite, and
// end to end for the new shape ops.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>

#include "core/convert.h"
#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/tflite/reader.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;
using testing::op_counts;

using namespace ir::builtin;  // NOLINT: builtin codes by name

class Builder : public testing::GraphBuilder {
 public:
  ir::NodeInfo& op(int code, std::vector<TensorId> in, std::vector<TensorId> out) {
    return g.info(tflite(code, std::move(in), std::move(out)));
  }
  // One op with one new int32 output of the given shape.
  TensorId int_op(int code, std::vector<TensorId> in, const std::string& name, Shape shape,
                  DataType type = DataType::kInt32) {
    TensorId y = tensor(name, std::move(shape), type);
    op(code, std::move(in), {y});
    return y;
  }
  TensorId strided_slice(TensorId x, std::vector<int32_t> begin, std::vector<int32_t> end,
                         std::vector<int32_t> strides, Shape out, int64_t shrink = 0,
                         int64_t begin_mask = 0, int64_t end_mask = 0) {
    std::string name = "slice_" + std::to_string(g.node_count());
    TensorId y = tensor(name, std::move(out), g.tensor(x).dtype);
    ir::NodeInfo& n = op(
        kStridedSlice,
        {x, i32(name + "/begin", begin), i32(name + "/end", end), i32(name + "/strides", strides)},
        {y});
    n.attrs.set("shrink_axis_mask", shrink);
    n.attrs.set("begin_mask", begin_mask);
    n.attrs.set("end_mask", end_mask);
    return y;
  }
  TensorId pack(std::vector<TensorId> xs, int64_t axis, Shape out) {
    TensorId y =
        tensor("pack_" + std::to_string(g.node_count()), std::move(out), g.tensor(xs[0]).dtype);
    ir::NodeInfo& n = op(kPack, std::move(xs), {y});
    n.attrs.set("axis", axis);
    return y;
  }
  bool has_op(int code) const {
    for (const ir::Node& n : g.nodes())
      if (n.builtin == code) return true;
    return false;
  }
};

std::vector<int64_t> ints(const ir::Graph& g, TensorId t) {
  auto v = ir::const_ints(g, t);
  return v ? *v : std::vector<int64_t>{-999};
}

std::vector<float> floats(const ir::Graph& g, TensorId t) {
  auto s = g.tensor(t).data->as<float>();
  return {s.begin(), s.end()};
}

// ---- fold_constants ---------------------------------------------------------

TEST(FoldConstants, ShapeOfAStaticTensorBecomesAConstant) {
  Builder b;
  TensorId x = b.input("x", {2, 3, 5});
  TensorId s = b.int_op(kShape, {x}, "shape", {3});
  TensorId s64 = b.int_op(kShape, {x}, "shape64", {3}, DataType::kInt64);
  TensorId y = b.tensor("y", {2, 3, 5});
  b.op(kReshape, {x, s}, {y});
  TensorId z = b.tensor("z", {2, 3, 5});
  b.op(kReshape, {x, s64}, {z});
  b.g.set_outputs({y, z});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_FALSE(b.has_op(kShape));
  ASSERT_TRUE(b.g.tensor(s).is_const());
  EXPECT_EQ(b.g.tensor(s).data->stored_type, DataType::kInt32);
  EXPECT_EQ(ints(b.g, s), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(b.g.tensor(s64).data->stored_type, DataType::kInt64);
  EXPECT_EQ(ints(b.g, s64), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(b.g.node_count(), 2u);  // the two RESHAPEs
}

TEST(FoldConstants, ShapeOfADynamicTensorStays) {
  Builder b;
  TensorId x = b.input("x", {-1, 3});
  TensorId s = b.int_op(kShape, {x}, "shape", {2});
  TensorId d = b.strided_slice(s, {1}, {2}, {1}, {}, /*shrink=*/1);
  TensorId y = b.int_op(kAdd, {d, b.i32("one", {1}, {})}, "y", {});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(b.g.node_count(), 3u);
  EXPECT_FALSE(b.g.tensor(s).is_const());
}

TEST(FoldConstants, ShapeChainIntoReshapeFoldsAndDeadNodesGo) {
  // SHAPE [2,3,4] -> dims 0,1,2 -> MUL(d0, d1) -> PACK [6, 4] -> RESHAPE.
  Builder b;
  TensorId x = b.input("x", {2, 3, 4});
  TensorId s = b.int_op(kShape, {x}, "shape", {3});
  TensorId d0 = b.strided_slice(s, {0}, {1}, {1}, {}, 1);
  TensorId d1 = b.strided_slice(s, {1}, {2}, {1}, {}, 1);
  TensorId d2 = b.strided_slice(s, {-1}, {0}, {1}, {}, 1);
  TensorId rows = b.int_op(kMul, {d0, d1}, "rows", {});
  TensorId target = b.pack({rows, d2}, 0, {2});
  TensorId y = b.tensor("y", {6, 4});
  b.op(kReshape, {x, target}, {y});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  ASSERT_EQ(b.g.node_count(), 1u);
  EXPECT_EQ(b.at(0).builtin, kReshape);
  EXPECT_EQ(ints(b.g, b.at(0).inputs[1]), (std::vector<int64_t>{6, 4}));
}

TEST(FoldConstants, IntegerArithmeticFollowsTflite) {
  Builder b;
  TensorId a = b.i32("a", {17, -9, 23, -7, 7, -7}, {2, 3});
  TensorId d = b.i32("d", {4, -4, 5});  // broadcast along the rows
  TensorId div = b.int_op(kFloorDiv, {a, d}, "div", {2, 3});
  TensorId mod = b.int_op(kFloorMod, {a, d}, "mod", {2, 3});
  TensorId mx = b.int_op(kMaximum, {a, d}, "max", {2, 3});
  TensorId mn = b.int_op(kMinimum, {a, d}, "min", {2, 3});
  TensorId sub = b.int_op(kSub, {d, a}, "sub", {2, 3});
  TensorId relu = b.tensor("relu", {2, 3}, DataType::kInt32);
  b.op(kAdd, {a, d}, {relu}).attrs.set("fused_activation_function", std::string("RELU"));
  TensorId big = b.i32("big", {2147483647});
  TensorId wrap = b.int_op(kAdd, {big, b.i32("one", {1})}, "wrap", {1});
  TensorId wrap_out = b.int_op(kSub, {wrap, b.i32("zero", {0})}, "wrap_out", {1});
  TensorId y = b.tensor("y", {12, 3}, DataType::kInt32);
  b.op(kConcatenation, {div, mod, mx, mn, sub, relu}, {y}).attrs.set("axis", int64_t{0});
  b.g.set_outputs({y, wrap_out});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(ints(b.g, div), (std::vector<int64_t>{4, 2, 4, -2, -2, -2}));
  EXPECT_EQ(ints(b.g, mod), (std::vector<int64_t>{1, -1, 3, 1, -1, 3}));
  EXPECT_EQ(ints(b.g, mx), (std::vector<int64_t>{17, -4, 23, 4, 7, 5}));
  EXPECT_EQ(ints(b.g, mn), (std::vector<int64_t>{4, -9, 5, -7, -4, -7}));
  EXPECT_EQ(ints(b.g, sub), (std::vector<int64_t>{-13, 5, -18, 11, -11, 12}));
  EXPECT_EQ(ints(b.g, relu), (std::vector<int64_t>{21, 0, 28, 0, 3, 0}));
  EXPECT_EQ(ints(b.g, wrap), (std::vector<int64_t>{-2147483648LL}));  // int32 wraps
  // The nodes writing graph outputs stay, reading constants.
  ASSERT_EQ(b.g.node_count(), 2u);
  EXPECT_EQ(b.at(0).builtin, kSub);
  EXPECT_EQ(b.at(1).builtin, kConcatenation);
}

TEST(FoldConstants, GraphOutputsStayProducedByANode) {
  Builder b;
  TensorId y = b.int_op(kAdd, {b.i32("a", {1, 2}), b.i32("b", {3, 4})}, "y", {2});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(b.g.node_count(), 1u);
  EXPECT_FALSE(b.g.tensor(y).is_const());
}

TEST(FoldConstants, DivisionByZeroIsLeftToTheRuntime) {
  Builder b;
  TensorId q = b.int_op(kFloorDiv, {b.i32("a", {1, 2}), b.i32("b", {1, 0})}, "q", {2});
  TensorId r = b.int_op(kFloorMod, {b.i32("c", {1, 2}), b.i32("d", {0, 1})}, "r", {2});
  TensorId y = b.tensor("y", {2}, DataType::kInt32);
  b.op(kAdd, {q, r}, {y});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(b.g.node_count(), 3u);
}

TEST(FoldConstants, FloatArithmetic) {
  Builder b;
  TensorId a = b.f32("a", {5.5f, -5.5f, 7.f, -1.f}, {4});
  TensorId d = b.f32("d", {2.f, 2.f, -3.f, -0.75f}, {4});
  TensorId mod = b.int_op(kFloorMod, {a, d}, "mod", {4}, DataType::kFloat32);
  TensorId div = b.int_op(kFloorDiv, {a, d}, "div", {4}, DataType::kFloat32);
  TensorId relu6 = b.tensor("relu6", {4});
  b.op(kMul, {a, d}, {relu6}).attrs.set("fused_activation_function", std::string("RELU6"));
  TensorId y = b.tensor("y", {12});
  b.op(kConcatenation, {mod, div, relu6}, {y}).attrs.set("axis", int64_t{0});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(floats(b.g, mod), (std::vector<float>{1.5f, 0.5f, -2.f, -0.25f}));
  EXPECT_EQ(floats(b.g, div), (std::vector<float>{2.f, -3.f, -3.f, 1.f}));
  EXPECT_EQ(floats(b.g, relu6), (std::vector<float>{6.f, 0.f, 0.f, 0.75f}));
}

TEST(FoldConstants, DataMovementOps) {
  Builder b;
  TensorId m = b.i32("m", {0, 1, 2, 3, 4, 5}, {2, 3});
  // GATHER axis 1 with [2, 0] -> [[2, 0], [5, 3]]
  TensorId gat = b.tensor("gather", {2, 2}, DataType::kInt32);
  b.op(kGather, {m, b.i32("idx", {2, 0})}, {gat}).attrs.set("axis", int64_t{1});
  // TRANSPOSE -> [[0, 3], [1, 4], [2, 5]]
  TensorId tr = b.int_op(kTranspose, {m, b.i32("perm", {1, 0})}, "transpose", {3, 2});
  // UNPACK axis 0 -> [0,1,2], [3,4,5]
  TensorId u0 = b.tensor("u0", {3}, DataType::kInt32), u1 = b.tensor("u1", {3}, DataType::kInt32);
  b.op(kUnpack, {m}, {u0, u1}).attrs.set("axis", int64_t{0});
  // EXPAND_DIMS axis -1 of u1 -> [3, 1]
  TensorId ex = b.int_op(kExpandDims, {u1, b.i32("axis", {-1}, {})}, "expand", {3, 1});
  // FILL [2, 2] with 7 (int64 dims)
  TensorId fill =
      b.int_op(kFill, {b.i64("dims", {2, 2}, {2}), b.i32("seven", {7}, {})}, "fill", {2, 2});
  // CAST int32 -> int64
  TensorId cast = b.int_op(kCast, {u0}, "cast", {3}, DataType::kInt64);
  // STRIDED_SLICE of m with a negative stride: m[::-1, 2:0:-2] -> [[5], [2]]
  TensorId ss =
      b.strided_slice(m, {0, 2}, {0, 0}, {-1, -2}, {2, 1}, 0, /*begin_mask=*/1, /*end_mask=*/1);
  TensorId y = b.tensor("y", {19}, DataType::kInt32);
  std::vector<TensorId> flat;
  for (TensorId t : {gat, tr, ex, fill, ss}) {
    TensorId r = b.tensor(b.g.tensor(t).name + "/flat", {-1}, DataType::kInt32);
    b.op(kReshape, {t, b.i32(b.g.tensor(t).name + "/shape", {-1})}, {r});
    flat.push_back(r);
  }
  b.op(kConcatenation, flat, {y}).attrs.set("axis", int64_t{0});
  b.g.set_outputs({y, cast});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(ints(b.g, gat), (std::vector<int64_t>{2, 0, 5, 3}));
  EXPECT_EQ(ints(b.g, tr), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(ints(b.g, ex), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(b.g.tensor(ex).shape, (Shape{3, 1}));
  EXPECT_EQ(ints(b.g, fill), (std::vector<int64_t>{7, 7, 7, 7}));
  EXPECT_EQ(ints(b.g, ss), (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(b.g.tensor(flat[0]).shape, (Shape{4}));  // dynamic dim resolved
  // `cast` is a graph output; only the two graph-output nodes stay.
  ASSERT_EQ(b.g.node_count(), 2u);
}

// offset (StridedSliceOptions): end = begin + end from the begin TFLite
// resolves (strided_slice_logic.h): negative, clamped or masked.
TEST(FoldConstants, StridedSliceOffsetEndsCountFromTheResolvedBegin) {
  Builder b;
  std::vector<int32_t> values(4 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
  TensorId m = b.i32("m", values, {4, 6});
  // dim 0: begin -3 -> 1, end 1 + 2 = 3; dim 1: begin -20 -> clamped 0, end 0 + 2.
  TensorId a = b.strided_slice(m, {-3, -20}, {2, 2}, {1, 1}, {2, 2});
  b.g.info(b.g.producer(a)).attrs.set("offset", int64_t{1});
  // dim 0 begin masked -> 0, end 0 + 1; dim 1: begin 4, end 4 + 9 -> clamped 6.
  TensorId c = b.strided_slice(m, {3, 4}, {1, 9}, {1, 1}, {1, 2}, 0, /*begin_mask=*/1);
  b.g.info(b.g.producer(c)).attrs.set("offset", int64_t{1});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_EQ(ints(b.g, a), (std::vector<int64_t>{6, 7, 12, 13}));
  EXPECT_EQ(ints(b.g, c), (std::vector<int64_t>{4, 5}));
}

TEST(FoldConstants, HostileValuesNeitherCrashNorBlowUp) {
  Builder b;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  TensorId m = b.i32("m", {0, 1, 2, 3, 4, 5}, {2, 3});
  // Extreme begin/end/strides (int64) with the offset attribute.
  TensorId ss = b.tensor("ss", {-1, -1}, DataType::kInt32);
  ir::NodeInfo& n = b.op(kStridedSlice,
                         {m, b.i64("b", {kMin, kMax}, {2}), b.i64("e", {kMax, kMin}, {2}),
                          b.i64("s", {kMax, kMin}, {2})},
                         {ss});
  n.attrs.set("offset", int64_t{1});
  TensorId ss2 = b.tensor("ss2", {-1, -1}, DataType::kInt32);
  b.op(kStridedSlice,
       {m, b.i64("b2", {kMin, kMax}, {2}), b.i64("e2", {kMax, kMin}, {2}),
        b.i64("s2", {kMax, -kMax}, {2})},
       {ss2});
  // A FILL of 2^62 elements and a PACK of empty tensors with huge other dims.
  TensorId fill = b.int_op(
      kFill, {b.i64("dims", {int64_t{1} << 31, int64_t{1} << 31}, {2}), b.i32("v", {1}, {})},
      "fill", {-1, -1});
  TensorId empty = b.tensor("empty", {}, DataType::kInt32);
  b.g.tensor(empty).shape = {1 << 30, 1 << 30, 0};
  b.g.tensor(empty).data = ir::ConstData::owned({}, DataType::kInt32);
  TensorId packed = b.pack({empty, empty}, 2, {1 << 30, 1 << 30, 2, 0});
  TensorId y = b.tensor("y", {-1}, DataType::kInt32);
  b.op(kConcatenation, {ss, ss2, fill, packed}, {y}).attrs.set("axis", int64_t{0});
  b.g.set_outputs({y});
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  EXPECT_FALSE(b.g.tensor(fill).is_const());
  EXPECT_TRUE(b.g.tensor(packed).is_const());
  EXPECT_TRUE(b.g.tensor(ss2).is_const());
  EXPECT_EQ(b.g.tensor(ss2).shape, (Shape{1, 1}));  // strides that overshoot: one element each way
  EXPECT_EQ(ints(b.g, ss2), (std::vector<int64_t>{2}));
}

// ---- fuse_dilated_convolutions ------------------------------------------------

struct Atrous {
  Builder b;
  TensorId x, s2b_out, conv_out, y;
};

// SPACE_TO_BATCH_ND -> conv (VALID 3x3) -> BATCH_TO_SPACE_ND on [1,13,11,3] with rate [2,3].
Atrous atrous(std::vector<int32_t> pads, std::vector<int32_t> crops, int conv_op = kConv2d,
              std::vector<int32_t> block_b = {2, 3}) {
  Atrous a;
  Builder& b = a.b;
  a.x = b.input("x", {1, 13, 11, 3});
  const int64_t sh = (13 + pads[0] + pads[1]) / 2, sw = (11 + pads[2] + pads[3]) / 3;
  a.s2b_out = b.tensor("s2b", {6, sh, sw, 3});
  b.op(kSpaceToBatchNd, {a.x, b.i32("block", {2, 3}), b.i32("paddings", pads, {2, 2})},
       {a.s2b_out});
  const int64_t channels = conv_op == kConv2d ? 4 : 3;
  TensorId w = b.zeros("w", conv_op == kConv2d ? Shape{4, 3, 3, 3} : Shape{1, 3, 3, 3});
  a.conv_out = b.tensor("conv", {6, sh - 2, sw - 2, channels});
  ir::NodeInfo& c = b.op(conv_op, {a.s2b_out, w, b.zeros("bias", {channels})}, {a.conv_out});
  c.attrs.set("padding", std::string("VALID"));
  c.attrs.set("stride_h", int64_t{1});
  c.attrs.set("stride_w", int64_t{1});
  c.attrs.set("dilation_h_factor", int64_t{1});
  c.attrs.set("dilation_w_factor", int64_t{1});
  a.y = b.tensor(
      "y", {1, (sh - 2) * 2 - crops[0] - crops[1], (sw - 2) * 3 - crops[2] - crops[3], channels});
  b.op(kBatchToSpaceNd, {a.conv_out, b.i32("block_b", block_b), b.i32("crops", crops, {2, 2})},
       {a.y});
  b.g.set_outputs({a.y});
  return a;
}

TEST(FuseDilatedConv, SamePaddingBecomesOneDilatedConv) {
  // SAME for k=3, rate [2,3]: totals 4 and 6; TensorFlow pads the end further
  // to a multiple of the block and crops that again.
  Atrous a = atrous({2, 3, 3, 4}, {0, 1, 0, 1});
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
  ASSERT_EQ(a.b.g.node_count(), 1u);
  const ir::Node& c = a.b.at(0);
  EXPECT_EQ(c.builtin, kConv2d);
  EXPECT_EQ(c.inputs[0], a.x);
  EXPECT_EQ(c.outputs[0], a.y);
  EXPECT_EQ(c.attrs.get_int("dilation_h_factor"), 2);
  EXPECT_EQ(c.attrs.get_int("dilation_w_factor"), 3);
  EXPECT_EQ(c.attrs.get_string("padding"), "SAME");
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_TRUE(d.inserted.empty());
}

TEST(FuseDilatedConv, ValidPaddingAndDepthwise) {
  Atrous a = atrous({0, 1, 0, 1}, {0, 1, 0, 1}, kDepthwiseConv2d);
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
  ASSERT_EQ(a.b.g.node_count(), 1u);
  EXPECT_EQ(a.b.at(0).builtin, kDepthwiseConv2d);
  EXPECT_EQ(a.b.at(0).attrs.get_string("padding"), "VALID");
  EXPECT_EQ(a.b.at(0).attrs.get_int("dilation_w_factor"), 3);
}

TEST(FuseDilatedConv, OtherPaddingsAreLeftAlone) {
  Diagnostics d;
  for (auto pads : {std::vector<int32_t>{1, 2, 3, 4}, std::vector<int32_t>{2, 3, 2, 5}}) {
    Atrous a = atrous(pads, {0, 1, 0, 1});
    ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
    EXPECT_EQ(a.b.g.node_count(), 3u);
  }
  // Blocks that differ between the two ends.
  Atrous a = atrous({2, 3, 3, 4}, {0, 1, 0, 1}, kConv2d, {3, 2});
  ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
  EXPECT_EQ(a.b.g.node_count(), 3u);
}

TEST(FuseDilatedConv, NotWhenTheIntermediateIsReadElsewhereOrStrided) {
  Diagnostics d;
  {
    Atrous a = atrous({2, 3, 3, 4}, {0, 1, 0, 1});
    a.b.g.add_output(a.conv_out);
    ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
    EXPECT_EQ(a.b.g.node_count(), 3u);
  }
  {
    Atrous a = atrous({2, 3, 3, 4}, {0, 1, 0, 1});
    TensorId r = a.b.tensor("relu", a.b.g.tensor(a.s2b_out).shape);
    a.b.op(kRelu, {a.s2b_out}, {r});
    ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
    EXPECT_EQ(a.b.g.node_count(), 4u);
  }
  {
    Atrous a = atrous({2, 3, 3, 4}, {0, 1, 0, 1});
    a.b.info_at(1).attrs.set("stride_h", int64_t{2});
    ASSERT_TRUE(passes::fuse_dilated_convolutions(a.b.g, a.b.ctx()).ok());
    EXPECT_EQ(a.b.g.node_count(), 3u);
  }
}

// paddings = [[2, e0 + 2], [3, e1 + 3]] and crops = [[0, e0], [0, e1]], with
// e computed at run time from the (dynamic) input shape; with `other_crops`
// the crops come from another run-time value (f instead of e).
Builder runtime_atrous(bool other_crops) {
  Builder b;
  TensorId x = b.input("x", {1, -1, -1, 3});
  TensorId s = b.int_op(kShape, {x}, "shape", {4});
  TensorId hw = b.strided_slice(s, {1}, {3}, {1}, {2});
  TensorId e = b.int_op(kFloorMod, {hw, b.i32("block", {2, 3})}, "extra", {2});
  TensorId f = b.int_op(kFloorMod, {hw, b.i32("other", {4, 5})}, "other_extra", {2});
  TensorId end = b.int_op(kAdd, {e, b.i32("base_end", {2, 3})}, "pad_end", {2});
  auto elem = [&](TensorId t, int32_t i) { return b.strided_slice(t, {i}, {i + 1}, {1}, {}, 1); };
  TensorId pads = b.pack({b.pack({b.i32("s0", {2}, {}), elem(end, 0)}, 0, {2}),
                          b.pack({b.i32("s1", {3}, {}), elem(end, 1)}, 0, {2})},
                         0, {2, 2});
  TensorId zero = b.i32("zero", {0}, {});
  TensorId c_src = other_crops ? f : e;
  TensorId crops = b.pack(
      {b.pack({zero, elem(c_src, 0)}, 0, {2}), b.pack({zero, elem(c_src, 1)}, 0, {2})}, 0, {2, 2});
  TensorId s2b = b.tensor("s2b", {6, -1, -1, 3});
  b.op(kSpaceToBatchNd, {x, b.i32("block_s", {2, 3}), pads}, {s2b});
  TensorId c = b.tensor("conv", {6, -1, -1, 4});
  ir::NodeInfo& conv = b.op(kConv2d, {s2b, b.zeros("w", {4, 3, 3, 3}), b.zeros("bias", {4})}, {c});
  conv.attrs.set("padding", std::string("VALID"));
  TensorId y = b.tensor("y", {1, -1, -1, 4});
  b.op(kBatchToSpaceNd, {c, b.i32("block_b", {2, 3}), crops}, {y});
  b.g.set_outputs({y});
  return b;
}

TEST(FuseDilatedConv, RunTimePaddingsThatCancelWithTheCrops) {
  Builder b = runtime_atrous(false);
  ASSERT_TRUE(passes::fold_constants(b.g, b.ctx()).ok());
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(b.g, b.ctx()).ok());
  // Dynamic spatial size: still one SAME conv (at stride 1 its pads are static).
  ASSERT_EQ(b.g.node_count(), 1u);
  EXPECT_EQ(b.at(0).builtin, kConv2d);
  EXPECT_EQ(b.at(0).attrs.get_string("padding"), "SAME");
  EXPECT_EQ(b.at(0).attrs.get_int("dilation_h_factor"), 2);
}

TEST(FuseDilatedConv, RunTimePaddingsThatDoNotCancelAreLeftAlone) {
  Builder b = runtime_atrous(true);
  const size_t before = b.g.node_count();
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(b.g, b.ctx()).ok());
  EXPECT_EQ(b.g.node_count(), before);
}

// ---- tflite-support/dilated_conv.tflite -----------------------------------------

std::string dilated_conv_path() {
  const char* env = std::getenv("LITE2ONNX_TEST_MODELS");
  std::string dir = env && *env ? env : std::string(LITE2ONNX_SOURCE_DIR) + "/../shared/models";
  return dir + "/tflite-support/dilated_conv.tflite";
}

std::vector<std::string> node_ops(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Node& n : g.nodes()) out.push_back(n.op);
  return out;
}

TEST(DilatedConvModel, StaticInputFoldsThePaddingsAndFuses) {
  std::string path = dilated_conv_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto bytes = testing::read_file(path);
  auto read = tflite_reader::read(testing::view(bytes), Limits{}, ops::read_options);
  ASSERT_TRUE(read.ok());
  ir::Graph& g = read->graph;
  testing::PassFixture f;
  ASSERT_TRUE(passes::sort_topologically(g, f.ctx()).ok());
  // Give the input a static 13x11 size: SHAPE folds, and with it the whole
  // required_space_to_batch_paddings chain (rate 6, 3x3 filter: base 12).
  g.tensor(g.inputs()[0]).shape = {1, 13, 11, 3};
  TensorId paddings = ir::kNoTensor, crops = ir::kNoTensor;
  for (const ir::Node& n : g.nodes()) {
    if (n.op == "SPACE_TO_BATCH_ND") paddings = n.inputs[2];
    if (n.op == "BATCH_TO_SPACE_ND") crops = n.inputs[2];
  }
  ASSERT_TRUE(passes::fold_constants(g, f.ctx()).ok());
  ASSERT_TRUE(g.tensor(paddings).is_const());
  ASSERT_TRUE(g.tensor(crops).is_const());
  // 13 + 12 = 25 -> 5 more to reach 30; 11 + 12 = 23 -> 1 more to reach 24.
  EXPECT_EQ(ints(g, paddings), (std::vector<int64_t>{6, 11, 6, 7}));
  EXPECT_EQ(ints(g, crops), (std::vector<int64_t>{0, 5, 0, 1}));
  EXPECT_EQ(node_ops(g),
            (std::vector<std::string>{"SPACE_TO_BATCH_ND", "CONV_2D", "BATCH_TO_SPACE_ND", "ADD"}));
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(g, f.ctx()).ok());
  ASSERT_EQ(node_ops(g), (std::vector<std::string>{"CONV_2D", "ADD"}));
  EXPECT_EQ(g.node(g.order()[0]).inputs[0], g.inputs()[0]);
  EXPECT_EQ(g.node(g.order()[0]).attrs.get_int("dilation_h_factor"), 6);
  EXPECT_EQ(g.node(g.order()[0]).attrs.get_int("dilation_w_factor"), 6);
  EXPECT_EQ(g.node(g.order()[0]).attrs.get_string("padding"), "SAME");
}

TEST(DilatedConvModel, DynamicInputFusesThroughTheShapeArithmetic) {
  std::string path = dilated_conv_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto bytes = testing::read_file(path);
  auto read = tflite_reader::read(testing::view(bytes), Limits{}, ops::read_options);
  ASSERT_TRUE(read.ok());
  ir::Graph& g = read->graph;
  testing::PassFixture f;
  ASSERT_EQ(g.tensor(g.inputs()[0]).shape, (Shape{-1, -1, -1, 3}));
  ASSERT_TRUE(passes::sort_topologically(g, f.ctx()).ok());
  const size_t before = g.node_count();
  ASSERT_TRUE(passes::fold_constants(g, f.ctx()).ok());
  EXPECT_EQ(g.node_count(), before);  // everything hangs off the dynamic SHAPE
  Diagnostics d;
  ASSERT_TRUE(passes::fuse_dilated_convolutions(g, f.ctx()).ok());
  ASSERT_EQ(node_ops(g), (std::vector<std::string>{"CONV_2D", "ADD"}));
  EXPECT_EQ(g.node(g.order()[0]).attrs.get_string("padding"), "SAME");
  EXPECT_EQ(g.node(g.order()[0]).attrs.get_int("dilation_h_factor"), 6);
}

// ---- end to end -----------------------------------------------------------------

onnx::ModelProto convert_model(const std::vector<std::byte>& bytes, int opset = 13) {
  ConvertOptions o;
  o.opset = opset;
  Diagnostics d;
  auto r = convert(testing::view(bytes), o, d);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  onnx::ModelProto m;
  if (r.ok()) {
    EXPECT_TRUE(m.ParseFromString(*r));
  }
  return m;
}

std::vector<std::byte> op_model(const std::string& name) {
  return testing::read_file(std::string(LITE2ONNX_TEST_MODELS_DIR) + "/" + name + ".tflite");
}

TEST(ShapeOpsConvert, DilatedConvModelBecomesOneDilatedConv) {
  std::string path = dilated_conv_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  for (int opset : {13, 17}) {
    onnx::ModelProto m = convert_model(testing::read_file(path), opset);
    EXPECT_EQ(op_counts(m), (std::map<std::string, int>{{"Add", 1}, {"Conv", 1}}));
    for (const auto& n : m.graph().node()) {
      if (n.op_type() != "Conv") continue;
      for (const auto& a : n.attribute()) {
        if (a.name() != "dilations") continue;
        EXPECT_EQ(std::vector<int64_t>(a.ints().begin(), a.ints().end()),
                  (std::vector<int64_t>{6, 6}));
      }
    }
  }
}

TEST(ShapeOpsConvert, FusedModelsHaveNoBlockShuffles) {
  for (const char* name : {"dilated_conv_same", "dilated_conv_valid", "dilated_depthwise_same",
                           "dilated_conv_shape_chain"}) {
    auto counts = op_counts(convert_model(op_model(name)));
    EXPECT_EQ(counts["Conv"], 1) << name;
    EXPECT_EQ(counts.count("Transpose") + counts.count("Reshape") + counts.count("Pad"), 0u)
        << name;
  }
  // Paddings that are neither SAME nor VALID keep the SPACE_TO_BATCH_ND form.
  EXPECT_EQ(op_counts(convert_model(op_model("dilated_conv_explicit")))["Transpose"], 2);
}

// A tensor the file leaves without a shape (TOCO's way for results sized at
// run time), sized by shape arithmetic of a static tensor: folded first, the
// arithmetic settles the shape the first inference could not
// (style_transfer_quantized_dynamic's RESIZE_NEAREST_NEIGHBOR). Before, the
// model was refused: "tensor 'reshaped' has unknown rank".
TEST(ShapeOpsConvert, ShapeArithmeticSettlesAShapelessTensor) {
  nlohmann::json j = testing::op_model_json("fold_shape_reshape");
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == "reshaped") t.erase("shape");
  Diagnostics d;
  const auto bytes = testing::tflite_from_json(j.dump());
  auto r = convert(testing::view(bytes), ConvertOptions{}, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  EXPECT_EQ(op_counts(m), (std::map<std::string, int>{{"Relu", 1}, {"Reshape", 1}}));
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(out.dim_size(), 2);
  EXPECT_EQ(out.dim(0).dim_value(), 6);
  EXPECT_EQ(out.dim(1).dim_value(), 4);
}

TEST(ShapeOpsConvert, ShapeOfAConvOutputReportsTfliteOrderWithoutATranspose) {
  auto m = convert_model(op_model("shape_after_conv"));
  auto counts = op_counts(m);
  EXPECT_EQ(counts.count("Transpose"), 0u);
  EXPECT_EQ(counts["Shape"], 1);
  EXPECT_EQ(counts["Gather"], 1);
  EXPECT_EQ(counts["Cast"], 1);
}

TEST(ShapeOpsConvert, AxisOpsAfterAConvNeedNoTranspose) {
  for (const char* name :
       {"pack_after_conv", "pack_after_conv_axis4", "unpack_after_conv", "gather_after_conv",
        "gather_2d_after_conv", "gather_scalar_after_conv", "expand_dims_after_conv",
        "expand_dims_after_conv_axis0", "floor_mod_after_conv", "space_to_depth_after_conv",
        "depth_to_space_after_conv"})
    EXPECT_EQ(op_counts(convert_model(op_model(name))).count("Transpose"), 0u) << name;
}

TEST(ShapeOpsConvert, SupportMatrixListsTheNewOps) {
  std::map<std::string, std::string> classes;
  for (const auto& s : support_matrix())
    if (s.supported) classes[s.op] = s.layout_class;
  EXPECT_EQ(classes["SPACE_TO_BATCH_ND"], "Implicit");
  EXPECT_EQ(classes["BATCH_TO_SPACE_ND"], "Implicit");
  EXPECT_EQ(classes["SPACE_TO_DEPTH"], "Implicit");
  EXPECT_EQ(classes["DEPTH_TO_SPACE"], "Implicit");
  EXPECT_EQ(classes["PACK"], "Attribute");
  EXPECT_EQ(classes["UNPACK"], "Attribute");
  EXPECT_EQ(classes["GATHER"], "Attribute");
  EXPECT_EQ(classes["EXPAND_DIMS"], "Attribute");
  EXPECT_EQ(classes["SHAPE"], "Attribute");
  EXPECT_EQ(classes["FILL"], "Terminate");
  EXPECT_EQ(classes["FLOOR_MOD"], "Transparent");
}

}  // namespace
}  // namespace lite2onnx
