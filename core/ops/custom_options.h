// The options of custom operators, read from Operator.custom_options with
// every length, type and range checked: a FlexBuffer map (TFLite's own custom
// ops, e.g. TFLite_Detection_PostProcess) or a packed C struct of int32 fields
// (MediaPipe's ops copy TfLiteTransposeConvParams / TfLitePoolParams there).
// Each custom op declares its fields as data (a table of CustomField); the
// readers turn them into node attributes of the same names.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/ir/graph.h"
#include "core/status.h"

namespace lite2onnx::ops {

struct CustomField {
  // kInts: a typed vector of integers (FlexBuffers only), stored as an int
  // list; required means present and not empty.
  enum class Kind { kInt, kFloat, kBool, kInts };
  const char* name;
  Kind kind;
  bool required;
  double fallback;  // the value when the field is absent and not required (kInts: empty)
  double lo, hi;    // the accepted range (inclusive), of each element for kInts; bools ignore it
};

// Reads a FlexBuffer map holding `fields`; keys not listed are ignored, as
// TFLite's kernels do. An error says which field is missing, mistyped or out
// of range, or that the bytes are no FlexBuffer map.
Status read_flex_fields(std::span<const uint8_t> bytes, std::span<const CustomField> fields,
                        ir::Attributes& attrs);

// Reads consecutive little-endian int32 fields (a packed C struct); trailing
// bytes (fields a newer struct added) are ignored. Every field is required
// and of kind kInt.
Status read_struct_fields(std::span<const uint8_t> bytes, std::span<const CustomField> fields,
                          ir::Attributes& attrs);

// The fields MediaPipe's TfLite*Params structs start with (padding 1 SAME,
// 2 VALID; stride_width, stride_height) as the builtin ops' attributes.
void set_padding_and_strides(const ir::Attributes& raw, ir::Attributes& a);

}  // namespace lite2onnx::ops
