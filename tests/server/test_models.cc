#include "test_models.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "schema_generated.h"

namespace lite2onnx::server_test {
namespace {

struct Op {
  std::string custom_code;  // empty: builtin
  tflite::BuiltinOperator builtin = tflite::BuiltinOperator::CUSTOM;
};

// A chain t0 -> op0 -> t1 -> op1 -> ... of float32 [1, 8] tensors.
std::string chain(const std::vector<Op>& codes, const std::vector<int>& op_codes,
                  const std::string& tensor_prefix = "t") {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> opcodes;
  for (const auto& c : codes) {
    const auto code = static_cast<int8_t>(std::min(static_cast<int>(c.builtin), 127));
    opcodes.push_back(tflite::CreateOperatorCode(
        b, code, c.custom_code.empty() ? 0 : b.CreateString(c.custom_code), 1, c.builtin));
  }
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
  const std::vector<int> shape{1, 8};
  for (size_t i = 0; i <= op_codes.size(); ++i)
    tensors.push_back(tflite::CreateTensor(b, b.CreateVector(shape), tflite::TensorType::FLOAT32, 0,
                                           b.CreateString(tensor_prefix + std::to_string(i))));
  std::vector<flatbuffers::Offset<tflite::Operator>> ops;
  for (size_t i = 0; i < op_codes.size(); ++i) {
    const std::vector<int> in{static_cast<int>(i)}, out{static_cast<int>(i + 1)};
    ops.push_back(tflite::CreateOperator(b, static_cast<uint32_t>(op_codes[i]), b.CreateVector(in),
                                         b.CreateVector(out)));
  }
  const std::vector<int> inputs{0}, outputs{static_cast<int>(op_codes.size())};
  auto subgraph =
      tflite::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(inputs),
                             b.CreateVector(outputs), b.CreateVector(ops), b.CreateString("main"));
  std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{subgraph};
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers{tflite::CreateBuffer(b)};
  auto model =
      tflite::CreateModel(b, 3, b.CreateVector(opcodes), b.CreateVector(subgraphs),
                          b.CreateString("lite2onnx server test model"), b.CreateVector(buffers));
  tflite::FinishModelBuffer(b, model);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// ABS chains in two subgraphs, `n` ops long each, of tensors named
// PREFIX0, PREFIX1, ...: subgraph 0 "main" (t), subgraph 1 "second" (u).
flatbuffers::Offset<tflite::SubGraph> abs_subgraph(flatbuffers::FlatBufferBuilder& b, int n,
                                                   const std::string& prefix,
                                                   const std::string& name) {
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
  const std::vector<int> shape{1, 8};
  for (int i = 0; i <= n; ++i)
    tensors.push_back(tflite::CreateTensor(b, b.CreateVector(shape), tflite::TensorType::FLOAT32, 0,
                                           b.CreateString(prefix + std::to_string(i))));
  std::vector<flatbuffers::Offset<tflite::Operator>> ops;
  for (int i = 0; i < n; ++i) {
    const std::vector<int> in{i}, out{i + 1};
    ops.push_back(tflite::CreateOperator(b, 0, b.CreateVector(in), b.CreateVector(out)));
  }
  const std::vector<int> inputs{0}, outputs{n};
  return tflite::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(inputs),
                                b.CreateVector(outputs), b.CreateVector(ops), b.CreateString(name));
}

// One subgraph built tensor by tensor: constants get buffers of their own.
class Builder {
 public:
  Builder() { buffers_.push_back(tflite::CreateBuffer(b_)); }
  int tensor(const std::vector<int>& shape, const std::string& name,
             tflite::TensorType type = tflite::TensorType::FLOAT32, const void* data = nullptr,
             size_t bytes = 0) {
    uint32_t buffer = 0;
    if (data) {
      b_.ForceVectorAlignment(bytes, 1, 16);
      buffers_.push_back(
          tflite::CreateBuffer(b_, b_.CreateVector(static_cast<const uint8_t*>(data), bytes)));
      buffer = static_cast<uint32_t>(buffers_.size() - 1);
    }
    tensors_.push_back(
        tflite::CreateTensor(b_, b_.CreateVector(shape), type, buffer, b_.CreateString(name)));
    return static_cast<int>(tensors_.size() - 1);
  }
  void op(tflite::BuiltinOperator code, const std::vector<int>& in, const std::vector<int>& out) {
    uint32_t index = 0;
    while (index < codes_.size() && codes_[index] != code) ++index;
    if (index == codes_.size()) codes_.push_back(code);
    ops_.push_back(tflite::CreateOperator(b_, index, b_.CreateVector(in), b_.CreateVector(out)));
  }
  std::string finish(const std::vector<int>& inputs, const std::vector<int>& outputs,
                     const std::string& description = "lite2onnx server test model") {
    std::vector<flatbuffers::Offset<tflite::OperatorCode>> opcodes;
    for (auto c : codes_)
      opcodes.push_back(tflite::CreateOperatorCode(
          b_, static_cast<int8_t>(std::min(static_cast<int>(c), 127)), 0, 1, c));
    std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{tflite::CreateSubGraph(
        b_, b_.CreateVector(tensors_), b_.CreateVector(inputs), b_.CreateVector(outputs),
        b_.CreateVector(ops_), b_.CreateString("main"))};
    auto model = tflite::CreateModel(b_, 3, b_.CreateVector(opcodes), b_.CreateVector(subgraphs),
                                     b_.CreateString(description), b_.CreateVector(buffers_));
    tflite::FinishModelBuffer(b_, model);
    return std::string(reinterpret_cast<const char*>(b_.GetBufferPointer()), b_.GetSize());
  }

