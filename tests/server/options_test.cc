// The wire's options against the option table (core/option_table.h): one
// field per entry, of the entry's type, and to_proto/to_core/summary
// (common/translate.h) giving back what the table gives. No server runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>

#include "common/translate.h"
#include "core/option_table.h"
#include "tests/unit/option_cases.h"

namespace lite2onnx {
namespace {

using google::protobuf::FieldDescriptor;
using testing::option_cases;
using testing::same_options;

// The field type an option's kind is carried in.
FieldDescriptor::Type wire_type(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return FieldDescriptor::TYPE_INT32;
    case OptionKind::kBoolean:
      return FieldDescriptor::TYPE_BOOL;
    case OptionKind::kChoice:
      return FieldDescriptor::TYPE_ENUM;
    case OptionKind::kLayouts:
    case OptionKind::kText:
    case OptionKind::kShapes:
      return FieldDescriptor::TYPE_STRING;
  }
  return FieldDescriptor::TYPE_BYTES;
}

TEST(OptionWire, EveryFieldIsAnEntryOfTheTableAndBack) {
  const auto* message = v1::ConvertOptions::descriptor();
  ASSERT_EQ(static_cast<size_t>(message->field_count()), option_table().size());
  for (int i = 0; i < message->field_count(); ++i)
    EXPECT_NE(find_option(message->field(i)->name()), nullptr) << message->field(i)->name();
  for (const OptionDef& def : option_table()) {
    SCOPED_TRACE(def.name);
    const FieldDescriptor* field = message->FindFieldByName(std::string(def.name));
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->type(), wire_type(def.kind));
    EXPECT_EQ(field->is_repeated(), def.repeated());
    if (def.kind != OptionKind::kChoice) continue;
    // Value 0 is UNSPECIFIED (the default); every other value names one choice.
    const auto* values = field->enum_type();
    EXPECT_THAT(values->value(0)->name(), ::testing::EndsWith("_UNSPECIFIED"));
    EXPECT_EQ(values->value(0)->number(), 0);
    ASSERT_EQ(static_cast<size_t>(values->value_count()), def.choices.size() + 1);
    for (size_t c = 0; c < def.choices.size(); ++c) {
      std::string suffix = "_" + std::string(def.choices[c]);
      for (char& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      int matches = 0;
      for (int v = 1; v < values->value_count(); ++v)
        matches += values->value(v)->name().ends_with(suffix);
      EXPECT_EQ(matches, 1) << def.choices[c];
    }
  }
}

TEST(OptionWire, ToProtoThenToCoreGivesTheOptions) {
  for (const ConvertOptions& want : option_cases()) {
    const v1::ConvertOptions wire = to_proto(want);
    auto got = to_core(wire);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(options_summary(*got), options_summary(want));
    EXPECT_TRUE(same_options(*got, want)) << options_summary(want);
    // The log's summary is the same text, at most 256 characters.
    std::string bounded = options_summary(want);
    if (bounded.size() > 256) bounded = bounded.substr(0, 253) + "...";
    EXPECT_EQ(summary(wire), bounded);
  }
  const v1::ConvertOptions all = to_proto(option_cases()[0]);
  EXPECT_EQ(all.opset(), 17);
  EXPECT_EQ(all.quantization(), v1::QUANTIZATION_MODE_DEQUANTIZE);
  EXPECT_THAT(all.io_layouts(), ::testing::ElementsAre("input=NHWC:NCHW", "output=ABC:CAB"));
  EXPECT_TRUE(all.keep_int8_activations());
  EXPECT_TRUE(all.no_metadata());
  EXPECT_EQ(all.signature(), "serving_default");
  EXPECT_EQ(all.io_names(), v1::IO_NAMES_SIGNATURE);
  // The default text is no text on the wire.
  EXPECT_EQ(to_proto(ConvertOptions{}).signature(), "");
}

// Zero values are the defaults; the wire's layout texts are read as the CLI's.
TEST(OptionWire, ZeroValuesAreTheDefaults) {
  auto defaults = to_core(v1::ConvertOptions{});
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(same_options(*defaults, ConvertOptions{}));
  EXPECT_EQ(summary(v1::ConvertOptions{}), options_summary(ConvertOptions{}));
  v1::ConvertOptions wire;
  wire.set_quantization(v1::QUANTIZATION_MODE_QDQ);
  wire.add_io_layouts("input=NCHW");
  auto got = to_core(wire);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->quantization, QuantizationMode::kQdq);
  EXPECT_EQ(got->layout.io_layouts.at(0).text(), "input=NHWC:NCHW");
  v1::ConvertOptions signature;
  signature.set_signature("decode");
  signature.set_io_names(v1::IO_NAMES_TENSOR);
  got = to_core(signature);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->signature, "decode");
  EXPECT_EQ(got->io_names, IoNames::kTensor);
}

TEST(OptionWire, ErrorsNameTheField) {
  v1::ConvertOptions opset;
  opset.set_opset(12);
  EXPECT_EQ(to_core(opset).error().message, "opset 12 is not supported (choose 13..17)");
  EXPECT_THAT(summary(opset), ::testing::StartsWith("opset=12 "));

  v1::ConvertOptions layouts;
  layouts.add_explicit_layouts("input=NHWC:NCHW");
  layouts.add_explicit_layouts("no equals sign");
  auto e = to_core(layouts).error();
  EXPECT_EQ(e.code, ErrorCode::kInvalidOption);
  EXPECT_EQ(e.message.rfind("explicit_layouts[1]: layout 'no equals sign': ", 0), 0u) << e.message;
  v1::ConvertOptions io;
  io.add_io_layouts("input=XYZ");
  EXPECT_EQ(to_core(io).error().message.rfind("io_layouts[0]: ", 0), 0u);

  v1::ConvertOptions quantization;
  quantization.set_quantization(static_cast<v1::QuantizationMode>(7));
  EXPECT_EQ(to_core(quantization).error().message,
            "quantization: '7' (choose qdq, dequantize, exact or auto)");
  EXPECT_THAT(summary(quantization), ::testing::HasSubstr(" quantization=7 "));

  v1::ConvertOptions signature;
  signature.set_signature("two\nlines");
  EXPECT_EQ(to_core(signature).error().message, "signature: control character 10 in the text");
  v1::ConvertOptions io_names;
  io_names.set_io_names(static_cast<v1::IoNames>(9));
  EXPECT_EQ(to_core(io_names).error().message, "io_names: '9' (choose tensor or signature)");
}

TEST(OptionWire, TheSummaryIsBounded) {
  v1::ConvertOptions wire;
  for (int i = 0; i < 100; ++i) wire.add_explicit_layouts("tensor" + std::to_string(i) + "=AB:BA");
  const std::string s = summary(wire);
  EXPECT_EQ(s.size(), 256u);
  EXPECT_THAT(s, ::testing::StartsWith(options_summary(ConvertOptions{}) + " explicit_layouts="));
  EXPECT_THAT(s, ::testing::EndsWith("..."));
}

}  // namespace
}  // namespace lite2onnx
