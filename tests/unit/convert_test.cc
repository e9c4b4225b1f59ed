// End-to-end conversions through the public entry point, checked on the ONNX proto.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/convert.h"
#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;
using testing::op_counts;
using testing::op_model;

using ::testing::HasSubstr;
using testing::read_file;
using testing::view;

onnx::ModelProto convert_ok(const std::vector<std::byte>& bytes, const ConvertOptions& o,
                            Diagnostics* diag_out = nullptr) {
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  onnx::ModelProto m;
  if (r.ok()) {
    EXPECT_TRUE(m.ParseFromString(*r));
  }
  if (diag_out) *diag_out = d;
  return m;
}

onnx::ModelProto convert_ok(const std::vector<std::byte>& bytes, int opset = 13,
                            Diagnostics* diag_out = nullptr) {
  ConvertOptions o;
  o.opset = opset;
  return convert_ok(bytes, o, diag_out);
}

ConvertOptions keeping_io_layout() {
  ConvertOptions o;
  o.layout.keep_io_layout = true;
  return o;
}

TEST(Convert, SameInputGivesIdenticalBytes) {
  auto bytes = read_file(op_model("mini_mobilenet"));
  ConvertOptions o;
  Diagnostics d1, d2;
  auto a = convert(view(bytes), o, d1);
  auto b = convert(view(bytes), o, d2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(Convert, KeepsInterfaceNamesAndTracesNodeNames) {
  auto bytes = read_file(op_model("conv2d_same_s1"));
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok());
  onnx::ModelProto m = convert_ok(bytes);
  ASSERT_EQ(m.graph().input_size(), 1);
  EXPECT_EQ(m.graph().input(0).name(), info->tensors[info->inputs[0]].name);
  EXPECT_EQ(m.graph().output(0).name(), info->tensors[info->outputs[0]].name);
  ASSERT_GE(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).name(), "Conv2D_0");
  EXPECT_EQ(m.producer_name(), "lite2onnx");
}

TEST(Convert, IoLayoutsAreRecordedInMetadata) {
  auto bytes = read_file(op_model("conv2d_same_s1"));
  onnx::ModelProto m = convert_ok(bytes);
  std::string layouts;
  for (const auto& p : m.metadata_props())
    if (p.key() == "lite2onnx.io_layouts") layouts = p.value();
  auto j = nlohmann::json::parse(layouts);
  ASSERT_EQ(j.size(), 2u);
  for (auto& [name, perm] : j.items()) EXPECT_EQ(perm, (std::vector<int>{0, 3, 1, 2})) << name;
  // The NCHW input's declared shape is the permuted TFLite shape.
  auto info = inspect(view(bytes));
  const auto& s = info->tensors[info->inputs[0]].shape;
  const auto& dims = m.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[1].dim_value(), s[3]);
  EXPECT_EQ(dims[2].dim_value(), s[1]);
}

TEST(Convert, EveryOpsetFrom13To17) {
  auto bytes = read_file(op_model("hard_swish"));
  for (int opset = 13; opset <= 17; ++opset) {
    onnx::ModelProto m = convert_ok(bytes, opset);
    ASSERT_EQ(m.opset_import_size(), 1);
    EXPECT_EQ(m.opset_import(0).version(), opset);
    // HardSwish exists from opset 14; below it is decomposed.
    EXPECT_EQ(op_counts(m).count("HardSwish"), opset >= 14 ? 1u : 0u) << opset;
  }
}

TEST(Convert, RejectsOpsetsOutOfRange) {
  auto bytes = read_file(op_model("abs"));
  for (int opset : {12, 18}) {
    ConvertOptions o;
    o.opset = opset;
    Diagnostics d;
    auto r = convert(view(bytes), o, d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
    EXPECT_THAT(r.error().message, HasSubstr(std::to_string(opset)));
  }
}

// The output-buffer form writes the same bytes into the room it is given,
// asks once with their exact size, and a buffer with no room is an error.
TEST(Convert, WritesIntoACallersBuffer) {
  auto bytes = read_file(op_model("mini_mobilenet"));
  Diagnostics d;
  auto expected = convert(view(bytes), {}, d);
  ASSERT_TRUE(expected.ok());

  std::vector<std::byte> room;
  std::vector<size_t> asked;
  auto written = convert(view(bytes), {}, d, [&](size_t n) {
    asked.push_back(n);
    room.assign(n + 16, std::byte{0x5a});
    return room.data();
  });
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(asked, std::vector<size_t>{expected->size()});
  EXPECT_EQ(*written, expected->size());
  EXPECT_EQ(d.onnx_bytes, expected->size());
  EXPECT_EQ(0, std::memcmp(room.data(), expected->data(), expected->size()));
  EXPECT_EQ(room[expected->size()], std::byte{0x5a});  // nothing written past the model

  auto refused = convert(view(bytes), {}, d, [](size_t) -> std::byte* { return nullptr; });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceLimit);
  EXPECT_THAT(refused.error().message, HasSubstr(std::to_string(expected->size())));
}