 private:
  flatbuffers::FlatBufferBuilder b_;
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers_;
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<tflite::Operator>> ops_;
  std::vector<tflite::BuiltinOperator> codes_;
};

}  // namespace

std::string spectral_model(int pairs, int fft, int variant) {
  Builder m;
  const int x = m.tensor({1, fft}, "input");
  const std::vector<int32_t> length{1, fft};
  const int fft_length =
      m.tensor({2}, "fft_length", tflite::TensorType::INT32, length.data(), length.size() * 4);
  std::vector<int> outputs;
  for (int i = 0; i < pairs; ++i) {
    const std::string n = std::to_string(i);
    const int spectrum = m.tensor({1, fft / 2 + 1}, "rfft_" + n, tflite::TensorType::COMPLEX64);
    m.op(tflite::BuiltinOperator::RFFT2D, {x, fft_length}, {spectrum});
    outputs.push_back(m.tensor({1, fft / 2 + 1}, "magnitude_" + n));
    m.op(tflite::BuiltinOperator::COMPLEX_ABS, {spectrum}, {outputs.back()});
  }
  return m.finish({x}, outputs, "lite2onnx server test model " + std::to_string(variant));
}

std::string big_constant_model(int n) {
  Builder m;
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 251);
  const int x = m.tensor({1, n}, "input");
  const int c = m.tensor({1, n}, "constant", tflite::TensorType::FLOAT32, values.data(),
                         values.size() * sizeof(float));
  const int y = m.tensor({1, n}, "output");
  m.op(tflite::BuiltinOperator::ADD, {x, c}, {y});
  return m.finish({x}, {y});
}

std::string two_signatures_model() {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> opcodes{
      tflite::CreateOperatorCode(b, 101, 0, 1, tflite::BuiltinOperator::ABS)};
  std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{abs_subgraph(b, 1, "t", "main"),
                                                               abs_subgraph(b, 2, "u", "second")};
  auto map = [&](const char* alias, uint32_t tensor) {
    std::vector<flatbuffers::Offset<tflite::TensorMap>> v{
        tflite::CreateTensorMap(b, b.CreateString(alias), tensor)};
    return b.CreateVector(v);
  };
  std::vector<flatbuffers::Offset<tflite::SignatureDef>> signatures{
      tflite::CreateSignatureDef(b, map("in", 0), map("out", 1), b.CreateString("first"), 0),
      tflite::CreateSignatureDef(b, map("x", 0), map("y", 2), b.CreateString("second"), 1)};
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers{tflite::CreateBuffer(b)};
  auto model =
      tflite::CreateModel(b, 3, b.CreateVector(opcodes), b.CreateVector(subgraphs),
                          b.CreateString("lite2onnx server test model with two signatures"),
                          b.CreateVector(buffers), 0, 0, b.CreateVector(signatures));
  tflite::FinishModelBuffer(b, model);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

std::string abs_chain_model(int ops, const std::string& tensor_prefix) {
  return chain({{"", tflite::BuiltinOperator::ABS}}, std::vector<int>(ops, 0), tensor_prefix);
}

std::string unsupported_ops_model() {
  return chain({{"", tflite::BuiltinOperator::ABS},
                {"MyCustomOp", tflite::BuiltinOperator::CUSTOM},
                {"OtherCustomOp", tflite::BuiltinOperator::CUSTOM},
                {"", tflite::BuiltinOperator::HASHTABLE_LOOKUP}},
               {0, 1, 2, 3});
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string corpus_path(const std::string& name) {
  const std::string path = std::string(LITE2ONNX_SHARED_MODELS_DIR) + "/" + name;
  if (std::ifstream(path)) return path;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") ADD_FAILURE() << path << " is missing";
  return "";
}

std::string corpus_model(const std::string& name) {
  const std::string path = corpus_path(name);
  return path.empty() ? "" : read_file(path);
}

std::string mini_mobilenet_path() { return LITE2ONNX_EXAMPLES_DIR "/mini_mobilenet.tflite"; }

}  // namespace lite2onnx::server_test
