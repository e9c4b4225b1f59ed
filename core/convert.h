// The core's entry points. Nothing here knows about gRPC, threads or metrics.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/ir/types.h"
#include "core/options.h"
#include "core/output_buffer.h"
#include "core/status.h"
#include "core/version.h"

namespace lite2onnx {

// Converts TFLite model bytes to serialized ONNX bytes. `diagnostics` is filled
// as far as the conversion got, also when it fails.
Result<std::string> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                            Diagnostics& diagnostics);
// The same, writing the ONNX bytes into the room `output` gives (called once,
// with their exact size, when the conversion has succeeded but for writing
// them); returns their size.
Result<size_t> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                       Diagnostics& diagnostics, const OutputBuffer& output);
// The same, streaming the ONNX bytes into `output` (a file: no buffer of the
// model's size; output_buffer.h); nothing is written unless the conversion
// has succeeded but for writing them. kInternal when `output` refuses a
// write (it knows why).
Result<size_t> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                       Diagnostics& diagnostics, OutputStream& output);

// Does now, on the calling thread, what a process's first conversion otherwise
// does when it validates its result: Debian's ONNX 1.12 registers all of its
// operator schemas (444 names, every opset) on the first lookup, about 31
// million instructions, and cannot register only some. Thread-safe: a program
// about to convert once (the CLI) calls it on a second thread while it reads
// and converts the model, and a validation that starts first waits for it.
void prepare_validation();

// Loads now the libraries a conversion otherwise loads when a model first
// needs them (libzip, for a model with associated files: core/tflite/libzip.h);
// empty, or why one cannot be loaded. A process that may not load code later
// (the server's worker under its seccomp filter) calls it first.
std::string load_optional_libraries();

// What `inspect` reports about a model (ModelInfo, diagnostics.h), without converting it.
Result<ModelInfo> inspect(std::span<const std::byte> tflite, const Limits& limits = {});

// One row of the support matrix, read from the op registry.
struct OpSupport {
  int code = 0;
  std::string op;
  bool supported = false;
  std::string layout_class;
  std::string onnx;
  std::string notes;
  std::string dtypes;  // element types of the data tensors handled, ", "-separated
  // int8/uint8 in QDQ form: "rescale", "same scale", "reinterprets" or "no" (see
  // docs/operators.md).
  std::string quantized;
  bool exact = false;  // has an integer form in --quantization exact
  // The form its 8-bit nodes take in --quantization auto: "integer" (TFLite's
  // arithmetic), "integer where Q/DQ differs" or "Q/DQ", and "; hybrid:
  // integer" where hybrid nodes take it; "" without an integer form
  // (docs/operators.md).
  std::string in_auto;
};
std::vector<OpSupport> support_matrix();
// The support matrix as `lite2onnx ops --json` prints it: one object per
// builtin and supported custom op (placeholders left out), supported ones with
// their layout class, ONNX mapping, element types, quantized form and notes.
std::string support_matrix_json(const std::vector<OpSupport>& matrix, int indent = 2);

}  // namespace lite2onnx
