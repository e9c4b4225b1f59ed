// The model generator: the recipe of each builtin operator (add_builtin).
#include "fuzz/graph_generator_parts.h"

namespace lite2onnx::fuzz::gen {

void Generator::add_builtin(Op code) {
  const int c = static_cast<int>(code);
  switch (code) {
    case Op::WHILE:
      return while_loop();
    case Op::IF:
      return if_then_else();
    case Op::CALL:
      return call();
    case Op::STABLEHLO_COMPOSITE:
      return call(/*composite=*/true);
    case Op::VAR_HANDLE:
    case Op::READ_VARIABLE:
    case Op::ASSIGN_VARIABLE:
    case Op::CALL_ONCE:
      return resource_variable();
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::POW:
    case Op::SQUARED_DIFFERENCE:
    case Op::MAXIMUM:
    case Op::MINIMUM:
    case Op::FLOOR_DIV:
    case Op::FLOOR_MOD:
    case Op::PRELU:
      return binary(code);
    case Op::EQUAL:
    case Op::NOT_EQUAL:
    case Op::LESS:
    case Op::LESS_EQUAL:
    case Op::GREATER:
    case Op::GREATER_EQUAL:
      return compare(code);
    case Op::LOGICAL_AND:
    case Op::LOGICAL_OR: {
      int a = data_input(-1, Type::BOOL);
      int b = in_.flag() ? a : broadcast_partner(a, Type::BOOL);
      return push(c, {a, b}, {new_output(broadcast(at(a).shape, at(b).shape), Type::BOOL)});
    }
    case Op::LOGICAL_NOT: {
      int a = data_input(-1, Type::BOOL);
      return push(c, {a}, {new_output(at(a).shape, Type::BOOL)});
    }
    case Op::SELECT:
    case Op::SELECT_V2: {
      // SELECT: one shape for all three; SELECT_V2 broadcasts them.
      int x = data_input();
      int y = code == Op::SELECT ? same_shape(x) : broadcast_partner(x, at(x).type);
      int cond = code == Op::SELECT ? same_shape(x, Type::BOOL) : data_input(-1, Type::BOOL);
      Shape s = broadcast(broadcast(at(x).shape, at(y).shape), at(cond).shape);
      return push(c, {cond, x, y}, {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::ADD_N: {
      int x = data_input();
      std::vector<int32_t> ins = {x};
      for (int k = in_.range(1, 3); k > 0; --k) ins.push_back(in_.flag() ? x : same_shape(x));
      return push(c, ins, {new_output(at(x).shape, at(x).type)});
    }
    case Op::CONV_2D:
    case Op::DEPTHWISE_CONV_2D:
      return conv(code);
    case Op::TRANSPOSE_CONV:
      return transpose_conv();
    case Op::AVERAGE_POOL_2D:
    case Op::MAX_POOL_2D:
    case Op::L2_POOL_2D:
      return pool(code);
    case Op::FULLY_CONNECTED:
      return fully_connected();
    case Op::RNN:
    case Op::UNIDIRECTIONAL_SEQUENCE_RNN:
    case Op::BIDIRECTIONAL_SEQUENCE_RNN:
      return rnn(code);
    case Op::LSTM:
    case Op::UNIDIRECTIONAL_SEQUENCE_LSTM:
    case Op::BIDIRECTIONAL_SEQUENCE_LSTM:
      return lstm(code);
    case Op::SVDF:
      return svdf();
    case Op::BATCH_MATMUL:
      return batch_matmul();
    case Op::RESHAPE:
      return reshape();
    case Op::SQUEEZE:
      return squeeze();
    case Op::EXPAND_DIMS: {
      int x = data_input();
      int r = rank(x), a = axis(r + 1);
      Shape s = at(x).shape;
      if (in_rank(a, r + 1)) s.insert(s.begin() + norm_axis(a, r + 1), 1);
      return push(c, {x, const_ints({a})}, {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::TRANSPOSE: {
      int x = data_input();
      std::vector<int64_t> perm = permutation(rank(x));
      Shape s;
      for (int64_t p : perm) s.push_back(p >= 0 && p < rank(x) ? at(x).shape[p] : 1);
      return push(c, {x, const_ints(perm, {static_cast<int32_t>(perm.size())})},
                  {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::CONCATENATION:
      return concatenation();
    case Op::SPLIT:
    case Op::SPLIT_V:
      return split(code);
    case Op::STRIDED_SLICE:
      return strided_slice();
    case Op::SLICE: {
      int x = data_input();
      std::vector<int64_t> begin, size;
      Shape s;
      for (int32_t d : at(x).shape) {
        int b = in_.range(0, std::max(d - 1, 0));
        int n = in_.one_in(4) ? -1 : in_.range(0, d - b);
        begin.push_back(b);
        size.push_back(n);
        s.push_back(n < 0 ? d - b : n);
      }
      return push(c, {x, const_ints(begin, {rank(x)}), const_ints(size, {rank(x)})},
                  {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::PAD:
    case Op::PADV2:
    case Op::MIRROR_PAD:
      return pad(code);
    case Op::MEAN:
    case Op::SUM:
    case Op::REDUCE_MAX:
    case Op::REDUCE_MIN:
    case Op::REDUCE_PROD:
      return reduce(code);
    case Op::REDUCE_ANY:
    case Op::REDUCE_ALL:
      return reduce(code, Type::BOOL);
    case Op::ATAN2:
    case Op::STABLEHLO_ADD:
    case Op::STABLEHLO_SUBTRACT:
    case Op::STABLEHLO_MULTIPLY:
    case Op::STABLEHLO_DIVIDE:
    case Op::STABLEHLO_MAXIMUM:
    case Op::STABLEHLO_MINIMUM:
    case Op::STABLEHLO_POWER:
    case Op::STABLEHLO_REMAINDER:
      return same_shape_binary(code, Type::FLOAT32);
    case Op::STABLEHLO_AND:
    case Op::STABLEHLO_OR:
      return same_shape_binary(code, Type::BOOL);
    case Op::BITWISE_XOR:
    case Op::RIGHT_SHIFT:
      return same_shape_binary(code, Type::INT32);
    case Op::RANK:
      return push(c, {data_input()}, {new_output({}, Type::INT32)});
    case Op::RANDOM_UNIFORM:
    case Op::RANDOM_STANDARD_NORMAL: {
      Shape s = random_shape();
      std::vector<int64_t> dims(s.begin(), s.end());
      return push(c, {const_ints(dims, {static_cast<int32_t>(dims.size())})},
                  {new_output(s, Type::FLOAT32)});
    }
    case Op::MULTINOMIAL: {
      int logits = data_input(2);
      int samples = in_.range(1, 8);
      return push(c, {logits, const_ints({samples})},
                  {new_output({at(logits).shape[0], samples}, Type::INT32)});
    }
    case Op::COMPLEX_ABS:
    case Op::REAL:
    case Op::IMAG:
      return rfft2d(code);
    case Op::SEGMENT_SUM:
    case Op::UNSORTED_SEGMENT_SUM:
    case Op::UNSORTED_SEGMENT_PROD:
    case Op::UNSORTED_SEGMENT_MAX:
    case Op::UNSORTED_SEGMENT_MIN:
      return segment(code);
    case Op::CONV_3D:
      return conv3d();
    case Op::CONV_3D_TRANSPOSE:
      return conv3d_transpose();
    case Op::SCATTER_ND:
      return scatter_nd();
    case Op::EMBEDDING_LOOKUP_SPARSE:
      return embedding_lookup_sparse();
    case Op::ONE_HOT: {
      int i = data_input(-1, Type::INT32);
      int depth = in_.range(1, 6);
      Shape s = at(i).shape;
      s.push_back(depth);
      return push(
          c, {i, const_ints({depth}), new_const({}, Type::FLOAT32), new_const({}, Type::FLOAT32)},
          {new_output(s, Type::FLOAT32)});
    }
    case Op::SPARSE_TO_DENSE: {
      const int n = in_.range(1, 4), size = in_.range(n, 8);
      std::vector<int64_t> idx;
      for (int k = 0; k < n; ++k) idx.push_back(k * size / n);
      return push(c,
                  {const_ints(idx), const_ints({size}, {1}), new_const({n}, Type::FLOAT32),
                   new_const({}, Type::FLOAT32)},
                  {new_output({size}, Type::FLOAT32)});
    }
    case Op::MATRIX_DIAG:
    case Op::MATRIX_SET_DIAG: {
      int x = data_input(code == Op::MATRIX_DIAG ? -1 : in_.range(2, 4));
      Shape s = at(x).shape;
      if (code == Op::MATRIX_DIAG) {
        if (!s.empty()) s.push_back(s.back());
        return push(c, {x}, {new_output(s, at(x).type)});
      }
      Shape d = s;
      if (d.size() >= 2) {
        d.pop_back();
        d.back() = std::min(s[s.size() - 2], s.back());
      }
      return push(c, {x, new_const(d, at(x).type)}, {new_output(s, at(x).type)});
    }
    case Op::DYNAMIC_UPDATE_SLICE: {
      int x = data_input();
      Shape u = at(x).shape;
      std::vector<int64_t> start;
      for (auto& d : u) {
        d = in_.range(std::min(d, 1), std::max(d, 1));
        start.push_back(in_.range(-1, 3));
      }
      return push(c, {x, new_const(u, at(x).type), const_ints(start, {rank(x)})},
                  {new_output(at(x).shape, at(x).type)});
    }
    case Op::BROADCAST_ARGS: {
      int a = data_input(1, Type::INT32), b = data_input(1, Type::INT32);
      const int n = std::max(at(a).shape.empty() ? 0 : at(a).shape[0],
                             at(b).shape.empty() ? 0 : at(b).shape[0]);
      return push(c, {a, b}, {new_output({n}, Type::INT32)});
    }
    case Op::STABLEHLO_SELECT: {
      int x = data_input();
      return push(c, {same_shape(x, Type::BOOL), x, same_shape(x)},
                  {new_output(at(x).shape, at(x).type)});
    }
    case Op::STABLEHLO_CLAMP: {
      int x = data_input();
      return push(c, {new_const({}, at(x).type), x, new_const({}, at(x).type)},
                  {new_output(at(x).shape, at(x).type)});
    }
    case Op::ARG_MAX:
    case Op::ARG_MIN: {
      int x = data_input();
      int a = axis(rank(x));
      Type out = in_.flag() ? Type::INT32 : Type::INT64;
      Shape s = at(x).shape;
      if (in_rank(a, rank(x))) s.erase(s.begin() + norm_axis(a, rank(x)));
      auto opts = [out, code](flatbuffers::FlatBufferBuilder& b) {
        return code == Op::ARG_MAX ? tflite::CreateArgMaxOptions(b, out).Union()
                                   : tflite::CreateArgMinOptions(b, out).Union();
      };
      return push(c, {x, const_ints({a})}, {new_output(s, out)},
                  code == Op::ARG_MAX ? tflite::BuiltinOptions::ArgMaxOptions
                                      : tflite::BuiltinOptions::ArgMinOptions,
                  opts);
    }
    case Op::TOPK_V2: {
      int x = data_input();
      Shape s = at(x).shape;
      int k = s.empty() ? 1 : in_.range(1, std::max(s.back(), 1));
      if (!s.empty()) s.back() = k;
      return push(c, {x, const_ints({k})},
                  {new_output(s, at(x).type, at(x).quant), new_output(s, Type::INT32)});
    }
    case Op::SOFTMAX:
    case Op::LOG_SOFTMAX: {
      int x = data_input();
      float beta = in_.one_in(4) ? 0.5f : 1.f;
      if (code == Op::LOG_SOFTMAX) return push(c, {x}, {new_output(at(x).shape, at(x).type)});
      return push(c, {x}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::SoftmaxOptions,
                  [beta](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateSoftmaxOptions(b, beta).Union();
                  });
    }
    case Op::L2_NORMALIZATION: {
      int x = data_input();
      auto fn = activation_fn();
      return push(c, {x}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::L2NormOptions, [fn](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateL2NormOptions(b, fn).Union();
                  });
    }
    case Op::LOCAL_RESPONSE_NORMALIZATION: {
      int x = image_input();
      int radius = in_.range(0, 5);
      return push(c, {x}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::LocalResponseNormalizationOptions,
                  [radius](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateLocalResponseNormalizationOptions(b, radius, 1.f, 1e-4f,
                                                                           0.75f)
                        .Union();
                  });
    }
    case Op::LEAKY_RELU: {
      int x = data_input();
      float alpha = in_.flag() ? 0.2f : -1.5f;
      return push(c, {x}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::LeakyReluOptions,
                  [alpha](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateLeakyReluOptions(b, alpha).Union();
                  });
    }
    case Op::GELU: {
      int x = data_input();
      bool approximate = in_.flag();
      return push(c, {x}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::GeluOptions,
                  [approximate](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateGeluOptions(b, approximate).Union();
                  });
    }
    case Op::CAST: {
      int x = data_input(-1, in_.flag() ? Type::FLOAT32 : Type::INT32);
      static constexpr Type kTo[] = {Type::FLOAT32, Type::INT32, Type::INT64,  Type::BOOL,
                                     Type::UINT8,   Type::INT8,  Type::FLOAT16};
      Type to = in_.pick(std::span<const Type>(kTo));
      Type from = at(x).type;
      return push(c, {x}, {new_output(at(x).shape, to)}, tflite::BuiltinOptions::CastOptions,
                  [from, to](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateCastOptions(b, from, to).Union();
                  });
    }
    case Op::QUANTIZE: {
      int x = data_input(-1, in_.flag() ? Type::FLOAT32 : activation_type_);
      Type to = in_.flag() ? Type::INT8 : Type::UINT8;
      int y = new_output(at(x).shape, to);
      if (!at(y).quant) tensors_[static_cast<size_t>(y)].quant = random_quant(to);
      return push(c, {x}, {y});
    }
    case Op::DEQUANTIZE:
      return dequantize();
    case Op::CUMSUM: {
      int x = data_input();
      bool exclusive = in_.flag(), reverse = in_.flag();
      return push(c, {x, const_ints({axis(rank(x))})}, {new_output(at(x).shape, at(x).type)},
                  tflite::BuiltinOptions::CumsumOptions,
                  [exclusive, reverse](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateCumsumOptions(b, exclusive, reverse).Union();
                  });
    }
    case Op::GATHER:
      return gather();
    case Op::GATHER_ND: {
      int x = data_input();
      int r = rank(x), k = in_.range(1, std::max(r, 1)), n = in_.range(1, 3);
      std::vector<int64_t> idx;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < k; ++j) idx.push_back(j < r ? in_.range(0, at(x).shape[j] - 1) : 0);
      Shape s = {n};
      for (int j = k; j < r; ++j) s.push_back(at(x).shape[j]);
      return push(c, {x, const_ints(idx, {n, k})}, {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::EMBEDDING_LOOKUP: {
      int n = in_.range(1, 4), rows = in_.range(1, 5), cols = in_.range(1, 5);
      std::vector<int64_t> ids;
      for (int i = 0; i < n; ++i) ids.push_back(in_.range(0, rows - 1));
      int params = in_.flag() ? new_const({rows, cols}, Type::FLOAT32) : data_input(2);
      int id_input = in_.flag() ? const_ints(ids, {n}) : data_input(1, Type::INT32);
      Shape s = {at(id_input).shape.empty() ? 1 : at(id_input).shape[0]};
      for (size_t j = 1; j < at(params).shape.size(); ++j) s.push_back(at(params).shape[j]);
      return push(c, {id_input, params}, {new_output(s, at(params).type)});
    }
    case Op::TILE: {
      int x = data_input();
      std::vector<int64_t> m;
      Shape s;
      for (int32_t d : at(x).shape) {
        m.push_back(in_.range(1, 3));
        s.push_back(d * static_cast<int32_t>(m.back()));
      }
      return push(c, {x, const_ints(m, {rank(x)})}, {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::REVERSE_V2: {
      int x = data_input();
      return push(c, {x, const_ints({axis(rank(x))}, {1})},
                  {new_output(at(x).shape, at(x).type, at(x).quant)});
    }
    case Op::BROADCAST_TO: {
      int x = data_input();
      Shape s = at(x).shape;
      for (auto& d : s)
        if (d == 1) d = in_.range(1, 4);
      if (in_.flag()) s.insert(s.begin(), in_.range(1, 3));
      std::vector<int64_t> v(s.begin(), s.end());
      return push(c, {x, const_ints(v, {static_cast<int32_t>(v.size())})},
                  {new_output(s, at(x).type, at(x).quant)});
    }
    case Op::PACK: {
      int x = data_input();
      int n = in_.range(1, 3), r = rank(x) + 1, a = axis(r);
      std::vector<int32_t> ins;
      for (int i = 0; i < n; ++i) ins.push_back(i == 0 || in_.flag() ? x : same_shape(x));
      Shape s = at(x).shape;
      if (in_rank(a, r)) s.insert(s.begin() + norm_axis(a, r), n);
      return push(c, ins, {new_output(s, at(x).type, at(x).quant)},
                  tflite::BuiltinOptions::PackOptions, [n, a](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreatePackOptions(b, n, a).Union();
                  });
    }
    case Op::UNPACK: {
      int x = data_input();
      int r = rank(x), a = axis(r);
      int n = in_rank(a, r) ? at(x).shape[norm_axis(a, r)] : 1;
      Shape s = at(x).shape;
      if (in_rank(a, r)) s.erase(s.begin() + norm_axis(a, r));
      std::vector<int32_t> outs;
      for (int i = 0; i < std::min(n, 6); ++i)
        outs.push_back(new_output(s, at(x).type, at(x).quant));
      return push(c, {x}, outs, tflite::BuiltinOptions::UnpackOptions,
                  [n, a](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateUnpackOptions(b, n, a).Union();
                  });
    }
    case Op::SHAPE: {
      int x = data_input();
      Type out = in_.flag() ? Type::INT32 : Type::INT64;
      return push(c, {x}, {new_output({rank(x)}, out)}, tflite::BuiltinOptions::ShapeOptions,
                  [out](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateShapeOptions(b, out).Union();
                  });
    }
    case Op::FILL: {
      Shape s = random_shape();
      std::vector<int64_t> dims(s.begin(), s.end());
      int value = in_.flag() ? const_scalar_f(0.5f) : data_input(0);
      return push(c, {const_ints(dims, {static_cast<int32_t>(dims.size())}), value},
                  {new_output(s, at(value).type)});
    }
    case Op::ZEROS_LIKE: {
      int x = data_input();
      return push(c, {x}, {new_output(at(x).shape, at(x).type)});
    }
    case Op::RANGE: {
      int n = in_.range(0, 6);
      return push(c, {const_ints({0}), const_ints({n}), const_ints({1})},
                  {new_output({n}, Type::INT32)});
    }
    case Op::WHERE: {
      int x = data_input(-1, Type::BOOL);
      int y = new_output({1, rank(x)}, Type::INT64);
      tensors_[static_cast<size_t>(y)].dynamic_batch = true;  // as many rows as true elements
      return push(c, {x}, {y});
    }
    case Op::REVERSE_SEQUENCE: {
      int x = data_input();
      int r = rank(x);
      int seq = in_.range(0, std::max(r - 1, 0)), batch = in_.range(0, std::max(r - 1, 0));
      int n = r > 0 ? at(x).shape[static_cast<size_t>(batch)] : 1;
      std::vector<int64_t> lengths;
      for (int i = 0; i < n; ++i) lengths.push_back(in_.range(0, r > 0 ? at(x).shape[seq] : 1));
      return push(c, {x, const_ints(lengths, {n})},
                  {new_output(at(x).shape, at(x).type, at(x).quant)},
                  tflite::BuiltinOptions::ReverseSequenceOptions,
                  [seq, batch](flatbuffers::FlatBufferBuilder& b) {
                    return tflite::CreateReverseSequenceOptions(b, seq, batch).Union();
                  });
    }
    case Op::SPACE_TO_DEPTH:
    case Op::DEPTH_TO_SPACE:
      return depth_space(code);
    case Op::SPACE_TO_BATCH_ND:
    case Op::BATCH_TO_SPACE_ND:
      return space_batch(code);
    case Op::RESIZE_BILINEAR:
    case Op::RESIZE_NEAREST_NEIGHBOR:
      return resize(code);
    case Op::RFFT2D:
      return rfft2d(in_.flag() ? Op::COMPLEX_ABS : Op::RFFT2D);
    default: {
      // Elementwise unary ops and anything without a recipe of its own.
      int x = data_input();
      return push(c, {x}, {new_output(at(x).shape, at(x).type, at(x).quant)});
    }
  }
}

}  // namespace lite2onnx::fuzz::gen
