// Transpose cleanup on hand-built ONNX-dialect graphs, checked by counting
// nodes and by running the graph before and after on a small reference
// evaluator; then on real models through the pipeline's passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "core/convert.h"
#include "core/onnx/emit.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/pipeline.h"
#include "core/tflite/reader.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;

using ir::Perm;
using ir::Shape;
using ir::TensorId;

const Perm kToNchw = {0, 3, 1, 2};
const Perm kToNhwc = {0, 2, 3, 1};

std::vector<int64_t> i64(const Perm& p) { return {p.begin(), p.end()}; }

// Builds ONNX-dialect graphs the way lowering leaves them: a Transpose's output
// is the same TFLite tensor in another layout.
class OnnxGraph : public testing::GraphBuilder {
 public:
  TensorId input(const std::string& name, Shape shape) {
    return testing::GraphBuilder::input(name, std::move(shape));
  }
  TensorId constant(const std::string& name, Shape shape, Perm layout = {}) {
    return patterned(name, std::move(shape), std::move(layout));
  }

  // Marked as inserted, as layout propagation marks its Transposes.
  TensorId transpose(TensorId x, const Perm& p) {
    const ir::Tensor& in = g.tensor(x);
    Perm layout = ir::normalized(
        ir::compose(in.layout.empty() ? ir::identity_perm(in.rank()) : in.layout, p));
    TensorId y = tensor(in.name + "/" + ir::to_string(p), in.shape, in.dtype, layout);
    ir::NodeInfo& n = node("Transpose", {x}, y);
    n.attrs.set("perm", lite2onnx::i64(p));
    n.inserted = ir::Insertion{g.tensor(x).name, "test"};
    return y;
  }

  // An elementwise op; its output is shaped like input `like`.
  TensorId op(const std::string& type, std::vector<TensorId> in, size_t like = 0) {
    const ir::Tensor& model = g.tensor(in[like]);
    TensorId y = tensor(type + "_out" + std::to_string(g.node_count()), model.shape, model.dtype,
                        model.layout);
    node(type, std::move(in), y);
    return y;
  }
  ir::NodeInfo& last_info() { return g.info(g.last()); }

 private:
  ir::NodeInfo& node(const std::string& type, std::vector<TensorId> in, TensorId out) {
    return g.info(onnx(type, std::move(in), {out}));
  }
};

// ---- a reference evaluator for the ops in these tests ------------------------

struct Value {
  Shape shape;
  std::vector<float> data;
};

std::vector<int64_t> strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t a = s.size(); a-- > 1;) st[a - 1] = st[a] * s[a];
  return st;
}

Value transpose(const Value& x, const std::vector<int64_t>& perm) {
  Value y;
  for (int64_t a : perm) y.shape.push_back(x.shape[static_cast<size_t>(a)]);
  y.data.resize(x.data.size());
  auto xs = strides(x.shape), ys = strides(y.shape);
  for (size_t i = 0; i < y.data.size(); ++i) {
    int64_t src = 0;
    for (size_t a = 0; a < perm.size(); ++a)
      src += (static_cast<int64_t>(i) / ys[a] % y.shape[a]) * xs[static_cast<size_t>(perm[a])];
    y.data[i] = x.data[static_cast<size_t>(src)];
  }
  return y;
}

// numpy broadcasting of any number of operands.
Value broadcast(const std::vector<Value>& in,
                const std::function<float(const std::vector<float>&)>& f) {
  size_t rank = 0;
  for (const auto& v : in) rank = std::max(rank, v.shape.size());
  Value y;
  y.shape.assign(rank, 1);
  for (const auto& v : in)
    for (size_t a = 0; a < v.shape.size(); ++a) {
      int64_t& d = y.shape[rank - v.shape.size() + a];
      d = std::max(d, v.shape[a]);
    }
  y.data.resize(static_cast<size_t>(ir::element_count(y.shape).value()));
  auto ys = strides(y.shape);
  std::vector<float> args(in.size());
  for (size_t i = 0; i < y.data.size(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      const Shape& s = in[k].shape;
      auto st = strides(s);
      int64_t off = 0;
      for (size_t a = 0; a < s.size(); ++a) {
        size_t ya = rank - s.size() + a;
        int64_t idx = static_cast<int64_t>(i) / ys[ya] % y.shape[ya];
        off += (s[a] == 1 ? 0 : idx) * st[a];
      }
      args[k] = in[k].data[static_cast<size_t>(off)];
    }
    y.data[i] = f(args);
  }
  return y;
}

