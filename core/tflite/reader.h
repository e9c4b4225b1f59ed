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

// One input or output of a SignatureDef, with what its subgraph says of the
// tensor (the signature's subgraph may be one that is not converted).
struct SignatureTensor {
  std::string alias;  // the signature's name for it
  int tensor = 0;     // index in the signature's subgraph
  std::string name;   // the tensor's name
  ir::DataType dtype = ir::DataType::kFloat32;
  ir::Shape shape;  // -1 where shape_signature says so
};

// A SignatureDef (an entry point: a SavedModel signature). Its inputs and
// outputs are as TFLite's interpreter keys them: sorted by alias, an alias
// listed twice naming the tensor of its last entry, entries without a name
// left out.
struct Signature {
  std::string key;
  int subgraph = 0;
  std::vector<SignatureTensor> inputs, outputs;
};

struct ReadModel {
  // The subgraph converted (`subgraph`), with its control flow expanded: the
  // subgraphs its WHILE, IF, CALL and CALL_ONCE ops run are read too (CALLs
  // copied in place, the others owned by their nodes: see reader.cc).
  ir::Graph graph;
  int subgraph = 0;
  size_t tensors = 0;        // the converted subgraph's own tensors: graph's first ones
  std::vector<int> reached;  // the other subgraphs its control flow runs
  uint32_t version = 0;
  std::string description;
  std::vector<MetadataEntry> metadata;         // entries naming a buffer that exists
  std::vector<ir::SubgraphSummary> subgraphs;  // all of them, the converted one included
  std::vector<Signature> signatures;           // every one, in the model's order
  int signature = -1;  // the one whose subgraph is `graph` (index in `signatures`), -1: none
};

// Reads the subgraph of the SignatureDef whose key is `signature`; an empty
// key selects the model's first signature, or subgraph 0 when it has none. A
// key the model lacks is kInvalidOption listing the keys it has; a signature
// that names a subgraph or a tensor that does not exist (any signature, as
// TFLite's interpreter checks them all) is kInvalidModel naming it.
// Polls `checkpoint` while it reads (large models take a while).
Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                       OptionsReader options, Checkpoint& checkpoint,
                       std::string_view signature = {});
inline Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                              OptionsReader options = nullptr, std::string_view signature = {}) {
  Checkpoint never;
  return read(bytes, limits, options, never, signature);
}

}  // namespace lite2onnx::tflite_reader
