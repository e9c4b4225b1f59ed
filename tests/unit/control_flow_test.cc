// Control flow (issue 18): the reader expands WHILE, IF, CALL and CALL_ONCE
// (core/tflite/reader.cc), the passes run on the subgraphs nodes own, WHILE
// becomes an ONNX Loop and IF an ONNX If (core/ops/control_flow.cc). The
// numbers are checked by the numeric suite on the flow_ models
// (tests/models/make_models_flow.mjs); here: structure, layouts across the
// boundary, shapes that change between iterations, limits and hostile files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/tflite/reader.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::op_model;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

Result<std::string> run(const Bytes& bytes, const ConvertOptions& options = {},
                        Diagnostics* diag = nullptr) {
  Diagnostics d;
  auto r = convert(view(bytes), options, d);
  if (diag) *diag = d;
  return r;
}

onnx::ModelProto converted(const Bytes& bytes, const ConvertOptions& options = {},
                           Diagnostics* diag = nullptr) {
  auto r = run(bytes, options, diag);
  onnx::ModelProto m;
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return m;
  }
  EXPECT_TRUE(m.ParseFromString(*r));
  return m;
}

Error failed(const Bytes& bytes, ErrorCode code, const ConvertOptions& options = {}) {
  auto r = run(bytes, options);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.error().code, code) << r.error().message;
  return r.error();
}

const onnx::GraphProto& graph_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.g();
  ADD_FAILURE() << n.name() << " has no attribute " << name;
  static const onnx::GraphProto none;
  return none;
}

// Op types of a graph and every graph nested in it.
std::map<std::string, int> all_ops(const onnx::GraphProto& g) {
  std::map<std::string, int> out;
  std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& x) {
    for (const auto& n : x.node()) {
      ++out[n.op_type()];
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH) walk(a.g());
    }
  };
  walk(g);
  return out;
}

const onnx::NodeProto* find_op(const onnx::GraphProto& g, const std::string& type) {
  for (const auto& n : g.node())
    if (n.op_type() == type) return &n;
  return nullptr;
}

std::vector<int64_t> dims(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.type().tensor_type().shape().dim())
    out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

// ---- the reader -----------------------------------------------------------------

TEST(ControlFlow, ReaderGivesTheWhileItsBodyAndCopiesTheConditionBeforeIt) {
  auto read = tflite_reader::read(view(read_file(op_model("flow_while_counter"))), Limits{},
                                  ops::read_options);
  ASSERT_TRUE(read.ok()) << read.error().message;
  const ir::Graph& g = read->graph;
  EXPECT_THAT(read->reached, ElementsAre(1, 2));
  // The condition (LESS) copied into the main graph, then the WHILE.
  std::vector<std::string> ops;
  for (const ir::Node& n : g.nodes()) ops.push_back(n.op);
  EXPECT_THAT(ops, ElementsAre("LESS", "WHILE"));
  const ir::Node& loop = g.node(g.last());
  EXPECT_EQ(loop.inputs.size(), 3u);  // the first condition, the counter, x
  EXPECT_EQ(loop.inputs[0], g.node(g.first()).outputs[0]);
  EXPECT_EQ(g.node(g.first()).source_subgraph, 1);
  ASSERT_EQ(loop.subgraphs.size(), 1u);
  EXPECT_EQ(loop.subgraphs[0].attr(), "body");
  // The body, then the condition on its results: [next condition, values...].
  const ir::Graph& body = loop.subgraphs[0].graph();
  EXPECT_EQ(body.inputs().size(), 2u);
  ASSERT_EQ(body.outputs().size(), 3u);
  EXPECT_EQ(body.tensor(body.outputs()[0]).dtype, ir::DataType::kBool);
  EXPECT_EQ(body.node(body.producer(body.outputs()[0])).op, "LESS");
  for (const ir::Node& n : body.nodes()) EXPECT_GE(n.source_subgraph, 1) << n.name;
}

// ---- WHILE -> Loop, IF -> If ------------------------------------------------------

