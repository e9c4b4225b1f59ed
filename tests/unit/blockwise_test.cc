// Blockwise-quantized INT4 weights (TFLite's BlockwiseQuantization, as LLM
// exports store linear layers): read, unpacked, checked and folded to float.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// FULLY_CONNECTED x [1, 4] . W^T, W INT4 [2, 4] packed low nibble first:
// rows [1, -2, 7, -8] and [0, 3, -1, 5]; blocks of `block` with float16
// scales 0.5, 0.25 | 2, 0.125 (`scales` bytes, shape [2, 2] unless given).
std::string blockwise_model(const std::string& weight_bytes = "[225, 135, 48, 95]", int block = 2,
                            const std::string& scales = "[0, 56, 0, 52, 0, 64, 0, 48]",
                            const std::string& scale_shape = "[2, 2]") {
  return R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 9, "builtin_code": "FULLY_CONNECTED" } ],
    "buffers": [ {}, { "data": )" +
         weight_bytes + R"( }, { "data": )" + scales + R"( } ],
    "subgraphs": [ {
      "tensors": [
        { "name": "x", "shape": [1, 4], "type": "FLOAT32" },
        { "name": "w", "shape": [2, 4], "type": "INT4", "buffer": 1, "quantization": {
            "details_type": "BlockwiseQuantization",
            "details": { "scales": 3, "zero_points": -1, "block_size": )" +
         std::to_string(block) + R"( } } },
        { "name": "y", "shape": [1, 2], "type": "FLOAT32" },
        { "name": "w/scales", "shape": )" +
         scale_shape + R"(, "type": "FLOAT16", "buffer": 2 } ],
      "inputs": [0], "outputs": [2],
      "operators": [ { "opcode_index": 0, "inputs": [0, 1, -1], "outputs": [2] } ] } ] })";
}

Result<std::string> convert_json(const std::string& json, Diagnostics& d,
                                 QuantizationMode mode = QuantizationMode::kQdq) {
  auto bytes = testing::tflite_from_json(json);
  ConvertOptions options;
  options.quantization = mode;
  return convert(testing::view(bytes), options, d);
}

// The float weights of the converted model: its one initializer of 8 floats.
std::vector<float> folded_weights(const std::string& onnx_bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(onnx_bytes));
  for (const auto& init : m.graph().initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT) continue;
    std::vector<float> v(init.float_data().begin(), init.float_data().end());
    if (v.empty() && init.raw_data().size() % 4 == 0) {
      v.resize(init.raw_data().size() / 4);
      std::memcpy(v.data(), init.raw_data().data(), init.raw_data().size());
    }
    if (v.size() == 8) return v;
  }
  return {};
}

TEST(Blockwise, Int4WeightsFoldToFloatPerBlockWithAWarning) {
  Diagnostics d;
  auto r = convert_json(blockwise_model(), d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // (q - 0) x the scale of its block, exactly.
  EXPECT_THAT(folded_weights(*r), ElementsAreArray({0.5f, -1.f, 1.75f, -2.f,  //
                                                    0.f, 6.f, -0.125f, 0.625f}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("1 blockwise-quantized weight tensor (first: 'w')"));
}

TEST(Blockwise, DequantizeModeFoldsTheSameWithoutAWarning) {
  Diagnostics d;
  auto r = convert_json(blockwise_model(), d, QuantizationMode::kDequantize);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(folded_weights(*r), ElementsAreArray({0.5f, -1.f, 1.75f, -2.f,  //
                                                    0.f, 6.f, -0.125f, 0.625f}));
  EXPECT_TRUE(d.warnings.empty());
}

TEST(Blockwise, BadFilesAreInvalidModelsNamingWhatIsWrong) {
  struct Case {
    std::string json, says;
  };
  const std::vector<Case> cases = {
      {blockwise_model("[225, 135, 48]"), "3 bytes but 8 packed INT4 values need 4"},
      {blockwise_model("[225, 135, 48, 95]", 3), "block size 3 does not divide"},
      {blockwise_model("[225, 135, 48, 95]", 0), "block size 0 does not divide"},
      {blockwise_model("[225, 135, 48, 95]", 2, "[0, 56, 0, 52, 0, 64]", "[3]"),
       "scales 'w/scales' must be a constant of 4 values"},
  };
  for (const Case& c : cases) {
    Diagnostics d;
    auto r = convert_json(c.json, d);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel) << r.error().message;
    EXPECT_THAT(r.error().message, HasSubstr(c.says));
  }
}

}  // namespace
}  // namespace lite2onnx
