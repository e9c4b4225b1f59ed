// TFLite Metadata reader: the model's `TFLITE_METADATA` buffer (a FlatBuffer
// of core/tflite/metadata_schema.fbs, identifier "M001") and the zip archive
// of associated files that TFLite Support's writers append to the .tflite
// file (the model's bytes first, the archive's central directory at the end).
//
// Both are untrusted and optional: nothing here fails a conversion. The
// FlatBuffer is read only after flatbuffers::Verifier accepts it (bounded
// depth and tables, as the model's) and within an expansion budget; the
// archive is read with libzip from memory, within AssociatedFileLimits. What
// cannot be read becomes a warning naming it, and is left out.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/model_metadata.h"
#include "core/tflite/reader.h"

namespace lite2onnx::tflite_reader {

// What a hostile archive may cost: entries read, and bytes inflated per file
// and in all (the size the archive declares and the bytes actually read are
// both checked, so a small entry that inflates to gigabytes stops at the
// bound). A file beyond them is listed, not embedded, with a warning.
struct AssociatedFileLimits {
  uint32_t max_entries = 64;  // archive entries read; also the files the metadata may name
  uint64_t max_file_bytes = uint64_t{1} << 20;   // one file
  uint64_t max_total_bytes = uint64_t{4} << 20;  // all files read
};

// The metadata of `entries` (ReadModel::metadata), the tensors of its
// SubGraphMetadata number `subgraph` (the one of the subgraph converted; the
// metadata lists them in subgraph order) mapped to the inputs and outputs of
// `graph` by position, and the files of the archive appended to `model`.
// `present` is false when the model has no TFLITE_METADATA or it could not be
// read (then `warnings` says why).
TfliteMetadata read_metadata(std::span<const std::byte> model,
                             std::span<const MetadataEntry> entries, const ir::Graph& graph,
                             std::vector<std::string>& warnings,
                             const AssociatedFileLimits& limits = {}, int subgraph = 0);

// Loads the archive reader (libzip, libzip.h) now instead of at the first
// model with an archive; empty, or why it cannot be loaded.
std::string load_archive_reader();

}  // namespace lite2onnx::tflite_reader
