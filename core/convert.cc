#include "core/convert.h"
#include "core/ir/builtins.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "core/onnx/emit.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"
#include "core/tflite/reader.h"

#ifndef LITE2ONNX_VERSION
#define LITE2ONNX_VERSION "0.0.0"
#endif

namespace lite2onnx {
namespace {

using Clock = std::chrono::steady_clock;

class PhaseTimer {
 public:
  PhaseTimer(Diagnostics& d, const char* phase) : d_(d), phase_(phase), start_(Clock::now()) {}
  ~PhaseTimer() {
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    d_.timings.push_back({phase_, ms});
  }

 private:
  Diagnostics& d_;
  const char* phase_;
  Clock::time_point start_;
};

std::string quant_text(const ir::Tensor& t) {
  const ir::QuantParams& q = *t.quant;
  std::string s = q.scale.size() == 1 ? "scale " + std::to_string(q.scale[0]) : "per-axis scales";
  if (q.scale.size() == 1 && !q.zero_point.empty())
    s += ", zero point " + std::to_string(q.zero_point[0]);
  return s;
}

// Why the op's integer kernel cannot be expressed in QDQ, or "".
std::string quantized_kernel_problem(const ir::Graph& g, const ir::Node& n,
                                     ops::QuantizedKernel kind) {
  std::vector<const ir::Tensor*> ins, outs;
  for (ir::TensorId t : n.inputs)
    if (g.valid(t) && g.tensor(t).quantized_type) ins.push_back(&g.tensor(t));
  for (ir::TensorId t : n.outputs)
    if (g.valid(t) && g.tensor(t).quantized_type) outs.push_back(&g.tensor(t));
  if (kind == ops::QuantizedKernel::kNoQuantized && !(ins.empty() && outs.empty()))
    return "TFLite's kernel reads the raw integers of quantized tensor '" +
           (ins.empty() ? outs[0] : ins[0])->name +
           "', ignoring its quantization, which QuantizeLinear/DequantizeLinear cannot express";
  if (kind == ops::QuantizedKernel::kSameScale)
    for (const ir::Tensor* o : outs)
      for (const ir::Tensor* i : ins)
        if (!passes::same_quantization(*i, *o))
          return "input '" + i->name + "' (" + quant_text(*i) + ") and output '" + o->name + "' (" +
                 quant_text(*o) +
                 ") differ in quantization, but TFLite's kernel copies the integers unchanged";
  return "";
}

// Why a node cannot be converted, or "" if it can.
std::string unsupported_reason(const ir::Graph& g, const ir::Node& n) {
  const ops::OpEntry& e = ops::lookup(n.builtin);
  if (n.builtin == ir::builtin::kCustom) return "custom operator";
  if (!e.supported()) return "";
  for (auto list : {&n.inputs, &n.outputs}) {
    for (ir::TensorId t : *list) {
      if (!g.valid(t)) continue;
      const ir::Tensor& x = g.tensor(t);
      if (x.quant && x.dtype == ir::DataType::kInt16)
        return "int16 quantized tensor '" + x.name +
               "' (16x8 quantization): ONNX QuantizeLinear/DequantizeLinear take int16 only "
               "from opset 21, and lite2onnx emits opsets 13..17";
      if (!ir::onnx_representable(x.dtype) || x.dtype == ir::DataType::kString)
        return "tensor '" + x.name + "' has type " + ir::to_string(x.dtype);
      if (!x.has_rank) return "tensor '" + x.name + "' has unknown rank";
    }
  }
  if (n.outputs.empty()) return "operator has no outputs";
  for (ir::TensorId t : n.inputs)
    if (g.valid(t) && g.tensor(t).is_variable) return "stateful operator (variable tensors)";
  if (auto r = quantized_kernel_problem(g, n, e.quantized); !r.empty()) return r;
  return e.check ? e.check(g, n) : "";
}

std::vector<UnsupportedOp> preflight(const ir::Graph& g) {
  std::vector<UnsupportedOp> out;
  for (const auto& n : g.nodes) {
    std::string reason = unsupported_reason(g, n);
    if (!ops::lookup(n.builtin).supported() || !reason.empty())
      out.push_back({n.source_op, n.op, reason});
  }
  std::sort(out.begin(), out.end(),
            [](const UnsupportedOp& a, const UnsupportedOp& b) { return a.op_index < b.op_index; });
  return out;
}

std::string unsupported_message(const std::vector<UnsupportedOp>& ops) {
  std::map<std::string, int> by_name;
  for (const auto& u : ops) ++by_name[u.op];
  std::string msg = std::to_string(ops.size()) + " operator" + (ops.size() == 1 ? "" : "s") +
                    " cannot be converted:";
  bool first = true;
  for (const auto& [name, count] : by_name) {
    msg += (first ? " " : ", ") + name + (count > 1 ? " x" + std::to_string(count) : "");
    first = false;
  }
  for (const auto& u : ops)
    if (!u.reason.empty()) {
      msg +=
          " (first reason: op " + std::to_string(u.op_index) + " " + u.op + ": " + u.reason + ")";
      break;
    }
  return msg;
}

std::string io_layouts_json(const ir::Graph& g) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto list : {&g.inputs, &g.outputs})
    for (ir::TensorId t : *list)
      if (!g.tensor(t).layout.empty()) j[g.tensor(t).name] = g.tensor(t).layout;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status lower(ir::Graph& g, const ConvertOptions& options, Diagnostics& diag) {
  std::vector<ir::Node> out;
  out.reserve(g.nodes.size() * 2);
  ops::LowerContext ctx(g, out, options, diag);
  std::vector<ir::Node> nodes = std::move(g.nodes);
  g.nodes.clear();
  for (const auto& n : nodes) {
    if (options.cancelled && options.cancelled())
      return make_error(ErrorCode::kCancelled, "conversion cancelled");
    if (n.dialect == ir::Dialect::kOnnx) {
      out.push_back(n);
      continue;
    }
    if (auto st = ops::lookup(n.builtin).lower(ctx, n); !st) return st.take_error();
    ctx.finish();
    if (auto st = passes::check_created_bytes(g); !st) return st.take_error();
  }
  g.nodes = std::move(out);
  return ok_status();
}

}  // namespace

