// libFuzzer entry point of the custom-op options target (fuzz/targets.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lite2onnx::fuzz::custom_options_target({data, size});
  return 0;
}