TEST(Convert, DiagnosticsJsonHasTheSections) {
  auto bytes = read_file(op_model("mini_mobilenet"));
  Diagnostics d;
  convert_ok(bytes, 13, &d);
  auto j = nlohmann::json::parse(d.to_json());
  for (const char* key : {"source_ops", "emitted_nodes", "inserted", "warnings", "unsupported",
                          "timings", "io_layouts"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["timings"].contains("total_ms"));
  EXPECT_GT(d.source_ops.size(), 3u);
}

TEST(Convert, FlattenIntoFullyConnectedPermutesWeightsInsteadOfTransposing) {
  auto bytes = read_file(op_model("reshape_flatten_fc"));
  Diagnostics d;
  onnx::ModelProto m = convert_ok(bytes, 13, &d);
  EXPECT_EQ(op_counts(m).count("Transpose"), 0u);
  EXPECT_TRUE(d.inserted.empty());
}

// Time-distributed 2-D convolutions ([N, T, H, W, C] reshaped to [N*T, H, W,
// C] and back around the convs, a MEAN over time, a residual ADD in 5-D):
// no Transpose, the clip arriving as [N, T, C, H, W]. With the interface kept:
// one into the first conv and one out; the residual model's ADD of the input
// kept in TFLite order takes one more.
TEST(Convert, TimeDistributedConvolutionsNeedNoTranspose) {
  for (const auto& [name, kept_io] :
       {std::pair{"layout_time_distributed_conv", 2}, {"layout_time_distributed_residual", 3}}) {
    SCOPED_TRACE(name);
    auto bytes = read_file(op_model(name));
    for (int opset : {13, 17}) EXPECT_EQ(op_counts(convert_ok(bytes, opset))["Transpose"], 0);
    EXPECT_EQ(op_counts(convert_ok(bytes, keeping_io_layout()))["Transpose"], kept_io);
  }
}

TEST(Convert, KeepIoLayoutAddsOneTransposePerAffectedTensor) {
  auto bytes = read_file(op_model("mini_mobilenet"));
  Diagnostics d;
  onnx::ModelProto m = convert_ok(bytes, keeping_io_layout(), &d);
  EXPECT_EQ(op_counts(m)["Transpose"], 1);  // the image input; the logits are rank 2
  for (const auto& l : d.io_layouts) EXPECT_TRUE(l.perm.empty()) << l.tensor;
}

TEST(Convert, ExplicitLayoutThatContradictsAConvIsAnError) {
  auto bytes = read_file(op_model("conv2d_same_s1"));
  auto info = inspect(view(bytes));
  ConvertOptions o;
  o.layout.explicit_layouts.push_back({info->tensors[info->inputs[0]].name, "NHWC", "NWHC"});
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_THAT(r.error().message, HasSubstr("explicit layout"));
  EXPECT_THAT(r.error().message, HasSubstr("CONV_2D"));
}

TEST(Convert, UnknownTensorInALayoutOptionIsAnError) {
  auto bytes = read_file(op_model("abs"));
  ConvertOptions o;
  o.layout.io_layouts.push_back({"no_such_tensor", "NHWC", "NCHW"});
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_THAT(r.error().message, HasSubstr("no_such_tensor"));
}

TEST(Convert, MobileNetsHaveNoTransposesAndNoExtraNodes) {
  for (const char* name : {"tflite2onnx/mobilenet_v1_0.25_128.tflite",
                           "tflite-support/mobilenet_v1_0.25_224_1_default_1.tflite"}) {
    std::string path = corpus_dir() + "/" + name;
    if (!std::filesystem::exists(path))
      GTEST_SKIP() << path << " not found (LITE2ONNX_TEST_MODELS)";
    auto bytes = read_file(path);
    Diagnostics d;
    onnx::ModelProto m = convert_ok(bytes, 13, &d);
    auto counts = op_counts(m);
    EXPECT_EQ(counts.count("Transpose"), 0u) << name;
    int tflite_ops = 0;
    for (const auto& [op, n] : d.source_ops) tflite_ops += n;
    // Fused RELU6 activations become Clip nodes; nothing else is added.
    EXPECT_EQ(m.graph().node_size(), tflite_ops + counts["Clip"]) << name;
    EXPECT_TRUE(d.inserted.empty()) << name;
  }
}

TEST(Convert, QuantizedMobileNetsKeepIntegerWeightsAndNoTransposes) {
  for (const char* name : {"tflite2onnx/mobilenet_v1_0.25_128_quant.tflite",
                           "coral-test_data/mobilenet_v2_1.0_224_quant.tflite",
                           "coral-test_data/tf2_mobilenet_v2_1.0_224_ptq.tflite",
                           "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite"}) {
    std::string path = corpus_dir() + "/" + name;
    if (!std::filesystem::exists(path))
      GTEST_SKIP() << path << " not found (LITE2ONNX_TEST_MODELS)";
    auto bytes = read_file(path);
    ConvertOptions o;
    Diagnostics d;
    auto r = convert(view(bytes), o, d);
    ASSERT_TRUE(r.ok()) << name << ": " << r.error().message;
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(*r));
    EXPECT_EQ(op_counts(m).count("Transpose"), 0u) << name;
    EXPECT_LE(static_cast<double>(r->size()), 1.10 * static_cast<double>(bytes.size())) << name;
    // Every Conv/Gemm weight is an integer initializer read through DequantizeLinear.
    std::map<std::string, int> init_type;
    for (const auto& t : m.graph().initializer()) init_type[t.name()] = t.data_type();
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : m.graph().node())
      for (const auto& out : n.output()) producer[out] = &n;
    int weights = 0;
    for (const auto& n : m.graph().node()) {
      if (n.op_type() != "Conv" && n.op_type() != "Gemm") continue;
      const onnx::NodeProto* dq = producer[n.input(1)];
      ASSERT_NE(dq, nullptr) << name << ": " << n.name() << " reads a float initializer";
      EXPECT_EQ(dq->op_type(), "DequantizeLinear") << name << ": " << n.name();
      int type = init_type[dq->input(0)];
      EXPECT_TRUE(type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8)
          << name << ": " << n.name();
      ++weights;
    }
    EXPECT_GT(weights, 20) << name;
    // Float initializers are Q/DQ scales, or tiny (Clip bounds): no float weights.
    std::set<std::string> scales;
    for (const auto& n : m.graph().node())
      if (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear")
        scales.insert(n.input(1));
    for (const auto& t : m.graph().initializer()) {
      if (t.data_type() == onnx::TensorProto::FLOAT && !scales.count(t.name())) {
        EXPECT_LE(t.raw_data().size(), 4096u) << name << ": " << t.name();
      }
    }
  }
}

