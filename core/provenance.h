// Where an ONNX file came from, in its metadata_props: the source model's
// SHA-256, the canonical conversion options, and what the TFLite file says of
// itself (description, schema version, min_runtime_version, and TFLite
// Support's metadata with its associated files). Deterministic: no
// time, no host; the converter's name and version are the ModelProto's
// producer_name and producer_version.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model_metadata.h"
#include "core/options.h"
#include "core/tflite/reader.h"

namespace lite2onnx {

// SHA-256 over pieces (OpenSSL's, linked from libcrypto.a), for bytes that are not contiguous.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const std::byte> bytes);
  // Lower-case hex of the digest; empty if OpenSSL failed. Ends the hash.
  std::string hex();

 private:
  struct State;
  State* state_;
};

// Lower-case hex SHA-256 of `bytes`; empty if `stop` (polled every MiB) said
// so first.
std::string sha256_hex(std::span<const std::byte> bytes, const std::function<bool()>& stop = {});

// The metadata key of the source model's SHA-256 (64 lower-case hex digits).
inline constexpr char kSourceSha256Key[] = "lite2onnx.source_sha256";

struct SourceModel {
  std::string_view sha256;  // hex
  uint32_t schema_version = 0;
  std::string_view description;
  std::span<const tflite_reader::MetadataEntry> metadata;
  // TFLite Support's metadata, as read (nullptr or not present: none).
  const TfliteMetadata* tflite_metadata = nullptr;
};

// The (key, value) pairs, in a fixed order: lite2onnx.source_sha256,
// lite2onnx.options, tflite.schema_version, then tflite.description and
// tflite.min_runtime_version when the file has them; then, when the model
// has TFLite Metadata, tflite.metadata (one JSON object: TfliteMetadata::to_json
// without file contents) and tflite.associated_file.<name> with the text of
// each embedded file, in the order of TfliteMetadata::associated_files.
std::vector<std::pair<std::string, std::string>> provenance_metadata(const SourceModel& source,
                                                                     const ConvertOptions& options);

}  // namespace lite2onnx
