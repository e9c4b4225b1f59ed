// Reads a select-TF op's [TF op name, NodeDef] options with protobuf's
// CodedInputStream: every field's length is bounded by the message around
// it, unknown fields are skipped, groups refused (NodeDef has none).
#include "core/ops/node_def.h"

#include <flatbuffers/flexbuffers.h>
#include <google/protobuf/io/coded_stream.h>

#include <bit>
#include <cstring>
#include <limits>

namespace lite2onnx::ops {
namespace {

using google::protobuf::io::CodedInputStream;

constexpr size_t kMaxAttrs = 256;
constexpr size_t kMaxListValues = 4096;
constexpr uint32_t kMaxString = 256;

Error bad(const std::string& what) {
  return make_error(ErrorCode::kInvalidModel, "select-TF op options: " + what);
}

// Skips a field of wire type `wire`.
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

// Reads one length-delimited submessage with `body`, which must read all of
// its `len` bytes: a length past the end of the bytes is refused (the
// stream's limit alone would take the end of the bytes for the end of the
// submessage).
template <class F>
bool read_message(CodedInputStream& in, F&& body) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(std::numeric_limits<int>::max()))
    return false;
  const int start = in.CurrentPosition();
  const auto limit = in.PushLimit(static_cast<int>(len));
  const bool ok = body() && in.BytesUntilLimit() == 0 &&
                  static_cast<int64_t>(in.CurrentPosition()) - start == static_cast<int64_t>(len);
  in.PopLimit(limit);
  return ok;
}

bool read_string(CodedInputStream& in, std::string& out) {
  uint32_t len = 0;
  return in.ReadVarint32(&len) && len <= kMaxString && in.ReadString(&out, static_cast<int>(len));
}

// A repeated varint field, packed (wire 2) or not (wire 0).
template <class T>
bool read_varints(CodedInputStream& in, uint32_t wire, std::vector<T>& out) {
  uint64_t v = 0;
  if (wire == 0) {
    if (!in.ReadVarint64(&v) || out.size() >= kMaxListValues) return false;
    out.push_back(static_cast<T>(v));
    return true;
  }
  if (wire != 2) return false;
  return read_message(in, [&] {
    while (in.BytesUntilLimit() > 0) {
      if (!in.ReadVarint64(&v) || out.size() >= kMaxListValues) return false;
      out.push_back(static_cast<T>(v));
    }
    return true;
  });
}

bool read_list(CodedInputStream& in, TfAttrValue& out) {
  out.has_list = true;
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = tag >> 3, wire = tag & 7;
    if (field == 3) {
      if (!read_varints(in, wire, out.list_i)) return false;
    } else if (field == 6) {
      if (!read_varints(in, wire, out.list_type)) return false;
    } else if (!skip(in, wire)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

bool read_attr_value(CodedInputStream& in, TfAttrValue& out) {
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = tag >> 3, wire = tag & 7;
    uint64_t v = 0;
    uint32_t bits = 0;
    if (wire == 0 && (field == 3 || field == 5 || field == 6)) {
      if (!in.ReadVarint64(&v)) return false;
      if (field == 3) out.i = static_cast<int64_t>(v);  // two's complement
      if (field == 5) out.b = v != 0;
      if (field == 6) out.type = v;
    } else if (wire == 5 && field == 4) {
      if (!in.ReadLittleEndian32(&bits)) return false;
      out.f = std::bit_cast<float>(bits);
    } else if (wire == 2 && field == 2) {
      std::string s;
      if (!read_string(in, s)) return false;
      out.s = std::move(s);
    } else if (wire == 2 && field == 1) {
      if (!read_message(in, [&] { return read_list(in, out); })) return false;
    } else if (!skip(in, wire)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();  // ended at the limit, not on a 0 tag
}

}  // namespace

int TfAttrValue::kinds() const {
  return int{i.has_value()} + int{b.has_value()} + int{type.has_value()} + int{f.has_value()} +
         int{s.has_value()} + int{has_list};
}

const TfAttrValue* NodeDef::attr(std::string_view name) const {
  for (const auto& [k, v] : attrs)
    if (k == name) return &v;
  return nullptr;
}

Result<NodeDef> read_flex_node_def(std::span<const uint8_t> bytes) {
  if (bytes.size() < 3 || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE ||
      !flexbuffers::VerifyBuffer(bytes.data(), bytes.size()))
    return bad(std::to_string(bytes.size()) + " bytes that are no valid FlexBuffer");
  const flexbuffers::Reference root = flexbuffers::GetRoot(bytes.data(), bytes.size());
  if (!root.IsVector()) return bad("no vector [op name, NodeDef]");
  const flexbuffers::Vector v = root.AsVector();
  if (v.size() < 2 || !v[0].IsString() || !(v[1].IsString() || v[1].IsBlob()))
    return bad("no vector [op name, NodeDef]");
  NodeDef out;
  out.tf_op = v[0].AsString().str();
  if (out.tf_op.size() > kMaxString) return bad("an op name of over 256 bytes");
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
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = tag >> 3, wire = tag & 7;
    if (field == 2 && wire == 2) {
      if (!read_string(in, out.op)) return bad("a NodeDef that is not a valid protobuf message");
      continue;
    }
    if (field != 5 || wire != 2) {
      if (!skip(in, wire)) return bad("a NodeDef that is not a valid protobuf message");
      continue;
    }
    std::string key;
    TfAttrValue value;
    const bool ok = read_message(in, [&] {
      while (uint32_t t = in.ReadTag()) {
        if (t == (1 << 3 | 2)) {
          if (!read_string(in, key)) return false;
        } else if (t == (2 << 3 | 2)) {
          if (!read_message(in, [&] { return read_attr_value(in, value); })) return false;
        } else if (!skip(in, t & 7)) {
          return false;
        }
      }
      return in.ConsumedEntireMessage();
    });
    if (!ok) return bad("a NodeDef attribute that is not a valid protobuf message");
    if (out.attrs.size() >= kMaxAttrs) return bad("a NodeDef of over 256 attributes");
    // A map's later entry of a key wins, as protobuf's parser keeps it.
    bool replaced = false;
    for (auto& [k, old] : out.attrs)
      if (k == key) {
        old = std::move(value);
        replaced = true;
        break;
      }
    if (!replaced) out.attrs.emplace_back(std::move(key), std::move(value));
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(def.size()))
    return bad("a NodeDef that is not a valid protobuf message");
  return out;
}

std::optional<int> tflite_type_of_tf(uint64_t tf_type) {
  switch (tf_type) {
    case 1:  // DT_FLOAT
      return 0;
    case 2:  // DT_DOUBLE
      return 10;
    case 3:  // DT_INT32
      return 2;
    case 4:  // DT_UINT8
      return 3;
    case 5:  // DT_INT16
      return 7;
    case 6:  // DT_INT8
      return 9;
    case 7:  // DT_STRING
      return 5;
    case 9:  // DT_INT64
      return 4;
    case 10:  // DT_BOOL
      return 6;
    case 17:  // DT_UINT16
      return 16;
    case 19:  // DT_HALF
      return 1;
    case 22:  // DT_UINT32
      return 15;
    case 23:  // DT_UINT64
      return 12;
    default:
      return std::nullopt;
  }
}

}  // namespace lite2onnx::ops
