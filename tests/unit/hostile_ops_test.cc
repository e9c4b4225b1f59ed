// Hostile operators: bad attributes (strides, filters, permutations, slices,
// splits), operands missing or of the wrong kind, unknown codes; each an
// error naming op 0 and the problem.
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

// ---- operators with bad attributes or operands --------------------------------

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

// ---- the builtins of issue 34 ----------------------------------------------------

// Operands the lowerings reshape to scalars, and sizes they multiply: refused
// with the operand named, never an ONNX model that fails in ONNX Runtime or
// arithmetic that overflows.
TEST(Hostile, OneHotAndSparseToDenseTakeScalarValues) {
  auto one_hot = [](std::vector<int64_t> on_shape) {
    ModelJson m;
    int c = m.builtin("ONE_HOT", 85);
    int i = m.tensor("indices", {3}, "INT32");
    std::vector<float> on(static_cast<size_t>(on_shape.empty() ? 1 : on_shape[0]), 1.0f);
    int y = m.tensor("y", {3, 4});
    m.op(c, {i, m.i32("depth", {}, {4}), m.f32("on", on_shape, on), m.f32("off", {}, {0})}, {y},
         "OneHotOptions", R"({ "axis": -1 })");
    m.io({i}, {y});
    return m.bytes();
  };
  ASSERT_TRUE(run(view(one_hot({}))).ok());
  expect_op_error(one_hot({2}), "ONE_HOT", "on_value and off_value must be scalars");

  auto sparse = [](std::vector<int64_t> default_shape) {
    ModelJson m;
    int c = m.builtin("SPARSE_TO_DENSE", 68);
    int v = m.tensor("values", {2});
    std::vector<float> fill(static_cast<size_t>(default_shape.empty() ? 1 : default_shape[0]), 0);
    int y = m.tensor("y", {5});
    m.op(c,
         {m.i32("indices", {2}, {1, 3}), m.i32("shape", {1}, {5}), v,
          m.f32("default", default_shape, fill)},
         {y});
    m.io({v}, {y});
    return m.bytes();
  };
  ASSERT_TRUE(run(view(sparse({}))).ok());
  expect_op_error(sparse({3}), "SPARSE_TO_DENSE", "default_value must be a scalar");
}

TEST(Hostile, EmbeddingLookupSparseRowsStayWithinAnInt) {
  auto model = [](std::vector<int32_t> dense) {
    ModelJson m;
    int c = m.builtin("EMBEDDING_LOOKUP_SPARSE", 33);
    int p = m.tensor("params", {4, 3});
    const int64_t cols = static_cast<int64_t>(dense.size());
    std::vector<int32_t> idx(static_cast<size_t>(2 * cols), 0);
    int y = m.tensor("y", {dense[0], 3});
    m.op(c,
         {m.i32("ids", {2}, {0, 3}), m.i32("indices", {2, cols}, idx),
          m.i32("dense_shape", {cols}, dense), m.f32("weights", {2}, {1, 2}), p},
         {y}, "EmbeddingLookupSparseOptions", R"({ "combiner": "SUM" })");
    m.io({p}, {y});
    return m.bytes();
  };
  ASSERT_TRUE(run(view(model({2, 5}))).ok());
  // 65536 x 65536 rows: 2^32, past what TFLite keeps in an int.
  expect_op_error(model({65536, 65536, 4}), "EMBEDDING_LOOKUP_SPARSE",
                  "dense_shape holds too many rows");
}

TEST(Hostile, Conv3dWithHugeStrideAndDilation) {
  for (int v : {1, 2147483647}) {
    ModelJson m;
    int c = m.builtin("CONV_3D", 132);
    int x = m.tensor("x", {1, 2, 3, 4, 2});
    std::vector<float> w(2 * 2 * 2 * 2 * 3, 0.5f);
    int y = m.tensor("y", {1, 2, 3, 4, 3});
    m.op(c, {x, m.f32("w", {2, 2, 2, 2, 3}, w)}, {y}, "Conv3DOptions",
         "{ \"padding\": \"SAME\", \"stride_d\": " + std::to_string(v) + ", \"stride_h\": " +
             std::to_string(v) + ", \"stride_w\": 1, \"dilation_d_factor\": " + std::to_string(v) +
             ", \"dilation_h_factor\": 1, \"dilation_w_factor\": " + std::to_string(v) + " }");
    m.io({x}, {y});
    expect_converts_or_rejects(m.bytes());
  }
}

// ONNX reads an empty 'shape' attribute as a missing one: a scalar draw is
// made as [1] and reshaped.
TEST(Hostile, RandomUniformOfAScalarShape) {
  ModelJson m;
  int c = m.builtin("RANDOM_UNIFORM", 148);
  int y = m.tensor("y", {}, "FLOAT32", 0, "\"has_rank\": true");
  m.op(c, {m.tensor("shape", {0}, "INT32", m.buffer(""))}, {y}, "RandomOptions",
       R"({ "seed": 1, "seed2": 0 })");
  m.io({}, {y});
  Diagnostics d;
  EXPECT_EQ(output_dims(m.bytes(), d), (Dims{{}}));
}

}  // namespace
}  // namespace lite2onnx::hostile
