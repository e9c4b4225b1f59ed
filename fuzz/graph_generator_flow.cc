// The model generator: WHILE, IF, CALL, composites, resource variables, shape arithmetic.
#include "fuzz/graph_generator_parts.h"

namespace lite2onnx::fuzz::gen {

int Generator::subgraph_index(int own) {
  if (!bend(6)) return own;
  switch (in_.range(0, 3)) {
    case 0:
      return -in_.range(1, 5);
    case 1:
      return 1000 + in_.range(0, 1 << 20);
    case 2:
      return 0;  // the main graph, which runs the op: recursion
    default:
      return own + 1;  // another subgraph, whatever its interface
  }
}

int Generator::add_subgraph(SubgraphSpec g) {
  extra_.push_back(std::move(g));
  return static_cast<int>(extra_.size());  // subgraph 0 is the main graph
}

int Generator::unary_in(SubgraphSpec& g, int v, const std::string& tag) {
  static constexpr Op kOps[] = {Op::ABS, Op::NEG, Op::RELU, Op::TANH, Op::LOGISTIC};
  const Op op = in_.pick(std::span<const Op>(kOps));
  const int y = g.like(g.tensors[static_cast<size_t>(v)], tag);
  g.ops.push_back({static_cast<int>(op), "", {v}, {y}, tflite::BuiltinOptions::NONE, {}});
  return y;
}

void Generator::while_loop() {
  const int x = data_input();
  const int count = in_.range(0, 3);
  TensorSpec counter;
  counter.type = Type::INT32;
  SubgraphSpec cond;
  cond.name = "cond";
  {
    const int i = cond.like(counter, "i"), v = cond.like(at(x), "v");
    TensorSpec flag;
    flag.name = "again";
    flag.type = Type::BOOL;
    const int again = cond.add(std::move(flag));
    cond.ops.push_back({static_cast<int>(Op::LESS),
                        "",
                        {i, cond.scalar_i32(count, "count")},
                        {again},
                        tflite::BuiltinOptions::NONE,
                        {}});
    cond.inputs = {i, v};
    cond.outputs = {again};
  }
  SubgraphSpec body;
  body.name = "body";
  {
    const int i = body.like(counter, "i"), v = body.like(at(x), "v");
    const int next = body.like(counter, "i_next");
    body.ops.push_back({static_cast<int>(Op::ADD),
                        "",
                        {i, body.scalar_i32(1, "one")},
                        {next},
                        tflite::BuiltinOptions::NONE,
                        {}});
    body.inputs = {i, v};
    body.outputs = {next, unary_in(body, v, "v_next")};
  }
  const int cond_index = subgraph_index(add_subgraph(std::move(cond)));
  const int body_index = subgraph_index(add_subgraph(std::move(body)));
  const int i0 = const_ints({0});
  push(static_cast<int>(Op::WHILE), {i0, x},
       {new_output({}, Type::INT32), new_output(at(x).shape, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::WhileOptions,
       [=](auto& fbb) { return tflite::CreateWhileOptions(fbb, cond_index, body_index).Union(); });
}

void Generator::call(bool composite) {
  const int x = data_input();
  SubgraphSpec callee;
  callee.name = "callee";
  const int v = callee.like(at(x), "v");
  callee.inputs = {v};
  callee.outputs = {in_.one_in(4) ? v : unary_in(callee, v, "y")};
  const int index = subgraph_index(add_subgraph(std::move(callee)));
  const int y = new_output(at(x).shape, at(x).type, at(x).quant);
  if (!composite)
    return push(static_cast<int>(Op::CALL), {x}, {y}, tflite::BuiltinOptions::CallOptions,
                [=](auto& fbb) {
                  return tflite::CreateCallOptions(fbb, static_cast<uint32_t>(index)).Union();
                });
  push(static_cast<int>(Op::STABLEHLO_COMPOSITE), {x}, {y}, tflite::BuiltinOptions::NONE,
       [=](auto& fbb) {
         return tflite::CreateStableHLOCompositeOptions(fbb, fbb.CreateString("odml.fuzz"), index)
             .Union();
       });
  ops_.back().options_2_type = tflite::BuiltinOptions2::StableHLOCompositeOptions;
}

void Generator::if_then_else() {
  const int c = data_input(0, Type::BOOL);
  const int x = data_input();
  int index[2];
  for (int b = 0; b < 2; ++b) {
    SubgraphSpec branch;
    branch.name = b == 0 ? "then" : "else";
    const int v = branch.like(at(x), "v");
    branch.inputs = {v};
    // A branch that passes its argument through, now and then.
    branch.outputs = {in_.one_in(4) ? v : unary_in(branch, v, "y")};
    index[b] = subgraph_index(add_subgraph(std::move(branch)));
  }
  push(static_cast<int>(Op::IF), {c, x}, {new_output(at(x).shape, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::IfOptions,
       [=](auto& fbb) { return tflite::CreateIfOptions(fbb, index[0], index[1]).Union(); });
}

void Generator::resource_variable() {
  const int x = data_input();
  TensorSpec handle;
  handle.name = fresh_name();
  handle.type = Type::RESOURCE;
  const int h = add_tensor(std::move(handle));
  const std::string shared = "v" + std::to_string(in_.range(0, 3));
  push(static_cast<int>(Op::VAR_HANDLE), {}, {h}, tflite::BuiltinOptions::VarHandleOptions,
       [shared](auto& fbb) {
         return tflite::CreateVarHandleOptions(fbb, 0, fbb.CreateString(shared)).Union();
       });
  const bool read_first = bend(4);
  auto assign = [&] { push(static_cast<int>(Op::ASSIGN_VARIABLE), {h, x}, {}); };
  if (!read_first) assign();
  push(static_cast<int>(Op::READ_VARIABLE), {h},
       {new_output(at(x).shape, at(x).type, at(x).quant)});
  if (read_first) assign();
}

void Generator::shape_arithmetic() {
  int x = data_input();
  int r = rank(x);
  if (r == 0) return;
  int shape = new_output({r}, Type::INT32);
  push(static_cast<int>(Op::SHAPE), {x}, {shape}, tflite::BuiltinOptions::ShapeOptions,
       [](auto& fbb) { return tflite::CreateShapeOptions(fbb, Type::INT32).Union(); });
  int first = new_output({}, Type::INT32);
  push(static_cast<int>(Op::STRIDED_SLICE),
       {shape, const_ints({0}, {1}), const_ints({1}, {1}), const_ints({1}, {1})}, {first},
       tflite::BuiltinOptions::StridedSliceOptions,
       [](auto& fbb) { return tflite::CreateStridedSliceOptions(fbb, 0, 0, 0, 0, 1).Union(); });
  int rest = const_ints({-1});
  int packed = new_output({2}, Type::INT32);
  push(static_cast<int>(Op::PACK), {first, rest}, {packed}, tflite::BuiltinOptions::PackOptions,
       [](auto& fbb) { return tflite::CreatePackOptions(fbb, 2, 0).Union(); });
  Shape s = at(x).shape;
  int32_t n0 = s[0];
  Shape o = {n0, n0 ? static_cast<int32_t>(elements(s) / n0) : 0};
  push(static_cast<int>(Op::RESHAPE), {x, packed}, {new_output(o, at(x).type, at(x).quant)});
}

}  // namespace lite2onnx::fuzz::gen
