// The custom-op table and its options readers: FlexBuffer maps and packed C
// structs with every field checked, detection post-processing and MediaPipe's
// transposed convolution converted end to end (their numbers are checked by
// the numeric suite against LiteRT.js and tfjs-tflite).
#include <flatbuffers/flexbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include "core/convert.h"
#include "core/ops/custom_options.h"
#include "core/ops/registry.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::op_counts;
using testing::op_model;
using testing::read_file;
using testing::view;
using Kind = ops::CustomField::Kind;

const ops::CustomField kFields[] = {
    {"count", Kind::kInt, true, 0, 1, 100},
    {"ratio", Kind::kFloat, true, 0, 0, 1},
    {"flag", Kind::kBool, false, 0, 0, 1},
    {"limit", Kind::kInt, false, 7, 0, 10},
};

template <class Fill>
std::vector<uint8_t> flex_map(Fill fill) {
  flexbuffers::Builder b;
  b.Map([&] { fill(b); });
  b.Finish();
  return b.GetBuffer();
}

Result<ir::Attributes> read(const std::vector<uint8_t>& bytes) {
  ir::Attributes a;
  if (auto st = ops::read_flex_fields(bytes, kFields, a); !st) return st.take_error();
  return a;
}

TEST(CustomOptions, FlexBufferFieldsBecomeAttributes) {
  auto a = read(flex_map([](flexbuffers::Builder& b) {
    b.Int("count", 12);
    b.Float("ratio", 0.25f);
    b.Bool("flag", true);
    b.String("ignored", "TFLite ignores keys it does not read");
  }));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->get_int("count"), 12);
  EXPECT_FLOAT_EQ(a->get_float("ratio"), 0.25f);
  EXPECT_EQ(a->get_int("flag"), 1);
  EXPECT_EQ(a->get_int("limit"), 7);  // absent: the default
}

TEST(CustomOptions, BadFieldsAreNamed) {
  auto missing = read(flex_map([](flexbuffers::Builder& b) { b.Float("ratio", 0.5f); }));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("'count' is missing"));
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidModel);

  auto mistyped = read(flex_map([](flexbuffers::Builder& b) {
    b.String("count", "12");
    b.Float("ratio", 0.5f);
  }));
  ASSERT_FALSE(mistyped.ok());
  EXPECT_THAT(mistyped.error().message, HasSubstr("'count' has the wrong type"));

  auto out_of_range = read(flex_map([](flexbuffers::Builder& b) {
    b.Int("count", 1000000000000);
    b.Float("ratio", 0.5f);
  }));
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.error().message,
              HasSubstr("'count' is 1000000000000, outside [1, 100]"));

  auto not_finite = read(flex_map([](flexbuffers::Builder& b) {
    b.Int("count", 3);
    b.Float("ratio", std::numeric_limits<float>::quiet_NaN());
  }));
  ASSERT_FALSE(not_finite.ok());
  EXPECT_THAT(not_finite.error().message, HasSubstr("'ratio'"));
}

TEST(CustomOptions, BytesThatAreNoFlexBufferMapAreRefused) {
  flexbuffers::Builder vec;
  vec.Vector([&] { vec.Int(1); });
  vec.Finish();
  auto not_a_map = read(vec.GetBuffer());
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_THAT(not_a_map.error().message, HasSubstr("no map"));

  std::vector<uint8_t> good = flex_map([](flexbuffers::Builder& b) {
    b.Int("count", 12);
    b.Float("ratio", 0.25f);
  });
  for (size_t len : {size_t{0}, size_t{1}, size_t{2}})
    EXPECT_FALSE(
        read(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(len))).ok());
  // Every truncation and single-byte corruption either reads or fails cleanly.
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = read(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(len)));
    if (!r.ok()) {
      EXPECT_FALSE(r.error().message.empty());
    }
  }
  for (size_t i = 0; i < good.size(); ++i)
    for (uint8_t v : {uint8_t{0}, uint8_t{0x7f}, uint8_t{0xff}}) {
      std::vector<uint8_t> bad = good;
      bad[i] = v;
      auto r = read(bad);
      if (!r.ok()) {
        EXPECT_FALSE(r.error().message.empty());
      }
    }
}