std::function<float(const std::vector<float>&)> elementwise_fn(const ir::Node& n) {
  const std::string& op = n.op;
  float alpha = n.attrs.get_float("alpha", op == "LeakyRelu" ? 0.01f : 0.2f);
  float beta = n.attrs.get_float("beta", 0.5f);
  auto unary = [](float (*f)(float)) {
    return [f](const std::vector<float>& a) { return f(a[0]); };
  };
  if (op == "Relu") return unary([](float x) { return std::max(x, 0.f); });
  if (op == "Sigmoid") return unary([](float x) { return 1.f / (1.f + std::exp(-x)); });
  if (op == "Tanh") return unary([](float x) { return std::tanh(x); });
  if (op == "Abs") return unary([](float x) { return std::fabs(x); });
  if (op == "Sqrt") return unary([](float x) { return std::sqrt(x); });
  if (op == "Reciprocal") return unary([](float x) { return 1.f / x; });
  if (op == "Neg") return unary([](float x) { return -x; });
  if (op == "Exp") return unary([](float x) { return std::exp(x); });
  if (op == "Log") return unary([](float x) { return std::log(x); });
  if (op == "Cast" || op == "Identity") return unary([](float x) { return x; });
  if (op == "HardSwish")
    return unary([](float x) { return x * std::clamp(x / 6.f + 0.5f, 0.f, 1.f); });
  if (op == "LeakyRelu")
    return [alpha](const std::vector<float>& a) { return a[0] < 0 ? alpha * a[0] : a[0]; };
  if (op == "HardSigmoid")
    return [=](const std::vector<float>& a) { return std::clamp(alpha * a[0] + beta, 0.f, 1.f); };
  if (op == "Clip") return [](const std::vector<float>& a) { return std::clamp(a[0], a[1], a[2]); };
  if (op == "Add") return [](const std::vector<float>& a) { return a[0] + a[1]; };
  if (op == "Sub") return [](const std::vector<float>& a) { return a[0] - a[1]; };
  if (op == "Mul") return [](const std::vector<float>& a) { return a[0] * a[1]; };
  if (op == "Div") return [](const std::vector<float>& a) { return a[0] / a[1]; };
  if (op == "Pow") return [](const std::vector<float>& a) { return std::pow(a[0], a[1]); };
  if (op == "Max") return [](const std::vector<float>& a) { return std::max(a[0], a[1]); };
  if (op == "Min") return [](const std::vector<float>& a) { return std::min(a[0], a[1]); };
  if (op == "PRelu")
    return [](const std::vector<float>& a) { return a[0] < 0 ? a[1] * a[0] : a[0]; };
  return nullptr;
}

Value constant_value(const ir::Tensor& t) {
  Value v;
  v.shape = t.onnx_shape();
  v.data.resize(onnx_emit::onnx_byte_size(t) / 4);
  onnx_emit::write_constant(t, reinterpret_cast<std::byte*>(v.data.data()));
  return v;
}

// Seeded inputs in ONNX shape, the same for a graph before and after the pass.
std::vector<Value> make_inputs(const ir::Graph& g) {
  std::vector<Value> in;
  uint32_t state = 12345;
  for (TensorId t : g.inputs()) {
    Value v;
    v.shape = g.tensor(t).onnx_shape();
    v.data.resize(static_cast<size_t>(ir::element_count(v.shape).value()));
    for (float& x : v.data) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 4.f - 2.f;
    }
    in.push_back(std::move(v));
  }
  return in;
}

std::vector<Value> evaluate(const ir::Graph& g, const std::vector<Value>& inputs) {
  std::map<TensorId, Value> values;
  for (size_t i = 0; i < g.inputs().size(); ++i) values[g.inputs()[i]] = inputs[i];
  auto get = [&](TensorId t) -> const Value& {
    if (!values.count(t)) values[t] = constant_value(g.tensor(t));
    return values[t];
  };
  for (const ir::Node& n : g.nodes()) {
    if (n.op == "Transpose") {
      values[n.outputs[0]] = transpose(get(n.inputs[0]), n.attrs.get_ints("perm"));
      continue;
    }
    auto f = elementwise_fn(n);
    if (!f) {
      ADD_FAILURE() << "evaluator: no " << n.op;
      return {};
    }
    std::vector<Value> in;
    for (TensorId t : n.inputs) in.push_back(get(t));
    values[n.outputs[0]] = broadcast(in, f);
  }
  std::vector<Value> out;
  for (TensorId t : g.outputs()) out.push_back(get(t));
  return out;
}

