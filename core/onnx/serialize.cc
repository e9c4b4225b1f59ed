// The emitter's last steps (emit_parts.h): validation by the ONNX checker and
// strict shape inference, and the model's bytes.
#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/mman.h>

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

// Protobuf accepts a message's fields in any order and merges repeated
// fields, so the model is written as: everything but the graph, then the
// graph without the spliced initializers, then each of those with its bytes
// written directly into the output. `model` is allocated on an arena (its
// graph is taken out without a copy).
Result<size_t> serialize_model(onnx::ModelProto& model, const std::vector<SplicedConstant>& spliced,
                               const EmitOptions& options, const OutputBuffer& output) {
  using google::protobuf::io::CodedOutputStream;
  constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
  constexpr uint32_t kLen = 2;  // wire type: length-delimited

  std::set<std::string> spliced_names;
  for (const SplicedConstant& c : spliced) spliced_names.insert(c.name);
  // Still owned by the arena.
  onnx::GraphProto& graph = *model.unsafe_arena_release_graph();

  // Pull the spliced initializers out, keeping the order of both kinds.
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
  std::string head = model.SerializeAsString();
  std::string graph_bytes = graph.SerializeAsString();

  auto varint_size = [](uint64_t v) { return CodedOutputStream::VarintSize64(v); };
  std::vector<size_t> entry_len;
  size_t graph_len = graph_bytes.size();
  for (size_t i = 0; i < spliced.size(); ++i) {
    size_t raw = onnx_byte_size(*spliced[i].tensor);
    size_t len = headers[i].size() + 1 + varint_size(raw) + raw;
    entry_len.push_back(len);
    graph_len += 1 + varint_size(len) + len;
  }
  size_t total = head.size() + 1 + varint_size(graph_len) + graph_len;
  if (total >= (size_t{1} << 31))
    return make_error(ErrorCode::kResourceLimit, "the ONNX model would be " +
                                                     std::to_string(total) +
                                                     " bytes; protobuf messages stop at 2 GiB");
  if (total > options.max_output_bytes)
    return make_error(ErrorCode::kResourceLimit,
                      "the ONNX model would be " + std::to_string(total) +
                          " bytes, more than the limit of " +
                          std::to_string(options.max_output_bytes) + " (max_output_bytes)");

  std::byte* out = output(total);
  if (out == nullptr)
    return make_error(ErrorCode::kResourceLimit,
                      "no room for the ONNX model of " + std::to_string(total) + " bytes");
  auto* p = reinterpret_cast<uint8_t*>(out);
  auto put = [&](const std::string& s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  auto tag = [&](int field) { p = CodedOutputStream::WriteTagToArray((field << 3) | kLen, p); };
  auto len = [&](uint64_t v) { p = CodedOutputStream::WriteVarint64ToArray(v, p); };
  put(head);
  tag(kModelGraph);
  len(graph_len);
  put(graph_bytes);
  for (size_t i = 0; i < spliced.size(); ++i) {
    if (options.checkpoint && options.checkpoint->should_stop())
      return make_error(ErrorCode::kCancelled, "conversion cancelled");
    const ir::Tensor& x = *spliced[i].tensor;
    size_t raw = onnx_byte_size(x);
    tag(kGraphInitializer);
    len(entry_len[i]);
    put(headers[i]);
    tag(kTensorRawData);
    len(raw);
    write_constant(x, reinterpret_cast<std::byte*>(p));
    p += raw;
  }
  if (p != reinterpret_cast<uint8_t*>(out) + total)
    return make_error(ErrorCode::kInternal, "ONNX serialization size mismatch");
  return total;
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
