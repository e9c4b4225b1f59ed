// Reductions and normalizations along axes: MEAN, SUM, REDUCE_MAX/MIN/PROD,
// ARG_MAX/ARG_MIN, SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION, TOPK_V2 (Attribute
// class: their axes follow the input layout) and LOCAL_RESPONSE_NORMALIZATION
// (Implicit: NHWC in TFLite, ONNX LRN on NCHW).
#include <algorithm>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::reduce {
namespace {

using ir::Perm;
using ir::Shape;
using ir::TensorId;

std::vector<int> reduced_axes(const ir::Graph& g, const ir::Node& n) {
  std::vector<int> axes;
  size_t rank = g.tensor(n.inputs[0]).rank();
  if (auto v = ir::const_ints(g, n.inputs[1]))
    for (int64_t a : *v)
      if (auto r = ir::resolve_axis(a, rank)) axes.push_back(*r);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

// An axes tensor with no elements: TFLite writes it without data (so it is
// not a constant), and reduces nothing.
bool empty_axes(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 1)) return false;
  auto c = ir::element_count(g.tensor(n.inputs[1]).shape);
  return c && *c == 0;
}

Check check_reduce(const ir::Graph& g, const ir::Node& n) {
  if (empty_axes(g, n)) return {};
  if (auto r = require_const(g, n, 1, "axes")) return r;
  size_t rank = g.tensor(n.inputs[0]).rank();
  auto axes = ir::const_ints(g, n.inputs[1]);
  if (!axes) return refuse(ReasonCode::kType, "axes must be an int32 or int64 constant");
  for (int64_t a : *axes)
    if (!ir::resolve_axis(a, rank))
      return refuse(ReasonCode::kOperands, "axis " + std::to_string(a) + " out of range");
  return {};
}

std::optional<LayoutPlan> propagate_reduce(const ir::Graph& g, const ir::Node& n,
                                           std::span<const Perm> in) {
  Perm p = in.empty() ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  bool keep = n.attrs.get_int("keep_dims") != 0;
  Perm out = keep ? p : ir::drop_axes(p, reduced_axes(g, n), g.tensor(n.inputs[0]).rank());
  plan.outputs.assign(n.outputs.size(), out);
  return plan;
}

// `axes_input_from`: the first opset in which `op` takes its axes as an input.
// Reduces `x` into `y` (the node's input and output, or stand-ins for them).
void emit_reduce(LowerContext& ctx, const ir::Node& n, const char* op, int axes_input_from,
                 TensorId x, TensorId y) {
  const ir::Graph& g = ctx.graph();
  const Perm& p = g.tensor(n.inputs[0]).layout;
  std::vector<int64_t> axes;
  for (int a : reduced_axes(g, n)) axes.push_back(ir::onnx_axis(p, a));
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) {  // TFLite reduces nothing; ONNX would reduce everything
    ctx.emit(n, "Identity", {x}, {y});
    return;
  }
  bool as_input = ctx.opset() >= axes_input_from;
  std::vector<TensorId> inputs = {x};
  if (as_input) inputs.push_back(ctx.const_i64(n.name + "/axes", axes));
  ir::Node& r = ctx.emit(n, op, inputs, {y});
  if (!as_input) r.attrs.set("axes", axes);
  r.attrs.set("keepdims", int64_t{n.attrs.get_int("keep_dims") != 0});
}

Status lower_reduce(LowerContext& ctx, const ir::Node& n, const char* op,
                    int axes_input_from = 18) {
  emit_reduce(ctx, n, op, axes_input_from, n.inputs[0], n.outputs[0]);
  return ok_status();
}

