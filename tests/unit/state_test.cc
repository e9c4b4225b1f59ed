// Model state (docs/architecture.md, "Model state"; README, "Model state"):
// resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE,
// initialised by CALL_ONCE; issue 18, item 2) and the variable tensors of
// stateful ops (LSTM/RNN/SVDF; issue 19, item 2) become graph inputs backed
// by initializers plus '/next' outputs, listed in lite2onnx.state, by one pass
// (passes::expose_state). The numeric suite runs the stateful models three
// times with the state fed back; here: the interface, the initial values, the
// metadata and what is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/layout_spec.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;
using ::testing::ElementsAre;
using testing::f32_bytes;
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

std::vector<std::string> names(const auto& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.name());
  return out;
}

// RNN (RELU) over input [2,3] with a variable hidden state [2,4]; `state`
// replaces the state tensor's fields, `extra_op` adds a second operator
// reading tensor 4 (the state) and writing tensor 6.
Bytes rnn_model(
    const std::string& state = R"("shape": [2, 4], "type": "FLOAT32", "is_variable": true)",
    bool extra_op = false, bool state_is_output = false, bool state_is_input = false) {
  std::vector<float> w(12), r(16), b(4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.125f * static_cast<float>(i % 5) - 0.25f;
  for (size_t i = 0; i < r.size(); ++i) r[i] = 0.0625f * static_cast<float>(i % 7) - 0.1875f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.03125f * static_cast<float>(i);
  std::string ops =
      R"({ "opcode_index": 0, "inputs": [0, 1, 2, 3, 4], "outputs": [5],
           "builtin_options_type": "RNNOptions",
           "builtin_options": { "fused_activation_function": "RELU" } })";
  if (extra_op) ops += R"(, { "opcode_index": 1, "inputs": [4, 5], "outputs": [6] })";
  std::string outputs = extra_op ? "[5, 6]" : state_is_output ? "[5, 4]" : "[5]";
  return tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 24, "builtin_code": "RNN" },
                        { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [ { "name": "main", "tensors": [
      { "name": "input", "shape": [2, 3], "type": "FLOAT32" },
      { "name": "rnn/weights", "shape": [4, 3], "type": "FLOAT32", "buffer": 1 },
      { "name": "rnn/recurrent", "shape": [4, 4], "type": "FLOAT32", "buffer": 2 },
      { "name": "rnn/bias", "shape": [4], "type": "FLOAT32", "buffer": 3 },
      { "name": "rnn/state", )" +
                          state + R"( },
      { "name": "output", "shape": [2, 4], "type": "FLOAT32" },
      { "name": "sum", "shape": [2, 4], "type": "FLOAT32" } ],
      "inputs": )" + std::string(state_is_input ? "[0, 4]" : "[0]") +
                          R"(, "outputs": )" + outputs + R"(, "operators": [ )" + ops + R"( ] } ],
    "buffers": [ {}, { "data": )" +
                          f32_bytes(w) + R"( }, { "data": )" + f32_bytes(r) + R"( }, { "data": )" +
                          f32_bytes(b) + R"( } ] })");
}

// ---- resource variables ----

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

// ---- variable tensors ----

TEST(State, VariableTensorBecomesInputWithInitializerAndNextOutput) {
  onnx::ModelProto m = converted(rnn_model());
  EXPECT_THAT(names(m.graph().input()), ElementsAre("input", "rnn/state"));
  EXPECT_THAT(names(m.graph().output()), ElementsAre("output", "rnn/state/next"));
  const onnx::TensorProto* init = nullptr;
  for (const auto& t : m.graph().initializer())
    if (t.name() == "rnn/state") init = &t;
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->data_type(), onnx::TensorProto::FLOAT);
  EXPECT_THAT(init->dims(), ElementsAre(2, 4));
  EXPECT_EQ(init->raw_data(), std::string(32, '\0'));
  // Input and output agree in type and shape, so an output can be fed back.
  const auto& in = m.graph().input(1).type().tensor_type();
  const auto& out = m.graph().output(1).type().tensor_type();
  EXPECT_EQ(in.SerializeAsString(), out.SerializeAsString());
  EXPECT_EQ(metadata(m, "lite2onnx.state"),
            R"([{"input":"rnn/state","output":"rnn/state/next","kind":"variable_tensor",)"
            R"("tflite":"rnn/state"}])");
}

TEST(State, ModelsWithoutStateHaveNoEntry) {
  onnx::ModelProto m = converted(rnn_model(), {});
  ASSERT_FALSE(metadata(m, "lite2onnx.state").empty());
  std::string json = R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [ { "tensors": [ { "name": "a", "shape": [2], "type": "FLOAT32" },
                                  { "name": "y", "shape": [2], "type": "FLOAT32" } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": [0, 0], "outputs": [1] } ] } ],
    "buffers": [ {} ] })";
  onnx::ModelProto plain = converted(tflite_from_json(json));
  EXPECT_EQ(metadata(plain, "lite2onnx.state"), "");
}

std::vector<int64_t> dims(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.type().tensor_type().shape().dim()) out.push_back(d.dim_value());
  return out;
}

