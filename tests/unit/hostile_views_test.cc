// Per-axis quantized constants that a lowering views with other dims (the
// weights of a FULLY_CONNECTED whose permuted input is flattened as it is):
// quantized per output unit they convert; quantized per input column (a
// hostile model: TFLite's kernels quantize per unit) they get a Transpose or
// a clear refusal, never an internal error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::tflite_from_json;
using testing::view;

// `model`'s float weights `name` as int8 with per-axis scales along `axis`.
nlohmann::json with_int8_weights(const std::string& model, const std::string& name, int axis) {
  nlohmann::json j = testing::op_model_json(model);
  for (auto& t : j["subgraphs"][0]["tensors"]) {
    if (t["name"] != name) continue;
    const int64_t rows = t["shape"][0], cols = t["shape"][1];
    const int64_t channels = axis == 0 ? rows : cols;
    std::vector<int> bytes;
    for (int64_t i = 0; i < rows * cols; ++i) bytes.push_back(static_cast<int>((i * 37) % 255));
    j["buffers"].push_back({{"data", bytes}});
    t["buffer"] = j["buffers"].size() - 1;
    t["type"] = "INT8";
    std::vector<double> scales;
    for (int64_t c = 0; c < channels; ++c) scales.push_back(0.01 * static_cast<double>(c + 1));
    t["quantization"] = {{"scale", scales},
                         {"zero_point", std::vector<int64_t>(static_cast<size_t>(channels), 0)},
                         {"quantized_dimension", axis}};
  }
  return j;
}

void expect_no_internal_error(const nlohmann::json& j, bool must_convert) {
  for (QuantizationMode mode : {QuantizationMode::kQdq, QuantizationMode::kDequantize}) {
    ConvertOptions o;
    o.quantization = mode;
    Diagnostics d;
    auto r = convert(view(tflite_from_json(j.dump())), o, d);
    if (must_convert) {
      EXPECT_TRUE(r.ok()) << r.error().message;
    } else if (!r.ok()) {
      EXPECT_NE(r.error().code, ErrorCode::kInternal) << r.error().message;
    }
  }
}

TEST(HostileViews, FullyConnectedWeightsQuantizedPerUnitOrPerColumn) {
  for (const char* model : {"layout_conv_fc_flattens_rows", "reshape_flatten_fc"}) {
    SCOPED_TRACE(model);
    expect_no_internal_error(with_int8_weights(model, "fc/weights", 0), true);
    // Before: the weights' columns were viewed as [units, H, W, C] with the
    // quantization still on axis 1, an internal error in the Q/DQ writer.
    expect_no_internal_error(with_int8_weights(model, "fc/weights", 1), false);
  }
}

}  // namespace
}  // namespace lite2onnx
