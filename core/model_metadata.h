// The TFLite Metadata of a model as the converter reports it: what TFLite
// Support's metadata writers store in the `TFLITE_METADATA` buffer (name,
// description, version, author, license, the normalization and value ranges of
// the tensors, the associated files) and the files of the zip archive they
// append to the .tflite file. The reader is core/tflite/metadata.h; `inspect`
// shows it (ModelInfo::metadata) and the ONNX model carries it in its
// metadata_props (core/provenance.h, docs/architecture.md "Provenance").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lite2onnx {

// One associated file: named by the metadata, packed in the archive, or both.
struct AssociatedFileInfo {
  // The name with every byte outside [A-Za-z0-9._-] replaced by '_' (at most
  // 128 characters): it becomes part of a metadata_props key, and a hostile
  // archive's names could hold path separators or control characters.
  std::string name;
  std::string type;  // the metadata's AssociatedFileType ("TENSOR_AXIS_LABELS"); "" if unnamed
  std::string description;
  std::string locale;
  bool packed = false;  // found in the zip archive
  uint64_t size = 0;    // uncompressed bytes, as the archive declares them
  bool embedded = false;
  std::string content;  // the text, when embedded
  std::string note;     // why a packed file is not embedded
};

// One input or output of the main subgraph (the i-th TensorMetadata describes
// the i-th graph input or output).
struct TensorMetadataInfo {
  std::string tensor;  // the graph input's or output's name (ONNX keeps TFLite's)
  std::string name;    // the metadata's name for it
  std::string description;
  std::string content;                        // "feature", "image", "bounding_box", "audio", or ""
  std::vector<float> mean, std;               // NormalizationOptions: fed as (x - mean) / std
  std::vector<float> min, max;                // Stats: the range of the values
  std::vector<std::string> associated_files;  // names, as in AssociatedFileInfo
};

struct TfliteMetadata {
  bool present = false;  // the model has TFLITE_METADATA that could be read
  std::string name, description, version, author, license;
  std::string min_parser_version;
  std::vector<TensorMetadataInfo> inputs, outputs;
  // Named by the metadata (model, main subgraph, tensors, process units) in
  // that order, then those only the archive holds, in archive order.
  std::vector<AssociatedFileInfo> associated_files;

  // One JSON object with every field that is set (empty strings and lists
  // left out), in a fixed order; file contents only when asked for. Floats
  // are written as their shortest decimal form.
  std::string to_json(bool with_content = false, int indent = -1) const;
};

// The metadata_props key of an embedded file's text.
std::string associated_file_key(const AssociatedFileInfo& file);

}  // namespace lite2onnx
