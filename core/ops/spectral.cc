// RFFT2D and COMPLEX_ABS, REAL, IMAG, as a magnitude spectrum or one part of
// it: ONNX Runtime has no complex tensors, so only the RFFT2D -> COMPLEX_ABS
// (or REAL, or IMAG) pair converts (see
// passes::fuse_spectral_magnitude). Both are Terminate (they work on the last
// TFLite axes). The real DFT is two MatMuls with constant cosine and sine
// matrices: |X_k| = sqrt((sum x_n cos t)^2 + (sum x_n sin t)^2), t = 2 pi k n / N.
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/dft_angles.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::spectral {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

// The matrices are built in memory: bound them (2 x n x (n/2+1) floats).
constexpr int64_t kMaxFftLength = 4096;

Check check_rfft2d(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("magnitude") != 1 && !n.attrs.has("part"))
    return refuse(ReasonCode::kNotExpressible,
                  "complex outputs cannot be expressed in ONNX (only RFFT2D read by COMPLEX_ABS, "
                  "REAL or IMAG alone converts)");
  if (auto r = require_const(g, n, 1, "fft_length")) return r;
  auto len = ir::const_ints(g, n.inputs[1]);
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!len || len->size() != 2) return refuse(ReasonCode::kShape, "fft_length must hold 2 values");
  if (x.dtype != DataType::kFloat32) return refuse(ReasonCode::kType, "input must be float32");
  if (x.rank() < 2 || x.shape[x.rank() - 1] < 1 || x.shape[x.rank() - 2] < 1)
    return refuse(ReasonCode::kShape, "input needs static last two dimensions");
  if ((*len)[0] != 1)
    return refuse(ReasonCode::kNotImplemented,
                  "fft_length[0] = " + std::to_string((*len)[0]) +
                      ": only FFTs along the last axis (fft_length[0] = 1) are supported");
  if ((*len)[1] < 1 || (*len)[1] > kMaxFftLength)
    return refuse(ReasonCode::kLimit,
                  "fft_length[1] must be in 1.." + std::to_string(kMaxFftLength));
  return {};
}

// The cosine and sine matrices, used x bins floats each (a checked op: static
// last dimensions, constant fft_length).
uint64_t rfft2d_bytes(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t fft = (*ir::const_ints(g, n.inputs[1]))[1];
  const int64_t used = std::min(x.shape[x.rank() - 1], fft), bins = fft / 2 + 1;
  return 2 * static_cast<uint64_t>(used * bins) * sizeof(float);
}

