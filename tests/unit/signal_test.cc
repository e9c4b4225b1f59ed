// TensorFlow Lite Micro's Signal ops (core/ops/signal*.cc): the state their
// kernels keep (an op_state pair: graph input backed by zeros, '/next'
// output, listed in lite2onnx.state), and hostile operands refused with an
// error naming what is wrong. Their numbers are checked by the numeric suite
// against the kernels in JS (tests/numeric/lib/signal_kernel.mjs).
#include <flatbuffers/flexbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::op_model_json;
using testing::view;

Result<std::string> convert_json(const nlohmann::json& j) {
  Diagnostics d;
  return convert(view(testing::tflite_from_json(j.dump())), {}, d);
}

onnx::ModelProto converted(const nlohmann::json& j) {
  onnx::ModelProto m;
  auto r = convert_json(j);
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return m;
  }
  EXPECT_TRUE(m.ParseFromString(*r));
  return m;
}

std::string metadata(const onnx::ModelProto& m, const std::string& key) {
  for (const auto& e : m.metadata_props())
    if (e.key() == key) return e.value();
  return "";
}

std::vector<std::string> names(const auto& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.name());
  return out;
}

const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// Refused as unsupported, the message saying `what`.
void expect_unsupported(const nlohmann::json& j, const std::string& what) {
  auto r = convert_json(j);
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr(what));
}

std::vector<uint8_t> flex(const std::function<void(flexbuffers::Builder&)>& fill) {
  flexbuffers::Builder b;
  b.Map([&] { fill(b); });
  b.Finish();
  return b.GetBuffer();
}

// The noise estimate the spectral subtraction kernel keeps: a uint32 pair
// named after the op's first output, zeros first.
TEST(Signal, TheSpectralSubtractionsNoiseEstimateIsAStatePair) {
  onnx::ModelProto m = converted(op_model_json("signal_spectral_subtraction"));
  EXPECT_THAT(names(m.graph().input()), ElementsAre("channels", "subtracted/noise_estimate"));
  EXPECT_THAT(names(m.graph().output()),
              ElementsAre("subtracted", "noise_estimate", "subtracted/noise_estimate/next"));
  const onnx::TensorProto* init = initializer(m, "subtracted/noise_estimate");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->data_type(), onnx::TensorProto::UINT32);
  EXPECT_THAT(init->dims(), ElementsAre(13));
  EXPECT_EQ(init->raw_data(), std::string(13 * 4, '\0'));
  EXPECT_EQ(metadata(m, "lite2onnx.state"),
            R"([{"input":"subtracted/noise_estimate","output":"subtracted/noise_estimate/next",)"
            R"("kind":"op_state","tflite":"Custom_0"}])");
}

// One delay line per row: [rows, delay_length] int16 zeros.
TEST(Signal, TheDelayLinesAreOneStatePair) {
  onnx::ModelProto m = converted(op_model_json("signal_delay"));
  const onnx::TensorProto* init = initializer(m, "delayed/delay_line");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->data_type(), onnx::TensorProto::INT16);
  EXPECT_THAT(init->dims(), ElementsAre(6, 5));
  EXPECT_EQ(init->raw_data(), std::string(6 * 5 * 2, '\0'));
}

// Stateless Signal ops make no pair.
TEST(Signal, StatelessOpsHaveNoState) {
  EXPECT_EQ(metadata(converted(op_model_json("signal_rfft_64")), "lite2onnx.state"), "");
  EXPECT_EQ(metadata(converted(op_model_json("signal_pcan")), "lite2onnx.state"), "");
}

// A channel reading past the spectrum: the kernel would read out of bounds.
TEST(Signal, AFilterBankChannelOutsideTheSpectrumIsRefused) {
  nlohmann::json j = op_model_json("signal_filter_bank_sqrt");
  auto& graph = j["subgraphs"][0];
  for (auto& t : graph["tensors"])
    if (t["name"] == "channel_frequency_starts")
      j["buffers"][t["buffer"].get<int>()]["data"][2] = 200;
  expect_unsupported(j, "reads outside the spectrum or weights");
}

// Weights that are not constants: the bank is built at conversion time.
TEST(Signal, AFilterBankWithRunTimeWeightsIsRefused) {
  nlohmann::json j = op_model_json("signal_filter_bank_sqrt");
  auto& graph = j["subgraphs"][0];
  for (size_t i = 0; i < graph["tensors"].size(); ++i)
    if (graph["tensors"][i]["name"] == "weights") {
      graph["tensors"][i].erase("buffer");
      graph["inputs"].push_back(i);
    }
  expect_unsupported(j, "must be constants");
}

TEST(Signal, AWindowThatDoesNotDivideTheInputIsRefused) {
  nlohmann::json j = op_model_json("signal_window");
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == "frames" || t["name"] == "windowed") t["shape"] = {3, 41};
  expect_unsupported(j, "multiple of the window's");
}

TEST(Signal, AnRfftOutputOfTheWrongSizeIsRefused) {
  nlohmann::json j = op_model_json("signal_rfft_64");
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == "spectrum") t["shape"] = {2, 64};
  expect_unsupported(j, "fft_length + 2");
}

TEST(Signal, RfftLengthsThatAreNoPowerOfTwoAreRefused) {
  nlohmann::json j = op_model_json("signal_rfft_64");
  for (auto& t : j["subgraphs"][0]["tensors"])
    if (t["name"] == "spectrum") t["shape"] = {2, 50};
  j["subgraphs"][0]["operators"][0]["custom_options"] = flex([](flexbuffers::Builder& b) {
    b.Int("T", 7);
    b.Int("fft_length", 48);
  });
  expect_unsupported(j, "no power of two");
}

// Options out of range are an invalid model naming the field.
TEST(Signal, OptionsOutOfRangeAreInvalid) {
  nlohmann::json j = op_model_json("signal_window");
  j["subgraphs"][0]["operators"][0]["custom_options"] =
      flex([](flexbuffers::Builder& b) { b.Int("shift", 40); });
  auto r = convert_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_THAT(r.error().message, HasSubstr("shift"));
}

// Without prefill the framer's queue fills up first: its content and its
// length are two pairs.
TEST(Signal, AFramerWithoutPrefillKeepsItsQueueAndItsLength) {
  nlohmann::json j = op_model_json("signal_framer");
  j["subgraphs"][0]["operators"][0]["custom_options"] = flex([](flexbuffers::Builder& b) {
    b.Int("frame_size", 10);
    b.Int("frame_step", 4);
    b.Bool("prefill", false);
  });
  onnx::ModelProto m = converted(j);
  EXPECT_THAT(names(m.graph().input()), ElementsAre("samples", "frames/buffer", "frames/fill"));
  const onnx::TensorProto* buffer = initializer(m, "frames/buffer");
  ASSERT_NE(buffer, nullptr);
  EXPECT_THAT(buffer->dims(), ElementsAre(2, 12));  // 4 x ceil(10 / 4) per row
  const onnx::TensorProto* fill = initializer(m, "frames/fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->data_type(), onnx::TensorProto::INT32);
}

}  // namespace
}  // namespace lite2onnx