// One convention for both kinds of state: --keep-io-layout keeps the pair in
// TFLite's axis order, and a layout option naming either tensor of a pair
// gives both that layout (the output can still be fed back as it is).
TEST(State, LayoutOptionsApplyToTheStateInputAndItsNextValueAlike) {
  ConvertOptions keep;
  keep.layout.keep_io_layout = true;
  onnx::ModelProto m = converted(rnn_model(), keep);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("input", "rnn/state"));
  EXPECT_THAT(dims(m.graph().input(1)), ElementsAre(2, 4));
  EXPECT_THAT(dims(m.graph().output(1)), ElementsAre(2, 4));
  for (const char* named : {"rnn/state=NC:CN", "rnn/state/next=NC:CN"}) {
    ConvertOptions io;
    auto spec = parse_layout_spec(named);
    ASSERT_TRUE(spec.ok());
    io.layout.io_layouts.push_back(*spec);
    onnx::ModelProto t = converted(rnn_model(), io);
    ASSERT_EQ(t.graph().input_size(), 2) << named;
    EXPECT_EQ(t.graph().input(1).name(), "rnn/state");
    EXPECT_THAT(dims(t.graph().input(1)), ElementsAre(4, 2)) << named;
    EXPECT_EQ(t.graph().output(1).name(), "rnn/state/next");
    EXPECT_THAT(dims(t.graph().output(1)), ElementsAre(4, 2)) << named;
    const onnx::TensorProto* init = initializer(t, "rnn/state");
    ASSERT_NE(init, nullptr);
    EXPECT_THAT(std::vector<int64_t>(init->dims().begin(), init->dims().end()), ElementsAre(4, 2));
  }
  // Options giving the two different layouts contradict the convention.
  ConvertOptions both;
  for (const char* named : {"rnn/state=NC:CN", "rnn/state/next=NC:NC"}) {
    auto spec = parse_layout_spec(named);
    ASSERT_TRUE(spec.ok());
    both.layout.io_layouts.push_back(*spec);
  }
  Diagnostics d;
  auto r = convert(view(rnn_model()), both, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_THAT(r.error().message, HasSubstr("different layouts"));
}

TEST(State, WhatCannotBeStateIsNamed) {
  Diagnostics d;
  // Read by a second operator: each reader would see another value.
  auto shared = convert(
      view(rnn_model(R"("shape": [2, 4], "type": "FLOAT32", "is_variable": true)", true)), {}, d);
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(shared.error().message, HasSubstr("'rnn/state' is read by 2"));
  // Also a graph output.
  auto out = convert(
      view(rnn_model(R"("shape": [2, 4], "type": "FLOAT32", "is_variable": true)", false, true)),
      {}, d);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, HasSubstr("also a graph input or output"));
  // Not a variable tensor where TFLite's kernel requires one: invalid (a
  // tensor nothing writes, or a graph input).
  auto plain = convert(view(rnn_model(R"("shape": [2, 4], "type": "FLOAT32")")), {}, d);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code, ErrorCode::kInvalidModel);
  EXPECT_THAT(plain.error().message, HasSubstr("nor written by any op"));
  auto input =
      convert(view(rnn_model(R"("shape": [2, 4], "type": "FLOAT32")", false, false, true)), {}, d);
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.error().code, ErrorCode::kInvalidModel);
  EXPECT_THAT(input.error().message, HasSubstr("not a variable tensor"));
}

