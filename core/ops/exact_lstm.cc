// --quantization exact: the full-integer LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM
// and the one-step LSTM with int8 activations and weights, int16 cell state),
// as TFLite's 8x8_16 kernel computes it (lstm_eval.cc LstmStepInteger8x8_16,
// its parameters from PopulateQuantizedLstmParams8x8_16 and
// PopulatePrecomputedZPTimesWeightsWithBias, the integer helpers of
// portable_tensor_utils.cc), bit for bit, in ONNX integer arithmetic:
//
//   gate k:  g = clamp16(clamp16(MBQM(Σ x w + b_in, M_in)) + MBQM(Σ h r + b_rec, M_rec))
//            (+ MBQM(c p, M_peephole), clamped, for the peephole gates; then
//            the integer layer norm, exact_lstm_norm.cc, where the op has it)
//            then gemmlowp's 16-bit sigmoid of g as F3 (tanh for the cell gate)
//   cell:    c = clamp16(RDBPOT(f c, 15) + RDBPOT(i g, 30 + cell_exponent)), clipped
//   hidden:  m = clamp8(MBQM(o tanh(c as F<15 + cell_exponent>), M_hidden) + z_hidden)
//   output:  without projection h = m; with it (the kernel writes m with
//            -z_hidden and folds z_hidden into the bias) clamp8(MBQM(Σ m p +
//            b_proj, M_proj) + z_state), clipped
//
// where the effective biases hold the zero points (b_in = bias - z_x Σ w,
// b_rec = -z_h Σ r, b_proj = bias + z_hidden Σ p). The cell is unrolled over
// the sequence; the input part of every step is one MatMulInteger. The 16-bit
// activations are tables of their 65,536 results (one Gather each).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/ops/exact.h"
#include "core/ops/lstm.h"

