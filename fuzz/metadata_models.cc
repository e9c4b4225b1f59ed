#include "fuzz/metadata_models.h"

#include <flatbuffers/flatbuffers.h>
#include <zip.h>

#include <cstring>
#include <memory>

#include "metadata_schema_generated.h"
#include "schema_generated.h"

namespace lite2onnx::fuzz {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

std::vector<Offset<tflite::AssociatedFile>> files_of(FlatBufferBuilder& b,
                                                     const std::vector<MetadataFile>& files) {
  std::vector<Offset<tflite::AssociatedFile>> out;
  for (const auto& f : files)
    out.push_back(tflite::CreateAssociatedFileDirect(
        b, f.name.c_str(), f.description.empty() ? nullptr : f.description.c_str(),
        static_cast<tflite::AssociatedFileType>(f.type)));
  return out;
}

Offset<tflite::Content> content_of(FlatBufferBuilder& b, const std::string& kind) {
  using P = tflite::ContentProperties;
  if (kind == "image")
    return tflite::CreateContent(
        b, P::ImageProperties,
        tflite::CreateImageProperties(b, tflite::ColorSpaceType::RGB).Union());
  if (kind == "feature")
    return tflite::CreateContent(b, P::FeatureProperties,
                                 tflite::CreateFeatureProperties(b).Union());
  if (kind == "bounding_box")
    return tflite::CreateContent(b, P::BoundingBoxProperties,
                                 tflite::CreateBoundingBoxPropertiesDirect(b).Union());
  if (kind == "audio")
    return tflite::CreateContent(b, P::AudioProperties,
                                 tflite::CreateAudioProperties(b, 16000, 1).Union());
  return 0;
}

Offset<tflite::TensorMetadata> tensor_of(FlatBufferBuilder& b, const MetadataTensor& t) {
  std::vector<Offset<tflite::ProcessUnit>> units;
  if (!t.mean.empty() || !t.std.empty())
    units.push_back(tflite::CreateProcessUnit(
        b, tflite::ProcessUnitOptions::NormalizationOptions,
        tflite::CreateNormalizationOptionsDirect(b, &t.mean, &t.std).Union()));
  if (!t.vocabulary.empty()) {
    const std::vector<Offset<tflite::AssociatedFile>> vocab = {tflite::CreateAssociatedFileDirect(
        b, t.vocabulary.c_str(), nullptr, tflite::AssociatedFileType::VOCABULARY)};
    units.push_back(
        tflite::CreateProcessUnit(b, tflite::ProcessUnitOptions::BertTokenizerOptions,
                                  tflite::CreateBertTokenizerOptionsDirect(b, &vocab).Union()));
  }
  Offset<tflite::Stats> stats = 0;
  if (!t.min.empty() || !t.max.empty()) stats = tflite::CreateStatsDirect(b, &t.max, &t.min);
  const auto files = files_of(b, t.files);
  const auto content = content_of(b, t.content);
  return tflite::CreateTensorMetadataDirect(b, t.name.c_str(), nullptr, nullptr, content,
                                            units.empty() ? nullptr : &units, stats,
                                            files.empty() ? nullptr : &files);
}

const char* or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }

uint32_t read32(const std::vector<uint8_t>& v, size_t at) {
  return uint32_t{v[at]} | uint32_t{v[at + 1]} << 8 | uint32_t{v[at + 2]} << 16 |
         uint32_t{v[at + 3]} << 24;
}
uint16_t read16(const std::vector<uint8_t>& v, size_t at) {
  return static_cast<uint16_t>(v[at] | v[at + 1] << 8);
}
void write32(std::vector<uint8_t>& v, size_t at, uint32_t x) {
  for (int i = 0; i < 4; ++i) v[at + static_cast<size_t>(i)] = static_cast<uint8_t>(x >> (8 * i));
}

