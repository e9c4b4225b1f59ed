// The one visible operator table (ArmNN style): a dense vector indexed by the
// TFLite builtin code, pre-filled with "unsupported", one line per supported op.
#include <array>
#include <map>
#include <string>

#include "schema_generated.h"

#include "core/ir/builtins.h"
#include "core/ops/families.h"
#include "core/ops/posenet.h"
#include "core/ops/select_tf.h"
#include "core/ops/signal.h"

namespace lite2onnx::ops {
namespace {

constexpr int kNumBuiltins = ir::builtin::kCount;
namespace builtin = ir::builtin;
using Table = std::array<OpEntry, kNumBuiltins>;

Table make_table() {
  Table t{};
  t[builtin::kAdd] = elementwise::binary("Add", "float32, int32, int64", Arithmetic::kAdd);
  t[builtin::kAveragePool2d] = pool::average_pool2d();
  t[builtin::kConcatenation] = shape::concatenation();
  t[builtin::kConv2d] = conv::conv2d();
  t[builtin::kDepthwiseConv2d] = conv::depthwise_conv2d();
  t[builtin::kDequantize] = elementwise::dequantize();
  t[builtin::kFullyConnected] = dense::fully_connected();
  t[builtin::kLogistic] = elementwise::unary("Sigmoid", exact::logistic_table());
  t[builtin::kMaxPool2d] = pool::max_pool2d();
  t[builtin::kMul] = elementwise::binary("Mul", "float32, int32, int64", Arithmetic::kMul);
  t[builtin::kRelu] = elementwise::unary("Relu", exact::relu_table());
  t[builtin::kReluN1To1] = elementwise::relu_n1_to_1();
  t[builtin::kRelu6] = elementwise::relu6();
  t[builtin::kReshape] = shape::reshape();
  t[builtin::kResizeBilinear] = resize::bilinear();
  t[builtin::kSoftmax] = reduce::softmax();
  t[builtin::kTanh] = elementwise::unary("Tanh", exact::tanh_table());
  t[builtin::kPad] = shape::pad();
  t[builtin::kTranspose] = shape::transpose();
  t[builtin::kMean] = reduce::mean();
  t[builtin::kSub] = elementwise::binary("Sub", "float32, int32, int64", Arithmetic::kSub);
  t[builtin::kDiv] = elementwise::binary("Div", "float32, int32");
  t[builtin::kSqueeze] = shape::squeeze();
  t[builtin::kStridedSlice] = shape::strided_slice();
  t[builtin::kSplit] = shape::split();
  t[builtin::kPrelu] = elementwise::prelu();
  t[builtin::kPadv2] = shape::pad();
  t[builtin::kTransposeConv] = conv::transpose_conv();
  t[builtin::kSqrt] = elementwise::unary("Sqrt");
  t[builtin::kRsqrt] = elementwise::rsqrt();
  t[builtin::kPow] = elementwise::binary("Pow", "float32, int32");
  t[builtin::kResizeNearestNeighbor] = resize::nearest_neighbor();
  t[builtin::kLeakyRelu] = elementwise::leaky_relu();
  t[builtin::kSquaredDifference] = elementwise::squared_difference();
  t[builtin::kMirrorPad] = shape::mirror_pad();
  t[builtin::kAbs] = elementwise::unary("Abs");
  t[builtin::kSplitV] = shape::split_v();
  t[builtin::kHardSwish] = elementwise::hard_swish();
  t[builtin::kDepthToSpace] = space::depth_to_space();
  t[builtin::kSpaceToDepth] = space::space_to_depth();
  t[builtin::kWhile] = control::while_loop();
  t[builtin::kIf] = control::if_then_else();
  t[builtin::kCall] = control::call();
  t[builtin::kVarHandle] = control::var_handle();
  t[builtin::kReadVariable] = control::read_variable();
  t[builtin::kAssignVariable] = control::assign_variable();
  t[builtin::kCallOnce] = control::call_once();
  t[builtin::kGather] = gather::gather();
  t[builtin::kBatchToSpaceNd] = space::batch_to_space_nd();
  t[builtin::kSpaceToBatchNd] = space::space_to_batch_nd();
  t[builtin::kExpandDims] = gather::expand_dims();
  t[builtin::kShape] = gather::shape_op();
  t[builtin::kPack] = gather::pack();
  t[builtin::kUnpack] = gather::unpack();
  t[builtin::kFill] = gather::fill();
  t[builtin::kFloorMod] = arith::floor_mod();
  t[builtin::kSlice] = data::slice();
  t[builtin::kTile] = data::tile();
  t[builtin::kReverseV2] = data::reverse_v2();
  t[builtin::kBroadcastTo] = data::broadcast_to();
  t[builtin::kGatherNd] = data::gather_nd();
  t[builtin::kScatterNd] = data::scatter_nd();
  t[builtin::kRnn] = recurrent::rnn();
  t[builtin::kUnidirectionalSequenceRnn] = recurrent::unidirectional_sequence_rnn();
  t[builtin::kBidirectionalSequenceRnn] = recurrent::bidirectional_sequence_rnn();
  t[builtin::kLstm] = recurrent::lstm();
  t[builtin::kUnidirectionalSequenceLstm] = recurrent::unidirectional_sequence_lstm();
  t[builtin::kBidirectionalSequenceLstm] = recurrent::bidirectional_sequence_lstm();
  t[builtin::kSvdf] = recurrent::svdf();
  t[builtin::kDensify] = elementwise::densify();
  t[builtin::kRange] = data::range();
  t[builtin::kWhere] = data::where();
  t[builtin::kBatchMatmul] = data::batch_matmul();
  t[builtin::kCeil] = math::float_unary("Ceil");
  t[builtin::kCos] = math::float_unary("Cos");
  t[builtin::kElu] = math::float_unary("Elu", exact::elu_table());
  t[builtin::kExp] = math::float_unary("Exp");
  t[builtin::kFloor] = math::float_unary("Floor");
  t[builtin::kLog] = math::float_unary("Log");
  t[builtin::kRound] = math::float_unary("Round");
  t[builtin::kSin] = math::float_unary("Sin");
  t[builtin::kNeg] = math::neg();
  t[builtin::kSquare] = math::square();
  t[builtin::kZerosLike] = math::zeros_like();
  t[builtin::kGelu] = math::gelu();
  t[builtin::kCast] = math::cast();
  t[builtin::kEqual] = math::equal();
  t[builtin::kNotEqual] = math::not_equal();
  t[builtin::kGreater] = math::compare("Greater");
  t[builtin::kGreaterEqual] = math::compare("GreaterOrEqual");
  t[builtin::kLess] = math::compare("Less");
  t[builtin::kLessEqual] = math::compare("LessOrEqual");
  t[builtin::kLogicalAnd] = math::logical_binary("And");
  t[builtin::kLogicalOr] = math::logical_binary("Or");
  t[builtin::kLogicalNot] = math::logical_not();
  t[builtin::kMaximum] = math::min_max("Max", Arithmetic::kMaximum);
  t[builtin::kMinimum] = math::min_max("Min", Arithmetic::kMinimum);
  t[builtin::kFloorDiv] = math::floor_div();
  t[builtin::kSelect] = math::select();
  t[builtin::kSelectV2] = math::select_v2();
  t[builtin::kAddN] = math::add_n();
  t[builtin::kSum] = reduce::sum();
  t[builtin::kReduceMax] = reduce::reduce_max();
  t[builtin::kReduceMin] = reduce::reduce_min();
  t[builtin::kReduceProd] = reduce::reduce_prod();
  t[builtin::kArgMax] = reduce::arg_max();
  t[builtin::kArgMin] = reduce::arg_min();
  t[builtin::kLogSoftmax] = reduce::log_softmax();
  t[builtin::kL2Normalization] = reduce::l2_normalization();
  t[builtin::kLocalResponseNormalization] = reduce::local_response_normalization();
  t[builtin::kTopkV2] = reduce::topk_v2();
  t[builtin::kSign] = extra::sign();
  t[builtin::kRelu0To1] = extra::relu_0_to_1();
  t[builtin::kEmbeddingLookup] = extra::embedding_lookup();
  t[builtin::kCumsum] = extra::cumsum();
  t[builtin::kL2Pool2d] = extra::l2_pool2d();
  t[builtin::kReverseSequence] = extra::reverse_sequence();
  t[builtin::kQuantize] = elementwise::quantize();
  t[builtin::kRfft2d] = spectral::rfft2d();
  t[builtin::kComplexAbs] = spectral::complex_abs();
  t[builtin::kNonMaxSuppressionV4] = detection::non_max_suppression_v4();
  t[builtin::kNonMaxSuppressionV5] = detection::non_max_suppression_v5();
  t[builtin::kConv3d] = conv::conv3d();
  t[builtin::kConv3dTranspose] = conv::conv3d_transpose();
  t[builtin::kReduceAny] = reduce::reduce_any();
  t[builtin::kReduceAll] = reduce::reduce_all();
  t[builtin::kAtan2] = math::atan2();
  t[builtin::kFakeQuant] = math::fake_quant();
  t[builtin::kBitwiseXor] = bitwise::bitwise_xor();
  t[builtin::kRightShift] = bitwise::right_shift();
  t[builtin::kReal] = spectral::complex_part();
  t[builtin::kImag] = spectral::complex_part();
  t[builtin::kOneHot] = indexing::one_hot();
  t[builtin::kSparseToDense] = indexing::sparse_to_dense();
  t[builtin::kMatrixDiag] = indexing::matrix_diag();
  t[builtin::kMatrixSetDiag] = indexing::matrix_set_diag();
  t[builtin::kBroadcastArgs] = indexing::broadcast_args();
  t[builtin::kBucketize] = indexing::bucketize();
  t[builtin::kDynamicUpdateSlice] = indexing::dynamic_update_slice();
  t[builtin::kUnique] = indexing::unique();
  t[builtin::kRank] = indexing::rank();
  t[builtin::kEmbeddingLookupSparse] = indexing::embedding_lookup_sparse();
  t[builtin::kSegmentSum] = segment::segment_op();
  t[builtin::kUnsortedSegmentSum] = segment::segment_op();
  t[builtin::kUnsortedSegmentProd] = segment::segment_op();
  t[builtin::kUnsortedSegmentMax] = segment::segment_op();
  t[builtin::kUnsortedSegmentMin] = segment::segment_op();
  t[builtin::kRandomUniform] = random::random_op();
  t[builtin::kRandomStandardNormal] = random::random_op();
  t[builtin::kMultinomial] = random::random_op();
  t[builtin::kStablehloAdd] = stablehlo::elementwise("Add");
  t[builtin::kStablehloSubtract] = stablehlo::elementwise("Sub");
  t[builtin::kStablehloMultiply] = stablehlo::elementwise("Mul");
  t[builtin::kStablehloDivide] = stablehlo::elementwise("Div");
  t[builtin::kStablehloMaximum] = stablehlo::elementwise("Max");
  t[builtin::kStablehloMinimum] = stablehlo::elementwise("Min");
  t[builtin::kStablehloPower] = stablehlo::elementwise("Pow");
  t[builtin::kStablehloRemainder] = stablehlo::elementwise("Mod (fmod)");
  t[builtin::kStablehloAbs] = stablehlo::elementwise("Abs");
  t[builtin::kStablehloNegate] = stablehlo::elementwise("Neg");
  t[builtin::kStablehloExponential] = stablehlo::elementwise("Exp");
  t[builtin::kStablehloLog] = stablehlo::elementwise("Log");
  t[builtin::kStablehloRsqrt] = stablehlo::elementwise("Sqrt + Reciprocal");
  t[builtin::kStablehloTanh] = stablehlo::elementwise("Tanh");
  t[builtin::kStablehloLogistic] = stablehlo::elementwise("Sigmoid");
  t[builtin::kStablehloFloor] = stablehlo::elementwise("Floor");
  t[builtin::kStablehloCosine] = stablehlo::elementwise("Cos");
  t[builtin::kStablehloAnd] = stablehlo::elementwise("And");
  t[builtin::kStablehloOr] = stablehlo::elementwise("Or");
  t[builtin::kStablehloCompare] = stablehlo::compare();
  t[builtin::kStablehloSelect] = stablehlo::select();
  t[builtin::kStablehloConvert] = stablehlo::convert();
  t[builtin::kStablehloClamp] = stablehlo::clamp();
  t[builtin::kStablehloReshape] = stablehlo::reshape();
  t[builtin::kStablehloTranspose] = stablehlo::transpose();
  t[builtin::kStablehloBroadcastInDim] = stablehlo::broadcast_in_dim();
  t[builtin::kStablehloConcatenate] = stablehlo::concatenate();
  t[builtin::kStablehloSlice] = stablehlo::slice();
  t[builtin::kStablehloDynamicSlice] = stablehlo::dynamic_slice();
  t[builtin::kStablehloDynamicUpdateSlice] = stablehlo::dynamic_update_slice();
  t[builtin::kStablehloPad] = stablehlo::pad();
  t[builtin::kStablehloIota] = stablehlo::iota();
  t[builtin::kStablehloComposite] = control::composite();

  return t;
}

const Table& table() {
  static const Table t = make_table();  // immutable after first use
  return t;
}

// The custom-op table, keyed by custom code (MediaPipe's and TFLite's own
// custom operators).
using CustomTable = std::map<std::string, OpEntry, std::less<>>;

CustomTable make_custom_table() {
  CustomTable t;
  t["TFLite_Detection_PostProcess"] = detection::detection_postprocess();
  t["PosenetDecoderOp"] = posenet::decoder();
  t["AudioSpectrogram"] = audio::audio_spectrogram();
  t["Mfcc"] = audio::mfcc();
  t["Convolution2DTransposeBias"] = conv::mediapipe_transpose_conv_bias();
  t["MaxPoolingWithArgmax2D"] = pool::mediapipe_max_pool_argmax();
  t["MaxUnpooling2D"] = pool::mediapipe_max_unpool();
  t["TransformTensorBilinear"] = landmarks::transform_tensor_bilinear();
  t["TransformLandmarks"] = landmarks::transform_landmarks();
  t["Landmarks2TransformMatrix"] = landmarks::landmarks_to_transform_matrix();
  t["FlexTensorListReserve"] = tensor_list::reserve();
  t["FlexTensorListFromTensor"] = tensor_list::from_tensor();
  t["FlexTensorListGetItem"] = tensor_list::get_item();
  t["FlexTensorListSetItem"] = tensor_list::set_item();
  t["FlexTensorListStack"] = tensor_list::stack();
  t["FlexTensorListLength"] = tensor_list::length();
  // Select-TF ops with a builtin twin (select_tf.cc's table): read as the
  // builtin, so these entries only read the NodeDef and refuse a node left.
  for (const SelectTfTwin& twin : select_tf_twins())
    t[std::string("Flex") + twin.tf_op] = select_tf_entry(twin);
  t["FlexSoftplus"] = select_tf_softplus();
  // TensorFlow Lite Micro's Signal library (signal.cc's table).
  for (const signal::SignalOp& op : signal::signal_ops()) t[op.code] = op.entry();
  return t;
}

const CustomTable& custom_table() {
  static const CustomTable t = make_custom_table();  // immutable after first use
  return t;
}

}  // namespace

const char* to_string(LayoutClass c) {
  switch (c) {
    case LayoutClass::kImplicit:
      return "Implicit";
    case LayoutClass::kTransparent:
      return "Transparent";
    case LayoutClass::kAttribute:
      return "Attribute";
    case LayoutClass::kTerminate:
      return "Terminate";
    case LayoutClass::kSubgraph:
      return "Subgraph";
  }
  return "?";
}

const OpEntry& lookup(int builtin) {
  static const OpEntry kUnsupported{};
  if (builtin < 0 || builtin >= kNumBuiltins) return kUnsupported;
  return table()[static_cast<size_t>(builtin)];
}

const OpEntry& lookup_custom(std::string_view custom_code) {
  static const OpEntry kUnsupported{};
  const auto& t = custom_table();
  auto it = t.find(custom_code);
  return it == t.end() ? kUnsupported : it->second;
}

const OpEntry& lookup(const ir::NodeInfo& n) {
  return n.builtin == builtin::kCustom ? lookup_custom(n.op) : lookup(n.builtin);
}

namespace {

// An op the reader cannot take: listed with its code (the reader adds the
// op's index and name).
Error unsupported_op(ReasonCode code, std::string message) {
  Error e = make_error(ErrorCode::kUnsupported, message);
  e.unsupported.push_back({-1, "", std::move(message), to_string(code)});
  return e;
}

}  // namespace

Status read_options(int builtin, std::string_view custom_code, int version,
                    const tflite::Operator& op, ir::Attributes& attrs) {
  if (builtin != ir::builtin::kCustom) {
    if (ReadOptionsFn read = lookup(builtin).read.options) read(op, attrs);
    return ok_status();
  }
  const OpEntry& e = lookup_custom(custom_code);
  if (e.read.custom_version != 0 && version != e.read.custom_version)
    return unsupported_op(ReasonCode::kOpVersion,
                          "version " + std::to_string(version) +
                              " of this custom op is not converted (only version " +
                              std::to_string(e.read.custom_version) +
                              ", the one its runtime registers)");
  CustomOptionsFn read = e.read.custom_options;
  if (!read) return ok_status();
  if (op.large_custom_options_size() > 0)
    return unsupported_op(
        ReasonCode::kNotImplemented,
        "custom options stored outside the FlatBuffer (large_custom_options_offset)");
  const auto* bytes = op.custom_options();
  return read(
      bytes ? std::span<const uint8_t>(bytes->data(), bytes->size()) : std::span<const uint8_t>(),
      attrs);
}

std::vector<std::pair<int, const OpEntry*>> all_entries() {
  std::vector<std::pair<int, const OpEntry*>> out;
  for (int i = 0; i < kNumBuiltins; ++i) out.emplace_back(i, &table()[static_cast<size_t>(i)]);
  return out;
}

std::vector<std::pair<std::string, const OpEntry*>> all_custom_entries() {
  std::vector<std::pair<std::string, const OpEntry*>> out;
  for (const auto& [code, e] : custom_table()) out.emplace_back(code, &e);
  return out;
}

}  // namespace lite2onnx::ops
