#include "client/remote/wire.h"

#include "google/rpc/status.pb.h"

namespace lite2onnx::remote {
namespace {

template <class Map>
std::map<std::string, int> to_map(const Map& m) {
  return {m.begin(), m.end()};
}

template <class T, class Repeated>
std::vector<T> to_vector(const Repeated& r) {
  return {r.begin(), r.end()};
}

}  // namespace

v1::ConvertOptions to_proto(const ConvertOptions& in) {
  v1::ConvertOptions out;
  out.set_opset(in.opset);
  for (const auto& spec : in.layout.explicit_layouts) out.add_explicit_layouts(spec.text());
  for (const auto& spec : in.layout.io_layouts) out.add_io_layouts(spec.text());
  out.set_keep_io_layout(in.layout.keep_io_layout);
  out.set_quantization(in.quantization == QuantizationMode::kDequantize
                           ? v1::QUANTIZATION_MODE_DEQUANTIZE
                           : v1::QUANTIZATION_MODE_QDQ);
  out.set_keep_float16_weights(in.keep_float16_weights);
  out.set_keep_int8_activations(in.keep_int8_activations);
  return out;
}

std::vector<UnsupportedOp> from_proto(
    const google::protobuf::RepeatedPtrField<v1::UnsupportedOperator>& ops) {
  std::vector<UnsupportedOp> out;
  out.reserve(ops.size());
  for (const auto& u : ops) out.push_back({u.op_index(), u.op(), u.reason()});
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
    info.ops.push_back(std::move(o));
  }
  info.unsupported = from_proto(in.unsupported());
  info.problems = to_vector<std::string>(in.problems());
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
    out.push_back(std::move(o));
  }
  return out;
}

std::optional<v1::ConversionError> conversion_error(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details()))
    return std::nullopt;
  for (const auto& any : details.details()) {
    v1::ConversionError e;
    if (any.UnpackTo(&e)) return e;
  }
  return std::nullopt;
}

}  // namespace lite2onnx::remote
