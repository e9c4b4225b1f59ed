// The LSTM family: UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM
// and LSTM (full and basic kernels), as TFLite's kernels compute them
// (kernels/lstm_eval.cc, lstm.cc, unidirectional_sequence_lstm.cc,
// bidirectional_sequence_lstm.cc; input slots as in lstm_shared.h).
//
// Float and hybrid (int8 weights, float activations) cells are one form:
// the cell computes in float. A hybrid cell's products are the hybrid
// kernel's (each row of the input, the output state and the projection's
// input quantized at run time: exact::builtin_hybrid_rows), except with
// --quantization dequantize, which folds its weights to float. The full-integer kernel (int8
// activations, int16 cell state, fixed-point gates: lstm_eval's 8x8_16) takes its integer form
// (exact_lstm.cc) in the default and exact modes; with --quantization qdq or
// dequantize it is computed here in float on the grids the integer kernel
// rounds to (gate pre-activations in 16-bit steps, gates in Q0.15, the cell
// state on its power-of-two scale, the hidden value in 8-bit steps).
//
// The ONNX form: ONNX LSTM where it computes exactly what TFLite's kernel
// does (float, no CIFG, layer norm, projection or cell clipping, an
// activation ONNX has), else the cell unrolled over the sequence (the input
// projection of every step in one MatMul first). Which of the two, and why
// not an ONNX Loop: docs/architecture.md, "Recurrent ops" (measured).
//
// This file: the ONNX forms and the entries; lstm_read.cc reads and checks the
// op, lstm_integer.cc holds the integer kernel's arithmetic (lstm.h).
#include <array>

#include "core/ir/shape.h"
#include "core/ops/families.h"
#include "core/ops/lstm.h"

