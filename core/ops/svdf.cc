// SVDF as TFLite's kernel computes it (svdf.cc, reference/svdf.h): float,
// hybrid (int8 weights: the feature product as EvalHybridSVDF, each input row
// quantized at run time; from the dequantized weights with --quantization
// dequantize) and integer (int8 with an int16 state: in integers as
// EvalIntegerSVDF in the default and exact modes; with --quantization qdq or
// dequantize in float on the kernel's grids); the state (the last
// memory_size activations of each filter) is model state.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/recurrent.h"

namespace lite2onnx::ops::recurrent {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

constexpr size_t kSvdfInput = 0, kSvdfFeature = 1, kSvdfTime = 2, kSvdfBias = 3, kSvdfState = 4;

struct SvdfDims {
  int64_t batch = 0, input = 0, filters = 0, units = 0, memory = 0, rank = 1;
  bool integer = false;
};

// The small constant's real values: float as it is, integers times `scale`
// (int8: f32(q * s), as the hybrid kernel dequantizes its time weights).
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
    } else if (d.stored_type == DataType::kInt8) {
      out[i] = static_cast<float>(static_cast<int8_t>(d.bytes[i])) * static_cast<float>(scale);
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

// `hybrid`: the feature product in the hybrid kernel's arithmetic (the
// exact form of a hybrid SVDF), else in float.
Status lower_svdf_with(LowerContext& ctx, const ir::Node& n, const HybridProduct& hybrid) {
  SvdfDims d;
  if (auto r = read_svdf(ctx.graph(), n, d)) return ctx.error(n, r->text);
  Writer w(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& st = g.tensor(n.inputs[kSvdfState]);
  const double state_scale = scale_of(st);
  // The feature activation of this step, [B, F] (integer: on the state's grid).
  TensorId a = hybrid.on() ? hybrid(n.inputs[kSvdfInput], {n.inputs[kSvdfFeature]}, "feature")
                           : w.matmul_t(n.inputs[kSvdfInput], n.inputs[kSvdfFeature], "feature");
  if (d.integer)
    a = w.from_steps(w.to_steps(a, state_scale, -32768, 32767, "feature_steps"), state_scale,
                     "feature_real");
  // The hybrid kernel's time weights, dequantized (in exact mode quantized
  // constants hold their integers; the Q/DQ graph's DequantizeLinear is the same).
  TensorId time = n.inputs[kSvdfTime];
  if (hybrid.on() && g.tensor(time).quantized_type) {
    const ir::Tensor& wt = g.tensor(time);
    const Shape shape = wt.shape;
    time = w.constant(*scaled_values(wt, scale_of(wt)), shape, "time_weights");
  }
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
  TensorId per_filter = w.op("ReduceSum", {w.mul(shifted, time, "time"), w.ints({2})}, "per_filter",
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

Status lower_svdf(LowerContext& ctx, const ir::Node& n) { return lower_svdf_with(ctx, n, {}); }

// The integers of a constant int8, int16 or int32 tensor with `count`
// elements, or nullopt.
std::optional<std::vector<int64_t>> integer_values(const ir::Tensor& t, int64_t count) {
  if (!t.is_const() || !t.data) return std::nullopt;
  std::vector<int64_t> v;
  auto read = [&](auto one) {
    using T = decltype(one);
    for (T x : t.data->as<T>()) v.push_back(x);
  };
  switch (t.data->stored_type) {
    case DataType::kInt8:
      read(int8_t{});
      break;
    case DataType::kInt16:
      read(int16_t{});
      break;
    case DataType::kInt32:
      read(int32_t{});
      break;
    default:
      return std::nullopt;
  }
  if (static_cast<int64_t>(v.size()) != count) return std::nullopt;
  return v;
}

// The largest |Σ_i w_f[f, i] (x_i - z_x)| the feature weights allow.
int64_t feature_bound(const std::vector<int64_t>& feature, const SvdfDims& d,
                      const exact::Params& px) {
  const int64_t reach = std::max(px.zero - px.lo, px.hi - px.zero);
  int64_t bound = 0;
  for (int64_t f = 0; f < d.filters; ++f) {
    int64_t row = 0;
    for (int64_t i = 0; i < d.input; ++i) {
      const int64_t v = feature[static_cast<size_t>(f * d.input + i)];
      row += (v < 0 ? -v : v) * reach;
    }
    bound = std::max(bound, row);
  }
  return bound;
}

// ReduceSum of `x` over axis 2 (dropped): axes an input from opset 13 on.
exact::Value reduce_axis2(exact::Writer& w, const exact::Value& x, int64_t terms,
                          const char* what) {
  exact::Value sum = x;
  const __int128 lo = static_cast<__int128>(x.lo) * terms, hi = static_cast<__int128>(x.hi) * terms;
  const bool wide =
      lo < std::numeric_limits<int32_t>::min() || hi > std::numeric_limits<int32_t>::max();
  const exact::Value in = wide ? w.cast(x, DataType::kInt64) : w.cast(x, DataType::kInt32);
  sum.type = in.type;
  sum.lo = static_cast<int64_t>(lo);
  sum.hi = static_cast<int64_t>(hi);
  sum.id = w.temp(sum.type, what);
  ir::Node& r = w.emit("ReduceSum", {in.id}, sum.id, what);
  r.attrs.set("keepdims", int64_t{0});
  if (w.ctx().opset() >= 13)
    r.inputs.push_back(w.ctx().const_i64(w.node().name + "/" + what + "_axes", {2}));
  else
    r.attrs.set("axes", std::vector<int64_t>{2});
  return sum;
}

// --quantization exact, integer SVDF (reference_ops::EvalIntegerSVDF): the
// feature sum Σ w_f (x - z_x) in int32, MBQM by f32(f32(s_x s_wf) / s_state)
// (float products: the scales are floats) and clamped to int16 as the newest
// state column; each filter's state times its int16 time weights, summed per
// unit with the bias in int32 (which wraps: the kernel's sums may pass it),
// then MBQM by f32(f32(s_state s_wt) / s_y) plus z_y, clamped to int8. The
// kernel requires RELU and applies nothing beyond the output's range.
Status lower_svdf_exact(LowerContext& ctx, const ir::Node& n) {
  SvdfDims d;
  if (auto r = read_svdf(ctx.graph(), n, d)) return ctx.error(n, r->text);
  if (!d.integer) {
    // Hybrid (EvalHybridSVDF): the feature product as the kernel computes
    // it; the time weights, dequantized, and the rest in float as it does.
    return lower_with_hybrid_product(
        ctx, n, [&](const HybridProduct& hybrid) { return lower_svdf_with(ctx, n, hybrid); });
  }
  exact::hold_integers(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[kSvdfInput]);
  const ir::Tensor& wf = g.tensor(n.inputs[kSvdfFeature]);
  const ir::Tensor& wt = g.tensor(n.inputs[kSvdfTime]);
  const ir::Tensor& st = g.tensor(n.inputs[kSvdfState]);
  const exact::Params px = exact::params_of(x), pwf = exact::params_of(wf),
                      pwt = exact::params_of(wt), pst = exact::params_of(st),
                      py = exact::params_of(g.tensor(n.outputs[0]));
  auto feature = integer_values(wf, d.filters * d.input);
  auto time = integer_values(wt, d.filters * d.memory);
  std::optional<std::vector<int64_t>> bias;
  if (has_input(g, n, kSvdfBias)) bias = integer_values(g.tensor(n.inputs[kSvdfBias]), d.units);
  if (!feature || !time || (has_input(g, n, kSvdfBias) && !bias))
    return ctx.error(n, "weights or bias are not integer constants of their shapes");
  exact::Writer w(ctx, n);

  // The feature sums, [B, F]: MatMulInteger with the weights read as [I, F].
  std::vector<int64_t> transposed(feature->size());
  for (int64_t f = 0; f < d.filters; ++f)
    for (int64_t i = 0; i < d.input; ++i)
      transposed[static_cast<size_t>(i * d.filters + f)] =
          (*feature)[static_cast<size_t>(f * d.input + i)];
  exact::Value acc = w.accumulator();
  acc.lo = -feature_bound(*feature, d, px);
  acc.hi = -acc.lo;
  w.emit("MatMulInteger",
         {n.inputs[kSvdfInput],
          w.tensor(w.channels(transposed, {d.input, d.filters}), DataType::kInt8),
          w.tensor(w.constant(px.zero), DataType::kInt8)},
         acc.id, "feature");
  const qmath::Multiplier m1 =
      qmath::quantize_multiplier(qmath::fp32_scale(px.scale, pwf.scale, pst.scale));
  const exact::Value newest =
      w.cast(w.clip(exact::mbqm(w, acc, std::span(&m1, 1), {}), pst.lo, pst.hi), DataType::kInt16);

  // The state [B, F*M] holds each filter's last M values, oldest first: the
  // kernel shifts the whole buffer by one and writes the newest column.
  const TensorId s3 = w.temp(DataType::kInt16, "state_filters");
  w.emit("Reshape",
         {n.inputs[kSvdfState],
          ctx.const_i64(n.name + "/state_filters_shape", {d.batch, d.filters, d.memory})},
         s3, "state_filters");
  const TensorId column = w.temp(DataType::kInt16, "newest");
  w.emit("Reshape", {newest.id, ctx.const_i64(n.name + "/newest_shape", {d.batch, d.filters, 1})},
         column, "newest");
  TensorId shifted = column;
  if (d.memory > 1) {
    const TensorId kept = w.temp(DataType::kInt16, "state_kept");
    w.emit("Slice",
           {s3, ctx.const_i64(n.name + "/kept_start", {1}),
            ctx.const_i64(n.name + "/kept_end", {d.memory}),
            ctx.const_i64(n.name + "/kept_axis", {2})},
           kept, "state_kept");
    shifted = w.temp(DataType::kInt16, "state_shifted");
    w.emit("Concat", {kept, column}, shifted, "state_shifted").attrs.set("axis", int64_t{2});
  }
  if (TensorId out = state_output(n, 0); out != ir::kNoTensor)
    w.emit("Reshape",
           {shifted, ctx.const_i64(n.name + "/state_shape", {d.batch, d.filters * d.memory})}, out,
           "next_state");

  // Σ_m w_t[f, m] state[b, f, m], then the rank's filters of each unit, the bias.
  exact::Value state = w.integers(n.inputs[kSvdfState]);
  state.id = shifted;
  const exact::Value products = w.mul(state, w.channels(*time, {d.filters, d.memory}));
  exact::Value sum = reduce_axis2(w, products, d.memory, "per_filter");
  if (d.rank > 1) {
    exact::Value ranks = sum;
    ranks.id = w.temp(sum.type, "per_rank");
    w.emit("Reshape",
           {sum.id, ctx.const_i64(n.name + "/per_rank_shape", {d.batch, d.units, d.rank})},
           ranks.id, "per_rank");
    sum = reduce_axis2(w, ranks, d.rank, "per_unit");
  }
  if (bias) sum = w.add(sum, w.channels(*bias, {d.units}));
  // The kernel sums in int32: beyond it the sums wrap.
  if (sum.lo < std::numeric_limits<int32_t>::min() || sum.hi > std::numeric_limits<int32_t>::max())
    sum = exact::wrap_int32(w, sum);
  const double scale2 = qmath::fp32_scale(pst.scale, pwt.scale, py.scale);
  w.store(exact::requantize(w, sum, exact::Requantization::kDouble, std::span(&scale2, 1), {}, py,
                            py.lo, py.hi),
          n.outputs[0]);
  return w.result();
}

// A hybrid SVDF: int8 feature weights of one scale. The integer kernel
// assumes symmetric weights and state (it never reads their zero points);
// the multipliers' left shifts must keep the int32 sums from wrapping.
Check check_svdf_exact(const ir::Graph& g, const ir::Node& n) {
  SvdfDims d;
  if (auto r = read_svdf(g, n, d)) return r;
  if (!d.integer) {
    const ir::Tensor& wt = g.tensor(n.inputs[kSvdfTime]);
    if (wt.quantized_type && (!exact::per_tensor(wt) || zp_of(wt) != 0 ||
                              wt.quantized_type != DataType::kInt8 || !scaled_values(wt, 1)))
      return refuse(ReasonCode::kQuantization,
                    "hybrid time weights that are not int8 of one scale and zero point 0");
    return exact::check_builtin_hybrid_weight(g.tensor(n.inputs[kSvdfFeature]));
  }
  for (size_t i : {kSvdfFeature, kSvdfTime, kSvdfState})
    if (zp_of(g.tensor(n.inputs[i])) != 0 || !exact::per_tensor(g.tensor(n.inputs[i])))
      return refuse(ReasonCode::kQuantization,
                    "'" + g.tensor(n.inputs[i]).name +
                        "' is not quantized per tensor with zero point 0 (the kernel assumes it)");
  const exact::Params px = exact::params_of(g.tensor(n.inputs[kSvdfInput])),
                      pwf = exact::params_of(g.tensor(n.inputs[kSvdfFeature])),
                      pwt = exact::params_of(g.tensor(n.inputs[kSvdfTime])),
                      pst = exact::params_of(g.tensor(n.inputs[kSvdfState])),
                      py = exact::params_of(g.tensor(n.outputs[0]));
  // MBQM's left shift multiplies the int32 sum first (in int32): the feature
  // sums times it stay below 2^31; the time sums, which may already wrap,
  // take no left shift.
  const float scale1 = qmath::fp32_scale(px.scale, pwf.scale, pst.scale);
  const float scale2 = qmath::fp32_scale(pst.scale, pwt.scale, py.scale);
  if (!(scale1 > 0) || !(scale2 > 0) || !(scale2 < 1.0f) || !(scale1 < 65536.0f))
    return refuse(ReasonCode::kQuantization,
                  "an SVDF rescale out of range (its int32 arithmetic would wrap)");
  auto feature = integer_values(g.tensor(n.inputs[kSvdfFeature]), d.filters * d.input);
  if (!feature) return refuse(ReasonCode::kType, "feature weights must be int8 constants");
  const int left = std::max(qmath::quantize_multiplier(scale1).shift, 0);
  if ((static_cast<__int128>(feature_bound(*feature, d, px)) << left) >= (__int128{1} << 31))
    return refuse(ReasonCode::kQuantization,
                  "feature sums that can pass int32 after the rescale's left shift");
  if (!integer_values(g.tensor(n.inputs[kSvdfTime]), d.filters * d.memory) ||
      (has_input(g, n, kSvdfBias) && !integer_values(g.tensor(n.inputs[kSvdfBias]), d.units)))
    return refuse(ReasonCode::kType, "time weights and bias must be int16 and int32 constants");
  return std::nullopt;
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

}  // namespace

OpEntry svdf() {
  return {.read = {.min_inputs = 3, .options = read_svdf_options},
          .infer_shapes = infer_svdf,
          .check = check_svdf,
          .lower = lower_svdf,
          .quantization = {.exact = {lower_svdf_exact, check_svdf_exact,
                                     InQdqGraphs::kQuantizedAndHybrid}},
          .state = {.inputs = {static_cast<int>(kSvdfState)}},
          .doc = {.onnx = "MatMul, Slice, Concat, Mul, ReduceSum, Reshape, activation",
                  .dtypes = "float32, int8 weights, int8 (int16 state)",
                  .notes = "rank >= 1; the state (the last memory_size activations of each "
                           "filter) is model state; float, hybrid (int8 weights: the feature "
                           "product as TFLite's hybrid kernel) and integer (int8 with int16 "
                           "state: in integers as TFLite's kernel; with --quantization qdq or "
                           "dequantize in float, on the kernel's grids)"}};
}

}  // namespace lite2onnx::ops::recurrent
