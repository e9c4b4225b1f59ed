// Replays every committed fuzz finding (tests/fuzz_regressions/<target>/<file>)
// through the fuzz target that found it (fuzz/targets.h), in a forked child
// with a time limit, so it stays fixed. Also checks that the structure-aware
// generator keeps producing models that reach the converter's passes.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/ops/registry.h"
#include "core/tflite/reader.h"
#include "fuzz/graph_generator.h"
#include "fuzz/targets.h"

namespace lite2onnx {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr unsigned kSlowdown = 4;
#else
constexpr unsigned kSlowdown = 1;
#endif

// Findings the core does not handle yet (see the report in fuzz/README.md):
// still replayed, and reported as skipped while they fail. Once one passes,
// the test fails until it is removed from here.
const std::map<std::string, std::string>& known_failures() {
  static const std::map<std::string, std::string> known = {};
  return known;
}

struct Case {
  std::string target;  // the directory name: read, convert, inspect, graph
  std::string file;
  std::string path;
};

std::vector<Case> regression_cases() {
  std::vector<Case> out;
  fs::path root = fs::path(LITE2ONNX_SOURCE_DIR) / "tests" / "fuzz_regressions";
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(root, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path(), ec))
      if (f.is_regular_file() && f.path().filename() != "README.md")
        out.push_back(
            {dir.path().filename().string(), f.path().filename().string(), f.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.path < b.path; });
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs `body` in a forked child that gets `seconds` of CPU time (a guard
// against an endless loop, which burns CPU; CPU time, not wall time, so that a
// loaded machine changes nothing); returns "" when it exited normally, else
// how it ended.
template <class Body>
std::string run_isolated(unsigned seconds, Body body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit cpu{seconds, seconds + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    body();
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))
    return "did not finish within " + std::to_string(seconds) + " s of CPU";
  if (WIFSIGNALED(status)) return "crashed with signal " + std::to_string(WTERMSIG(status));
  return "exited with code " + std::to_string(WEXITSTATUS(status)) + " (sanitizer report?)";
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.target << "/" << c.file; }

class FuzzRegression : public ::testing::TestWithParam<Case> {};

TEST_P(FuzzRegression, EndsInAValue) {
  const Case& c = GetParam();
  fuzz::Target target = fuzz::target_named(c.target);
  ASSERT_NE(target, nullptr) << "unknown fuzz target directory '" << c.target << "'";
  std::vector<uint8_t> input = read_bytes(c.path);
  // strict_* inputs broke the contract only in strict mode: replayed strict.
  bool strict = c.file.rfind("strict_", 0) == 0;
  std::string died = run_isolated(30 * kSlowdown, [&] {
    if (strict) ::setenv("LITE2ONNX_FUZZ_STRICT", "1", 1);
    target(input);
  });
  auto known = known_failures().find(c.target + "/" + c.file);
  if (known != known_failures().end()) {
    if (!died.empty()) GTEST_SKIP() << known->second << " (still " << died << ")";
    FAIL() << c.target << "/" << c.file << " passes now: remove it from known_failures()";
  }
  EXPECT_EQ(died, "") << c.path;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.target + "_" + info.param.file;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Inputs, FuzzRegression, ::testing::ValuesIn(regression_cases()),
                         case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FuzzRegression);

TEST(FuzzRegression, KnownFailuresHaveTheirInputs) {
  for (const auto& [name, why] : known_failures())
    EXPECT_TRUE(fs::exists(fs::path(LITE2ONNX_SOURCE_DIR) / "tests" / "fuzz_regressions" / name))
        << name << " (" << why << ")";
}

// Finding 6 (the convert target's first version passed the model at offset 1):
// FlatBuffers reads fields in place, so misaligned model bytes are refused
// instead of read with misaligned loads.
TEST(FuzzFindings, MisalignedModelBytesAreRefused) {
  std::vector<uint8_t> file =
      read_bytes((fs::path(LITE2ONNX_SOURCE_DIR) / "tests" / "fuzz_regressions" / "convert" /
                  "finding5b_misaligned_int64_constant")
                     .string());
  ASSERT_GT(file.size(), 1u);  // a 0 byte, then the model
  std::vector<uint64_t> storage(file.size() / 8 + 2);
  auto* base = reinterpret_cast<std::byte*>(storage.data());
  std::memcpy(base + 8, file.data() + 1, file.size() - 1);
  std::span<const std::byte> aligned(base + 8, file.size() - 1);
  Diagnostics d;
  EXPECT_TRUE(convert(aligned, ConvertOptions{}, d).ok());
  std::memmove(base + 9, base + 8, file.size() - 1);
  std::span<const std::byte> misaligned(base + 9, file.size() - 1);
  auto r = convert(misaligned, ConvertOptions{}, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption) << r.error().message;
  auto info = inspect(misaligned);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, ErrorCode::kInvalidOption);
}

