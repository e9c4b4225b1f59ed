// The conversion pipeline: named stages run in order on one graph, the same
// for convert(), inspect() and the tests (run_until a stage, then look at the
// graph). Between stages the graph is compacted (dense node ids, readers in
// node order), every stage polls the options' cancellation hook through one
// Checkpoint, and its time goes into the diagnostics' phase timings.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/checkpoint.h"
#include "core/diagnostics.h"
#include "core/ir/graph.h"
#include "core/model_metadata.h"
#include "core/options.h"
#include "core/output_buffer.h"
#include "core/status.h"
#include "core/tflite/reader.h"

namespace lite2onnx {
namespace onnx_emit {
struct EmitOptions;
}

enum class Stage {
  kRead,              // bytes -> TFLite-dialect graph (indices, shapes and sizes checked)
  kValidate,          // resource variables -> state; arity, absent inputs, reads
  kSort,              // topological order; a cycle is an invalid model
  kInferShapes,       // intermediate shapes as TFLite computes them (the file's may differ)
  kFold,              // float16 DEQUANTIZE, shape arithmetic
  kFuse,              // dilated convolutions, spectral magnitude
  kPlanQuantization,  // quantization parameters checked, biases' scales, Q/DQ planned
  kPreflight,         // every unsupported operator, listed at once
  kLayout,            // layout propagation
  kLower,             // op converters: ONNX-dialect nodes; Identity and Reshape cleanup
  kCleanup,           // Transpose cleanup
  kQuantize,          // Q/DQ nodes (or the dequantized float model), float16 Casts
};
const char* to_string(Stage s);

class Pipeline {
 public:
  // `model` must outlive the pipeline (constants are views into it).
  Pipeline(std::span<const std::byte> model, const ConvertOptions& options,
           Diagnostics& diagnostics);

  // Runs the stages after the last one run, up to and including `last`; an
  // error stops the pipeline for good.
  Status run_until(Stage last);
  // Serializes the graph as ONNX (after kQuantize) into `output`; returns its size.
  Result<size_t> emit(const OutputBuffer& output);
  // The same, streamed (output_buffer.h OutputStream); to a positional
  // stream the source's SHA-256 is written last (ConvertOptions::source_sha256).
  Result<size_t> emit(OutputStream& output);

  ir::Graph& graph() { return graph_; }
  uint32_t model_version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::vector<ir::SubgraphSummary>& subgraphs() const { return subgraphs_; }
  // The other subgraphs the converted one runs (control flow), and how many of
  // the graph's tensors are the converted subgraph's own (its first ones).
  const std::vector<int>& reached() const { return reached_; }
  size_t converted_tensors() const { return converted_tensors_; }
  // The model's SignatureDefs, and which of them was read (-1: none; then
  // subgraph 0 was).
  const std::vector<tflite_reader::Signature>& signatures() const { return signatures_; }
  int signature() const { return signature_; }
  int subgraph() const { return subgraph_; }
  // The TFLite Metadata read at kRead (not read with ConvertOptions::no_metadata).
  const TfliteMetadata& tflite_metadata() const { return tflite_metadata_; }

 private:
  Status run(Stage s);
  // emit(): the options of the ONNX model, written by `write`; `hash_last`:
  // the source's SHA-256 is a late metadata value (onnx_emit::EmitOptions::late).
  using EmitWriter = std::function<Result<size_t>(const onnx_emit::EmitOptions&)>;
  Result<size_t> emit_with(const EmitWriter& write, bool hash_last);

  std::span<const std::byte> model_;
  const ConvertOptions& options_;
  Diagnostics& diag_;
  Limits limits_;
  Checkpoint checkpoint_;
  ir::Graph graph_;
  uint32_t version_ = 0;
  std::string description_;
  std::vector<tflite_reader::MetadataEntry> metadata_;
  TfliteMetadata tflite_metadata_;
  std::vector<ir::SubgraphSummary> subgraphs_;
  std::vector<int> reached_;
  size_t converted_tensors_ = 0;
  std::vector<tflite_reader::Signature> signatures_;
  int signature_ = -1;
  int subgraph_ = 0;
  // The TFLite names of the graph inputs and outputs named after signature
  // aliases (--io-names signature): layout options may use either name.
  std::vector<std::pair<std::string, ir::TensorId>> tflite_names_;
  std::optional<Stage> done_;  // the last stage run
  std::optional<Error> failed_;
};

}  // namespace lite2onnx