TEST(Convert, DequantizeModeGivesPureFloatModels) {
  for (const char* name : {"tflite2onnx/mobilenet_v1_0.25_128_quant.tflite",
                           "coral-test_data/tf2_mobilenet_v2_1.0_224_ptq.tflite",
                           "tflite-micro/seanet_conv0.tflite"}) {
    std::string path = corpus_dir() + "/" + name;
    if (!std::filesystem::exists(path))
      GTEST_SKIP() << path << " not found (LITE2ONNX_TEST_MODELS)";
    auto bytes = read_file(path);
    ConvertOptions o;
    o.quantization = QuantizationMode::kDequantize;
    Diagnostics d;
    auto r = convert(view(bytes), o, d);
    ASSERT_TRUE(r.ok()) << name << ": " << r.error().message;
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(*r));
    auto counts = op_counts(m);
    EXPECT_EQ(counts.count("QuantizeLinear"), 0u) << name;
    EXPECT_EQ(counts.count("DequantizeLinear"), 0u) << name;
    for (const auto& list : {m.graph().input(), m.graph().output()})
      for (const auto& vi : list)
        EXPECT_EQ(vi.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT) << name;
    for (const auto& t : m.graph().initializer())
      EXPECT_TRUE(t.data_type() == onnx::TensorProto::FLOAT ||
                  t.data_type() == onnx::TensorProto::INT64)
          << name << ": " << t.name();
    EXPECT_EQ(d.quantization.mode, "dequantize");
  }
  // int16 (16x8) converts in this mode, with a warning saying what differs.
  Diagnostics d;
  ConvertOptions o;
  o.quantization = QuantizationMode::kDequantize;
  std::string path = corpus_dir() + "/tflite-micro/seanet_conv0.tflite";
  auto r = convert(view(read_file(path)), o, d);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_THAT(d.warnings.back(), HasSubstr("int16"));
}