// ---- checks ------------------------------------------------------------------

int count(const ir::Graph& g, const std::string& op) {
  int k = 0;
  for (const ir::Node& n : g.nodes()) k += n.op == op;
  return k;
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> r;
  for (const ir::Node& n : g.nodes()) r.push_back(n.op);
  return r;
}

// Unique names, every tensor written once and before it is read, the same
// interface, and ONNX's checker and shape inference accept the model.
void expect_well_formed(const ir::Graph& before, const ir::Graph& after, int opset = 17) {
  std::set<std::string> names;
  std::set<TensorId> written(after.inputs().begin(), after.inputs().end());
  for (const ir::Node& n : after.nodes()) {
    EXPECT_TRUE(names.insert(n.name).second) << "duplicate node name " << n.name;
    for (TensorId t : n.inputs)
      EXPECT_TRUE(!after.valid(t) || written.count(t) || after.tensor(t).is_const())
          << n.name << " reads " << after.tensor(t).name << " before it is written";
    for (TensorId t : n.outputs) EXPECT_TRUE(written.insert(t).second) << "written twice";
  }
  ASSERT_EQ(before.inputs().size(), after.inputs().size());
  ASSERT_EQ(before.outputs().size(), after.outputs().size());
  for (auto [b, a] : {std::pair{&before.inputs(), &after.inputs()},
                      std::pair{&before.outputs(), &after.outputs()}})
    for (size_t i = 0; i < b->size(); ++i) {
      EXPECT_EQ(before.tensor((*b)[i]).name, after.tensor((*a)[i]).name);
      EXPECT_EQ(before.tensor((*b)[i]).onnx_shape(), after.tensor((*a)[i]).onnx_shape());
    }
  onnx_emit::EmitOptions o;
  o.opset = opset;
  auto r = onnx_emit::emit(after, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
}

void expect_same_outputs(const ir::Graph& before, const ir::Graph& after) {
  auto inputs = make_inputs(before);
  auto want = evaluate(before, inputs);
  auto got = evaluate(after, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].shape, got[i].shape) << "output " << i;
    ASSERT_EQ(want[i].data.size(), got[i].data.size());
    for (size_t k = 0; k < want[i].data.size(); ++k) {
      float w = want[i].data[k], v = got[i].data[k];
      if (!(std::isnan(w) && std::isnan(v))) {
        ASSERT_EQ(w, v) << "output " << i << " element " << k;
      }
    }
  }
}

// Runs the pass on a copy; checks the copy computes what the original does.
ir::Graph cleaned(OnnxGraph& b) {
  ir::Graph g = b.g;
  EXPECT_TRUE(passes::cleanup_transposes(g, b.ctx()).ok());
  g.compact();
  expect_well_formed(b.g, g);
  expect_same_outputs(b.g, g);
  return g;
}

// ---- 1. consecutive Transposes --------------------------------------------------

TEST(TransposeCleanup, MergesTwoTransposesIntoOne) {
  OnnxGraph b;
  TensorId x = b.input("x", {2, 3, 4, 5});
  TensorId t = b.transpose(x, kToNchw);
  TensorId u = b.transpose(t, {1, 0, 2, 3});
  b.output(b.op("Relu", {u}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Transpose", "Relu"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
  EXPECT_EQ(testing::node_at(g, 0).attrs.get_ints("perm"), i64(ir::compose(kToNchw, {1, 0, 2, 3})));
  EXPECT_EQ(testing::inserted_nodes(g).size(), 1u);
}

TEST(TransposeCleanup, CancelsAnInversePair) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId t = b.transpose(b.transpose(x, kToNchw), kToNhwc);
  b.output(b.op("Relu", {t}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), std::vector<std::string>{"Relu"});
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
  EXPECT_TRUE(testing::inserted_nodes(g).empty());
}

TEST(TransposeCleanup, InversePairBeforeAGraphOutputLeavesNoNode) {
  OnnxGraph b;
  TensorId r = b.op("Relu", {b.input("x", {1, 2, 3, 4})});
  TensorId out = b.transpose(b.transpose(r, kToNchw), kToNhwc);
  b.output(out);
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), std::vector<std::string>{"Relu"});
  EXPECT_EQ(testing::node_at(g, 0).outputs[0], out);  // Relu writes the output itself
}

