// QDQ planning and Q/DQ materialization on hand-built graphs, plus the errors a
// quantized model can end in, through the public entry point.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/convert.h"
#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/passes/passes.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::op_counts;

ir::QuantParams params(std::vector<float> scale, std::vector<int64_t> zero_point, int axis = 0) {
  return testing::GraphBuilder::params(std::move(scale), std::move(zero_point), axis);
}

// ONNX-dialect graphs as lowering leaves them, for the Q/DQ writer.
class QdqGraph : public testing::GraphBuilder {
 public:
  TensorId float_tensor(const std::string& name, Shape shape) {
    return tensor(name, std::move(shape));
  }
  TensorId const_f32(const std::string& name, float v) { return scalar(name, v); }
  ir::NodeInfo& onnx(const std::string& op, std::vector<TensorId> in, std::vector<TensorId> out) {
    return g.info(testing::GraphBuilder::onnx(op, std::move(in), std::move(out)));
  }
  // Most tests look at the Q/DQ structure with the TFLite types (int8 kept);
  // the uint8 form is tested on its own below.
  void materialize(bool keep_int8_activations = true) {
    options.keep_int8_activations = keep_int8_activations;
    ASSERT_TRUE(passes::materialize_qdq(g, ctx()).ok());
  }

  float scale_of(const ir::Node& n) const { return g.tensor(n.inputs[1]).data->as<float>()[0]; }
};

TEST(Qdq, ActivationGetsOneQdqPairWhateverItsReaders) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {1, 4});
  b.g.set_inputs({x});
  TensorId a = b.activation("a", {1, 4}, params({0.5f}, {3}));
  TensorId y1 = b.float_tensor("y1", {1, 4});
  TensorId y2 = b.float_tensor("y2", {1, 4});
  b.onnx("Sigmoid", {x}, {a});
  b.onnx("Abs", {a}, {y1});
  b.onnx("Neg", {a}, {y2});
  b.g.set_outputs({y1, y2});
  b.materialize();
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);
  ASSERT_EQ(b.nodes("DequantizeLinear").size(), 1u);
  const ir::Node& q = *b.nodes("QuantizeLinear")[0];
  const ir::Node& dq = *b.nodes("DequantizeLinear")[0];
  EXPECT_EQ(b.producer(q.inputs[0])->op, "Sigmoid");
  // The integer tensor keeps the TFLite name and type; both readers see the DQ output.
  EXPECT_EQ(b.g.tensor(q.outputs[0]).name, "a");
  EXPECT_EQ(b.g.tensor(q.outputs[0]).dtype, DataType::kInt8);
  EXPECT_EQ(dq.inputs[0], q.outputs[0]);
  for (const auto* reader : {b.nodes("Abs")[0], b.nodes("Neg")[0]})
    EXPECT_EQ(reader->inputs[0], dq.outputs[0]);
  EXPECT_FLOAT_EQ(b.scale_of(q), 0.5f);
  EXPECT_EQ(b.g.tensor(q.inputs[2]).data->as<int8_t>()[0], 3);
  EXPECT_EQ(q.inputs[1], dq.inputs[1]);  // one scale initializer for the pair
  EXPECT_EQ(b.diag.quantization.nodes["QuantizeLinear: quantized activation"], 1);
}

TEST(Qdq, GraphInputAndOutputKeepIntegerTypes) {
  QdqGraph b;
  TensorId x = b.activation("x", {1, 8}, params({0.1f}, {-2}));
  TensorId y = b.activation("y", {1, 8}, params({0.2f}, {5}), DataType::kUInt8);
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Tanh", {x}, {y});
  b.materialize();
  EXPECT_EQ(b.g.tensor(x).dtype, DataType::kInt8);
  EXPECT_EQ(b.g.tensor(y).dtype, DataType::kUInt8);
  const ir::Node& tanh = *b.nodes("Tanh")[0];
  EXPECT_EQ(b.producer(tanh.inputs[0])->op, "DequantizeLinear");
  EXPECT_EQ(b.producer(tanh.inputs[0])->inputs[0], x);
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);
  EXPECT_EQ(b.nodes("QuantizeLinear")[0]->outputs[0], y);  // writes the graph output itself
  EXPECT_EQ(b.g.tensor(b.nodes("QuantizeLinear")[0]->inputs[2]).dtype, DataType::kUInt8);
}

// The axis of a per-axis DequantizeLinear follows the weight into its ONNX layout.
struct AxisCase {
  const char* what;
  Shape shape;
  int tflite_axis;
  Perm layout;
  int64_t onnx_axis;
};

