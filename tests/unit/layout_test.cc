// Layout propagation on hand-built graphs (no reader involved).
#include <gtest/gtest.h>

#include <cstring>

#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/passes/passes.h"
#include "graph_builder.h"

namespace lite2onnx {
namespace {

using ir::Perm;
using ir::Shape;
using ir::TensorId;

const Perm kNchw = {0, 3, 1, 2};

using namespace ir::builtin;  // NOLINT: builtin codes by name

// TFLite-dialect graphs for the layout pass, on the shared builder.
class GraphBuilder : public testing::GraphBuilder {
 public:
  TensorId const_i32(const std::string& name, std::vector<int32_t> values, Shape shape) {
    return i32(name, values, std::move(shape));
  }
  TensorId const_f32(const std::string& name, Shape shape) { return zeros(name, std::move(shape)); }
  ir::NodeInfo& op(int code, std::vector<TensorId> in, std::vector<TensorId> out) {
    return g.info(tflite(code, std::move(in), std::move(out)));
  }
  // Conv2D [1,h,w,cin] -> [1,h,w,cout], 3x3 SAME.
  TensorId conv(TensorId x, int64_t cout, const std::string& name) {
    const Shape& xs = g.tensor(x).shape;
    TensorId w = const_f32(name + "/w", {cout, 3, 3, xs[3]});
    TensorId y = tensor(name, {xs[0], xs[1], xs[2], cout});
    op(kConv2d, {x, w}, {y}).attrs.set("padding", std::string("SAME"));
    return y;
  }
  size_t transposes() const {
    size_t k = 0;
    for (const ir::Node& n : g.nodes()) k += n.dialect == ir::Dialect::kOnnx && n.op == "Transpose";
    return k;
  }
  void run() {
    ASSERT_TRUE(passes::propagate_layouts(g, ctx()).ok());
    inserted = testing::GraphBuilder::inserted();
  }
  std::vector<InsertedNode> inserted;
};

TEST(Layout, PlainCnnNeedsNoTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c1 = b.conv(x, 4, "c1");
  TensorId r = b.tensor("r", {1, 5, 7, 4});
  b.op(kRelu, {c1}, {r});
  TensorId c2 = b.conv(r, 6, "c2");
  b.g.set_outputs({c2});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(x).layout, kNchw);  // the interface became NCHW
  EXPECT_EQ(b.g.tensor(r).layout, kNchw);
  EXPECT_EQ(b.g.tensor(c2).layout, kNchw);
}

TEST(Layout, RegroupingReshapeGetsOneTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId flat = b.tensor("flat", {1, 140});
  b.op(kReshape, {c}, {flat});  // regroups H, W, C: TFLite memory order matters
  b.g.set_outputs({flat});
  b.run();
  ASSERT_EQ(b.transposes(), 1u);
  EXPECT_EQ(b.at(1).op, "Transpose");
  EXPECT_EQ(b.at(1).attrs.get_ints("perm"), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_TRUE(b.g.tensor(flat).layout.empty());
  ASSERT_EQ(b.inserted.size(), 1u);
  EXPECT_NE(b.inserted[0].reason.find("RESHAPE"), std::string::npos);
}

// Time-distributed convolutions: [N, T, H, W, C] -> [N*T, H, W, C] -> Conv ->
// [N, T, H, W, C]. The reshapes merge and split whole groups of axes, so
// [N, T, C, H, W] on the 5-D side and NCHW on the 4-D side make both plain
// Reshapes, and the graph input arrives in [N, T, C, H, W].
TEST(Layout, ReshapesMergingLeadingAxesKeepChannelsFirst) {
  GraphBuilder b;
  TensorId x = b.input("clip", {2, 3, 5, 7, 4});
  TensorId frames = b.tensor("frames", {6, 5, 7, 4});
  b.op(kReshape, {x}, {frames});
  TensorId c = b.conv(frames, 8, "c");
  TensorId clip = b.tensor("clip_features", {2, 3, 5, 7, 8});
  b.op(kReshape, {c}, {clip});
  TensorId r = b.tensor("r", {2, 3, 5, 7, 8});
  b.op(kRelu, {clip}, {r});
  b.g.set_outputs({r});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  const Perm time_channels_first = {0, 1, 4, 2, 3};
  EXPECT_EQ(b.g.tensor(x).layout, time_channels_first);
  EXPECT_EQ(b.g.tensor(frames).layout, kNchw);
  EXPECT_EQ(b.g.tensor(clip).layout, time_channels_first);
  EXPECT_EQ(b.g.tensor(r).layout, time_channels_first);
}

// A reshape merging axes that the layout separates (W and C of NCHW) reads
// another memory order: it keeps its Transpose; one merging H and W does not.
TEST(Layout, ReshapeSplittingAcrossTheLayoutKeepsItsTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 6, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId y = b.tensor("y", {1, 42, 4});  // merges H and W: fine in NCHW
  b.op(kReshape, {c}, {y});
  TensorId z = b.tensor("z", {1, 6, 28});  // merges W and C: not in NCHW
  b.op(kReshape, {c}, {z});
  b.g.set_outputs({y, z});
  b.run();
  EXPECT_EQ(b.g.tensor(y).layout, (Perm{0, 2, 1}));
  EXPECT_TRUE(b.g.tensor(z).layout.empty());
  EXPECT_EQ(b.transposes(), 1u);  // before z's reshape
}

TEST(Layout, FlattenIntoFullyConnectedNeedsNoTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId flat = b.tensor("flat", {1, 140});
  b.op(kReshape, {c}, {flat});
  TensorId y = b.tensor("y", {1, 2});
  b.op(kFullyConnected, {flat, b.const_f32("fc/w", {2, 140})}, {y});
  b.g.set_outputs({y});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  // The flattened axis holds H, W, C read in NCHW order: C, H, W.
  ASSERT_TRUE(b.g.tensor(flat).flattened.has_value());
  EXPECT_EQ(b.g.tensor(flat).flattened->dims, (Shape{5, 7, 4}));
  EXPECT_EQ(b.g.tensor(flat).flattened->perm, (Perm{2, 0, 1}));
}

// FULLY_CONNECTED flattens a 4-D input itself (old speech-command models):
// with constant weights the permuted tensor is flattened as it is, the weight
// columns permuted; with run-time weights it needs TFLite order.
TEST(Layout, FullyConnectedFlatteningAConvOutputNeedsNoTranspose) {
  for (bool constant_weights : {true, false}) {
    GraphBuilder b;
    TensorId x = b.input("x", {2, 5, 7, 3});
    TensorId c = b.conv(x, 4, "c");
    TensorId w = constant_weights ? b.const_f32("fc/w", {2, 140}) : b.input("fc/w", {2, 140});
    TensorId y = b.tensor("y", {2, 2});
    b.op(kFullyConnected, {c, w}, {y});
    b.g.set_outputs({y});
    b.run();
    EXPECT_EQ(b.transposes(), constant_weights ? 0u : 1u);
    EXPECT_EQ(b.g.tensor(c).layout, kNchw);
  }
}

TEST(Layout, FlattenFeedingSomethingElseKeepsTheTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId flat = b.tensor("flat", {1, 140});
  b.op(kReshape, {c}, {flat});
  TensorId y = b.tensor("y", {1, 2});
  b.op(kFullyConnected, {flat, b.const_f32("fc/w", {2, 140})}, {y});
  TensorId r = b.tensor("r", {1, 140});
  b.op(kRelu, {flat}, {r});
  b.g.set_outputs({y, r});
  b.run();
  EXPECT_EQ(b.transposes(), 1u);
  EXPECT_FALSE(b.g.tensor(flat).flattened.has_value());
}

TEST(Layout, ClassifierHeadReshapeKeepsOrder) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 1, 1, 8});
  TensorId c = b.conv(x, 10, "c");
  TensorId logits = b.tensor("logits", {1, 10});
  b.op(kReshape, {c, b.const_i32("shape", {1, 10}, {2})}, {logits});
  b.g.set_outputs({logits});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_TRUE(b.g.tensor(logits).layout.empty());
}

TEST(Layout, SqueezeDropsAxesFromLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 1, 1, 8});
  TensorId c = b.conv(x, 10, "c");
  TensorId s = b.tensor("s", {1, 10});
  b.op(kSqueeze, {c}, {s}).attrs.set("squeeze_dims", std::vector<int64_t>{1, 2});
  b.g.set_outputs({s});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_TRUE(b.g.tensor(s).layout.empty());
}

TEST(Layout, MeanWithoutKeepDimsLeavesChannelsLast) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId m = b.tensor("m", {1, 4});
  b.op(kMean, {c, b.const_i32("axes", {1, 2}, {2})}, {m}).attrs.set("keep_dims", int64_t{0});
  b.g.set_outputs({m});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_TRUE(b.g.tensor(m).layout.empty());
}

TEST(Layout, MeanKeepDimsKeepsLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId m = b.tensor("m", {1, 1, 1, 4});
  b.op(kMean, {c, b.const_i32("axes", {1, 2}, {2})}, {m}).attrs.set("keep_dims", int64_t{1});
  b.g.set_outputs({m});
  b.run();
  EXPECT_EQ(b.g.tensor(m).layout, kNchw);
}

TEST(Layout, InputBeforePadTakesConvLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId p = b.tensor("p", {1, 7, 9, 3});
  b.op(kPad, {x, b.const_i32("pads", {0, 0, 1, 1, 1, 1, 0, 0}, {4, 2})}, {p});
  TensorId c = b.conv(p, 4, "c");
  b.g.set_outputs({c});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(x).layout, kNchw);
}

