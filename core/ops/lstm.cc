// The LSTM family: UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM
// and LSTM (full and basic kernels), as TFLite's kernels compute them
// (kernels/lstm_eval.cc, lstm.cc, unidirectional_sequence_lstm.cc,
// bidirectional_sequence_lstm.cc; input slots as in lstm_shared.h).
//
// Float and hybrid (int8 weights, float activations) cells are one form: the
// weights are read through DequantizeLinear (or folded to float) and the cell
// computes in float. The full-integer kernel (int8 activations, int16 cell
// state, fixed-point gates: lstm_eval's 8x8_16) is computed in float on the
// grids the integer kernel rounds to (gate pre-activations in 16-bit steps,
// gates in Q0.15, the cell state on its power-of-two scale, the hidden value
// in 8-bit steps), as the int16 (16x8) path emulates its tensors.
//
// The ONNX form: ONNX LSTM where it computes exactly what TFLite's kernel
// does (float, no CIFG, layer norm, projection or cell clipping, an
// activation ONNX has), else the cell unrolled over the sequence (the input
// projection of every step in one MatMul first). Which of the two, and why
// not an ONNX Loop: docs/architecture.md, "Recurrent ops" (measured).
#include <array>
#include <cmath>
#include <cstring>

#include "core/ir/shape.h"
#include "core/ops/families.h"
#include "core/ops/recurrent.h"

namespace lite2onnx::ops::recurrent {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

constexpr int kNone = -1;

// Where one cell's tensors sit in the op's inputs (lstm_shared.h and
// bidirectional_sequence_lstm.cc); gates in TFLite's order i, f, c, o.
struct Slots {
  std::array<int, 4> w, r, b, ln, aux_w;
  std::array<int, 3> p;  // peepholes i, f, o
  int proj_w, proj_b, h, c;
};

constexpr Slots kFull = {{1, 2, 3, 4},
                         {5, 6, 7, 8},
                         {12, 13, 14, 15},
                         {20, 21, 22, 23},
                         {kNone, kNone, kNone, kNone},
                         {9, 10, 11},
                         16,
                         17,
                         18,
                         19};
constexpr Slots kBidiFw = {{1, 2, 3, 4},
                           {5, 6, 7, 8},
                           {12, 13, 14, 15},
                           {kNone, kNone, kNone, kNone},
                           {40, 41, 42, 43},
                           {9, 10, 11},
                           16,
                           17,
                           35,
                           36};
constexpr Slots kBidiBw = {{18, 19, 20, 21},
                           {22, 23, 24, 25},
                           {29, 30, 31, 32},
                           {kNone, kNone, kNone, kNone},
                           {44, 45, 46, 47},
                           {26, 27, 28},
                           33,
                           34,
                           37,
                           38};
constexpr int kBidiAux = 39;

// The full-integer kernel's parameters (PopulateQuantizedLstmParams8x8_16).
struct IntegerLstm {
  std::array<double, 4> gate_scale{};  // pre-activation steps of each gate
  double cell_scale = 1;               // the cell state's (a power of two)
  double hidden_scale = 1;
  int64_t hidden_zp = 0;
  double state_scale = 1;  // output state (int8)
  int64_t state_zp = 0;
  double output_scale = 1;  // the output tensor
  int64_t output_zp = 0;
  int64_t cell_clip = 0;  // in cell steps, 0: none
  int64_t proj_clip = 0;  // in output state steps, 0: none
};

// One cell (a direction) as the op describes it.
struct Cell {
  bool cifg = false, peephole = false, layer_norm = false, projection = false, diag = false;
  // Per gate i, f, c, o (i absent with CIFG): kNoTensor where absent.
  std::array<TensorId, 4> w{}, r{}, b{}, ln{}, aux_w{};
  std::array<TensorId, 3> p{};
  TensorId proj_w = ir::kNoTensor, proj_b = ir::kNoTensor, h = ir::kNoTensor, c = ir::kNoTensor;
  int64_t n_input = 0, n_cell = 0, n_output = 0, n_aux = 0;
  std::optional<IntegerLstm> integer;
};

TensorId slot(const ir::Graph& g, const ir::Node& n, int s) {
  if (s < 0 || static_cast<size_t>(s) >= n.inputs.size()) return ir::kNoTensor;
  return g.valid(n.inputs[static_cast<size_t>(s)]) ? n.inputs[static_cast<size_t>(s)]
                                                   : ir::kNoTensor;
}

// The real values of a small constant (bias, peephole, layer norm
// coefficients): float as it is; integers times `scale` (the scale TFLite's
// integer kernel reads them with), or their own scale when `scale` is 0.
std::optional<std::vector<float>> real_values(const ir::Tensor& t, double scale = 0) {
  if (!t.is_const()) return std::nullopt;
  const ir::ConstData& d = *t.data;
  const auto count = static_cast<size_t>(ir::element_count(t.shape).value_or(0));
  if (d.bytes.size() < count * ir::element_size(d.stored_type)) return std::nullopt;
  std::vector<float> out(count);
  if (d.stored_type == DataType::kFloat32) {
    std::memcpy(out.data(), d.bytes.data(), count * 4);
    return out;
  }
  double s = scale;
  double zp = 0;
  if (s == 0) {
    if (!t.quant || t.quant->scale.size() != 1) return std::nullopt;
    s = t.quant->scale[0];
    zp = t.quant->zero_point.empty() ? 0.0 : static_cast<double>(t.quant->zero_point[0]);
  }
  for (size_t i = 0; i < count; ++i) {
    const std::byte* p = d.bytes.data() + i * ir::element_size(d.stored_type);
    double v = 0;
    switch (d.stored_type) {
      case DataType::kInt8:
        v = static_cast<int8_t>(*p);
        break;
      case DataType::kInt16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v = x;
        break;
      }
      case DataType::kInt32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = x;
        break;
      }
      default:
        return std::nullopt;
    }
    out[i] = static_cast<float>((v - zp) * s);
  }
  return out;
}