class WeightAxis : public ::testing::TestWithParam<AxisCase> {};

TEST_P(WeightAxis, FollowsTheLayout) {
  const AxisCase& c = GetParam();
  QdqGraph b;
  int64_t channels = c.shape[static_cast<size_t>(c.tflite_axis)];
  std::vector<float> scales;
  for (int64_t i = 0; i < channels; ++i) scales.push_back(0.01f * static_cast<float>(i + 1));
  TensorId x = b.float_tensor("x", {1, 1, 1, 1});
  TensorId w = b.weight("w", c.shape,
                        params(scales, std::vector<int64_t>(channels, 0), c.tflite_axis), c.layout);
  TensorId y = b.float_tensor("y", {1, 1, 1, 1});
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Conv", {x, w}, {y});
  b.materialize();
  ASSERT_EQ(b.nodes("DequantizeLinear").size(), 1u) << c.what;
  const ir::Node& dq = *b.nodes("DequantizeLinear")[0];
  EXPECT_EQ(dq.attrs.get_int("axis", -1), c.onnx_axis) << c.what;
  const ir::Tensor& integer = b.g.tensor(dq.inputs[0]);
  EXPECT_TRUE(integer.is_const());
  EXPECT_EQ(integer.dtype, DataType::kInt8);  // the weight stays integer
  EXPECT_EQ(integer.layout, c.layout);        // and is permuted at emission
  EXPECT_EQ(b.g.tensor(dq.inputs[1]).shape, Shape{channels});
  EXPECT_EQ(dq.outputs[0], w);  // the Conv still reads the same (now float) value
  EXPECT_FALSE(b.g.tensor(w).is_const());
  EXPECT_EQ(b.diag.quantization.integer_initializers, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, WeightAxis,
    ::testing::Values(
        AxisCase{"Conv OHWI -> OIHW keeps axis 0", {8, 3, 3, 4}, 0, {0, 3, 1, 2}, 0},
        AxisCase{"TransposeConv OHWI -> IOHW moves it to 1", {8, 3, 3, 4}, 0, {3, 0, 1, 2}, 1},
        AxisCase{"Depthwise 1HWC -> C1HW: axis 3 becomes 0", {1, 3, 3, 6}, 3, {3, 0, 1, 2}, 0},
        AxisCase{"FullyConnected [O, I] as it is", {5, 7}, 0, {}, 0}));

TEST(Qdq, BroadcastOperandShiftsItsAxis) {
  // operand() prepends 1s to a constant broadcast to a higher rank: the
  // quantization axis moves with them (checked where the shift is made).
  QdqGraph b;
  TensorId w = b.weight("w", {1, 1, 1, 3}, params({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 3), {0, 3, 1, 2});
  TensorId x = b.float_tensor("x", {1, 2, 2, 3});
  TensorId y = b.float_tensor("y", {1, 2, 2, 3});
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Mul", {x, w}, {y});
  b.materialize();
  EXPECT_EQ(b.nodes("DequantizeLinear")[0]->attrs.get_int("axis", -1), 1);
}

TEST(Qdq, RequantizeIsDequantizeThenQuantize) {
  QdqGraph b;
  TensorId x = b.activation("x", {4}, params({0.1f}, {0}));
  TensorId y = b.activation("y", {4}, params({0.3f}, {7}));
  TensorId z = b.float_tensor("z", {4});
  b.g.set_inputs({x});
  b.g.set_outputs({z});
  b.onnx("Identity", {x}, {y});  // QUANTIZE int8 -> int8 between two scales
  b.onnx("Relu", {y}, {z});
  b.materialize();
  EXPECT_TRUE(b.nodes("Identity").empty());
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);
  const ir::Node& q = *b.nodes("QuantizeLinear")[0];
  EXPECT_FLOAT_EQ(b.scale_of(q), 0.3f);
  const ir::Node* dq = b.producer(q.inputs[0]);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op, "DequantizeLinear");
  EXPECT_FLOAT_EQ(b.scale_of(*dq), 0.1f);
  EXPECT_EQ(b.diag.quantization.cancelled_pairs, 0);
}

