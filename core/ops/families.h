// Each op family's entries, one function per entry (a designated initializer
// in the family's file: docs/architecture.md, "Op table"), assembled into the
// table by registry.cc.
#pragma once

#include "core/ops/registry.h"

namespace lite2onnx::ops {

namespace elementwise {
OpEntry unary(const char* onnx_op);
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
OpEntry mediapipe_max_pool_argmax();      // custom MaxPoolingWithArgmax2D
OpEntry mediapipe_max_unpool();           // custom MaxUnpooling2D
OpEntry average_pool2d();
OpEntry max_pool2d();
}  // namespace conv

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
OpEntry float_unary(const char* onnx_op);
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
}  // namespace math

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
