// RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN as TFLite's
// kernels compute them (basic_rnn.cc, unidirectional_sequence_rnn.cc,
// bidirectional_sequence_rnn.cc): ONNX RNN where it is exact, else the cell
// unrolled (docs/architecture.md, "Recurrent ops"). Hybrid cells (int8
// weights, float activations) as TFLite's builtin hybrid kernel computes
// them (kernel_utils::RnnBatchStep) in the default and exact modes; in float
// from the dequantized weights with --quantization dequantize.
#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/recurrent.h"

namespace lite2onnx::ops::recurrent {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

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
    // The hybrid kernel multiplies by the tensor's one scale (params.scale),
    // which TFLite leaves 0 for per-axis scales (measured in tfjs-tflite: the
    // same output at every step and batch, the weights read as 0).
    if (t.quant && t.quant->scale.size() > 1)
      return refuse(ReasonCode::kQuantization,
                    "'" + t.name + "' has " + std::to_string(t.quant->scale.size()) +
                        " per-axis scales: TFLite's hybrid kernel reads one scale");
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

// The explicit cell: h = act(in_proj_t + h R^T), unrolled; `proj` holds
// every step's projection along `time_axis` (-1: one step, `proj` itself).
Unrolled unroll_rnn(Writer& w, const HybridProduct& product, TensorId proj, int64_t time_axis,
                    const std::vector<int64_t>& order, TensorId recurrent, TensorId h,
                    const std::string& act, const std::string& prefix) {
  Unrolled u;
  TensorId rt = product.on() ? ir::kNoTensor : w.transposed(recurrent, prefix + "recurrent_t");
  for (int64_t t : order) {
    const std::string s = prefix + "t" + std::to_string(t) + "/";
    TensorId p = time_axis < 0 ? proj : w.gather(proj, t, time_axis, s + "input");
    // Float: Gemm, h R^T + p in one node. Hybrid: the kernel adds the
    // recurrent product to the step's input projection (bias first).
    TensorId pre = product.on() ? w.add(p, product(h, {recurrent}, s + "recurrent"), s + "pre")
                                : w.op("Gemm", {h, rt, p}, s + "pre");
    h = w.activation(act, pre, s + "act");
    u.outputs.push_back(h);
  }
  u.state = h;
  return u;
}

// x [..., I] @ W^T + b (+ aux @ Waux^T): the input projection of every step.
// The hybrid kernel sums in its own order: ((b + x W^T) + aux Waux^T).
TensorId input_projection(Writer& w, const HybridProduct& product, TensorId x, TensorId weights,
                          TensorId bias, TensorId aux, TensorId aux_weights,
                          const std::string& prefix) {
  if (product.on()) {
    TensorId p = w.add(bias, product(x, {weights}, prefix + "input"), prefix + "with_input");
    if (aux != ir::kNoTensor)
      p = w.add(p, product(aux, {aux_weights}, prefix + "aux"), prefix + "with_aux");
    return p;
  }
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
    ir::Shape shape = c.shape;
    shape.insert(shape.begin(), 1);
    // A leading 1 on a constant in its own order (else an Unsqueeze): a
    // per-axis quantization moves one axis on.
    const bool view = c.is_const() && ir::is_identity(c.layout);
    if (std::optional<ir::Tensor> alias = view ? ir::constant_view(c, shape) : std::nullopt) {
      alias->emit_shape = alias->shape;
      return ctx.graph().add_tensor(std::move(*alias));
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
Status lower_rnn(LowerContext& ctx, const ir::Node& n, const HybridProduct& product) {
  Writer w(ctx, n);
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  if (product.on()) {
    const TensorId proj = input_projection(w, product, n.inputs[kRnnInput], n.inputs[kRnnWeights],
                                           n.inputs[kRnnBias], ir::kNoTensor, ir::kNoTensor, "");
    Unrolled u = unroll_rnn(w, product, proj, -1, {0}, n.inputs[kRnnRecurrent], n.inputs[kRnnState],
                            act, "");
    w.op_into(n.outputs[0], "Identity", {u.state}, "output");
    write_state(w, n, 0, u.state, "next_state");
    return ok_status();
  }
  TensorId in = w.op("Gemm", {n.inputs[kRnnInput], n.inputs[kRnnWeights], n.inputs[kRnnBias]},
                     "input", {{"transB", int64_t{1}}});
  TensorId pre = w.op("Gemm", {n.inputs[kRnnState], n.inputs[kRnnRecurrent], in}, "pre",
                      {{"transB", int64_t{1}}});
  TensorId h = w.activation(act, pre, "act");
  w.op_into(n.outputs[0], "Identity", {h}, "output");
  write_state(w, n, 0, h, "next_state");
  return ok_status();
}

Status lower_sequence_rnn(LowerContext& ctx, const ir::Node& n, const HybridProduct& product) {
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const bool tm = n.attrs.get_int("time_major") != 0;
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const ir::Tensor& x = g.tensor(n.inputs[kRnnInput]);
  const int64_t steps = tm ? x.shape[0] : x.shape[1];
  if (auto st = reserve_nodes(ctx, n, (product.on() ? 20 : 3) * steps + 30); !st) return st;
  const int64_t batch = tm ? x.shape[1] : x.shape[0];
  const int64_t units = g.tensor(n.inputs[kRnnWeights]).shape[0];
  // ONNX RNN where it computes what TFLite's kernel does (measured faster:
  // docs/architecture.md, "Recurrent ops"), else the cell unrolled.
  const char* onnx_act = product.on() ? nullptr : onnx_rnn_activation(act);
  if (onnx_act) {
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
  TensorId proj = input_projection(w, product, n.inputs[kRnnInput], n.inputs[kRnnWeights],
                                   n.inputs[kRnnBias], ir::kNoTensor, ir::kNoTensor, "");
  Unrolled u = unroll_rnn(w, product, proj, tm ? 0 : 1, order, n.inputs[kRnnRecurrent],
                          n.inputs[kRnnState], act, "");
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

Status lower_bidi_rnn(LowerContext& ctx, const ir::Node& n, const HybridProduct& product) {
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const bool tm = n.attrs.get_int("time_major") != 0;
  const bool merge = n.attrs.get_int("merge_outputs") != 0;
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const ir::Tensor& x = g.tensor(n.inputs[kBiInput]);
  const int64_t steps = tm ? x.shape[0] : x.shape[1];
  const int64_t batch = tm ? x.shape[1] : x.shape[0];
  // TFLite's hybrid kernel, time-major, runs the whole sequence max_time
  // times over, each pass carrying the states on (EvalHybrid's outer loop):
  // the outputs are the last pass's.
  const int64_t passes = product.on() && tm ? steps : 1;
  if (auto st = reserve_nodes(ctx, n, (product.on() ? 40 : 7) * steps * passes + 60); !st)
    return st;
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
  TensorId fw_proj = input_projection(
      w, product, n.inputs[kBiInput], n.inputs[kBiFwWeights], n.inputs[kBiFwBias], aux,
      aux == ir::kNoTensor ? ir::kNoTensor : n.inputs[kBiFwAuxWeights], "fw/");
  TensorId bw_proj =
      input_projection(w, product, bw_input, n.inputs[kBiBwWeights], n.inputs[kBiBwBias], aux,
                       aux == ir::kNoTensor ? ir::kNoTensor : n.inputs[kBiBwAuxWeights], "bw/");
  const int64_t time_axis = tm ? 0 : 1;
  Unrolled fw{{}, n.inputs[kBiFwState]}, bw{{}, n.inputs[kBiBwState]};
  for (int64_t pass = 0; pass < passes; ++pass) {
    const std::string at = pass + 1 < passes ? "pass" + std::to_string(pass) + "/" : "";
    fw = unroll_rnn(w, product, fw_proj, time_axis, forward, n.inputs[kBiFwRecurrent], fw.state,
                    act, "fw/" + at);
    bw = unroll_rnn(w, product, bw_proj, time_axis, backward, n.inputs[kBiBwRecurrent], bw.state,
                    act, "bw/" + at);
  }
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

// ---- hybrid cells: TFLite's builtin hybrid kernel (the exact form) ----

// The slots of the weights the hybrid kernel reads as integers.
std::vector<size_t> hybrid_weight_slots(const ir::Graph& g, const ir::Node& n) {
  if (n.builtin != ir::builtin::kBidirectionalSequenceRnn) return {kRnnWeights, kRnnRecurrent};
  std::vector<size_t> slots = {kBiFwWeights, kBiFwRecurrent, kBiBwWeights, kBiBwRecurrent};
  if (has_input(g, n, kBiFwAuxWeights))
    slots.insert(slots.end(), {kBiFwAuxWeights, kBiBwAuxWeights});
  return slots;
}

Check check_rnn_family(const ir::Graph& g, const ir::Node& n) {
  if (n.builtin == ir::builtin::kBidirectionalSequenceRnn) return check_bidi_rnn(g, n);
  return n.builtin == ir::builtin::kRnn ? check_rnn(g, n) : check_sequence_rnn(g, n);
}

// The hybrid cells the exact form covers: every weight the kernel reads as
// integers a constant int8 matrix of one scale (the kernel takes the input
// weights' type for all of them), the biases float32.
Check check_rnn_exact(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_rnn_family(g, n)) return r;
  for (size_t slot : hybrid_weight_slots(g, n))
    if (auto r = exact::check_builtin_hybrid_weight(g.tensor(n.inputs[slot]))) return r;
  if (n.builtin == ir::builtin::kBidirectionalSequenceRnn) {
    // Two ways TFLite's hybrid kernel (EvalHybrid) differs from its float one.
    const ir::Tensor& x = g.tensor(n.inputs[kBiInput]);
    const bool tm = n.attrs.get_int("time_major") != 0;
    const int64_t steps = tm ? x.shape[0] : x.shape[1];
    if (tm && steps * steps > kMaxSteps)
      return refuse(ReasonCode::kLimit,
                    "time-major hybrid cell of " + std::to_string(steps) +
                        " steps: TFLite's hybrid kernel runs the sequence that many times over "
                        "(steps^2 above " +
                        std::to_string(kMaxSteps) + " are not unrolled)");
    if (!tm && has_input(g, n, kBiFwAuxWeights) &&
        g.tensor(n.inputs[kBiAux]).shape[2] != x.shape[2])
      return refuse(ReasonCode::kNotImplemented,
                    "batch-major hybrid cell with an auxiliary input of another depth than the "
                    "input: TFLite's hybrid kernel steps through it by the input's depth");
  }
  for (size_t slot : n.builtin == ir::builtin::kBidirectionalSequenceRnn
                         ? std::vector<size_t>{kBiFwBias, kBiBwBias}
                         : std::vector<size_t>{kRnnBias})
    if (g.tensor(n.inputs[slot]).quantized_type)
      return refuse(ReasonCode::kNotImplemented, "a quantized bias of a hybrid cell");
  return std::nullopt;
}

Status lower_rnn_with(LowerContext& ctx, const ir::Node& n, const HybridProduct& product) {
  if (n.builtin == ir::builtin::kRnn) return lower_rnn(ctx, n, product);
  if (n.builtin == ir::builtin::kUnidirectionalSequenceRnn)
    return lower_sequence_rnn(ctx, n, product);
  return lower_bidi_rnn(ctx, n, product);
}

Status lower_rnn_exact(LowerContext& ctx, const ir::Node& n) {
  if (auto r = check_rnn_exact(ctx.graph(), n)) return ctx.error(n, r->text);
  return lower_with_hybrid_product(
      ctx, n, [&](const HybridProduct& hybrid) { return lower_rnn_with(ctx, n, hybrid); });
}

Status lower_rnn_float(LowerContext& ctx, const ir::Node& n) { return lower_rnn_with(ctx, n, {}); }

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

// ---- options ----

template <class Options>
void read_rnn_options(const Options* o, ir::Attributes& a) {
  store_activation(o, a);
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
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

OpEntry rnn() {
  return {.read = {.min_inputs = 5, .options = read_one_step_rnn_options},
          .infer_shapes = infer_rnn,
          .check = check_rnn,
          .lower = lower_rnn_float,
          .quantization = {.exact = {lower_rnn_exact, check_rnn_exact, InQdqGraphs::kHybrid}},
          .state = {.inputs = {static_cast<int>(kRnnState)}},
          .doc = {.onnx = "Gemm (input), Gemm (recurrent), the activation",
                  .dtypes = "float32, int8 weights",
                  .notes = "one step; hidden state is model state; hybrid (int8 weights) "
                           "as TFLite's hybrid kernel (each row quantized at run time)"}};
}

OpEntry unidirectional_sequence_rnn() {
  return {.read = {.min_inputs = 5, .options = read_sequence_rnn_options},
          .infer_shapes = infer_rnn,
          .check = check_sequence_rnn,
          .lower = lower_rnn_float,
          .quantization = {.exact = {lower_rnn_exact, check_rnn_exact, InQdqGraphs::kHybrid}},
          .state = {.inputs = {static_cast<int>(kRnnState)}},
          .doc = {.onnx = "RNN for TANH and RELU (Transposes around it when batch-major); "
                          "otherwise MatMul, then Gather, Gemm and the activation per step "
                          "(unrolled), Concat, Reshape",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major both ways; hidden state is model state; hybrid (int8 "
                           "weights) as TFLite's hybrid kernel, unrolled"}};
}

OpEntry bidirectional_sequence_rnn() {
  return {.read = {.min_inputs = 9, .options = read_bidi_rnn_options},
          .infer_shapes = infer_bidi_rnn,
          .check = check_bidi_rnn,
          .lower = lower_rnn_float,
          .quantization = {.exact = {lower_rnn_exact, check_rnn_exact, InQdqGraphs::kHybrid}},
          .state = {.inputs = {static_cast<int>(kBiFwState), static_cast<int>(kBiBwState)}},
          .doc = {.onnx = "MatMul, Gemm and the activation per step and direction (unrolled), "
                          "Concat, Reshape",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major, merge_outputs, auxiliary input (stacking and not); both "
                           "hidden states are model state; hybrid (int8 weights) as TFLite's "
                           "hybrid kernel"}};
}

}  // namespace lite2onnx::ops::recurrent
