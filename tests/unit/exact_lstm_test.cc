// --quantization exact and the integer LSTM (core/ops/exact_lstm.cc): the
// converted cell is integer arithmetic with integer states, the variants it
// does not cover are refused saying why, long sequences are bounded; and the
// 16-bit fixed-point sigmoid and tanh it tabulates follow the real functions.
// The numeric proof (equality with tfjs-tflite on the rnn_lstm_int8* models
// and real ones) is the numeric harness's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/convert.h"
#include "core/ops/quant_math.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::op_counts;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

nlohmann::json& tensor_named(nlohmann::json& j, const std::string& name) {
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == name) return t;
  throw std::runtime_error("no tensor " + name);
}

ConvertOptions exact_options() {
  ConvertOptions o;
  o.quantization = QuantizationMode::kExact;
  return o;
}

Result<std::string> convert_exact(const nlohmann::json& j, Diagnostics& d,
                                  ConvertOptions o = exact_options()) {
  const Bytes bytes = tflite_from_json(j.dump());
  return convert(view(bytes), o, d);
}

// The refusal's reason, or "" when it converts.
std::string refusal(const nlohmann::json& j) {
  Diagnostics d;
  auto r = convert_exact(j, d);
  if (r.ok()) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported) << r.error().message;
  return d.unsupported.empty() ? r.error().message : d.unsupported[0].reason;
}

TEST(ExactLstm, TheIntegerCellIsIntegerArithmetic) {
  Diagnostics d;
  auto r = convert_exact(testing::op_model_json("rnn_lstm_int8_projection"), d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto counts = op_counts(m);
  // One input product for the sequence, then per step (6) the recurrent one
  // and the projection.
  EXPECT_EQ(counts["MatMulInteger"], 1 + 6 * 2);
  EXPECT_EQ(counts["QuantizeLinear"] + counts["DequantizeLinear"], 0);
  EXPECT_EQ(counts["Sigmoid"] + counts["Tanh"] + counts["MatMul"], 0);
  // The output and the state outputs carry TFLite's integers.
  for (const auto& out : m.graph().output()) {
    const int type = out.type().tensor_type().elem_type();
    EXPECT_TRUE(type == onnx::TensorProto::INT8 || type == onnx::TensorProto::INT16)
        << out.name() << " has type " << type;
  }
}

// A hybrid cell: TFLite's hybrid kernel, its products MatMulInteger of the
// rows quantized at run time, the rest in float.
TEST(ExactLstm, TheHybridCellMultipliesIntegers) {
  Diagnostics d;
  auto r = convert_exact(testing::op_model_json("rnn_lstm_hybrid"), d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto counts = op_counts(m);
  // The input product for the sequence, then the recurrent one per step (4).
  EXPECT_EQ(counts["MatMulInteger"], 1 + 4);
  EXPECT_EQ(counts["DequantizeLinear"] + counts["MatMul"], 0);
}

TEST(ExactLstm, UncoveredVariantsAreRefusedSayingWhy) {
  // Hybrid weights of several scales: the kernel reads one.
  auto h = testing::op_model_json("rnn_lstm_hybrid");
  tensor_named(h, "lstm/forget_weights")["quantization"] = {
      {"scale", {0.01, 0.02, 0.03, 0.04, 0.05}},
      {"zero_point", {0, 0, 0, 0, 0}},
      {"quantized_dimension", 0}};
  EXPECT_THAT(refusal(h), HasSubstr("one scale"));

  // A cell state scale whose tanh TFLite's kernel does not take.
  auto j = testing::op_model_json("rnn_lstm_int8");
  tensor_named(j, "lstm/cell_state")["quantization"]["scale"] = {1.0 / 256};
  EXPECT_THAT(refusal(j), HasSubstr("cell state scale of 2^-8"));

  // Layer norm coefficients whose rescaling would shift left.
  j = testing::op_model_json("rnn_lstm_int8_layer_norm");
  tensor_named(j, "lstm/forget_layer_norm")["quantization"]["scale"] = {1.0 / 1024};
  EXPECT_THAT(refusal(j), HasSubstr("layer norm coefficients"));

  // Biases the kernel would read as int32 but are not.
  j = testing::op_model_json("rnn_lstm_int8");
  tensor_named(j, "lstm/output_bias")["type"] = "FLOAT32";
  tensor_named(j, "lstm/output_bias").erase("quantization");
  EXPECT_THAT(refusal(j), HasSubstr("'lstm/output_bias' must be int32"));
}

TEST(ExactLstm, LongSequencesAreBounded) {
  auto j = testing::op_model_json("rnn_lstm_int8");
  tensor_named(j, "input")["shape"] = {2, 4000, 3};
  tensor_named(j, "output")["shape"] = {2, 4000, 5};
  ConvertOptions small = exact_options();
  small.limits.max_created_bytes = 1 << 20;
  Diagnostics d;
  auto r = convert_exact(j, d, small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceLimit);
  EXPECT_THAT(r.error().message, HasSubstr("unrolled"));
}

// gemmlowp's 16-bit logistic (F3 in) and tanh (F<bits> in), Q0.15 out, are
// within a few steps of the real functions over every int16 input (wrong
// integer bits would be thousands of steps off).
TEST(ExactLstm, FixedPointSigmoidAndTanhFollowTheFunctions) {
  int64_t worst = 0;
  for (int64_t raw = -32768; raw <= 32767; ++raw) {
    const double want = std::ldexp(1.0 / (1.0 + std::exp(-std::ldexp(raw, -12))), 15);
    worst = std::max<int64_t>(
        worst, std::llabs(ops::qmath::fixed_logistic16(raw) -
                          static_cast<int64_t>(std::min(std::round(want), 32767.0))));
  }
  EXPECT_LE(worst, 6);
  for (int bits = 0; bits <= 6; ++bits) {
    worst = 0;
    for (int64_t raw = -32768; raw <= 32767; ++raw) {
      const double want = std::ldexp(std::tanh(std::ldexp(raw, bits - 15)), 15);
      worst = std::max<int64_t>(
          worst, std::llabs(ops::qmath::fixed_tanh16(raw, bits) -
                            static_cast<int64_t>(std::clamp(std::round(want), -32768.0, 32767.0))));
    }
    // The 16-bit Newton-Raphson division of tanh is coarser: 12 steps (2^-11).
    EXPECT_LE(worst, 12) << bits << " integer bits";
  }
}

}  // namespace
}  // namespace lite2onnx
