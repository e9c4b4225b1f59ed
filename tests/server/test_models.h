// TFLite models the server tests build in memory (FlatBuffers of our schema),
// and the files they read.
#pragma once

#include <string>
#include <vector>

namespace lite2onnx::server_test {

// `ops` ABS operators in a chain on a float32 [1, 8] tensor: its conversion
// time grows with `ops`.
std::string abs_chain_model(int ops);

// ABS, then the custom ops "MyCustomOp" and "OtherCustomOp", then the builtin
// HASHTABLE_LOOKUP (which has no converter): three operators cannot be converted.
std::string unsupported_ops_model();

// The bytes of a file; empty when it cannot be read.
std::string read_file(const std::string& path);

// build*/examples/mini_mobilenet.tflite of this build.
std::string mini_mobilenet_path();

}  // namespace lite2onnx::server_test
