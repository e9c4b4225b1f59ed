// Model state (README, "What the ONNX model looks like"; ir::State): variable
// tensors of stateful ops become a graph input backed by an initializer of
// their initial value and a `/next` graph output, listed in lite2onnx.state;
// what cannot be state is named by the preflight.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/convert.h"
#include "core/layout_spec.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using testing::f32_bytes;
using ::testing::HasSubstr;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

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

onnx::ModelProto convert_ok(const Bytes& bytes, const ConvertOptions& o = {}) {
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  onnx::ModelProto m;
  if (r.ok()) {
    EXPECT_TRUE(m.ParseFromString(*r));
  }
  return m;
}

std::string metadata(const onnx::ModelProto& m, const std::string& key) {
  for (const auto& p : m.metadata_props())
    if (p.key() == key) return p.value();
  return "";
}

std::vector<std::string> names(const auto& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.name());
  return out;
}

TEST(State, VariableTensorBecomesInputWithInitializerAndNextOutput) {
  onnx::ModelProto m = convert_ok(rnn_model());
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
  onnx::ModelProto m = convert_ok(rnn_model(), {});
  ASSERT_FALSE(metadata(m, "lite2onnx.state").empty());
  std::string json = R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [ { "tensors": [ { "name": "a", "shape": [2], "type": "FLOAT32" },
                                  { "name": "y", "shape": [2], "type": "FLOAT32" } ],
      "inputs": [0], "outputs": [1],
      "operators": [ { "opcode_index": 0, "inputs": [0, 0], "outputs": [1] } ] } ],
    "buffers": [ {} ] })";
  onnx::ModelProto plain = convert_ok(tflite_from_json(json));
  EXPECT_EQ(metadata(plain, "lite2onnx.state"), "");
}

TEST(State, KeepsTfliteAxisOrderWhateverTheOptions) {
  ConvertOptions keep;
  keep.layout.keep_io_layout = true;
  onnx::ModelProto m = convert_ok(rnn_model(), keep);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("input", "rnn/state"));
  // A layout option for a state tensor contradicts the state's rule.
  ConvertOptions io;
  auto spec = parse_layout_spec("rnn/state=NC:CN");
  ASSERT_TRUE(spec.ok());
  io.layout.io_layouts.push_back(*spec);
  Diagnostics d;
  auto r = convert(view(rnn_model()), io, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption);
  EXPECT_THAT(r.error().message, HasSubstr("model state"));
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
  ASSERT_EQ(b.g.states.size(), 1u);
  const ir::State& s = b.g.states[0];
  EXPECT_EQ(s.input, h);
  EXPECT_EQ(s.kind, "variable_tensor");
  EXPECT_TRUE(b.g.is_graph_input(h));
  EXPECT_TRUE(b.g.is_graph_output(s.output));
  EXPECT_EQ(b.g.tensor(s.output).name, "h/next");
  EXPECT_FALSE(b.g.tensor(h).is_variable);
  ASSERT_TRUE(b.g.tensor(h).initial);
  for (std::byte v : b.g.tensor(h).initial->bytes) EXPECT_EQ(static_cast<int8_t>(v), -3);
  EXPECT_EQ(ops::state_output(b.g.node(n), 0), s.output);
  EXPECT_EQ(ops::state_output(b.g.node(n), 1), ir::kNoTensor);
  EXPECT_EQ(b.g.created.used(), 8u);
}

TEST(State, InitialValuesCountAgainstTheCreatedBytesLimit) {
  testing::GraphBuilder b;
  b.options.limits.max_created_bytes = 1000;
  ir::TensorId x = b.input("x", {2, 3});
  ir::TensorId h = b.tensor("h", {2, 1000});
  b.g.tensor(h).is_variable = true;
  ir::TensorId y = b.tensor("y", {2, 1000});
  b.g.created.set_limit(1000);
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
  auto plain = ops_of(convert_ok(model_bytes(model_json("rnn_lstm_plain"))));
  EXPECT_EQ(plain["LSTM"], 1);
  auto clipped = ops_of(convert_ok(model_bytes(model_json("rnn_lstm_cell_clip"))));
  EXPECT_EQ(clipped["LSTM"], 0);
  EXPECT_EQ(clipped["Sigmoid"], 4 * 3);  // 4 steps, gates i, f, o
  EXPECT_EQ(clipped["MatMul"], 1);       // every step's input projection at once
  EXPECT_EQ(clipped["Transpose"], 0);
  // The integer kernel: every step on the kernel's grids, no Transpose.
  auto integer = ops_of(convert_ok(model_bytes(model_json("rnn_lstm_int8"))));
  EXPECT_EQ(integer["LSTM"], 0);
  EXPECT_EQ(integer["Transpose"], 0);
  EXPECT_GT(integer["Round"], 0);
}

TEST(Recurrent, QuantizedStateKeepsItsIntegerTypeAndInitialValue) {
  onnx::ModelProto m = convert_ok(model_bytes(model_json("rnn_lstm_int8")));
  std::map<std::string, const onnx::TensorProto*> init;
  for (const auto& t : m.graph().initializer()) init[t.name()] = &t;
  ASSERT_TRUE(init.count("lstm/output_state") && init.count("lstm/cell_state"));
  EXPECT_EQ(init["lstm/output_state"]->data_type(), onnx::TensorProto::INT8);
  EXPECT_EQ(init["lstm/cell_state"]->data_type(), onnx::TensorProto::INT16);
  EXPECT_EQ(init["lstm/cell_state"]->raw_data(), std::string(2 * 5 * 2, '\0'));
  // --quantization dequantize: float state, the dequantized zero.
  ConvertOptions deq;
  deq.quantization = QuantizationMode::kDequantize;
  onnx::ModelProto f = convert_ok(model_bytes(model_json("rnn_lstm_int8")), deq);
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

}  // namespace
}  // namespace lite2onnx
