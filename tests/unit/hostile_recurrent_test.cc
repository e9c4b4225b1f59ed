// Hostile recurrent models (LSTM, RNN, SVDF): wrong state shapes, absent
// weights and state inputs, bad options and intermediates, absurd sequence
// lengths; each a clear error naming the op or tensor, or a limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

nlohmann::json model_json(const std::string& name) { return testing::op_model_json(name); }
Bytes model_bytes(const nlohmann::json& j) { return tflite_from_json(j.dump()); }

nlohmann::json& tensor_named(nlohmann::json& j, const std::string& name) {
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == name) return t;
  throw std::runtime_error("no tensor " + name);
}

Error convert_error(const Bytes& bytes, const ConvertOptions& o = {}) {
  Diagnostics d;
  auto r = convert(view(bytes), o, d);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

TEST(RecurrentHostile, WrongStateShapesAndMissingWeightsAreNamed) {
  auto j = model_json("rnn_lstm_plain");
  tensor_named(j, "lstm/cell_state")["shape"] = {2, 7};
  Error e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("cell state 'lstm/cell_state' has shape [2, 7]"));
  EXPECT_EQ(e.unsupported.at(0).op_index, 0);

  j = model_json("rnn_lstm_plain");
  j["subgraphs"][0]["operators"][0]["inputs"][2] = -1;
  e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("input weights of gate 1 are missing"));

  // A state slot TFLite reads with GetVariableInput: absent, or too few inputs.
  j = model_json("rnn_lstm_plain");
  j["subgraphs"][0]["operators"][0]["inputs"][19] = -1;
  e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("state input 19 is missing"));
  j = model_json("rnn_lstm_plain");
  j["subgraphs"][0]["operators"][0]["inputs"] = {0, 1, 2};
  EXPECT_EQ(convert_error(model_bytes(j)).code, ErrorCode::kInvalidModel);

  j = model_json("rnn_svdf_rank2_relu");
  j["subgraphs"][0]["operators"][0]["builtin_options"]["rank"] = 3;
  EXPECT_THAT(convert_error(model_bytes(j)).message,
              HasSubstr("rank 3 must divide the 10 filters"));
  j = model_json("rnn_svdf_rank2_relu");
  j["subgraphs"][0]["operators"][0]["builtin_options"]["rank"] = 0;
  EXPECT_THAT(convert_error(model_bytes(j)).message, HasSubstr("rank 0"));

  j = model_json("rnn_bidi_merged");
  auto& bidi_inputs = j["subgraphs"][0]["operators"][0]["inputs"];
  bidi_inputs.erase(bidi_inputs.begin() + 9, bidi_inputs.end());
  EXPECT_THAT(convert_error(model_bytes(j)).message, HasSubstr("needs 12 inputs"));

  // The integer kernel's intermediates: missing, or out of range.
  j = model_json("rnn_lstm_int8");
  j["subgraphs"][0]["operators"][0].erase("intermediates");
  EXPECT_THAT(convert_error(model_bytes(j)).message, HasSubstr("5 intermediate tensors"));
  j = model_json("rnn_lstm_int8");
  j["subgraphs"][0]["operators"][0]["intermediates"][4] = 9999;
  e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("intermediate"));
}

// Per-axis int8 weights of a hybrid RNN: TFLite's kernel reads one scale
// (0 for per-axis tensors), so they are refused, naming that; before, the
// ONNX RNN's [1, units, input] view of them lost the quantization axis (an
// internal error, found by the graph generator).
TEST(RecurrentHostile, PerAxisHybridWeightsAreRefused) {
  auto j = model_json("rnn_seq_relu6_hybrid");
  j["subgraphs"][0]["operators"][0]["builtin_options"]["fused_activation_function"] = "TANH";
  tensor_named(j, "rnn/weights")["quantization"] = {{"scale", {0.01, 0.02, 0.03, 0.04, 0.05}},
                                                    {"zero_point", {0, 0, 0, 0, 0}},
                                                    {"quantized_dimension", 0}};
  Error e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported) << e.message;
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].reason_code, "quantization");
  EXPECT_THAT(e.message, HasSubstr("'rnn/weights' has 5 per-axis scales"));
}

