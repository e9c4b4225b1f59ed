// The emitter's last steps (emit_parts.h): validation by the ONNX checker and
// strict shape inference, and the model's bytes.
#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/onnx/emit_parts.h"

namespace lite2onnx::onnx_emit {
namespace {

using ir::TensorId;

// Large outputs are touched once, page by page: ask for transparent huge pages
// so the kernel maps them 2 MiB at a time (a fraction of the page faults).
void advise_huge_pages(char* data, size_t size) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (size < 4 * kHuge) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)size;
#endif
}

// ONNX's own passes allocate by the model's declared shapes; a failed
// allocation there means shapes beyond what any memory holds.
Error out_of_memory(const std::string& who) {
  return make_error(ErrorCode::kResourceLimit,
                    who + " ran out of memory on the model's declared shapes");
}

}  // namespace

// The first lookup registers every schema (under a function-local static:
// another thread's lookup meanwhile waits for it).
void prepare_validation() { (void)onnx::OpSchemaRegistry::Schema("Identity"); }

Status validate(onnx::ModelProto& model, const ir::Graph& g) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::bad_alloc&) {
    return out_of_memory("the ONNX checker");
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal,
                      std::string("the ONNX checker rejected the converted model: ") + e.what());
  }
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict_mode=*/1);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::bad_alloc&) {
    return out_of_memory("ONNX shape inference");
  } catch (const std::exception& e) {
    // A node traced to a TFLite op whose declared output shape contradicts
    // its inputs: the model's shapes are inconsistent, not our lowering.
    std::string what = e.what();
    size_t at = what.find("node name: ");
    if (at != std::string::npos) {
      size_t from = at + 11, to = what.find(')', from);
      std::string node = what.substr(from, to == std::string::npos ? std::string::npos : to - from);
      for (const ir::Node& n : g.nodes()) {
        if (n.name != node || n.source_op < 0) continue;
        std::string outs;
        for (TensorId t : n.outputs)
          outs += (outs.empty() ? "'" : ", '") + g.tensor(t).name + "' " +
                  ir::to_string(g.tensor(t).shape);
        Error err =
            make_error(ErrorCode::kInvalidModel, "op " + std::to_string(n.source_op) + " (" + node +
                                                     "): the declared shape of " + outs +
                                                     " contradicts its inputs: " + what);
        err.op_index = n.source_op;
        return err;
      }
    }
    return make_error(
        ErrorCode::kInternal,
        std::string("ONNX shape inference disagrees with the converted model: ") + what);
  }
  return ok_status();
}

namespace {

using google::protobuf::io::CodedOutputStream;

void append_tag_and_length(std::string& s, int field, uint64_t length) {
  constexpr uint32_t kLen = 2;  // wire type: length-delimited
  uint8_t bytes[16];
  uint8_t* p =
      CodedOutputStream::WriteTagToArray((static_cast<uint32_t>(field) << 3) | kLen, bytes);
  p = CodedOutputStream::WriteVarint64ToArray(length, p);
  s.append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(p - bytes));
}

// The model's bytes, planned before any is written. Protobuf accepts a
// message's fields in any order and merges repeated fields, so the model is
// written as: everything but the graph (`head`), the graph's tag and length
// (`graph_frame`), the graph without the spliced initializers (`graph`), then
// each of those: its `prefix` (the initializer's tag and length, its TensorProto
// without raw_data, raw_data's tag and length) and its bytes.
struct Layout {
  struct Constant {
    std::string prefix;
    const ir::Tensor* tensor;
    size_t bytes;
  };
  std::string head, graph_frame, graph;
  std::vector<Constant> constants;
  size_t total = 0;
  // Where EmitOptions::late's placeholder is in `head`, and its size.
  size_t late_offset = 0, late_size = 0;
};