TEST(CustomOptions, StructFieldsAreReadInOrderAndChecked) {
  const ops::CustomField fields[] = {{"padding", Kind::kInt, true, 0, 1, 2},
                                     {"stride", Kind::kInt, true, 0, 1, 8}};
  ir::Attributes a;
  const std::vector<uint8_t> bytes = {2, 0, 0, 0, 3, 0, 0, 0, 9, 9, 9, 9};  // + a newer field
  ASSERT_TRUE(ops::read_struct_fields(bytes, fields, a).ok());
  EXPECT_EQ(a.get_int("padding"), 2);
  EXPECT_EQ(a.get_int("stride"), 3);
  auto short_bytes = ops::read_struct_fields(std::vector<uint8_t>{2, 0, 0}, fields, a);
  ASSERT_FALSE(short_bytes.ok());
  EXPECT_THAT(short_bytes.error().message, HasSubstr("3 bytes, 8 expected"));
  auto negative =
      ops::read_struct_fields(std::vector<uint8_t>{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, fields, a);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().message, HasSubstr("'stride' is -1"));
}

TEST(CustomOptions, IntegerListsAreTypedVectorsInRange) {
  const ops::CustomField fields[] = {{"idx", Kind::kInts, true, 0, 0, 99}};
  auto typed = [](std::vector<int> v) {
    flexbuffers::Builder b;
    b.Map([&] { b.Vector("idx", v.data(), v.size()); });  // a typed vector of ints
    b.Finish();
    return b.GetBuffer();
  };
  ir::Attributes a;
  ASSERT_TRUE(ops::read_flex_fields(typed({3, 1, 4}), fields, a).ok());
  EXPECT_EQ(a.get_ints("idx"), (std::vector<int64_t>{3, 1, 4}));
  auto big = ops::read_flex_fields(typed({3, 100}), fields, a);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message, HasSubstr("'idx' is 100, outside [0, 99]"));
  auto empty = ops::read_flex_fields(typed({}), fields, a);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("'idx' is empty"));
  // MediaPipe reads it with AsTypedVector: an untyped vector or a number is wrong.
  auto untyped = ops::read_flex_fields(flex_map([](flexbuffers::Builder& b) {
                                         b.Vector("idx", [&] {
                                           b.Int(1);
                                           b.String("x");
                                         });
                                       }),
                                       fields, a);
  ASSERT_FALSE(untyped.ok());
  EXPECT_THAT(untyped.error().message, HasSubstr("typed vector of integers"));
  auto scalar =
      ops::read_flex_fields(flex_map([](flexbuffers::Builder& b) { b.Int("idx", 3); }), fields, a);
  ASSERT_FALSE(scalar.ok());
}

TEST(CustomOps, TheTableIsInTheSupportMatrix) {
  std::set<std::string> supported;
  for (const OpSupport& s : support_matrix())
    if (s.supported) supported.insert(s.op);
  for (const char* op :
       {"TFLite_Detection_PostProcess", "Convolution2DTransposeBias", "MaxPoolingWithArgmax2D",
        "MaxUnpooling2D", "TransformTensorBilinear", "TransformLandmarks",
        "Landmarks2TransformMatrix", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
        "AudioSpectrogram", "Mfcc"})
    EXPECT_TRUE(supported.count(op)) << op;
  EXPECT_FALSE(ops::lookup_custom("NoSuchCustomOp").supported());
}

onnx::ModelProto convert_model(const std::string& name, int opset) {
  const auto bytes = read_file(op_model(name));
  ConvertOptions o;
  o.opset = opset;
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().message);
  onnx::ModelProto m;
  if (r.ok()) {
    EXPECT_TRUE(m.ParseFromString(*r));
  }
  return m;
}

// The error converting a model written as FlatBuffer JSON (it must fail).
Error conversion_error(const std::string& json) {
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(testing::tflite_from_json(json)), o, d);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

