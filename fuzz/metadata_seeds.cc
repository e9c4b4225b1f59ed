// Writes the metadata fuzz target's generated seeds (fuzz/metadata_models.h)
// into a directory: scripts/fuzz.sh runs it before the target.
//
//   fuzz_metadata_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "fuzz/metadata_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_metadata_seeds DIR\n");
    return 2;
  }
  for (const auto& [name, bytes] : lite2onnx::fuzz::metadata_seed_models()) {
    std::ofstream out(std::string(argv[1]) + "/generated_" + name + ".tflite", std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "fuzz_metadata_seeds: cannot write %s/%s\n", argv[1], name.c_str());
      return 1;
    }
  }
  return 0;
}
