#include "hostile_graphs.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <map>

#include "schema_generated.h"

namespace lite2onnx::testing {
namespace {

using Op = tflite::BuiltinOperator;
using Options = tflite::BuiltinOptions;

// A one-subgraph model written with the FlatBuffers builder.
class Writer {
 public:
  Writer() { buffers_.push_back(tflite::CreateBuffer(b_)); }

  int tensor(const std::vector<int32_t>& shape, const std::string& name,
             tflite::TensorType type = tflite::TensorType::FLOAT32, uint32_t buffer = 0) {
    tensors_.push_back(
        tflite::CreateTensorDirect(b_, &shape, type, buffer, name.c_str(), 0, false, 0, nullptr));
    return static_cast<int>(tensors_.size() - 1);
  }
  // An int8 tensor quantized per tensor (a constant when `data` is given).
  int int8(const std::vector<int32_t>& shape, const std::string& name, float scale,
           const std::vector<int8_t>& data = {}) {
    std::vector<float> scales = {scale};
    std::vector<int64_t> zero_points = {0};
    auto q =
        tflite::CreateQuantizationParametersDirect(b_, nullptr, nullptr, &scales, &zero_points);
    uint32_t buffer = 0;
    if (!data.empty()) {
      buffers_.push_back(tflite::CreateBuffer(
          b_, b_.CreateVector(reinterpret_cast<const uint8_t*>(data.data()), data.size())));
      buffer = static_cast<uint32_t>(buffers_.size() - 1);
    }
    tensors_.push_back(
        tflite::CreateTensorDirect(b_, &shape, tflite::TensorType::INT8, buffer, name.c_str(), q));
    return static_cast<int>(tensors_.size() - 1);
  }
  int constant(const std::vector<int32_t>& shape, const std::string& name, tflite::TensorType type,
               const void* data, size_t bytes) {
    b_.ForceVectorAlignment(bytes, 1, 16);
    auto vec = b_.CreateVector(static_cast<const uint8_t*>(data), bytes);
    buffers_.push_back(tflite::CreateBuffer(b_, vec));
    return tensor(shape, name, type, static_cast<uint32_t>(buffers_.size() - 1));
  }
  int f32(const std::vector<int32_t>& shape, const std::string& name, const std::vector<float>& v) {
    return constant(shape, name, tflite::TensorType::FLOAT32, v.data(), v.size() * 4);
  }
  int i32(const std::vector<int32_t>& shape, const std::string& name,
          const std::vector<int32_t>& v) {
    return constant(shape, name, tflite::TensorType::INT32, v.data(), v.size() * 4);
  }

  void op(Op code, const std::vector<int32_t>& in, const std::vector<int32_t>& out,
          Options type = Options::NONE, flatbuffers::Offset<void> options = 0) {
    op_sharing(code, b_.CreateVector(in), out, type, options);
  }
  // With an inputs vector made once and shared by many ops.
  void op_sharing(Op code, flatbuffers::Offset<flatbuffers::Vector<int32_t>> in,
                  const std::vector<int32_t>& out, Options type = Options::NONE,
                  flatbuffers::Offset<void> options = 0) {
    ops_.push_back(
        tflite::CreateOperator(b_, opcode(code), in, b_.CreateVector(out), type, options));
  }
  flatbuffers::Offset<flatbuffers::Vector<int32_t>> shared(const std::vector<int32_t>& v) {
    return b_.CreateVector(v);
  }
  flatbuffers::Offset<void> conv_options() {
    return tflite::CreateConv2DOptions(b_, tflite::Padding::VALID, 1, 1).Union();
  }
  flatbuffers::Offset<void> concat_options(int axis) {
    return tflite::CreateConcatenationOptions(b_, axis).Union();
  }

  std::vector<std::byte> finish(const std::vector<int32_t>& inputs,
                                const std::vector<int32_t>& outputs) {
    auto sg = tflite::CreateSubGraph(b_, b_.CreateVector(tensors_), b_.CreateVector(inputs),
                                     b_.CreateVector(outputs), b_.CreateVector(ops_),
                                     b_.CreateString("main"));
    std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{sg};
    auto model = tflite::CreateModel(b_, 3, b_.CreateVector(codes_), b_.CreateVector(subgraphs),
                                     b_.CreateString("lite2onnx hostile test model"),
                                     b_.CreateVector(buffers_));
    tflite::FinishModelBuffer(b_, model);
    const auto* p = reinterpret_cast<const std::byte*>(b_.GetBufferPointer());
    return {p, p + b_.GetSize()};
  }

 private:
  uint32_t opcode(Op code) {
    auto [it, fresh] = code_index_.try_emplace(code, static_cast<uint32_t>(codes_.size()));
    if (fresh) {
      const int c = static_cast<int>(code);
      codes_.push_back(
          tflite::CreateOperatorCode(b_, static_cast<int8_t>(std::min(c, 127)), 0, 1, code));
    }
    return it->second;
  }

