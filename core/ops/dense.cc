// FULLY_CONNECTED: Terminate class (it reads its input in TFLite memory order).
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::dense {
namespace {

using ir::Shape;
using ir::TensorId;

Check check_fc(const ir::Graph& g, const ir::Node& n) {
  if (n.attrs.get_int("weights_format") != 0)
    return refuse(ReasonCode::kOption, "shuffled weights format is not supported");
  if (auto r = require_rank(g, n, 1, 2)) {
    r->text = "weights: " + r->text;
    return r;
  }
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  if (w.dtype != x.dtype)
    return refuse(
        ReasonCode::kQuantization,
        "hybrid (integer weights, float input) fully connected needs quantization support");
  if (x.rank() < 1 || w.shape[1] < 1)
    return refuse(ReasonCode::kShape, "input and weights must have a depth");
  int64_t depth = w.shape[1];
  if (x.shape.back() >= 0 && x.shape.back() != depth && x.rank() == 1)
    return refuse(ReasonCode::kOperands, "input depth does not match the weights");
  int dynamic = 0;
  for (int64_t d : g.tensor(n.outputs[0]).shape) dynamic += d < 0;
  if (dynamic > 1) return refuse(ReasonCode::kShape, "more than one dynamic output dimension");
  return check_activation(g, n);
}

// Weights quantized per column cannot have their columns permuted to a
// flattened input's order: no per-axis DequantizeLinear reads a split axis.
Error split_channels(const LowerContext& ctx, const ir::Node& n, const ir::Tensor& w) {
  return ctx.unsupported(
      n, {ReasonCode::kQuantization,
          "weights '" + w.name + "' are quantized per input column (axis " +
              std::to_string(w.quant->axis) + "), which the flattened permuted input splits"});
}

Status lower_fc(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  int64_t depth = w.shape[1];
  // TFLite flattens the input to [-1, depth]; Gemm needs exactly that.
  TensorId a = n.inputs[0];
  if (x.rank() != 2 || x.shape[1] != depth) {
    a = ctx.temp(n.name + "/flat", x.dtype);
    ctx.emit(n, "Reshape", {n.inputs[0], ctx.const_i64(n.name + "/flat_shape", {-1, depth})}, {a},
             "flatten")
        .inserted = ir::Insertion{x.name, "FULLY_CONNECTED flattens its input to [-1, depth]"};
  }
  bool reshape_out = y.rank() != 2;
  TensorId gemm_out = reshape_out ? ctx.temp(n.name + "/gemm", y.dtype) : n.outputs[0];
  // The fused activation node comes after everything emitted here (finish()),
  // so it must read the last node's output: the Reshape's when there is one.
  auto act = ctx.fused_activation(n, n.outputs[0]);
  if (!act) return act.take_error();
  TensorId weights = n.inputs[1];
  // A permuted input that the Reshape above flattens as it is (propagate_fc),
  // or that a RESHAPE before this op flattened.
  std::optional<ir::FlattenedAxes> flat = g.tensor(a).flattened;
  if (a != n.inputs[0] && !ir::keeps_memory_order(x.shape, x.layout)) flat = x.flattened_axes();
  if (const auto& f = flat) {
    // The input flattened a permuted tensor: permute the weight columns to match.
    ir::Shape dims = {w.shape[0]};
    dims.insert(dims.end(), f->dims.begin(), f->dims.end());
    std::optional<ir::Tensor> view = ir::constant_view(w, std::move(dims));
    if (!view) return split_channels(ctx, n, w);
    ir::Tensor permuted = std::move(*view);
    ir::Perm p = {0};
    for (int axis : f->perm) p.push_back(axis + 1);
    permuted.layout = ir::normalized(p);
    permuted.emit_shape = w.shape;
    weights = ctx.graph().add_tensor(std::move(permuted));
  }
  std::vector<TensorId> inputs = {a, weights};
  if (has_input(g, n, 2)) inputs.push_back(n.inputs[2]);
  ir::Node& gemm = ctx.emit(n, "Gemm", inputs, {reshape_out ? gemm_out : *act});
  gemm.attrs.set("transB", int64_t{1});
  if (reshape_out) {
    ctx.emit(n, "Reshape", {gemm_out, ctx.const_i64(n.name + "/out_shape", y.shape)}, {*act},
             "unflatten")
        .inserted = ir::Insertion{y.name, "keep_num_dims restores the input's leading dimensions"};
  }
  return ok_status();
}

// Hybrid FULLY_CONNECTED (float input `a`, [-1, depth]; int8 weights read
// transposed): the run-time quantization of each row, the exact integer sum,
// the float output of the kernel LiteRT.js runs.
Status lower_hybrid_fc_exact(LowerContext& ctx, const ir::Node& n, exact::Writer& out, TensorId a,
                             TensorId weights, int64_t depth, int64_t units) {
  const ir::Tensor& w = ctx.tensor(n.inputs[1]);
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  weights = ctx.integer_constant(weights);
  auto activated = ctx.fused_activation(n, n.outputs[0]);
  if (!activated) return activated.take_error();
  // keep_num_dims: the rows' [rows, units] result takes the output's shape.
  TensorId result = *activated;
  if (y.rank() != 2) result = out.temp(ir::DataType::kFloat32, "rows");
  auto unflatten = [&] {
    if (result == *activated) return;
    out.emit("Reshape", {result, ctx.const_i64(n.name + "/out_shape", y.shape)}, *activated,
             "unflatten")
        .inserted = ir::Insertion{y.name, "keep_num_dims restores the input's leading dimensions"};
  };
  exact::Value product = out.accumulator();
  product.lo = -128 * 127 * depth;
  product.hi = 128 * 127 * depth;
  if (exact::builtin_hybrid(w)) {
    // TFLite's builtin hybrid kernel: each row quantized symmetrically.
    const exact::SymmetricRows rows =
        exact::quantize_rows_symmetric(out, a, {1}, w.quant->scale[0]);
    out.emit("MatMulInteger", {rows.integers, weights}, product.id, "accumulator");
    exact::builtin_hybrid_output(out, product, rows.scale, {1, units}, result);
    unflatten();
    return out.result();
  }
  // XNNPACK's qd8 kernel: each row quantized with a zero point;
  // Σ (q - z) w = Σ q w - z Σ w.
  const exact::RowQuantization rows = exact::quantize_rows(out, a, {1});
  out.emit("MatMulInteger", {rows.integers, weights}, product.id, "accumulator");
  const exact::Value acc = out.sub(
      product, out.mul(rows.zero, out.channels(exact::weight_row_sums(w, units), {1, units})));
  exact::hybrid_output(out, acc, rows.dequantization_scale, exact::LinearOp::kFullyConnected,
                       {1, units}, result);
  unflatten();
  return out.result();
}

// --quantization exact: MatMulInteger of the flattened input and the weights
// read transposed ([K, units]: a permuted initializer, no node), then the bias
// and the requantization of the kernel LiteRT.js runs (exact.h).
Status lower_fc_exact(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const int64_t units = w.shape[0], depth = w.shape[1];
  exact::Writer out(ctx, n);
  TensorId a = n.inputs[0];
  if (x.rank() != 2 || x.shape[1] != depth) {
    a = out.temp(x.quantized_type.value_or(x.dtype), "flat");
    out.emit("Reshape", {n.inputs[0], ctx.const_i64(n.name + "/flat_shape", {-1, depth})}, a,
             "flatten")
        .inserted = ir::Insertion{x.name, "FULLY_CONNECTED flattens its input to [-1, depth]"};
  }
  // The weights as [K, units]; a permuted input flattened as it is reads its
  // columns in that order (as lower_fc's Gemm does).
  std::optional<ir::FlattenedAxes> flat = g.tensor(a).flattened;
  if (a != n.inputs[0] && !ir::keeps_memory_order(x.shape, x.layout)) flat = x.flattened_axes();
  TensorId weights = ir::kNoTensor;
  if (!w.is_const()) {
    // Weights computed at run time (attention written as FULLY_CONNECTED): a
    // Transpose; columns permuted for a permuted input would need a Gather.
    if (flat)
      return ctx.unsupported(n, {ReasonCode::kNotImplemented,
                                 "non-constant weights read by a permuted input have no integer "
                                 "form for --quantization exact yet"});
    weights = out.temp(*w.quantized_type, "weights");
    out.emit("Transpose", {n.inputs[1]}, weights, "weights")
        .attrs.set("perm", std::vector<int64_t>{1, 0});
  } else {
    ir::Tensor transposed = w;
    if (const auto& f = flat) {
      ir::Shape dims = {units};
      dims.insert(dims.end(), f->dims.begin(), f->dims.end());
      std::optional<ir::Tensor> view = ir::constant_view(w, std::move(dims));
      if (!view) return split_channels(ctx, n, w);
      transposed = std::move(*view);
      ir::Perm p;
      for (int axis : f->perm) p.push_back(axis + 1);
      p.push_back(0);
      transposed.layout = p;
      transposed.emit_shape = ir::Shape{depth, units};
    } else {
      transposed.layout = {1, 0};
    }
    weights = ctx.graph().add_tensor(std::move(transposed));
  }
  if (!x.quantized_type) return lower_hybrid_fc_exact(ctx, n, out, a, weights, depth, units);
  auto matmul = [&](std::vector<TensorId> inputs, const char* what) {
    exact::Value acc = out.accumulator();
    out.emit("MatMulInteger", std::move(inputs), acc.id, what);
    acc.lo = -256 * 256 * depth;
    acc.hi = 256 * 256 * depth;
    return acc;
  };
  exact::Value acc;
  if (x.quantized_type == ir::DataType::kInt16) {
    acc = exact::sum_16x8(out, a, [&](TensorId in, TensorId zero, const char* what) {
      std::vector<TensorId> inputs = {in, weights};
      if (zero != ir::kNoTensor) inputs.push_back(zero);
      return matmul(std::move(inputs), what);
    });
  } else {
    std::vector<TensorId> inputs = {a, weights};
    for (TensorId z : exact::linear_zero_points(out, n, 0, 1)) inputs.push_back(z);
    acc = matmul(std::move(inputs), "accumulator");
  }
  const exact::Value v = exact::finish_linear(out, acc, exact::LinearOp::kFullyConnected, {units});
  if (y.rank() == 2) {
    out.store(v, n.outputs[0]);
  } else {
    out.emit(
           "Reshape",
           {out.tensor(v, exact::params_of(y).type), ctx.const_i64(n.name + "/out_shape", y.shape)},
           n.outputs[0], "unflatten")
        .inserted = ir::Insertion{y.name, "keep_num_dims restores the input's leading dimensions"};
  }
  return out.result();
}

Check check_fc_exact(const ir::Graph& g, const ir::Node& n) {
  if (!g.tensor(n.inputs[0]).quantized_type)
    return exact::check_hybrid(g, n, exact::LinearOp::kFullyConnected);
  return exact::check_linear(g, n, exact::LinearOp::kFullyConnected);
}

// Whether the op flattens each batch row of its input whole ([N, H, W, C] ->
// [N, H*W*C]) into constant weights: a permuted input that keeps the batch
// axis first can then be flattened as it is, with the weight columns permuted
// to match (the CMSIS-NN trick, as after a RESHAPE that flattens).
bool flattens_rows_into_constant_weights(const ir::Graph& g, const ir::Node& n,
                                         const ir::Perm& layout) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  if (x.rank() < 3 || layout.empty() || layout[0] != 0 || n.attrs.get_int("keep_num_dims") ||
      !w.is_const() || w.rank() != 2)
    return false;
  // Per-column quantization cannot follow the columns' permutation.
  if (w.quant && w.quant->scale.size() > 1 && w.quant->axis != 0) return false;
  auto row = ir::element_count(ir::Shape(x.shape.begin() + 1, x.shape.end()));
  return row && *row == w.shape[1];
}

// FULLY_CONNECTED reads its input in TFLite memory order; a layout that only
// moves unit axes (a pooled [N,1,1,C] in NCHW) leaves that order as it is, and
// one that flattens whole rows into constant weights permutes their columns.
std::optional<LayoutPlan> propagate_fc(const ir::Graph& g, const ir::Node& n,
                                       std::span<const ir::Perm> in) {
  if (in.empty() || in[0].empty()) return std::nullopt;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!ir::element_count(x.shape) || (!ir::keeps_memory_order(x.shape, in[0]) &&
                                      !flattens_rows_into_constant_weights(g, n, in[0])))
    return std::nullopt;
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), ir::Perm{});
  plan.inputs[0] = in[0];
  plan.outputs.assign(n.outputs.size(), ir::Perm{});
  return plan;
}

