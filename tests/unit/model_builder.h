// Builds TFLite model bytes from JSON written against core/tflite/schema.fbs,
// so unit tests keep their models readable (flatbuffers::Parser, no blobs).
#pragma once

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace lite2onnx::testing {

std::vector<std::byte> tflite_from_json(const std::string& json);
std::vector<std::byte> read_file(const std::string& path);
inline std::span<const std::byte> view(const std::vector<std::byte>& v) {
  return {v.data(), v.size()};
}

// The generated op model `name` (tests/models/json, built into the test tree).
std::string op_model(const std::string& name);
// The same model's JSON source, to edit and build with tflite_from_json(j.dump()).
nlohmann::json op_model_json(const std::string& name);
// The third-party model corpus: $LITE2ONNX_TEST_MODELS, else ../shared/models
// beside the checkout.
std::string corpus_dir();

// Little-endian bytes of float32 values, as a JSON ubyte array for Buffer.data.
std::string f32_bytes(const std::vector<float>& values);
std::string i32_bytes(const std::vector<int32_t>& values);
std::string i64_bytes(const std::vector<int64_t>& values);

// How many nodes of each op type the main graph of an ONNX model has.
std::map<std::string, int> op_counts(const onnx::ModelProto& m);

}  // namespace lite2onnx::testing
