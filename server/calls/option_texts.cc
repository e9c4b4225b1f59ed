#include "server/calls/option_texts.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <map>
#include <string>

#include "lite2onnx/v1/converter.pb.h"
#include "server/text.h"

namespace lite2onnx::server {

std::optional<Failure> check_option_text(std::string_view name, std::string_view text) {
  if (!valid_utf8(text))
    return make_failure(reason_named("invalid_option"),
                        "the option '" + escaped(name) + "' is not valid UTF-8");
  if (text.size() > kMaxOptionTextBytes)
    return make_failure(reason_named("invalid_option"),
                        "the option '" + escaped(name) + "' has " + std::to_string(text.size()) +
                            " bytes, more than " + std::to_string(kMaxOptionTextBytes));
  return std::nullopt;
}

std::optional<Failure> check_option_texts(std::string_view serialized) {
  using google::protobuf::FieldDescriptor;
  using google::protobuf::internal::WireFormatLite;
  const auto* descriptor = v1::ConvertOptions::descriptor();
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(serialized.data()),
                                            static_cast<int>(serialized.size()));
  std::map<int, int> seen;  // entries of each repeated field so far
  for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
    const int number = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    const FieldDescriptor* field = descriptor->FindFieldByNumber(number);
    if (!field || field->type() != FieldDescriptor::TYPE_STRING ||
        WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) break;
      continue;
    }
    uint32_t length = 0;
    std::string text;
    if (!in.ReadVarint32(&length) || !in.ReadString(&text, static_cast<int>(length))) break;
    std::string name = field->name();
    if (field->is_repeated()) name += "[" + std::to_string(seen[number]++) + "]";
    if (auto bad = check_option_text(name, text)) return bad;
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(serialized.size()))
    return make_failure(reason_named("invalid_option"),
                        "the options are not a lite2onnx.v1.ConvertOptions message");
  return std::nullopt;
}

}  // namespace lite2onnx::server
