// A generated float CNN for the benchmarks: the in-process one
// (convert_bench.cc, BM_Convert/large_cnn and medium_cnn) and the
// whole-process one (bench/large_model.sh, through lite2onnx_make_cnn).
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <string>

namespace lite2onnx::bench {

// A stack of CONV_2D layers (3x3, SAME, stride 1, fused RELU), channels ->
// channels, on an input [1, side, side, channels] float32. Filters are OHWI, each
// conv has its own float32 bias. Weights follow a cheap deterministic pattern.
struct CnnSpec {
  int layers = 12;
  int channels = 512;
  int side = 32;
};

// The model's bytes (the builder's own allocation, no extra copy), or an
// empty buffer with `*error` saying why.
flatbuffers::DetachedBuffer build_cnn(const CnnSpec& spec, std::string* error);

}  // namespace lite2onnx::bench
