// The converter's version, as the CLI, the server and the ONNX producer_version show it.
#pragma once

#include <string>

namespace lite2onnx {

std::string version();

}  // namespace lite2onnx
