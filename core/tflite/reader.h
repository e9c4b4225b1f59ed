// Verified TFLite reader: FlatBuffer bytes -> ir::Graph of TFLite-dialect nodes.
// Nothing is read before flatbuffers::Verifier accepts the buffer; every index,
// shape, size and element-count product is checked. Constant data stays a view
// into `bytes`, which must outlive the graph and start 8-byte aligned (as a file
// read into memory or mapped does; anything else is refused).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/checkpoint.h"
#include "core/ir/graph.h"
#include "core/options.h"
#include "core/status.h"

namespace tflite {
struct Operator;
}

namespace lite2onnx::tflite_reader {

// Reads a node's builtin options into its attributes. The reader knows no op:
// the layer above passes the op table's (ops::read_options); without one,
// nodes get no attributes.
// Custom ops are told by their custom code and op-code version; an error (bad
// custom options, a version not converted) fails the read, naming the op.
using OptionsReader = Status (*)(int builtin, std::string_view custom_code, int version,
                                 const tflite::Operator& op, ir::Attributes& attrs);

// A named buffer of the model's `metadata` (min_runtime_version,
// TFLITE_METADATA, CONVERSION_METADATA, ...): a view into the model's bytes.
struct MetadataEntry {
  std::string name;
  std::span<const std::byte> bytes;
};

struct ReadModel {
  ir::Graph graph;  // the primary subgraph (index 0)
  uint32_t version = 0;
  std::string description;
  std::vector<MetadataEntry> metadata;         // entries naming a buffer that exists
  std::vector<ir::SubgraphSummary> subgraphs;  // all of them, primary included
};

// Polls `checkpoint` while it reads (large models take a while).
Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                       OptionsReader options, Checkpoint& checkpoint);
inline Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                              OptionsReader options = nullptr) {
  Checkpoint never;
  return read(bytes, limits, options, never);
}

}  // namespace lite2onnx::tflite_reader