// The offset of EmitOptions::late's value in `head` (the serialized model
// without its graph), found by the message's structure: generated code writes
// fields in field-number order, metadata_props (14) last of the fields the
// emitter sets, each entry's value last in it; so the value ends where the
// entries after it begin.
Status find_late_value(const onnx::ModelProto& model, const std::string& key, Layout& layout) {
  const auto& props = model.metadata_props();
  int at = -1;
  for (int i = 0; i < props.size(); ++i)
    if (props.Get(i).key() == key) at = i;
  if (at < 0 || model.training_info_size() != 0 || model.functions_size() != 0)
    return make_error(ErrorCode::kInternal, "no metadata entry '" + key + "' to fill in last");
  size_t after = 0;
  for (int i = at + 1; i < props.size(); ++i) {
    const size_t len = props.Get(i).ByteSizeLong();
    after += 1 + CodedOutputStream::VarintSize64(len) + len;
  }
  const std::string& value = props.Get(at).value();
  if (after + value.size() > layout.head.size() ||
      layout.head.compare(layout.head.size() - after - value.size(), value.size(), value) != 0)
    return make_error(ErrorCode::kInternal, "metadata entry '" + key + "' is not where expected");
  layout.late_offset = layout.head.size() - after - value.size();
  layout.late_size = value.size();
  return ok_status();
}

Result<Layout> plan(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                    const EmitOptions& options) {
  constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
  std::set<std::string> spliced_names;
  for (const SplicedConstant& c : spliced) spliced_names.insert(c.name);
  // Still owned by the arena.
  onnx::GraphProto& graph = *model.unsafe_arena_release_graph();

  // Pull the spliced initializers out, keeping the order of both kinds.
  Layout out;
  std::vector<std::string> headers;
  {
    auto* inits = graph.mutable_initializer();
    int kept = 0;
    for (int i = 0; i < inits->size(); ++i) {
      onnx::TensorProto& tp = *inits->Mutable(i);
      if (spliced_names.count(tp.name())) {
        tp.clear_raw_data();
        headers.push_back(tp.SerializeAsString());
      } else {
        if (i != kept) inits->SwapElements(i, kept);
        ++kept;
      }
    }
    inits->DeleteSubrange(kept, inits->size() - kept);
  }
  out.head = model.SerializeAsString();
  if (!options.late.key.empty())
    if (auto st = find_late_value(model, options.late.key, out); !st) return st.take_error();
  out.graph = graph.SerializeAsString();
  size_t graph_len = out.graph.size();
  for (size_t i = 0; i < spliced.size(); ++i) {
    const size_t raw = onnx_byte_size(*spliced[i].tensor);
    std::string framed;
    std::string& prefix = headers[i];
    append_tag_and_length(prefix, kTensorRawData, raw);
    append_tag_and_length(framed, kGraphInitializer, prefix.size() + raw);
    framed += prefix;
    graph_len += framed.size() + raw;
    out.constants.push_back({std::move(framed), spliced[i].tensor, raw});
  }
  append_tag_and_length(out.graph_frame, kModelGraph, graph_len);
  out.total = out.head.size() + out.graph_frame.size() + graph_len;
  if (out.total >= (size_t{1} << 31))
    return make_error(ErrorCode::kResourceLimit, "the ONNX model would be " +
                                                     std::to_string(out.total) +
                                                     " bytes; protobuf messages stop at 2 GiB");
  if (out.total > options.max_output_bytes)
    return make_error(ErrorCode::kResourceLimit,
                      "the ONNX model would be " + std::to_string(out.total) +
                          " bytes, more than the limit of " +
                          std::to_string(options.max_output_bytes) + " (max_output_bytes)");
  return out;
}

bool stopped(const EmitOptions& options) {
  return options.checkpoint && options.checkpoint->should_stop();
}
Error cancelled() { return make_error(ErrorCode::kCancelled, "conversion cancelled"); }

// EmitOptions::late's value, of its placeholder's size.
Result<std::string> late_value(const EmitOptions& options, const Layout& layout) {
  std::string value = options.late.value();
  if (stopped(options)) return cancelled();
  if (value.size() != layout.late_size)
    return make_error(ErrorCode::kInternal, "metadata '" + options.late.key + "' has " +
                                                std::to_string(value.size()) + " bytes, not " +
                                                std::to_string(layout.late_size));
  return value;
}

