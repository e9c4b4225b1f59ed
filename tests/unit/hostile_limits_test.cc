// Hostile sizes: shared FlatBuffer tables and names that would amplify
// memory, the conversion's limits (inputs per op, created and output bytes),
// and the benchmark's 200k-op graphs converting in linear time.
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
// The bound is a quarter of that budget: reading a 3,000-op graph grows the
// heap by under 16 MiB in Release but by 17-28 MiB under AddressSanitizer
// (redzones, freed blocks held in quarantine), and work done before the
// check would show as 256 MiB or more on either.
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
    EXPECT_LT(grew, 64) << "MiB grown: the limit tripped after work, not before";
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

}  // namespace
}  // namespace lite2onnx::hostile
