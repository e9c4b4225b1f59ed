// Hostile input: every malformed, truncated, random or absurd model must give a
// clear error (the right ErrorCode and a message naming the problem), never a
// crash, a hang or a huge allocation. Run under ASan/UBSan as well.
//
// Hostile models are converted in forked children: a crash, a sanitizer
// report or an exception fails the test that found it (naming the input)
// instead of ending the test binary. Loops are time-bound.
#include <flatbuffers/flatbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/convert.h"
#include "hostile_graphs.h"
#include "model_builder.h"
#include "schema_generated.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;
using testing::op_counts;
using testing::op_model;
using testing::op_model_json;

using ::testing::AnyOf;
using ::testing::Contains;
using testing::f32_bytes;
using ::testing::HasSubstr;
using testing::i32_bytes;
using testing::i64_bytes;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

#if defined(__SANITIZE_ADDRESS__)
constexpr double kSlowdown = 4;  // CPU bounds are larger under ASan
#else
constexpr double kSlowdown = 1;
#endif

// ---- model JSON -------------------------------------------------------------

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Builds a one-subgraph model as JSON against core/tflite/schema.fbs. Indices
// returned by the add functions are the ones the model uses.
class ModelJson {
 public:
  ModelJson() { buffers_.push_back("{}"); }  // buffer 0: the empty sentinel

  // `name` is the BuiltinOperator name ("" to write `code` as a number);
  // deprecated_builtin_code gets min(code, 127), as TFLite's writers do.
  int builtin(const std::string& name, int code) {
    std::string bc = name.empty() ? std::to_string(code) : "\"" + name + "\"";
    codes_.push_back("{ \"deprecated_builtin_code\": " + std::to_string(std::min(code, 127)) +
                     ", \"builtin_code\": " + bc + " }");
    return static_cast<int>(codes_.size()) - 1;
  }
  int raw_code(const std::string& json) {
    codes_.push_back(json);
    return static_cast<int>(codes_.size()) - 1;
  }
  int buffer(const std::string& data) {
    buffers_.push_back(data.empty() ? "{}" : "{ \"data\": " + data + " }");
    return static_cast<int>(buffers_.size()) - 1;
  }
  int raw_buffer(const std::string& json) {
    buffers_.push_back(json);
    return static_cast<int>(buffers_.size()) - 1;
  }
  int tensor(const std::string& name, const std::vector<int64_t>& shape,
             const std::string& type = "FLOAT32", int buffer = 0, const std::string& extra = "") {
    tensors_.push_back("{ \"name\": \"" + name + "\", \"shape\": " + ints(shape) +
                       ", \"type\": \"" + type + "\", \"buffer\": " + std::to_string(buffer) +
                       (extra.empty() ? "" : ", " + extra) + " }");
    return static_cast<int>(tensors_.size()) - 1;
  }
  int raw_tensor(const std::string& json) {
    tensors_.push_back(json);
    return static_cast<int>(tensors_.size()) - 1;
  }
  int f32(const std::string& name, const std::vector<int64_t>& shape,
          const std::vector<float>& values) {
    return tensor(name, shape, "FLOAT32", buffer(f32_bytes(values)));
  }
  int i32(const std::string& name, const std::vector<int64_t>& shape,
          const std::vector<int32_t>& values) {
    return tensor(name, shape, "INT32", buffer(i32_bytes(values)));
  }
  void op(int code, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
          const std::string& options_type = "", const std::string& options = "{}") {
    ops_.push_back("{ \"opcode_index\": " + std::to_string(code) + ", \"inputs\": " + ints(in) +
                   ", \"outputs\": " + ints(out) +
                   (options_type.empty() ? ""
                                         : ", \"builtin_options_type\": \"" + options_type +
                                               "\", \"builtin_options\": " + options) +
                   " }");
  }
  void io(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    inputs_ = in;
    outputs_ = out;
  }

  std::string json() const {
    auto list = [](const std::vector<std::string>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ",\n  " : "\n  ") + v[i];
      return s + "]";
    };
    return "{ \"version\": 3, \"description\": \"hostile test model\",\n"
           "\"operator_codes\": " +
           list(codes_) +
           ",\n"
           "\"subgraphs\": [ { \"name\": \"main\", \"tensors\": " +
           list(tensors_) + ", \"inputs\": " + ints(inputs_) + ", \"outputs\": " + ints(outputs_) +
           ", \"operators\": " + list(ops_) +
           " } ],\n"
           "\"buffers\": " +
           list(buffers_) + " }";
  }
  Bytes bytes() const { return tflite_from_json(json()); }

 private:
  std::vector<std::string> codes_, tensors_, ops_, buffers_;
  std::vector<int64_t> inputs_, outputs_;
};

// Conv2DOptions of a plain stride-1 convolution (the schema's defaults are 0).
const char* const kStride1 = R"({ "padding": "SAME", "stride_h": 1, "stride_w": 1 })";

// ABS: input [1, 4] -> output [1, 4]; a valid base most cases bend.
ModelJson abs_model(int* abs_code = nullptr) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  if (abs_code) *abs_code = c;
  int x = m.tensor("x", {1, 4});
  int y = m.tensor("y", {1, 4});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  return m;
}

// A small model touching many converters (conv, add, transpose, strided
// slice, reshape, split, concatenation, softmax) with tiny constants: the
// base of the bit-flip loop.
ModelJson many_ops_model() {
  ModelJson m;
  int conv = m.builtin("CONV_2D", 3), add = m.builtin("ADD", 0),
      transpose = m.builtin("TRANSPOSE", 39), slice = m.builtin("STRIDED_SLICE", 45),
      reshape = m.builtin("RESHAPE", 22), split = m.builtin("SPLIT", 49),
      concat = m.builtin("CONCATENATION", 2), softmax = m.builtin("SOFTMAX", 25);
  int x = m.tensor("input", {1, 4, 4, 2});
  int w = m.f32("conv/w", {2, 1, 1, 2}, {0.5f, -1, 2, 0.25f});
  int b = m.f32("conv/b", {2}, {0.1f, -0.1f});
  int c = m.tensor("conv", {1, 4, 4, 2});
  int k = m.f32("add/k", {2}, {1, 2});
  int a = m.tensor("add", {1, 4, 4, 2});
  int perm = m.i32("perm", {4}, {0, 3, 1, 2});
  int t = m.tensor("transposed", {1, 2, 4, 4});
  int begin = m.i32("begin", {4}, {0, 0, 0, 0});
  int end = m.i32("end", {4}, {1, 2, 4, 2});
  int strides = m.i32("strides", {4}, {1, 1, 1, 1});
  int s = m.tensor("sliced", {1, 2, 4, 2});
  int shape = m.i32("shape", {2}, {1, 16});
  int r = m.tensor("reshaped", {1, 16});
  int axis = m.i32("axis", {}, {1});
  int p0 = m.tensor("part0", {1, 8});
  int p1 = m.tensor("part1", {1, 8});
  int cat = m.tensor("concat", {1, 16});
  int y = m.tensor("output", {1, 16});
  m.op(
      conv, {x, w, b}, {c}, "Conv2DOptions",
      R"({ "padding": "SAME", "stride_h": 1, "stride_w": 1, "fused_activation_function": "RELU" })");
  m.op(add, {c, k}, {a}, "AddOptions", "{}");
  m.op(transpose, {a, perm}, {t});
  m.op(slice, {t, begin, end, strides}, {s}, "StridedSliceOptions", "{}");
  m.op(reshape, {s, shape}, {r}, "ReshapeOptions", R"({ "new_shape": [1, 16] })");
  m.op(split, {axis, r}, {p0, p1}, "SplitOptions", R"({ "num_splits": 2 })");
  m.op(concat, {p1, p0}, {cat}, "ConcatenationOptions", R"({ "axis": 1 })");
  m.op(softmax, {cat}, {y}, "SoftmaxOptions", R"({ "beta": 1.0 })");
  m.io({x}, {y});
  return m;
}

// ---- running the converter ----------------------------------------------------

// In-process conversion, for models that are valid.
Result<std::string> run(std::span<const std::byte> bytes, const ConvertOptions& o = {}) {
  Diagnostics d;
  return convert(bytes, o, d);
}

// Hostile models are converted in a forked child, so that a crash, a
// sanitizer report or an escaping exception fails the one test that found it
// instead of ending the test binary.

void write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(r));
  return out;
}

// Length-prefixed records: the child's half of the pipe protocol.
void put(int fd, const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}

std::vector<std::string> records(const std::string& wire) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos + 4 <= wire.size()) {
    uint32_t n;
    std::memcpy(&n, wire.data() + pos, 4);
    pos += 4;
    if (pos + n > wire.size()) break;
    out.push_back(wire.substr(pos, n));
    pos += n;
  }
  return out;
}

// How a child ended: "" when it exited normally, else what killed it.
std::string wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status)) return "crashed with signal " + std::to_string(WTERMSIG(status));
  return "exited with code " + std::to_string(WEXITSTATUS(status)) + " (sanitizer report?)";
}

// What convert() gave in the child.
struct Outcome {
  std::string died;  // how the child died; empty if it did not
  bool ok = false;
  Error error;
};

Outcome convert_isolated(std::span<const std::byte> bytes, const ConvertOptions& o = {}) {
  int fds[2];
  if (::pipe(fds) != 0) return {"pipe() failed", false, {}};
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    try {
      auto r = run(bytes, o);
      put(fds[1], r.ok() ? "ok" : "error");
      if (!r.ok()) {
        const Error& e = r.error();
        put(fds[1], std::to_string(static_cast<int>(e.code)));
        put(fds[1], e.message);
        put(fds[1], std::to_string(e.op_index));
        put(fds[1], e.tensor);
        for (const auto& u : e.unsupported) {
          put(fds[1], std::to_string(u.op_index));
          put(fds[1], u.op);
          put(fds[1], u.reason);
        }
      }
      (void)inspect(bytes, o.limits);  // the same reader, and preflight: must not crash either
    } catch (const std::exception& ex) {
      put(fds[1], "threw");
      put(fds[1], ex.what());
    }
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::vector<std::string> rec = records(read_all(fds[0]));
  ::close(fds[0]);
  Outcome out;
  out.died = wait_child(pid);
  if (!rec.empty() && rec[0] == "threw")
    out.died = "convert() or inspect() threw: " + (rec.size() > 1 ? rec[1] : std::string());
  if (!out.died.empty()) return out;
  if (rec.empty()) {
    out.died = "the child reported nothing";
    return out;
  }
  out.ok = rec[0] == "ok";
  if (!out.ok && rec.size() >= 5) {
    out.error.code = static_cast<ErrorCode>(std::stoi(rec[1]));
    out.error.message = rec[2];
    out.error.op_index = std::stoi(rec[3]);
    out.error.tensor = rec[4];
    for (size_t i = 5; i + 2 < rec.size(); i += 3)
      out.error.unsupported.push_back({std::stoi(rec[i]), rec[i + 1], rec[i + 2]});
  }
  return out;
}

// Converts, expecting a failure with `code`; returns the error for more checks.
Error expect_error(const Bytes& bytes, ErrorCode code, const ConvertOptions& o = {}) {
  Outcome r = convert_isolated(view(bytes), o);
  if (!r.died.empty()) {
    ADD_FAILURE() << "the converter " << r.died;
    return {};
  }
  if (r.ok) {
    ADD_FAILURE() << "conversion succeeded; expected " << to_string(code);
    return {};
  }
  EXPECT_EQ(r.error.code, code) << to_string(r.error.code) << ": " << r.error.message;
  EXPECT_FALSE(r.error.message.empty());
  return r.error;
}

// inspect() goes through the same reader and must agree.
Error expect_inspect_error(const Bytes& bytes, ErrorCode code, const Limits& limits = {}) {
  auto r = inspect(view(bytes), limits);
  if (r.ok()) {
    ADD_FAILURE() << "inspect succeeded; expected " << to_string(code);
    return {};
  }
  Error e = r.take_error();
  EXPECT_EQ(e.code, code) << to_string(e.code) << ": " << e.message;
  return e;
}

