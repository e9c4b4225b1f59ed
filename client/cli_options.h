// The conversion options on the command line: one flag per entry of the
// option table (core/option_table.h), parsed by it.
#pragma once

#include <string>
#include <vector>

#include "core/option_table.h"

namespace CLI {
class App;
}

namespace lite2onnx {

// What the command line says of one conversion option: the texts given, or a
// flag's value (kBoolean: CLI11 reads --flag, --flag=false, =no, =0 ...).
struct OptionArg {
  std::vector<std::string> texts;
  bool flag = false;
};

// Adds a flag per option to `cmd`, with the table's help and defaults, and one
// per alias (option_aliases(): tf2onnx's spellings); what the command line
// gives lands in `args` (args[i] for option_table()[i], then one per alias).
void add_conversion_options(CLI::App* cmd, std::vector<OptionArg>& args);

// The options `args` give (everything else at its default; aliases applied
// after the table's flags, through the table); errors
// (kInvalidOption) name the flag, e.g. "--quantization: 'x' (choose qdq, dequantize or exact)".
Result<ConvertOptions> parse_conversion_options(const std::vector<OptionArg>& args);

}  // namespace lite2onnx
