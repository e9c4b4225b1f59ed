// Node subgraphs in the ONNX emitter: GRAPH attributes (If branches), names
// unique across the model, outer-scope references, subgraph initializers,
// Limits::max_subgraph_depth.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/onnx/emit.h"
#include "core/options.h"
#include "graph_builder.h"
#include "subgraph_graphs.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// emit() with the options the pipeline gives it (Pipeline::emit), the limit
// from Limits.
Result<std::string> emit(const ir::Graph& g,
                         uint32_t max_subgraph_depth = Limits{}.max_subgraph_depth) {
  onnx_emit::EmitOptions o;
  o.opset = 13;
  o.producer_version = "test";
  o.max_subgraph_depth = max_subgraph_depth;
  return onnx_emit::emit(g, o);
}

// Parses the bytes and validates them again as emit() does: the checker, then
// strict shape inference.
onnx::ModelProto parse_and_check(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  EXPECT_NO_THROW(onnx::checker::check_model(m));
  onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict_mode=*/1);
  EXPECT_NO_THROW(onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts));
  return m;
}

const onnx::GraphProto& graph_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) {
      EXPECT_EQ(a.type(), onnx::AttributeProto::GRAPH) << name;
      return a.g();
    }
  ADD_FAILURE() << n.name() << " has no attribute " << name;
  static const onnx::GraphProto none;
  return none;
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<std::string>& v) {
  return {v.begin(), v.end()};
}
template <class T>
std::vector<std::string> names(const google::protobuf::RepeatedPtrField<T>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.name());
  return out;
}
std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& n : g.node()) out.push_back(n.op_type());
  return out;
}
std::vector<int64_t> dims(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.type().tensor_type().shape().dim()) out.push_back(d.dim_value());
  return out;
}

