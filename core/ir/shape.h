// Shape, axis and integer-constant helpers every layer above ir uses: the
// static shape of a tensor, the values of a constant shape operand, numpy
// broadcasting, row-major strides.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph.h"

namespace lite2onnx::ir {

// The static shape of a tensor, or nullopt if its rank or a dimension is unknown.
std::optional<Shape> static_shape(const Tensor& t);

// A constant integer tensor (int32 or int64) as int64 values; nullopt for
// anything else (not a constant, another type).
std::optional<std::vector<int64_t>> const_ints(const Graph& g, TensorId id);

// A possibly negative axis resolved against a rank; nullopt if out of range.
std::optional<int> resolve_axis(int64_t axis, size_t rank);

// Row-major element strides of a shape (the last dimension's is 1).
std::vector<int64_t> row_strides(const Shape& s);

// numpy broadcast of two shapes; nullopt if they do not broadcast.
std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b);
// For each element of `out` (row-major), the element of `in` it reads when
// `in` is broadcast to `out`.
std::vector<int64_t> broadcast_sources(const Shape& out, const Shape& in);

}  // namespace lite2onnx::ir
