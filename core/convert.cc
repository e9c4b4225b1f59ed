// The core's entry points, on the pipeline (core/pipeline.h).
#include "core/convert.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>

#include "core/ir/builtins.h"
#include "core/onnx/emit.h"
#include "core/ops/registry.h"
#include "core/pipeline.h"
#include "core/preflight.h"
#include "core/tflite/metadata.h"

#ifndef LITE2ONNX_VERSION
#define LITE2ONNX_VERSION "0.0.0"
#endif

namespace lite2onnx {

std::string version() { return LITE2ONNX_VERSION; }

Result<std::string> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                            Diagnostics& diag) {
  std::string bytes;
  auto written = convert(tflite, options, diag, onnx_emit::string_buffer(bytes));
  if (!written) return written.take_error();
  return bytes;
}

namespace {

// `output`: an OutputBuffer or an OutputStream.
template <class Output>
Result<size_t> convert_into(std::span<const std::byte> tflite, const ConvertOptions& options,
                            Diagnostics& diag, Output& output) {
  diag = Diagnostics{};
  diag.opset = options.opset;
  diag.model_bytes = tflite.size();
  if (options.opset < kMinOpset || options.opset > kMaxOpset)
    return make_error(ErrorCode::kInvalidOption,
                      "opset " + std::to_string(options.opset) + " is not supported (choose " +
                          std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")");
  const auto start = std::chrono::steady_clock::now();
  Pipeline pipeline(tflite, options, diag);
  Result<size_t> onnx = pipeline.emit(output);
  // A failed conversion converted nothing: the subgraph it chose says so.
  if (!onnx)
    for (auto& s : diag.subgraphs)
      if (auto at = s.find(", converted"); at != std::string::npos)
        s.replace(at, 11, ", chosen; the conversion failed");
  // Every conversion that ran has a total, also one that failed.
  diag.timings.push_back(
      {"total", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count()});
  return onnx;
}

}  // namespace

Result<size_t> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                       Diagnostics& diag, const OutputBuffer& output) {
  return convert_into(tflite, options, diag, output);
}

Result<size_t> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                       Diagnostics& diag, OutputStream& output) {
  return convert_into(tflite, options, diag, output);
}

void prepare_validation() { onnx_emit::prepare_validation(); }

std::string load_optional_libraries() { return tflite_reader::load_archive_reader(); }