TEST(TransposeCleanup, InversePairFromAGraphInputToAGraphOutputBecomesIdentity) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  b.output(b.transpose(b.transpose(x, kToNchw), kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), std::vector<std::string>{"Identity"});
  ASSERT_EQ(testing::inserted_nodes(g).size(), 1u);
  EXPECT_EQ(testing::inserted_nodes(g)[0].op_type, "Identity");
}

TEST(TransposeCleanup, KeepsAPairWhoseMiddleHasAnotherReader) {
  OnnxGraph b;
  TensorId t = b.transpose(b.input("x", {2, 3, 4, 5}), kToNchw);
  b.output(b.op("Relu", {b.transpose(t, {1, 0, 2, 3})}));
  b.output(t);
  ir::Graph g = cleaned(b);
  EXPECT_EQ(count(g, "Transpose"), 2);
}

TEST(TransposeCleanup, CancelsTheInverseReaderEvenWhenOthersReadTheMiddle) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId t = b.transpose(x, kToNchw);
  b.output(b.op("Relu", {b.transpose(t, kToNhwc)}));
  b.output(t);
  ir::Graph g = cleaned(b);
  EXPECT_EQ(count(g, "Transpose"), 1);
  EXPECT_EQ(g.node(g.last()).inputs[0], x);  // Relu
}

TEST(TransposeCleanup, DropsATransposeThatDoesNothing) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3});
  b.output(b.op("Relu", {b.transpose(x, {0, 1, 2})}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), std::vector<std::string>{"Relu"});
}

// ---- 2. constants -----------------------------------------------------------------

TEST(TransposeCleanup, FoldsATransposeOfAConstant) {
  OnnxGraph b;
  TensorId x = b.input("x", {4, 2, 3});
  TensorId c = b.constant("c", {2, 3, 4});
  b.output(b.op("Add", {x, b.transpose(c, {2, 0, 1})}));
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), std::vector<std::string>{"Add"});
  const ir::Tensor& alias = g.tensor(testing::node_at(g, 0).inputs[1]);
  EXPECT_TRUE(alias.is_const());
  EXPECT_EQ(alias.layout, (Perm{2, 0, 1}));
  EXPECT_TRUE(testing::inserted_nodes(g).empty());
}

TEST(TransposeCleanup, FoldsATransposeOfAConstantThatHasALayout) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 3, 4, 2});
  TensorId c = b.constant("w", {1, 3, 4, 2}, kToNchw);
  b.output(b.op("Mul", {x, b.transpose(c, kToNhwc)}));
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), std::vector<std::string>{"Mul"});
  EXPECT_TRUE(g.tensor(testing::node_at(g, 0).inputs[1]).layout.empty());
}