double scale_of(const ir::Tensor& t) {
  return t.quant && t.quant->scale.size() == 1 ? t.quant->scale[0] : 0.0;
}
int64_t zp_of(const ir::Tensor& t) {
  return t.quant && !t.quant->zero_point.empty() ? t.quant->zero_point[0] : 0;
}
bool integer_type(const ir::Tensor& t, DataType type) {
  return t.quantized_type == type || (!t.quantized_type && t.dtype == type);
}

// ---- checks (TFLite's Prepare) ----

Check shape_problem(const ir::Graph& g, TensorId t, const Shape& want, const char* what) {
  const ir::Tensor& x = g.tensor(t);
  if (!x.has_rank || x.shape != want)
    return refuse(ReasonCode::kShape, std::string(what) + " '" + x.name + "' has shape " +
                                          ir::to_string(x.shape) + ", TFLite's kernel needs " +
                                          ir::to_string(want));
  return {};
}

// Resolves the cell of `slots` and checks it; "" or the problem.
Check make_cell(const ir::Graph& g, const ir::Node& n, const Slots& s, int64_t batch,
                int64_t n_input, bool layer_norm_allowed, Cell& c) {
  auto get = [&](int i) { return slot(g, n, i); };
  for (int k = 0; k < 4; ++k) {
    c.w[k] = get(s.w[k]);
    c.r[k] = get(s.r[k]);
    c.b[k] = get(s.b[k]);
    c.aux_w[k] = get(s.aux_w[k]);
    c.ln[k] = layer_norm_allowed ? get(s.ln[k]) : ir::kNoTensor;
  }
  for (int k = 0; k < 3; ++k) c.p[k] = get(s.p[k]);
  c.proj_w = get(s.proj_w);
  c.proj_b = get(s.proj_b);
  c.h = get(s.h);
  c.c = get(s.c);
  for (int k = 1; k < 4; ++k) {
    if (c.w[k] == ir::kNoTensor)
      return refuse(ReasonCode::kOperands,
                    "input weights of gate " + std::to_string(k) + " are missing");
    if (c.r[k] == ir::kNoTensor)
      return refuse(ReasonCode::kOperands,
                    "recurrent weights of gate " + std::to_string(k) + " are missing");
    if (c.b[k] == ir::kNoTensor)
      return refuse(ReasonCode::kOperands, "bias of gate " + std::to_string(k) + " is missing");
  }
  if (c.h == ir::kNoTensor || c.c == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "a state input is missing");
  c.cifg = c.w[0] == ir::kNoTensor;
  if (c.cifg != (c.r[0] == ir::kNoTensor))
    return refuse(ReasonCode::kOperands,
                  "input-gate weights must be all present or all absent (CIFG)");
  c.peephole = c.p[2] != ir::kNoTensor;
  if (c.peephole != (c.p[1] != ir::kNoTensor) ||
      (c.p[0] != ir::kNoTensor) != (c.peephole && !c.cifg))
    return refuse(ReasonCode::kOperands, "peephole weights must be all present or all absent");
  c.layer_norm = c.ln[1] != ir::kNoTensor;
  if (c.layer_norm)
    for (int k = c.cifg ? 1 : 0; k < 4; ++k)
      if (c.ln[k] == ir::kNoTensor)
        return refuse(ReasonCode::kOperands, "layer norm coefficients are missing");
  c.projection = c.proj_w != ir::kNoTensor;
  if (c.proj_b != ir::kNoTensor && !c.projection)
    return refuse(ReasonCode::kOperands, "projection bias without weights");
  const ir::Tensor& w_f = g.tensor(c.w[1]);
  if (!w_f.has_rank || w_f.rank() != 2)
    return refuse(ReasonCode::kShape, "input weights must have rank 2");
  c.n_cell = w_f.shape[0];
  c.n_input = n_input;
  const ir::Tensor& r_o = g.tensor(c.r[3]);
  c.diag = r_o.has_rank && r_o.rank() == 1;
  c.n_output = c.diag ? r_o.shape.at(0) : (r_o.has_rank && r_o.rank() == 2 ? r_o.shape[1] : -1);
  if (c.n_cell < 1 || c.n_output < 1) return refuse(ReasonCode::kShape, "empty cell");
  if (!c.projection && c.n_output != c.n_cell)
    return refuse(ReasonCode::kOperands,
                  "without projection the output size must be the cell size");
  for (int k = c.cifg ? 1 : 0; k < 4; ++k) {
    if (auto r = shape_problem(g, c.w[k], {c.n_cell, n_input}, "input weights")) return r;
    if (auto r = shape_problem(g, c.r[k], c.diag ? Shape{c.n_cell} : Shape{c.n_cell, c.n_output},
                               "recurrent weights"))
      return r;
    if (auto r = shape_problem(g, c.b[k], {c.n_cell}, "gate bias")) return r;
    if (c.layer_norm)
      if (auto r = shape_problem(g, c.ln[k], {c.n_cell}, "layer norm coefficients")) return r;
    if (c.aux_w[k] != ir::kNoTensor) {
      const ir::Tensor& a = g.tensor(c.aux_w[k]);
      if (!a.has_rank || a.rank() != 2 || a.shape[0] != c.n_cell)
        return refuse(ReasonCode::kShape,
                      "auxiliary weights '" + a.name + "' must be [n_cell, n_aux]");
      c.n_aux = a.shape[1];
    }
  }
  if (c.cifg && c.b[0] != ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "CIFG with an input gate bias");
  for (int k = 0; k < 3; ++k)
    if (c.p[k] != ir::kNoTensor)
      if (auto r = shape_problem(g, c.p[k], {c.n_cell}, "peephole weights")) return r;
  if (c.projection) {
    if (auto r = shape_problem(g, c.proj_w, {c.n_output, c.n_cell}, "projection weights")) return r;
    if (c.proj_b != ir::kNoTensor)
      if (auto r = shape_problem(g, c.proj_b, {c.n_output}, "projection bias")) return r;
  }
  if (auto r = shape_problem(g, c.h, {batch, c.n_output}, "output state")) return r;
  if (auto r = shape_problem(g, c.c, {batch, c.n_cell}, "cell state")) return r;
  // Everything the cell multiplies with must be a constant (as every
  // converter writing LSTMs makes them) except the activations and states.
  std::vector<TensorId> constants;
  for (int k = 0; k < 4; ++k)
    for (TensorId t : {c.w[k], c.r[k], c.b[k], c.ln[k], c.aux_w[k]})
      if (t != ir::kNoTensor) constants.push_back(t);
  for (TensorId t : {c.p[0], c.p[1], c.p[2], c.proj_w, c.proj_b})
    if (t != ir::kNoTensor) constants.push_back(t);
  for (TensorId t : constants)
    if (!g.tensor(t).is_const())
      return refuse(
          ReasonCode::kRuntimeValue,
          "'" + g.tensor(t).name + "' is computed at run time (weights must be constants)");
  return {};
}