TEST(Qdq, DequantizeQuantizeWithEqualParametersCancels) {
  QdqGraph b;
  TensorId x = b.activation("x", {4}, params({0.25f}, {1}));
  TensorId f = b.float_tensor("f", {4});
  TensorId y = b.activation("y", {4}, params({0.25f}, {1}));
  TensorId z = b.float_tensor("z", {4});
  b.g.set_inputs({x});
  b.g.set_outputs({z});
  b.onnx("Abs", {x}, {f});       // something float in between keeps f alive...
  b.onnx("Identity", {x}, {y});  // ...and DEQUANTIZE -> QUANTIZE with equal params
  b.onnx("Add", {f, y}, {z});
  b.materialize();
  EXPECT_EQ(b.diag.quantization.cancelled_pairs, 1);
  EXPECT_TRUE(b.nodes("QuantizeLinear").empty());
  // y's readers read x's integers through one DequantizeLinear of their own.
  const ir::Node& add = *b.nodes("Add")[0];
  const ir::Node* dq = b.producer(add.inputs[1]);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op, "DequantizeLinear");
  EXPECT_EQ(dq->inputs[0], x);
}

// By default int8 activations are uint8 (zero point + 128) inside the graph,
// the form ONNX Runtime's x86 integer kernels take; the graph's int8 input
// and output are requantized exactly at the boundary.
TEST(Qdq, Int8ActivationsAreUint8InsideWithInt8Interface) {
  QdqGraph b;
  TensorId x = b.activation("x", {1, 4}, params({0.1f}, {-2}));
  TensorId a = b.activation("a", {1, 4}, params({0.5f}, {3}));
  TensorId y = b.activation("y", {1, 4}, params({0.25f}, {-7}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Sigmoid", {x}, {a});
  b.onnx("Add", {a, a}, {y});  // read twice, like a residual
  b.materialize(/*keep_int8_activations=*/false);
  EXPECT_TRUE(b.nodes("Identity").empty());
  EXPECT_TRUE(b.diag.quantization.int8_activations_as_uint8);
  EXPECT_EQ(b.g.tensor(x).dtype, DataType::kInt8);
  EXPECT_EQ(b.g.tensor(y).dtype, DataType::kInt8);
  // x (int8) -> DQ -> Q (uint8, zp 126) -> DQ -> Sigmoid
  const ir::Node& sigmoid = *b.nodes("Sigmoid")[0];
  const ir::Node* dq_u8 = b.producer(sigmoid.inputs[0]);
  ASSERT_EQ(dq_u8->op, "DequantizeLinear");
  const ir::Node* q_u8 = b.producer(dq_u8->inputs[0]);
  ASSERT_EQ(q_u8->op, "QuantizeLinear");
  EXPECT_EQ(b.g.tensor(q_u8->outputs[0]).dtype, DataType::kUInt8);
  EXPECT_EQ(b.g.tensor(q_u8->inputs[2]).data->as<uint8_t>()[0], 126);
  const ir::Node* dq_in = b.producer(q_u8->inputs[0]);
  ASSERT_EQ(dq_in->op, "DequantizeLinear");
  EXPECT_EQ(dq_in->inputs[0], x);
  EXPECT_EQ(b.g.tensor(dq_in->inputs[2]).data->as<int8_t>()[0], -2);
  // a: one uint8 pair with zero point 131, read by both Add inputs
  const ir::Node& add = *b.nodes("Add")[0];
  EXPECT_EQ(add.inputs[0], add.inputs[1]);
  const ir::Node* q_a = b.producer(b.producer(add.inputs[0])->inputs[0]);
  EXPECT_EQ(b.g.tensor(q_a->outputs[0]).name, "a");
  EXPECT_EQ(b.g.tensor(q_a->outputs[0]).dtype, DataType::kUInt8);
  EXPECT_EQ(b.g.tensor(q_a->inputs[2]).data->as<uint8_t>()[0], 131);
  // Add -> Q (uint8, zp 121) -> DQ -> Q (int8, zp -7) = y
  const ir::Node* q_y = b.producer(y);
  ASSERT_EQ(q_y->op, "QuantizeLinear");
  EXPECT_EQ(b.g.tensor(q_y->inputs[2]).data->as<int8_t>()[0], -7);
  const ir::Node* q_y_u8 = b.producer(b.producer(q_y->inputs[0])->inputs[0]);
  ASSERT_EQ(q_y_u8->op, "QuantizeLinear");
  EXPECT_EQ(b.g.tensor(q_y_u8->inputs[2]).data->as<uint8_t>()[0], 121);
  EXPECT_EQ(b.producer(q_y_u8->inputs[0]), &add);
}

TEST(Qdq, Int8InterfaceMeetingNoIntegerKernelIsNotRequantized) {
  // int8 in -> float op -> float -> QUANTIZE -> int8 out: no integer kernel
  // touches either end, so neither gets a uint8 round trip.
  QdqGraph b;
  TensorId x = b.activation("x", {4}, params({0.1f}, {-2}));
  TensorId f = b.float_tensor("f", {4});
  TensorId y = b.activation("y", {4}, params({0.2f}, {3}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Abs", {x}, {f});
  b.onnx("Identity", {f}, {y});  // QUANTIZE float -> int8
  b.materialize(/*keep_int8_activations=*/false);
  ASSERT_EQ(b.nodes("DequantizeLinear").size(), 1u);
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);
  EXPECT_EQ(b.nodes("DequantizeLinear")[0]->inputs[0], x);
  EXPECT_EQ(b.nodes("QuantizeLinear")[0]->outputs[0], y);
  EXPECT_EQ(b.g.tensor(x).dtype, DataType::kInt8);
  EXPECT_EQ(b.g.tensor(y).dtype, DataType::kInt8);
  EXPECT_EQ(b.g.tensor(b.nodes("QuantizeLinear")[0]->inputs[2]).data->as<int8_t>()[0], 3);
}

TEST(Qdq, Int8ConstantsBesideUint8ActivationsFollowButWeightsStayInt8) {
  QdqGraph b;
  TensorId x = b.activation("x", {1, 1, 1, 2}, params({0.1f}, {0}));
  TensorId w = b.weight("w", {2, 1, 1, 2}, params({0.01f, 0.02f}, {0, 0}, 0), {0, 3, 1, 2});
  TensorId c = b.activation("c", {1, 2, 1, 1}, params({0.2f}, {1}));
  TensorId k = b.weight("k", {2}, params({0.5f}, {-1}));
  TensorId y = b.activation("y", {1, 2, 1, 1}, params({0.3f}, {4}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Conv", {x, w}, {c});
  b.onnx("Add", {c, k}, {y});
  b.materialize(/*keep_int8_activations=*/false);
  auto integer_of = [&](TensorId t) -> const ir::Tensor& {
    return b.g.tensor(b.producer(t)->inputs[0]);
  };
  EXPECT_EQ(integer_of(w).dtype, DataType::kInt8);  // uint8 x int8 Conv
  const ir::Tensor& k_int = integer_of(k);
  EXPECT_EQ(k_int.dtype, DataType::kUInt8);
  EXPECT_EQ(k_int.data->as<uint8_t>()[0], 128);  // int8 0 + 128
  EXPECT_EQ(k_int.data->as<uint8_t>()[1], 129);
  EXPECT_EQ(b.g.tensor(b.producer(k)->inputs[2]).data->as<uint8_t>()[0], 127);
}

// DequantizeLinear takes no int64 (a 16x8 op's bias, or a crafted int8 op's):
// such a constant is folded to its float values instead.
TEST(Qdq, Int64ConstantIsFoldedToFloat) {
  QdqGraph b;
  TensorId x = b.activation("x", {1, 2, 1, 1}, params({0.1f}, {0}));
  std::vector<int64_t> values = {-3, 40};
  TensorId k = b.constant("k", DataType::kInt64, values, {2, 1, 1});
  b.g.tensor(k).dtype = DataType::kFloat32;
  b.g.tensor(k).quant = params({0.5f, 0.25f}, {0, 0}, 0);
  b.g.tensor(k).quantized_type = DataType::kInt64;
  TensorId y = b.float_tensor("y", {1, 2, 1, 1});
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Add", {x, k}, {y});
  b.materialize();
  EXPECT_EQ(b.producer(k), nullptr);
  const ir::Tensor& folded = b.g.tensor(k);
  EXPECT_FALSE(folded.quantized_type);
  ASSERT_EQ(folded.data->stored_type, DataType::kFloat32);
  EXPECT_EQ(folded.data->as<float>()[0], -1.5f);
  EXPECT_EQ(folded.data->as<float>()[1], 10.f);
  for (const ir::Node& n : b.g.nodes())
    for (TensorId t : n.inputs) EXPECT_NE(b.g.tensor(t).dtype, DataType::kInt64) << n.name;
}

// Ops that copy integers (same parameters in and out) run on the integer
// tensors: no DequantizeLinear before them, no QuantizeLinear after them.
TEST(Qdq, CopyingOpsRunOnTheIntegers) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {1, 2, 2, 1});
  TensorId a = b.activation("a", {1, 2, 2, 1}, params({0.5f}, {3}));
  TensorId t = b.activation("t", {1, 2, 2, 1}, params({0.5f}, {3}));
  TensorId p = b.activation("p", {1, 4, 4, 1}, params({0.5f}, {3}));
  TensorId y = b.float_tensor("y", {1, 4, 4, 1});
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Sigmoid", {x}, {a});
  b.onnx("Transpose", {a}, {t});
  ir::Tensor pads;
  pads.name = "pads";
  pads.dtype = DataType::kInt64;
  pads.shape = {8};
  pads.data = ir::ConstData::owned(std::vector<std::byte>(64), DataType::kInt64);
  b.onnx("Pad", {t, b.g.add_tensor(std::move(pads))}, {p})
      .attrs.set("mode", std::string("constant"));
  b.onnx("Abs", {p}, {y});
  b.materialize();
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);    // after the Sigmoid only
  ASSERT_EQ(b.nodes("DequantizeLinear").size(), 1u);  // before the Abs only
  const ir::Node& transpose = *b.nodes("Transpose")[0];
  const ir::Node& pad = *b.nodes("Pad")[0];
  EXPECT_EQ(transpose.inputs[0], a);
  EXPECT_EQ(b.producer(a)->op, "QuantizeLinear");
  EXPECT_EQ(b.g.tensor(t).dtype, DataType::kInt8);
  EXPECT_EQ(pad.inputs[0], t);
  // integer padding is the zero point, as TFLite pads quantized tensors
  ASSERT_EQ(pad.inputs.size(), 3u);
  EXPECT_EQ(b.g.tensor(pad.inputs[2]).data->as<int8_t>()[0], 3);
  EXPECT_EQ(b.producer(b.nodes("Abs")[0]->inputs[0])->inputs[0], p);
}

TEST(Qdq, ClampWithANanBoundStaysAFloatClip) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {4});
  TensorId y = b.activation("y", {4}, params({0.1f}, {-128}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Clip", {x, b.const_f32("lo", std::nanf("")), b.const_f32("hi", 6.f)}, {y});
  b.materialize();
  ASSERT_EQ(b.nodes("Clip").size(), 1u);
  EXPECT_EQ(b.g.tensor(b.nodes("Clip")[0]->inputs[0]).dtype, DataType::kFloat32);
  EXPECT_EQ(b.nodes("QuantizeLinear").size(), 1u);
}

TEST(Qdq, ClampImpliedByTheQuantizedRangeIsDropped) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {4});
  TensorId pre = b.float_tensor("pre", {4});
  // RELU6 into [0, 6] in uint8: scale 6/255, zero point 0.
  TensorId y = b.activation("y", {4}, params({6.0f / 255.0f}, {0}), DataType::kUInt8);
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Abs", {x}, {pre});
  b.onnx("Clip", {pre, b.const_f32("lo", 0.f), b.const_f32("hi", 6.f)}, {y});
  b.materialize();
  EXPECT_TRUE(b.nodes("Clip").empty());
  ASSERT_EQ(b.nodes("QuantizeLinear").size(), 1u);
  EXPECT_EQ(b.nodes("QuantizeLinear")[0]->inputs[0], pre);
}

