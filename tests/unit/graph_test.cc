// The graph editing API on its own: every edit keeps each tensor's producer
// and (node, slot) readers in step, the order is kept, and compaction
// renumbers without changing meaning. Also the ONNX op traits table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "core/ir/graph.h"
#include "core/ir/onnx_ops.h"

namespace lite2onnx::ir {
namespace {

using ::testing::ElementsAre;

class GraphTest : public ::testing::Test {
 protected:
  TensorId tensor(const std::string& name) {
    Tensor t;
    t.name = name;
    t.shape = {2};
    return g.add_tensor(std::move(t));
  }
  static Node node(const std::string& name, std::vector<TensorId> in, std::vector<TensorId> out) {
    Node n;
    n.dialect = Dialect::kOnnx;
    n.op = "Relu";
    n.name = name;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return n;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Node& n : g.nodes()) out.push_back(n.name);
    return out;
  }
  // Readers of t as (node name, slot).
  std::vector<std::pair<std::string, uint32_t>> readers(TensorId t) const {
    std::vector<std::pair<std::string, uint32_t>> out;
    for (const Use& u : g.uses(t)) out.emplace_back(g.node(u.node).name, u.slot);
    return out;
  }
  std::string producer(TensorId t) const {
    NodeId p = g.producer(t);
    return p == kNoNode ? "" : g.node(p).name;
  }

