// SVDF as TFLite's kernel computes it (svdf.cc, reference/svdf.h): float,
// hybrid (int8 weights, computed in float) and integer (int8 with an int16
// state, computed in float on the kernel's grids); the state (the last
// memory_size activations of each filter) is model state.
#include <cstring>

#include "core/ir/shape.h"
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
          .state = {.inputs = {static_cast<int>(kSvdfState)}},
          .doc = {.onnx = "MatMul, Slice, Concat, Mul, ReduceSum, Reshape, activation",
                  .dtypes = "float32, int8 weights, int8 (int16 state)",
                  .notes = "rank >= 1; the state (the last memory_size activations of each "
                           "filter) is model state; float, hybrid (int8 weights, computed in "
                           "float) and integer (int8 with int16 state, computed in float on the "
                           "kernel's grids)"}};
}

}  // namespace lite2onnx::ops::recurrent