TEST(Qdq, ClampNarrowerThanTheQuantizedRangeStays) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {4});
  TensorId y = b.activation("y", {4}, params({0.1f}, {-128}));  // [0, 25.5]
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  TensorId pre = b.float_tensor("pre", {4});
  b.onnx("Abs", {x}, {pre});
  b.onnx("Clip", {pre, b.const_f32("lo", 0.f), b.const_f32("hi", 6.f)}, {y});
  b.materialize();
  ASSERT_EQ(b.nodes("Clip").size(), 1u);
  // As TFLite's kernel: round to the output's integers first, then clamp them,
  // on the integers themselves (and the producer can run as an integer kernel).
  const ir::Node& clip = *b.nodes("Clip")[0];
  const ir::Node* q = b.producer(clip.inputs[0]);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->op, "QuantizeLinear");
  EXPECT_FLOAT_EQ(b.scale_of(*q), 0.1f);
  EXPECT_EQ(b.producer(q->inputs[0])->op, "Abs");
  EXPECT_EQ(b.g.tensor(clip.inputs[0]).dtype, DataType::kInt8);
  // [0, 6] -> [-128 + round(0 / 0.1), -128 + round(6 / 0.1)] = [-128, -68]
  EXPECT_EQ(b.g.tensor(clip.inputs[1]).data->as<int8_t>()[0], -128);
  EXPECT_EQ(b.g.tensor(clip.inputs[2]).data->as<int8_t>()[0], -68);
  EXPECT_EQ(clip.outputs[0], y);  // the graph output, int8, written by the Clip
  EXPECT_EQ(b.g.tensor(y).dtype, DataType::kInt8);
  EXPECT_TRUE(b.nodes("DequantizeLinear").empty());
  EXPECT_EQ(b.diag.quantization.nodes["Clip: fused activation clamped on integers"], 1);
}

