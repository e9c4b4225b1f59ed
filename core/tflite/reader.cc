#include "core/tflite/reader.h"
#include "core/ir/builtins.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "core/tflite/sparse.h"
#include "schema_generated.h"

namespace lite2onnx::tflite_reader {
namespace {

using ir::DataType;
using ir::TensorId;

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidModel, std::move(message));
}

std::string tensor_label(const tflite::Tensor* t, size_t index) {
  std::string name = t && t->name() ? t->name()->str() : "";
  return "tensor " + std::to_string(index) + (name.empty() ? "" : " '" + name + "'");
}

Error op_error(size_t op_index, std::string message) {
  Error e = invalid(std::move(message));
  e.op_index = static_cast<int>(op_index);
  return e;
}

Error op_limit(size_t op_index, std::string message) {
  Error e = make_error(ErrorCode::kResourceLimit, std::move(message));
  e.op_index = static_cast<int>(op_index);
  return e;
}

std::string op_label(size_t index, const std::string& name) {
  return "op " + std::to_string(index) + " (" + name + ")";
}

// Reads the buffers' bytes: inline data, or (for models over 2 GiB) an offset
// and size relative to the start of the file, checked against the file size.
Result<std::vector<std::span<const std::byte>>> read_buffers(const tflite::Model& model,
                                                             std::span<const std::byte> bytes) {
  std::vector<std::span<const std::byte>> out;
  const auto* buffers = model.buffers();
  if (!buffers) return out;
  out.reserve(buffers->size());
  for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
    const tflite::Buffer* b = buffers->Get(i);
    if (!b) {
      out.emplace_back();
      continue;
    }
    if (b->offset() > 1) {
      uint64_t off = b->offset(), size = b->size();
      if (off > bytes.size() || size > bytes.size() - off)
        return invalid("buffer " + std::to_string(i) + ": data at offset " + std::to_string(off) +
                       " size " + std::to_string(size) + " lies outside the " +
                       std::to_string(bytes.size()) + "-byte file");
      out.push_back(bytes.subspan(off, size));
    } else if (b->data()) {
      out.emplace_back(reinterpret_cast<const std::byte*>(b->data()->data()), b->data()->size());
    } else {
      out.emplace_back();
    }
  }
  return out;
}

