// Where an ONNX file came from, in its metadata_props: the source model's
// SHA-256, the canonical conversion options, and what the TFLite file says of
// itself (description, schema version, min_runtime_version). Deterministic: no
// time, no host; the converter's name and version are the ModelProto's
// producer_name and producer_version.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/options.h"
#include "core/tflite/reader.h"

namespace lite2onnx {

// SHA-256 over pieces (OpenSSL's libcrypto), for bytes that are not contiguous.
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

struct SourceModel {
  std::string_view sha256;  // hex
  uint32_t schema_version = 0;
  std::string_view description;
  std::span<const tflite_reader::MetadataEntry> metadata;
};

// The (key, value) pairs, in a fixed order: lite2onnx.source_sha256,
// lite2onnx.options, tflite.schema_version, then tflite.description and
// tflite.min_runtime_version when the file has them.
std::vector<std::pair<std::string, std::string>> provenance_metadata(const SourceModel& source,
                                                                     const ConvertOptions& options);

}  // namespace lite2onnx
