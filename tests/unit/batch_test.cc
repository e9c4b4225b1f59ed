// Batch conversion (client/batch.h): finding the models, output paths, the
// atomic write, running a plan with a converter that fails on purpose, and
// the summary. The CLI's batch end to end is ctest cli.batch
// (tests/cli/batch_test.sh).
#include "client/batch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace lite2onnx::batch {
namespace {

namespace fs = std::filesystem;

class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("lite2onnx_batch_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A file of `bytes`; a model when they carry the identifier.
  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = root_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  static std::string model(const std::string& tag) {
    return std::string("\x10\0\0\0TFL3", 8) + tag;
  }

  fs::path root_;
};

TEST_F(BatchTest, TheIdentifierDecides) {
  EXPECT_TRUE(has_tflite_identifier(std::as_bytes(std::span(model("").data(), 8))));
  const std::string short_file = "\x10\0\0\0TFL";
  EXPECT_FALSE(has_tflite_identifier(std::as_bytes(std::span(short_file.data(), 7))));
  const std::string other = "\x10\0\0\0TFL2";
  EXPECT_FALSE(has_tflite_identifier(std::as_bytes(std::span(other.data(), 8))));
}

TEST_F(BatchTest, OutputPathsReplaceTheLastExtension) {
  EXPECT_EQ(output_path("out", "a/b.tflite"), "out/a/b.onnx");
  EXPECT_EQ(output_path("out", "c"), "out/c.onnx");
  EXPECT_EQ(output_path("out/", "d.v2.lite"), "out/d.v2.onnx");
}

TEST_F(BatchTest, PlanWalksFoldersSortedAndSkipsWhatIsNoModel) {
  write("in/z.tflite", model("z"));
  write("in/a/m.bin", model("m"));
  write("in/a/notes.txt", "hello");
  write("in/empty.tflite", "");
  write("in/out/old.tflite", model("old"));  // the output folder, inside the input: left out
  const std::string given = write("single.tflite", model("s"));
  const std::vector<std::string> inputs{(root_ / "in").string(), given};
  auto p = plan(inputs, (root_ / "in" / "out").string());
  ASSERT_TRUE(p) << p.error().error.message;
  std::vector<std::string> names, outputs;
  for (const auto& item : p->items) {
    names.push_back(item.name);
    outputs.push_back(fs::path(item.output).lexically_relative(root_ / "in" / "out").string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a/m.bin", "z.tflite", "single.tflite"}));
  EXPECT_EQ(outputs, (std::vector<std::string>{"a/m.onnx", "z.onnx", "single.onnx"}));
  std::set<std::string> skipped;
  for (const auto& k : p->skipped) skipped.insert(k.name);
  EXPECT_EQ(skipped, (std::set<std::string>{"a/notes.txt", "empty.tflite"}));
}

TEST_F(BatchTest, PlanRefusesMissingInputsAndCollidingOutputs) {
  auto missing = plan(std::vector<std::string>{(root_ / "nope").string()}, "out");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().name(), "io_error");
  EXPECT_EQ(missing.error().reason->exit_code, kExitIo);
  write("c/m.tflite", model("1"));
  write("c/m.lite", model("2"));
  auto clash = plan(std::vector<std::string>{(root_ / "c").string()}, (root_ / "o").string());
  ASSERT_FALSE(clash);
  EXPECT_EQ(clash.error().name(), "invalid_option");
  EXPECT_NE(clash.error().error.message.find("would both be written"), std::string::npos);
  // A model named .onnx, converted beside itself.
  write("d/m.onnx", model("3"));
  auto itself = plan(std::vector<std::string>{(root_ / "d").string()}, (root_ / "d").string());
  ASSERT_FALSE(itself);
  EXPECT_EQ(itself.error().name(), "invalid_option");
  EXPECT_NE(itself.error().error.message.find("would be written over the model"),
            std::string::npos);
}

TEST_F(BatchTest, WritesAtomicallyWithThePlainMode) {
  const std::string path = (root_ / "x.onnx").string();
  ASSERT_TRUE(write_file_atomically(path, "first"));
  ASSERT_TRUE(write_file_atomically(path, "second"));
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text, "second");
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  EXPECT_EQ(std::distance(fs::directory_iterator(root_), fs::directory_iterator()), 1);
  EXPECT_FALSE(write_file_atomically((root_ / "no" / "dir.onnx").string(), "x"));
}

// A plan run with a converter that names the model in its output and fails
// on models tagged "bad": every item is reported once, on its own thread's
// converter, in the plan's order, and the summary counts them.
TEST_F(BatchTest, RunGoesOnPastFailuresAndSummarizes) {
  for (int i = 0; i < 12; ++i)
    write("in/m" + std::to_string(i / 10) + std::to_string(i % 10) + ".tflite",
          model(i % 4 == 3 ? "bad" : "ok" + std::to_string(i)));
  write("in/readme.txt", "no model");
  const std::vector<std::string> inputs{(root_ / "in").string()};
  auto p = plan(inputs, (root_ / "out").string());
  ASSERT_TRUE(p);
  std::atomic<int> converters{0};
  std::mutex threads_mutex;
  std::set<std::thread::id> threads;
  ConverterFactory factory = [&]() -> Converter {
    ++converters;
    return [&](std::span<const std::byte> m, const ConvertOptions&,
               OutputStream& out) -> Outcome<Converted> {
      {
        std::lock_guard lock(threads_mutex);
        threads.insert(std::this_thread::get_id());
      }
      const std::string tag(reinterpret_cast<const char*>(m.data()) + 8, m.size() - 8);
      if (tag == "bad") return failure_of(make_error(ErrorCode::kUnsupported, "bad model"));
      Converted c;
      const std::string onnx = "onnx:" + tag;
      if (!out.write(std::as_bytes(std::span(onnx))))
        return failure_of(make_error(ErrorCode::kInternal, "write"));
      c.onnx_bytes = onnx.size();
      c.diagnostics.emitted_nodes = {{"Conv", 3}, {"Transpose", 1}};
      c.diagnostics.timings = {{"total", 1.5}};
      return c;
    };
  };
  std::vector<size_t> done;
  RunOptions run_options;
  run_options.jobs = 3;
  run_options.on_done = [&](const ModelReport&, size_t n, size_t total) {
    EXPECT_EQ(total, 12u);
    done.push_back(n);
  };
  Summary s = run(*p, ConvertOptions{}, factory, run_options);
  EXPECT_EQ(converters.load(), 3);
  EXPECT_EQ(done.size(), 12u);
  EXPECT_EQ(done.back(), 12u);
  EXPECT_EQ(s.converted, 9);
  EXPECT_EQ(s.failed, 3);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.exit_code(), kExitSomeFailed);
  ASSERT_EQ(s.models.size(), 13u);
  EXPECT_EQ(s.models[3].name, "m03.tflite");
  EXPECT_EQ(s.models[3].failure.name(), "unsupported");
  EXPECT_EQ(s.models[0].nodes, 4);
  EXPECT_EQ(s.models[0].transposes, 1);
  EXPECT_EQ(s.models[0].convert_ms, 1.5);
  std::ifstream f(root_ / "out" / "m00.onnx");
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text, "onnx:ok0");
  EXPECT_FALSE(fs::exists(root_ / "out" / "m03.onnx"));
  s.out_dir = (root_ / "out").string();
  ASSERT_TRUE(write_summary(s));
  auto j = nlohmann::json::parse(std::ifstream(root_ / "out" / "summary.json"));
  EXPECT_EQ(j["counts"]["converted"], 9);
  EXPECT_EQ(j["failed_by_reason"]["unsupported"], 3);
  EXPECT_EQ(j["models"][3]["error"]["exit_code"], kExitUnsupported);
  EXPECT_EQ(j["models"][12]["outcome"], "skipped");
  EXPECT_NE(s.table().find("12 models in "), std::string::npos);
  EXPECT_NE(s.table().find("m03.tflite: unsupported: bad model"), std::string::npos);
}