Result<ir::Tensor> read_tensor(const tflite::Tensor* t, size_t index,
                               const std::vector<std::span<const std::byte>>& buffers,
                               const Limits& limits, uint64_t& budget, ir::CreatedBytes& created,
                               Checkpoint& checkpoint) {
  if (!t) return invalid(tensor_label(t, index) + " is null");
  uint64_t cost = (t->name() ? t->name()->size() : 0) + (t->shape() ? t->shape()->size() * 8 : 0);
  if (const auto* q = t->quantization()) {
    if (q->scale()) cost += q->scale()->size() * 4;
    if (q->zero_point()) cost += q->zero_point()->size() * 8;
  }
  if (cost > budget)
    return make_error(ErrorCode::kResourceLimit,
                      tensor_label(t, index) +
                          ": the model expands to far more than its size "
                          "(tables or strings shared between tensors)");
  budget -= cost;
  ir::Tensor out;
  out.name = t->name() ? t->name()->str() : "";
  int type = static_cast<int>(t->type());
  if (type < 0 || type > static_cast<int>(DataType::kBFloat16))
    return invalid(tensor_label(t, index) + ": unknown type code " + std::to_string(type));
  out.dtype = static_cast<DataType>(type);
  out.is_variable = t->is_variable();
  if (t->shape()) {
    if (t->shape()->size() > limits.max_rank)
      return make_error(ErrorCode::kResourceLimit,
                        tensor_label(t, index) + ": rank " + std::to_string(t->shape()->size()) +
                            " exceeds the limit of " + std::to_string(limits.max_rank) +
                            " (max_rank)");
    for (int32_t d : *t->shape()) {
      if (d < 0)
        return invalid(tensor_label(t, index) + ": negative dimension " + std::to_string(d) +
                       " in shape");
      out.shape.push_back(d);
    }
  }
  out.has_rank = t->shape() != nullptr || t->has_rank();
  if (const auto* sig = t->shape_signature(); sig && sig->size() > 0) {
    if (sig->size() != out.shape.size())
      return invalid(tensor_label(t, index) + ": shape_signature has rank " +
                     std::to_string(sig->size()) + " but shape has rank " +
                     std::to_string(out.shape.size()));
    for (flatbuffers::uoffset_t i = 0; i < sig->size(); ++i) {
      int32_t d = sig->Get(i);
      if (d < -1)
        return invalid(tensor_label(t, index) + ": invalid shape_signature dimension " +
                       std::to_string(d));
      if (d == -1) out.shape[i] = -1;
    }
  }
  // The element count of the static shape must fit (dynamic dims count as 1).
  ir::Shape static_shape = out.shape;
  for (auto& d : static_shape)
    if (d < 0) d = 1;
  auto count = ir::element_count(static_shape);
  if (!count) return invalid(tensor_label(t, index) + ": element count overflows");
  size_t esize = ir::element_size(out.dtype);
  if (esize && static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / esize)
    return invalid(tensor_label(t, index) + ": byte size overflows");

  uint32_t buffer = t->buffer();
  if (buffer >= buffers.size() && !(buffer == 0 && buffers.empty()))
    return invalid(tensor_label(t, index) + ": buffer index " + std::to_string(buffer) +
                   " out of range (model has " + std::to_string(buffers.size()) + " buffers)");
  if (buffer != 0 && !buffers[buffer].empty() && t->sparsity()) {
    // The buffer holds only the values the SparsityParameters place: made
    // dense here, as TFLite's DENSIFY (or a sparse-aware kernel) would.
    if (!esize)
      return make_error(ErrorCode::kUnsupported,
                        tensor_label(t, index) + ": sparse tensor of " + ir::to_string(out.dtype));
    const uint64_t dense_bytes = static_cast<uint64_t>(*count) * esize;
    if (!created.fits(dense_bytes))
      return make_error(ErrorCode::kResourceLimit,
                        tensor_label(t, index) + ": its dense form needs " +
                            std::to_string(dense_bytes) +
                            " bytes, beyond what the conversion may create (max_created_bytes)");
    auto dense = densify(*t->sparsity(), out.shape, esize, buffers[buffer], checkpoint);
    if (!dense) {
      Error e = dense.take_error();
      e.message = tensor_label(t, index) + ": " + e.message;
      return e;
    }
    created.charge(dense_bytes, tensor_label(t, index) + " (densified)");
    out.data = ir::ConstData::owned(std::move(*dense), out.dtype);
    out.was_sparse = true;
  } else if (buffer != 0 && !buffers[buffer].empty()) {
    std::span<const std::byte> data = buffers[buffer];
    // No shape at all: TFLite reads a one-element constant as a scalar.
    if (!t->shape() && esize && data.size() == esize) out.has_rank = true;
    if (!t->shape() && !out.has_rank)
      return invalid(tensor_label(t, index) + ": a constant without a shape holds " +
                     std::to_string(data.size()) + " bytes; only a scalar (one " +
                     ir::to_string(out.dtype) + ") may omit its shape");
    if (esize) {
      if (out.shape.size() != static_shape.size() || !ir::element_count(out.shape))
        return invalid(tensor_label(t, index) + ": constant with a dynamic shape");
      uint64_t expected = static_cast<uint64_t>(*count) * esize;
      if (data.size() != expected)
        return invalid(tensor_label(t, index) + ": buffer " + std::to_string(buffer) + " holds " +
                       std::to_string(data.size()) + " bytes but shape " +
                       ir::to_string(out.shape) + " of " + ir::to_string(out.dtype) + " needs " +
                       std::to_string(expected));
    }
    ir::ConstData c;
    c.bytes = data;
    c.stored_type = out.dtype;
    // The converter reads constants as typed spans. The verifier checks only
    // that a vector's length is 4-byte aligned, so the data of an 8-byte type
    // (or an external buffer's, at any offset) may be misaligned in a crafted
    // file: such a constant is copied to aligned memory.
    if (esize > 1 && reinterpret_cast<uintptr_t>(data.data()) % std::min<size_t>(esize, 8) != 0)
      c = ir::ConstData::owned({data.begin(), data.end()}, out.dtype);
    out.data = c;
  }

  if (const auto* q = t->quantization(); q && q->scale() && q->scale()->size() > 0) {
    ir::QuantParams qp;
    for (float s : *q->scale()) qp.scale.push_back(s);
    // Read byte-wise: the verifier checks that a vector's length is 4-byte
    // aligned, not that its 8-byte elements are (a crafted file misaligns them).
    if (const auto* zp = q->zero_point())
      for (flatbuffers::uoffset_t i = 0; i < zp->size(); ++i) {
        int64_t z;
        std::memcpy(&z, zp->Data() + i * sizeof z, sizeof z);
        qp.zero_point.push_back(flatbuffers::EndianScalar(z));
      }
    qp.axis = q->quantized_dimension();
    if (!qp.zero_point.empty() && qp.zero_point.size() != qp.scale.size())
      return invalid(tensor_label(t, index) + ": " + std::to_string(qp.scale.size()) +
                     " quantization scales but " + std::to_string(qp.zero_point.size()) +
                     " zero points");
    out.quant = std::move(qp);
  }
  return out;
}

