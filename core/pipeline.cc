#include "core/pipeline.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/names.h"
#include "core/onnx/emit.h"
#include "core/ops/registry.h"
#include "core/passes/interface.h"
#include "core/passes/passes.h"
#include "core/preflight.h"
#include "core/provenance.h"
#include "core/tflite/metadata.h"
#include "core/tflite/reader.h"
#include "core/version.h"

namespace lite2onnx {
namespace {

// Rounds of folding, each after shapes are inferred again (kFold).
constexpr int kFoldRounds = 4;

// Each stage's name, and the phase of the diagnostics' timings it counts in,
// in the order of the Stage enum.
struct StageNames {
  Stage stage;
  const char* name;
  const char* phase;
};
constexpr StageNames kStageNames[] = {
    {Stage::kRead, "read", "read"},
    {Stage::kValidate, "validate", "check"},
    {Stage::kSort, "sort", "check"},
    {Stage::kInferShapes, "infer_shapes", "check"},
    {Stage::kFold, "fold", "check"},
    {Stage::kFuse, "fuse", "check"},
    {Stage::kPlanQuantization, "plan_quantization", "check"},
    {Stage::kPreflight, "preflight", "check"},
    {Stage::kLayout, "layout", "layout"},
    {Stage::kLower, "lower", "lower"},
    {Stage::kCleanup, "cleanup", "cleanup"},
    {Stage::kQuantize, "quantize", "quantization"},
};
static_assert(std::size(kStageNames) == static_cast<size_t>(Stage::kQuantize) + 1);
static_assert([] {
  for (size_t i = 0; i < std::size(kStageNames); ++i)
    if (kStageNames[i].stage != static_cast<Stage>(i)) return false;
  return true;
}());

const StageNames& names_of(Stage s) { return kStageNames[static_cast<size_t>(s)]; }
const char* phase(Stage s) { return names_of(s).phase; }

void add_time(Diagnostics& d, const char* name, std::chrono::steady_clock::time_point start) {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!d.timings.empty() && d.timings.back().phase == name)
    d.timings.back().ms += ms;
  else
    d.timings.push_back({name, ms});
}

// Transposes in the graph and the graphs its nodes own.
int count_transposes(const ir::Graph& g) {
  int count = 0;
  ir::for_each_graph(g, [&](const ir::Graph& x) {
    for (const ir::Node& n : x.nodes()) count += n.op == "Transpose";
  });
  return count;
}

void compact_all(ir::Graph& g) {
  ir::for_each_graph(g, [](ir::Graph& x) { x.compact(); });
}

// Runs `pass` on the graph and then on every graph its nodes own (control
// flow), each compacted first, stopping at the first error.
template <class Pass>
Status each_graph(ir::Graph& g, Pass&& pass) {
  Status st = ok_status();
  ir::for_each_graph(g, [&](ir::Graph& x) {
    if (!st) return;
    x.compact();
    st = pass(x);
  });
  return st;
}

std::string io_layouts_json(const ir::Graph& g) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto list : {&g.inputs(), &g.outputs()})
    for (ir::TensorId t : *list)
      if (!g.tensor(t).layout.empty()) j[g.tensor(t).name] = g.tensor(t).layout;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// lite2onnx.signature: the signature converted, its aliases mapped to the
