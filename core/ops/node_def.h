// A select-TF ("Flex") op's custom options: a FlexBuffer vector [TF op name,
// serialized tensorflow.NodeDef], read with every length bounded by the
// message around it. The attribute values kept are the AttrValue fields the
// converter maps (docs/architecture.md, "Select-TF ops").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace lite2onnx::ops {

// One tensorflow.AttrValue: at most one of its fields is set in a valid one.
struct TfAttrValue {
  std::optional<int64_t> i;         // field 3
  std::optional<bool> b;            // field 5
  std::optional<uint64_t> type;     // field 6 (tensorflow.DataType)
  std::optional<float> f;           // field 4
  std::optional<std::string> s;     // field 2 (at most 256 bytes kept)
  bool has_list = false;            // field 1 (ListValue)
  std::vector<int64_t> list_i;      // ListValue.i (3), packed or not
  std::vector<uint64_t> list_type;  // ListValue.type (6)
  // How many of the fields above are set (a valid AttrValue has one).
  int kinds() const;
};

struct NodeDef {
  std::string tf_op;  // the FlexBuffer's op name (the custom code less "Flex")
  std::string op;     // NodeDef.op (field 2)
  std::vector<std::pair<std::string, TfAttrValue>> attrs;
  const TfAttrValue* attr(std::string_view name) const;
};

// kInvalidModel ("select-TF op options: ...") when the bytes are no FlexBuffer
// vector [string, string or blob], the NodeDef is over 1 MiB, or it or an
// attribute is no valid protobuf message; at most 256 attributes, lists of at
// most 4,096 values.
Result<NodeDef> read_flex_node_def(std::span<const uint8_t> bytes);

// tensorflow.DataType -> TFLite's TensorType code (tflite::TensorType), or
// nullopt for a type TFLite has no tensors of.
std::optional<int> tflite_type_of_tf(uint64_t tf_type);

}  // namespace lite2onnx::ops
