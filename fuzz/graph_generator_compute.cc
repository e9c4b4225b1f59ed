// The model generator: elementwise math, convolutions, pooling, fully connected and recurrent ops.
#include "fuzz/graph_generator_parts.h"

namespace lite2onnx::fuzz::gen {

Shape Generator::broadcast(Shape a, Shape b) {
  if (a.size() < b.size()) std::swap(a, b);
  size_t off = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) a[off + i] = std::max(a[off + i], b[i]);
  return a;
}

int Generator::broadcast_partner(int x, Type type) {
  Shape s = at(x).shape;
  switch (in_.range(0, 4)) {
    case 0:
      return x;
    case 1:
      return same_shape(x, type);
    case 2:
      if (!s.empty()) s.erase(s.begin(), s.begin() + in_.range(0, static_cast<int>(s.size())));
      break;
    case 3:
      for (auto& d : s)
        if (in_.flag()) d = 1;
      break;
    default:
      s = {};
  }
  int k = new_const(s, type);
  if (is_quantized_int(type)) tensors_[static_cast<size_t>(k)].quant = random_quant(type);
  return k;
}

int Generator::same_shape(int x, std::optional<Type> type) {
  Type t = type.value_or(at(x).type);
  Shape s = at(x).shape;
  return activation([&](const TensorSpec& c) { return c.shape == s && c.type == t; },
                    [&] { return s; }, t);
}

void Generator::binary(Op code) {
  int a = data_input();
  int b = broadcast_partner(a, at(a).type);
  if (in_.flag()) std::swap(a, b);
  Shape s = broadcast(at(a).shape, at(b).shape);
  auto fn = activation_fn();
  OptionsFn opts;
  tflite::BuiltinOptions type = tflite::BuiltinOptions::NONE;
  if (code == Op::ADD) {
    type = tflite::BuiltinOptions::AddOptions;
    opts = [fn](auto& fbb) { return tflite::CreateAddOptions(fbb, fn).Union(); };
  } else if (code == Op::SUB) {
    type = tflite::BuiltinOptions::SubOptions;
    opts = [fn](auto& fbb) { return tflite::CreateSubOptions(fbb, fn).Union(); };
  } else if (code == Op::MUL) {
    type = tflite::BuiltinOptions::MulOptions;
    opts = [fn](auto& fbb) { return tflite::CreateMulOptions(fbb, fn).Union(); };
  } else if (code == Op::DIV) {
    type = tflite::BuiltinOptions::DivOptions;
    opts = [fn](auto& fbb) { return tflite::CreateDivOptions(fbb, fn).Union(); };
  }
  Type out_type = at(a).type == Type::FLOAT32 || !at(a).constant ? at(a).type : at(b).type;
  push(static_cast<int>(code), {a, b}, {new_output(s, out_type, at(a).quant)}, type, opts);
}

void Generator::rfft2d(Op part) {
  int x = data_input(2);
  int h = in_.range(1, 8), w = 1 << in_.range(0, 3);
  Shape s = {h, w / 2 + 1};
  int y = new_output(s, Type::COMPLEX64);
  push(static_cast<int>(Op::RFFT2D), {x, const_ints({h, w}, {2})}, {y});
  if (part != Op::RFFT2D) push(static_cast<int>(part), {y}, {new_output(s, Type::FLOAT32)});
}

void Generator::segment(Op code) {
  int x = data_input(in_.range(1, 4));
  const int rows = at(x).shape.empty() ? 0 : at(x).shape[0];
  const int segments = in_.range(1, 5);
  std::vector<int64_t> ids;
  for (int k = 0; k < rows; ++k)
    ids.push_back(code == Op::SEGMENT_SUM ? k * segments / std::max(rows, 1)
                                          : in_.range(0, segments - 1));
  Shape s = at(x).shape;
  if (!s.empty()) s[0] = segments;
  std::vector<int32_t> inputs = {x, const_ints(ids, {rows})};
  if (code != Op::SEGMENT_SUM) inputs.push_back(const_ints({segments}));
  push(static_cast<int>(code), inputs, {new_output(s, at(x).type)});
}

