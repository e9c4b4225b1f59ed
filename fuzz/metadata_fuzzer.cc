// libFuzzer entry point of the metadata target (fuzz/targets.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lite2onnx::fuzz::metadata_target({data, size});
  return 0;
}
