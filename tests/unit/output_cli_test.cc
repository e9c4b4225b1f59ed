// The CLI's streamed output (client/output_file.h), run as a user runs it: the
// file and standard output hold the in-process conversion's bytes (a model
// large enough to be hashed on a second thread among them); a write that
// fails (a full device, a file size limit standing in for a full disk) is an
// io_error that leaves what was there; a conversion that fails never touches
// the output; a new file gets the umask's mode, a replaced one keeps its own,
// and a symbolic link is written through.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hostile.h"

namespace lite2onnx::hostile {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void spit(const fs::path& p, const Bytes& bytes) {
  spit(p, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// `args` after the program; `file_size_limit` (bytes, 0: none) with SIGXFSZ
// ignored, so that a write past it fails with EFBIG as one past a full disk
// fails with ENOSPC.
CliRun run_cli(const std::vector<std::string>& args, const fs::path& dir,
               rlim_t file_size_limit = 0, mode_t mask = 022) {
  std::vector<std::string> argv = {LITE2ONNX_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path out = dir / "cli.stdout", err = dir / "cli.stderr";
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      _exit(126);
    umask(mask);
    if (file_size_limit) {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{file_size_limit, file_size_limit};
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
    }
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliRun r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// The files in `dir`, by name.
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class CliOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lite2onnx_output_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// CONV_2D [1, 4, 4, in] -> [1, 4, 4, out]: an [out, 3, 3, in] float32 filter,
// permuted on the way.
Bytes conv(int64_t out, int64_t in) {
  ModelJson m;
  const int code = m.builtin("CONV_2D", 3);
  std::vector<float> values(static_cast<size_t>(out * 9 * in));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 997) / 997.0f;
  const int x = m.tensor("x", {1, 4, 4, in});
  const int w = m.f32("w", {out, 3, 3, in}, values);
  const int y = m.tensor("y", {1, 4, 4, out});
  m.op(code, {x, w, -1}, {y}, "Conv2DOptions", kStride1);
  m.io({x}, {y});
  return m.bytes();
}

TEST_F(CliOutput, FileAndStandardOutputHoldTheInProcessBytes) {
  struct Model {
    std::string name;
    Bytes bytes;
  };
  std::vector<Model> models = {
      // 4.6 MB: hashed beside the conversion, written last.
      {"conv_64x3x3x2003", conv(64, 2003)},
      {"conv_5x3x3x7", conv(5, 7)},
      {"q_conv2d", read_file(op_model("q_conv2d"))},
      {"dequantize_f16_conv", read_file(op_model("dequantize_f16_conv"))},
  };
  const std::string corpus = corpus_dir() + "/coral-test_data/mobilenet_v2_1.0_224_quant.tflite";
  if (fs::exists(corpus)) models.push_back({"mobilenet_v2_1.0_224_quant", read_file(corpus)});
  for (const Model& m : models) {
    SCOPED_TRACE(m.name);
    Diagnostics d;
    auto want = convert(m.bytes, {}, d);
    ASSERT_TRUE(want) << want.error().message;
    const fs::path model = dir_ / (m.name + ".tflite"), onnx = dir_ / (m.name + ".onnx");
    spit(model, m.bytes);
    CliRun file = run_cli({"convert", model.string(), "-o", onnx.string()}, dir_);
    ASSERT_EQ(file.exit_code, 0) << file.err;
    EXPECT_TRUE(slurp(onnx) == *want) << "the file";
    CliRun piped = run_cli({"convert", model.string(), "-o", "-"}, dir_);
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_TRUE(piped.out == *want) << "standard output";
    // Written again over itself: the same bytes, no file left beside it.
    file = run_cli({"convert", model.string(), "-o", onnx.string()}, dir_);
    ASSERT_EQ(file.exit_code, 0) << file.err;
    EXPECT_TRUE(slurp(onnx) == *want) << "the file, replaced";
    EXPECT_EQ(files_in(dir_).size(), 2 * (&m - models.data() + 1)) << "a temporary file left";
  }
}

TEST_F(CliOutput, FullDeviceIsAnIoError) {
  const fs::path model = dir_ / "m.tflite";
  spit(model, conv(5, 7));
  CliRun r = run_cli({"convert", model.string(), "-o", "/dev/full"}, dir_);
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_EQ(r.err, "lite2onnx: io_error: cannot write '/dev/full': No space left on device\n");
  r = run_cli({"convert", model.string(), "-o", "/dev/full", "--json"}, dir_);
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.out, HasSubstr("\"code\": \"io_error\""));
}

TEST_F(CliOutput, WriteThatFailsLeavesWhatWasThere) {
  const fs::path model = dir_ / "m.tflite", onnx = dir_ / "m.onnx";
  spit(model, conv(64, 2003));
  spit(onnx, std::string("what was there"));
  // Past 1 MiB a write fails (EFBIG), as past a full disk (ENOSPC).
  const CliRun r = run_cli({"convert", model.string(), "-o", onnx.string()}, dir_, 1 << 20);
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_EQ(r.err, "lite2onnx: io_error: cannot write '" + onnx.string() + "': File too large\n");
  EXPECT_EQ(slurp(onnx), "what was there");
  EXPECT_EQ(files_in(dir_), (std::vector<std::string>{"m.onnx", "m.tflite"}));
}

TEST_F(CliOutput, FailedConversionNeverTouchesTheOutput) {
  const fs::path model = dir_ / "bad.tflite", onnx = dir_ / "bad.onnx";
  Bytes truncated = conv(5, 7);
  truncated.resize(truncated.size() / 2);
  spit(model, truncated);
  spit(onnx, std::string("what was there"));
  const CliRun r = run_cli({"convert", model.string(), "-o", onnx.string()}, dir_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.rfind("lite2onnx: invalid_model: ", 0), 0u) << r.err;
  EXPECT_EQ(slurp(onnx), "what was there");
  EXPECT_EQ(files_in(dir_), (std::vector<std::string>{"bad.onnx", "bad.tflite"}));
}

TEST_F(CliOutput, ModesAndLinks) {
  const fs::path model = dir_ / "m.tflite";
  spit(model, conv(5, 7));
  Diagnostics d;
  auto want = convert(read_file(model.string()), {}, d);
  ASSERT_TRUE(want);
  // A new file: 0666 less the umask.
  const fs::path fresh = dir_ / "fresh.onnx";
  ASSERT_EQ(run_cli({"convert", model.string(), "-o", fresh.string()}, dir_, 0, 027).exit_code, 0);
  EXPECT_EQ(fs::status(fresh).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // A file replaced keeps its mode.
  const fs::path kept = dir_ / "kept.onnx";
  spit(kept, std::string("old"));
  fs::permissions(kept, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(run_cli({"convert", model.string(), "-o", kept.string()}, dir_).exit_code, 0);
  EXPECT_EQ(fs::status(kept).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(slurp(kept) == *want);
  // A symbolic link stays one; the file it names gets the model.
  const fs::path target = dir_ / "target.onnx", link = dir_ / "link.onnx";
  spit(target, std::string("old"));
  fs::create_symlink(target.filename(), link);
  ASSERT_EQ(run_cli({"convert", model.string(), "-o", link.string()}, dir_).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(slurp(target) == *want);
}

}  // namespace
}  // namespace lite2onnx::hostile