// REDUCE_ANY / REDUCE_ALL: ONNX reductions take no bool, so the values go
// through int32 (ReduceMax is any, ReduceMin all) and back.
Status lower_reduce_bool(LowerContext& ctx, const ir::Node& n, const char* op) {
  TensorId x = ctx.temp(n.name + "/as_int32", ir::DataType::kInt32);
  ir::Node& c = ctx.emit(n, "Cast", {n.inputs[0]}, {x}, "Cast_in");
  c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt32)});
  TensorId y = ctx.temp(n.name + "/reduced", ir::DataType::kInt32);
  emit_reduce(ctx, n, op, 18, x, y);
  ir::Node& back = ctx.emit(n, "Cast", {y}, {n.outputs[0]}, "Cast_out");
  back.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kBool)});
  return ok_status();
}
Status lower_reduce_any(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce_bool(ctx, n, "ReduceMax");
}
Status lower_reduce_all(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce_bool(ctx, n, "ReduceMin");
}

Check check_bool_reduce(const ir::Graph& g, const ir::Node& n) {
  if (g.tensor(n.inputs[0]).dtype != ir::DataType::kBool)
    return refuse(ReasonCode::kType, "input must be bool");
  return check_reduce(g, n);
}

void read_reducer(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ReducerOptions();
  a.set("keep_dims", int64_t{o && o->keep_dims() ? 1 : 0});
}

Status lower_mean(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce(ctx, n, "ReduceMean");
}
Status lower_sum(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce(ctx, n, "ReduceSum", 13);
}
// --quantization exact, 8-bit MEAN and SUM: XNNPACK's reduce, which LiteRT.js
// runs (docs/quantization-arithmetic.md §3.4): the raw integers summed in
// int32, then float32 steps, rounded half to even and saturated.
template <bool kSum>
Status lower_mean_or_sum_exact(LowerContext& ctx, const ir::Node& n) {
  exact::hold_integers(ctx, n);
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const exact::Params px = exact::params_of(x), py = exact::params_of(g.tensor(n.outputs[0]));
  int64_t count = 1;
  for (int a : reduced_axes(g, n)) count *= x.shape[static_cast<size_t>(a)];
  exact::Writer w(ctx, n);
  exact::Value total = w.cast(w.integers(n.inputs[0]), ir::DataType::kInt32);
  const TensorId wide = total.id;
  total.id = w.temp(ir::DataType::kInt32, "sum");
  total.lo *= count;
  total.hi *= count;
  emit_reduce(ctx, n, "ReduceSum", 13, wide, total.id);
  if (px.type == ir::DataType::kInt16) {
    w.store(exact::int16_mean_or_sum(w, total, count, px, py, kSum), n.outputs[0]);
    return w.result();
  }
  const qmath::XnnReduce k =
      qmath::xnn_reduce_params(px.scale, px.zero, py.scale, py.zero, count, kSum);
  const TensorId scaled = w.fmul(w.to_float(total), {k.inv}, {});
  w.store(w.round_to(w.fadd(scaled, {k.zero_term}, {}), py.type, 0), n.outputs[0]);
  return w.result();
}

// Per-tensor 8-bit input and output that XNNPACK's delegate takes, or int16
// ones (TFLite's kernels), and static reduced dimensions (the count is a
// constant of the arithmetic).
template <bool kSum>
Check check_mean_or_sum_exact(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const bool int16 = x.quantized_type == ir::DataType::kInt16 &&
                     y.quantized_type == ir::DataType::kInt16 && exact::per_tensor(x) &&
                     exact::per_tensor(y);
  // 8-bit MEAN and SUM in TFLite's builtin kernels have no exact form yet.
  if (!int16 && exact::builtin_kernels_only(n)) return exact::refuse_builtin_kernel();
  if (!int16 && (!exact::xnnpack_quantization(x) || !exact::xnnpack_quantization(y) ||
                 exact::params_of(x).type != exact::params_of(y).type))
    return refuse(ReasonCode::kQuantization,
                  "input and output not quantized per tensor with one 8-bit type and positive "
                  "scales (the variants XNNPACK leaves to TFLite's builtin kernel)");
  int64_t count = 1;
  for (int a : reduced_axes(g, n)) {
    const int64_t d = x.shape[static_cast<size_t>(a)];
    if (d < 0) return refuse(ReasonCode::kShape, "a dynamic reduced dimension in exact mode");
    count *= d;
    if (count > (int64_t{1} << 23))
      return refuse(ReasonCode::kLimit, "more than 2^23 elements reduced into one");
  }
  if (int16)
    return exact::check_int16_mean_or_sum(count, exact::params_of(x), exact::params_of(y), kSum);
  return std::nullopt;
}