void Generator::conv3d() {
  int x = data_input(5);
  Shape s = at(x).shape;
  const int out = in_.range(1, 4);
  int w = new_const({in_.range(1, 3), in_.range(1, 3), in_.range(1, 3), s[4], out}, Type::FLOAT32);
  s[4] = out;
  auto fn = activation_fn();
  push(static_cast<int>(Op::CONV_3D), {x, w, new_const({out}, Type::FLOAT32)},
       {new_output(s, Type::FLOAT32)}, tflite::BuiltinOptions::Conv3DOptions, [fn](auto& fbb) {
         return tflite::CreateConv3DOptions(fbb, tflite::Padding::SAME, 1, 1, 1, fn).Union();
       });
}

void Generator::conv3d_transpose() {
  int x = data_input(5);
  Shape s = at(x).shape;
  const int out = in_.range(1, 4);
  int w = new_const({in_.range(1, 3), in_.range(1, 3), in_.range(1, 3), out, s[4]}, Type::FLOAT32);
  s[4] = out;
  std::vector<int64_t> dims(s.begin(), s.end());
  std::vector<int32_t> inputs = {const_ints(dims, {5}), w, x};
  if (in_.flag()) inputs.push_back(new_const({out}, Type::FLOAT32));
  push(static_cast<int>(Op::CONV_3D_TRANSPOSE), inputs, {new_output(s, Type::FLOAT32)},
       tflite::BuiltinOptions::Conv3DOptions, [](auto& fbb) {
         return tflite::CreateConv3DOptions(fbb, tflite::Padding::SAME, 1, 1, 1).Union();
       });
}

void Generator::scatter_nd() {
  Shape s = random_shape();
  if (s.empty()) s = {in_.range(1, 4)};
  const int depth = in_.range(1, static_cast<int>(s.size())), n = in_.range(1, 4);
  std::vector<int64_t> idx;
  for (int r = 0; r < n; ++r)
    for (int d = 0; d < depth; ++d) idx.push_back(in_.range(0, std::max(s[d] - 1, 0)));
  Shape upd = {n};
  upd.insert(upd.end(), s.begin() + depth, s.end());
  std::vector<int64_t> dims(s.begin(), s.end());
  push(static_cast<int>(Op::SCATTER_ND),
       {const_ints(idx, {n, depth}), new_const(upd, Type::FLOAT32),
        const_ints(dims, {static_cast<int>(s.size())})},
       {new_output(s, Type::FLOAT32)});
}

void Generator::embedding_lookup_sparse() {
  const int n = in_.range(1, 5), rows = in_.range(1, 3), vocab = in_.range(1, 5);
  std::vector<int64_t> ids, idx;
  for (int k = 0; k < n; ++k) {
    ids.push_back(in_.range(0, vocab - 1));
    idx.push_back(k * rows / n);
    idx.push_back(k);
  }
  Shape params = random_shape(in_.range(2, 3));
  params[0] = vocab;
  Shape out = {rows};
  out.insert(out.end(), params.begin() + 1, params.end());
  const auto combiner = static_cast<tflite::CombinerType>(in_.range(0, 2));
  push(static_cast<int>(Op::EMBEDDING_LOOKUP_SPARSE),
       {const_ints(ids, {n}), const_ints(idx, {n, 2}), const_ints({rows, n}, {2}),
        new_const({n}, Type::FLOAT32), new_const(params, Type::FLOAT32)},
       {new_output(out, Type::FLOAT32)}, tflite::BuiltinOptions::EmbeddingLookupSparseOptions,
       [combiner](auto& fbb) {
         return tflite::CreateEmbeddingLookupSparseOptions(fbb, combiner).Union();
       });
}