// Runs check(i) for the cases i = 0 .. n-1 in forked children. check returns
// "" when case i behaved, else what went wrong. A child that dies is replaced
// by one starting after the case that killed it, so one crash does not hide
// the next (after 20 crashes the rest is skipped). Returns the number of cases
// run. Every case runs, however loaded the machine: a count, not a time
// budget, says how much is covered (the whole run takes under a second here).
size_t run_cases(size_t n, const std::function<std::string(size_t)>& check,
                 const std::function<std::string(size_t)>& label,
                 std::vector<std::string>* failures) {
  auto* current = static_cast<volatile size_t*>(
      ::mmap(nullptr, sizeof(size_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  size_t start = 0, crashes = 0;
  while (start < n && crashes < 20) {
    int fds[2];
    if (::pipe(fds) != 0) break;
    *current = start;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      size_t i = start;
      for (; i < n; ++i) {
        *current = i;
        std::string why;
        try {
          why = check(i);
        } catch (const std::exception& ex) {
          why = std::string("threw: ") + ex.what();
        }
        if (!why.empty()) put(fds[1], label(i) + ": " + why);
      }
      *current = i;
      ::close(fds[1]);
      ::_exit(0);
    }
    ::close(fds[1]);
    for (auto& r : records(read_all(fds[0]))) failures->push_back(std::move(r));
    ::close(fds[0]);
    std::string died = wait_child(pid);
    size_t at = *current;
    if (died.empty()) {
      start = at;
      break;
    }
    failures->push_back(label(at) + ": the converter " + died);
    ++crashes;
    start = at + 1;
  }
  ::munmap(const_cast<size_t*>(current), sizeof(size_t));
  return start;
}

// A model that is odd but well-formed: converted, or rejected with an error
// that blames the model, never the converter.
void expect_converts_or_rejects(const Bytes& b) {
  Outcome r = convert_isolated(view(b));
  ASSERT_EQ(r.died, "");
  if (!r.ok) {
    EXPECT_NE(r.error.code, ErrorCode::kInternal) << r.error.message;
    EXPECT_FALSE(r.error.message.empty());
  }
}

// Reports the failures of a loop (the first few in full, then a count).
void report(const std::vector<std::string>& failures, const std::string& what) {
  if (failures.empty()) return;
  std::string text;
  for (size_t i = 0; i < failures.size() && i < 12; ++i) text += "  " + failures[i] + "\n";
  ADD_FAILURE() << failures.size() << " " << what << " misbehaved:\n"
                << text << (failures.size() > 12 ? "  ...\n" : "");
}

// The outcome of a damaged model: an error with a message, or a valid
// conversion. Returns what went wrong, or "".
std::string damaged_model_check(std::span<const std::byte> bytes) {
  auto r = run(bytes);
  if (r.ok()) return r->empty() ? "converted to nothing" : "";
  if (r.error().message.empty()) return "error without a message";
  (void)inspect(bytes);
  return "";
}

// Runs `body` in a forked child and returns how much its peak RSS grew, in
// MiB (or -1 if the child died).
long rss_growth_mib(const std::function<void()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    struct rusage before, after;
    ::getrusage(RUSAGE_SELF, &before);
    try {
      body();
    } catch (...) {
    }
    ::getrusage(RUSAGE_SELF, &after);
    put(fds[1], std::to_string((after.ru_maxrss - before.ru_maxrss) / 1024));
    ::_exit(0);
  }
  ::close(fds[1]);
  auto rec = records(read_all(fds[0]));
  ::close(fds[0]);
  if (!wait_child(pid).empty() || rec.empty()) return -1;
  return std::stol(rec[0]);
}

// ---- bytes that are not a model ---------------------------------------------

TEST(Hostile, EmptyInput) {
  Error e = expect_error({}, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("empty input"));
  expect_inspect_error({}, ErrorCode::kInvalidModel);
}

TEST(Hostile, OneToSevenBytes) {
  for (size_t n = 1; n <= 7; ++n) {
    Bytes b(n, std::byte{0x54});
    Error e = expect_error(b, ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr(std::to_string(n) + " bytes is too short")) << n;
  }
}

TEST(Hostile, WrongFileIdentifier) {
  Bytes b = abs_model().bytes();
  std::memcpy(b.data() + 4, "ONNX", 4);
  Error e = expect_error(b, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("file identifier is 'ONNX'"));
  EXPECT_THAT(e.message, HasSubstr("TFL3"));
  // Unprintable identifier bytes are escaped, not copied into the message.
  b[5] = std::byte{0};
  e = expect_error(b, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("\\x0"));
  EXPECT_EQ(e.message.find('\0'), std::string::npos);
}

Bytes finished(flatbuffers::FlatBufferBuilder& fbb) {
  const auto* p = reinterpret_cast<const std::byte*>(fbb.GetBufferPointer());
  return {p, p + fbb.GetSize()};
}

TEST(Hostile, ValidFlatBufferOfAnotherRoot) {
  {  // An empty Buffer table as the root: a Model without subgraphs.
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(tflite::CreateBuffer(fbb), "TFL3");
    Error e = expect_error(finished(fbb), ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr("no subgraphs"));
  }
  {  // A Tensor as the root: its fields land on Model fields of other types.
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<int32_t> shape = {1, 2, 3};
    fbb.Finish(tflite::CreateTensorDirect(fbb, &shape, tflite::TensorType::FLOAT32, 0, "t"),
               "TFL3");
    expect_error(finished(fbb), ErrorCode::kInvalidModel);
  }
  {  // A SubGraph as the root.
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<int32_t> io = {0};
    fbb.Finish(tflite::CreateSubGraphDirect(fbb, nullptr, &io, &io, nullptr, "sg"), "TFL3");
    expect_error(finished(fbb), ErrorCode::kInvalidModel);
  }
  {  // A valid Model without the file identifier.
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(tflite::CreateModel(fbb, 3));
    Error e = expect_error(finished(fbb), ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr("file identifier"));
  }
}

// Every cut of real models must be rejected as invalid (a truncated
// FlatBuffer fails verification), never read past the end.
TEST(Hostile, TruncatedModels) {
  std::vector<std::string> paths = {op_model("mini_mobilenet"), op_model("cnn_chain")};
  std::string corpus = corpus_dir() + "/tflite2onnx/conv.float32.tflite";
  if (std::filesystem::exists(corpus)) paths.push_back(corpus);
  size_t tried = 0, want = 0;
  for (const auto& path : paths) {
    Bytes full = read_file(path);
    ASSERT_TRUE(run(view(full)).ok()) << path;
    // Every cut in the first 512 bytes (headers, vtables, tensor tables), then
    // cuts spread over the rest (constant data), and the last 16 bytes.
    std::vector<size_t> cuts;
    for (size_t n = 0; n < std::min<size_t>(full.size(), 512); ++n) cuts.push_back(n);
    for (size_t n = 512; n + 16 < full.size(); n += std::max<size_t>(1, full.size() / 509))
      cuts.push_back(n);
    for (size_t n = full.size() > 16 ? full.size() - 16 : 0; n < full.size(); ++n)
      cuts.push_back(n);
    std::vector<std::string> failures;
    want += cuts.size();
    tried += run_cases(
        cuts.size(),
        [&](size_t i) -> std::string {
          // A copy of exactly n bytes, so ASan sees any read past the cut.
          Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cuts[i]));
          auto r = run(view(cut));
          if (r.ok()) return "converted";
          if (r.error().code != ErrorCode::kInvalidModel)
            return std::string(to_string(r.error().code)) + ": " + r.error().message;
          return r.error().message.empty() ? "error without a message" : "";
        },
        [&](size_t i) { return path + " cut to " + std::to_string(cuts[i]) + " bytes"; },
        &failures);
    report(failures, "truncated models");
  }
  EXPECT_EQ(tried, want);
}

TEST(Hostile, RandomBytes) {
  auto make = [](size_t i) {
    std::mt19937 rng(static_cast<uint32_t>(20240611 + i));
    size_t n = std::uniform_int_distribution<size_t>(0, i % 10 == 0 ? 65536 : 512)(rng);
    Bytes b(n);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    // Half of them carry the identifier (and a root offset inside the buffer)
    // so the verifier, not the identifier check, has to reject them.
    if (n >= 8 && i % 2 == 0) {
      std::memcpy(b.data() + 4, "TFL3", 4);
      uint32_t root =
          static_cast<uint32_t>(std::uniform_int_distribution<size_t>(0, n - 1)(rng)) & ~3u;
      std::memcpy(b.data(), &root, 4);
    }
    return b;
  };
  std::vector<std::string> failures;
  size_t tried = run_cases(
      4000,
      [&](size_t i) -> std::string {
        Bytes b = make(i);
        auto r = run(view(b));
        if (r.ok()) return "converted";
        if (r.error().code != ErrorCode::kInvalidModel)
          return std::string(to_string(r.error().code)) + ": " + r.error().message;
        return r.error().message.empty() ? "error without a message" : "";
      },
      [&](size_t i) {
        return "random input " + std::to_string(i) + " (" + std::to_string(make(i).size()) +
               " bytes)";
      },
      &failures);
  report(failures, "random inputs");
  EXPECT_EQ(tried, 4000u);
}

TEST(Hostile, ModelAboveMaxModelBytes) {
  Bytes b = abs_model().bytes();
  ConvertOptions o;
  o.limits.max_model_bytes = 100;
  Error e = expect_error(b, ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr(std::to_string(b.size()) + " bytes exceeds the limit of 100"));
  expect_inspect_error(b, ErrorCode::kResourceLimit, o.limits);
  o.limits.max_model_bytes = b.size();  // exactly at the limit is fine
  EXPECT_TRUE(run(view(b), o).ok());
}

// ---- bit flips ----------------------------------------------------------------

TEST(Hostile, BitFlipBaseModelConverts) {
  Bytes b = many_ops_model().bytes();
  auto r = run(view(b));
  ASSERT_TRUE(r.ok()) << r.error().message;
}

// Each byte of a small valid model flipped in turn (all its bits, then the
// low and the high bit): an error with a message, or a valid conversion,
// never a crash.
TEST(Hostile, BitFlips) {
  const Bytes base = many_ops_model().bytes();
  const uint8_t masks[] = {0xFF, 0x01, 0x80};
  std::vector<std::string> failures;
  size_t tried = run_cases(
      base.size() * 3,
      [&](size_t i) {
        Bytes b = base;
        b[i % base.size()] ^= std::byte{masks[i / base.size()]};
        return damaged_model_check(view(b));
      },
      [&](size_t i) {
        return "byte " + std::to_string(i % base.size()) + " ^ " +
               std::to_string(masks[i / base.size()]);
      },
      &failures);
  report(failures, "bit-flipped models");
  EXPECT_EQ(tried, base.size() * 3);
}

TEST(Hostile, BitFlipsOfEveryBitOfAbs) {
  const Bytes base = abs_model().bytes();
  std::vector<std::string> failures;
  size_t tried = run_cases(
      base.size() * 8,
      [&](size_t i) {
        Bytes b = base;
        b[i / 8] ^= std::byte{static_cast<uint8_t>(1u << (i % 8))};
        return damaged_model_check(view(b));
      },
      [](size_t i) { return "bit " + std::to_string(i); }, &failures);
  report(failures, "bit-flipped models");
  EXPECT_EQ(tried, base.size() * 8);
}

// Flipped bytes that keep the model well-formed but change a declared shape
// must be reported as an invalid model, not as a converter bug (kInternal
// means our own ONNX output failed validation).
TEST(Hostile, BitFlipsNeverReportAnInternalError) {
  const Bytes base = many_ops_model().bytes();
  std::vector<std::string> failures;
  run_cases(
      base.size(),
      [&](size_t i) -> std::string {
        Bytes b = base;
        b[i] ^= std::byte{0xFF};
        auto r = run(view(b));
        if (!r.ok() && r.error().code == ErrorCode::kInternal) return r.error().message;
        return "";
      },
      [&](size_t i) { return "byte " + std::to_string(i) + " ^ 255"; }, &failures);
  report(failures, "bit-flipped models");
}

// ---- indices out of range -----------------------------------------------------

TEST(Hostile, OpInputTensorIndexOutOfRange) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {7}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (ABS) input"));
  EXPECT_THAT(e.message, HasSubstr("tensor index 7 out of range (2 tensors)"));
  expect_inspect_error(m.bytes(), ErrorCode::kInvalidModel);
}

TEST(Hostile, OpInputIndexBelowMinusOne) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {-2}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor index -2 out of range"));
}

TEST(Hostile, OpOutputTensorIndexOutOfRange) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4});
  m.tensor("y", {1, 4});
  m.op(c, {x}, {2});
  m.io({x}, {1});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (ABS) output"));
  EXPECT_THAT(e.message, HasSubstr("tensor index 2 out of range"));
  // -1 marks omitted inputs only; an output cannot be omitted.
  ModelJson m2;
  c = m2.builtin("ABS", 101);
  x = m2.tensor("x", {1, 4});
  m2.tensor("y", {1, 4});
  m2.op(c, {x}, {-1});
  m2.io({x}, {1});
  e = expect_error(m2.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor index -1 out of range"));
}

TEST(Hostile, SubgraphInputTensorIndexOutOfRange) {
  ModelJson m = abs_model();
  m.io({5}, {1});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("subgraph input: tensor index 5 out of range"));
  m.io({-1}, {1});
  e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("subgraph input: tensor index -1 out of range"));
}

TEST(Hostile, SubgraphOutputTensorIndexOutOfRange) {
  ModelJson m = abs_model();
  m.io({0}, {2147483647});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("subgraph output: tensor index 2147483647 out of range"));
}

TEST(Hostile, BufferIndexOutOfRange) {
  ModelJson m = abs_model();
  m.tensor("w", {2}, "FLOAT32", 9);
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message,
              HasSubstr("tensor 2 'w': buffer index 9 out of range (model has 1 buffers)"));
  EXPECT_EQ(e.tensor, "w");
}

TEST(Hostile, BufferOffsetOutsideTheFile) {
  ModelJson m = abs_model();
  int b = m.raw_buffer(R"({ "offset": 1099511627776, "size": 4 })");
  m.tensor("w", {1}, "FLOAT32", b);
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("buffer 1: data at offset 1099511627776 size 4 lies outside"));
  // offset + size wrapping around 2^64 must not pass the check.
  ModelJson m2 = abs_model();
  b = m2.raw_buffer(R"({ "offset": 16, "size": 18446744073709551615 })");
  m2.tensor("w", {1}, "FLOAT32", b);
  e = expect_error(m2.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("lies outside"));
}

TEST(Hostile, OpcodeIndexOutOfRange) {
  ModelJson m;
  m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(5, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0: opcode index 5 out of range (1 codes)"));
}

TEST(Hostile, NegativeOperatorCode) {
  ModelJson m;
  int c = m.raw_code(R"({ "deprecated_builtin_code": -3, "builtin_code": -7 })");
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("operator code 0 is negative"));
}

// ---- tensors --------------------------------------------------------------------

TEST(Hostile, ConstantWithTooFewBytes) {
  ModelJson m = abs_model();
  m.tensor("w", {3}, "FLOAT32", m.buffer(f32_bytes({1, 2})));
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message,
              HasSubstr("tensor 2 'w': buffer 1 holds 8 bytes but shape [3] of FLOAT32 needs 12"));
  EXPECT_EQ(e.tensor, "w");
}

TEST(Hostile, ConstantWithTooManyBytes) {
  ModelJson m = abs_model();
  m.tensor("w", {1}, "INT32", m.buffer(i32_bytes({1, 2})));
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("holds 8 bytes but shape [1] of INT32 needs 4"));
}

TEST(Hostile, ConstantWithDynamicShape) {
  ModelJson m = abs_model();
  m.tensor("w", {2}, "FLOAT32", m.buffer(f32_bytes({1, 2})), R"("shape_signature": [-1])");
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 2 'w': constant with a dynamic shape"));
}

TEST(Hostile, NegativeDimension) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, -3}), y = m.tensor("y", {1, 4});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 0 'x': negative dimension -3"));
  EXPECT_EQ(e.tensor, "x");
}

TEST(Hostile, InvalidShapeSignature) {
  ModelJson m = abs_model();
  m.tensor("s", {1, 4}, "FLOAT32", 0, R"("shape_signature": [-1, 4, 1])");
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message,
              HasSubstr("tensor 2 's': shape_signature has rank 3 but shape has rank 2"));
  ModelJson m2 = abs_model();
  m2.tensor("s", {1, 4}, "FLOAT32", 0, R"("shape_signature": [-5, 4])");
  e = expect_error(m2.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("invalid shape_signature dimension -5"));
}

TEST(Hostile, DimensionProductOverflowsInt64) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {2147483647, 2147483647, 2147483647});
  int y = m.tensor("y", {1});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 0 'x': element count overflows"));
}