Status lower_reduce_max(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce(ctx, n, "ReduceMax");
}
Status lower_reduce_min(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce(ctx, n, "ReduceMin");
}
Status lower_reduce_prod(LowerContext& ctx, const ir::Node& n) {
  return lower_reduce(ctx, n, "ReduceProd");
}

// The types every ONNX reduction (ReduceSum/Max/Min/Prod) takes.
Check check_typed_reduce(const ir::Graph& g, const ir::Node& n) {
  ir::DataType t = g.tensor(n.inputs[0]).dtype;
  if (t != ir::DataType::kFloat32 && t != ir::DataType::kInt32 && t != ir::DataType::kInt64)
    return refuse(ReasonCode::kType, std::string("input type ") + ir::to_string(t) +
                                         " is not supported (float32, int32, int64)");
  return check_reduce(g, n);
}

// The ONNX axis of the TFLite input's last axis.
int64_t last_onnx_axis(const ir::Tensor& x) {
  return ir::onnx_axis(x.layout, static_cast<int>(x.rank()) - 1);
}

// Writes `out` from an int64 result: directly, or through a Cast to int32.
// Returns the tensor the int64-producing node must write.
TensorId int64_result(LowerContext& ctx, const ir::Node& n, TensorId out, const char* what) {
  if (ctx.tensor(out).dtype == ir::DataType::kInt64) return out;
  return ctx.temp(n.name + "/" + what + "_i64", ir::DataType::kInt64);
}

void cast_int32(LowerContext& ctx, const ir::Node& n, TensorId from, TensorId out) {
  if (from == out) return;
  ir::Node& c = ctx.emit(n, "Cast", {from}, {out}, "Cast");
  c.attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt32)});
}

// MEAN, SUM, REDUCE_*: constant axes (input 1), keep_dims.
InferredShapes infer_reduce(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto axes = input_ints(g, n, 1);
  if (!x || !axes || axes->empty() || n.outputs.size() != 1) return std::nullopt;
  std::vector<bool> reduced(x->size(), false);
  for (int64_t a : *axes) {
    auto r = ir::resolve_axis(a, x->size());
    if (!r) return std::nullopt;
    reduced[static_cast<size_t>(*r)] = true;
  }
  const bool keep = n.attrs.get_int("keep_dims") != 0;
  Shape s;
  for (size_t i = 0; i < x->size(); ++i)
    if (!reduced[i])
      s.push_back((*x)[i]);
    else if (keep)
      s.push_back(1);
  return one_shape(std::move(s));
}

// ---- SOFTMAX, LOG_SOFTMAX ------------------------------------------------------

void read_softmax_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SoftmaxOptions();
  a.set("beta", o ? o->beta() : 1.0f);
}

Check check_softmax(const ir::Graph& g, const ir::Node& n) {
  if (g.tensor(n.inputs[0]).rank() < 1)
    return refuse(ReasonCode::kShape, "input must have at least one dimension");
  return {};
}

Status lower_softmax(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  TensorId in = n.inputs[0];
  float beta = n.attrs.get_float("beta", 1.0f);
  if (beta != 1.0f) {
    TensorId scaled = ctx.temp_like(n.outputs[0], "scaled");
    ctx.emit(n, "Mul", {in, ctx.const_scalar(n.name + "/beta", x.dtype, beta)}, {scaled}, "beta");
    in = scaled;
  }
  ir::Node& s = ctx.emit(n, "Softmax", {in}, {n.outputs[0]});
  s.attrs.set("axis", int64_t{ir::onnx_axis(x.layout, static_cast<int>(x.rank()) - 1)});
  return ok_status();
}

Check check_float_rank1(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.rank() < 1) return refuse(ReasonCode::kShape, "input must have at least one dimension");
  if (x.dtype != ir::DataType::kFloat32)
    return refuse(ReasonCode::kType, "only float32 is supported");
  return {};
}

