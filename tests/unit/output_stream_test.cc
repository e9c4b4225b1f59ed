// Streamed output (core/output_buffer.h OutputStream): the bytes a stream gets
// are the in-memory conversion's, for every generated test model and for
// constants larger than the stream's buffer (permuted, widened or as stored);
// a constant written in any ranges is the constant written whole, and the
// whole is the permutation computed element by element; a stream that refuses
// a write ends the conversion; the source's hash written last.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/onnx/emit_parts.h"
#include "core/provenance.h"
#include "hostile.h"

namespace lite2onnx::hostile {
namespace {

// A stream into memory, positional or not, that can refuse its writes after
// `fail_after` bytes.
class MemoryStream : public OutputStream {
 public:
  explicit MemoryStream(bool positional, size_t fail_after = SIZE_MAX)
      : positional_(positional), fail_after_(fail_after) {}
  bool write(std::span<const std::byte> bytes) override {
    if (failed) ++asked_after_refusal;
    if (failed || bytes.size() > fail_after_ - std::min(fail_after_, data.size())) {
      failed = true;
      return false;
    }
    data.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    largest = std::max(largest, bytes.size());
    return true;
  }
  bool positional() const override { return positional_; }
  bool write_at(size_t offset, std::span<const std::byte> bytes) override {
    if (!positional_ || offset + bytes.size() > data.size()) return false;
    std::memcpy(data.data() + offset, bytes.data(), bytes.size());
    return true;
  }
  std::string data;
  size_t asked_after_refusal = 0, largest = 0;
  bool failed = false;

 private:
  bool positional_;
  size_t fail_after_;
};

// Converts `model` in memory and streamed (to a positional stream, the hash
// written last, and to a plain one); all three must be the same bytes.
void expect_streams_match(const std::string& name, std::span<const std::byte> model,
                          const ConvertOptions& options = {}) {
  SCOPED_TRACE(name);
  Diagnostics d;
  auto in_memory = convert(model, options, d);
  for (bool positional : {true, false}) {
    MemoryStream stream(positional);
    auto streamed = convert(model, options, d, stream);
    ASSERT_EQ(static_cast<bool>(streamed), static_cast<bool>(in_memory))
        << (streamed ? in_memory.error().message : streamed.error().message);
    if (!in_memory) {
      EXPECT_EQ(streamed.error().message, in_memory.error().message);
      EXPECT_TRUE(stream.data.empty()) << "a failed conversion wrote " << stream.data.size();
      continue;
    }
    EXPECT_EQ(*streamed, in_memory->size());
    EXPECT_TRUE(stream.data == *in_memory) << (positional ? "positional" : "plain") << " stream";
  }
}

TEST(OutputStream, EveryTestModelStreamsTheInMemoryBytes) {
  size_t models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(LITE2ONNX_TEST_MODELS_DIR)) {
    if (entry.path().extension() != ".tflite") continue;
    const Bytes bytes = read_file(entry.path().string());
    expect_streams_match(entry.path().filename().string(), bytes);
    ++models;
  }
  EXPECT_GT(models, 100u);
}

TEST(OutputStream, QuantizationModesStreamTheInMemoryBytes) {
  for (const char* name : {"q_conv2d", "q_conv2d_u8", "q_fully_connected", "dequantize_f16_conv",
                           "formats_float16_buffer", "q_16x8_conv2d"}) {
    const std::string path = op_model(name);
    if (!std::filesystem::exists(path)) {
      ADD_FAILURE() << path << " not found";
      continue;
    }
    const Bytes bytes = read_file(path);
    for (QuantizationMode mode :
         {QuantizationMode::kQdq, QuantizationMode::kDequantize, QuantizationMode::kExact}) {
      ConvertOptions options;
      options.quantization = mode;
      expect_streams_match(std::string(name) + " mode " + std::to_string(static_cast<int>(mode)),
                           bytes, options);
    }
    ConvertOptions keep;
    keep.keep_float16_weights = true;
    expect_streams_match(std::string(name) + " --keep-float16-weights", bytes, keep);
  }
  // Real quantized models, when the corpus is there.
  for (const char* name : {"coral-test_data/mobilenet_v2_1.0_224_quant.tflite",
                           "coral-test_data/tf2_mobilenet_v2_1.0_224_ptq.tflite",
                           "tflite2onnx/mobilenet_v1_0.25_128.tflite"}) {
    const std::string path = corpus_dir() + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    expect_streams_match(name, read_file(path));
  }
}

// CONV_2D [1, 4, 4, in] -> [1, 4, 4, out] with a [out, 3, 3, in] filter of
// `type` (FLOAT32 or FLOAT16): OHWI, written OIHW.
Bytes large_conv(int64_t out, int64_t in, const std::string& type) {
  ModelJson m;
  const int code = m.builtin("CONV_2D", 3);
  const size_t count = static_cast<size_t>(out * 9 * in);
  std::string data;
  if (type == "FLOAT16") {
    std::vector<uint16_t> halves(count);
    for (size_t i = 0; i < count; ++i) halves[i] = static_cast<uint16_t>(0x3c00 + i % 1021);
    data.resize(count * 2);
    std::memcpy(data.data(), halves.data(), data.size());
    std::string json = "[";
    for (size_t i = 0; i < data.size(); ++i)
      json += (i ? "," : "") + std::to_string(static_cast<uint8_t>(data[i]));
    data = json + "]";
  } else {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i % 4093) / 4093.0f;
    data = f32_bytes(values);
  }
  const int x = m.tensor("x", {1, 4, 4, in});
  const int w = m.tensor("w", {out, 3, 3, in}, type, m.buffer(data));
  const int y = m.tensor("y", {1, 4, 4, out});
  m.op(code, {x, w, -1}, {y}, "Conv2DOptions", kStride1);
  m.io({x}, {y});
  return m.bytes();
}

