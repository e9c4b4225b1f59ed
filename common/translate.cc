#include "common/translate.h"

#include <cctype>

#include "common/error_reasons.h"
#include "core/option_table.h"

namespace lite2onnx {
namespace {

using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;

// The options' fields, by reflection: each is named as its entry of the option
// table (a unit test checks that they match one to one, with their types).
const FieldDescriptor* wire_field(const OptionDef& def) {
  return v1::ConvertOptions::descriptor()->FindFieldByName(std::string(def.name));
}

// Whether an enum value stands for a choice: its name ends in _CHOICE
// (QUANTIZATION_MODE_DEQUANTIZE for "dequantize").
bool names_choice(const EnumValueDescriptor& value, std::string_view choice) {
  std::string suffix = "_";
  for (char c : choice) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return value.name().ends_with(suffix);
}

// The texts of a field, as the option table reads them: one per element of a
// repeated field, none for a zero integer or enum or an empty string (the
// default), and for an enum value the choice it names (its number when it
// names none).
std::vector<std::string> wire_texts(const v1::ConvertOptions& in, const OptionDef& def) {
  const FieldDescriptor* f = wire_field(def);
  const auto* r = in.GetReflection();
  std::vector<std::string> out;
  if (f->is_repeated()) {
    for (int i = 0; i < r->FieldSize(in, f); ++i) out.push_back(r->GetRepeatedString(in, f, i));
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
    if (int value = r->GetInt32(in, f)) out.push_back(std::to_string(value));
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
    out.push_back(r->GetBool(in, f) ? "true" : "false");
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    if (std::string text = r->GetString(in, f); !text.empty()) out.push_back(std::move(text));
  } else if (int number = r->GetEnumValue(in, f)) {
    out.push_back(std::to_string(number));
    const EnumValueDescriptor* value = f->enum_type()->FindValueByNumber(number);
    for (std::string_view choice : def.choices)
      if (value && names_choice(*value, choice)) out.back() = choice;
  }
  return out;
}

// Sets (or appends to) the field of `def` from a canonical text of the table.
void set_wire(v1::ConvertOptions& out, const OptionDef& def, const std::string& text) {
  const FieldDescriptor* f = wire_field(def);
  const auto* r = out.GetReflection();
  if (f->is_repeated()) {
    r->AddString(&out, f, text);
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
    r->SetInt32(&out, f, std::stoi(text));
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
    r->SetBool(&out, f, text == "true");
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    r->SetString(&out, f, text);
  } else {
    for (int i = 0; i < f->enum_type()->value_count(); ++i)
      if (names_choice(*f->enum_type()->value(i), text))
        r->SetEnumValue(&out, f, f->enum_type()->value(i)->number());
  }
}

template <class Map>
std::map<std::string, int> to_map(const Map& m) {
  return {m.begin(), m.end()};
}

template <class T, class Repeated>
std::vector<T> to_vector(const Repeated& r) {
  return {r.begin(), r.end()};
}

void to_proto(const TfliteMetadata& m, v1::TfliteMetadata* out) {
  out->set_present(m.present);
  out->set_name(m.name);
  out->set_description(m.description);
  out->set_version(m.version);
  out->set_author(m.author);
  out->set_license(m.license);
  out->set_min_parser_version(m.min_parser_version);
  for (auto [list, wire] :
       {std::pair{&m.inputs, out->mutable_inputs()}, std::pair{&m.outputs, out->mutable_outputs()}})
    for (const auto& t : *list) {
      auto* o = wire->Add();
      o->set_tensor(t.tensor);
      o->set_name(t.name);
      o->set_description(t.description);
      o->set_content(t.content);
      o->mutable_mean()->Add(t.mean.begin(), t.mean.end());
      o->mutable_std()->Add(t.std.begin(), t.std.end());
      o->mutable_min()->Add(t.min.begin(), t.min.end());
      o->mutable_max()->Add(t.max.begin(), t.max.end());
      o->mutable_associated_files()->Add(t.associated_files.begin(), t.associated_files.end());
    }
  for (const auto& f : m.associated_files) {
    auto* o = out->add_associated_files();
    o->set_name(f.name);
    o->set_type(f.type);
    o->set_description(f.description);
    o->set_locale(f.locale);
    o->set_packed(f.packed);
    o->set_size(f.size);
    o->set_embedded(f.embedded);
    o->set_content(f.content);
    o->set_note(f.note);
  }
}

TfliteMetadata from_proto(const v1::TfliteMetadata& in) {
  TfliteMetadata m;
  m.present = in.present();
  m.name = in.name();
  m.description = in.description();
  m.version = in.version();
  m.author = in.author();
  m.license = in.license();
  m.min_parser_version = in.min_parser_version();
  for (auto [wire, list] :
       {std::pair{&in.inputs(), &m.inputs}, std::pair{&in.outputs(), &m.outputs}})
    for (const auto& t : *wire) {
      TensorMetadataInfo o;
      o.tensor = t.tensor();
      o.name = t.name();
      o.description = t.description();
      o.content = t.content();
      o.mean = to_vector<float>(t.mean());
      o.std = to_vector<float>(t.std());
      o.min = to_vector<float>(t.min());
      o.max = to_vector<float>(t.max());
      o.associated_files = to_vector<std::string>(t.associated_files());
      list->push_back(std::move(o));
    }
  for (const auto& f : in.associated_files()) {
    AssociatedFileInfo o;
    o.name = f.name();
    o.type = f.type();
    o.description = f.description();
    o.locale = f.locale();
    o.packed = f.packed();
    o.size = f.size();
    o.embedded = f.embedded();
    o.content = f.content();
    o.note = f.note();
    m.associated_files.push_back(std::move(o));
  }
  return m;
}

}  // namespace

Result<ConvertOptions> to_core(const v1::ConvertOptions& in) {
  ConvertOptions out;
  for (const OptionDef& def : option_table()) {
    const auto texts = wire_texts(in, def);
    for (size_t i = 0; i < texts.size(); ++i) {
      // Errors name the field, and the element of a repeated one: "explicit_layouts[1]: ...".
      std::string label(def.name);
      if (def.repeated()) label += "[" + std::to_string(i) + "]";
      if (auto st = def.parse(out, texts[i], label); !st) return st.take_error();
    }
  }
  return out;
}

void to_proto(const Diagnostics& d, v1::Diagnostics* out) {
  out->set_opset(d.opset);
  out->set_model_bytes(d.model_bytes);
  out->set_onnx_bytes(d.onnx_bytes);
  out->mutable_source_ops()->insert(d.source_ops.begin(), d.source_ops.end());
  out->mutable_emitted_nodes()->insert(d.emitted_nodes.begin(), d.emitted_nodes.end());
  for (const auto& n : d.inserted) {
    auto* o = out->add_inserted();
    o->set_node(n.node);
    o->set_op_type(n.op_type);
    o->set_tensor(n.tensor);
    o->set_reason(n.reason);
  }
  out->set_transposes_before_cleanup(d.transposes_before_cleanup);
  out->set_transposes_after_cleanup(d.transposes_after_cleanup);
  for (const auto& r : d.rewritten_initializers) {
    auto* o = out->add_rewritten_initializers();
    o->set_tensor(r.tensor);
    o->set_reason(r.reason);
  }
  for (const auto& io : d.io_layouts) {
    auto* o = out->add_io_layouts();
    o->set_tensor(io.tensor);
    o->set_is_input(io.is_input);
    o->mutable_perm()->Add(io.perm.begin(), io.perm.end());
  }
  out->mutable_warnings()->Add(d.warnings.begin(), d.warnings.end());
  to_proto(d.unsupported, out->mutable_unsupported());
  for (const auto& t : d.timings) {
    auto* o = out->add_timings();
    o->set_phase(t.phase);
    o->set_milliseconds(t.ms);
  }
  out->mutable_subgraphs()->Add(d.subgraphs.begin(), d.subgraphs.end());
  out->set_cache(d.cache);
  if (!d.quantization.mode.empty()) {
    const QuantizationReport& q = d.quantization;
    auto* o = out->mutable_quantization();
    o->set_mode(q.mode);
    o->mutable_nodes()->insert(q.nodes.begin(), q.nodes.end());
    o->set_cancelled_pairs(q.cancelled_pairs);
    o->set_integer_initializers(q.integer_initializers);
    o->set_integer_initializer_bytes(q.integer_initializer_bytes);
    o->set_quantized_activations(q.quantized_activations);
    o->set_int8_activations_as_uint8(q.int8_activations_as_uint8);
  }
}

void to_proto(const ModelInfo& info, v1::InspectResponse* out) {
  out->set_version(info.version);
  out->set_description(info.description);
  out->mutable_subgraphs()->Add(info.subgraphs.begin(), info.subgraphs.end());
  for (const auto& t : info.tensors) {
    auto* o = out->add_tensors();
    o->set_index(t.index);
    o->set_name(t.name);
    o->set_dtype(t.dtype);
    o->mutable_shape()->Add(t.shape.begin(), t.shape.end());
    o->set_constant(t.constant);
    o->set_variable(t.variable);
    o->set_sparse(t.sparse);
    o->set_quant_scales(static_cast<uint32_t>(t.quant_scales));
    o->set_quant_axis(t.quant_axis);
  }
  out->mutable_inputs()->Add(info.inputs.begin(), info.inputs.end());
  out->mutable_outputs()->Add(info.outputs.begin(), info.outputs.end());
  for (const auto& op : info.ops) {
    auto* o = out->add_ops();
    o->set_index(op.index);
    o->set_op(op.op);
    o->mutable_inputs()->Add(op.inputs.begin(), op.inputs.end());
    o->mutable_outputs()->Add(op.outputs.begin(), op.outputs.end());
    o->set_supported(op.supported);
    o->set_reason(op.reason);
    o->set_reason_code(op.reason_code);
  }
  to_proto(info.unsupported, out->mutable_unsupported());
  out->mutable_problems()->Add(info.problems.begin(), info.problems.end());
  if (info.metadata.present) to_proto(info.metadata, out->mutable_metadata());
  for (const auto& sig : info.signatures) {
    auto* o = out->add_signatures();
    o->set_key(sig.key);
    o->set_subgraph(sig.subgraph);
    for (auto [list, wire] : {std::pair{&sig.inputs, o->mutable_inputs()},
                              std::pair{&sig.outputs, o->mutable_outputs()}})
      for (const auto& t : *list) {
        auto* w = wire->Add();
        w->set_alias(t.alias);
        w->set_tensor(t.tensor);
        w->set_name(t.name);
        w->set_dtype(t.dtype);
        w->mutable_shape()->Add(t.shape.begin(), t.shape.end());
      }
  }
  out->set_subgraph(info.subgraph);
}

v1::ListOperatorsResponse to_proto(const std::vector<OpSupport>& matrix) {
  v1::ListOperatorsResponse out;
  for (const auto& s : matrix) {
    if (s.op.rfind("PLACEHOLDER", 0) == 0) continue;  // unused codes of the TFLite enum
    auto* o = out.add_operators();
    o->set_op(s.op);
    o->set_code(s.code);
    o->set_supported(s.supported);
    o->set_layout_class(s.layout_class);
    o->set_onnx(s.onnx);
    o->set_notes(s.notes);
    o->set_quantized(s.quantized);
    o->set_exact(s.exact);
    o->set_in_auto(s.in_auto);
    for (size_t pos = 0; pos < s.dtypes.size();) {
      size_t end = s.dtypes.find(", ", pos);
      if (end == std::string::npos) end = s.dtypes.size();
      o->add_dtypes(s.dtypes.substr(pos, end - pos));
      pos = end + 2;
    }
  }
  out.set_converter_version(version());
  out.set_min_opset(kMinOpset);
  out.set_max_opset(kMaxOpset);
  return out;
}

std::string summary(const v1::ConvertOptions& o) {
  std::vector<std::vector<std::string>> texts;
  for (const OptionDef& def : option_table()) texts.push_back(wire_texts(o, def));
  std::string s = options_summary(texts);
  // The layout strings come from the client: keep log lines bounded.
  constexpr size_t kMaxChars = 256;
  if (s.size() > kMaxChars) s = s.substr(0, kMaxChars - 3) + "...";
  return s;
}

v1::ConvertOptions to_proto(const ConvertOptions& in) {
  v1::ConvertOptions out;
  for (const OptionDef& def : option_table())
    for (const std::string& text : def.format(in)) set_wire(out, def, text);
  return out;
}

void to_proto(const std::vector<UnsupportedOp>& ops,
              google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>* out) {
  for (const auto& u : ops) {
    auto* o = out->Add();
    o->set_op_index(u.op_index);
    o->set_op(u.op);
    o->set_reason(u.reason);
    o->set_reason_code(u.reason_code);
    if (u.subgraph >= 0) o->set_subgraph(u.subgraph);
  }
}

std::vector<UnsupportedOp> from_proto(
    const google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>& ops) {
  std::vector<UnsupportedOp> out;
  out.reserve(ops.size());
  for (const auto& u : ops)
    out.push_back(
        {u.op_index(), u.op(), u.reason(), u.reason_code(), u.has_subgraph() ? u.subgraph() : -1});
  return out;
}

Diagnostics from_proto(const v1::Diagnostics& in) {
  Diagnostics d;
  d.opset = in.opset();
  d.model_bytes = in.model_bytes();
  d.onnx_bytes = in.onnx_bytes();
  d.source_ops = to_map(in.source_ops());
  d.emitted_nodes = to_map(in.emitted_nodes());
  for (const auto& n : in.inserted())
    d.inserted.push_back({n.node(), n.op_type(), n.tensor(), n.reason()});
  d.transposes_before_cleanup = in.transposes_before_cleanup();
  d.transposes_after_cleanup = in.transposes_after_cleanup();
  for (const auto& r : in.rewritten_initializers())
    d.rewritten_initializers.push_back({r.tensor(), r.reason()});
  for (const auto& io : in.io_layouts())
    d.io_layouts.push_back({io.tensor(), io.is_input(), to_vector<int>(io.perm())});
  if (in.has_quantization()) {
    const v1::QuantizationReport& q = in.quantization();
    d.quantization.mode = q.mode();
    d.quantization.nodes = to_map(q.nodes());
    d.quantization.cancelled_pairs = q.cancelled_pairs();
    d.quantization.integer_initializers = q.integer_initializers();
    d.quantization.integer_initializer_bytes = q.integer_initializer_bytes();
    d.quantization.quantized_activations = q.quantized_activations();
    d.quantization.int8_activations_as_uint8 = q.int8_activations_as_uint8();
  }
  d.warnings = to_vector<std::string>(in.warnings());
  d.unsupported = from_proto(in.unsupported());
  for (const auto& t : in.timings()) d.timings.push_back({t.phase(), t.milliseconds()});
  d.subgraphs = to_vector<std::string>(in.subgraphs());
  d.cache = in.cache();
  return d;
}

ModelInfo from_proto(const v1::InspectResponse& in) {
  ModelInfo info;
  info.version = in.version();
  info.description = in.description();
  info.subgraphs = to_vector<std::string>(in.subgraphs());
  for (const auto& t : in.tensors()) {
    TensorInfo o;
    o.index = t.index();
    o.name = t.name();
    o.dtype = t.dtype();
    o.shape = to_vector<int64_t>(t.shape());
    o.constant = t.constant();
    o.variable = t.variable();
    o.sparse = t.sparse();
    o.quant_scales = t.quant_scales();
    o.quant_axis = t.quant_axis();
    info.tensors.push_back(std::move(o));
  }
  info.inputs = to_vector<int>(in.inputs());
  info.outputs = to_vector<int>(in.outputs());
  for (const auto& op : in.ops()) {
    OpInfo o;
    o.index = op.index();
    o.op = op.op();
    o.inputs = to_vector<int>(op.inputs());
    o.outputs = to_vector<int>(op.outputs());
    o.supported = op.supported();
    o.reason = op.reason();
    o.reason_code = op.reason_code();
    info.ops.push_back(std::move(o));
  }
  info.unsupported = from_proto(in.unsupported());
  info.problems = to_vector<std::string>(in.problems());
  if (in.has_metadata()) info.metadata = from_proto(in.metadata());
  for (const auto& sig : in.signatures()) {
    SignatureInfo o;
    o.key = sig.key();
    o.subgraph = sig.subgraph();
    for (auto [wire, list] :
         {std::pair{&sig.inputs(), &o.inputs}, std::pair{&sig.outputs(), &o.outputs}})
      for (const auto& t : *wire)
        list->push_back(
            {t.alias(), t.tensor(), t.name(), t.dtype(), to_vector<int64_t>(t.shape())});
    info.signatures.push_back(std::move(o));
  }
  info.subgraph = in.subgraph();
  return info;
}

std::vector<OpSupport> from_proto(const v1::ListOperatorsResponse& in) {
  std::vector<OpSupport> out;
  out.reserve(in.operators_size());
  for (const auto& s : in.operators()) {
    OpSupport o;
    o.code = s.code();
    o.op = s.op();
    o.supported = s.supported();
    o.layout_class = s.layout_class();
    o.onnx = s.onnx();
    o.notes = s.notes();
    for (const auto& t : s.dtypes()) o.dtypes += (o.dtypes.empty() ? "" : ", ") + t;
    o.quantized = s.quantized();
    o.exact = s.exact();
    o.in_auto = s.in_auto();
    out.push_back(std::move(o));
  }
  return out;
}

v1::ConversionError to_proto(const Error& error) {
  v1::ConversionError out;
  out.set_reason(
      static_cast<v1::ConversionError::Reason>(reason_named(to_string(error.code)).proto_reason));
  out.set_message(error.message);
  out.set_op_index(error.op_index);
  out.set_tensor(error.tensor);
  to_proto(error.unsupported, out.mutable_unsupported());
  return out;
}

v1::ConversionError to_proto(const Failure& failure) {
  v1::ConversionError out = to_proto(failure.error);
  out.set_reason(static_cast<v1::ConversionError::Reason>(failure.reason->proto_reason));
  return out;
}

Failure failure_of(const v1::ConversionError& error) {
  Failure f = make_failure(reason_of_proto(error.reason()), error.message());
  f.error.op_index = error.op_index();
  f.error.tensor = error.tensor();
  f.error.unsupported = from_proto(error.unsupported());
  return f;
}

}  // namespace lite2onnx
