// The recurrent ops but the LSTM family (lstm.cc): RNN,
// UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN and SVDF, and the
// writer all of them use (recurrent.h). Terminate class: they read their
// inputs in TFLite memory order. Their state tensors (variable tensors the
// kernel updates in place) are model state: expose_state (passes.h) makes them
// graph inputs and gives the node the outputs the converters write the next
// values into.
#include "core/ops/recurrent.h"

#include <cmath>
#include <cstring>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::recurrent {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

// ---- Writer ----

TensorId Writer::op(const std::string& type, std::vector<TensorId> in, const std::string& suffix,
                    std::vector<ir::Attr> attrs, DataType out_type) {
  TensorId t = ctx_.temp(n_.name + "/" + suffix, out_type);
  op_into(t, type, std::move(in), suffix, std::move(attrs));
  return t;
}

void Writer::op_into(TensorId out, const std::string& type, std::vector<TensorId> in,
                     const std::string& suffix, std::vector<ir::Attr> attrs) {
  ir::Node& node = ctx_.emit(n_, type, std::move(in), {out}, suffix);
  for (auto& a : attrs) node.attrs.set(a.name, std::move(a.value));
}

std::vector<TensorId> Writer::ops(const std::string& type, std::vector<TensorId> in, size_t outputs,
                                  const std::string& suffix, std::vector<ir::Attr> attrs) {
  std::vector<TensorId> outs;
  for (size_t i = 0; i < outputs; ++i)
    outs.push_back(ctx_.temp(n_.name + "/" + suffix + "_" + std::to_string(i), DataType::kFloat32));
  ir::Node& node = ctx_.emit(n_, type, std::move(in), outs, suffix);
  for (auto& a : attrs) node.attrs.set(a.name, std::move(a.value));
  return outs;
}

