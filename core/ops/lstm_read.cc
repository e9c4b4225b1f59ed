// The LSTM family as TFLite reads it: the input slots of each cell
// (lstm_shared.h, bidirectional_sequence_lstm.cc), the checks of the kernels'
// Prepare (shapes of every weight, bias and state; CIFG, peephole, layer norm
// and projection tensors all present or absent; input counts; the types of
// the float, hybrid and integer kernels), so a model TFLite refuses is
// refused naming the tensor; and the output shapes and options.
#include <cstring>

#include "core/ir/shape.h"
#include "core/ops/lstm.h"

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

TensorId slot(const ir::Graph& g, const ir::Node& n, int s) {
  if (s < 0 || static_cast<size_t>(s) >= n.inputs.size()) return ir::kNoTensor;
  return g.valid(n.inputs[static_cast<size_t>(s)]) ? n.inputs[static_cast<size_t>(s)]
                                                   : ir::kNoTensor;
}

bool integer_type(const ir::Tensor& t, DataType type) {
  return t.quantized_type == type || (!t.quantized_type && t.dtype == type);
}

Check shape_problem(const ir::Graph& g, TensorId t, const Shape& want, const char* what) {
  const ir::Tensor& x = g.tensor(t);
  if (!x.has_rank || x.shape != want)
    return refuse(ReasonCode::kShape, std::string(what) + " '" + x.name + "' has shape " +
                                          ir::to_string(x.shape) + ", TFLite's kernel needs " +
                                          ir::to_string(want));
  return {};
}

// Resolves the cell of `slots` and checks it; nothing or the problem.
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

// Whether every small constant the converter folds (biases, peepholes, layer
// norm coefficients) can be read, with the scales the kernel reads them
// with; nothing or the problem.
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

Check check_options(const ir::Node& n) {
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  if (!(cell_clip >= 0) || !(proj_clip >= 0))
    return refuse(ReasonCode::kOperands, "negative or NaN clipping");
  return check_recurrent_activation(n, false);
}

}  // namespace

std::optional<std::vector<float>> real_values(const ir::Tensor& t, double scale) {
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

Check read_lstm(const ir::Graph& g, const ir::Node& n, LstmKind kind, Lstm& l) {
  const bool bidirectional = kind == LstmKind::kBidirectional;
  if (auto r = check_options(n)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  l.sequence = kind != LstmKind::kOneStep;
  l.time_major = kind == LstmKind::kOneStep || n.attrs.get_int("time_major") != 0;
  if (!x.has_rank) return refuse(ReasonCode::kShape, "input '" + x.name + "' has no shape");
  if (l.sequence && x.rank() != 3) return refuse(ReasonCode::kShape, "input must have rank 3");
  if (!l.sequence && x.rank() != 2) return refuse(ReasonCode::kShape, "input must have rank 2");
  l.steps = l.sequence ? (l.time_major ? x.shape[0] : x.shape[1]) : 1;
  const TensorId state = slot(g, n, bidirectional ? kBidiFw.h : kFull.h);
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
  if (bidirectional) {
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
  const bool ln_allowed = !bidirectional && n.inputs.size() == 24;
  std::vector<const Slots*> dirs = {bidirectional ? &kBidiFw : &kFull};
  if (bidirectional) dirs.push_back(&kBidiBw);
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
  if (bidirectional) {
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
  return read_lstm(g, n, LstmKind::kUnidirectional, l);
}
Check check_bidi_lstm(const ir::Graph& g, const ir::Node& n) {
  Lstm l;
  return read_lstm(g, n, LstmKind::kBidirectional, l);
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

Check check_lstm(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("kernel_type") == 1) return check_basic_lstm(g, n);
  Lstm l;
  if (auto r = read_lstm(g, n, LstmKind::kOneStep, l)) return r;
  if (state_output(n, 2) == ir::kNoTensor || state_output(n, 3) == ir::kNoTensor)
    return refuse(ReasonCode::kState,
                  "inputs 18 and 19 (output and cell state) must be variable tensors, as TFLite's "
                  "kernel requires");
  return {};
}

// ---- shapes and options ----

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

namespace {

template <class Options>
void read_lstm_options(const Options* o, ir::Attributes& a) {
  store_activation(o, a);
  a.set("cell_clip", o ? o->cell_clip() : 0.f);
  a.set("proj_clip", o ? o->proj_clip() : 0.f);
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
}

}  // namespace

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

}  // namespace lite2onnx::ops::recurrent
