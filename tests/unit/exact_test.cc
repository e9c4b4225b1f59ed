// --quantization exact through the public entry point: an op without an
// integer form is refused naming it, and a covered op's integer form (here
// QUANTIZE's table) holds the values the reference arithmetic gives by hand.
// The numeric proof (equality with both TFLite runtimes on adversarial
// models) is tests/numeric/quant_probe/exact.mjs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/ops/quant_math.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::op_counts;

// One int8 op from x [1, 4] (scale 0.1) to y [1, 4] (scale `out_scale`).
std::string int8_model(const std::string& op, int code, const std::string& out_scale) {
  return R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": )" +
         std::to_string(code) + R"(, "builtin_code": ")" + op + R"(" } ],
    "buffers": [ {}, { "data": [ 1, 0, 0, 0, 4, 0, 0, 0 ] } ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.1], "zero_point": [0] } },
        { "name": "y", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [)" +
         out_scale + R"(], "zero_point": [0] } },
        { "name": "shape", "shape": [2], "type": "INT32", "buffer": 1 } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": )" +
         std::string(op == "RESHAPE" ? "[0, 2]" : "[0]") + R"(, "outputs": [1] } ] } ] })";
}

Result<std::string> convert_exact(const std::string& json, Diagnostics& d) {
  auto bytes = testing::tflite_from_json(json);
  ConvertOptions options;
  options.quantization = QuantizationMode::kExact;
  return convert(testing::view(bytes), options, d);
}

TEST(ExactQuantization, OpWithoutAnIntegerFormIsRefusedNamingIt) {
  Diagnostics d;
  auto r = convert_exact(int8_model("ABS", 101, "0.1"), d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  ASSERT_EQ(d.unsupported.size(), 1u);
  EXPECT_EQ(d.unsupported[0].op, "ABS");
  EXPECT_EQ(d.unsupported[0].reason_code, "not_implemented");
  EXPECT_THAT(d.unsupported[0].reason, HasSubstr("--quantization exact"));
}

// RESHAPE copies the integers, whatever the output's scale: one Reshape of
// the int8 tensor, no QuantizeLinear/DequantizeLinear.
TEST(ExactQuantization, AnIntegerCopyIsTheOpOnTheIntegers) {
  Diagnostics d;
  auto r = convert_exact(int8_model("RESHAPE", 22, "0.3"), d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto counts = op_counts(m);
  EXPECT_EQ(counts["Reshape"], 1);
  EXPECT_EQ(counts["QuantizeLinear"] + counts["DequantizeLinear"] + counts["Cast"], 0);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::INT8);
}

// int8 -> int8 at half the scale: XNNPACK's multiplier with 8 fractional bits
// (m = 128), y = floor((q * 128 + 128) / 256) = floor((q + 1) / 2): ties
// round up, not to even. One lookup (GatherElements, which ONNX Runtime runs
// many times faster than Gather) into the table.
TEST(ExactQuantization, RequantizingQuantizeIsOneLookupIntoTheReferenceTable) {
  Diagnostics d;
  auto r = convert_exact(int8_model("QUANTIZE", 114, "0.2"), d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(d.quantization.mode, "exact");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto counts = op_counts(m);
  EXPECT_EQ(counts["GatherElements"], 1);
  EXPECT_EQ(counts["Gather"], 0);
  EXPECT_EQ(counts["QuantizeLinear"], 0);
  EXPECT_EQ(counts["DequantizeLinear"], 0);
  EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT8);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::INT8);
  std::string table_name;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "GatherElements") table_name = n.input(0);
  const onnx::TensorProto* table = nullptr;
  for (const auto& t : m.graph().initializer())
    if (t.name() == table_name) table = &t;
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->raw_data().size(), 256u);  // indexed by the int8 itself: -1 is entry 255
  auto entry = [&](int q) { return static_cast<int8_t>(table->raw_data()[(q + 256) % 256]); };
  EXPECT_EQ(entry(1), 1);    // 0.5 -> 1
  EXPECT_EQ(entry(3), 2);    // 1.5 -> 2
  EXPECT_EQ(entry(5), 3);    // 2.5 -> 3 (half to even would give 2)
  EXPECT_EQ(entry(-1), 0);   // -0.5 -> 0
  EXPECT_EQ(entry(-3), -1);  // -1.5 -> -1
  EXPECT_EQ(entry(127), 64);
  EXPECT_EQ(entry(-128), -64);
}

