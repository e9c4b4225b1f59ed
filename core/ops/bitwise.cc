// BITWISE_XOR and RIGHT_SHIFT, and the bit arithmetic they share with the
// integer STABLEHLO_AND/OR (bitwise.h). Both ops are Transparent: they work
// element by element with numpy broadcasting.
#include "core/ops/bitwise.h"

#include "core/ops/common.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::bitwise {

using ir::DataType;
using ir::TensorId;

namespace {

int bit_width(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
      return 8;
    case DataType::kInt16:
    case DataType::kUInt16:
      return 16;
    default:
      return 32;
  }
}

bool is_signed(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32;
}

}  // namespace

bool integer_type(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kInt32:
    case DataType::kUInt32:
      return true;
    default:
      return false;
  }
}

void combine(NodeBuilder& b, TensorId a, TensorId c, DataType type, BitOp op, TensorId out) {
  const int w = bit_width(type);
  const int64_t modulus = int64_t{1} << w;
  std::vector<int64_t> weights;
  for (int k = 0; k < w; ++k) weights.push_back(int64_t{1} << k);
  const TensorId pow = b.ints(weights, ir::Shape{w});
  const TensorId two = b.ints({2}, ir::Shape{});
  const TensorId last = b.ints({-1});
  auto bits = [&](TensorId x) {
    TensorId wide = b.cast(x, DataType::kInt64);
    // Two's complement: the residue mod 2^w (Mod takes the divisor's sign).
    TensorId u = b.add("Mod", {wide, b.ints({modulus}, ir::Shape{})}, DataType::kInt64,
                       {{"fmod", int64_t{0}}});
    TensorId col = b.add("Unsqueeze", {u, last}, DataType::kInt64);
    TensorId shifted = b.add("Div", {col, pow}, DataType::kInt64);
    return b.add("Mod", {shifted, two}, DataType::kInt64, {{"fmod", int64_t{0}}});
  };
  TensorId x = bits(a), y = bits(c), r = ir::kNoTensor;
  switch (op) {
    case BitOp::kAnd:
      r = b.add("Mul", {x, y}, DataType::kInt64);
      break;
    case BitOp::kOr:
      r = b.add("Max", {x, y}, DataType::kInt64);
      break;
    case BitOp::kXor:
      r = b.add("Mod", {b.add("Add", {x, y}, DataType::kInt64), two}, DataType::kInt64,
                {{"fmod", int64_t{0}}});
      break;
  }
  TensorId sum = b.add("ReduceSum", {b.add("Mul", {r, pow}, DataType::kInt64), last},
                       DataType::kInt64, {{"keepdims", int64_t{0}}});
  if (is_signed(type)) {
    const int64_t half = modulus / 2;  // back to [-2^(w-1), 2^(w-1))
    TensorId shifted = b.add("Add", {sum, b.ints({half}, ir::Shape{})}, DataType::kInt64);
    TensorId wrapped = b.add("Mod", {shifted, b.ints({modulus}, ir::Shape{})}, DataType::kInt64,
                             {{"fmod", int64_t{0}}});
    sum = b.add("Sub", {wrapped, b.ints({half}, ir::Shape{})}, DataType::kInt64);
  }
  b.into("Cast", {sum}, {out}, {{"to", int64_t{ir::onnx_type_code(type)}}});
}

namespace {

Check check_integer_binary(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() != 2 || !has_input(g, n, 0) || !has_input(g, n, 1) || n.outputs.size() != 1)
    return refuse(ReasonCode::kOperands, "expects two inputs and one output");
  const DataType t = g.tensor(n.inputs[0]).dtype;
  if (!integer_type(t))
    return refuse(ReasonCode::kType, "type " + std::string(ir::to_string(t)) +
                                         " (supported: int8, uint8, int16, uint16, int32, "
                                         "uint32)");
  if (g.tensor(n.inputs[1]).dtype != t || g.tensor(n.outputs[0]).dtype != t)
    return refuse(ReasonCode::kOperands, "inputs and output must share one type");
  return {};
}

std::pair<TensorId, TensorId> operands(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  return {ctx.operand(n, 0, out_layout(g, n), out_rank(g, n)),
          ctx.operand(n, 1, out_layout(g, n), out_rank(g, n))};
}

Status lower_bitwise_xor(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  auto [x, y] = operands(ctx, n);
  combine(b, x, y, ctx.tensor(n.outputs[0]).dtype, BitOp::kXor, n.outputs[0]);
  return ok_status();
}

// TFLite clamps the shift to [0, bits - 1]. Unsigned values shift with
// BitShift (uint64); signed ones are floor(x / 2^y), from truncating Div.
Status lower_right_shift(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  auto [x, y] = operands(ctx, n);
  const DataType type = ctx.tensor(n.outputs[0]).dtype;
  const int64_t top = bit_width(type) - 1;
  const int to = ir::onnx_type_code(type);
  if (!is_signed(type)) {
    TensorId ux = b.cast(x, DataType::kUInt64);
    TensorId uy = b.cast(y, DataType::kUInt64);
    TensorId limit = b.cast(b.ints({top}, ir::Shape{}), DataType::kUInt64);
    TensorId shift = b.add("Min", {uy, limit}, DataType::kUInt64);
    TensorId r =
        b.add("BitShift", {ux, shift}, DataType::kUInt64, {{"direction", std::string("RIGHT")}});
    b.into("Cast", {r}, {n.outputs[0]}, {{"to", int64_t{to}}});
    return ok_status();
  }
  TensorId wx = b.cast(x, DataType::kInt64);
  TensorId wy = b.cast(y, DataType::kInt64);
  TensorId clamped = b.add(
      "Max",
      {b.add("Min", {wy, b.ints({top}, ir::Shape{})}, DataType::kInt64), b.ints({0}, ir::Shape{})},
      DataType::kInt64);
  TensorId p = b.add("Pow", {b.ints({2}, ir::Shape{}), clamped}, DataType::kInt64);
  TensorId q = b.add("Div", {wx, p}, DataType::kInt64);
  TensorId rest = b.add("Sub", {wx, b.add("Mul", {q, p}, DataType::kInt64)}, DataType::kInt64);
  TensorId negative = b.add("Less", {rest, b.ints({0}, ir::Shape{})}, DataType::kBool);
  TensorId floor = b.add("Sub", {q, b.cast(negative, DataType::kInt64)}, DataType::kInt64);
  b.into("Cast", {floor}, {n.outputs[0]}, {{"to", int64_t{to}}});
  return ok_status();
}

}  // namespace

OpEntry bitwise_xor() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_integer_binary,
          .lower = lower_bitwise_xor,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Cast, Mod, Div, Unsqueeze, Add, Mul, ReduceSum (the bits; BitwiseXor "
                          "is opset 18)",
                  .dtypes = "int8, uint8, int16, uint16, int32, uint32",
                  .notes = "two's-complement bits along a new axis: w times the elements"}};
}

OpEntry right_shift() {
  return {.read = {.min_inputs = 2},
          .layout = {.kind = LayoutClass::kTransparent},
          .check = check_integer_binary,
          .lower = lower_right_shift,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "unsigned: Min + BitShift (uint64); signed: floor division by Pow(2, "
                          "y) from Div, Mul, Sub, Less",
                  .dtypes = "int8, uint8, int16, uint16, int32, uint32",
                  .notes = "the shift is clamped to [0, bits - 1] as TFLite's kernel does; "
                           "arithmetic shift of signed values"}};
}

}  // namespace lite2onnx::ops::bitwise
