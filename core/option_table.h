// The conversion options, defined once: every option of ConvertOptions that a
// caller chooses (not the limits, not the cancellation hook) is one OptionDef,
// with its canonical name, kind, CLI flag, help and the text form of its value.
// The CLI registers its flags from the table (client/main.cc), the wire's
// lite2onnx.v1.ConvertOptions has one field per entry, named alike
// (common/translate.cc maps them by reflection), and parsing by canonical name
// (set_option) serves any caller that has options as text, e.g. query
// parameters (?opset=17&keep_io_layout=true) or keyword arguments.
//
// A new option: a ConvertOptions member, one entry in option_table.cc, and a
// field of the same name in proto/lite2onnx/v1/converter.proto.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/options.h"
#include "core/status.h"

namespace lite2onnx {

enum class OptionKind {
  kInteger,  // decimal, within [min, max]; wire: int32, 0 = the default
  kBoolean,  // true/false (1/0 accepted); the CLI's is a flag; wire: bool
  kChoice,   // one of `choices`; wire: an enum whose values end in _CHOICE, 0 = the default
  kLayouts,  // repeated "TENSOR=SRC:DST" (parse_layout_spec); wire: repeated string
  kText,     // any text of at most `max` bytes without control characters; wire:
             // string, "" = the default
  kShapes,   // repeated "TENSOR=D0,D1,..." (parse_input_shape); wire: repeated string
};

struct OptionDef;
// How an entry reads and writes its member; use OptionDef::parse and format.
using ParseOption = Status (*)(const OptionDef&, ConvertOptions&, std::string_view text,
                               std::string_view label);
using FormatOption = std::vector<std::string> (*)(const OptionDef&, const ConvertOptions&);

struct OptionDef {
  std::string_view name;  // canonical: snake_case, the v1.ConvertOptions field's name
  OptionKind kind = OptionKind::kInteger;  // follows from the member's type
  std::string_view flag;                   // the CLI's, e.g. "--explicit-layout"
  std::string_view help;                   // the CLI's help text
  int min = 0, max = 0;                    // kInteger; kText: max is its length in bytes
  // kChoice: the texts, in the order of the member's enum (choices[i] is value i).
  std::span<const std::string_view> choices = {};
  bool order_only = false;  // kLayouts: "TENSOR=ORDER" accepted too
  // Left out of options_summary() while at its default: options added after
  // the summary was first written, so that models converted without them keep
  // their bytes (and cache keys).
  bool omit_default = false;
  ParseOption parse_member = nullptr;
  FormatOption format_member = nullptr;

  bool repeated() const { return kind == OptionKind::kLayouts || kind == OptionKind::kShapes; }
  // Reads one value written as text and sets the member, or appends to it
  // (repeated). Errors are kInvalidOption naming `label` (default: the name),
  // e.g. "quantization: 'x' (choose qdq, dequantize or exact)"; an integer out of
  // range reads "opset 12 is not supported (choose 13..17)".
  Status parse(ConvertOptions& options, std::string_view text, std::string_view label = {}) const;
  // The canonical text of the member's value: one string, or one per element
  // when repeated (none when empty). parse() of each gives the value back.
  std::vector<std::string> format(const ConvertOptions& options) const;
  // The text of the default (format(ConvertOptions{})); "" when repeated.
  std::string default_text() const;
};

// Other spellings of options, as users of other converters type them
// (tf2onnx's --dequantize, --inputs-as-nchw, --outputs-as-nchw): each expands
// its value into (canonical name, text) pairs of the table, which parse them.
struct OptionAlias {
  std::string_view flag;  // e.g. "--inputs-as-nchw"
  std::string_view help;
  bool takes_value = false;  // false: a flag without a value
  // The table's options it sets: each (name, text) goes through set_option.
  std::vector<std::pair<std::string, std::string>> (*expand)(std::string_view value) = nullptr;
};
std::span<const OptionAlias> option_aliases();
// Applies an alias to `options` through the table; errors name `alias.flag`.
Status apply_alias(const OptionAlias& alias, ConvertOptions& options, std::string_view value);

// "TENSOR=D0,D1,...": a graph input's shape (dimensions 1..2^31-1, at most 16).
Result<InputShape> parse_input_shape(std::string_view text);

// Every option, in the order of the proto's fields (and the CLI's help).
std::span<const OptionDef> option_table();
// The entry of a canonical name; nullptr when there is none.
const OptionDef* find_option(std::string_view name);
// Parses `text` into the option of canonical name `name`; an unknown name is
// kInvalidOption "unknown option 'NAME'".
Status set_option(ConvertOptions& options, std::string_view name, std::string_view text);

// One line of "name=text" for every option: the single-valued ones first, in
// table order, then one "name=text" per element of the repeated ones (none
// when empty), e.g. "opset=13 keep_io_layout=true quantization=qdq
// keep_float16_weights=false keep_int8_activations=false no_metadata=false
// signature= io_names=tensor explicit_layouts=x=NHWC:NCHW" (an empty text is
// the default of a kText option). The request log prints it, the content
// cache keys on it and every ONNX model carries it (lite2onnx.options): every
// option changes the output, so every option is in it.
std::string options_summary(const ConvertOptions& options);
// The same from texts per option (texts[i] for option_table()[i]; an empty
// list for a single-valued option shows its default), e.g. the texts of a
// request not parsed yet.
std::string options_summary(std::span<const std::vector<std::string>> texts);

}  // namespace lite2onnx
