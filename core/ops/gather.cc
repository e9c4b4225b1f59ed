// Indexing, stacking and shape-reporting ops: SHAPE, PACK, UNPACK, GATHER,
// EXPAND_DIMS, FILL. The Attribute ones follow their input's layout: PACK and
// EXPAND_DIMS insert an axis into it, UNPACK removes one, GATHER replaces its
// axis by the indices' axes; SHAPE reads any layout and reports TFLite order.
#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::gather {
namespace {

using ir::DataType;
using ir::Perm;
using ir::Shape;
using ir::TensorId;

// The layout after TFLite axis `a` is inserted into a rank-`rank` tensor of
// layout `p`: the new axis follows its TFLite predecessor in ONNX order (it
// comes first when a == 0), the other axes keep their ONNX order.
Perm insert_axis(const Perm& p, int a, size_t rank) {
  Perm out;
  if (a == 0) out.push_back(0);
  for (int x : ir::full_perm(p, rank)) {
    out.push_back(x >= a ? x + 1 : x);
    if (x == a - 1) out.push_back(a);
  }
  return ir::normalized(out);
}

// The layout after TFLite axis `a` is replaced by `count` axes (GATHER: the
// indices' dimensions), which take its place in ONNX order.
Perm replace_axis(const Perm& p, int a, size_t rank, size_t count) {
  Perm out;
  const int k = static_cast<int>(count);
  for (int x : ir::full_perm(p, rank)) {
    if (x < a) {
      out.push_back(x);
    } else if (x == a) {
      for (int j = 0; j < k; ++j) out.push_back(a + j);
    } else {
      out.push_back(x + k - 1);
    }
  }
  return ir::normalized(out);
}

bool is_data(const ir::Graph& g, const ir::Node& n, size_t i) {
  return has_input(g, n, i) && !g.tensor(n.inputs[i]).is_const();
}

// Layout of the first non-constant input (all of them share it), else identity.
Perm data_layout(const ir::Graph& g, const ir::Node& n, std::span<const Perm> in) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (is_data(g, n, i)) return i < in.size() ? in[i] : g.tensor(n.inputs[i]).layout;
  return {};
}

std::string check_layout(const ir::Graph& g, TensorId t, const Perm& want) {
  if (ir::normalized(g.tensor(t).layout) == ir::normalized(want)) return "";
  return "tensor '" + g.tensor(t).name + "' has layout " + ir::to_string(g.tensor(t).layout) +
         ", expected " + ir::to_string(want);
}

// ---- SHAPE --------------------------------------------------------------------

std::optional<LayoutPlan> propagate_shape(const ir::Graph&, const ir::Node& n,
                                          std::span<const Perm> in) {
  // Any input layout: the lowering reports the dimensions in TFLite order.
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  if (!in.empty()) plan.inputs[0] = in[0];
  plan.outputs.assign(n.outputs.size(), Perm{});
  return plan;
}

Check check_shape(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0)) return refuse(ReasonCode::kOperands, "input is missing");
  DataType t = g.tensor(n.outputs[0]).dtype;
  if (!is_index_type(t))
    return refuse(ReasonCode::kType,
                  "output type " + std::string(ir::to_string(t)) + " (int32 or int64 expected)");
  return {};
}

Status lower_shape(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const Perm p = x.layout;
  const size_t rank = x.rank();
  const bool cast = g.tensor(n.outputs[0]).dtype != DataType::kInt64;
  const bool gather = !ir::is_identity(p);
  TensorId cur =
      (cast || gather) ? ctx.temp(n.name + "/shape_i64", DataType::kInt64) : n.outputs[0];
  ctx.emit(n, "Shape", {n.inputs[0]}, {cur}, cast || gather ? "Shape" : "");
  if (gather) {
    // TFLite axis i is ONNX axis onnx_axis(p, i).
    std::vector<int64_t> order;
    for (size_t i = 0; i < rank; ++i) order.push_back(ir::onnx_axis(p, static_cast<int>(i)));
    TensorId out = cast ? ctx.temp(n.name + "/tflite_order", DataType::kInt64) : n.outputs[0];
    ir::Node& gt = ctx.emit(n, "Gather", {cur, ctx.const_i64(n.name + "/tflite_axes", order)},
                            {out}, cast ? "Gather" : "");
    gt.attrs.set("axis", int64_t{0});
    cur = out;
  }
  if (cast) {
    ir::Node& c = ctx.emit(n, "Cast", {cur}, {n.outputs[0]});
    c.attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt32)});
  }
  return ok_status();
}

