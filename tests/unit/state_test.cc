// Model state (issue 18, item 2; the convention of docs/architecture.md,
// "State"): resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE,
// initialised by CALL_ONCE) become graph inputs backed by initializers plus
// '/next' outputs, listed in lite2onnx.state. The numeric suite runs the
// stateful models three times with the state fed back; here: the interface,
// the initial values, the metadata and what is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::op_model;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

onnx::ModelProto converted(const Bytes& bytes, const ConvertOptions& options = {}) {
  Diagnostics d;
  auto r = convert(view(bytes), options, d);
  onnx::ModelProto m;
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return m;
  }
  EXPECT_TRUE(m.ParseFromString(*r));
  return m;
}

Error failed(const Bytes& bytes, ErrorCode code) {
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.error().code, code) << r.error().message;
  return r.error();
}

std::vector<std::string> input_names(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& v : m.graph().input()) out.push_back(v.name());
  return out;
}
std::vector<std::string> output_names(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& v : m.graph().output()) out.push_back(v.name());
  return out;
}
const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}
std::string metadata(const onnx::ModelProto& m, const std::string& key) {
  for (const auto& e : m.metadata_props())
    if (e.key() == key) return e.value();
  return "";
}
template <class T>
std::vector<T> values(const onnx::TensorProto& t) {
  std::vector<T> out(t.raw_data().size() / sizeof(T));
  std::memcpy(out.data(), t.raw_data().data(), out.size() * sizeof(T));
  return out;
}

TEST(State, ResourceVariablesBecomeInputsWithInitializersAndNextOutputs) {
  onnx::ModelProto m = converted(read_file(op_model("flow_state_stream")));
  // The frame, then one input per resource in the order the model first
  // names them; the model's outputs, then each state's next value.
  EXPECT_THAT(input_names(m), ElementsAre("frame", "history", "count", "scale"));
  EXPECT_THAT(output_names(m),
              ElementsAre("output", "count_next", "history/next", "count/next", "scale/next"));
  EXPECT_EQ(metadata(m, "lite2onnx.state"),
            R"([{"input":"history","output":"history/next","kind":"resource","tflite":"history"},)"
            R"({"input":"count","output":"count/next","kind":"resource","tflite":"count"},)"
            R"({"input":"scale","output":"scale/next","kind":"resource","tflite":"scale"}])");
  // Each state input defaults to what CALL_ONCE assigns: the constants of the init subgraph.
  const onnx::TensorProto* count = initializer(m, "count");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->data_type(), onnx::TensorProto::INT32);
  EXPECT_THAT(values<int32_t>(*count), ElementsAre(0));
  const onnx::TensorProto* history = initializer(m, "history");
  ASSERT_NE(history, nullptr);
  EXPECT_THAT(std::vector<int64_t>(history->dims().begin(), history->dims().end()),
              ElementsAre(1, 3, 4));
  EXPECT_EQ(values<float>(*history).size(), 12u);
  ASSERT_NE(initializer(m, "scale"), nullptr);
  // The state's input and output have one type and shape, so an output can be fed back.
  for (int i = 1; i <= 3; ++i) {
    const auto& in = m.graph().input(i);
    const auto& out = m.graph().output(i + 1);
    EXPECT_EQ(in.type().SerializeAsString(), out.type().SerializeAsString()) << in.name();
  }
  // No resource op is left, and a read is a copy: the unchanged "scale" goes
  // out through an Identity.
  for (const auto& n : m.graph().node()) EXPECT_NE(n.op_type(), "READ_VARIABLE");
}

TEST(State, InspectListsTheSubgraphsOwnInputsAndOutputs) {
  Bytes bytes = read_file(op_model("flow_state_stream"));
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_EQ(info->inputs.size(), 1u);
  EXPECT_EQ(info->tensors[static_cast<size_t>(info->inputs[0])].name, "frame");
  EXPECT_EQ(info->outputs.size(), 2u);
  for (int t : info->outputs) EXPECT_LT(static_cast<size_t>(t), info->tensors.size());
  EXPECT_TRUE(info->unsupported.empty());
}

TEST(State, KeepingTheTfliteInterfaceKeepsTheStateAsItIs) {
  ConvertOptions keep;
  keep.layout.keep_io_layout = true;
  onnx::ModelProto m = converted(read_file(op_model("flow_state_stream")), keep);
  EXPECT_THAT(input_names(m), ElementsAre("frame", "history", "count", "scale"));
  EXPECT_NE(metadata(m, "lite2onnx.state"), "");
}

TEST(State, AModelWithoutStateHasNoStateEntry) {
  onnx::ModelProto m = converted(read_file(op_model("flow_while_rnn")));
  EXPECT_EQ(metadata(m, "lite2onnx.state"), "");
}

// A resource read before anything gives it a value: TFLite's interpreter
// fails there; lite2onnx says why.
TEST(State, AResourceReadBeforeItHasAValueIsUnsupported) {
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 127, "builtin_code": "VAR_HANDLE" },
                        { "deprecated_builtin_code": 127, "builtin_code": "READ_VARIABLE" } ],
    "subgraphs": [ { "name": "main",
      "tensors": [ { "name": "handle", "shape": [], "type": "RESOURCE" },
                   { "name": "value", "shape": [2] } ],
      "inputs": [], "outputs": [1],
      "operators": [
        { "opcode_index": 0, "inputs": [], "outputs": [0],
          "builtin_options_type": "VarHandleOptions", "builtin_options": { "shared_name": "v" } },
        { "opcode_index": 1, "inputs": [0], "outputs": [1] } ] } ],
    "buffers": [ {} ] })");
  Error e = failed(bytes, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("op 1 (READ_VARIABLE): resource 'v' is read before anything "
                                   "assigns it"));
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].op, "READ_VARIABLE");
}