TEST(Convert, MobileNetKeepingItsInterfaceHasOneTranspose) {
  std::string path = corpus_dir() + "/tflite2onnx/mobilenet_v1_0.25_128.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found (LITE2ONNX_TEST_MODELS)";
  auto bytes = read_file(path);
  ConvertOptions o;
  o.layout.keep_io_layout = true;
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  EXPECT_EQ(op_counts(m)["Transpose"], 1);
  const auto& dims = m.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[3].dim_value(), 3);  // NHWC: channels last
}

TEST(Convert, UnsupportedOpsAreAllListed) {
  // One unsupported op: an SVDF whose state TFLite's kernel refuses (the
  // earlier examples, yamnet_model_without_metadata and an LSTM, convert now).
  std::string path = corpus_dir() + "/LiteRT/svdf_quantized.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto bytes = read_file(path);
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  std::set<std::string> ops;
  for (const auto& u : r.error().unsupported) ops.insert(u.op);
  EXPECT_TRUE(ops.count("SVDF")) << r.error().message;
  EXPECT_EQ(r.error().unsupported.size(), 1u);
  EXPECT_EQ(r.error().unsupported[0].reason_code, "shape");
  EXPECT_THAT(r.error().message, HasSubstr("SVDF"));
  EXPECT_THAT(r.error().message, HasSubstr("state 'activation_state4' has shape [1, 9]"));
}

// ONNX's main graph declares each input's type and shape: an input of unknown
// rank (no shape, has_rank false) that no op reads is reported by name.
TEST(Convert, GraphInputOfUnknownRankIsUnsupportedNamingIt) {
  auto bytes = testing::tflite_from_json(R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 101, "builtin_code": "ABS"}],
    "subgraphs": [{
      "tensors": [
        {"shape": [2], "name": "x"},
        {"name": "anything"},
        {"shape": [2], "name": "y"}],
      "inputs": [0, 1], "outputs": [2],
      "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [2]}]
    }],
    "buffers": [{}]
  })");
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(r.error().tensor, "anything");
  EXPECT_THAT(r.error().message, HasSubstr("graph input 'anything' has unknown rank"));
}

// STRIDED_SLICE with offset: the Slice bounds are the ones TFLite resolves
// (end = resolved begin + end); on a dimension of unknown size that cannot be
// written, and the op is reported.
std::vector<std::byte> offset_slice_model(const std::string& input_shape_signature) {
  return testing::tflite_from_json(R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 45, "builtin_code": "STRIDED_SLICE"}],
    "subgraphs": [{
      "tensors": [
        {"shape": [4, 6], "shape_signature": )" +
                                   input_shape_signature + R"(, "name": "x"},
        {"shape": [2], "type": "INT32", "buffer": 1, "name": "begin"},
        {"shape": [2], "type": "INT32", "buffer": 2, "name": "end"},
        {"shape": [2], "type": "INT32", "buffer": 3, "name": "strides"},
        {"shape": [2, 2], "name": "y"}],
      "inputs": [0], "outputs": [4],
      "operators": [{"opcode_index": 0, "inputs": [0, 1, 2, 3], "outputs": [4],
                     "builtin_options_type": "StridedSliceOptions",
                     "builtin_options": {"offset": true}}]
    }],
    "buffers": [{}, {"data": )" + testing::i32_bytes({-3, -20}) +
                                   R"(},
                {"data": )" + testing::i32_bytes({2, 2}) +
                                   R"(},
                {"data": )" + testing::i32_bytes({1, 1}) +
                                   R"(}]
  })");
}