TEST(Hostile, ByteSizeOverflows) {
  // 2^62 elements fit int64, but not 2^62 * 16 bytes of COMPLEX128.
  ModelJson m = abs_model();
  m.tensor("big", {2147483647, 2147483647, 2}, "COMPLEX128");
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 2 'big': byte size overflows"));
}

TEST(Hostile, HugeButValidShapeAllocatesNothing) {
  // A non-constant tensor of 2^61 elements is legal on paper: the converter
  // must not allocate for it (only constants carry data).
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1073741824, 1073741824, 2}),
      y = m.tensor("y", {1073741824, 1073741824, 2});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Bytes b = m.bytes();
  expect_converts_or_rejects(b);
  long grew = rss_growth_mib([&] { (void)run(view(b)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a model without constants";
}

TEST(Hostile, RankAboveTheDefaultLimit) {
  ModelJson m = abs_model();
  m.tensor("deep", std::vector<int64_t>(17, 1));
  Outcome r = convert_isolated(view(m.bytes()));
  ASSERT_EQ(r.died, "");
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error.code, AnyOf(ErrorCode::kInvalidModel, ErrorCode::kResourceLimit));
  EXPECT_THAT(r.error.message, HasSubstr("tensor 2 'deep': rank 17 exceeds the limit of 16"));
}

// A rank within TFLite's format but above a configured limit is a resource
// limit (like max_tensors), not a malformed model.
TEST(Hostile, RankAboveAConfiguredLimitIsAResourceLimit) {
  ModelJson m = abs_model();
  m.tensor("r5", {1, 2, 3, 4, 5});
  ConvertOptions o;
  o.limits.max_rank = 4;
  Error e = expect_error(m.bytes(), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("tensor 2 'r5': rank 5 exceeds the limit of 4"));
}

TEST(Hostile, UnknownTensorType) {
  ModelJson m = abs_model();
  m.raw_tensor(R"({ "name": "odd", "shape": [1], "type": 50, "buffer": 0 })");
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 2 'odd': unknown type code 50"));
  ModelJson m2 = abs_model();
  m2.raw_tensor(R"({ "name": "neg", "shape": [1], "type": -4, "buffer": 0 })");
  e = expect_error(m2.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("unknown type code -4"));
}

// Replaces the first byte of the (unique) string `marker` in a built model.
void patch_first_byte(Bytes& b, const std::string& marker, uint8_t value) {
  auto it = std::search(b.begin(), b.end(), marker.begin(), marker.end(),
                        [](std::byte x, char c) { return x == static_cast<std::byte>(c); });
  ASSERT_NE(it, b.end()) << marker;
  *it = std::byte{value};
}

// Names are bytes in a FlatBuffer: one that is not UTF-8 must not make the
// JSON writers (diagnostics, inspect, the ONNX io_layouts metadata) throw.
TEST(Hostile, TensorNameThatIsNotUtf8) {
  ModelJson m;
  int conv = m.builtin("CONV_2D", 3);
  int x = m.tensor("Xinput", {1, 2, 2, 1});
  int w = m.f32("w", {1, 1, 1, 1}, {2});
  int y = m.tensor("Youtput", {1, 2, 2, 1});
  m.op(conv, {x, w, -1}, {y}, "Conv2DOptions", kStride1);
  m.io({x}, {y});
  Bytes b = m.bytes();
  patch_first_byte(b, "Xinput", 0x96);
  patch_first_byte(b, "Youtput", 0xC3);
  Outcome r = convert_isolated(view(b));
  ASSERT_EQ(r.died, "");
  if (!r.ok) {
    EXPECT_EQ(r.error.code, ErrorCode::kInvalidModel) << r.error.message;
    EXPECT_THAT(r.error.message, HasSubstr("UTF-8"));
  }
  // The JSON reports must not throw either.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    try {
      Diagnostics d;
      (void)convert(view(b), {}, d);
      (void)d.to_json();
      (void)d.to_text();
      if (auto info = inspect(view(b)); info.ok()) {
        (void)info->to_json();
        (void)info->to_text();
      }
    } catch (const std::exception& ex) {
      put(fds[1], ex.what());
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  auto rec = records(read_all(fds[0]));
  ::close(fds[0]);
  EXPECT_EQ(wait_child(pid), "");
  EXPECT_TRUE(rec.empty()) << "threw: " << rec[0];
}

TEST(Hostile, QuantizationScalesAndZeroPointsDisagree) {
  ModelJson m = abs_model();
  m.tensor(
      "q", {1, 3}, "INT8", 0,
      R"("quantization": { "scale": [0.1, 0.2, 0.3], "zero_point": [0, 0], "quantized_dimension": 1 })");
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("tensor 2 'q': 3 quantization scales but 2 zero points"));
}

// ---- graph structure ----------------------------------------------------------

TEST(Hostile, CyclicGraph) {
  ModelJson m;
  int c = m.builtin("ADD", 0);
  int x = m.tensor("x", {1, 4}), a = m.tensor("a", {1, 4}), b = m.tensor("b", {1, 4});
  m.op(c, {x, b}, {a});  // op 0 reads op 1's output
  m.op(c, {x, a}, {b});  // op 1 reads op 0's output
  m.io({x}, {b});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("cyclic graph: op 0 (ADD)"));
  EXPECT_EQ(e.op_index, 0);
  expect_inspect_error(m.bytes(), ErrorCode::kInvalidModel);
}

TEST(Hostile, OpReadingItsOwnOutput) {
  ModelJson m;
  int c = m.builtin("ADD", 0);
  int x = m.tensor("x", {1, 4}), a = m.tensor("a", {1, 4});
  m.op(c, {x, a}, {a});
  m.io({x}, {a});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("cyclic graph: op 0"));
}

TEST(Hostile, TensorReadButNeverWritten) {
  ModelJson m;
  int c = m.builtin("ADD", 0);
  int x = m.tensor("x", {1, 4}), dangling = m.tensor("dangling", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {x, dangling}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (ADD) reads tensor 'dangling'"));
  EXPECT_EQ(e.op_index, 0);
  EXPECT_EQ(e.tensor, "dangling");
}

TEST(Hostile, GraphOutputNeverWritten) {
  ModelJson m = abs_model();
  m.tensor("orphan", {1});
  m.io({0}, {1, 2});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("graph output 'orphan' is never written"));
}

TEST(Hostile, TwoOpsWriteOneTensor) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {x}, {y});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 1 (ABS): output tensor 1 is already produced by op 0"));
}

TEST(Hostile, OpWritesAConstant) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {2});
  int k = m.f32("k", {2}, {1, 2});
  m.op(c, {x}, {k});
  m.io({x}, {k});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (ABS): output tensor 1 'k' is a constant"));
}

// An op overwriting a graph input makes the tensor both fed and computed.
TEST(Hostile, OpWritesAGraphInput) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {2}), z = m.tensor("z", {2}), y = m.tensor("y", {2});
  m.op(c, {z}, {x});
  m.op(c, {x}, {y});
  m.io({x, z}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("'x'"));
  EXPECT_THAT(e.message, HasSubstr("graph input"));
}

TEST(Hostile, TensorCountAboveLimit) {
  ModelJson m = abs_model();
  for (int i = 0; i < 40; ++i) m.tensor("extra" + std::to_string(i), {1});
  ConvertOptions o;
  o.limits.max_tensors = 16;
  Error e = expect_error(m.bytes(), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("42 tensors exceed the limit of 16"));
  expect_inspect_error(m.bytes(), ErrorCode::kResourceLimit, o.limits);
}

TEST(Hostile, OperatorCountAboveLimit) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int prev = m.tensor("t0", {2});
  for (int i = 1; i <= 40; ++i) {
    int next = m.tensor("t" + std::to_string(i), {2});
    m.op(c, {prev}, {next});
    prev = next;
  }
  m.io({0}, {prev});
  ConvertOptions o;
  o.limits.max_operators = 8;
  Error e = expect_error(m.bytes(), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("40 operators exceed the limit of 8"));
}

// With both limits small, a large but well-formed model is still a resource
// limit, not a "corrupt" FlatBuffer.
TEST(Hostile, AbsurdCountsWithSmallLimitsAreResourceLimits) {
  ModelJson m = abs_model();
  for (int i = 0; i < 3000; ++i) m.tensor("t" + std::to_string(i), {1});
  ConvertOptions o;
  o.limits.max_tensors = 64;
  o.limits.max_operators = 64;
  Error e = expect_error(m.bytes(), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("3002 tensors exceed the limit of 64"));
}

// ---- options ------------------------------------------------------------------

TEST(Hostile, InvalidOpset) {
  Bytes b = abs_model().bytes();
  for (int opset : {-1, 0, 12, 18, 1000}) {
    ConvertOptions o;
    o.opset = opset;
    Error e = expect_error(b, ErrorCode::kInvalidOption, o);
    EXPECT_THAT(e.message, HasSubstr("opset " + std::to_string(opset) + " is not supported"));
  }
}

TEST(Hostile, CancellationHook) {
  Bytes b = many_ops_model().bytes();
  ConvertOptions o;
  o.cancelled = [] { return true; };
  auto r = run(view(b), o);  // in process: the hooks count calls
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_THAT(r.error().message, HasSubstr("cancelled"));
  // Never cancelled: converts; the hook is asked at most once per millisecond.
  int calls = 0;
  o.cancelled = [&calls] { return ++calls < 0; };
  EXPECT_TRUE(run(view(b), o).ok());
  EXPECT_GE(calls, 1);
}

