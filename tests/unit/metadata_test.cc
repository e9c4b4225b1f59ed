// TFLite Metadata and associated files (core/tflite/metadata.h) into the ONNX
// model's metadata_props (core/provenance.h) and inspect's ModelInfo: models
// built here (the metadata with the generated builder API, the archive with
// libzip; fuzz/metadata_models.h), hostile ones (damaged FlatBuffer and
// archive, zip bombs, oversized and too many files, shared tables), and the
// corpus models that carry metadata.
#include <flatbuffers/flatbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/option_table.h"
#include "core/tflite/metadata.h"
#include "fuzz/metadata_models.h"
#include "metadata_schema_generated.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using fuzz::MetadataSpec;
using fuzz::ZipEntry;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::view;
using Json = nlohmann::json;
using Props = std::map<std::string, std::string>;

const std::string kLabels = "background\ncat\ndog\n";

// An image classifier: the input normalized, the output's range and labels.
MetadataSpec classifier() { return fuzz::classifier_spec(); }

Props props_of(const std::string& onnx) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(onnx));
  Props out;
  for (const auto& p : m.metadata_props()) {
    EXPECT_EQ(out.count(p.key()), 0u) << "duplicate key " << p.key();
    out[p.key()] = p.value();
  }
  return out;
}

struct Converted {
  Props props;
  Diagnostics diag;
};

Converted convert_ok(const std::vector<std::byte>& model, const ConvertOptions& options = {}) {
  Converted c;
  auto onnx = convert(view(model), options, c.diag);
  EXPECT_TRUE(onnx.ok()) << onnx.error().message;
  if (onnx) c.props = props_of(*onnx);
  return c;
}

std::vector<std::string> metadata_warnings(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& w : d.warnings)
    if (w.rfind("TFLite metadata: ", 0) == 0) out.push_back(w);
  return out;
}

// The reader alone, on a model's bytes, as the pipeline calls it.
struct ReadBack {
  TfliteMetadata metadata;
  std::vector<std::string> warnings;
};
ReadBack read_back(const std::vector<std::byte>& model,
                   const tflite_reader::AssociatedFileLimits& limits = {}) {
  ReadBack r;
  auto read = tflite_reader::read(view(model), Limits{});
  EXPECT_TRUE(read.ok()) << read.error().message;
  if (read)
    r.metadata =
        tflite_reader::read_metadata(view(model), read->metadata, read->graph, r.warnings, limits);
  return r;
}

const AssociatedFileInfo* file_named(const TfliteMetadata& m, const std::string& name) {
  for (const auto& f : m.associated_files)
    if (f.name == name) return &f;
  return nullptr;
}

// ---- what the ONNX model carries ----------------------------------------------------