namespace lite2onnx::ops::recurrent {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

TensorId float_vector(Writer& w, const std::vector<float>& v, const std::string& suffix) {
  return w.constant(v, {static_cast<int64_t>(v.size())}, suffix);
}

std::vector<int> gates(const Cell& c) {
  if (c.cifg) return {1, 2, 3};
  return {0, 1, 2, 3};
}

TensorId layer_norm(Writer& w, TensorId x, TensorId coef, TensorId bias, float epsilon,
                    const std::string& s) {
  TensorId mean = w.op("ReduceMean", {x}, s + "mean", {{"axes", std::vector<int64_t>{1}}});
  TensorId d = w.op("Sub", {x, mean}, s + "centered");
  TensorId var = w.op("ReduceMean", {w.mul(d, d, s + "squares")}, s + "variance",
                      {{"axes", std::vector<int64_t>{1}}});
  TensorId inv = w.op("Reciprocal",
                      {w.op("Sqrt", {w.add(var, w.scalar(epsilon), s + "guarded")}, s + "stddev")},
                      s + "inverse");
  TensorId n = w.mul(d, inv, s + "normalized");
  return w.add(w.mul(n, coef, s + "scaled"), bias, s + "normalized_biased");
}

namespace {

// The gate biases' real values as the kernel reads them, concatenated in
// gate order (all zero with layer norm: added after the normalization).
std::vector<float> input_bias(const ir::Graph& g, const Cell& c, double input_scale) {
  std::vector<float> out;
  for (int k : gates(c)) {
    std::vector<float> v(static_cast<size_t>(c.n_cell), 0.f);
    if (!c.layer_norm) {
      const ir::Tensor& b = g.tensor(c.b[static_cast<size_t>(k)]);
      const double s =
          c.integer ? input_scale * scale_of(g.tensor(c.w[static_cast<size_t>(k)])) : 0;
      if (auto r = real_values(b, s)) v = *r;
    }
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Per step: the outputs (real values) and, at the end, the states.
struct Result {
  std::vector<TensorId> outputs;
  TensorId h = ir::kNoTensor, c = ir::kNoTensor;
};

// The unrolled cell over `order` (the steps, in the order the cell runs):
// `proj` holds every step's input projection (bias included unless layer
// norm), `x_axis` its time axis.
Result unroll(Writer& w, const Cell& c, const HybridProduct& hybrid, TensorId proj, int64_t batch,
              int64_t time_axis, const std::vector<int64_t>& order, const std::string& act,
              float cell_clip, float proj_clip, const std::string& prefix) {
  const ir::Graph& g = w.graph();
  const std::vector<int> gs = gates(c);
  const auto ng = static_cast<int64_t>(gs.size());
  const IntegerLstm* q = c.integer ? &*c.integer : nullptr;
  // Recurrent weights of every gate, R^T [n_output, G*U]; or the diagonal ones.
  std::vector<TensorId> rs;
  for (int k : gs) rs.push_back(c.r[static_cast<size_t>(k)]);
  TensorId r_t = hybrid.on() ? ir::kNoTensor
                 : c.diag    ? w.stack_rows(rs, prefix + "recurrent")
                             : w.stack_transposed(rs, prefix + "recurrent_t");
  // Per-gate constants.
  auto vec = [&](TensorId t, double scale, const std::string& s) {
    auto v = real_values(g.tensor(t), scale);
    return float_vector(w, *v, prefix + s);
  };
  std::array<TensorId, 3> peep;
  std::array<TensorId, 4> ln_coef, ln_bias;
  peep.fill(ir::kNoTensor);
  ln_coef.fill(ir::kNoTensor);
  ln_bias.fill(ir::kNoTensor);
  for (int k = 0; k < 3; ++k)
    if (c.p[static_cast<size_t>(k)] != ir::kNoTensor)
      peep[static_cast<size_t>(k)] = vec(c.p[static_cast<size_t>(k)], 0, "peephole");
  if (c.layer_norm)
    for (int k : gs) {
      const auto kk = static_cast<size_t>(k);
      ln_coef[kk] = vec(c.ln[kk], 0, "ln_coefficients");
      // The integer kernel reads the bias at the coefficients' scale / 1024.
      ln_bias[kk] = vec(c.b[kk], q ? scale_of(g.tensor(c.ln[kk])) / 1024.0 : 0, "ln_bias");
    }
  // Integer kernel: one over each gate's step, per column of the stacked gates.
  TensorId inv_gate =
      q ? float_vector(w, inverse_gate_steps(c), "inverse_gate_steps") : ir::kNoTensor;
  TensorId proj_w_t = c.projection && !hybrid.on() ? w.transposed(c.proj_w, prefix + "projection_t")
                                                   : ir::kNoTensor;
  TensorId proj_b = ir::kNoTensor;
  if (c.projection && c.proj_b != ir::kNoTensor)
    proj_b =
        vec(c.proj_b, q ? scale_of(g.tensor(c.proj_w)) * q->hidden_scale : 0, "projection_bias");

  Result res;
  TensorId h = c.h, cs = c.c;
  for (int64_t t : order) {
    const std::string s = prefix + "t" + std::to_string(t) + "/";
    TensorId in = w.gather(proj, t, time_axis, s + "input");
    TensorId pre;
    if (q) {
      pre = integer_pre_activation(w, in, h, r_t, inv_gate, s);
    } else if (hybrid.on()) {
      pre = w.add(in, hybrid(h, rs, s + "recurrent"), s + "pre");
    } else if (c.diag) {
      std::vector<TensorId> copies(static_cast<size_t>(ng), h);
      TensorId hh = ng == 1 ? h : w.op("Concat", copies, s + "h_per_gate", {{"axis", int64_t{1}}});
      pre = w.add(in, w.mul(hh, r_t, s + "recurrent"), s + "pre");
    } else {
      pre = w.op("Gemm", {h, r_t, in}, s + "pre");
    }
    std::vector<TensorId> parts = ng == 1 ? std::vector<TensorId>{pre}
                                          : w.ops("Split", {pre}, static_cast<size_t>(ng),
                                                  s + "gates", {{"axis", int64_t{1}}});
    std::array<TensorId, 4> gate;
    gate.fill(ir::kNoTensor);
    for (size_t i = 0; i < gs.size(); ++i) gate[static_cast<size_t>(gs[i])] = parts[i];
    // Peephole: i and f see the old cell state, o the new one.
    auto peephole = [&](int k, TensorId cell, const std::string& name) {
      const int pk = k == 3 ? 2 : k;  // peephole slots i, f, o
      TensorId& x = gate[static_cast<size_t>(k)];
      if (peep[static_cast<size_t>(pk)] == ir::kNoTensor) return;
      // The integer kernel steps a batch-major sequence one batch at a time.
      TensorId v = q ? integer_peephole_product(
                           w, cell, *real_values(g.tensor(c.p[static_cast<size_t>(pk)])), batch,
                           time_axis == 0 ? batch : 1, c.n_cell, c.n_output, s + name + "_peephole")
                     : w.mul(cell, peep[static_cast<size_t>(pk)], s + name + "_peephole");
      x = q ? integer_with_peephole(w, *q, k, x, v, s + name)
            : w.add(x, v, s + name + "_with_peephole");
    };
    // Layer norm and activation of one gate; integer: the result in Q0.15.
    auto activate = [&](int k, const std::string& name, bool sigmoid) {
      const auto kk = static_cast<size_t>(k);
      TensorId x = gate[kk];
      if (q)
        return integer_gate(w, *q, k, x, c.layer_norm, ln_coef[kk], ln_bias[kk], sigmoid, s + name);
      if (c.layer_norm) x = layer_norm(w, x, ln_coef[kk], ln_bias[kk], 1e-8f, s + name + "_ln/");
      return sigmoid ? w.op("Sigmoid", {x}, s + name) : w.activation(act, x, s + name);
    };
    if (!c.cifg) peephole(0, cs, "i");
    peephole(1, cs, "f");
    TensorId f = activate(1, "f", true);
    TensorId g_c = activate(2, "g", false);
    TensorId i = c.cifg
                     ? w.op("Sub", {w.scalar(q ? static_cast<float>(32767.0 / 32768.0) : 1.f), f},
                            s + "i_coupled")
                     : activate(0, "i", true);
    TensorId new_c;
    if (q) {
      new_c = integer_cell(w, *q, f, cs, i, g_c, s);
    } else {
      new_c = w.add(w.mul(f, cs, s + "forget"), w.mul(i, g_c, s + "input_times_cell"), s + "cell");
      if (cell_clip > 0) new_c = w.clip(new_c, -cell_clip, cell_clip, s + "cell_clipped");
    }
    peephole(3, new_c, "o");
    TensorId o = activate(3, "o", true);
    TensorId out;
    if (q) {
      const IntegerHidden hid = integer_hidden(w, *q, o, new_c, proj_w_t, proj_b, s);
      h = hid.state;
      out = hid.output;
    } else {
      out = w.mul(o, w.activation(act, new_c, s + "cell_act"), s + "hidden");
      if (c.projection && hybrid.on()) {
        // The kernel starts the output state at the bias and adds the product.
        out = hybrid(out, {c.proj_w}, s + "projection");
        if (proj_b != ir::kNoTensor) out = w.add(proj_b, out, s + "projection_biased");
        if (proj_clip > 0) out = w.clip(out, -proj_clip, proj_clip, s + "projection_clipped");
      } else if (c.projection) {
        out = w.op("MatMul", {out, proj_w_t}, s + "projection");
        if (proj_b != ir::kNoTensor) out = w.add(out, proj_b, s + "projection_biased");
        if (proj_clip > 0) out = w.clip(out, -proj_clip, proj_clip, s + "projection_clipped");
      }
      h = out;
    }
    cs = new_c;
    res.outputs.push_back(out);
  }
  res.h = h;
  res.c = cs;
  return res;
}

// The input projection of every step for one cell, [..., G*U]: x @ W^T
// (+ aux @ Waux^T) + bias; the integer kernel's in pre-activation steps.
TensorId project_inputs(Writer& w, const Cell& c, const HybridProduct& hybrid, TensorId x,
                        TensorId aux, double input_scale, const std::string& prefix) {
  const ir::Graph& g = w.graph();
  std::vector<TensorId> ws, as;
  for (int k : gates(c)) {
    ws.push_back(c.w[static_cast<size_t>(k)]);
    if (aux != ir::kNoTensor) as.push_back(c.aux_w[static_cast<size_t>(k)]);
  }
  if (hybrid.on()) {
    // The kernel starts each gate at its bias (0 with layer norm), then adds
    // the input's product and the auxiliary input's.
    TensorId p = hybrid(x, ws, prefix + "input");
    std::vector<float> bias = input_bias(g, c, 0);
    if (std::any_of(bias.begin(), bias.end(), [](float v) { return v != 0.f; }))
      p = w.add(float_vector(w, bias, prefix + "gate_bias"), p, prefix + "with_bias");
    if (aux != ir::kNoTensor) p = w.add(p, hybrid(aux, as, prefix + "aux"), prefix + "with_aux");
    return p;
  }
  TensorId p = w.op("MatMul", {x, w.stack_transposed(ws, prefix + "input_weights_t")},
                    prefix + "input_projection");
  if (aux != ir::kNoTensor)
    p = w.add(p,
              w.op("MatMul", {aux, w.stack_transposed(as, prefix + "aux_weights_t")},
                   prefix + "aux_projection"),
              prefix + "with_aux");
  std::vector<float> bias = input_bias(g, c, input_scale);
  bool any = false;
  for (float v : bias) any = any || v != 0.f;
  if (any) p = w.add(p, float_vector(w, bias, prefix + "gate_bias"), prefix + "with_bias");
  return c.integer ? integer_input_steps(w, c, p, prefix) : p;
}

// ONNX LSTM computes TFLite's float cell exactly in these cases.
const char* onnx_lstm_activation(const Cell& c, const std::string& act, float cell_clip) {
  if (c.cifg || c.layer_norm || c.projection || c.diag || c.integer || cell_clip > 0 ||
      c.aux_w[1] != ir::kNoTensor)
    return nullptr;
  if (act == "TANH") return "Tanh";
  if (act == "RELU") return "Relu";
  return nullptr;
}

// One direction as an ONNX LSTM node over a time-major input: Y [T, B, U]
// and the last states.
Result onnx_lstm(Writer& w, const Cell& c, TensorId x_tm, const char* act, bool reverse,
                 const std::string& prefix) {
  LowerContext& ctx = w.ctx();
  const ir::Graph& g = w.graph();
  const ir::Node& n = w.node();
  const int64_t u = c.n_cell;
  // ONNX orders the gates i, o, f, c; TFLite i, f, c, o.
  constexpr std::array<int, 4> kOrder = {0, 3, 1, 2};
  std::vector<TensorId> ws, rs;
  std::vector<float> bias, peep;
  for (int k : kOrder) {
    ws.push_back(c.w[static_cast<size_t>(k)]);
    rs.push_back(c.r[static_cast<size_t>(k)]);
    auto b = real_values(g.tensor(c.b[static_cast<size_t>(k)]));
    bias.insert(bias.end(), b->begin(), b->end());
  }
  bias.resize(static_cast<size_t>(8 * u), 0.f);
  auto as3 = [&](TensorId t, const std::string& s) { return w.unsqueeze(t, {0}, prefix + s); };
  TensorId wt = as3(w.stack_rows(ws, prefix + "onnx_w2"), "onnx_w");
  TensorId rt = as3(w.stack_rows(rs, prefix + "onnx_r2"), "onnx_r");
  TensorId b = w.constant(bias, {1, 8 * u}, prefix + "onnx_b");
  TensorId p = ir::kNoTensor;
  if (c.peephole) {
    for (int k : {0, 2, 1}) {  // i, o, f
      auto v = real_values(g.tensor(c.p[static_cast<size_t>(k)]));
      peep.insert(peep.end(), v->begin(), v->end());
    }
    p = w.constant(peep, {1, 3 * u}, prefix + "onnx_p");
  }
  TensorId h0 = w.unsqueeze(c.h, {0}, prefix + "initial_h");
  TensorId c0 = w.unsqueeze(c.c, {0}, prefix + "initial_c");
  TensorId y = ctx.temp(n.name + "/" + prefix + "y", DataType::kFloat32);
  TensorId yh = ctx.temp(n.name + "/" + prefix + "y_h", DataType::kFloat32);
  TensorId yc = ctx.temp(n.name + "/" + prefix + "y_c", DataType::kFloat32);
  ir::Node& node = ctx.emit(n, "LSTM", {x_tm, wt, rt, b, ir::kNoTensor, h0, c0, p}, {y, yh, yc},
                            prefix + "lstm");
  node.attrs.set("hidden_size", u);
  node.attrs.set("activations", std::vector<std::string>{"Sigmoid", act, act});
  if (reverse) node.attrs.set("direction", std::string("reverse"));
  Result r;
  r.outputs = {w.squeeze(y, {1}, prefix + "y_steps")};
  r.h = w.squeeze(yh, {0}, prefix + "state_h");
  r.c = w.squeeze(yc, {0}, prefix + "state_c");
  return r;
}

// One direction over the whole input, in the form chosen; the per-step
// outputs in time order (or one [T, B, U] tensor from ONNX LSTM: `joined`).
Result run_direction(Writer& w, const Lstm& l, const Cell& c, const HybridProduct& hybrid,
                     TensorId x, TensorId aux, bool reverse, const std::string& prefix,
                     bool& joined, std::optional<Error>& error) {
  const ir::Node& n = w.node();
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  joined = false;
  // ONNX LSTM where it computes what TFLite's kernel does (measured 3-6x
  // faster than the unrolled cell: docs/architecture.md, "Recurrent ops").
  const char* onnx_act = hybrid.on() ? nullptr : onnx_lstm_activation(c, act, cell_clip);
  if (onnx_act) {
    TensorId x_tm = l.time_major ? x
                                 : w.op("Transpose", {x}, prefix + "time_major",
                                        {{"perm", std::vector<int64_t>{1, 0, 2}}});
    joined = true;
    return onnx_lstm(w, c, x_tm, onnx_act, reverse, prefix);
  }
  const double input_scale = scale_of(w.graph().tensor(x));
  if (auto st = reserve_nodes(w.ctx(), n, l.steps * (c.integer || hybrid.on() ? 64 : 24) + 16);
      !st) {
    error = st.take_error();
    return {};
  }
  TensorId proj = project_inputs(w, c, hybrid, x, aux, input_scale, prefix);
  std::vector<int64_t> order;
  for (int64_t t = 0; t < l.steps; ++t) order.push_back(reverse ? l.steps - 1 - t : t);
  Result r = unroll(w, c, hybrid, proj, l.batch, l.time_major ? 0 : 1, order, act, cell_clip,
                    proj_clip, prefix);
  if (reverse) std::reverse(r.outputs.begin(), r.outputs.end());
  return r;
}

// A direction's outputs as one [T, B, U] (time-major) or [B, T, U] tensor.
TensorId sequence_of(Writer& w, const Lstm& l, const Result& r, bool joined, int64_t units,
                     TensorId out, const std::string& suffix) {
  if (joined) {
    if (l.time_major) {
      if (out == ir::kNoTensor) return r.outputs[0];
      w.op_into(out, "Identity", {r.outputs[0]}, suffix);
    } else {
      if (out == ir::kNoTensor)
        return w.op("Transpose", {r.outputs[0]}, suffix, {{"perm", std::vector<int64_t>{1, 0, 2}}});
      w.op_into(out, "Transpose", {r.outputs[0]}, suffix,
                {{"perm", std::vector<int64_t>{1, 0, 2}}});
    }
    return out;
  }
  TensorId target =
      out != ir::kNoTensor ? out : w.ctx().temp(w.node().name + "/" + suffix, DataType::kFloat32);
  stack_steps(w, r.outputs, l.time_major, l.batch, units, target, suffix);
  return target;
}

void write_states(Writer& w, const ir::Node& n, size_t first, const Result& r,
                  const std::string& prefix) {
  if (TensorId h = state_output(n, first); h != ir::kNoTensor)
    w.op_into(h, "Identity", {r.h}, prefix + "next_output_state");
  if (TensorId c = state_output(n, first + 1); c != ir::kNoTensor)
    w.op_into(c, "Identity", {r.c}, prefix + "next_cell_state");
}

Status lower_sequence_lstm(LowerContext& ctx, const ir::Node& n, const HybridProduct& hybrid) {
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, LstmKind::kUnidirectional, l))
    return ctx.error(n, r->text);
  Writer w(ctx, n);
  bool joined = false;
  std::optional<Error> error;
  Result r =
      run_direction(w, l, l.cells[0], hybrid, n.inputs[0], ir::kNoTensor, false, "", joined, error);
  if (error) return *error;
  sequence_of(w, l, r, joined, l.cells[0].n_output, n.outputs[0], "output");
  write_states(w, n, 0, r, "");
  return ok_status();
}

Status lower_bidi_lstm(LowerContext& ctx, const ir::Node& n, const HybridProduct& hybrid) {
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, LstmKind::kBidirectional, l)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  const TensorId x = n.inputs[0];
  const TensorId real_aux = l.bw_reads_aux ? ir::kNoTensor : l.aux;
  const TensorId bw_x = l.bw_reads_aux ? l.aux : x;
  bool fj = false, bj = false;
  std::optional<Error> error;
  Result fw = run_direction(w, l, l.cells[0], hybrid, x, real_aux, false, "fw/", fj, error);
  if (error) return *error;
  Result bw = run_direction(w, l, l.cells[1], hybrid, bw_x, real_aux, true, "bw/", bj, error);
  if (error) return *error;
  const int64_t fu = l.cells[0].n_output, bu = l.cells[1].n_output;
  if (l.merge) {
    TensorId a = sequence_of(w, l, fw, fj, fu, ir::kNoTensor, "fw_sequence");
    TensorId b = sequence_of(w, l, bw, bj, bu, ir::kNoTensor, "bw_sequence");
    w.op_into(n.outputs[0], "Concat", {a, b}, "output", {{"axis", int64_t{2}}});
  } else {
    sequence_of(w, l, fw, fj, fu, n.outputs[0], "fw_output");
    sequence_of(w, l, bw, bj, bu, n.outputs[1], "bw_output");
  }
  write_states(w, n, 0, fw, "fw/");
  write_states(w, n, 2, bw, "bw/");
  return ok_status();
}

Status lower_basic_lstm(LowerContext& ctx, const ir::Node& n) {
  Writer w(ctx, n);
  // concat [x, h] -> fully connected -> gates i, j (new input), f, o.
  w.op_into(n.outputs[2], "Concat", {n.inputs[0], n.inputs[1]}, "concat", {{"axis", int64_t{1}}});
  w.op_into(n.outputs[3], "Gemm", {n.outputs[2], n.inputs[2], n.inputs[3]}, "fully_connected",
            {{"transB", int64_t{1}}});
  std::vector<TensorId> g = w.ops("Split", {n.outputs[3]}, 4, "gates", {{"axis", int64_t{1}}});
  TensorId i = w.op("Sigmoid", {g[0]}, "i");
  TensorId j = w.op("Tanh", {g[1]}, "j");
  TensorId f = w.op("Sigmoid", {g[2]}, "f");
  TensorId o = w.op("Sigmoid", {g[3]}, "o");
  w.op_into(n.outputs[1], "Add", {w.mul(i, j, "input_times_new"), w.mul(f, n.inputs[4], "forget")},
            "state");
  w.op_into(n.outputs[0], "Mul", {o, w.op("Tanh", {n.outputs[1]}, "state_tanh")}, "activation");
  // The kernel copies the outputs into its inputs 1 and 4.
  if (TensorId a = state_output(n, 0); a != ir::kNoTensor)
    w.op_into(a, "Identity", {n.outputs[0]}, "next_activation");
  if (TensorId s = state_output(n, 1); s != ir::kNoTensor)
    w.op_into(s, "Identity", {n.outputs[1]}, "next_state");
  return ok_status();
}

Status lower_lstm(LowerContext& ctx, const ir::Node& n, const HybridProduct& hybrid) {
  if (n.attrs.get_int("kernel_type") == 1) return lower_basic_lstm(ctx, n);
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, LstmKind::kOneStep, l)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  // One step: the sequence of one time-major step.
  TensorId x = w.unsqueeze(n.inputs[0], {0}, "as_sequence");
  bool joined = false;
  std::optional<Error> error;
  Result r = run_direction(w, l, l.cells[0], hybrid, x, ir::kNoTensor, false, "", joined, error);
  if (error) return *error;
  if (joined)
    w.op_into(n.outputs[0], "Squeeze", {r.outputs[0], w.ints({0})}, "output");
  else
    w.op_into(n.outputs[0], "Identity", {r.outputs[0]}, "output");
  write_states(w, n, 2, r, "");
  return ok_status();
}