// SHAPE: [rank of the input] (only its rank need be known).
InferredShapes infer_shape_op(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || n.outputs.size() != 1 || !g.tensor(n.inputs[0]).has_rank)
    return std::nullopt;
  return one_shape({static_cast<int64_t>(g.tensor(n.inputs[0]).rank())});
}

// ---- PACK -----------------------------------------------------------------------

std::optional<int> pack_axis(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || !has_input(g, n, 0)) return std::nullopt;
  return ir::resolve_axis(n.attrs.get_int("axis"), g.tensor(n.inputs[0]).rank() + 1);
}

Check check_pack(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty()) return refuse(ReasonCode::kOperands, "no inputs");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!has_input(g, n, i))
      return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
    const ir::Tensor& x = g.tensor(n.inputs[i]);
    const ir::Tensor& x0 = g.tensor(n.inputs[0]);
    if (x.rank() != x0.rank() || x.dtype != x0.dtype)
      return refuse(ReasonCode::kOperands,
                    "inputs differ in rank or type ('" + x0.name + "', '" + x.name + "')");
    for (size_t d = 0; d < x.rank(); ++d)
      if (x.shape[d] >= 0 && x0.shape[d] >= 0 && x.shape[d] != x0.shape[d])
        return refuse(ReasonCode::kOperands,
                      "inputs differ in shape ('" + x0.name + "', '" + x.name + "')");
  }
  int64_t count = n.attrs.get_int("values_count");
  if (count != 0 && count != static_cast<int64_t>(n.inputs.size()))
    return refuse(ReasonCode::kOperands, "values_count " + std::to_string(count) + " but " +
                                             std::to_string(n.inputs.size()) + " inputs");
  if (!pack_axis(g, n))
    return refuse(ReasonCode::kOperands,
                  "axis " + std::to_string(n.attrs.get_int("axis")) + " out of range");
  return {};
}

std::optional<LayoutPlan> propagate_pack(const ir::Graph& g, const ir::Node& n,
                                         std::span<const Perm> in) {
  auto a = pack_axis(g, n);
  if (!a) return std::nullopt;
  Perm p = data_layout(g, n, in);
  LayoutPlan plan;
  for (size_t i = 0; i < n.inputs.size(); ++i) plan.inputs.push_back(is_data(g, n, i) ? p : Perm{});
  plan.outputs.assign(n.outputs.size(), insert_axis(p, *a, g.tensor(n.inputs[0]).rank()));
  return plan;
}

Status lower_pack(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const size_t rank = g.tensor(n.inputs[0]).rank();
  const int a = *pack_axis(g, n);
  Perm p;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (is_data(g, n, i)) {
      p = g.tensor(n.inputs[i]).layout;
      break;
    }
  const Perm q = insert_axis(p, a, rank);
  if (auto r = check_layout(g, n.outputs[0], q); !r.empty()) return ctx.error(n, r);
  const int64_t k = ir::onnx_axis(q, a);
  TensorId axes = ctx.const_i64(n.name + "/axes", {k});
  const DataType type = g.tensor(n.outputs[0]).dtype;
  if (n.inputs.size() == 1) {
    ctx.emit(n, "Unsqueeze", {ctx.operand(n, 0, p, rank), axes}, {n.outputs[0]});
    return ok_status();
  }
  std::vector<TensorId> parts;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    TensorId u = ctx.temp(n.name + "/unsqueezed_" + std::to_string(i), type);
    ctx.emit(n, "Unsqueeze", {ctx.operand(n, i, p, rank), axes}, {u},
             "Unsqueeze_" + std::to_string(i));
    parts.push_back(u);
  }
  ir::Node& c = ctx.emit(n, "Concat", parts, {n.outputs[0]});
  c.attrs.set("axis", k);
  return ok_status();
}