TEST(ControlFlow, WhileBecomesALoopWithTheConditionBeforeAndInside) {
  onnx::ModelProto m = converted(read_file(op_model("flow_while_rnn")));
  const onnx::NodeProto* loop = find_op(m.graph(), "Loop");
  ASSERT_NE(loop, nullptr);
  // M absent, the first condition (computed in the main graph), 3 values.
  ASSERT_EQ(loop->input_size(), 5);
  EXPECT_EQ(loop->input(0), "");
  EXPECT_EQ(loop->output_size(), 3);
  const onnx::GraphProto& body = graph_attr(*loop, "body");
  ASSERT_EQ(body.input_size(), 5);  // iteration, condition, 3 values
  EXPECT_EQ(body.input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(body.input(1).type().tensor_type().elem_type(), onnx::TensorProto::BOOL);
  ASSERT_EQ(body.output_size(), 4);  // the next condition, 3 values
  EXPECT_EQ(body.output(0).type().tensor_type().elem_type(), onnx::TensorProto::BOOL);
  EXPECT_TRUE(dims(body.output(0)).empty());  // a scalar
  auto ops = all_ops(m.graph());
  EXPECT_EQ(ops["Less"], 2);  // the condition before the loop and after each iteration
  EXPECT_EQ(ops["Gemm"], 2);
  EXPECT_EQ(ops["Tanh"], 1);
}

TEST(ControlFlow, ACnnLoopBodyRunsInNchwWithoutATranspose) {
  auto bytes = read_file(op_model("flow_while_cnn"));
  for (int opset : {13, 17}) {
    ConvertOptions o;
    o.opset = opset;
    onnx::ModelProto m = converted(bytes, o);
    EXPECT_EQ(all_ops(m.graph())["Transpose"], 0) << "opset " << opset;
    const onnx::NodeProto* loop = find_op(m.graph(), "Loop");
    ASSERT_NE(loop, nullptr);
    const onnx::GraphProto& body = graph_attr(*loop, "body");
    // The image enters, leaves and is carried in NCHW: [1, 3, 7, 6].
    EXPECT_THAT(dims(body.input(3)), ElementsAre(1, 3, 7, 6));
    EXPECT_THAT(dims(body.output(2)), ElementsAre(1, 3, 7, 6));
    EXPECT_THAT(dims(m.graph().input(0)), ElementsAre(1, 3, 7, 6));
  }
  // Keeping the TFLite interface costs one Transpose at each end, outside the loop.
  ConvertOptions keep;
  keep.layout.keep_io_layout = true;
  onnx::ModelProto m = converted(bytes, keep);
  EXPECT_EQ(all_ops(m.graph())["Transpose"], 2);
  EXPECT_EQ(all_ops(graph_attr(*find_op(m.graph(), "Loop"), "body"))["Transpose"], 0);
}

TEST(ControlFlow, IfBranchesReadTheArgumentsFromTheEnclosingGraph) {
  onnx::ModelProto m = converted(read_file(op_model("flow_if_branches")));
  int ifs = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "If") continue;
    ++ifs;
    ASSERT_EQ(n.input_size(), 1) << "only the condition is an ONNX input";
    const onnx::GraphProto& then_branch = graph_attr(n, "then_branch");
    const onnx::GraphProto& else_branch = graph_attr(n, "else_branch");
    EXPECT_EQ(then_branch.input_size(), 0);
    EXPECT_EQ(else_branch.input_size(), 0);
    // then: a Conv of the image, read by its ONNX name (the graph input);
    // else: the image passed through, copied by an Identity.
    ASSERT_EQ(then_branch.node_size(), 1);
    EXPECT_EQ(then_branch.node(0).op_type(), "Conv");
    EXPECT_EQ(then_branch.node(0).input(0), m.graph().input(0).name());
    ASSERT_EQ(else_branch.node_size(), 1);
    EXPECT_EQ(else_branch.node(0).op_type(), "Identity");
    EXPECT_EQ(else_branch.node(0).input(0), m.graph().input(0).name());
    // Both branches give the output in NCHW, as the If's output is.
    EXPECT_THAT(dims(then_branch.output(0)), ElementsAre(1, 3, 5, 4));
    EXPECT_THAT(dims(else_branch.output(0)), ElementsAre(1, 3, 5, 4));
  }
  EXPECT_EQ(ifs, 2);
  EXPECT_EQ(all_ops(m.graph())["Transpose"], 0);
}