// ---- plan_qdq on TFLite-dialect graphs ------------------------------------------

class PlanGraph : public QdqGraph {
 public:
  ir::NodeInfo& tflite(int code, std::vector<TensorId> in, std::vector<TensorId> out) {
    return g.info(testing::GraphBuilder::tflite(code, std::move(in), std::move(out)));
  }
  Status plan() { return passes::plan_qdq(g, ctx()); }
};

TEST(PlanQdq, QuantizedTensorsBecomeFloatRememberingTheirType) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {1, 4}, DataType::kUInt8, params({0.5f}, {128}));
  TensorId y = b.tflite_tensor("y", {1, 4}, DataType::kUInt8, params({0.5f}, {128}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kRelu, {x}, {y});
  ASSERT_TRUE(b.plan().ok());
  for (TensorId t : {x, y}) {
    EXPECT_EQ(b.g.tensor(t).dtype, DataType::kFloat32);
    EXPECT_EQ(b.g.tensor(t).quantized_type, DataType::kUInt8);
  }
  EXPECT_EQ(b.diag.quantization.quantized_activations, 2);
}

TEST(PlanQdq, BiasTakesInputTimesFilterScaleWithAWarningWhenItSaysOtherwise) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {1, 2, 2, 3}, DataType::kInt8, params({0.5f}, {0}));
  TensorId w =
      b.tflite_const("w", {2, 1, 1, 3}, DataType::kInt8, params({0.25f, 0.125f}, {0, 0}, 0));
  // Per-axis scales on an axis a 1-D bias does not have (as in person_detect).
  TensorId bias = b.tflite_const("bias", {2}, DataType::kInt32, params({1.f, 1.f}, {0, 0}, 3));
  TensorId y = b.tflite_tensor("y", {1, 2, 2, 2}, DataType::kInt8, params({0.1f}, {0}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kConv2d, {x, w, bias}, {y});
  ASSERT_TRUE(b.plan().ok());
  const ir::Tensor& used = b.g.tensor(b.at(0).inputs[2]);
  ASSERT_TRUE(used.quant);
  EXPECT_EQ(used.quant->scale, (std::vector<float>{0.125f, 0.0625f}));
  EXPECT_EQ(used.quant->axis, 0);
  EXPECT_EQ(used.quantized_type, DataType::kInt32);
  ASSERT_EQ(b.diag.warnings.size(), 1u);
  EXPECT_THAT(b.diag.warnings[0], HasSubstr("'bias'"));
  EXPECT_THAT(b.diag.warnings[0], HasSubstr("input scale x filter scale"));
}

