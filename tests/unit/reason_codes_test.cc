// Reason codes: every refusal says why as a code beside its text, each code
// has one name, and the names are documented where clients read them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/ir/builtins.h"
#include "core/preflight.h"
#include "graph_builder.h"

namespace lite2onnx {
namespace {

std::string source_file(const std::string& path) {
  std::ifstream in(std::string(LITE2ONNX_SOURCE_DIR) + "/" + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReasonCodes, EachHasOneNameDocumentedOnEverySurface) {
  const std::string docs = source_file("docs/architecture.md");
  const std::string proto = source_file("proto/lite2onnx/v1/converter.proto");
  const std::string python = source_file("python/lite2onnx/_errors.py");
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(kLastReasonCode); ++i) {
    const std::string name = to_string(static_cast<ReasonCode>(i));
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(name).second) << "two codes share a name";
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos);
    EXPECT_NE(docs.find("`" + name + "`"), std::string::npos) << "docs/architecture.md";
    EXPECT_NE(proto.find("\"" + name + "\""), std::string::npos) << "converter.proto";
    EXPECT_NE(python.find("``" + name + "``"), std::string::npos) << "_errors.py";
  }
}

// The preflight's own refusals, one per node: each with its code.
TEST(ReasonCodes, ThePreflightCodesWhatItRefuses) {
  testing::GraphBuilder b;
  auto custom = [&](const std::string& code) {
    ir::NodeId id = b.tflite(ir::builtin::kCustom, {b.input(code + "_in", {2})},
                             {b.tensor(code + "_out", {2})});
    b.g.info(id).op = code;
  };
  custom("Lite2OnnxNoSuchOp");
  custom("FlexAudioSpectrogram");
  custom("edgetpu-custom-op");
  b.tflite(ir::builtin::kHashtable, {}, {b.tensor("table", {})});
  b.tflite(ir::builtin::kAbs, {b.input("text", {2}, ir::DataType::kString)},
           {b.tensor("abs", {2}, ir::DataType::kString)});
  b.tflite(ir::builtin::kAbs, {b.input("x", {2})}, {});
  const std::vector<UnsupportedOp> ops = preflight(b.g);
  std::vector<std::string> codes;
  for (const UnsupportedOp& u : ops) codes.push_back(u.reason_code);
  EXPECT_EQ(codes, (std::vector<std::string>{"custom_op", "select_tf_op", "accelerator_compiled",
                                             "not_implemented", "type", "operands"}));
}

// Text processing (tokenizers, string ops) stays unsupported with what a user
// can do: a custom or select-TF op named as a tokenizer, or any op on string
// tensors.
TEST(ReasonCodes, TextOperatorsSayHowToConvertWithoutThem) {
  testing::GraphBuilder b;
  ir::NodeId id = b.tflite(ir::builtin::kCustom, {b.input("ids", {2}, ir::DataType::kInt32)},
                           {b.tensor("pieces", {2})});
  b.g.info(id).op = "FlexSentencepieceTokenizeOp";
  id = b.tflite(ir::builtin::kCustom, {b.input("s", {2}, ir::DataType::kString)},
                {b.tensor("hashes", {2})});
  b.g.info(id).op = "Normalize";
  b.tflite(ir::builtin::kGather,
           {b.input("words", {3}, ir::DataType::kString), b.input("i", {2}, ir::DataType::kInt32)},
           {b.tensor("picked", {2}, ir::DataType::kString)});
  id = b.tflite(ir::builtin::kCustom, {b.input("a", {2})}, {b.tensor("b", {2})});
  b.g.info(id).op = "FlexMatrixInverse";
  const std::vector<UnsupportedOp> ops = preflight(b.g);
  ASSERT_EQ(ops.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(ops[i].op);
    EXPECT_NE(ops[i].reason.find("convert the model without its text processing"),
              std::string::npos)
        << ops[i].reason;
  }
  EXPECT_EQ(ops[0].reason_code, "select_tf_op");
  EXPECT_EQ(ops[1].reason_code, "custom_op");
  EXPECT_EQ(ops[2].reason_code, "type");
  EXPECT_EQ(ops[3].reason_code, "select_tf_op");
  EXPECT_THAT(ops[3].reason, ::testing::HasSubstr("TensorFlow op 'MatrixInverse'"));
}

}  // namespace
}  // namespace lite2onnx
