// RFFT2D -> (RESHAPE | SQUEEZE | EXPAND_DIMS)* -> COMPLEX_ABS, as TensorFlow
// writes a magnitude spectrogram (tf.signal.stft + tf.abs). ONNX Runtime has
// no complex tensors, so the pair becomes one real-valued computation: the
// RFFT2D node is marked to produce the magnitude (its output and the reshapes
// after it become float32), and COMPLEX_ABS becomes a copy.
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

void fuse_spectral_magnitude(ir::Graph& g) {
  // Each reader once, however many of its input slots read the tensor.
  std::vector<std::vector<size_t>> readers(g.tensors.size());
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (ir::TensorId t : g.nodes[k].inputs)
      if (g.valid(t) &&
          (readers[static_cast<size_t>(t)].empty() || readers[static_cast<size_t>(t)].back() != k))
        readers[static_cast<size_t>(t)].push_back(k);
  for (auto& n : g.nodes) {
    if (n.builtin != ir::builtin::kRfft2d || n.outputs.size() != 1) continue;
    // Every path from the output must be shape-only ops ending in COMPLEX_ABS.
    std::vector<ir::TensorId> complex = {n.outputs[0]};
    std::vector<size_t> abs_nodes;
    bool ok = true;
    for (size_t i = 0; ok && i < complex.size(); ++i) {
      ir::TensorId t = complex[i];
      if (g.is_graph_output(t) || readers[static_cast<size_t>(t)].empty()) ok = false;
      for (size_t k : readers[static_cast<size_t>(t)]) {
        const ir::Node& r = g.nodes[k];
        if (r.builtin == ir::builtin::kComplexAbs && r.inputs.size() == 1) {
          abs_nodes.push_back(k);
        } else if (shape_only(r.builtin) && r.inputs[0] == t && r.outputs.size() == 1 &&
                   std::count(r.inputs.begin(), r.inputs.end(), t) == 1) {
          complex.push_back(r.outputs[0]);
        } else {
          ok = false;
        }
      }
    }
    if (!ok) continue;
    n.attrs.set("magnitude", int64_t{1});
    for (ir::TensorId t : complex) g.tensor(t).dtype = ir::DataType::kFloat32;
    for (size_t k : abs_nodes) g.nodes[k].attrs.set("magnitude_input", int64_t{1});
  }
}

}  // namespace lite2onnx::passes
