// The hostile tests' shared support (hostile.h).
#include "hostile.h"

#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace lite2onnx::hostile {

// ABS: input [1, 4] -> output [1, 4]; a valid base most cases bend.
ModelJson abs_model(int* abs_code) {
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
Result<std::string> run(std::span<const std::byte> bytes, const ConvertOptions& o) {
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
Outcome convert_isolated(std::span<const std::byte> bytes, const ConvertOptions& o) {
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
          put(fds[1], u.reason_code);
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
    for (size_t i = 5; i + 3 < rec.size(); i += 4)
      out.error.unsupported.push_back({std::stoi(rec[i]), rec[i + 1], rec[i + 2], rec[i + 3]});
  }
  return out;
}

// Converts, expecting a failure with `code`; returns the error for more checks.
Error expect_error(const Bytes& bytes, ErrorCode code, const ConvertOptions& o) {
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
  for (const UnsupportedOp& u : r.error.unsupported)
    EXPECT_FALSE(u.reason_code.empty()) << u.label() << ": " << u.reason;
  return r.error;
}

// inspect() goes through the same reader and must agree.
Error expect_inspect_error(const Bytes& bytes, ErrorCode code, const Limits& limits) {
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

Bytes finished(flatbuffers::FlatBufferBuilder& fbb) {
  const auto* p = reinterpret_cast<const std::byte*>(fbb.GetBufferPointer());
  return {p, p + fbb.GetSize()};
}

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
Bytes conv_model(int stride_h, int stride_w, int dilation, int64_t out) {
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

}  // namespace lite2onnx::hostile