TEST(PlanQdq, InvalidScaleIsAnErrorNamingTheTensor) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {4}, DataType::kInt8, params({-0.5f}, {0}));
  TensorId y = b.tflite_tensor("y", {4}, DataType::kInt8, params({0.1f}, {0}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kRelu, {x}, {y});
  auto st = b.plan();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(st.error().tensor, "x");
  EXPECT_THAT(st.error().message, HasSubstr("scale 0 is -0.5 (a finite number >= 0 expected)"));
}

// Pruned networks (Portrait-Seg's portrait_video_quant) carry dead channels and
// activations: scale 0 where calibration saw only zeros, and infinite scales on
// the weights that feed them. TFLite runs such files; their value there is 0.
TEST(PlanQdq, ZeroAndInfiniteScalesOfDeadChannelsAreAccepted) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {1, 2, 2, 3}, DataType::kInt8, params({0.5f}, {0}));
  const float inf = std::numeric_limits<float>::infinity();
  TensorId w =
      b.tflite_const("w", {3, 1, 1, 3}, DataType::kInt8, params({0.25f, 0.f, inf}, {0, 0, 0}, 0));
  TensorId bias =
      b.tflite_const("bias", {3}, DataType::kInt32, params({0.125f, 0.f, inf}, {0, 0, 0}, 0));
  TensorId y = b.tflite_tensor("y", {1, 2, 2, 3}, DataType::kInt8, params({0.f}, {-128}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kConv2d, {x, w, bias}, {y});
  ASSERT_TRUE(b.plan().ok());
  EXPECT_EQ(b.g.tensor(w).quant->scale, (std::vector<float>{0.25f, 0.f, 0.f}));
  const ir::Tensor& used_bias = b.g.tensor(b.at(0).inputs[2]);
  EXPECT_EQ(used_bias.quant->scale, (std::vector<float>{0.125f, 0.f, 0.f}));
  EXPECT_EQ(b.g.tensor(y).quantized_type, DataType::kInt8);
  std::string warnings;
  for (const auto& w : b.diag.warnings) warnings += w + "\n";
  EXPECT_THAT(warnings, HasSubstr("tensor 'w': 1 infinite quantization scale read as 0"));
  EXPECT_THAT(warnings, HasSubstr("1 quantized activation has scale 0 (first: 'y')"));
}

