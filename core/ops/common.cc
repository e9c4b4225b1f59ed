#include "core/ops/common.h"

#include "core/ir/shape.h"

namespace lite2onnx::ops {

Check check_activation(const ir::Graph&, const ir::Node& n) {
  std::string a = n.attrs.get_string("fused_activation_function", "NONE");
  if (a == "NONE" || a == "RELU" || a == "RELU6" || a == "RELU_N1_TO_1" || a == "TANH" ||
      a == "SIGN_BIT")
    return {};
  return refuse(ReasonCode::kOption, "fused activation " + a + " has no ONNX equivalent");
}

Check require_const(const ir::Graph& g, const ir::Node& n, size_t i, const char* what) {
  if (!has_input(g, n, i))
    return refuse(ReasonCode::kOperands, std::string(what) + " input is missing");
  if (!g.tensor(n.inputs[i]).is_const())
    return refuse(ReasonCode::kRuntimeValue, std::string(what) + " must be a constant (tensor '" +
                                                 g.tensor(n.inputs[i]).name +
                                                 "' is computed at run time)");
  return {};
}

Check require_rank(const ir::Graph& g, const ir::Node& n, size_t i, size_t rank) {
  if (!has_input(g, n, i))
    return refuse(ReasonCode::kOperands, "input " + std::to_string(i) + " is missing");
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (t.rank() != rank)
    return refuse(ReasonCode::kShape, "input '" + t.name + "' has rank " +
                                          std::to_string(t.rank()) + ", expected " +
                                          std::to_string(rank));
  return {};
}

Status check_shape_operand(LowerContext& ctx, const ir::Node& n, size_t i) {
  const ir::Tensor& s = ctx.tensor(n.inputs[i]);
  const ir::Tensor& y = ctx.tensor(n.outputs[0]);
  if (s.rank() != 1 || s.shape[0] < 0)
    return ctx.error(n, "the shape operand '" + s.name + "' needs a static length");
  if (y.has_rank && static_cast<size_t>(s.shape[0]) != y.rank())
    return ctx.error(n, "the shape operand '" + s.name + "' holds " + std::to_string(s.shape[0]) +
                            " values but output '" + y.name + "' has rank " +
                            std::to_string(y.rank()));
  return ok_status();
}

std::vector<int64_t> to_i64(const ir::Perm& p) { return {p.begin(), p.end()}; }

Check check_index_vector(const ir::Graph& g, const ir::Node& n, size_t i, const char* what,
                         size_t count) {
  if (!has_input(g, n, i))
    return refuse(ReasonCode::kOperands, std::string(what) + " input is missing");
  const ir::Tensor& v = g.tensor(n.inputs[i]);
  if (v.dtype != ir::DataType::kInt32 && v.dtype != ir::DataType::kInt64)
    return refuse(ReasonCode::kType, std::string(what) + " of type " + ir::to_string(v.dtype) +
                                         " (int32 or int64 expected)");
  const auto elements = v.has_rank ? ir::element_count(v.shape) : std::nullopt;
  if (!elements || *elements != static_cast<int64_t>(count))
    return refuse(v.is_const() ? ReasonCode::kShape : ReasonCode::kRuntimeValue,
                  std::string(what) + " must hold " + std::to_string(count) +
                      " values in a static shape (tensor '" + v.name + "' has shape " +
                      (v.has_rank ? ir::to_string(v.shape) : std::string("of unknown rank")) + ")");
  if (v.is_const() && !ir::const_ints(g, n.inputs[i]))
    return refuse(ReasonCode::kOperands, std::string(what) + " cannot be read");
  return {};
}

ir::TensorId int64_vector(LowerContext& ctx, const ir::Node& n, size_t i,
                          std::span<const int64_t> pick, const std::string& name) {
  const ir::TensorId src = n.inputs[i];
  const std::string base = n.name + "/" + name;
  if (auto values = ir::const_ints(ctx.graph(), src)) {
    if (pick.empty()) return ctx.const_i64(base, std::move(*values));
    std::vector<int64_t> picked;
    picked.reserve(pick.size());
    for (int64_t k : pick) picked.push_back((*values)[static_cast<size_t>(k)]);
    return ctx.const_i64(base, std::move(picked));
  }
  const ir::Tensor& x = ctx.tensor(src);
  const int64_t count = ir::element_count(x.shape).value_or(-1);
  auto vector = [&](const std::string& suffix, int64_t length) {
    const ir::TensorId t = ctx.temp(base + "_" + suffix, ir::DataType::kInt64);
    ctx.graph().tensor(t).has_rank = true;
    ctx.graph().tensor(t).shape = {length};
    return t;
  };
  ir::TensorId cur = src;
  if (x.rank() != 1) {
    const ir::TensorId flat = vector("flat", count);
    ctx.graph().tensor(flat).dtype = x.dtype;
    ctx.emit(n, "Reshape", {cur, ctx.const_i64(base + "_flat_shape", {count})}, {flat},
             name + "_flat");
    cur = flat;
  }
  if (ctx.tensor(cur).dtype != ir::DataType::kInt64) {
    const ir::TensorId wide = vector("int64", count);
    ctx.emit(n, "Cast", {cur}, {wide}, name + "_int64")
        .attrs.set("to", int64_t{ir::onnx_type_code(ir::DataType::kInt64)});
    cur = wide;
  }
  bool in_order = pick.empty() || static_cast<int64_t>(pick.size()) == count;
  for (size_t k = 0; in_order && k < pick.size(); ++k)
    in_order = pick[k] == static_cast<int64_t>(k);
  if (in_order) return cur;
  const ir::TensorId picked = vector("permuted", static_cast<int64_t>(pick.size()));
  ctx.emit(n, "Gather", {cur, ctx.const_i64(base + "_order", {pick.begin(), pick.end()})}, {picked},
           name + "_permuted");
  return picked;
}

void read_pool_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_Pool2DOptions();
  a.set("padding", std::string(o && o->padding() == tflite::Padding::VALID ? "VALID" : "SAME"));
  a.set("stride_h", int64_t{o ? o->stride_h() : 1});
  a.set("stride_w", int64_t{o ? o->stride_w() : 1});
  a.set("filter_height", int64_t{o ? o->filter_height() : 1});
  a.set("filter_width", int64_t{o ? o->filter_width() : 1});
  store_activation(o, a);
}