TensorId Writer::scalar(float v) {
  auto [it, fresh] = scalars_.try_emplace(v, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_scalar(n_.name + "/scalar", DataType::kFloat32, v);
  return it->second;
}

TensorId Writer::ints(std::vector<int64_t> values) {
  auto [it, fresh] = ints_.try_emplace(values, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_i64(n_.name + "/ints", std::move(values));
  return it->second;
}

TensorId Writer::index(int64_t v) {
  auto [it, fresh] = indices_.try_emplace(v, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_i64(n_.name + "/index", {v}, Shape{});
  return it->second;
}

TensorId Writer::activation(const std::string& act, TensorId x, const std::string& suffix) {
  if (act == "RELU") return op("Relu", {x}, suffix);
  if (act == "RELU6") return clip(x, 0.f, 6.f, suffix);
  if (act == "RELU_N1_TO_1") return clip(x, -1.f, 1.f, suffix);
  if (act == "TANH") return op("Tanh", {x}, suffix);
  if (act == "SIGMOID") return op("Sigmoid", {x}, suffix);
  return x;  // NONE
}

TensorId Writer::matmul_t(TensorId x, TensorId w, const std::string& suffix) {
  return op("MatMul", {x, transposed(w, suffix + "/transpose")}, suffix);
}

TensorId Writer::transposed(TensorId w, const std::string& suffix) {
  if (graph().tensor(w).is_const())
    return ctx_.constant_in_layout(w, ir::Perm{1, 0}, "read transposed by " + n_.name);
  return op("Transpose", {w}, suffix, {{"perm", std::vector<int64_t>{1, 0}}});
}

TensorId Writer::gather(TensorId x, int64_t t, int64_t axis, const std::string& suffix) {
  return op("Gather", {x, index(t)}, suffix, {{"axis", axis}});
}

TensorId Writer::squeeze(TensorId x, std::vector<int64_t> axes, const std::string& suffix) {
  return op("Squeeze", {x, ints(std::move(axes))}, suffix);
}

TensorId Writer::unsqueeze(TensorId x, std::vector<int64_t> axes, const std::string& suffix) {
  return op("Unsqueeze", {x, ints(std::move(axes))}, suffix);
}

TensorId Writer::constant(std::vector<float> values, Shape shape, const std::string& suffix) {
  return ctx_.const_f32(n_.name + "/" + suffix, std::move(values), std::move(shape));
}

TensorId Writer::stack_rows(const std::vector<TensorId>& parts, const std::string& suffix) {
  if (parts.size() == 1) return parts[0];
  std::vector<float> all;
  Shape shape;
  bool folded = true;
  for (TensorId p : parts) {
    const ir::Tensor& t = graph().tensor(p);
    auto v = t.is_const() && !t.quantized_type ? float_values(t) : std::nullopt;
    if (!v || t.shape.empty()) {
      folded = false;
      break;
    }
    if (shape.empty()) {
      shape = t.shape;
      shape[0] = 0;
    }
    shape[0] += t.shape[0];
    all.insert(all.end(), v->begin(), v->end());
  }
  if (folded) return constant(std::move(all), shape, suffix);
  return op("Concat", parts, suffix, {{"axis", int64_t{0}}});
}

TensorId Writer::stack_transposed(const std::vector<TensorId>& parts, const std::string& suffix) {
  if (parts.size() == 1) return transposed(parts[0], suffix);
  bool folded = true;
  for (TensorId p : parts) {
    const ir::Tensor& t = graph().tensor(p);
    folded = folded && t.is_const() && !t.quantized_type && t.rank() == 2 && float_values(t);
  }
  if (folded) {
    // [rows_k, cols] each -> [cols, sum of rows_k], written now.
    const int64_t cols = graph().tensor(parts[0]).shape[1];
    int64_t rows = 0;
    for (TensorId p : parts) rows += graph().tensor(p).shape[0];
    std::vector<float> out(static_cast<size_t>(cols * rows));
    int64_t at = 0;
    for (TensorId p : parts) {
      const ir::Tensor& t = graph().tensor(p);
      const std::vector<float> v = *float_values(t);
      for (int64_t r = 0; r < t.shape[0]; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[static_cast<size_t>(c * rows + at + r)] = v[static_cast<size_t>(r * cols + c)];
      at += t.shape[0];
    }
    return constant(std::move(out), {cols, rows}, suffix);
  }
  std::vector<TensorId> ts;
  for (size_t i = 0; i < parts.size(); ++i)
    ts.push_back(transposed(parts[i], suffix + "/" + std::to_string(i)));
  return op("Concat", ts, suffix, {{"axis", int64_t{1}}});
}

TensorId Writer::to_steps(TensorId x, double scale, double lo, double hi,
                          const std::string& suffix) {
  TensorId r = op("Round", {mul(x, scalar(static_cast<float>(1.0 / scale)), suffix + "/scaled")},
                  suffix + "/round");
  return clip(r, static_cast<float>(lo), static_cast<float>(hi), suffix);
}

// ---- helpers ----

std::optional<std::vector<float>> float_values(const ir::Tensor& t) {
  if (!t.is_const() || t.data->stored_type != DataType::kFloat32) return std::nullopt;
  auto span = t.data->as<float>();
  return std::vector<float>(span.begin(), span.end());
}

void stack_steps(Writer& w, const std::vector<TensorId>& steps, bool time_major, int64_t batch,
                 int64_t units, TensorId out, const std::string& suffix) {
  const auto t = static_cast<int64_t>(steps.size());
  // Time-major [T, B, U]: the steps' rows one after the other; batch-major
  // [B, T, U]: each batch row holds the steps' units one after the other.
  TensorId joined = steps.size() == 1 ? steps[0]
                                      : w.op("Concat", steps, suffix + "/concat",
                                             {{"axis", int64_t{time_major ? 0 : 1}}});
  Shape shape = time_major ? Shape{t, batch, units} : Shape{batch, t, units};
  w.op_into(out, "Reshape", {joined, w.ints(shape)}, suffix);
}

Status reserve_nodes(LowerContext& ctx, const ir::Node& n, int64_t nodes) {
  ir::Graph& g = ctx.graph();
  const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(nodes, 0)) * kUnrolledNodeBytes;
  const std::string by = n.name + " unrolled to " + std::to_string(nodes) + " nodes";
  g.created().charge(bytes, by);
  if (!g.created().exceeded()) return ok_status();
  Error e =
      make_error(ErrorCode::kResourceLimit,
                 "the conversion would create more than " + std::to_string(g.created().limit()) +
                     " bytes of constants and unrolled nodes (the max_created_bytes limit; "
                     "passed at '" +
                     by + "')");
  e.op_index = n.source_op;
  return e;
}

Check require_shape(const ir::Graph& g, const ir::Node& n, size_t i, const Shape& want,
                    const char* what) {
  if (!has_input(g, n, i)) return refuse(ReasonCode::kOperands, std::string(what) + " is missing");
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (!t.has_rank || t.shape != want)
    return refuse(ReasonCode::kShape, std::string(what) + " '" + t.name + "' has shape " +
                                          ir::to_string(t.shape) + ", TFLite's kernel needs " +
                                          ir::to_string(want));
  return {};
}

int64_t input_batch(const ir::Tensor& x, size_t batch_axis, const ir::Tensor& state) {
  if (!x.has_rank || batch_axis >= x.rank()) return -1;
  for (size_t a = 0; a < x.rank(); ++a)
    if (a != batch_axis && x.shape[a] < 0) return -1;
  if (x.shape[batch_axis] >= 0) return x.shape[batch_axis];
  if (!state.has_rank || state.rank() != 2 || state.shape[0] < 1) return -1;
  return state.shape[0];
}

Check check_recurrent_activation(const ir::Node& n, bool none_allowed) {
  const std::string a = n.attrs.get_string("fused_activation_function", "NONE");
  if (a == "RELU" || a == "RELU6" || a == "RELU_N1_TO_1" || a == "TANH") return {};
  if (a == "NONE" && none_allowed) return {};
  if (a == "NONE")
    return refuse(ReasonCode::kOption,
                  "activation NONE: TFLite's kernel then leaves the gate buffers unwritten");
  return refuse(ReasonCode::kOption, "activation " + a + " is not converted");
}

namespace {

// ---- RNN ----

// Input slots (basic_rnn.cc, unidirectional_sequence_rnn.cc).
constexpr size_t kRnnInput = 0, kRnnWeights = 1, kRnnRecurrent = 2, kRnnBias = 3, kRnnState = 4;

struct RnnDims {
  int64_t batch = 0, time = 1, input = 0, units = 0;
};

// The input, weights, bias and state of one RNN cell as TFLite's Prepare
// checks them; "" or the problem. `rank3`: a sequence op.
Check check_rnn_operands(const ir::Graph& g, const ir::Node& n, size_t input, size_t weights,
                         size_t recurrent, size_t bias, size_t state, bool time_major, bool rank3,
                         RnnDims& d) {
  const ir::Tensor& x = g.tensor(n.inputs[input]);
  if (n.builtin != ir::builtin::kBidirectionalSequenceRnn && own_outputs(n) != 1)
    return refuse(ReasonCode::kOperands, "the kernel has one output");
  if (!x.has_rank || x.rank() != (rank3 ? 3u : 2u))
    return refuse(ReasonCode::kShape,
                  "input '" + x.name + "' must have rank " + (rank3 ? "3" : "2"));
  if (!has_input(g, n, state)) return refuse(ReasonCode::kOperands, "hidden state is missing");
  const size_t batch_axis = rank3 && time_major ? 1 : 0;
  const int64_t batch = input_batch(x, batch_axis, g.tensor(n.inputs[state]));
  if (batch < 1)
    return refuse(ReasonCode::kShape,
                  "input '" + x.name +
                      "' has a dynamic dimension other than its batch, or a dynamic "
                      "batch that the state does not fix");
  if (x.dtype != DataType::kFloat32 || x.quantized_type)
    return refuse(ReasonCode::kType,
                  "input '" + x.name + "' is not float32: TFLite's kernel takes float input");
  if (!has_input(g, n, weights)) return refuse(ReasonCode::kOperands, "input weights are missing");
  const ir::Tensor& wt = g.tensor(n.inputs[weights]);
  if (!wt.has_rank || wt.rank() != 2 || !ir::static_shape(wt))
    return refuse(ReasonCode::kShape, "weights '" + wt.name + "' must have a static rank-2 shape");
  d.units = wt.shape[0];
  d.batch = batch;
  if (rank3) d.time = time_major ? x.shape[0] : x.shape[1];
  d.input = x.shape.back();
  if (wt.shape[1] != d.input)
    return refuse(ReasonCode::kOperands, "weights '" + wt.name + "' have " +
                                             std::to_string(wt.shape[1]) + " columns, the input " +
                                             std::to_string(d.input));
  if (auto r = require_shape(g, n, recurrent, {d.units, d.units}, "recurrent weights")) return r;
  if (auto r = require_shape(g, n, bias, {d.units}, "bias")) return r;
  if (auto r = require_shape(g, n, state, {d.batch, d.units}, "hidden state")) return r;
  for (size_t slot : {weights, recurrent, bias}) {
    const ir::Tensor& t = g.tensor(n.inputs[slot]);
    if (t.dtype != DataType::kFloat32)
      return refuse(ReasonCode::kQuantization,
                    "'" + t.name + "' has type " + ir::to_string(t.dtype) +
                        " without quantization parameters (float32 or quantized int8 expected)");
  }
  if (g.tensor(n.inputs[state]).quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "hidden state '" + g.tensor(n.inputs[state]).name + "' is quantized");
  if (d.time < 1 || d.time > kMaxSteps)
    return refuse(ReasonCode::kLimit, "sequence of " + std::to_string(d.time) + " steps (1.." +
                                          std::to_string(kMaxSteps) + " are converted)");
  return {};
}

Check check_rnn(const ir::Graph& g, const ir::Node& n) {
  RnnDims d;
  if (auto r = check_rnn_operands(g, n, kRnnInput, kRnnWeights, kRnnRecurrent, kRnnBias, kRnnState,
                                  false, false, d))
    return r;
  if (auto r = require_shape(g, n, 0, {d.batch, d.input}, "input")) return r;
  return check_recurrent_activation(n, true);
}

Check check_sequence_rnn(const ir::Graph& g, const ir::Node& n) {
  RnnDims d;
  const bool tm = n.attrs.get_int("time_major") != 0;
  if (auto r = check_rnn_operands(g, n, kRnnInput, kRnnWeights, kRnnRecurrent, kRnnBias, kRnnState,
                                  tm, true, d))
    return r;
  return check_recurrent_activation(n, true);
}

// One direction of an RNN over `steps` steps (in the order given): the
// output of every step (in that order) and the last state. `in_proj(t)` is
// step t's input projection with the bias added.
struct Unrolled {
  std::vector<TensorId> outputs;
  TensorId state = ir::kNoTensor;
};

// The explicit cell: h = act(in_proj_t + h R^T), unrolled.
Unrolled unroll_rnn(Writer& w, TensorId proj, bool time_major, const std::vector<int64_t>& order,
                    TensorId recurrent, TensorId h, const std::string& act,
                    const std::string& prefix) {
  Unrolled u;
  TensorId rt = w.transposed(recurrent, prefix + "recurrent_t");
  for (int64_t t : order) {
    const std::string s = prefix + "t" + std::to_string(t) + "/";
    TensorId p = w.gather(proj, t, time_major ? 0 : 1, s + "input");
    // Gemm: h R^T + p in one node.
    TensorId pre = w.op("Gemm", {h, rt, p}, s + "pre");
    h = w.activation(act, pre, s + "act");
    u.outputs.push_back(h);
  }
  u.state = h;
  return u;
}

// x [..., I] @ W^T + b (+ aux @ Waux^T): the input projection of every step.
TensorId input_projection(Writer& w, TensorId x, TensorId weights, TensorId bias, TensorId aux,
                          TensorId aux_weights, const std::string& prefix) {
  TensorId p = w.matmul_t(x, weights, prefix + "input_projection");
  if (aux != ir::kNoTensor)
    p = w.add(p, w.matmul_t(aux, aux_weights, prefix + "aux_projection"), prefix + "with_aux");
  return w.add(p, bias, prefix + "with_bias");
}

// ONNX RNN computes TFLite's RNN cell exactly for these activations.
const char* onnx_rnn_activation(const std::string& act) {
  if (act == "TANH") return "Tanh";
  if (act == "RELU") return "Relu";
  return nullptr;
}

// The state's next value: written by an Identity of `value`.
void write_state(Writer& w, const ir::Node& n, size_t k, TensorId value, const std::string& s) {
  TensorId out = state_output(n, k);
  if (out != ir::kNoTensor) w.op_into(out, "Identity", {value}, s);
}

// One RNN direction as an ONNX RNN node over a time-major [T, B, I] input:
// returns Y as [T, B, U] and the last state [B, U].
Unrolled onnx_rnn(Writer& w, TensorId x_tm, TensorId weights, TensorId recurrent, TensorId bias,
                  TensorId h, int64_t units, const char* act, bool reverse,
                  const std::string& prefix) {
  LowerContext& ctx = w.ctx();
  const ir::Node& n = w.node();
  auto as3 = [&](TensorId t, const std::string& s) {
    const ir::Tensor& c = w.graph().tensor(t);
    if (c.is_const()) {
      ir::Tensor alias = c;
      alias.shape.insert(alias.shape.begin(), 1);
      alias.emit_shape = alias.shape;
      return ctx.graph().add_tensor(std::move(alias));
    }
    return w.unsqueeze(t, {0}, prefix + s);
  };
  // B = [Wb, Rb]: the bias, then zeros.
  TensorId b;
  auto bv = float_values(w.graph().tensor(bias));
  if (bv && !w.graph().tensor(bias).quantized_type) {
    bv->resize(static_cast<size_t>(2 * units), 0.f);
    b = w.constant(std::move(*bv), {1, 2 * units}, prefix + "onnx_bias");
  } else {
    TensorId zeros = w.constant(std::vector<float>(static_cast<size_t>(units), 0.f), {units},
                                prefix + "zero_bias");
    b = w.unsqueeze(w.op("Concat", {bias, zeros}, prefix + "onnx_bias", {{"axis", int64_t{0}}}),
                    {0}, prefix + "onnx_bias3");
  }
  TensorId h0 = w.unsqueeze(h, {0}, prefix + "initial_h");
  TensorId y = ctx.temp(n.name + "/" + prefix + "y", DataType::kFloat32);
  TensorId yh = ctx.temp(n.name + "/" + prefix + "y_h", DataType::kFloat32);
  ir::Node& rnn =
      ctx.emit(n, "RNN", {x_tm, as3(weights, "w"), as3(recurrent, "r"), b, ir::kNoTensor, h0},
               {y, yh}, prefix + "rnn");
  rnn.attrs.set("hidden_size", units);
  rnn.attrs.set("activations", std::vector<std::string>{act});
  if (reverse) rnn.attrs.set("direction", std::string("reverse"));
  Unrolled u;
  u.outputs = {w.squeeze(y, {1}, prefix + "y_steps")};
  u.state = w.squeeze(yh, {0}, prefix + "state");
  return u;
}

// One step: Gemm(x, W^T, b), Gemm(h, R^T, that), the activation (faster than
// an ONNX RNN of one step: docs/architecture.md, "Recurrent ops").
Status lower_rnn(LowerContext& ctx, const ir::Node& n) {
  Writer w(ctx, n);
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  TensorId in = w.op("Gemm", {n.inputs[kRnnInput], n.inputs[kRnnWeights], n.inputs[kRnnBias]},
                     "input", {{"transB", int64_t{1}}});
  TensorId pre = w.op("Gemm", {n.inputs[kRnnState], n.inputs[kRnnRecurrent], in}, "pre",
                      {{"transB", int64_t{1}}});
  TensorId h = w.activation(act, pre, "act");
  w.op_into(n.outputs[0], "Identity", {h}, "output");
  write_state(w, n, 0, h, "next_state");
  return ok_status();
}

Status lower_sequence_rnn(LowerContext& ctx, const ir::Node& n) {
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const bool tm = n.attrs.get_int("time_major") != 0;
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const ir::Tensor& x = g.tensor(n.inputs[kRnnInput]);
  const int64_t steps = tm ? x.shape[0] : x.shape[1];
  if (auto st = reserve_nodes(ctx, n, 3 * steps + 8); !st) return st;
  const int64_t batch = tm ? x.shape[1] : x.shape[0];
  const int64_t units = g.tensor(n.inputs[kRnnWeights]).shape[0];
  // ONNX RNN where it computes what TFLite's kernel does (measured faster:
  // docs/architecture.md, "Recurrent ops"), else the cell unrolled.
  if (const char* onnx_act = onnx_rnn_activation(act)) {
    TensorId xtm = tm ? n.inputs[kRnnInput]
                      : w.op("Transpose", {n.inputs[kRnnInput]}, "time_major",
                             {{"perm", std::vector<int64_t>{1, 0, 2}}});
    Unrolled u = onnx_rnn(w, xtm, n.inputs[kRnnWeights], n.inputs[kRnnRecurrent],
                          n.inputs[kRnnBias], n.inputs[kRnnState], units, onnx_act, false, "");
    if (tm)
      w.op_into(n.outputs[0], "Identity", {u.outputs[0]}, "output");
    else
      w.op_into(n.outputs[0], "Transpose", {u.outputs[0]}, "output",
                {{"perm", std::vector<int64_t>{1, 0, 2}}});
    write_state(w, n, 0, u.state, "next_state");
    return ok_status();
  }
  std::vector<int64_t> order;
  for (int64_t t = 0; t < steps; ++t) order.push_back(t);
  TensorId proj = input_projection(w, n.inputs[kRnnInput], n.inputs[kRnnWeights],
                                   n.inputs[kRnnBias], ir::kNoTensor, ir::kNoTensor, "");
  Unrolled u =
      unroll_rnn(w, proj, tm, order, n.inputs[kRnnRecurrent], n.inputs[kRnnState], act, "");
  stack_steps(w, u.outputs, tm, batch, units, n.outputs[0], "output");
  write_state(w, n, 0, u.state, "next_state");
  return ok_status();
}

// ---- BIDIRECTIONAL_SEQUENCE_RNN (bidirectional_sequence_rnn.cc) ----

constexpr size_t kBiInput = 0, kBiFwWeights = 1, kBiFwRecurrent = 2, kBiFwBias = 3, kBiFwState = 4,
                 kBiBwWeights = 5, kBiBwRecurrent = 6, kBiBwBias = 7, kBiBwState = 8, kBiAux = 9,
                 kBiFwAuxWeights = 10, kBiBwAuxWeights = 11;

Check check_bidi_rnn(const ir::Graph& g, const ir::Node& n) {
  const bool tm = n.attrs.get_int("time_major") != 0;
  RnnDims fw, bw;
  if (auto r = check_rnn_operands(g, n, kBiInput, kBiFwWeights, kBiFwRecurrent, kBiFwBias,
                                  kBiFwState, tm, true, fw)) {
    r->text = "forward: " + r->text;
    return r;
  }
  if (auto r = check_rnn_operands(g, n, kBiInput, kBiBwWeights, kBiBwRecurrent, kBiBwBias,
                                  kBiBwState, tm, true, bw)) {
    r->text = "backward: " + r->text;
    return r;
  }
  const bool merge = n.attrs.get_int("merge_outputs") != 0;
  if (n.inputs.size() != 12)
    return refuse(ReasonCode::kOperands,
                  "the kernel needs 12 inputs, the op has " + std::to_string(n.inputs.size()));
  if (own_outputs(n) != (merge ? 1u : 2u))
    return refuse(ReasonCode::kOperands,
                  "the kernel needs one output per direction, or one merged");
  const bool aux = has_input(g, n, kBiAux);
  const bool fw_aux = has_input(g, n, kBiFwAuxWeights), bw_aux = has_input(g, n, kBiBwAuxWeights);
  if (fw_aux != bw_aux)
    return refuse(ReasonCode::kOperands, "only one of the auxiliary weights is given");
  if (fw_aux && !aux)
    return refuse(ReasonCode::kOperands, "auxiliary weights without an auxiliary input");
  if (aux) {
    const ir::Tensor& a = g.tensor(n.inputs[kBiAux]);
    const ir::Tensor& xi = g.tensor(n.inputs[kBiInput]);
    if (!a.has_rank || a.rank() != 3 || a.shape[0] != xi.shape[0] || a.shape[1] != xi.shape[1])
      return refuse(ReasonCode::kOperands,
                    "auxiliary input '" + a.name + "' must match the input's time and batch");
    if (a.dtype != DataType::kFloat32 || a.quantized_type)
      return refuse(ReasonCode::kType, "auxiliary input is not float32");
    if (fw_aux) {
      if (tm && a.shape[2] != xi.shape[2])
        return refuse(ReasonCode::kOperands,
                      "time-major auxiliary input of another depth than the input: TFLite's kernel "
                      "steps through it by the input's depth");
      if (auto r = require_shape(g, n, kBiFwAuxWeights, {fw.units, a.shape[2]},
                                 "forward auxiliary weights"))
        return r;
      if (auto r = require_shape(g, n, kBiBwAuxWeights, {bw.units, a.shape[2]},
                                 "backward auxiliary weights"))
        return r;
    } else if (a.shape[2] != xi.shape[2]) {
      return refuse(ReasonCode::kOperands, "auxiliary input '" + a.name +
                                               "' (the backward cell's input) differs in depth");
    }
  }
  return check_recurrent_activation(n, true);
}

Status lower_bidi_rnn(LowerContext& ctx, const ir::Node& n) {
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const bool tm = n.attrs.get_int("time_major") != 0;
  const bool merge = n.attrs.get_int("merge_outputs") != 0;
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const ir::Tensor& x = g.tensor(n.inputs[kBiInput]);
  const int64_t steps = tm ? x.shape[0] : x.shape[1];
  const int64_t batch = tm ? x.shape[1] : x.shape[0];
  if (auto st = reserve_nodes(ctx, n, 7 * steps + 16); !st) return st;
  const int64_t fw_units = g.tensor(n.inputs[kBiFwWeights]).shape[0];
  const int64_t bw_units = g.tensor(n.inputs[kBiBwWeights]).shape[0];
  const bool has_aux = has_input(g, n, kBiAux);
  const bool aux_weights = has_input(g, n, kBiFwAuxWeights);
  // Without auxiliary weights an auxiliary input is the backward cell's input
  // ("non-stacking" mode), but TFLite's batch-major kernel reads the forward
  // input there all the same.
  const TensorId bw_input = has_aux && !aux_weights && tm ? n.inputs[kBiAux] : n.inputs[kBiInput];
  const TensorId aux = has_aux && aux_weights ? n.inputs[kBiAux] : ir::kNoTensor;
  std::vector<int64_t> forward, backward;
  for (int64_t t = 0; t < steps; ++t) forward.push_back(t);
  backward.assign(forward.rbegin(), forward.rend());
  TensorId fw_proj =
      input_projection(w, n.inputs[kBiInput], n.inputs[kBiFwWeights], n.inputs[kBiFwBias], aux,
                       aux == ir::kNoTensor ? ir::kNoTensor : n.inputs[kBiFwAuxWeights], "fw/");
  TensorId bw_proj =
      input_projection(w, bw_input, n.inputs[kBiBwWeights], n.inputs[kBiBwBias], aux,
                       aux == ir::kNoTensor ? ir::kNoTensor : n.inputs[kBiBwAuxWeights], "bw/");
  Unrolled fw = unroll_rnn(w, fw_proj, tm, forward, n.inputs[kBiFwRecurrent], n.inputs[kBiFwState],
                           act, "fw/");
  Unrolled bw = unroll_rnn(w, bw_proj, tm, backward, n.inputs[kBiBwRecurrent], n.inputs[kBiBwState],
                           act, "bw/");
  std::reverse(bw.outputs.begin(), bw.outputs.end());  // back in time order
  if (merge) {
    std::vector<TensorId> joined;
    for (int64_t t = 0; t < steps; ++t)
      joined.push_back(
          w.op("Concat", {fw.outputs[static_cast<size_t>(t)], bw.outputs[static_cast<size_t>(t)]},
               "t" + std::to_string(t) + "/merged", {{"axis", int64_t{1}}}));
    stack_steps(w, joined, tm, batch, fw_units + bw_units, n.outputs[0], "output");
  } else {
    stack_steps(w, fw.outputs, tm, batch, fw_units, n.outputs[0], "fw_output");
    stack_steps(w, bw.outputs, tm, batch, bw_units, n.outputs[1], "bw_output");
  }
  write_state(w, n, 0, fw.state, "fw/next_state");
  write_state(w, n, 1, bw.state, "bw/next_state");
  return ok_status();
}

// Output shapes (Prepare).
std::optional<std::vector<Shape>> infer_rnn(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!has_input(g, n, kRnnWeights) || !ir::static_shape(x) || x.rank() < 2) return std::nullopt;
  const ir::Tensor& wt = g.tensor(n.inputs[kRnnWeights]);
  if (wt.rank() != 2) return std::nullopt;
  Shape s = x.shape;
  s.back() = wt.shape[0];
  return std::vector<Shape>{s};
}

std::optional<std::vector<Shape>> infer_bidi_rnn(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!has_input(g, n, kBiFwWeights) || !has_input(g, n, kBiBwWeights) || !ir::static_shape(x) ||
      x.rank() != 3)
    return std::nullopt;
  const int64_t fw = g.tensor(n.inputs[kBiFwWeights]).shape.at(0);
  const int64_t bw = g.tensor(n.inputs[kBiBwWeights]).shape.at(0);
  Shape a = x.shape, b = x.shape;
  if (n.attrs.get_int("merge_outputs") != 0) {
    a.back() = fw + bw;
    return std::vector<Shape>{a};
  }
  a.back() = fw;
  b.back() = bw;
  return std::vector<Shape>{a, b};
}

// ---- SVDF (svdf.cc, reference/svdf.h) ----

constexpr size_t kSvdfInput = 0, kSvdfFeature = 1, kSvdfTime = 2, kSvdfBias = 3, kSvdfState = 4;

struct SvdfDims {
  int64_t batch = 0, input = 0, filters = 0, units = 0, memory = 0, rank = 1;
  bool integer = false;
};

double scale_of(const ir::Tensor& t) {
  return t.quant && t.quant->scale.size() == 1 ? t.quant->scale[0] : 0.0;
}

// The small constant's real values: float as it is, integers times `scale`.
std::optional<std::vector<float>> scaled_values(const ir::Tensor& t, double scale) {
  if (!t.is_const()) return std::nullopt;
  const auto count = static_cast<size_t>(ir::element_count(t.shape).value_or(0));
  const ir::ConstData& d = *t.data;
  if (d.bytes.size() < count * ir::element_size(d.stored_type)) return std::nullopt;
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (d.stored_type == DataType::kFloat32) {
      std::memcpy(&out[i], d.bytes.data() + i * 4, 4);
    } else if (d.stored_type == DataType::kInt32) {
      int32_t v;
      std::memcpy(&v, d.bytes.data() + i * 4, 4);
      out[i] = static_cast<float>(v * scale);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

Check read_svdf(const ir::Graph& g, const ir::Node& n, SvdfDims& d) {
  if (n.inputs.size() != 5) return refuse(ReasonCode::kOperands, "the kernel needs 5 inputs");
  if (own_outputs(n) != 1) return refuse(ReasonCode::kOperands, "the kernel has one output");
  const ir::Tensor& x = g.tensor(n.inputs[kSvdfInput]);
  if (!x.has_rank || x.rank() != 2 || input_batch(x, 0, g.tensor(n.inputs[kSvdfState])) < 1)
    return refuse(ReasonCode::kShape,
                  "input must be [batch, depth] (a dynamic batch fixed by the state)");
  const ir::Tensor& wf = g.tensor(n.inputs[kSvdfFeature]);
  const ir::Tensor& wt = g.tensor(n.inputs[kSvdfTime]);
  if (!wf.has_rank || wf.rank() != 2 || !wt.has_rank || wt.rank() != 2)
    return refuse(ReasonCode::kShape, "feature and time weights must have rank 2");
  d.batch = input_batch(x, 0, g.tensor(n.inputs[kSvdfState]));
  d.input = x.shape[1];
  d.filters = wf.shape[0];
  d.memory = wt.shape[1];
  d.rank = n.attrs.get_int("rank");
  if (d.rank < 1 || d.filters < 1 || d.filters % d.rank != 0)
    return refuse(ReasonCode::kOperands, "rank " + std::to_string(d.rank) + " must divide the " +
                                             std::to_string(d.filters) + " filters");
  d.units = d.filters / d.rank;
  if (d.memory < 1) return refuse(ReasonCode::kShape, "time weights have no memory");
  if (wf.shape[1] != d.input)
    return refuse(ReasonCode::kOperands, "feature weights do not fit the input depth");
  if (wt.shape[0] != d.filters)
    return refuse(ReasonCode::kShape, "time weights must be [filters, memory]");
  if (has_input(g, n, kSvdfBias))
    if (auto r = require_shape(g, n, kSvdfBias, {d.units}, "bias")) return r;
  if (auto r = require_shape(g, n, kSvdfState, {d.batch, d.memory * d.filters}, "state")) return r;
  if (!wf.is_const() || !wt.is_const() ||
      (has_input(g, n, kSvdfBias) && !g.tensor(n.inputs[kSvdfBias]).is_const()))
    return refuse(ReasonCode::kRuntimeValue, "weights and bias must be constants");
  d.integer = x.quantized_type == DataType::kInt8;
  const ir::Tensor& st = g.tensor(n.inputs[kSvdfState]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  if (d.integer) {
    // EvalIntegerSVDF: int8 input and feature weights, int16 time weights and
    // state, int32 bias, int8 output; the kernel requires RELU and applies
    // nothing but the output's range.
    if (wf.quantized_type != DataType::kInt8 || wt.quantized_type != DataType::kInt16 ||
        st.quantized_type != DataType::kInt16 || y.quantized_type != DataType::kInt8)
      return refuse(
          ReasonCode::kQuantization,
          "integer kernel: int8 input, feature weights and output, int16 time weights and "
          "state expected");
    for (const ir::Tensor* t : {&x, &wf, &wt, &st, &y})
      if (!(scale_of(*t) > 0))
        return refuse(ReasonCode::kQuantization, "'" + t->name + "' needs a per-tensor scale");
    if (act != "RELU")
      return refuse(ReasonCode::kOption, "the integer kernel requires activation RELU");
    if (has_input(g, n, kSvdfBias) &&
        !scaled_values(g.tensor(n.inputs[kSvdfBias]), scale_of(st) * scale_of(wt)))
      return refuse(ReasonCode::kType, "bias must be int32");
    return {};
  }
  if (x.quantized_type || x.dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "input must be float32 or int8");
  if (st.quantized_type || y.quantized_type)
    return refuse(ReasonCode::kQuantization, "quantized state or output with float input");
  for (const ir::Tensor* t : {&wf, &wt})
    if (t->dtype != DataType::kFloat32)
      return refuse(
          ReasonCode::kQuantization,
          "'" + t->name + "' has type " + ir::to_string(t->dtype) + " without quantization");
  if (has_input(g, n, kSvdfBias) && !scaled_values(g.tensor(n.inputs[kSvdfBias]), 0))
    return refuse(ReasonCode::kType, "bias must be float32");
  return check_recurrent_activation(n, true);
}

Check check_svdf(const ir::Graph& g, const ir::Node& n) {
  SvdfDims d;
  return read_svdf(g, n, d);
}

Status lower_svdf(LowerContext& ctx, const ir::Node& n) {
  SvdfDims d;
  if (auto r = read_svdf(ctx.graph(), n, d)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& st = g.tensor(n.inputs[kSvdfState]);
  const double state_scale = scale_of(st);
  // The feature activation of this step, [B, F] (integer: on the state's grid).
  TensorId a = w.matmul_t(n.inputs[kSvdfInput], n.inputs[kSvdfFeature], "feature");
  if (d.integer)
    a = w.from_steps(w.to_steps(a, state_scale, -32768, 32767, "feature_steps"), state_scale,
                     "feature_real");
  // The state [B, F*M] holds each filter's last M activations, oldest first:
  // drop the oldest, append the new one.
  TensorId s3 = w.op("Reshape", {n.inputs[kSvdfState], w.ints({d.batch, d.filters, d.memory})},
                     "state_filters");
  TensorId kept =
      d.memory > 1 ? w.op("Slice", {s3, w.ints({1}), w.ints({d.memory}), w.ints({2})}, "state_kept")
                   : ir::kNoTensor;
  TensorId newest = w.unsqueeze(a, {2}, "newest");
  TensorId shifted = kept == ir::kNoTensor
                         ? newest
                         : w.op("Concat", {kept, newest}, "state_shifted", {{"axis", int64_t{2}}});
  TensorId next = w.op("Reshape", {shifted, w.ints({d.batch, d.filters * d.memory})}, "state_next");
  if (TensorId out = state_output(n, 0); out != ir::kNoTensor)
    w.op_into(out, "Identity", {next}, "next_state");
  // Each filter's memory against its time weights, then the rank's filters of
  // each unit summed.
  TensorId per_filter =
      w.op("ReduceSum", {w.mul(shifted, n.inputs[kSvdfTime], "time"), w.ints({2})}, "per_filter",
           {{"keepdims", int64_t{0}}});
  TensorId y = per_filter;
  if (d.rank > 1)
    y = w.op("ReduceSum",
             {w.op("Reshape", {per_filter, w.ints({d.batch, d.units, d.rank})}, "per_rank"),
              w.ints({2})},
             "per_unit", {{"keepdims", int64_t{0}}});
  if (has_input(g, n, kSvdfBias)) {
    const double bias_scale = d.integer ? state_scale * scale_of(g.tensor(n.inputs[kSvdfTime])) : 0;
    auto b = scaled_values(g.tensor(n.inputs[kSvdfBias]), bias_scale);
    y = w.add(y, w.constant(std::move(*b), {d.units}, "bias"), "biased");
  }
  if (d.integer) {
    // Requantized to the output's grid, clamped to int8: the kernel applies
    // no activation beyond that range.
    const ir::Tensor& out = g.tensor(n.outputs[0]);
    const double s = scale_of(out);
    const auto zp =
        static_cast<double>(out.quant->zero_point.empty() ? 0 : out.quant->zero_point[0]);
    w.op_into(
        n.outputs[0], "Mul",
        {w.to_steps(y, s, -128 - zp, 127 - zp, "output_steps"), w.scalar(static_cast<float>(s))},
        "output");
    return ok_status();
  }
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  w.op_into(n.outputs[0], "Identity", {w.activation(act, y, "activation")}, "output");
  return ok_status();
}

template <class Options>
void read_rnn_options(const Options* o, ir::Attributes& a) {
  store_activation(o, a);
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
}

void read_svdf_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SVDFOptions();
  store_activation(o, a);
  a.set("rank", int64_t{o ? o->rank() : 0});
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
}

std::optional<std::vector<Shape>> infer_svdf(const ir::Graph& g, const ir::Node& n) {
  SvdfDims d;
  if (read_svdf(g, n, d)) return std::nullopt;
  return std::vector<Shape>{{d.batch, d.units}};
}

void read_one_step_rnn_options(const tflite::Operator& op, ir::Attributes& a) {
  read_rnn_options(op.builtin_options_as_RNNOptions(), a);
}

void read_sequence_rnn_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SequenceRNNOptions();
  read_rnn_options(o, a);
  a.set("time_major", int64_t{o && o->time_major() ? 1 : 0});
}

void read_bidi_rnn_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_BidirectionalSequenceRNNOptions();
  read_rnn_options(o, a);
  a.set("time_major", int64_t{o && o->time_major() ? 1 : 0});
  a.set("merge_outputs", int64_t{o && o->merge_outputs() ? 1 : 0});
}

}  // namespace

OpEntry svdf() {
  return {.read = {.min_inputs = 3, .options = read_svdf_options},
          .infer_shapes = infer_svdf,
          .check = check_svdf,
          .lower = lower_svdf,
          .state = {.inputs = {static_cast<int>(kSvdfState)}},
          .doc = {.onnx = "MatMul, Slice, Concat, Mul, ReduceSum, Reshape, activation",
                  .dtypes = "float32, int8 weights, int8 (int16 state)",
                  .notes = "rank >= 1; the state (the last memory_size activations of each "
                           "filter) is model state; float, hybrid (int8 weights, computed in "
                           "float) and integer (int8 with int16 state, computed in float on the "
                           "kernel's grids)"}};
}

OpEntry rnn() {
  return {.read = {.min_inputs = 5, .options = read_one_step_rnn_options},
          .infer_shapes = infer_rnn,
          .check = check_rnn,
          .lower = lower_rnn,
          .state = {.inputs = {static_cast<int>(kRnnState)}},
          .doc = {.onnx = "Gemm (input), Gemm (recurrent), the activation",
                  .dtypes = "float32, int8 weights",
                  .notes = "one step; hidden state is model state; hybrid (int8 weights) "
                           "computes in float"}};
}

OpEntry unidirectional_sequence_rnn() {
  return {.read = {.min_inputs = 5, .options = read_sequence_rnn_options},
          .infer_shapes = infer_rnn,
          .check = check_sequence_rnn,
          .lower = lower_sequence_rnn,
          .state = {.inputs = {static_cast<int>(kRnnState)}},
          .doc = {.onnx = "RNN for TANH and RELU (Transposes around it when batch-major); "
                          "otherwise MatMul, then Gather, Gemm and the activation per step "
                          "(unrolled), Concat, Reshape",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major both ways; hidden state is model state; hybrid computes "
                           "in float"}};
}

OpEntry bidirectional_sequence_rnn() {
  return {.read = {.min_inputs = 9, .options = read_bidi_rnn_options},
          .infer_shapes = infer_bidi_rnn,
          .check = check_bidi_rnn,
          .lower = lower_bidi_rnn,
          .state = {.inputs = {static_cast<int>(kBiFwState), static_cast<int>(kBiBwState)}},
          .doc = {.onnx = "MatMul, Gemm and the activation per step and direction (unrolled), "
                          "Concat, Reshape",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major, merge_outputs, auxiliary input (stacking and not); both "
                           "hidden states are model state"}};
}

}  // namespace lite2onnx::ops::recurrent