TEST(Layout, SiblingInputOfAddFollowsConv) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId z = b.input("z", {1, 5, 7, 4});
  TensorId c = b.conv(x, 4, "c");
  TensorId s = b.tensor("s", {1, 5, 7, 4});
  b.op(kAdd, {c, z}, {s});
  b.g.set_outputs({s});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(z).layout, kNchw);
  EXPECT_EQ(b.g.tensor(s).layout, kNchw);
}

TEST(Layout, ConcatOfConvAndInput) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId z = b.input("z", {1, 5, 7, 2});
  TensorId c = b.conv(x, 4, "c");
  TensorId cat = b.tensor("cat", {1, 5, 7, 6});
  b.op(kConcatenation, {c, z}, {cat}).attrs.set("axis", int64_t{3});
  b.g.set_outputs({cat});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(cat).layout, kNchw);
}

TEST(Layout, ConcatOfInputThenConvRunsInNchw) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId z = b.input("z", {1, 5, 7, 2});
  TensorId c = b.conv(x, 4, "c");
  TensorId cat = b.tensor("cat", {1, 5, 7, 6});
  b.op(kConcatenation, {z, c}, {cat}).attrs.set("axis", int64_t{3});  // the graph input comes first
  b.g.set_outputs({cat});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(z).layout, kNchw);
}

// A recurrent state fed in as a graph input and split into gates that meet
// convolution outputs (the conv-LSTM cell of coral's automl_video traffic
// model): the hint walks back through SPLIT, so the input arrives NCHW.
TEST(Layout, InputSplitIntoGatesOfAConvTakesItsLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId state = b.input("state", {1, 5, 7, 4});
  TensorId c = b.conv(x, 2, "c");
  TensorId g0 = b.tensor("g0", {1, 5, 7, 2});
  TensorId g1 = b.tensor("g1", {1, 5, 7, 2});
  b.op(kSplit, {b.const_i32("axis", {3}, {}), state}, {g0, g1}).attrs.set("num_splits", int64_t{2});
  TensorId sum = b.tensor("sum", {1, 5, 7, 2});
  b.op(kAdd, {g0, c}, {sum});
  TensorId cat = b.tensor("cat", {1, 5, 7, 4});
  b.op(kConcatenation, {g1, sum}, {cat}).attrs.set("axis", int64_t{3});
  b.g.set_outputs({b.conv(cat, 3, "c2")});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(state).layout, kNchw);
  EXPECT_EQ(b.g.tensor(g1).layout, kNchw);
}

TEST(Layout, SingleChannelInputGetsAReshapeNotATranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 35});
  TensorId r = b.tensor("r", {1, 5, 7, 1});
  b.op(kReshape, {x}, {r});  // regroups: runs in TFLite order
  TensorId c = b.conv(r, 4, "c");
  b.g.set_outputs({c});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);  // [1,5,7,1] -> [1,1,5,7] moves no data
  ASSERT_EQ(b.inserted.size(), 1u);
  EXPECT_EQ(b.inserted[0].op_type, "Reshape");
}