// The integer kernel's scales, from the tensors and the op's intermediates;
// "" or the problem.
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

// Whether every small constant the converter folds (biases, peepholes, layer
// norm coefficients) can be read, with the scales the kernel reads them
// with; "" or the problem.
Check constants_problem(const ir::Graph& g, const Cell& c, double input_scale) {
  const IntegerLstm* q = c.integer ? &*c.integer : nullptr;
  auto readable = [&](TensorId t, double scale) -> Check {
    if (t == ir::kNoTensor || real_values(g.tensor(t), scale)) return {};
    return refuse(
        ReasonCode::kQuantization,
        "'" + g.tensor(t).name + "' cannot be read as values (a per-tensor scale is needed)");
  };
  for (int k = c.cifg ? 1 : 0; k < 4; ++k) {
    const auto kk = static_cast<size_t>(k);
    double bias_scale = 0;
    if (q)
      bias_scale = c.layer_norm ? scale_of(g.tensor(c.ln[kk])) / 1024.0
                                : input_scale * scale_of(g.tensor(c.w[kk]));
    if (q && !(bias_scale > 0))
      return refuse(ReasonCode::kQuantization,
                    "integer kernel: gate " + std::to_string(k) + " has no scale");
    for (auto [t, s] : {std::pair{c.b[kk], bias_scale}, std::pair{c.ln[kk], 0.0}})
      if (auto r = readable(t, s)) return r;
  }
  for (TensorId t : c.p)
    if (auto r = readable(t, 0)) return r;
  if (c.proj_b != ir::kNoTensor)
    if (auto r = readable(c.proj_b, q ? scale_of(g.tensor(c.proj_w)) * q->hidden_scale : 0))
      return r;
  return {};
}

// Everything about the op that the converter reads, checked.
struct Lstm {
  std::vector<Cell> cells;  // forward, then backward
  bool time_major = true, sequence = true, merge = false;
  int64_t batch = 0, steps = 1, n_input = 0;
  TensorId aux = ir::kNoTensor;
  bool bw_reads_aux = false;  // non-stacking bidirectional: aux is the backward input
};

Check check_options(const ir::Node& n) {
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  if (!(cell_clip >= 0) || !(proj_clip >= 0))
    return refuse(ReasonCode::kOperands, "negative or NaN clipping");
  return check_recurrent_activation(n, false);
}