// CPU time of the calling thread, in milliseconds: what the thread did,
// whatever else the machine was doing meanwhile.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Every phase polls: cancelled midway through a conversion that takes a while
// (20,000 ops), convert() returns soon after the hook says so, whatever phase
// it was in (the hook is asked at most once per millisecond): it is not asked
// again, and the work left (freeing what was built) takes little CPU. The
// bound is CPU time, not wall time: at most 9 ms measured with both cores
// busy, and the bound over 10x that.
TEST(Hostile, CancellationStopsAConversionMidway) {
  const Bytes b = testing::abs_chain(20'000);
  for (int stop_at : {2, 5, 20, 60}) {
    SCOPED_TRACE(stop_at);
    int calls = 0;
    double flipped_ms = 0;
    ConvertOptions o;
    o.cancelled = [&] {
      if (++calls != stop_at) return calls > stop_at;
      flipped_ms = thread_cpu_ms();
      return true;
    };
    auto r = run(view(b), o);
    const double cpu_ms = thread_cpu_ms() - flipped_ms;
    if (r.ok()) continue;  // finished before the stop_at-th poll
    EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
    EXPECT_EQ(calls, stop_at) << "the hook was asked again after it said stop";
    EXPECT_LT(cpu_ms, 120 * kSlowdown) << "CPU ms from the hook saying stop to convert() returning";
  }
}

// ---- operators with bad attributes or operands --------------------------------

// Errors about one operator: kUnsupported with the reason in the list, or
// kInvalidModel naming the op; either way op 0 and the problem are named.
void expect_op_error(const Bytes& b, const std::string& op, const std::string& problem) {
  Outcome r = convert_isolated(view(b));
  ASSERT_EQ(r.died, "") << op;
  ASSERT_FALSE(r.ok) << op << " converted";
  const Error& e = r.error;
  ASSERT_THAT(e.code, AnyOf(ErrorCode::kUnsupported, ErrorCode::kInvalidModel)) << e.message;
  EXPECT_THAT(e.message, HasSubstr("op 0"));
  EXPECT_THAT(e.message, HasSubstr(op));
  EXPECT_THAT(e.message, HasSubstr(problem));
  if (e.code == ErrorCode::kUnsupported) {
    ASSERT_EQ(e.unsupported.size(), 1u);
    EXPECT_EQ(e.unsupported[0].op_index, 0);
    EXPECT_EQ(e.unsupported[0].op, op);
    EXPECT_THAT(e.unsupported[0].reason, HasSubstr(problem));
  } else {
    EXPECT_EQ(e.op_index, 0);
  }
}

// CONV_2D 1x1, SAME, [1, 5, 5, 2] -> [1, out, out, 1].
Bytes conv_model(int stride_h, int stride_w, int dilation = 1, int64_t out = 5) {
  ModelJson m;
  int c = m.builtin("CONV_2D", 3);
  int x = m.tensor("x", {1, 5, 5, 2});
  int w = m.f32("w", {1, 1, 1, 2}, {1, 1});
  int y = m.tensor("y", {1, out, out, 1});
  m.op(c, {x, w, -1}, {y}, "Conv2DOptions",
       "{ \"padding\": \"SAME\", \"stride_h\": " + std::to_string(stride_h) + ", \"stride_w\": " +
           std::to_string(stride_w) + ", \"dilation_h_factor\": " + std::to_string(dilation) +
           ", \"dilation_w_factor\": " + std::to_string(dilation) + " }");
  m.io({x}, {y});
  return m.bytes();
}

TEST(Hostile, ConvWithStrideZero) {
  ASSERT_TRUE(run(view(conv_model(1, 1))).ok());
  expect_op_error(conv_model(0, 1), "CONV_2D", "strides must be positive (got 0x1)");
  expect_op_error(conv_model(2, 0), "CONV_2D", "strides must be positive (got 2x0)");
  expect_op_error(conv_model(-3, -3), "CONV_2D", "strides must be positive");
  expect_op_error(conv_model(1, 1, 0), "CONV_2D", "dilation factors must be positive");
}

// Declared output shapes that TFLite would resize at Prepare: each op's own
// shape arithmetic wins (conv, pool, fully connected, concatenation), with a
// warning naming the tensor.
TEST(Hostile, DeclaredShapesThatTheOpsDoNotComputeAreInferred) {
  auto shape_of_output = [](const Bytes& bytes, Diagnostics& d) {
    std::vector<int64_t> dims;
    auto r = convert(view(bytes), {}, d);
    EXPECT_TRUE(r.ok()) << r.error().message;
    onnx::ModelProto m;
    if (!r.ok() || !m.ParseFromString(*r)) return dims;
    for (const auto& dim : m.graph().output(0).type().tensor_type().shape().dim())
      dims.push_back(dim.dim_value());
    return dims;
  };
  Diagnostics d;
  // CONV_2D SAME stride 2 over 5x5: 3x3, not the declared 5x5 (NCHW in ONNX).
  EXPECT_EQ(shape_of_output(conv_model(2, 2, 1, 5), d), (std::vector<int64_t>{1, 1, 3, 3}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("op 0 (CONV_2D) computes [1, 3, 3, 1]"));

  ModelJson pool;
  int c = pool.builtin("MAX_POOL_2D", 17);
  int x = pool.tensor("x", {1, 4, 6, 2}), y = pool.tensor("y", {1, 1, 1, 2});
  pool.op(
      c, {x}, {y}, "Pool2DOptions",
      R"({ "padding": "VALID", "stride_h": 2, "stride_w": 2, "filter_width": 2, "filter_height": 2 })");
  pool.io({x}, {y});
  EXPECT_EQ(shape_of_output(pool.bytes(), d), (std::vector<int64_t>{1, 2, 2, 3}));

  ModelJson fc;
  c = fc.builtin("FULLY_CONNECTED", 9);
  x = fc.tensor("x", {2, 3, 4});
  int w = fc.f32("w", {5, 4}, std::vector<float>(20, 0.5f));
  y = fc.tensor("y", {2, 5});
  fc.op(c, {x, w, -1}, {y}, "FullyConnectedOptions", "{}");
  fc.io({x}, {y});
  EXPECT_EQ(shape_of_output(fc.bytes(), d), (std::vector<int64_t>{6, 5}));

  ModelJson concat;
  c = concat.builtin("CONCATENATION", 2);
  int a = concat.tensor("a", {2, 3}), b = concat.tensor("b", {2, 4});
  y = concat.tensor("y", {2, 3});
  concat.op(c, {a, b}, {y}, "ConcatenationOptions", R"({ "axis": -1 })");
  concat.io({a, b}, {y});
  EXPECT_EQ(shape_of_output(concat.bytes(), d), (std::vector<int64_t>{2, 7}));
  EXPECT_THAT(d.warnings.back(), HasSubstr("tensor 'y'"));

  ModelJson mean;
  c = mean.builtin("MEAN", 40);
  x = mean.tensor("x", {2, 3, 4});
  int axes = mean.i32("axes", {2}, {0, -1});
  y = mean.tensor("y", {2, 3, 4});
  mean.op(c, {x, axes}, {y}, "ReducerOptions", R"({ "keep_dims": false })");
  mean.io({x}, {y});
  EXPECT_EQ(shape_of_output(mean.bytes(), d), (std::vector<int64_t>{3}));

  ModelJson transpose;
  c = transpose.builtin("TRANSPOSE", 39);
  x = transpose.tensor("x", {2, 3, 4});
  int perm = transpose.i32("perm", {3}, {2, 0, 1});
  y = transpose.tensor("y", {2, 3, 4});
  transpose.op(c, {x, perm}, {y});
  transpose.io({x}, {y});
  EXPECT_EQ(shape_of_output(transpose.bytes(), d), (std::vector<int64_t>{4, 2, 3}));

  ModelJson pad;
  c = pad.builtin("PAD", 34);
  x = pad.tensor("x", {2, 3});
  int pads = pad.i32("pads", {2, 2}, {1, 0, 2, 3});
  y = pad.tensor("y", {2, 3});
  pad.op(c, {x, pads}, {y});
  pad.io({x}, {y});
  EXPECT_EQ(shape_of_output(pad.bytes(), d), (std::vector<int64_t>{3, 8}));

  // inspect shows the inferred shape and the warning.
  auto info = inspect(view(conv_model(2, 2, 1, 5)));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->tensors[2].name, "y");
  EXPECT_EQ(info->tensors[2].shape, (ir::Shape{1, 3, 3, 1}));
  EXPECT_THAT(info->problems, Contains(HasSubstr("warning: tensor 'y'")));
}

// Every graph output's ONNX dims after an in-process conversion (empty on failure).
std::vector<std::vector<int64_t>> output_dims(const Bytes& bytes, Diagnostics& d) {
  std::vector<std::vector<int64_t>> out;
  auto r = convert(view(bytes), {}, d);
  EXPECT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  if (!r.ok() || !m.ParseFromString(*r)) return out;
  for (const auto& o : m.graph().output()) {
    out.emplace_back();
    for (const auto& dim : o.type().tensor_type().shape().dim())
      out.back().push_back(dim.dim_value());
  }
  return out;
}

using Dims = std::vector<std::vector<int64_t>>;

// The same for the indexing, slicing, stacking and shape-producing ops: the
// declared output shapes are wrong, the converted model has TFLite's.
TEST(Hostile, DeclaredShapesOfDataMovementOpsAreInferred) {
  Diagnostics d;
  auto warned = [&](const std::string& op) {
    return !d.warnings.empty() &&
           d.warnings.back().find("(" + op + ") computes") != std::string::npos;
  };
  {  // GATHER along the last axis with run-time indices: their shape replaces the axis.
    ModelJson m;
    int c = m.builtin("GATHER", 36);
    int x = m.tensor("x", {4, 5}), idx = m.tensor("idx", {2, 6}, "INT32");
    int y = m.tensor("y", {4, 5});
    m.op(c, {x, idx}, {y}, "GatherOptions", R"({ "axis": -1 })");
    m.io({x, idx}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{4, 2, 6}}));
    EXPECT_TRUE(warned("GATHER"));
  }
  {  // GATHER_ND: indices[:-1] + params[depth:].
    ModelJson m;
    int c = m.builtin("GATHER_ND", 107);
    int x = m.tensor("x", {4, 5, 6}), idx = m.tensor("idx", {3, 2}, "INT32");
    int y = m.tensor("y", {3, 5, 6});
    m.op(c, {x, idx}, {y});
    m.io({x, idx}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3, 6}}));
    EXPECT_TRUE(warned("GATHER_ND"));
  }
  {  // SLICE, size -1 to the end.
    ModelJson m;
    int c = m.builtin("SLICE", 65);
    int x = m.tensor("x", {5, 6});
    int b = m.i32("begin", {2}, {1, 2}), k = m.i32("size", {2}, {-1, 3});
    int y = m.tensor("y", {5, 6});
    m.op(c, {x, b, k}, {y});
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{4, 3}}));
  }
  {  // STRIDED_SLICE [tf.newaxis, ..., 2]: a new axis, the ellipsis, a shrunk axis.
    ModelJson m;
    int c = m.builtin("STRIDED_SLICE", 45);
    int x = m.tensor("x", {4, 6, 8});
    int b = m.i32("begin", {3}, {0, 0, 2}), e = m.i32("end", {3}, {0, 0, 3});
    int s = m.i32("strides", {3}, {1, 1, 1});
    int y = m.tensor("y", {4, 6, 8});
    m.op(c, {x, b, e, s}, {y}, "StridedSliceOptions",
         R"({ "new_axis_mask": 1, "ellipsis_mask": 2, "shrink_axis_mask": 4 })");
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{1, 4, 6}}));
    EXPECT_TRUE(warned("STRIDED_SLICE"));
  }
  {  // STRIDED_SLICE with strides 3 and -2 (begin masked: from the last element).
    ModelJson m;
    int c = m.builtin("STRIDED_SLICE", 45);
    int x = m.tensor("x", {10, 7});
    int b = m.i32("begin", {2}, {1, 0}), e = m.i32("end", {2}, {8, 0});
    int s = m.i32("strides", {2}, {3, -2});
    int y = m.tensor("y", {10, 7});
    m.op(c, {x, b, e, s}, {y}, "StridedSliceOptions", R"({ "begin_mask": 2 })");
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3, 3}}));
  }
  {  // SPLIT into 3 along axis 1, every output.
    ModelJson m;
    int c = m.builtin("SPLIT", 49);
    int axis = m.i32("axis", {}, {1});
    int x = m.tensor("x", {2, 6});
    int y0 = m.tensor("y0", {2, 6}), y1 = m.tensor("y1", {2, 6}), y2 = m.tensor("y2", {1});
    m.op(c, {axis, x}, {y0, y1, y2}, "SplitOptions", R"({ "num_splits": 3 })");
    m.io({x}, {y0, y1, y2});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 2}, {2, 2}, {2, 2}}));
  }
  {  // SPLIT_V with a -1 size.
    ModelJson m;
    int c = m.builtin("SPLIT_V", 102);
    int x = m.tensor("x", {7, 3});
    int sizes = m.i32("sizes", {3}, {2, -1, 1}), axis = m.i32("axis", {}, {0});
    int y0 = m.tensor("y0", {7, 3}), y1 = m.tensor("y1", {7, 3}), y2 = m.tensor("y2", {7, 3});
    m.op(c, {x, sizes, axis}, {y0, y1, y2}, "SplitVOptions", R"({ "num_splits": 3 })");
    m.io({x}, {y0, y1, y2});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 3}, {4, 3}, {1, 3}}));
    EXPECT_TRUE(warned("SPLIT_V"));
  }
  {  // PACK three [2, 3] along axis 1; UNPACK [2, 3, 4] along the last axis.
    ModelJson m;
    int c = m.builtin("PACK", 83);
    int a = m.tensor("a", {2, 3}), b = m.tensor("b", {2, 3}), e = m.tensor("e", {2, 3});
    int y = m.tensor("y", {3, 2, 3});
    m.op(c, {a, b, e}, {y}, "PackOptions", R"({ "values_count": 3, "axis": 1 })");
    m.io({a, b, e}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 3, 3}}));

    ModelJson u;
    c = u.builtin("UNPACK", 88);
    int x = u.tensor("x", {2, 3, 2});
    int y0 = u.tensor("y0", {3, 2}), y1 = u.tensor("y1", {2});
    u.op(c, {x}, {y0, y1}, "UnpackOptions", R"({ "num": 2, "axis": -1 })");
    u.io({x}, {y0, y1});
    EXPECT_EQ(output_dims(u.bytes(), d), (Dims{{2, 3}, {2, 3}}));
  }
  {  // TILE and BROADCAST_TO with constant multiples / shape.
    ModelJson m;
    int c = m.builtin("TILE", 69);
    int x = m.tensor("x", {2, 3});
    int k = m.i32("multiples", {2}, {3, 2});
    int y = m.tensor("y", {2, 3});
    m.op(c, {x, k}, {y});
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{6, 6}}));

    ModelJson b;
    c = b.builtin("BROADCAST_TO", 130);
    x = b.tensor("x", {3, 1});
    int shape = b.tensor("shape", {3}, "INT64", b.buffer(i64_bytes({2, 3, 4})));
    y = b.tensor("y", {3, 1});
    b.op(c, {x, shape}, {y});
    b.io({x}, {y});
    EXPECT_EQ(output_dims(b.bytes(), d), (Dims{{2, 3, 4}}));
  }
  {  // BATCH_MATMUL [3, 4, 5]^T x [4, 6]: batch broadcast, adj_x.
    ModelJson m;
    int c = m.builtin("BATCH_MATMUL", 126);
    int a = m.tensor("a", {3, 4, 5}), b = m.tensor("b", {4, 6});
    int y = m.tensor("y", {3, 4, 6});
    m.op(c, {a, b}, {y}, "BatchMatMulOptions", R"({ "adj_x": true })");
    m.io({a, b}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3, 5, 6}}));
  }
  {  // SELECT_V2 broadcasts all three; SELECT (v1) with a rank-1 condition is x's shape.
    ModelJson m;
    int c = m.builtin("SELECT_V2", 123);
    int cond = m.tensor("cond", {2, 1}, "BOOL"), a = m.tensor("a", {1, 3}), b = m.tensor("b", {});
    int y = m.tensor("y", {1, 3});
    m.op(c, {cond, a, b}, {y});
    m.io({cond, a, b}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 3}}));

    ModelJson v1;
    c = v1.builtin("SELECT", 64);
    cond = v1.tensor("cond", {2}, "BOOL");
    a = v1.tensor("a", {2, 3});
    b = v1.tensor("b", {2, 3});
    y = v1.tensor("y", {2});
    v1.op(c, {cond, a, b}, {y});
    v1.io({cond, a, b}, {y});
    EXPECT_EQ(output_dims(v1.bytes(), d), (Dims{{2, 3}}));
  }
  {  // One element everywhere: TFLite's SELECT keeps the output's own shape (rank 0 here).
    ModelJson m;
    int c = m.builtin("SELECT_V2", 123);
    int cond = m.tensor("cond", {1}, "BOOL"), a = m.tensor("a", {}), b = m.f32("b", {1, 1}, {2});
    int y = m.tensor("y", {});
    m.op(c, {cond, a, b}, {y});
    m.io({cond, a}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{}}));
    for (const auto& w : d.warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("declares shape")));
  }
  {  // SPACE_TO_BATCH_ND then BATCH_TO_SPACE_ND (rank 4: NCHW in ONNX).
    ModelJson m;
    int s2b = m.builtin("SPACE_TO_BATCH_ND", 38), b2s = m.builtin("BATCH_TO_SPACE_ND", 37);
    int x = m.tensor("x", {1, 4, 6, 3});
    int block = m.i32("block", {2}, {2, 3});
    int pads = m.i32("pads", {2, 2}, {0, 2, 0, 0}), crops = m.i32("crops", {2, 2}, {1, 0, 0, 1});
    int t = m.tensor("t", {1, 4, 6, 3}), y = m.tensor("y", {1, 4, 6, 3});
    m.op(s2b, {x, block, pads}, {t});
    m.op(b2s, {t, block, crops}, {y});
    m.io({x}, {t, y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{6, 3, 3, 2}, {1, 3, 5, 5}}));
  }
  {  // RFFT2D -> COMPLEX_ABS: [.., 1, 8] with fft_length [1, 8] is [.., 1, 5].
    ModelJson m;
    int fft = m.builtin("RFFT2D", 131), abs = m.builtin("COMPLEX_ABS", 135);
    int x = m.tensor("x", {2, 1, 8}), len = m.i32("len", {2}, {1, 8});
    int z = m.tensor("z", {2, 1, 8}, "COMPLEX64"), y = m.tensor("y", {2, 1, 8});
    m.op(fft, {x, len}, {z}, "Rfft2dOptions", "{}");
    m.op(abs, {z}, {y});
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 1, 5}}));
  }
  {  // FILL with constant dims and a run-time value.
    ModelJson m;
    int c = m.builtin("FILL", 94);
    int dims = m.i32("dims", {2}, {2, 3}), v = m.tensor("v", {});
    int y = m.tensor("y", {3});
    m.op(c, {dims, v}, {y});
    m.io({v}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 3}}));
  }
  {  // TOPK_V2: both outputs [.., k].
    ModelJson m;
    int c = m.builtin("TOPK_V2", 48);
    int x = m.tensor("x", {3, 10}), k = m.i32("k", {}, {4});
    int v = m.tensor("values", {3, 10}), i = m.tensor("indices", {3, 10}, "INT32");
    m.op(c, {x, k}, {v, i});
    m.io({x}, {v, i});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3, 4}, {3, 4}}));
  }
  {  // EMBEDDING_LOOKUP: [ids, params[1:]].
    ModelJson m;
    int c = m.builtin("EMBEDDING_LOOKUP", 7);
    int ids = m.tensor("ids", {5}, "INT32");
    int table = m.f32("table", {10, 3}, std::vector<float>(30, 0.5f));
    int y = m.tensor("y", {10, 3});
    m.op(c, {ids, table}, {y});
    m.io({ids}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{5, 3}}));
  }
  {  // RANGE 2..11 step 3: 2, 5, 8.
    ModelJson m;
    int c = m.builtin("RANGE", 96);
    int start = m.i32("start", {}, {2}), limit = m.i32("limit", {}, {11});
    int delta = m.i32("delta", {}, {3});
    int y = m.tensor("y", {9}, "INT32");
    m.op(c, {start, limit, delta}, {y});
    m.io({}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3}}));
  }
  {  // SCATTER_ND into the constant shape.
    ModelJson m;
    int c = m.builtin("SCATTER_ND", 122);
    int idx = m.i32("idx", {4, 1}, {0, 2, 5, 7}), upd = m.tensor("upd", {4, 3});
    int shape = m.i32("shape", {2}, {8, 3});
    int y = m.tensor("y", {4, 3});
    m.op(c, {idx, upd, shape}, {y});
    m.io({upd}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{8, 3}}));
  }
  {  // Ops whose output is their input's shape: LOG_SOFTMAX, CUMSUM, REVERSE_V2.
    ModelJson m;
    int ls = m.builtin("LOG_SOFTMAX", 50), cs = m.builtin("CUMSUM", 128),
        rv = m.builtin("REVERSE_V2", 105);
    int x = m.tensor("x", {2, 5});
    int t0 = m.tensor("t0", {2, 4}), t1 = m.tensor("t1", {5}), y = m.tensor("y", {1, 1});
    int axis = m.i32("axis", {}, {1}), axes = m.i32("axes", {1}, {0});
    m.op(ls, {x}, {t0}, "LogSoftmaxOptions", "{}");
    m.op(cs, {t0, axis}, {t1}, "CumsumOptions", "{}");
    m.op(rv, {t1, axes}, {y});
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 5}}));
  }
  {  // SHAPE: [rank].
    ModelJson m;
    int c = m.builtin("SHAPE", 77), add = m.builtin("ADD", 0);
    int x = m.tensor("x", {2, 3, 4});
    int s = m.tensor("s", {5}, "INT32"), one = m.i32("one", {1}, {1});
    int y = m.tensor("y", {5}, "INT32");
    m.op(c, {x}, {s}, "ShapeOptions", R"({ "out_type": "INT32" })");
    m.op(add, {s, one}, {y}, "AddOptions", "{}");
    m.io({x}, {y});
    EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{3}}));
  }
}