// PACK (values_count inputs of one shape, new axis) and UNPACK (num outputs).
InferredShapes infer_pack(const ir::Graph& g, const ir::Node& n) {
  const int64_t count = static_cast<int64_t>(n.inputs.size());
  if (count < 1 || n.attrs.get_int("values_count") != count || n.outputs.size() != 1)
    return std::nullopt;
  auto x = input_shape(g, n, 0);
  if (!x) return std::nullopt;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (input_shape(g, n, i) != x) return std::nullopt;
  auto a = ir::resolve_axis(n.attrs.get_int("axis"), x->size() + 1);
  if (!a) return std::nullopt;
  Shape s = *x;
  s.insert(s.begin() + *a, count);
  return one_shape(std::move(s));
}

// ---- UNPACK ---------------------------------------------------------------------

std::optional<int> unpack_axis(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0)) return std::nullopt;
  return ir::resolve_axis(n.attrs.get_int("axis"), g.tensor(n.inputs[0]).rank());
}

Check check_unpack(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0)) return refuse(ReasonCode::kOperands, "input is missing");
  auto a = unpack_axis(g, n);
  if (!a)
    return refuse(ReasonCode::kOperands,
                  "axis " + std::to_string(n.attrs.get_int("axis")) + " out of range");
  int64_t dim = g.tensor(n.inputs[0]).shape[static_cast<size_t>(*a)];
  int64_t outs = static_cast<int64_t>(n.outputs.size());
  if (dim >= 0 && dim != outs)
    return refuse(ReasonCode::kOperands, "dimension " + std::to_string(dim) +
                                             " does not unpack into " + std::to_string(outs) +
                                             " outputs");
  if (dim < 0) return refuse(ReasonCode::kShape, "the unpacked dimension must be static");
  return {};
}

std::optional<LayoutPlan> propagate_unpack(const ir::Graph& g, const ir::Node& n,
                                           std::span<const Perm> in) {
  auto a = unpack_axis(g, n);
  if (!a) return std::nullopt;
  Perm p = in.empty() ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  plan.outputs.assign(n.outputs.size(), ir::drop_axes(p, {*a}, g.tensor(n.inputs[0]).rank()));
  return plan;
}

Status lower_unpack(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int a = *unpack_axis(g, n);
  const Perm& p = x.layout;
  const Perm q = ir::drop_axes(p, {a}, x.rank());
  for (TensorId o : n.outputs)
    if (auto r = check_layout(g, o, q); !r.empty()) return ctx.error(n, r);
  const int64_t k = ir::onnx_axis(p, a);
  TensorId axes = ctx.const_i64(n.name + "/axes", {k});
  if (n.outputs.size() == 1) {
    ctx.emit(n, "Squeeze", {n.inputs[0], axes}, {n.outputs[0]});
    return ok_status();
  }
  std::vector<TensorId> parts;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    parts.push_back(ctx.temp(n.name + "/part_" + std::to_string(i), x.dtype));
  ir::Node& s = ctx.emit(n, "Split", {n.inputs[0]}, parts, "Split");
  s.attrs.set("axis", k);
  for (size_t i = 0; i < n.outputs.size(); ++i)
    ctx.emit(n, "Squeeze", {parts[i], axes}, {n.outputs[i]}, "Squeeze_" + std::to_string(i));
  return ok_status();
}