Status lower_sequence_float(LowerContext& ctx, const ir::Node& n) {
  return lower_sequence_lstm(ctx, n, {});
}
Status lower_bidi_float(LowerContext& ctx, const ir::Node& n) {
  return lower_bidi_lstm(ctx, n, {});
}
Status lower_lstm_float(LowerContext& ctx, const ir::Node& n) { return lower_lstm(ctx, n, {}); }

constexpr const char* kLstmNotes =
    "peephole, projection, layer norm, cell and projection clipping, CIFG, diagonal recurrent "
    "weights; float, hybrid (int8 weights: as TFLite's hybrid kernel; from the dequantized "
    "weights with --quantization dequantize) and full-integer int8 (8x8_16: in integers as "
    "TFLite's kernel; with --quantization qdq or dequantize in float, on the kernel's grids); "
    "states are model state";

}  // namespace

Status lower_hybrid_lstm(LowerContext& ctx, const ir::Node& n, LstmKind kind) {
  if (auto r = check_hybrid_lstm(ctx.graph(), n, kind)) return ctx.error(n, r->text);
  return lower_with_hybrid_product(ctx, n, [&](const HybridProduct& hybrid) {
    return kind == LstmKind::kUnidirectional  ? lower_sequence_lstm(ctx, n, hybrid)
           : kind == LstmKind::kBidirectional ? lower_bidi_lstm(ctx, n, hybrid)
                                              : lower_lstm(ctx, n, hybrid);
  });
}