TEST(TfliteMetadata, NormalizationRangesAndLabelsGoIntoMetadataProps) {
  const auto model = fuzz::model_with_metadata(
      fuzz::metadata_buffer(classifier()),
      {{"labels.txt", kLabels}, {"README.md", "# Tiny classifier\n", /*deflate=*/true}});
  Converted c = convert_ok(model);
  EXPECT_THAT(metadata_warnings(c.diag), ::testing::IsEmpty());
  // Provenance first, as before, then the metadata and the files.
  EXPECT_EQ(c.props["tflite.description"], "metadata test model");
  ASSERT_TRUE(c.props.count("tflite.metadata"));
  const Json j = Json::parse(c.props["tflite.metadata"]);
  EXPECT_EQ(j["name"], "Tiny classifier");
  EXPECT_EQ(j["description"], "Labels the image.");
  EXPECT_EQ(j["version"], "v2");
  EXPECT_EQ(j["author"], "lite2onnx tests");
  EXPECT_EQ(j["license"], "Apache-2.0");
  ASSERT_EQ(j["inputs"].size(), 1u);
  const Json& in = j["inputs"][0];
  EXPECT_EQ(in["tensor"], "input_0");  // the graph input, by position
  EXPECT_EQ(in["name"], "image");
  EXPECT_EQ(in["content"], "image");
  EXPECT_EQ(in["normalization"]["mean"], Json::parse("[127.5, 127.5, 127.5]"));
  EXPECT_EQ(in["normalization"]["std"], Json::parse("[127.5, 127.5, 128]"));
  EXPECT_EQ(in["range"], Json::parse(R"({"min": [0], "max": [255]})"));
  const Json& out = j["outputs"][0];
  EXPECT_EQ(out["tensor"], "output_0");
  EXPECT_EQ(out["range"], Json::parse(R"({"min": [0], "max": [1]})"));
  EXPECT_EQ(out["associated_files"], Json::parse(R"(["labels.txt"])"));
  EXPECT_FALSE(out.contains("normalization"));
  // The model's files first, then the tensors', each with its type; the
  // contents are separate entries, not in the JSON.
  ASSERT_EQ(j["associated_files"].size(), 2u);
  EXPECT_EQ(j["associated_files"][0]["name"], "README.md");
  EXPECT_EQ(j["associated_files"][0]["type"], "DESCRIPTIONS");
  EXPECT_EQ(j["associated_files"][1]["name"], "labels.txt");
  EXPECT_EQ(j["associated_files"][1]["type"], "TENSOR_AXIS_LABELS");
  EXPECT_EQ(j["associated_files"][1]["description"], "the classes");
  EXPECT_EQ(j["associated_files"][1]["size"], kLabels.size());
  EXPECT_EQ(j["associated_files"][1]["embedded"], true);
  EXPECT_FALSE(j["associated_files"][1].contains("content"));
  EXPECT_EQ(c.props["tflite.associated_file.labels.txt"], kLabels);
  EXPECT_EQ(c.props["tflite.associated_file.README.md"], "# Tiny classifier\n");
  // The same model and options give the same bytes.
  Diagnostics d;
  EXPECT_EQ(convert(view(model), {}, d).value(), convert(view(model), {}, d).value());
}

TEST(TfliteMetadata, FloatsKeepTheirShortestDecimalForm) {
  MetadataSpec spec = classifier();
  spec.inputs[0].mean = {0.1f, 0.485f};
  spec.inputs[0].std = {0.229f, 1e-8f};
  Converted c = convert_ok(fuzz::model_with_metadata(fuzz::metadata_buffer(spec)));
  EXPECT_THAT(c.props["tflite.metadata"],
              HasSubstr(R"("normalization":{"mean":[0.1,0.485],"std":[0.229,1e-08]})"));
}

TEST(TfliteMetadata, TensorsAreMatchedToGraphInputsByPosition) {
  MetadataSpec spec = classifier();
  spec.inputs.push_back({"second", "feature", {0}, {1}, {}, {}, {}, ""});
  spec.inputs.push_back({"third", "", {}, {}, {}, {}, {}, ""});
  Converted c = convert_ok(fuzz::model_with_metadata(fuzz::metadata_buffer(spec), {}, 2));
  const Json j = Json::parse(c.props["tflite.metadata"]);
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["tensor"], "input_0");
  EXPECT_EQ(j["inputs"][1]["tensor"], "input_1");
  EXPECT_EQ(j["inputs"][1]["name"], "second");
  ASSERT_EQ(j["outputs"].size(), 1u);  // one entry for two outputs: the first
  EXPECT_EQ(j["outputs"][0]["tensor"], "output_0");
  EXPECT_THAT(metadata_warnings(c.diag),
              ElementsAre(HasSubstr("3 input tensor entries for 2 graph inputs"),
                          HasSubstr("1 output tensor entries for 2 graph outputs"),
                          HasSubstr("'README.md', 'labels.txt' are named by the metadata but "
                                    "not packed")));
}

