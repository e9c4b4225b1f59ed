#include "core/model_metadata.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace lite2onnx {
namespace {

using Json = nlohmann::ordered_json;

// A float as the shortest decimal that reads back as it (0.1f is 0.1, not
// 0.100000001490116): JSON numbers are doubles, and printing the float's
// double would show digits the model never had. NaN and infinities are null.
Json number(float v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf - 1, v);
  if (ec != std::errc()) return static_cast<double>(v);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

Json numbers(const std::vector<float>& values) {
  Json a = Json::array();
  for (float v : values) a.push_back(number(v));
  return a;
}

void set_if(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

Json tensor_json(const TensorMetadataInfo& t) {
  Json j;
  j["tensor"] = t.tensor;
  set_if(j, "name", t.name);
  set_if(j, "description", t.description);
  set_if(j, "content", t.content);
  if (!t.mean.empty() || !t.std.empty())
    j["normalization"] = {{"mean", numbers(t.mean)}, {"std", numbers(t.std)}};
  if (!t.min.empty() || !t.max.empty())
    j["range"] = {{"min", numbers(t.min)}, {"max", numbers(t.max)}};
  if (!t.associated_files.empty()) j["associated_files"] = t.associated_files;
  return j;
}

}  // namespace

std::string TfliteMetadata::to_json(bool with_content, int indent) const {
  Json j = Json::object();
  set_if(j, "name", name);
  set_if(j, "description", description);
  set_if(j, "version", version);
  set_if(j, "author", author);
  set_if(j, "license", license);
  set_if(j, "min_parser_version", min_parser_version);
  for (auto [key, list] : {std::pair{"inputs", &inputs}, std::pair{"outputs", &outputs}}) {
    if (list->empty()) continue;
    Json a = Json::array();
    for (const auto& t : *list) a.push_back(tensor_json(t));
    j[key] = std::move(a);
  }
  if (!associated_files.empty()) {
    Json a = Json::array();
    for (const auto& f : associated_files) {
      Json o;
      o["name"] = f.name;
      set_if(o, "type", f.type);
      set_if(o, "description", f.description);
      set_if(o, "locale", f.locale);
      o["packed"] = f.packed;
      if (f.packed) o["size"] = f.size;
      o["embedded"] = f.embedded;
      set_if(o, "note", f.note);
      if (with_content && f.embedded) o["content"] = f.content;
      a.push_back(std::move(o));
    }
    j["associated_files"] = std::move(a);
  }
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string associated_file_key(const AssociatedFileInfo& file) {
  return "tflite.associated_file." + file.name;
}

}  // namespace lite2onnx