std::string version() { return LITE2ONNX_VERSION; }

Result<std::string> convert(std::span<const std::byte> tflite, const ConvertOptions& options,
                            Diagnostics& diag) {
  diag = Diagnostics{};
  diag.opset = options.opset;
  diag.model_bytes = tflite.size();
  if (options.opset < kMinOpset || options.opset > kMaxOpset)
    return make_error(ErrorCode::kInvalidOption,
                      "opset " + std::to_string(options.opset) + " is not supported (choose " +
                          std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")");
  auto total = std::make_unique<PhaseTimer>(diag, "total");

  const Limits limits = options.limits.resolved(tflite.size());
  Result<tflite_reader::ReadModel> read = Error{};
  {
    PhaseTimer t(diag, "read");
    read = tflite_reader::read(tflite, limits);
  }
  if (!read) return read.take_error();
  read->graph.created.set_limit(limits.max_created_bytes);
  // The cancellation hook is polled between phases and, while lowering,
  // between operators.
  auto cancelled = [&options] { return options.cancelled && options.cancelled(); };
  auto cancel_error = [] { return make_error(ErrorCode::kCancelled, "conversion cancelled"); };
  if (cancelled()) return cancel_error();
  ir::Graph& g = read->graph;
  for (const auto& s : read->subgraphs)
    diag.subgraphs.push_back(std::to_string(s.index) + " '" + s.name + "' (" +
                             std::to_string(s.operators) + " ops" +
                             (s.index == 0 ? ", converted)" : ", not converted)"));
  if (read->subgraphs.size() > 1)
    diag.warnings.push_back("model has " + std::to_string(read->subgraphs.size()) +
                            " subgraphs; only subgraph 0 is converted");
  for (const auto& n : g.nodes) ++diag.source_ops[n.op];

  {
    PhaseTimer t(diag, "check");
    // Every pass after validate() may rely on a validated graph.
    if (auto st = passes::validate(g); !st) return st.take_error();
    if (auto st = passes::sort_topologically(g); !st) return st.take_error();
    if (auto st = passes::fold_constant_dequantize(g); !st) return st.take_error();
    if (auto st = passes::fold_constants(g); !st) return st.take_error();
    if (auto st = passes::fuse_dilated_convolutions(g, diag); !st) return st.take_error();
    passes::fuse_spectral_magnitude(g);
    if (auto st = passes::plan_qdq(g, diag, options.quantization); !st) return st.take_error();
    diag.unsupported = preflight(g);
    if (!diag.unsupported.empty()) {
      Error e = make_error(ErrorCode::kUnsupported, unsupported_message(diag.unsupported));
      e.unsupported = diag.unsupported;
      return e;
    }
  }
  if (cancelled()) return cancel_error();
  {
    PhaseTimer t(diag, "layout");
    auto forced = passes::resolve_layouts(g, options.layout);
    if (!forced) return forced.take_error();
    if (auto st = passes::propagate_layouts(g, diag, *forced); !st) return st.take_error();
  }
  {
    PhaseTimer t(diag, "lower");
    if (auto st = lower(g, options, diag); !st) return st.take_error();
    passes::remove_identities(g);
    passes::merge_reshapes(g, diag);
  }
  if (cancelled()) return cancel_error();
  {
    PhaseTimer t(diag, "cleanup");
    auto transposes = [&g] {
      return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                            [](const ir::Node& n) { return n.op == "Transpose"; }));
    };
    diag.transposes_before_cleanup = transposes();
    passes::cleanup_transposes(g, diag);
    diag.transposes_after_cleanup = transposes();
  }
  {
    PhaseTimer t(diag, "quantization");
    if (auto st =
            passes::materialize_qdq(g, diag, options.quantization, options.keep_int8_activations);
        !st)
      return st.take_error();
    if (options.keep_float16_weights) passes::keep_float16_constants(g, diag);
  }
  for (auto [list, is_input] : {std::pair{&g.inputs, true}, std::pair{&g.outputs, false}})
    for (ir::TensorId t : *list)
      diag.io_layouts.push_back({g.tensor(t).name, is_input, g.tensor(t).layout});

  if (cancelled()) return cancel_error();
  Result<std::string> onnx = Error{};
  {
    PhaseTimer t(diag, "emit");
    onnx_emit::EmitOptions eo;
    eo.opset = options.opset;
    eo.producer_version = version();
    eo.cancelled = options.cancelled;
    eo.max_output_bytes = limits.max_output_bytes;
    eo.metadata.emplace_back("lite2onnx.io_layouts", io_layouts_json(g));
    onnx = onnx_emit::emit(g, eo);
  }
  if (!onnx) return onnx.take_error();
  for (const auto& n : g.nodes) ++diag.emitted_nodes[n.op];
  diag.onnx_bytes = onnx->size();
  total.reset();
  return onnx;
}