TEST(TfliteMetadata, VocabularyOfATokenizerIsAnAssociatedFileOfItsTensor) {
  MetadataSpec spec;
  spec.name = "text";
  spec.inputs = {{"ids", "feature", {}, {}, {}, {}, {}, "vocab.txt"}};
  ReadBack r = read_back(
      fuzz::model_with_metadata(fuzz::metadata_buffer(spec), {{"vocab.txt", "[PAD]\nhello\n"}}));
  EXPECT_THAT(r.warnings, ::testing::IsEmpty());
  EXPECT_THAT(r.metadata.inputs.at(0).associated_files, ElementsAre("vocab.txt"));
  const auto* f = file_named(r.metadata, "vocab.txt");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, "VOCABULARY");
  EXPECT_TRUE(f->embedded);
}

TEST(TfliteMetadata, NoMetadataOptionLeavesItOutAndKeepsProvenance) {
  const auto model =
      fuzz::model_with_metadata(fuzz::metadata_buffer(classifier()), {{"labels.txt", kLabels}});
  ConvertOptions options;
  ASSERT_TRUE(set_option(options, "no_metadata", "true"));
  Converted c = convert_ok(model, options);
  for (const auto& [key, value] : c.props)
    EXPECT_EQ(key.rfind("tflite.associated_file.", 0), std::string::npos) << key;
  EXPECT_EQ(c.props.count("tflite.metadata"), 0u);
  EXPECT_EQ(c.props["tflite.description"], "metadata test model");
  EXPECT_THAT(c.props["lite2onnx.options"], HasSubstr("no_metadata=true"));
  EXPECT_EQ(c.props["lite2onnx.source_sha256"].size(), 64u);
  // Not read at all: damaged metadata warns of nothing either.
  std::vector<uint8_t> broken = fuzz::metadata_buffer(classifier());
  broken.resize(broken.size() / 2);
  EXPECT_THAT(convert_ok(fuzz::model_with_metadata(broken), options).diag.warnings,
              ::testing::IsEmpty());
}

TEST(TfliteMetadata, ModelsWithoutMetadataGetNoMetadataEntries) {
  Converted c = convert_ok(fuzz::model_with_metadata({}, {{"labels.txt", kLabels}}));
  EXPECT_EQ(c.props.count("tflite.metadata"), 0u);
  EXPECT_EQ(c.props.count("tflite.associated_file.labels.txt"), 0u);
  EXPECT_THAT(c.diag.warnings, ::testing::IsEmpty());
}

TEST(TfliteMetadata, InspectShowsIt) {
  const auto model =
      fuzz::model_with_metadata(fuzz::metadata_buffer(classifier()), {{"labels.txt", kLabels}});
  auto info = inspect(view(model));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_TRUE(info->metadata.present);
  EXPECT_EQ(info->metadata.name, "Tiny classifier");
  EXPECT_EQ(file_named(info->metadata, "labels.txt")->content, kLabels);
  const std::string text = info->to_text();
  EXPECT_THAT(text, HasSubstr("TFLite metadata:\n  name: Tiny classifier\n"));
  EXPECT_THAT(text, HasSubstr("  input 'input_0' (image) image, normalization mean [127.5, 127.5, "
                              "127.5] std [127.5, 127.5, 128], range min [0] max [255]\n"));
  EXPECT_THAT(text, HasSubstr("  output 'output_0' (probability) feature, range min [0] max [1], "
                              "files labels.txt\n"));
  EXPECT_THAT(text, HasSubstr("  associated file labels.txt (TENSOR_AXIS_LABELS, " +
                              std::to_string(kLabels.size()) + " bytes): embedded, 3 lines\n"));
  EXPECT_THAT(text, HasSubstr("  associated file README.md (DESCRIPTIONS): not packed in the "
                              "model\n"));
  const Json j = Json::parse(info->to_json());
  EXPECT_EQ(j["metadata"]["associated_files"][1]["content"], kLabels);
  EXPECT_EQ(j["metadata"]["inputs"][0]["normalization"]["mean"][0], 127.5);
  // A model without metadata shows none.
  auto plain = inspect(view(fuzz::model_with_metadata({})));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->metadata.present);
  EXPECT_THAT(plain->to_text(), Not(HasSubstr("TFLite metadata")));
  EXPECT_FALSE(Json::parse(plain->to_json()).contains("metadata"));
}