TEST(ControlFlow, AnIfInsideAWhileIsNested) {
  onnx::ModelProto m = converted(read_file(op_model("flow_while_if")));
  const onnx::NodeProto* loop = find_op(m.graph(), "Loop");
  ASSERT_NE(loop, nullptr);
  const onnx::NodeProto* branch = find_op(graph_attr(*loop, "body"), "If");
  ASSERT_NE(branch, nullptr);
  EXPECT_NE(find_op(graph_attr(*branch, "then_branch"), "Mul"), nullptr);
  EXPECT_NE(find_op(graph_attr(*branch, "else_branch"), "Sub"), nullptr);
}

TEST(ControlFlow, ASubgraphRunByTwoOpsIsCopiedForEach) {
  Diagnostics d;
  onnx::ModelProto m = converted(read_file(op_model("flow_shared_subgraphs")), {}, &d);
  EXPECT_EQ(all_ops(m.graph())["Loop"], 2);
  EXPECT_EQ(all_ops(m.graph())["Tanh"], 2);
  // Each TFLite op is counted once in the diagnostics.
  EXPECT_EQ(d.source_ops["TANH"], 1);
  EXPECT_EQ(d.source_ops["WHILE"], 2);
}

// CALL runs in no TFLite runtime here (LiteRT.js and tfjs-tflite register no
// CALL kernel), so its numbers are checked against the same ops written
// inline: the converted graphs must be the same.
Bytes call_model(bool inline_ops) {
  const std::string ops = inline_ops ? R"(
        { "opcode_index": 1, "inputs": [0, 3], "outputs": [4], "builtin_options_type": "MulOptions", "builtin_options": {} },
        { "opcode_index": 2, "inputs": [4, 0], "outputs": [1], "builtin_options_type": "AddOptions", "builtin_options": {} },
        { "opcode_index": 1, "inputs": [1, 3], "outputs": [5], "builtin_options_type": "MulOptions", "builtin_options": {} },
        { "opcode_index": 2, "inputs": [5, 1], "outputs": [2], "builtin_options_type": "AddOptions", "builtin_options": {} })"
                                     : R"(
        { "opcode_index": 0, "inputs": [0], "outputs": [1], "builtin_options_type": "CallOptions", "builtin_options": { "subgraph": 1 } },
        { "opcode_index": 0, "inputs": [1], "outputs": [2], "builtin_options_type": "CallOptions", "builtin_options": { "subgraph": 1 } })";
  return tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 31, "builtin_code": "CALL" },
                        { "deprecated_builtin_code": 18, "builtin_code": "MUL" },
                        { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "x", "shape": [2, 3] }, { "name": "y", "shape": [2, 3] },
                     { "name": "z", "shape": [2, 3] }, { "name": "three", "shape": [1], "buffer": 1 },
                     { "name": "m1", "shape": [2, 3] }, { "name": "m2", "shape": [2, 3] } ],
        "inputs": [0], "outputs": [2],
        "operators": [)" + ops +
                          R"( ] },
      { "name": "times_four",
        "tensors": [ { "name": "a", "shape": [2, 3] }, { "name": "three", "shape": [1], "buffer": 1 },
                     { "name": "m", "shape": [2, 3] }, { "name": "b", "shape": [2, 3] } ],
        "inputs": [0], "outputs": [3],
        "operators": [
          { "opcode_index": 1, "inputs": [0, 1], "outputs": [2], "builtin_options_type": "MulOptions", "builtin_options": {} },
          { "opcode_index": 2, "inputs": [2, 0], "outputs": [3], "builtin_options_type": "AddOptions", "builtin_options": {} } ] } ],
    "buffers": [ {}, { "data": [0, 0, 64, 64] } ] })");
}