TEST(Convert, StridedSliceOffsetWritesTheResolvedBounds) {
  onnx::ModelProto m = convert_ok(offset_slice_model("[4, 6]"));
  const onnx::NodeProto* slice = nullptr;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Slice") slice = &n;
  ASSERT_NE(slice, nullptr);
  auto values = [&](int i) {
    const auto& t = *std::find_if(m.graph().initializer().begin(), m.graph().initializer().end(),
                                  [&](const auto& x) { return x.name() == slice->input(i); });
    std::vector<int64_t> v(static_cast<size_t>(t.raw_data().size() / 8));
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    return v;
  };
  EXPECT_EQ(values(1), (std::vector<int64_t>{1, 0}));  // starts: -3 + 4, -20 clamped to 0
  EXPECT_EQ(values(2), (std::vector<int64_t>{3, 2}));  // ends: start + 2
}

TEST(Convert, StridedSliceOffsetOnADynamicDimensionIsUnsupported) {
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(offset_slice_model("[-1, 6]")), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  ASSERT_EQ(r.error().unsupported.size(), 1u);
  EXPECT_THAT(r.error().unsupported[0].reason, HasSubstr("offset slicing of dimension 0"));
  EXPECT_EQ(r.error().unsupported[0].reason_code, "shape");
}

// The reduction attribute of the ScatterND node, "" when it has none.
std::string scatter_reduction(const onnx::ModelProto& m) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == "ScatterND")
      for (const auto& a : n.attribute())
        if (a.name() == "reduction") return a.s();
  return "";
}

TEST(Convert, ScatterNdSumsRepeatedIndicesFromOpset16) {
  // Distinct constant indices need no reduction: any opset.
  onnx::ModelProto distinct = convert_ok(read_file(op_model("data_scatter_nd")), 13);
  EXPECT_EQ(op_counts(distinct)["ScatterND"], 1);
  EXPECT_EQ(scatter_reduction(distinct), "");
  for (const char* name : {"data_scatter_nd_duplicates", "data_scatter_nd_runtime_indices_i32"}) {
    SCOPED_TRACE(name);
    auto bytes = read_file(op_model(name));
    EXPECT_EQ(scatter_reduction(convert_ok(bytes, 16)), "add");
    ConvertOptions o;
    o.opset = 15;
    Diagnostics d;
    auto r = convert(view(bytes), o, d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
    ASSERT_EQ(r.error().unsupported.size(), 1u);
    EXPECT_EQ(r.error().unsupported[0].op, "SCATTER_ND");
    EXPECT_THAT(r.error().unsupported[0].reason, HasSubstr("opset 16"));
    EXPECT_EQ(r.error().unsupported[0].reason_code, "opset");
  }
}

TEST(Convert, DynamicDimensionsStaySymbolic) {
  // Batch is dynamic (shape_signature -1): a 1x1 conv then a reshape to [-1, 20].
  std::string w = testing::f32_bytes(std::vector<float>(2 * 3, 0.5f));
  std::string b = testing::f32_bytes({0.f, 1.f});
  auto bytes = testing::tflite_from_json(R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 3, "builtin_code": "CONV_2D"},
                       {"deprecated_builtin_code": 22, "builtin_code": "RESHAPE"}],
    "subgraphs": [{
      "tensors": [
        {"shape": [1, 2, 5, 3], "shape_signature": [-1, 2, 5, 3], "name": "x"},
        {"shape": [2, 1, 1, 3], "buffer": 1, "name": "w"},
        {"shape": [2], "buffer": 2, "name": "b"},
        {"shape": [1, 2, 5, 2], "shape_signature": [-1, 2, 5, 2], "name": "y"},
        {"shape": [1, 20], "shape_signature": [-1, 20], "name": "flat"}],
      "inputs": [0], "outputs": [4],
      "operators": [
        {"opcode_index": 0, "inputs": [0, 1, 2], "outputs": [3],
         "builtin_options_type": "Conv2DOptions",
         "builtin_options": {"padding": "VALID", "stride_w": 1, "stride_h": 1}},
        {"opcode_index": 1, "inputs": [3], "outputs": [4],
         "builtin_options_type": "ReshapeOptions", "builtin_options": {"new_shape": [-1, 20]}}]
    }],
    "buffers": [{}, {"data": )" + w + R"(}, {"data": )" +
                                         b + R"(}]
  })");
  onnx::ModelProto m = convert_ok(bytes);
  const auto& in = m.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(in.dim_size(), 4);
  EXPECT_FALSE(in.dim(0).has_dim_value());
  EXPECT_FALSE(in.dim(0).dim_param().empty());
  EXPECT_EQ(in.dim(1).dim_value(), 3);  // NCHW
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(out.dim_size(), 2);
  EXPECT_FALSE(out.dim(0).has_dim_value());
  EXPECT_EQ(out.dim(1).dim_value(), 20);
}

