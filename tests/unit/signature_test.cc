// SignatureDefs: which subgraph a conversion reads (--signature KEY; by
// default the first signature's, subgraph 0 without any), the errors for a
// key the model lacks and for signatures naming what does not exist, the
// aliases as TFLite keys them, --io-names signature, the lite2onnx.signature
// metadata, and inspect's list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/ops/registry.h"
#include "core/tflite/reader.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::op_model;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

// Two subgraphs: 0 "main" ABS of a [2,3] input, 1 "twice" ADD of its [4]
// input to itself; `signatures` is the JSON of the signature_defs list.
Bytes two_subgraphs(const std::string& signatures) {
  return tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 101, "builtin_code": "ABS" },
                        { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "x", "shape": [2, 3], "type": "FLOAT32" },
                     { "name": "y", "shape": [2, 3], "type": "FLOAT32" } ],
        "inputs": [0], "outputs": [1],
        "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1] } ] },
      { "name": "twice",
        "tensors": [ { "name": "a", "shape": [4], "type": "FLOAT32" },
                     { "name": "b", "shape": [4], "shape_signature": [-1], "type": "FLOAT32" } ],
        "inputs": [0], "outputs": [1],
        "operators": [ { "opcode_index": 1, "inputs": [0, 0], "outputs": [1],
                         "builtin_options_type": "AddOptions", "builtin_options": {} } ] } ],
    "buffers": [ {} ],
    "signature_defs": )" + signatures +
                          " }");
}

const char* kTwoSignatures = R"([
    { "signature_key": "double", "subgraph_index": 1,
      "inputs": [ { "name": "value", "tensor_index": 0 } ],
      "outputs": [ { "name": "doubled", "tensor_index": 1 } ] },
    { "signature_key": "magnitude", "subgraph_index": 0,
      "inputs": [ { "name": "x", "tensor_index": 0 } ],
      "outputs": [ { "name": "abs", "tensor_index": 1 } ] } ])";

Result<tflite_reader::ReadModel> read(const Bytes& bytes, std::string_view key = {}) {
  return tflite_reader::read(view(bytes), Limits{}, ops::read_options, key);
}

onnx::ModelProto converted(const Bytes& bytes, const ConvertOptions& options,
                           Diagnostics* diag = nullptr) {
  Diagnostics d;
  auto r = convert(view(bytes), options, d);
  if (diag) *diag = d;
  onnx::ModelProto m;
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return m;
  }
  EXPECT_TRUE(m.ParseFromString(*r));
  return m;
}

std::map<std::string, std::string> metadata(const onnx::ModelProto& m) {
  std::map<std::string, std::string> out;
  for (const auto& p : m.metadata_props()) out[p.key()] = p.value();
  return out;
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.name());
  return out;
}

// ---- which subgraph ---------------------------------------------------------------

TEST(Signatures, TheFirstSignatureChoosesTheSubgraphByDefault) {
  Bytes bytes = two_subgraphs(kTwoSignatures);
  auto model = read(bytes);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->signature, 0);
  EXPECT_EQ(model->subgraph, 1);
  EXPECT_EQ(model->graph.name, "twice");
  ASSERT_EQ(model->graph.tensor_count(), 2u);
  EXPECT_EQ(model->graph.tensor(0).name, "a");
  ASSERT_EQ(model->signatures.size(), 2u);
  EXPECT_EQ(model->signatures[1].key, "magnitude");
  EXPECT_EQ(model->signatures[1].subgraph, 0);
  // What the signature's subgraph says of its tensors, the other subgraph's too.
  ASSERT_EQ(model->signatures[0].outputs.size(), 1u);
  const auto& doubled = model->signatures[0].outputs[0];
  EXPECT_EQ(doubled.alias, "doubled");
  EXPECT_EQ(doubled.tensor, 1);
  EXPECT_EQ(doubled.name, "b");
  EXPECT_EQ(doubled.dtype, ir::DataType::kFloat32);
  EXPECT_EQ(doubled.shape, (ir::Shape{-1}));
  EXPECT_EQ(model->signatures[1].inputs[0].shape, (ir::Shape{2, 3}));

  Diagnostics d;
  onnx::ModelProto m = converted(bytes, {}, &d);
  EXPECT_EQ(m.graph().node(0).op_type(), "Add");
  EXPECT_THAT(d.subgraphs, ElementsAre("0 'main' (1 ops, not converted)",
                                       "1 'twice' (1 ops, converted (signature 'double'))"));
  EXPECT_THAT(d.warnings,
              ::testing::Contains(
                  "model has 2 subgraphs; only subgraph 1 (signature 'double') is converted"));
}

