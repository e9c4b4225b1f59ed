// The graph interface as the caller asks for it, applied right after reading
// (before validation and shape inference): new names for the graph inputs and
// outputs (ConvertOptions::rename_inputs / rename_outputs) and fixed shapes for
// their dynamic dimensions (input_shapes, batch). Both are no-ops with the
// default options. O(inputs + outputs + the option texts).
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/options.h"
#include "core/status.h"

namespace lite2onnx::passes {

// Other names of tensors (a TFLite name the tensor had before a rename), which
// options naming a tensor accept too.
using OtherNames = std::vector<std::pair<std::string, ir::TensorId>>;

// Renames the graph inputs, then the outputs, in their order, to the
// comma-separated names of the options; each renamed tensor's previous name
// is added to `other_names`. More names than inputs (outputs), an empty name
// and two inputs or outputs named alike are kInvalidOption.
Status rename_interface(ir::Graph& g, const ConvertOptions& options, OtherNames& other_names);

// Fixes the shapes of graph inputs: each input_shapes entry names a graph input
// (by its name or one of `other_names`) and gives every dimension; a dimension
// the model leaves dynamic (-1) takes the value, a static one may only be given
// its own. `batch` then sets the dynamic first dimension of every other input.
// The element count of a fixed shape must stay below 2^31 (TFLite counts
// elements in int32). Errors are kInvalidOption naming the input; a batch that
// fixes nothing is a warning.
Status fix_input_shapes(ir::Graph& g, const ConvertOptions& options,
                        std::span<const std::pair<std::string, ir::TensorId>> other_names,
                        std::vector<std::string>& warnings);

}  // namespace lite2onnx::passes