TEST(ControlFlow, CallIsCopiedInPlaceAsTheSameOpsWrittenInline) {
  onnx::ModelProto called = converted(call_model(false));
  onnx::ModelProto inlined = converted(call_model(true));
  auto types = [](const onnx::GraphProto& g) {
    std::vector<std::string> out;
    for (const auto& n : g.node()) out.push_back(n.op_type());
    return out;
  };
  EXPECT_THAT(types(called.graph()), ElementsAre("Mul", "Add", "Mul", "Add"));
  EXPECT_EQ(types(called.graph()), types(inlined.graph()));
  // Same wiring: each node reads what the inline graph's does, by position.
  ASSERT_EQ(called.graph().node_size(), inlined.graph().node_size());
  for (int i = 0; i < called.graph().node_size(); ++i)
    EXPECT_EQ(called.graph().node(i).input_size(), inlined.graph().node(i).input_size());
  EXPECT_EQ(called.graph().output(0).name(), "z");
  EXPECT_EQ(called.graph().node(3).output(0), "z");
  EXPECT_EQ(called.graph().node(1).output(0), "y");  // the first CALL's output keeps its name
  // The copies are traceable to the CALL and the callee's op.
  EXPECT_EQ(called.graph().node(0).name(), "Call_0/subgraph1/Mul_0");
  EXPECT_EQ(called.graph().node(2).name(), "Call_1/subgraph1/Mul_0");
}

TEST(ControlFlow, ACallWhoseResultIsItsArgumentCopiesIt) {
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 31, "builtin_code": "CALL" } ],
    "subgraphs": [
      { "name": "main", "tensors": [ { "name": "x", "shape": [4] }, { "name": "y", "shape": [4] } ],
        "inputs": [0], "outputs": [1],
        "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1],
                         "builtin_options_type": "CallOptions", "builtin_options": { "subgraph": 1 } } ] },
      { "name": "identity", "tensors": [ { "name": "a", "shape": [4] } ],
        "inputs": [0], "outputs": [0], "operators": [] } ],
    "buffers": [ {} ] })");
  onnx::ModelProto m = converted(bytes);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Identity");
  EXPECT_EQ(m.graph().node(0).input(0), "x");
  EXPECT_EQ(m.graph().node(0).output(0), "y");
}

// A STABLEHLO_COMPOSITE is a call of its decomposition (TFLite's kernel runs
// that subgraph): the reader copies it in place; of its two outputs, one
// passes an argument through (an Identity). `options`: the op's options
// fields (the JSON text).
Bytes composite_model(const std::string& options) {
  return tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 127, "builtin_code": "STABLEHLO_COMPOSITE" },
                        { "deprecated_builtin_code": 18, "builtin_code": "MUL" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "x", "shape": [2, 3] }, { "name": "w", "shape": [3] },
                     { "name": "y", "shape": [2, 3] }, { "name": "w_out", "shape": [3] } ],
        "inputs": [0, 1], "outputs": [2, 3],
        "operators": [ { "opcode_index": 0, "inputs": [0, 1], "outputs": [2, 3] )" +
                          options + R"( } ] },
      { "name": "odml.scale.impl",
        "tensors": [ { "name": "a", "shape": [2, 3] }, { "name": "b", "shape": [3] },
                     { "name": "c", "shape": [2, 3] } ],
        "inputs": [0, 1], "outputs": [2, 1],
        "operators": [ { "opcode_index": 1, "inputs": [0, 1], "outputs": [2],
                         "builtin_options_type": "MulOptions", "builtin_options": {} } ] } ],
    "buffers": [ {} ] })");
}

std::string composite_options(int decomposition) {
  return R"(, "builtin_options_2_type": "StableHLOCompositeOptions",
      "builtin_options_2": { "name": "odml.scale", "decomposition_subgraph_index": )" +
         std::to_string(decomposition) + R"(, "composite_attributes": [0, 0, 1, 0, 0, 36, 1] })";
}

TEST(ControlFlow, ACompositeIsItsDecompositionCopiedInPlace) {
  onnx::ModelProto m = converted(composite_model(composite_options(1)));
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(m.graph().node(0).op_type(), "Mul");
  EXPECT_EQ(m.graph().node(0).name(), "StablehloComposite_0/subgraph1/Mul_0");
  EXPECT_EQ(m.graph().node(0).output(0), "y");
  EXPECT_EQ(m.graph().node(1).op_type(), "Identity");
  EXPECT_EQ(m.graph().node(1).input(0), "w");
  EXPECT_EQ(m.graph().node(1).output(0), "w_out");
}

