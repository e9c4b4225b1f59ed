// The option table (core/option_table.h): its entries, text forms, errors, and
// the CLI's flags made from it (client/cli_options.h). The wire's side is
// tests/server/options_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>

#include "client/cli_options.h"
#include "common/size_value.h"
#include "core/option_table.h"
#include "option_cases.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::option_cases;
using testing::same_options;

TEST(OptionTable, EntriesAreWellFormed) {
  std::set<std::string_view> names, flags;
  for (const OptionDef& def : option_table()) {
    SCOPED_TRACE(def.name);
    EXPECT_TRUE(names.insert(def.name).second);
    EXPECT_TRUE(flags.insert(def.flag).second);
    EXPECT_EQ(def.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
              std::string_view::npos);
    EXPECT_EQ(def.flag.rfind("--", 0), 0u);
    EXPECT_FALSE(def.help.empty());
    EXPECT_EQ(find_option(def.name), &def);
    EXPECT_TRUE(def.kind != OptionKind::kInteger || def.min <= def.max);
    EXPECT_TRUE(def.kind != OptionKind::kChoice || def.choices.size() >= 2);
    EXPECT_TRUE(def.kind != OptionKind::kText || def.max > 0);
  }
  EXPECT_EQ(find_option("nope"), nullptr);
}

TEST(OptionTable, DefaultsAreTheCoresDefaults) {
  EXPECT_EQ(find_option("opset")->default_text(), "13");
  EXPECT_EQ(find_option("quantization")->default_text(), "auto");
  EXPECT_EQ(find_option("keep_io_layout")->default_text(), "false");
  EXPECT_EQ(find_option("explicit_layouts")->default_text(), "");
  EXPECT_EQ(find_option("signature")->default_text(), "");
  EXPECT_EQ(find_option("io_names")->default_text(), "tensor");
  ConvertOptions parsed;
  for (const OptionDef& def : option_table())
    if (!def.repeated()) {
      ASSERT_TRUE(def.parse(parsed, def.default_text())) << def.name;
    }
  EXPECT_TRUE(same_options(parsed, ConvertOptions{}));
}

// The first case sets every option of the table: a new option needs a value there.
TEST(OptionTable, TheCasesSetEveryOption) {
  for (const OptionDef& def : option_table())
    EXPECT_NE(def.format(option_cases()[0]), def.format(ConvertOptions{})) << def.name;
}

TEST(OptionTable, FormatThenParseByNameGivesTheOptions) {
  for (const ConvertOptions& want : option_cases()) {
    ConvertOptions got;
    for (const OptionDef& def : option_table())
      for (const std::string& text : def.format(want))
        ASSERT_TRUE(set_option(got, def.name, text)) << def.name << "=" << text;
    EXPECT_EQ(options_summary(got), options_summary(want));
    EXPECT_TRUE(same_options(got, want)) << options_summary(want);
  }
}

// Options added after the summary was first written are left out of it at
// their defaults, so that the models converted without them keep their bytes.
TEST(OptionTable, NewOptionsAtTheirDefaultsLeaveTheSummaryAsItWas) {
  EXPECT_EQ(options_summary(ConvertOptions{}),
            "opset=13 keep_io_layout=false quantization=auto keep_float16_weights=false "
            "keep_int8_activations=false no_metadata=false signature= io_names=tensor");
  ConvertOptions o;
  ASSERT_TRUE(set_option(o, "batch", "2"));
  ASSERT_TRUE(set_option(o, "input_shapes", "x=1,2,3"));
  ASSERT_TRUE(set_option(o, "rename_inputs", "a,b"));
  EXPECT_EQ(options_summary(o),
            "opset=13 keep_io_layout=false quantization=auto keep_float16_weights=false "
            "keep_int8_activations=false no_metadata=false signature= io_names=tensor batch=2 "
            "rename_inputs=a,b input_shapes=x=1,2,3");
}

