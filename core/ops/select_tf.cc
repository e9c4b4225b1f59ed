// The select-TF twin table (select_tf.h): TensorFlow ops run through the
// Flex delegate that have a TFLite builtin computing the same function, and
// the NodeDef attributes that become the builtin's options. Every twin's
// inputs are the TF op's, in the TF op's order, except the axis operands
// that the builtin has as an attribute (axis_input).
#include "core/ops/select_tf.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "schema_generated.h"

#include "core/ir/builtins.h"
#include "core/ir/types.h"
#include "core/ops/families.h"
#include "core/ops/node_def.h"

namespace lite2onnx::ops {
namespace {

namespace builtin = ir::builtin;
using K = TfAttrKind;

constexpr TfAttrMapping kStridedSlice[] = {{"begin_mask", K::kInt, "begin_mask"},
                                           {"end_mask", K::kInt, "end_mask"},
                                           {"ellipsis_mask", K::kInt, "ellipsis_mask"},
                                           {"new_axis_mask", K::kInt, "new_axis_mask"},
                                           {"shrink_axis_mask", K::kInt, "shrink_axis_mask"}};
constexpr TfAttrMapping kKeepDims[] = {{"keep_dims", K::kBool, "keep_dims"}};
constexpr TfAttrMapping kPack[] = {{"N", K::kInt, "values_count"}, {"axis", K::kInt, "axis"}};
constexpr TfAttrMapping kUnpack[] = {{"num", K::kInt, "num"}, {"axis", K::kInt, "axis"}};
constexpr TfAttrMapping kShape[] = {{"out_type", K::kType, "out_type"}};
constexpr TfAttrMapping kSqueeze[] = {{"squeeze_dims", K::kInts, "squeeze_dims"}};
constexpr TfAttrMapping kGatherV2[] = {{"batch_dims", K::kInt, "batch_dims"}};
constexpr TfAttrMapping kSplit[] = {{"num_split", K::kInt, "num_splits"}};
constexpr TfAttrMapping kBatchMatMul[] = {{"adj_x", K::kBool, "adj_x"},
                                          {"adj_y", K::kBool, "adj_y"}};
constexpr TfAttrMapping kCumsum[] = {{"exclusive", K::kBool, "exclusive"},
                                     {"reverse", K::kBool, "reverse"}};
constexpr TfAttrMapping kOneHot[] = {{"axis", K::kInt, "axis"}};
constexpr TfAttrMapping kLeakyRelu[] = {{"alpha", K::kFloat, "alpha"}};

// In name order (find_select_tf_twin searches it by halves).
constexpr SelectTfTwin kTwins[] = {
    {"Abs", builtin::kAbs, {}},
    {"Add", builtin::kAdd, {}},
    {"AddN", builtin::kAddN, {}},
    {"AddV2", builtin::kAdd, {}},
    {"All", builtin::kReduceAll, kKeepDims},
    {"Any", builtin::kReduceAny, kKeepDims},
    {"ArgMax", builtin::kArgMax, {}},
    {"ArgMin", builtin::kArgMin, {}},
    {"Atan2", builtin::kAtan2, {}},
    {"BatchMatMulV2", builtin::kBatchMatmul, kBatchMatMul},
    {"BatchMatMulV3", builtin::kBatchMatmul, kBatchMatMul},
    {"BroadcastTo", builtin::kBroadcastTo, {}},
    {"Cast", builtin::kCast, {}, -1, nullptr, "Truncate ignored (TFLite's CAST truncates too)"},
    {"Ceil", builtin::kCeil, {}},
    {"ConcatV2",
     builtin::kConcatenation,
     {},
     kLastInput,
     "N",
     "the axis operand (last input) must be a constant"},
    {"Cos", builtin::kCos, {}},
    {"Cumsum", builtin::kCumsum, kCumsum},
    {"Elu", builtin::kElu, {}},
    {"Equal", builtin::kEqual, {}, -1, nullptr, "incompatible_shape_error ignored"},
    {"Exp", builtin::kExp, {}},
    {"ExpandDims", builtin::kExpandDims, {}},
    {"Fill", builtin::kFill, {}},
    {"Floor", builtin::kFloor, {}},
    {"FloorDiv", builtin::kFloorDiv, {}},
    {"FloorMod", builtin::kFloorMod, {}},
    {"GatherNd", builtin::kGatherNd, {}},
    {"GatherV2", builtin::kGather, kGatherV2, 2, nullptr,
     "the axis operand (input 2) must be a constant"},
    {"Greater", builtin::kGreater, {}},
    {"GreaterEqual", builtin::kGreaterEqual, {}},
    {"LeakyRelu", builtin::kLeakyRelu, kLeakyRelu},
    {"Less", builtin::kLess, {}},
    {"LessEqual", builtin::kLessEqual, {}},
    {"Log", builtin::kLog, {}},
    {"LogSoftmax", builtin::kLogSoftmax, {}},
    {"LogicalAnd", builtin::kLogicalAnd, {}},
    {"LogicalNot", builtin::kLogicalNot, {}},
    {"LogicalOr", builtin::kLogicalOr, {}},
    {"Max", builtin::kReduceMax, kKeepDims},
    {"Maximum", builtin::kMaximum, {}},
    {"Mean", builtin::kMean, kKeepDims},
    {"Min", builtin::kReduceMin, kKeepDims},
    {"Minimum", builtin::kMinimum, {}},
    {"Mul", builtin::kMul, {}},
    {"Neg", builtin::kNeg, {}},
    {"NotEqual", builtin::kNotEqual, {}, -1, nullptr, "incompatible_shape_error ignored"},
    {"OneHot", builtin::kOneHot, kOneHot},
    {"Pack", builtin::kPack, kPack, -1, "N"},
    {"Pad", builtin::kPad, {}},
    {"PadV2", builtin::kPadv2, {}},
    {"Pow", builtin::kPow, {}},
    {"Prod", builtin::kReduceProd, kKeepDims},
    {"Range", builtin::kRange, {}},
    {"Rank", builtin::kRank, {}},
    {"RealDiv", builtin::kDiv, {}},
    {"Relu", builtin::kRelu, {}},
    {"Relu6", builtin::kRelu6, {}},
    {"Reshape", builtin::kReshape, {}},
    {"ReverseV2", builtin::kReverseV2, {}},
    {"Round", builtin::kRound, {}},
    {"Rsqrt", builtin::kRsqrt, {}},
    {"ScatterNd", builtin::kScatterNd, {}},
    {"Select", builtin::kSelect, {}},
    {"SelectV2", builtin::kSelectV2, {}},
    {"Shape", builtin::kShape, kShape},
    {"Sigmoid", builtin::kLogistic, {}},
    {"Sign", builtin::kSign, {}},
    {"Sin", builtin::kSin, {}},
    {"Slice", builtin::kSlice, {}},
    {"Softmax", builtin::kSoftmax, {}},
    {"Split", builtin::kSplit, kSplit},
    {"SplitV", builtin::kSplitV, kSplit},
    {"Sqrt", builtin::kSqrt, {}},
    {"Square", builtin::kSquare, {}},
    {"SquaredDifference", builtin::kSquaredDifference, {}},
    {"Squeeze", builtin::kSqueeze, kSqueeze},
    {"StridedSlice", builtin::kStridedSlice, kStridedSlice},
    {"Sub", builtin::kSub, {}},
    {"Sum", builtin::kSum, kKeepDims},
    {"Tanh", builtin::kTanh, {}},
    {"Tile", builtin::kTile, {}},
    {"Transpose", builtin::kTranspose, {}},
    {"Unpack", builtin::kUnpack, kUnpack},
    {"Where", builtin::kWhere, {}},
    {"ZerosLike", builtin::kZerosLike, {}},
};

Error bad(const SelectTfTwin& twin, const TfAttrMapping& m, const std::string& what) {
  return make_error(ErrorCode::kInvalidModel, std::string("select-TF op options: TF op ") +
                                                  twin.tf_op + ": attribute '" + m.tf + "' " +
                                                  what);
}

// An Operator with no options: what a builtin's options reader reads as the
// builtin's defaults.
const tflite::Operator& empty_operator() {
  static const std::vector<uint8_t> bytes = [] {
    flatbuffers::FlatBufferBuilder b;
    b.Finish(tflite::CreateOperator(b));
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  }();
  return *flatbuffers::GetRoot<tflite::Operator>(bytes.data());
}

bool is_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

Status map_attr(const SelectTfTwin& twin, const TfAttrMapping& m, const TfAttrValue& v,
                ir::Attributes& attrs) {
  if (v.kinds() != 1)
    return bad(twin, m,
               "holds " + std::to_string(v.kinds()) + " kinds of value (an AttrValue holds one)");
  switch (m.kind) {
    case K::kInt:
      if (!v.i) return bad(twin, m, "is no integer");
      if (!is_int32(*v.i)) return bad(twin, m, std::to_string(*v.i) + " is out of int32 range");
      attrs.set(m.attr, *v.i);
      return ok_status();
    case K::kBool:
      if (!v.b) return bad(twin, m, "is no bool");
      attrs.set(m.attr, int64_t{*v.b ? 1 : 0});
      return ok_status();
    case K::kType: {
      if (!v.type) return bad(twin, m, "is no type");
      const auto t = tflite_type_of_tf(*v.type);
      if (!t)
        return bad(twin, m,
                   "is TF type " + std::to_string(*v.type) + ", which TFLite has no tensors of");
      attrs.set(m.attr, int64_t{*t});
      return ok_status();
    }
    case K::kInts:
      if (!v.has_list) return bad(twin, m, "is no list");
      if (!v.list_type.empty()) return bad(twin, m, "is a list of types, not of integers");
      for (int64_t x : v.list_i)
        if (!is_int32(x)) return bad(twin, m, std::to_string(x) + " is out of int32 range");
      attrs.set(m.attr, v.list_i);
      return ok_status();
    case K::kFloat:
      if (!v.f) return bad(twin, m, "is no float");
      if (!std::isfinite(*v.f)) return bad(twin, m, "is not finite");
      attrs.set(m.attr, *v.f);
      return ok_status();
  }
  return ok_status();
}

// A Flex node left as it is (the pass says why): it never reaches lowering.
Check check_left(const ir::Graph&, const ir::Node& n) {
  return refuse(ReasonCode::kSelectTfOp,
                n.attrs.get_string("select_tf_problem", "a select-TF op left unconverted"));
}

Status not_rewritten(LowerContext&, const ir::Node& n) {
  return make_error(ErrorCode::kInternal,
                    "select-TF op '" + n.name + "' reached lowering (rewrite_select_tf_ops)");
}

}  // namespace

const SelectTfTwin* find_select_tf_twin(std::string_view tf_op) {
  const auto* it = std::lower_bound(std::begin(kTwins), std::end(kTwins), tf_op,
                                    [](const SelectTfTwin& t, std::string_view name) {
                                      return std::string_view(t.tf_op) < name;
                                    });
  return it != std::end(kTwins) && tf_op == it->tf_op ? it : nullptr;
}

std::span<const SelectTfTwin> select_tf_twins() { return kTwins; }

Status read_select_tf_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  auto def = read_flex_node_def(bytes);
  if (!def) return def.take_error();
  attrs.set("tf_op", def->tf_op);
  const SelectTfTwin* twin = find_select_tf_twin(def->tf_op);
  if (!twin) return ok_status();  // rewrite_select_tf_ops: the name is not the custom code's
  // The builtin's defaults, then what the NodeDef says (an attribute it
  // lacks has TF's default, which is the builtin's).
  if (ReadOptionsFn read = lookup(twin->builtin).read.options) read(empty_operator(), attrs);
  for (const TfAttrMapping& m : twin->attrs)
    if (const TfAttrValue* v = def->attr(m.tf))
      if (auto st = map_attr(*twin, m, *v, attrs); !st) return st;
  if (twin->count_attr) {
    const TfAttrMapping count{twin->count_attr, K::kInt, "select_tf_count"};
    const TfAttrValue* v = def->attr(twin->count_attr);
    if (!v) return bad(*twin, count, "is missing");
    if (auto st = map_attr(*twin, count, *v, attrs); !st) return st;
  }
  return ok_status();
}