// A 0 in RESHAPE's shape is a dimension of size 0 (TFLite), but copies the
// input's dimension in ONNX's Reshape unless allowzero is set (opset 14); before
// opset 14 the 0 becomes -1, which ONNX infers as 0 for an empty input.
std::vector<std::byte> runtime_reshape_model() {
  return testing::tflite_from_json(R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 22, "builtin_code": "RESHAPE"}],
    "subgraphs": [{
      "tensors": [
        {"shape": [0, 4], "shape_signature": [-1, 4], "name": "x"},
        {"shape": [3], "type": "INT32", "name": "shape"},
        {"shape": [1, 4, 0], "shape_signature": [1, 4, -1], "name": "y"}],
      "inputs": [0, 1], "outputs": [2],
      "operators": [{"opcode_index": 0, "inputs": [0, 1], "outputs": [2]}]
    }],
    "buffers": [{}]
  })");
}

const onnx::NodeProto* find_node(const onnx::ModelProto& m, const std::string& op_type) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == op_type) return &n;
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t missing) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return missing;
}

TEST(Convert, ReshapeToARuntimeShapeKeepsZeroDimensions) {
  auto bytes = runtime_reshape_model();
  onnx::ModelProto m17 = convert_ok(bytes, 17);
  const onnx::NodeProto* r17 = find_node(m17, "Reshape");
  ASSERT_NE(r17, nullptr);
  EXPECT_EQ(int_attr(*r17, "allowzero", 0), 1);
  EXPECT_EQ(find_node(m17, "Where"), nullptr);
  onnx::ModelProto m13 = convert_ok(bytes, 13);
  const onnx::NodeProto* r13 = find_node(m13, "Reshape");
  const onnx::NodeProto* where = find_node(m13, "Where");
  ASSERT_NE(r13, nullptr);
  ASSERT_NE(where, nullptr);
  EXPECT_EQ(int_attr(*r13, "allowzero", -7), -7);  // opset 13 has no allowzero
  EXPECT_EQ(r13->input(1), where->output(0));      // the shape has 0 -> -1
}

TEST(Convert, ReshapeToAConstantShapeWithAZero) {
  std::string shape = testing::i32_bytes({2, 0});
  auto bytes = testing::tflite_from_json(R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 22, "builtin_code": "RESHAPE"}],
    "subgraphs": [{
      "tensors": [
        {"shape": [0, 3], "name": "x"},
        {"shape": [2], "type": "INT32", "buffer": 1, "name": "shape"},
        {"shape": [2, 0], "name": "y"}],
      "inputs": [0], "outputs": [2],
      "operators": [{"opcode_index": 0, "inputs": [0, 1], "outputs": [2]}]
    }],
    "buffers": [{}, {"data": )" + shape + R"(}]
  })");
  auto shape_values = [](const onnx::ModelProto& m, const onnx::NodeProto& r) {
    for (const auto& t : m.graph().initializer())
      if (t.name() == r.input(1)) {
        std::vector<int64_t> v(static_cast<size_t>(t.dims(0)));
        std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(int64_t));
        return v;
      }
    return std::vector<int64_t>{};
  };
  onnx::ModelProto m13 = convert_ok(bytes, 13);
  const onnx::NodeProto* r13 = find_node(m13, "Reshape");
  ASSERT_NE(r13, nullptr);
  EXPECT_EQ(shape_values(m13, *r13), (std::vector<int64_t>{2, -1}));
  onnx::ModelProto m17 = convert_ok(bytes, 17);
  const onnx::NodeProto* r17 = find_node(m17, "Reshape");
  ASSERT_NE(r17, nullptr);
  EXPECT_EQ(int_attr(*r17, "allowzero", 0), 1);
  EXPECT_EQ(shape_values(m17, *r17), (std::vector<int64_t>{2, 0}));
}

