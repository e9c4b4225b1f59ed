// Conversion benchmark: TFLite bytes in memory -> ONNX bytes in memory, through
// lite2onnx::convert (reading, checks, layout, lowering, ONNX validation and
// serialization). Real models come from the model corpus; the large float CNN is
// generated here, in memory, with the FlatBuffers builder and our TFLite schema;
// the Synthetic/* graphs (200k-op chain, one tensor read by 200k ops, one op
// with 100k inputs) come from the hostile-model generators of the unit tests
// (tests/unit/hostile_graphs.h), converted with the count limits raised.
//
// Counters: model_MB and onnx_MB (MiB), peak_rss_MB (getrusage ru_maxrss, MiB,
// process-wide: run each benchmark in its own process, see bench/run.sh),
// rss_before_MB (resident set when the benchmark started, model already loaded),
// first_ms (the first, untimed conversion: cold in a fresh process),
// and <phase>_ms: mean time per phase from Diagnostics::timings.
#include <benchmark/benchmark.h>
#include <flatbuffers/flatbuffers.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cnn_model.h"
#include "core/convert.h"
#include "hostile_graphs.h"
#include "schema_generated.h"

#ifndef LITE2ONNX_SOURCE_DIR
#define LITE2ONNX_SOURCE_DIR "."
#endif

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Model bytes that stay alive for the whole process: a file's contents or a
// finished FlatBuffer (kept in the builder's own allocation, no extra copy).
struct ModelBytes {
  std::vector<std::byte> file;
  flatbuffers::DetachedBuffer built;
  std::string error;  // non-empty: the model is unavailable

  std::span<const std::byte> bytes() const {
    if (built.data()) return {reinterpret_cast<const std::byte*>(built.data()), built.size()};
    return file;
  }
};

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double current_rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / kMiB;
}

std::filesystem::path corpus_dir() {
  if (const char* env = std::getenv("LITE2ONNX_TEST_MODELS"); env && *env) return env;
  return std::filesystem::path(LITE2ONNX_SOURCE_DIR) / ".." / "shared" / "models";
}

ModelBytes read_corpus_model(const std::string& relative) {
  ModelBytes m;
  std::filesystem::path path = corpus_dir() / relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    m.error = path.string() + " not found (set LITE2ONNX_TEST_MODELS)";
    return m;
  }
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  m.file.resize(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(m.file.data()), size))
    m.error = "cannot read " + path.string();
  return m;
}

ModelBytes cnn(const lite2onnx::bench::CnnSpec& spec) {
  ModelBytes m;
  m.built = lite2onnx::bench::build_cnn(spec, &m.error);
  return m;
}

// Models are made (read or generated) on first use, so a process running one
// benchmark only holds that model.
using ModelSource = std::function<ModelBytes()>;

const ModelBytes& model_for(const std::string& name, const ModelSource& source) {
  static std::map<std::string, std::unique_ptr<ModelBytes>> cache;
  auto& slot = cache[name];
  if (!slot) slot = std::make_unique<ModelBytes>(source());
  return *slot;
}

ModelSource generated(std::function<std::vector<std::byte>()> build) {
  return [build = std::move(build)] {
    ModelBytes m;
    m.file = build();
    return m;
  };
}

void BM_Convert(benchmark::State& state, const std::string& name, const ModelSource& source,
                const lite2onnx::Limits& limits) {
  const ModelBytes& model = model_for(name, source);
  if (!model.error.empty()) {
    state.SkipWithError(model.error.c_str());
    return;
  }
  const std::span<const std::byte> bytes = model.bytes();
  const double rss_before = current_rss_mib();
  lite2onnx::ConvertOptions options;
  options.limits = limits;

  // Sanity check, outside the timed loop. In a fresh process this is also the
  // cold conversion (ONNX schema registry built on first use): reported as first_ms.
  size_t onnx_bytes = 0;
  double first_ms = 0;
  {
    lite2onnx::Diagnostics diag;
    const auto start = std::chrono::steady_clock::now();
    auto onnx = lite2onnx::convert(bytes, options, diag);
    first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!onnx) {
      static std::string message;
      message = name + ": conversion failed: " + onnx.error().message;
      std::fprintf(stderr, "%s\n", message.c_str());
      state.SkipWithError(message.c_str());
      return;
    }
    onnx_bytes = onnx->size();
  }

  std::map<std::string, double> phase_ms;
  for (auto _ : state) {
    lite2onnx::Diagnostics diag;
    auto onnx = lite2onnx::convert(bytes, options, diag);
    benchmark::DoNotOptimize(onnx);
    if (!onnx) {
      state.SkipWithError("conversion failed inside the timed loop");
      break;
    }
    for (const auto& t : diag.timings) phase_ms[t.phase] += t.ms;
    benchmark::ClobberMemory();
  }

  const auto iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes.size()) * state.iterations());
  state.counters["model_MB"] = static_cast<double>(bytes.size()) / kMiB;
  state.counters["onnx_MB"] = static_cast<double>(onnx_bytes) / kMiB;
  state.counters["rss_before_MB"] = rss_before;
  state.counters["first_ms"] = first_ms;
  state.counters["peak_rss_MB"] = peak_rss_mib();
  if (iterations > 0)
    for (const auto& [phase, ms] : phase_ms) state.counters[phase + "_ms"] = ms / iterations;
}

