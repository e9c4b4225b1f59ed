// Hostile graphs past the reader: cycles, tensors read but never written,
// written twice, constants and graph inputs written by ops, counts beyond the
// limits; bad options and cancellation; odd interfaces; TensorLists the
// converter cannot make dense. Clear errors, or a valid model.
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

// Only weights, no ops, no inputs, no outputs (a LoRA weights file): a model
// computing nothing, which ONNX Runtime does not load, is refused.
TEST(Hostile, GraphWithoutOutputsIsRefused) {
  ModelJson m;
  m.f32("lora_a", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.io({}, {});
  ConvertOptions o;
  Diagnostics d;
  auto r = convert(view(m.bytes()), o, d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("no outputs"));
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
}  // namespace lite2onnx::hostile
