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

// One operator that cannot be converted, and why.
struct UnsupportedOp {
  int op_index = -1;
  std::string op;      // TFLite builtin name, or custom code
  std::string reason;  // empty when the operator is simply not implemented
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
