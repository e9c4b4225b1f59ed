// Select-TF ops that are ordinary TensorFlow ops with a builtin twin: the
// table from TF op name to the TFLite builtin TFLite's converter would have
// written, with the NodeDef attributes that become the builtin's options.
// A Flex op of the table is read as its twin (passes::rewrite_select_tf_ops,
// right after reading): every later pass sees the builtin. Other Flex ops
// stay unsupported, named (select_tf_op).
#pragma once

#include <span>
#include <string_view>

#include "core/ops/registry.h"

namespace lite2onnx::ops {

// How a NodeDef attribute becomes a node attribute of the builtin.
enum class TfAttrKind {
  kInt,    // AttrValue.i, an int32 -> int
  kBool,   // AttrValue.b -> int 0/1
  kType,   // AttrValue.type -> TFLite TensorType code (int)
  kInts,   // AttrValue.list.i, int32 values -> ints
  kFloat,  // AttrValue.f -> float
};

struct TfAttrMapping {
  const char* tf;  // the NodeDef attribute
  TfAttrKind kind;
  const char* attr;  // the builtin's node attribute (as its options reader names it)
};

struct SelectTfTwin {
  const char* tf_op;  // e.g. "AddV2" (custom code "FlexAddV2")
  int builtin;        // e.g. ir::builtin::kAdd
  std::span<const TfAttrMapping> attrs;
  // A scalar constant input that the builtin has as attribute "axis"
  // (GatherV2's input 2; kLastInput: ConcatV2's last); -1: none.
  int axis_input = -1;
  // The NodeDef attribute that counts the op's inputs (ConcatV2's and Pack's
  // N), checked against them; nullptr: none.
  const char* count_attr = nullptr;
  const char* notes = "";
};
constexpr int kLastInput = 1000;  // SelectTfTwin::axis_input: the last input

// The twin of a TF op, or nullptr.
const SelectTfTwin* find_select_tf_twin(std::string_view tf_op);
// Every twin, in name order.
std::span<const SelectTfTwin> select_tf_twins();

// The custom-op table's entry of "Flex" + twin.tf_op: reads the NodeDef into
// the builtin's attributes (the builtin's defaults, then the mapped
// attributes, each checked: an attribute of another kind or out of range is
// kInvalidModel naming it), and says why a node was left unconverted
// (attribute "select_tf_problem").
OpEntry select_tf_entry(const SelectTfTwin& twin);

// Select-TF ops with no builtin twin that convert straight to ONNX: the
// entry of "Flex" + tf_op, whose reader checks the NodeDef names tf_op.
// Softplus: ONNX Softplus, float32.
OpEntry select_tf_softplus();

// Reads a Flex op's options into `attrs` as select_tf_entry's reader does
// (unit tests; the reader calls it through the entry).
Status read_select_tf_options(std::span<const uint8_t> bytes, ir::Attributes& attrs);

}  // namespace lite2onnx::ops
