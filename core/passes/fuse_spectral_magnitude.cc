// RFFT2D -> (RESHAPE | SQUEEZE | EXPAND_DIMS)* -> COMPLEX_ABS, as TensorFlow
// writes a magnitude spectrogram (tf.signal.stft + tf.abs), or -> REAL or
// IMAG. ONNX Runtime has no complex tensors, so the pair becomes one
// real-valued computation: the RFFT2D node is marked to produce the magnitude,
// the real or the imaginary part (its output and the reshapes after it become
// float32), and the reader becomes a copy. Every path must end in the same
// kind of reader: a spectrum read as two parts stays complex (unsupported).
#include <algorithm>

#include "core/ir/builtins.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

bool shape_only(int builtin) {
  return builtin == ir::builtin::kReshape || builtin == ir::builtin::kSqueeze ||
         builtin == ir::builtin::kExpandDims;
}

}  // namespace

Status fuse_spectral_magnitude(ir::Graph& g, PassContext& ctx) {
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    const ir::Node& n = g.node(k);
    if (n.builtin != ir::builtin::kRfft2d || n.outputs.size() != 1) continue;
    // Every path from the output must be shape-only ops ending in COMPLEX_ABS.
    std::vector<ir::TensorId> complex = {n.outputs[0]};
    std::vector<ir::NodeId> abs_nodes;
    int part = -1;  // the one kind of reader: COMPLEX_ABS, REAL or IMAG
    bool ok = true;
    for (size_t i = 0; ok && i < complex.size(); ++i) {
      ir::TensorId t = complex[i];
      // Each reader once, however many of its input slots read the tensor.
      const std::vector<ir::NodeId> readers = g.readers(t);
      if (g.is_graph_output(t) || readers.empty()) ok = false;
      for (ir::NodeId r_id : readers) {
        const ir::Node& r = g.node(r_id);
        const bool reader = r.builtin == ir::builtin::kComplexAbs ||
                            r.builtin == ir::builtin::kReal || r.builtin == ir::builtin::kImag;
        if (reader && r.inputs.size() == 1 && (part < 0 || part == r.builtin)) {
          part = r.builtin;
          abs_nodes.push_back(r_id);
        } else if (shape_only(r.builtin) && r.inputs[0] == t && r.outputs.size() == 1 &&
                   std::count(r.inputs.begin(), r.inputs.end(), t) == 1) {
          complex.push_back(r.outputs[0]);
        } else {
          ok = false;
        }
      }
    }
    if (!ok) continue;
    if (part == ir::builtin::kComplexAbs)
      g.info(k).attrs.set("magnitude", int64_t{1});
    else
      g.info(k).attrs.set("part", std::string(part == ir::builtin::kReal ? "real" : "imag"));
    for (ir::TensorId t : complex) g.tensor(t).dtype = ir::DataType::kFloat32;
    for (ir::NodeId a : abs_nodes) g.info(a).attrs.set("magnitude_input", int64_t{1});
  }
  return ok_status();
}

}  // namespace lite2onnx::passes
