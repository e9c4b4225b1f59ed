// Hostile shapes: declared intermediate shapes the ops do not compute (shape
// inference gives TFLite's), absurd operands from which nothing is inferred,
// and declared shapes the ops contradict.
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

}  // namespace
}  // namespace lite2onnx::hostile
