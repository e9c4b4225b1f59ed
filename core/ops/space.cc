// Block rearrangements between space, depth and batch: SPACE_TO_BATCH_ND,
// BATCH_TO_SPACE_ND, SPACE_TO_DEPTH, DEPTH_TO_SPACE. Implicit class: rank-4
// NHWC in TFLite, lowered on NCHW tensors. (A SPACE_TO_BATCH_ND -> convolution
// -> BATCH_TO_SPACE_ND chain is usually fused into a dilated convolution
// before it gets here: passes::fuse_dilated_convolutions.)
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::space {
namespace {

using ir::Perm;
using ir::Shape;
using ir::TensorId;

Status require_nchw(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  const Perm want = ir::channels_first(4);
  for (TensorId t : {n.inputs[0], n.outputs[0]})
    if (ir::normalized(g.tensor(t).layout) != want)
      return ctx.error(n, "tensor '" + g.tensor(t).name + "' is not NCHW in ONNX");
  return ok_status();
}

// ---- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND -----------------------------------

struct Blocks {
  int64_t bh = 1, bw = 1;
  int64_t before_h = 0, after_h = 0, before_w = 0, after_w = 0;  // paddings or crops
};

// Reads block_shape (input 1) and paddings / crops (input 2); "" if valid.
Check read_blocks(const ir::Graph& g, const ir::Node& n, const char* what, Blocks* out) {
  if (auto r = require_rank(g, n, 0, 4)) {
    r->text += " (only 4-D NHWC inputs are supported)";
    return r;
  }
  if (auto r = require_const(g, n, 1, "block_shape")) return r;
  if (auto r = require_const(g, n, 2, what)) return r;
  auto block = ir::const_ints(g, n.inputs[1]);
  auto pads = ir::const_ints(g, n.inputs[2]);
  if (!block || block->size() != 2)
    return refuse(ReasonCode::kShape, "block_shape must hold 2 values");
  if (!pads || pads->size() != 4)
    return refuse(ReasonCode::kOperands, std::string(what) + " must be a [2, 2] constant");
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if ((*block)[0] < 1 || (*block)[1] < 1 || (*block)[0] > kMax || (*block)[1] > kMax)
    return refuse(ReasonCode::kOperands, "block sizes must be positive int32 values");
  for (int64_t v : *pads)
    if (v < 0 || v > kMax)
      return refuse(ReasonCode::kOperands,
                    std::string("invalid ") + what + " value " + std::to_string(v));
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  for (size_t d = 1; d < 4; ++d)
    if (x.shape[d] < 0)
      return refuse(ReasonCode::kShape, "height, width and channels must be static");
  *out = {(*block)[0], (*block)[1], (*pads)[0], (*pads)[1], (*pads)[2], (*pads)[3]};
  return {};
}

Check check_space_to_batch(const ir::Graph& g, const ir::Node& n) {
  Blocks b;
  if (auto r = read_blocks(g, n, "paddings", &b)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if ((x.shape[1] + b.before_h + b.after_h) % b.bh != 0 ||
      (x.shape[2] + b.before_w + b.after_w) % b.bw != 0)
    return refuse(ReasonCode::kOperands,
                  "padded height and width are not multiples of the block shape");
  return {};
}

// [N, C, H, W] -> Pad -> [N, C, Ho, bh, Wo, bw] -> [bh, bw, N, C, Ho, Wo] -> [bh*bw*N, C, Ho, Wo]:
// output batch (i*bw + j)*N + n holds padded pixels (y*bh + i, x*bw + j) of image n.
Status lower_space_to_batch(LowerContext& ctx, const ir::Node& n) {
  if (auto st = require_nchw(ctx, n); !st) return st;
  const ir::Graph& g = ctx.graph();
  Blocks b;
  if (auto r = read_blocks(g, n, "paddings", &b)) return ctx.error(n, r->text);
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t c = x.shape[3];
  const int64_t ho = (x.shape[1] + b.before_h + b.after_h) / b.bh;
  const int64_t wo = (x.shape[2] + b.before_w + b.after_w) / b.bw;
  TensorId cur = n.inputs[0];
  if (b.before_h || b.after_h || b.before_w || b.after_w) {
    TensorId padded = ctx.temp(n.name + "/padded", x.dtype);
    ir::Node& pad = ctx.emit(n, "Pad",
                             {cur, ctx.const_i64(n.name + "/pads", {0, 0, b.before_h, b.before_w, 0,
                                                                    0, b.after_h, b.after_w})},
                             {padded}, "Pad");
    pad.attrs.set("mode", std::string("constant"));
    // Quantized integers (--quantization exact holds them) are padded with
    // the output's zero point, the integer of 0.0, as TFLite's kernel pads.
    const ir::Tensor& y = g.tensor(n.outputs[0]);
    if (x.quantized_type && x.dtype == *x.quantized_type && y.quant && !y.quant->zero_point.empty())
      pad.inputs.push_back(ctx.const_scalar(n.name + "/pad_value", x.dtype,
                                            static_cast<double>(y.quant->zero_point[0])));
    cur = padded;
  }
  TensorId split = ctx.temp(n.name + "/blocks", x.dtype);
  ctx.emit(n, "Reshape", {cur, ctx.const_i64(n.name + "/block_shape6", {0, c, ho, b.bh, wo, b.bw})},
           {split}, "Reshape_blocks");
  TensorId moved = ctx.temp(n.name + "/blocks_first", x.dtype);
  ir::Node& t = ctx.emit(n, "Transpose", {split}, {moved}, "Transpose");
  t.attrs.set("perm", std::vector<int64_t>{3, 5, 0, 1, 2, 4});
  ctx.emit(n, "Reshape", {moved, ctx.const_i64(n.name + "/out_shape", {-1, c, ho, wo})},
           {n.outputs[0]});
  return ok_status();
}

Check check_batch_to_space(const ir::Graph& g, const ir::Node& n) {
  Blocks b;
  if (auto r = read_blocks(g, n, "crops", &b)) return r;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.shape[0] >= 0 && x.shape[0] % (b.bh * b.bw) != 0)
    return refuse(ReasonCode::kOperands,
                  "batch " + std::to_string(x.shape[0]) + " is not a multiple of the block size");
  if (b.before_h + b.after_h > x.shape[1] * b.bh || b.before_w + b.after_w > x.shape[2] * b.bw)
    return refuse(ReasonCode::kOperands, "crops exceed the output size");
  return {};
}

// [bh*bw*N, C, H, W] -> [bh, bw, N, C, H, W] -> [N, C, H, bh, W, bw] -> [N, C, H*bh, W*bw] -> crop.
Status lower_batch_to_space(LowerContext& ctx, const ir::Node& n) {
  if (auto st = require_nchw(ctx, n); !st) return st;
  const ir::Graph& g = ctx.graph();
  Blocks b;
  if (auto r = read_blocks(g, n, "crops", &b)) return ctx.error(n, r->text);
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const int64_t h = x.shape[1], w = x.shape[2], c = x.shape[3];
  TensorId split = ctx.temp(n.name + "/blocks", x.dtype);
  ctx.emit(n, "Reshape",
           {n.inputs[0], ctx.const_i64(n.name + "/block_shape6", {b.bh, b.bw, -1, c, h, w})},
           {split}, "Reshape_blocks");
  TensorId moved = ctx.temp(n.name + "/blocks_inner", x.dtype);
  ir::Node& t = ctx.emit(n, "Transpose", {split}, {moved}, "Transpose");
  t.attrs.set("perm", std::vector<int64_t>{2, 3, 4, 0, 5, 1});
  const bool crop = b.before_h || b.after_h || b.before_w || b.after_w;
  TensorId full = crop ? ctx.temp(n.name + "/uncropped", x.dtype) : n.outputs[0];
  ctx.emit(n, "Reshape",
           {moved, ctx.const_i64(n.name + "/space_shape", {-1, c, h * b.bh, w * b.bw})}, {full},
           crop ? "Reshape_space" : "");
  if (crop) {
    ctx.emit(n, "Slice",
             {full, ctx.const_i64(n.name + "/crop_starts", {b.before_h, b.before_w}),
              ctx.const_i64(n.name + "/crop_ends", {h * b.bh - b.after_h, w * b.bw - b.after_w}),
              ctx.const_i64(n.name + "/crop_axes", {2, 3})},
             {n.outputs[0]});
  }
  return ok_status();
}

// ---- SPACE_TO_DEPTH / DEPTH_TO_SPACE -----------------------------------------

Check check_depth_space(const ir::Graph& g, const ir::Node& n, bool to_depth) {
  if (auto r = require_rank(g, n, 0, 4)) return r;
  const int64_t block = n.attrs.get_int("block_size");
  if (block < 1)
    return refuse(ReasonCode::kOperands,
                  "block_size must be positive (got " + std::to_string(block) + ")");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (to_depth) {
    if ((x.shape[1] >= 0 && x.shape[1] % block) || (x.shape[2] >= 0 && x.shape[2] % block))
      return refuse(ReasonCode::kOperands, "height and width must be multiples of block_size");
  } else if (x.shape[3] >= 0 && x.shape[3] % (block * block)) {
    return refuse(ReasonCode::kOperands, "channels must be a multiple of block_size^2");
  }
  return {};
}

// TFLite's channel order matches ONNX's on NCHW: SPACE_TO_DEPTH puts block
// offset (i, j) at channels (i*b + j)*C + c, DEPTH_TO_SPACE reads them back
// (ONNX DepthToSpace mode DCR).
Status lower_depth_space(LowerContext& ctx, const ir::Node& n, bool to_depth) {
  if (auto st = require_nchw(ctx, n); !st) return st;
  ir::Node& d =
      ctx.emit(n, to_depth ? "SpaceToDepth" : "DepthToSpace", {n.inputs[0]}, {n.outputs[0]});
  d.attrs.set("blocksize", n.attrs.get_int("block_size"));
  if (!to_depth) d.attrs.set("mode", std::string("DCR"));
  return ok_status();
}

Check check_space_to_depth(const ir::Graph& g, const ir::Node& n) {
  return check_depth_space(g, n, true);
}
Check check_depth_to_space(const ir::Graph& g, const ir::Node& n) {
  return check_depth_space(g, n, false);
}
Status lower_space_to_depth(LowerContext& ctx, const ir::Node& n) {
  return lower_depth_space(ctx, n, true);
}
Status lower_depth_to_space(LowerContext& ctx, const ir::Node& n) {
  return lower_depth_space(ctx, n, false);
}

void read_space_to_depth_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_SpaceToDepthOptions();
  a.set("block_size", int64_t{o ? o->block_size() : 0});
}

void read_depth_to_space_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_DepthToSpaceOptions();
  a.set("block_size", int64_t{o ? o->block_size() : 0});
}

// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: input 0 of rank 3 or 4, block_shape
// [rank - 2] and paddings or crops [rank - 2, 2], int32 constants.
struct BlockOperands {
  Shape x;
  std::vector<int64_t> block, pads;
};
std::optional<BlockOperands> block_operands(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  auto block = const_operand(g, n, 1, false, 1);
  auto pads = const_operand(g, n, 2, false, 2);
  if (!x || (x->size() != 3 && x->size() != 4) || !block || !pads || n.inputs.size() != 3 ||
      n.outputs.size() != 1)
    return std::nullopt;
  const size_t spatial = x->size() - 2;
  if (block->size() != spatial ||
      g.tensor(n.inputs[2]).shape != Shape{static_cast<int64_t>(spatial), 2})
    return std::nullopt;
  for (int64_t b : *block)
    if (b < 1 || b > kMaxDim) return std::nullopt;
  for (int64_t p : *pads)
    if (!dim_value(p)) return std::nullopt;
  return BlockOperands{*x, *block, *pads};
}

// DEPTH_TO_SPACE / SPACE_TO_DEPTH with block_size.
InferredShapes infer_depth_to_space(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t b = n.attrs.get_int("block_size");
  if (!x || x->size() != 4 || b < 1 || b > (int64_t{1} << 15) || (*x)[3] % (b * b) != 0 ||
      n.outputs.size() != 1)
    return std::nullopt;
  return one_shape({(*x)[0], (*x)[1] * b, (*x)[2] * b, (*x)[3] / (b * b)});
}