// Moves an archive written at offset 0 to `start`, and declares the sizes the
// entries ask for: the end record's directory offset, and in each central
// directory entry the offset of its local header (and the uncompressed size
// there and in the local header). Small archives only: no zip64, no comment.
bool relocate(std::vector<uint8_t>& zip, uint32_t start, const std::vector<ZipEntry>& entries) {
  if (zip.size() < 22 || read32(zip, zip.size() - 22) != 0x06054b50) return false;
  const size_t end = zip.size() - 22;
  const uint32_t dir_size = read32(zip, end + 12), dir = read32(zip, end + 16);
  write32(zip, end + 16, dir + start);
  size_t p = dir, i = 0;
  for (; p + 46 <= dir + dir_size && read32(zip, p) == 0x02014b50; ++i) {
    const uint32_t local = read32(zip, p + 42);
    if (i < entries.size() && entries[i].declared_size >= 0) {
      const auto size = static_cast<uint32_t>(entries[i].declared_size);
      write32(zip, p + 24, size);
      if (local + 30 <= zip.size()) write32(zip, local + 22, size);
    }
    write32(zip, p + 42, local + start);
    p += 46u + read16(zip, p + 28) + read16(zip, p + 30) + read16(zip, p + 32);
  }
  return i == entries.size();
}

}  // namespace

MetadataSpec classifier_spec() {
  MetadataSpec spec;
  spec.name = "Tiny classifier";
  spec.description = "Labels the image.";
  spec.version = "v2";
  spec.author = "lite2onnx tests";
  spec.license = "Apache-2.0";
  spec.inputs = {
      {"image", "image", {127.5f, 127.5f, 127.5f}, {127.5f, 127.5f, 128.f}, {0}, {255}, {}, ""}};
  spec.outputs = {
      {"probability", "feature", {}, {}, {0}, {1}, {{"labels.txt", 2, "the classes"}}, ""}};
  spec.files = {{"README.md", 1, ""}};
  return spec;
}

std::vector<uint8_t> metadata_buffer(const MetadataSpec& spec) {
  FlatBufferBuilder b;
  std::vector<Offset<tflite::TensorMetadata>> inputs, outputs;
  for (const auto& t : spec.inputs) inputs.push_back(tensor_of(b, t));
  for (const auto& t : spec.outputs) outputs.push_back(tensor_of(b, t));
  const std::vector<Offset<tflite::SubGraphMetadata>> subgraphs = {
      tflite::CreateSubGraphMetadataDirect(b, nullptr, nullptr, &inputs, &outputs)};
  const auto files = files_of(b, spec.files);
  tflite::FinishModelMetadataBuffer(
      b, tflite::CreateModelMetadataDirect(b, or_null(spec.name), or_null(spec.description),
                                           or_null(spec.version), &subgraphs, or_null(spec.author),
                                           or_null(spec.license), files.empty() ? nullptr : &files,
                                           "1.0.0"));
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::vector<uint8_t> zip_archive(const std::vector<ZipEntry>& entries, uint32_t start) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* storage = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_error_fini(&error);
  if (!storage) return {};
  zip_source_keep(storage);  // the archive's bytes outlive zip_close
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> keep(storage, zip_source_free);
  zip_t* archive = zip_open_from_source(storage, ZIP_TRUNCATE, nullptr);
  if (!archive) {
    zip_source_free(storage);  // the reference zip_open_from_source did not take
    return {};
  }
  for (const auto& e : entries) {
    zip_source_t* s = zip_source_buffer(archive, e.content.data(), e.content.size(), 0);
    const zip_int64_t index = s ? zip_file_add(archive, e.name.c_str(), s, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (s) zip_source_free(s);
      zip_discard(archive);
      return {};
    }
    const auto i = static_cast<zip_uint64_t>(index);
    zip_set_file_compression(archive, i, e.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 9);
    zip_file_set_mtime(archive, i, 1609459200, 0);  // fixed: the same bytes every run
  }
  if (zip_close(archive) != 0) {
    zip_discard(archive);
    return {};
  }
  zip_stat_t st;
  if (zip_source_stat(storage, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) ||
      zip_source_open(storage) != 0)
    return {};
  std::vector<uint8_t> out(st.size);
  const zip_int64_t got = zip_source_read(storage, out.data(), out.size());
  zip_source_close(storage);
  if (got != static_cast<zip_int64_t>(out.size()) || !relocate(out, start, entries)) return {};
  return out;
}