TEST(EmitSubgraph, IfBranchesAreGraphAttributes) {
  auto r = emit(testing::if_model());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const onnx::ModelProto m = parse_and_check(*r);
  const onnx::GraphProto& g = m.graph();
  EXPECT_THAT(names(g.input()), ElementsAre("x", "cond"));
  EXPECT_THAT(names(g.output()), ElementsAre("y"));
  EXPECT_THAT(op_types(g), ElementsAre("Abs", "If"));
  // `scale` is read by the then branch only: an initializer of the main graph.
  EXPECT_THAT(names(g.initializer()), ElementsAre("scale"));
  EXPECT_THAT(names(g.value_info()), ElementsAre("a"));
  const onnx::NodeProto& if_node = g.node(1);
  EXPECT_THAT(names(if_node.input()), ElementsAre("cond"));
  EXPECT_THAT(names(if_node.output()), ElementsAre("y"));
  ASSERT_EQ(if_node.attribute_size(), 2);

  const onnx::GraphProto& then_g = graph_attr(if_node, "then_branch");
  EXPECT_EQ(then_g.name(), "If_1/then_branch");
  EXPECT_EQ(then_g.input_size(), 0);
  ASSERT_EQ(then_g.output_size(), 1);
  EXPECT_EQ(then_g.output(0).name(), "then_out");
  EXPECT_EQ(then_g.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_THAT(dims(then_g.output(0)), ElementsAre(2, 3));
  EXPECT_THAT(op_types(then_g), ElementsAre("Add", "Mul"));
  // Outer-scope values by their names in the main graph; own constants as
  // initializers of the branch.
  EXPECT_THAT(names(then_g.node(0).input()), ElementsAre("a", "k"));
  EXPECT_THAT(names(then_g.node(1).input()), ElementsAre("t", "scale"));
  EXPECT_THAT(names(then_g.initializer()), ElementsAre("k"));
  EXPECT_THAT(names(then_g.value_info()), ElementsAre("t"));

  const onnx::GraphProto& else_g = graph_attr(if_node, "else_branch");
  EXPECT_EQ(else_g.name(), "If_1/else_branch");
  ASSERT_EQ(else_g.output_size(), 1);
  EXPECT_EQ(else_g.output(0).name(), "else_out");
  EXPECT_THAT(op_types(else_g), ElementsAre("Sub"));
  // The else branch's own `k` is another value: unique across the model.
  EXPECT_THAT(names(else_g.node(0).input()), ElementsAre("a", "k__1"));
  ASSERT_EQ(else_g.initializer_size(), 1);
  EXPECT_EQ(else_g.initializer(0).name(), "k__1");
  float k = 0;
  ASSERT_EQ(else_g.initializer(0).raw_data().size(), sizeof k);
  std::memcpy(&k, else_g.initializer(0).raw_data().data(), sizeof k);
  EXPECT_EQ(k, 0.25f);

  // Shape inference gives the If output its branches' type.
  EXPECT_EQ(g.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
}

// Deterministic, like every emit.
TEST(EmitSubgraph, OutputIsDeterministic) {
  auto a = emit(testing::if_model()), b = emit(testing::if_model());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

// Tensor and node names are unique across all graphs of the model.
TEST(EmitSubgraph, NamesAreUniqueAcrossNestedGraphs) {
  auto r = emit(testing::nested_if_model(4));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const onnx::ModelProto m = parse_and_check(*r);
  std::set<std::string> nodes, values;
  std::vector<std::string> graph_names;
  int depth = 0;
  auto visit = [&](auto& self, const onnx::GraphProto& g, int at) -> void {
    graph_names.push_back(g.name());
    depth = std::max(depth, at);
    for (const auto& i : g.input()) EXPECT_TRUE(values.insert(i.name()).second) << i.name();
    for (const auto& i : g.initializer()) EXPECT_TRUE(values.insert(i.name()).second) << i.name();
    for (const auto& n : g.node()) {
      EXPECT_TRUE(nodes.insert(n.name()).second) << n.name();
      for (const auto& o : n.output()) EXPECT_TRUE(values.insert(o).second) << o;
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH) self(self, a.g(), at + 1);
    }
  };
  visit(visit, m.graph(), 0);
  EXPECT_EQ(depth, 4);
  EXPECT_EQ(nodes.size(), 9u);  // 4 Ifs, 4 else Subs, the innermost Add
  EXPECT_THAT(nodes, ::testing::IsSupersetOf({"If_0", "If_0__1", "If_0__2", "If_0__3", "Add_0"}));
  // Depth first here; named by the (unique) ONNX name of their node.
  EXPECT_THAT(graph_names,
              ElementsAre("main", "If_0/then_branch", "If_0__1/then_branch", "If_0__2/then_branch",
                          "If_0__3/then_branch", "If_0__3/else_branch", "If_0__2/else_branch",
                          "If_0__1/else_branch", "If_0/else_branch"));
}

// A reference to a value no enclosing graph has is a converter bug.
TEST(EmitSubgraph, UnresolvedOuterReferenceIsInternal) {
  testing::GraphBuilder branch;
  ir::TensorId ghost = branch.tensor("ghost", {2, 3});
  ir::TensorId out = branch.tensor("out", {2, 3});
  branch.onnx("Abs", {ghost}, {out});
  branch.output(out);
  testing::GraphBuilder b;
  ir::TensorId cond = b.input("cond", {}, ir::DataType::kBool);
  ir::TensorId y = b.tensor("y", {2, 3});
  ir::NodeId n = b.onnx("If", {cond}, {y});
  b.g.info(n).subgraphs.emplace_back("then_branch", branch.g);
  b.g.info(n).subgraphs.emplace_back("else_branch", std::move(branch.g));
  b.output(y);
  auto r = emit(b.g);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_THAT(r.error().message, HasSubstr("'ghost'"));
  EXPECT_THAT(r.error().message, HasSubstr("then_branch"));
}

// Limits::max_subgraph_depth: the main graph's nodes' subgraphs are at depth 1.
TEST(EmitSubgraph, NestingBeyondTheLimitIsAResourceLimit) {
  const uint32_t limit = Limits{}.max_subgraph_depth;
  ASSERT_EQ(limit, 16u);
  {
    auto r = emit(testing::nested_if_model(static_cast<int>(limit)));
    ASSERT_TRUE(r.ok()) << r.error().message;
    parse_and_check(*r);
  }
  auto r = emit(testing::nested_if_model(static_cast<int>(limit) + 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceLimit);
  EXPECT_THAT(r.error().message, HasSubstr("max_subgraph_depth"));
  EXPECT_THAT(r.error().message, HasSubstr("nesting depth 17"));
  // Any limit, down to none.
  EXPECT_TRUE(emit(testing::if_model(), 1).ok());
  auto none = emit(testing::if_model(), 0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kResourceLimit);
  EXPECT_THAT(none.error().message, HasSubstr("then_branch"));
  EXPECT_THAT(none.error().message, HasSubstr("max_subgraph_depth"));
  // A graph without subgraphs never meets it.
  EXPECT_TRUE(emit(testing::nested_if_model(0), 0).ok());
}

}  // namespace
}  // namespace lite2onnx
