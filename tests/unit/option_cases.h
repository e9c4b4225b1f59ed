// Conversion options for the option table's round trips: the table's own, the
// CLI's (tests/unit/option_table_test.cc) and the wire's (tests/server/options_test.cc).
#pragma once

#include <algorithm>
#include <vector>

#include "core/options.h"

namespace lite2onnx::testing {

// Every option at a value other than its default (two elements of each
// repeated one), a few options set, and the defaults.
inline std::vector<ConvertOptions> option_cases() {
  ConvertOptions all;
  all.opset = 17;
  all.layout.explicit_layouts = {{"x", "NHWC", "NCHW"}, {"stem/relu6", "NDHWC", "NCDHW"}};
  all.layout.io_layouts = {{"input", "NHWC", "NCHW"}, {"output", "ABC", "CAB"}};
  all.layout.keep_io_layout = true;
  all.quantization = QuantizationMode::kDequantize;
  all.keep_float16_weights = true;
  all.keep_int8_activations = true;
  all.no_metadata = true;
  all.signature = "serving_default";
  all.io_names = IoNames::kSignature;
  all.input_shapes = {{"input", {1, 224, 224, 3}}, {"mask", {7}}};
  all.batch = 4;
  all.rename_inputs = "image,mask";
  all.rename_outputs = "logits";
  ConvertOptions some;
  some.opset = 14;
  some.layout.io_layouts = {{"input", "NHWC", "NHWC"}};
  some.keep_int8_activations = true;
  some.signature = "decode step";
  some.input_shapes = {{"x:0", {2, 3}}};
  return {all, some, ConvertOptions{}};
}

// Whether two options agree on every member a caller chooses (not the limits,
// not the cancellation hook).
inline bool same_options(const ConvertOptions& a, const ConvertOptions& b) {
  auto same = [](const std::vector<LayoutSpec>& x, const std::vector<LayoutSpec>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].tensor != y[i].tensor || x[i].from != y[i].from || x[i].to != y[i].to) return false;
    return true;
  };
  return a.opset == b.opset && same(a.layout.explicit_layouts, b.layout.explicit_layouts) &&
         same(a.layout.io_layouts, b.layout.io_layouts) &&
         a.layout.keep_io_layout == b.layout.keep_io_layout && a.quantization == b.quantization &&
         a.keep_float16_weights == b.keep_float16_weights &&
         a.keep_int8_activations == b.keep_int8_activations && a.no_metadata == b.no_metadata &&
         a.signature == b.signature && a.io_names == b.io_names &&
         a.input_shapes.size() == b.input_shapes.size() &&
         std::equal(a.input_shapes.begin(), a.input_shapes.end(), b.input_shapes.begin(),
                    [](const InputShape& x, const InputShape& y) {
                      return x.tensor == y.tensor && x.dims == y.dims;
                    }) &&
         a.batch == b.batch && a.rename_inputs == b.rename_inputs &&
         a.rename_outputs == b.rename_outputs;
}

}  // namespace lite2onnx::testing
