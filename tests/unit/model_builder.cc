#include "model_builder.h"

#include <flatbuffers/idl.h>
#include <flatbuffers/util.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace lite2onnx::testing {

std::vector<std::byte> tflite_from_json(const std::string& json) {
  std::string schema;
  if (!flatbuffers::LoadFile(LITE2ONNX_SCHEMA, false, &schema))
    throw std::runtime_error("cannot read schema " LITE2ONNX_SCHEMA);
  flatbuffers::Parser parser;
  if (!parser.Parse(schema.c_str()) || !parser.Parse(json.c_str()))
    throw std::runtime_error("bad test model JSON: " + parser.error_);
  const auto* p = reinterpret_cast<const std::byte*>(parser.builder_.GetBufferPointer());
  return {p, p + parser.builder_.GetSize()};
}

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

namespace {
template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out = "[";
  const auto* p = reinterpret_cast<const unsigned char*>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(T); ++i)
    out += (i ? "," : "") + std::to_string(p[i]);
  return out + "]";
}
}  // namespace

std::string f32_bytes(const std::vector<float>& values) { return bytes_of(values); }
std::string i32_bytes(const std::vector<int32_t>& values) { return bytes_of(values); }
std::string i64_bytes(const std::vector<int64_t>& values) { return bytes_of(values); }

std::string op_model(const std::string& name) {
  return std::string(LITE2ONNX_TEST_MODELS_DIR) + "/" + name + ".tflite";
}

nlohmann::json op_model_json(const std::string& name) {
  std::ifstream in(std::string(LITE2ONNX_SOURCE_DIR) + "/tests/models/json/" + name + ".json");
  if (!in) throw std::runtime_error("no test model " + name);
  return nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
}

std::string corpus_dir() {
  const char* env = std::getenv("LITE2ONNX_TEST_MODELS");
  if (env && *env) return env;
  return std::string(LITE2ONNX_SOURCE_DIR) + "/../shared/models";
}

std::map<std::string, int> op_counts(const onnx::ModelProto& m) {
  std::map<std::string, int> counts;
  for (const auto& n : m.graph().node()) ++counts[n.op_type()];
  return counts;
}

}  // namespace lite2onnx::testing
