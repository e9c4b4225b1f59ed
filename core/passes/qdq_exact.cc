// --quantization exact: quantized tensors become the integer tensors they
// hold (see store_integers in qdq.h).
#include "core/passes/passes.h"
#include "core/passes/qdq.h"

namespace lite2onnx::passes::qdq {

using ir::DataType;
using ir::TensorId;

Status store_integers(ir::Graph& g, Diagnostics& diag, Checkpoint& checkpoint) {
  for (TensorId t = 0; static_cast<size_t>(t) < g.tensor_count(); ++t) {
    if (checkpoint.should_stop()) return checkpoint.status();
    ir::Tensor& x = g.tensor(t);
    if (!x.quantized_type) continue;
    // Exact lowerings read constants' bytes themselves; a quantized constant
    // still read by the graph is one an integer copy (CONCATENATION, GATHER,
    // ...) reads as it is.
    x.dtype = *x.quantized_type;
    x.quantized_type.reset();
    if (x.is_const() && g.use_count(t) > 0) {
      ++diag.quantization.integer_initializers;
      if (auto n = ir::element_count(x.shape))
        diag.quantization.integer_initializer_bytes +=
            static_cast<size_t>(*n) * ir::element_size(x.dtype);
    }
  }
  return ok_status();
}

}  // namespace lite2onnx::passes::qdq
