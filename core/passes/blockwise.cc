// fold_blockwise: blockwise-quantized constants (LLM weights, packed INT4 with
// per-block scales) become float32 constants.
#include <cstring>

#include "core/passes/passes.h"

namespace lite2onnx::passes {

Status fold_blockwise(ir::Graph& g, PassContext& ctx) {
  size_t folded = 0;
  std::string first;
  for (ir::TensorId id = 0; static_cast<size_t>(id) < g.tensor_count(); ++id) {
    if (!g.tensor(id).quant || g.tensor(id).quant->block_size == 0) continue;
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Tensor& t = g.tensor(id);
    const ir::QuantParams& q = *t.quant;
    if (!t.is_const() || t.data->stored_type != ir::DataType::kInt8)
      return make_error(ErrorCode::kUnsupported,
                        "tensor '" + t.name +
                            "': blockwise quantization is supported on int8 and INT4 "
                            "constants only");
    const auto values = t.data->as<int8_t>();
    const uint64_t n = values.size();
    const auto block = static_cast<uint64_t>(q.block_size);
    // The reader checked that the blocks tile the data, one scale and zero
    // point each.
    if (n % block != 0 || q.scale.size() != n / block || q.zero_point.size() != n / block)
      return make_error(ErrorCode::kInvalidModel,
                        "tensor '" + t.name + "': blockwise quantization does not tile its data");
    if (!g.created().admit(n * 4, "tensor '" + t.name + "' (blockwise, folded to float)"))
      return check_created_bytes(g);
    std::vector<std::byte> out(n * 4);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t b = i / block;
      const float v = static_cast<float>(values[i] - q.zero_point[b]) * q.scale[b];
      std::memcpy(out.data() + i * 4, &v, 4);
    }
    ir::Tensor& w = g.tensor(id);
    w.data = g.own(std::move(out), ir::DataType::kFloat32, "blockwise weights folded to float");
    w.dtype = ir::DataType::kFloat32;
    w.quant.reset();
    if (folded++ == 0) first = w.name;
  }
  if (folded > 0 && ctx.options.quantization != QuantizationMode::kDequantize)
    ctx.diag.warnings.push_back(
        std::to_string(folded) + " blockwise-quantized weight tensor" + (folded == 1 ? "" : "s") +
        " (first: '" + first +
        "') folded to float32: ONNX dequantizes by blocks from opset 21 on, past the highest "
        "opset written here");
  return ok_status();
}

}  // namespace lite2onnx::passes
