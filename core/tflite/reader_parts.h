// The verified reader's parts, shared by its files: reader.cc (the model,
// its subgraphs and operators, control flow), operators.cc (operator codes,
// the subgraphs control flow runs), tensors.cc (buffers and
// tensors: shapes, quantization, constant data) and signatures.cc
// (SignatureDefs). Nothing here is read before the FlatBuffer is verified.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tflite/reader.h"

namespace tflite {
struct Model;
struct Operator;
struct OperatorCode;
struct Tensor;
}  // namespace tflite

namespace lite2onnx::tflite_reader {

inline Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidModel, std::move(message));
}
// "tensor 3 'name'" for messages.
std::string tensor_label(const tflite::Tensor* t, size_t index);
// Text of the model in a message: at most 64 bytes, control bytes as '?'.
std::string shown(std::string_view text);
// kResourceLimit: the file describes far more than its size (shared tables).
Error expansion(const std::string& what);

// ---- tensors.cc ----

// The buffers' bytes: inline data, or (for models over 2 GiB) an offset and
// size relative to the start of the file, checked against the file size.
Result<std::vector<std::span<const std::byte>>> read_buffers(const tflite::Model& model,
                                                             std::span<const std::byte> bytes);
// Tensor `index`: type, shape (its signature's dynamic dimensions), its
// quantization and its constant data (sparse data made dense, charged to
// `created`), every field checked; what it copies charged to `budget`.
Result<ir::Tensor> read_tensor(const tflite::Tensor* t, size_t index,
                               const std::vector<std::span<const std::byte>>& buffers,
                               const Limits& limits, uint64_t& budget, ir::CreatedBytes& created,
                               Checkpoint& checkpoint);

// Tensor `index` of `g` (read already, with every other tensor of its
// subgraph): its BlockwiseQuantization, if any, as QuantParams with a
// block_size, the per-block scales and zero points read from the constants
// the details name, every index, count and value checked.
Status read_blockwise(const tflite::Tensor* t, size_t index, ir::Graph& g, uint64_t& budget);

// ---- operators.cc ----

// "op 3 (name)" for messages.
std::string op_label(size_t index, const std::string& name);
// The builtin code of operator code `index` (the deprecated byte of older files, or
// the wide field); a null or negative one is an invalid model.
Result<int> builtin_code(const tflite::OperatorCode* code, size_t index);
// WHILE, IF, CALL, CALL_ONCE and STABLEHLO_COMPOSITE: ops that run subgraphs.
bool is_control_flow(int code);
// The subgraphs a control-flow op names, with their roles (WHILE: cond, body;
// IF: then, else; CALL: the callee; CALL_ONCE: init; STABLEHLO_COMPOSITE: its
// decomposition); an op without its options table is an invalid model.
Result<std::vector<std::pair<const char*, int64_t>>> called_subgraphs(const tflite::Operator& op,
                                                                      int code,
                                                                      const std::string& where);

// ---- signatures.cc ----

// Every SignatureDef, checked as TFLite's interpreter checks them all (a null
// one or one without a key fails it) and beyond: its subgraph and every
// tensor it names exist.
Result<std::vector<Signature>> read_signatures(const tflite::Model& model, const Limits& limits,
                                               uint64_t& budget, Checkpoint& checkpoint);
// The signature `key` selects (index into `signatures`; -1: none), or
// kInvalidOption listing the keys there are.
Result<int> select_signature(const std::vector<Signature>& signatures, std::string_view key);

}  // namespace lite2onnx::tflite_reader
