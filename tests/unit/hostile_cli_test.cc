// Hostile models through the lite2onnx CLI, as a user would run it: each must
// end in a clean error (exit 3 invalid model, 4 unsupported, 5 resource limit,
// with a one-line message) or a converted model, within a bound of CPU time
// and 1 GiB of peak memory. The models are valid FlatBuffers made to exhaust a converter:
// deep, wide and fan-out graphs, shared tables, constant amplification, large
// spectral lowering (hostile_graphs.h), and the JSON reproductions of
// tests/models/hostile.
#include <gtest/gtest.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hostile_graphs.h"

namespace lite2onnx::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// CPU seconds, not wall time: the bound is on the work a graph costs. Wall
// time is reported, never asserted: with both cores busy it was 3 to 5 times
// the CPU time. Each bound is at least 3x the most this machine measured with
// both cores kept busy by another process (docs/limits.md, "Measuring the
// hostile models"): 3.35 s for the costliest model that converts (29,999 int8
// convolutions in dequantize mode), 0.11 s for the costliest one a limit
// refuses (each limit trips before the work it bounds).
constexpr double kMaxCpuSeconds = 10;
constexpr double kMaxRefusedCpuSeconds = 2;
constexpr long kMaxRssMiB = 1024;
// A run past this is killed, so a hang fails one test instead of the suite
// (a hang guard, not a bound on speed: 12x the slowest wall time seen).
constexpr double kKillSeconds = 200;

struct Run {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system
  long peak_rss_mib = 0;
  std::string stderr_text;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Run run_cli(const fs::path& model, const std::vector<std::string>& args, const fs::path& dir) {
  const fs::path out = dir / (model.stem().string() + ".onnx");
  const fs::path err = dir / (model.stem().string() + ".err");
  std::vector<std::string> argv = {LITE2ONNX_CLI, "convert", model.string(), "-o", out.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto start = Clock::now();
  std::fflush(stdout);  // or the child writes this process's buffered lines again
  pid_t pid = fork();
  if (pid == 0) {
    FILE* e = std::freopen(err.c_str(), "w", stderr);
    FILE* o = std::freopen("/dev/null", "w", stdout);
    if (!e || !o) _exit(126);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  Run r;
  int status = 0;
  rusage usage{};
  for (;;) {
    pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::duration<double>(Clock::now() - start).count() > kKillSeconds) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  r.peak_rss_mib = usage.ru_maxrss / 1024;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.stderr_text = slurp(err);
  return r;
}

// `want_exit`: the one exit code the model must end with, or -1 for any clean one.
void expect_clean(const std::string& name, const std::string& what, const Run& r,
                  int want_exit = -1) {
  SCOPED_TRACE(name + " (" + what + ")");
  if (want_exit >= 0) {
    EXPECT_EQ(r.exit_code, want_exit) << r.stderr_text;
  }
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "; stderr: " << r.stderr_text;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3 || r.exit_code == 4 || r.exit_code == 5)
      << "exit " << r.exit_code << ": " << r.stderr_text;
  if (r.exit_code != 0) {
    EXPECT_EQ(r.stderr_text.rfind("lite2onnx: ", 0), 0u)
        << "an error is one line 'lite2onnx: CODE: message', got: " << r.stderr_text;
  }
  EXPECT_LT(r.cpu_seconds, r.exit_code == 0 ? kMaxCpuSeconds : kMaxRefusedCpuSeconds)
      << "CPU seconds";
  EXPECT_LT(r.peak_rss_mib, kMaxRssMiB) << "MiB peak RSS";
  std::printf("  %-18s exit %d  %6.2f s (%6.2f s CPU)  %5ld MiB  %s\n", name.c_str(), r.exit_code,
              r.seconds, r.cpu_seconds, r.peak_rss_mib,
              r.stderr_text.substr(0, r.stderr_text.find('\n')).c_str());
}

class HostileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lite2onnx_hostile_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Each model is built and run in turn (they are large: one at a time keeps
// the test's own memory small).
TEST_F(HostileCli, GeneratedGraphsEndCleanlyWithinTimeAndMemory) {
  for (const auto& m : hostile_models()) {
    const fs::path file = dir_ / (m.name + ".tflite");
    {
      const std::vector<std::byte> bytes = m.build();
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    }
    malloc_trim(0);  // the child's peak RSS starts from this process's
    expect_clean(m.name, m.what, run_cli(file, m.args, dir_), m.refused ? 5 : 0);
    fs::remove(file);
  }
}

TEST_F(HostileCli, JsonReproductionsEndCleanlyWithinTimeAndMemory) {
  const fs::path models = fs::path(LITE2ONNX_TEST_MODELS_DIR) / "hostile";
  int seen = 0;
  for (const auto& e : fs::directory_iterator(models)) {
    if (e.path().extension() != ".tflite") continue;
    ++seen;
    expect_clean(e.path().stem().string(), "tests/models/hostile", run_cli(e.path(), {}, dir_));
  }
  EXPECT_GE(seen, 2) << "hostile JSON models missing in " << models;
}

}  // namespace
}  // namespace lite2onnx::testing
