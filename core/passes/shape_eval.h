// Shared by the TFLite-dialect passes that evaluate shape arithmetic at
// conversion time (fold_constants, fuse_dilated_convolutions): where each
// output element of a data-movement op comes from, the numpy broadcast of
// elementwise ops, and removal of shape-arithmetic nodes nobody reads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/builtins.h"
#include "core/ir/graph.h"

namespace lite2onnx::passes::shape_eval {

using namespace ir::builtin;  // NOLINT: the builtin codes the passes look at

// One output element copies element `index` (row-major) of input `input`.
struct Source {
  uint32_t input = 0;
  int64_t index = 0;
};

struct OutputMap {
  ir::Shape shape;
  std::vector<Source> sources;  // one per output element
};

// The static shape of a tensor, or nullopt if its rank or a dimension is unknown.
std::optional<ir::Shape> static_shape(const ir::Tensor& t);

// RESHAPE / SQUEEZE / EXPAND_DIMS: the output shape (the elements keep their
// order). nullopt if it cannot be derived from static shapes and constants.
std::optional<ir::Shape> reshaped_shape(const ir::Graph& g, const ir::Node& n);

// Ops whose outputs only copy input elements: RESHAPE, SQUEEZE, EXPAND_DIMS,
// TRANSPOSE, STRIDED_SLICE, PACK, UNPACK, CONCATENATION (no fused activation),
// GATHER (batch_dims 0) and FILL.
bool is_data_movement(int builtin);

// For a data-movement node whose data inputs have static shapes and whose
// index operands (shape, axis, perm, begin/end/strides, indices, dims) are
// constants: every output's shape and element sources. nullopt otherwise, or
// when an output would have more than `max_elements` elements.
std::optional<std::vector<OutputMap>> element_sources(const ir::Graph& g, const ir::Node& n,
                                                      int64_t max_elements);

// numpy broadcast of two shapes; nullopt if they do not broadcast.
std::optional<ir::Shape> broadcast_shape(const ir::Shape& a, const ir::Shape& b);
// For each element of `out` (row-major), the element of `in` it reads when
// `in` is broadcast to `out`.
std::vector<int64_t> broadcast_sources(const ir::Shape& out, const ir::Shape& in);

// Pure ops the shape-arithmetic passes may delete once their outputs are unused.
bool is_pure_shape_op(int builtin);
// Deletes TFLite-dialect nodes of pure shape ops none of whose outputs is read
// (by a node or as a graph output), repeatedly. Returns how many went.
size_t remove_dead_shape_nodes(ir::Graph& g);

}  // namespace lite2onnx::passes::shape_eval
