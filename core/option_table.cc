#include "core/option_table.h"

#include <charconv>
#include <type_traits>

#include "core/layout_spec.h"

namespace lite2onnx {
namespace {

Error invalid(std::string_view label, const std::string& why) {
  return make_error(ErrorCode::kInvalidOption, std::string(label) + ": " + why);
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// "a or b", "a, b or c".
std::string alternatives(std::span<const std::string_view> words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + std::string(words[i]);
  return s;
}

// Reading a member's value from text, by the member's type.
Status read(const OptionDef& def, std::string_view text, std::string_view label, int& value) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end)
    return invalid(label, quoted(text) + " is not an integer");
  if (v < def.min || v > def.max)
    return make_error(ErrorCode::kInvalidOption,
                      std::string(label) + " " + std::string(text) + " is not supported (choose " +
                          std::to_string(def.min) + ".." + std::to_string(def.max) + ")");
  value = v;
  return ok_status();
}

Status read(const OptionDef&, std::string_view text, std::string_view label, bool& value) {
  if (text != "true" && text != "false" && text != "1" && text != "0")
    return invalid(label, quoted(text) + " (choose true, false, 1 or 0)");
  value = text == "true" || text == "1";
  return ok_status();
}

template <class Enum>
requires std::is_enum_v<Enum> Status read(const OptionDef& def, std::string_view text,
                                          std::string_view label, Enum& value) {
  for (size_t i = 0; i < def.choices.size(); ++i)
    if (def.choices[i] == text) {
      value = static_cast<Enum>(i);
      return ok_status();
    }
  return invalid(label, quoted(text) + " (choose " + alternatives(def.choices) + ")");
}

Status read(const OptionDef& def, std::string_view text, std::string_view label,
            std::vector<LayoutSpec>& value) {
  auto spec = parse_layout_spec(text, def.order_only);
  if (!spec) return invalid(label, spec.error().message);
  value.push_back(std::move(spec).value());
  return ok_status();
}

Status read(const OptionDef&, std::string_view text, std::string_view label,
            std::vector<InputShape>& value) {
  auto shape = parse_input_shape(text);
  if (!shape) return invalid(label, shape.error().message);
  value.push_back(std::move(shape).value());
  return ok_status();
}

// Text as it is: bounded (the signature key of a request goes into logs and
// error messages) and one line, so the options summary stays one line.
Status read(const OptionDef& def, std::string_view text, std::string_view label,
            std::string& value) {
  if (text.size() > static_cast<size_t>(def.max))
    return invalid(label, std::to_string(text.size()) + " bytes, more than the " +
                              std::to_string(def.max) + " it may have");
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return invalid(label, "control character " + std::to_string(static_cast<unsigned char>(c)) +
                                " in the text");
  value = text;
  return ok_status();
}

// A member's value as canonical text.
std::vector<std::string> write(const OptionDef&, int value) { return {std::to_string(value)}; }

std::vector<std::string> write(const OptionDef&, bool value) { return {value ? "true" : "false"}; }

template <class Enum>
requires std::is_enum_v<Enum> std::vector<std::string> write(const OptionDef& def, Enum value) {
  return {std::string(def.choices[static_cast<size_t>(value)])};
}

std::vector<std::string> write(const OptionDef&, const std::string& value) { return {value}; }

std::vector<std::string> write(const OptionDef&, const std::vector<LayoutSpec>& value) {
  std::vector<std::string> out;
  for (const auto& spec : value) out.push_back(spec.text());
  return out;
}

std::vector<std::string> write(const OptionDef&, const std::vector<InputShape>& value) {
  std::vector<std::string> out;
  for (const auto& shape : value) out.push_back(shape.text());
  return out;
}

template <class T>
constexpr OptionKind kind_of() {
  if constexpr (std::is_same_v<T, int>) {
    return OptionKind::kInteger;
  } else if constexpr (std::is_same_v<T, bool>) {
    return OptionKind::kBoolean;
  } else if constexpr (std::is_enum_v<T>) {
    return OptionKind::kChoice;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return OptionKind::kText;
  } else if constexpr (std::is_same_v<T, std::vector<InputShape>>) {
    return OptionKind::kShapes;
  } else {
    static_assert(std::is_same_v<T, std::vector<LayoutSpec>>, "an option of an unknown type");
    return OptionKind::kLayouts;
  }
}

// An entry whose member `Member` names: a lambda [](auto& o) -> auto& { return o.opset; }
// (the same for a const and a mutable ConvertOptions); the kind follows from the type.
template <class Member>
constexpr OptionDef option(OptionDef def, Member) {
  def.kind = kind_of<std::remove_cvref_t<std::invoke_result_t<Member, ConvertOptions&>>>();
  def.parse_member = [](const OptionDef& d, ConvertOptions& o, std::string_view text,
                        std::string_view label) { return read(d, text, label, Member{}(o)); };
  def.format_member = [](const OptionDef& d, const ConvertOptions& o) {
    return write(d, Member{}(o));
  };
  return def;
}

// choices[i] is the enum's value i.
constexpr std::string_view kQuantizationModes[] = {
    to_string(QuantizationMode::kQdq), to_string(QuantizationMode::kDequantize),
    to_string(QuantizationMode::kExact), to_string(QuantizationMode::kAuto)};
static_assert(static_cast<int>(QuantizationMode::kQdq) == 0 &&
              static_cast<int>(QuantizationMode::kDequantize) == 1 &&
              static_cast<int>(QuantizationMode::kExact) == 2 &&
              static_cast<int>(QuantizationMode::kAuto) == 3);
constexpr std::string_view kIoNames[] = {"tensor", "signature"};
static_assert(static_cast<int>(IoNames::kTensor) == 0 &&
              static_cast<int>(IoNames::kSignature) == 1);

// Bounds of the interface options' texts: an input's dimensions are TFLite's
// int32; the renames are one name per graph input or output.
constexpr int64_t kMaxInputDimension = 0x7fffffff;
constexpr size_t kMaxInputRank = 16;
constexpr int kMaxBatch = 1 << 20;
constexpr int kMaxRenameBytes = 1 << 20;

constexpr OptionDef kOptions[] = {
    option(
        {.name = "opset",
         .flag = "--opset",
         .help = "ONNX opset, 13..17",
         .min = kMinOpset,
         .max = kMaxOpset},
        [](auto& o) -> auto& { return o.opset; }),
    option(
        {.name = "explicit_layouts",
         .flag = "--explicit-layout",
         .help = "TENSOR=SRC:DST, e.g. input=NHWC:NCHW (repeatable): the layout a tensor takes "
                 "in ONNX, seeding layout propagation"},
        [](auto& o) -> auto& { return o.layout.explicit_layouts; }),
    option(
        {.name = "io_layouts",
         .flag = "--io-layout",
         .help = "TENSOR=ORDER or TENSOR=SRC:DST (repeatable): axis order of a graph "
                 "input/output in ONNX, e.g. input=NHWC keeps the TFLite order",
         .order_only = true},
        [](auto& o) -> auto& { return o.layout.io_layouts; }),
    option(
        {.name = "keep_io_layout",
         .flag = "--keep-io-layout",
         .help = "keep the TFLite axis order for every graph input and output"},
        [](auto& o) -> auto& { return o.layout.keep_io_layout; }),
    option(
        {.name = "quantization",
         .flag = "--quantization",
         .help = "auto (default): int8/uint8 quantization kept, as QuantizeLinear/"
                 "DequantizeLinear around convolutions and fully connected layers (ONNX "
                 "Runtime's integer kernels compute what TFLite's do) and as TFLite's integer "
                 "arithmetic for the ops whose Q/DQ kernels round differently (add, mul, "
                 "requantize, pooling, means, activation tables, resize); "
                 "qdq: every quantized op as QuantizeLinear/DequantizeLinear, the portable "
                 "form execution providers fuse (ONNX Runtime's CPU kernels then approximate "
                 "TFLite's rounding); "
                 "dequantize: a pure float32 model (weights folded to float, no Q/DQ); "
                 "exact: integer arithmetic that computes what TFLite's kernels compute, bit "
                 "for bit (ops without an integer form yet fail, named)",
         .choices = kQuantizationModes},
        [](auto& o) -> auto& { return o.quantization; }),
    option(
        {.name = "keep_float16_weights",
         .flag = "--keep-float16-weights",
         .help = "keep float16 weights as float16 initializers with a Cast to float32 "
                 "(default: widen them to float32)"},
        [](auto& o) -> auto& { return o.keep_float16_weights; }),
    option(
        {.name = "keep_int8_activations",
         .flag = "--keep-int8-activations",
         .help = "keep int8 activations int8 inside the graph (default: uint8 with zero point "
                 "+ 128, the same values, which ONNX Runtime's x86 integer kernels take; graph "
                 "inputs and outputs stay int8 either way)"},
        [](auto& o) -> auto& { return o.keep_int8_activations; }),
    option(
        {.name = "no_metadata",
         .flag = "--no-metadata",
         .help = "leave the TFLite Metadata (model name, author, license, normalization, value "
                 "ranges, label files) out of the ONNX metadata_props; provenance stays"},
        [](auto& o) -> auto& { return o.no_metadata; }),
    option(
        {.name = "signature",
         .flag = "--signature",
         .help = "the key of the model's SignatureDef whose subgraph to convert (default: its "
                 "first signature, or subgraph 0 when it has none)",
         .max = 1024},
        [](auto& o) -> auto& { return o.signature; }),
    option(
        {.name = "io_names",
         .flag = "--io-names",
         .help = "tensor: name the ONNX graph inputs and outputs after their TFLite tensors; "
                 "signature: after the converted signature's aliases",
         .choices = kIoNames},
        [](auto& o) -> auto& { return o.io_names; }),
    option(
        {.name = "input_shapes",
         .flag = "--input-shape",
         .help = "TENSOR=D0,D1,... e.g. input=1,224,224,3 (repeatable): fix the dynamic (-1) "
                 "dimensions of a graph input before shape inference, so the ONNX model gets "
                 "static shapes and folded shape arithmetic (a static dimension may only be "
                 "given its own value)",
         .omit_default = true},
        [](auto& o) -> auto& { return o.input_shapes; }),
    option(
        {.name = "batch",
         .flag = "--batch",
         .help = "fix the first dimension of every graph input whose first dimension is "
                 "dynamic to N (inputs named by --input-shape keep theirs; 0: leave it)",
         .min = 0,
         .max = kMaxBatch,
         .omit_default = true},
        [](auto& o) -> auto& { return o.batch; }),
    option(
        {.name = "rename_inputs",
         .flag = "--rename-inputs",
         .help = "NAME,NAME,...: new names of the graph inputs, in their order (those beyond "
                 "the list keep theirs; layout options and --input-shape take either name)",
         .max = kMaxRenameBytes,
         .omit_default = true},
        [](auto& o) -> auto& { return o.rename_inputs; }),
    option(
        {.name = "rename_outputs",
         .flag = "--rename-outputs",
         .help = "NAME,NAME,...: new names of the graph outputs, in their order",
         .max = kMaxRenameBytes,
         .omit_default = true},
        [](auto& o) -> auto& { return o.rename_outputs; }),
};

// The named tensors, comma-separated, each as TENSOR=NCHW: an I/O order read
// against its channels-last form (NHWC:NCHW), as --io-layout reads it.
std::vector<std::pair<std::string, std::string>> as_nchw(std::string_view names) {
  std::vector<std::pair<std::string, std::string>> out = {{"keep_io_layout", "true"}};
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    if (comma == std::string_view::npos) comma = names.size();
    out.emplace_back("io_layouts", std::string(names.substr(start, comma - start)) + "=NCHW");
    start = comma + 1;
  }
  return out;
}