// Assigned before it is read, with no initialiser: a pair all the same, its
// initial value zeros (never read).
TEST(State, AResourceWrittenFirstStartsAtZero) {
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 127, "builtin_code": "VAR_HANDLE" },
                        { "deprecated_builtin_code": 127, "builtin_code": "ASSIGN_VARIABLE" },
                        { "deprecated_builtin_code": 127, "builtin_code": "READ_VARIABLE" } ],
    "subgraphs": [ { "name": "main",
      "tensors": [ { "name": "x", "shape": [3] }, { "name": "handle", "shape": [], "type": "RESOURCE" },
                   { "name": "y", "shape": [3] } ],
      "inputs": [0], "outputs": [2],
      "operators": [
        { "opcode_index": 0, "inputs": [], "outputs": [1],
          "builtin_options_type": "VarHandleOptions",
          "builtin_options": { "container": "c", "shared_name": "w" } },
        { "opcode_index": 1, "inputs": [1, 0], "outputs": [] },
        { "opcode_index": 2, "inputs": [1], "outputs": [2] } ] } ],
    "buffers": [ {} ] })");
  onnx::ModelProto m = converted(bytes);
  EXPECT_THAT(input_names(m), ElementsAre("x", "c/w"));
  EXPECT_THAT(output_names(m), ElementsAre("y", "c/w/next"));
  const onnx::TensorProto* init = initializer(m, "c/w");
  ASSERT_NE(init, nullptr);
  EXPECT_THAT(values<float>(*init), ElementsAre(0, 0, 0));
}

TEST(State, ResourceOpsInsideALoopBodyAreListedUnsupported) {
  // A WHILE whose body reads a resource: not converted (yet); the preflight
  // names the op in its subgraph.
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 119, "builtin_code": "WHILE" },
                        { "deprecated_builtin_code": 127, "builtin_code": "VAR_HANDLE" },
                        { "deprecated_builtin_code": 127, "builtin_code": "READ_VARIABLE" },
                        { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] },
                     { "name": "c_out", "shape": [], "type": "BOOL" }, { "name": "y", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [3],
        "operators": [ { "opcode_index": 0, "inputs": [0, 1], "outputs": [2, 3],
                         "builtin_options_type": "WhileOptions",
                         "builtin_options": { "cond_subgraph_index": 1, "body_subgraph_index": 2 } } ] },
      { "name": "cond",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [0], "operators": [] },
      { "name": "body",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] },
                     { "name": "h", "shape": [], "type": "RESOURCE" }, { "name": "v", "shape": [2] },
                     { "name": "x_next", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [0, 4],
        "operators": [
          { "opcode_index": 1, "inputs": [], "outputs": [2],
            "builtin_options_type": "VarHandleOptions", "builtin_options": { "shared_name": "s" } },
          { "opcode_index": 2, "inputs": [2], "outputs": [3] },
          { "opcode_index": 3, "inputs": [1, 3], "outputs": [4],
            "builtin_options_type": "AddOptions", "builtin_options": {} } ] } ],
    "buffers": [ {} ] })");
  Error e = failed(bytes, ErrorCode::kUnsupported);
  ASSERT_EQ(e.unsupported.size(), 2u);
  EXPECT_EQ(e.unsupported[0].subgraph, 2);
  EXPECT_EQ(e.unsupported[0].op, "VAR_HANDLE");
  EXPECT_THAT(e.unsupported[0].reason, HasSubstr("inside a control-flow subgraph"));
  EXPECT_EQ(e.unsupported[1].op, "READ_VARIABLE");
}

// The corpus's streaming keyword model: six int8 states, kept int8 at the
// interface (QDQ), float in --quantization dequantize.
TEST(State, QuantizedStateKeepsItsIntegerTypeAtTheInterface) {
  const std::string path = corpus_dir() + "/mww-models/okay_nabu.tflite";
  Bytes bytes;
  try {
    bytes = read_file(path);
  } catch (...) {
    GTEST_SKIP() << "corpus model not found: " << path;
  }
  if (bytes.empty()) GTEST_SKIP() << "corpus model not found: " << path;
  onnx::ModelProto m = converted(bytes);
  auto state = nlohmann::json::parse(metadata(m, "lite2onnx.state"));
  ASSERT_EQ(state.size(), 6u);
  EXPECT_EQ(state[0]["input"], "stream_5/states");
  for (const auto& p : state) {
    const onnx::TensorProto* init = initializer(m, p["input"]);
    ASSERT_NE(init, nullptr) << p["input"];
    EXPECT_EQ(init->data_type(), onnx::TensorProto::INT8) << p["input"];
  }
  ConvertOptions dequantize;
  dequantize.quantization = QuantizationMode::kDequantize;
  onnx::ModelProto f = converted(bytes, dequantize);
  for (const auto& p : nlohmann::json::parse(metadata(f, "lite2onnx.state"))) {
    const onnx::TensorProto* init = initializer(f, p["input"]);
    ASSERT_NE(init, nullptr) << p["input"];
    EXPECT_EQ(init->data_type(), onnx::TensorProto::FLOAT) << p["input"];
  }
}

}  // namespace
}  // namespace lite2onnx