TEST(CustomOps, DetectionPostProcessBecomesNonMaxSuppression) {
  for (int opset : {13, 17}) {
    onnx::ModelProto fast = convert_model("det_postprocess_fast", opset);
    auto ops = op_counts(fast);
    EXPECT_EQ(ops["NonMaxSuppression"], 1);
    EXPECT_EQ(ops["TopK"], 1);  // the best classes of each box
    EXPECT_EQ(ops["Transpose"], 0);
    ASSERT_EQ(fast.graph().output_size(), 4);
    // TFLite's shapes: [1, max_detections * max_classes_per_detection, 4], ..., [1].
    const auto& boxes = fast.graph().output(0).type().tensor_type().shape();
    ASSERT_EQ(boxes.dim_size(), 3);
    EXPECT_EQ(boxes.dim(1).dim_value(), 6);
    EXPECT_EQ(fast.graph().output(3).type().tensor_type().shape().dim(0).dim_value(), 1);

    // Regular NMS: one NonMaxSuppression over every class, then the best across classes.
    auto regular = op_counts(convert_model("det_postprocess_regular", opset));
    EXPECT_EQ(regular["NonMaxSuppression"], 1);
    EXPECT_EQ(regular["GatherND"], 1);
    EXPECT_EQ(regular["TopK"], 1);
  }
  // uint8 inputs are read through DequantizeLinear; the outputs are float32.
  onnx::ModelProto q = convert_model("det_postprocess_uint8_regular", 13);
  EXPECT_GE(op_counts(q)["DequantizeLinear"], 2);
  EXPECT_EQ(q.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
}

TEST(CustomOps, MediaPipeTransposeConvIsOneConvTranspose) {
  onnx::ModelProto m = convert_model("det_mediapipe_transpose_conv_same_s2", 13);
  auto ops = op_counts(m);
  EXPECT_EQ(ops["ConvTranspose"], 1);
  EXPECT_EQ(ops["Transpose"], 0);
}

// Pooling with argmax and unpooling stay in NCHW between convolutions: no
// Transpose, whatever the indices' detour through ScatterElements.
TEST(CustomOps, MediaPipeUnpoolingStaysChannelsFirst) {
  for (int opset : {13, 17}) {
    auto ops = op_counts(convert_model("det_mediapipe_unpool_after_conv", opset));
    EXPECT_EQ(ops["Transpose"], 0);  // the graph input and output become NCHW
    EXPECT_EQ(ops["MaxPool"], 1);
    EXPECT_EQ(ops["ScatterElements"], 1);
  }
}

// Version 1 of MediaPipe's transforms means other options and shapes, and no
// MediaPipe resolver registers it: unsupported, naming the version.
TEST(CustomOps, AnUnregisteredVersionIsUnsupported) {
  const std::string model = R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "TransformLandmarks", "version": 1}],
    "subgraphs": [{
      "tensors": [
        {"name": "landmarks", "shape": [1, 1, 5, 3], "buffer": 0},
        {"name": "matrix", "shape": [1, 4, 4], "buffer": 0},
        {"name": "out", "shape": [1, 1, 5, 3], "buffer": 0}],
      "inputs": [0, 1], "outputs": [2],
      "operators": [{"opcode_index": 0, "inputs": [0, 1], "outputs": [2]}]}],
    "buffers": [{}]})";
  const Error e = conversion_error(model);
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("version 1"));
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].op, "TransformLandmarks");
}

// A landmark index beyond the input is refused before anything runs.
TEST(CustomOps, LandmarkIndicesBeyondTheInputAreNamed) {
  flexbuffers::Builder b;
  b.Map([&] {
    std::vector<int> subset = {0, 1, 40};
    b.Vector("subset_idxs", subset.data(), subset.size());
    b.Int("left_rotation_idx", 0);
    b.Int("right_rotation_idx", 1);
    b.Int("output_height", 8);
    b.Int("output_width", 8);
    b.Float("scale_x", 1.0f);
    b.Float("scale_y", 1.0f);
  });
  b.Finish();
  nlohmann::json options = b.GetBuffer();
  const std::string model = R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "Landmarks2TransformMatrix", "version": 2}],
    "subgraphs": [{
      "tensors": [
        {"name": "landmarks", "shape": [1, 10, 3], "buffer": 0},
        {"name": "matrix", "shape": [1, 4, 4], "buffer": 0}],
      "inputs": [0], "outputs": [1],
      "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1],
                     "custom_options": )" +
                            options.dump() + R"(}]}],
    "buffers": [{}]})";
  const Error e = conversion_error(model);
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("landmark 40 is beyond the 10 landmarks"));
}

// A custom op whose options are broken is an invalid model naming the op.
TEST(CustomOps, BrokenCustomOptionsNameTheOp) {
  const std::string model = R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "TFLite_Detection_PostProcess"}],
    "subgraphs": [{
      "tensors": [
        {"name": "enc", "shape": [1, 4, 4], "buffer": 0},
        {"name": "cls", "shape": [1, 4, 2], "buffer": 0},
        {"name": "anchors", "shape": [4, 4], "buffer": 0},
        {"name": "boxes", "shape": [1, 2, 4], "buffer": 0},
        {"name": "classes", "shape": [1, 2], "buffer": 0},
        {"name": "scores", "shape": [1, 2], "buffer": 0},
        {"name": "count", "shape": [1], "buffer": 0}],
      "inputs": [0, 1, 2], "outputs": [3, 4, 5, 6],
      "operators": [{"opcode_index": 0, "inputs": [0, 1, 2], "outputs": [3, 4, 5, 6],
                     "custom_options": [7, 1, 2, 3, 250, 1]}]}],
    "buffers": [{}]})";
  const Error e = conversion_error(model);
  EXPECT_EQ(e.code, ErrorCode::kInvalidModel);
  EXPECT_EQ(e.op_index, 0);
  EXPECT_THAT(e.message, HasSubstr("TFLite_Detection_PostProcess"));
  EXPECT_THAT(e.message, HasSubstr("no valid FlexBuffer"));
}

