// --quantization exact for hybrid FULLY_CONNECTED (float input, int8
// weights) as LiteRT.js runs it: XNNPACK's dynamically quantized (qd8)
// kernel, docs/quantization-arithmetic.md §5. Every float step is one ONNX
// float32 operation in the kernel's order; the integer sum is exact.
#include <algorithm>
#include <cstring>

#include "core/ops/exact.h"

namespace lite2onnx::ops::exact {
namespace {

using ir::DataType;
using ir::TensorId;

// One float32 ONNX op per step of a kernel's run-time quantization of a row.
class RowSteps {
 public:
  RowSteps(Writer& w, TensorId x, std::vector<int64_t> axes, const std::string& what)
      : w_(w), x_(x), axes_(std::move(axes)), prefix_(w.node().name + "/" + what) {}
  TensorId scalar(double v, DataType type = DataType::kFloat32) {
    return w_.ctx().const_scalar(prefix_ + "/c" + std::to_string(constants_++), type, v);
  }
  TensorId step(const char* op, std::vector<TensorId> in, DataType type = DataType::kFloat32) {
    const TensorId out = w_.temp(type, op);
    w_.emit(op, std::move(in), out, op);
    return out;
  }
  // The row's ReduceMin / ReduceMax / ... of `in` (x by default), kept as 1.
  TensorId reduce(const char* op, TensorId in = ir::kNoTensor) {
    const TensorId out = w_.temp(DataType::kFloat32, op);
    ir::Node& r = w_.emit(op, {in == ir::kNoTensor ? x_ : in}, out, op);
    r.attrs.set("keepdims", int64_t{1});
    if (w_.ctx().opset() >= 18)
      r.inputs.push_back(
          w_.ctx().const_i64(prefix_ + "/" + op + std::to_string(constants_++), axes_));
    else
      r.attrs.set("axes", axes_);
    return out;
  }
  // C's round(): half away from zero, where ONNX's Round goes to even.
  TensorId round_away(TensorId v, DataType type = DataType::kFloat32) {
    return w_.round_half_away(v, type);
  }
  TensorId cast(TensorId in, DataType type, const char* what) {
    const TensorId out = w_.temp(type, what);
    w_.emit("Cast", {in}, out, what).attrs.set("to", int64_t{ir::onnx_type_code(type)});
    return out;
  }