void Generator::same_shape_binary(Op code, Type type) {
  int a = data_input(-1, type);
  int b = in_.flag() ? a : same_shape(a);
  push(static_cast<int>(code), {a, b}, {new_output(at(a).shape, at(a).type)});
}

void Generator::compare(Op code) {
  int a = data_input();
  int b = broadcast_partner(a, at(a).type);
  push(static_cast<int>(code), {a, b},
       {new_output(broadcast(at(a).shape, at(b).shape), Type::BOOL)});
}

int Generator::weights(Shape shape, int channel_axis) {
  // Float models: float weights, now and then int8 ones (hybrid ops).
  if (!quantized_ && !in_.one_in(12)) return new_const(shape, Type::FLOAT32);
  int w = new_const(shape, Type::INT8);
  size_t channels = in_.flag() ? static_cast<size_t>(shape[static_cast<size_t>(channel_axis)]) : 1;
  tensors_[static_cast<size_t>(w)].quant = random_quant(Type::INT8, channels, channel_axis);
  for (auto& z : tensors_[static_cast<size_t>(w)].quant->zero_point)
    if (!in_.one_in(20)) z = 0;
  return w;
}

int Generator::hybrid_weights(Shape shape) {
  const int w = weights(std::move(shape), 0);
  auto& q = tensors_[static_cast<size_t>(w)].quant;
  if (q && q->scale.size() > 1 && !bend(4)) {
    q->scale.erase(q->scale.begin() + 1, q->scale.end());
    if (q->zero_point.size() > 1)
      q->zero_point.erase(q->zero_point.begin() + 1, q->zero_point.end());
  }
  return w;
}

int Generator::bias(int channels) {
  if (in_.one_in(8)) return -1;
  if (!quantized_) return new_const({channels}, Type::FLOAT32);
  int b = new_const({channels}, in_.one_in(16) ? Type::INT64 : Type::INT32);
  tensors_[static_cast<size_t>(b)].quant = random_quant(Type::INT32);
  return b;
}

int Generator::conv_out(int in, int k, int stride, int dilation, bool same) {
  if (stride <= 0) return in;
  int eff = (k - 1) * dilation + 1;
  return same ? (in + stride - 1) / stride : std::max((in - eff) / stride + 1, 0);
}

void Generator::conv(Op code) {
  int x = image_input();
  Shape s = at(x).shape;
  int kh = in_.range(1, 3), kw = in_.range(1, 3);
  int sh = in_.range(1, 2), sw = in_.range(1, 2);
  int dh = in_.one_in(4) ? 2 : 1, dw = in_.one_in(4) ? 2 : 1;
  if (bend(30)) sh = in_.range(-1, 0);
  bool same = in_.flag();
  auto fn = activation_fn();
  int channels = s[3];
  int w, out_channels;
  if (code == Op::CONV_2D) {
    out_channels = in_.range(1, kMaxDim);
    int in_channels = in_.one_in(8) && channels % 2 == 0 ? channels / 2 : channels;  // grouped
    w = weights({out_channels, kh, kw, in_channels}, 0);
  } else {
    int multiplier = in_.range(1, 2);
    out_channels = channels * multiplier;
    w = weights({1, kh, kw, out_channels}, 3);
  }
  int b = bias(out_channels);
  Shape o = {s[0], conv_out(s[1], kh, sh, dh, same), conv_out(s[2], kw, sw, dw, same),
             out_channels};
  int y = new_output(o, at(x).type);
  auto pad = same ? tflite::Padding::SAME : tflite::Padding::VALID;
  if (code == Op::CONV_2D)
    push(static_cast<int>(code), {x, w, b}, {y}, tflite::BuiltinOptions::Conv2DOptions,
         [=](auto& fbb) {
           return tflite::CreateConv2DOptions(fbb, pad, sw, sh, fn, dw, dh).Union();
         });
  else
    push(static_cast<int>(code), {x, w, b}, {y}, tflite::BuiltinOptions::DepthwiseConv2DOptions,
         [=](auto& fbb) {
           return tflite::CreateDepthwiseConv2DOptions(
                      fbb, pad, sw, sh, channels ? out_channels / channels : 1, fn, dw, dh)
               .Union();
         });
}

