// Batch conversion: many models in one process, for `lite2onnx convert
// DIR_OR_FILES... -o OUT_DIR` and Python's lite2onnx.convert_many. Finds the
// models (folders recursively; files without the TFLite identifier are
// skipped with a note), converts them on N threads with whatever Converter it
// is given (the core in this process, or a client of lite2onnx-server), writes
// each ONNX file atomically at its mirrored path, and summarizes
// (summary.json). Knows nothing of terminals or gRPC.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/failure.h"
#include "core/convert.h"

namespace lite2onnx::batch {

// The exit code of a batch in which some models failed (the others were
// converted); every model converted is kExitOk. Not a reason of the error
// table: summary.json has each model's reason.
inline constexpr int kExitSomeFailed = 10;

// One model to convert.
struct Item {
  std::string input;   // its path: a file given, or one found in a folder given
  std::string name;    // its path relative to that folder; a file given: its file name
  std::string output;  // OUT_DIR/name with its extension replaced by .onnx
};

// A file found that is not a TFLite model, or could not be read.
struct Skipped {
  std::string input, name, note;
};

struct Plan {
  std::vector<Item> items;  // each input's models in order of name, inputs in the order given
  std::vector<Skipped> skipped;
};

// The FlatBuffer file identifier of TFLite models, bytes 4..8 of the file.
inline constexpr std::string_view kTfliteIdentifier = "TFL3";
// Whether `head` (the first 8 bytes of a file, or more) carries it.
bool has_tflite_identifier(std::span<const std::byte> head);

// The output path of a model named `name` (a relative path) in `out_dir`:
// the last extension of its file name replaced by .onnx ("a/b.tflite" ->
// "OUT/a/b.onnx", "c" -> "OUT/c.onnx").
std::string output_path(const std::string& out_dir, const std::string& name);

// The models of `inputs` (files and folders; folders are walked recursively,
// following no directory links, leaving out `out_dir` when it is inside
// one). Fails with io_error when an input does not exist or a folder cannot
// be read, and with invalid_option when two models would be written to the
// same output path.
Outcome<Plan> plan(std::span<const std::string> inputs, const std::string& out_dir);

// What converting one model gave (its bytes went to the output stream).
struct Converted {
  size_t onnx_bytes = 0;
  Diagnostics diagnostics;
  int attempts = 1;  // calls made, retries included
};
// Converts one model, writing the ONNX bytes into `out` (an OutputFile the
// batch commits: a model never needs a buffer of its size in this process).
// Each worker thread gets its own converter, from the factory.
using Converter = std::function<Outcome<Converted>(std::span<const std::byte> model,
                                                   const ConvertOptions&, OutputStream& out)>;
using ConverterFactory = std::function<Converter()>;
// The core, in this process.
Converter in_process();

// One model's line of the summary.
struct ModelReport {
  enum class Outcome { kConverted, kFailed, kSkipped };
  Outcome outcome = Outcome::kFailed;
  std::string input, name;
  std::string output;  // converted: the file written
  Failure failure;     // failed: why
  std::string note;    // skipped: why
  // converted: from the diagnostics (the server's with --server)
  int nodes = 0;       // ONNX nodes
  int transposes = 0;  // Transpose nodes in the ONNX model
  int inserted = 0;    // nodes the conversion inserted (Transpose, Reshape, ...)
  size_t model_bytes = 0, onnx_bytes = 0;
  std::vector<std::string> warnings;
  double ms = 0;          // reading, converting and writing the model (wall clock)
  double convert_ms = 0;  // the conversion itself (the diagnostics' total)
  int attempts = 0;       // calls made (retries of --server included)

  const char* outcome_name() const;
};

struct Summary {
  std::vector<ModelReport> models;  // the plan's items in order, then the skipped files
  int converted = 0, failed = 0, skipped = 0;
  int jobs = 1;
  double wall_ms = 0;
  std::string out_dir;
  std::string options;  // options_summary() of the options used
  std::string server;   // the server's address; empty: in this process

  // 0 when every model converted (skipped files do not count), else kExitSomeFailed.
  int exit_code() const { return failed ? kExitSomeFailed : 0; }
  // summary.json: counts, failures by reason, one object per model.
  std::string to_json(int indent = 2) const;
  // The table printed at the end: counts, failures by reason, the failed models.
  std::string table() const;
};

struct RunOptions {
  int jobs = 1;  // worker threads (at most one per model)
  // Called after each model, one call at a time (from the worker threads),
  // with the number of models done so far and the total.
  std::function<void(const ModelReport&, size_t done, size_t total)> on_done;
};

// Converts every item of `plan` and writes the ONNX files (parent folders
// made as needed; each written to a temporary file beside it and renamed, so
// a reader never sees a partial file). Goes on past failures; a failed
// model's output file from an earlier run is removed.
Summary run(const Plan& plan, const ConvertOptions& options, const ConverterFactory& converter,
            const RunOptions& run_options);

// Writes `bytes` to `path` atomically: a temporary file in the same folder,
// renamed over `path`. The file's mode is 0666 less the umask.
Status write_file_atomically(const std::string& path, std::string_view bytes);
// OUT_DIR/summary.json, atomically.
Status write_summary(const Summary& summary);

}  // namespace lite2onnx::batch
