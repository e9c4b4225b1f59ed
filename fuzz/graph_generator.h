// Structure-aware model generator for fuzzing: turns fuzz bytes into a TFLite
// model built with the FlatBuffers builder against core/tflite/schema.fbs.
// The model always passes the FlatBuffers verifier and usually the reader:
// ops come from the op registry with inputs of plausible ranks, shapes and
// types, constants of the right byte sizes, options, quantization, optional
// inputs (-1), fan-out, shared buffers, dilated-convolution and
// shape-arithmetic patterns. A few decisions bend it on purpose (a wrong
// output shape, a duplicate name, an unsupported op, an output that is an
// input) so that mutations reach the passes and their validation alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace lite2onnx::fuzz {

std::vector<uint8_t> generate_model(std::span<const uint8_t> decisions);

}  // namespace lite2onnx::fuzz
