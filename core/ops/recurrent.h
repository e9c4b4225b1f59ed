// Shared by the recurrent op converters (rnn.cc, svdf.cc and the LSTM family,
// lstm.h): a writer of the ONNX nodes of one TFLite op, and the
// checks and sequence plumbing every recurrent op needs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/common.h"
#include "core/ops/exact.h"

namespace lite2onnx::ops::recurrent {

// Emits the ONNX nodes of one TFLite op: each named `<op>/<suffix>` (the
// emitter makes names unique), each intermediate tensor float32; scalars and
// small integer constants made once per op.
class Writer {
 public:
  Writer(LowerContext& ctx, const ir::Node& n) : ctx_(ctx), n_(n) {}
  LowerContext& ctx() { return ctx_; }
  const ir::Graph& graph() { return ctx_.graph(); }
  const ir::Node& node() const { return n_; }

  // A node writing a new tensor (of `type`); returns it.
  ir::TensorId op(const std::string& type, std::vector<ir::TensorId> in, const std::string& suffix,
                  std::vector<ir::Attr> attrs = {}, ir::DataType out_type = ir::DataType::kFloat32);
  // A node writing the given tensor.
  void op_into(ir::TensorId out, const std::string& type, std::vector<ir::TensorId> in,
               const std::string& suffix, std::vector<ir::Attr> attrs = {});
  // A node with several outputs, each a new float tensor.
  std::vector<ir::TensorId> ops(const std::string& type, std::vector<ir::TensorId> in,
                                size_t outputs, const std::string& suffix,
                                std::vector<ir::Attr> attrs = {});

  ir::TensorId scalar(float v);                    // float32 scalar
  ir::TensorId ints(std::vector<int64_t> values);  // int64 1-D
  ir::TensorId index(int64_t v);                   // int64 scalar

  // TFLite's activation (NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGMOID).
  ir::TensorId activation(const std::string& act, ir::TensorId x, const std::string& suffix);
  // x @ W^T for a [out, in] weight W: a constant is read transposed (no node).
  ir::TensorId matmul_t(ir::TensorId x, ir::TensorId w, const std::string& suffix);
  // W^T of a [rows, cols] matrix: a constant read transposed, else a Transpose.
  ir::TensorId transposed(ir::TensorId w, const std::string& suffix);
  ir::TensorId add(ir::TensorId a, ir::TensorId b, const std::string& suffix) {
    return op("Add", {a, b}, suffix);
  }
  ir::TensorId mul(ir::TensorId a, ir::TensorId b, const std::string& suffix) {
    return op("Mul", {a, b}, suffix);
  }
  ir::TensorId clip(ir::TensorId x, float lo, float hi, const std::string& suffix) {
    return op("Clip", {x, scalar(lo), scalar(hi)}, suffix);
  }
  // Element t of axis `axis` (the axis goes).
  ir::TensorId gather(ir::TensorId x, int64_t t, int64_t axis, const std::string& suffix);
  ir::TensorId squeeze(ir::TensorId x, std::vector<int64_t> axes, const std::string& suffix);
  ir::TensorId unsqueeze(ir::TensorId x, std::vector<int64_t> axes, const std::string& suffix);
  // Concatenated constants [rows..., cols] along axis 0 as one constant when
  // all are float constants, else a Concat node.
  ir::TensorId stack_rows(const std::vector<ir::TensorId>& parts, const std::string& suffix);
  // W^T of row-stacked [rows_k, cols] weights, [cols, sum of rows_k]: one
  // constant when all are float constants, else a Concat of the transposed
  // constants (each read transposed: no Transpose node).
  ir::TensorId stack_transposed(const std::vector<ir::TensorId>& parts, const std::string& suffix);
  // A float constant of `shape` holding `values`.
  ir::TensorId constant(std::vector<float> values, ir::Shape shape, const std::string& suffix);

