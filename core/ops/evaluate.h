// Evaluation of TFLite ops at conversion time, as data in the op table
// (OpEntry::evaluate: element_sources, arithmetic, ::fold): what constant folding and
// the dilated-convolution fusion compute of the shape arithmetic TFLite
// models carry (SHAPE -> STRIDED_SLICE / PACK / ADD ... -> RESHAPE).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace lite2onnx::ops {

// One output element copies element `index` (row-major) of input `input`.
struct ElementSource {
  uint32_t input = 0;
  int64_t index = 0;
};

// Where the elements of one output come from.
struct OutputMap {
  ir::Shape shape;
  // The output holds input 0's elements in their order (a reshape); then
  // `sources` is empty and the map is not bounded by max_elements.
  bool in_order = false;
  std::vector<ElementSource> sources;  // otherwise one per output element
};

// For an op that only copies elements, given static shapes of its data
// inputs and constant index operands (shape, axis, perm, begin/end/strides,
// indices, dims): every output's map. nullopt otherwise, or when an output
// would list more than `max_elements` sources.
using ElementSourcesFn = std::optional<std::vector<OutputMap>> (*)(const ir::Graph& g,
                                                                   const ir::Node& n,
                                                                   int64_t max_elements);

// The element sources of a TFLite-dialect node through its op table entry;
// nullopt when its op has none or they cannot be derived.
std::optional<std::vector<OutputMap>> element_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t max_elements);

// Binary elementwise arithmetic (numpy broadcast, fused activation) on
// integers or float32.
enum class Arithmetic : uint8_t {
  kNone,
  kAdd,
  kSub,
  kMul,
  kMaximum,
  kMinimum,
  kFloorDiv,
  kFloorMod,
};
// TFLite's result (integers wrap), or nullopt where it is undefined
// (division by zero, INT64_MIN / -1) or not defined here.
std::optional<int64_t> apply(Arithmetic op, int64_t a, int64_t b);
std::optional<float> apply(Arithmetic op, float a, float b);

// The constant value of one output.
struct Folded {
  ir::Shape shape;
  ir::ConstData data;
};
// Any other evaluation (SHAPE of a static shape, CAST of an integer constant):
// every output's value, or nullopt when it cannot be computed here.
using FoldFn = std::optional<std::vector<Folded>> (*)(const ir::Graph& g, const ir::Node& n,
                                                      int64_t max_elements);

// ---- integer constants ----
bool is_integer(ir::DataType t);
// Element i of integer constant data, widened.
int64_t read_int(const ir::ConstData& c, size_t i);
// Integer values stored as `type`, wrapping like static_cast does.
std::vector<std::byte> encode_ints(ir::DataType type, const std::vector<int64_t>& values);

// ---- helpers of the evaluators ----
// Input `id` if it is a constant without quantization whose bytes hold its
// whole static shape in its own type; else nullptr.
const ir::Tensor* plain_const(const ir::Graph& g, ir::TensorId id);
// The static shape of input i, if it is present and static.
std::optional<ir::Shape> input_shape(const ir::Graph& g, const ir::Node& n, size_t i);
// The values of input i, if it is an integer constant.
std::optional<std::vector<int64_t>> input_ints(const ir::Graph& g, const ir::Node& n, size_t i);
// Element count of a shape when it is at most `max`, else nullopt.
std::optional<int64_t> bounded_count(const ir::Shape& s, int64_t max);
// Product of dimensions [begin, end).
int64_t product(const ir::Shape& s, size_t begin, size_t end);
// `outputs` maps of `shape` without elements.
std::vector<OutputMap> empty_result(const ir::Shape& shape, size_t outputs);
// One map: input 0's elements in order, as `shape`.
std::vector<OutputMap> in_order(ir::Shape shape);

}  // namespace lite2onnx::ops