Check check_hybrid_lstm(const ir::Graph& g, const ir::Node& n, LstmKind kind) {
  Lstm l;
  if (auto r = read_lstm(g, n, kind, l)) return r;
  for (const Cell& c : l.cells) {
    std::vector<TensorId> multiplied, floats = {c.proj_b};
    for (int k : gates(c)) {
      const auto kk = static_cast<size_t>(k);
      for (TensorId t : {c.w[kk], c.r[kk], c.aux_w[kk]})
        if (t != ir::kNoTensor) multiplied.push_back(t);
      floats.insert(floats.end(), {c.b[kk], c.ln[kk]});
    }
    if (c.projection) multiplied.push_back(c.proj_w);
    for (TensorId t : multiplied)
      if (auto r = exact::check_builtin_hybrid_weight(g.tensor(t))) return r;
    for (TensorId t : c.p)
      if (t != ir::kNoTensor && (g.tensor(t).quantized_type != DataType::kInt8 ||
                                 scale_of(g.tensor(t)) == 0 || zp_of(g.tensor(t)) != 0))
        return refuse(ReasonCode::kQuantization,
                      "peephole weights '" + g.tensor(t).name +
                          "' that are not int8 of one scale and zero point 0 (the hybrid kernel "
                          "reads them so)");
    for (TensorId t : floats)
      if (t != ir::kNoTensor && g.tensor(t).quantized_type)
        return refuse(
            ReasonCode::kQuantization,
            "'" + g.tensor(t).name + "' is quantized: the hybrid kernel reads it as float");
  }
  return std::nullopt;
}

