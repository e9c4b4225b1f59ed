// Small helpers shared by the op family files (which include the TFLite schema).
#pragma once

#include <span>

#include "core/diagnostics.h"
#include "core/ops/registry.h"
#include "schema_generated.h"

namespace lite2onnx::ops {

// Stores an options table's fused activation as the "fused_activation_function" attribute.
template <class Options>
void store_activation(const Options* o, ir::Attributes& attrs) {
  int a = o ? static_cast<int>(o->fused_activation_function()) : 0;
  attrs.set("fused_activation_function", std::string(activation_name(a)));
}

// Rejects fused activations ONNX has no form for (SIGN_BIT, unknown codes).
Check check_activation(const ir::Graph& g, const ir::Node& n);

// The layout the node works in: that of its first output.
inline const ir::Perm& out_layout(const ir::Graph& g, const ir::Node& n) {
  return g.tensor(n.outputs[0]).layout;
}
inline size_t out_rank(const ir::Graph& g, const ir::Node& n) {
  return g.tensor(n.outputs[0]).rank();
}
inline bool has_input(const ir::Graph& g, const ir::Node& n, size_t i) {
  return i < n.inputs.size() && g.valid(n.inputs[i]);
}
// Nothing if the input is a constant, else a refusal naming it.
Check require_const(const ir::Graph& g, const ir::Node& n, size_t i, const char* what);
// Nothing if the input has a known, static rank-r shape.
Check require_rank(const ir::Graph& g, const ir::Node& n, size_t i, size_t rank);

// An op whose output shape is given at run time by a 1-D input (RESHAPE,
// BROADCAST_TO, FILL): the input's length is the output's rank. An error
// unless it has a static length that matches the output's declared rank (a
// hostile length of 2^31 would have ONNX shape inference allocate that many
// dimensions).
Status check_shape_operand(LowerContext& ctx, const ir::Node& n, size_t i);

std::vector<int64_t> to_i64(const ir::Perm& p);

// Weight input i of a convolution in `perm` (OHWI -> OIHW, ...): a constant
// is permuted in its initializer; a weight computed at run time gets a
// Transpose node.
ir::TensorId weight_in_layout(LowerContext& ctx, const ir::Node& n, size_t i, const ir::Perm& perm);
// Operand i of the node, an integer tensor of static size (a constant, or a
// value computed at run time such as a loop counter), as a 1-D int64 ONNX
// value whose entry k is the operand's flattened entry pick[k] (every entry
// in order when `pick` is empty): a constant becomes an int64 constant; a
// run-time value gets a Reshape (rank other than 1), a Cast (int32) and a
// Gather (a pick other than all entries in order). Attribute ops use the
// pick to put a run-time vector into the layout's axis order, as their
// converters permute a constant one. The caller has checked the operand
// (check_index_vector).
ir::TensorId int64_vector(LowerContext& ctx, const ir::Node& n, size_t i,
                          std::span<const int64_t> pick, const std::string& name);
// Nothing if input i is a constant or a run-time integer tensor of TFLite's
// index types holding `count` elements in a static shape, else a refusal
// naming `what`.
Check check_index_vector(const ir::Graph& g, const ir::Node& n, size_t i, const char* what,
                         size_t count);

// The plan of an Attribute op with one data input: input `data_index` in
// `data_layout` (the others in TFLite order), every output in `out_layout`.
LayoutPlan plan_for(const ir::Node& n, const ir::Perm& data_layout, size_t data_index,
                    const ir::Perm& out_layout);

// Strides, dilations and padding of a windowed NHWC op (convolutions, pools).
struct Window {
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  bool same = false;
};
Window read_window(const ir::Node& n);
// Pool2DOptions (the pools, L2_POOL_2D) as the window's attributes.
void read_pool_options(const tflite::Operator& op, ir::Attributes& a);
// Positive strides and dilation factors.
Check check_window(const ir::Node& n);
// Sets an ONNX Conv's or pool's kernel_shape, strides, dilations (when
// `with_dilation`) and pads for a TFLite window over an NHWC input of
// spatial size in_h x in_w (-1: dynamic).
void set_window(ir::Node& out, const Window& w, int64_t in_h, int64_t in_w, int64_t k_h,
                int64_t k_w, bool with_dilation);

// TRANSPOSE_CONV with an output_shape (input 0) computed at run time
// (transpose_conv_shape.cc): writes into `out` the part of `full`, the full
// transposed convolution (NCHW, spatial full_h x full_w = (in - 1) * stride
// + k), that TFLite keeps: the padding before computed from the run-time size
// by TFLite's rule (SAME or VALID), zeros past the full extent.
void crop_transpose_conv(LowerContext& ctx, const ir::Node& n, ir::TensorId full, ir::TensorId out,
                         int64_t full_h, int64_t full_w, int64_t k_h, int64_t k_w,
                         const std::string& suffix);

}  // namespace lite2onnx::ops