TEST(OutputStream, ConstantsLargerThanTheBufferStreamInPieces) {
  // 37 x 9 x 1009 float32: 1.3 MB, more than the 1 MiB buffer; output lines
  // of 9 elements, so the buffer's edge cuts a line.
  const Bytes f32 = large_conv(37, 1009, "FLOAT32");
  expect_streams_match("float32 filter, permuted", f32);
  {
    MemoryStream stream(true);
    Diagnostics d;
    ASSERT_TRUE(convert(f32, {}, d, stream));
    EXPECT_LE(stream.largest, size_t{1} << 20) << "a write larger than the buffer";
  }
  // float16, widened to float32 on the way.
  expect_streams_match("float16 filter, widened and permuted", large_conv(31, 1013, "FLOAT16"));
  // Kept float16 (a Cast after it), still permuted.
  ConvertOptions keep;
  keep.keep_float16_weights = true;
  expect_streams_match("float16 filter kept", large_conv(31, 1013, "FLOAT16"), keep);
}

TEST(OutputStream, RefusedWriteEndsTheConversion) {
  const Bytes model = large_conv(37, 1009, "FLOAT32");
  for (size_t fail_after : {size_t{0}, size_t{100}, size_t{700000}}) {
    MemoryStream stream(true, fail_after);
    Diagnostics d;
    auto result = convert(model, {}, d, stream);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kInternal);
    EXPECT_EQ(result.error().message, "the ONNX model could not be written");
    EXPECT_LE(stream.data.size(), fail_after);
    EXPECT_EQ(stream.asked_after_refusal, 0u) << "written to after it refused";
  }
}

TEST(OutputStream, SourceHashWrittenLastIsTheModelsHash) {
  const Bytes model = conv_model(1, 1);
  const std::string hash = sha256_hex(model);
  auto props_of = [](const std::string& bytes) {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(bytes));
    std::map<std::string, std::string> props;
    for (const auto& p : m.metadata_props()) props[p.key()] = p.value();
    return props;
  };
  ConvertOptions given;
  int asked = 0;
  given.source_sha256 = [&] {
    ++asked;
    return hash;
  };
  MemoryStream stream(true);
  Diagnostics d;
  ASSERT_TRUE(convert(model, given, d, stream));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(props_of(stream.data)[kSourceSha256Key], hash);
  // Hashed by the core, last.
  MemoryStream own(true);
  ASSERT_TRUE(convert(model, {}, d, own));
  EXPECT_EQ(own.data, stream.data);
  // A late value must fill its placeholder exactly.
  given.source_sha256 = [] { return std::string("short"); };
  MemoryStream bad(true);
  auto refused = convert(model, given, d, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInternal);
  EXPECT_THAT(refused.error().message, HasSubstr("lite2onnx.source_sha256"));
}

// Large int64 constants are not spliced: ONNX's shape inference reads their
// values (a Split's sizes), which a placeholder would hide.
TEST(OutputStream, SplitIntoManyPartsValidatesWithItsSizes) {
  ModelJson m;
  const int code = m.builtin("SPLIT_V", 102);
  constexpr int kParts = 600;  // 600 int64 sizes: 4800 bytes
  const int x = m.tensor("x", {kParts, 3});
  const int sizes = m.i32("sizes", {kParts}, std::vector<int32_t>(kParts, 1));
  const int axis = m.i32("axis", {}, {0});
  std::vector<int64_t> outs;
  for (int i = 0; i < kParts; ++i) outs.push_back(m.tensor("y" + std::to_string(i), {1, 3}));
  m.op(code, {x, sizes, axis}, outs, "SplitVOptions",
       R"({ "num_splits": )" + std::to_string(kParts) + " }");
  m.io({x}, outs);
  ConvertOptions o;
  o.limits.max_tensors = 10000;
  o.limits.max_inputs_per_op = 10000;
  expect_streams_match("SPLIT_V into 600", m.bytes(), o);
  Diagnostics d;
  auto onnx = convert(m.bytes(), o, d);
  ASSERT_TRUE(onnx) << onnx.error().message;
}

