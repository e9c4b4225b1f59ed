// A failed call's status (its gRPC code, message and grpc-status-details-bin
// trailer) as a Failure (common/failure.h), in one place, for the C++ client
// (remote.cc) and the Python client (python/, through its binding). No gRPC
// types: protobuf only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/failure.h"

namespace lite2onnx::remote {

using lite2onnx::Failure;
template <class T>
using Outcome = lite2onnx::Outcome<T>;

// The ConversionError the server put in the google.rpc.Status of `details`
// (the grpc-status-details-bin trailer) as a Failure; when there is none (an
// answer of gRPC itself, or of something else listening at `address`), the
// row of the bare status code with a message naming the address.
Failure failure_from_status(int grpc_code, std::string_view message, std::string_view details,
                            std::string_view address);

// Why `address` cannot be a gRPC target, or nullopt: a URL
// ("http://host:port", "https://...", "grpc://...") gets invalid_option with
// the HOST:PORT to give instead (and --tls / tls=True for https).
std::optional<Failure> address_problem(std::string_view address);

// "UNAVAILABLE", ...: the name of a gRPC status code the table knows, else its number.
std::string status_code_name(int grpc_code);

}  // namespace lite2onnx::remote