TEST(TransposeCleanup, LeavesATransposedConstantThatIsAGraphOutput) {
  OnnxGraph b;
  b.input("x", {1});
  b.output(b.transpose(b.constant("c", {2, 3}), {1, 0}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(count(g, "Transpose"), 1);
}

// ---- 3. Transpose -> unary -> inverse Transpose ------------------------------------

TEST(TransposeCleanup, CancelsAroundEveryUnaryOp) {
  for (const char* type :
       {"Relu", "Clip", "Sigmoid", "Tanh", "Abs", "Sqrt", "Reciprocal", "Neg", "Exp", "Log",
        "LeakyRelu", "HardSigmoid", "HardSwish", "Cast", "Identity"}) {
    SCOPED_TRACE(type);
    OnnxGraph b;
    TensorId x = b.input("x", {1, 2, 3, 4});
    TensorId t = b.transpose(x, kToNchw);
    std::vector<TensorId> in = {t};
    if (std::string(type) == "Clip") in = {t, b.scalar("lo", -0.5f), b.scalar("hi", 1.5f)};
    TensorId y = b.op(type, in);
    if (std::string(type) == "LeakyRelu") b.last_info().attrs.set("alpha", 0.1f);
    if (std::string(type) == "Cast") b.last_info().attrs.set("to", int64_t{1});
    TensorId out = b.transpose(y, kToNhwc);
    b.output(out);
    ir::Graph g = cleaned(b);
    ASSERT_EQ(ops(g), std::vector<std::string>{type});
    EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
    EXPECT_EQ(testing::node_at(g, 0).outputs[0], out);
    EXPECT_TRUE(testing::inserted_nodes(g).empty());
  }
}

// ---- 4. pushing down through unary ops ----------------------------------------------

TEST(TransposeCleanup, PushesThroughAUnaryChainToCancel) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId y = b.op("Neg", {b.op("Relu", {b.transpose(x, kToNchw)})});
  b.output(b.op("Sigmoid", {b.transpose(y, kToNhwc)}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Relu", "Neg", "Sigmoid"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
}

TEST(TransposeCleanup, PushesThroughAUnaryChainToMerge) {
  OnnxGraph b;
  TensorId x = b.input("x", {2, 3, 4, 5});
  TensorId y = b.op("Tanh", {b.op("Relu", {b.transpose(x, kToNchw)})});
  b.output(b.transpose(y, {1, 0, 2, 3}));
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Relu", "Tanh", "Transpose"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
  EXPECT_EQ(testing::node_at(g, 2).attrs.get_ints("perm"), i64(ir::compose(kToNchw, {1, 0, 2, 3})));
}

TEST(TransposeCleanup, LeavesATransposeWhenNothingCancels) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  b.output(b.op("Sigmoid", {b.op("Relu", {b.transpose(x, kToNchw)})}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Transpose", "Relu", "Sigmoid"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
}

TEST(TransposeCleanup, ATransposeWithAnotherReaderStaysAndItsPairCancels) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId t = b.transpose(x, kToNchw);
  b.output(t);
  b.output(b.transpose(b.op("Relu", {t}), kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Transpose", "Relu"}));
  EXPECT_EQ(testing::node_at(g, 1).inputs[0], x);
}

// ---- 5. binary broadcast ops --------------------------------------------------------

TEST(TransposeCleanup, MovesPastAFullRankConstantOperand) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId c = b.constant("c", {1, 4, 2, 3});
  TensorId y = b.op("Add", {b.transpose(x, kToNchw), c});
  b.output(b.transpose(y, kToNhwc));
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), std::vector<std::string>{"Add"});
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
  EXPECT_EQ(g.tensor(testing::node_at(g, 0).inputs[1]).onnx_shape(), (Shape{1, 2, 3, 4}));
}

TEST(TransposeCleanup, MovesPastLowerRankConstantOperands) {
  for (Shape shape : {Shape{3}, Shape{2, 3}, Shape{4, 1, 3}, Shape{1}}) {
    SCOPED_TRACE(ir::to_string(shape));
    OnnxGraph b;
    TensorId x = b.input("x", {1, 2, 3, 4});
    TensorId y = b.op("Mul", {b.transpose(x, kToNchw), b.constant("c", shape)});
    b.output(b.transpose(y, kToNhwc));
    ir::Graph g = cleaned(b);
    EXPECT_EQ(ops(g), std::vector<std::string>{"Mul"});
  }
}

TEST(TransposeCleanup, KeepsOperandOrderOfEveryBinaryOp) {
  for (const char* type : {"Sub", "Div", "Pow", "Max", "Min", "PRelu"}) {
    for (bool const_first : {false, true}) {
      if (std::string(type) == "PRelu" && const_first) continue;  // slope is input 1
      SCOPED_TRACE(std::string(type) + (const_first ? " constant first" : ""));
      OnnxGraph b;
      TensorId x = b.input("x", {1, 2, 3, 4});
      TensorId t = b.transpose(x, kToNchw);
      TensorId c = b.constant("c", {4, 1, 1});
      TensorId y = const_first ? b.op(type, {c, t}, 1) : b.op(type, {t, c});
      b.output(b.transpose(y, kToNhwc));
      ir::Graph g = cleaned(b);
      EXPECT_EQ(ops(g), std::vector<std::string>{type});
    }
  }
}

TEST(TransposeCleanup, TwoTransposedOperandsBecomeOneTransposeAfter) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId y = b.input("y", {1, 2, 3, 4});
  TensorId s = b.op("Add", {b.transpose(x, kToNchw), b.transpose(y, kToNchw)});
  TensorId out = b.op("Relu", {s});
  b.output(out);
  ir::Graph g = cleaned(b);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Add", "Relu", "Transpose"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs, (std::vector<TensorId>{x, y}));
  EXPECT_EQ(testing::node_at(g, 2).outputs[0], out);
  // The two recorded Transposes went; the new one is recorded with its reason.
  ASSERT_EQ(testing::inserted_nodes(g).size(), 1u);
  EXPECT_EQ(testing::inserted_nodes(g)[0].node, testing::node_at(g, 2).name);
  EXPECT_NE(testing::inserted_nodes(g)[0].reason.find("moved through Add_"), std::string::npos)
      << testing::inserted_nodes(g)[0].reason;
}

TEST(TransposeCleanup, LeavesABinaryOpWithAnUntransposedOperand) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId y = b.input("y", {1, 4, 2, 3});
  b.output(b.transpose(b.op("Add", {b.transpose(x, kToNchw), y}), kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(count(g, "Transpose"), 2);
}

TEST(TransposeCleanup, DoesNotMoveWhenTheCountWouldNotDrop) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  b.output(b.op("Add", {b.transpose(x, kToNchw), b.constant("c", {4, 1, 1})}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Transpose", "Add"}));
  EXPECT_EQ(testing::node_at(g, 0).inputs[0], x);
}

TEST(TransposeCleanup, CancelsAcrossABroadcastToALargerShape) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 1, 1, 4});
  TensorId y = b.op("Add", {b.transpose(x, kToNchw), b.constant("c", {1, 4, 2, 3})}, 1);
  b.output(b.transpose(y, kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), std::vector<std::string>{"Add"});
}