// Text of the model in a message: at most 64 bytes, control bytes as '?'.
std::string shown(std::string_view text) {
  constexpr size_t kMax = 64;
  std::string out(text.substr(0, kMax));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > kMax ? out + "..." : out;
}

std::string signature_label(size_t index, std::string_view key) {
  return "signature " + std::to_string(index) + " '" + shown(key) + "'";
}

Error expansion(const std::string& what) {
  return make_error(ErrorCode::kResourceLimit,
                    what +
                        ": the model expands to far more than its size (tables or strings "
                        "shared between entries)");
}

// One input or output of a signature: the tensor it names must exist in the
// signature's subgraph. What is read is charged to the expansion budget.
Result<SignatureTensor> signature_tensor(const tflite::TensorMap& m, const tflite::SubGraph& sg,
                                         int subgraph, const std::string& where,
                                         const Limits& limits, uint64_t& budget) {
  SignatureTensor out;
  out.alias = m.name()->str();
  const std::string label = where + " '" + shown(out.alias) + "'";
  const size_t count = sg.tensors() ? sg.tensors()->size() : 0;
  if (m.tensor_index() >= count)
    return invalid(label + ": tensor index " + std::to_string(m.tensor_index()) +
                   " out of range (subgraph " + std::to_string(subgraph) + " has " +
                   std::to_string(count) + " tensors)");
  out.tensor = static_cast<int>(m.tensor_index());
  const tflite::Tensor* t = sg.tensors()->Get(m.tensor_index());
  if (!t) return invalid(label + ": tensor " + std::to_string(out.tensor) + " is null");
  const uint64_t cost =
      (t->name() ? t->name()->size() : 0) + (t->shape() ? uint64_t{8} * t->shape()->size() : 0);
  if (cost > budget) return expansion(label);
  budget -= cost;
  out.name = t->name() ? t->name()->str() : "";
  const int type = static_cast<int>(t->type());
  if (type < 0 || type > static_cast<int>(DataType::kBFloat16))
    return invalid(label + ": tensor " + std::to_string(out.tensor) +
                   " has the unknown type code " + std::to_string(type));
  out.dtype = static_cast<DataType>(type);
  if (t->shape()) {
    if (t->shape()->size() > limits.max_rank)
      return make_error(ErrorCode::kResourceLimit,
                        label + ": tensor " + std::to_string(out.tensor) + " has rank " +
                            std::to_string(t->shape()->size()) + ", beyond the limit of " +
                            std::to_string(limits.max_rank) + " (max_rank)");
    out.shape.assign(t->shape()->begin(), t->shape()->end());
    if (const auto* sig = t->shape_signature(); sig && sig->size() == out.shape.size())
      for (flatbuffers::uoffset_t i = 0; i < sig->size(); ++i)
        if (sig->Get(i) == -1) out.shape[i] = -1;
  }
  return out;
}