// ---- the generator ----------------------------------------------------------

struct GeneratorStats {
  int models = 0, read = 0, converted = 0;
  std::map<ErrorCode, int> errors;
  int unsupported_without_code = 0;  // unsupported ops listed without a reason_code
};

// Generates models from seeded random decisions and converts them, in a child
// (a crash there is a finding of its own); returns what happened.
GeneratorStats generate_and_convert(int models) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::string died = run_isolated(120 * kSlowdown, [&] {
    ::close(fds[0]);
    GeneratorStats s;
    std::mt19937 rng(13);
    for (int i = 0; i < models; ++i) {
      std::vector<uint8_t> decisions(static_cast<size_t>(64 + rng() % 512));
      for (auto& b : decisions) b = static_cast<uint8_t>(rng());
      std::vector<uint8_t> model = fuzz::generate_model(decisions);
      std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(model.data()),
                                       model.size()};
      ++s.models;
      if (tflite_reader::read(bytes, Limits{}, ops::read_options)) ++s.read;
      Diagnostics d;
      auto r = convert(bytes, ConvertOptions{}, d);
      if (r) {
        ++s.converted;
        continue;
      }
      ++s.errors[r.error().code];
      for (const UnsupportedOp& u : r.error().unsupported)
        s.unsupported_without_code += u.reason_code.empty();
    }
    int record[3 + 6 + 1] = {s.models, s.read, s.converted};
    for (auto [code, count] : s.errors) record[3 + static_cast<int>(code)] = count;
    record[3 + 6] = s.unsupported_without_code;
    if (::write(fds[1], record, sizeof record) != sizeof record) ::_exit(1);
  });
  ::close(fds[1]);
  int record[3 + 6 + 1] = {};
  ssize_t got = ::read(fds[0], record, sizeof record);
  ::close(fds[0]);
  EXPECT_EQ(died, "") << "the converter, on generated models";
  GeneratorStats s;
  if (got != sizeof record) return s;
  s.models = record[0];
  s.read = record[1];
  s.converted = record[2];
  for (int code = 0; code < 6; ++code)
    if (record[3 + code]) s.errors[static_cast<ErrorCode>(code)] = record[3 + code];
  s.unsupported_without_code = record[3 + 6];
  return s;
}

// The generator exists to get past the reader into the passes: most of its
// models must read, and a fair share must convert all the way.
TEST(GraphGenerator, ModelsReachThePasses) {
  GeneratorStats s = generate_and_convert(300);
  std::string errors;
  for (auto [code, count] : s.errors)
    errors += std::string(" ") + to_string(code) + "=" + std::to_string(count);
  std::printf("generated %d models: %d read, %d converted;%s\n", s.models, s.read, s.converted,
              errors.c_str());
  EXPECT_EQ(s.models, 300);
  EXPECT_GE(s.read, s.models * 9 / 10);
  EXPECT_GE(s.converted, s.models / 3);
  EXPECT_EQ(s.unsupported_without_code, 0) << "every unsupported op has a reason_code";
}

}  // namespace
}  // namespace lite2onnx