  flatbuffers::FlatBufferBuilder b_{1 << 20};
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers_;
  std::vector<flatbuffers::Offset<tflite::Operator>> ops_;
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes_;
  std::map<Op, uint32_t> code_index_;
};

std::string numbered(const char* stem, int i) { return stem + std::to_string(i); }

}  // namespace

std::vector<std::byte> abs_chain(int ops, const std::string& name) {
  Writer w;
  int x = w.tensor({1, 8}, name.empty() ? "input" : name);
  const int in = x;
  for (int i = 0; i < ops; ++i) {
    int y = w.tensor({1, 8}, !name.empty() ? name : i + 1 == ops ? "output" : numbered("abs_", i));
    w.op(Op::ABS, {x}, {y});
    x = y;
  }
  return w.finish({in}, {x});
}

std::vector<std::byte> conv_chain(int ops) {
  Writer w;
  int weight = w.f32({2, 1, 1, 2}, "weight", {0.5f, 0.25f, -0.5f, 1.f});
  int bias = w.f32({2}, "bias", {0.f, 0.125f});
  int x = w.tensor({1, 3, 5, 2}, "input");
  const int in = x;
  for (int i = 0; i < ops; ++i) {
    int y = w.tensor({1, 3, 5, 2}, i + 1 == ops ? "output" : numbered("conv_", i));
    w.op(Op::CONV_2D, {x, weight, bias}, {y}, Options::Conv2DOptions, w.conv_options());
    x = y;
  }
  return w.finish({in}, {x});
}

std::vector<std::byte> quantized_conv_chain(int ops) {
  Writer w;
  int weight = w.int8({2, 1, 1, 2}, "weight", 0.01f, {50, 25, -50, 100});
  int32_t bias_values[2] = {0, 12};
  int bias = w.constant({2}, "bias", tflite::TensorType::INT32, bias_values, sizeof bias_values);
  int x = w.int8({1, 3, 5, 2}, "input", 0.05f);
  const int in = x;
  for (int i = 0; i < ops; ++i) {
    int y = w.int8({1, 3, 5, 2}, i + 1 == ops ? "output" : numbered("conv_", i), 0.05f);
    w.op(Op::CONV_2D, {x, weight, bias}, {y}, Options::Conv2DOptions, w.conv_options());
    x = y;
  }
  return w.finish({in}, {x});
}

std::vector<std::byte> fan_out_concat(int readers) {
  Writer w;
  int x = w.tensor({1, 8}, "input");
  std::vector<int32_t> parts;
  for (int i = 0; i < readers; ++i) {
    int y = w.tensor({1, 8}, numbered("abs_", i));
    w.op(Op::ABS, {x}, {y});
    parts.push_back(y);
  }
  int out = w.tensor({readers, 8}, "output");
  w.op(Op::CONCATENATION, parts, {out}, Options::ConcatenationOptions, w.concat_options(0));
  return w.finish({x}, {out});
}

std::vector<std::byte> many_graph_inputs(int inputs) {
  Writer w;
  std::vector<int32_t> in;
  for (int i = 0; i < inputs; ++i) in.push_back(w.tensor({1, 2}, numbered("input_", i)));
  int out = w.tensor({inputs, 2}, "output");
  w.op(Op::CONCATENATION, in, {out}, Options::ConcatenationOptions, w.concat_options(0));
  return w.finish(in, {out});
}

std::vector<std::byte> many_graph_outputs(int outputs) {
  Writer w;
  int x = w.tensor({1, 8}, "input");
  std::vector<int32_t> out;
  for (int i = 0; i < outputs; ++i) {
    out.push_back(w.tensor({1, 8}, numbered("output_", i)));
    w.op(Op::ABS, {x}, {out.back()});
  }
  return w.finish({x}, out);
}

std::vector<std::byte> shared_input_vectors(int ops, int width) {
  Writer w;
  int x = w.tensor({1, 2}, "input");
  auto in = w.shared(std::vector<int32_t>(static_cast<size_t>(width), x));
  std::vector<int32_t> out;
  for (int i = 0; i < ops; ++i) {
    out.push_back(w.tensor({width, 2}, numbered("concat_", i)));
    w.op_sharing(Op::CONCATENATION, in, {out.back()}, Options::ConcatenationOptions,
                 w.concat_options(0));
  }
  return w.finish({x}, out);
}

std::vector<std::byte> tiled_constants(int ops, int elements) {
  Writer w;
  int x = w.tensor({elements}, "input");
  int one = w.f32({1}, "one", {1.f});
  int multiples = w.i32({1}, "multiples", {elements});
  int sum = x;
  for (int i = 0; i < ops; ++i) {
    int tiled = w.tensor({elements}, numbered("tiled_", i));
    w.op(Op::TILE, {one, multiples}, {tiled});
    int next = w.tensor({elements}, i + 1 == ops ? "output" : numbered("sum_", i));
    w.op(Op::ADD, {sum, tiled}, {next});
    sum = next;
  }
  return w.finish({x}, {sum});
}

std::vector<std::byte> filled_constants(int ops, int elements) {
  Writer w;
  int x = w.tensor({elements}, "input");
  int dims = w.i32({1}, "dims", {elements});
  int one = w.f32({}, "one", {1.f});
  int sum = x;
  for (int i = 0; i < ops; ++i) {
    int filled = w.tensor({elements}, numbered("filled_", i));
    w.op(Op::FILL, {dims, one}, {filled});
    int next = w.tensor({elements}, i + 1 == ops ? "output" : numbered("sum_", i));
    w.op(Op::ADD, {sum, filled}, {next});
    sum = next;
  }
  return w.finish({x}, {sum});
}

std::vector<std::byte> spectral_pairs(int pairs, int fft) {
  Writer w;
  int x = w.tensor({1, fft}, "input");
  int length = w.i32({2}, "fft_length", {1, fft});
  std::vector<int32_t> out;
  for (int i = 0; i < pairs; ++i) {
    int spectrum = w.tensor({1, fft / 2 + 1}, numbered("rfft_", i), tflite::TensorType::COMPLEX64);
    w.op(Op::RFFT2D, {x, length}, {spectrum});
    out.push_back(w.tensor({1, fft / 2 + 1}, numbered("magnitude_", i)));
    w.op(Op::COMPLEX_ABS, {spectrum}, {out.back()});
  }
  return w.finish({x}, out);
}

std::vector<std::byte> shared_constant_readers(int readers, int elements) {
  Writer w;
  std::vector<float> values(static_cast<size_t>(elements));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7);
  int x = w.tensor({1, 1, 1, elements}, "input");
  int c = w.f32({1, 1, 1, elements}, "constant", values);
  int sum = x;
  for (int i = 0; i < readers; ++i) {
    int next = w.tensor({1, 1, 1, elements}, i + 1 == readers ? "output" : numbered("sum_", i));
    w.op(Op::ADD, {sum, c}, {next});
    sum = next;
  }
  return w.finish({x}, {sum});
}