const OptionAlias kAliases[] = {
    {.flag = "--dequantize",
     .help = "tf2onnx's spelling of --quantization dequantize",
     .expand = [](std::string_view) -> std::vector<std::pair<std::string, std::string>> {
       return {{"quantization", "dequantize"}};
     }},
    {.flag = "--inputs-as-nchw",
     .help = "NAME,NAME,... (tf2onnx): these graph inputs are NCHW in ONNX (--io-layout "
             "NAME=NCHW), and every other input and output keeps TFLite's axis order "
             "(--keep-io-layout)",
     .takes_value = true,
     .expand = as_nchw},
    {.flag = "--outputs-as-nchw",
     .help = "NAME,NAME,... (tf2onnx): these graph outputs are NCHW in ONNX (--io-layout "
             "NAME=NCHW), and every other input and output keeps TFLite's axis order "
             "(--keep-io-layout)",
     .takes_value = true,
     .expand = as_nchw},
};

}  // namespace

Status OptionDef::parse(ConvertOptions& options, std::string_view text,
                        std::string_view label) const {
  return parse_member(*this, options, text, label.empty() ? name : label);
}

std::vector<std::string> OptionDef::format(const ConvertOptions& options) const {
  return format_member(*this, options);
}

std::string OptionDef::default_text() const {
  auto texts = format(ConvertOptions{});
  return texts.empty() ? "" : texts.front();
}

