// Hostile input for the reader: bytes that are not a model, bit flips,
// indices out of range, tensors whose shapes, sizes, types or names are
// absurd: each a clear error (the right ErrorCode, a message naming the
// problem), never a crash, a hang or a huge allocation. Run under ASan/UBSan
// as well; conversions run in forked children (hostile.h).
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

#include "hostile.h"
#include "hostile_graphs.h"
#include "schema_generated.h"

namespace lite2onnx::hostile {
namespace {

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

}  // namespace
}  // namespace lite2onnx::hostile
