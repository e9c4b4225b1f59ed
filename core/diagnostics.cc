// Text and JSON forms of Diagnostics and ModelInfo.
#include "core/diagnostics.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace lite2onnx {

using Json = nlohmann::ordered_json;

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidModel:
      return "invalid_model";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kInvalidOption:
      return "invalid_option";
    case ErrorCode::kResourceLimit:
      return "resource_limit";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

const char* to_string(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNotImplemented:
      return "not_implemented";
    case ReasonCode::kCustomOp:
      return "custom_op";
    case ReasonCode::kSelectTfOp:
      return "select_tf_op";
    case ReasonCode::kAcceleratorCompiled:
      return "accelerator_compiled";
    case ReasonCode::kOpVersion:
      return "op_version";
    case ReasonCode::kOpset:
      return "opset";
    case ReasonCode::kRuntimeValue:
      return "runtime_value";
    case ReasonCode::kType:
      return "type";
    case ReasonCode::kShape:
      return "shape";
    case ReasonCode::kQuantization:
      return "quantization";
    case ReasonCode::kState:
      return "state";
    case ReasonCode::kOption:
      return "option";
    case ReasonCode::kOperands:
      return "operands";
    case ReasonCode::kLimit:
      return "limit";
    case ReasonCode::kNotExpressible:
      return "not_expressible";
  }
  return "unknown";
}

namespace {

Json unsupported_json(const std::vector<UnsupportedOp>& ops) {
  Json a = Json::array();
  for (const auto& u : ops) {
    Json o = {{"op_index", u.op_index}, {"op", u.op}};
    if (u.subgraph >= 0) o["subgraph"] = u.subgraph;
    if (!u.reason.empty()) o["reason"] = u.reason;
    o["reason_code"] = u.reason_code;
    a.push_back(std::move(o));
  }
  return a;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

// "[127.5]", "[0.5, 0.25, 1]": floats in their shortest form.
std::string floats_text(const std::vector<float>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, values[i]);
    s += (i ? ", " : "") + (ec == std::errc() ? std::string(buf, end) : std::string("?"));
  }
  return s + "]";
}

size_t lines_of(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) +
         (!text.empty() && text.back() != '\n');
}

// The TFLite Metadata section of `inspect`: one line per field set, per
// tensor and per associated file (sizes and line counts, not the contents).
std::string metadata_text(const TfliteMetadata& m) {
  std::string s = "TFLite metadata:\n";
  for (auto [label, value] :
       {std::pair{"name", &m.name}, std::pair{"description", &m.description},
        std::pair{"version", &m.version}, std::pair{"author", &m.author},
        std::pair{"license", &m.license}, std::pair{"min_parser_version", &m.min_parser_version}})
    if (!value->empty()) s += "  " + std::string(label) + ": " + *value + "\n";
  for (auto [label, list] : {std::pair{"input", &m.inputs}, std::pair{"output", &m.outputs}})
    for (const auto& t : *list) {
      s += "  " + std::string(label) + " '" + t.tensor + "'";
      if (!t.name.empty() && t.name != t.tensor) s += " (" + t.name + ")";
      if (!t.content.empty()) s += " " + t.content;
      if (!t.mean.empty() || !t.std.empty())
        s += ", normalization mean " + floats_text(t.mean) + " std " + floats_text(t.std);
      if (!t.min.empty() || !t.max.empty())
        s += ", range min " + floats_text(t.min) + " max " + floats_text(t.max);
      for (size_t i = 0; i < t.associated_files.size(); ++i)
        s += (i ? ", " : ", files ") + t.associated_files[i];
      s += "\n";
      if (!t.description.empty()) s += "    " + t.description + "\n";
    }
  for (const auto& f : m.associated_files) {
    s += "  associated file " + f.name + " (" +
         (f.type.empty() ? "not named by the metadata" : f.type);
    if (f.packed) s += ", " + std::to_string(f.size) + " bytes";
    s += "): ";
    if (f.embedded)
      s += "embedded, " + std::to_string(lines_of(f.content)) + " lines";
    else
      s += f.packed ? "not embedded: " + f.note : "not packed in the model";
    s += "\n";
  }
  return s;
}

}  // namespace

