#include "core/ir/onnx_ops.h"

#include <algorithm>
#include <array>
#include <utility>

namespace lite2onnx::ir {
namespace {

constexpr OnnxOpTraits kElementwise{.elementwise = true};
constexpr OnnxOpTraits kPicks{.picks_values = true};
constexpr OnnxOpTraits kCopies{.copies_integers = true};
constexpr OnnxOpTraits kPicksAndCopies{.picks_values = true, .copies_integers = true};
constexpr OnnxOpTraits kReshapes{
    .picks_values = true, .copies_integers = true, .reinterprets = true};
constexpr OnnxOpTraits kWeighted{.weighted = true};

// Sorted by name (checked below). Identity picks values but is not an integer
// copy: into a quantized tensor it is the QuantizeLinear itself.
constexpr std::array<std::pair<std::string_view, OnnxOpTraits>, 65> kTable = {{
    {"Abs", kElementwise},
    {"Add", kElementwise},
    {"And", kElementwise},
    {"Cast", kElementwise},
    {"Ceil", kElementwise},
    {"Clip", kElementwise},
    {"Concat", kCopies},
    {"Conv", kWeighted},
    {"ConvTranspose", kWeighted},
    {"Cos", kElementwise},
    {"DepthToSpace", kPicksAndCopies},
    {"Div", kElementwise},
    {"Elu", kElementwise},
    {"Equal", kElementwise},
    {"Erf", kElementwise},
    {"Exp", kElementwise},
    {"Expand", kPicksAndCopies},
    {"Flatten", kReshapes},
    {"Floor", kElementwise},
    {"Gather", kPicksAndCopies},
    {"GatherND", kPicks},
    {"Gemm", kWeighted},
    {"Greater", kElementwise},
    {"GreaterOrEqual", kElementwise},
    {"HardSigmoid", kElementwise},
    {"HardSwish", kElementwise},
    {"Identity", {.elementwise = true, .picks_values = true}},
    {"LeakyRelu", kElementwise},
    {"Less", kElementwise},
    {"LessOrEqual", kElementwise},
    {"Log", kElementwise},
    {"MatMul", kWeighted},
    {"Max", kElementwise},
    {"MaxPool", kPicksAndCopies},
    {"Mean", kElementwise},
    {"Min", kElementwise},
    {"Mod", kElementwise},
    {"Mul", kElementwise},
    {"Neg", kElementwise},
    {"Not", kElementwise},
    {"Or", kElementwise},
    {"PRelu", kElementwise},
    {"Pad", kCopies},
    {"Pow", kElementwise},
    {"Reciprocal", kElementwise},
    {"Relu", kElementwise},
    {"Reshape", kReshapes},
    {"Round", kElementwise},
    {"Sigmoid", kElementwise},
    {"Sign", kElementwise},
    {"Sin", kElementwise},
    {"Slice", kPicksAndCopies},
    {"Softplus", kElementwise},
    {"SpaceToDepth", kPicksAndCopies},
    {"Split", kPicksAndCopies},
    {"Sqrt", kElementwise},
    {"Squeeze", kReshapes},
    {"Sub", kElementwise},
    {"Sum", kElementwise},
    {"Tanh", kElementwise},
    {"Tile", kPicksAndCopies},
    {"Transpose", kPicksAndCopies},
    {"Unsqueeze", kReshapes},
    {"Where", kElementwise},
    {"Xor", kElementwise},
}};

constexpr bool sorted_and_unique() {
  for (size_t i = 1; i < kTable.size(); ++i)
    if (!(kTable[i - 1].first < kTable[i].first)) return false;
  return true;
}
static_assert(sorted_and_unique(), "kTable must be sorted by name, each name once");

}  // namespace

const OnnxOpTraits& onnx_traits(std::string_view op) {
  static constexpr OnnxOpTraits kNone{};
  auto it =
      std::lower_bound(kTable.begin(), kTable.end(), op,
                       [](const auto& entry, std::string_view name) { return entry.first < name; });
  return it != kTable.end() && it->first == op ? it->second : kNone;
}

const OnnxOpTraits& onnx_traits(const Node& n) {
  static constexpr OnnxOpTraits kNone{};
  if (n.dialect != Dialect::kOnnx || !n.domain.empty()) return kNone;
  return onnx_traits(n.op);
}

}  // namespace lite2onnx::ir
