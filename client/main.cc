// lite2onnx command-line tool: runs the conversion core in-process.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/convert.h"
#include "core/layout_spec.h"

namespace {

using namespace lite2onnx;

// Exit codes, one per failure class (documented in the README).
enum Exit : int {
  kOk = 0,
  kInternalError = 1,
  kBadOptions = 2,
  kInvalidModel = 3,
  kUnsupported = 4,
  kResourceLimit = 5,
  kIoError = 6,
};

int exit_code(ErrorCode c) {
  switch (c) {
    case ErrorCode::kInvalidModel:
      return kInvalidModel;
    case ErrorCode::kUnsupported:
      return kUnsupported;
    case ErrorCode::kInvalidOption:
      return kBadOptions;
    case ErrorCode::kResourceLimit:
      return kResourceLimit;
    case ErrorCode::kCancelled:
    case ErrorCode::kInternal:
      return kInternalError;
  }
  return kInternalError;
}

// A read-only memory map of a file: the model is never copied.
class MappedFile {
 public:
  static std::optional<MappedFile> open(const std::string& path, std::string* error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot open '" + path + "': " + std::strerror(errno);
      return std::nullopt;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      *error = "'" + path + "' is not a regular file";
      ::close(fd);
      return std::nullopt;
    }
    MappedFile f;
    f.size_ = static_cast<size_t>(st.st_size);
    if (f.size_ > 0) {
      void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        *error = "cannot map '" + path + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
      }
      f.data_ = p;
    }
    ::close(fd);
    return f;
  }
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_) munmap(data_, size_);
  }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(data_), data_ ? size_ : 0};
  }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

int fail(ErrorCode code, const std::string& message) {
  std::cerr << "lite2onnx: " << to_string(code) << ": " << message << "\n";
  return exit_code(code);
}

struct ConvertArgs {
  std::string input, output;
  int opset = 13;
  bool json = false, verbose = false;
  std::vector<std::string> explicit_layouts, io_layouts;
  bool keep_io_layout = false;
  std::string quantization = "qdq";
  bool keep_float16_weights = false;
};

// Builds the core's options from the command line; errors name the bad flag.
Result<ConvertOptions> make_options(const ConvertArgs& a) {
  ConvertOptions options;
  options.opset = a.opset;
  for (const auto& text : a.explicit_layouts) {
    auto spec = parse_layout_spec(text);
    if (!spec)
      return make_error(ErrorCode::kInvalidOption, "--explicit-layout: " + spec.error().message);
    options.layout.explicit_layouts.push_back(*spec);
  }
  for (const auto& text : a.io_layouts) {
    auto spec = parse_layout_spec(text, /*order_only=*/true);
    if (!spec) return make_error(ErrorCode::kInvalidOption, "--io-layout: " + spec.error().message);
    options.layout.io_layouts.push_back(*spec);
  }
  options.layout.keep_io_layout = a.keep_io_layout;
  options.keep_float16_weights = a.keep_float16_weights;
  if (a.quantization == "qdq") {
    options.quantization = QuantizationMode::kQdq;
  } else if (a.quantization == "dequantize") {
    options.quantization = QuantizationMode::kDequantize;
  } else {
    return make_error(ErrorCode::kInvalidOption,
                      "--quantization: '" + a.quantization + "' (choose qdq or dequantize)");
  }
  return options;
}

