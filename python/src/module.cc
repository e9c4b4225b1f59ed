// lite2onnx._core: the conversion core in a Python process (pybind11). The
// Python package (python/lite2onnx/) wraps it: this module only translates.
// Values cross as bytes, str (JSON, the CLI's --json forms) and small dicts;
// errors come back as dicts naming a row of the error-reason table
// (common/error_reasons.h), which the package turns into its exceptions. The
// GIL is released while the core works, so threads convert in parallel.
//
// It also carries the wire translation of the Python client (lite2onnx.Client):
// options to lite2onnx.v1.ConvertOptions, answers to the same JSON as the local
// calls, failed calls' statuses to Failures (common/translate.h,
// client/remote/status.h): the same code as the C++ client's.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/batch.h"
#include "client/remote/remote.h"  // the stream and retry constants (no gRPC in the header)
#include "client/remote/status.h"
#include "common/error_reasons.h"
#include "common/failure.h"
#include "common/service_config.h"
#include "common/translate.h"
#include "core/convert.h"
#include "core/option_table.h"

namespace py = pybind11;
using namespace lite2onnx;

namespace {

// Option texts as the package passes them: (canonical name, text) pairs, one
// per element of a repeated option.
using OptionTexts = std::vector<std::pair<std::string, std::string>>;
// Limits by name (core/options.h Limits); absent: the default.
using LimitValues = std::map<std::string, uint64_t>;

// The limits a caller may set: the CLI's --max-* flags, by the member's name.
struct LimitDef {
  const char* name;
  const char* help;
  uint32_t Limits::*u32 = nullptr;
  uint64_t Limits::*u64 = nullptr;
};
const LimitDef kLimits[] = {
    {"max_operators", "operators of the subgraph converted", &Limits::max_operators, nullptr},
    {"max_tensors", "tensors of the subgraph converted", &Limits::max_tensors, nullptr},
    {"max_inputs_per_op", "inputs of one operator", &Limits::max_inputs_per_op, nullptr},
    {"max_created_bytes",
     "bytes of constants one conversion may create (0: 256 MiB + 4 x the model)", nullptr,
     &Limits::max_created_bytes},
    {"max_output_bytes", "bytes of the ONNX model (0: 512 MiB + 8 x the model, at most 2 GiB - 1)",
     nullptr, &Limits::max_output_bytes},
};

// A Failure as the package reads it.
py::dict failure_dict(const Failure& f) {
  py::list unsupported;
  for (const auto& u : f.error.unsupported)
    unsupported.append(py::make_tuple(u.op_index, u.op, u.reason, u.reason_code));
  py::dict d;
  d["reason"] = std::string(f.reason->name);
  d["message"] = f.error.message;
  d["op_index"] = f.error.op_index;
  d["tensor"] = f.error.tensor;
  d["unsupported"] = unsupported;
  d["grpc_code"] = f.grpc_code;
  d["attempts"] = f.attempts;
  return d;
}

Failure invalid_option(std::string message) {
  return failure_of(make_error(ErrorCode::kInvalidOption, std::move(message)));
}

// The options `texts` and `limits` give, everything else at its default.
Outcome<ConvertOptions> make_options(const OptionTexts& texts, const LimitValues& limits) {
  ConvertOptions options;
  for (const auto& [name, text] : texts)
    if (auto st = set_option(options, name, text); !st) return failure_of(st.take_error());
  for (const auto& [name, value] : limits) {
    const LimitDef* def = nullptr;
    for (const auto& d : kLimits)
      if (name == d.name) def = &d;
    if (!def) return invalid_option("unknown limit '" + name + "'");
    if (def->u32) {
      if (value > std::numeric_limits<uint32_t>::max())
        return invalid_option(name + " " + std::to_string(value) + " is too large");
      options.limits.*(def->u32) = static_cast<uint32_t>(value);
    } else {
      options.limits.*(def->u64) = value;
    }
  }
  return options;
}

// The bytes of a buffer (bytes, bytearray, memoryview, mmap), viewed in place.
std::span<const std::byte> bytes_of(const py::buffer_info& info) {
  return {static_cast<const std::byte*>(info.ptr), static_cast<size_t>(info.size * info.itemsize)};
}

py::buffer_info contiguous(const py::buffer& buffer) {
  // PyBUF_SIMPLE: a contiguous buffer of bytes, or a BufferError.
  return buffer.request();
}

// convert(model, options, limits) -> (onnx bytes | None, diagnostics JSON, failure | None)
py::tuple convert_model(const py::buffer& model, const OptionTexts& texts,
                        const LimitValues& limits) {
  auto options = make_options(texts, limits);
  if (!options) return py::make_tuple(py::none(), "{}", failure_dict(options.error()));
  py::buffer_info info = contiguous(model);
  Diagnostics diagnostics;
  py::object onnx = py::none();
  std::optional<Result<size_t>> result;
  {
    py::gil_scoped_release release;
    // The ONNX bytes are written straight into a bytes object of their exact size.
    result.emplace(
        convert(bytes_of(info), *options, diagnostics, [&onnx](size_t size) -> std::byte* {
          py::gil_scoped_acquire acquire;
          PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
          if (!b) {
            PyErr_Clear();
            return nullptr;
          }
          onnx = py::reinterpret_steal<py::object>(b);
          return reinterpret_cast<std::byte*>(PyBytes_AS_STRING(b));
        }));
  }
  const std::string json = diagnostics.to_json(-1);
  if (!*result) return py::make_tuple(py::none(), json, failure_dict(failure_of(result->error())));
  return py::make_tuple(onnx, json, py::none());
}

// inspect(model, limits) -> (ModelInfo JSON | None, failure | None)
py::tuple inspect_model(const py::buffer& model, const LimitValues& limits) {
  auto options = make_options({}, limits);
  if (!options) return py::make_tuple(py::none(), failure_dict(options.error()));
  py::buffer_info info = contiguous(model);
  std::optional<Result<ModelInfo>> result;
  {
    py::gil_scoped_release release;
    result.emplace(inspect(bytes_of(info), options->limits));
  }
  if (!*result) return py::make_tuple(py::none(), failure_dict(failure_of(result->error())));
  return py::make_tuple((*result)->to_json(-1), py::none());
}

// convert_many(inputs, out_dir, options, limits, jobs, progress) -> (summary JSON | None, failure |
// None)
py::tuple convert_many(const std::vector<std::string>& inputs, const std::string& out_dir,
                       const OptionTexts& texts, const LimitValues& limits, int jobs,
                       const std::optional<py::function>& progress) {
  auto options = make_options(texts, limits);
  if (!options) return py::make_tuple(py::none(), failure_dict(options.error()));
  std::optional<Outcome<batch::Plan>> plan;
  {
    py::gil_scoped_release release;
    plan.emplace(batch::plan(inputs, out_dir));
  }
  if (!*plan) return py::make_tuple(py::none(), failure_dict(plan->error()));
  batch::RunOptions run;
  run.jobs = jobs;
  std::optional<py::error_already_set> callback_error;
  if (progress)
    run.on_done = [&](const batch::ModelReport& r, size_t done, size_t total) {
      py::gil_scoped_acquire acquire;
      if (callback_error) return;  // a callback that raised is not called again
      try {
        (*progress)(r.name, r.outcome_name(), done, total);
      } catch (py::error_already_set& e) {
        callback_error.emplace(std::move(e));
      }
    };
  batch::Summary summary;
  Status written = ok_status();
  {
    py::gil_scoped_release release;
    summary = batch::run(
        **plan, *options, [] { return batch::in_process(); }, run);
    summary.out_dir = out_dir;
    written = batch::write_summary(summary);
  }
  if (callback_error) throw std::move(*callback_error);
  if (!written)
    return py::make_tuple(
        py::none(), failure_dict(make_failure(reason_named("io_error"), written.error().message)));
  return py::make_tuple(summary.to_json(-1), py::none());
}

// wire_options(options) -> (serialized lite2onnx.v1.ConvertOptions | None, failure | None)
py::tuple wire_options(const OptionTexts& texts) {
  auto options = make_options(texts, {});
  if (!options) return py::make_tuple(py::none(), failure_dict(options.error()));
  return py::make_tuple(py::bytes(to_proto(*options).SerializeAsString()), py::none());
}

template <class Message>
Message parse_wire(const py::bytes& wire, const char* what) {
  Message m;
  const std::string_view view(wire);
  if (!m.ParseFromArray(view.data(), static_cast<int>(view.size())))
    throw std::invalid_argument(std::string("not a serialized ") + what);
  return m;
}

py::list option_table_list() {
  py::list out;
  for (const auto& def : option_table()) {
    py::dict d;
    d["name"] = std::string(def.name);
    const char* kind = "integer";
    switch (def.kind) {
      case OptionKind::kInteger:
        kind = "integer";
        break;
      case OptionKind::kBoolean:
        kind = "boolean";
        break;
      case OptionKind::kChoice:
        kind = "choice";
        break;
      case OptionKind::kLayouts:
        kind = "layouts";
        break;
      case OptionKind::kText:
        kind = "text";
        break;
      case OptionKind::kShapes:
        kind = "shapes";
        break;
    }
    d["kind"] = kind;
    d["flag"] = std::string(def.flag);
    d["help"] = std::string(def.help);
    d["default"] = def.default_text();
    d["min"] = def.min;
    d["max"] = def.max;
    py::list choices;
    for (auto c : def.choices) choices.append(std::string(c));
    d["choices"] = choices;
    d["repeated"] = def.repeated();
    d["order_only"] = def.order_only;
    out.append(d);
  }
  return out;
}

py::list limit_table_list() {
  py::list out;
  const Limits defaults;
  for (const auto& def : kLimits) {
    py::dict d;
    d["name"] = def.name;
    d["help"] = def.help;
    d["default"] = def.u32 ? uint64_t{defaults.*(def.u32)} : defaults.*(def.u64);
    d["max"] = def.u32 ? uint64_t{std::numeric_limits<uint32_t>::max()}
                       : std::numeric_limits<uint64_t>::max();
    out.append(d);
  }
  return out;
}

py::list error_reason_list() {
  py::list out;
  for (const auto& r : error_reasons()) {
    py::dict d;
    d["name"] = std::string(r.name);
    d["exit_code"] = r.exit_code;
    d["retryable"] = r.retryable;
    d["grpc_code"] = std::string(r.grpc_code_name);
    d["http_status"] = r.http_status;
    d["when"] = std::string(r.when);
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "lite2onnx's conversion core (use the lite2onnx package, not this module)";
  m.def("version", &version);
  m.def("option_table", &option_table_list,
        "The conversion options (core/option_table.h): name, kind, flag, help, default, ...");
  m.def("limit_table", &limit_table_list, "The limits a conversion may be given.");
  m.def("error_reasons", &error_reason_list, "The error-reason table (common/error_reasons.h).");
  m.def("convert", &convert_model, py::arg("model"), py::arg("options"), py::arg("limits"));
  m.def("inspect", &inspect_model, py::arg("model"), py::arg("limits"));
  m.def("operators", [] { return support_matrix_json(support_matrix(), -1); });
  m.def("convert_many", &convert_many, py::arg("inputs"), py::arg("out_dir"), py::arg("options"),
        py::arg("limits"), py::arg("jobs"), py::arg("progress"));
  // The Python client's wire translation.
  m.def("wire_options", &wire_options, py::arg("options"));
  m.def(
      "diagnostics_from_wire",
      [](const py::bytes& wire) {
        return from_proto(parse_wire<v1::Diagnostics>(wire, "lite2onnx.v1.Diagnostics"))
            .to_json(-1);
      },
      py::arg("wire"));
  m.def(
      "model_info_from_wire",
      [](const py::bytes& wire) {
        return from_proto(parse_wire<v1::InspectResponse>(wire, "lite2onnx.v1.InspectResponse"))
            .to_json(-1);
      },
      py::arg("wire"));
  m.def(
      "operators_from_wire",
      [](const py::bytes& wire) {
        return support_matrix_json(from_proto(parse_wire<v1::ListOperatorsResponse>(
                                       wire, "lite2onnx.v1.ListOperatorsResponse")),
                                   -1);
      },
      py::arg("wire"));
  m.def(
      "failure_from_status",
      [](int code, const std::string& message, const py::bytes& details,
         const std::string& address) {
        return failure_dict(
            remote::failure_from_status(code, message, std::string_view(details), address));
      },
      py::arg("code"), py::arg("message"), py::arg("details"), py::arg("address"));
  m.def(
      "address_problem",
      [](const std::string& address) -> py::object {
        if (auto f = remote::address_problem(address)) return failure_dict(*f);
        return py::none();
      },
      py::arg("address"));
  // The channel of every client (common/service_config.h): round_robin,
  // keepalive and the retry policy, as grpcio channel options.
  m.def(
      "channel_options",
      [](int max_attempts) {
        py::list out;
        const ChannelArgs args = client_channel_args(max_attempts);
        for (const auto& [name, value] : args.strings) out.append(py::make_tuple(name, value));
        for (const auto& [name, value] : args.integers) out.append(py::make_tuple(name, value));
        return out;
      },
      py::arg("max_attempts"));
  m.attr("STREAM_THRESHOLD_BYTES") = remote::kStreamThresholdBytes;
  m.attr("STREAM_CHUNK_BYTES") = remote::kStreamChunkBytes;
  m.attr("MAX_GRPC_ATTEMPTS") = kMaxGrpcAttempts;
  m.attr("ATTEMPT_HEADER") = std::string(kAttemptHeader);
}