OpEntry unidirectional_sequence_lstm() {
  return {.read = {.options = read_sequence_lstm_options},
          .infer_shapes = infer_sequence_lstm,
          .check = check_sequence_lstm,
          .lower = lower_sequence_float,
          .quantization = {.exact = sequence_lstm_exact()},
          .state = {.inputs = {18, 19}},
          .doc = {.onnx = "LSTM where it matches TFLite exactly, else the cell unrolled (MatMul, "
                          "Gemm, Split, Sigmoid, Tanh, Mul, Add per step)",
                  .dtypes = "float32, int8 weights, int8 (int16 cell state)",
                  .notes = kLstmNotes}};
}

OpEntry bidirectional_sequence_lstm() {
  return {.read = {.options = read_bidi_lstm_options},
          .infer_shapes = infer_bidi_lstm,
          .check = check_bidi_lstm,
          .lower = lower_bidi_float,
          .quantization = {.exact = bidi_lstm_exact()},
          .state = {.inputs = {35, 36, 37, 38}},
          .doc = {.onnx = "two LSTMs (forward, reverse) where they match TFLite exactly, else "
                          "both cells unrolled; Concat for merge_outputs",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major, merge_outputs, auxiliary input (stacking and not); the "
                           "four states are model state; float and hybrid (int8 weights, as "
                           "TFLite's hybrid kernel)"}};
}

OpEntry lstm() {
  return {.read = {.options = read_one_step_lstm_options},
          .infer_shapes = infer_lstm,
          .check = check_lstm,
          .lower = lower_lstm_float,
          .quantization = {.exact = one_step_lstm_exact()},
          // Basic kernel: the previous activation and state (1, 4), written when
          // they are variable tensors; full kernel: 18 and 19, which must be.
          .state = {.inputs = {1, 4, 18, 19}, .required = false},
          .doc = {.onnx = "full kernel: as UNIDIRECTIONAL_SEQUENCE_LSTM with one step; basic "
                          "kernel: Concat, Gemm, Split, Sigmoid, Tanh, Mul, Add",
                  .dtypes = "float32, int8 weights, int8 (int16 cell state)",
                  .notes = "full kernel (20 or 24 inputs) as the sequence op; basic kernel float "
                           "(its activation and state inputs are model state when they are "
                           "variable tensors)"}};
}

}  // namespace lite2onnx::ops::recurrent