// ---- ConstantWriter ---------------------------------------------------------

// The constant in ONNX order, element by element: output index -> source index.
std::vector<std::byte> permuted_reference(const ir::Tensor& t) {
  const size_t rank = t.shape.size();
  const ir::Perm p = t.layout.empty() ? ir::identity_perm(rank) : t.layout;
  std::vector<int64_t> stride(rank, 1);
  for (size_t a = rank; a-- > 1;) stride[a - 1] = stride[a] * t.shape[a];
  const size_t count = static_cast<size_t>(*ir::element_count(t.shape));
  const size_t src_es = ir::element_size(t.data->stored_type), dst_es = ir::element_size(t.dtype);
  std::vector<std::byte> out(count * dst_es);
  for (size_t o = 0; o < count; ++o) {
    size_t rest = o;
    int64_t src = 0;
    for (size_t i = rank; i-- > 0;) {
      const auto dim = static_cast<size_t>(t.shape[static_cast<size_t>(p[i])]);
      src += static_cast<int64_t>(rest % dim) * stride[static_cast<size_t>(p[i])];
      rest /= dim;
    }
    const std::byte* from = t.data->bytes.data() + static_cast<size_t>(src) * src_es;
    if (src_es == 2 && dst_es == 4) {
      uint16_t h;
      std::memcpy(&h, from, 2);
      const float f = ir::half_to_float(h);
      std::memcpy(out.data() + o * 4, &f, 4);
    } else {
      std::memcpy(out.data() + o * dst_es, from, dst_es);
    }
  }
  return out;
}

TEST(ConstantWriter, AnyRangesMakeTheWholeAndTheWholeIsThePermutation) {
  struct Case {
    ir::Shape shape;
    ir::Perm perm;
    ir::DataType stored, dtype;
  };
  using ir::DataType;
  const Case cases[] = {
      {{7, 3, 5, 11}, {0, 3, 1, 2}, DataType::kFloat32, DataType::kFloat32},   // OHWI -> OIHW
      {{7, 3, 5, 11}, {3, 0, 1, 2}, DataType::kFloat32, DataType::kFloat32},   // -> IOHW
      {{1, 3, 5, 11}, {3, 0, 1, 2}, DataType::kInt8, DataType::kInt8},         // 1HWC -> C1HW
      {{7, 3, 5, 11}, {1, 0, 3, 2}, DataType::kFloat32, DataType::kFloat32},   // general
      {{2, 3, 5, 7, 4}, {4, 2, 0, 3, 1}, DataType::kInt16, DataType::kInt16},  // general
      {{7, 3, 5, 11}, {0, 3, 1, 2}, DataType::kFloat16, DataType::kFloat32},   // widened
      {{6, 1, 13}, {1, 0, 2}, DataType::kFloat16, DataType::kFloat32},         // in order, widened
      {{6, 1, 13}, {0, 2, 1}, DataType::kInt32, DataType::kInt32},             // in order (size 1)
      {{6, 13}, {}, DataType::kUInt8, DataType::kUInt8},                       // no layout
  };
  std::mt19937 rng(1234);
  for (const Case& c : cases) {
    SCOPED_TRACE(ir::to_string(c.shape) + " perm " + ir::to_string(c.perm));
    ir::Tensor t;
    t.shape = c.shape;
    t.layout = c.perm;
    t.dtype = c.dtype;
    const size_t count = static_cast<size_t>(*ir::element_count(c.shape));
    std::vector<std::byte> stored(count * ir::element_size(c.stored));
    for (size_t i = 0; i < stored.size(); ++i) stored[i] = static_cast<std::byte>(rng());
    if (c.stored == DataType::kFloat16)  // finite halves: no NaN payloads to compare
      for (size_t i = 1; i < stored.size(); i += 2) stored[i] &= std::byte{0x3f};
    t.data = ir::ConstData::owned(stored, c.stored);

    const std::vector<std::byte> want = permuted_reference(t);
    std::vector<std::byte> whole(want.size());
    onnx_emit::write_constant(t, whole.data());
    EXPECT_TRUE(whole == want) << "write_constant";

    const onnx_emit::ConstantWriter writer(t);
    ASSERT_EQ(writer.count(), count);
    const size_t es = writer.element_size();
    if (auto stored_span = writer.as_stored()) {
      EXPECT_TRUE(std::equal(stored_span->begin(), stored_span->end(), want.begin(), want.end()))
          << "as_stored";
    }
    for (int round = 0; round < 20; ++round) {
      std::vector<std::byte> pieces(want.size(), std::byte{0xee});
      for (size_t first = 0; first < count;) {
        const size_t n = std::min(count - first, size_t{1} + rng() % (round < 10 ? 7 : 97));
        writer.write(first, n, pieces.data() + first * es);
        first += n;
      }
      ASSERT_TRUE(pieces == want) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace lite2onnx::hostile
