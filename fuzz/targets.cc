#include "fuzz/targets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/layout_spec.h"
#include "core/ops/registry.h"
#include "core/provenance.h"
#include "core/tflite/metadata.h"
#include "core/tflite/reader.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/graph_generator.h"

namespace lite2onnx::fuzz {
namespace {

std::span<const std::byte> as_bytes(std::span<const uint8_t> data) {
  return {reinterpret_cast<const std::byte*>(data.data()), data.size()};
}

[[noreturn]] void contract_broken(const std::string& what) {
  std::fprintf(stderr, "lite2onnx fuzz: contract broken: %s\n", what.c_str());
  std::abort();
}

// LITE2ONNX_FUZZ_STRICT=1 also counts as findings what breaks the contract
// without being unsafe: a kInternal error (the converter accepted the model but
// its own ONNX output failed validation, or an invariant broke) and a
// kUnsupported error naming neither the unsupported ops nor a tensor. Read each time: the
// regression test sets it per input.
bool strict() {
  const char* v = std::getenv("LITE2ONNX_FUZZ_STRICT");
  return v && *v && *v != '0';
}

void check_error(const Error& e, const char* where) {
  if (e.message.empty()) contract_broken(std::string(where) + ": an error without a message");
  if (!strict()) return;
  if (e.code == ErrorCode::kUnsupported && e.unsupported.empty() && e.tensor.empty())
    contract_broken(std::string(where) +
                    ": kUnsupported naming neither the unsupported ops nor a tensor: " + e.message);
  if (e.code == ErrorCode::kInternal)
    contract_broken(std::string(where) + ": internal error: " + e.message);
}

void check_conversion(const Result<std::string>& r) {
  if (!r) return check_error(r.error(), "convert");
  if (r->empty()) contract_broken("convert: succeeded with no bytes");
}

struct TensorName {
  std::string name;
  size_t rank = 0;
};

// Tensor names of a model (nothing if it does not read), so that layout
// options can name real tensors.
std::vector<TensorName> tensor_names(std::span<const uint8_t> model) {
  std::vector<TensorName> out;
  auto read = tflite_reader::read(as_bytes(model), Limits{}, ops::read_options);
  if (!read) return out;
  const ir::Graph& g = read->graph;
  for (size_t i = 0; i < g.tensor_count(); ++i) {
    const ir::Tensor& t = g.tensor(static_cast<ir::TensorId>(i));
    out.push_back({t.name, t.rank()});
  }
  return out;
}

// The keys of the model's signatures (nothing if it does not read), so that
// --signature can name real ones.
std::vector<std::string> signature_keys(std::span<const uint8_t> model) {
  std::vector<std::string> out;
  auto read = tflite_reader::read(as_bytes(model), Limits{}, ops::read_options);
  if (read)
    for (const auto& sig : read->signatures) out.push_back(sig.key);
  return out;
}

// "TENSOR=SRC:DST" (or "TENSOR=ORDER") naming a tensor of the model, mostly
// well-formed, parsed as the CLI and the server parse it.
void add_layout(FuzzInput& in, const std::vector<TensorName>& tensors,
                std::vector<LayoutSpec>& specs, bool io) {
  TensorName t{"no_such_tensor", 4};
  if (!tensors.empty() && !in.one_in(10)) t = in.pick(std::span<const TensorName>(tensors));
  std::string from = "NCHWDXYZABEFGIJKL";
  from.resize(std::min<size_t>(t.rank, from.size()));
  if (t.rank == 4 && in.flag()) from = in.flag() ? "NHWC" : "NCHW";
  std::string to = from;
  for (size_t i = to.size(); i > 1; --i)
    std::swap(to[i - 1], to[static_cast<size_t>(in.range(0, static_cast<int>(i) - 1))]);
  if (in.one_in(16) && !to.empty()) to[0] = in.flag() ? 'Q' : to.back();  // not a permutation
  if (in.one_in(16)) from += "N";
  std::string text = t.name + "=" + (io && in.one_in(3) ? to : from + ":" + to);
  if (in.one_in(20)) text = in.flag() ? "=" : t.name + "=:";
  auto spec = parse_layout_spec(text, io);
  if (spec)
    specs.push_back(*spec);
  else
    check_error(spec.error(), "parse_layout_spec");
}

// Options from the input's first bytes: opset 13..17 (now and then an invalid
// one), quantization mode, the flags, a few layouts, small limits, a
// cancellation hook that fires after some polls, a signature (one of the
// model's keys, or one it lacks) with the interface named after its aliases,
// and the interface options (fixed input shapes, batch, renames).
ConvertOptions decode_options(FuzzInput& in, const std::vector<TensorName>& tensors,
                              const std::vector<std::string>& signatures, int& polls_until_cancel) {
  ConvertOptions o;
  uint8_t flags = in.byte();
  o.opset = kMinOpset + (flags & 7) % (kMaxOpset - kMinOpset + 1);
  if ((flags & 7) == 7) o.opset = in.flag() ? 12 : 18;
  o.quantization = flags & 8 ? QuantizationMode::kDequantize : QuantizationMode::kQdq;
  o.layout.keep_io_layout = flags & 16;
  o.keep_float16_weights = flags & 32;
  o.keep_int8_activations = flags & 64;
  if (flags & 128) {
    uint8_t layouts = in.byte();
    for (int i = 0; i < (layouts & 3); ++i)
      add_layout(in, tensors, o.layout.explicit_layouts, false);
    for (int i = 0; i < ((layouts >> 2) & 3); ++i)
      add_layout(in, tensors, o.layout.io_layouts, true);
    if (layouts & 16) {
      o.limits.max_tensors = static_cast<uint32_t>(in.range(0, 64));
      o.limits.max_operators = static_cast<uint32_t>(in.range(0, 64));
      o.limits.max_rank = static_cast<uint32_t>(in.range(0, 6));
      o.limits.max_model_bytes = static_cast<uint64_t>(in.range(0, 1 << 16));
    }
    if (layouts & 32) {
      polls_until_cancel = in.range(0, 40);
      o.cancelled = [&polls_until_cancel] { return polls_until_cancel-- <= 0; };
    }
    o.no_metadata = layouts & 64;
    if (layouts & 128) {
      o.io_names = in.flag() ? IoNames::kSignature : IoNames::kTensor;
      if (!signatures.empty() && !in.one_in(8))
        o.signature = in.pick(std::span<const std::string>(signatures));
      else if (in.flag())
        o.signature = "no_such_signature";
    }
  }
  // The interface options (core/passes/interface.h): a batch, a shape for one of
  // the model's tensors (its own rank or not; dimensions small, or hostile), and
  // renamed inputs and outputs (too many names now and then).
  const uint8_t interface = in.byte();
  if (interface & 1) o.batch = in.range(1, 1 << 20);
  if ((interface & 2) && !tensors.empty()) {
    const TensorName& t = in.pick(std::span<const TensorName>(tensors));
    InputShape shape{t.name, {}};
    const int rank = in.one_in(4) ? in.range(0, 5) : static_cast<int>(t.rank);
    for (int i = 0; i < rank; ++i)
      shape.dims.push_back(in.one_in(4) ? int64_t{0x7fffffff} : in.range(1, 64));
    o.input_shapes.push_back(std::move(shape));
  }
  if (interface & 4) o.rename_inputs = in.flag() ? "a,b,c" : "image";
  if (interface & 8) o.rename_outputs = in.flag() ? "," : "logits";
  return o;
}

}  // namespace

void read_target(std::span<const uint8_t> data) {
  auto r = tflite_reader::read(as_bytes(data), Limits{}, ops::read_options);
  if (!r) check_error(r.error(), "read");
}

void convert_target(std::span<const uint8_t> data) {
  // Byte 0 says how many of the next bytes (0..15) hold the options; the
  // model follows them (a seed model gets a 0 byte in front).
  size_t start = data.empty() ? 0 : 1;
  size_t option_bytes = data.empty() ? 0 : std::min<size_t>(data[0] % 16, data.size() - 1);
  // A copy: FlatBuffers needs the model aligned as a file buffer would be.
  std::span<const uint8_t> tail = data.subspan(start + option_bytes);
  std::vector<uint8_t> model(tail.begin(), tail.end());
  FuzzInput option_input(data.subspan(start, option_bytes));
  int polls = 0;
  ConvertOptions options =
      decode_options(option_input, tensor_names(model), signature_keys(model), polls);
  Diagnostics diag;
  check_conversion(convert(as_bytes(model), options, diag));
}

void inspect_target(std::span<const uint8_t> data) {
  auto r = inspect(as_bytes(data));
  if (!r) return check_error(r.error(), "inspect");
  (void)r->to_text();
  (void)r->to_json();
}

void graph_target(std::span<const uint8_t> data) {
  // As in convert_target: byte 0 gives the option bytes (0..7), then the
  // generator's decisions.
  size_t start = data.empty() ? 0 : 1;
  size_t option_bytes = data.empty() ? 0 : std::min<size_t>(data[0] % 8, data.size() - 1);
  std::vector<uint8_t> model = generate_model(data.subspan(start + option_bytes));
  std::span<const std::byte> bytes = as_bytes(model);
  // Triage: LITE2ONNX_FUZZ_DUMP=FILE writes the generated model (fuzz/README.md).
  if (const char* dump = std::getenv("LITE2ONNX_FUZZ_DUMP"); dump && *dump)
    if (FILE* f = std::fopen(dump, "wb")) {
      std::fwrite(model.data(), 1, model.size(), f);
      std::fclose(f);
    }
  Diagnostics diag;
  auto first = convert(bytes, ConvertOptions{}, diag);
  check_conversion(first);
  // The same input and options give byte-identical output (README).
  if (first) {
    auto again = convert(bytes, ConvertOptions{}, diag);
    if (!again || *again != *first) contract_broken("convert: a second conversion differs");
  }
  ConvertOptions dequantize;
  dequantize.quantization = QuantizationMode::kDequantize;
  dequantize.opset = kMaxOpset;
  dequantize.layout.keep_io_layout = true;
  check_conversion(convert(bytes, dequantize, diag));
  FuzzInput option_input(data.subspan(start, option_bytes));
  int polls = 0;
  ConvertOptions fuzzed =
      decode_options(option_input, tensor_names(model), signature_keys(model), polls);
  check_conversion(convert(bytes, fuzzed, diag));
  auto info = inspect(bytes);
  if (!info) check_error(info.error(), "inspect");
}

void metadata_target(std::span<const uint8_t> data) {
  // An aligned copy, as a file read into memory is.
  std::vector<uint64_t> storage((data.size() + 7) / 8);
  if (!data.empty()) std::memcpy(storage.data(), data.data(), data.size());
  const std::span<const std::byte> model(reinterpret_cast<const std::byte*>(storage.data()),
                                         data.size());
  ir::Graph graph;
  std::vector<tflite_reader::MetadataEntry> entries;
  if (data.size() >= 8 && std::memcmp(data.data() + 4, "TFL3", 4) == 0) {
    // A model: its metadata entries and graph, as the pipeline reads them.
    auto read = tflite_reader::read(model, Limits{});
    if (!read) return check_error(read.error(), "read");
    graph = std::move(read->graph);
    entries = std::move(read->metadata);
  } else {
    // [offset][size] (little-endian uint32 each): that span of the input is
    // the TFLITE_METADATA buffer, and the input is the model whose end holds
    // the archive; the graph has two inputs and three outputs.
    auto word = [&](size_t at) {
      uint32_t v = 0;
      for (size_t i = 0; i < 4 && at + i < data.size(); ++i) v |= uint32_t{data[at + i]} << (8 * i);
      return v;
    };
    const size_t offset = std::min<size_t>(word(0), model.size());
    const size_t size = std::min<size_t>(word(4), model.size() - offset);
    entries.push_back({"TFLITE_METADATA", model.subspan(offset, size)});
    for (int i = 0; i < 5; ++i) {
      ir::Tensor t;
      t.name = (i < 2 ? "input_" : "output_") + std::to_string(i);
      const ir::TensorId id = graph.add_tensor(std::move(t));
      i < 2 ? graph.add_input(id) : graph.add_output(id);
    }
  }
  std::vector<std::string> warnings;
  const tflite_reader::AssociatedFileLimits limits;
  const TfliteMetadata m = tflite_reader::read_metadata(model, entries, graph, warnings, limits);
  // The bounds hold whatever the input.
  if (m.inputs.size() > graph.inputs().size() || m.outputs.size() > graph.outputs().size())
    contract_broken("metadata: more tensor entries than graph inputs or outputs");
  if (m.associated_files.size() > limits.max_entries)
    contract_broken("metadata: more associated files than max_entries");
  std::set<std::string> names;
  uint64_t embedded = 0;
  for (const AssociatedFileInfo& f : m.associated_files) {
    if (f.name.empty() || f.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                                                   "UVWXYZ0123456789._-") != std::string::npos)
      contract_broken("metadata: an unsanitized file name");
    if (!names.insert(f.name).second) contract_broken("metadata: two files named " + f.name);
    if (f.content.size() > limits.max_file_bytes)
      contract_broken("metadata: an embedded file beyond max_file_bytes");
    embedded += f.content.size();
  }
  if (embedded > limits.max_total_bytes)
    contract_broken("metadata: embedded files beyond max_total_bytes");
  for (const auto& w : warnings)
    if (w.empty()) contract_broken("metadata: an empty warning");
  (void)m.to_json(true);
  (void)provenance_metadata({"", 3, "", entries, &m}, ConvertOptions{});
}

