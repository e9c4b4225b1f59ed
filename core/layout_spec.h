// Parsing of user-given layouts (--explicit-layout, --io-layout), shared by
// the CLI and the server.
#pragma once

#include <string_view>

#include "core/ir/types.h"
#include "core/options.h"
#include "core/status.h"

namespace lite2onnx {

// "TENSOR=SRC:DST" (e.g. input=NHWC:NCHW). With `order_only`, "TENSOR=ORDER" is
// accepted too: ORDER is the ONNX order, and the TFLite order is taken to be its
// channels-last form (NCHW -> from NHWC; NCDHW -> from NDHWC).
Result<LayoutSpec> parse_layout_spec(std::string_view text, bool order_only = false);

// The permutation (ONNX Transpose convention) that turns `from` into `to`.
Result<ir::Perm> layout_perm(const LayoutSpec& spec);

}  // namespace lite2onnx