// TFLite names of their tensors, in TFLite's order (sorted by alias).
std::string signature_json(const tflite_reader::Signature& sig) {
  nlohmann::ordered_json j = {{"key", sig.key}, {"subgraph", sig.subgraph}};
  for (auto [list, field] :
       {std::pair{&sig.inputs, "inputs"}, std::pair{&sig.outputs, "outputs"}}) {
    nlohmann::ordered_json names = nlohmann::ordered_json::object();
    for (const auto& t : *list) names[t.alias] = t.name;
    j[field] = std::move(names);
  }
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// --io-names signature: each graph input and output that the signature gives
// an alias is named after it. ONNX names are unique, so a name an earlier
// input or output has (inputs first, then outputs, as the emitter takes them)
// gets a suffix, with a warning; a tensor inside the graph named like an
// alias is renamed by the emitter instead. Returns the TFLite name of every
// tensor renamed.
std::vector<std::pair<std::string, ir::TensorId>> name_after_aliases(
    ir::Graph& g, const tflite_reader::Signature& sig, std::vector<std::string>& warnings) {
  const std::string where = "signature '" + sig.key + "'";
  std::unordered_map<ir::TensorId, const std::string*> aliases;
  for (auto [list, is_input] : {std::pair{&sig.inputs, true}, std::pair{&sig.outputs, false}})
    for (const auto& t : *list) {
      const auto id = static_cast<ir::TensorId>(t.tensor);
      const char* what = is_input ? "input" : "output";
      if (!(is_input ? g.is_graph_input(id) : g.is_graph_output(id))) {
        warnings.push_back(where + " " + what + " '" + t.alias + "' is tensor " +
                           std::to_string(t.tensor) + " '" + t.name + "', not a graph " + what +
                           ": the alias names nothing in the ONNX model");
        continue;
      }
      if (t.alias.empty()) continue;
      auto [at, fresh] = aliases.try_emplace(id, &t.alias);
      if (!fresh && *at->second != t.alias)
        warnings.push_back(where + ": '" + *at->second + "' and '" + t.alias + "' name tensor '" +
                           t.name + "'; the ONNX model calls it '" + *at->second + "'");
    }
  std::vector<std::pair<std::string, ir::TensorId>> renamed;
  ir::UniqueNames names{"__", 1};  // as the emitter makes names unique
  std::unordered_set<ir::TensorId> named;
  for (auto list : {&g.inputs(), &g.outputs()})
    for (ir::TensorId t : *list) {
      if (!named.insert(t).second) continue;
      auto alias = aliases.find(t);
      const std::string& wanted = alias != aliases.end() ? *alias->second : g.tensor(t).name;
      std::string name = names.take(wanted);
      if (alias != aliases.end() && name != wanted)
        warnings.push_back(where + ": the name '" + wanted + "' is taken by another graph " +
                           "input or output; tensor '" + g.tensor(t).name + "' is called '" + name +
                           "'");
      if (name == g.tensor(t).name) continue;
      renamed.emplace_back(g.tensor(t).name, t);
      g.tensor(t).name = std::move(name);
    }
  return renamed;
}

}  // namespace

const char* to_string(Stage s) { return names_of(s).name; }

Pipeline::Pipeline(std::span<const std::byte> model, const ConvertOptions& options,
                   Diagnostics& diagnostics)
    : model_(model),
      options_(options),
      diag_(diagnostics),
      limits_(options.limits.resolved(model.size())),
      checkpoint_(options.cancelled) {}

Status Pipeline::run_until(Stage last) {
  for (int s = done_ ? static_cast<int>(*done_) + 1 : 0; s <= static_cast<int>(last); ++s) {
    if (failed_) return *failed_;
    const auto stage = static_cast<Stage>(s);
    const auto start = std::chrono::steady_clock::now();
    Status st = run(stage);
    add_time(diag_, phase(stage), start);
    if (!st) {
      failed_ = st.error();
      return st;
    }
    compact_all(graph_);
    done_ = stage;
  }
  if (failed_) return *failed_;
  return ok_status();
}

