// The wire translation (common/translate.h) both ways: every value the core
// reports survives core -> message -> core unchanged, so the client prints
// what a local conversion would.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "common/translate.h"
#include "core/convert.h"

namespace lite2onnx {
namespace {

Diagnostics every_diagnostic_field() {
  Diagnostics d;
  d.opset = 17;
  d.model_bytes = 123456;
  d.onnx_bytes = 654321;
  d.source_ops = {{"CONV_2D", 3}, {"ADD", 1}};
  d.emitted_nodes = {{"Conv", 3}, {"Add", 1}, {"Transpose", 2}};
  d.inserted = {{"x/Transpose", "Transpose", "x", "graph input kept in TFLite order"},
                {"y/Reshape", "Reshape", "y", "unit axes moved"}};
  d.transposes_before_cleanup = 5;
  d.transposes_after_cleanup = 2;
  d.rewritten_initializers = {{"w", "permuted OHWI -> OIHW"}};
  d.io_layouts = {{"x", true, {0, 3, 1, 2}}, {"y", false, {}}};
  d.quantization.mode = "qdq";
  d.quantization.nodes = {{"QuantizeLinear", 4}, {"DequantizeLinear", 9}};
  d.quantization.cancelled_pairs = 3;
  d.quantization.integer_initializers = 7;
  d.quantization.integer_initializer_bytes = 4096;
  d.quantization.quantized_activations = 11;
  d.quantization.int8_activations_as_uint8 = true;
  d.warnings = {"subgraph 1 is not converted", "int16 emulated"};
  d.unsupported = {{4, "LSTM", "no converter", "not_implemented"},
                   {9, "CUSTOM", "custom code 'Foo'", "custom_op"},
                   {2, "FlexAddV2", "custom operator", "select_tf_op", 9}};
  d.timings = {{"read", 0.25}, {"emit", 1.5}};
  d.subgraphs = {"0 main (12 ops)", "1 body (3 ops)"};
  return d;
}

TEST(TranslateRoundTrip, DiagnosticsKeepEveryField) {
  const Diagnostics d = every_diagnostic_field();
  v1::Diagnostics message;
  to_proto(d, &message);
  EXPECT_EQ(from_proto(message).to_json(), d.to_json());
  // And the message itself is stable: translating back and forth again changes nothing.
  v1::Diagnostics again;
  to_proto(from_proto(message), &again);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again, message));
}

TEST(TranslateRoundTrip, DiagnosticsWithoutQuantizationStayWithout) {
  Diagnostics d = every_diagnostic_field();
  d.quantization = {};
  v1::Diagnostics message;
  to_proto(d, &message);
  EXPECT_FALSE(message.has_quantization());
  EXPECT_EQ(from_proto(message).to_json(), d.to_json());
}

