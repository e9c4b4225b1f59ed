// Element types, shapes and layout permutations shared by every layer of the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lite2onnx::ir {

// Mirrors TFLite's TensorType values so the reader maps them one to one.
enum class DataType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kString = 5,
  kBool = 6,
  kInt16 = 7,
  kComplex64 = 8,
  kInt8 = 9,
  kFloat64 = 10,
  kComplex128 = 11,
  kUInt64 = 12,
  kResource = 13,
  kVariant = 14,
  kUInt32 = 15,
  kUInt16 = 16,
  kInt4 = 17,
  kBFloat16 = 18,
};

const char* to_string(DataType t);
// Bytes per element; 0 for types without a fixed size (string, resource, variant, int4).
size_t element_size(DataType t);
// Whether the ONNX emitter can represent the type.
bool onnx_representable(DataType t);
// The ONNX TensorProto.DataType number of a type (FLOAT = 1, ... BFLOAT16 =
// 16); 0 (UNDEFINED) for types ONNX lacks.
int onnx_type_code(DataType t);

// Dimensions in TFLite order; -1 is a dynamic dimension.
using Shape = std::vector<int64_t>;

// Product of the dimensions, or nullopt on overflow or a dynamic dimension.
std::optional<int64_t> element_count(const Shape& shape);
std::string to_string(const Shape& shape);

// A layout is a permutation in ONNX Transpose convention: ONNX axis i holds
// TFLite axis perm[i]. Empty means identity. NHWC->NCHW is {0, 3, 1, 2}.
using Perm = std::vector<int>;

bool is_identity(const Perm& p);
Perm identity_perm(size_t rank);
// The layout with the identity written out: p, or 0..rank-1 when p is empty.
Perm full_perm(const Perm& p, size_t rank);
// Canonical form: identity permutations become empty.
Perm normalized(Perm p);
Perm inverse(const Perm& p);
// The permutation that applies `first`, then `second`.
Perm compose(const Perm& first, const Perm& second);
// Channels-last to channels-first for a rank (NHWC->NCHW, NDHWC->NCDHW, NWC->NCW).
Perm channels_first(size_t rank);
// shape (in TFLite order) seen in ONNX order under the layout.
Shape permute_shape(const Shape& shape, const Perm& p);
// ONNX axis that holds TFLite axis `axis` (already made non-negative).
int onnx_axis(const Perm& p, int axis);
// Removes the given TFLite axes from a layout and renumbers the rest.
Perm drop_axes(const Perm& p, const std::vector<int>& tflite_axes, size_t rank);
std::string to_string(const Perm& p);
// Whether a tensor of this (TFLite) shape read in layout `p` visits its
// elements in TFLite memory order (only unit axes move): no data moves then.
bool keeps_memory_order(const Shape& shape, const Perm& p);
// The axis of `to` that holds axis `axis` of `from` when the same elements, in
// the same order, are viewed with the dims `to` (leading 1s added, other axes
// split or merged); nullopt when the view splits or merges that axis itself.
std::optional<int> axis_in_view(const Shape& from, int axis, const Shape& to);
bool is_permutation(const Perm& p, size_t rank);

// Name of a TFLite builtin operator ("CONV_2D"), or "BUILTIN_<n>" if unknown.
std::string builtin_name(int code);
// Node-name form of a builtin name: CONV_2D -> Conv2D, MAX_POOL_2D -> MaxPool2D.
std::string camel_name(const std::string& builtin);

// An IEEE float16 (its bits) as float32, exactly.
float half_to_float(uint16_t h);

}  // namespace lite2onnx::ir