// ---- hostile metadata: a warning, and the conversion goes on -------------------------------

TEST(TfliteMetadata, DamagedMetadataIsAWarningAndTheConversionSucceeds) {
  const std::vector<uint8_t> good = fuzz::metadata_buffer(classifier());
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    const char* warning;
  };
  std::vector<uint8_t> truncated(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
  std::vector<uint8_t> wrong_id = good;
  std::memcpy(wrong_id.data() + 4, "TFL3", 4);
  std::vector<uint8_t> bad_offset = good;
  bad_offset[0] = 0xf0;  // the root table lies beyond the buffer
  bad_offset[1] = 0xff;
  for (const Case& c : {Case{"truncated", truncated, "failed FlatBuffer verification"},
                        Case{"identifier", wrong_id, "file identifier 'TFL3', expected 'M001'"},
                        Case{"offset", bad_offset, "failed FlatBuffer verification"},
                        Case{"tiny", {1, 2, 3}, "holds 3 bytes"}}) {
    SCOPED_TRACE(c.what);
    Converted conv = convert_ok(fuzz::model_with_metadata(c.bytes, {{"labels.txt", kLabels}}));
    EXPECT_THAT(metadata_warnings(conv.diag), ElementsAre(HasSubstr(c.warning)));
    EXPECT_EQ(conv.props.count("tflite.metadata"), 0u);
    EXPECT_EQ(conv.props.count("tflite.associated_file.labels.txt"), 0u);
    EXPECT_EQ(conv.props.count("lite2onnx.source_sha256"), 1u);
  }
}

// Shared tables let a small buffer describe far more than it holds: one
// TensorMetadata with a 64 KiB description named by eight inputs.
TEST(TfliteMetadata, SharedTablesAreBoundedByAnExpansionBudget) {
  flatbuffers::FlatBufferBuilder b;
  auto t = tflite::CreateTensorMetadataDirect(b, "x", std::string(64 << 10, 'd').c_str());
  const std::vector<flatbuffers::Offset<tflite::TensorMetadata>> inputs(8, t);
  const std::vector<flatbuffers::Offset<tflite::SubGraphMetadata>> sg = {
      tflite::CreateSubGraphMetadataDirect(b, nullptr, nullptr, &inputs)};
  tflite::FinishModelMetadataBuffer(
      b, tflite::CreateModelMetadataDirect(b, "m", nullptr, nullptr, &sg));
  const std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  Converted c = convert_ok(fuzz::model_with_metadata(bytes, {}, 8));
  EXPECT_THAT(metadata_warnings(c.diag),
              ElementsAre(HasSubstr("expands to far more than its size")));
  EXPECT_EQ(c.props.count("tflite.metadata"), 0u);
  // Four inputs fit: 4 x 64 KiB is within 4 x the buffer + 64 KiB.
  ReadBack four = read_back(fuzz::model_with_metadata(bytes, {}, 4));
  EXPECT_TRUE(four.metadata.present);
  EXPECT_EQ(four.metadata.inputs.size(), 4u);
  EXPECT_THAT(four.warnings, ElementsAre(HasSubstr("8 input tensor entries for 4 graph inputs")));
}

// ---- hostile archives: bounded, listed, a warning -------------------------------------------