InferredShapes infer_unpack(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t num = static_cast<int64_t>(n.outputs.size());
  if (!x || n.inputs.size() != 1 || num < 1 || n.attrs.get_int("num") != num ||
      ir::element_count(*x).value_or(0) == 0)
    return std::nullopt;
  auto a = ir::resolve_axis(n.attrs.get_int("axis"), x->size());
  if (!a || (*x)[static_cast<size_t>(*a)] != num) return std::nullopt;
  Shape s = *x;
  s.erase(s.begin() + *a);
  return many_shapes(std::vector<Shape>(static_cast<size_t>(num), s));
}

// ---- GATHER ---------------------------------------------------------------------

std::optional<int> gather_axis(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0)) return std::nullopt;
  return ir::resolve_axis(n.attrs.get_int("axis"), g.tensor(n.inputs[0]).rank());
}

Check check_gather(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || !has_input(g, n, 1))
    return refuse(ReasonCode::kOperands, "expects params and indices");
  if (n.attrs.get_int("batch_dims") != 0)
    return refuse(
        ReasonCode::kOption,
        "batch_dims " + std::to_string(n.attrs.get_int("batch_dims")) + " (only 0 is supported)");
  if (!gather_axis(g, n))
    return refuse(ReasonCode::kOperands,
                  "axis " + std::to_string(n.attrs.get_int("axis")) + " out of range");
  DataType t = g.tensor(n.inputs[1]).dtype;
  if (!is_index_type(t))
    return refuse(ReasonCode::kType, "indices of type " + std::string(ir::to_string(t)));
  return {};
}

std::optional<LayoutPlan> propagate_gather(const ir::Graph& g, const ir::Node& n,
                                           std::span<const Perm> in) {
  auto a = gather_axis(g, n);
  if (!a || !has_input(g, n, 1)) return std::nullopt;
  Perm p = in.empty() || !is_data(g, n, 0) ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});  // indices in TFLite order
  plan.inputs[0] = p;
  plan.outputs.assign(n.outputs.size(), replace_axis(p, *a, g.tensor(n.inputs[0]).rank(),
                                                     g.tensor(n.inputs[1]).rank()));
  return plan;
}

Status lower_gather(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int a = *gather_axis(g, n);
  const Perm& p = x.layout;
  if (auto r =
          check_layout(g, n.outputs[0], replace_axis(p, a, x.rank(), g.tensor(n.inputs[1]).rank()));
      !r.empty())
    return ctx.error(n, r);
  ir::Node& gt = ctx.emit(n, "Gather", {n.inputs[0], n.inputs[1]}, {n.outputs[0]});
  gt.attrs.set("axis", int64_t{ir::onnx_axis(p, a)});
  return ok_status();
}

// GATHER: params[:axis] + indices[batch_dims:] + params[axis+1:] (the
// indices' shape only: they need not be constant).
InferredShapes infer_gather(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto idx = input_shape(g, n, 1);
  if (!x || !idx || n.inputs.size() != 2 || n.outputs.size() != 1 ||
      !is_index_type(g.tensor(n.inputs[1]).dtype))
    return std::nullopt;
  auto axis = ir::resolve_axis(n.attrs.get_int("axis"), x->size());
  if (!axis) return std::nullopt;
  const int64_t a = *axis;
  int64_t batch = n.attrs.get_int("batch_dims");
  if (batch < 0) batch += static_cast<int64_t>(idx->size());
  if (batch < 0 || batch > a || batch >= static_cast<int64_t>(x->size()) ||
      batch > static_cast<int64_t>(idx->size()))
    return std::nullopt;
  for (int64_t i = 0; i < batch; ++i)
    if ((*x)[static_cast<size_t>(i)] != (*idx)[static_cast<size_t>(i)]) return std::nullopt;
  Shape s(x->begin(), x->begin() + a);
  s.insert(s.end(), idx->begin() + batch, idx->end());
  s.insert(s.end(), x->begin() + a + 1, x->end());
  return one_shape(std::move(s));
}

// ---- EXPAND_DIMS ------------------------------------------------------------------

std::optional<int> expand_axis(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || !has_input(g, n, 1)) return std::nullopt;
  auto v = ir::const_ints(g, n.inputs[1]);
  if (!v || v->size() != 1) return std::nullopt;
  return ir::resolve_axis((*v)[0], g.tensor(n.inputs[0]).rank() + 1);
}

