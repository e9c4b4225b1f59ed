// Writes the emitter's If test model (tests/unit/subgraph_graphs.h, if_model())
// as ONNX, emitted as the pipeline emits (opset 13): for the numeric check
// that ONNX Runtime runs the branch the condition picks
// (tests/numeric/test/if_model.mjs, ctest numeric_if_subgraph).
//
//   write_if_model OUT.onnx
#include <cstdio>
#include <fstream>

#include "core/onnx/emit.h"
#include "subgraph_graphs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.onnx\n", argv[0]);
    return 2;
  }
  lite2onnx::onnx_emit::EmitOptions options;
  options.opset = 13;
  auto onnx = lite2onnx::onnx_emit::emit(lite2onnx::testing::if_model(), options);
  if (!onnx) {
    std::fprintf(stderr, "emit failed: %s\n", onnx.error().message.c_str());
    return 1;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out.write(onnx->data(), static_cast<std::streamsize>(onnx->size()));
  return out ? 0 : 1;
}