int run_convert(const ConvertArgs& args) {
  const std::string& input = args.input;
  std::string output = args.output;
  const bool json = args.json, verbose = args.verbose;
  const int opset = args.opset;
  auto parsed = make_options(args);
  if (!parsed) return fail(parsed.error().code, parsed.error().message);
  std::string err;
  auto file = MappedFile::open(input, &err);
  if (!file) {
    std::cerr << "lite2onnx: io_error: " << err << "\n";
    return kIoError;
  }
  if (output.empty()) {
    output = input;
    auto dot = output.rfind('.');
    if (dot != std::string::npos && output.find('/', dot) == std::string::npos) output.resize(dot);
    output += ".onnx";
  }
  Diagnostics diag;
  auto onnx = convert(file->bytes(), *parsed, diag);
  if (!onnx) {
    const Error& e = onnx.error();
    if (json) {
      auto j = nlohmann::ordered_json::parse(diag.to_json());
      j["error"] = {{"code", to_string(e.code)}, {"message", e.message}};
      if (e.op_index >= 0) j["error"]["op_index"] = e.op_index;
      if (!e.tensor.empty()) j["error"]["tensor"] = e.tensor;
      std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else if (verbose) {
      std::cerr << diag.to_text();
    }
    return fail(e.code, e.message);
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(onnx->data(), static_cast<std::streamsize>(onnx->size()));
  out.close();
  if (!out) {
    std::cerr << "lite2onnx: io_error: cannot write '" << output << "'\n";
    return kIoError;
  }
  if (json) {
    std::cout << diag.to_json() << "\n";
  } else {
    double total = 0;
    for (const auto& t : diag.timings)
      if (t.phase == "total") total = t.ms;
    int nodes = 0;
    for (const auto& [k, v] : diag.emitted_nodes) nodes += v;
    std::printf("%s -> %s: %d ONNX nodes (%zu inserted), %zu bytes, opset %d, %.2f ms\n",
                input.c_str(), output.c_str(), nodes, diag.inserted.size(), diag.onnx_bytes, opset,
                total);
    if (verbose) std::cout << diag.to_text();
    for (const auto& w : diag.warnings) std::cerr << "lite2onnx: warning: " << w << "\n";
  }
  return kOk;
}

int run_inspect(const std::string& input, bool json) {
  std::string err;
  auto file = MappedFile::open(input, &err);
  if (!file) {
    std::cerr << "lite2onnx: io_error: " << err << "\n";
    return kIoError;
  }
  auto info = inspect(file->bytes());
  if (!info) return fail(info.error().code, info.error().message);
  std::cout << (json ? info->to_json() + "\n" : info->to_text());
  return kOk;
}

// The support matrix as the Markdown of docs/operators.md (a test keeps that file current).
std::string ops_markdown(const std::vector<OpSupport>& matrix) {
  std::string md =
      "# Operator support\n\n"
      "Generated by `lite2onnx ops --markdown` from the op registry; do not edit by hand.\n"
      "Layout classes: see the Layout section of the README. Quantized (int8/uint8, as\n"
      "QuantizeLinear/DequantizeLinear): `rescale` = real-valued op, output requantized to its\n"
      "own scale; `same scale` = TFLite copies integers, so input and output must share\n"
      "quantization; `no` = TFLite reads raw integers, which QDQ cannot express.\n\n"
      "| TFLite op | code | layout class | element types | quantized | ONNX | notes |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  int supported = 0, total = 0;
  for (const auto& s : matrix) {
    if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;
    ++total;
    if (!s.supported) continue;
    ++supported;
    md += "| " + s.op + " | " + std::to_string(s.code) + " | " + s.layout_class + " | " + s.dtypes +
          " | " + s.quantized + " | " + s.onnx + " | " + s.notes + " |\n";
  }
  md += "\n" + std::to_string(supported) + " of " + std::to_string(total) +
        " TFLite builtin operators are supported. Not supported:";
  for (const auto& s : matrix)
    if (!s.supported && s.op.rfind("PLACEHOLDER", 0) != 0) md += " " + s.op;
  md += ".\n";
  return md;
}

int run_ops(bool json, bool markdown) {
  auto matrix = support_matrix();
  if (markdown) {
    std::cout << ops_markdown(matrix);
    return kOk;
  }
  if (json) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& s : matrix) {
      if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;
      nlohmann::ordered_json o = {{"op", s.op}, {"code", s.code}, {"supported", s.supported}};
      if (s.supported) {
        o["layout_class"] = s.layout_class;
        o["onnx"] = s.onnx;
        nlohmann::ordered_json types = nlohmann::ordered_json::array();
        for (size_t pos = 0; pos < s.dtypes.size();) {
          size_t end = s.dtypes.find(", ", pos);
          if (end == std::string::npos) end = s.dtypes.size();
          types.push_back(s.dtypes.substr(pos, end - pos));
          pos = end + 2;
        }
        o["dtypes"] = std::move(types);
        o["quantized"] = s.quantized;
        if (!s.notes.empty()) o["notes"] = s.notes;
      }
      a.push_back(std::move(o));
    }
    std::cout << a.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    return kOk;
  }
  int supported = 0;
  for (const auto& s : matrix) {
    if (!s.supported) continue;
    ++supported;
    std::printf("%-26s %-12s %s  [%s]%s%s\n", s.op.c_str(), s.layout_class.c_str(), s.onnx.c_str(),
                s.dtypes.c_str(), s.notes.empty() ? "" : "  -- ", s.notes.c_str());
  }
  std::printf("%d TFLite builtin operators supported\n", supported);
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lite2onnx " + lite2onnx::version() + ": convert TensorFlow Lite models to ONNX"};
  app.require_subcommand(1);
  app.set_version_flag("--version", lite2onnx::version());

  ConvertArgs args;
  std::string input;
  bool json = false;
  auto* convert_cmd = app.add_subcommand("convert", "convert MODEL.tflite to ONNX");
  convert_cmd->add_option("model", args.input, "TFLite model file")->required();
  convert_cmd->add_option("-o,--output", args.output, "ONNX output file (default: MODEL.onnx)");
  convert_cmd->add_option("--opset", args.opset, "ONNX opset, 13..17")->capture_default_str();
  convert_cmd->add_option("--explicit-layout", args.explicit_layouts,
                          "TENSOR=SRC:DST, e.g. input=NHWC:NCHW (repeatable): the layout a tensor "
                          "takes in ONNX, seeding layout propagation");
  convert_cmd->add_option("--io-layout", args.io_layouts,
                          "TENSOR=ORDER or TENSOR=SRC:DST (repeatable): axis order of a graph "
                          "input/output in ONNX, e.g. input=NHWC keeps the TFLite order");
  convert_cmd->add_flag("--keep-io-layout", args.keep_io_layout,
                        "keep the TFLite axis order for every graph input and output");
  convert_cmd
      ->add_option("--quantization", args.quantization,
                   "qdq: keep int8/uint8 quantization as QuantizeLinear/DequantizeLinear; "
                   "dequantize: a pure float32 model (weights folded to float, no Q/DQ)")
      ->capture_default_str();
  convert_cmd->add_flag("--keep-float16-weights", args.keep_float16_weights,
                        "keep float16 weights as float16 initializers with a Cast to float32 "
                        "(default: widen them to float32)");
  convert_cmd->add_flag("--json", args.json, "print diagnostics as JSON on stdout");
  convert_cmd->add_flag("-v,--verbose", args.verbose, "print full diagnostics");

  auto* inspect_cmd = app.add_subcommand("inspect", "show tensors, ops and what is unsupported");
  inspect_cmd->add_option("model", input, "TFLite model file")->required();
  inspect_cmd->add_flag("--json", json, "print as JSON");

  auto* ops_cmd = app.add_subcommand("ops", "print the operator support matrix");
  ops_cmd->add_flag("--json", json, "print as JSON");
  bool markdown = false;
  ops_cmd->add_flag("--markdown", markdown, "print the Markdown of docs/operators.md");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "lite2onnx: invalid_option: " << e.what() << " (see --help)\n";
    return kBadOptions;
  }
  try {
    if (*convert_cmd) return run_convert(args);
    if (*inspect_cmd) return run_inspect(input, json);
    if (*ops_cmd) return run_ops(json, markdown);
  } catch (const std::exception& e) {
    std::cerr << "lite2onnx: internal: " << e.what() << "\n";
    return kInternalError;
  }
  return kBadOptions;
}