  // Quantization grid of an integer kernel, in float: round(x / scale)
  // clamped to [lo, hi] steps (the integer as a float count of steps); and
  // back to a real value.
  ir::TensorId to_steps(ir::TensorId x, double scale, double lo, double hi,
                        const std::string& suffix);
  ir::TensorId from_steps(ir::TensorId steps, double scale, const std::string& suffix) {
    return mul(steps, scalar(static_cast<float>(scale)), suffix);
  }

 private:
  LowerContext& ctx_;
  const ir::Node& n_;
  std::map<float, ir::TensorId> scalars_;
  std::map<std::vector<int64_t>, ir::TensorId> ints_;
  std::map<int64_t, ir::TensorId> indices_;
};

// The values of a float (or dequantized) constant, or nullopt.
std::optional<std::vector<float>> float_values(const ir::Tensor& t);
// A tensor's per-tensor scale and zero point (0 when it has none).
inline double scale_of(const ir::Tensor& t) {
  return t.quant && t.quant->scale.size() == 1 ? t.quant->scale[0] : 0.0;
}
inline int64_t zp_of(const ir::Tensor& t) {
  return t.quant && !t.quant->zero_point.empty() ? t.quant->zero_point[0] : 0;
}

// Writes a sequence of per-step [batch, units] values into a [T, B, U]
// (time-major) or [B, T, U] tensor `out`: Concat along the batch or unit axis,
// then one Reshape.
void stack_steps(Writer& w, const std::vector<ir::TensorId>& steps, bool time_major, int64_t batch,
                 int64_t units, ir::TensorId out, const std::string& suffix);

// Nothing, or why not: the input (a constant) has a static shape equal to `want`.
Check require_shape(const ir::Graph& g, const ir::Node& n, size_t i, const ir::Shape& want,
                    const char* what);
// The batch of a recurrent op's input whose other dimensions are static:
// the input's, or when that is dynamic (-1) the state's (a variable tensor has
// a static shape, and TFLite's kernel requires the two to agree); -1 when
// neither says or a dimension but the batch is dynamic.
int64_t input_batch(const ir::Tensor& x, size_t batch_axis, const ir::Tensor& state);
// Nothing, or why not: TFLite's activation option is one the recurrent
// kernels apply.
Check check_recurrent_activation(const ir::Node& n, bool none_allowed);

// How a hybrid cell (int8 weights, float activations) multiplies by its
// weights: as TFLite's hybrid kernel does (`writer` set: the op's exact form,
// each row of the activations quantized at run time), or, without a writer,
// in float from the dequantized weights.
struct HybridProduct {
  exact::Writer* writer = nullptr;
  bool asymmetric = false;  // the op's asymmetric_quantize_inputs
  bool on() const { return writer != nullptr; }
  // x @ W^T, W the weights stacked along their rows (exact::builtin_hybrid_rows).
  ir::TensorId operator()(ir::TensorId x, const std::vector<ir::TensorId>& weights,
                          const std::string& what) const;
};
// Lowers node `n` with `lower`, given the hybrid kernel's product; then the
// first arithmetic problem of its integer steps, or ok.
Status lower_with_hybrid_product(LowerContext& ctx, const ir::Node& n,
                                 const std::function<Status(const HybridProduct&)>& lower);

// The most steps a sequence op is unrolled to.
inline constexpr int64_t kMaxSteps = 4096;
// What one ONNX node of an unrolled cell costs in memory (the node, its output
// tensor, its NodeProto), as charged against Limits::max_created_bytes: a
// model of many long sequences stops with kResourceLimit before it exhausts
// memory (the default limit allows about 260,000 such nodes).
inline constexpr uint64_t kUnrolledNodeBytes = 1024;
// Charges `nodes` unrolled nodes of op `n`; kResourceLimit once past the limit.
Status reserve_nodes(LowerContext& ctx, const ir::Node& n, int64_t nodes);

}  // namespace lite2onnx::ops::recurrent
