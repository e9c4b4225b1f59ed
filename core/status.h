// Errors as values: every failure the core can report, with a stable code.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace lite2onnx {

enum class ErrorCode {
  kInvalidModel,   // the input is not a well-formed TFLite model
  kUnsupported,    // well-formed, but uses operators or features we cannot convert
  kInvalidOption,  // the caller's options are wrong
  kResourceLimit,  // the model exceeds a configured limit
  kCancelled,      // the cancellation hook fired
  kInternal,       // a bug: our own output failed validation, an invariant broke
};

const char* to_string(ErrorCode code);

// Why an operator cannot be converted, as a value a client can act on without
// reading the text. Every surface carries it as `reason_code`, spelled as
// to_string() gives it (docs/architecture.md, "Preflight", lists them).
enum class ReasonCode {
  kNotImplemented,       // "not_implemented": no converter for the op, or for this form of it
  kCustomOp,             // "custom_op": a custom operator the converter does not know
  kSelectTfOp,           // "select_tf_op": a TensorFlow op (Flex) the converter does not convert
  kAcceleratorCompiled,  // "accelerator_compiled": compiled for an accelerator (Edge TPU, Ethos-U)
  kOpVersion,            // "op_version": a version of the op the converter does not convert
  kOpset,                // "opset": needs a later ONNX opset than the one asked for
  kRuntimeValue,         // "runtime_value": an operand must be known when converting, is not
  kType,                 // "type": an element type the converter or ONNX does not take
  kShape,                // "shape": a rank or dimensions not converted (unknown, dynamic, ...)
  kQuantization,         // "quantization": a quantization scheme QDQ cannot express
  kState,                // "state": a variable tensor or resource that cannot be model state
  kOption,               // "option": an option of the op with a value not converted
  kOperands,             // "operands": inputs, outputs or options that do not fit the op
  kLimit,                // "limit": past one of the converter's bounds (steps, sizes)
  kNotExpressible,       // "not_expressible": what the op computes has no ONNX form
};
inline constexpr ReasonCode kLastReasonCode = ReasonCode::kNotExpressible;

const char* to_string(ReasonCode code);

// A refusal: why an operator cannot be converted, as a code and a text.
struct Refusal {
  ReasonCode code = ReasonCode::kNotImplemented;
  std::string text;
};

// One operator that cannot be converted, and why.
struct UnsupportedOp {
  int op_index = -1;
  std::string op;      // TFLite builtin name, or custom code
  std::string reason;  // empty when the operator is simply not implemented
  // The ReasonCode, as to_string() names it (the form every surface carries:
  // a code from a newer peer passes through as it is).
  std::string reason_code;
  // The TFLite subgraph of the op when it is not the one converted (a
  // subgraph its control flow runs); -1: the converted one.
  int subgraph = -1;
  // "op 5 ADD", or "subgraph 2 op 5 ADD".
  std::string label() const {
    return (subgraph >= 0 ? "subgraph " + std::to_string(subgraph) + " " : std::string()) + "op " +
           std::to_string(op_index) + " " + op;
  }
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  int op_index = -1;                       // -1 when not about one operator
  std::string tensor;                      // offending tensor name, if any
  std::vector<UnsupportedOp> unsupported;  // every unsupported op (kUnsupported)
};

inline Error make_error(ErrorCode code, std::string message) {
  Error e;
  e.code = code;
  e.message = std::move(message);
  return e;
}

// A value or an error (the core's Error unless E says otherwise). Small on
// purpose; std::expected arrives with C++23.
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const E& error() const { return std::get<1>(v_); }
  E&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace lite2onnx