TEST(Signatures, AKeyChoosesItsSignaturesSubgraph) {
  Bytes bytes = two_subgraphs(kTwoSignatures);
  auto model = read(bytes, "magnitude");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->signature, 1);
  EXPECT_EQ(model->subgraph, 0);
  EXPECT_EQ(model->graph.name, "main");
  ConvertOptions o;
  o.signature = "magnitude";
  onnx::ModelProto m = converted(bytes, o);
  EXPECT_EQ(m.graph().node(0).op_type(), "Abs");
  EXPECT_THAT(names(m.graph().input()), ElementsAre("x"));
  // The options say which was asked for; lite2onnx.signature which was converted.
  EXPECT_THAT(metadata(m)["lite2onnx.options"], HasSubstr(" signature=magnitude io_names=tensor"));
}

TEST(Signatures, WithoutSignaturesSubgraph0IsRead) {
  Bytes bytes = read_file(op_model("abs"));
  auto model = read(bytes);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->signature, -1);
  EXPECT_EQ(model->subgraph, 0);
  EXPECT_TRUE(model->signatures.empty());
  onnx::ModelProto m = converted(bytes, {});
  EXPECT_EQ(metadata(m).count("lite2onnx.signature"), 0u);
  EXPECT_THAT(metadata(m)["lite2onnx.options"], HasSubstr(" signature= io_names=tensor"));
}

// The op model whose first signature is subgraph 1 converts that one.
TEST(Signatures, OpModelWhoseFirstSignatureIsSubgraph1) {
  Bytes bytes = read_file(op_model("sig_first_in_subgraph_1"));
  onnx::ModelProto m = converted(bytes, {});
  EXPECT_THAT(names(m.graph().input()), ElementsAre("frame", "state"));
  EXPECT_THAT(names(m.graph().output()), ElementsAre("pooled", "next_state"));
  ConvertOptions o;
  o.signature = "reset";
  m = converted(bytes, o);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("x"));
  EXPECT_EQ(m.graph().node(0).op_type(), "Abs");
}

// ---- errors ------------------------------------------------------------------------

TEST(Signatures, AKeyTheModelLacksIsAnInvalidOptionListingItsKeys) {
  ConvertOptions o;
  o.signature = "nope";
  Diagnostics d;
  auto r = convert(view(two_subgraphs(kTwoSignatures)), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_EQ(r.error().message,
            "signature 'nope': the model has no such signature; its signatures are 'double', "
            "'magnitude'");
  r = convert(view(read_file(op_model("abs"))), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_EQ(r.error().message, "signature 'nope': the model has no signatures");
  // Keys match exactly.
  o.signature = "Double";
  EXPECT_EQ(convert(view(two_subgraphs(kTwoSignatures)), o, d).error().code,
            ErrorCode::kInvalidOption);
}

TEST(Signatures, ManyKeysAreListedUpToABound) {
  std::string list = "[";
  for (int i = 0; i < 40; ++i)
    list += std::string(i ? "," : "") + R"({ "signature_key": "k)" + std::to_string(i) +
            R"(", "subgraph_index": 0 })";
  ConvertOptions o;
  o.signature = "nope";
  Diagnostics d;
  auto r = convert(view(two_subgraphs(list + "]")), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("'k0', 'k1', "));
  EXPECT_THAT(r.error().message, HasSubstr("'k15' and 24 more"));
  EXPECT_THAT(r.error().message, ::testing::Not(HasSubstr("k16")));
}