// Each model is streamed into its file: a conversion that fails after
// writing part of it leaves neither that part nor the file of an earlier
// run, and a failed write is an io_error naming the file.
TEST_F(BatchTest, StreamedOutputLeavesNothingOfAFailure) {
  write("in/half.tflite", model("half"));
  write("in/full.tflite", model("full"));
  const std::vector<std::string> inputs{(root_ / "in").string()};
  auto p = plan(inputs, (root_ / "out").string());
  ASSERT_TRUE(p);
  write("out/half.onnx", "from an earlier run");
  ConverterFactory factory = [] {
    return [](std::span<const std::byte> m, const ConvertOptions&,
              OutputStream& out) -> Outcome<Converted> {
      const std::string tag(reinterpret_cast<const char*>(m.data()) + 8, m.size() - 8);
      const std::string part(3 << 20, tag[0]);  // more than one write's worth
      if (!out.write(std::as_bytes(std::span(part))))
        return failure_of(make_error(ErrorCode::kInternal, "write"));
      if (tag == "half") return failure_of(make_error(ErrorCode::kUnsupported, "stopped halfway"));
      Converted c;
      c.onnx_bytes = part.size();
      return c;
    };
  };
  Summary s = run(*p, ConvertOptions{}, factory, RunOptions{});
  EXPECT_EQ(s.converted, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(fs::file_size(root_ / "out" / "full.onnx"), size_t{3} << 20);
  EXPECT_FALSE(fs::exists(root_ / "out" / "half.onnx"));
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "out"), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace lite2onnx::batch