Status lower_log_softmax(LowerContext& ctx, const ir::Node& n) {
  ir::Node& s = ctx.emit(n, "LogSoftmax", {n.inputs[0]}, {n.outputs[0]});
  s.attrs.set("axis", last_onnx_axis(ctx.tensor(n.inputs[0])));
  return ok_status();
}

// ---- ARG_MAX / ARG_MIN -------------------------------------------------------

std::optional<int> arg_axis(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 1)) return std::nullopt;
  auto v = ir::const_ints(g, n.inputs[1]);
  if (!v || v->size() != 1) return std::nullopt;
  return ir::resolve_axis((*v)[0], g.tensor(n.inputs[0]).rank());
}

Check check_arg(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 1, "axis")) return r;
  if (g.tensor(n.inputs[0]).rank() < 1)
    return refuse(ReasonCode::kShape, "input must have at least one dimension");
  if (!arg_axis(g, n))
    return refuse(ReasonCode::kOperands, "axis must be one int32 or int64 value in range");
  ir::DataType t = g.tensor(n.outputs[0]).dtype;
  if (t != ir::DataType::kInt32 && t != ir::DataType::kInt64)
    return refuse(ReasonCode::kType, "output type must be int32 or int64");
  return {};
}

std::optional<LayoutPlan> propagate_arg(const ir::Graph& g, const ir::Node& n,
                                        std::span<const Perm> in) {
  auto axis = arg_axis(g, n);
  if (!axis) return std::nullopt;
  Perm p = in.empty() ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  plan.outputs.assign(n.outputs.size(), ir::drop_axes(p, {*axis}, g.tensor(n.inputs[0]).rank()));
  return plan;
}

Status lower_arg(LowerContext& ctx, const ir::Node& n, const char* op) {
  const ir::Graph& g = ctx.graph();
  int axis = *arg_axis(g, n);
  TensorId idx = int64_result(ctx, n, n.outputs[0], "index");
  ir::Node& a = ctx.emit(n, op, {n.inputs[0]}, {idx});
  a.attrs.set("axis", int64_t{ir::onnx_axis(g.tensor(n.inputs[0]).layout, axis)});
  a.attrs.set("keepdims", int64_t{0});
  a.attrs.set("select_last_index", int64_t{0});  // TFLite keeps the first index on ties
  cast_int32(ctx, n, idx, n.outputs[0]);
  return ok_status();
}
Status lower_arg_max(LowerContext& ctx, const ir::Node& n) { return lower_arg(ctx, n, "ArgMax"); }
Status lower_arg_min(LowerContext& ctx, const ir::Node& n) { return lower_arg(ctx, n, "ArgMin"); }

// ARG_MAX / ARG_MIN: the constant axis (input 1) removed.
InferredShapes infer_arg(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto axis = input_ints(g, n, 1);
  if (!x || !axis || axis->size() != 1 || n.outputs.size() != 1) return std::nullopt;
  auto a = ir::resolve_axis((*axis)[0], x->size());
  if (!a) return std::nullopt;
  Shape s = *x;
  s.erase(s.begin() + *a);
  return one_shape(std::move(s));
}

// ---- L2_NORMALIZATION ------------------------------------------------------------

void read_l2_normalization_options(const tflite::Operator& op, ir::Attributes& a) {
  store_activation(op.builtin_options_as_L2NormOptions(), a);
}

Check check_l2_normalization(const ir::Graph& g, const ir::Node& n) {
  if (auto r = check_float_rank1(g, n)) return r;
  return check_activation(g, n);
}