// A one-op model of an audio custom op: `input` [samples, channels] or
// [channels, frames, bins] (+ an int32 rate for Mfcc) -> one output.
std::string audio_model(const std::string& code, const std::vector<uint8_t>& options,
                        const std::string& input_shape, const std::string& output_shape) {
  const bool mfcc = code == "Mfcc";
  nlohmann::json bytes = options;
  return R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": ")" +
         code + R"("}],
    "subgraphs": [{
      "tensors": [
        {"name": "in", "shape": )" +
         input_shape + R"(, "buffer": 0},
        {"name": "out", "shape": )" +
         output_shape + R"(, "buffer": 0},
        {"name": "rate", "shape": [1], "type": "INT32", "buffer": 0}],
      "inputs": )" +
         (mfcc ? "[0, 2]" : "[0]") + R"(, "outputs": [1],
      "operators": [{"opcode_index": 0, "inputs": )" +
         (mfcc ? "[0, 2]" : "[0]") + R"(, "outputs": [1],
                     "custom_options": )" +
         bytes.dump() + R"(}]}],
    "buffers": [{}]})";
}

std::vector<uint8_t> spectrogram_options(int window, int stride) {
  return flex_map([&](flexbuffers::Builder& b) {
    b.Int("window_size", window);
    b.Int("stride", stride);
    b.Bool("magnitude_squared", true);
  });
}

std::vector<uint8_t> mfcc_options(float lower, float upper, int channels, int coefficients) {
  return flex_map([&](flexbuffers::Builder& b) {
    b.Float("lower_frequency_limit", lower);
    b.Float("upper_frequency_limit", upper);
    b.Int("filterbank_channel_count", channels);
    b.Int("dct_coefficient_count", coefficients);
  });
}

// The speech front end: frames by one Gather and a DFT of two MatMuls, the mel
// bank built in float64 from the run-time rate, no Transpose.
TEST(CustomOps, AudioOpsBecomeMatMulsAndAFilterbankOfTheRate) {
  auto ops = op_counts(convert_model("audio_speech_front_end", 13));
  EXPECT_EQ(ops["Gather"], 3);  // frames, and the bank's upper and lower centres
  EXPECT_EQ(ops["MatMul"], 4);  // cosine, sine, filterbank, DCT
  EXPECT_EQ(ops["Transpose"], 0);
  // Stereo input: [samples, channels] -> [channels, samples] is one Transpose.
  EXPECT_EQ(op_counts(convert_model("audio_spectrogram_magnitude_stereo", 13))["Transpose"], 1);
}

TEST(CustomOps, AudioOptionsTfliteCannotRunAreRefused) {
  // Out of the fields' ranges: an invalid model naming the field.
  for (auto [window, stride, field] :
       {std::tuple{1, 10, "window_size"}, std::tuple{5000, 10, "window_size"},
        std::tuple{64, 0, "stride"}}) {
    const Error e = conversion_error(
        audio_model("AudioSpectrogram", spectrogram_options(window, stride), "[800, 1]", "[]"));
    EXPECT_EQ(e.code, ErrorCode::kInvalidModel) << window << " " << stride;
    EXPECT_THAT(e.message, HasSubstr(field));
  }
  // Fewer samples than one window: TFLite's output is empty.
  Error e = conversion_error(
      audio_model("AudioSpectrogram", spectrogram_options(256, 64), "[200, 1]", "[]"));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("fewer samples than window_size"));
  // Limits TFLite truncates to the same value, and more coefficients than
  // channels: TFLite's filterbank or DCT refuses to initialise.
  e = conversion_error(
      audio_model("Mfcc", mfcc_options(20.2f, 20.9f, 40, 13), "[1, 4, 129]", "[1, 4, 13]"));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("upper_frequency_limit must exceed"));
  e = conversion_error(
      audio_model("Mfcc", mfcc_options(20, 4000, 10, 13), "[1, 4, 129]", "[1, 4, 13]"));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("dct_coefficient_count must not exceed"));
  // A spectrogram of one bin.
  e = conversion_error(audio_model("Mfcc", mfcc_options(20, 4000, 4, 2), "[1, 4, 1]", "[1, 4, 2]"));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("at least 2 static bins"));
}

}  // namespace
}  // namespace lite2onnx