void Generator::transpose_conv() {
  int x = image_input();
  Shape s = at(x).shape;
  int k = in_.range(1, 3), stride = in_.range(1, 2);
  bool same = in_.flag();
  int oc = in_.range(1, kMaxDim);
  auto out_dim = [&](int d) { return same ? d * stride : (d - 1) * stride + k; };
  Shape o = {s[0], out_dim(s[1]), out_dim(s[2]), oc};
  if (in_.one_in(4)) o[1] += 1;  // output_padding
  int w = weights({oc, k, k, s[3]}, 0);
  int shape = in_.one_in(12) ? data_input(1, Type::INT32)
                             : const_ints(std::vector<int64_t>(o.begin(), o.end()), {4});
  std::vector<int32_t> ins = {shape, w, x};
  if (in_.flag()) ins.push_back(bias(oc));
  auto fn = activation_fn();
  auto pad = same ? tflite::Padding::SAME : tflite::Padding::VALID;
  push(static_cast<int>(Op::TRANSPOSE_CONV), ins, {new_output(o, at(x).type)},
       tflite::BuiltinOptions::TransposeConvOptions, [=](auto& fbb) {
         return tflite::CreateTransposeConvOptions(fbb, pad, stride, stride, fn).Union();
       });
}

void Generator::pool(Op code) {
  int x = image_input();
  Shape s = at(x).shape;
  int fh = in_.range(1, 3), fw = in_.range(1, 3), stride = in_.range(1, 2);
  if (bend(30)) fh = 0;
  bool same = in_.flag();
  auto fn = activation_fn();
  Shape o = {s[0], conv_out(s[1], fh, stride, 1, same), conv_out(s[2], fw, stride, 1, same), s[3]};
  auto pad = same ? tflite::Padding::SAME : tflite::Padding::VALID;
  push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::Pool2DOptions, [=](auto& fbb) {
         return tflite::CreatePool2DOptions(fbb, pad, stride, stride, fw, fh, fn).Union();
       });
}

void Generator::fully_connected() {
  int x = data_input(in_.flag() ? 2 : -1);
  Shape s = at(x).shape;
  int k = s.empty() ? 1 : s.back();
  int batch = k ? static_cast<int>(elements(s) / k) : 0;
  int o = in_.range(1, kMaxDim);
  int w = weights({o, k}, 0);
  int b = bias(o);
  bool keep = in_.one_in(4);
  Shape out = {batch, o};
  if (keep && !s.empty()) out = s, out.back() = o;
  auto fn = activation_fn();
  push(static_cast<int>(Op::FULLY_CONNECTED), {x, w, b}, {new_output(out, at(x).type)},
       tflite::BuiltinOptions::FullyConnectedOptions, [=](auto& fbb) {
         return tflite::CreateFullyConnectedOptions(
                    fbb, fn, tflite::FullyConnectedOptionsWeightsFormat::DEFAULT, keep)
             .Union();
       });
}

int Generator::state(Shape shape) {
  TensorSpec t;
  t.name = fresh_name();
  t.type = Type::FLOAT32;
  t.shape = std::move(shape);
  t.variable = !bend(10);
  return add_tensor(std::move(t));
}