void custom_options_target(std::span<const uint8_t> data) {
  const auto entries = ops::all_custom_entries();
  if (entries.empty()) return;
  const auto zero = std::find(data.begin(), data.end(), uint8_t{0});
  const std::string code(data.begin(), zero);
  const std::span<const uint8_t> options =
      zero == data.end() ? std::span<const uint8_t>()
                         : data.subspan(static_cast<size_t>(zero - data.begin()) + 1);
  const ops::OpEntry* entry = entries.front().second;
  for (const auto& [name, e] : entries)
    if (name == code) entry = e;
  if (!entry->read.custom_options) return;
  // A copy: the bytes of a FlatBuffer vector are as aligned as the model is,
  // and the fuzzer's buffer says nothing about alignment.
  std::vector<uint8_t> bytes(options.begin(), options.end());
  ir::Attributes attrs;
  if (auto st = entry->read.custom_options(bytes, attrs); !st)
    check_error(st.error(), "custom_options");
}

Target target_named(const std::string& name) {
  if (name == "custom_options") return custom_options_target;
  if (name == "metadata") return metadata_target;
  if (name == "read") return read_target;
  if (name == "convert") return convert_target;
  if (name == "inspect") return inspect_target;
  if (name == "graph") return graph_target;
  return nullptr;
}

}  // namespace lite2onnx::fuzz