Window read_window(const ir::Node& n) {
  Window w;
  w.stride_h = n.attrs.get_int("stride_h", 1);
  w.stride_w = n.attrs.get_int("stride_w", 1);
  w.dilation_h = n.attrs.get_int("dilation_h_factor", 1);
  w.dilation_w = n.attrs.get_int("dilation_w_factor", 1);
  w.same = n.attrs.get_string("padding") == "SAME";
  return w;
}

Check check_window(const ir::Node& n) {
  Window w = read_window(n);
  if (w.stride_h < 1 || w.stride_w < 1)
    return refuse(ReasonCode::kOperands, "strides must be positive (got " +
                                             std::to_string(w.stride_h) + "x" +
                                             std::to_string(w.stride_w) + ")");
  if (w.dilation_h < 1 || w.dilation_w < 1)
    return refuse(ReasonCode::kOperands, "dilation factors must be positive");
  return {};
}

// Sets strides, dilations and explicit pads (TFLite SAME puts the odd pixel at
// the end, as ONNX SAME_UPPER does). Dynamic spatial sizes use auto_pad.
void set_window(ir::Node& out, const Window& w, int64_t in_h, int64_t in_w, int64_t k_h,
                int64_t k_w, bool with_dilation) {
  out.attrs.set("kernel_shape", std::vector<int64_t>{k_h, k_w});
  out.attrs.set("strides", std::vector<int64_t>{w.stride_h, w.stride_w});
  if (with_dilation) out.attrs.set("dilations", std::vector<int64_t>{w.dilation_h, w.dilation_w});
  if (!w.same) {
    out.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    return;
  }
  // At stride 1 the SAME padding does not depend on the input size; a dynamic
  // size with a larger stride needs auto_pad (which ONNX Runtime refuses
  // together with dilations, so dilated convs keep explicit pads).
  if ((in_h < 0 && w.stride_h != 1) || (in_w < 0 && w.stride_w != 1)) {
    out.attrs.set("auto_pad", std::string("SAME_UPPER"));
    return;
  }
  auto total = [](int64_t in, int64_t k, int64_t s, int64_t d) {
    if (in < 0) return (k - 1) * d;  // stride 1
    int64_t out = (in + s - 1) / s;
    int64_t need = (out - 1) * s + (k - 1) * d + 1 - in;
    return need > 0 ? need : 0;
  };
  int64_t th = total(in_h, k_h, w.stride_h, with_dilation ? w.dilation_h : 1);
  int64_t tw = total(in_w, k_w, w.stride_w, with_dilation ? w.dilation_w : 1);
  out.attrs.set("pads", std::vector<int64_t>{th / 2, tw / 2, th - th / 2, tw - tw / 2});
}

LayoutPlan plan_for(const ir::Node& n, const ir::Perm& data_layout, size_t data_index,
                    const ir::Perm& out_layout) {
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), ir::Perm{});
  if (data_index < plan.inputs.size()) plan.inputs[data_index] = data_layout;
  plan.outputs.assign(n.outputs.size(), out_layout);
  return plan;
}

// Weights arrive as constants (or folded float16 constants): permute them in
// the initializer. A weight computed at run time gets a Transpose node.
ir::TensorId weight_in_layout(LowerContext& ctx, const ir::Node& n, size_t i,
                              const ir::Perm& perm) {
  ir::TensorId w = n.inputs[i];
  if (ctx.tensor(w).is_const())
    return ctx.constant_in_layout(w, perm, "filter of " + n.name + " permuted");
  ir::Tensor t = ctx.tensor(w);
  t.name += '/';
  t.name += ir::to_string(perm);
  t.layout = perm;
  ir::TensorId out = ctx.graph().add_tensor(std::move(t));
  ir::Node& tr = ctx.emit(n, "Transpose", {w}, {out}, "weight_Transpose");
  tr.attrs.set("perm", to_i64(perm));
  tr.inserted = ir::Insertion{ctx.tensor(w).name, "filter computed at run time"};
  return out;
}

}  // namespace lite2onnx::ops