TEST(State, ExposeStateGivesTflitesInitialValues) {
  testing::GraphBuilder b;
  ir::TensorId x = b.input("x", {2, 3});
  ir::TensorId w = b.patterned("w", {4, 3});
  ir::TensorId r = b.patterned("r", {4, 4});
  ir::TensorId bias = b.patterned("b", {4});
  // int8 state: TFLite resets it to its zero point.
  ir::TensorId h = b.tflite_tensor("h", {2, 4}, ir::DataType::kInt8, b.params({0.5f}, {-3}));
  b.g.tensor(h).is_variable = true;
  ir::TensorId y = b.tensor("y", {2, 4});
  ir::NodeId n = b.tflite(ir::builtin::kRnn, {x, w, r, bias, h}, {y});
  b.output(y);
  ASSERT_TRUE(passes::expose_state(b.g, b.ctx()).ok());
  ASSERT_EQ(b.g.state.size(), 1u);
  const ir::StatePair& s = b.g.state[0];
  EXPECT_EQ(s.input, h);
  EXPECT_EQ(s.kind, "variable_tensor");
  EXPECT_EQ(s.tflite, "h");
  EXPECT_TRUE(b.g.is_graph_input(h));
  EXPECT_TRUE(b.g.is_graph_output(s.output));
  EXPECT_EQ(b.g.tensor(s.output).name, "h/next");
  EXPECT_FALSE(b.g.tensor(h).is_variable);
  EXPECT_EQ(s.initial.stored_type, ir::DataType::kInt8);
  ASSERT_EQ(s.initial.bytes.size(), 8u);
  for (std::byte v : s.initial.bytes) EXPECT_EQ(static_cast<int8_t>(v), -3);
  ASSERT_TRUE(s.initial_quant);
  EXPECT_EQ(s.initial_quant->zero_point, std::vector<int64_t>{-3});
  EXPECT_EQ(ops::state_output(b.g.node(n), 0), s.output);
  EXPECT_EQ(ops::state_output(b.g.node(n), 1), ir::kNoTensor);
  EXPECT_EQ(b.g.created().used(), 8u);
}

TEST(State, InitialValuesCountAgainstTheCreatedBytesLimit) {
  testing::GraphBuilder b;
  b.options.limits.max_created_bytes = 1000;
  ir::TensorId x = b.input("x", {2, 3});
  ir::TensorId h = b.tensor("h", {2, 1000});
  b.g.tensor(h).is_variable = true;
  ir::TensorId y = b.tensor("y", {2, 1000});
  b.g.created().set_limit(1000);
  b.tflite(ir::builtin::kRnn,
           {x, b.patterned("w", {1000, 3}), b.patterned("r", {2, 2}), b.patterned("b", {2}), h},
           {y});
  auto st = passes::expose_state(b.g, b.ctx());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kResourceLimit);
}

// ---- recurrent ops: the ONNX forms (hostile models: hostile_recurrent_test.cc) ----

nlohmann::json model_json(const std::string& name) { return testing::op_model_json(name); }
Bytes model_bytes(const nlohmann::json& j) { return tflite_from_json(j.dump()); }
std::map<std::string, int> ops_of(const onnx::ModelProto& m) { return testing::op_counts(m); }

TEST(Recurrent, OnnxLstmWhereItComputesTfliteExactlyElseTheUnrolledCell) {
  // No clipping: one ONNX LSTM; TFLite's cell clipping (Keras writes 10): unrolled.
  auto plain = ops_of(converted(model_bytes(model_json("rnn_lstm_plain"))));
  EXPECT_EQ(plain["LSTM"], 1);
  auto clipped = ops_of(converted(model_bytes(model_json("rnn_lstm_cell_clip"))));
  EXPECT_EQ(clipped["LSTM"], 0);
  EXPECT_EQ(clipped["Sigmoid"], 4 * 3);  // 4 steps, gates i, f, o
  EXPECT_EQ(clipped["MatMul"], 1);       // every step's input projection at once
  EXPECT_EQ(clipped["Transpose"], 0);
  // The integer kernel: every step on the kernel's grids, no Transpose.
  auto integer = ops_of(converted(model_bytes(model_json("rnn_lstm_int8"))));
  EXPECT_EQ(integer["LSTM"], 0);
  EXPECT_EQ(integer["Transpose"], 0);
  EXPECT_GT(integer["Round"], 0);
}

TEST(Recurrent, QuantizedStateKeepsItsIntegerTypeAndInitialValue) {
  onnx::ModelProto m = converted(model_bytes(model_json("rnn_lstm_int8")));
  std::map<std::string, const onnx::TensorProto*> init;
  for (const auto& t : m.graph().initializer()) init[t.name()] = &t;
  ASSERT_TRUE(init.count("lstm/output_state") && init.count("lstm/cell_state"));
  EXPECT_EQ(init["lstm/output_state"]->data_type(), onnx::TensorProto::INT8);
  EXPECT_EQ(init["lstm/cell_state"]->data_type(), onnx::TensorProto::INT16);
  EXPECT_EQ(init["lstm/cell_state"]->raw_data(), std::string(2 * 5 * 2, '\0'));
  // --quantization dequantize: float state, the dequantized zero.
  ConvertOptions deq;
  deq.quantization = QuantizationMode::kDequantize;
  onnx::ModelProto f = converted(model_bytes(model_json("rnn_lstm_int8")), deq);
  for (const auto& t : f.graph().initializer())
    if (t.name() == "lstm/output_state") {
      EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
      EXPECT_EQ(t.raw_data(), std::string(2 * 5 * 4, '\0'));
    }
  EXPECT_EQ(
      metadata(f, "lite2onnx.state"),
      R"([{"input":"lstm/output_state","output":"lstm/output_state/next","kind":"variable_tensor",)"
      R"("tflite":"lstm/output_state"},{"input":"lstm/cell_state","output":"lstm/cell_state/next",)"
      R"("kind":"variable_tensor","tflite":"lstm/cell_state"}])");
}