// x / max(sqrt(sum(x^2)), 1e-6) over the last axis: TFLite's epsilon
// (reference_ops::L2Normalization), which ONNX LpNormalization lacks.
Status lower_l2_normalization(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  int64_t axis = last_onnx_axis(x);
  TensorId sq = ctx.temp(n.name + "/sum_square", ir::DataType::kFloat32);
  std::vector<TensorId> inputs = {n.inputs[0]};
  bool as_input = ctx.opset() >= 18;
  if (as_input) inputs.push_back(ctx.const_i64(n.name + "/axes", {axis}));
  ir::Node& r = ctx.emit(n, "ReduceSumSquare", inputs, {sq}, "ReduceSumSquare");
  if (!as_input) r.attrs.set("axes", std::vector<int64_t>{axis});
  r.attrs.set("keepdims", int64_t{1});
  TensorId norm = ctx.temp(n.name + "/norm", ir::DataType::kFloat32);
  ctx.emit(n, "Sqrt", {sq}, {norm}, "Sqrt");
  TensorId clamped = ctx.temp(n.name + "/norm_clamped", ir::DataType::kFloat32);
  ctx.emit(n, "Max", {norm, ctx.const_scalar(n.name + "/epsilon", ir::DataType::kFloat32, 1e-6)},
           {clamped}, "Max");
  auto y = ctx.fused_activation(n, n.outputs[0]);
  if (!y) return y.take_error();
  ctx.emit(n, "Div", {n.inputs[0], clamped}, {*y});
  return ok_status();
}

// ---- LOCAL_RESPONSE_NORMALIZATION ---------------------------------------------------

void read_lrn_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_LocalResponseNormalizationOptions();
  a.set("radius", int64_t{o ? o->radius() : 0});
  a.set("bias", o ? o->bias() : 0.0f);
  a.set("alpha", o ? o->alpha() : 0.0f);
  a.set("beta", o ? o->beta() : 0.0f);
}

Check check_lrn(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_rank(g, n, 0, 4)) {
    r->text += " (only 4-D NHWC inputs)";
    return r;
  }
  if (g.tensor(n.inputs[0]).dtype != ir::DataType::kFloat32)
    return refuse(ReasonCode::kType, "only float32 is supported");
  if (n.attrs.get_int("radius") < 0)
    return refuse(ReasonCode::kOperands, "radius must not be negative");
  return {};
}

// TFLite: x * (bias + alpha * sum over [c-r, c+r] of x^2)^-beta; ONNX LRN
// divides alpha by size, so alpha_onnx = alpha * size with size = 2r + 1.
Status lower_lrn(LowerContext& ctx, const ir::Node& n) {
  const Perm want = ir::channels_first(4);
  for (TensorId t : {n.inputs[0], n.outputs[0]})
    if (ir::normalized(ctx.tensor(t).layout) != want)
      return ctx.error(n, "tensor '" + ctx.tensor(t).name + "' is not NCHW in ONNX");
  int64_t size = 2 * n.attrs.get_int("radius") + 1;
  ir::Node& l = ctx.emit(n, "LRN", {n.inputs[0]}, {n.outputs[0]});
  l.attrs.set("size", size);
  l.attrs.set("alpha", n.attrs.get_float("alpha") * static_cast<float>(size));
  l.attrs.set("beta", n.attrs.get_float("beta"));
  l.attrs.set("bias", n.attrs.get_float("bias"));
  return ok_status();
}

// ---- TOPK_V2 ------------------------------------------------------------------------

// k is a constant or a run-time scalar (ONNX TopK takes K as a tensor; a k
// beyond the last dimension is an error at run time in both).
Check check_topk(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.rank() < 1) return refuse(ReasonCode::kShape, "input must have at least one dimension");
  const ir::Tensor& kt = g.tensor(n.inputs[1]);
  if (!kt.is_const()) {
    if (kt.dtype != ir::DataType::kInt32 && kt.dtype != ir::DataType::kInt64)
      return refuse(ReasonCode::kType, "k must be int32 or int64");
    if (kt.has_rank && (kt.rank() > 1 || (kt.rank() == 1 && kt.shape[0] != 1)))
      return refuse(ReasonCode::kOperands, "k must hold one integer");
  } else {
    auto k = ir::const_ints(g, n.inputs[1]);
    if (!k || k->size() != 1 || (*k)[0] < 0)
      return refuse(ReasonCode::kOperands, "k must be one non-negative integer");
    int64_t last = x.shape.back();
    if (last >= 0 && (*k)[0] > last)
      return refuse(
          ReasonCode::kOperands,
          "k = " + std::to_string((*k)[0]) + " exceeds the last dimension " + std::to_string(last));
  }
  if (n.outputs.size() != 2)
    return refuse(ReasonCode::kOperands, "expects two outputs (values, indices)");
  ir::DataType t = g.tensor(n.outputs[1]).dtype;
  if (t != ir::DataType::kInt32 && t != ir::DataType::kInt64)
    return refuse(ReasonCode::kType, "indices must be int32 or int64");
  return {};
}