void Generator::rnn(Op code) {
  const bool sequence = code != Op::RNN;
  const int x = recurrent_input(sequence);
  // (plain variables: lambdas below capture them, which clang 15 refuses
  // for structured bindings)
  const int batch = batch_of(x), features = features_of(x);
  const int time = sequence && rank(x) == 3 ? at(x).shape[1] : 1;
  const int units = in_.range(1, kMaxDim);
  auto direction = [&] {
    const int w = hybrid_weights({units, features});
    const int r = hybrid_weights({units, units});
    const int b = new_const({units}, Type::FLOAT32);
    return std::vector<int32_t>{w, r, b, state({batch, units})};
  };
  std::vector<int32_t> inputs = {x};
  for (int32_t t : direction()) inputs.push_back(t);
  const auto fn = in_.flag() ? tflite::ActivationFunctionType::TANH : activation_fn();
  const bool asymmetric = in_.flag();
  if (code == Op::RNN) {
    push(static_cast<int>(code), inputs, {new_output({batch, units}, at(x).type)},
         tflite::BuiltinOptions::RNNOptions,
         [=](auto& fbb) { return tflite::CreateRNNOptions(fbb, fn, asymmetric).Union(); });
    return;
  }
  if (code == Op::UNIDIRECTIONAL_SEQUENCE_RNN) {
    push(static_cast<int>(code), inputs, {new_output({batch, time, units}, at(x).type)},
         tflite::BuiltinOptions::SequenceRNNOptions, [=](auto& fbb) {
           return tflite::CreateSequenceRNNOptions(fbb, false, fn, asymmetric).Union();
         });
    return;
  }
  for (int32_t t : direction()) inputs.push_back(t);
  for (int i = 0; i < 3; ++i) inputs.push_back(-1);  // no auxiliary input
  const bool merge = in_.flag();
  std::vector<int32_t> outputs;
  if (merge) {
    outputs = {new_output({batch, time, 2 * units}, at(x).type)};
  } else {
    outputs = {new_output({batch, time, units}, at(x).type),
               new_output({batch, time, units}, at(x).type)};
  }
  push(static_cast<int>(code), inputs, outputs,
       tflite::BuiltinOptions::BidirectionalSequenceRNNOptions, [=](auto& fbb) {
         return tflite::CreateBidirectionalSequenceRNNOptions(fbb, false, fn, merge, asymmetric)
             .Union();
       });
}

