// Coral's PosenetDecoderOp: its custom options (a FlexBuffer map with
// max_detections, score_threshold, stride, nms_radius) checked field by field,
// hostile values refused with an error naming the field, and a well-formed op
// converted at opsets 13 and 17 (its numbers are checked by the numeric suite:
// tests/numeric/lib/posenet_reference.mjs).
#include <flatbuffers/flexbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::op_counts;
using testing::view;

using Fill = std::function<void(flexbuffers::Builder&)>;

std::vector<uint8_t> options(const Fill& fill) {
  flexbuffers::Builder b;
  b.Map([&] { fill(b); });
  b.Finish();
  return b.GetBuffer();
}

// The four fields, each overridable.
std::vector<uint8_t> options(int64_t max_detections, double threshold, int64_t stride,
                             double radius) {
  return options([&](flexbuffers::Builder& b) {
    b.Int("max_detections", max_detections);
    b.Float("score_threshold", static_cast<float>(threshold));
    b.Int("stride", stride);
    b.Float("nms_radius", static_cast<float>(radius));
  });
}

// A one-op model: heatmaps [1, 5, 7, 17], short offsets [1, 5, 7, 34], mid
// offsets [1, 5, 7, 64] -> four outputs of unknown shape (as Coral's models
// declare them), with these custom options.
std::string decoder_model(const std::vector<uint8_t>& custom_options) {
  const nlohmann::json bytes = custom_options;
  return R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "PosenetDecoderOp"}],
    "subgraphs": [{
      "tensors": [
        {"name": "heatmaps", "shape": [1, 5, 7, 17], "buffer": 0},
        {"name": "shorts", "shape": [1, 5, 7, 34], "buffer": 0},
        {"name": "mids", "shape": [1, 5, 7, 64], "buffer": 0},
        {"name": "keypoints", "shape": [], "buffer": 0},
        {"name": "keypoint_scores", "shape": [], "buffer": 0},
        {"name": "scores", "shape": [], "buffer": 0},
        {"name": "count", "shape": [], "buffer": 0}],
      "inputs": [0, 1, 2], "outputs": [3, 4, 5, 6],
      "operators": [{"opcode_index": 0, "inputs": [0, 1, 2], "outputs": [3, 4, 5, 6],
                     "custom_options": )" +
         bytes.dump() + R"(}]}],
    "buffers": [{}]})";
}

Result<std::string> convert_json(const std::string& json, int opset = 13) {
  ConvertOptions o;
  o.opset = opset;
  Diagnostics d;
  return convert(view(testing::tflite_from_json(json)), o, d);
}

void expect_refused(const std::vector<uint8_t>& custom_options, const std::string& what) {
  auto r = convert_json(decoder_model(custom_options));
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel) << what << ": " << r.error().message;
  EXPECT_EQ(r.error().op_index, 0) << what;
  EXPECT_THAT(r.error().message, HasSubstr("PosenetDecoderOp")) << what;
  EXPECT_THAT(r.error().message, HasSubstr(what)) << r.error().message;
}

TEST(Posenet, AWellFormedDecoderConverts) {
  for (int opset : {13, 17}) {
    auto r = convert_json(decoder_model(options(3, 0.5, 16, 20)), opset);
    ASSERT_TRUE(r.ok()) << r.error().message;
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(*r));
    ASSERT_EQ(m.graph().output_size(), 4);
    // Coral's Prepare: [1, max_detections, 17, 2], [1, max_detections, 17],
    // [1, max_detections], [1]; all float32.
    const std::vector<std::vector<int64_t>> shapes{{1, 3, 17, 2}, {1, 3, 17}, {1, 3}, {1}};
    for (int i = 0; i < 4; ++i) {
      const auto& t = m.graph().output(i).type().tensor_type();
      EXPECT_EQ(t.elem_type(), onnx::TensorProto::FLOAT) << i;
      ASSERT_EQ(t.shape().dim_size(), static_cast<int>(shapes[i].size())) << i;
      for (int d = 0; d < t.shape().dim_size(); ++d)
        EXPECT_EQ(t.shape().dim(d).dim_value(), shapes[i][d]) << i << " " << d;
    }
    auto ops = op_counts(m);
    EXPECT_EQ(ops["MaxPool"], 1);  // the local maxima
    EXPECT_GE(ops["Loop"], 2);     // the skeleton walk, the root queue
  }
}

