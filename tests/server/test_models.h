// TFLite models the server tests build in memory (FlatBuffers of our schema),
// and the files they read.
#pragma once

#include <string>
#include <vector>

namespace lite2onnx::server_test {

// `ops` ABS operators in a chain on a float32 [1, 8] tensor: its conversion
// time grows with `ops`. Its tensors are named PREFIX0, PREFIX1, ...
std::string abs_chain_model(int ops, const std::string& tensor_prefix = "t");

// ABS, then the custom ops "MyCustomOp" and "OtherCustomOp", then the builtin
// HASHTABLE_LOOKUP (which has no converter): three operators cannot be converted.
std::string unsupported_ops_model();

// Two SignatureDefs on two subgraphs of ABS ops on float32 [1, 8]: "first"
// (subgraph 0 "main": t0 -> ABS -> t1, aliases in -> out) and "second"
// (subgraph 1 "second": u0 -> ABS -> u1 -> ABS -> u2, aliases x -> y).
std::string two_signatures_model();

// `pairs` RFFT2D -> COMPLEX_ABS pairs of fft_length `fft` on one float32
// [1, fft] input: a model of about 800 bytes whose DFT matrices make a large
// ONNX model (3 pairs of 4096: about 200 MB). Each `variant` is another model
// (its description), converted again rather than answered from a cache.
std::string spectral_model(int pairs, int fft, int variant = 0);

// input [1, n] + a constant [1, n] of float32 -> ADD -> output: a model of
// about 4 x n bytes whose ONNX model is as large (an answer of a chosen size).
std::string big_constant_model(int n);

// The bytes of a file; empty when it cannot be read.
std::string read_file(const std::string& path);

// The path of a model of the shared corpus (NAME relative to it); empty when
// the corpus is absent, which fails the test under CI=true.
std::string corpus_path(const std::string& name);
// The bytes of that model; empty when the corpus is absent (a failure in CI).
std::string corpus_model(const std::string& name);

// build*/examples/mini_mobilenet.tflite of this build.
std::string mini_mobilenet_path();

}  // namespace lite2onnx::server_test