InferredShapes infer_space_to_depth(const ir::Graph& g, const ir::Node& n) {
  auto x = input_shape(g, n, 0);
  const int64_t b = n.attrs.get_int("block_size");
  if (!x || x->size() != 4 || b < 1 || b > (int64_t{1} << 15) || (*x)[1] % b != 0 ||
      (*x)[2] % b != 0 || n.outputs.size() != 1)
    return std::nullopt;
  return one_shape({(*x)[0], (*x)[1] / b, (*x)[2] / b, (*x)[3] * b * b});
}

// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (rank 3 or 4): constant block_shape
// and paddings / crops.
InferredShapes infer_space_to_batch(const ir::Graph& g, const ir::Node& n) {
  auto op = block_operands(g, n);
  if (!op) return std::nullopt;
  Shape s = op->x;
  int64_t batch = s[0];
  for (size_t d = 0; d + 2 < s.size(); ++d) {
    const int64_t padded = s[d + 1] + op->pads[2 * d] + op->pads[2 * d + 1];
    const int64_t b = op->block[d];
    if (padded % b != 0 || (batch > 0 && b > kMaxElements / batch)) return std::nullopt;
    s[d + 1] = padded / b;
    batch *= b;
  }
  s[0] = batch;
  return one_shape(std::move(s));
}