// Kind: 0 unidirectional, 1 full LSTM (one step), 2 bidirectional.
Check read_lstm(const ir::Graph& g, const ir::Node& n, int kind, Lstm& l) {
  if (auto r = check_options(n)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  l.sequence = kind != 1;
  l.time_major = kind == 1 || n.attrs.get_int("time_major") != 0;
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input '" + x.name + "' has no shape");
  if (l.sequence && x.rank() != 3) return refuse(ReasonCode::kShape, "input must have rank 3");
  if (!l.sequence && x.rank() != 2) return refuse(ReasonCode::kShape, "input must have rank 2");
  l.steps = l.sequence ? (l.time_major ? x.shape[0] : x.shape[1]) : 1;
  const TensorId state = slot(g, n, kind == 2 ? kBidiFw.h : kFull.h);
  if (state == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the output state input is missing");
  l.batch = input_batch(x, l.sequence && l.time_major ? 1 : 0, g.tensor(state));
  if (l.batch < 1)
    return refuse(ReasonCode::kShape,
                  "input '" + x.name +
                      "' has a dynamic dimension other than its batch, or a dynamic "
                      "batch that the state does not fix");
  l.n_input = x.shape.back();
  if (l.steps < 1 || l.steps > kMaxSteps)
    return refuse(ReasonCode::kLimit, "sequence of " + std::to_string(l.steps) + " steps (1.." +
                                          std::to_string(kMaxSteps) + " are converted)");
  const bool integer = x.quantized_type == DataType::kInt8;
  if (x.quantized_type && !integer)
    return refuse(ReasonCode::kQuantization, "input '" + x.name + "' is " +
                                                 ir::to_string(*x.quantized_type) +
                                                 " (float32 or int8 expected)");
  if (!x.quantized_type && x.dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "input '" + x.name + "' has type " + ir::to_string(x.dtype));
  if (kind == 2) {
    l.merge = n.attrs.get_int("merge_outputs") != 0;
    if (own_outputs(n) != (l.merge ? 1u : 2u))
      return refuse(ReasonCode::kOperands,
                    "the kernel needs one output per direction, or one merged");
    if (n.inputs.size() < 48) return refuse(ReasonCode::kOperands, "the kernel needs 48 inputs");
    if (integer)
      return refuse(ReasonCode::kQuantization,
                    "the integer bidirectional kernel does not exist in TFLite");
  } else if (n.inputs.size() != 20 && n.inputs.size() != 24) {
    return refuse(ReasonCode::kOperands, "the full kernel needs 20 or 24 inputs, the op has " +
                                             std::to_string(n.inputs.size()));
  } else if (own_outputs(n) != 1) {
    return refuse(ReasonCode::kOperands, "the kernel has one output");
  }
  const bool ln_allowed = kind != 2 && n.inputs.size() == 24;
  std::vector<const Slots*> dirs = {kind == 2 ? &kBidiFw : &kFull};
  if (kind == 2) dirs.push_back(&kBidiBw);
  for (const Slots* s : dirs) {
    Cell c;
    if (auto r = make_cell(g, n, *s, l.batch, l.n_input, ln_allowed, c)) {
      if (dirs.size() > 1) r->text = (s == &kBidiFw ? "forward: " : "backward: ") + r->text;
      return r;
    }
    // Rank-1 (diagonal) recurrent weights come from newer converters, and no
    // TFLite runtime here runs them to check a conversion against.
    if (c.diag)
      return refuse(ReasonCode::kNotImplemented,
                    "diagonal (rank-1) recurrent weights are not converted");
    l.cells.push_back(std::move(c));
  }
  if (kind == 2) {
    l.aux = slot(g, n, kBidiAux);
    const bool aux_weights = l.cells[0].aux_w[1] != ir::kNoTensor;
    for (const Cell& c : l.cells)
      for (int k = c.cifg ? 1 : 0; k < 4; ++k)
        if ((c.aux_w[k] != ir::kNoTensor) != aux_weights)
          return refuse(ReasonCode::kOperands,
                        "auxiliary weights must be all present or all absent");
    if (aux_weights && l.aux == ir::kNoTensor)
      return refuse(ReasonCode::kOperands, "auxiliary weights without auxiliary input");
    if (l.aux != ir::kNoTensor) {
      const ir::Tensor& a = g.tensor(l.aux);
      if (!a.has_rank || a.rank() != 3 || a.shape[0] != x.shape[0] || a.shape[1] != x.shape[1])
        return refuse(ReasonCode::kOperands,
                      "auxiliary input '" + a.name + "' must match the input's time and batch");
      if (a.dtype != DataType::kFloat32 || a.quantized_type)
        return refuse(ReasonCode::kType, "auxiliary input not float32");
      if (!aux_weights && a.shape[2] != l.n_input)
        return refuse(ReasonCode::kOperands,
                      "auxiliary input (the backward input) differs from the input in depth");
      if (aux_weights)
        for (const Cell& c : l.cells)
          if (c.n_aux != a.shape[2])
            return refuse(ReasonCode::kOperands,
                          "auxiliary weights do not fit the auxiliary input");
      l.bw_reads_aux = !aux_weights;  // then aux is the backward cell's input
    }
  }
  // Types: float activations with float or int8 weights; or the integer kernel.
  for (Cell& c : l.cells) {
    const ir::Tensor& w = g.tensor(c.w[1]);
    if (integer) {
      for (int k = c.cifg ? 1 : 0; k < 4; ++k)
        for (TensorId t : {c.w[k], c.r[k]})
          if (!integer_type(g.tensor(t), DataType::kInt8) || scale_of(g.tensor(t)) <= 0)
            return refuse(
                ReasonCode::kQuantization,
                "integer kernel: weights '" + g.tensor(t).name + "' must be int8 per tensor");
      if (!integer_type(g.tensor(c.c), DataType::kInt16))
        return refuse(ReasonCode::kQuantization, "integer kernel: the cell state must be int16");
      if (!integer_type(g.tensor(c.h), DataType::kInt8))
        return refuse(ReasonCode::kQuantization, "integer kernel: the output state must be int8");
      if (c.projection &&
          (!integer_type(g.tensor(c.proj_w), DataType::kInt8) || scale_of(g.tensor(c.proj_w)) <= 0))
        return refuse(ReasonCode::kQuantization,
                      "integer kernel: projection weights must be int8 per tensor");
      if (c.layer_norm)
        for (int k = c.cifg ? 1 : 0; k < 4; ++k)
          if (!integer_type(g.tensor(c.ln[k]), DataType::kInt16))
            return refuse(ReasonCode::kQuantization,
                          "integer kernel: layer norm coefficients must be int16");
      if (c.peephole)
        for (TensorId t : c.p)
          if (t != ir::kNoTensor && !integer_type(g.tensor(t), DataType::kInt16))
            return refuse(ReasonCode::kQuantization,
                          "integer kernel: peephole weights must be int16");
      if (auto r = make_integer(g, n, c)) return r;
      if (auto r = constants_problem(g, c, scale_of(x))) return r;
    } else {
      if (w.dtype != DataType::kFloat32)
        return refuse(ReasonCode::kQuantization, "weights '" + w.name + "' have type " +
                                                     ir::to_string(w.dtype) +
                                                     " without quantization");
      if (g.tensor(c.h).quantized_type || g.tensor(c.c).quantized_type)
        return refuse(ReasonCode::kQuantization, "quantized states with float input");
      if (auto r = constants_problem(g, c, 0)) return r;
    }
  }
  return {};
}

Check check_sequence_lstm(const ir::Graph& g, const ir::Node& n) {
  Lstm l;
  return read_lstm(g, n, 0, l);
}
Check check_bidi_lstm(const ir::Graph& g, const ir::Node& n) {
  Lstm l;
  return read_lstm(g, n, 2, l);
}

// ---- the ONNX forms ----

// A constant of `values` if they are all known, else nullopt.
TensorId float_vector(Writer& w, const std::vector<float>& v, const std::string& suffix) {
  return w.constant(v, {static_cast<int64_t>(v.size())}, suffix);
}

// The gates of a cell present in this order: i (unless CIFG), f, c, o.
std::vector<int> gates(const Cell& c) {
  if (c.cifg) return {1, 2, 3};
  return {0, 1, 2, 3};
}

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

// Layer normalization of one gate, as the float kernel computes it:
// (x - mean) / sqrt(variance + 1e-8) * coefficients + bias.
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

// The unrolled cell over `order` (the steps, in the order the cell runs):
// `proj` holds every step's input projection (bias included unless layer
// norm), `x_axis` its time axis.
Result unroll(Writer& w, const Cell& c, TensorId proj, int64_t time_axis,
              const std::vector<int64_t>& order, const std::string& act, float cell_clip,
              float proj_clip, const std::string& prefix) {
  const ir::Graph& g = w.graph();
  const std::vector<int> gs = gates(c);
  const auto ng = static_cast<int64_t>(gs.size());
  const int64_t u = c.n_cell;
  const IntegerLstm* q = c.integer ? &*c.integer : nullptr;
  // Recurrent weights of every gate, R^T [n_output, G*U]; or the diagonal ones.
  std::vector<TensorId> rs;
  for (int k : gs) rs.push_back(c.r[static_cast<size_t>(k)]);
  TensorId r_t = c.diag ? w.stack_rows(rs, prefix + "recurrent")
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
  TensorId inv_gate = ir::kNoTensor;
  if (q) {
    std::vector<float> inv;
    for (int k : gs)
      inv.insert(inv.end(), static_cast<size_t>(u),
                 static_cast<float>(1.0 / q->gate_scale[static_cast<size_t>(k)]));
    inv_gate = float_vector(w, inv, "inverse_gate_steps");
  }
  TensorId proj_w_t =
      c.projection ? w.transposed(c.proj_w, prefix + "projection_t") : ir::kNoTensor;
  TensorId proj_b = ir::kNoTensor;
  if (c.projection && c.proj_b != ir::kNoTensor)
    proj_b =
        vec(c.proj_b, q ? scale_of(g.tensor(c.proj_w)) * q->hidden_scale : 0, "projection_bias");

  Result res;
  TensorId h = c.h, cs = c.c;
  const double q15 = std::ldexp(1.0, -15);
  for (int64_t t : order) {
    const std::string s = prefix + "t" + std::to_string(t) + "/";
    TensorId in = w.gather(proj, t, time_axis, s + "input");
    TensorId pre;
    if (q) {
      // Input part already in steps (see the caller); the recurrent part
      // rounded on its own, then added with saturation.
      TensorId rec =
          w.op("Round",
               {w.mul(w.op("MatMul", {h, r_t}, s + "recurrent"), inv_gate, s + "recurrent_scaled")},
               s + "recurrent_steps");
      pre = w.clip(w.add(in, rec, s + "sum"), -32768.f, 32767.f, s + "pre");
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
      TensorId v = w.mul(cell, peep[static_cast<size_t>(pk)], s + name + "_peephole");
      if (q) {
        v = w.op(
            "Round",
            {w.mul(v, w.scalar(static_cast<float>(1.0 / q->gate_scale[static_cast<size_t>(k)])),
                   s + name + "_peephole_scaled")},
            s + name + "_peephole_steps");
        x = w.clip(w.add(x, v, s + name + "_with_peephole"), -32768.f, 32767.f,
                   s + name + "_peephole_sum");
      } else {
        x = w.add(x, v, s + name + "_with_peephole");
      }
    };
    // Layer norm and activation of one gate; integer: the result in Q0.15.
    auto activate = [&](int k, const std::string& name, bool sigmoid) {
      const auto kk = static_cast<size_t>(k);
      TensorId x = gate[kk];
      if (q) {
        double in_scale = q->gate_scale[kk];
        if (c.layer_norm) {
          TensorId normed = layer_norm(w, x, ln_coef[kk], ln_bias[kk], 1e-8f, s + name + "_ln/");
          x = w.to_steps(normed, std::ldexp(1.0, -12), -32768, 32767, s + name + "_ln_steps");
          in_scale = std::ldexp(1.0, -12);
        }
        TensorId real = w.mul(x, w.scalar(static_cast<float>(in_scale)), s + name + "_real");
        TensorId a = w.op(sigmoid ? "Sigmoid" : "Tanh", {real}, s + name);
        return w.from_steps(w.to_steps(a, q15, -32768, 32767, s + name + "_q15"), q15,
                            s + name + "_gate");
      }
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
      const double sc = q->cell_scale;
      TensorId kept = w.to_steps(w.mul(f, cs, s + "forget"), sc, -32768, 32767, s + "kept");
      TensorId added =
          w.to_steps(w.mul(i, g_c, s + "input_times_cell"), sc, -32768, 32767, s + "added");
      TensorId steps = w.clip(w.add(kept, added, s + "cell_sum"), -32768.f, 32767.f, s + "cell");
      if (q->cell_clip > 0)
        steps = w.clip(steps, static_cast<float>(-q->cell_clip), static_cast<float>(q->cell_clip),
                       s + "cell_clipped");
      new_c = w.from_steps(steps, sc, s + "cell_real");
    } else {
      new_c = w.add(w.mul(f, cs, s + "forget"), w.mul(i, g_c, s + "input_times_cell"), s + "cell");
      if (cell_clip > 0) new_c = w.clip(new_c, -cell_clip, cell_clip, s + "cell_clipped");
    }
    peephole(3, new_c, "o");
    TensorId o = activate(3, "o", true);
    TensorId out;
    if (q) {
      TensorId th = w.from_steps(w.to_steps(w.op("Tanh", {new_c}, s + "cell_tanh"), q15, -32768,
                                            32767, s + "cell_tanh_q15"),
                                 q15, s + "cell_tanh_real");
      TensorId hid = w.mul(o, th, s + "hidden");
      TensorId steps;
      if (c.projection) {
        // The kernel writes the hidden value minus its zero point (clamped)
        // and adds the zero point back through the projection's bias.
        TensorId hs = w.to_steps(hid, q->hidden_scale, -128.0 + static_cast<double>(q->hidden_zp),
                                 127.0 + static_cast<double>(q->hidden_zp), s + "hidden_steps");
        TensorId hr = w.from_steps(hs, q->hidden_scale, s + "hidden_real");
        TensorId p = w.op("MatMul", {hr, proj_w_t}, s + "projection");
        if (proj_b != ir::kNoTensor) p = w.add(p, proj_b, s + "projection_biased");
        steps = w.add(w.op("Round",
                           {w.mul(p, w.scalar(static_cast<float>(1.0 / q->state_scale)),
                                  s + "projection_scaled")},
                           s + "projection_round"),
                      w.scalar(static_cast<float>(q->state_zp)), s + "projection_zp");
        steps = w.clip(steps, -128.f, 127.f, s + "output_steps");
        if (q->proj_clip > 0)
          steps = w.clip(steps, static_cast<float>(-q->proj_clip), static_cast<float>(q->proj_clip),
                         s + "output_clipped");
      } else {
        // Plus the hidden zero point, as TFLite's kernel adds it since the
        // fix of its sign (CwiseMul; older TFLite, tfjs-tflite's among them,
        // subtracted it: tests/numeric/known_fail.json, dtln).
        steps = w.add(w.op("Round",
                           {w.mul(hid, w.scalar(static_cast<float>(1.0 / q->hidden_scale)),
                                  s + "hidden_scaled")},
                           s + "hidden_round"),
                      w.scalar(static_cast<float>(q->hidden_zp)), s + "hidden_zp");
        steps = w.clip(steps, -128.f, 127.f, s + "output_steps");
      }
      // The same integers, as the output state and as the output read them.
      h = w.mul(w.add(steps, w.scalar(static_cast<float>(-q->state_zp)), s + "state_centered"),
                w.scalar(static_cast<float>(q->state_scale)), s + "state");
      out = w.mul(w.add(steps, w.scalar(static_cast<float>(-q->output_zp)), s + "out_centered"),
                  w.scalar(static_cast<float>(q->output_scale)), s + "out");
    } else {
      out = w.mul(o, w.activation(act, new_c, s + "cell_act"), s + "hidden");
      if (c.projection) {
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
TensorId project_inputs(Writer& w, const Cell& c, TensorId x, TensorId aux, double input_scale,
                        const std::string& prefix) {
  const ir::Graph& g = w.graph();
  std::vector<TensorId> ws, as;
  for (int k : gates(c)) {
    ws.push_back(c.w[static_cast<size_t>(k)]);
    if (aux != ir::kNoTensor) as.push_back(c.aux_w[static_cast<size_t>(k)]);
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
  if (c.integer) {
    std::vector<float> inv;
    for (int k : gates(c))
      inv.insert(inv.end(), static_cast<size_t>(c.n_cell),
                 static_cast<float>(1.0 / c.integer->gate_scale[static_cast<size_t>(k)]));
    p = w.clip(
        w.op("Round",
             {w.mul(p, float_vector(w, inv, prefix + "inverse_steps"), prefix + "input_scaled")},
             prefix + "input_round"),
        -32768.f, 32767.f, prefix + "input_steps");
  }
  return p;
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
Result run_direction(Writer& w, const Lstm& l, const Cell& c, TensorId x, TensorId aux,
                     bool reverse, const std::string& prefix, bool& joined,
                     std::optional<Error>& error) {
  const ir::Node& n = w.node();
  const std::string act = n.attrs.get_string("fused_activation_function", "NONE");
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  joined = false;
  // ONNX LSTM where it computes what TFLite's kernel does (measured 3-6x
  // faster than the unrolled cell: docs/architecture.md, "Recurrent ops").
  if (const char* onnx_act = onnx_lstm_activation(c, act, cell_clip)) {
    TensorId x_tm = l.time_major ? x
                                 : w.op("Transpose", {x}, prefix + "time_major",
                                        {{"perm", std::vector<int64_t>{1, 0, 2}}});
    joined = true;
    return onnx_lstm(w, c, x_tm, onnx_act, reverse, prefix);
  }
  const double input_scale = scale_of(w.graph().tensor(x));
  if (auto st = reserve_nodes(w.ctx(), n, l.steps * (c.integer ? 64 : 24) + 16); !st) {
    error = st.take_error();
    return {};
  }
  TensorId proj = project_inputs(w, c, x, aux, input_scale, prefix);
  std::vector<int64_t> order;
  for (int64_t t = 0; t < l.steps; ++t) order.push_back(reverse ? l.steps - 1 - t : t);
  Result r = unroll(w, c, proj, l.time_major ? 0 : 1, order, act, cell_clip, proj_clip, prefix);
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

Status lower_sequence_lstm(LowerContext& ctx, const ir::Node& n) {
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, 0, l)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  bool joined = false;
  std::optional<Error> error;
  Result r = run_direction(w, l, l.cells[0], n.inputs[0], ir::kNoTensor, false, "", joined, error);
  if (error) return *error;
  sequence_of(w, l, r, joined, l.cells[0].n_output, n.outputs[0], "output");
  write_states(w, n, 0, r, "");
  return ok_status();
}

Status lower_bidi_lstm(LowerContext& ctx, const ir::Node& n) {
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, 2, l)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  const TensorId x = n.inputs[0];
  const TensorId real_aux = l.bw_reads_aux ? ir::kNoTensor : l.aux;
  const TensorId bw_x = l.bw_reads_aux ? l.aux : x;
  bool fj = false, bj = false;
  std::optional<Error> error;
  Result fw = run_direction(w, l, l.cells[0], x, real_aux, false, "fw/", fj, error);
  if (error) return *error;
  Result bw = run_direction(w, l, l.cells[1], bw_x, real_aux, true, "bw/", bj, error);
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

// ---- LSTM (the single-step op): full and basic kernels ----

Check check_basic_lstm(const ir::Graph& g, const ir::Node& n) {
  // basic::Prepare: input [B, I], previous activation [B, U], weights
  // [4U, I+U], bias [4U], previous state [B, U]; four outputs.
  if (n.inputs.size() != 5) return refuse(ReasonCode::kOperands, "the basic kernel needs 5 inputs");
  if (own_outputs(n) != 4) return refuse(ReasonCode::kOperands, "the basic kernel needs 4 outputs");
  for (size_t i = 0; i < 5; ++i)
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[2]);
  if (!x.has_rank || x.rank() != 2 || !ir::static_shape(x))
    return refuse(ReasonCode::kShape, "input must be [batch, depth]");
  if (!w.has_rank || w.rank() != 2 || w.shape[0] % 4 != 0 || w.shape[0] < 4)
    return refuse(ReasonCode::kShape, "weights must be [4 * units, depth + units]");
  const int64_t units = w.shape[0] / 4;
  if (w.shape[1] != x.shape[1] + units)
    return refuse(ReasonCode::kShape, "weights must be [4 * units, depth + units]");
  if (auto r = shape_problem(g, n.inputs[1], {x.shape[0], units}, "previous activation")) return r;
  if (auto r = shape_problem(g, n.inputs[3], {4 * units}, "bias")) return r;
  if (auto r = shape_problem(g, n.inputs[4], {x.shape[0], units}, "previous state")) return r;
  for (size_t i : {size_t{0}, size_t{1}, size_t{4}})
    if (g.tensor(n.inputs[i]).quantized_type || g.tensor(n.inputs[i]).dtype != DataType::kFloat32)
      return refuse(ReasonCode::kQuantization,
                    "the quantized basic kernel (uint8 with an int16 state) is not converted");
  if (g.tensor(n.inputs[2]).dtype != DataType::kFloat32 || g.tensor(n.inputs[2]).quantized_type)
    return refuse(ReasonCode::kQuantization,
                  "the quantized basic kernel (uint8 with an int16 state) is not converted");
  if (!g.tensor(n.inputs[2]).is_const() || !g.tensor(n.inputs[3]).is_const())
    return refuse(ReasonCode::kRuntimeValue, "weights and bias must be constants");
  return {};
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

Check check_lstm(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("kernel_type") == 1) return check_basic_lstm(g, n);
  Lstm l;
  if (auto r = read_lstm(g, n, 1, l)) return r;
  if (state_output(n, 2) == ir::kNoTensor || state_output(n, 3) == ir::kNoTensor)
    return refuse(ReasonCode::kState,
                  "inputs 18 and 19 (output and cell state) must be variable tensors, as TFLite's "
                  "kernel requires");
  return {};
}

Status lower_lstm(LowerContext& ctx, const ir::Node& n) {
  if (n.attrs.get_int("kernel_type") == 1) return lower_basic_lstm(ctx, n);
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, 1, l)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  // One step: the sequence of one time-major step.
  TensorId x = w.unsqueeze(n.inputs[0], {0}, "as_sequence");
  bool joined = false;
  std::optional<Error> error;
  Result r = run_direction(w, l, l.cells[0], x, ir::kNoTensor, false, "", joined, error);
  if (error) return *error;
  if (joined)
    w.op_into(n.outputs[0], "Squeeze", {r.outputs[0], w.ints({0})}, "output");
  else
    w.op_into(n.outputs[0], "Identity", {r.outputs[0]}, "output");
  write_states(w, n, 2, r, "");
  return ok_status();
}

// ---- shapes, options, entries ----

std::optional<std::vector<Shape>> infer_sequence_lstm(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const TensorId r_o = slot(g, n, 8);
  const TensorId proj = slot(g, n, 16);
  if (!ir::static_shape(x) || x.rank() < 2 || r_o == ir::kNoTensor) return std::nullopt;
  const ir::Tensor& r = g.tensor(r_o);
  int64_t out = r.rank() == 2 ? r.shape[1] : r.rank() == 1 ? r.shape[0] : -1;
  if (proj != ir::kNoTensor && g.tensor(proj).rank() == 2) out = g.tensor(proj).shape[0];
  if (out < 0) return std::nullopt;
  Shape s = x.shape;
  s.back() = out;
  return std::vector<Shape>{s};
}

std::optional<std::vector<Shape>> infer_lstm(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("kernel_type") == 1) {
    if (n.inputs.size() != 5 || own_outputs(n) != 4 || !has_input(g, n, 0) || !has_input(g, n, 2))
      return std::nullopt;
    const ir::Tensor& x = g.tensor(n.inputs[0]);
    const ir::Tensor& w = g.tensor(n.inputs[2]);
    if (!ir::static_shape(x) || x.rank() != 2 || w.rank() != 2) return std::nullopt;
    const int64_t u = w.shape[0] / 4;
    return std::vector<Shape>{
        {x.shape[0], u}, {x.shape[0], u}, {x.shape[0], w.shape[1]}, {x.shape[0], w.shape[0]}};
  }
  return infer_sequence_lstm(g, n);
}

std::optional<std::vector<Shape>> infer_bidi_lstm(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!ir::static_shape(x) || x.rank() != 3 || n.inputs.size() < 48) return std::nullopt;
  auto out_size = [&](int r_slot, int proj_slot) -> int64_t {
    const TensorId r = slot(g, n, r_slot), p = slot(g, n, proj_slot);
    if (p != ir::kNoTensor && g.tensor(p).rank() == 2) return g.tensor(p).shape[0];
    if (r == ir::kNoTensor) return -1;
    const ir::Tensor& t = g.tensor(r);
    return t.rank() == 2 ? t.shape[1] : t.rank() == 1 ? t.shape[0] : -1;
  };
  const int64_t fw = out_size(8, 16), bw = out_size(25, 33);
  if (fw < 0 || bw < 0) return std::nullopt;
  Shape a = x.shape, b = x.shape;
  if (n.attrs.get_int("merge_outputs") != 0) {
    a.back() = fw + bw;
    return std::vector<Shape>{a};
  }
  a.back() = fw;
  b.back() = bw;
  return std::vector<Shape>{a, b};
}

template <class Options>
void read_lstm_options(const Options* o, ir::Attributes& a) {
  store_activation(o, a);
  a.set("cell_clip", o ? o->cell_clip() : 0.f);
  a.set("proj_clip", o ? o->proj_clip() : 0.f);
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
}

constexpr const char* kLstmNotes =
    "peephole, projection, layer norm, cell and projection clipping, CIFG, diagonal recurrent "
    "weights; float, hybrid (int8 weights, computed in float) and full-integer int8 (8x8_16, "
    "computed in float on the integer kernel's grids); states are model state";

void read_sequence_lstm_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_UnidirectionalSequenceLSTMOptions();
  read_lstm_options(o, a);
  a.set("time_major", int64_t{o && o->time_major() ? 1 : 0});
}

void read_bidi_lstm_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_BidirectionalSequenceLSTMOptions();
  read_lstm_options(o, a);
  a.set("time_major", int64_t{o == nullptr || o->time_major() ? 1 : 0});
  a.set("merge_outputs", int64_t{o && o->merge_outputs() ? 1 : 0});
}

void read_one_step_lstm_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_LSTMOptions();
  read_lstm_options(o, a);
  a.set("kernel_type", int64_t{o ? static_cast<int>(o->kernel_type()) : 0});
}

}  // namespace

OpEntry unidirectional_sequence_lstm() {
  return {.read = {.options = read_sequence_lstm_options},
          .infer_shapes = infer_sequence_lstm,
          .check = check_sequence_lstm,
          .lower = lower_sequence_lstm,
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
          .lower = lower_bidi_lstm,
          .state = {.inputs = {35, 36, 37, 38}},
          .doc = {.onnx = "two LSTMs (forward, reverse) where they match TFLite exactly, else "
                          "both cells unrolled; Concat for merge_outputs",
                  .dtypes = "float32, int8 weights",
                  .notes = "time_major, merge_outputs, auxiliary input (stacking and not); the "
                           "four states are model state; float and hybrid"}};
}

OpEntry lstm() {
  return {.read = {.options = read_one_step_lstm_options},
          .infer_shapes = infer_lstm,
          .check = check_lstm,
          .lower = lower_lstm,
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