// A stream's writes go through one bounded buffer: small pieces are gathered,
// a permuted or widened constant is written into it a piece at a time, and a
// constant ONNX stores as TFLite does goes from the model's bytes to the
// stream as it is.
class Buffered {
 public:
  static constexpr size_t kBytes = size_t{1} << 20;
  explicit Buffered(OutputStream& out) : out_(out), buffer_(kBytes) {}

  bool put(std::span<const std::byte> bytes) {
    if (bytes.size() > buffer_.size() - used_) {
      if (!flush()) return false;
      if (bytes.size() >= buffer_.size() / 4) return out_.write(bytes);
    }
    std::memcpy(buffer_.data() + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
    return true;
  }
  bool put(const std::string& s) { return put(std::as_bytes(std::span(s))); }
  bool put(const ir::Tensor& t, const EmitOptions& options) {
    const ConstantWriter writer(t);
    if (auto stored = writer.as_stored()) {
      if (stored->size() < buffer_.size() / 4) return put(*stored);
      return flush() && out_.write(*stored);
    }
    const size_t element = writer.element_size();
    for (size_t first = 0; first < writer.count();) {
      if (stopped(options)) return false;
      if (buffer_.size() - used_ < element && !flush()) return false;
      const size_t n = std::min(writer.count() - first, (buffer_.size() - used_) / element);
      writer.write(first, n, buffer_.data() + used_);
      used_ += n * element;
      first += n;
    }
    return true;
  }
  bool flush() {
    const bool ok = used_ == 0 || out_.write(std::span(buffer_.data(), used_));
    used_ = 0;
    return ok;
  }

 private:
  OutputStream& out_;
  std::vector<std::byte> buffer_;
  size_t used_ = 0;
};

}  // namespace

Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, const OutputBuffer& output) {
  auto layout = plan(model, spliced, options);
  if (!layout) return layout.take_error();
  if (options.late.value) {
    auto value = late_value(options, *layout);
    if (!value) return value.take_error();
    layout->head.replace(layout->late_offset, value->size(), *value);
  }
  std::byte* out = output(layout->total);
  if (out == nullptr)
    return make_error(ErrorCode::kResourceLimit,
                      "no room for the ONNX model of " + std::to_string(layout->total) + " bytes");
  std::byte* p = out;
  auto put = [&p](const std::string& s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  put(layout->head);
  put(layout->graph_frame);
  put(layout->graph);
  for (const Layout::Constant& c : layout->constants) {
    if (stopped(options)) return cancelled();
    put(c.prefix);
    write_constant(*c.tensor, p);
    p += c.bytes;
  }
  if (p != out + layout->total)
    return make_error(ErrorCode::kInternal, "ONNX serialization size mismatch");
  return layout->total;
}

Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, OutputStream& output) {
  auto layout = plan(model, spliced, options);
  if (!layout) return layout.take_error();
  const bool late = options.late.value && output.positional();
  if (options.late.value && !late) {
    auto value = late_value(options, *layout);
    if (!value) return value.take_error();
    layout->head.replace(layout->late_offset, value->size(), *value);
  }
  const Error failed = make_error(ErrorCode::kInternal, "the ONNX model could not be written");
  Buffered out(output);
  if (!out.put(layout->head) || !out.put(layout->graph_frame) || !out.put(layout->graph))
    return failed;
  for (const Layout::Constant& c : layout->constants) {
    if (stopped(options)) return cancelled();
    if (!out.put(c.prefix) || !out.put(*c.tensor, options))
      return stopped(options) ? cancelled() : failed;
  }
  if (!out.flush()) return failed;
  if (late) {
    auto value = late_value(options, *layout);
    if (!value) return value.take_error();
    if (!output.write_at(layout->late_offset, std::as_bytes(std::span(*value)))) return failed;
  }
  return layout->total;
}

OutputBuffer string_buffer(std::string& bytes) {
  return [&bytes](size_t size) {
    bytes.reserve(size);
    advise_huge_pages(bytes.data(), size);
    bytes.resize(size);
    return reinterpret_cast<std::byte*>(bytes.data());
  };
}

}  // namespace lite2onnx::onnx_emit