TEST(TfliteMetadata, OversizedFilesAreListedNotEmbedded) {
  MetadataSpec spec = classifier();
  spec.files = {{"big.txt", 1, ""}};
  const std::string big((1 << 20) + 1, 'x');  // 1 MiB + 1
  const std::string part(900 << 10, 'y');     // five of them pass 4 MiB together
  std::vector<ZipEntry> entries = {{"big.txt", big, true}, {"labels.txt", kLabels}};
  for (int i = 0; i < 5; ++i) entries.push_back({"part" + std::to_string(i) + ".txt", part, true});
  const auto model = fuzz::model_with_metadata(fuzz::metadata_buffer(spec), entries);
  Converted c = convert_ok(model);
  EXPECT_THAT(metadata_warnings(c.diag),
              ElementsAre(HasSubstr("'big.txt' declares 1048577 bytes, more than the 1 MiB a file "
                                    "may have: listed, not embedded"),
                          HasSubstr("'part4.txt' would pass the 4 MiB all files may have "
                                    "together: listed, not embedded")));
  EXPECT_EQ(c.props.count("tflite.associated_file.big.txt"), 0u);
  EXPECT_EQ(c.props.count("tflite.associated_file.part4.txt"), 0u);
  EXPECT_EQ(c.props["tflite.associated_file.part3.txt"], part);
  EXPECT_EQ(c.props["tflite.associated_file.labels.txt"], kLabels);
  const Json j = Json::parse(c.props["tflite.metadata"]);
  const Json& listed = j["associated_files"][0];
  EXPECT_EQ(listed["name"], "big.txt");
  EXPECT_EQ(listed["packed"], true);
  EXPECT_EQ(listed["size"], big.size());
  EXPECT_EQ(listed["embedded"], false);
  EXPECT_THAT(listed["note"].get<std::string>(), HasSubstr("more than the 1 MiB"));
  // Files only the archive has are listed too, without a type.
  EXPECT_EQ(j["associated_files"][2]["name"], "part0.txt");
  EXPECT_FALSE(j["associated_files"][2].contains("type"));
}

TEST(TfliteMetadata, ZipBombsStopAtTheirDeclaredSize) {
  // 16 MiB of zeros deflate to ~16 KiB; the archive declares 100 bytes.
  const std::string zeros(16 << 20, '\0');
  const auto model = fuzz::model_with_metadata(
      fuzz::metadata_buffer(classifier()),
      {{"labels.txt", zeros, true, 100}, {"README.md", kLabels, true, 5}});
  ASSERT_LT(model.size(), 1u << 20);
  Converted c = convert_ok(model);
  EXPECT_THAT(metadata_warnings(c.diag),
              ElementsAre(HasSubstr("'labels.txt' inflates past the 100 bytes it declares"),
                          HasSubstr("'README.md' inflates past the 5 bytes it declares")));
  EXPECT_EQ(c.props.count("tflite.associated_file.labels.txt"), 0u);
  // And the reader took no more than it may have: the declared size + 1.
  ReadBack r = read_back(model);
  EXPECT_TRUE(file_named(r.metadata, "labels.txt")->content.empty());
  EXPECT_EQ(file_named(r.metadata, "labels.txt")->size, 100u);
}

TEST(TfliteMetadata, ADamagedArchiveIsAWarning) {
  auto model =
      fuzz::model_with_metadata(fuzz::metadata_buffer(classifier()), {{"labels.txt", kLabels}});
  // The central directory's signature, the last entry before the end record.
  const std::string file(reinterpret_cast<const char*>(model.data()), model.size());
  const size_t dir = file.rfind(std::string("PK\x01\x02", 4));
  ASSERT_NE(dir, std::string::npos);
  model[dir + 1] = std::byte{'X'};
  Converted c = convert_ok(model);
  EXPECT_THAT(metadata_warnings(c.diag),
              ElementsAre(HasSubstr("the zip archive of associated files cannot be read (libzip: "),
                          HasSubstr("'README.md', 'labels.txt' are named by the metadata but not "
                                    "packed")));
  // The metadata itself is still there.
  EXPECT_EQ(Json::parse(c.props["tflite.metadata"])["name"], "Tiny classifier");
  // A corrupted file inside a sound archive: its CRC fails when read.
  auto crc =
      fuzz::model_with_metadata(fuzz::metadata_buffer(classifier()), {{"labels.txt", kLabels}});
  const std::string crc_file(reinterpret_cast<const char*>(crc.data()), crc.size());
  crc[crc_file.rfind("background")] = std::byte{'B'};
  ReadBack r = read_back(crc);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("'labels.txt' cannot be read (libzip: ")));
  EXPECT_FALSE(file_named(r.metadata, "labels.txt")->embedded);
}