Status Pipeline::run(Stage s) {
  passes::PassContext ctx{diag_, options_, checkpoint_};
  if (checkpoint_.should_stop()) return checkpoint_.status();
  switch (s) {
    case Stage::kRead: {
      auto read =
          tflite_reader::read(model_, limits_, ops::read_options, checkpoint_, options_.signature);
      if (!read) return read.take_error();
      graph_ = std::move(read->graph);
      version_ = read->version;
      description_ = std::move(read->description);
      metadata_ = std::move(read->metadata);
      subgraphs_ = std::move(read->subgraphs);
      reached_ = std::move(read->reached);
      converted_tensors_ = read->tensors;
      signatures_ = std::move(read->signatures);
      signature_ = read->signature;
      subgraph_ = read->subgraph;
      // Select-TF ops with a builtin twin are that builtin from here on.
      if (auto st =
              each_graph(graph_, [](ir::Graph& g) { return passes::rewrite_select_tf_ops(g); });
          !st)
        return st;
      const std::string via =
          signature_ < 0
              ? ""
              : " (signature '" + signatures_[static_cast<size_t>(signature_)].key + "')";
      if (options_.io_names == IoNames::kSignature) {
        if (signature_ < 0)
          diag_.warnings.push_back(
              "io_names=signature: the model has no signatures; the graph inputs and outputs "
              "keep their tensor names");
        else
          tflite_names_ = name_after_aliases(graph_, signatures_[static_cast<size_t>(signature_)],
                                             diag_.warnings);
      }
      // The interface as the options ask for it (names, then fixed input
      // shapes), before anything reads the shapes.
      if (auto st = passes::rename_interface(graph_, options_, tflite_names_); !st) return st;
      if (auto st = passes::fix_input_shapes(graph_, options_, tflite_names_, diag_.warnings); !st)
        return st;
      // TFLite Support's metadata and associated files: never an error, a
      // warning for what cannot be read.
      if (!options_.no_metadata)
        tflite_metadata_ =
            tflite_reader::read_metadata(model_, metadata_, graph_, diag_.warnings, {}, subgraph_);
      size_t left_out = 0;
      for (const auto& sub : subgraphs_) {
        const bool run = std::find(reached_.begin(), reached_.end(), sub.index) != reached_.end();
        left_out += sub.index != subgraph_ && !run;
        diag_.subgraphs.push_back(std::to_string(sub.index) + " '" + sub.name + "' (" +
                                  std::to_string(sub.operators) + " ops" +
                                  (sub.index == subgraph_ ? ", converted" + via + ")"
                                   : run                  ? ", run by control flow)"
                                                          : ", not converted)"));
      }
      if (left_out > 0)
        diag_.warnings.push_back("model has " + std::to_string(subgraphs_.size()) +
                                 " subgraphs; only subgraph " + std::to_string(subgraph_) + via +
                                 (reached_.empty() ? std::string(" is converted")
                                                   : " and the " + std::to_string(reached_.size()) +
                                                         " its control flow runs are converted"));
      // Each TFLite op once: the nodes of the converted subgraph and of every
      // subgraph it runs (a WHILE's condition, copied twice, counts once).
      std::set<std::pair<int, int>> counted;
      ir::for_each_graph(graph_, [&](const ir::Graph& x) {
        for (const ir::Node& n : x.nodes())
          if (n.dialect == ir::Dialect::kTflite &&
              counted.emplace(n.source_subgraph, n.source_op).second)
            ++diag_.source_ops[n.attrs.get_string("select_tf_op", n.op)];
      });
      return ok_status();
    }
    // Control flow: the graphs a node owns are graphs like the main one; most
    // passes run on each of them in turn (each_graph), the ones that carry
    // something across the boundary (shapes, layouts, lowering) recurse
    // themselves.
    case Stage::kValidate:
      // Model state (resource variables, the variable tensors of stateful
      // ops) becomes state pairs once the graphs are valid; the ops as the
      // file has them are what inspect lists (kRead).
      if (auto st =
              each_graph(graph_, [&](ir::Graph& g) { return passes::fold_blockwise(g, ctx); });
          !st)
        return st;
      if (auto st = each_graph(graph_, [&](ir::Graph& g) { return passes::validate(g, ctx); }); !st)
        return st;
      if (auto st = passes::lower_tensor_lists(graph_, ctx); !st) return st;
      return passes::expose_state(graph_, ctx);
    case Stage::kSort:
      return each_graph(graph_, [&](ir::Graph& g) { return passes::sort_topologically(g, ctx); });
    case Stage::kInferShapes:
      return passes::infer_shapes(graph_, ctx);
    case Stage::kFold:
      // Shape arithmetic folded into constants settles shapes the first
      // inference could not (a RESIZE whose size is SHAPE -> STRIDED_SLICE ->
      // MUL of a static tensor): while folding removes nodes, shapes are
      // inferred again and what they make constant folded (a few rounds).
      for (int round = 1;; ++round) {
        const size_t before = ir::total_nodes(graph_);
        if (auto st = each_graph(graph_,
                                 [&](ir::Graph& g) {
                                   if (auto st = passes::fold_constant_dequantize(g, ctx); !st)
                                     return st;
                                   g.compact();
                                   return passes::fold_constants(g, ctx);
                                 });
            !st)
          return st;
        if (ir::total_nodes(graph_) == before || round == kFoldRounds) return ok_status();
        if (auto st = passes::infer_shapes(graph_, ctx); !st) return st;
      }
    case Stage::kFuse:
      return each_graph(graph_, [&](ir::Graph& g) {
        if (auto st = passes::fuse_dilated_convolutions(g, ctx); !st) return st;
        g.compact();
        return passes::fuse_spectral_magnitude(g, ctx);
      });
    case Stage::kPlanQuantization:
      if (auto st = each_graph(graph_,
                               [&](ir::Graph& g) {
                                 if (auto st = passes::plan_qdq(g, ctx); !st) return st;
                                 return passes::dequantize_float_kernel_inputs(g, ctx);
                               });
          !st)
        return st;
      return passes::pick_tflite_kernels(graph_, ctx);
    case Stage::kPreflight: {
      diag_.unsupported = preflight(graph_, options_.quantization);
      if (diag_.unsupported.empty()) {
        if (auto e = interface_problem(graph_)) return *e;
        return ok_status();
      }
      Error e = make_error(ErrorCode::kUnsupported, unsupported_message(diag_.unsupported));
      e.unsupported = diag_.unsupported;
      return e;
    }
    case Stage::kLayout: {
      auto forced = passes::resolve_layouts(graph_, options_.layout, tflite_names_);
      if (!forced) return forced.take_error();
      return passes::propagate_layouts(graph_, ctx, *forced);
    }
    case Stage::kLower:
      if (auto st = passes::check_lowering_fits(graph_); !st) return st;
      // Lowers the graphs nodes own first, each with its cleanups.
      return passes::lower_graph(graph_, ctx);
    case Stage::kCleanup: {
      diag_.transposes_before_cleanup = count_transposes(graph_);
      if (auto st =
              each_graph(graph_, [&](ir::Graph& g) { return passes::cleanup_transposes(g, ctx); });
          !st)
        return st;
      diag_.transposes_after_cleanup = count_transposes(graph_);
      return ok_status();
    }
    case Stage::kQuantize:
      if (auto st = each_graph(graph_,
                               [&](ir::Graph& g) {
                                 if (auto st = passes::materialize_qdq(g, ctx); !st) return st;
                                 g.compact();
                                 if (options_.keep_float16_weights)
                                   return passes::keep_float16_constants(g, ctx);
                                 return ok_status();
                               });
          !st)
        return st;
      for (auto [list, is_input] :
           {std::pair{&graph_.inputs(), true}, std::pair{&graph_.outputs(), false}})
        for (ir::TensorId t : *list)
          diag_.io_layouts.push_back({graph_.tensor(t).name, is_input, graph_.tensor(t).layout});
      return ok_status();
  }
  return ok_status();
}

