// The full-integer LSTM kernel (lstm_eval's 8x8_16: int8 activations, int16
// cell state, fixed-point gates), computed in float on the grids it rounds
// to, as the int16 (16x8) path emulates its tensors: its parameters
// (PopulateQuantizedLstmParams8x8_16) and the arithmetic of one step, which
// lstm.cc's unrolled cell calls where the cell is integer.
#include <algorithm>
#include <cmath>

#include "core/ops/lstm.h"

namespace lite2onnx::ops::recurrent {

using ir::TensorId;

namespace {

constexpr double kQ15 = 1.0 / 32768.0;  // a Q0.15 step

// Round(x / scale) + zero point: the real value x as the integers of (scale,
// zero point), unclamped. `s` names the nodes.
TensorId integer_steps(Writer& w, TensorId x, double scale, int64_t zero_point,
                       const std::string& s) {
  return w.add(w.op("Round", {w.mul(x, w.scalar(static_cast<float>(1.0 / scale)), s + "_scaled")},
                    s + "_round"),
               w.scalar(static_cast<float>(zero_point)), s + "_zp");
}

}  // namespace

Check make_integer(const ir::Graph& g, const ir::Node& n, Cell& c) {
  IntegerLstm q;
  // The reader keeps them as their quantization (one scale, or 0).
  const std::vector<float> mid_scales = n.attrs.get_floats("intermediate_scales");
  const std::vector<int64_t> mid_zps = n.attrs.get_ints("intermediate_zero_points");
  if (mid_scales.size() != 5 || mid_zps.size() != 5)
    return refuse(ReasonCode::kQuantization,
                  "the integer kernel needs 5 intermediate tensors, the op has " +
                      std::to_string(mid_scales.size()) + " (the 8x8_8 kernel is not converted)");
  for (int k = 0; k < 4; ++k) {
    q.gate_scale[static_cast<size_t>(k)] = std::ldexp(1.0, -12);
    if (c.layer_norm && !(c.cifg && k == 0)) {
      const double s = mid_scales[static_cast<size_t>(k)];
      if (!(s > 0) || !std::isfinite(s))
        return refuse(ReasonCode::kQuantization,
                      "intermediate " + std::to_string(k) + " (a gate's) has no valid scale");
      q.gate_scale[static_cast<size_t>(k)] = s;
    }
  }
  q.hidden_scale = mid_scales[4];
  q.hidden_zp = mid_zps[4];
  if (!(q.hidden_scale > 0) || !std::isfinite(q.hidden_scale))
    return refuse(ReasonCode::kQuantization,
                  "intermediate 4 (the hidden value) has no valid scale");
  const ir::Tensor& cs = g.tensor(c.c);
  const ir::Tensor& hs = g.tensor(c.h);
  const ir::Tensor& out = g.tensor(n.outputs[0]);
  q.cell_scale = scale_of(cs);
  int e = 0;
  if (!(q.cell_scale > 0) || std::frexp(q.cell_scale, &e) != 0.5)
    return refuse(ReasonCode::kQuantization,
                  "cell state '" + cs.name + "' must have a power-of-two scale");
  q.state_scale = scale_of(hs);
  q.state_zp = zp_of(hs);
  q.output_scale = scale_of(out);
  q.output_zp = zp_of(out);
  if (!(q.state_scale > 0) || !(q.output_scale > 0))
    return refuse(ReasonCode::kQuantization, "the output state needs a scale");
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  if (cell_clip > 0)
    q.cell_clip = static_cast<int64_t>(std::clamp(cell_clip / q.cell_scale, -32768.0, 32767.0));
  if (proj_clip > 0)
    q.proj_clip = static_cast<int64_t>(std::clamp(proj_clip / q.output_scale, -128.0, 127.0));
  c.integer = q;
  return {};
}

std::vector<float> inverse_gate_steps(const Cell& c) {
  std::vector<float> inv;
  for (int k : gates(c))
    inv.insert(inv.end(), static_cast<size_t>(c.n_cell),
               static_cast<float>(1.0 / c.integer->gate_scale[static_cast<size_t>(k)]));
  return inv;
}

TensorId integer_input_steps(Writer& w, const Cell& c, TensorId projection,
                             const std::string& prefix) {
  return w.clip(
      w.op("Round",
           {w.mul(projection, float_vector(w, inverse_gate_steps(c), prefix + "inverse_steps"),
                  prefix + "input_scaled")},
           prefix + "input_round"),
      -32768.f, 32767.f, prefix + "input_steps");
}

TensorId integer_pre_activation(Writer& w, TensorId input, TensorId h, TensorId recurrent_t,
                                TensorId inverse_steps, const std::string& s) {
  TensorId rec = w.op("Round",
                      {w.mul(w.op("MatMul", {h, recurrent_t}, s + "recurrent"), inverse_steps,
                             s + "recurrent_scaled")},
                      s + "recurrent_steps");
  return w.clip(w.add(input, rec, s + "sum"), -32768.f, 32767.f, s + "pre");
}

TensorId integer_with_peephole(Writer& w, const IntegerLstm& q, int k, TensorId x, TensorId v,
                               const std::string& s) {
  v = w.op("Round",
           {w.mul(v, w.scalar(static_cast<float>(1.0 / q.gate_scale[static_cast<size_t>(k)])),
                  s + "_peephole_scaled")},
           s + "_peephole_steps");
  return w.clip(w.add(x, v, s + "_with_peephole"), -32768.f, 32767.f, s + "_peephole_sum");
}

TensorId integer_peephole_product(Writer& w, TensorId cell, const std::vector<float>& weights,
                                  int64_t batch, int64_t together, int64_t units, int64_t outputs,
                                  const std::string& s) {
  if (outputs == units) return w.mul(cell, float_vector(w, weights, s + "_weights"), s);
  const int64_t calls = batch / together, touched = together * outputs, width = together * units;
  std::vector<float> tiled;
  for (int64_t j = 0; j < touched; ++j) tiled.push_back(weights[static_cast<size_t>(j % outputs)]);
  TensorId flat = w.op("Reshape", {cell, w.ints({calls, width})}, s + "_calls");
  TensorId head = w.op("Slice", {flat, w.ints({0}), w.ints({touched}), w.ints({1})}, s + "_walked");
  TensorId product = w.mul(head, float_vector(w, tiled, s + "_tiled"), s + "_product");
  TensorId rest =
      w.constant(std::vector<float>(static_cast<size_t>(calls * (width - touched)), 0.f),
                 {calls, width - touched}, s + "_untouched");
  TensorId joined = w.op("Concat", {product, rest}, s + "_joined", {{"axis", int64_t{1}}});
  return w.op("Reshape", {joined, w.ints({batch, units})}, s + "_rows");
}

TensorId integer_gate(Writer& w, const IntegerLstm& q, int k, TensorId x, bool layer_norm_on,
                      TensorId coef, TensorId bias, bool sigmoid, const std::string& s) {
  double in_scale = q.gate_scale[static_cast<size_t>(k)];
  if (layer_norm_on) {
    TensorId normed = layer_norm(w, x, coef, bias, 1e-8f, s + "_ln/");
    x = w.to_steps(normed, std::ldexp(1.0, -12), -32768, 32767, s + "_ln_steps");
    in_scale = std::ldexp(1.0, -12);
  }
  TensorId real = w.mul(x, w.scalar(static_cast<float>(in_scale)), s + "_real");
  TensorId a = w.op(sigmoid ? "Sigmoid" : "Tanh", {real}, s);
  return w.from_steps(w.to_steps(a, kQ15, -32768, 32767, s + "_q15"), kQ15, s + "_gate");
}

TensorId integer_cell(Writer& w, const IntegerLstm& q, TensorId f, TensorId cs, TensorId i,
                      TensorId g_c, const std::string& s) {
  const double sc = q.cell_scale;
  TensorId kept = w.to_steps(w.mul(f, cs, s + "forget"), sc, -32768, 32767, s + "kept");
  TensorId added =
      w.to_steps(w.mul(i, g_c, s + "input_times_cell"), sc, -32768, 32767, s + "added");
  TensorId steps = w.clip(w.add(kept, added, s + "cell_sum"), -32768.f, 32767.f, s + "cell");
  if (q.cell_clip > 0)
    steps = w.clip(steps, static_cast<float>(-q.cell_clip), static_cast<float>(q.cell_clip),
                   s + "cell_clipped");
  return w.from_steps(steps, sc, s + "cell_real");
}

IntegerHidden integer_hidden(Writer& w, const IntegerLstm& q, TensorId o, TensorId new_c,
                             TensorId proj_w_t, TensorId proj_b, const std::string& s) {
  TensorId th = w.from_steps(
      w.to_steps(w.op("Tanh", {new_c}, s + "cell_tanh"), kQ15, -32768, 32767, s + "cell_tanh_q15"),
      kQ15, s + "cell_tanh_real");
  TensorId hid = w.mul(o, th, s + "hidden");
  TensorId steps;
  if (proj_w_t != ir::kNoTensor) {
    // The kernel writes the hidden value minus its zero point (clamped)
    // and adds the zero point back through the projection's bias.
    TensorId hs = w.to_steps(hid, q.hidden_scale, -128.0 + static_cast<double>(q.hidden_zp),
                             127.0 + static_cast<double>(q.hidden_zp), s + "hidden_steps");
    TensorId hr = w.from_steps(hs, q.hidden_scale, s + "hidden_real");
    TensorId p = w.op("MatMul", {hr, proj_w_t}, s + "projection");
    if (proj_b != ir::kNoTensor) p = w.add(p, proj_b, s + "projection_biased");
    steps = integer_steps(w, p, q.state_scale, q.state_zp, s + "projection");
    steps = w.clip(steps, -128.f, 127.f, s + "output_steps");
    if (q.proj_clip > 0)
      steps = w.clip(steps, static_cast<float>(-q.proj_clip), static_cast<float>(q.proj_clip),
                     s + "output_clipped");
  } else {
    // Plus the hidden zero point, as TFLite's kernel adds it since the
    // fix of its sign (CwiseMul; older TFLite, tfjs-tflite's among them,
    // subtracted it: tests/numeric/known_fail.json, dtln).
    steps = integer_steps(w, hid, q.hidden_scale, q.hidden_zp, s + "hidden");
    steps = w.clip(steps, -128.f, 127.f, s + "output_steps");
  }
  // The same integers, as the output state and as the output read them.
  IntegerHidden out;
  out.state = w.mul(w.add(steps, w.scalar(static_cast<float>(-q.state_zp)), s + "state_centered"),
                    w.scalar(static_cast<float>(q.state_scale)), s + "state");
  out.output = w.mul(w.add(steps, w.scalar(static_cast<float>(-q.output_zp)), s + "out_centered"),
                     w.scalar(static_cast<float>(q.output_scale)), s + "out");
  return out;
}

}  // namespace lite2onnx::ops::recurrent
