// Where a serialized ONNX model is written: given the model's exact size, the
// callee returns that many writable bytes (or null when it has no room). The
// model is written once, straight into them; the server's workers pass the
// memory they answer through, saving a copy of every answer.
#pragma once

#include <cstddef>
#include <functional>

namespace lite2onnx {

using OutputBuffer = std::function<std::byte*(size_t bytes)>;

}  // namespace lite2onnx