TEST(Posenet, MissingFieldsAreNamed) {
  for (const char* field : {"max_detections", "score_threshold", "stride", "nms_radius"}) {
    expect_refused(options([&](flexbuffers::Builder& b) {
                     if (std::string(field) != "max_detections") b.Int("max_detections", 10);
                     if (std::string(field) != "score_threshold") b.Float("score_threshold", 0.5f);
                     if (std::string(field) != "stride") b.Int("stride", 16);
                     if (std::string(field) != "nms_radius") b.Float("nms_radius", 20.0f);
                   }),
                   std::string("'") + field + "' is missing");
  }
}

TEST(Posenet, HostileValuesAreRefusedNamingTheField) {
  // Zero or negative stride (the kernel's Eval refuses stride <= 0).
  expect_refused(options(10, 0.5, 0, 20), "stride");
  expect_refused(options(10, 0.5, -16, 20), "stride");
  // No detections, negative, or more than the converter builds constants for.
  expect_refused(options(0, 0.5, 16, 20), "max_detections");
  expect_refused(options(-5, 0.5, 16, 20), "max_detections");
  expect_refused(options(int64_t{1} << 40, 0.5, 16, 20), "max_detections");
  expect_refused(options(int64_t{1} << 20, 0.5, 16, 20), "max_detections");
  // Not finite.
  expect_refused(options(10, std::numeric_limits<double>::quiet_NaN(), 16, 20), "score_threshold");
  expect_refused(options(10, 0.5, 16, std::numeric_limits<double>::infinity()), "nms_radius");
  // Mistyped.
  expect_refused(options([](flexbuffers::Builder& b) {
                   b.String("max_detections", "ten");
                   b.Float("score_threshold", 0.5f);
                   b.Int("stride", 16);
                   b.Float("nms_radius", 20.0f);
                 }),
                 "'max_detections' has the wrong type");
  // No FlexBuffer map at all, and no options.
  expect_refused({7, 1, 2, 3, 250, 1}, "no valid FlexBuffer");
  auto none = convert_json(decoder_model({}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidModel) << none.error().message;
}

// BodyPix's form: long offsets `longs` -> a fifth output, the masks; the
// heatmaps of shape `heat` ([1, H, W, 17]).
std::string bodypix_model(const std::string& heat, const std::string& longs) {
  const nlohmann::json bytes = options(4, 0.5, 16, 20);
  return R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "PosenetDecoderOp"}],
    "subgraphs": [{
      "tensors": [
        {"name": "heatmaps", "shape": )" +
         heat + R"(, "buffer": 0},
        {"name": "shorts", "shape": [1, 5, 7, 34], "buffer": 0},
        {"name": "mids", "shape": [1, 5, 7, 64], "buffer": 0},
        {"name": "longs", "shape": )" +
         longs + R"(, "buffer": 0},
        {"name": "keypoints", "shape": [], "buffer": 0},
        {"name": "keypoint_scores", "shape": [], "buffer": 0},
        {"name": "scores", "shape": [], "buffer": 0},
        {"name": "count", "shape": [], "buffer": 0},
        {"name": "masks", "shape": [], "buffer": 0}],
      "inputs": [0, 1, 2, 3], "outputs": [4, 5, 6, 7, 8],
      "operators": [{"opcode_index": 0, "inputs": [0, 1, 2, 3], "outputs": [4, 5, 6, 7, 8],
                     "custom_options": )" +
         bytes.dump() + R"(}]}],
    "buffers": [{}]})";
}

TEST(Posenet, ShapesTheKernelCannotReadAreUnsupported) {
  auto masks = convert_json(bodypix_model("[1, 5, 7, 17]", "[1, 33, 33, 34]"));
  ASSERT_TRUE(masks.ok()) << masks.error().message;
  // The kernel's masks are 33x33 whatever the long offsets: other sizes are refused.
  auto longs = convert_json(bodypix_model("[1, 5, 7, 17]", "[1, 20, 33, 34]"));
  ASSERT_FALSE(longs.ok());
  EXPECT_EQ(longs.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(longs.error().message, HasSubstr("33x33"));
  // Heatmaps whose size differs from the offsets', or with another channel count.
  auto sizes = convert_json(bodypix_model("[1, 6, 7, 17]", "[1, 33, 33, 34]"));
  ASSERT_FALSE(sizes.ok());
  EXPECT_THAT(sizes.error().message, HasSubstr("heatmaps' height and width"));
  auto channels = convert_json(bodypix_model("[1, 5, 7, 16]", "[1, 33, 33, 34]"));
  ASSERT_FALSE(channels.ok());
  EXPECT_THAT(channels.error().message, HasSubstr("[1, H, W, 17]"));
}

}  // namespace
}  // namespace lite2onnx