InferredShapes infer_batch_to_space(const ir::Graph& g, const ir::Node& n) {
  auto op = block_operands(g, n);
  if (!op) return std::nullopt;
  Shape s = op->x;
  int64_t batch = s[0];
  for (size_t d = 0; d + 2 < s.size(); ++d) {
    const int64_t b = op->block[d];
    if (batch % b != 0 || s[d + 1] > kMaxDim / b) return std::nullopt;
    batch /= b;
    const int64_t size = s[d + 1] * b - op->pads[2 * d] - op->pads[2 * d + 1];
    if (size < 0) return std::nullopt;
    s[d + 1] = size;
  }
  s[0] = batch;
  return one_shape(std::move(s));
}

}  // namespace

OpEntry space_to_batch_nd() {
  return {.layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_space_to_batch,
          .check = check_space_to_batch,
          .lower = lower_space_to_batch,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Pad + Reshape + Transpose + Reshape",
                  .notes = "4-D, constant block_shape and paddings, static H/W/C"}};
}

OpEntry batch_to_space_nd() {
  return {.layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_batch_to_space,
          .check = check_batch_to_space,
          .lower = lower_batch_to_space,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "Reshape + Transpose + Reshape + Slice",
                  .notes = "4-D, constant block_shape and crops, static H/W/C"}};
}

OpEntry space_to_depth() {
  return {.read = {.options = read_space_to_depth_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_space_to_depth,
          .check = check_space_to_depth,
          .lower = lower_space_to_depth,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "SpaceToDepth"}};
}

OpEntry depth_to_space() {
  return {.read = {.options = read_depth_to_space_options},
          .layout = {.kind = LayoutClass::kImplicit},
          .infer_shapes = infer_depth_to_space,
          .check = check_depth_to_space,
          .lower = lower_depth_to_space,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .doc = {.onnx = "DepthToSpace (DCR)"}};
}

}  // namespace lite2onnx::ops::space