// Every SignatureDef of the model, checked as TFLite's interpreter reads them
// (a null one or one without a key fails it) and beyond: its subgraph and
// every tensor it names exist.
Result<std::vector<Signature>> read_signatures(const tflite::Model& model, const Limits& limits,
                                               uint64_t& budget, Checkpoint& checkpoint) {
  std::vector<Signature> out;
  const auto* defs = model.signature_defs();
  if (!defs) return out;
  const auto* subgraphs = model.subgraphs();
  for (flatbuffers::uoffset_t i = 0; i < defs->size(); ++i) {
    if (checkpoint.should_stop()) return checkpoint.status().take_error();
    const tflite::SignatureDef* d = defs->Get(i);
    if (!d) return invalid("signature " + std::to_string(i) + " is null");
    if (!d->signature_key()) return invalid("signature " + std::to_string(i) + " has no key");
    const std::string where =
        signature_label(i, {d->signature_key()->c_str(), d->signature_key()->size()});
    const uint64_t cost = 16 + d->signature_key()->size();
    if (cost > budget) return expansion(where);
    budget -= cost;
    Signature sig;
    sig.key = d->signature_key()->str();
    if (d->subgraph_index() >= subgraphs->size())
      return invalid(where + ": subgraph index " + std::to_string(d->subgraph_index()) +
                     " out of range (the model has " + std::to_string(subgraphs->size()) +
                     " subgraphs)");
    sig.subgraph = static_cast<int>(d->subgraph_index());
    const tflite::SubGraph* sg = subgraphs->Get(d->subgraph_index());
    if (!sg) return invalid(where + ": subgraph " + std::to_string(sig.subgraph) + " is null");
    for (auto [list, what, dest] : {std::tuple{d->inputs(), "input", &sig.inputs},
                                    std::tuple{d->outputs(), "output", &sig.outputs}}) {
      if (!list) continue;
      // As TFLite keys them (a std::map): sorted by alias, the last entry of
      // an alias wins, entries without a name are left out.
      std::map<std::string, SignatureTensor> by_alias;
      for (flatbuffers::uoffset_t k = 0; k < list->size(); ++k) {
        const tflite::TensorMap* m = list->Get(k);
        const uint64_t entry_cost = 8 + (m && m->name() ? m->name()->size() : 0);
        if (entry_cost > budget) return expansion(where);
        budget -= entry_cost;
        if (!m || !m->name()) continue;
        auto t = signature_tensor(*m, *sg, sig.subgraph, where + " " + what, limits, budget);
        if (!t) return t.take_error();
        by_alias.insert_or_assign(t->alias, std::move(*t));
      }
      for (auto& [alias, t] : by_alias) dest->push_back(std::move(t));
    }
    out.push_back(std::move(sig));
  }
  return out;
}

// The signature `key` selects (index into `signatures`; -1: none), or
// kInvalidOption listing the keys there are.
Result<int> select_signature(const std::vector<Signature>& signatures, std::string_view key) {
  if (key.empty()) return signatures.empty() ? -1 : 0;
  for (size_t i = 0; i < signatures.size(); ++i)
    if (signatures[i].key == key) return static_cast<int>(i);
  std::string message = "signature '" + shown(key) + "': ";
  if (signatures.empty())
    return make_error(ErrorCode::kInvalidOption, message + "the model has no signatures");
  constexpr size_t kListed = 16;
  message += "the model has no such signature; its signatures are ";
  for (size_t i = 0; i < signatures.size() && i < kListed; ++i)
    message += (i ? ", '" : "'") + shown(signatures[i].key) + "'";
  if (signatures.size() > kListed)
    message += " and " + std::to_string(signatures.size() - kListed) + " more";
  return make_error(ErrorCode::kInvalidOption, message);
}

