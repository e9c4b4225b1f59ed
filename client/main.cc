// lite2onnx command-line tool: runs the conversion core in-process, or asks a
// lite2onnx-server to (--server, through the client library in client/remote/).
// Two programs are built from it, lite2onnx and lite2onnx-remote (client/remote_args.h).
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "client/batch.h"
#include "client/cli_options.h"
#include "client/mapped_file.h"
#include "client/output_file.h"
#include "client/remote_args.h"
#include "common/error_reasons.h"
#include "common/failure.h"
#include "common/size_value.h"
#include "core/convert.h"
#include "core/provenance.h"

namespace {

using namespace lite2onnx;

// A failure as the CLI reports it: one line on stderr, `lite2onnx: NAME: message`,
// and the exit code of its row in the error-reason table (common/error_reasons.h);
// the core's codes are rows under their own names.
int report(const Failure& f) {
  std::cerr << "lite2onnx: " << f.name() << ": " << f.error.message << "\n";
  return f.reason->exit_code;
}

int fail(ErrorCode code, const std::string& message) {
  return report(failure_of(make_error(code, message)));
}

// A model's bytes: a file mapped into memory, or standard input ("-") read whole.
class ModelInput {
 public:
  static std::optional<ModelInput> open(const std::string& path, std::string* error) {
    if (path == "-") {
      std::ostringstream s;
      s << std::cin.rdbuf();
      if (std::cin.bad()) {
        *error = "cannot read standard input";
        return std::nullopt;
      }
      return ModelInput(std::nullopt, std::move(s).str());
    }
    auto file = MappedFile::open(path, error);
    if (!file) return std::nullopt;
    return ModelInput(std::move(file), {});
  }
  std::span<const std::byte> bytes() const {
    if (file_) return file_->bytes();
    return std::as_bytes(std::span(stdin_.data(), stdin_.size()));
  }

 private:
  ModelInput(std::optional<MappedFile> file, std::string data)
      : file_(std::move(file)), stdin_(std::move(data)) {}
  std::optional<MappedFile> file_;
  std::string stdin_;
};

struct ConvertArgs {
  std::vector<std::string> inputs;  // one model file; or several, or folders (a batch)
  std::string input, output;
  int jobs = 0;  // a batch's worker threads; 0: one per usable CPU
  bool json = false, verbose = false;
  std::vector<OptionArg> options;  // client/cli_options.h
  Limits limits;
};

// What one conversion may cost (core/options.h Limits), for convert and inspect.
void add_limit_options(CLI::App* cmd, Limits& l) {
  cmd->add_option("--max-operators", l.max_operators, "operators in the model")
      ->capture_default_str()
      ->group("Limits (beyond one: resource_limit, exit 5)");
  cmd->add_option("--max-tensors", l.max_tensors, "tensors in the model")
      ->capture_default_str()
      ->group("Limits (beyond one: resource_limit, exit 5)");
  cmd->add_option("--max-inputs-per-op", l.max_inputs_per_op, "inputs of one operator")
      ->capture_default_str()
      ->group("Limits (beyond one: resource_limit, exit 5)");
  cmd->add_option("--max-created-bytes", l.max_created_bytes,
                  "bytes of constants one conversion may create (folded values, DFT matrices, "
                  "converted weights); default 256MiB + 4 x the model (sizes take b, kb = 1000, "
                  "kib = 1024, mb, mib, gb, gib)")
      ->transform(size_value())
      ->group("Limits (beyond one: resource_limit, exit 5)");
  cmd->add_option("--max-output-bytes", l.max_output_bytes,
                  "bytes of the ONNX model; default 512MiB + 8 x the model, at most 2GiB - 1")
      ->transform(size_value())
      ->group("Limits (beyond one: resource_limit, exit 5)");
}

// Builds the core's options from the command line; errors name the bad flag.
Result<ConvertOptions> make_options(const ConvertArgs& a) {
  auto options = parse_conversion_options(a.options);
  if (options) options->limits = a.limits;
  return options;
}

// The process ends with _exit once its output is flushed (main): what a
// conversion leaves, and the ONNX schema registry, go with the process; their
// destructors cost about 4.6 million instructions. Builds with a sanitizer end
// through exit(), where the leak check runs.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kExitsWithoutDestructors = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kExitsWithoutDestructors = false;
#else
constexpr bool kExitsWithoutDestructors = true;
#endif
#else
constexpr bool kExitsWithoutDestructors = true;
#endif

// Registers ONNX's operator schemas on a second thread while this one reads
// and converts the model (core/convert.h prepare_validation): the validation
// at the end of the conversion waits only for what is left of it. A command
// that failed before validating does not wait for it: the process ends with
// _exit (main), or, in sanitizer builds, joins it first (exit() runs the
// registry's destructors).
class ValidationWarmUp {
 public:
  ValidationWarmUp() : thread_(prepare_validation) {}
  ValidationWarmUp(const ValidationWarmUp&) = delete;
  ValidationWarmUp& operator=(const ValidationWarmUp&) = delete;
  ~ValidationWarmUp() {
    if (kExitsWithoutDestructors)
      thread_.detach();
    else
      thread_.join();
  }

