// The texts of a conversion's options, checked before they reach protobuf
// (proto3 strings must be UTF-8: a serialized message with other bytes does
// not parse in the worker) or a worker: well-formed UTF-8 and at most
// kMaxOptionTextBytes each. A bad one is the client's error
// (invalid_option, HTTP 400 / INVALID_ARGUMENT) naming the option.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "common/failure.h"

namespace lite2onnx::server {

inline constexpr size_t kMaxOptionTextBytes = 64 * 1024;

// `text` of the option `name`.
std::optional<Failure> check_option_text(std::string_view name, std::string_view text);

// Every string field of a serialized lite2onnx.v1.ConvertOptions, before it
// is parsed (a repeated one named `name[i]`); also invalid_option when the
// bytes are no ConvertOptions at all.
std::optional<Failure> check_option_texts(std::string_view serialized);

}  // namespace lite2onnx::server