TEST(Signatures, ASubgraphIndexOutOfRangeIsAnInvalidModelNamingTheSignature) {
  // Any signature, not only the one chosen: TFLite's interpreter reads them all.
  Bytes bytes = two_subgraphs(R"([
      { "signature_key": "double", "subgraph_index": 1 },
      { "signature_key": "broken", "subgraph_index": 7 } ])");
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(r.error().message,
            "signature 1 'broken': subgraph index 7 out of range (the model has 2 subgraphs)");
  EXPECT_EQ(inspect(view(bytes)).error().code, ErrorCode::kInvalidModel);
}

TEST(Signatures, ATensorIndexOutOfRangeIsAnInvalidModelNamingTheSignature) {
  // Tensor 2 exists in no subgraph; in subgraph 1 only 0 and 1 do.
  for (const char* list : {R"([ { "signature_key": "double", "subgraph_index": 1,
                                  "inputs": [ { "name": "value", "tensor_index": 2 } ] } ])",
                           R"([ { "signature_key": "magnitude", "subgraph_index": 0 },
                                { "signature_key": "double", "subgraph_index": 1,
                                  "outputs": [ { "name": "value", "tensor_index": 2 } ] } ])"}) {
    Diagnostics d;
    auto r = convert(view(two_subgraphs(list)), {}, d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
    EXPECT_THAT(r.error().message, HasSubstr("'double' "));
    EXPECT_THAT(r.error().message,
                HasSubstr(" 'value': tensor index 2 out of range (subgraph 1 has 2 tensors)"));
  }
}

TEST(Signatures, ASignatureWithoutAKeyIsAnInvalidModel) {
  Diagnostics d;
  auto r = convert(view(two_subgraphs(R"([ { "subgraph_index": 0 } ])")), {}, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(r.error().message, "signature 0 has no key");
}

TEST(Signatures, KeysInMessagesAreBoundedAndPrintable) {
  Bytes bytes = two_subgraphs(R"([ { "signature_key": ")" + std::string(300, 'k') +
                              R"(\n", "subgraph_index": 9 } ])");
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "signature 0 '" + std::string(64, 'k') +
                                   "...': subgraph index 9 out of range (the model has 2 "
                                   "subgraphs)");
}

// ---- aliases -----------------------------------------------------------------------

// As TFLite's interpreter keys them (a std::map): sorted, the last entry of an
// alias wins, entries without a name are left out.
TEST(Signatures, AliasesAreKeyedAsTfliteKeysThem) {
  Bytes bytes = two_subgraphs(R"([ { "signature_key": "s", "subgraph_index": 0,
      "inputs": [ { "name": "z", "tensor_index": 0 }, { "tensor_index": 1 },
                  { "name": "b", "tensor_index": 1 }, { "name": "b", "tensor_index": 0 } ] } ])");
  auto model = read(bytes);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const auto& inputs = model->signatures[0].inputs;
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].alias, "b");
  EXPECT_EQ(inputs[0].tensor, 0);
  EXPECT_EQ(inputs[1].alias, "z");
}

TEST(Signatures, MetadataNamesTheKeyAndTheAliases) {
  onnx::ModelProto m = converted(read_file(op_model("sig_first_in_subgraph_1")), {});
  EXPECT_EQ(metadata(m)["lite2onnx.signature"],
            R"({"key":"step","subgraph":1,"inputs":{"h":"state","x":"frame"},)"
            R"("outputs":{"h_next":"next_state","y":"pooled"}})");
  // Beside the other interface entry, before the provenance.
  ASSERT_GE(m.metadata_props_size(), 3);
  EXPECT_EQ(m.metadata_props(0).key(), "lite2onnx.io_layouts");
  EXPECT_EQ(m.metadata_props(1).key(), "lite2onnx.signature");
  EXPECT_EQ(m.metadata_props(2).key(), "lite2onnx.source_sha256");
  // The aliases map to the TFLite names whatever the ONNX names are.
  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  EXPECT_EQ(
      metadata(converted(read_file(op_model("sig_first_in_subgraph_1")), o))["lite2onnx.signature"],
      metadata(m)["lite2onnx.signature"]);
}

