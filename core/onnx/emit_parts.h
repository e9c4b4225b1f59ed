// The emitter's parts (emit.h), shared by its files: emit.cc builds the
// ModelProto (names, nodes, value_info, subgraphs); initializers.cc writes
// constants' bytes in ONNX order and type; serialize.cc validates the model and
// writes its bytes, large constants spliced straight into the output.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/onnx/emit.h"

namespace lite2onnx::onnx_emit {

// Main-graph constants at least this big are spliced into the output bytes
// directly; the checker and shape inference validate the model with a
// placeholder of one element in their raw_data (int64 ones with their bytes). What ONNX 1.12
// (Debian's libonnx) does with such a placeholder: its checker counts a
// non-empty raw_data as the one value field and never compares its size with
// the dims (an empty raw_data would fail "one and only one value field"; an
// external-data stub would make it stat a file in the model's folder), so it
// checks all it checks of the whole tensor. Strict shape inference takes types
// and shapes from data_type and dims, and reads the values of the inputs an
// operator's inference needs (ParseData): a Reshape's, Expand's, Tile's,
// Split's sizes, which are int64 and validated whole (a Split into 600 parts
// has 4800 bytes of them); the others it reads (a Resize's scales, a Slice's int32
// starts) have one element per axis, far below this size. ParseData sizes its
// vector by whole elements and copies every byte, so a placeholder shorter
// than one element would write past it.
inline constexpr size_t kSpliceBytes = 4096;

// ---- initializers.cc ----

// Writes a constant's bytes as ONNX stores them (emit.h write_constant), any
// range of its elements at a time: a large permuted constant is streamed
// through a bounded buffer.
class ConstantWriter {
 public:
  explicit ConstantWriter(const ir::Tensor& t);
  size_t count() const { return count_; }          // elements
  size_t element_size() const { return dst_es_; }  // bytes of one, as ONNX stores it
  // The TFLite bytes themselves when ONNX stores them as they are (no
  // permutation, no widening).
  std::optional<std::span<const std::byte>> as_stored() const;
  // Elements [first, first + n) of the ONNX order into `dst` (n * element_size() bytes).
  void write(size_t first, size_t n, std::byte* dst) const;

 private:
  enum class Kind { kInOrder, kBlock, kGeneral };
  void write_block(size_t first, size_t n, std::byte* dst) const;
  void transpose_lines(size_t b, size_t c0, size_t c1, std::byte* dst) const;
  void write_general(size_t first, size_t n, std::byte* dst) const;

  const std::byte* src_ = nullptr;
  size_t src_es_ = 0, dst_es_ = 0, count_ = 0;
  bool widen_ = false;  // float16 stored, float32 written
  Kind kind_ = Kind::kInOrder;
  // kBlock: [batch, rows, cols] -> [batch, cols, rows] (the batch is what is left).
  int64_t rows_ = 1, cols_ = 1;
  // kGeneral: per output axis, its size and its stride in the source.
  std::vector<int64_t> out_dim_, out_stride_;
};

// The initial value of a state input `x` (its tensor, shape and ONNX type) as
// the bytes of its initializer: TFLite's bytes, or (an integer state at a
// float interface, as --quantization dequantize makes it) their dequantized
// values.
Result<ir::ConstData> state_initial_data(const ir::Tensor& x, const ir::StatePair& p);

// ---- serialize.cc ----

// The ONNX checker and strict shape inference on our output: kInternal when
// they refuse it, kInvalidModel when a TFLite op's declared output shape
// contradicts its inputs (named after the op of `g`), kResourceLimit when
// ONNX runs out of memory on the declared shapes.
Status validate(onnx::ModelProto& model, const ir::Graph& g);

// A main-graph constant whose bytes serialize_model() writes into the output
// itself (its initializer holds a one-byte placeholder until then).
struct SplicedConstant {
  std::string name;  // its ONNX name
  const ir::Tensor* tensor;
};
// Writes `model` into the room `output` gives for its exact size, the spliced
// constants' bytes written in place; returns the size. `model` lives on an
// arena (its graph is taken out without a copy). kResourceLimit past 2 GiB or
// options.max_output_bytes. EmitOptions::late's value is asked for first.
Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, const OutputBuffer& output);
// The same bytes streamed into `output`; a positional stream gets
// EmitOptions::late's value last, written over its placeholder. kInternal
// when the stream refuses a write (the stream knows why).
Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, OutputStream& output);

}  // namespace lite2onnx::onnx_emit