namespace lite2onnx::ops::recurrent {

using exact::Value;
using ir::DataType;
using ir::TensorId;

namespace {

// The integers of an int8, int16 or int32 constant.
std::vector<int64_t> integers_of(const ir::Tensor& t) {
  std::vector<int64_t> out;
  if (!t.is_const()) return out;
  const ir::ConstData& d = *t.data;
  const size_t size = ir::element_size(d.stored_type);
  for (size_t i = 0; (i + 1) * size <= d.bytes.size(); ++i) {
    const std::byte* p = d.bytes.data() + i * size;
    if (d.stored_type == DataType::kInt8) {
      out.push_back(static_cast<int8_t>(*p));
    } else if (d.stored_type == DataType::kInt16) {
      int16_t v;
      std::memcpy(&v, p, 2);
      out.push_back(v);
    } else if (d.stored_type == DataType::kInt32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      out.push_back(v);
    }
  }
  return out;
}

float scale_f(const ir::Tensor& t) { return static_cast<float>(scale_of(t)); }

// The parameters of the kernel, as its Prepare computes them.
struct Params {
  std::vector<int> gates;  // present gates in order i, f, c, o
  // Per present gate (indexed like `gates`): effective multipliers.
  std::vector<qmath::Multiplier> input_m, recurrent_m;
  std::array<qmath::Multiplier, 4> peephole_m{};
  qmath::Multiplier hidden_m, proj_m;
  int cell_exponent = -11;
  int64_t hidden_zp = 0, state_zp = 0, input_zp = 0;
  int64_t cell_clip = 0, proj_clip = 0;
  std::array<IntegerLayerNorm, 4> layer_norm{};  // per gate, with layer norm
};

// PopulateQuantizedLstmParams8x8_16: float32 effective scales (double where
// the kernel writes std::pow), QuantizeMultiplier of each.
Params params_of(const ir::Graph& g, const ir::Node& n, const Cell& c) {
  Params p;
  p.gates = gates(c);
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& h = g.tensor(c.h);
  const float sx = scale_f(x), sh = scale_f(h);
  const float hidden_scale = n.attrs.get_floats("intermediate_scales")[4];
  p.hidden_zp = n.attrs.get_ints("intermediate_zero_points")[4];
  p.state_zp = zp_of(h);
  p.input_zp = zp_of(x);
  int e = 0;
  std::frexp(scale_of(g.tensor(c.c)), &e);
  p.cell_exponent = e - 1;
  for (int k : p.gates) {
    const auto kk = static_cast<size_t>(k);
    const float gate_scale = static_cast<float>(c.integer->gate_scale[kk]);
    p.input_m.push_back(qmath::quantize_multiplier(scale_f(g.tensor(c.w[kk])) * sx / gate_scale));
    p.recurrent_m.push_back(
        qmath::quantize_multiplier(scale_f(g.tensor(c.r[kk])) * sh / gate_scale));
    const int pk = k == 3 ? 2 : k;
    if (k != 2 && c.p[static_cast<size_t>(pk)] != ir::kNoTensor)
      p.peephole_m[kk] = qmath::quantize_multiplier(
          static_cast<float>(std::pow(2.0, p.cell_exponent) *
                             scale_f(g.tensor(c.p[static_cast<size_t>(pk)])) / gate_scale));
  }
  if (c.layer_norm)
    for (int k : p.gates) {
      const auto kk = static_cast<size_t>(k);
      const float scale = scale_f(g.tensor(c.ln[kk]));
      IntegerLayerNorm& ln = p.layer_norm[kk];
      ln.weights = integers_of(g.tensor(c.ln[kk]));
      ln.bias = integers_of(g.tensor(c.b[kk]));
      ln.scale = qmath::quantize_multiplier(scale);
      ln.variance_guard = std::max(1, static_cast<int32_t>(10000 * scale));
    }
  p.hidden_m = qmath::quantize_multiplier(
      static_cast<float>(std::pow(2.0, -15) / hidden_scale * std::pow(2.0, -15)));
  if (c.projection)
    p.proj_m = qmath::quantize_multiplier(scale_f(g.tensor(c.proj_w)) * hidden_scale / sh);
  const float cell_clip = n.attrs.get_float("cell_clip");
  const float proj_clip = n.attrs.get_float("proj_clip");
  if (cell_clip > 0)
    p.cell_clip = static_cast<int16_t>(
        std::min(std::max(cell_clip / scale_f(g.tensor(c.c)), -32768.0f), 32767.0f));
  if (proj_clip > 0)
    p.proj_clip = static_cast<int8_t>(
        std::min(std::max(proj_clip / scale_f(g.tensor(n.outputs[0])), -128.0f), 127.0f));
  return p;
}

// Row-stacked [rows, cols] int8 weights, transposed: [cols, Σ rows], with
// each row's sum (the zero points' terms) and the largest Σ |w| of a row.
struct Stacked {
  TensorId matrix = ir::kNoTensor;
  std::vector<int64_t> row_sums;
  int64_t largest_abs_sum = 0;
};

Stacked stack_transposed(exact::Writer& w, const ir::Graph& g, const std::vector<TensorId>& parts,
                         int64_t cols) {
  Stacked s;
  std::vector<std::vector<int64_t>> rows;
  for (TensorId t : parts) {
    const std::vector<int64_t> v = integers_of(g.tensor(t));
    for (size_t r = 0; r + 1 <= v.size() / static_cast<size_t>(cols); ++r)
      rows.emplace_back(
          v.begin() + static_cast<std::ptrdiff_t>(r * static_cast<size_t>(cols)),
          v.begin() + static_cast<std::ptrdiff_t>((r + 1) * static_cast<size_t>(cols)));
  }
  std::vector<int64_t> t(rows.size() * static_cast<size_t>(cols));
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t sum = 0, abs_sum = 0;
    for (size_t k = 0; k < static_cast<size_t>(cols); ++k) {
      t[k * rows.size() + r] = rows[r][k];
      sum += rows[r][k];
      abs_sum += std::abs(rows[r][k]);
    }
    s.row_sums.push_back(sum);
    s.largest_abs_sum = std::max(s.largest_abs_sum, abs_sum);
  }
  s.matrix = w.tensor(w.channels(std::move(t), {cols, static_cast<int64_t>(rows.size())}),
                      DataType::kInt8);
  return s;
}

// Σ_k a[..., k] m[k, j] of int8 `a` (a tensor) and a stacked matrix, exact
// in int32 (TFLite's int32 sum).
Value product(exact::Writer& w, TensorId a, const Stacked& m) {
  Value acc;
  acc.type = DataType::kInt32;
  acc.hi = 128 * m.largest_abs_sum;
  acc.lo = -acc.hi;
  acc.id = w.temp(DataType::kInt32, "product");
  w.emit("MatMulInteger", {a, m.matrix}, acc.id, "product");
  return acc;
}

// One multiplier per present gate, repeated over its `units` columns.
std::vector<qmath::Multiplier> per_column(const std::vector<qmath::Multiplier>& m, int64_t units) {
  std::vector<qmath::Multiplier> out;
  for (const auto& one : m) out.insert(out.end(), static_cast<size_t>(units), one);
  return out;
}

// A 65,536-entry int16 table of a 16-bit function, ordered for Gather by the
// raw value (0..32767, then -32768..-1 from the end); one initializer.
TensorId table16(exact::Writer& w, int64_t (*fn)(int64_t, int), int arg) {
  std::vector<int64_t> t(65536);
  for (int64_t i = 0; i < 65536; ++i)
    t[static_cast<size_t>(i)] = fn(i < 32768 ? i : i - 65536, arg);
  return w.tensor(w.channels(std::move(t), {65536}), DataType::kInt16);
}

Value lookup16(exact::Writer& w, TensorId table, const Value& x) {
  Value out;
  out.type = DataType::kInt16;
  out.lo = -32768;
  out.hi = 32767;
  out.id = w.temp(DataType::kInt16, "activation");
  w.emit("Gather", {table, w.tensor(x, DataType::kInt32)}, out.id, "activation");
  return out;
}

int64_t sigmoid_entry(int64_t q, int) { return qmath::fixed_logistic16(q); }
int64_t tanh_entry(int64_t q, int bits) { return qmath::fixed_tanh16(q, bits); }

// The Slice bounds of one gate's columns [begin, end) of the last axis.
struct Columns {
  TensorId begin = ir::kNoTensor, end = ir::kNoTensor, axis = ir::kNoTensor;
};
Columns columns_of(exact::Writer& w, size_t gate, int64_t units) {
  LowerContext& ctx = w.ctx();
  const std::string name = w.node().name + "/gate" + std::to_string(gate);
  const auto begin = static_cast<int64_t>(gate) * units;
  return {ctx.const_i64(name + "_begin", {begin}), ctx.const_i64(name + "_end", {begin + units}),
          ctx.const_i64(name + "_axis", {-1})};
}

Value columns(exact::Writer& w, const Value& x, const Columns& c) {
  Value out = x;
  out.id = w.temp(x.type, "gate");
  w.emit("Slice", {x.id, c.begin, c.end, c.axis}, out.id, "gate");
  return out;
}

// Element t of `axis` (the axis goes).
Value step_of(exact::Writer& w, const Value& x, int64_t t, int64_t axis) {
  Value out = x;
  out.id = w.temp(x.type, "step");
  const TensorId index = w.ctx().const_scalar(w.node().name + "/step" + std::to_string(t),
                                              DataType::kInt64, static_cast<double>(t));
  w.emit("Gather", {x.id, index}, out.id, "step").attrs.set("axis", axis);
  return out;
}

// x with a new shape; columns [begin, end) of a 2-D x.
Value reshaped(exact::Writer& w, const Value& x, std::vector<int64_t> shape) {
  Value out = x;
  out.id = w.temp(x.type, "reshaped");
  const auto rank = static_cast<int64_t>(shape.size());
  w.emit("Reshape", {x.id, w.tensor(w.channels(std::move(shape), {rank}), DataType::kInt64)},
         out.id, "reshaped");
  return out;
}
Value column_range(exact::Writer& w, const Value& x, int64_t begin, int64_t end) {
  Value out = x;
  out.id = w.temp(x.type, "range");
  w.emit("Slice",
         {x.id, w.tensor(w.channels({begin}, {1}), DataType::kInt64),
          w.tensor(w.channels({end}, {1}), DataType::kInt64),
          w.tensor(w.channels({1}, {1}), DataType::kInt64)},
         out.id, "range");
  return out;
}

// gate + MBQM(cell * weights), saturated: VectorBatchVectorCwiseProductAccumulate
// as lstm_eval calls it, with the vector size n_output where n_cell is meant.
// With a projection the two differ and the kernel walks the flat
// [n_batch * n_cell] arrays of one call n_output at a time: element j <
// n_batch * n_output takes weight j mod n_output, the rest of the gate stays
// as it is. One call takes `together` batches (all when time-major, one when
// batch-major: EvalInteger8x8_16 steps each batch on its own then).
Value with_peephole(exact::Writer& w, const Value& gate, const Value& cell,
                    const std::vector<int64_t>& weights, const qmath::Multiplier& m, int64_t batch,
                    int64_t together, int64_t units, int64_t outputs) {
  const std::span<const qmath::Multiplier> one(&m, 1);
  if (outputs == units) {
    const Value prod = exact::mbqm(w, w.mul(cell, w.channels(weights, {units})), one, {});
    return w.clip(w.add(gate, prod), -32768, 32767);
  }
  const int64_t touched = together * outputs, width = together * units;
  std::vector<int64_t> tiled;
  for (int64_t j = 0; j < touched; ++j) tiled.push_back(weights[static_cast<size_t>(j % outputs)]);
  const Value calls_gate = reshaped(w, gate, {batch / together, width});
  const Value calls_cell = reshaped(w, cell, {batch / together, width});
  const Value prod = exact::mbqm(
      w, w.mul(column_range(w, calls_cell, 0, touched), w.channels(std::move(tiled), {touched})),
      one, {});
  const Value head =
      w.cast(w.clip(w.add(column_range(w, calls_gate, 0, touched), prod), -32768, 32767),
             DataType::kInt32);
  const Value tail = w.cast(column_range(w, calls_gate, touched, width), DataType::kInt32);
  Value joined = head;
  joined.lo = -32768;
  joined.hi = 32767;
  joined.id = w.temp(DataType::kInt32, "peephole");
  w.emit("Concat", {head.id, tail.id}, joined.id, "peephole").attrs.set("axis", int64_t{1});
  return reshaped(w, joined, {batch, units});
}

void copy_into(exact::Writer& w, const Value& v, TensorId out) {
  w.emit("Identity", {v.id}, out, "state");
}

Value rdbpot(exact::Writer& w, const Value& x, int exponent) {
  return w.rhaz_div(x, w.constant(int64_t{1} << exponent));
}

Status lower_integer_lstm(LowerContext& ctx, const ir::Node& n, LstmKind kind) {
  Lstm l;
  if (auto r = read_lstm(ctx.graph(), n, kind, l)) return ctx.error(n, r->text);
  if (!l.cells[0].integer) return lower_hybrid_lstm(ctx, n, kind);
  const ir::Graph& g = ctx.graph();
  const Cell& c = l.cells[0];
  const Params p = params_of(g, n, c);
  const int64_t units = c.n_cell;
  const auto ng = static_cast<int64_t>(p.gates.size());
  const int64_t per_gate = c.layer_norm ? 90 : 12;
  if (Status st = reserve_nodes(ctx, n, l.steps * (40 + per_gate * ng) + 16); !st.ok()) return st;
  exact::Writer w(ctx, n);

  // Input weights and recurrent weights of every present gate, stacked.
  std::vector<TensorId> ws, rs;
  for (int k : p.gates) {
    ws.push_back(c.w[static_cast<size_t>(k)]);
    rs.push_back(c.r[static_cast<size_t>(k)]);
  }
  const Stacked in_w = stack_transposed(w, g, ws, c.n_input);
  const Stacked rec_w = stack_transposed(w, g, rs, c.n_output);
  // Effective biases: the gate bias (not with layer norm) minus z_x Σ w; -z_h Σ r.
  std::vector<int64_t> in_bias, rec_bias;
  for (size_t gi = 0; gi < p.gates.size(); ++gi) {
    const auto kk = static_cast<size_t>(p.gates[gi]);
    const std::vector<int64_t> b =
        c.layer_norm ? std::vector<int64_t>{} : integers_of(g.tensor(c.b[kk]));
    for (int64_t u = 0; u < units; ++u) {
      const size_t col = gi * static_cast<size_t>(units) + static_cast<size_t>(u);
      in_bias.push_back((b.empty() ? 0 : b[static_cast<size_t>(u)]) -
                        p.input_zp * in_w.row_sums[col]);
      rec_bias.push_back(-p.state_zp * rec_w.row_sums[col]);
    }
  }
  const ir::Shape columns_shape = {ng * units};
  const auto in_m = per_column(p.input_m, units), rec_m = per_column(p.recurrent_m, units);

  // The input part of every step at once, saturated to int16.
  const TensorId x = n.inputs[0];
  Value in_all = w.add(product(w, x, in_w), w.channels(in_bias, columns_shape));
  in_all = w.clip(exact::mbqm(w, in_all, in_m, columns_shape), -32768, 32767);
  in_all = w.cast(in_all, DataType::kInt32);

  const TensorId sigmoid = table16(w, sigmoid_entry, 0);
  const TensorId tanh_gate = table16(w, tanh_entry, 3);
  const TensorId tanh_cell = table16(w, tanh_entry, 15 + p.cell_exponent);
  std::array<std::vector<int64_t>, 3> peephole_weights;
  for (size_t k = 0; k < 3; ++k)
    if (c.p[k] != ir::kNoTensor) peephole_weights[k] = integers_of(g.tensor(c.p[k]));
  Stacked proj_w;
  std::vector<int64_t> proj_bias;
  if (c.projection) {
    proj_w = stack_transposed(w, g, {c.proj_w}, c.n_cell);
    const std::vector<int64_t> b =
        c.proj_b != ir::kNoTensor ? integers_of(g.tensor(c.proj_b)) : std::vector<int64_t>{};
    for (int64_t o = 0; o < c.n_output; ++o)
      proj_bias.push_back((b.empty() ? 0 : b[static_cast<size_t>(o)]) +
                          p.hidden_zp * proj_w.row_sums[static_cast<size_t>(o)]);
  }

  std::vector<Columns> gate_columns;
  for (size_t gi = 0; gi < p.gates.size(); ++gi) gate_columns.push_back(columns_of(w, gi, units));
  Value h = w.integers(c.h), cell = w.integers(c.c);
  std::vector<TensorId> outputs;
  const int64_t time_axis = l.time_major ? 0 : 1;
  for (int64_t t = 0; t < l.steps; ++t) {
    const Value in_t = kind == LstmKind::kOneStep ? in_all : step_of(w, in_all, t, time_axis);
    Value rec =
        w.add(product(w, w.tensor(h, DataType::kInt8), rec_w), w.channels(rec_bias, columns_shape));
    rec = exact::mbqm(w, rec, rec_m, columns_shape);
    const Value pre = w.clip(w.add(in_t, rec), -32768, 32767);
    std::array<Value, 4> gate;
    for (size_t gi = 0; gi < p.gates.size(); ++gi)
      gate[static_cast<size_t>(p.gates[gi])] = columns(w, pre, gate_columns[gi]);
    // The peephole term of gate k (i and f see the old cell state, o the new).
    auto peephole = [&](int k, const Value& cs) {
      const auto pk = static_cast<size_t>(k == 3 ? 2 : k);
      const auto kk = static_cast<size_t>(k);
      if (c.p[pk] == ir::kNoTensor) return;
      gate[kk] = with_peephole(w, gate[kk], cs, peephole_weights[pk], p.peephole_m[kk], l.batch,
                               l.time_major ? l.batch : 1, units, c.n_output);
    };
    auto normalize = [&](int k) {
      const auto kk = static_cast<size_t>(k);
      if (c.layer_norm) gate[kk] = integer_layer_norm(w, gate[kk], p.layer_norm[kk], units);
    };
    if (!c.cifg) peephole(0, cell);
    peephole(1, cell);
    for (int k : {0, 1, 2})
      if (k != 0 || !c.cifg) normalize(k);
    const Value f = lookup16(w, sigmoid, gate[1]);
    const Value g_c = lookup16(w, tanh_gate, gate[2]);
    const Value i = c.cifg ? w.sub(w.constant(32767), f) : lookup16(w, sigmoid, gate[0]);
    // The cell: RDBPOT(f c, 15) + RDBPOT(i g, 30 + exponent), saturated, clipped.
    const Value kept = rdbpot(w, w.mul(f, cell), 15);
    const Value added = rdbpot(w, w.mul(i, g_c), 30 + p.cell_exponent);
    Value new_cell = w.clip(w.add(kept, added), -32768, 32767);
    if (p.cell_clip > 0) new_cell = w.clip(new_cell, -p.cell_clip, p.cell_clip);
    peephole(3, new_cell);
    normalize(3);
    const Value o = lookup16(w, sigmoid, gate[3]);
    const Value th = lookup16(w, tanh_cell, new_cell);
    const Value hidden = exact::mbqm(w, w.mul(o, th), std::span(&p.hidden_m, 1), {});
    if (c.projection) {
      // The kernel writes the hidden value with -z_hidden (b/246629213) and
      // folds +z_hidden into the projection's bias.
      const Value m = w.clip(w.sub(hidden, w.constant(p.hidden_zp)), -128, 127);
      Value y = w.add(product(w, w.tensor(m, DataType::kInt8), proj_w),
                      w.channels(proj_bias, {c.n_output}));
      y = exact::mbqm(w, y, std::span(&p.proj_m, 1), {});
      h = w.clip(w.add(y, w.constant(p.state_zp)), -128, 127);
      if (p.proj_clip > 0) h = w.clip(h, -p.proj_clip, p.proj_clip);
    } else {
      h = w.clip(w.add(hidden, w.constant(p.hidden_zp)), -128, 127);
    }
    h = w.cast(h, DataType::kInt8);
    cell = w.cast(new_cell, DataType::kInt16);
    outputs.push_back(h.id);
  }
  // The outputs: [B, O] per step into [T, B, O] or [B, T, O].
  const TensorId out = n.outputs[0];
  if (kind == LstmKind::kOneStep) {
    copy_into(w, h, out);
  } else {
    const TensorId joined = w.temp(DataType::kInt8, "steps");
    w.emit("Concat", outputs, joined, "steps")
        .attrs.set("axis", l.time_major ? int64_t{0} : int64_t{1});
    const std::vector<int64_t> shape = l.time_major
                                           ? std::vector<int64_t>{l.steps, l.batch, c.n_output}
                                           : std::vector<int64_t>{l.batch, l.steps, c.n_output};
    w.emit("Reshape", {joined, ctx.const_i64(n.name + "/output_shape", shape)}, out, "output");
  }
  const size_t first = kind == LstmKind::kOneStep ? 2 : 0;
  if (TensorId s = state_output(n, first); s != ir::kNoTensor) copy_into(w, h, s);
  if (TensorId s = state_output(n, first + 1); s != ir::kNoTensor) copy_into(w, cell, s);
  return w.result();
}

// The variants the exact form covers.
Check check_integer_lstm(const ir::Graph& g, const ir::Node& n, LstmKind kind) {
  Lstm l;
  if (auto r = read_lstm(g, n, kind, l)) return r;
  const Cell& c = l.cells[0];
  if (!c.integer) return check_hybrid_lstm(g, n, kind);
  if (c.diag) return refuse(ReasonCode::kNotImplemented, "diagonal recurrent weights");
  // The kernel's peephole product reads n_output elements per batch where it
  // means n_cell (with_peephole): more outputs than cells would read past
  // the cell state.
  if (c.peephole && c.n_output > c.n_cell)
    return refuse(ReasonCode::kOperands,
                  "peephole weights with more outputs than cells (TFLite's kernel reads past its "
                  "cell state)");
  // The kernel reads the biases as int32 (the gates', and the projection's).
  std::vector<TensorId> biases = {c.proj_b};
  for (int k : gates(c)) biases.push_back(c.b[static_cast<size_t>(k)]);
  for (TensorId t : biases)
    if (t != ir::kNoTensor && g.tensor(t).data->stored_type != DataType::kInt32)
      return refuse(ReasonCode::kQuantization,
                    "integer kernel: bias '" + g.tensor(t).name + "' must be int32");
  const Params p = params_of(g, n, c);
  // ApplyLayerNorm's last MBQM shifts left by the coefficients' shift + 12:
  // the exact form keeps that within int32 only when it is no shift left.
  if (c.layer_norm)
    for (int k : p.gates)
      if (p.layer_norm[static_cast<size_t>(k)].scale.shift + 12 > 0)
        return refuse(ReasonCode::kQuantization,
                      "layer norm coefficients with a scale of 2^-12 or more (the kernel's "
                      "rescaling would shift left and can wrap)");
  // ApplyTanh takes 0..6 integer bits; i g / 2^(30 + e) must fit int16.
  if (p.cell_exponent < -15 || p.cell_exponent > -9)
    return refuse(ReasonCode::kQuantization, "a cell state scale of 2^" +
                                                 std::to_string(p.cell_exponent) +
                                                 " (the kernel's tanh takes 2^-15 .. 2^-9)");
  if (l.batch < 1) return refuse(ReasonCode::kShape, "dynamic batch");
  return std::nullopt;
}

Status lower_sequence_exact(LowerContext& ctx, const ir::Node& n) {
  return lower_integer_lstm(ctx, n, LstmKind::kUnidirectional);
}
Check check_sequence_exact(const ir::Graph& g, const ir::Node& n) {
  return check_integer_lstm(g, n, LstmKind::kUnidirectional);
}
Status lower_one_step_exact(LowerContext& ctx, const ir::Node& n) {
  return lower_integer_lstm(ctx, n, LstmKind::kOneStep);
}
Check check_one_step_exact(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("kernel_type") == 1)
    return refuse(ReasonCode::kNotImplemented, "the basic LSTM kernel in --quantization exact");
  return check_integer_lstm(g, n, LstmKind::kOneStep);
}
// TFLite has no integer bidirectional kernel: its exact form is the hybrid one.
Status lower_bidi_exact(LowerContext& ctx, const ir::Node& n) {
  return lower_hybrid_lstm(ctx, n, LstmKind::kBidirectional);
}
Check check_bidi_exact(const ir::Graph& g, const ir::Node& n) {
  return check_hybrid_lstm(g, n, LstmKind::kBidirectional);
}

}  // namespace

// (Integer LSTMs take their integer form in auto too: their cell states are int16.)
ExactForm sequence_lstm_exact() {
  return {lower_sequence_exact, check_sequence_exact, InQdqGraphs::kQuantizedAndHybrid};
}
ExactForm one_step_lstm_exact() {
  return {lower_one_step_exact, check_one_step_exact, InQdqGraphs::kQuantizedAndHybrid};
}
ExactForm bidi_lstm_exact() { return {lower_bidi_exact, check_bidi_exact, InQdqGraphs::kHybrid}; }

}  // namespace lite2onnx::ops::recurrent
