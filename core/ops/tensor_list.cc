// Keras' TensorList loops: select-TF ("Flex") custom ops whose options are a
// FlexBuffer vector [TF op name, serialized tensorflow.NodeDef]. These entries
// read the NodeDef's attributes; passes::lower_tensor_lists rewrites the ops
// into builtins on dense tensors before anything else looks at them. An op
// it leaves has the reason in attribute "tensor_list_problem" and is
// unsupported.
#include <flatbuffers/flexbuffers.h>
#include <google/protobuf/io/coded_stream.h>

#include <string>

#include "core/ops/families.h"

namespace lite2onnx::ops::tensor_list {
namespace {

using google::protobuf::io::CodedInputStream;

Error bad(const std::string& what) {
  return make_error(ErrorCode::kInvalidModel, "select-TF op options: " + what);
}

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

// Skips a field of wire type `wire` (groups are refused: NodeDef has none).
bool skip(CodedInputStream& in, uint32_t wire) {
  uint64_t v = 0;
  uint32_t len = 0;
  switch (wire) {
    case 0:
      return in.ReadVarint64(&v);
    case 1:
      return in.Skip(8);
    case 2:
      return in.ReadVarint32(&len) && in.Skip(static_cast<int>(len));
    case 5:
      return in.Skip(4);
    default:
      return false;
  }
}

// The AttrValue fields these ops use: type (6), i (3), b (5).
struct AttrValue {
  std::optional<uint64_t> type;
  std::optional<int64_t> i;
  std::optional<bool> b;
};

bool read_attr_value(CodedInputStream& in, AttrValue& out) {
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = tag >> 3, wire = tag & 7;
    uint64_t v = 0;
    if (wire == 0 && (field == 3 || field == 5 || field == 6)) {
      if (!in.ReadVarint64(&v)) return false;
      if (field == 3) out.i = static_cast<int64_t>(v);  // two's complement
      if (field == 5) out.b = v != 0;
      if (field == 6) out.type = v;
    } else if (!skip(in, wire)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();  // ended at the limit, not on a 0 tag
}

// Reads one length-delimited submessage with `body`.
template <class F>
bool read_message(CodedInputStream& in, F&& body) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len)) return false;
  const auto limit = in.PushLimit(static_cast<int>(len));
  const bool ok = body() && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  return ok;
}

Status read_node_def(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  if (bytes.size() < 3 || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE ||
      !flexbuffers::VerifyBuffer(bytes.data(), bytes.size()))
    return bad(std::to_string(bytes.size()) + " bytes that are no valid FlexBuffer");
  const flexbuffers::Reference root = flexbuffers::GetRoot(bytes.data(), bytes.size());
  if (!root.IsVector()) return bad("no vector [op name, NodeDef]");
  const flexbuffers::Vector v = root.AsVector();
  if (v.size() < 2 || !v[0].IsString() || !(v[1].IsString() || v[1].IsBlob()))
    return bad("no vector [op name, NodeDef]");
  attrs.set("tf_op", v[0].AsString().str());
  const flexbuffers::Reference def_ref = v[1];
  std::string_view def;
  if (def_ref.IsBlob()) {
    const flexbuffers::Blob blob = def_ref.AsBlob();
    def = {reinterpret_cast<const char*>(blob.data()), blob.size()};
  } else {
    const flexbuffers::String s = def_ref.AsString();
    def = {s.c_str(), s.size()};
  }
  if (def.size() > (1u << 20)) return bad("a NodeDef of " + std::to_string(def.size()) + " bytes");

  // NodeDef: op = 2 (string), attr = 5 (map entries {key = 1, value = 2}).
  CodedInputStream in(reinterpret_cast<const uint8_t*>(def.data()), static_cast<int>(def.size()));
  attrs.set("num_elements", int64_t{-1});  // the op's default (AddDefaultsToNodeDef)
  attrs.set("resize_if_index_out_of_bounds", int64_t{0});
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = tag >> 3, wire = tag & 7;
    if (field != 5 || wire != 2) {
      if (!skip(in, wire)) return bad("a NodeDef that is not a valid protobuf message");
      continue;
    }
    std::string key;
    AttrValue value;
    const bool ok = read_message(in, [&] {
      while (uint32_t t = in.ReadTag()) {
        if (t == (1 << 3 | 2)) {
          uint32_t len = 0;
          if (!in.ReadVarint32(&len) || len > 256 || !in.ReadString(&key, static_cast<int>(len)))
            return false;
        } else if (t == (2 << 3 | 2)) {
          if (!read_message(in, [&] { return read_attr_value(in, value); })) return false;
        } else if (!skip(in, t & 7)) {
          return false;
        }
      }
      return in.ConsumedEntireMessage();
    });
    if (!ok) return bad("a NodeDef attribute that is not a valid protobuf message");
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
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(def.size()))
    return bad("a NodeDef that is not a valid protobuf message");
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
