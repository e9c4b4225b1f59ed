// Keras' TensorList loops: select-TF ("Flex") custom ops whose options are a
// FlexBuffer vector [TF op name, serialized tensorflow.NodeDef]. These entries
// read the NodeDef's attributes; passes::lower_tensor_lists rewrites the ops
// into builtins on dense tensors before anything else looks at them. An op
// it leaves has the reason in attribute "tensor_list_problem" and is
// unsupported.
#include <string>

#include "core/ops/families.h"
#include "core/ops/node_def.h"

namespace lite2onnx::ops::tensor_list {
namespace {

// tensorflow.DataType -> TFLite's type; nullopt for types a list here cannot hold.
std::optional<ir::DataType> from_tf(uint64_t dt) {
  switch (dt) {
    case 1:
      return ir::DataType::kFloat32;
    case 3:
      return ir::DataType::kInt32;
    case 4:
      return ir::DataType::kUInt8;
    case 5:
      return ir::DataType::kInt16;
    case 6:
      return ir::DataType::kInt8;
    case 9:
      return ir::DataType::kInt64;
    case 10:
      return ir::DataType::kBool;
    case 19:
      return ir::DataType::kFloat16;
    default:
      return std::nullopt;
  }
}

Status read_node_def(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  auto def = read_flex_node_def(bytes);
  if (!def) return def.take_error();
  attrs.set("tf_op", def->tf_op);
  attrs.set("num_elements", int64_t{-1});  // the op's default (AddDefaultsToNodeDef)
  attrs.set("resize_if_index_out_of_bounds", int64_t{0});
  for (const auto& [key, value] : def->attrs) {
    if (key == "element_dtype" && value.type) {
      if (auto t = from_tf(*value.type))
        attrs.set("element_dtype", int64_t{static_cast<int>(*t)});
      else
        attrs.set("element_dtype_tf", static_cast<int64_t>(*value.type));
    } else if (key == "num_elements" && value.i) {
      attrs.set("num_elements", *value.i);
    } else if (key == "resize_if_index_out_of_bounds" && value.b) {
      attrs.set("resize_if_index_out_of_bounds", int64_t{*value.b});
    }
  }
  return ok_status();
}

// A TensorList op left (lower_tensor_lists says why): a select-TF op not
// converted.
Check check_rewritten(const ir::Graph&, const ir::Node& n) {
  return refuse(ReasonCode::kSelectTfOp,
                n.attrs.get_string("tensor_list_problem",
                                   "a TensorList op outside the loops the converter rewrites"));
}

Status not_rewritten(LowerContext&, const ir::Node& n) {
  return make_error(ErrorCode::kInternal,
                    "TensorList op '" + n.name + "' reached lowering (lower_tensor_lists)");
}

}  // namespace

// Every TensorList op is rewritten by passes::lower_tensor_lists before
// lowering; the entries read the NodeDef and say why an op was left.
constexpr const char* kListTypes = "float32, int32, int64, bool (the list's elements)";

OpEntry reserve() {
  return {.read = {.min_inputs = 2, .custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "an initializer of zeros [num_elements, element shape]",
                  .dtypes = kListTypes,
                  .notes = "select-TF; the list becomes a dense tensor: constant num_elements; "
                           "element dimensions -1 taken from the items set into it (1 in the "
                           "initial zeros where only known at run time)"}};
}

OpEntry from_tensor() {
  return {.read = {.min_inputs = 2, .custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Reshape (the tensor itself)",
                  .dtypes = kListTypes,
                  .notes = "select-TF; a static tensor shape"}};
}

OpEntry get_item() {
  return {.read = {.min_inputs = 2, .custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Gather (axis 0)",
                  .dtypes = kListTypes,
                  .notes = "select-TF; an unset item is zeros, as TF's; a negative index counts "
                           "from the end (TF: an error)"}};
}

OpEntry set_item() {
  return {.read = {.min_inputs = 3, .custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Equal + Unsqueeze + Where (the item where the index matches)",
                  .dtypes = kListTypes,
                  .notes = "select-TF; an index out of range changes nothing (TF: an error); "
                           "resize_if_index_out_of_bounds unsupported"}};
}

OpEntry stack() {
  return {.read = {.custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Reshape (the dense list)",
                  .dtypes = kListTypes,
                  .notes = "select-TF; num_elements checked"}};
}

OpEntry length() {
  return {.read = {.custom_options = read_node_def},
          .check = check_rewritten,
          .lower = not_rewritten,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "an initializer (the list's static length)",
                  .dtypes = kListTypes,
                  .notes = "select-TF"}};
}

}  // namespace lite2onnx::ops::tensor_list