Result<size_t> Pipeline::emit(const OutputBuffer& output) {
  return emit_with(
      [&](const onnx_emit::EmitOptions& eo) { return onnx_emit::emit(graph_, eo, output); }, false);
}

Result<size_t> Pipeline::emit(OutputStream& output) {
  return emit_with(
      [&](const onnx_emit::EmitOptions& eo) { return onnx_emit::emit(graph_, eo, output); },
      output.positional());
}

Result<size_t> Pipeline::emit_with(const EmitWriter& write, bool hash_last) {
  if (auto st = run_until(Stage::kQuantize); !st) return st.take_error();
  if (checkpoint_.should_stop()) return checkpoint_.status().take_error();
  const auto start = std::chrono::steady_clock::now();
  onnx_emit::EmitOptions eo;
  eo.opset = options_.opset;
  eo.producer_version = version();
  eo.checkpoint = &checkpoint_;
  eo.max_output_bytes = limits_.max_output_bytes;
  eo.max_subgraph_depth = limits_.max_subgraph_depth;
  eo.metadata.emplace_back("lite2onnx.io_layouts", io_layouts_json(graph_));
  if (signature_ >= 0)
    eo.metadata.emplace_back("lite2onnx.signature",
                             signature_json(signatures_[static_cast<size_t>(signature_)]));
  // The source's SHA-256: ~0.65 ms per MB here, as much as the rest of a
  // conversion of a large model; a caller that has it passes it. Written
  // last, a placeholder of its size stands in for it until then, so that a
  // caller can hash beside the conversion and the writing.
  auto hash = [this] {
    return options_.source_sha256
               ? options_.source_sha256()
               : sha256_hex(model_, [this] { return checkpoint_.should_stop(); });
  };
  const std::string sha256 = hash_last ? std::string(64, '0') : hash();
  if (checkpoint_.should_stop()) return checkpoint_.status().take_error();
  if (hash_last) eo.late = {kSourceSha256Key, hash};
  for (auto& entry : provenance_metadata(
           {sha256, version_, description_, metadata_, &tflite_metadata_}, options_))
    eo.metadata.push_back(std::move(entry));
  Result<size_t> onnx = write(eo);
  add_time(diag_, "emit", start);
  if (!onnx) return onnx;
  ir::for_each_graph(graph_, [&](const ir::Graph& g) {
    for (const ir::Node& n : g.nodes()) {
      ++diag_.emitted_nodes[n.op];
      if (n.inserted)
        diag_.inserted.push_back({n.name, n.op, n.inserted->tensor, n.inserted->reason});
    }
  });
  diag_.onnx_bytes = *onnx;
  return onnx;
}

}  // namespace lite2onnx