// The merge of control flow and the recurrent ops: an op copied into another
// graph keeps what it needs. The integer LSTM's intermediate tensors are kept
// as their quantization, not as tensor ids, which the copy a CALL makes
// renumbers (ids read in the copy pointed past its tensors).
TEST(Recurrent, AnIntegerLstmInACalledSubgraphConvertsAsItDoesInPlace) {
  const nlohmann::json direct = model_json("rnn_lstm_int8");
  nlohmann::json j = direct;
  const nlohmann::json& lstm = direct["subgraphs"][0];
  const nlohmann::json& in = lstm["tensors"][lstm["inputs"][0].get<size_t>()];
  const nlohmann::json& out = lstm["tensors"][lstm["outputs"][0].get<size_t>()];
  j["operator_codes"].push_back({{"deprecated_builtin_code", 31}, {"builtin_code", "CALL"}});
  const int call = static_cast<int>(j["operator_codes"].size()) - 1;
  nlohmann::json main = {{"name", "main"},
                         {"tensors", {in, out}},
                         {"inputs", {0}},
                         {"outputs", {1}},
                         {"operators",
                          {{{"opcode_index", call},
                            {"inputs", {0}},
                            {"outputs", {1}},
                            {"builtin_options_type", "CallOptions"},
                            {"builtin_options", {{"subgraph", 1}}}}}}};
  j["subgraphs"] = {main, lstm};
  onnx::ModelProto inlined = converted(model_bytes(j));
  onnx::ModelProto in_place = converted(model_bytes(direct));
  EXPECT_EQ(ops_of(inlined), ops_of(in_place));
  EXPECT_EQ(nlohmann::json::parse(metadata(inlined, "lite2onnx.state")).size(), 2u);
  // The integer kernel's scales were read: as many Round nodes either way.
  EXPECT_GT(ops_of(inlined)["Round"], 0);
}

// State inside a control-flow subgraph is not converted, whatever its kind
// (the pass runs on the main graph): an RNN whose hidden state is a variable
// tensor in a WHILE body is listed with its subgraph.
TEST(State, StatefulOpsInsideALoopBodyAreListedUnsupported) {
  std::vector<float> w(6, 0.25f), r(4, 0.5f), b(2, 0.f);
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 119, "builtin_code": "WHILE" },
                        { "deprecated_builtin_code": 24, "builtin_code": "RNN" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [1, 3] },
                     { "name": "s", "shape": [1, 2] }, { "name": "c_out", "shape": [], "type": "BOOL" },
                     { "name": "x_out", "shape": [1, 3] }, { "name": "s_out", "shape": [1, 2] } ],
        "inputs": [0, 1, 2], "outputs": [5],
        "operators": [ { "opcode_index": 0, "inputs": [0, 1, 2], "outputs": [3, 4, 5],
                         "builtin_options_type": "WhileOptions",
                         "builtin_options": { "cond_subgraph_index": 1, "body_subgraph_index": 2 } } ] },
      { "name": "cond",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [1, 3] },
                     { "name": "s", "shape": [1, 2] } ],
        "inputs": [0, 1, 2], "outputs": [0], "operators": [] },
      { "name": "body",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [1, 3] },
                     { "name": "s", "shape": [1, 2] },
                     { "name": "w", "shape": [2, 3], "buffer": 1 }, { "name": "r", "shape": [2, 2], "buffer": 2 },
                     { "name": "b", "shape": [2], "buffer": 3 },
                     { "name": "h", "shape": [1, 2], "is_variable": true },
                     { "name": "h_out", "shape": [1, 2] } ],
        "inputs": [0, 1, 2], "outputs": [0, 1, 7],
        "operators": [ { "opcode_index": 1, "inputs": [1, 3, 4, 5, 6], "outputs": [7],
                         "builtin_options_type": "RNNOptions",
                         "builtin_options": { "fused_activation_function": "TANH" } } ] } ],
    "buffers": [ {}, { "data": )" +
                                 f32_bytes(w) + R"( }, { "data": )" + f32_bytes(r) +
                                 R"( }, { "data": )" + f32_bytes(b) + R"( } ] })");
  Error e = failed(bytes, ErrorCode::kUnsupported);
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].subgraph, 2);
  EXPECT_EQ(e.unsupported[0].op, "RNN");
  EXPECT_THAT(e.unsupported[0].reason, HasSubstr("variable tensor 'h'"));
}

}  // namespace
}  // namespace lite2onnx