TEST(TranslateRoundTrip, InspectKeepsEveryField) {
  ModelInfo info;
  info.version = 3;
  info.description = "MLIR Converted.";
  info.subgraphs = {"0 main (2 ops)"};
  info.tensors = {{0, "x", "INT8", {1, -1, 5, 3}, false, false, false, 1, 0},
                  {1, "w", "INT8", {4, 3, 3, 3}, true, false, true, 4, 0},
                  {2, "state", "FLOAT32", {1, 8}, false, true, false, 0, 0},
                  {3, "y", "INT8", {1, -1, 5, 4}, false, false, false, 1, 3}};
  info.inputs = {0, 2};
  info.outputs = {3};
  info.ops = {{0, "CONV_2D", {0, 1, -1}, {3}, true, "", ""},
              {1, "LSTM", {2}, {2}, false, "no converter", "not_implemented"}};
  info.unsupported = {{1, "LSTM", "no converter", "not_implemented"}};
  info.problems = {"invalid quantization: scale 2 of 'w' is 0"};
  info.signatures = {
      {"serving_default",
       1,
       {{"image", 0, "x", "INT8", {1, -1, 5, 3}}, {"state", 2, "state", "FLOAT32", {}}},
       {{"logits", 3, "y", "INT8", {1, -1, 5, 4}}}},
      {"reset", 0, {}, {{"zeros", 1, "z", "FLOAT32", {8}}}}};
  info.subgraph = 1;
  TfliteMetadata& m = info.metadata;
  m.present = true;
  m.name = "ImageClassifier";
  m.description = "Identifies the object.";
  m.version = "v1";
  m.author = "TensorFlow";
  m.license = "Apache-2.0";
  m.min_parser_version = "1.0.0";
  m.inputs = {{"x",
               "image",
               "Input image.",
               "image",
               {127.5f, 0.5f},
               {127.5f, 2.f},
               {0},
               {255},
               {"vocab.txt"}}};
  m.outputs = {{"y", "probability", "", "feature", {}, {}, {0.f}, {1.f}, {"labels.txt"}},
               {"state", "", "", "", {}, {}, {}, {}, {}}};
  m.associated_files = {{"labels.txt", "TENSOR_AXIS_LABELS", "the classes", "en", true, 11, true,
                         "cat\ndog\nx\n", ""},
                        {"vocab.txt", "VOCABULARY", "", "", true, 2 << 20, false, "",
                         "declares 2097152 bytes, more than the 1 MiB a file may have"},
                        {"extra.bin", "", "", "", true, 3, false, "", "is binary"},
                        {"README.md", "DESCRIPTIONS", "", "", false, 0, false, "", ""}};
  v1::InspectResponse message;
  to_proto(info, &message);
  EXPECT_TRUE(message.has_metadata());
  EXPECT_EQ(message.metadata().inputs(0).mean(1), 0.5f);
  EXPECT_EQ(message.metadata().associated_files(0).content(), "cat\ndog\nx\n");
  EXPECT_EQ(message.signatures(0).inputs(1).alias(), "state");
  EXPECT_EQ(message.signatures(1).outputs(0).shape(0), 8);
  EXPECT_EQ(message.subgraph(), 1);
  EXPECT_EQ(from_proto(message).to_json(), info.to_json());
  EXPECT_EQ(from_proto(message).to_text(), info.to_text());
  v1::InspectResponse again;
  to_proto(from_proto(message), &again);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again, message));
}

TEST(TranslateRoundTrip, InspectWithoutMetadataStaysWithout) {
  ModelInfo info;
  info.version = 3;
  v1::InspectResponse message;
  to_proto(info, &message);
  EXPECT_FALSE(message.has_metadata());
  EXPECT_FALSE(from_proto(message).metadata.present);
  EXPECT_EQ(from_proto(message).to_json(), info.to_json());
}

TEST(TranslateRoundTrip, OperatorMatrixKeepsEveryRow) {
  const std::vector<OpSupport> matrix = support_matrix();
  const std::vector<OpSupport> back = from_proto(to_proto(matrix));
  size_t j = 0;
  for (const OpSupport& s : matrix) {
    if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;  // not sent: unused codes
    ASSERT_LT(j, back.size());
    const OpSupport& b = back[j++];
    SCOPED_TRACE(s.op);
    EXPECT_EQ(b.code, s.code);
    EXPECT_EQ(b.op, s.op);
    EXPECT_EQ(b.supported, s.supported);
    EXPECT_EQ(b.layout_class, s.layout_class);
    EXPECT_EQ(b.onnx, s.onnx);
    EXPECT_EQ(b.notes, s.notes);
    EXPECT_EQ(b.dtypes, s.dtypes);
    EXPECT_EQ(b.quantized, s.quantized);
    EXPECT_EQ(b.exact, s.exact);
  }
  EXPECT_EQ(j, back.size());
}

TEST(TranslateRoundTrip, ErrorsKeepTheirReasonAndOperators) {
  Error e = make_error(ErrorCode::kUnsupported, "2 operators cannot be converted");
  e.op_index = 4;
  e.tensor = "x";
  e.unsupported = {{4, "LSTM", "no converter", "not_implemented"},
                   {9, "CUSTOM", "custom code 'Foo'", "custom_op"},
                   {0, "FlexAddV2", "custom operator", "select_tf_op", 9}};
  const v1::ConversionError m = to_proto(e);
  EXPECT_EQ(m.reason(), v1::ConversionError::REASON_UNSUPPORTED);
  EXPECT_EQ(m.message(), e.message);
  EXPECT_EQ(m.op_index(), 4);
  EXPECT_EQ(m.tensor(), "x");
  const auto ops = from_proto(m.unsupported());
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].op_index, 9);
  EXPECT_EQ(ops[1].op, "CUSTOM");
  EXPECT_EQ(ops[1].reason, "custom code 'Foo'");
  EXPECT_EQ(ops[1].reason_code, "custom_op");
  EXPECT_EQ(ops[1].subgraph, -1);  // of the subgraph converted
  EXPECT_EQ(ops[2].subgraph, 9);
}

}  // namespace
}  // namespace lite2onnx