// Operands TFLite's Prepare would reject (or read out of range): no shape is
// inferred from them, the file's stands, and the conversion still fails
// cleanly or goes through; never a crash.
TEST(Hostile, DataMovementOpsWithAbsurdOperandsInferNothing) {
  auto check = [](const Bytes& b, const std::string& what) {
    SCOPED_TRACE(what);
    expect_converts_or_rejects(b);
    auto info = inspect(view(b));
    ASSERT_TRUE(info.ok()) << info.error().message;
    for (const auto& p : info->problems) EXPECT_THAT(p, ::testing::Not(HasSubstr("computes")));
  };
  auto one_op = [](const std::string& name, int code, const std::vector<int64_t>& x_shape,
                   const std::function<std::vector<int64_t>(ModelJson&)>& operands,
                   const std::string& options_type = "", const std::string& options = "{}",
                   int outputs = 1) {
    ModelJson m;
    int c = m.builtin(name, code);
    int x = m.tensor("x", x_shape);
    std::vector<int64_t> in = {x};
    for (int64_t t : operands(m)) in.push_back(t);
    std::vector<int64_t> outs;
    for (int i = 0; i < outputs; ++i) outs.push_back(m.tensor("y" + std::to_string(i), {2, 3}));
    m.op(c, in, outs, options_type, options);
    m.io({x}, outs);
    return m.bytes();
  };
  auto none = [](ModelJson&) { return std::vector<int64_t>{}; };
  auto indices = [](ModelJson& m) { return std::vector<int64_t>{m.i32("i", {2}, {0, 1})}; };
  check(one_op("GATHER", 36, {2, 3}, indices, "GatherOptions", R"({ "axis": 7 })"),
        "gather axis 7");
  check(one_op("GATHER", 36, {2, 3}, indices, "GatherOptions", R"({ "axis": -3 })"),
        "gather axis -3");
  check(one_op("GATHER", 36, {2, 3}, indices, "GatherOptions", R"({ "axis": 1, "batch_dims": 2 })"),
        "gather batch_dims past the axis");
  check(one_op("GATHER_ND", 107, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("i", {4, 3}, std::vector<int32_t>(12, 0))};
               }),
        "gather_nd deeper than the params");
  check(one_op("SLICE", 65, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("b", {2}, {0, 0}), m.i32("s", {2}, {-5, 1})};
               }),
        "slice size -5");
  check(one_op("SLICE", 65, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("b", {2}, {3, 0}), m.i32("s", {2}, {-1, 1})};
               }),
        "slice begin past the end");
  check(one_op("SLICE", 65, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("b", {2}, {0, 2147483647}),
                                             m.i32("s", {2}, {1, 2147483647})};
               }),
        "slice begin + size overflows");
  check(one_op("TILE", 69, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("k", {2}, {1 << 30, 1 << 30})};
               }),
        "tile huge multiples");
  check(one_op("TILE", 69, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("k", {2}, {-1, 2})};
               }),
        "tile negative multiple");
  check(one_op("BROADCAST_TO", 130, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("s", {2}, {-2, 3})};
               }),
        "broadcast_to negative dimension");
  check(one_op("BROADCAST_TO", 130, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{
                     m.tensor("s", {2}, "INT64", m.buffer(i64_bytes({int64_t{1} << 40, 3})))};
               }),
        "broadcast_to dimension past int32");
  check(one_op("STRIDED_SLICE", 45, {2, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("b", {2}, {0, 0}), m.i32("e", {2}, {2, 3}),
                                             m.i32("s", {2}, {1, 0})};
               }),
        "strided_slice stride 0");
  check(one_op(
            "STRIDED_SLICE", 45, {2, 3},
            [](ModelJson& m) {
              return std::vector<int64_t>{m.i32("b", {3}, {0, 0, 0}), m.i32("e", {3}, {1, 1, 1}),
                                          m.i32("s", {3}, {1, 1, 1})};
            },
            "StridedSliceOptions", R"({ "ellipsis_mask": 5 })"),
        "strided_slice two ellipses");
  check(one_op(
            "STRIDED_SLICE", 45, {2, 3},
            [](ModelJson& m) {
              return std::vector<int64_t>{m.i32("b", {2}, {0, 0}), m.i32("e", {2}, {2, 3}),
                                          m.i32("s", {2}, {1, 1})};
            },
            "StridedSliceOptions", R"({ "new_axis_mask": -2147483648 })"),
        "strided_slice mask bits past the spec");
  check(one_op(
            "STRIDED_SLICE", 45, {2, 3},
            [](ModelJson& m) {
              return std::vector<int64_t>{m.i32("b", {2}, {0, 1}), m.i32("e", {2}, {2, 2147483647}),
                                          m.i32("s", {2}, {1, 1})};
            },
            "StridedSliceOptions", R"({ "offset": true })"),
        "strided_slice offset end past the dimension");
  check(one_op(
            "SPLIT_V", 102, {2, 3},
            [](ModelJson& m) {
              return std::vector<int64_t>{m.i32("sizes", {2}, {-2, 5}), m.i32("axis", {}, {1})};
            },
            "SplitVOptions", R"({ "num_splits": 2 })", 2),
        "split_v negative size");
  check(one_op(
            "SPLIT_V", 102, {2, 3},
            [](ModelJson& m) {
              return std::vector<int64_t>{m.i32("sizes", {2}, {-1, -1}), m.i32("axis", {}, {1})};
            },
            "SplitVOptions", R"({ "num_splits": 2 })", 2),
        "split_v two -1 sizes");
  check(one_op("UNPACK", 88, {2, 3}, none, "UnpackOptions", R"({ "num": 3, "axis": 0 })", 3),
        "unpack num differs from the dimension");
  check(one_op("PACK", 83, {2, 3}, none, "PackOptions", R"({ "values_count": 1, "axis": 5 })"),
        "pack axis out of range");
  check(one_op("PACK", 83, {2, 3}, none, "PackOptions", R"({ "values_count": 4, "axis": 0 })"),
        "pack values_count differs from the inputs");
  check(one_op("BATCH_TO_SPACE_ND", 37, {4, 1, 1, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("block", {2}, {2, 2}),
                                             m.i32("crops", {2, 2}, {0, 5, 0, 0})};
               }),
        "batch_to_space crops past the size");
  check(one_op("SPACE_TO_BATCH_ND", 38, {1, 4, 4, 3},
               [](ModelJson& m) {
                 return std::vector<int64_t>{m.i32("block", {2}, {0, 2}),
                                             m.i32("pads", {2, 2}, {0, 0, 0, 0})};
               }),
        "space_to_batch block 0");
  check(one_op(
            "TOPK_V2", 48, {2, 3},
            [](ModelJson& m) { return std::vector<int64_t>{m.i32("k", {}, {-1})}; }, "", "{}", 2),
        "topk negative k");
  {  // FILL: negative dims, dims past int32, more dims than max_rank.
    auto fill = [&](const std::string& dims_json, int64_t count, const std::string& type) {
      ModelJson m;
      int c = m.builtin("FILL", 94);
      int dims = m.tensor("dims", {count}, type, m.buffer(dims_json));
      int v = m.tensor("v", {});
      int y = m.tensor("y", {2, 3});
      m.op(c, {dims, v}, {y});
      m.io({v}, {y});
      return m.bytes();
    };
    check(fill(i32_bytes({2, -3}), 2, "INT32"), "fill negative dims");
    check(fill(i64_bytes({2, int64_t{1} << 33}), 2, "INT64"), "fill dims past int32");
    check(fill(i32_bytes(std::vector<int32_t>(100, 1)), 100, "INT32"), "fill rank 100");
  }
  {  // RANGE: delta 0; a span that overflows int32.
    auto range = [&](int32_t start, int32_t limit, int32_t delta) {
      ModelJson m;
      int c = m.builtin("RANGE", 96);
      int a = m.i32("start", {}, {start}), b = m.i32("limit", {}, {limit});
      int k = m.i32("delta", {}, {delta});
      int y = m.tensor("y", {4}, "INT32");
      m.op(c, {a, b, k}, {y});
      m.io({}, {y});
      return m.bytes();
    };
    check(range(0, 4, 0), "range delta 0");
    check(range(4, 0, 1), "range the wrong way");
    check(range(-2147483647 - 1, 2147483647, 1 << 30), "range span past int32");
  }
}

TEST(Hostile, ConvWithHugeStrideAndDilation) {
  // No overflow in the SAME padding arithmetic.
  expect_converts_or_rejects(conv_model(2147483647, 2147483647, 2147483647, 1));
}

TEST(Hostile, PoolWithZeroFilter) {
  ModelJson m;
  int c = m.builtin("MAX_POOL_2D", 17);
  int x = m.tensor("x", {1, 4, 4, 2}), y = m.tensor("y", {1, 2, 2, 2});
  m.op(
      c, {x}, {y}, "Pool2DOptions",
      R"({ "padding": "VALID", "stride_h": 2, "stride_w": 2, "filter_width": 0, "filter_height": 2 })");
  m.io({x}, {y});
  expect_op_error(m.bytes(), "MAX_POOL_2D", "filter size must be positive");
}

Bytes transpose_model(const std::vector<int32_t>& perm) {
  ModelJson m;
  int c = m.builtin("TRANSPOSE", 39);
  int x = m.tensor("x", {2, 3, 4, 5});
  int p = m.i32("perm", {static_cast<int64_t>(perm.size())}, perm);
  int y = m.tensor("y", {5, 4, 3, 2});
  m.op(c, {x, p}, {y});
  m.io({x}, {y});
  return m.bytes();
}

TEST(Hostile, TransposeWithANonPermutation) {
  ASSERT_TRUE(run(view(transpose_model({3, 2, 1, 0}))).ok());
  expect_op_error(transpose_model({0, 0, 1, 2}), "TRANSPOSE",
                  "perm [0,0,1,2] is not a permutation");
  expect_op_error(transpose_model({0, 1, 2, 4}), "TRANSPOSE", "is not a permutation");
  expect_op_error(transpose_model({-1, 1, 2, 3}), "TRANSPOSE", "is not a permutation");
  expect_op_error(transpose_model({0, 1, 2}), "TRANSPOSE", "one entry per input dimension");
}

Bytes strided_slice_model(const std::vector<int32_t>& strides, int32_t end1 = 3) {
  ModelJson m;
  int c = m.builtin("STRIDED_SLICE", 45);
  int x = m.tensor("x", {2, 6});
  int b = m.i32("begin", {2}, {0, 0});
  int e = m.i32("end", {2}, {2, end1});
  int s = m.i32("strides", {static_cast<int64_t>(strides.size())}, strides);
  int y = m.tensor("y", {2, 3});
  m.op(c, {x, b, e, s}, {y}, "StridedSliceOptions", "{}");
  m.io({x}, {y});
  return m.bytes();
}

TEST(Hostile, StridedSliceWithStrideZero) {
  ASSERT_TRUE(run(view(strided_slice_model({1, 1}))).ok());
  expect_op_error(strided_slice_model({1, 0}), "STRIDED_SLICE", "stride 0");
  expect_op_error(strided_slice_model({1}), "STRIDED_SLICE", "constants of equal length");
}

// 65 slice entries: every mask bit test must stay within the 32-bit masks
// (a shift by 64 or more is undefined behaviour).
TEST(Hostile, StridedSliceWithMoreEntriesThanMaskBits) {
  ModelJson m;
  int c = m.builtin("STRIDED_SLICE", 45);
  int x = m.tensor("x", {2, 6});
  std::vector<int32_t> zeros(65, 0), ones(65, 1);
  int b = m.i32("begin", {65}, zeros);
  int e = m.i32("end", {65}, ones);
  int s = m.i32("strides", {65}, ones);
  int y = m.tensor("y", {2, 6});
  m.op(c, {x, b, e, s}, {y}, "StridedSliceOptions", R"({ "ellipsis_mask": 1 })");
  m.io({x}, {y});
  expect_op_error(m.bytes(), "STRIDED_SLICE", "");
}

