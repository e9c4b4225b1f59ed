// Writes the hostile models of tests/unit/hostile_graphs.h to a folder, one
// NAME.tflite each with NAME.args holding the converter arguments the hostile
// tests add (one per line), so that their cost can be measured and profiled
// outside the tests (docs/limits.md, "Measuring the hostile models").
//
//   write_hostile_models OUT_DIR [NAME...]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hostile_graphs.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [NAME...]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::vector<std::string> only(argv + 2, argv + argc);
  int written = 0;
  for (const auto& m : lite2onnx::testing::hostile_models()) {
    if (!only.empty() && std::find(only.begin(), only.end(), m.name) == only.end()) continue;
    const std::vector<std::byte> bytes = m.build();
    std::ofstream model(dir / (m.name + ".tflite"), std::ios::binary);
    model.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    std::ofstream args(dir / (m.name + ".args"));
    for (const auto& a : m.args) args << a << "\n";
    if (!model || !args) {
      std::fprintf(stderr, "%s: cannot write %s\n", argv[0], m.name.c_str());
      return 1;
    }
    std::printf("%-24s %s\n", m.name.c_str(), m.what.c_str());
    ++written;
  }
  return written > 0 ? 0 : 1;
}