TEST(TfliteMetadata, ArchiveNamesAreSanitizedAndUnique) {
  MetadataSpec spec = classifier();
  spec.outputs[0].files = {{"labels en.txt", 2, ""}};
  spec.files = {};
  const auto model = fuzz::model_with_metadata(fuzz::metadata_buffer(spec),
                                               {{"labels en.txt", kLabels},
                                                {"labels_en.txt", "other\n"},
                                                {"../../etc/passwd", "root\n"},
                                                {"b\xc3\xa9.dat", std::string("\x00\x01\x02", 3)}});
  Converted c = convert_ok(model);
  EXPECT_THAT(metadata_warnings(c.diag), ::testing::IsEmpty());
  EXPECT_EQ(c.props["tflite.associated_file.labels_en.txt"], kLabels);
  EXPECT_EQ(c.props["tflite.associated_file.labels_en.txt_2"], "other\n");
  EXPECT_EQ(c.props["tflite.associated_file..._.._etc_passwd"], "root\n");
  // Binary files are listed, not embedded, without a warning.
  EXPECT_EQ(c.props.count("tflite.associated_file.b__.dat"), 0u);
  const Json j = Json::parse(c.props["tflite.metadata"]);
  EXPECT_EQ(j["outputs"][0]["associated_files"], Json::parse(R"(["labels_en.txt"])"));
  EXPECT_EQ(j["associated_files"][3]["name"], "b__.dat");
  EXPECT_EQ(j["associated_files"][3]["note"], "is binary");
}

TEST(TfliteMetadata, AtMostMaxEntriesAreRead) {
  std::vector<ZipEntry> entries;
  for (int i = 0; i < 70; ++i) entries.push_back({"f" + std::to_string(i) + ".txt", "x\n"});
  ReadBack r = read_back(fuzz::model_with_metadata(fuzz::metadata_buffer({}), entries));
  EXPECT_EQ(r.metadata.associated_files.size(), 64u);
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("the archive has 70 entries; only the first 64 "
                                                "are read")));
  // Smaller limits, for the other bounds.
  tflite_reader::AssociatedFileLimits small;
  small.max_entries = 4;
  small.max_file_bytes = 2;
  small.max_total_bytes = 4;
  ReadBack s = read_back(fuzz::model_with_metadata(fuzz::metadata_buffer({}), entries), small);
  ASSERT_EQ(s.metadata.associated_files.size(), 4u);
  EXPECT_TRUE(s.metadata.associated_files[1].embedded);
  EXPECT_FALSE(s.metadata.associated_files[2].embedded);  // 2 + 2 + 2 > 4
}

// ---- the corpus: what real models carry -----------------------------------------------------

// A corpus model's path; absent: skipped, except under CI=true (a failure).
std::string corpus_model(const std::string& name) {
  const std::string path = testing::corpus_dir() + "/" + name;
  if (std::filesystem::exists(path)) return path;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") ADD_FAILURE() << path << " is missing";
  return "";
}

struct CorpusFile {
  std::string name, type;
  uint64_t size;
  size_t lines;
  std::string first_line;
};

struct CorpusCase {
  std::string model;
  std::string name;
  std::vector<std::string> inputs, outputs;  // tensor names
  std::vector<float> mean, std, min;         // the first input's
  std::vector<CorpusFile> files;
  std::string labelled_output;  // the output naming the first file
};