TEST(TransposeCleanup, HardSwishDecompositionCancels) {
  // x * HardSigmoid(x), as lowering writes HardSwish below opset 14.
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId t = b.transpose(x, kToNchw);
  TensorId hs = b.op("HardSigmoid", {t});
  b.last_info().attrs.set("alpha", 1.f / 6.f);
  TensorId y = b.op("Mul", {t, hs});
  b.output(b.transpose(y, kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"HardSigmoid", "Mul"}));
}

TEST(TransposeCleanup, ASharedTransposedOperandStaysForItsOtherReaders) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId y = b.input("y", {1, 2, 3, 4});
  TensorId ty = b.transpose(y, kToNchw);
  b.output(b.op("Sigmoid", {ty}));
  TensorId s = b.op("Add", {b.transpose(x, kToNchw), ty});
  b.output(b.transpose(s, kToNhwc));
  ir::Graph g = cleaned(b);
  // Transpose(x) and the inverse go; Transpose(y) stays for the Sigmoid.
  EXPECT_EQ(count(g, "Transpose"), 1);
}

// ---- bytes ---------------------------------------------------------------------------

TEST(TransposeCleanup, MovesPastACastToASmallerType) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId y = b.op("Cast", {b.transpose(x, kToNchw)});
  b.last_info().attrs.set("to", int64_t{2});  // UINT8
  b.g.tensor(y).dtype = ir::DataType::kUInt8;
  b.output(y);
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Cast", "Transpose"}));
}

TEST(TransposeCleanup, DoesNotMovePastACastToALargerType) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  b.g.tensor(x).dtype = ir::DataType::kUInt8;
  TensorId y = b.op("Cast", {b.transpose(x, kToNchw)});
  b.last_info().attrs.set("to", int64_t{1});  // FLOAT
  b.g.tensor(y).dtype = ir::DataType::kFloat32;
  b.output(y);
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Transpose", "Cast"}));
}

// ---- 6. several readers ----------------------------------------------------------------

TEST(TransposeCleanup, CancelsForEveryReaderThatWantsTheInverse) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId t = b.transpose(x, kToNchw);
  b.output(b.op("Relu", {b.transpose(t, kToNhwc)}));
  b.output(b.op("Sigmoid", {b.transpose(t, kToNhwc)}));
  b.output(b.transpose(t, kToNhwc));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(count(g, "Transpose"), 0);
  EXPECT_EQ(count(g, "Identity"), 1);  // x is both input and output
}

TEST(TransposeCleanup, CancelsForEveryReaderAfterAUnaryOp) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId r = b.op("Relu", {b.transpose(x, kToNchw)});
  b.output(b.op("Neg", {b.transpose(r, kToNhwc)}));
  b.output(b.op("Sigmoid", {b.transpose(r, kToNhwc)}));
  ir::Graph g = cleaned(b);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Relu", "Neg", "Sigmoid"}));
}

// ---- 7. graph outputs ----------------------------------------------------------------

