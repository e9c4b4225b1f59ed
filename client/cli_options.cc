#include "client/cli_options.h"

#include <CLI/CLI.hpp>

namespace lite2onnx {

void add_conversion_options(CLI::App* cmd, std::vector<OptionArg>& args) {
  const auto table = option_table();
  const auto aliases = option_aliases();
  args.resize(table.size() + aliases.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const OptionDef& def = table[i];
    const std::string flag(def.flag), help(def.help);
    if (def.kind == OptionKind::kBoolean) {
      args[i].flag = def.default_text() == "true";
      cmd->add_flag(flag, args[i].flag, help);
    } else if (def.repeated()) {
      // One value per occurrence (repeat the flag): a model path after it
      // stays the positional argument.
      cmd->add_option(flag, args[i].texts, help)->allow_extra_args(false);
    } else {
      cmd->add_option(flag, args[i].texts, help)
          ->expected(1)
          ->allow_extra_args(false)
          ->type_name(def.kind == OptionKind::kInteger ? "INT" : "TEXT")
          ->default_str(def.default_text());
    }
  }
  for (size_t i = 0; i < aliases.size(); ++i) {
    OptionArg& arg = args[table.size() + i];
    const std::string flag(aliases[i].flag), help(aliases[i].help);
    if (aliases[i].takes_value)
      cmd->add_option(flag, arg.texts, help)->allow_extra_args(false)->group("tf2onnx spellings");
    else
      cmd->add_flag(flag, arg.flag, help)->group("tf2onnx spellings");
  }
}

Result<ConvertOptions> parse_conversion_options(const std::vector<OptionArg>& args) {
  ConvertOptions options;
  const auto table = option_table();
  for (size_t i = 0; i < table.size() && i < args.size(); ++i) {
    std::vector<std::string> texts = args[i].texts;
    if (table[i].kind == OptionKind::kBoolean) texts = {args[i].flag ? "true" : "false"};
    for (const auto& text : texts)
      if (auto st = table[i].parse(options, text, table[i].flag); !st) return st.take_error();
  }
  const auto aliases = option_aliases();
  for (size_t i = 0; i < aliases.size() && table.size() + i < args.size(); ++i) {
    const OptionArg& arg = args[table.size() + i];
    if (!aliases[i].takes_value && arg.flag)
      if (auto st = apply_alias(aliases[i], options, ""); !st) return st.take_error();
    for (const auto& text : arg.texts)
      if (auto st = apply_alias(aliases[i], options, text); !st) return st.take_error();
  }
  return options;
}

}  // namespace lite2onnx
