// --quantization exact, BATCH_MATMUL (docs/quantization-arithmetic.md §1):
// the exact sum of products from 8-bit MatMulIntegers, then the kernel
// LiteRT.js runs. int8 x int8: XNNPACK's fp32 requantization where its
// delegate takes the node (rhs quantized per tensor with zero point 0),
// TFLite's reference kernel (gemmlowp double rounding) otherwise. int16 x
// int16 and int16 x int8 (16x8): TFLite's reference kernel, an int64 sum and
// the 16-bit reduced multiplier. The builtin kernels read every tensor's
// legacy per-tensor parameters, which a tensor quantized per channel has as
// scale 0 (GetLegacyQuantization): its multiplier is then 0 and every output
// is the output's zero point, in both runtimes (the probe's
// bmm_*_perchannel cases); the exact form computes that too, and says so.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "core/diagnostics.h"
#include "core/ir/shape.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::exact {

using ir::DataType;
using ir::TensorId;

Value sum_16x8(Writer& w, TensorId x, const IntegerProduct& product) {
  const Value x16 = w.integers(x);
  const Value high = w.floor_div(x16, w.constant(256));
  const Value low = w.sub(w.sub(x16, w.mul(high, w.constant(256))), w.constant(128));
  const Value high_sum = product(w.tensor(high, DataType::kInt8), ir::kNoTensor, "high");
  const Value low_sum =
      product(w.tensor(low, DataType::kInt8), w.tensor(w.constant(-128), DataType::kInt8), "low");
  return w.add(w.mul(high_sum, w.constant(256)), low_sum);
}

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The per-tensor parameters TFLite's builtin kernels read (TfLiteTensor::params):
// scale 0 and zero point 0 for a tensor quantized per channel.
Params legacy_params(const ir::Tensor& t) {
  Params p = params_of(t);
  if (!per_tensor(t)) {
    p.scale = 0;
    p.zero = 0;
  }
  return p;
}

// One 8-bit piece of an operand: x = Σ weight * (piece - zero).
struct Piece {
  TensorId integers = ir::kNoTensor;
  TensorId zero = ir::kNoTensor;  // kNoTensor: 0
  int64_t weight = 1;
  int64_t lo = 0, hi = 0;  // the range of piece - zero
};

// An 8-bit operand is one piece with its zero point; an int16 one (zero
// point 0) is 256 * high + low, high = floor(x / 256) in [-128, 127] and low
// in [0, 255] stored as low - 128 with zero point -128, both int8.
std::vector<Piece> pieces(Writer& w, TensorId x, const Params& p) {
  if (p.type != DataType::kInt16) {
    Piece one{x, ir::kNoTensor, 1, p.lo - p.zero, p.hi - p.zero};
    if (p.zero != 0) one.zero = w.tensor(w.constant(p.zero), p.type);
    return {one};
  }
  const Value x16 = w.integers(x);
  const Value high = w.floor_div(x16, w.constant(256));
  const Value low = w.sub(w.sub(x16, w.mul(high, w.constant(256))), w.constant(128));
  return {Piece{w.tensor(high, DataType::kInt8), ir::kNoTensor, 256, -128, 127},
          Piece{w.tensor(low, DataType::kInt8), w.tensor(w.constant(-128), DataType::kInt8), 1, 0,
                255}};
}

// The largest |(a - z_a)(b - z_b)| of two pieces' ranges.
int64_t largest_product(const Piece& a, const Piece& b) {
  const int64_t ma = std::max(-a.lo, a.hi), mb = std::max(-b.lo, b.hi);
  return ma * mb;
}

// The inner dimension K (-1: not known).
int64_t depth(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& a = g.tensor(n.inputs[0]);
  return a.shape[a.rank() - (n.attrs.get_int("adj_x") ? 2 : 1)];
}

// Whether LiteRT.js's XNNPACK delegate takes the node (in a model it
// prepares at all): int8 operands quantized per tensor, the rhs with zero
// point 0 (xnnpack_delegate.cc VisitBatchMatMulNode; XNNPACK's batch matrix
// multiply pairs qint8 with qint8 only).
bool xnnpack_takes(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& a = g.tensor(n.inputs[0]);
  const ir::Tensor& b = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  return !builtin_kernels_only(n) && a.quantized_type == DataType::kInt8 && per_tensor(b) &&
         xnnpack_quantization(a) && xnnpack_quantization(b) && xnnpack_quantization(y) &&
         params_of(b).zero == 0;
}