TEST(Dequantize, ActivationOfScaleZeroIsZeroWithoutADivision) {
  QdqGraph b;
  TensorId x = b.float_tensor("x", {4});
  TensorId y = b.activation("y", {4}, params({0.f}, {-128}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.onnx("Relu", {x}, {y});
  b.options.quantization = QuantizationMode::kDequantize;
  ASSERT_TRUE(passes::materialize_qdq(b.g, b.ctx()).ok());
  EXPECT_TRUE(b.nodes("Div").empty());
  auto muls = b.nodes("Mul");
  ASSERT_EQ(muls.size(), 1u);
  EXPECT_EQ(muls[0]->outputs[0], y);
  EXPECT_FLOAT_EQ(b.scale_of(*muls[0]), 0.f);
}

TEST(PlanQdq, PerAxisScalesMatchingNoDimensionAreAnError) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {1, 3}, DataType::kInt8, params({0.1f}, {0}));
  TensorId w = b.tflite_const("w", {1, 3}, DataType::kInt8, params({0.1f, 0.2f}, {0, 0}, 1));
  TensorId y = b.tflite_tensor("y", {1, 3}, DataType::kInt8, params({0.1f}, {0}));
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kAdd, {x, w}, {y});
  auto st = b.plan();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().tensor, "w");
  EXPECT_THAT(st.error().message, HasSubstr("2 per-axis scales but axis 1 has 3 elements"));
}

TEST(PlanQdq, ZeroPointOutsideTheTypeIsAnError) {
  PlanGraph b;
  TensorId x = b.tflite_tensor("x", {4}, DataType::kUInt8, params({0.1f}, {300}));
  b.g.set_inputs({x});
  b.g.set_outputs({x});
  auto st = b.plan();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("zero point 300 is outside UINT8"));
}

TEST(PlanQdq, DequantizeOfAnIntegerConstantFoldsIntoAQuantizedConstant) {
  PlanGraph b;
  TensorId w = b.tflite_const("w", {3}, DataType::kInt8, params({0.5f}, {0}));
  TensorId wf = b.tflite_tensor("w_float", {3}, DataType::kFloat32, std::nullopt);
  TensorId x = b.tflite_tensor("x", {3}, DataType::kFloat32, std::nullopt);
  TensorId y = b.tflite_tensor("y", {3}, DataType::kFloat32, std::nullopt);
  b.g.set_inputs({x});
  b.g.set_outputs({y});
  b.tflite(ir::builtin::kDequantize, {w}, {wf});
  b.tflite(ir::builtin::kAdd, {x, wf}, {y});
  ASSERT_TRUE(b.plan().ok());
  ASSERT_EQ(b.g.node_count(), 1u);
  const ir::Tensor& folded = b.g.tensor(wf);
  EXPECT_TRUE(folded.is_const());
  EXPECT_EQ(folded.quantized_type, DataType::kInt8);  // still integer bytes + a DequantizeLinear
}

// ---- through convert(): what a user sees ----------------------------------------

std::string quantized_model(const std::string& type, const std::string& in_q,
                            const std::string& out_q, const std::string& op) {
  return R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": )" +
         std::string(op == "RESHAPE" ? "22" : "19") + R"(, "builtin_code": ")" + op + R"(" } ],
    "buffers": [ {}, { "data": [ 4, 0, 0, 0 ] } ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": ")" +
         type + R"(", "quantization": )" + in_q + R"( },
        { "name": "y", "shape": [4], "type": ")" +
         type + R"(", "quantization": )" + out_q + R"( },
        { "name": "shape", "shape": [1], "type": "INT32", "buffer": 1 } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": )" +
         std::string(op == "RESHAPE" ? "[0, 2]" : "[0]") + R"(, "outputs": [1] } ] } ] })";
}

Result<std::string> convert_json(const std::string& json, Diagnostics& d) {
  auto bytes = testing::tflite_from_json(json);
  return convert(testing::view(bytes), ConvertOptions{}, d);
}