std::vector<std::byte> model_with_metadata(const std::vector<uint8_t>& metadata,
                                           const std::vector<ZipEntry>& archive, int inputs) {
  FlatBufferBuilder b;
  std::vector<Offset<tflite::Buffer>> buffers = {tflite::CreateBuffer(b)};
  std::vector<Offset<tflite::Metadata>> entries;
  if (!metadata.empty()) {
    b.ForceVectorAlignment(metadata.size(), 1, 16);
    buffers.push_back(tflite::CreateBuffer(b, b.CreateVector(metadata)));
    entries.push_back(tflite::CreateMetadataDirect(b, "TFLITE_METADATA", 1));
  }
  const std::vector<int32_t> shape = {1, 4, 4, 3};
  std::vector<Offset<tflite::Tensor>> tensors;
  std::vector<Offset<tflite::Operator>> ops;
  std::vector<int32_t> in, out;
  for (int i = 0; i < inputs; ++i) {
    const std::string x = "input_" + std::to_string(i), y = "output_" + std::to_string(i);
    tensors.push_back(
        tflite::CreateTensorDirect(b, &shape, tflite::TensorType::FLOAT32, 0, x.c_str()));
    tensors.push_back(
        tflite::CreateTensorDirect(b, &shape, tflite::TensorType::FLOAT32, 0, y.c_str()));
    in.push_back(2 * i);
    out.push_back(2 * i + 1);
    const std::vector<int32_t> op_in = {2 * i}, op_out = {2 * i + 1};
    ops.push_back(tflite::CreateOperatorDirect(b, 0, &op_in, &op_out));
  }
  const std::vector<Offset<tflite::OperatorCode>> codes = {tflite::CreateOperatorCode(
      b, static_cast<int8_t>(tflite::BuiltinOperator::RELU), 0, 1, tflite::BuiltinOperator::RELU)};
  const std::vector<Offset<tflite::SubGraph>> subgraphs = {
      tflite::CreateSubGraphDirect(b, &tensors, &in, &out, &ops, "main")};
  tflite::FinishModelBuffer(
      b, tflite::CreateModelDirect(b, 3, &codes, &subgraphs, "metadata test model", &buffers,
                                   nullptr, entries.empty() ? nullptr : &entries));
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (!archive.empty()) {
    const auto zip = zip_archive(archive, static_cast<uint32_t>(bytes.size()));
    bytes.insert(bytes.end(), zip.begin(), zip.end());
  }
  std::vector<std::byte> model(bytes.size());
  std::memcpy(model.data(), bytes.data(), bytes.size());
  return model;
}

std::vector<std::pair<std::string, std::vector<std::byte>>> metadata_seed_models() {
  MetadataSpec spec = classifier_spec();
  spec.inputs.push_back({"text", "feature", {}, {}, {}, {}, {}, "vocab.txt"});
  const std::string labels = "background\ncat\ndog\n";
  std::vector<std::pair<std::string, std::vector<std::byte>>> out;
  out.emplace_back("classifier_stored", model_with_metadata(metadata_buffer(spec),
                                                            {{"labels.txt", labels},
                                                             {"vocab.txt", "[PAD]\n[UNK]\nhello\n"},
                                                             {"README.md", "# seed\n"}},
                                                            2));
  out.emplace_back(
      "classifier_deflated",
      model_with_metadata(metadata_buffer(spec),
                          {{"labels.txt", labels, true}, {"vocab.txt", "a\nb\n", true}}, 2));
  out.emplace_back("bomb",
                   model_with_metadata(metadata_buffer(spec),
                                       {{"labels.txt", std::string(1 << 16, 'a'), true, 16}}, 2));
  out.emplace_back("no_archive", model_with_metadata(metadata_buffer(spec), {}, 2));
  return out;
}

}  // namespace lite2onnx::fuzz