// The real multiplier of the builtin kernels: GetQuantizedConvolutionMultipler
// without a bias, whose scale product is a float32 one.
double builtin_multiplier(const ir::Graph& g, const ir::Node& n) {
  const float product =
      legacy_params(g.tensor(n.inputs[0])).scale * legacy_params(g.tensor(n.inputs[1])).scale;
  return static_cast<double>(product) /
         static_cast<double>(legacy_params(g.tensor(n.outputs[0])).scale);
}

// A value with its last two axes swapped: a constant seen through the
// permutation, a run-time tensor through a Transpose.
TensorId swap_last_two(Writer& w, TensorId x) {
  const ir::Tensor& t = w.ctx().tensor(x);
  ir::Perm p = ir::identity_perm(t.rank());
  std::swap(p[t.rank() - 1], p[t.rank() - 2]);
  if (t.is_const()) return w.ctx().constant_in_layout(x, p, "adjoint of " + w.node().name + ":");
  const TensorId out = w.temp(t.quantized_type.value_or(t.dtype), "adjoint");
  std::vector<int64_t> perm(p.begin(), p.end());
  w.emit("Transpose", {x}, out, "adjoint").attrs.set("perm", perm);
  return out;
}

Check check_batch_matmul(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& a = g.tensor(n.inputs[0]);
  const ir::Tensor& b = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (!a.quantized_type || !b.quantized_type || !y.quantized_type)
    return refuse(ReasonCode::kNotImplemented,
                  "hybrid (float lhs, integer rhs) has no integer form for --quantization exact "
                  "yet");
  const DataType ta = *a.quantized_type, tb = *b.quantized_type, ty = *y.quantized_type;
  const bool eight = ta == DataType::kInt8 && tb == DataType::kInt8 && ty == DataType::kInt8;
  const bool sixteen = ta == DataType::kInt16 && ty == DataType::kInt16 &&
                       (tb == DataType::kInt16 || tb == DataType::kInt8);
  if (!eight && !sixteen)
    return refuse(ReasonCode::kType,
                  std::string(ir::to_string(ta)) + " x " + std::string(ir::to_string(tb)) + " -> " +
                      std::string(ir::to_string(ty)) +
                      " (the exact form covers int8 x int8 -> int8, int16 x int16/int8 -> int16)");
  if (!per_tensor(a) || !per_tensor(y))
    return refuse(ReasonCode::kQuantization, "the lhs and the output must be quantized per tensor");
  if (!std::isfinite(builtin_multiplier(g, n)) || builtin_multiplier(g, n) < 0)
    return refuse(ReasonCode::kQuantization, "the scales give no multiplier");
  const int64_t k = depth(g, n);
  if (sixteen) {
    if (params_of(a).zero != 0 || legacy_params(b).zero != 0 || params_of(y).zero != 0)
      return refuse(ReasonCode::kQuantization, "int16 zero points other than 0 (TFLite refuses)");
    // Each 8-bit piece's MatMulInteger sums in int32, where TFLite sums in int64.
    const int64_t piece = 255 * (tb == DataType::kInt16 ? 255 : 128);
    if (k < 0 || k > kInt32Max / piece)
      return refuse(ReasonCode::kLimit, "int16 depth " + std::to_string(k) +
                                            " (the exact form splits the sum into "
                                            "int32 pieces, which holds " +
                                            std::to_string(kInt32Max / piece) + " at most)");
    // mbqm64's shift must stay within what the kernel defines (shift < 8).
    if (qmath::quantize_multiplier(builtin_multiplier(g, n)).shift >= 8)
      return refuse(ReasonCode::kQuantization, "a multiplier of 128 or more");
    return std::nullopt;
  }
  if (xnnpack_takes(g, n)) {
    const Params pa = params_of(a), pb = params_of(b), py = params_of(y);
    const float scale = qmath::fp32_scale(pa.scale, pb.scale, py.scale);
    if (!(scale > 0 && scale <= 255))
      return refuse(ReasonCode::kQuantization,
                    "a requantization scale outside (0, 255], which XNNPACK refuses");
    return std::nullopt;
  }
  // TFLite's int32 MultiplyByQuantizedMultiplier shifts left first: the
  // exact form needs that product within int32, as it is for multipliers < 1.
  const int shift = qmath::quantize_multiplier(builtin_multiplier(g, n)).shift;
  if (shift > 0 && (k < 0 || k > (kInt32Max >> shift) / (255 * 255)))
    return refuse(ReasonCode::kQuantization,
                  "a multiplier of 1 or more whose shifted int32 sum would wrap");
  return std::nullopt;
}