TEST(OptionTable, TextForms) {
  ConvertOptions o;
  ASSERT_TRUE(set_option(o, "keep_io_layout", "1"));
  EXPECT_TRUE(o.layout.keep_io_layout);
  ASSERT_TRUE(set_option(o, "keep_io_layout", "0"));
  EXPECT_FALSE(o.layout.keep_io_layout);
  // TENSOR=ORDER is written back in full; repeated options append.
  ASSERT_TRUE(set_option(o, "io_layouts", "input=NCHW"));
  ASSERT_TRUE(set_option(o, "io_layouts", "output=NHWC:NHWC"));
  EXPECT_THAT(find_option("io_layouts")->format(o),
              ::testing::ElementsAre("input=NHWC:NCHW", "output=NHWC:NHWC"));
  EXPECT_EQ(options_summary(o),
            "opset=13 keep_io_layout=false quantization=auto keep_float16_weights=false "
            "keep_int8_activations=false no_metadata=false signature= io_names=tensor "
            "io_layouts=input=NHWC:NCHW io_layouts=output=NHWC:NHWC");
  // Text is kept as it is, spaces and all.
  ASSERT_TRUE(set_option(o, "signature", "decode step"));
  EXPECT_EQ(o.signature, "decode step");
  EXPECT_THAT(find_option("signature")->format(o), ::testing::ElementsAre("decode step"));
  ASSERT_TRUE(set_option(o, "io_names", "signature"));
  EXPECT_EQ(o.io_names, IoNames::kSignature);
}

// Bad text for every option is kInvalidOption naming it (or the label given).
TEST(OptionTable, InvalidTextNamesTheOption) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"opset", "abc"},
      {"opset", "12"},
      {"opset", "18"},
      {"opset", ""},
      {"explicit_layouts", "no equals sign"},
      {"explicit_layouts", "x=NHWC"},
      {"io_layouts", "input=XYZ"},
      {"keep_io_layout", "yes"},
      {"quantization", "x"},
      {"keep_float16_weights", "2"},
      {"keep_int8_activations", "True"},
      {"no_metadata", "yes"},
      {"signature", "two\nlines"},
      {"io_names", "alias"},
      {"input_shapes", "input"},
      {"input_shapes", "input=1,x,3"},
      {"input_shapes", "input=0,3"},
      {"input_shapes", "=1,2"},
      {"input_shapes", "input=2147483648"},
      {"batch", "-1"},
      {"batch", "2000000"},
      {"rename_inputs", "a\nb"},
      {"rename_outputs", std::string_view("a\0b", 3)},
  };
  std::set<std::string_view> covered;
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(std::string(name) + "=" + std::string(text));
    ConvertOptions o;
    auto st = set_option(o, name, text);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidOption);
    EXPECT_EQ(st.error().message.rfind(std::string(name), 0), 0u) << st.error().message;
    EXPECT_TRUE(same_options(o, ConvertOptions{}));
    covered.insert(name);
  }
  EXPECT_EQ(covered.size(), option_table().size());

  ConvertOptions o;
  EXPECT_EQ(set_option(o, "opset", "abc").error().message, "opset: 'abc' is not an integer");
  EXPECT_EQ(set_option(o, "opset", "12").error().message,
            "opset 12 is not supported (choose 13..17)");
  EXPECT_EQ(set_option(o, "quantization", "x").error().message,
            "quantization: 'x' (choose qdq, dequantize, exact or auto)");
  EXPECT_EQ(set_option(o, "keep_io_layout", "yes").error().message,
            "keep_io_layout: 'yes' (choose true, false, 1 or 0)");
  EXPECT_THAT(set_option(o, "explicit_layouts", "x=NHWC").error().message,
              HasSubstr("explicit_layouts: layout 'x=NHWC': expected SRC:DST"));
  // A layout letter is quoted alone only when it is ASCII: never a byte of a
  // UTF-8 character (found by fuzz_http: 'N\xc5\xb7W' was quoted as '\xc5').
  EXPECT_EQ(set_option(o, "io_layouts", "in=NHWC:N\xc5\xb7W").error().message,
            "io_layouts: layout 'in=NHWC:N\xc5\xb7W': 'N\xc5\xb7W' has a character that is not "
            "an ASCII letter");
  EXPECT_EQ(find_option("quantization")->parse(o, "x", "--quantization").error().message,
            "--quantization: 'x' (choose qdq, dequantize, exact or auto)");
  EXPECT_EQ(set_option(o, "signature", std::string(1025, 'k')).error().message,
            "signature: 1025 bytes, more than the 1024 it may have");
  EXPECT_EQ(set_option(o, "signature", "a\tb").error().message,
            "signature: control character 9 in the text");
  EXPECT_EQ(set_option(o, "io_names", "alias").error().message,
            "io_names: 'alias' (choose tensor or signature)");
  ASSERT_TRUE(set_option(o, "signature", std::string(1024, 'k')));
  auto unknown = set_option(o, "nope", "1");
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidOption);
  EXPECT_EQ(unknown.error().message, "unknown option 'nope'");
}