void read_fc_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_FullyConnectedOptions();
  store_activation(o, a);
  a.set("keep_num_dims", int64_t{o && o->keep_num_dims() ? 1 : 0});
  a.set("weights_format", int64_t{o ? static_cast<int>(o->weights_format()) : 0});
  a.set("asymmetric_quantize_inputs", int64_t{o && o->asymmetric_quantize_inputs() ? 1 : 0});
}

// FULLY_CONNECTED: [count / K, units], or input[:-1] + [units] with keep_num_dims.
InferredShapes infer_fully_connected(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto w = input_shape(g, n, 1);
  if (!x || !w || w->size() != 2 || x->empty() || n.outputs.size() != 1) return std::nullopt;
  const int64_t units = (*w)[0], k = (*w)[1];
  auto count = ir::element_count(*x);
  if (!count || k <= 0 || *count % k != 0) return std::nullopt;
  if (n.attrs.get_int("keep_num_dims") != 0) {
    if (x->back() != k) return std::nullopt;
    Shape s(x->begin(), x->end() - 1);
    s.push_back(units);
    return one_shape(std::move(s));
  }
  return one_shape({*count / k, units});
}

}  // namespace

OpEntry fully_connected() {
  return {.read = {.min_inputs = 2, .options = read_fc_options},
          .layout = {.propagate = propagate_fc},  // Terminate, but takes a flattening layout
          .infer_shapes = infer_fully_connected,
          .check = check_fc,
          .lower = lower_fc,
          .quantization = {.bias = BiasSlots{2, 0, 1, /*uint8_hybrid_weights_as_int8=*/true},
                           .exact = {lower_fc_exact, check_fc_exact, InQdqGraphs::kHybrid,
                                     exact::runs_builtin_kernel<exact::LinearOp::kFullyConnected>}},
          .doc = {.onnx = "Gemm (transB=1), Reshape around it for inputs of rank != 2",
                  .notes = "keep_num_dims; a permuted input flattened by the op or by a RESHAPE "
                           "before it gets its weight columns permuted instead of a Transpose"}};
}

}  // namespace lite2onnx::ops::dense