  Graph g;
};

TEST_F(GraphTest, AddingNodesIndexesProducersAndReaders) {
  TensorId x = tensor("x"), y = tensor("y"), z = tensor("z");
  g.add_node(node("a", {x}, {y}));
  g.add_node(node("b", {y, y, x}, {z}));
  EXPECT_EQ(producer(y), "a");
  EXPECT_EQ(producer(z), "b");
  EXPECT_EQ(producer(x), "");
  EXPECT_THAT(readers(y),
              ElementsAre(std::pair{std::string("b"), 0u}, std::pair{std::string("b"), 1u}));
  EXPECT_THAT(readers(x),
              ElementsAre(std::pair{std::string("a"), 0u}, std::pair{std::string("b"), 2u}));
  EXPECT_EQ(g.readers(y).size(), 1u);  // each node once
  EXPECT_EQ(g.node_count(), 2u);
}

TEST_F(GraphTest, OmittedInputsAreNotIndexed) {
  TensorId x = tensor("x"), y = tensor("y");
  g.add_node(node("a", {x, kNoTensor}, {y}));
  EXPECT_EQ(g.uses(x).size(), 1u);
  EXPECT_TRUE(g.uses(kNoTensor).empty());
}

TEST_F(GraphTest, InsertBeforeAndAfterKeepTheOrder) {
  TensorId x = tensor("x"), y = tensor("y"), z = tensor("z");
  NodeId a = g.add_node(node("a", {x}, {y}));
  NodeId c = g.add_node(node("c", {y}, {z}));
  g.add_node_after(a, node("b", {y}, {tensor("b_out")}));
  g.add_node_before(a, node("first", {x}, {tensor("f_out")}));
  g.add_node_after(c, node("last", {z}, {tensor("l_out")}));
  EXPECT_THAT(names(), ElementsAre("first", "a", "b", "c", "last"));
  EXPECT_EQ(g.node(g.first()).name, "first");
  EXPECT_EQ(g.node(g.last()).name, "last");
}

TEST_F(GraphTest, RemovingANodeUnlinksItsEdges) {
  TensorId x = tensor("x"), y = tensor("y"), z = tensor("z");
  NodeId a = g.add_node(node("a", {x}, {y}));
  NodeId b = g.add_node(node("b", {y, x}, {z}));
  g.remove_node(b);
  EXPECT_FALSE(g.alive(b));
  EXPECT_TRUE(g.uses(y).empty());
  EXPECT_THAT(readers(x), ElementsAre(std::pair{std::string("a"), 0u}));
  EXPECT_EQ(g.producer(z), kNoNode);
  EXPECT_THAT(names(), ElementsAre("a"));
  g.remove_node(a);
  EXPECT_EQ(g.first(), kNoNode);
  EXPECT_EQ(g.node_count(), 0u);
}

TEST_F(GraphTest, SetInputAndOutputMoveTheEdges) {
  TensorId x = tensor("x"), y = tensor("y"), w = tensor("w"), z = tensor("z");
  NodeId a = g.add_node(node("a", {x, x}, {y}));
  g.set_input(a, 1, w);
  EXPECT_THAT(readers(x), ElementsAre(std::pair{std::string("a"), 0u}));
  EXPECT_THAT(readers(w), ElementsAre(std::pair{std::string("a"), 1u}));
  g.set_output(a, 0, z);
  EXPECT_EQ(g.producer(y), kNoNode);
  EXPECT_EQ(producer(z), "a");
  g.set_inputs(a, {w});
  EXPECT_TRUE(g.uses(x).empty());
  EXPECT_THAT(g.node(a).inputs, ElementsAre(w));
}

TEST_F(GraphTest, ReplaceUsesMovesEveryReaderButNotGraphOutputs) {
  TensorId x = tensor("x"), y = tensor("y"), n = tensor("n");
  g.add_output(x);
  g.add_node(node("a", {x}, {y}));
  g.add_node(node("b", {y, x}, {tensor("b_out")}));
  g.replace_uses(x, n);
  EXPECT_TRUE(g.uses(x).empty());
  EXPECT_THAT(readers(n),
              ElementsAre(std::pair{std::string("a"), 0u}, std::pair{std::string("b"), 1u}));
  EXPECT_TRUE(g.is_graph_output(x));
  EXPECT_EQ(g.use_count(x), 1u);  // the graph output
}

TEST_F(GraphTest, CompactRenumbersInOrderAndSortsReaders) {
  TensorId x = tensor("x"), y = tensor("y");
  NodeId a = g.add_node(node("a", {x}, {y}));
  g.add_node_before(a, node("r1", {x}, {tensor("r1_out")}));
  g.remove_node(a);
  g.add_node(node("r2", {x}, {tensor("r2_out")}));
  g.compact();
  EXPECT_EQ(g.node_id_bound(), 2u);
  EXPECT_EQ(g.order(), (std::vector<NodeId>{0, 1}));
  EXPECT_THAT(readers(x),
              ElementsAre(std::pair{std::string("r1"), 0u}, std::pair{std::string("r2"), 0u}));
}

TEST_F(GraphTest, ReorderKeepsTheIndex) {
  TensorId x = tensor("x"), y = tensor("y"), z = tensor("z");
  NodeId b = g.add_node(node("b", {y}, {z}));
  NodeId a = g.add_node(node("a", {x}, {y}));
  g.reorder({a, b});
  EXPECT_THAT(names(), ElementsAre("a", "b"));
  g.compact();
  EXPECT_EQ(producer(z), "b");
  EXPECT_THAT(readers(y), ElementsAre(std::pair{std::string("b"), 0u}));
}

TEST_F(GraphTest, ABatchEditLeavesTheGraphAsItIsUntilApplied) {
  TensorId x = tensor("x"), y = tensor("y"), z = tensor("z");
  NodeId a = g.add_node(node("a", {x}, {y}));
  NodeId b = g.add_node(node("b", {y}, {z}));
  NodeId c = g.add_node(node("c", {z}, {tensor("c_out")}));
  TensorId y2 = tensor("y2"), z2 = tensor("z2");
  GraphEdit edit(g);
  edit.insert_after(a, node("a_after", {y}, {y2}));
  edit.insert_before(b, node("b_before", {x}, {tensor("b_before_out")}));
  edit.set_input(b, 0, y2);
  edit.set_output(b, 0, z2);
  edit.insert_after(b, node("b_after", {z2}, {z}));
  std::vector<Node> instead = {node("c1", {z}, {tensor("c1_out")}),
                               node("c2", {z}, {tensor("c2_out")})};
  edit.replace(c, instead);
  edit.add_first(node("first", {x}, {tensor("first_out")}));
  edit.replace(a, std::span<Node>());  // nodes around a removed one stay
  EXPECT_THAT(names(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(producer(y), "a");

  g.apply(std::move(edit));
  EXPECT_THAT(names(), ElementsAre("first", "a_after", "b_before", "b", "b_after", "c1", "c2"));
  EXPECT_EQ(g.node_id_bound(), 7u);
  EXPECT_EQ(producer(y), "");
  EXPECT_EQ(producer(z2), "b");
  EXPECT_EQ(producer(z), "b_after");
  EXPECT_THAT(readers(x), ElementsAre(std::pair{std::string("first"), 0u},
                                      std::pair{std::string("b_before"), 0u}));
  EXPECT_THAT(readers(y2), ElementsAre(std::pair{std::string("b"), 0u}));
  EXPECT_THAT(readers(z),
              ElementsAre(std::pair{std::string("c1"), 0u}, std::pair{std::string("c2"), 0u}));
}

TEST_F(GraphTest, InfoEditsInPlaceAndSubgraphsCopyWithTheNode) {
  TensorId x = tensor("x"), y = tensor("y");
  Node n = node("if", {x}, {y});
  Graph branch;
  branch.name = "then";
  n.subgraphs.emplace_back("then_branch", std::move(branch));
  NodeId id = g.add_node(std::move(n));
  g.info(id).op = "If";
  Node copy = g.node(id);
  ASSERT_EQ(copy.subgraphs.size(), 1u);
  EXPECT_EQ(copy.subgraphs[0].attr(), "then_branch");
  EXPECT_EQ(copy.subgraphs[0].graph().name, "then");
  EXPECT_NE(&copy.subgraphs[0].graph(), &g.node(id).subgraphs[0].graph());  // a deep copy
  EXPECT_EQ(g.node(id).op, "If");
}

TEST_F(GraphTest, InterfaceListsAnswerMembership) {
  TensorId x = tensor("x"), y = tensor("y");
  g.set_inputs({x});
  g.set_outputs({y, y});
  EXPECT_TRUE(g.is_graph_input(x));
  EXPECT_FALSE(g.is_graph_input(y));
  EXPECT_TRUE(g.is_graph_output(y));
  EXPECT_EQ(g.outputs().size(), 2u);
  EXPECT_FALSE(g.is_graph_output(12345));
}

// A per-axis quantized constant viewed with other dims: the quantization
// moves to the axis that holds its channels, or the view is refused.
TEST(ConstantView, PerAxisQuantizationFollowsTheChannels) {
  EXPECT_EQ(axis_in_view({5, 3}, 0, {1, 5, 3}), 1);  // a leading 1
  EXPECT_EQ(axis_in_view({5, 3}, 1, {1, 1, 5, 3}), 3);
  EXPECT_EQ(axis_in_view({4, 12}, 0, {4, 2, 2, 3}), 0);             // the other axis split
  EXPECT_EQ(axis_in_view({4, 12}, 1, {4, 2, 2, 3}), std::nullopt);  // its own axis split
  EXPECT_EQ(axis_in_view({2, 3, 4}, 1, {6, 4}), std::nullopt);      // merged
  EXPECT_EQ(axis_in_view({2, 3}, 2, {2, 3}), std::nullopt);         // out of range

  Tensor w;
  w.name = "w";
  w.shape = {5, 3};
  w.data = ConstData{};
  w.quant = QuantParams{};
  w.quant->scale = {1, 2, 3, 4, 5};
  w.quant->zero_point = {0, 0, 0, 0, 0};
  auto view = constant_view(w, {1, 5, 3});
  ASSERT_TRUE(view);
  EXPECT_EQ(view->shape, (Shape{1, 5, 3}));
  EXPECT_EQ(view->quant->axis, 1);
  w.quant->scale = {1, 2, 3};
  w.quant->zero_point = {0, 0, 0};
  w.quant->axis = 1;
  w.shape = {2, 3};
  EXPECT_FALSE(constant_view(w, {2, 3, 1}) == std::nullopt);
  EXPECT_EQ(constant_view(w, {6}), std::nullopt);
}

TEST(OnnxTraits, TableAnswersByName) {
  EXPECT_TRUE(onnx_traits("Add").elementwise);
  EXPECT_FALSE(onnx_traits("Add").picks_values);
  EXPECT_TRUE(onnx_traits("Reshape").picks_values);
  EXPECT_TRUE(onnx_traits("Reshape").copies_integers);
  EXPECT_TRUE(onnx_traits("Concat").copies_integers);
  EXPECT_FALSE(onnx_traits("Concat").picks_values);  // values of several inputs
  EXPECT_FALSE(onnx_traits("Identity").copies_integers);
  EXPECT_TRUE(onnx_traits("Conv").weighted);
  EXPECT_FALSE(onnx_traits("NoSuchOp").elementwise);
  EXPECT_FALSE(onnx_traits("").picks_values);
}

TEST(OnnxTraits, OnlyDefaultDomainOnnxNodesHaveTraits) {
  Node n;
  n.op = "Add";
  n.dialect = Dialect::kTflite;
  EXPECT_FALSE(onnx_traits(n).elementwise);
  n.dialect = Dialect::kOnnx;
  EXPECT_TRUE(onnx_traits(n).elementwise);
  n.domain = "com.microsoft";
  EXPECT_FALSE(onnx_traits(n).elementwise);
}

TEST(OnnxTypeCode, MatchesOnnxProto) {
  EXPECT_EQ(onnx_type_code(DataType::kFloat32), onnx::TensorProto::FLOAT);
  EXPECT_EQ(onnx_type_code(DataType::kUInt8), onnx::TensorProto::UINT8);
  EXPECT_EQ(onnx_type_code(DataType::kInt8), onnx::TensorProto::INT8);
  EXPECT_EQ(onnx_type_code(DataType::kUInt16), onnx::TensorProto::UINT16);
  EXPECT_EQ(onnx_type_code(DataType::kInt16), onnx::TensorProto::INT16);
  EXPECT_EQ(onnx_type_code(DataType::kInt32), onnx::TensorProto::INT32);
  EXPECT_EQ(onnx_type_code(DataType::kInt64), onnx::TensorProto::INT64);
  EXPECT_EQ(onnx_type_code(DataType::kString), onnx::TensorProto::STRING);
  EXPECT_EQ(onnx_type_code(DataType::kBool), onnx::TensorProto::BOOL);
  EXPECT_EQ(onnx_type_code(DataType::kFloat16), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(onnx_type_code(DataType::kFloat64), onnx::TensorProto::DOUBLE);
  EXPECT_EQ(onnx_type_code(DataType::kUInt32), onnx::TensorProto::UINT32);
  EXPECT_EQ(onnx_type_code(DataType::kUInt64), onnx::TensorProto::UINT64);
  EXPECT_EQ(onnx_type_code(DataType::kComplex64), onnx::TensorProto::COMPLEX64);
  EXPECT_EQ(onnx_type_code(DataType::kComplex128), onnx::TensorProto::COMPLEX128);
  EXPECT_EQ(onnx_type_code(DataType::kBFloat16), onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(onnx_type_code(DataType::kResource), onnx::TensorProto::UNDEFINED);
}

}  // namespace
}  // namespace lite2onnx::ir