void register_all() {
  struct CorpusModel {
    const char* name;
    const char* path;
  };
  for (const CorpusModel& m : {
           CorpusModel{"mobilenet_v1_0.25_128", "tflite2onnx/mobilenet_v1_0.25_128.tflite"},
           CorpusModel{"mobilenet_v1_0.25_224_1_default_1",
                       "tflite-support/mobilenet_v1_0.25_224_1_default_1.tflite"},
           // Quantized (QDQ): uint8 per-tensor and int8 per-channel.
           CorpusModel{"mobilenet_v2_1.0_224_quant",
                       "coral-test_data/mobilenet_v2_1.0_224_quant.tflite"},
           CorpusModel{"tf2_mobilenet_v2_1.0_224_ptq",
                       "coral-test_data/tf2_mobilenet_v2_1.0_224_ptq.tflite"},
       }) {
    std::string name = m.name;
    std::string path = m.path;
    benchmark::RegisterBenchmark(("BM_Convert/" + name).c_str(), BM_Convert, name,
                                 ModelSource([path] { return read_corpus_model(path); }),
                                 lite2onnx::Limits{})
        ->Unit(benchmark::kMillisecond);
  }
  // ~108 MiB of weights: 12 x (512x3x3x512 + 512) float32.
  benchmark::RegisterBenchmark("BM_Convert/large_cnn", BM_Convert, std::string("large_cnn"),
                               ModelSource([] {
                                 return cnn({12, 512, 32});
                               }),
                               lite2onnx::Limits{})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(5);
  // The same graph at 1/16 of the weights (~6.8 MiB): for profiling under
  // callgrind and to see how the cost scales with weight bytes.
  benchmark::RegisterBenchmark("BM_Convert/medium_cnn", BM_Convert, std::string("medium_cnn"),
                               ModelSource([] {
                                 return cnn({12, 128, 32});
                               }),
                               lite2onnx::Limits{})
      ->Unit(benchmark::kMillisecond);

  // Graphs of 200k ops (issue 14): every pass must stay linear in the graph.
  // Default options except the count limits, raised past these graphs (the
  // defaults stop at 30,000 operators, 200,000 tensors and 65,536 inputs per
  // op); the byte budgets keep their defaults, which these models stay far
  // below. One conversion per repetition (plus the untimed first one).
  lite2onnx::Limits large;
  large.max_operators = 1'000'000;
  large.max_tensors = 1'000'000;
  large.max_inputs_per_op = 1'000'000;
  struct SyntheticModel {
    const char* name;
    std::function<std::vector<std::byte>()> build;
  };
  for (const SyntheticModel& m : {
           // input -> 200,000 x ABS -> output.
           SyntheticModel{"chain_200k", [] { return lite2onnx::testing::abs_chain(200'000); }},
           // input read by 200,000 ABS, whose outputs one CONCATENATION joins.
           SyntheticModel{"fan_out_200k",
                          [] { return lite2onnx::testing::fan_out_concat(200'000); }},
           // 100,000 graph inputs -> one CONCATENATION.
           SyntheticModel{"wide_op_100k",
                          [] { return lite2onnx::testing::many_graph_inputs(100'000); }},
       }) {
    std::string name = std::string("Synthetic/") + m.name;
    benchmark::RegisterBenchmark(("BM_Convert/" + name).c_str(), BM_Convert, name,
                                 generated(m.build), large)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