namespace {

Status read_softplus_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  auto def = read_flex_node_def(bytes);
  if (!def) return def.take_error();
  if (def->tf_op != "Softplus")
    return make_error(ErrorCode::kInvalidModel,
                      "select-TF op options: they name TF op '" + def->tf_op + "', not Softplus");
  attrs.set("tf_op", def->tf_op);
  return ok_status();
}

}  // namespace

OpEntry select_tf_softplus() {
  OpEntry e = math::float_unary("Softplus");
  e.read.custom_options = read_softplus_options;
  e.quantization = {.kernel = QuantizedKernel::kNoQuantized};
  e.doc.notes =
      "select-TF Softplus (no builtin twin): log(1 + exp(x)), computed by ONNX Runtime in a "
      "stable form as TF does";
  return e;
}

OpEntry select_tf_entry(const SelectTfTwin& twin) {
  const OpEntry& b = lookup(twin.builtin);
  OpEntry e;
  e.read = {.custom_options = read_select_tf_options};
  e.layout = b.layout;
  e.check = check_left;
  e.lower = not_rewritten;
  e.quantization = {.kernel = QuantizedKernel::kNoQuantized};
  // The notes name the builtin; kept for the process's life (the custom-op
  // table that calls this is built once, under its static's guard).
  static std::deque<std::string> notes;
  notes.push_back("select-TF " + std::string(twin.tf_op) + ", read as " +
                  ir::builtin_name(twin.builtin) + (*twin.notes ? "; " : "") + twin.notes);
  e.doc = {.onnx = b.doc.onnx, .dtypes = b.doc.dtypes, .notes = notes.back().c_str()};
  return e;
}

}  // namespace lite2onnx::ops