Status lower_rfft2d(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t fft = (*ir::const_ints(g, n.inputs[1]))[1];
  const size_t r = x.rank();
  const int64_t rows = x.shape[r - 2], width = x.shape[r - 1];
  const int64_t used =
      std::min(width, fft);  // input beyond fft is cropped, short input zero-padded
  const int64_t bins = fft / 2 + 1;
  // A 2-D FFT with fft_length[0] = 1 keeps the first row only.
  TensorId input = n.inputs[0];
  if (rows != 1 || width != used) {
    TensorId cropped = ctx.temp(n.name + "/cropped", DataType::kFloat32);
    ctx.emit(n, "Slice",
             {input, ctx.const_i64(n.name + "/starts", {0, 0}),
              ctx.const_i64(n.name + "/ends", {1, used}),
              ctx.const_i64(n.name + "/axes",
                            {static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)})},
             {cropped}, "crop");
    input = cropped;
  }
  // Checked before they exist (the lowering stage added every op's up already).
  if (!ctx.graph().created().admit(rfft2d_bytes(g, n), n.name + "/cos"))
    return ok_status();  // the driver reports the limit after this op
  std::vector<float> cos_m(static_cast<size_t>(used * bins)), sin_m(cos_m.size());
  const DftAngles angles(fft);
  for (int64_t i = 0; i < used; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      cos_m[static_cast<size_t>(i * bins + k)] = static_cast<float>(angles.cos(k, i));
      sin_m[static_cast<size_t>(i * bins + k)] = static_cast<float>(angles.sin(k, i));
    }
  const std::string part = n.attrs.get_string("part");
  if (part == "real") {
    ctx.emit(n, "MatMul",
             {input, ctx.const_f32(n.name + "/cos", std::move(cos_m), ir::Shape{used, bins})},
             {n.outputs[0]}, "real");
    return ok_status();
  }
  if (part == "imag") {  // X_k = sum x_i e^(-2 pi i k i / n): the sine part negated
    for (float& v : sin_m) v = -v;
    ctx.emit(n, "MatMul",
             {input, ctx.const_f32(n.name + "/sin", std::move(sin_m), ir::Shape{used, bins})},
             {n.outputs[0]}, "imag");
    return ok_status();
  }
  TensorId re = ctx.temp(n.name + "/real", DataType::kFloat32);
  TensorId im = ctx.temp(n.name + "/imag", DataType::kFloat32);
  ctx.emit(n, "MatMul",
           {input, ctx.const_f32(n.name + "/cos", std::move(cos_m), ir::Shape{used, bins})}, {re},
           "real");
  ctx.emit(n, "MatMul",
           {input, ctx.const_f32(n.name + "/sin", std::move(sin_m), ir::Shape{used, bins})}, {im},
           "imag");
  TensorId re2 = ctx.temp(n.name + "/real_sq", DataType::kFloat32);
  TensorId im2 = ctx.temp(n.name + "/imag_sq", DataType::kFloat32);
  TensorId power = ctx.temp(n.name + "/power", DataType::kFloat32);
  ctx.emit(n, "Mul", {re, re}, {re2}, "real_sq");
  ctx.emit(n, "Mul", {im, im}, {im2}, "imag_sq");
  ctx.emit(n, "Add", {re2, im2}, {power}, "power");
  ctx.emit(n, "Sqrt", {power}, {n.outputs[0]}, "magnitude");
  return ok_status();
}

Check check_complex_abs(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("magnitude_input") != 1 || g.tensor(n.inputs[0]).dtype != DataType::kFloat32)
    return refuse(ReasonCode::kNotExpressible,
                  "complex inputs cannot be expressed in ONNX (only after RFFT2D)");
  return {};
}

Status lower_complex_abs(LowerContext& ctx, const ir::Node& n) {
  ctx.emit(n, "Identity", {n.inputs[0]}, {n.outputs[0]});
  return ok_status();
}

// RFFT2D: the last two axes become fft_length[0], fft_length[1] / 2 + 1.
InferredShapes infer_rfft2d(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto len = const_operand(g, n, 1, false, 1);
  if (!x || x->size() < 2 || !len || len->size() != 2 || n.outputs.size() != 1) return std::nullopt;
  // fft2d takes powers of two only.
  for (int64_t v : *len)
    if (v < 1 || v > kMaxDim || (v & (v - 1)) != 0) return std::nullopt;
  Shape s = *x;
  s[s.size() - 2] = (*len)[0];
  s[s.size() - 1] = (*len)[1] / 2 + 1;
  return one_shape(std::move(s));
}

}  // namespace

OpEntry rfft2d() {
  return {.read = {.min_inputs = 2},
          .infer_shapes = infer_rfft2d,
          .check = check_rfft2d,
          .lower = lower_rfft2d,
          .lowering_bytes = rfft2d_bytes,
          .doc = {.onnx = "MatMul x2 (cosine, sine) + Mul + Add + Sqrt: the magnitude, with "
                          "COMPLEX_ABS",
                  .notes = "only as RFFT2D -> COMPLEX_ABS (ONNX Runtime has no complex tensors), "
                           "fft_length[0] = 1"}};
}

OpEntry complex_part() {
  return {.infer_shapes = infer_same_as_input,
          .check = check_complex_abs,
          .lower = lower_complex_abs,
          .doc = {.onnx = "nothing (RFFT2D computes the part)",
                  .notes = "only after RFFT2D, when no reader wants another part"}};
}

OpEntry complex_abs() {
  return {.infer_shapes = infer_same_as_input,
          .check = check_complex_abs,
          .lower = lower_complex_abs,
          .doc = {.onnx = "nothing (RFFT2D computes the magnitude)", .notes = "only after RFFT2D"}};
}

}  // namespace lite2onnx::ops::spectral