std::span<const OptionDef> option_table() { return kOptions; }

std::span<const OptionAlias> option_aliases() { return kAliases; }

Status apply_alias(const OptionAlias& alias, ConvertOptions& options, std::string_view value) {
  for (const auto& [name, text] : alias.expand(value))
    if (auto st = find_option(name)->parse(options, text, alias.flag); !st) return st;
  return ok_status();
}

Result<InputShape> parse_input_shape(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalidOption, "shape '" + std::string(text) + "': " + why);
  };
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return bad("expected TENSOR=D0,D1,... (e.g. input=1,224,224,3)");
  InputShape shape{std::string(text.substr(0, eq)), {}};
  std::string_view dims = text.substr(eq + 1);
  if (dims.empty()) return bad("no dimensions (a scalar input has no dynamic dimension)");
  size_t start = 0;
  while (start <= dims.size()) {
    size_t comma = dims.find(',', start);
    if (comma == std::string_view::npos) comma = dims.size();
    const std::string_view d = dims.substr(start, comma - start);
    int64_t v = 0;
    auto [stop, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (d.empty() || ec != std::errc() || stop != d.data() + d.size() || v < 1 ||
        v > kMaxInputDimension)
      return bad("dimension '" + std::string(d) + "' is not a whole number in 1.." +
                 std::to_string(kMaxInputDimension));
    if (shape.dims.size() == kMaxInputRank)
      return bad("more than " + std::to_string(kMaxInputRank) + " dimensions");
    shape.dims.push_back(v);
    start = comma + 1;
  }
  return shape;
}