TEST(TfliteMetadata, CorpusModelsCarryTheirMetadataAndLabels) {
  const std::vector<CorpusCase> cases = {
      {"tflite-support/yamnet_audio_classifier_with_metadata.tflite",
       "yamnet/classification",
       {"waveform_binary"},
       {"tower0/network/layer32/final_output"},
       {},
       {},
       {},
       {{"yamnet_label_list.txt", "TENSOR_AXIS_LABELS", 6230, 521, "Speech"}},
       "tower0/network/layer32/final_output"},
      {"tflite-support/2022IDDetectorWithMetadata.tflite",
       "IDDetector",
       {"args_0"},
       {"Identity", "Identity_1"},
       {0},
       {255},
       {0},
       {},
       ""},
      {"tflite-support/coco_ssd_mobilenet_v1_1.0_quant_2018_06_29.tflite",
       "Coco SSD MobileNetV1",
       {"normalized_input_image_tensor"},
       {"TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
        "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"},
       {127.5f},
       {127.5f},
       {0},
       {{"labelmap.txt", "TENSOR_VALUE_LABELS", 661, 90, "person"}},
       "TFLite_Detection_PostProcess:1"},
      {"coral-test_data/mobilenet_v2_1.0_224_quant.tflite",
       "ImageClassifier",
       {"input"},
       {"MobilenetV2/Predictions/Softmax"},
       {127.5f},
       {127.5f},
       {0},
       {{"imagenet_labels.txt", "TENSOR_AXIS_LABELS", 21686, 1001, "background"}},
       "MobilenetV2/Predictions/Softmax"},
      {"coral-test_data/tf2_mobilenet_v2_1.0_224_ptq.tflite",
       "ImageClassifier",
       {"input"},
       {"Identity"},
       {127.5f},
       {127.5f},
       {0},
       {{"imagenet_labels.txt", "TENSOR_AXIS_LABELS", 21686, 1001, "background"}},
       "Identity"},
  };
  for (const CorpusCase& c : cases) {
    SCOPED_TRACE(c.model);
    const std::string path = corpus_model(c.model);
    if (path.empty()) continue;
    const auto bytes = testing::read_file(path);
    auto info = inspect(view(bytes));
    ASSERT_TRUE(info.ok()) << info.error().message;
    const TfliteMetadata& m = info->metadata;
    ASSERT_TRUE(m.present);
    for (const auto& p : info->problems) EXPECT_THAT(p, Not(HasSubstr("TFLite metadata")));
    EXPECT_EQ(m.name, c.name);
    std::vector<std::string> inputs, outputs;
    for (const auto& t : m.inputs) inputs.push_back(t.tensor);
    for (const auto& t : m.outputs) outputs.push_back(t.tensor);
    EXPECT_EQ(inputs, c.inputs);
    EXPECT_EQ(outputs, c.outputs);
    EXPECT_EQ(m.inputs.at(0).mean, c.mean);
    EXPECT_EQ(m.inputs.at(0).std, c.std);
    EXPECT_EQ(m.inputs.at(0).min, c.min);
    ASSERT_EQ(m.associated_files.size(), c.files.size());
    for (size_t i = 0; i < c.files.size(); ++i) {
      const AssociatedFileInfo& f = m.associated_files[i];
      EXPECT_EQ(f.name, c.files[i].name);
      EXPECT_EQ(f.type, c.files[i].type);
      EXPECT_TRUE(f.packed);
      EXPECT_EQ(f.size, c.files[i].size);
      ASSERT_TRUE(f.embedded) << f.note;
      EXPECT_EQ(static_cast<size_t>(std::count(f.content.begin(), f.content.end(), '\n')) +
                    (f.content.back() != '\n'),
                c.files[i].lines);
      EXPECT_EQ(f.content.substr(0, f.content.find('\n')), c.files[i].first_line);
    }
    for (const auto& t : m.outputs)
      if (!c.files.empty() && t.tensor == c.labelled_output) {
        EXPECT_THAT(t.associated_files, ElementsAre(c.files[0].name));
      }
    // The models that convert carry the same in their ONNX metadata_props.
    Diagnostics d;
    auto onnx = convert(view(bytes), {}, d);
    if (!onnx) continue;  // unsupported ops (SSD post-processing, control flow)
    Props props = props_of(*onnx);
    EXPECT_EQ(Json::parse(props["tflite.metadata"]), Json::parse(m.to_json()));
    for (const auto& f : m.associated_files)
      EXPECT_EQ(props[associated_file_key(f)], f.content) << f.name;
  }
}

}  // namespace
}  // namespace lite2onnx
