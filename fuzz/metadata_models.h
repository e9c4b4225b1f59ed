// Small TFLite models that carry TFLite Metadata and an appended zip archive of
// associated files, as TFLite Support's writers make them: the metadata
// FlatBuffer is built with the builder API generated from
// core/tflite/metadata_schema.fbs, the archive is written with libzip and then
// moved behind the model (its offsets count from the start of the file, as
// Python's zipfile writes them when it appends). The unit tests
// (tests/unit/metadata_test.cc) check the reader on them, and the metadata
// fuzz target is seeded from them (fuzz_metadata_seeds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lite2onnx::fuzz {

struct MetadataFile {
  std::string name;
  int type = 2;  // AssociatedFileType: 2 TENSOR_AXIS_LABELS, 1 DESCRIPTIONS, ...
  std::string description;
};

struct MetadataTensor {
  std::string name;
  std::string content;           // "image", "feature", "bounding_box", "audio" or ""
  std::vector<float> mean, std;  // a NormalizationOptions process unit when set
  std::vector<float> min, max;   // Stats when set
  std::vector<MetadataFile> files;
  std::string vocabulary;  // a BertTokenizerOptions process unit naming this file
};

struct MetadataSpec {
  std::string name, description, version, author, license;
  std::vector<MetadataTensor> inputs, outputs;
  std::vector<MetadataFile> files;  // the model's own
};

// An image classifier's metadata: name, description, version, author and
// license; one input "image" normalized per channel (mean 127.5, std 127.5,
// 127.5, 128) in [0, 255]; one output "probability" in [0, 1] labelled by
// labels.txt (TENSOR_AXIS_LABELS, "the classes"); the model's README.md
// (DESCRIPTIONS).
MetadataSpec classifier_spec();

// The TFLITE_METADATA buffer: a ModelMetadata FlatBuffer, identifier "M001".
std::vector<uint8_t> metadata_buffer(const MetadataSpec& spec);

struct ZipEntry {
  std::string name;
  std::string content;
  bool deflate = false;
  // When set, the size the archive declares for the entry instead of its
  // real one (a zip bomb declares a small size and inflates far beyond it).
  int64_t declared_size = -1;
};

// A zip archive of `entries` written with libzip, whose offsets count from
// `start` (where it will sit in the file); empty when libzip fails.
std::vector<uint8_t> zip_archive(const std::vector<ZipEntry>& entries, uint32_t start = 0);

// A model of `inputs` float inputs [1, 4, 4, 3] (named input_0, ...), each
// through a RELU to an output (output_0, ...), with `metadata` as its
// TFLITE_METADATA buffer (none when empty) and `archive` appended.
std::vector<std::byte> model_with_metadata(const std::vector<uint8_t>& metadata,
                                           const std::vector<ZipEntry>& archive = {},
                                           int inputs = 1);

// The seeds of the metadata fuzz target: a few such models (labels,
// normalization, a vocabulary, deflated and bomb entries), by name.
std::vector<std::pair<std::string, std::vector<std::byte>>> metadata_seed_models();

}  // namespace lite2onnx::fuzz