TEST(ControlFlow, ACompositeWithoutItsDecompositionIsAnInvalidModel) {
  struct Case {
    std::string options, message;
  };
  for (const Case& c : {
           Case{"", "op 0 (STABLEHLO_COMPOSITE) has no StableHLOCompositeOptions"},
           Case{composite_options(2),
                "op 0 (STABLEHLO_COMPOSITE): decomposition subgraph index 2 out of range"},
           Case{composite_options(-1),
                "op 0 (STABLEHLO_COMPOSITE): decomposition subgraph index -1 out of range"},
           Case{composite_options(0),
                "op 0 (STABLEHLO_COMPOSITE) runs subgraph 0, which is "
                "already running"},
       }) {
    SCOPED_TRACE(c.options);
    Error e = failed(composite_model(c.options), ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr(c.message));
  }
}

// A loop whose value grows each iteration (CONCATENATION of x [1,2] with the
// value): the value's first dimension is dynamic in the body and the Loop's
// output, the others stay.
TEST(ControlFlow, DimensionsThatChangeBetweenIterationsAreDynamic) {
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 119, "builtin_code": "WHILE" },
                        { "deprecated_builtin_code": 2, "builtin_code": "CONCATENATION" },
                        { "deprecated_builtin_code": 58, "builtin_code": "LESS" },
                        { "deprecated_builtin_code": 0, "builtin_code": "ADD" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "x", "shape": [1, 2] },
                     { "name": "i0", "shape": [], "type": "INT32", "buffer": 1 },
                     { "name": "i", "shape": [], "type": "INT32" },
                     { "name": "grown", "shape": [1, 2], "shape_signature": [-1, 2] } ],
        "inputs": [0], "outputs": [3],
        "operators": [ { "opcode_index": 0, "inputs": [1, 0], "outputs": [2, 3],
                         "builtin_options_type": "WhileOptions",
                         "builtin_options": { "cond_subgraph_index": 1, "body_subgraph_index": 2 } } ] },
      { "name": "cond",
        "tensors": [ { "name": "i", "shape": [], "type": "INT32" }, { "name": "v", "shape": [1, 2] },
                     { "name": "three", "shape": [], "type": "INT32", "buffer": 2 },
                     { "name": "again", "shape": [], "type": "BOOL" } ],
        "inputs": [0, 1], "outputs": [3],
        "operators": [ { "opcode_index": 2, "inputs": [0, 2], "outputs": [3] } ] },
      { "name": "body",
        "tensors": [ { "name": "i", "shape": [], "type": "INT32" }, { "name": "v", "shape": [1, 2] },
                     { "name": "one", "shape": [], "type": "INT32", "buffer": 3 },
                     { "name": "i_next", "shape": [], "type": "INT32" },
                     { "name": "v_next", "shape": [2, 2] } ],
        "inputs": [0, 1], "outputs": [3, 4],
        "operators": [
          { "opcode_index": 3, "inputs": [0, 2], "outputs": [3],
            "builtin_options_type": "AddOptions", "builtin_options": {} },
          { "opcode_index": 1, "inputs": [1, 1], "outputs": [4],
            "builtin_options_type": "ConcatenationOptions", "builtin_options": { "axis": 0 } } ] } ],
    "buffers": [ {}, { "data": [0, 0, 0, 0] }, { "data": [3, 0, 0, 0] }, { "data": [1, 0, 0, 0] } ] })");
  onnx::ModelProto m = converted(bytes);
  const onnx::NodeProto* loop = find_op(m.graph(), "Loop");
  ASSERT_NE(loop, nullptr);
  const onnx::GraphProto& body = graph_attr(*loop, "body");
  EXPECT_THAT(dims(body.input(3)), ElementsAre(-1, 2));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(-1, 2));
}

// ---- untrusted subgraph indices, recursion, limits ---------------------------------

TEST(ControlFlow, HostileSubgraphIndicesAreInvalidModels) {
  struct Case {
    const char* model;
    const char* message;
  };
  for (const Case& c : {
           Case{"hostile/subgraph_index_out_of_range",
                "op 0 (WHILE): cond subgraph index 2147483647 out of range (the model has 3 "
                "subgraphs)"},
           Case{"hostile/subgraph_negative_index",
                "op 0 (IF): else subgraph index -5 out of range (the model has 2 subgraphs)"},
           Case{"hostile/subgraph_self_call",
                "op 0 (CALL) runs subgraph 0, which is already running: a subgraph reached from "
                "itself (recursion)"},
           Case{"hostile/subgraph_recursive_while",
                "subgraph 2 op 0 (WHILE) runs subgraph 2, which is already running"},
           Case{"hostile/subgraph_indirect_recursion",
                "subgraph 2 op 0 (IF) runs subgraph 1, which is already running"},
       }) {
    SCOPED_TRACE(c.model);
    Error e = failed(read_file(op_model(c.model)), ErrorCode::kInvalidModel);
    EXPECT_THAT(e.message, HasSubstr(c.message));
  }
}