TEST(Layout, LayoutFreeModelIsUntouched) {
  GraphBuilder b;
  TensorId x = b.input("x", {2, 3, 4, 5});
  TensorId y = b.input("y", {2, 3, 4, 5});
  TensorId s = b.tensor("s", {2, 3, 4, 5});
  b.op(kAdd, {x, y}, {s});
  b.g.set_outputs({s});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  for (TensorId t : {x, y, s}) EXPECT_TRUE(b.g.tensor(t).layout.empty());
}

TEST(Layout, LowerRankDataOperandIsUnsqueezedIntoTheLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId bias = b.input("bias", {4});
  TensorId c = b.conv(x, 4, "c");
  TensorId s = b.tensor("s", {1, 5, 7, 4});
  b.op(kAdd, {c, bias}, {s});
  b.g.set_outputs({s});
  b.run();
  EXPECT_EQ(b.transposes(), 0u);
  EXPECT_EQ(b.g.tensor(s).layout, kNchw);
  // [4] -> [1, 4, 1, 1]: one Unsqueeze puts the channels in place.
  size_t unsqueezes = 0;
  for (const ir::Node& n : b.g.nodes()) unsqueezes += n.op == "Unsqueeze";
  EXPECT_EQ(unsqueezes, 1u);
  const ir::Node& add = b.last();
  EXPECT_EQ(b.g.tensor(add.inputs[1]).onnx_shape(), (Shape{1, 4, 1, 1}));
}

TEST(Layout, LowerRankOperandWhoseAxesReorderGetsUnsqueezeAndTranspose) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId hwc = b.input("hwc", {5, 7, 4});  // H, W, C: C must move before H, W
  TensorId c = b.conv(x, 4, "c");
  TensorId s = b.tensor("s", {1, 5, 7, 4});
  b.op(kAdd, {c, hwc}, {s});
  b.g.set_outputs({s});
  b.run();
  EXPECT_EQ(b.transposes(), 1u);
  const ir::Node& add = b.last();
  EXPECT_EQ(b.g.tensor(add.inputs[1]).onnx_shape(), (Shape{1, 4, 5, 7}));
}

TEST(Layout, ExplicitLayoutsSeedPropagation) {
  GraphBuilder b;
  TensorId x = b.input("x", {2, 3, 4, 5});
  TensorId y = b.input("y", {2, 3, 4, 5});
  TensorId s = b.tensor("s", {2, 3, 4, 5});
  b.op(kAdd, {x, y}, {s});
  b.g.set_outputs({s});
  std::vector<passes::ForcedLayout> forced = {
      {x, kNchw, "x", true}, {y, kNchw, "y", true}, {s, kNchw, "s", true}};
  ASSERT_TRUE(passes::propagate_layouts(b.g, b.ctx(), forced).ok());
  EXPECT_EQ(b.transposes(), 0u);
  for (TensorId t : {x, y, s}) EXPECT_EQ(b.g.tensor(t).layout, kNchw);
}

TEST(Layout, ForcedOutputLayoutGetsATransposeAfterItsProducer) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  b.g.set_outputs({c});
  std::vector<passes::ForcedLayout> forced = {{x, {}, "keep", false}, {c, {}, "keep", false}};
  ASSERT_TRUE(passes::propagate_layouts(b.g, b.ctx(), forced).ok());
  EXPECT_EQ(b.transposes(), 2u);  // into the conv and out of it
  EXPECT_TRUE(b.g.tensor(c).layout.empty());
  EXPECT_TRUE(b.g.tensor(x).layout.empty());
  EXPECT_EQ(b.last().op, "Transpose");
  EXPECT_EQ(b.last().outputs[0], c);  // the output keeps its tensor (and name)
}

TEST(Layout, OneTransposePerTensorAndLayout) {
  GraphBuilder b;
  TensorId x = b.input("x", {1, 5, 7, 3});
  TensorId c = b.conv(x, 4, "c");
  TensorId f1 = b.tensor("f1", {1, 140}), f2 = b.tensor("f2", {1, 140});
  b.op(kReshape, {c}, {f1});
  b.op(kReshape, {c}, {f2});
  b.g.set_outputs({f1, f2});
  b.run();
  EXPECT_EQ(b.transposes(), 1u);
}

}  // namespace
}  // namespace lite2onnx