Status lower_topk(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  TensorId k;
  if (g.tensor(n.inputs[1]).is_const()) {
    k = ctx.const_i64(n.name + "/k", {(*ir::const_ints(g, n.inputs[1]))[0]});
  } else {
    // A run-time scalar: TopK wants int64 of shape [1].
    TensorId k64 = int64_result(ctx, n, n.inputs[1], "k");
    if (k64 != n.inputs[1])
      ctx.emit(n, "Cast", {n.inputs[1]}, {k64}, "k_int64")
          .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
    k = ctx.temp(n.name + "/k", ir::DataType::kInt64);
    ctx.emit(n, "Reshape", {k64, ctx.const_i64(n.name + "/k_shape", {1})}, {k}, "k");
  }
  TensorId idx = int64_result(ctx, n, n.outputs[1], "indices");
  ir::Node& t = ctx.emit(n, "TopK", {n.inputs[0], k}, {n.outputs[0], idx});
  t.attrs.set("axis", last_onnx_axis(ctx.tensor(n.inputs[0])));
  t.attrs.set("largest", int64_t{1});
  t.attrs.set("sorted", int64_t{1});
  cast_int32(ctx, n, idx, n.outputs[1]);
  return ok_status();
}

// TOPK_V2: both outputs are the input with the last axis k.
InferredShapes infer_topk(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto k = const_operand(g, n, 1, false, -1);
  if (!x || x->empty() || !k || k->size() != 1 || n.outputs.size() != 2) return std::nullopt;
  if ((*k)[0] < 0 || (*k)[0] > x->back()) return std::nullopt;
  Shape s = *x;
  s.back() = (*k)[0];
  return many_shapes({s, s});
}

}  // namespace

OpEntry mean() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_reduce,
          .lower = lower_mean,
          .quantization = {.exact = {lower_mean_or_sum_exact<false>, check_mean_or_sum_exact<false>,
                                     InQdqGraphs::kQuantized}},
          .doc = {.onnx = "ReduceMean",
                  .notes = "axes follow the layout; without keep_dims the reduced axes leave "
                           "it"}};
}

OpEntry softmax() {
  return {.read = {.options = read_softmax_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_same_as_input,
          .check = check_softmax,
          .lower = lower_softmax,
          .quantization = {.exact = exact::softmax_table()},
          .doc = {.onnx = "Softmax (Mul by beta first when beta != 1)"}};
}

// SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD.
constexpr const char* kReducerTypes = "float32, int32, int64";
constexpr const char* kReducerNotes =
    "axes follow the layout; without keep_dims the reduced axes leave it; no axes: Identity";

OpEntry sum() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_typed_reduce,
          .lower = lower_sum,
          .quantization = {.exact = {lower_mean_or_sum_exact<true>, check_mean_or_sum_exact<true>,
                                     InQdqGraphs::kQuantized}},
          .doc = {.onnx = "ReduceSum", .dtypes = kReducerTypes, .notes = kReducerNotes}};
}

OpEntry reduce_any() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_bool_reduce,
          .lower = lower_reduce_any,
          .doc = {.onnx = "Cast + ReduceMax + Cast", .dtypes = "bool", .notes = kReducerNotes}};
}

OpEntry reduce_all() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_bool_reduce,
          .lower = lower_reduce_all,
          .doc = {.onnx = "Cast + ReduceMin + Cast", .dtypes = "bool", .notes = kReducerNotes}};
}

