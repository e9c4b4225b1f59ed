// --quantization auto, the default: Q/DQ pairs around the ops whose ONNX
// Runtime kernels compute TFLite's function (convolutions, fully connected),
// TFLite's integer arithmetic for the ops whose Q/DQ kernels round
// differently (the op table's ExactForm::in_qdq_graphs), handed their
// integers through QuantizeLinear and back through DequantizeLinear. The
// numeric proof is the numeric suite: the op models and the corpus run in
// this mode against both TFLite runtimes.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::op_counts;

std::map<std::string, int> converted_ops(const std::vector<std::byte>& bytes, QuantizationMode mode,
                                         Diagnostics& d) {
  ConvertOptions options;
  options.quantization = mode;
  auto r = convert(testing::view(bytes), options, d);
  EXPECT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  if (!r.ok() || !m.ParseFromString(*r)) return {};
  return op_counts(m);
}

TEST(AutoQuantization, IsTheDefault) {
  EXPECT_EQ(ConvertOptions{}.quantization, QuantizationMode::kAuto);
}

// int8 -> int8 at another scale (XNNPACK's 8-fractional-bit multiplier):
// auto looks the reference table up on the input's integers, where qdq
// writes DequantizeLinear -> QuantizeLinear (rounding half to even). The
// graph input's DequantizeLinear and the form's QuantizeLinear cancel.
TEST(AutoQuantization, RequantizingQuantizeLooksTheTableUpOnTheIntegers) {
  const std::string json = R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 114, "builtin_code": "QUANTIZE" } ],
    "buffers": [ {} ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.1], "zero_point": [0] } },
        { "name": "y", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.2], "zero_point": [0] } } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1] } ] } ] })";
  const auto model = testing::tflite_from_json(json);
  Diagnostics d;
  auto counts = converted_ops(model, QuantizationMode::kAuto, d);
  EXPECT_EQ(d.quantization.mode, "auto");
  // The input's DequantizeLinear cancels against the table's QuantizeLinear,
  // and the graph output is the table's integers (no pair back to them).
  EXPECT_EQ(counts["GatherElements"], 1);
  EXPECT_EQ(counts["QuantizeLinear"], 0);
  EXPECT_EQ(counts["DequantizeLinear"], 0);
  EXPECT_GE(d.quantization.cancelled_pairs, 1);

  Diagnostics q;
  counts = converted_ops(model, QuantizationMode::kQdq, q);
  EXPECT_EQ(q.quantization.mode, "qdq");
  EXPECT_EQ(counts["GatherElements"], 0);
  EXPECT_GE(counts["QuantizeLinear"], 1);
}

// A small int8 MobileNet: its convolutions stay Q/DQ around a float Conv
// (ONNX Runtime's QLinearConv rounds as XNNPACK does); its global
// AVERAGE_POOL_2D takes TFLite's rounding of the mean (a ConvInteger sum).
TEST(AutoQuantization, ConvolutionsStayQdqAndThePoolTakesTheIntegerForm) {
  const auto model = testing::read_file(testing::op_model("q_mini_mobilenet"));
  Diagnostics d;
  auto counts = converted_ops(model, QuantizationMode::kAuto, d);
  EXPECT_EQ(counts["Conv"], 3);
  EXPECT_EQ(counts["ConvInteger"], 1);
  EXPECT_EQ(counts["AveragePool"], 0);

  Diagnostics q;
  counts = converted_ops(model, QuantizationMode::kQdq, q);
  EXPECT_EQ(counts["Conv"], 3);
  EXPECT_EQ(counts["ConvInteger"], 0);
  EXPECT_EQ(counts["AveragePool"], 1);
}

// An int8 ADD takes XNNPACK's fixed point: a Floor of the float64 sum.
TEST(AutoQuantization, AddTakesXnnpacksFixedPoint) {
  const auto model = testing::read_file(testing::op_model("q_add"));
  Diagnostics d;
  EXPECT_EQ(converted_ops(model, QuantizationMode::kAuto, d)["Floor"], 1);
  Diagnostics q;
  EXPECT_EQ(converted_ops(model, QuantizationMode::kQdq, q)["Floor"], 0);
}

// A weight-only model (int8 constant -> DEQUANTIZE -> float CONV_2D) is a
// float model in TFLite too: its convolution stays float, the weights read
// through DequantizeLinear (its TFLite kernel is no XNNPACK integer one, which
// must not make auto take the integer form).
TEST(AutoQuantization, WeightOnlyConvolutionStaysFloat) {
  const auto model = testing::read_file(testing::op_model("q_weight_only_conv2d"));
  Diagnostics d;
  auto counts = converted_ops(model, QuantizationMode::kAuto, d);
  EXPECT_EQ(counts["Conv"], 1);
  EXPECT_EQ(counts["ConvInteger"], 0);
  EXPECT_EQ(counts["QuantizeLinear"], 0);
  EXPECT_EQ(counts["DequantizeLinear"], 1);
}

// int16 has no Q/DQ kernel in ONNX Runtime (the Q/DQ form computes it in
// float on its grid): auto gives int16 nodes their integer form, here the
// 65,536-entry LOGISTIC table, handed the integers by Div, Round and Cast.
TEST(AutoQuantization, Int16OpsTakeTheIntegerForm) {
  const auto model = testing::read_file(testing::op_model("q_16x8_logistic"));
  Diagnostics d;
  auto counts = converted_ops(model, QuantizationMode::kAuto, d);
  EXPECT_EQ(counts["GatherElements"], 1);
  EXPECT_EQ(counts["Sigmoid"], 0);

  Diagnostics q;
  counts = converted_ops(model, QuantizationMode::kQdq, q);
  EXPECT_EQ(counts["GatherElements"], 0);
  EXPECT_GT(counts["Sigmoid"], 0);
}

}  // namespace
}  // namespace lite2onnx