std::vector<OpSupport> support_matrix() {
  std::vector<OpSupport> out;
  for (auto [code, e] : ops::all_entries()) {
    OpSupport s;
    s.code = code;
    s.op = ir::builtin_name(code);
    s.supported = e->supported();
    if (s.supported) {
      s.layout_class = ops::to_string(e->layout);
      s.onnx = e->onnx;
      s.notes = e->notes;
      s.dtypes = e->dtypes;
      s.quantized = e->quantized == ops::QuantizedKernel::kRescale     ? "rescale"
                    : e->quantized == ops::QuantizedKernel::kSameScale ? "same scale"
                                                                       : "no";
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<ModelInfo> inspect(std::span<const std::byte> tflite, const Limits& given) {
  const Limits limits = given.resolved(tflite.size());
  auto read = tflite_reader::read(tflite, limits);
  if (!read) return read.take_error();
  read->graph.created.set_limit(limits.max_created_bytes);
  ModelInfo info;
  info.version = read->version;
  info.description = read->description;
  for (const auto& s : read->subgraphs)
    info.subgraphs.push_back(std::to_string(s.index) + " '" + s.name +
                             "': " + std::to_string(s.tensors) + " tensors, " +
                             std::to_string(s.operators) + " ops");
  ir::Graph& g = read->graph;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const ir::Tensor& t = g.tensors[i];
    TensorInfo ti;
    ti.index = static_cast<int>(i);
    ti.name = t.name;
    ti.dtype = ir::to_string(t.dtype);
    ti.shape = t.shape;
    ti.constant = t.is_const();
    ti.variable = t.is_variable;
    if (t.quant) {
      ti.quant_scales = t.quant->scale.size();
      ti.quant_axis = t.quant->axis;
    }
    info.tensors.push_back(std::move(ti));
  }
  info.inputs.assign(g.inputs.begin(), g.inputs.end());
  info.outputs.assign(g.outputs.begin(), g.outputs.end());
  for (const auto& n : g.nodes) {
    OpInfo oi;
    oi.index = n.source_op;
    oi.op = n.op;
    oi.inputs.assign(n.inputs.begin(), n.inputs.end());
    oi.outputs.assign(n.outputs.begin(), n.outputs.end());
    info.ops.push_back(std::move(oi));
  }
  if (auto st = passes::validate(g); !st) return st.take_error();
  if (auto st = passes::sort_topologically(g); !st) return st.take_error();
  if (auto st = passes::fold_constant_dequantize(g); !st) return st.take_error();
  if (auto st = passes::fold_constants(g); !st) return st.take_error();
  Diagnostics unused;
  if (auto st = passes::fuse_dilated_convolutions(g, unused); !st) return st.take_error();
  passes::fuse_spectral_magnitude(g);
  if (auto st = passes::plan_qdq(g, unused); !st) info.problems.push_back(st.error().message);
  for (const auto& w : unused.warnings) info.problems.push_back("warning: " + w);
  info.unsupported = preflight(g);
  for (const auto& u : info.unsupported)
    for (auto& oi : info.ops)
      if (oi.index == u.op_index) {
        oi.supported = false;
        oi.reason = u.reason.empty() ? "not implemented" : u.reason;
      }
  return info;
}

}  // namespace lite2onnx