TEST(TransposeCleanup, AMovedGraphOutputKeepsItsNameAndShape) {
  OnnxGraph b;
  TensorId x = b.input("x", {1, 2, 3, 4});
  TensorId r = b.op("Relu", {b.transpose(x, kToNchw)});
  b.output(r);
  b.output(b.op("Sigmoid", {b.transpose(r, kToNhwc)}));
  ir::Graph g = cleaned(b);  // checks names and ONNX shapes of the outputs
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Relu", "Transpose", "Sigmoid"}));
  EXPECT_EQ(testing::node_at(g, 1).outputs[0], r);
  EXPECT_EQ(testing::node_at(g, 1).name, "Relu_1/Transpose_out");
}

// ---- naming and determinism ---------------------------------------------------------------

TEST(TransposeCleanup, NewNodeNamesAreUniqueAndDeterministic) {
  auto build = [] {
    OnnxGraph b;
    TensorId x = b.input("x", {1, 2, 3, 4});
    TensorId y = b.input("y", {1, 2, 3, 4});
    b.output(b.op("Add", {b.transpose(x, kToNchw), b.transpose(y, kToNchw)}));
    // A node already named like the Transpose the pass will add after Add_2.
    b.output(b.op("Relu", {x}));
    b.last_info().name = "Add_2/Transpose_out";
    return b;
  };
  OnnxGraph b1 = build(), b2 = build();
  ir::Graph g1 = cleaned(b1), g2 = cleaned(b2);
  std::vector<std::string> n1, n2;
  for (const ir::Node& n : g1.nodes()) n1.push_back(n.name);
  for (const ir::Node& n : g2.nodes()) n2.push_back(n.name);
  EXPECT_EQ(n1, n2);
  EXPECT_EQ(n1,
            (std::vector<std::string>{"Add_2", "Add_2/Transpose_out_2", "Add_2/Transpose_out"}));
}

// ---- random graphs ------------------------------------------------------------------------

// Random mixes of Transposes, unary and binary ops and constants (some with
// layouts, some of lower rank) over one 4-D shape in different axis orders.
TEST(TransposeCleanup, RandomGraphsKeepTheirResults) {
  const std::vector<Perm> perms = {kToNchw, kToNhwc, {1, 0, 2, 3}, {3, 2, 1, 0}, {0, 1, 3, 2}};
  const Shape base = {2, 3, 4, 5};
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    uint32_t state = seed;
    auto rnd = [&](size_t n) {
      state = state * 1103515245u + 12345u;
      return static_cast<size_t>((state >> 16) % n);
    };
    OnnxGraph b;
    std::vector<TensorId> values = {b.input("x", base), b.input("y", base)};
    auto constant_like = [&](TensorId v) {
      Shape onnx = b.g.tensor(v).onnx_shape();
      if (rnd(3) == 0) onnx.erase(onnx.begin(), onnx.begin() + 1 + static_cast<long>(rnd(3)));
      if (!onnx.empty() && rnd(2)) onnx[rnd(onnx.size())] = 1;
      Perm layout;
      if (onnx.size() == 4 && rnd(2)) layout = perms[rnd(perms.size())];
      Shape tflite = layout.empty() ? onnx : ir::permute_shape(onnx, ir::inverse(layout));
      return b.constant("c" + std::to_string(b.g.tensor_count()), tflite, layout);
    };
    const int steps = 6 + static_cast<int>(rnd(30));
    for (int k = 0; k < steps; ++k) {
      TensorId v = values[rnd(values.size())];
      switch (rnd(5)) {
        case 0:
        case 1:
          values.push_back(b.transpose(v, perms[rnd(perms.size())]));
          break;
        case 2: {
          const char* unary[] = {"Relu", "Neg", "Sigmoid", "Abs", "Tanh"};
          values.push_back(b.op(unary[rnd(5)], {v}));
          break;
        }
        case 3: {
          const char* binary[] = {"Add", "Mul", "Sub", "Max"};
          std::vector<TensorId> same;
          for (TensorId w : values)
            if (b.g.tensor(w).onnx_shape() == b.g.tensor(v).onnx_shape()) same.push_back(w);
          TensorId w = rnd(2) ? same[rnd(same.size())] : constant_like(v);
          values.push_back(rnd(2) ? b.op(binary[rnd(4)], {v, w}) : b.op(binary[rnd(4)], {w, v}, 1));
          break;
        }
        case 4: {
          TensorId c = constant_like(v);
          if (b.g.tensor(c).rank() == 4) values.push_back(b.transpose(c, perms[rnd(perms.size())]));
          break;
        }
      }
    }
    b.output(values.back());
    for (TensorId v : values)
      if (rnd(5) == 0 && !b.g.is_graph_output(v) && !b.g.is_graph_input(v)) b.output(v);
    ir::Graph g = cleaned(b);
    EXPECT_LE(count(g, "Transpose"), count(b.g, "Transpose"));
    if (HasFailure()) break;
  }
}

