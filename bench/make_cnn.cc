// lite2onnx_make_cnn OUT.tflite [LAYERS CHANNELS SIDE]: writes the benchmarks'
// generated float CNN (cnn_model.h; default 12 layers of 512 channels on a
// 32x32 input, ~108 MiB of weights, as BM_Convert/large_cnn) to a file, for the
// whole-process benchmark (bench/large_model.sh).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cnn_model.h"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 5) {
    std::fprintf(stderr, "usage: %s OUT.tflite [LAYERS CHANNELS SIDE]\n", argv[0]);
    return 2;
  }
  lite2onnx::bench::CnnSpec spec;
  if (argc == 5) {
    spec.layers = std::atoi(argv[2]);
    spec.channels = std::atoi(argv[3]);
    spec.side = std::atoi(argv[4]);
    if (spec.layers < 1 || spec.layers > 1000 || spec.channels < 1 || spec.channels > 4096 ||
        spec.side < 1 || spec.side > 4096) {
      std::fprintf(stderr, "%s: LAYERS 1..1000, CHANNELS 1..4096, SIDE 1..4096\n", argv[0]);
      return 2;
    }
  }
  std::string error;
  flatbuffers::DetachedBuffer model = lite2onnx::bench::build_cnn(spec, &error);
  if (!model.data()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.c_str());
    return 1;
  }
  std::FILE* out = std::fopen(argv[1], "wb");
  if (!out || std::fwrite(model.data(), 1, model.size(), out) != model.size() ||
      std::fclose(out) != 0) {
    std::fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
