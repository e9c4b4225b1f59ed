// Each op family's entries, one function per entry (a designated initializer
// in the family's file: docs/architecture.md, "Op table"), assembled into the
// table by registry.cc.
#pragma once

#include "core/ops/registry.h"

namespace lite2onnx::ops {

namespace exact {
// The 8-bit table ops (exact_tables.cc): LOGISTIC, TANH and ELU as the new
// XNNPACK's table (LiteRT.js; tfjs-tflite's older tables differ in at most
// two entries for some parameters), HARD_SWISH as TFLite's fixed point,
// LEAKY_RELU as XNNPACK's 8-fractional-bit multipliers (TFLite's MBQM where
// XNNPACK refuses the scales), the RELU family as TFLite's QuantizedReluX.
ExactForm logistic_table();
ExactForm tanh_table();
ExactForm elu_table();
ExactForm hard_swish_table();
ExactForm leaky_relu_table();
ExactForm relu_table();
ExactForm relu6_table();
ExactForm relu_n1_to_1_table();
ExactForm rsqrt_table();  // int8, TFLite's fixed-point inverse square root
// int8 L2_NORMALIZATION: the same inverse square root per row (exact_l2norm.cc).
ExactForm l2_normalization_exact();
// 8-bit SOFTMAX as TFLite's float-table kernel (exact_softmax.cc).
ExactForm softmax_table();
// CONCATENATION: the integers copied, uint8 inputs with other parameters than
// the output's requantized as TFLite's ConcatenationWithScaling does (LiteRT.js).
ExactForm concatenation_exact();
// BATCH_MATMUL int8 and int16 (16x8, 16x16) as the kernel LiteRT.js runs
// (exact_matmul.cc).
ExactForm batch_matmul_exact();
}  // namespace exact

namespace elementwise {
// `exact`: its integer form in --quantization exact (none: refused there).
OpEntry unary(const char* onnx_op, ExactForm exact = {});
OpEntry relu6();
OpEntry relu_n1_to_1();
OpEntry rsqrt();
OpEntry hard_swish();
OpEntry leaky_relu();
// `arithmetic`: what constant folding computes (kNone: not folded).
OpEntry binary(const char* onnx_op, const char* dtypes, Arithmetic arithmetic = Arithmetic::kNone);
OpEntry squared_difference();
OpEntry prelu();
OpEntry dequantize();
OpEntry densify();
OpEntry quantize();
}  // namespace elementwise

namespace conv {
OpEntry conv2d();
OpEntry depthwise_conv2d();
OpEntry transpose_conv();
OpEntry mediapipe_transpose_conv_bias();  // custom Convolution2DTransposeBias
OpEntry conv3d();                         // CONV_3D (conv3d.cc)
OpEntry conv3d_transpose();               // CONV_3D_TRANSPOSE (conv3d.cc)
}  // namespace conv

namespace pool {
OpEntry average_pool2d();
OpEntry max_pool2d();
OpEntry mediapipe_max_pool_argmax();  // custom MaxPoolingWithArgmax2D
OpEntry mediapipe_max_unpool();       // custom MaxUnpooling2D
}  // namespace pool

namespace shape {
OpEntry reshape();
OpEntry squeeze();
OpEntry transpose();
OpEntry concatenation();
OpEntry split();
OpEntry split_v();
OpEntry strided_slice();
OpEntry pad();  // PAD and PADV2
OpEntry mirror_pad();
}  // namespace shape

namespace reduce {
OpEntry mean();
OpEntry softmax();
OpEntry sum();
OpEntry reduce_max();
OpEntry reduce_min();
OpEntry reduce_prod();
OpEntry reduce_any();
OpEntry reduce_all();
OpEntry arg_max();
OpEntry arg_min();
OpEntry log_softmax();
OpEntry l2_normalization();
OpEntry local_response_normalization();
OpEntry topk_v2();
}  // namespace reduce

namespace dense {
OpEntry fully_connected();
}  // namespace dense

namespace resize {
OpEntry bilinear();
OpEntry nearest_neighbor();
}  // namespace resize

namespace space {
OpEntry space_to_batch_nd();
OpEntry batch_to_space_nd();
OpEntry space_to_depth();
OpEntry depth_to_space();
}  // namespace space

namespace gather {
OpEntry shape_op();
OpEntry pack();
OpEntry unpack();
OpEntry gather();
OpEntry expand_dims();
OpEntry fill();
}  // namespace gather

namespace arith {
OpEntry floor_mod();
}  // namespace arith

namespace data {
OpEntry slice();
OpEntry tile();
OpEntry reverse_v2();
OpEntry broadcast_to();
OpEntry gather_nd();
OpEntry scatter_nd();
OpEntry range();
OpEntry where();
OpEntry batch_matmul();
}  // namespace data

namespace math {
OpEntry float_unary(const char* onnx_op, ExactForm exact = {});
OpEntry neg();
OpEntry square();
OpEntry zeros_like();
OpEntry gelu();
OpEntry cast();
OpEntry equal();
OpEntry compare(const char* onnx_op);  // ordered comparisons
OpEntry not_equal();
OpEntry logical_binary(const char* onnx_op);
OpEntry logical_not();
OpEntry min_max(const char* onnx_op, Arithmetic arithmetic);
OpEntry floor_div();
OpEntry select();
OpEntry select_v2();
OpEntry add_n();
OpEntry atan2();
OpEntry fake_quant();
}  // namespace math

namespace bitwise {
OpEntry bitwise_xor();
OpEntry right_shift();
}  // namespace bitwise

namespace indexing {
OpEntry one_hot();
OpEntry sparse_to_dense();
OpEntry matrix_diag();
OpEntry matrix_set_diag();
OpEntry broadcast_args();
OpEntry bucketize();
OpEntry dynamic_update_slice();
OpEntry unique();
OpEntry rank();
OpEntry embedding_lookup_sparse();
}  // namespace indexing

namespace segment {
OpEntry segment_op();  // SEGMENT_SUM, UNSORTED_SEGMENT_SUM/PROD/MAX/MIN
}  // namespace segment

namespace random {
OpEntry random_op();  // RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL
}  // namespace random

namespace stablehlo {
// The element-wise ops named by the ONNX op they become (stablehlo.cc).
OpEntry elementwise(const char* onnx_op);
OpEntry compare();
OpEntry select();
OpEntry convert();
OpEntry clamp();
// Shape ops (stablehlo_shape.cc).
OpEntry reshape();
OpEntry transpose();
OpEntry broadcast_in_dim();
OpEntry concatenate();
OpEntry slice();
OpEntry dynamic_slice();
OpEntry dynamic_update_slice();
OpEntry pad();
OpEntry iota();
}  // namespace stablehlo

namespace extra {
OpEntry sign();
OpEntry relu_0_to_1();
OpEntry embedding_lookup();
OpEntry cumsum();
OpEntry l2_pool2d();
OpEntry reverse_sequence();
}  // namespace extra

namespace spectral {
OpEntry rfft2d();
OpEntry complex_abs();
OpEntry complex_part();  // REAL, IMAG
}  // namespace spectral

namespace landmarks {                     // MediaPipe's custom transforms, version 2
OpEntry transform_tensor_bilinear();      // custom TransformTensorBilinear
OpEntry transform_landmarks();            // custom TransformLandmarks
OpEntry landmarks_to_transform_matrix();  // custom Landmarks2TransformMatrix
}  // namespace landmarks

namespace audio {             // TFLite's own audio custom ops
OpEntry audio_spectrogram();  // custom AudioSpectrogram
OpEntry mfcc();               // custom Mfcc
}  // namespace audio

namespace tensor_list {  // select-TF TensorList ops (custom "Flex" + name)
OpEntry reserve();
OpEntry from_tensor();
OpEntry get_item();
OpEntry set_item();
OpEntry stack();
OpEntry length();
}  // namespace tensor_list

namespace recurrent {
OpEntry rnn();
OpEntry unidirectional_sequence_rnn();
OpEntry bidirectional_sequence_rnn();
OpEntry lstm();
OpEntry unidirectional_sequence_lstm();
OpEntry bidirectional_sequence_lstm();
OpEntry svdf();
}  // namespace recurrent

namespace control {
OpEntry while_loop();    // WHILE (as the reader expands it): Loop
OpEntry if_then_else();  // IF: If
OpEntry call();          // CALL: copied in place by the reader
OpEntry composite();     // STABLEHLO_COMPOSITE: its decomposition copied in place
// Resource variables: made state pairs by passes::expose_state.
OpEntry var_handle();
OpEntry read_variable();
OpEntry assign_variable();
OpEntry call_once();
}  // namespace control

namespace detection {
OpEntry detection_postprocess();  // custom TFLite_Detection_PostProcess
OpEntry non_max_suppression_v4();
OpEntry non_max_suppression_v5();
}  // namespace detection

}  // namespace lite2onnx::ops