Result<int> builtin_code(const tflite::OperatorCode* code, size_t index) {
  if (!code) return invalid("operator code " + std::to_string(index) + " is null");
  // Codes above 127 only fit builtin_code; older files only set the deprecated byte.
  int c = std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
  if (c < 0) return invalid("operator code " + std::to_string(index) + " is negative");
  return c;
}

}  // namespace

Result<ReadModel> read(std::span<const std::byte> bytes, const Limits& limits,
                       OptionsReader read_options, Checkpoint& checkpoint,
                       std::string_view signature) {
  if (bytes.empty()) return invalid("empty input: expected a TFLite model");
  if (bytes.size() < 8)
    return invalid("input of " + std::to_string(bytes.size()) +
                   " bytes is too short to be a TFLite model");
  if (bytes.size() > limits.max_model_bytes)
    return make_error(ErrorCode::kResourceLimit,
                      "model of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_model_bytes) + " bytes (max_model_bytes)");
  // FlatBuffers reads fields in place, trusting the buffer's own alignment; a
  // file read into memory (or mapped) always starts aligned.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0)
    return make_error(ErrorCode::kInvalidOption,
                      "the model bytes must start at an 8-byte aligned address");
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (!tflite::ModelBufferHasIdentifier(data)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(data[i]);
      id += (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(data[i]);
    }
    return invalid("not a TFLite model: file identifier is '" + id + "', expected 'TFL3'");
  }
  // Buffers beyond a 2 GiB FlatBuffer are addressed by offset; verify the FlatBuffer part.
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 64;
  size_t fb_size = std::min<size_t>(bytes.size(), FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  // Every table takes at least 4 bytes: this admits any model without shared
  // tables, bounds the verifier's work by the input size, and leaves the
  // count limits to the checks below (kResourceLimit).
  vopts.max_tables = static_cast<flatbuffers::uoffset_t>(fb_size / 4 + 1);
  flatbuffers::Verifier verifier(data, fb_size, vopts);
  if (!tflite::VerifyModelBuffer(verifier))
    return invalid(
        "corrupt TFLite model: the FlatBuffer failed verification (truncated or "
        "damaged file, or offsets pointing outside it)");
  const tflite::Model* model = tflite::GetModel(data);

  ReadModel out;
  out.version = model->version();
  if (model->description()) out.description = model->description()->str();
  const auto* subgraphs = model->subgraphs();
  if (!subgraphs || subgraphs->size() == 0) return invalid("model has no subgraphs");
  const auto* codes = model->operator_codes();

  // What the file may make the reader copy: names, shapes, scales, operator
  // inputs, signatures. FlatBuffers let many entries share one table or
  // vector, so a small file could otherwise describe billions of reads.
  uint64_t budget = 4 * static_cast<uint64_t>(bytes.size()) + (64u << 10);
  for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
    if (checkpoint.should_stop()) return checkpoint.status().take_error();
    const tflite::SubGraph* sg = subgraphs->Get(s);
    ir::SubgraphSummary sum;
    sum.index = static_cast<int>(s);
    const uint64_t cost = 4 + (sg && sg->name() ? sg->name()->size() : 0);
    if (cost > budget) return expansion("subgraph " + std::to_string(s));
    budget -= cost;
    if (sg && sg->name()) sum.name = sg->name()->str();
    if (sg && sg->tensors()) sum.tensors = sg->tensors()->size();
    if (sg && sg->operators()) sum.operators = sg->operators()->size();
    out.subgraphs.push_back(sum);
  }
  auto signatures = read_signatures(*model, limits, budget, checkpoint);
  if (!signatures) return signatures.take_error();
  out.signatures = std::move(*signatures);
  auto selected = select_signature(out.signatures, signature);
  if (!selected) return selected.take_error();
  out.signature = *selected;
  if (out.signature >= 0)
    out.subgraph = out.signatures[static_cast<size_t>(out.signature)].subgraph;

  auto buffers = read_buffers(*model, bytes);
  if (!buffers) return buffers.take_error();
  if (const auto* entries = model->metadata()) {
    // A bounded count: each entry is a table of at least 4 bytes anyway.
    for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
      const tflite::Metadata* m = entries->Get(i);
      if (!m || !m->name() || m->buffer() >= buffers->size()) continue;
      out.metadata.push_back({m->name()->str(), (*buffers)[m->buffer()]});
    }
  }

  const tflite::SubGraph* sg = subgraphs->Get(static_cast<flatbuffers::uoffset_t>(out.subgraph));
  if (!sg) return invalid("subgraph " + std::to_string(out.subgraph) + " is null");
  ir::Graph& g = out.graph;
  // Densified sparse constants are the first bytes a conversion creates.
  g.created.set_limit(limits.resolved(bytes.size()).max_created_bytes);
  g.name = sg->name() ? sg->name()->str() : "";
  const auto* tensors = sg->tensors();
  size_t num_tensors = tensors ? tensors->size() : 0;
  if (num_tensors > limits.max_tensors)
    return make_error(ErrorCode::kResourceLimit,
                      std::to_string(num_tensors) + " tensors exceed the limit of " +
                          std::to_string(limits.max_tensors) + " (max_tensors)");

  for (size_t i = 0; i < num_tensors; ++i) {
    if (checkpoint.should_stop()) return checkpoint.status().take_error();
    auto t = read_tensor(tensors->Get(static_cast<flatbuffers::uoffset_t>(i)), i, *buffers, limits,
                         budget, g.created, checkpoint);
    if (!t) {
      Error e = t.take_error();
      e.tensor = tensors->Get(static_cast<flatbuffers::uoffset_t>(i))->name()
                     ? tensors->Get(static_cast<flatbuffers::uoffset_t>(i))->name()->str()
                     : "";
      return e;
    }
    g.add_tensor(std::move(t.value()));
  }

  auto check_index = [&](int32_t index, const std::string& where) -> Status {
    if (index < 0 || static_cast<size_t>(index) >= num_tensors)
      return invalid(where + ": tensor index " + std::to_string(index) + " out of range (" +
                     std::to_string(num_tensors) + " tensors)");
    return ok_status();
  };
  if (sg->inputs())
    for (int32_t i : *sg->inputs()) {
      if (auto st = check_index(i, "subgraph input"); !st) return st.take_error();
      if (g.is_graph_input(i))
        return invalid("subgraph input: tensor " + std::to_string(i) + " is listed twice");
      g.add_input(i);
    }
  if (sg->outputs())
    for (int32_t i : *sg->outputs()) {
      if (auto st = check_index(i, "subgraph output"); !st) return st.take_error();
      g.add_output(i);
    }

  const auto* ops = sg->operators();
  size_t num_ops = ops ? ops->size() : 0;
  if (num_ops > limits.max_operators)
    return make_error(ErrorCode::kResourceLimit,
                      std::to_string(num_ops) + " operators exceed the limit of " +
                          std::to_string(limits.max_operators) + " (max_operators)");
  std::vector<int> producer(num_tensors, -1);
  for (size_t k = 0; k < num_ops; ++k) {
    if (checkpoint.should_stop()) return checkpoint.status().take_error();
    const tflite::Operator* op = ops->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (!op) return invalid("op " + std::to_string(k) + " is null");
    uint32_t ci = op->opcode_index();
    if (!codes || ci >= codes->size())
      return invalid("op " + std::to_string(k) + ": opcode index " + std::to_string(ci) +
                     " out of range (" + std::to_string(codes ? codes->size() : 0) + " codes)");
    auto code = builtin_code(codes->Get(ci), ci);
    if (!code) return code.take_error();
    ir::Node n;
    n.dialect = ir::Dialect::kTflite;
    n.builtin = *code;
    n.source_op = static_cast<int>(k);
    const int version = codes->Get(ci)->version();
    if (*code == ir::builtin::kCustom) {
      const auto* cc = codes->Get(ci)->custom_code();
      if (cc && cc->size() > budget)
        return op_limit(k,
                        "the model expands to far more than its size "
                        "(a long custom code shared by many ops)");
      if (cc) budget -= cc->size();
      n.op = cc ? cc->str() : "CUSTOM";
      n.name = "Custom_" + std::to_string(k);
    } else {
      n.op = ir::builtin_name(*code);
      n.name = ir::camel_name(n.op) + "_" + std::to_string(k);
    }
    std::string where = op_label(k, n.op);
    // Ops may share one inputs vector: each read counts against the model's
    // expansion budget, so a small file cannot describe billions of edges.
    const size_t edges =
        (op->inputs() ? op->inputs()->size() : 0) + (op->outputs() ? op->outputs()->size() : 0);
    if (op->inputs() && op->inputs()->size() > limits.max_inputs_per_op)
      return op_limit(k, where + " has " + std::to_string(op->inputs()->size()) +
                             " inputs, more than the limit of " +
                             std::to_string(limits.max_inputs_per_op) + " (max_inputs_per_op)");
    if (4 * edges > budget)
      return op_limit(k, where +
                             ": the model expands to far more than its size (operators sharing "
                             "their input lists)");
    budget -= 4 * edges;
    if (op->inputs())
      for (int32_t i : *op->inputs()) {
        if (i != -1)
          if (auto st = check_index(i, where + " input"); !st) {
            Error e = st.take_error();
            e.op_index = static_cast<int>(k);
            return e;
          }
        n.inputs.push_back(i);
      }
    if (op->outputs())
      for (int32_t o : *op->outputs()) {
        if (auto st = check_index(o, where + " output"); !st) {
          Error e = st.take_error();
          e.op_index = static_cast<int>(k);
          return e;
        }
        if (producer[o] != -1)
          return op_error(k, where + ": output tensor " + std::to_string(o) +
                                 " is already produced by op " + std::to_string(producer[o]));
        if (g.is_graph_input(o))
          return op_error(k, where + ": output tensor " + std::to_string(o) + " '" +
                                 g.tensor(o).name + "' is a graph input");
        if (g.tensor(o).is_const())
          return op_error(k, where + ": output tensor " + std::to_string(o) + " '" +
                                 g.tensor(o).name + "' is a constant");
        producer[o] = static_cast<int>(k);
        n.outputs.push_back(o);
      }
    // Intermediate tensors (the integer LSTM's gate and hidden scales):
    // checked like inputs, kept as the attribute "intermediates".
    if (const auto* mids = op->intermediates(); mids && mids->size() > 0) {
      if (mids->size() > limits.max_inputs_per_op || 4 * mids->size() > budget)
        return op_limit(k, where + ": too many intermediate tensors");
      budget -= 4 * mids->size();
      std::vector<int64_t> ids;
      for (int32_t i : *mids) {
        if (auto st = check_index(i, where + " intermediate"); !st) {
          Error e = st.take_error();
          e.op_index = static_cast<int>(k);
          return e;
        }
        ids.push_back(i);
      }
      n.attrs.set("intermediates", std::move(ids));
    }
    if (read_options)
      if (auto st = read_options(*code, n.op, version, *op, n.attrs); !st) {
        Error e = st.take_error();
        if (e.code == ErrorCode::kUnsupported)
          e.unsupported.push_back({static_cast<int>(k), n.op, e.message});
        e.message = where + ": " + e.message;
        e.op_index = static_cast<int>(k);
        return e;
      }
    g.add_node(std::move(n));
  }
  // A constant with no elements (a RESHAPE's shape [0], for a scalar) has an
  // empty buffer, like an activation: one that no op writes and that is no
  // graph input is that constant.
  for (size_t i = 0; i < num_tensors; ++i) {
    ir::Tensor& t = g.tensor(static_cast<TensorId>(i));
    const auto count = ir::element_count(t.shape);
    if (!t.is_const() && producer[i] < 0 && !g.is_graph_input(static_cast<TensorId>(i)) &&
        tensors->Get(static_cast<flatbuffers::uoffset_t>(i))->buffer() != 0 && count &&
        *count == 0 && ir::element_size(t.dtype)) {
      ir::ConstData empty;
      empty.stored_type = t.dtype;
      t.data = empty;
    }
  }
  return out;
}

}  // namespace lite2onnx::tflite_reader