// ---- --io-names signature ----------------------------------------------------------

TEST(Signatures, IoNamesSignatureNamesTheInterfaceAfterTheAliases) {
  Bytes bytes = read_file(op_model("sig_swapped_aliases"));
  onnx::ModelProto plain = converted(bytes, {});
  EXPECT_THAT(names(plain.graph().input()), ElementsAre("input_a", "input_b"));
  EXPECT_THAT(names(plain.graph().output()), ElementsAre("output"));

  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  Diagnostics d;
  onnx::ModelProto m = converted(bytes, o, &d);
  // Tensor input_a is the alias input_b and the other way round.
  EXPECT_THAT(names(m.graph().input()), ElementsAre("input_b", "input_a"));
  EXPECT_THAT(names(m.graph().output()), ElementsAre("difference"));
  // SUB(input_a, input_b): its first operand is the input now called input_b.
  const onnx::NodeProto& sub = m.graph().node(0);
  EXPECT_EQ(sub.op_type(), "Sub");
  EXPECT_THAT(sub.input(), ElementsAre("input_b", "input_a"));
  // The tensor inside that was called "difference" is renamed; names stay unique.
  EXPECT_NE(sub.output(0), "difference");
  EXPECT_EQ(m.graph().node(1).output(0), "difference");
  EXPECT_TRUE(d.warnings.empty()) << d.warnings[0];
  EXPECT_EQ(d.io_layouts.at(0).tensor, "input_b");
}

TEST(Signatures, LayoutOptionsNameATensorByItsAliasOrItsTfliteName) {
  Bytes bytes = read_file(op_model("sig_conv_fc"));  // classify: image -> scores
  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  for (const char* name : {"image", "input"}) {
    SCOPED_TRACE(name);
    o.layout.io_layouts = {{name, "NHWC", "NHWC"}};
    Diagnostics d;
    onnx::ModelProto m = converted(bytes, o, &d);
    EXPECT_THAT(names(m.graph().input()), ElementsAre("image"));
    ASSERT_EQ(d.io_layouts.size(), 2u);
    EXPECT_EQ(d.io_layouts[0].tensor, "image");
    EXPECT_TRUE(d.io_layouts[0].perm.empty());  // kept in TFLite order, as asked
  }
  o.layout.io_layouts = {{"nothing", "NHWC", "NHWC"}};
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_THAT(r.error().message, HasSubstr("no tensor named 'nothing'"));
}

TEST(Signatures, AliasesThatClashGetUniqueNamesAndAWarning) {
  // Input and output both called "v"; a second alias of the input, "w".
  Bytes bytes = two_subgraphs(R"([ { "signature_key": "s", "subgraph_index": 0,
      "inputs": [ { "name": "v", "tensor_index": 0 }, { "name": "w", "tensor_index": 0 } ],
      "outputs": [ { "name": "v", "tensor_index": 1 } ] } ])");
  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  Diagnostics d;
  onnx::ModelProto m = converted(bytes, o, &d);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("v"));
  EXPECT_THAT(names(m.graph().output()), ElementsAre("v__1"));
  EXPECT_THAT(d.warnings, ::testing::Contains(HasSubstr("'v' and 'w' name tensor 'x'")));
  EXPECT_THAT(d.warnings,
              ::testing::Contains(HasSubstr("the name 'v' is taken by another graph input or "
                                            "output; tensor 'y' is called 'v__1'")));
}