std::vector<HostileModel> hostile_models() {
  using Build = std::function<std::vector<std::byte>()>;
  return {
      // Just inside the default limits (core/options.h): these convert.
      {"deep_chain", "a chain of 29,999 ABS ops", [] { return abs_chain(29'999); }, {}},
      {"conv_chain",
       "a chain of 29,999 convolutions sharing one weight",
       [] { return conv_chain(29'999); },
       {}},
      {"quantized_conv_chain",
       "a chain of 29,999 int8 convolutions (QDQ)",
       [] { return quantized_conv_chain(29'999); },
       {}},
      {"dequantized_conv_chain",
       "the same in --quantization dequantize",
       [] { return quantized_conv_chain(29'999); },
       {"--quantization", "dequantize"}},
      {"same_names", "29,999 tensors all named 't'", [] { return abs_chain(29'999, "t"); }, {}},
      {"fan_out",
       "one tensor read by 29,000 ops, one op with 29,000 inputs",
       [] { return fan_out_concat(29'000); },
       {}},
      {"many_inputs",
       "65,536 graph inputs into one op",
       [] { return many_graph_inputs(65'536); },
       {}},
      {"many_outputs", "29,999 graph outputs", [] { return many_graph_outputs(29'999); }, {}},
      {"tiled_constants",
       "3000 TILEs of a constant to 1M elements each (12 GB if folded)",
       [] { return tiled_constants(3000, 1 << 20); },
       {}},
      {"shared_constant",
       "a 4 MB constant added by 2000 ops",
       [] { return shared_constant_readers(2000, 1 << 20); },
       {}},
      // Beyond them: a resource_limit error.
      {"deeper_chain", "a chain of 300,000 ABS ops", [] { return abs_chain(300'000); }, {}, true},
      {"wide_op",
       "one op with 199,000 inputs",
       [] { return many_graph_inputs(199'000); },
       {},
       true},
      {"shared_inputs",
       "40,000 ops sharing one list of 40,000 inputs (1.6e9 reads)",
       [] { return shared_input_vectors(40'000, 40'000); },
       {},
       true},
      {"filled_constants",
       "3000 FILLs of 1M floats (12 GB folded)",
       [] { return filled_constants(3000, 1 << 20); },
       {},
       true},
      {"spectral",
       "200 RFFT2D of length 4096 (13 GB of DFT matrices)",
       Build([] { return spectral_pairs(200, 4096); }),
       {},
       true},
  };
}

}  // namespace lite2onnx::testing
