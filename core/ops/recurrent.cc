// The parts every recurrent op converter uses (recurrent.h): the Writer of
// one op's ONNX nodes, sequence plumbing, and the checks the kernels share.
// The ops themselves: rnn.cc (RNN, UNIDIRECTIONAL_SEQUENCE_RNN,
// BIDIRECTIONAL_SEQUENCE_RNN), svdf.cc (SVDF) and the LSTM family (lstm.h).
// All are Terminate ops: they read their inputs in TFLite memory order. Their
// state tensors (variable tensors the kernel updates in place) are model
// state: expose_state (passes.h) makes them graph inputs and gives the node
// the outputs the converters write the next values into.
#include "core/ops/recurrent.h"

#include "core/ir/shape.h"

namespace lite2onnx::ops::recurrent {

using ir::DataType;
using ir::Shape;
using ir::TensorId;

// ---- Writer ----

TensorId Writer::op(const std::string& type, std::vector<TensorId> in, const std::string& suffix,
                    std::vector<ir::Attr> attrs, DataType out_type) {
  TensorId t = ctx_.temp(n_.name + "/" + suffix, out_type);
  op_into(t, type, std::move(in), suffix, std::move(attrs));
  return t;
}

void Writer::op_into(TensorId out, const std::string& type, std::vector<TensorId> in,
                     const std::string& suffix, std::vector<ir::Attr> attrs) {
  ir::Node& node = ctx_.emit(n_, type, std::move(in), {out}, suffix);
  for (auto& a : attrs) node.attrs.set(a.name, std::move(a.value));
}

std::vector<TensorId> Writer::ops(const std::string& type, std::vector<TensorId> in, size_t outputs,
                                  const std::string& suffix, std::vector<ir::Attr> attrs) {
  std::vector<TensorId> outs;
  for (size_t i = 0; i < outputs; ++i)
    outs.push_back(ctx_.temp(n_.name + "/" + suffix + "_" + std::to_string(i), DataType::kFloat32));
  ir::Node& node = ctx_.emit(n_, type, std::move(in), outs, suffix);
  for (auto& a : attrs) node.attrs.set(a.name, std::move(a.value));
  return outs;
}

TensorId Writer::scalar(float v) {
  auto [it, fresh] = scalars_.try_emplace(v, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_scalar(n_.name + "/scalar", DataType::kFloat32, v);
  return it->second;
}

TensorId Writer::ints(std::vector<int64_t> values) {
  auto [it, fresh] = ints_.try_emplace(values, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_i64(n_.name + "/ints", std::move(values));
  return it->second;
}

TensorId Writer::index(int64_t v) {
  auto [it, fresh] = indices_.try_emplace(v, ir::kNoTensor);
  if (fresh) it->second = ctx_.const_i64(n_.name + "/index", {v}, Shape{});
  return it->second;
}

TensorId Writer::activation(const std::string& act, TensorId x, const std::string& suffix) {
  if (act == "RELU") return op("Relu", {x}, suffix);
  if (act == "RELU6") return clip(x, 0.f, 6.f, suffix);
  if (act == "RELU_N1_TO_1") return clip(x, -1.f, 1.f, suffix);
  if (act == "TANH") return op("Tanh", {x}, suffix);
  if (act == "SIGMOID") return op("Sigmoid", {x}, suffix);
  return x;  // NONE
}

TensorId Writer::matmul_t(TensorId x, TensorId w, const std::string& suffix) {
  return op("MatMul", {x, transposed(w, suffix + "/transpose")}, suffix);
}

TensorId Writer::transposed(TensorId w, const std::string& suffix) {
  if (graph().tensor(w).is_const())
    return ctx_.constant_in_layout(w, ir::Perm{1, 0}, "read transposed by " + n_.name);
  return op("Transpose", {w}, suffix, {{"perm", std::vector<int64_t>{1, 0}}});
}

TensorId Writer::gather(TensorId x, int64_t t, int64_t axis, const std::string& suffix) {
  return op("Gather", {x, index(t)}, suffix, {{"axis", axis}});
}

TensorId Writer::squeeze(TensorId x, std::vector<int64_t> axes, const std::string& suffix) {
  return op("Squeeze", {x, ints(std::move(axes))}, suffix);
}

TensorId Writer::unsqueeze(TensorId x, std::vector<int64_t> axes, const std::string& suffix) {
  return op("Unsqueeze", {x, ints(std::move(axes))}, suffix);
}

TensorId Writer::constant(std::vector<float> values, Shape shape, const std::string& suffix) {
  return ctx_.const_f32(n_.name + "/" + suffix, std::move(values), std::move(shape));
}

TensorId Writer::stack_rows(const std::vector<TensorId>& parts, const std::string& suffix) {
  if (parts.size() == 1) return parts[0];
  std::vector<float> all;
  Shape shape;
  bool folded = true;
  for (TensorId p : parts) {
    const ir::Tensor& t = graph().tensor(p);
    auto v = t.is_const() && !t.quantized_type ? float_values(t) : std::nullopt;
    if (!v || t.shape.empty()) {
      folded = false;
      break;
    }
    if (shape.empty()) {
      shape = t.shape;
      shape[0] = 0;
    }
    shape[0] += t.shape[0];
    all.insert(all.end(), v->begin(), v->end());
  }
  if (folded) return constant(std::move(all), shape, suffix);
  return op("Concat", parts, suffix, {{"axis", int64_t{0}}});
}

TensorId Writer::stack_transposed(const std::vector<TensorId>& parts, const std::string& suffix) {
  if (parts.size() == 1) return transposed(parts[0], suffix);
  bool folded = true;
  for (TensorId p : parts) {
    const ir::Tensor& t = graph().tensor(p);
    folded = folded && t.is_const() && !t.quantized_type && t.rank() == 2 && float_values(t);
  }
  if (folded) {
    // [rows_k, cols] each -> [cols, sum of rows_k], written now.
    const int64_t cols = graph().tensor(parts[0]).shape[1];
    int64_t rows = 0;
    for (TensorId p : parts) rows += graph().tensor(p).shape[0];
    std::vector<float> out(static_cast<size_t>(cols * rows));
    int64_t at = 0;
    for (TensorId p : parts) {
      const ir::Tensor& t = graph().tensor(p);
      const std::vector<float> v = *float_values(t);
      for (int64_t r = 0; r < t.shape[0]; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[static_cast<size_t>(c * rows + at + r)] = v[static_cast<size_t>(r * cols + c)];
      at += t.shape[0];
    }
    return constant(std::move(out), {cols, rows}, suffix);
  }
  std::vector<TensorId> ts;
  for (size_t i = 0; i < parts.size(); ++i)
    ts.push_back(transposed(parts[i], suffix + "/" + std::to_string(i)));
  return op("Concat", ts, suffix, {{"axis", int64_t{1}}});
}

TensorId Writer::to_steps(TensorId x, double scale, double lo, double hi,
                          const std::string& suffix) {
  TensorId r = op("Round", {mul(x, scalar(static_cast<float>(1.0 / scale)), suffix + "/scaled")},
                  suffix + "/round");
  return clip(r, static_cast<float>(lo), static_cast<float>(hi), suffix);
}

// ---- helpers ----

std::optional<std::vector<float>> float_values(const ir::Tensor& t) {
  if (!t.is_const() || t.data->stored_type != DataType::kFloat32) return std::nullopt;
  auto span = t.data->as<float>();
  return std::vector<float>(span.begin(), span.end());
}

void stack_steps(Writer& w, const std::vector<TensorId>& steps, bool time_major, int64_t batch,
                 int64_t units, TensorId out, const std::string& suffix) {
  const auto t = static_cast<int64_t>(steps.size());
  // Time-major [T, B, U]: the steps' rows one after the other; batch-major
  // [B, T, U]: each batch row holds the steps' units one after the other.
  TensorId joined = steps.size() == 1 ? steps[0]
                                      : w.op("Concat", steps, suffix + "/concat",
                                             {{"axis", int64_t{time_major ? 0 : 1}}});
  Shape shape = time_major ? Shape{t, batch, units} : Shape{batch, t, units};
  w.op_into(out, "Reshape", {joined, w.ints(shape)}, suffix);
}

TensorId HybridProduct::operator()(TensorId x, const std::vector<TensorId>& weights,
                                   const std::string& what) const {
  return exact::builtin_hybrid_rows(*writer, x, weights, asymmetric, what);
}

Status lower_with_hybrid_product(LowerContext& ctx, const ir::Node& n,
                                 const std::function<Status(const HybridProduct&)>& lower) {
  exact::Writer writer(ctx, n);
  const HybridProduct hybrid{&writer, n.attrs.get_int("asymmetric_quantize_inputs") != 0};
  if (Status st = lower(hybrid); !st) return st;
  return writer.result();
}

Status reserve_nodes(LowerContext& ctx, const ir::Node& n, int64_t nodes) {
  ir::Graph& g = ctx.graph();
  const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(nodes, 0)) * kUnrolledNodeBytes;
  const std::string by = n.name + " unrolled to " + std::to_string(nodes) + " nodes";
  g.created().charge(bytes, by);
  if (!g.created().exceeded()) return ok_status();
  Error e =
      make_error(ErrorCode::kResourceLimit,
                 "the conversion would create more than " + std::to_string(g.created().limit()) +
                     " bytes of constants and unrolled nodes (the max_created_bytes limit; "
                     "passed at '" +
                     by + "')");
  e.op_index = n.source_op;
  return e;
}

Check require_shape(const ir::Graph& g, const ir::Node& n, size_t i, const Shape& want,
                    const char* what) {
  if (!has_input(g, n, i)) return refuse(ReasonCode::kOperands, std::string(what) + " is missing");
  const ir::Tensor& t = g.tensor(n.inputs[i]);
  if (!t.has_rank || t.shape != want)
    return refuse(ReasonCode::kShape, std::string(what) + " '" + t.name + "' has shape " +
                                          ir::to_string(t.shape) + ", TFLite's kernel needs " +
                                          ir::to_string(want));
  return {};
}

int64_t input_batch(const ir::Tensor& x, size_t batch_axis, const ir::Tensor& state) {
  if (!x.has_rank || batch_axis >= x.rank()) return -1;
  for (size_t a = 0; a < x.rank(); ++a)
    if (a != batch_axis && x.shape[a] < 0) return -1;
  if (x.shape[batch_axis] >= 0) return x.shape[batch_axis];
  if (!state.has_rank || state.rank() != 2 || state.shape[0] < 1) return -1;
  return state.shape[0];
}

Check check_recurrent_activation(const ir::Node& n, bool none_allowed) {
  const std::string a = n.attrs.get_string("fused_activation_function", "NONE");
  if (a == "RELU" || a == "RELU6" || a == "RELU_N1_TO_1" || a == "TANH") return {};
  if (a == "NONE" && none_allowed) return {};
  if (a == "NONE")
    return refuse(ReasonCode::kOption,
                  "activation NONE: TFLite's kernel then leaves the gate buffers unwritten");
  return refuse(ReasonCode::kOption, "activation " + a + " is not converted");
}

}  // namespace lite2onnx::ops::recurrent