Check check_expand_dims(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 1, "axis")) return r;
  if (!expand_axis(g, n))
    return refuse(ReasonCode::kOperands, "axis must be one value in [-rank-1, rank]");
  return {};
}

std::optional<LayoutPlan> propagate_expand_dims(const ir::Graph& g, const ir::Node& n,
                                                std::span<const Perm> in) {
  auto a = expand_axis(g, n);
  if (!a) return std::nullopt;
  Perm p = in.empty() ? Perm{} : in[0];
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  plan.outputs.assign(n.outputs.size(), insert_axis(p, *a, g.tensor(n.inputs[0]).rank()));
  return plan;
}

Status lower_expand_dims(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int a = *expand_axis(g, n);
  const Perm q = insert_axis(x.layout, a, x.rank());
  if (auto r = check_layout(g, n.outputs[0], q); !r.empty()) return ctx.error(n, r);
  ctx.emit(n, "Unsqueeze",
           {n.inputs[0], ctx.const_i64(n.name + "/axes", {int64_t{ir::onnx_axis(q, a)}})},
           {n.outputs[0]});
  return ok_status();
}

// ---- FILL -------------------------------------------------------------------------

Check check_fill(const ir::Graph& g, const ir::Node& n) {
  if (!has_input(g, n, 0) || !has_input(g, n, 1))
    return refuse(ReasonCode::kOperands, "expects dims and value");
  const ir::Tensor& dims = g.tensor(n.inputs[0]);
  if (!is_index_type(dims.dtype))
    return refuse(ReasonCode::kType, "dims of type " + std::string(ir::to_string(dims.dtype)));
  if (dims.rank() != 1) return refuse(ReasonCode::kShape, "dims must be a vector");
  if (ir::element_count(g.tensor(n.inputs[1]).shape).value_or(0) != 1)
    return refuse(ReasonCode::kShape, "value must hold one element");
  return {};
}

Status lower_fill(LowerContext& ctx, const ir::Node& n) {
  ir::Graph& g = ctx.graph();
  TensorId dims;
  if (auto v = ir::const_ints(g, n.inputs[0])) {
    dims = ctx.const_i64(n.name + "/dims", *v);
  } else if (auto st = check_shape_operand(ctx, n, 0); !st) {
    return st;
  } else if (g.tensor(n.inputs[0]).dtype == DataType::kInt64) {
    dims = n.inputs[0];
  } else {
    dims = ctx.temp(n.name + "/dims_i64", DataType::kInt64);
    ir::Node& c = ctx.emit(n, "Cast", {n.inputs[0]}, {dims}, "Cast");
    c.attrs.set("to", int64_t{ir::onnx_type_code(DataType::kInt64)});
  }
  TensorId value = n.inputs[1];
  if (g.tensor(value).rank() != 0) {
    if (g.tensor(value).is_const()) {
      ir::Tensor scalar = g.tensor(value);
      scalar.shape = {};
      value = g.add_tensor(std::move(scalar));
    } else {
      TensorId s = ctx.temp(n.name + "/value_scalar", g.tensor(value).dtype);
      ctx.emit(n, "Reshape", {value, ctx.const_i64(n.name + "/scalar_shape", {}, ir::Shape{0})},
               {s}, "Reshape");
      value = s;
    }
  }
  ctx.emit(n, "Expand", {value, dims}, {n.outputs[0]});
  return ok_status();
}

// FILL: the constant dims (input 0).
InferredShapes infer_fill(const ir::Graph& g, const ir::Node& n) {
  auto dims = const_operand(g, n, 0, true, 1);
  if (!dims || !has_input(g, n, 1) || n.outputs.size() != 1) return std::nullopt;
  for (int64_t d : *dims)
    if (!dim_value(d)) return std::nullopt;
  return one_shape(Shape(dims->begin(), dims->end()));
}