// int16 (16x8) has no QDQ form at opsets 13..17: a RESHAPE (a copy, which
// keeps its own form in auto too) computes the int16 tensors in float32 on
// their grid, keeps the int16 interface (Cast around the float values) and
// says so once, naming the tensors an op computes (a graph input's values are
// exact on the grid).
TEST(QuantizedModels, Int16ActivationsAreEmulatedOnTheirGridWithInt16Interface) {
  Diagnostics d;
  auto r = convert_json(quantized_model("INT16", R"({ "scale": [0.01], "zero_point": [0] })",
                                        R"({ "scale": [0.01], "zero_point": [0] })", "RESHAPE"),
                        d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT16);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::INT16);
  auto counts = op_counts(m);
  EXPECT_EQ(counts["QuantizeLinear"], 0);
  EXPECT_EQ(counts["DequantizeLinear"], 0);
  EXPECT_EQ(counts["Round"], 1);  // the output's integers (a Reshape keeps the grid)
  EXPECT_EQ(counts["Cast"], 2);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("1 int16 (16x8) quantized tensor is"));
  EXPECT_THAT(d.warnings[0], HasSubstr("'y'"));
  EXPECT_THAT(d.warnings[0], Not(HasSubstr("'x'")));
}

// TFLite's RESHAPE copies the bytes: the output reads the same integers with
// its own parameters. In QDQ form the Reshape runs on the integers, and the
// output's DequantizeLinear has the output's parameters.
TEST(QuantizedModels, ReshapeBetweenDifferentScalesReadsTheSameIntegers) {
  auto bytes = testing::tflite_from_json(
      quantized_model("INT8", R"({ "scale": [0.1], "zero_point": [0] })",
                      R"({ "scale": [0.2], "zero_point": [3] })", "RESHAPE"));
  ConvertOptions keep;
  keep.keep_int8_activations = true;  // int8 throughout: no requantization at the ends
  Diagnostics d;
  auto r = convert(testing::view(bytes), keep, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto counts = op_counts(m);
  EXPECT_EQ(counts["Reshape"], 1);
  EXPECT_EQ(counts["QuantizeLinear"], 0);  // the same integers, no requantization
  EXPECT_EQ(counts["DequantizeLinear"], 0);
  EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT8);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::INT8);

  // Another integer copy (TRANSPOSE) still needs one set of parameters.
  auto transpose = convert_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 39, "builtin_code": "TRANSPOSE" } ],
    "buffers": [ {}, { "data": [ 1, 0, 0, 0, 0, 0, 0, 0 ] } ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.1], "zero_point": [0] } },
        { "name": "y", "shape": [4, 1], "type": "INT8",
          "quantization": { "scale": [0.2], "zero_point": [0] } },
        { "name": "perm", "shape": [2], "type": "INT32", "buffer": 1 } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": [0, 2], "outputs": [1] } ] } ] })",
                                d);
  ASSERT_FALSE(transpose.ok());
  EXPECT_EQ(transpose.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(transpose.error().message, HasSubstr("copies the integers unchanged"));
}

TEST(QuantizedModels, ReshapeWithSharedScaleConvertsWithIntegerInterface) {
  Diagnostics d;
  auto r = convert_json(quantized_model("INT8", R"({ "scale": [0.1], "zero_point": [3] })",
                                        R"({ "scale": [0.1], "zero_point": [3] })", "RESHAPE"),
                        d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(d.quantization.mode, "auto");
  // int8 in -> uint8 inside -> int8 out: a requantization at each end; the
  // Reshape itself runs on the (uint8) integers
  EXPECT_EQ(d.emitted_nodes["QuantizeLinear"], 2);
  EXPECT_EQ(d.emitted_nodes["DequantizeLinear"], 2);
  EXPECT_EQ(d.emitted_nodes["Reshape"], 1);
  EXPECT_TRUE(d.quantization.int8_activations_as_uint8);

  ConvertOptions keep;
  keep.keep_int8_activations = true;
  Diagnostics d2;
  auto bytes = testing::tflite_from_json(
      quantized_model("INT8", R"({ "scale": [0.1], "zero_point": [3] })",
                      R"({ "scale": [0.1], "zero_point": [3] })", "RESHAPE"));
  ASSERT_TRUE(convert(testing::view(bytes), keep, d2).ok());
  // int8 in -> Reshape on the integers -> int8 out: no Q/DQ at all
  EXPECT_EQ(d2.emitted_nodes["QuantizeLinear"], 0);
  EXPECT_EQ(d2.emitted_nodes["DequantizeLinear"], 0);
  EXPECT_FALSE(d2.quantization.int8_activations_as_uint8);
}

}  // namespace
}  // namespace lite2onnx