const OptionDef* find_option(std::string_view name) {
  for (const auto& def : kOptions)
    if (def.name == name) return &def;
  return nullptr;
}

Status set_option(ConvertOptions& options, std::string_view name, std::string_view text) {
  const OptionDef* def = find_option(name);
  if (!def) return make_error(ErrorCode::kInvalidOption, "unknown option " + quoted(name));
  return def->parse(options, text);
}

std::string options_summary(const ConvertOptions& options) {
  std::vector<std::vector<std::string>> texts;
  for (const auto& def : kOptions) texts.push_back(def.format(options));
  return options_summary(texts);
}

std::string options_summary(std::span<const std::vector<std::string>> texts) {
  std::string s;
  auto add = [&s](const OptionDef& def, const std::string& text) {
    s += (s.empty() ? "" : " ") + std::string(def.name) + "=" + text;
  };
  for (bool repeated : {false, true})
    for (size_t i = 0; i < std::size(kOptions) && i < texts.size(); ++i) {
      if (kOptions[i].repeated() != repeated) continue;
      if (kOptions[i].omit_default && !repeated &&
          (texts[i].empty() || texts[i] == std::vector{kOptions[i].default_text()}))
        continue;
      if (texts[i].empty() && !repeated) add(kOptions[i], kOptions[i].default_text());
      for (const auto& text : texts[i]) add(kOptions[i], text);
    }
  return s;
}

}  // namespace lite2onnx