TEST(Hostile, ReshapeWhoseTargetDoesNotFit) {
  ModelJson m;
  int c = m.builtin("RESHAPE", 22);
  int x = m.tensor("x", {2, 3});
  int s = m.i32("shape", {2}, {4, 2});
  int y = m.tensor("y", {4, 2});
  m.op(c, {x, s}, {y}, "ReshapeOptions", R"({ "new_shape": [4, 2] })");
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (RESHAPE)"));
  EXPECT_THAT(e.message, HasSubstr("[2, 3]"));
  EXPECT_THAT(e.message, HasSubstr("[4, 2]"));
  EXPECT_EQ(e.op_index, 0);
}

Bytes split_model(int dim, int parts) {
  ModelJson m;
  int c = m.builtin("SPLIT", 49);
  int axis = m.i32("axis", {}, {1});
  int x = m.tensor("x", {2, dim});
  std::vector<int64_t> outs;
  for (int i = 0; i < parts; ++i)
    outs.push_back(m.tensor("y" + std::to_string(i), {2, dim / parts}));
  m.op(c, {axis, x}, outs, "SplitOptions", "{ \"num_splits\": " + std::to_string(parts) + " }");
  m.io({x}, outs);
  return m.bytes();
}

TEST(Hostile, SplitThatDoesNotDivideEvenly) {
  ASSERT_TRUE(run(view(split_model(6, 2))).ok());
  expect_op_error(split_model(5, 2), "SPLIT", "dimension 5 does not split into 2 equal parts");
}

TEST(Hostile, SplitWithAxisOutOfRange) {
  ModelJson m;
  int c = m.builtin("SPLIT", 49);
  int axis = m.i32("axis", {}, {7});
  int x = m.tensor("x", {2, 6});
  int y0 = m.tensor("y0", {2, 3}), y1 = m.tensor("y1", {2, 3});
  m.op(c, {axis, x}, {y0, y1}, "SplitOptions", R"({ "num_splits": 2 })");
  m.io({x}, {y0, y1});
  expect_op_error(m.bytes(), "SPLIT", "axis is out of range");
}

TEST(Hostile, UnknownBuiltinCode) {
  ModelJson m;
  int c = m.builtin("", 300);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {x}, {y});
  m.io({x}, {y});
  Error e = expect_error(m.bytes(), ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("BUILTIN_300"));
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].op_index, 0);
  EXPECT_EQ(e.unsupported[0].op, "BUILTIN_300");
  auto info = inspect(view(m.bytes()));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_EQ(info->ops.size(), 1u);
  EXPECT_FALSE(info->ops[0].supported);
  // The largest codes a 32-bit enum can carry behave the same.
  ModelJson m2;
  c = m2.builtin("", 2147483647);
  x = m2.tensor("x", {1, 4});
  y = m2.tensor("y", {1, 4});
  m2.op(c, {x}, {y});
  m2.io({x}, {y});
  e = expect_error(m2.bytes(), ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("BUILTIN_2147483647"));
}

// ---- operands missing or of the wrong kind --------------------------------------

// A supported op whose operand is omitted (-1) or absent: a clear error naming
// the op, not an out-of-bounds read.
void expect_missing_operand_error(const Bytes& b, const std::string& op) {
  Outcome r = convert_isolated(view(b));
  ASSERT_EQ(r.died, "") << op << " with a missing operand";
  ASSERT_FALSE(r.ok) << op << " with a missing operand converted";
  EXPECT_THAT(r.error.code, AnyOf(ErrorCode::kUnsupported, ErrorCode::kInvalidModel))
      << r.error.message;
  EXPECT_THAT(r.error.message, HasSubstr(op));
}

TEST(Hostile, UnaryOpWithOmittedInput) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {-1}, {y});
  m.io({x}, {y});
  expect_missing_operand_error(m.bytes(), "ABS");
}

TEST(Hostile, UnaryOpWithoutInputs) {
  ModelJson m;
  int c = m.builtin("RELU", 19);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {}, {y});
  m.io({x}, {y});
  expect_missing_operand_error(m.bytes(), "RELU");
}

TEST(Hostile, SoftmaxWithoutInputs) {
  ModelJson m;
  int c = m.builtin("SOFTMAX", 25);
  int x = m.tensor("x", {1, 4}), y = m.tensor("y", {1, 4});
  m.op(c, {}, {y}, "SoftmaxOptions", "{}");
  m.io({x}, {y});
  expect_missing_operand_error(m.bytes(), "SOFTMAX");
}

TEST(Hostile, OpsWithOmittedDataInput) {
  struct Case {
    const char* name;
    int code;
    const char* options_type;
  };
  for (Case k : {Case{"TRANSPOSE", 39, ""}, Case{"PAD", 34, "PadOptions"},
                 Case{"SQUEEZE", 43, "SqueezeOptions"}, Case{"MEAN", 40, "ReducerOptions"},
                 Case{"STRIDED_SLICE", 45, "StridedSliceOptions"},
                 Case{"FULLY_CONNECTED", 9, "FullyConnectedOptions"},
                 Case{"CONCATENATION", 2, "ConcatenationOptions"},
                 Case{"RESHAPE", 22, "ReshapeOptions"}, Case{"LOGISTIC", 14, ""},
                 Case{"HARD_SWISH", 117, ""}, Case{"LEAKY_RELU", 98, "LeakyReluOptions"}}) {
    SCOPED_TRACE(k.name);
    ModelJson m;
    int c = m.builtin(k.name, k.code);
    int x = m.tensor("x", {2, 2});
    int k1 = m.i32("k1", {2}, {1, 0});
    int k2 = m.i32("k2", {2}, {2, 2});
    int k3 = m.i32("k3", {2}, {1, 1});
    int y = m.tensor("y", {2, 2});
    m.op(c, {-1, k1, k2, k3}, {y}, k.options_type, "{}");
    m.io({x}, {y});
    expect_missing_operand_error(m.bytes(), k.name);
  }
}

TEST(Hostile, MeanWithFloatAxes) {
  ModelJson m;
  int c = m.builtin("MEAN", 40);
  int x = m.tensor("x", {2, 3});
  int axes = m.f32("axes", {1}, {1});
  int y = m.tensor("y", {2});
  m.op(c, {x, axes}, {y}, "ReducerOptions", "{}");
  m.io({x}, {y});
  expect_op_error(m.bytes(), "MEAN", "axes");
}

TEST(Hostile, TransposeWithFloatPerm) {
  ModelJson m;
  int c = m.builtin("TRANSPOSE", 39);
  int x = m.tensor("x", {2, 3});
  int p = m.f32("perm", {2}, {1, 0});
  int y = m.tensor("y", {3, 2});
  m.op(c, {x, p}, {y});
  m.io({x}, {y});
  expect_op_error(m.bytes(), "TRANSPOSE", "perm");
}

TEST(Hostile, BinaryOpWithOneInput) {
  ModelJson m;
  int c = m.builtin("MUL", 18);
  int x = m.tensor("x", {2, 3}), y = m.tensor("y", {2, 3});
  m.op(c, {x}, {y}, "MulOptions", "{}");
  m.io({x}, {y});
  expect_op_error(m.bytes(), "MUL", "input");
}

TEST(Hostile, OpWithoutOutputs) {
  ModelJson m;
  int c = m.builtin("ABS", 101);
  int x = m.tensor("x", {1, 4});
  m.op(c, {x}, {});
  m.io({x}, {x});
  expect_op_error(m.bytes(), "ABS", "no outputs");
}

TEST(Hostile, ConvWithWrongRankFilter) {
  ModelJson m;
  int c = m.builtin("CONV_2D", 3);
  int x = m.tensor("x", {1, 5, 5, 2});
  int w = m.f32("w", {2}, {1, 1});
  int y = m.tensor("y", {1, 5, 5, 1});
  m.op(c, {x, w}, {y}, "Conv2DOptions", kStride1);
  m.io({x}, {y});
  expect_op_error(m.bytes(), "CONV_2D", "has rank 1, expected 4");
}

// Output shapes that contradict the op: the layout pass must not index a
// rank-4 layout into a rank-2 shape.
TEST(Hostile, SplitOutputsOfTheWrongRankAfterConv) {
  ModelJson m;
  int conv = m.builtin("CONV_2D", 3), split = m.builtin("SPLIT", 49);
  int x = m.tensor("x", {1, 4, 4, 2});
  int w = m.f32("w", {2, 1, 1, 2}, {1, 0, 0, 1});
  int c = m.tensor("c", {1, 4, 4, 2});
  int axis = m.i32("axis", {}, {3});
  int y0 = m.tensor("y0", {4, 4}), y1 = m.tensor("y1", {4, 4});
  m.op(conv, {x, w, -1}, {c}, "Conv2DOptions", kStride1);
  m.op(split, {axis, c}, {y0, y1}, "SplitOptions", R"({ "num_splits": 2 })");
  m.io({x}, {y0, y1});
  // TFLite computes [1, 4, 4, 1] for both at Prepare: so does the converter
  // (NCHW in ONNX, as the convolution runs), and says so.
  Diagnostics d;
  EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{1, 1, 4, 4}, {1, 1, 4, 4}}));
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_THAT(d.warnings[0], HasSubstr("tensor 'y0'"));
  EXPECT_THAT(d.warnings[1], HasSubstr("op 1 (SPLIT) computes [1, 4, 4, 1]"));
}

TEST(Hostile, MeanKeepDimsWithOutputOfTheWrongRankAfterConv) {
  ModelJson m;
  int conv = m.builtin("CONV_2D", 3), mean = m.builtin("MEAN", 40);
  int x = m.tensor("x", {1, 4, 4, 2});
  int w = m.f32("w", {2, 1, 1, 2}, {1, 0, 0, 1});
  int c = m.tensor("c", {1, 4, 4, 2});
  int axes = m.i32("axes", {2}, {1, 2});
  int y = m.tensor("y", {1, 2});
  m.op(conv, {x, w, -1}, {c}, "Conv2DOptions", kStride1);
  m.op(mean, {c, axes}, {y}, "ReducerOptions", R"({ "keep_dims": true })");
  m.io({x}, {y});
  // TFLite computes [1, 1, 1, 2] at Prepare: so does the converter, and says so.
  auto bytes = m.bytes();
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("tensor 'y'"));
  EXPECT_THAT(d.warnings[0], HasSubstr("op 1 (MEAN) computes [1, 1, 1, 2]"));
}

// ---- shapes the ops contradict ---------------------------------------------

// TFLite resizes an op's output at Prepare: the shape the op computes wins
// over the file's, with a warning naming the tensor.
TEST(Hostile, OutputShapeContradictsTheOp) {
  ModelJson m;
  int c = m.builtin("ADD", 0);
  int a = m.tensor("a", {1, 2, 4, 4}), b = m.tensor("b", {1, 2, 4, 4});
  int y = m.tensor("y", {1, 2, 4, 9});
  m.op(c, {a, b}, {y}, "AddOptions", "{}");
  m.io({a, b}, {y});
  auto bytes = m.bytes();
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*r));
  const auto& dims = model.graph().output(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[3].dim_value(), 4);  // (NCHW) [1, 4, 2, 4]: W is 4
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("tensor 'y'"));
  EXPECT_THAT(d.warnings[0], HasSubstr("[1, 2, 4, 9]"));
  EXPECT_THAT(d.warnings[0], HasSubstr("op 0 (ADD) computes [1, 2, 4, 4]"));
}

TEST(Hostile, SplitVSizesThatDoNotAddUp) {
  ModelJson m;
  int c = m.builtin("SPLIT_V", 102);
  int x = m.tensor("x", {2, 6});
  int sizes = m.i32("sizes", {2}, {2, 5});
  int axis = m.i32("axis", {}, {1});
  int y0 = m.tensor("y0", {2, 2}), y1 = m.tensor("y1", {2, 5});
  m.op(c, {x, sizes, axis}, {y0, y1}, "SplitVOptions", R"({ "num_splits": 2 })");
  m.io({x}, {y0, y1});
  expect_op_error(m.bytes(), "SPLIT_V", "size_splits");
}

TEST(Hostile, DequantizeWithAnOutputOfAnotherShape) {
  ModelJson m;
  int dq = m.builtin("DEQUANTIZE", 6), add = m.builtin("ADD", 0);
  int h = m.tensor("half", {2}, "FLOAT16", m.buffer("[0, 60, 0, 64]"));
  int f = m.tensor("float", {3});
  int x = m.tensor("x", {3}), y = m.tensor("y", {3});
  m.op(dq, {h}, {f});
  m.op(add, {x, f}, {y}, "AddOptions", "{}");
  m.io({x}, {y});
  // DEQUANTIZE gives [2], as TFLite computes it; then ADD [3] + [2] cannot broadcast.
  Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 1 "));
  EXPECT_THAT(e.message, HasSubstr("'y'"));
}

// MediaPipe's face_blendshapes: a float16 scalar DEQUANTIZE whose output the
// file declares with no shape at all (unknown rank). TFLite's kernel gives it
// the input's shape, a scalar; so does inference, and the MUL converts.
TEST(Hostile, ShapelessDequantizeOfAScalarIsAScalar) {
  ModelJson m;
  int dq = m.builtin("DEQUANTIZE", 6), mul = m.builtin("MUL", 18);
  int h = m.tensor("half", {}, "FLOAT16", m.buffer("[0, 60]"));  // 1.0
  int f = m.raw_tensor(R"({ "name": "float", "type": "FLOAT32" })");
  int x = m.tensor("x", {2, 3}), y = m.tensor("y", {2, 3});
  m.op(dq, {h}, {f});
  m.op(mul, {x, f}, {y}, "MulOptions", "{}");
  m.io({x}, {y});
  Diagnostics d;
  EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{2, 3}}));
}

// ---- odd interfaces -----------------------------------------------------------

TEST(Hostile, GraphOutputThatIsAConstant) {
  ModelJson m = abs_model();
  int k = m.f32("k", {2}, {1, 2});
  m.io({0}, {1, k});
  expect_converts_or_rejects(m.bytes());
}