OpEntry reduce_max() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_typed_reduce,
          .lower = lower_reduce_max,
          .quantization = {.kernel = QuantizedKernel::kSameScale,
                           .exact = {exact::lower_copy_as_float}},
          .doc = {.onnx = "ReduceMax", .dtypes = kReducerTypes, .notes = kReducerNotes}};
}

OpEntry reduce_min() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_typed_reduce,
          .lower = lower_reduce_min,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "ReduceMin", .dtypes = kReducerTypes, .notes = kReducerNotes}};
}

OpEntry reduce_prod() {
  return {.read = {.min_inputs = 2, .options = read_reducer},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_reduce},
          .infer_shapes = infer_reduce,
          .check = check_typed_reduce,
          .lower = lower_reduce_prod,
          .doc = {.onnx = "ReduceProd", .dtypes = kReducerTypes, .notes = kReducerNotes}};
}

// ARG_MAX, ARG_MIN.
constexpr const char* kArgTypes = "float32, int32 (-> int32/int64)";
constexpr const char* kArgNotes = "axis (constant input) follows the layout; int32 output via Cast";

namespace {
// --quantization exact: the index of the largest (smallest) integer is that
// of the largest (smallest) value when one positive scale maps them.
Check check_arg_exact(const ir::Graph& g, const ir::Node& n) {
  if (auto r = exact::check_8bit(g, n)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!exact::per_tensor(x) || !(x.quant->scale[0] > 0))
    return refuse(ReasonCode::kQuantization,
                  "input '" + x.name + "' is not quantized per tensor with a positive scale");
  return std::nullopt;
}
}  // namespace

OpEntry arg_max() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_arg},
          .infer_shapes = infer_arg,
          .check = check_arg,
          .lower = lower_arg_max,
          .quantization = {.exact = {exact::lower_copy, check_arg_exact}},
          .doc = {.onnx = "ArgMax (+ Cast to int32)", .dtypes = kArgTypes, .notes = kArgNotes}};
}

OpEntry arg_min() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_arg},
          .infer_shapes = infer_arg,
          .check = check_arg,
          .lower = lower_arg_min,
          .quantization = {.exact = {exact::lower_copy, check_arg_exact}},
          .doc = {.onnx = "ArgMin (+ Cast to int32)", .dtypes = kArgTypes, .notes = kArgNotes}};
}

OpEntry log_softmax() {
  return {.layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_same_as_input,
          .check = check_float_rank1,
          .lower = lower_log_softmax,
          .doc = {.onnx = "LogSoftmax", .notes = "over the last TFLite axis"}};
}

OpEntry l2_normalization() {
  return {.read = {.options = read_l2_normalization_options},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_same_as_input,
          .check = check_l2_normalization,
          .lower = lower_l2_normalization,
          .quantization = {.exact = exact::l2_normalization_exact()},
          .doc = {.onnx = "ReduceSumSquare, Sqrt, Max(epsilon 1e-6), Div",
                  .notes = "over the last TFLite axis; decomposed for TFLite's epsilon"}};
}

OpEntry local_response_normalization() {
  return {
      .read = {.options = read_lrn_options},
      .layout = {.kind = LayoutClass::kImplicit},
      .infer_shapes = infer_same_as_input,
      .check = check_lrn,
      .lower = lower_lrn,
      .doc = {.onnx = "LRN (size = 2*radius+1, alpha * size)", .notes = "4-D NHWC, runs on NCHW"}};
}

OpEntry topk_v2() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kAttribute,
                     .propagate = propagate_same,
                     .keeps_layout = true},
          .infer_shapes = infer_topk,
          .check = check_topk,
          .lower = lower_topk,
          .quantization = {.kernel = QuantizedKernel::kSameScale},
          .doc = {.onnx = "TopK (+ Cast of the indices to int32)",
                  .dtypes = "float32, int32, int64 (int32/int64 indices)",
                  .notes = "over the last TFLite axis; k a constant or a run-time scalar"}};
}

}  // namespace lite2onnx::ops::reduce