std::vector<OpSupport> support_matrix() {
  std::vector<OpSupport> out;
  std::vector<std::tuple<int, std::string, const ops::OpEntry*>> entries;
  for (auto [code, e] : ops::all_entries())
    if (code != ir::builtin::kCustom) entries.emplace_back(code, ir::builtin_name(code), e);
  for (auto& [custom_code, e] : ops::all_custom_entries())
    entries.emplace_back(ir::builtin::kCustom, custom_code, e);
  for (auto& [code, name, e] : entries) {
    OpSupport s;
    s.code = code;
    s.op = name;
    s.supported = e->supported();
    if (s.supported) {
      s.layout_class = ops::to_string(e->layout.kind);
      s.onnx = e->doc.onnx;
      s.notes = e->doc.notes;
      s.dtypes = e->doc.dtypes;
      s.quantized = e->quantization.kernel == ops::QuantizedKernel::kRescale       ? "rescale"
                    : e->quantization.kernel == ops::QuantizedKernel::kSameScale   ? "same scale"
                    : e->quantization.kernel == ops::QuantizedKernel::kReinterpret ? "reinterprets"
                                                                                   : "no";
      // Ops whose kernel dequantizes its inputs lower as in float behind DEQUANTIZE.
      s.exact = e->quantization.exact.lower != nullptr || e->quantization.dequantizes_inputs;
      const ops::ExactForm& integer = e->quantization.exact;
      if (integer.lower) {
        using ops::InQdqGraphs;
        const InQdqGraphs in = integer.in_qdq_graphs;
        s.in_auto = integer.qdq_differs ? "integer where Q/DQ differs"
                    : in == InQdqGraphs::kQuantized || in == InQdqGraphs::kQuantizedAndHybrid
                        ? "integer"
                        : "Q/DQ";
        if (in == InQdqGraphs::kHybrid || in == InQdqGraphs::kQuantizedAndHybrid)
          s.in_auto += "; hybrid: integer";
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<ModelInfo> inspect(std::span<const std::byte> tflite, const Limits& limits) {
  ConvertOptions options;
  options.limits = limits;
  Diagnostics diag;
  Pipeline pipeline(tflite, options, diag);
  if (auto st = pipeline.run_until(Stage::kRead); !st) return st.take_error();
  ModelInfo info;
  info.version = pipeline.model_version();
  info.description = pipeline.description();
  for (const auto& s : pipeline.subgraphs())
    info.subgraphs.push_back(std::to_string(s.index) + " '" + s.name +
                             "': " + std::to_string(s.tensors) + " tensors, " +
                             std::to_string(s.operators) + " ops");
  info.subgraph = pipeline.subgraph();
  for (const auto& sig : pipeline.signatures()) {
    SignatureInfo si;
    si.key = sig.key;
    si.subgraph = sig.subgraph;
    for (auto [list, out] :
         {std::pair{&sig.inputs, &si.inputs}, std::pair{&sig.outputs, &si.outputs}})
      for (const auto& t : *list)
        out->push_back({t.alias, t.tensor, t.name, ir::to_string(t.dtype), t.shape});
    info.signatures.push_back(std::move(si));
  }
  const ir::Graph& g = pipeline.graph();
  // The converted subgraph's own tensors and ops (control flow adds copies of
  // other subgraphs' after them: not listed).
  for (size_t i = 0; i < pipeline.converted_tensors() && i < g.tensor_count(); ++i) {
    const ir::Tensor& t = g.tensor(static_cast<ir::TensorId>(i));
    TensorInfo ti;
    ti.index = static_cast<int>(i);
    ti.name = t.name;
    ti.dtype = ir::to_string(t.dtype);
    ti.shape = t.shape;
    ti.constant = t.is_const();
    ti.variable = t.is_variable;
    ti.sparse = t.was_sparse;
    if (t.quant) {
      ti.quant_scales = t.quant->scale.size();
      ti.quant_axis = t.quant->axis;
    }
    info.tensors.push_back(std::move(ti));
  }
  // The subgraph's own inputs and outputs (state pairs the reading added,
  // resource variables', are no TFLite tensors).
  const auto own = [&](ir::TensorId t) {
    return t >= 0 && static_cast<size_t>(t) < pipeline.converted_tensors();
  };
  for (ir::TensorId t : g.inputs())
    if (own(t)) info.inputs.push_back(t);
  for (ir::TensorId t : g.outputs())
    if (own(t)) info.outputs.push_back(t);
  std::unordered_map<int, size_t> op_at;  // op index -> its entry in info.ops
  for (const ir::Node& n : g.nodes()) {
    if (n.source_subgraph >= 0 || n.dialect != ir::Dialect::kTflite) continue;
    OpInfo oi;
    oi.index = n.source_op;
    // A select-TF op read as its builtin twin: both names.
    const std::string flex = n.attrs.get_string("select_tf_op");
    oi.op = flex.empty() ? n.op : flex + " (as " + n.op + ")";
    // A WHILE's first input is its condition, computed by a copy of its cond subgraph.
    for (ir::TensorId t : n.inputs)
      if (t < static_cast<ir::TensorId>(pipeline.converted_tensors())) oi.inputs.push_back(t);
    oi.outputs.assign(n.outputs.begin(), n.outputs.end());
    op_at.emplace(oi.index, info.ops.size());
    info.ops.push_back(std::move(oi));
  }
  // Shapes as TFLite computes them (the file's may differ; a warning says so).
  if (auto st = pipeline.run_until(Stage::kInferShapes); !st) return st.take_error();
  for (TensorInfo& ti : info.tensors) ti.shape = g.tensor(ti.index).shape;
  for (SignatureInfo& si : info.signatures)
    if (si.subgraph == info.subgraph)
      for (auto* list : {&si.inputs, &si.outputs})
        for (SignatureTensorInfo& t : *list) t.shape = g.tensor(t.tensor).shape;
  if (auto st = pipeline.run_until(Stage::kFuse); !st) return st.take_error();
  // A quantization problem is reported, not an error: the rest is still worth showing.
  if (auto st = pipeline.run_until(Stage::kPlanQuantization); !st)
    info.problems.push_back(st.error().message);
  for (const auto& w : diag.warnings) info.problems.push_back("warning: " + w);
  info.metadata = pipeline.tflite_metadata();
  info.unsupported = preflight(pipeline.graph());
  for (const auto& u : info.unsupported)
    if (auto it = op_at.find(u.op_index); u.subgraph < 0 && it != op_at.end()) {
      info.ops[it->second].supported = false;
      info.ops[it->second].reason = u.reason.empty() ? "not implemented" : u.reason;
      info.ops[it->second].reason_code = u.reason_code;
    }
  return info;
}

std::string support_matrix_json(const std::vector<OpSupport>& matrix, int indent) {
  using Json = nlohmann::ordered_json;
  Json a = Json::array();
  for (const auto& s : matrix) {
    if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;
    Json o = {{"op", s.op}, {"code", s.code}, {"supported", s.supported}};
    if (s.supported) {
      o["layout_class"] = s.layout_class;
      o["onnx"] = s.onnx;
      Json types = Json::array();
      for (size_t pos = 0; pos < s.dtypes.size();) {
        size_t end = s.dtypes.find(", ", pos);
        if (end == std::string::npos) end = s.dtypes.size();
        types.push_back(s.dtypes.substr(pos, end - pos));
        pos = end + 2;
      }
      o["dtypes"] = std::move(types);
      o["quantized"] = s.quantized;
      o["exact"] = s.exact;
      if (!s.in_auto.empty()) o["in_auto"] = s.in_auto;
      if (!s.notes.empty()) o["notes"] = s.notes;
    }
    a.push_back(std::move(o));
  }
  return a.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace lite2onnx