// The CLI's parse of a command line built from the table.
Result<ConvertOptions> parse_cli(std::vector<std::string> args) {
  CLI::App app;
  std::vector<OptionArg> option_args;
  add_conversion_options(&app, option_args);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return parse_conversion_options(option_args);
}

TEST(OptionTable, TheCliParsesWhatTheTableFormats) {
  for (const ConvertOptions& want : option_cases()) {
    std::vector<std::string> args;
    for (const OptionDef& def : option_table())
      for (const std::string& text : def.format(want)) {
        args.push_back(std::string(def.flag));
        if (def.kind == OptionKind::kBoolean)
          args.back() += text == "true" ? "" : "=" + text;
        else
          args.push_back(text);
      }
    auto got = parse_cli(args);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(options_summary(*got), options_summary(want));
    EXPECT_TRUE(same_options(*got, want)) << options_summary(want);
  }
  auto defaults = parse_cli({});
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(same_options(*defaults, ConvertOptions{}));
}

TEST(OptionTable, CliErrorsNameTheFlag) {
  EXPECT_EQ(parse_cli({"--quantization", "x"}).error().message,
            "--quantization: 'x' (choose qdq, dequantize, exact or auto)");
  EXPECT_EQ(parse_cli({"--opset", "99"}).error().message,
            "--opset 99 is not supported (choose 13..17)");
  EXPECT_THAT(parse_cli({"--io-layout", "input=NCHW", "--io-layout", "bad"}).error().message,
              HasSubstr("--io-layout: layout 'bad': "));
  EXPECT_EQ(parse_cli({"--io-names", "alias"}).error().message,
            "--io-names: 'alias' (choose tensor or signature)");
  auto signature = parse_cli({"--signature", "decode", "--io-names", "signature"});
  ASSERT_TRUE(signature);
  EXPECT_EQ(signature->signature, "decode");
  EXPECT_EQ(signature->io_names, IoNames::kSignature);
}

// tf2onnx's spellings go through the table: --inputs-as-nchw keeps every other
// input and output in TFLite's order and makes the named ones NCHW.
TEST(OptionTable, AliasesSetTheTablesOptions) {
  auto cli = parse_cli({"--inputs-as-nchw", "a,b", "--outputs-as-nchw", "y", "--dequantize"});
  ASSERT_TRUE(cli) << cli.error().message;
  EXPECT_TRUE(cli->layout.keep_io_layout);
  EXPECT_EQ(cli->quantization, QuantizationMode::kDequantize);
  EXPECT_THAT(find_option("io_layouts")->format(*cli),
              ::testing::ElementsAre("a=NHWC:NCHW", "b=NHWC:NCHW", "y=NHWC:NCHW"));
  EXPECT_THAT(parse_cli({"--inputs-as-nchw", "a,,b"}).error().message,
              HasSubstr("--inputs-as-nchw: layout '=NCHW'"));
  auto shapes = parse_cli({"--input-shape", "x=1,224,224,3", "--batch", "8"});
  ASSERT_TRUE(shapes);
  EXPECT_EQ(shapes->batch, 8);
  ASSERT_EQ(shapes->input_shapes.size(), 1u);
  EXPECT_EQ(shapes->input_shapes[0].dims, (std::vector<int64_t>{1, 224, 224, 3}));
  EXPECT_EQ(parse_cli({"--input-shape", "x=1,-1"}).error().message,
            "--input-shape: shape 'x=1,-1': dimension '-1' is not a whole number in 1..2147483647");
}

// The CLI and the server read sizes with one transform: kb is 1000, kib 1024.
TEST(OptionTable, SizeSuffixesMeanTheSameEverywhere) {
  for (auto [text, bytes] :
       {std::pair{"1kb", uint64_t{1000}}, std::pair{"1kib", uint64_t{1024}},
        std::pair{"2mib", uint64_t{2} << 20}, std::pair{"3gb", uint64_t{3000000000}},
        std::pair{"512", uint64_t{512}}}) {
    CLI::App app;
    uint64_t value = 0;
    app.add_option("--size", value)->transform(size_value());
    app.parse(std::string("--size ") + text);
    EXPECT_EQ(value, bytes) << text;
  }
}

}  // namespace
}  // namespace lite2onnx