// ---- the real pipeline ---------------------------------------------------------------------

struct Counts {
  int before = 0;
  int after = 0;
};

// Runs the pipeline with the cleanup on a model convert() accepts and checks
// the result still emits. nullopt, with the reason in `skipped`, for a model
// convert() rejects or one that needs passes convert() runs and the replica
// above does not.
std::optional<Counts> cleanup_counts(const std::string& path, std::string& skipped) {
  auto bytes = testing::read_file(path);
  Diagnostics check;
  if (auto r = convert(testing::view(bytes), ConvertOptions{}, check); !r.ok()) {
    skipped = "convert() rejects it: " + r.error().message;
    return std::nullopt;
  }
  // The real pipeline up to the cleanup, which runs here on a copy.
  ConvertOptions options;
  Diagnostics diag;
  Pipeline pipeline(testing::view(bytes), options, diag);
  if (auto st = pipeline.run_until(Stage::kLower); !st.ok()) {
    skipped = "the pipeline rejects it: " + st.error().message;
    return std::nullopt;
  }
  ir::Graph& g = pipeline.graph();
  ir::Graph before = g;
  Counts c;
  c.before = count(g, "Transpose");
  Checkpoint never;
  passes::PassContext ctx{diag, options, never};
  EXPECT_TRUE(passes::cleanup_transposes(g, ctx).ok()) << path;
  g.compact();
  c.after = count(g, "Transpose");
  // Quantized models: the Q/DQ nodes come last, as in convert().
  EXPECT_TRUE(passes::materialize_qdq(g, ctx).ok()) << path;
  EXPECT_TRUE(passes::materialize_qdq(before, ctx).ok()) << path;
  expect_well_formed(before, g, options.opset);
  EXPECT_LE(c.after, c.before) << path;
  return c;
}

TEST(TransposeCleanupPipeline, OpModelsStillEmit) {
  for (const char* name : {"reshape_flatten_fc", "transpose_after_conv", "strided_slice_after_conv",
                           "transpose_nchw", "mini_mobilenet", "hard_swish"}) {
    SCOPED_TRACE(name);
    std::string path = std::string(LITE2ONNX_TEST_MODELS_DIR) + "/" + name + ".tflite";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    std::string skipped;
    EXPECT_TRUE(cleanup_counts(path, skipped).has_value()) << skipped;
  }
}

TEST(TransposeCleanupPipeline, ConvReshapeMultipleConvStillEmits) {
  std::string path = corpus_dir() + "/tflite2onnx/conv-reshape-multiple-conv.float32.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  std::string skipped;
  EXPECT_TRUE(cleanup_counts(path, skipped).has_value()) << skipped;
}

// Every op model and every tflite2onnx float model (that the replica runs):
// the cleanup never adds a Transpose and the result still passes the checker. With
// LITE2ONNX_PRINT_TRANSPOSE_COUNTS set, prints the before/after table.
TEST(TransposeCleanupPipeline, AllModelsStillEmit) {
  std::vector<std::string> paths;
  for (const auto& dir : {std::string(LITE2ONNX_TEST_MODELS_DIR), corpus_dir() + "/tflite2onnx"}) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::string p = e.path().string();
      bool tflite = p.ends_with(".tflite");
      bool float_model = dir.ends_with("tflite2onnx") ? p.ends_with(".float32.tflite") : true;
      if (tflite && float_model) paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  bool print = std::getenv("LITE2ONNX_PRINT_TRANSPOSE_COUNTS") != nullptr;
  for (const auto& p : paths) {
    SCOPED_TRACE(p);
    std::string skipped;
    auto c = cleanup_counts(p, skipped);
    if (print)
      std::cout << std::filesystem::path(p).filename().string() << "\t"
                << (c ? std::to_string(c->before) + "\t" + std::to_string(c->after)
                      : "-\t-\t" + skipped)
                << "\n";
  }
}

}  // namespace
}  // namespace lite2onnx