// The 256 entries of the QUANTIZE table of an exact conversion.
std::vector<int> quantize_table(const std::string& model_json, Diagnostics& d) {
  auto r = convert_exact(model_json, d);
  if (!r.ok()) return {};
  onnx::ModelProto m;
  if (!m.ParseFromString(*r)) return {};
  std::string table_name;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "GatherElements") table_name = n.input(0);
  for (const auto& t : m.graph().initializer())
    if (t.name() == table_name && t.raw_data().size() == 256) {
      std::vector<int> entries;
      for (int q = -128; q < 128; ++q)
        entries.push_back(static_cast<int8_t>(t.raw_data()[static_cast<size_t>((q + 256) % 256)]));
      return entries;
    }
  return {};
}

// A FULLY_CONNECTED whose requantization scale is 1000 makes XNNPACK's
// delegate fail as a whole (docs/quantization-arithmetic.md §2.1): TFLite
// then runs every node builtin, so the QUANTIZE beside it requantizes with
// TFLite's MultiplyByQuantizedMultiplier, not XNNPACK's 8-bit multiplier as
// it does alone, and a warning names the node and why.
TEST(ExactQuantization, ModelXnnpackCannotPrepareRunsEveryNodeBuiltin) {
  const std::string json = R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 114, "builtin_code": "QUANTIZE" },
                        { "deprecated_builtin_code": 9, "builtin_code": "FULLY_CONNECTED" } ],
    "buffers": [ {}, { "data": [ 1, 2, 3, 4, 255, 254, 253, 252 ] } ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.1], "zero_point": [0] } },
        { "name": "y", "shape": [1, 4], "type": "INT8",
          "quantization": { "scale": [0.3], "zero_point": [0] } },
        { "name": "w", "shape": [2, 4], "type": "INT8", "buffer": 1,
          "quantization": { "scale": [1.0], "zero_point": [0] } },
        { "name": "z", "shape": [1, 2], "type": "INT8",
          "quantization": { "scale": [0.0001], "zero_point": [0] } } ],
      "inputs": [0], "outputs": [1, 3],
      "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1] },
                     { "opcode_index": 1, "inputs": [0, 2, -1], "outputs": [3] } ] } ] })";
  Diagnostics d;
  const std::vector<int> builtin = quantize_table(json, d);
  ASSERT_EQ(builtin.size(), 256u);
  EXPECT_THAT(::testing::PrintToString(d.warnings),
              HasSubstr("XNNPACK's delegate cannot prepare this model (FULLY_CONNECTED"));
  EXPECT_THAT(::testing::PrintToString(d.warnings),
              HasSubstr("requantization scale is 256 or more"));
  const auto m =
      ops::qmath::quantize_multiplier(static_cast<double>(0.1f) / static_cast<double>(0.3f));
  for (int q = -128; q < 128; ++q)
    EXPECT_EQ(builtin[static_cast<size_t>(q + 128)], std::clamp(ops::qmath::mbqm(q, m), -128, 127))
        << "q = " << q;
  Diagnostics alone_d;
  const std::vector<int> alone = quantize_table(int8_model("QUANTIZE", 114, "0.3"), alone_d);
  ASSERT_EQ(alone.size(), 256u);
  EXPECT_NE(alone, builtin);  // XNNPACK's multiplier: some entries round otherwise
  EXPECT_TRUE(alone_d.warnings.empty());
}

}  // namespace
}  // namespace lite2onnx
