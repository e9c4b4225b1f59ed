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

TEST(CustomOps, TheTableIsInTheSupportMatrix) {
  std::set<std::string> supported;
  for (const OpSupport& s : support_matrix())
    if (s.supported) supported.insert(s.op);
  for (const char* op : {"TFLite_Detection_PostProcess", "Convolution2DTransposeBias",
                         "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5"})
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
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(testing::tflite_from_json(model)), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(r.error().op_index, 0);
  EXPECT_THAT(r.error().message, HasSubstr("TFLite_Detection_PostProcess"));
  EXPECT_THAT(r.error().message, HasSubstr("no valid FlexBuffer"));
}

}  // namespace
}  // namespace lite2onnx