 private:
  Writer& w_;
  TensorId x_;
  std::vector<int64_t> axes_;
  std::string prefix_;
  int constants_ = 0;
};

// The float32 bias of node n per channel (0 where the model has none: + 0
// changes nothing but -0).
std::vector<float> hybrid_bias(LowerContext& ctx, const ir::Node& n, size_t slot,
                               int64_t channels) {
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (slot < n.inputs.size() && ctx.graph().valid(n.inputs[slot])) {
    const ir::Tensor& b = ctx.tensor(n.inputs[slot]);
    std::memcpy(bias.data(), b.data->bytes.data(),
                std::min(bias.size() * sizeof(float), b.data->bytes.size()));
  }
  return bias;
}

int64_t product(const ir::Shape& shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
}

}  // namespace

RowQuantization quantize_rows(Writer& w, TensorId x, const std::vector<int64_t>& axes) {
  RowSteps r(w, x, axes, "rows");
  // The row's range, widened to hold 0; its scale (1 for an all-zero row).
  const TensorId low = r.step("Min", {r.reduce("ReduceMin"), r.scalar(0)});
  const TensorId high = r.step("Max", {r.reduce("ReduceMax"), r.scalar(0)});
  const TensorId ratio = r.step("Div", {r.scalar(255), r.step("Sub", {high, low})});
  const TensorId scale =
      r.step("Where", {r.step("Equal", {low, high}, DataType::kBool), r.scalar(1), ratio});
  // The zero point: from the end of the range with the smaller error, RNE.
  const TensorId dmin = r.step("Mul", {low, scale}), dmax = r.step("Mul", {high, scale});
  const TensorId total =
      r.step("Add", {r.step("Add", {r.scalar(-128), dmin}), r.step("Add", {r.scalar(127), dmax})});
  const TensorId from_min = r.step("Sub", {r.scalar(-128), dmin}),
                 from_max = r.step("Sub", {r.scalar(127), dmax});
  const TensorId zero_float = r.step(
      "Round",
      {r.step("Clip", {r.step("Where", {r.step("Greater", {total, r.scalar(0)}, DataType::kBool),
                                        from_min, from_max}),
                       r.scalar(-128), r.scalar(127)})});
  // q = clamp(RNE(f32(x * scale)) + zero, -128, 127).
  const TensorId q_float =
      r.step("Clip", {r.step("Add", {r.step("Round", {r.step("Mul", {x, scale})}), zero_float}),
                      r.scalar(-128), r.scalar(127)});
  RowQuantization q;
  q.integers = r.cast(q_float, DataType::kInt8, "integers");
  q.zero.type = DataType::kInt32;
  q.zero.lo = -128;
  q.zero.hi = 127;
  q.zero.id = r.cast(zero_float, DataType::kInt32, "zero");
  // Reciprocal, not Div(1, scale): ONNX Runtime's DivMulFusion rewrites
  // Mul(a, Div(1, s)) into Div(a, s), which rounds once where the kernel
  // rounds twice.
  q.dequantization_scale = r.step("Reciprocal", {scale});
  return q;
}

RowQuantization quantize_rows_tflite(Writer& w, TensorId x, const std::vector<int64_t>& axes,
                                     const std::string& what) {
  RowSteps r(w, x, axes, what);
  constexpr DataType kF64 = DataType::kFloat64;
  const TensorId low = r.step("Min", {r.reduce("ReduceMin"), r.scalar(0)});
  const TensorId high = r.step("Max", {r.reduce("ReduceMax"), r.scalar(0)});
  const TensorId empty = r.step("Equal", {low, high}, DataType::kBool);  // scale 1, zero 0
  // In double: scale = (rmax - rmin) / 255 and the zero point with the
  // smaller error, clamped, rounded half away from zero.
  const TensorId low_d = r.cast(low, kF64, "low"), high_d = r.cast(high, kF64, "high");
  const TensorId scale_d =
      r.step("Div", {r.step("Sub", {high_d, low_d}, kF64), r.scalar(255, kF64)}, kF64);
  const TensorId divisor = r.step("Where", {empty, r.scalar(1, kF64), scale_d}, kF64);
  const TensorId low_q = r.step("Div", {low_d, divisor}, kF64);
  const TensorId high_q = r.step("Div", {high_d, divisor}, kF64);
  const TensorId from_min_error =
      r.step("Add", {r.scalar(128, kF64), r.step("Abs", {low_q}, kF64)}, kF64);
  const TensorId from_max_error =
      r.step("Add", {r.scalar(127, kF64), r.step("Abs", {high_q}, kF64)}, kF64);
  const TensorId zero_d = r.step("Where",
                                 {r.step("Less", {from_min_error, from_max_error}, DataType::kBool),
                                  r.step("Sub", {r.scalar(-128, kF64), low_q}, kF64),
                                  r.step("Sub", {r.scalar(127, kF64), high_q}, kF64)},
                                 kF64);
  const TensorId zero_clamped = r.step(
      "Min", {r.step("Max", {zero_d, r.scalar(-128, kF64)}, kF64), r.scalar(127, kF64)}, kF64);
  const TensorId zero_float =
      r.step("Where", {empty, r.scalar(0),
                       r.cast(r.round_away(zero_clamped, kF64), DataType::kFloat32, "zero_float")});
  // sf = f32(scale); q = clamp(round(f32(zero + f32(x * f32(1 / sf)))), -128, 127).
  const TensorId scale =
      r.step("Where", {empty, r.scalar(1), r.cast(scale_d, DataType::kFloat32, "scale")});
  const TensorId v = r.step("Add", {zero_float, r.step("Mul", {x, r.step("Reciprocal", {scale})})});
  RowQuantization q;
  q.integers =
      r.cast(r.step("Min", {r.step("Max", {r.round_away(v), r.scalar(-128)}), r.scalar(127)}),
             DataType::kInt8, "integers");
  q.zero.type = DataType::kInt32;
  q.zero.lo = -128;
  q.zero.hi = 127;
  q.zero.id = r.cast(zero_float, DataType::kInt32, "zero");
  q.dequantization_scale = scale;
  return q;
}

bool builtin_hybrid(const ir::Tensor& weight) {
  return weight.quant && weight.quant->uint8_hybrid_weight;
}

SymmetricRows quantize_rows_symmetric(Writer& w, TensorId x, const std::vector<int64_t>& axes,
                                      const std::vector<float>& weight_scales,
                                      const std::string& what) {
  RowSteps r(w, x, axes, what);
  // range = max(|min|, |max|); an all-zero row has scale 1 and integers 0.
  const TensorId range = r.reduce("ReduceMax", r.step("Abs", {x}));
  const TensorId zero_row = r.step("Equal", {range, r.scalar(0)}, DataType::kBool);
  const TensorId divisor = r.step("Where", {zero_row, r.scalar(1), range});
  const TensorId inverse = r.step("Div", {r.scalar(127), divisor});
  // q = clamp(round(f32(x * 127 / range)), -127, 127), rounding half away
  // from zero (C's round) where ONNX's Round goes to even.
  const TensorId rounded = r.round_away(r.step("Mul", {x, inverse}));
  SymmetricRows q;
  q.integers =
      r.cast(r.step("Clip", {rounded, r.scalar(-127), r.scalar(127)}), DataType::kInt8, "integers");
  // f32(f32(range / 127) * s_w), s_w for an all-zero row. The Where last:
  // ONNX Runtime's MatMulIntegerToFloatFusion takes MatMulInteger, Cast and a
  // Mul of two scales into one kernel that rounds otherwise.
  const TensorId s_w =
      weight_scales.size() == 1
          ? r.scalar(weight_scales[0])
          : w.ctx().const_f32(w.node().name + "/" + what + "_weight_scales", weight_scales,
                              ir::Shape{static_cast<int64_t>(weight_scales.size())});
  q.scale =
      r.step("Where", {zero_row, s_w, r.step("Mul", {r.step("Div", {range, r.scalar(127)}), s_w})});
  return q;
}

void builtin_hybrid_output(Writer& w, const Value& acc, TensorId scale,
                           const ir::Shape& channel_shape, TensorId out) {
  LowerContext& ctx = w.ctx();
  const ir::Node& n = w.node();
  const TensorId scaled = w.temp(DataType::kFloat32, "scaled");
  w.emit("Mul", {w.to_float(acc), scale}, scaled, "scaled");
  w.emit("Add",
         {scaled, ctx.const_f32(n.name + "/hybrid_bias",
                                hybrid_bias(ctx, n, 2, product(channel_shape)), channel_shape)},
         out, "bias");
}

void hybrid_output(Writer& w, const Value& acc, TensorId dequantization_scale, LinearOp op,
                   const ir::Shape& channel_shape, TensorId out) {
  LowerContext& ctx = w.ctx();
  const ir::Node& n = w.node();
  const size_t bias_slot = op == LinearOp::kTransposeConv ? 3 : 2;
  const ir::Tensor& weight = ctx.tensor(n.inputs[1]);
  const int64_t channels = product(channel_shape);
  std::vector<float> scales = weight.quant->scale;
  if (scales.size() == 1) scales.assign(static_cast<size_t>(channels), scales[0]);
  const TensorId dequantized = w.temp(DataType::kFloat32, "dequantized");
  w.emit("Mul", {w.to_float(acc), dequantization_scale}, dequantized, "dequantized");
  const TensorId scaled = w.fmul(dequantized, std::move(scales), channel_shape);
  w.emit("Add",
         {scaled, ctx.const_f32(n.name + "/hybrid_bias", hybrid_bias(ctx, n, bias_slot, channels),
                                channel_shape)},
         out, "bias");
}

Check check_hybrid(const ir::Graph& g, const ir::Node& n, LinearOp op) {
  const size_t data = op == LinearOp::kTransposeConv ? 2 : 0,
               bias = op == LinearOp::kTransposeConv ? 3 : 2;
  const ir::Tensor& x = g.tensor(n.inputs[data]);
  const ir::Tensor& weight = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != DataType::kFloat32 || y.dtype != DataType::kFloat32 || y.quantized_type)
    return refuse(ReasonCode::kType, "a hybrid op with other than float32 input and output");
  if (!weight.is_const() || !weight.quant || weight.quantized_type != DataType::kInt8)
    return refuse(ReasonCode::kNotImplemented,
                  "hybrid weights that are not constant int8 have no integer form for "
                  "--quantization exact yet");
  if (builtin_hybrid(weight)) {
    const auto& s = weight.quant->scale;
    if (s.empty() || std::any_of(s.begin(), s.end(), [&](float v) { return v != s[0]; }))
      return refuse(ReasonCode::kQuantization,
                    "uint8 hybrid weights with per-channel scales (TFLite's per-channel hybrid "
                    "kernel) have no integer form for --quantization exact yet");
    if (n.attrs.get_int("asymmetric_quantize_inputs") != 0)
      return refuse(ReasonCode::kNotImplemented,
                    "uint8 hybrid weights with asymmetric_quantize_inputs have no integer form "
                    "for --quantization exact yet");
  }
  // XNNPACK's qd8 kernels run int8 hybrid FC and CONV_2D unless its delegate
  // refuses the model (TFLite's builtin hybrid kernel then runs: not written).
  if (!builtin_hybrid(weight) && op != LinearOp::kDepthwise && builtin_kernels_only(n))
    return refuse_builtin_kernel();
  for (int64_t z : weight.quant->zero_point)
    if (z != 0)
      return refuse(ReasonCode::kQuantization,
                    "hybrid weights with a zero point (XNNPACK's qc8w weights are symmetric)");
  if (bias < n.inputs.size() && g.valid(n.inputs[bias]) &&
      (!g.tensor(n.inputs[bias]).is_const() ||
       g.tensor(n.inputs[bias]).dtype != DataType::kFloat32))
    return refuse(ReasonCode::kNotImplemented, "a hybrid bias that is not a float32 constant");
  return check_activation_range(n);
}

