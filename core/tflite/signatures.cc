// The reader's SignatureDefs (reader_parts.h): read, checked and selected.
#include <flatbuffers/flatbuffers.h>

#include <map>

#include "core/tflite/reader_parts.h"
#include "schema_generated.h"

namespace lite2onnx::tflite_reader {

using ir::DataType;

std::string shown(std::string_view text) {
  constexpr size_t kMax = 64;
  std::string out(text.substr(0, kMax));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > kMax ? out + "..." : out;
}

Error expansion(const std::string& what) {
  return make_error(ErrorCode::kResourceLimit,
                    what +
                        ": the model expands to far more than its size (tables or strings "
                        "shared between entries)");
}

namespace {

std::string signature_label(size_t index, std::string_view key) {
  return "signature " + std::to_string(index) + " '" + shown(key) + "'";
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

}  // namespace

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

}  // namespace lite2onnx::tflite_reader