TEST(ControlFlow, NestingPastTheLimitIsAResourceLimit) {
  Bytes bytes = read_file(op_model("hostile/subgraph_nesting_too_deep"));
  Error e = failed(bytes, ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("more than the limit of 16 (max_subgraph_depth)"));
  // 20 nested loops convert with the limit raised.
  ConvertOptions o;
  o.limits.max_subgraph_depth = 24;
  onnx::ModelProto m = converted(bytes, o);
  EXPECT_EQ(all_ops(m.graph())["Loop"], 20);
}

TEST(ControlFlow, CopiesCountAgainstTheOperatorLimit) {
  Error e =
      failed(read_file(op_model("hostile/subgraph_copies_multiply")), ErrorCode::kResourceLimit);
  EXPECT_THAT(e.message, HasSubstr("(max_operators; every subgraph converted counts, copies "
                                   "included)"));
  // Each copy of a loop's subgraphs counts: two loops over one body.
  Bytes shared = read_file(op_model("flow_shared_subgraphs"));
  ConvertOptions o;
  o.limits.max_operators = 8;
  failed(shared, ErrorCode::kResourceLimit, o);
  o.limits.max_operators = 30;
  converted(shared, o);
}

TEST(ControlFlow, UnsupportedOpsInsideSubgraphsAreListedWithTheirSubgraph) {
  // A body with a custom op: listed once, with its subgraph, although the
  // preflight sees the body once per copy.
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 119, "builtin_code": "WHILE" },
                        { "deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                          "custom_code": "Mystery" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "x", "shape": [], "type": "BOOL" },
                     { "name": "y", "shape": [], "type": "BOOL" } ],
        "inputs": [0], "outputs": [1],
        "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1],
                         "builtin_options_type": "WhileOptions",
                         "builtin_options": { "cond_subgraph_index": 1, "body_subgraph_index": 1 } } ] },
      { "name": "both",
        "tensors": [ { "name": "v", "shape": [], "type": "BOOL" },
                     { "name": "w", "shape": [], "type": "BOOL" } ],
        "inputs": [0], "outputs": [1],
        "operators": [ { "opcode_index": 1, "inputs": [0], "outputs": [1] } ] } ],
    "buffers": [ {} ] })");
  Error e = failed(bytes, ErrorCode::kUnsupported);
  ASSERT_EQ(e.unsupported.size(), 1u);
  EXPECT_EQ(e.unsupported[0].subgraph, 1);
  EXPECT_EQ(e.unsupported[0].op_index, 0);
  EXPECT_EQ(e.unsupported[0].op, "Mystery");
  EXPECT_THAT(e.message, HasSubstr("subgraph 1 op 0 Mystery"));
}

TEST(ControlFlow, MismatchedSubgraphInterfacesAreInvalidModels) {
  // The body gives back one value of the two the WHILE carries.
  Bytes bytes = tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 119, "builtin_code": "WHILE" } ],
    "subgraphs": [
      { "name": "main",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] },
                     { "name": "c_out", "shape": [], "type": "BOOL" }, { "name": "y", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [3],
        "operators": [ { "opcode_index": 0, "inputs": [0, 1], "outputs": [2, 3],
                         "builtin_options_type": "WhileOptions",
                         "builtin_options": { "cond_subgraph_index": 1, "body_subgraph_index": 2 } } ] },
      { "name": "cond",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [0], "operators": [] },
      { "name": "body",
        "tensors": [ { "name": "c", "shape": [], "type": "BOOL" }, { "name": "x", "shape": [2] } ],
        "inputs": [0, 1], "outputs": [1], "operators": [] } ],
    "buffers": [ {} ] })");
  Error e = failed(bytes, ErrorCode::kInvalidModel);
  EXPECT_THAT(e.message, HasSubstr("op 0 (WHILE): outputs and body's: 2 vs 1"));
}

}  // namespace
}  // namespace lite2onnx