// Per-op data in the table agrees with itself: every op that propagates
// its input's layout unchanged (and SPLIT) says so (layout hints walk back through it;
// PAD's too, whose paddings may be computed at run time: propagate_data_input),
// and the ops constant folding evaluates are the pure shape-arithmetic ones.
TEST(OpTable, EntriesAreConsistent) {
  for (const auto& [code, e] : ops::all_entries()) {
    SCOPED_TRACE(ir::builtin_name(code));
    // SPLIT keeps its data input's layout too (axis rewritten).
    const bool split = code == ir::builtin::kSplit || code == ir::builtin::kSplitV;
    const bool pad =
        code == ir::builtin::kPad || code == ir::builtin::kPadv2 || code == ir::builtin::kMirrorPad;
    EXPECT_EQ(e->layout.keeps_layout, e->layout.propagate == ops::propagate_same || split || pad);
    if (pad) {
      EXPECT_EQ(e->layout.propagate, ops::propagate_data_input);
    }
    if (e->layout.keeps_layout) {
      EXPECT_EQ(e->layout.kind, ops::LayoutClass::kAttribute);
    }
    if (const auto& bias = e->quantization.bias) {
      EXPECT_NE(bias->bias, bias->data);
      EXPECT_NE(bias->bias, bias->weight);
    }
    if (e->evaluable()) {
      EXPECT_TRUE(e->supported());
    }
  }
  EXPECT_TRUE(ops::lookup(ir::builtin::kStridedSlice).evaluate.element_sources);
  EXPECT_EQ(ops::lookup(ir::builtin::kAdd).evaluate.arithmetic, ops::Arithmetic::kAdd);
  EXPECT_EQ(ops::lookup(ir::builtin::kDiv).evaluate.arithmetic, ops::Arithmetic::kNone);
  EXPECT_TRUE(ops::lookup(ir::builtin::kShape).evaluate.fold);
  EXPECT_TRUE(ops::lookup(ir::builtin::kConv2d).quantization.bias);
}

TEST(Convert, SupportMatrixComesFromTheRegistry) {
  std::map<std::string, OpSupport> by_name;
  for (const auto& s : support_matrix()) by_name[s.op] = s;
  for (const char* op : {"ABS",
                         "ADD",
                         "AVERAGE_POOL_2D",
                         "CONCATENATION",
                         "CONV_2D",
                         "DEPTHWISE_CONV_2D",
                         "DEQUANTIZE",
                         "DIV",
                         "FULLY_CONNECTED",
                         "HARD_SWISH",
                         "LEAKY_RELU",
                         "LOGISTIC",
                         "MAX_POOL_2D",
                         "MEAN",
                         "MIRROR_PAD",
                         "MUL",
                         "PAD",
                         "PADV2",
                         "POW",
                         "PRELU",
                         "RELU",
                         "RELU_N1_TO_1",
                         "RELU6",
                         "RESHAPE",
                         "RESIZE_BILINEAR",
                         "RESIZE_NEAREST_NEIGHBOR",
                         "RSQRT",
                         "SOFTMAX",
                         "SPLIT",
                         "SPLIT_V",
                         "SQRT",
                         "SQUARED_DIFFERENCE",
                         "SQUEEZE",
                         "STRIDED_SLICE",
                         "SUB",
                         "TANH",
                         "TRANSPOSE",
                         "TRANSPOSE_CONV"})
    EXPECT_TRUE(by_name[op].supported) << op;
  EXPECT_EQ(by_name["CONV_2D"].layout_class, "Implicit");
  EXPECT_EQ(by_name["ADD"].layout_class, "Transparent");
  EXPECT_EQ(by_name["RESHAPE"].layout_class, "Attribute");
  EXPECT_EQ(by_name["FULLY_CONNECTED"].layout_class, "Terminate");
  for (const char* op :
       {"LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "RNN",
        "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN", "SVDF"})
    EXPECT_TRUE(by_name[op].supported) << op;
  EXPECT_FALSE(by_name["LSH_PROJECTION"].supported);
  // The integer forms of --quantization exact, read from the registry.
  for (const char* op :
       {"CONV_2D", "ADD", "SOFTMAX", "AVERAGE_POOL_2D", "RESHAPE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "SVDF", "RNN", "L2_NORMALIZATION"})
    EXPECT_TRUE(by_name[op].exact) << op;
  EXPECT_FALSE(by_name["FLOOR"].exact);
}

}  // namespace
}  // namespace lite2onnx