 private:
  std::thread thread_;
};

// The model's SHA-256 for its provenance metadata, hashed on a second thread
// while the conversion runs (ConvertOptions::source_sha256: written to a
// file, the model asks for it last): 0.65 ms per MB, as much as the rest of
// the conversion of a large model. Stops hashing when the conversion ended
// without asking.
class HashBeside {
 public:
  explicit HashBeside(std::span<const std::byte> model)
      : hash_(std::async(std::launch::async, [this, model] {
          return sha256_hex(model, [this] { return stop_.load(std::memory_order_relaxed); });
        })) {}
  HashBeside(const HashBeside&) = delete;
  HashBeside& operator=(const HashBeside&) = delete;
  ~HashBeside() {
    stop_ = true;
    if (hash_.valid()) hash_.wait();
  }
  std::string get() { return hash_.get(); }

 private:
  std::atomic<bool> stop_{false};
  std::future<std::string> hash_;
};
// Smaller models are hashed by the conversion itself (a thread costs more).
constexpr size_t kHashBesideBytes = size_t{4} << 20;

// The conversion, in this process or on --server, into `out` (committed by
// the caller); `diag` is filled on success. A write that fails is an
// io_error.
std::optional<Failure> run_conversion(const RemoteArgs& remote, std::span<const std::byte> model,
                                      const ConvertOptions& options, OutputFile& out,
                                      Diagnostics& diag, std::string& remote_note) {
  const auto write_failure = [&out] { return make_failure(reason_named("io_error"), out.error()); };
  if (!remote.enabled()) {
    // Streamed into the file: no buffer of the model's size.
    ConvertOptions local = options;
    std::optional<HashBeside> hash;
    if (out.positional() && model.size() >= kHashBesideBytes) {
      hash.emplace(model);
      local.source_sha256 = [&hash] { return hash->get(); };
    }
    auto result = convert(model, local, diag, out);
    if (!result) return out.error().empty() ? failure_of(result.error()) : write_failure();
    return std::nullopt;
  }
#ifdef LITE2ONNX_REMOTE
  auto connected = connect(remote);
  if (auto* f = std::get_if<Failure>(&connected)) return *f;
  const auto start = std::chrono::steady_clock::now();
  auto result = std::get<remote::Client>(connected).convert(model, options);
  if (!result) {
    // A failed call carries the error, not the diagnostics: keep what is known here.
    diag.opset = options.opset;
    diag.model_bytes = model.size();
    diag.unsupported = result.error().error.unsupported;
    return result.error();
  }
  diag = std::move(result->diagnostics);
  char note[256];
  std::snprintf(
      note, sizeof note, "server %s: %s, request id %s, %.2f ms round trip\n",
      remote.server.c_str(), result->streamed ? "ConvertStream" : "Convert",
      result->request_id.c_str(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  remote_note = note;
  if (!out.write(std::as_bytes(std::span(result->onnx)))) return write_failure();
  return std::nullopt;
#else
  (void)remote_note;
  return failure_of(make_error(ErrorCode::kInvalidOption, "--server: built without gRPC"));
#endif
}

int run_convert(const ConvertArgs& args, const RemoteArgs& remote) {
  const std::string& input = args.input;
  std::string output = args.output;
  const bool json = args.json, verbose = args.verbose;
  auto parsed = make_options(args);
  if (!parsed) return fail(parsed.error().code, parsed.error().message);
  const int opset = parsed->opset;
  // From here on, beside reading the model and converting it.
  std::optional<ValidationWarmUp> warm_up;
  if (!remote.enabled()) warm_up.emplace();
  std::string err;
  auto file = ModelInput::open(input, &err);
  if (!file) {
    std::cerr << "lite2onnx: io_error: " << err << "\n";
    return kExitIo;
  }
  if (output.empty() && input == "-") output = "-";
  // With the ONNX model on standard output, everything else goes to stderr.
  const bool to_stdout = output == "-";
  std::ostream& info = to_stdout ? std::cerr : std::cout;
  if (output.empty()) {
    output = input;
    auto dot = output.rfind('.');
    if (dot != std::string::npos && output.find('/', dot) == std::string::npos) output.resize(dot);
    output += ".onnx";
  }
  Diagnostics diag;
  std::string remote_note;
  OutputFile out(output);
  std::optional<Failure> failed =
      run_conversion(remote, file->bytes(), *parsed, out, diag, remote_note);
  if (!failed && !out.commit()) failed = make_failure(reason_named("io_error"), out.error());
  if (failed) {
    const Error& e = failed->error;
    if (json) {
      // What happened: the outcome first, the error, then the diagnostics of
      // the stages that ran (the core marks no subgraph "converted" then).
      nlohmann::ordered_json j = {{"outcome", "failed"}};
      j["error"] = {{"code", failed->name()},
                    {"exit_code", failed->reason->exit_code},
                    {"retryable", failed->reason->retryable},
                    {"message", e.message}};
      if (e.op_index >= 0) j["error"]["op_index"] = e.op_index;
      if (!e.tensor.empty()) j["error"]["tensor"] = e.tensor;
      const nlohmann::ordered_json diagnostics = nlohmann::ordered_json::parse(diag.to_json());
      for (auto it = diagnostics.begin(); it != diagnostics.end(); ++it) j[it.key()] = *it;
      info << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else if (verbose) {
      std::cerr << diag.to_text();
    }
    return report(*failed);
  }
  if (json) {
    info << diag.to_json() << "\n";
  } else {
    double total = 0;
    for (const auto& t : diag.timings)
      if (t.phase == "total") total = t.ms;
    int nodes = 0;
    for (const auto& [k, v] : diag.emitted_nodes) nodes += v;
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s -> %s: %d ONNX nodes (%zu inserted), %zu bytes, opset %d, %.2f ms\n",
                  input == "-" ? "(stdin)" : input.c_str(), to_stdout ? "(stdout)" : output.c_str(),
                  nodes, diag.inserted.size(), diag.onnx_bytes, opset, total);
    info << line;
    if (verbose) info << diag.to_text() << remote_note;
    for (const auto& w : diag.warnings) std::cerr << "lite2onnx: warning: " << w << "\n";
  }
  return kExitOk;
}

// ---- batch: `convert DIR_OR_FILES... -o OUT_DIR` (client/batch.h) ------------

// Usable CPUs (the affinity mask: a container's cpuset), at least 1.
int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// What a batch shows while it runs: on a terminal, a bar redrawn on stderr
// and a line per failed model; otherwise a plain line per model on stdout.
class Progress {
 public:
  Progress(bool terminal, bool verbose) : terminal_(terminal), verbose_(verbose) {}

  void done(const batch::ModelReport& r, size_t n, size_t total) {
    const bool failed = r.outcome == batch::ModelReport::Outcome::kFailed;
    failed_ += failed;
    if (!terminal_ || verbose_ || failed) {
      clear();
      char head[64];
      std::snprintf(head, sizeof head, "[%*zu/%zu] %-9s ", digits(total), n, total,
                    r.outcome_name());
      std::string line = head + r.name;
      if (failed) {
        line += ": " + r.failure.name() + ": " + r.failure.error.message;
      } else {
        char tail[160];
        std::snprintf(tail, sizeof tail, ": %d nodes, %d Transposes, %.2f ms", r.nodes,
                      r.transposes, r.ms);
        line += " -> " + r.output + tail;
      }
      std::cout << line << "\n" << std::flush;
      if (verbose_)
        for (const auto& w : r.warnings)
          std::cerr << "lite2onnx: warning: " << r.name << ": " << w << "\n";
    }
    if (terminal_) draw(n, total);
  }
  // Removes the bar before the summary.
  void finish() { clear(); }

 private:
  static int digits(size_t n) { return static_cast<int>(std::to_string(n).size()); }
  void clear() {
    if (terminal_ && drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }
  void draw(size_t n, size_t total) {
    constexpr size_t kWidth = 30;
    const size_t filled = total ? n * kWidth / total : kWidth;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char line[160];
    std::snprintf(line, sizeof line, "\r\033[K[%s%s] %zu/%zu models, %zu failed, %.1f s",
                  std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(), n,
                  total, failed_, seconds);
    std::cerr << line << std::flush;
    drawn_ = true;
  }

  bool terminal_, verbose_, drawn_ = false;
  size_t failed_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

int run_batch(const ConvertArgs& args, RemoteArgs remote) {
  auto options = make_options(args);
  if (!options) return fail(options.error().code, options.error().message);
  for (const auto& input : args.inputs)
    if (input == "-")
      return fail(ErrorCode::kInvalidOption,
                  "'-' (standard input) is one model: convert - -o OUT.onnx (or -o -)");
  if (args.output.empty())
    return fail(ErrorCode::kInvalidOption,
                "several inputs or a folder need -o OUT_DIR (the folder of the ONNX files)");
  std::error_code ec;
  if (std::filesystem::exists(args.output, ec) && !std::filesystem::is_directory(args.output, ec))
    return fail(ErrorCode::kInvalidOption,
                "-o '" + args.output + "' is a file: several inputs or a folder need a folder");
  auto plan = batch::plan(args.inputs, args.output);
  if (!plan) return report(plan.error());
  for (const auto& k : plan->skipped)
    std::cerr << "lite2onnx: note: skipping " << k.input << ": " << k.note << "\n";

  batch::ConverterFactory factory = [] { return batch::in_process(); };
#ifdef LITE2ONNX_REMOTE
  if (remote.enabled()) {
    if (remote.retries < 0) remote.retries = 3;
    // The TLS files are read once here, so that a bad one stops the batch before it starts.
    auto first = connect(remote);
    if (auto* f = std::get_if<Failure>(&first)) return report(*f);
    factory = [remote]() -> batch::Converter {
      auto connected = connect(remote);
      if (auto* f = std::get_if<Failure>(&connected))
        return [failure = *f](std::span<const std::byte>, const ConvertOptions&,
                              OutputStream&) -> Outcome<batch::Converted> { return failure; };
      auto client =
          std::make_shared<remote::Client>(std::move(std::get<remote::Client>(connected)));
      return [client](std::span<const std::byte> model, const ConvertOptions& o,
                      OutputStream& out) -> Outcome<batch::Converted> {
        auto result = client->convert(model, o);
        if (!result) return result.error();
        // A write that fails: the batch reads why from its OutputFile.
        if (!out.write(std::as_bytes(std::span(result->onnx))))
          return failure_of(make_error(ErrorCode::kInternal, "cannot write the model"));
        return batch::Converted{result->onnx.size(), std::move(result->diagnostics),
                                result->attempts};
      };
    };
  }
#else
  if (remote.enabled()) return fail(ErrorCode::kInvalidOption, "--server: built without gRPC");
#endif
  Progress progress(isatty(STDERR_FILENO) && !args.json, args.verbose);
  batch::RunOptions run;
  run.jobs = args.jobs > 0 ? args.jobs : usable_cpus();
  if (!args.json)
    run.on_done = [&progress](const batch::ModelReport& r, size_t n, size_t total) {
      progress.done(r, n, total);
    };
  batch::Summary summary = batch::run(*plan, *options, factory, run);
  progress.finish();
  summary.out_dir = args.output;
  summary.server = remote.server;
  if (auto written = batch::write_summary(summary); !written)
    return report(make_failure(reason_named("io_error"), written.error().message));
  if (args.json)
    std::cout << summary.to_json() << "\n";
  else
    std::cout << summary.table()
              << "summary: " << (std::filesystem::path(args.output) / "summary.json").string()
              << "\n";
  return summary.exit_code();
}

// One model file and an output file (or none): the conversion of one model,
// as it always was; anything else is a batch.
bool is_batch(const ConvertArgs& args) {
  if (args.inputs.size() != 1) return true;
  std::error_code ec;
  if (std::filesystem::is_directory(args.inputs.front(), ec)) return true;
  return !args.output.empty() &&
         (args.output.back() == '/' || std::filesystem::is_directory(args.output, ec));
}

int run_inspect(const std::string& input, bool json, const Limits& limits,
                const RemoteArgs& remote) {
  std::string err;
  auto file = ModelInput::open(input, &err);
  if (!file) {
    std::cerr << "lite2onnx: io_error: " << err << "\n";
    return kExitIo;
  }
  ModelInfo info;
  if (!remote.enabled()) {
    auto local = inspect(file->bytes(), limits);
    if (!local) return fail(local.error().code, local.error().message);
    info = std::move(local).value();
  } else {
#ifdef LITE2ONNX_REMOTE
    auto connected = connect(remote);
    if (auto* f = std::get_if<Failure>(&connected)) return report(*f);
    auto answer = std::get<remote::Client>(connected).inspect(file->bytes());
    if (!answer) return report(answer.error());
    info = std::move(answer).value();
#endif
  }
  std::cout << (json ? info.to_json() + "\n" : info.to_text());
  return kExitOk;
}

// The support matrix as the Markdown of docs/operators.md (a test keeps that file current).
std::string ops_markdown(const std::vector<OpSupport>& matrix) {
  std::string md =
      "# Operator support\n\n"
      "Generated by `lite2onnx ops --markdown` from the op registry; do not edit by hand.\n"
      "Layout classes: see docs/conversion.md (Layout). Quantized (int8/uint8, as\n"
      "QuantizeLinear/DequantizeLinear): `rescale` = real-valued op, output requantized to its\n"
      "own scale; `same scale` = TFLite copies integers, so input and output must share\n"
      "quantization; `reinterprets` = TFLite copies the integers and reads them with the\n"
      "output's own parameters; `no` = TFLite reads raw integers, which QDQ cannot express.\n"
      "How far the QDQ form is from TFLite, per op: docs/quantization-arithmetic.md (section\n"
      "10). `exact`: the op has an integer form in `--quantization exact` (TFLite's\n"
      "arithmetic bit for bit; the variants it covers: docs/conversion.md). `auto`: the form\n"
      "its 8-bit nodes take in `--quantization auto`, the default: `integer` = that integer\n"
      "form (the op's Q/DQ kernels round unlike TFLite), `Q/DQ` = ONNX Runtime's kernel for\n"
      "the Q/DQ pattern, hybrid nodes (float data, integer weights) the integer form; int16\n"
      "nodes of every op with an integer form that does more than copy take it too.\n\n"
      "| TFLite op | code | layout class | element types | quantized | exact | auto | ONNX | notes "
      "|\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  // Custom ops (code 32) are listed by custom code, supported ones only.
  constexpr int kCustomCode = 32;
  int supported = 0, total = 0, custom = 0;
  for (const auto& s : matrix) {
    if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;
    if (s.code == kCustomCode) {
      custom += s.supported;
    } else {
      ++total;
      supported += s.supported;
    }
    if (!s.supported) continue;
    md += "| " + s.op + " | " + std::to_string(s.code) + " | " + s.layout_class + " | " + s.dtypes +
          " | " + s.quantized + " | " + (s.exact ? "yes" : "") + " | " + s.in_auto + " | " +
          s.onnx + " | " + s.notes + " |\n";
  }
  md += "\n" + std::to_string(supported) + " of " + std::to_string(total) +
        " TFLite builtin operators are supported, and " + std::to_string(custom) +
        " custom operators (code 32, by custom code). Builtins not supported:";
  for (const auto& s : matrix)
    if (!s.supported && s.op.rfind("PLACEHOLDER", 0) != 0) md += " " + s.op;
  md += ".\n";
  return md;
}

int run_ops(bool json, bool markdown, const RemoteArgs& remote) {
  std::vector<OpSupport> matrix;
  if (!remote.enabled()) {
    matrix = support_matrix();
  } else {
#ifdef LITE2ONNX_REMOTE
    auto connected = connect(remote);
    if (auto* f = std::get_if<Failure>(&connected)) return report(*f);
    auto answer = std::get<remote::Client>(connected).operators();
    if (!answer) return report(answer.error());
    matrix = std::move(answer).value();
#endif
  }
  if (markdown) {
    std::cout << ops_markdown(matrix);
    return kExitOk;
  }
  if (json) {
    std::cout << support_matrix_json(matrix) << "\n";
    return kExitOk;
  }
  int supported = 0;
  for (const auto& s : matrix) {
    if (!s.supported) continue;
    ++supported;
    std::printf("%-26s %-12s %s  [%s]%s%s\n", s.op.c_str(), s.layout_class.c_str(), s.onnx.c_str(),
                s.dtypes.c_str(), s.notes.empty() ? "" : "  -- ", s.notes.c_str());
  }
  std::printf("%d TFLite builtin operators supported\n", supported);
  return kExitOk;
}

// The error-reason table: what each `lite2onnx: <name>:` line and exit code means.
int run_errors(bool json, bool markdown) {
  if (markdown) {
    std::cout << error_reasons_markdown();
    return kExitOk;
  }
  if (json) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& r : error_reasons())
      a.push_back({{"name", r.name},
                   {"reason", r.proto_name},
                   {"grpc_code", r.grpc_code_name},
                   {"exit_code", r.exit_code},
                   {"retryable", r.retryable},
                   {"http_status", r.http_status},
                   {"when", r.when}});
    std::cout << a.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%-18s %-5s %-6s %s\n", "name", "exit", "retry", "when");
  for (const auto& r : error_reasons())
    std::printf("%-18s %-5d %-6s %.*s\n", std::string(r.name).c_str(), r.exit_code,
                r.retryable ? "yes" : "no", static_cast<int>(r.when.size()), r.when.data());
  return kExitOk;
}

int run_command(int argc, char** argv) {
#ifdef LITE2ONNX_REMOTE_PROGRAM
  // The program with the gRPC client takes the same flags and does all of it,
  // parsing included; it runs in this one's place before anything is set up.
  if (names_a_server(argc, argv)) return fail(ErrorCode::kInvalidOption, run_remote_program(argv));
#endif
  CLI::App app{"lite2onnx " + lite2onnx::version() + ": convert TensorFlow Lite models to ONNX"};
  app.require_subcommand(1);
  app.set_version_flag("--version", lite2onnx::version());

  ConvertArgs args;
  std::string input;
  bool json = false;
  auto* convert_cmd = app.add_subcommand("convert", "convert MODEL.tflite to ONNX");
  convert_cmd->add_option("model", args.inputs,
                          "TFLite model file ('-': standard input); or several, or folders "
                          "(searched recursively): a batch, converted into -o OUT_DIR with the "
                          "same relative paths");
  std::string tflite_flag;
  convert_cmd->add_option("--tflite", tflite_flag, "the TFLite model file (tf2onnx's spelling)");
  convert_cmd->add_option("-o,--output", args.output,
                          "ONNX output file (default: MODEL.onnx; '-': standard output, the "
                          "default for a model from standard input); for a batch, the output "
                          "folder (it gets summary.json)");
  convert_cmd
      ->add_option("-j,--jobs", args.jobs,
                   "a batch's conversions at a time (default: one per usable CPU)")
      ->check(CLI::Range(1, 256));
  add_conversion_options(convert_cmd, args.options);
  add_limit_options(convert_cmd, args.limits);
  convert_cmd->add_flag("--json", args.json, "print diagnostics as JSON on stdout");
  convert_cmd->add_flag("-v,--verbose", args.verbose, "print full diagnostics");
  RemoteArgs remote;

  auto* inspect_cmd = app.add_subcommand("inspect", "show tensors, ops and what is unsupported");
  inspect_cmd->add_option("model", input, "TFLite model file")->required();
  inspect_cmd->add_flag("--json", json, "print as JSON");
  add_limit_options(inspect_cmd, args.limits);

  auto* ops_cmd = app.add_subcommand("ops", "print the operator support matrix");
  ops_cmd->add_flag("--json", json, "print as JSON");
  bool markdown = false;
  ops_cmd->add_flag("--markdown", markdown, "print the Markdown of docs/operators.md");
  auto* errors_cmd = app.add_subcommand(
      "errors", "print the error reasons: the names of error lines, exit codes, what to retry");
  errors_cmd->add_flag("--json", json, "print as JSON");
  errors_cmd->add_flag("--markdown", markdown, "print the Markdown table of docs/service.md");
#if defined(LITE2ONNX_REMOTE) || defined(LITE2ONNX_REMOTE_PROGRAM)
  for (auto* cmd : {convert_cmd, inspect_cmd, ops_cmd}) add_remote_options(cmd, remote);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "lite2onnx: invalid_option: " << e.what() << " (see --help)\n";
    return kExitBadOptions;
  }
  try {
    remote.verbose = args.verbose;
    if (*convert_cmd) {
      if (!tflite_flag.empty()) args.inputs.insert(args.inputs.begin(), tflite_flag);
      if (args.inputs.empty())
        return fail(ErrorCode::kInvalidOption,
                    "convert needs a model: MODEL.tflite, --tflite MODEL.tflite or - (standard "
                    "input) (see --help)");
      if (is_batch(args)) return run_batch(args, remote);
      args.input = args.inputs.front();
      return run_convert(args, remote);
    }
    if (*inspect_cmd) return run_inspect(input, json, args.limits, remote);
    if (*ops_cmd) return run_ops(json, markdown, remote);
    if (*errors_cmd) return run_errors(json, markdown);
  } catch (const std::exception& e) {
    std::cerr << "lite2onnx: internal: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitBadOptions;
}

}  // namespace

int main(int argc, char** argv) {
  const int code = run_command(argc, argv);
  if (!kExitsWithoutDestructors) return code;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
