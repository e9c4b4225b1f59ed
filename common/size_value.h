// Byte sizes on the command line and in LITE2ONNX_* variables, one meaning in
// the CLI and the server: b, kb, mb, gb are powers of 1000, kib, mib, gib
// powers of 1024 (k, m, g alone: 1000s), case-insensitive; a plain number is
// bytes. (CLI11's AsSizeValue with kb = 1000.)
#pragma once

#include <CLI/CLI.hpp>

namespace lite2onnx {

inline CLI::AsSizeValue size_value() { return CLI::AsSizeValue(/*kb_is_1000=*/true); }

// For help texts.
inline constexpr const char* kSizeSuffixes =
    "sizes take b, kb = 1000, kib = 1024, mb, mib, gb, gib";

}  // namespace lite2onnx
