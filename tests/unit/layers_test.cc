// The layers of core and the direction of their includes: a file may include
// files of its own layer and of the layers below, never above (which also
// rules out cycles between layers). One static library per layer links only
// the ones below (CMakeLists.txt); docs/architecture.md describes them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace lite2onnx {
namespace {

namespace fs = std::filesystem;

struct Layer {
  const char* name;
  std::vector<const char*> prefixes;  // paths under the source root
};

// Bottom to top.
const std::vector<Layer>& layers() {
  static const std::vector<Layer> kLayers = {
      {"base", {"core/status.h", "core/version.h"}},
      {"ir", {"core/ir/"}},
      {"api",
       {"core/options.h", "core/option_table.", "core/checkpoint.h", "core/diagnostics.",
        "core/output_buffer.h", "core/layout_spec.", "core/model_metadata."}},
      {"tflite", {"core/tflite/"}},
      {"ops", {"core/ops/"}},
      {"passes", {"core/passes/"}},
      {"onnx", {"core/onnx/"}},
      {"core", {"core/convert.", "core/pipeline.", "core/preflight.", "core/provenance."}},
  };
  return kLayers;
}

std::optional<size_t> layer_of(const std::string& path) {
  for (size_t i = 0; i < layers().size(); ++i)
    for (const char* p : layers()[i].prefixes)
      if (path.rfind(p, 0) == 0) return i;
  return std::nullopt;
}

// (file, what it includes) pairs, paths from the source root.
using Includes = std::vector<std::pair<std::string, std::string>>;

// Every problem: a file in no layer, an include of a file in no layer, an
// include that points up.
std::vector<std::string> violations(const Includes& includes) {
  std::vector<std::string> out;
  for (const auto& [file, included] : includes) {
    auto from = layer_of(file), to = layer_of(included);
    if (!from) out.push_back(file + " belongs to no layer");
    if (!to) out.push_back(file + " includes " + included + ", which belongs to no layer");
    if (from && to && *to > *from)
      out.push_back(file + " (" + layers()[*from].name + ") includes " + included + " (" +
                    layers()[*to].name + "): an include that points up");
  }
  return out;
}

Includes includes_of_core(const fs::path& root) {
  static const std::regex kInclude(R"(^\s*#\s*include\s+"(core/[^"]+)\")");
  Includes out;
  for (const auto& entry : fs::recursive_directory_iterator(root / "core")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    const std::string file = fs::relative(entry.path(), root).generic_string();
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    bool any = false;
    while (std::getline(in, line))
      if (std::regex_search(line, m, kInclude)) {
        out.emplace_back(file, m[1]);
        any = true;
      }
    if (!any) out.emplace_back(file, file);  // still checked for a layer
  }
  return out;
}

TEST(Layers, CoreIncludesPointOnlyDown) {
  const Includes includes = includes_of_core(LITE2ONNX_SOURCE_DIR);
  ASSERT_GT(includes.size(), 100u);
  EXPECT_THAT(violations(includes), ::testing::IsEmpty());
}

TEST(Layers, TheCheckFindsWhatItLooksFor) {
  EXPECT_THAT(violations({{"core/ir/graph.h", "core/ops/registry.h"}}),
              ::testing::ElementsAre(::testing::HasSubstr("points up")));
  EXPECT_THAT(violations({{"core/tflite/reader.cc", "core/ops/registry.h"}}),
              ::testing::ElementsAre(::testing::HasSubstr("points up")));
  EXPECT_THAT(violations({{"core/new_thing.cc", "core/ir/graph.h"}}),
              ::testing::ElementsAre(::testing::HasSubstr("belongs to no layer")));
  EXPECT_THAT(violations({{"core/pipeline.cc", "core/ir/graph.h"},
                          {"core/ops/shape.cc", "core/ops/common.h"}}),
              ::testing::IsEmpty());
}

}  // namespace
}  // namespace lite2onnx
