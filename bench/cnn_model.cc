#include "cnn_model.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "schema_generated.h"

namespace lite2onnx::bench {

flatbuffers::DetachedBuffer build_cnn(const CnnSpec& spec, std::string* error) {
  const int64_t c = spec.channels;
  const size_t filter_elems = static_cast<size_t>(c * 3 * 3 * c);
  const size_t filter_bytes = filter_elems * sizeof(float);
  const size_t bias_bytes = static_cast<size_t>(c) * sizeof(float);
  // Size the builder for everything up front: no reallocation (and no transient
  // second copy of the weights) while building.
  size_t estimate =
      static_cast<size_t>(spec.layers) * (filter_bytes + bias_bytes + 256) + (1 << 20);
  estimate = (estimate + 4095) / 4096 * 4096;
  flatbuffers::FlatBufferBuilder fbb(estimate);

  // Buffer 0 is the conventional empty buffer; then filter and bias per layer.
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers;
  buffers.push_back(tflite::CreateBuffer(fbb));
  uint32_t pattern = 0x9e3779b9u;
  auto data_buffer = [&](size_t count, float scale) {
    const size_t bytes = count * sizeof(float);
    fbb.ForceVectorAlignment(bytes, 1, 16);  // TFLite writers align buffer data to 16
    uint8_t* dst = nullptr;
    auto vec = fbb.CreateUninitializedVector(bytes, 1, &dst);
    for (size_t i = 0; i < count; ++i) {
      pattern = pattern * 1664525u + 1013904223u;  // LCG: cheap and deterministic
      float v = (static_cast<float>(pattern >> 20) - 2048.0f) * scale;
      std::memcpy(dst + i * sizeof(float), &v, sizeof(float));
    }
    auto data = flatbuffers::Offset<flatbuffers::Vector<uint8_t>>(vec);
    return tflite::CreateBuffer(fbb, data);
  };

  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
  auto add_tensor = [&](const std::string& name, std::vector<int32_t> shape, uint32_t buffer) {
    tensors.push_back(
        tflite::CreateTensorDirect(fbb, &shape, tflite::TensorType::FLOAT32, buffer, name.c_str()));
    return static_cast<int32_t>(tensors.size() - 1);
  };
  const std::vector<int32_t> act_shape = {1, spec.side, spec.side, spec.channels};
  int32_t x = add_tensor("input", act_shape, 0);
  const int32_t input = x;

  std::vector<flatbuffers::Offset<tflite::Operator>> operators;
  const float weight_scale = 1.0f / (2048.0f * 3.0f * 3.0f * static_cast<float>(c));
  for (int l = 0; l < spec.layers; ++l) {
    buffers.push_back(data_buffer(filter_elems, weight_scale));
    int32_t filter =
        add_tensor("conv" + std::to_string(l) + "/filter", {spec.channels, 3, 3, spec.channels},
                   static_cast<uint32_t>(buffers.size() - 1));
    buffers.push_back(data_buffer(static_cast<size_t>(c), 1.0f / 2048.0f));
    int32_t bias = add_tensor("conv" + std::to_string(l) + "/bias", {spec.channels},
                              static_cast<uint32_t>(buffers.size() - 1));
    int32_t y = add_tensor("conv" + std::to_string(l) + "/Relu", act_shape, 0);
    auto options =
        tflite::CreateConv2DOptions(fbb, tflite::Padding::SAME, /*stride_w=*/1,
                                    /*stride_h=*/1, tflite::ActivationFunctionType::RELU);
    std::vector<int32_t> op_inputs = {x, filter, bias};
    std::vector<int32_t> op_outputs = {y};
    operators.push_back(
        tflite::CreateOperatorDirect(fbb, /*opcode_index=*/0, &op_inputs, &op_outputs,
                                     tflite::BuiltinOptions::Conv2DOptions, options.Union()));
    x = y;
  }

  std::vector<int32_t> graph_inputs = {input};
  std::vector<int32_t> graph_outputs = {x};
  auto subgraph = tflite::CreateSubGraphDirect(fbb, &tensors, &graph_inputs, &graph_outputs,
                                               &operators, "main");
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes = {
      tflite::CreateOperatorCode(fbb, /*deprecated_builtin_code=*/3, /*custom_code=*/0,
                                 /*version=*/1, tflite::BuiltinOperator::CONV_2D)};
  std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs = {subgraph};
  auto model = tflite::CreateModelDirect(fbb, /*version=*/3, &codes, &subgraphs,
                                         "lite2onnx bench CNN", &buffers);
  tflite::FinishModelBuffer(fbb, model);  // file identifier "TFL3"

  flatbuffers::DetachedBuffer built = fbb.Release();
  // Check what TFLite readers (and mmap users) rely on: every buffer's data is
  // 16-byte aligned relative to the start of the file.
  const tflite::Model* read = tflite::GetModel(built.data());
  for (const tflite::Buffer* b : *read->buffers())
    if (b->data() && (b->data()->data() - built.data()) % 16 != 0) {
      *error = "generated model: buffer data is not 16-byte aligned";
      return {};
    }
  return built;
}

}  // namespace lite2onnx::bench