// ---- evaluation at conversion time ------------------------------------------

// SHAPE of a tensor with a static shape is a constant.
std::optional<std::vector<Folded>> fold_shape(const ir::Graph& g, const ir::Node& n, int64_t) {
  if (n.inputs.empty() || !g.valid(n.inputs[0]) || n.outputs.size() != 1) return std::nullopt;
  auto xs = ir::static_shape(g.tensor(n.inputs[0]));
  DataType type = g.tensor(n.outputs[0]).dtype;
  if (!xs || !is_index_type(type)) return std::nullopt;
  Folded f;
  f.shape = {static_cast<int64_t>(xs->size())};
  f.data = ir::ConstData::owned(encode_ints(type, *xs), type);
  return std::vector<Folded>{std::move(f)};
}

std::optional<std::vector<OutputMap>> expand_dims_sources(const ir::Graph& g, const ir::Node& n,
                                                          int64_t) {
  auto xs = input_shape(g, n, 0);
  if (!xs || !ir::element_count(*xs) || n.outputs.size() != 1) return std::nullopt;
  auto axis = input_ints(g, n, 1);
  if (!axis || axis->size() != 1) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  int64_t a = (*axis)[0];
  if (a < 0) a += rank + 1;
  if (a < 0 || a > rank) return std::nullopt;
  Shape ys = *xs;
  ys.insert(ys.begin() + a, 1);
  return in_order(std::move(ys));
}

std::optional<std::vector<OutputMap>> pack_sources(const ir::Graph& g, const ir::Node& n,
                                                   int64_t max) {
  if (n.inputs.empty()) return std::nullopt;
  auto xs = input_shape(g, n, 0);
  if (!xs) return std::nullopt;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (input_shape(g, n, i) != xs) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  Shape ys = *xs;
  const int64_t k = static_cast<int64_t>(n.inputs.size());
  ys.insert(ys.begin() + axis, k);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*xs, 0, a), inner = product(*xs, a, xs->size());
  OutputMap out;
  out.shape = ys;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        out.sources.push_back(ElementSource{static_cast<uint32_t>(j), o * inner + i});
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> unpack_sources(const ir::Graph& g, const ir::Node& n,
                                                     int64_t max) {
  auto xs = input_shape(g, n, 0);
  if (!xs || xs->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xs->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  const int64_t num = (*xs)[a];
  if (num != static_cast<int64_t>(n.outputs.size())) return std::nullopt;
  Shape ys = *xs;
  ys.erase(ys.begin() + axis);
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*xs, 0, a), inner = product(*xs, a + 1, xs->size());
  std::vector<OutputMap> outs;
  for (int64_t j = 0; j < num; ++j) {
    OutputMap out;
    out.shape = ys;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        out.sources.push_back(ElementSource{0, (o * num + j) * inner + i});
    outs.push_back(std::move(out));
  }
  return outs;
}

std::optional<std::vector<OutputMap>> gather_sources(const ir::Graph& g, const ir::Node& n,
                                                     int64_t max) {
  if (n.attrs.get_int("batch_dims") != 0) return std::nullopt;
  auto ps = input_shape(g, n, 0);
  auto is = input_shape(g, n, 1);
  auto indices = input_ints(g, n, 1);
  if (!ps || !is || !indices || ps->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(ps->size());
  int64_t axis = n.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const size_t a = static_cast<size_t>(axis);
  const int64_t dim = (*ps)[a];
  for (int64_t v : *indices)
    if (v < 0 || v >= dim) return std::nullopt;
  Shape ys(ps->begin(), ps->begin() + axis);
  ys.insert(ys.end(), is->begin(), is->end());
  ys.insert(ys.end(), ps->begin() + axis + 1, ps->end());
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  if (*count == 0) return empty_result(ys, n.outputs.size());
  const int64_t outer = product(*ps, 0, a), inner = product(*ps, a + 1, ps->size());
  OutputMap out;
  out.shape = ys;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t v : *indices)
      for (int64_t i = 0; i < inner; ++i)
        out.sources.push_back(ElementSource{0, (o * dim + v) * inner + i});
  return std::vector<OutputMap>{std::move(out)};
}

