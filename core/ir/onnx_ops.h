// What the passes need to know of the ONNX ops the lowering emits, in one
// table: the traits transpose cleanup and the quantization passes act on.
#pragma once

#include <string_view>

#include "core/ir/graph.h"

namespace lite2onnx::ir {

struct OnnxOpTraits {
  // Each output element is computed from the same (numpy-broadcast) element
  // of every input: a Transpose commutes with the op.
  bool elementwise = false;
  // Every output element is an element of input 0 (moved or picked, never
  // computed): the output stays within input 0's range.
  bool picks_values = false;
  // Copies elements of its data inputs and takes int8/uint8 at opsets 13..17:
  // in QDQ form it runs on the integer tensors themselves.
  bool copies_integers = false;
  // Only gives the data another shape (the Reshape family): on integers with
  // other parameters on the output, it reads the same integers with them, as
  // TFLite's RESHAPE/SQUEEZE/EXPAND_DIMS do (ops::QuantizedKernel::kReinterpret).
  bool reinterprets = false;
  // Input 1 is a weight an integer kernel pairs with the activation
  // (uint8 activation x int8 weight).
  bool weighted = false;
};

// The traits of ONNX op `op` (default domain); all false for ops not listed.
const OnnxOpTraits& onnx_traits(std::string_view op);

// The traits of an ONNX-dialect node in the default domain; all false for
// TFLite-dialect nodes and other domains.
const OnnxOpTraits& onnx_traits(const Node& n);

}  // namespace lite2onnx::ir