Status lower_batch_matmul(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  Writer w(ctx, n);
  const ir::Tensor& b = g.tensor(n.inputs[1]);
  const Params pa = params_of(g.tensor(n.inputs[0])), pb = legacy_params(b);
  const Params py = params_of(g.tensor(n.outputs[0]));
  const TensorId a_id = n.attrs.get_int("adj_x") ? swap_last_two(w, n.inputs[0]) : n.inputs[0];
  const TensorId b_id = n.attrs.get_int("adj_y") ? swap_last_two(w, n.inputs[1]) : n.inputs[1];
  const int64_t k = depth(g, n);
  // Σ_k (a - z_a)(b - z_b) = Σ_ij weight_i weight_j MatMulInteger(a_i, b_j).
  std::optional<Value> acc;
  for (const Piece& x : pieces(w, a_id, pa)) {
    for (const Piece& v : pieces(w, b_id, pb)) {
      std::vector<TensorId> inputs = {x.integers, v.integers};
      if (x.zero != ir::kNoTensor || v.zero != ir::kNoTensor)
        inputs.push_back(x.zero != ir::kNoTensor ? x.zero
                                                 : w.tensor(w.constant(0), DataType::kInt8));
      if (v.zero != ir::kNoTensor) inputs.push_back(v.zero);
      Value product = w.accumulator();
      w.emit("MatMulInteger", std::move(inputs), product.id, "product");
      // An 8-bit sum wraps in int32 as the kernel's does; the int16 pieces fit.
      if (k >= 0 && k <= kInt32Max / largest_product(x, v)) {
        product.hi = k * largest_product(x, v);
        product.lo = -product.hi;
      }
      const Value term = w.mul(product, w.constant(x.weight * v.weight));
      acc = acc ? w.add(*acc, term) : term;
    }
  }
  const bool xnnpack = xnnpack_takes(g, n);
  const double scale =
      xnnpack ? static_cast<double>(qmath::fp32_scale(pa.scale, params_of(b).scale, py.scale))
              : builtin_multiplier(g, n);
  const Requantization rule = xnnpack                       ? Requantization::kFp32
                              : pa.type == DataType::kInt16 ? Requantization::kInt64
                                                            : Requantization::kDouble;
  if (!per_tensor(b))
    ctx.diagnostics().warnings.push_back(
        n.name + ": BATCH_MATMUL's rhs '" + b.name +
        "' is quantized per channel, which TFLite's kernel reads as scale 0: every output "
        "is the output zero point, in TFLite and in this --quantization exact conversion");
  const double scales[] = {scale};
  w.store(requantize(w, *acc, rule, scales, {}, py, py.lo, py.hi), n.outputs[0]);
  return w.result();
}

// A per-channel B: the Q/DQ form's output is off by many steps there (the
// probe's bmm_i8_perchannel; a defect of that form not mended yet), so auto
// takes the integer form. Per-tensor, ONNX Runtime's kernel rounds as
// XNNPACK's does, as for the other linear ops.
bool per_channel_b(const ir::Graph& g, const ir::Node& n) {
  return !per_tensor(g.tensor(n.inputs[1]));
}

}  // namespace

ExactForm batch_matmul_exact() {
  return {lower_batch_matmul, check_batch_matmul, InQdqGraphs::kNo, per_channel_b};
}

}  // namespace lite2onnx::ops::exact