// Every graph output of the ONNX model is something: a node's output, an
// initializer or a graph input (ONNX Runtime refuses the model otherwise).
void expect_outputs_exist(const onnx::ModelProto& model) {
  std::set<std::string> values;
  for (const auto& n : model.graph().node())
    for (const auto& o : n.output()) values.insert(o);
  for (const auto& i : model.graph().initializer()) values.insert(i.name());
  for (const auto& i : model.graph().input()) values.insert(i.name());
  for (const auto& o : model.graph().output()) EXPECT_TRUE(values.count(o.name())) << o.name();
}

// A float16 weight's DEQUANTIZE folds to a constant; as a graph output (a
// model cut at its weights) it is an initializer, also when the convolution
// reading it reads a permuted copy.
TEST(Hostile, FoldedWeightAsGraphOutputIsAnInitializer) {
  ModelJson m;
  int dq = m.builtin("DEQUANTIZE", 6), conv = m.builtin("CONV_2D", 3);
  // 1.0 and 2.0 in float16, as a [2, 1, 1, 1] OHWI filter.
  int h = m.tensor("half", {2, 1, 1, 1}, "FLOAT16", m.buffer("[0, 60, 0, 64]"));
  int w = m.tensor("weights", {2, 1, 1, 1});
  int x = m.tensor("x", {1, 3, 4, 1}), y = m.tensor("y", {1, 3, 4, 2});
  m.op(dq, {h}, {w});
  m.op(conv, {x, w}, {y}, "Conv2DOptions",
       R"({ "padding": "VALID", "stride_w": 1, "stride_h": 1 })");
  m.io({x}, {y, w});
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(m.bytes()), o, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*r));
  expect_outputs_exist(model);
  // Only the weights, read by nothing.
  ModelJson alone;
  int dq2 = alone.builtin("DEQUANTIZE", 6);
  int h2 = alone.tensor("half", {2}, "FLOAT16", alone.buffer("[0, 60, 0, 64]"));
  int w2 = alone.tensor("weights", {2});
  alone.op(dq2, {h2}, {w2});
  alone.io({}, {w2});
  auto r2 = convert(view(alone.bytes()), o, d);
  ASSERT_TRUE(r2.ok()) << r2.error().message;
  ASSERT_TRUE(model.ParseFromString(*r2));
  expect_outputs_exist(model);
}

TEST(Hostile, TensorListedTwiceAsGraphOutput) {
  ModelJson m = abs_model();
  m.io({0}, {1, 1});
  expect_converts_or_rejects(m.bytes());
}

TEST(Hostile, GraphInputThatIsAlsoAnOutput) {
  ModelJson m = abs_model();
  m.io({0}, {0, 1});
  expect_converts_or_rejects(m.bytes());
}

TEST(Hostile, GraphInputThatIsAConstant) {
  ModelJson m;
  int c = m.builtin("ADD", 0);
  int x = m.tensor("x", {2});
  int k = m.f32("k", {2}, {1, 2});
  int y = m.tensor("y", {2});
  m.op(c, {x, k}, {y}, "AddOptions", "{}");
  m.io({x, k}, {y});
  expect_converts_or_rejects(m.bytes());
}

// ---- amplification ------------------------------------------------------------

// FlatBuffers let many offsets point at one table. A tensor table with a long
// name (or a long per-axis scale vector) listed thousands of times is a small
// file; the reader must not copy the shared data once per listing.
Bytes aliased_tensors_model(size_t copies, size_t name_bytes, size_t scales) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int32_t> shape = {1, static_cast<int32_t>(scales ? scales : 1)};
  std::vector<float> scale(scales, 0.5f);
  auto quant =
      scales ? tflite::CreateQuantizationParametersDirect(fbb, nullptr, nullptr, &scale, nullptr,
                                                          tflite::QuantizationDetails::NONE, 0, 1)
             : 0;
  std::string name(name_bytes, 'n');
  auto t =
      tflite::CreateTensorDirect(fbb, &shape, tflite::TensorType::FLOAT32, 0, name.c_str(), quant);
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors(copies, t);
  std::vector<int32_t> io = {0};
  auto sg = tflite::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(io),
                                   fbb.CreateVector(io));
  std::vector<flatbuffers::Offset<tflite::SubGraph>> sgs = {sg};
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers = {tflite::CreateBuffer(fbb)};
  auto model = tflite::CreateModel(fbb, 3, 0, fbb.CreateVector(sgs), 0, fbb.CreateVector(buffers));
  fbb.Finish(model, "TFL3");
  return finished(fbb);
}