// Hybrid RNN and SVDF cells compute as TFLite's hybrid kernel (each row of
// the activations quantized at run time, MatMulInteger) in the default and
// exact modes; --quantization dequantize promises float ops.
TEST(RecurrentHostile, HybridCellsTakeTheKernelsArithmetic) {
  for (const char* name : {"rnn_basic_hybrid", "rnn_seq_time_major_hybrid_asymmetric",
                           "rnn_bidi_hybrid_aux_stacking", "rnn_svdf_rank3_hybrid"}) {
    SCOPED_TRACE(name);
    const Bytes bytes = model_bytes(model_json(name));
    for (QuantizationMode mode :
         {QuantizationMode::kAuto, QuantizationMode::kExact, QuantizationMode::kDequantize}) {
      ConvertOptions o;
      o.quantization = mode;
      Diagnostics d;
      auto r = convert(view(bytes), o, d);
      ASSERT_TRUE(r.ok()) << r.error().message;
      onnx::ModelProto m;
      ASSERT_TRUE(m.ParseFromString(*r));
      const std::map<std::string, int> ops = testing::op_counts(m);
      EXPECT_EQ(ops.contains("MatMulInteger"), mode != QuantizationMode::kDequantize);
    }
  }
}

// Where TFLite's hybrid kernel differs from its float one: time-major, it
// runs the sequence max_time times over (unrolled up to kMaxSteps steps in
// all); batch-major, it reads an auxiliary input by the input's depth. The
// exact mode refuses what it does not write; the default mode computes
// those cells in float.
TEST(RecurrentHostile, HybridBidirectionalQuirksAreNamed) {
  auto j = model_json("rnn_bidi_hybrid_time_major");
  tensor_named(j, "input")["shape"] = {100, 2, 3};
  for (const char* out : {"fw_output", "bw_output"}) tensor_named(j, out)["shape"][0] = 100;
  ConvertOptions exact;
  exact.quantization = QuantizationMode::kExact;
  Error e = convert_error(model_bytes(j), exact);
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("runs the sequence that many times over"));
  Diagnostics d;
  EXPECT_TRUE(convert(view(model_bytes(j)), {}, d).ok());

  j = model_json("rnn_bidi_hybrid_aux_stacking");
  tensor_named(j, "aux_input")["shape"][2] = 7;
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == "fw/aux_weights" || t["name"] == "bw/aux_weights") {
      t["shape"][1] = 7;
      j["buffers"][t["buffer"].get<size_t>()]["data"] =
          std::vector<int>(t["shape"][0].get<size_t>() * 7, 3);
    }
  e = convert_error(model_bytes(j), exact);
  EXPECT_THAT(e.message, HasSubstr("steps through it by the input's depth"));
}

TEST(RecurrentHostile, DynamicSequencesAreNamed) {
  // A dynamic batch is the states'; a dynamic time dimension is refused.
  auto j = model_json("rnn_lstm_dynamic_batch");
  tensor_named(j, "input")["shape_signature"] = {-1, -1, 3};
  tensor_named(j, "output")["shape_signature"] = {-1, -1, 5};
  Error e = convert_error(model_bytes(j));
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("a dynamic dimension other than its batch"));
}

TEST(RecurrentHostile, LongSequencesAreBounded) {
  // Beyond the steps an op is unrolled to: unsupported, saying so.
  auto j = model_json("rnn_seq_tanh");
  tensor_named(j, "input")["shape"] = {2, 100000, 3};
  tensor_named(j, "output")["shape"] = {2, 100000, 5};
  EXPECT_THAT(convert_error(model_bytes(j)).message, HasSubstr("sequence of 100000 steps"));
  // Within it, the unrolled nodes count against max_created_bytes.
  j = model_json("rnn_lstm_int8");
  tensor_named(j, "input")["shape"] = {2, 4000, 3};
  tensor_named(j, "output")["shape"] = {2, 4000, 5};
  ConvertOptions small;
  small.limits.max_created_bytes = 1 << 20;
  Error e = convert_error(model_bytes(j), small);
  EXPECT_EQ(e.code, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("unrolled"));
}

}  // namespace
}  // namespace lite2onnx