void Generator::lstm(Op code) {
  const bool sequence = code != Op::LSTM;
  const int x = recurrent_input(sequence);
  // (plain variables: lambdas below capture them, which clang 15 refuses
  // for structured bindings)
  const int batch = batch_of(x), features = features_of(x);
  const int time = sequence && rank(x) == 3 ? at(x).shape[1] : 1;
  const int units = in_.range(1, kMaxDim);
  const bool cifg = in_.one_in(4), peephole = in_.one_in(4), projection = in_.one_in(4),
             layer_norm = code != Op::BIDIRECTIONAL_SEQUENCE_LSTM && in_.one_in(4);
  const int out_units = projection ? in_.range(1, kMaxDim) : units;
  auto vec = [&](bool present) { return present ? new_const({units}, Type::FLOAT32) : -1; };
  auto weights_and_biases = [&] {
    std::vector<int32_t> in;
    for (int g = 0; g < 4; ++g) in.push_back(cifg && g == 0 ? -1 : weights({units, features}, 0));
    for (int g = 0; g < 4; ++g) in.push_back(cifg && g == 0 ? -1 : weights({units, out_units}, 0));
    for (int g = 0; g < 3; ++g) in.push_back(vec(peephole && !(cifg && g == 0)));
    for (int g = 0; g < 4; ++g) in.push_back(vec(!(cifg && g == 0)));
    in.push_back(projection ? weights({out_units, units}, 0) : -1);
    in.push_back(projection && in_.flag() ? new_const({out_units}, Type::FLOAT32) : -1);
    return in;
  };
  std::vector<int32_t> inputs = {x};
  for (int32_t t : weights_and_biases()) inputs.push_back(t);
  const auto fn = in_.flag() ? tflite::ActivationFunctionType::TANH : activation_fn();
  const float cell_clip = in_.one_in(4) ? 3.0f : 0.0f;
  const float proj_clip = projection && in_.one_in(4) ? 2.0f : 0.0f;
  if (code == Op::BIDIRECTIONAL_SEQUENCE_LSTM) {
    for (int32_t t : weights_and_biases()) inputs.push_back(t);
    for (int d = 0; d < 2; ++d) {
      inputs.push_back(state({batch, out_units}));
      inputs.push_back(state({batch, units}));
    }
    for (int i = 0; i < 9; ++i) inputs.push_back(-1);  // no auxiliary input
    const bool merge = in_.flag();
    std::vector<int32_t> outputs;
    if (merge)
      outputs = {new_output({batch, time, 2 * out_units}, at(x).type)};
    else
      outputs = {new_output({batch, time, out_units}, at(x).type),
                 new_output({batch, time, out_units}, at(x).type)};
    push(static_cast<int>(code), inputs, outputs,
         tflite::BuiltinOptions::BidirectionalSequenceLSTMOptions, [=](auto& fbb) {
           return tflite::CreateBidirectionalSequenceLSTMOptions(fbb, fn, cell_clip, proj_clip,
                                                                 merge, false)
               .Union();
         });
    return;
  }
  inputs.push_back(state({batch, out_units}));
  inputs.push_back(state({batch, units}));
  for (int g = 0; g < 4; ++g) inputs.push_back(vec(layer_norm && !(cifg && g == 0)));
  if (code == Op::LSTM) {
    push(static_cast<int>(code), inputs, {new_output({batch, out_units}, at(x).type)},
         tflite::BuiltinOptions::LSTMOptions, [=](auto& fbb) {
           return tflite::CreateLSTMOptions(fbb, fn, cell_clip, proj_clip).Union();
         });
    return;
  }
  push(static_cast<int>(code), inputs, {new_output({batch, time, out_units}, at(x).type)},
       tflite::BuiltinOptions::UnidirectionalSequenceLSTMOptions, [=](auto& fbb) {
         return tflite::CreateUnidirectionalSequenceLSTMOptions(fbb, fn, cell_clip, proj_clip,
                                                                false)
             .Union();
       });
}

void Generator::svdf() {
  const int x = recurrent_input(false);
  // (plain variables: lambdas below capture them, which clang 15 refuses
  // for structured bindings)
  const int batch = batch_of(x), features = features_of(x);
  const int units = in_.range(1, kMaxDim), svdf_rank = in_.range(1, 2),
            memory = in_.range(1, kMaxDim);
  const int filters = units * svdf_rank;
  const int wf = weights({filters, features}, 0);
  const int wt = new_const({filters, memory}, Type::FLOAT32);
  const int b = in_.flag() ? new_const({units}, Type::FLOAT32) : -1;
  const int s = state({batch, memory * filters});
  const auto fn = activation_fn();
  push(static_cast<int>(Op::SVDF), {x, wf, wt, b, s}, {new_output({batch, units}, at(x).type)},
       tflite::BuiltinOptions::SVDFOptions,
       [=](auto& fbb) { return tflite::CreateSVDFOptions(fbb, svdf_rank, fn).Union(); });
}

void Generator::batch_matmul() {
  int x = data_input(in_.range(2, 4));
  Shape s = at(x).shape;
  int n = in_.range(1, kMaxDim);
  Shape ys(s.end() - 2, s.end());
  ys = {ys[1], n};
  int y = in_.flag() ? new_const(ys, Type::FLOAT32) : data_input(2);
  Shape o = s;
  o.back() = rank(y) == 2 ? at(y).shape[1] : n;
  push(static_cast<int>(Op::BATCH_MATMUL), {x, y}, {new_output(o, at(x).type)},
       tflite::BuiltinOptions::BatchMatMulOptions,
       [](auto& fbb) { return tflite::CreateBatchMatMulOptions(fbb).Union(); });
}

}  // namespace lite2onnx::fuzz::gen