TEST(Hostile, SharedDataDoesNotAmplifyMemory) {
  // 2048 listings of one tensor with a 64 KiB name: 128 MiB if copied each time.
  Bytes names = aliased_tensors_model(2048, 64 << 10, 0);
  ASSERT_LT(names.size(), 100u << 10);
  long grew = rss_growth_mib([&] {
    Diagnostics d;
    (void)convert(view(names), {}, d);
  });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a " << names.size() / 1024 << " KiB model (shared names)";

  // 2048 listings of one tensor with 16384 per-axis scales: 128 MiB of floats.
  Bytes scales = aliased_tensors_model(2048, 8, 16384);
  ASSERT_LT(scales.size(), 100u << 10);
  grew = rss_growth_mib([&] { (void)inspect(view(scales)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a " << scales.size() / 1024 << " KiB model (shared scales)";

  // Operators share operator codes by design: 2048 custom ops of one code with
  // a 64 KiB custom_code must not copy it per op (128 MiB).
  ModelJson m;
  int c = m.raw_code("{ \"deprecated_builtin_code\": 32, \"custom_code\": \"" +
                     std::string(64 << 10, 'c') + "\" }");
  int prev = m.tensor("t", {1});
  for (int i = 0; i < 2048; ++i) {
    int next = m.tensor("t" + std::to_string(i), {1});
    m.op(c, {prev}, {next});
    prev = next;
  }
  m.io({0}, {prev});
  Bytes ops = m.bytes();
  ASSERT_LT(ops.size(), 400u << 10);
  grew = rss_growth_mib([&] {
    Diagnostics d;
    (void)convert(view(ops), {}, d);
  });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a " << ops.size() / 1024 << " KiB model (shared custom code)";
}

// A model whose subgraph list names one subgraph `copies` times (its name
// `name_bytes` long), and whose signature list has `signatures` SignatureDefs
// sharing one key of `key_bytes`, each with one input naming tensor 0, whose
// name is `name_bytes` long too: small files that list a lot of text.
Bytes aliased_subgraphs_model(size_t copies, size_t name_bytes, size_t signatures,
                              size_t key_bytes) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int32_t> shape = {1};
  std::string name(name_bytes, 'n');
  auto shared_name = fbb.CreateString(name);
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors = {tflite::CreateTensor(
      fbb, fbb.CreateVector(shape), tflite::TensorType::FLOAT32, 0, shared_name)};
  std::vector<int32_t> io = {0};
  auto sg = tflite::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(io),
                                   fbb.CreateVector(io), 0, shared_name);
  std::vector<flatbuffers::Offset<tflite::SubGraph>> sgs(copies, sg);
  auto key = fbb.CreateString(std::string(key_bytes, 'k'));
  std::vector<flatbuffers::Offset<tflite::SignatureDef>> defs;
  for (size_t i = 0; i < signatures; ++i) {
    std::vector<flatbuffers::Offset<tflite::TensorMap>> maps = {
        tflite::CreateTensorMap(fbb, shared_name, 0)};
    defs.push_back(tflite::CreateSignatureDef(fbb, fbb.CreateVector(maps), 0, key, 0));
  }
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers = {tflite::CreateBuffer(fbb)};
  auto model = tflite::CreateModel(fbb, 3, 0, fbb.CreateVector(sgs), 0, fbb.CreateVector(buffers),
                                   0, 0, fbb.CreateVector(defs));
  fbb.Finish(model, "TFL3");
  return finished(fbb);
}

TEST(Hostile, SharedSubgraphsAndSignaturesAreAResourceLimit) {
  // 2,048 listings of one subgraph with a 64 KiB name: 128 MiB if each
  // summary copied it.
  Bytes subgraphs = aliased_subgraphs_model(2048, 64 << 10, 0, 0);
  ASSERT_LT(subgraphs.size(), 100u << 10);
  Error e = expect_error(subgraphs, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("expands to far more than its size"));
  long grew = rss_growth_mib([&] { (void)inspect(view(subgraphs)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a " << subgraphs.size() / 1024 << " KiB model";

  // 4,096 signatures sharing a 64 KiB key, each naming a tensor with a 64 KiB
  // name through an alias that is that name: 768 MiB of copies.
  Bytes signatures = aliased_subgraphs_model(1, 64 << 10, 4096, 64 << 10);
  ASSERT_LT(signatures.size(), 400u << 10);
  e = expect_error(signatures, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("signature"));
  EXPECT_THAT(e.message, HasSubstr("expands to far more than its size"));
  grew = rss_growth_mib([&] { (void)inspect(view(signatures)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB for a " << signatures.size() / 1024 << " KiB model";

  // A few of them are fine.
  Bytes few = aliased_subgraphs_model(3, 64, 3, 64);
  auto info = inspect(view(few));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->subgraphs.size(), 3u);
  EXPECT_EQ(info->signatures.size(), 3u);
}

// Control flow and state copy names: a resource's names are read from the
// options of every VAR_HANDLE, a subgraph's names once per op that runs it.
// Shared FlatBuffer strings make both cheap to write and costly to copy.
Bytes shared_name_ops(int ops, size_t name_bytes, bool calls) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int32_t> shape = {1};
  auto long_name = fbb.CreateString(std::string(name_bytes, 'n'));
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
  std::vector<flatbuffers::Offset<tflite::Operator>> operators;
  std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs;
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes;
  std::vector<int32_t> io = {0};
  if (calls) {
    // Subgraph 1: two tensors with the long name, y = ABS(x); the main graph
    // CALLs it `ops` times in a chain.
    codes = {tflite::CreateOperatorCode(fbb, 31, 0, 1, tflite::BuiltinOperator::CALL),
             tflite::CreateOperatorCode(fbb, 101, 0, 1, tflite::BuiltinOperator::ABS)};
    std::vector<flatbuffers::Offset<tflite::Tensor>> callee_tensors;
    for (int i = 0; i < 2; ++i)
      callee_tensors.push_back(tflite::CreateTensor(fbb, fbb.CreateVector(shape),
                                                    tflite::TensorType::FLOAT32, 0, long_name));
    std::vector<int32_t> in = {0}, out = {1};
    std::vector<flatbuffers::Offset<tflite::Operator>> callee_ops = {
        tflite::CreateOperator(fbb, 1, fbb.CreateVector(in), fbb.CreateVector(out))};
    auto callee =
        tflite::CreateSubGraph(fbb, fbb.CreateVector(callee_tensors), fbb.CreateVector(in),
                               fbb.CreateVector(out), fbb.CreateVector(callee_ops));
    auto options = tflite::CreateCallOptions(fbb, 1).Union();
    for (int i = 0; i <= ops; ++i)
      tensors.push_back(tflite::CreateTensor(fbb, fbb.CreateVector(shape),
                                             tflite::TensorType::FLOAT32, 0,
                                             fbb.CreateString("t" + std::to_string(i))));
    for (int i = 0; i < ops; ++i) {
      std::vector<int32_t> a = {i}, b = {i + 1};
      operators.push_back(tflite::CreateOperator(fbb, 0, fbb.CreateVector(a), fbb.CreateVector(b),
                                                 tflite::BuiltinOptions::CallOptions, options));
    }
    std::vector<int32_t> last = {ops};
    subgraphs = {tflite::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(io),
                                        fbb.CreateVector(last), fbb.CreateVector(operators)),
                 callee};
  } else {
    // `ops` VAR_HANDLEs whose options share one long shared_name.
    codes = {tflite::CreateOperatorCode(fbb, 127, 0, 1, tflite::BuiltinOperator::VAR_HANDLE)};
    tensors.push_back(tflite::CreateTensor(fbb, fbb.CreateVector(shape),
                                           tflite::TensorType::FLOAT32, 0, fbb.CreateString("x")));
    auto options = tflite::CreateVarHandleOptions(fbb, 0, long_name).Union();
    for (int i = 0; i < ops; ++i) {
      tensors.push_back(tflite::CreateTensor(fbb, 0, tflite::TensorType::RESOURCE, 0,
                                             fbb.CreateString("h" + std::to_string(i))));
      std::vector<int32_t> none, h = {i + 1};
      operators.push_back(
          tflite::CreateOperator(fbb, 0, fbb.CreateVector(none), fbb.CreateVector(h),
                                 tflite::BuiltinOptions::VarHandleOptions, options));
    }
    subgraphs = {tflite::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(io),
                                        fbb.CreateVector(io), fbb.CreateVector(operators))};
  }
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers = {tflite::CreateBuffer(fbb)};
  auto model = tflite::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs), 0,
                                   fbb.CreateVector(buffers));
  fbb.Finish(model, "TFL3");
  return finished(fbb);
}

TEST(Hostile, SharedNamesCopiedByControlFlowAndStateAreAResourceLimit) {
  // 4,096 VAR_HANDLEs sharing a 64 KiB shared_name: 256 MiB of copies.
  Bytes handles = shared_name_ops(4096, 64 << 10, false);
  ASSERT_LT(handles.size(), 400u << 10);
  Error e = expect_error(handles, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("expands to far more than its size"));
  long grew = rss_growth_mib([&] { (void)run(view(handles)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB";
  // 4,096 CALLs of a subgraph whose two tensors share a 64 KiB name: 512 MiB
  // if every copy copied them.
  Bytes calls = shared_name_ops(4096, 64 << 10, true);
  ASSERT_LT(calls.size(), 600u << 10);
  e = expect_error(calls, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("copying the subgraph it runs"));
  // The copy budget lets names reach 16 MiB + 4 x the model (~18 MiB; 13 MiB
  // measured) before it refuses; ASan's redzones and quarantine take that to
  // 34-38 MiB. Copying every name would be 512 MiB.
  grew = rss_growth_mib([&] { (void)run(view(calls)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 64) << "MiB";
  // A few CALLs with short names convert.
  Outcome few = convert_isolated(view(shared_name_ops(4, 8, true)));
  ASSERT_EQ(few.died, "");
  EXPECT_TRUE(few.ok) << few.error.message;
}

// Limits at the top of their type must not wrap around in the verifier's
// table budget and make a valid model look corrupt.
TEST(Hostile, LimitsAtTheirMaximumDoNotWrap) {
  ModelJson m = abs_model();
  for (int i = 0; i < 1500; ++i) m.tensor("t" + std::to_string(i), {1});
  ConvertOptions o;
  o.limits.max_tensors = UINT32_MAX;
  o.limits.max_operators = UINT32_MAX;
  Outcome r = convert_isolated(view(m.bytes()), o);
  ASSERT_EQ(r.died, "");
  EXPECT_TRUE(r.ok) << r.error.message;
}

// ---- validated graph before any pass, and the conversion's limits ------------

// The issue-13 reproductions (tests/models/make_models_hostile.mjs): the
// dilated-convolution fusion read tensor -1 when it ran before the arity
// checks; the spectral fusion listed readers once per input slot, doubling
// its list at each RESHAPE(x, x) (2^34 entries, bad_alloc).
TEST(Hostile, AbsentInputOfAFusionPatternIsAnInvalidModel) {
  Bytes bytes = read_file(op_model("hostile/s2b_absent_input_dilated_conv"));
  Error e = expect_error(bytes, ErrorCode::kInvalidModel);
  EXPECT_EQ(e.op_index, 0);
  EXPECT_THAT(e.message, HasSubstr("op 0 (SPACE_TO_BATCH_ND) input 0 is missing"));
}

TEST(Hostile, ReshapesReadingOneTensorTwiceDoNotMultiplyReaders) {
  Bytes bytes = read_file(op_model("hostile/rfft_reshape_double_reads"));
  long grew = rss_growth_mib([&] { (void)run(view(bytes)); });
  ASSERT_GE(grew, 0) << "the converter died";
  EXPECT_LT(grew, 32) << "MiB";
  expect_error(bytes, ErrorCode::kUnsupported);
}

TEST(Hostile, InputsPerOpAboveTheLimitAreAResourceLimit) {
  ConvertOptions o;
  o.limits.max_inputs_per_op = 16;
  Error e = expect_error(testing::fan_out_concat(17), ErrorCode::kResourceLimit, o);
  EXPECT_EQ(e.op_index, 17);
  EXPECT_THAT(e.message, HasSubstr("17 inputs, more than the limit of 16 (max_inputs_per_op)"));
  o.limits.max_inputs_per_op = 17;
  EXPECT_TRUE(convert_isolated(view(testing::fan_out_concat(17)), o).ok);
}

// Operators sharing one inputs vector: a few KB describing millions of reads.
TEST(Hostile, OperatorsSharingInputListsAreAResourceLimit) {
  Error e = expect_error(testing::shared_input_vectors(2000, 2000), ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("operators sharing their input lists"));
  EXPECT_GE(e.op_index, 0);
}

TEST(Hostile, ConstantsCreatedBeyondTheLimitAreAResourceLimit) {
  ConvertOptions o;
  // FILL folding: 64 KiB per op.
  o.limits.max_created_bytes = 1 << 20;
  Error e = expect_error(testing::filled_constants(20, 1 << 14), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("max_created_bytes"));
  EXPECT_THAT(e.message, HasSubstr("Fill_"));
  // RFFT2D lowering: 2 x 1024 x 513 floats per op, refused before they exist.
  e = expect_error(testing::spectral_pairs(3, 1024), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("lowering would create 12607488 bytes"));
  EXPECT_THAT(e.message, HasSubstr("'Rfft2D_0'"));
  // Within the limit both convert.
  o.limits.max_created_bytes = 16 << 20;
  EXPECT_TRUE(convert_isolated(view(testing::filled_constants(20, 1 << 14)), o).ok);
  EXPECT_TRUE(convert_isolated(view(testing::spectral_pairs(3, 1024)), o).ok);
}

// The created-bytes limit trips before the work it bounds: folding and
// lowering add up what they would create from the shapes first, so the
// hostile models of the CLI test (12 GB of FILLs, 13 GB of DFT matrices)
// end having allocated next to nothing, not after the budget's 256 MiB.
TEST(Hostile, CreatedBytesLimitTripsBeforeTheWork) {
  const std::pair<const char*, std::function<Bytes()>> models[] = {
      {"constant folding would create 12582912000 bytes",
       [] { return testing::filled_constants(3000, 1 << 20); }},
      {"lowering would create 13428326400 bytes",
       [] { return testing::spectral_pairs(200, 4096); }},
  };
  for (const auto& [message, build] : models) {
    SCOPED_TRACE(message);
    const Bytes bytes = build();
    Error e = expect_error(bytes, ErrorCode::kResourceLimit);
    EXPECT_THAT(e.message, HasSubstr(message));
    long grew = rss_growth_mib([&] { (void)run(view(bytes)); });
    ASSERT_GE(grew, 0) << "the converter died";
    EXPECT_LT(grew, 16) << "MiB grown: the limit tripped after work, not before";
  }
}

// The default budget scales with the model: 256 MiB + 4 x its size.
TEST(Hostile, DefaultByteLimitsScaleWithTheModel) {
  Limits l = Limits{}.resolved(100 << 20);
  EXPECT_EQ(l.max_created_bytes, (256ull << 20) + (400ull << 20));
  EXPECT_EQ(l.max_output_bytes, (512ull << 20) + (800ull << 20));
  EXPECT_EQ(Limits{}.resolved(1ull << 30).max_output_bytes, (1ull << 31) - 1);
  Limits given;
  given.max_created_bytes = 7;
  EXPECT_EQ(given.resolved(1 << 20).max_created_bytes, 7u);
}

TEST(Hostile, OutputBeyondTheLimitIsAResourceLimit) {
  ConvertOptions o;
  o.limits.max_output_bytes = 64 << 10;  // the model adds a 256 KiB constant
  Error e =
      expect_error(testing::shared_constant_readers(2, 1 << 16), ErrorCode::kResourceLimit, o);
  EXPECT_THAT(e.message, HasSubstr("max_output_bytes"));
  o.limits.max_output_bytes = 1 << 20;
  EXPECT_TRUE(convert_isolated(view(testing::shared_constant_readers(2, 1 << 16)), o).ok);
}

// A run-time shape operand's length is the output's rank: a declared length of
// 2^31 made ONNX shape inference try to allocate that many dimensions.
TEST(Hostile, RunTimeShapeOperandLongerThanTheOutputRankIsInvalid) {
  for (auto [name, code] : {std::pair{"BROADCAST_TO", 130}, std::pair{"FILL", 94}}) {
    ModelJson m;
    int c = m.builtin(name, code);
    int x = m.tensor("x", {1, 4});
    int value = m.f32("value", {}, {2.f});
    int shape = m.tensor("shape", {2147483647}, "INT32");
    int y = m.tensor("y", {3, 4});
    if (std::string(name) == "FILL")
      m.op(c, {shape, value}, {y});
    else
      m.op(c, {x, shape}, {y});
    m.io({x, shape}, {y});
    Error e = expect_error(m.bytes(), ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr("holds 2147483647 values but output 'y' has rank 2")) << name;
  }
}

// Tensors all named alike: unique ONNX names in linear time.
TEST(Hostile, ManyTensorsWithOneNameGetUniqueNames) {
  auto r = run(view(testing::abs_chain(2000, "t")));
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  std::set<std::string> names;
  for (const auto& n : m.graph().node())
    for (const auto& o : n.output()) EXPECT_TRUE(names.insert(o).second) << o;
  EXPECT_EQ(names.size(), 2000u);
}

// ---- the benchmark's 200k-op graphs (bench/convert_bench.cc, Synthetic/*) ----------

// The count limits raised past them, as the benchmark does; the rest default.
ConvertOptions large_graph_options() {
  ConvertOptions o;
  o.limits.max_operators = 1'000'000;
  o.limits.max_tensors = 1'000'000;
  o.limits.max_inputs_per_op = 1'000'000;
  return o;
}

// Under ASan a conversion is several times slower: the same graphs, smaller.
constexpr int kLargeGraphOps = kSlowdown > 1 ? 25'000 : 200'000;

onnx::ModelProto convert_large(const Bytes& bytes) {
  onnx::ModelProto m;
  auto r = run(view(bytes), large_graph_options());
  if (!r.ok()) {
    ADD_FAILURE() << to_string(r.error().code) << ": " << r.error().message;
    return m;
  }
  EXPECT_TRUE(m.ParseFromString(*r));
  return m;
}

TEST(LargeGraph, ChainOf200kOps) {
  const onnx::ModelProto m = convert_large(testing::abs_chain(kLargeGraphOps));
  EXPECT_EQ(op_counts(m), (std::map<std::string, int>{{"Abs", kLargeGraphOps}}));
  ASSERT_EQ(m.graph().input_size(), 1);
  ASSERT_EQ(m.graph().output_size(), 1);
  EXPECT_EQ(m.graph().output(0).name(), "output");
  EXPECT_EQ(m.graph().value_info_size(), kLargeGraphOps - 1);
  // A chain: each node reads what the one before it wrote.
  for (int i = 1; i < m.graph().node_size(); ++i)
    if (m.graph().node(i).input(0) != m.graph().node(i - 1).output(0)) {
      ADD_FAILURE() << "node " << i << " does not read node " << i - 1;
      break;
    }
}

TEST(LargeGraph, OneTensorReadBy200kOps) {
  const onnx::ModelProto m = convert_large(testing::fan_out_concat(kLargeGraphOps));
  EXPECT_EQ(op_counts(m), (std::map<std::string, int>{{"Abs", kLargeGraphOps}, {"Concat", 1}}));
  ASSERT_EQ(m.graph().node_size(), kLargeGraphOps + 1);
  int readers = 0;
  for (const auto& n : m.graph().node()) readers += n.op_type() == "Abs" && n.input(0) == "input";
  EXPECT_EQ(readers, kLargeGraphOps);
  EXPECT_EQ(m.graph().node(kLargeGraphOps).input_size(), kLargeGraphOps);
}

TEST(LargeGraph, OneOpWith100kInputs) {
  const int inputs = kLargeGraphOps / 2;
  const onnx::ModelProto m = convert_large(testing::many_graph_inputs(inputs));
  EXPECT_EQ(op_counts(m), (std::map<std::string, int>{{"Concat", 1}}));
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).input_size(), inputs);
  EXPECT_EQ(m.graph().input_size(), inputs);
}

// ---- select-TF TensorList ops (passes::lower_tensor_lists) ------------------

// The byte after `pattern` (followed by `skip` bytes) in `bytes`; npos if absent.
size_t after(const Bytes& bytes, std::string_view pattern, size_t skip) {
  const auto* begin = reinterpret_cast<const char*>(bytes.data());
  const std::string_view all(begin, bytes.size());
  const size_t at = all.find(pattern);
  return at == std::string_view::npos ? at : at + pattern.size() + skip;
}

TEST(Hostile, TensorListOptionsAreCheckedByteByByte) {
  // Every byte of the first list op's options (FlexBuffer + NodeDef) set to
  // 0xFF in turn: a clear error or a conversion, never a crash.
  const Bytes model = read_file(op_model("flow_tensorlist_map"));
  const size_t from = after(model, "TensorListFromTensor", 0);
  ASSERT_NE(from, std::string::npos);
  int errors = 0;
  for (size_t i = from - 24; i < from + 40 && i < model.size(); ++i) {
    Bytes b = model;
    b[i] = std::byte{0xFF};
    Outcome r = convert_isolated(view(b));
    ASSERT_EQ(r.died, "") << "byte " << i;
    errors += !r.ok;
  }
  EXPECT_GT(errors, 0);
}

TEST(Hostile, TensorListsTheConverterCannotMakeDenseAreNamed) {
  const Bytes model = read_file(op_model("flow_tensorlist_rnn"));
  // resize_if_index_out_of_bounds = true: AttrValue {b (5): 1}.
  Bytes resize = model;
  const size_t b = after(resize, "resize_if_index_out_of_bounds", 3);
  ASSERT_LT(b, resize.size());
  ASSERT_EQ(resize[b - 1], std::byte{0x28});  // field 5, varint
  resize[b] = std::byte{1};
  Error e = expect_error(resize, ErrorCode::kUnsupported);
  ASSERT_FALSE(e.unsupported.empty());
  EXPECT_THAT(e.unsupported[0].op, HasSubstr("FlexTensorList"));
  EXPECT_THAT(e.message, HasSubstr("resize_if_index_out_of_bounds is not converted"));
  // element_dtype DT_STRING (7): AttrValue {type (6): 7}.
  Bytes strings = model;
  const size_t t = after(strings, "element_dtype", 3);
  ASSERT_LT(t, strings.size());
  ASSERT_EQ(strings[t - 1], std::byte{0x30});  // field 6, varint
  strings[t] = std::byte{7};
  e = expect_error(strings, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("element type 7 (tensorflow.DataType) is not converted"));
  // A select-TF op outside the table stays unsupported, listed by name.
  Bytes concat = model;
  const size_t c = after(concat, "FlexTensorListStack", 0);
  ASSERT_LT(c, concat.size());
  std::memcpy(concat.data() + c - 5, "Xtack", 5);
  e = expect_error(concat, ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("FlexTensorListXtack"));
}

TEST(Hostile, ATensorListOfAHugeLengthIsAResourceLimit) {
  // The list's length (Reserve's num_elements constant) set to 2^26: 2^29
  // floats, past the created-bytes budget; refused before anything is
  // allocated.
  nlohmann::json j = op_model_json("flow_tensorlist_rnn");
  auto tensor_named = [&](const std::string& name) -> nlohmann::json& {
    for (auto& t : j["subgraphs"][0]["tensors"])
      if (t["name"] == name) return t;
    throw std::runtime_error("no tensor " + name);
  };
  const int length = 1 << 26;
  j["buffers"][tensor_named("outputs/num_elements")["buffer"].get<int>()]["data"] = {
      length & 0xFF, (length >> 8) & 0xFF, (length >> 16) & 0xFF, length >> 24};
  Error e = expect_error(tflite_from_json(j.dump()), ErrorCode::kUnsupported);
  EXPECT_THAT(e.message, HasSubstr("its length is 67108864 in one place and 5 in another"));
  // Stack agreeing (its shape, and no num_elements: the key renamed).
  tensor_named("stacked")["shape"] = {length, 2, 4};
  for (auto& op : j["subgraphs"][0]["operators"]) {
    if (!op.contains("custom_options")) continue;
    auto bytes = op["custom_options"].get<std::vector<int>>();
    const std::string key = "num_elements";
    auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    if (at != bytes.end()) at[11] = 'z';
    op["custom_options"] = bytes;
  }
  e = expect_error(tflite_from_json(j.dump()), ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("a TensorList of [67108864, 2, 4] elements"));
}

}  // namespace
}  // namespace lite2onnx