std::optional<std::vector<OutputMap>> fill_sources(const ir::Graph& g, const ir::Node& n,
                                                   int64_t max) {
  auto dims = input_ints(g, n, 0);
  auto vs = input_shape(g, n, 1);
  if (!dims || !vs || ir::element_count(*vs) != 1) return std::nullopt;
  Shape ys(dims->begin(), dims->end());
  for (int64_t d : ys)
    if (d < 0) return std::nullopt;
  auto count = bounded_count(ys, max);
  if (!count) return std::nullopt;
  OutputMap out;
  out.shape = ys;
  out.sources.assign(static_cast<size_t>(*count), ElementSource{1, 0});
  return std::vector<OutputMap>{std::move(out)};
}

// ---- options ---------------------------------------------------------------

void read_shape_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_ShapeOptions();
  a.set("out_type", int64_t{o ? static_cast<int64_t>(o->out_type()) : 2});
}

void read_pack_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_PackOptions();
  a.set("values_count", int64_t{o ? o->values_count() : 0});
  a.set("axis", int64_t{o ? o->axis() : 0});
}

void read_unpack_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_UnpackOptions();
  a.set("num", int64_t{o ? o->num() : 0});
  a.set("axis", int64_t{o ? o->axis() : 0});
}

void read_gather_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_GatherOptions();
  a.set("axis", int64_t{o ? o->axis() : 0});
  a.set("batch_dims", int64_t{o ? o->batch_dims() : 0});
}

}  // namespace

OpEntry shape_op() {
  return {.read = {.options = read_shape_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_shape},
          .infer_shapes = infer_shape_op,
          .check = check_shape,
          .lower = lower_shape,
          .quantization = {.exact = {exact::lower_copy}},
          .evaluate = {.fold = fold_shape},
          .doc = {.onnx = "Shape (+ Gather to TFLite order, Cast)",
                  .dtypes = "float32, int32, int64, bool (-> int32/int64)",
                  .notes = "reads any layout (no Transpose) and reports TFLite order; static "
                           "shapes are folded"}};
}

OpEntry pack() {
  return {.read = {.options = read_pack_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_pack},
          .infer_shapes = infer_pack,
          .check = check_pack,
          .lower = lower_pack,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = pack_sources},
          .doc = {.onnx = "Unsqueeze + Concat",
                  .dtypes = "float32, int32, int64",
                  .notes = "the new axis is inserted into the input layout"}};
}

OpEntry unpack() {
  return {.read = {.options = read_unpack_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_unpack},
          .infer_shapes = infer_unpack,
          .check = check_unpack,
          .lower = lower_unpack,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = unpack_sources},
          .doc = {.onnx = "Split + Squeeze",
                  .dtypes = "float32, int32",
                  .notes = "the unpacked axis leaves the layout"}};
}

OpEntry gather() {
  return {.read = {.options = read_gather_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_gather},
          .infer_shapes = infer_gather,
          .check = check_gather,
          .lower = lower_gather,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = gather_sources},
          .doc = {.onnx = "Gather",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "axis follows the layout; int32/int64 indices; batch_dims 0 only"}};
}

OpEntry expand_dims() {
  return {.layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_expand_dims},
          .check = check_expand_dims,
          .lower = lower_expand_dims,
          .quantization = {.kernel = QuantizedKernel::kReinterpret, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = expand_dims_sources},
          .doc = {.onnx = "Unsqueeze",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant axis; the new axis is inserted into the input layout"}};
}

OpEntry fill() {
  return {.infer_shapes = infer_fill,
          .check = check_fill,
          .lower = lower_fill,
          // TFLite's kernel requires the value's parameters on the output and
          // copies its integer.
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = fill_sources},
          .doc = {.onnx = "Expand",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant dims are folded into an initializer"}};
}

}  // namespace lite2onnx::ops::gather