TEST(Signatures, AnAliasOfATensorThatIsNoGraphInputIsAWarning) {
  // "inner" names the output tensor as an input.
  Bytes bytes = two_subgraphs(R"([ { "signature_key": "s", "subgraph_index": 0,
      "inputs": [ { "name": "inner", "tensor_index": 1 } ] } ])");
  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  Diagnostics d;
  onnx::ModelProto m = converted(bytes, o, &d);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("x"));
  EXPECT_THAT(d.warnings, ::testing::Contains(HasSubstr(
                              "signature 's' input 'inner' is tensor 1 'y', not a graph input")));
}

TEST(Signatures, IoNamesSignatureWithoutSignaturesKeepsTheNamesWithAWarning) {
  ConvertOptions o;
  o.io_names = IoNames::kSignature;
  Diagnostics d;
  onnx::ModelProto m = converted(read_file(op_model("abs")), o, &d);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("input"));
  EXPECT_THAT(d.warnings, ::testing::Contains(HasSubstr("the model has no signatures")));
}

// ---- inspect -----------------------------------------------------------------------

TEST(Signatures, InspectListsEverySignature) {
  auto info = inspect(view(read_file(op_model("sig_first_in_subgraph_1"))));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->subgraph, 1);
  ASSERT_EQ(info->signatures.size(), 2u);
  const SignatureInfo& step = info->signatures[0];
  EXPECT_EQ(step.key, "step");
  EXPECT_EQ(step.subgraph, 1);
  ASSERT_EQ(step.inputs.size(), 2u);
  EXPECT_EQ(step.inputs[0].alias, "h");
  EXPECT_EQ(step.inputs[0].name, "state");
  EXPECT_EQ(step.inputs[0].tensor, 1);
  EXPECT_EQ(step.inputs[0].dtype, "FLOAT32");
  EXPECT_EQ(step.inputs[0].shape, (ir::Shape{1, 6, 5, 3}));
  EXPECT_EQ(step.outputs[1].alias, "y");
  EXPECT_EQ(step.outputs[1].shape, (ir::Shape{1, 3, 2, 3}));
  EXPECT_EQ(info->signatures[1].key, "reset");
  EXPECT_EQ(info->signatures[1].subgraph, 0);
  // The tensors described are those of subgraph 1.
  EXPECT_EQ(info->tensors.at(0).name, "frame");
  EXPECT_THAT(info->to_text(), HasSubstr("signature 'step': subgraph 1\n  input 'h': [1] 'state' "
                                         "FLOAT32 [1, 6, 5, 3]\n"));
  EXPECT_THAT(info->to_json(-1), HasSubstr(R"("signatures":[{"key":"step","subgraph":1,)"
                                           R"("inputs":[{"alias":"h","tensor":1,"name":"state",)"
                                           R"("type":"FLOAT32","shape":[1,6,5,3]})"));
}

// ---- the corpus --------------------------------------------------------------------

TEST(Signatures, CorpusModelWithTwoSignaturesConvertsEach) {
  const std::string path =
      testing::corpus_dir() + "/ai-edge-quantizer/toy_model_with_kv_cache_multi_signature.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no corpus at " << path;
  Bytes bytes = read_file(path);
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_EQ(info->signatures.size(), 2u);
  for (const SignatureInfo& sig : info->signatures) {
    SCOPED_TRACE(sig.key);
    ConvertOptions o;
    o.signature = sig.key;
    o.io_names = IoNames::kSignature;
    onnx::ModelProto m = converted(bytes, o);
    EXPECT_THAT(metadata(m)["lite2onnx.signature"],
                HasSubstr(R"({"key":")" + sig.key + R"(","subgraph":)" +
                          std::to_string(sig.subgraph) + ","));
    std::vector<std::string> aliases;
    for (const auto& t : sig.inputs) aliases.push_back(t.alias);
    std::vector<std::string> inputs = names(m.graph().input());
    std::sort(inputs.begin(), inputs.end());
    EXPECT_EQ(inputs, aliases);
  }
}

}  // namespace
}  // namespace lite2onnx