std::string Diagnostics::to_json(int indent) const {
  Json j;
  j["opset"] = opset;
  j["model_bytes"] = model_bytes;
  j["onnx_bytes"] = onnx_bytes;
  j["subgraphs"] = subgraphs;
  if (!cache.empty()) j["cache"] = cache;
  j["source_ops"] = source_ops;
  j["emitted_nodes"] = emitted_nodes;
  Json ins = Json::array();
  for (const auto& i : inserted)
    ins.push_back(
        {{"node", i.node}, {"op_type", i.op_type}, {"tensor", i.tensor}, {"reason", i.reason}});
  j["inserted"] = std::move(ins);
  j["transposes"] = {{"before_cleanup", transposes_before_cleanup},
                     {"after_cleanup", transposes_after_cleanup}};
  Json rw = Json::array();
  for (const auto& r : rewritten_initializers)
    rw.push_back({{"tensor", r.tensor}, {"reason", r.reason}});
  j["rewritten_initializers"] = std::move(rw);
  Json io = Json::array();
  for (const auto& l : io_layouts)
    io.push_back({{"tensor", l.tensor}, {"input", l.is_input}, {"perm", l.perm}});
  j["io_layouts"] = std::move(io);
  if (!quantization.mode.empty())
    j["quantization"] = {{"mode", quantization.mode},
                         {"nodes", quantization.nodes},
                         {"cancelled_pairs", quantization.cancelled_pairs},
                         {"integer_initializers", quantization.integer_initializers},
                         {"integer_initializer_bytes", quantization.integer_initializer_bytes},
                         {"quantized_activations", quantization.quantized_activations},
                         {"int8_activations_as_uint8", quantization.int8_activations_as_uint8}};
  j["warnings"] = warnings;
  j["unsupported"] = unsupported_json(unsupported);
  Json t = Json::object();
  for (const auto& p : timings) t[p.phase + "_ms"] = p.ms;
  j["timings"] = std::move(t);
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string Diagnostics::to_text() const {
  std::string s;
  s += "opset " + std::to_string(opset) + ", " + std::to_string(model_bytes) + " TFLite bytes -> " +
       std::to_string(onnx_bytes) + " ONNX bytes\n";
  if (!cache.empty()) s += "cache: " + cache + "\n";
  s += "source ops:";
  for (const auto& [k, v] : source_ops) s += " " + k + "x" + std::to_string(v);
  s += "\nemitted nodes:";
  for (const auto& [k, v] : emitted_nodes) s += " " + k + "x" + std::to_string(v);
  s += "\n";
  for (const auto& i : inserted)
    s += "inserted " + i.op_type + " " + i.node + " on '" + i.tensor + "': " + i.reason + "\n";
  if (transposes_before_cleanup)
    s += "transposes: " + std::to_string(transposes_before_cleanup) +
         " after layout propagation, " + std::to_string(transposes_after_cleanup) +
         " after cleanup\n";
  for (const auto& r : rewritten_initializers)
    s += "rewrote initializer '" + r.tensor + "': " + r.reason + "\n";
  for (const auto& l : io_layouts)
    if (!l.perm.empty())
      s += std::string(l.is_input ? "input" : "output") + " '" + l.tensor + "' layout " +
           ir::to_string(l.perm) + " (TFLite axes in ONNX order)\n";
  if (!quantization.mode.empty()) {
    const auto& q = quantization;
    s += "quantization (" + q.mode + "): " + std::to_string(q.quantized_activations) +
         " quantized activations, " + std::to_string(q.integer_initializers) +
         " integer initializers (" + std::to_string(q.integer_initializer_bytes) + " bytes)";
    if (q.cancelled_pairs)
      s += ", " + std::to_string(q.cancelled_pairs) +
           " DequantizeLinear->QuantizeLinear pairs cancelled";
    if (q.int8_activations_as_uint8) s += ", int8 activations as uint8 (zero point + 128) inside";
    s += "\n";
    for (const auto& [why, count] : q.nodes) s += "  " + why + ": " + std::to_string(count) + "\n";
  }
  for (const auto& w : warnings) s += "warning: " + w + "\n";
  for (const auto& u : unsupported)
    s += "unsupported: " + u.label() + " [" + u.reason_code + "]" +
         (u.reason.empty() ? "" : ": " + u.reason) + "\n";
  s += "timings:";
  for (const auto& p : timings) s += " " + p.phase + " " + fmt_ms(p.ms) + ";";
  s += "\n";
  return s;
}

std::string ModelInfo::to_json(int indent) const {
  Json j;
  j["version"] = version;
  j["description"] = description;
  j["subgraphs"] = subgraphs;
  Json sigs = Json::array();
  for (const auto& sig : signatures) {
    Json o = {{"key", sig.key}, {"subgraph", sig.subgraph}};
    for (auto [list, field] :
         {std::pair{&sig.inputs, "inputs"}, std::pair{&sig.outputs, "outputs"}}) {
      Json ios = Json::array();
      for (const auto& t : *list)
        ios.push_back({{"alias", t.alias},
                       {"tensor", t.tensor},
                       {"name", t.name},
                       {"type", t.dtype},
                       {"shape", t.shape}});
      o[field] = std::move(ios);
    }
    sigs.push_back(std::move(o));
  }
  j["signatures"] = std::move(sigs);
  j["subgraph"] = subgraph;
  Json ts = Json::array();
  for (const auto& t : tensors) {
    Json o = {{"index", t.index},
              {"name", t.name},
              {"type", t.dtype},
              {"shape", t.shape},
              {"constant", t.constant}};
    if (t.variable) o["variable"] = true;
    if (t.sparse) o["sparse"] = true;
    if (t.quant_scales) o["quantization"] = {{"scales", t.quant_scales}, {"axis", t.quant_axis}};
    ts.push_back(std::move(o));
  }
  j["tensors"] = std::move(ts);
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  Json os = Json::array();
  for (const auto& o : ops) {
    Json x = {{"index", o.index},
              {"op", o.op},
              {"inputs", o.inputs},
              {"outputs", o.outputs},
              {"supported", o.supported}};
    if (!o.reason.empty()) x["reason"] = o.reason;
    if (!o.reason_code.empty()) x["reason_code"] = o.reason_code;
    os.push_back(std::move(x));
  }
  j["ops"] = std::move(os);
  j["unsupported"] = unsupported_json(unsupported);
  j["problems"] = problems;
  if (metadata.present) j["metadata"] = Json::parse(metadata.to_json(true));
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string ModelInfo::to_text() const {
  std::string s = "TFLite schema version " + std::to_string(version) +
                  (description.empty() ? "" : ", \"" + description + "\"") + "\n";
  for (const auto& sg : subgraphs) s += "subgraph " + sg + "\n";
  for (const auto& sig : signatures) {
    s += "signature '" + sig.key + "': subgraph " + std::to_string(sig.subgraph) + "\n";
    for (auto [list, what] : {std::pair{&sig.inputs, "input"}, std::pair{&sig.outputs, "output"}})
      for (const auto& t : *list)
        s += "  " + std::string(what) + " '" + t.alias + "': [" + std::to_string(t.tensor) + "] '" +
             t.name + "' " + t.dtype + " " + ir::to_string(t.shape) + "\n";
  }
  if (!signatures.empty() || subgraph != 0)
    s += "described below: subgraph " + std::to_string(subgraph) + "\n";
  auto tensor_line = [&](int i) {
    const TensorInfo& t = tensors[static_cast<size_t>(i)];
    std::string q;
    if (t.quant_scales == 1) q = " quantized";
    if (t.quant_scales > 1)
      q = " quantized per-axis(" + std::to_string(t.quant_scales) + ", axis " +
          std::to_string(t.quant_axis) + ")";
    return "  [" + std::to_string(t.index) + "] '" + t.name + "' " + t.dtype + " " +
           ir::to_string(t.shape) + (t.constant ? " const" : "") + (t.variable ? " variable" : "") +
           (t.sparse ? " sparse" : "") + q + "\n";
  };
  s += "inputs:\n";
  for (int i : inputs) s += tensor_line(i);
  s += "outputs:\n";
  for (int i : outputs) s += tensor_line(i);
  s += "ops (" + std::to_string(ops.size()) + "):\n";
  for (const auto& o : ops) {
    s += "  " + std::to_string(o.index) + " " + o.op + " in[";
    s += join(o.inputs) + "] out[" + join(o.outputs);
    s += "]";
    if (!o.supported)
      s += "  UNSUPPORTED [" + o.reason_code + "]" + (o.reason.empty() ? "" : ": " + o.reason);
    s += "\n";
  }
  s += "tensors (" + std::to_string(tensors.size()) + "):\n";
  for (const auto& t : tensors) s += tensor_line(t.index);
  s += unsupported.empty() ? "all operators are supported\n"
                           : std::to_string(unsupported.size()) + " unsupported operator(s)\n";
  for (const auto& p : problems) s += "problem: " + p + "\n";
  if (metadata.present) s += metadata_text(metadata);
  return s;
}

}  // namespace lite2onnx