Check check_builtin_hybrid_weight(const ir::Tensor& weight) {
  if (!weight.is_const() || !weight.quant || !weight.has_rank || weight.rank() != 2 ||
      weight.quantized_type != DataType::kInt8 ||
      weight.data->bytes.size() != static_cast<size_t>(product(weight.shape)))
    return refuse(ReasonCode::kNotImplemented,
                  "hybrid weights '" + weight.name +
                      "' that are not a constant int8 matrix have no integer form yet");
  if (weight.quant->scale.size() != 1 ||
      std::any_of(weight.quant->zero_point.begin(), weight.quant->zero_point.end(),
                  [](int64_t z) { return z != 0; }))
    return refuse(ReasonCode::kQuantization,
                  "hybrid weights '" + weight.name +
                      "' need one scale and zero point 0 (the kernel reads params.scale only)");
  return std::nullopt;
}

TensorId builtin_hybrid_rows(Writer& w, TensorId x, const std::vector<TensorId>& weights,
                             bool asymmetric, const std::string& what) {
  // The weights stacked along their units, read before any tensor is added
  // (which moves the graph's tensors): [depth, units] int8 for MatMulInteger,
  // each column's row sum and weight scale.
  const int64_t depth = w.ctx().tensor(weights.at(0)).shape[1];
  int64_t units = 0;
  for (TensorId id : weights) units += w.ctx().tensor(id).shape[0];
  std::vector<int64_t> transposed(static_cast<size_t>(units * depth)), row_sums;
  std::vector<float> scales;
  int64_t column = 0;
  for (TensorId id : weights) {
    const ir::Tensor& weight = w.ctx().tensor(id);
    const int64_t rows = weight.shape[0];
    for (int64_t u = 0; u < rows; ++u)
      for (int64_t k = 0; k < depth; ++k)
        transposed[static_cast<size_t>(k * units + column + u)] =
            static_cast<int8_t>(weight.data->bytes[static_cast<size_t>(u * depth + k)]);
    const std::vector<int64_t> sums = weight_row_sums(weight, rows);
    row_sums.insert(row_sums.end(), sums.begin(), sums.end());
    scales.insert(scales.end(), static_cast<size_t>(rows), weight.quant->scale[0]);
    column += rows;
  }
  if (std::all_of(scales.begin(), scales.end(), [&](float s) { return s == scales[0]; }))
    scales.resize(1);
  const TensorId matrix =
      w.tensor(w.channels(std::move(transposed), {depth, units}), DataType::kInt8);
  Value acc = w.accumulator();
  acc.lo = -128 * 127 * depth;
  acc.hi = 128 * 127 * depth;
  TensorId scale;
  if (asymmetric) {
    // Σ (q - z) w = Σ q w - z Σ w; the scale f32(sf * s_w).
    // (The rows along the last axis: the intermediates carry no shapes.)
    const RowQuantization rows = quantize_rows_tflite(w, x, {-1}, what + "_rows");
    w.emit("MatMulInteger", {rows.integers, matrix}, acc.id, what + "_accumulator");
    acc = w.sub(acc, w.mul(rows.zero, w.channels(row_sums, {units})));
    const std::string name = w.node().name + "/" + what + "_weight_scales";
    scale = w.apply("Mul",
                    {rows.dequantization_scale,
                     scales.size() == 1 ? w.ctx().const_scalar(name, DataType::kFloat32, scales[0])
                                        : w.ctx().const_f32(name, scales, ir::Shape{units})},
                    DataType::kFloat32);
  } else {
    const SymmetricRows rows = quantize_rows_symmetric(w, x, {-1}, scales, what + "_rows");
    w.emit("MatMulInteger", {rows.integers, matrix}, acc.id, what + "_accumulator");
    scale = rows.scale;
  }
  return w.apply("Mul", {w.to_float(acc), scale}, DataType::kFloat32);
}

std::vector<int64_t> weight_row_sums(const ir::Tensor& weight, int64_t channels) {
  std::vector<int64_t> sums(static_cast<size_t>(channels), 0);
  const auto& bytes = weight.data->bytes;
  const size_t per_channel = channels > 0 ? bytes.size() / static_cast<size_t>(channels) : 0;
  for (size_t i = 0; i < per_channel * static_cast<size_t>(channels); ++i)
    sums[i / per_channel] += static_cast<int8_t>(bytes[i]);
  return sums;
}

}  // namespace lite2onnx::ops::exact
