#include "fuzz/graph_generator.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "core/convert.h"
#include "fuzz/fuzz_input.h"
#include "schema_generated.h"

namespace lite2onnx::fuzz {
namespace {

using Op = tflite::BuiltinOperator;
using Type = tflite::TensorType;
using Shape = std::vector<int32_t>;
using OptionsFn = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

constexpr int kMaxOps = 12;
constexpr int kMaxDim = 6;
constexpr int64_t kMaxElements = 4096;  // keeps constants and conversions small

struct Quant {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = 0;
};

struct TensorSpec {
  std::string name;
  Type type = Type::FLOAT32;
  Shape shape;
  bool has_shape = true;
  std::vector<uint8_t> data;  // constants only
  bool constant = false;
  int shared_buffer_with = -1;  // a constant reusing another tensor's buffer
  std::optional<Quant> quant;
  bool dynamic_batch = false;  // shape_signature with -1 in axis 0
  bool variable = false;
};

struct OpSpec {
  int code = 0;
  std::string custom_code;
  std::vector<int32_t> inputs, outputs;
  tflite::BuiltinOptions options_type = tflite::BuiltinOptions::NONE;
  OptionsFn options;
  // Set: `options` makes builtin_options_2 of this type instead.
  tflite::BuiltinOptions2 options_2_type = tflite::BuiltinOptions2::NONE;
};

int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= std::max<int32_t>(d, 0);
  return n;
}

size_t type_size(Type t) {
  switch (t) {
    case Type::FLOAT32:
    case Type::INT32:
    case Type::UINT32:
      return 4;
    case Type::FLOAT16:
    case Type::INT16:
    case Type::UINT16:
    case Type::BFLOAT16:
      return 2;
    case Type::INT64:
    case Type::FLOAT64:
    case Type::UINT64:
    case Type::COMPLEX64:
      return 8;
    case Type::COMPLEX128:
      return 16;
    case Type::STRING:
    case Type::RESOURCE:
    case Type::VARIANT:
      return 0;
    default:
      return 1;
  }
}

bool is_quantized_int(Type t) { return t == Type::INT8 || t == Type::UINT8; }

class Generator {
 public:
  explicit Generator(std::span<const uint8_t> bytes) : in_(bytes) {}

  std::vector<uint8_t> run() {
    bends_ = in_.one_in(3);
    quantized_ = in_.one_in(4);
    activation_type_ = quantized_ && in_.flag() ? Type::UINT8 : Type::INT8;
    int inputs = in_.range(1, 3);
    for (int i = 0; i < inputs; ++i) new_input(random_shape(), data_type());
    int ops = in_.range(1, kMaxOps);
    for (int i = 0; i < ops && !in_.empty(); ++i) add_op();
    choose_outputs();
    return build();
  }

 private:
  // ---- decisions ------------------------------------------------------------

  // Whether to break a rule this time: only in the third of the models that
  // bend at all, so the rest stay valid enough to reach the passes.
  bool bend(int n) { return bends_ && in_.one_in(n); }

  int dim() { return in_.one_in(8) ? 1 : in_.range(1, kMaxDim); }

  Shape random_shape(int rank = -1) {
    if (rank < 0) {
      static constexpr int kRanks[] = {4, 4, 4, 2, 3, 1, 0, 5};
      rank = in_.pick(std::span<const int>(kRanks));
    }
    Shape s(static_cast<size_t>(rank));
    for (auto& d : s) d = dim();
    if (rank == 4 && in_.flag()) s[0] = 1;  // image-like batch of one
    while (elements(s) > kMaxElements) s[static_cast<size_t>(in_.range(0, rank - 1))] = 1;
    return s;
  }

  // Element type of a new activation: the model's, now and then another.
  Type data_type() {
    if (in_.one_in(10)) {
      static constexpr Type kOthers[] = {Type::INT32, Type::INT64, Type::BOOL, Type::FLOAT16,
                                         Type::INT16, Type::UINT8, Type::INT8, Type::STRING};
      return in_.pick(std::span<const Type>(kOthers));
    }
    return quantized_ ? activation_type_ : Type::FLOAT32;
  }

  Quant random_quant(Type t, size_t channels = 1, int axis = 0) {
    Quant q;
    q.axis = axis;
    static constexpr float kScales[] = {0.0078125f, 0.5f, 0.02f, 1.f, 0.003f, 0.25f};
    for (size_t i = 0; i < channels; ++i) {
      float s = in_.pick(std::span<const float>(kScales));
      if (bend(40)) {
        static constexpr float kOdd[] = {0.f,
                                         -1.f,
                                         std::numeric_limits<float>::quiet_NaN(),
                                         std::numeric_limits<float>::infinity(),
                                         1e-30f,
                                         1e30f};
        s = in_.pick(std::span<const float>(kOdd));
      }
      q.scale.push_back(s);
      int64_t zp = t == Type::UINT8  ? in_.range(0, 255)
                   : t == Type::INT8 ? in_.range(-128, 127)
                                     : 0;
      if (bend(40)) zp = 300;
      q.zero_point.push_back(zp);
    }
    if (in_.one_in(30)) q.zero_point.clear();
    return q;
  }

  // Constant bytes: a style and a seed expand to the whole tensor.
  std::vector<uint8_t> values(Type t, int64_t count) {
    size_t size = type_size(t) * static_cast<size_t>(count);
    std::vector<uint8_t> out(size);
    int style = in_.range(0, 7);
    uint32_t state = in_.byte() * 2654435761u + 1;
    auto next = [&state] {
      state = state * 1664525u + 1013904223u;
      return state >> 8;
    };
    for (int64_t i = 0; i < count; ++i) {
      uint8_t* p = out.data() + static_cast<size_t>(i) * type_size(t);
      if (t == Type::FLOAT32) {
        float v = style == 0   ? 0.f
                  : style == 1 ? 1.f
                  : style == 6 ? std::numeric_limits<float>::quiet_NaN()
                  : style == 7 ? (i % 2 ? 1e30f : -std::numeric_limits<float>::infinity())
                               : static_cast<float>(static_cast<int>(next() % 200) - 100) / 32.f;
        std::memcpy(p, &v, 4);
      } else if (t == Type::INT32 || t == Type::INT64) {
        int64_t v = style == 0 ? 0 : style == 1 ? 1 : static_cast<int64_t>(next() % 9) - 4;
        if (style == 7) v = i % 2 ? std::numeric_limits<int32_t>::max() : -1;
        if (t == Type::INT32) {
          int32_t v32 = static_cast<int32_t>(v);
          std::memcpy(p, &v32, 4);
        } else {
          std::memcpy(p, &v, 8);
        }
      } else {
        for (size_t b = 0; b < type_size(t); ++b) p[b] = static_cast<uint8_t>(next());
        if (t == Type::BOOL) p[0] &= 1;
      }
    }
    return out;
  }

  // ---- tensors --------------------------------------------------------------

  std::string fresh_name() {
    if (!tensors_.empty() && bend(40))
      return tensors_[static_cast<size_t>(in_.range(0, static_cast<int>(tensors_.size()) - 1))]
          .name;  // a duplicate name
    return "t" + std::to_string(tensors_.size());
  }

  int add_tensor(TensorSpec t) {
    tensors_.push_back(std::move(t));
    return static_cast<int>(tensors_.size()) - 1;
  }

  int new_input(Shape shape, Type type) {
    TensorSpec t;
    t.name = fresh_name();
    t.type = type;
    t.shape = std::move(shape);
    if (is_quantized_int(type) && (quantized_ || in_.flag())) t.quant = random_quant(type);
    t.dynamic_batch = !t.shape.empty() && in_.one_in(12);
    if (bend(60)) t.has_shape = false;
    int id = add_tensor(std::move(t));
    graph_inputs_.push_back(id);
    activations_.push_back(id);
    return id;
  }

  // A constant of `shape`; its data is fuzz-chosen unless given.
  int new_const(Shape shape, Type type, std::vector<uint8_t> data = {}) {
    TensorSpec t;
    t.name = fresh_name();
    t.type = type;
    t.shape = std::move(shape);
    t.constant = true;
    // Constants stay small, also where TILE or BROADCAST_TO grew the shape they copy.
    for (size_t i = 0; elements(t.shape) > kMaxElements && i < t.shape.size(); ++i)
      if (data.empty()) t.shape[i] = 1;
    t.data = data.empty() ? values(type, elements(t.shape)) : std::move(data);
    if (bend(50) && !t.data.empty()) t.data.pop_back();  // a wrong byte size
    // Reuse an identical constant's buffer now and then (shared buffers).
    if (in_.one_in(4))
      for (size_t i = 0; i < tensors_.size() && t.shared_buffer_with < 0; ++i)
        if (tensors_[i].constant && tensors_[i].shared_buffer_with < 0 &&
            tensors_[i].data == t.data)
          t.shared_buffer_with = static_cast<int>(i);
    return add_tensor(std::move(t));
  }

  int const_ints(const std::vector<int64_t>& v, Shape shape = {}, bool int64 = false) {
    if (shape.empty() && v.size() != 1) shape = {static_cast<int32_t>(v.size())};
    std::vector<uint8_t> data;
    for (int64_t x : v) {
      if (int64) {
        const auto* p = reinterpret_cast<const uint8_t*>(&x);
        data.insert(data.end(), p, p + 8);
      } else {
        int32_t y = static_cast<int32_t>(x);
        const auto* p = reinterpret_cast<const uint8_t*>(&y);
        data.insert(data.end(), p, p + 4);
      }
    }
    return new_const(std::move(shape), int64 ? Type::INT64 : Type::INT32, std::move(data));
  }
  int const_scalar_f(float v) {
    std::vector<uint8_t> data(4);
    std::memcpy(data.data(), &v, 4);
    return new_const({}, Type::FLOAT32, data);
  }

  // The output of the op being built. Its shape is bent now and then: the
  // converter must notice, not trust it.
  int new_output(Shape shape, Type type, const std::optional<Quant>& like = {}) {
    for (auto& d : shape) d = std::max(d, 0);
    if (bend(24)) {
      if (!shape.empty() && in_.flag())
        shape[static_cast<size_t>(in_.range(0, static_cast<int>(shape.size()) - 1))] += 1;
      else
        shape.push_back(2);
    }
    TensorSpec t;
    t.name = fresh_name();
    t.type = type;
    t.shape = std::move(shape);
    if (is_quantized_int(type)) {
      if (like && in_.range(0, 7) != 0)
        t.quant = like;  // same-scale ops need the input's parameters
      else if (quantized_ || in_.flag())
        t.quant = random_quant(type);
    }
    int id = add_tensor(std::move(t));
    activations_.push_back(id);
    return id;
  }

  const TensorSpec& at(int id) const { return tensors_[static_cast<size_t>(id)]; }
  int rank(int id) const { return static_cast<int>(at(id).shape.size()); }

  // An existing activation matching the filter, or a new graph input.
  int activation(const std::function<bool(const TensorSpec&)>& fits,
                 const std::function<Shape()>& make_shape, Type type) {
    if (!activations_.empty() && !in_.one_in(6)) {
      size_t start = static_cast<size_t>(in_.range(0, static_cast<int>(activations_.size()) - 1));
      for (size_t k = 0; k < activations_.size(); ++k) {
        int id = activations_[(start + k) % activations_.size()];
        if (fits(at(id))) return id;
      }
    }
    return new_input(make_shape(), type);
  }
  // An activation of rank r (any rank when r < 0) and element type `type` (the
  // model's activation type for FLOAT32), now and then of any type.
  int data_input(int r = -1, Type type = Type::FLOAT32) {
    bool any_type = in_.one_in(10);
    Type want = type == Type::FLOAT32 && quantized_ ? activation_type_ : type;
    return activation(
        [&](const TensorSpec& t) {
          return (r < 0 || static_cast<int>(t.shape.size()) == r) && (any_type || t.type == want);
        },
        [&] { return random_shape(r); }, want);
  }
  int image_input() { return data_input(4); }

  // An axis in [-rank, rank), now and then out of range.
  int axis(int r) {
    if (bend(20)) return in_.range(-9, 9);
    if (r <= 0) return 0;
    int a = in_.range(0, r - 1);
    return in_.one_in(4) ? a - r : a;
  }
  static int norm_axis(int a, int r) { return a < 0 ? a + r : a; }
  static bool in_rank(int a, int r) { return a >= -r && a < r; }

  tflite::ActivationFunctionType activation_fn() {
    static constexpr tflite::ActivationFunctionType kFns[] = {
        tflite::ActivationFunctionType::NONE,         tflite::ActivationFunctionType::NONE,
        tflite::ActivationFunctionType::RELU,         tflite::ActivationFunctionType::RELU6,
        tflite::ActivationFunctionType::RELU_N1_TO_1, tflite::ActivationFunctionType::TANH,
        tflite::ActivationFunctionType::SIGN_BIT};
    return in_.pick(std::span<const tflite::ActivationFunctionType>(kFns));
  }

  void push(int code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
            tflite::BuiltinOptions type = tflite::BuiltinOptions::NONE, OptionsFn options = {}) {
    // Omit an optional trailing input now and then; drop options sometimes.
    if (inputs.size() > 1 && bend(30)) inputs.back() = -1;
    if (bend(40)) options = {}, type = tflite::BuiltinOptions::NONE;
    ops_.push_back({code, "", std::move(inputs), std::move(outputs), type, std::move(options)});
  }

  // ---- op recipes -----------------------------------------------------------

  void add_op() {
    if (in_.one_in(40)) return unsupported_op();
    if (in_.one_in(16)) return dilated_conv();
    if (in_.one_in(16)) return shape_arithmetic();
    add_builtin(static_cast<Op>(in_.pick(std::span<const int>(supported_codes()))));
  }

  void unsupported_op() {
    int x = data_input();
    int y = new_output(at(x).shape, at(x).type);
    OpSpec op;
    if (in_.flag()) {
      op.code = static_cast<int>(Op::CUSTOM);
      op.custom_code = in_.flag() ? "FlexFoo" : "";
    } else {
      op.code = in_.flag() ? static_cast<int>(Op::HASHTABLE_LOOKUP) : in_.range(0, 200);
    }
    op.inputs = {x};
    op.outputs = {y};
    ops_.push_back(std::move(op));
  }

  void add_builtin(Op code) {
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

  // numpy broadcast (a mismatch gives the larger shape: the converter must notice).
  static Shape broadcast(Shape a, Shape b) {
    if (a.size() < b.size()) std::swap(a, b);
    size_t off = a.size() - b.size();
    for (size_t i = 0; i < b.size(); ++i) a[off + i] = std::max(a[off + i], b[i]);
    return a;
  }

  // A tensor that broadcasts against x: x itself, an activation of the same
  // shape, or a constant of a trailing sub-shape (or with unit axes).
  int broadcast_partner(int x, Type type) {
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

  int same_shape(int x, std::optional<Type> type = {}) {
    Type t = type.value_or(at(x).type);
    Shape s = at(x).shape;
    return activation([&](const TensorSpec& c) { return c.shape == s && c.type == t; },
                      [&] { return s; }, t);
  }

  void binary(Op code) {
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

  // RFFT2D, read by `part` (COMPLEX_ABS, REAL or IMAG) unless that is RFFT2D itself.
  void rfft2d(Op part) {
    int x = data_input(2);
    int h = in_.range(1, 8), w = 1 << in_.range(0, 3);
    Shape s = {h, w / 2 + 1};
    int y = new_output(s, Type::COMPLEX64);
    push(static_cast<int>(Op::RFFT2D), {x, const_ints({h, w}, {2})}, {y});
    if (part != Op::RFFT2D) push(static_cast<int>(part), {y}, {new_output(s, Type::FLOAT32)});
  }

  // Segment reductions: constant ids (sorted for SEGMENT_SUM) over the first axis.
  void segment(Op code) {
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

  // CONV_3D, SAME and stride 1: the output keeps the spatial sizes.
  void conv3d() {
    int x = data_input(5);
    Shape s = at(x).shape;
    const int out = in_.range(1, 4);
    int w =
        new_const({in_.range(1, 3), in_.range(1, 3), in_.range(1, 3), s[4], out}, Type::FLOAT32);
    s[4] = out;
    auto fn = activation_fn();
    push(static_cast<int>(Op::CONV_3D), {x, w, new_const({out}, Type::FLOAT32)},
         {new_output(s, Type::FLOAT32)}, tflite::BuiltinOptions::Conv3DOptions, [fn](auto& fbb) {
           return tflite::CreateConv3DOptions(fbb, tflite::Padding::SAME, 1, 1, 1, fn).Union();
         });
  }

  // CONV_3D_TRANSPOSE, SAME and stride 1: output_shape is the input's with
  // the filter's output channels.
  void conv3d_transpose() {
    int x = data_input(5);
    Shape s = at(x).shape;
    const int out = in_.range(1, 4);
    int w =
        new_const({in_.range(1, 3), in_.range(1, 3), in_.range(1, 3), out, s[4]}, Type::FLOAT32);
    s[4] = out;
    std::vector<int64_t> dims(s.begin(), s.end());
    std::vector<int32_t> inputs = {const_ints(dims, {5}), w, x};
    if (in_.flag()) inputs.push_back(new_const({out}, Type::FLOAT32));
    push(static_cast<int>(Op::CONV_3D_TRANSPOSE), inputs, {new_output(s, Type::FLOAT32)},
         tflite::BuiltinOptions::Conv3DOptions, [](auto& fbb) {
           return tflite::CreateConv3DOptions(fbb, tflite::Padding::SAME, 1, 1, 1).Union();
         });
  }

  // SCATTER_ND: n rows of `depth` indices into a random shape, updates of
  // shape [n] + shape[depth:].
  void scatter_nd() {
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

  // EMBEDDING_LOOKUP_SPARSE: n (row, column) lookups into a [rows, cols]
  // dense shape, each of a params row, combined by a random combiner.
  void embedding_lookup_sparse() {
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

  // Ops whose two operands share one shape (StableHLO's element-wise ops,
  // ATAN2, the bitwise ones): no broadcasting.
  void same_shape_binary(Op code, Type type) {
    int a = data_input(-1, type);
    int b = in_.flag() ? a : same_shape(a);
    push(static_cast<int>(code), {a, b}, {new_output(at(a).shape, at(a).type)});
  }

  void compare(Op code) {
    int a = data_input();
    int b = broadcast_partner(a, at(a).type);
    push(static_cast<int>(code), {a, b},
         {new_output(broadcast(at(a).shape, at(b).shape), Type::BOOL)});
  }

  // Weights (and bias) of a convolution-like op: int8 per-channel with an
  // int32 bias in quantized models, float32 otherwise.
  int weights(Shape shape, int channel_axis) {
    // Float models: float weights, now and then int8 ones (hybrid ops).
    if (!quantized_ && !in_.one_in(12)) return new_const(shape, Type::FLOAT32);
    int w = new_const(shape, Type::INT8);
    size_t channels =
        in_.flag() ? static_cast<size_t>(shape[static_cast<size_t>(channel_axis)]) : 1;
    tensors_[static_cast<size_t>(w)].quant = random_quant(Type::INT8, channels, channel_axis);
    for (auto& z : tensors_[static_cast<size_t>(w)].quant->zero_point)
      if (!in_.one_in(20)) z = 0;
    return w;
  }
  int bias(int channels) {
    if (in_.one_in(8)) return -1;
    if (!quantized_) return new_const({channels}, Type::FLOAT32);
    int b = new_const({channels}, in_.one_in(16) ? Type::INT64 : Type::INT32);
    tensors_[static_cast<size_t>(b)].quant = random_quant(Type::INT32);
    return b;
  }

  static int conv_out(int in, int k, int stride, int dilation, bool same) {
    if (stride <= 0) return in;
    int eff = (k - 1) * dilation + 1;
    return same ? (in + stride - 1) / stride : std::max((in - eff) / stride + 1, 0);
  }

  void conv(Op code) {
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

  void transpose_conv() {
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

  void pool(Op code) {
    int x = image_input();
    Shape s = at(x).shape;
    int fh = in_.range(1, 3), fw = in_.range(1, 3), stride = in_.range(1, 2);
    if (bend(30)) fh = 0;
    bool same = in_.flag();
    auto fn = activation_fn();
    Shape o = {s[0], conv_out(s[1], fh, stride, 1, same), conv_out(s[2], fw, stride, 1, same),
               s[3]};
    auto pad = same ? tflite::Padding::SAME : tflite::Padding::VALID;
    push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::Pool2DOptions, [=](auto& fbb) {
           return tflite::CreatePool2DOptions(fbb, pad, stride, stride, fw, fh, fn).Union();
         });
  }

  void fully_connected() {
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

  // ---- recurrent ops: weights, biases and variable states around an input
  // of rank 2 (one step) or 3 (a sequence, batch-major) ----

  // A variable tensor (state TFLite keeps between invocations).
  int state(Shape shape) {
    TensorSpec t;
    t.name = fresh_name();
    t.type = Type::FLOAT32;
    t.shape = std::move(shape);
    t.variable = !bend(10);
    return add_tensor(std::move(t));
  }
  // The sequence input [batch, time, features] (or one step [batch, features]).
  int recurrent_input(bool sequence) { return data_input(sequence ? 3 : 2); }
  // Batch, and input features, of `x` (any rank: the converter checks).
  int batch_of(int x) const { return at(x).shape.empty() ? 1 : std::max(at(x).shape.front(), 1); }
  int features_of(int x) const { return at(x).shape.empty() ? 1 : std::max(at(x).shape.back(), 1); }

  void rnn(Op code) {
    const bool sequence = code != Op::RNN;
    const int x = recurrent_input(sequence);
    // (plain variables: lambdas below capture them, which clang 15 refuses
    // for structured bindings)
    const int batch = batch_of(x), features = features_of(x);
    const int time = sequence && rank(x) == 3 ? at(x).shape[1] : 1;
    const int units = in_.range(1, kMaxDim);
    auto direction = [&] {
      const int w = weights({units, features}, 0);
      const int r = weights({units, units}, 0);
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

  // TFLite's LSTM inputs per direction: input weights (4), recurrent weights
  // (4), peepholes (3), gate biases (4), projection weights and bias, then
  // (unidirectional) the output and cell states and 4 layer norms. CIFG,
  // peepholes and projection come and go.
  void lstm(Op code) {
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
      for (int g = 0; g < 4; ++g)
        in.push_back(cifg && g == 0 ? -1 : weights({units, out_units}, 0));
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

  // SVDF: feature weights [units x rank, features], time weights
  // [units x rank, memory], bias [units], state [batch, memory x units x rank].
  void svdf() {
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

  void batch_matmul() {
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

  void reshape() {
    int x = data_input();
    Shape s = at(x).shape;
    Shape target;
    switch (in_.range(0, 3)) {
      case 0: {  // flatten
        int32_t batch = s.empty() ? 1 : std::max(s[0], 1);
        target = {batch, static_cast<int32_t>(elements(s) / batch)};
        break;
      }
      case 1:  // drop unit axes
        for (int32_t d : s)
          if (d != 1) target.push_back(d);
        break;
      case 2:  // add a unit axis
        target = s;
        target.insert(target.begin() + in_.range(0, static_cast<int>(s.size())), 1);
        break;
      default:
        target = {static_cast<int32_t>(elements(s))};
    }
    std::vector<int64_t> v(target.begin(), target.end());
    if (!v.empty() && in_.one_in(4))
      v[static_cast<size_t>(in_.range(0, static_cast<int>(v.size()) - 1))] = -1;
    std::vector<int32_t> ins = {x};
    if (!in_.one_in(4)) ins.push_back(const_ints(v, {static_cast<int32_t>(v.size())}));
    std::vector<int32_t> new_shape(v.begin(), v.end());
    push(static_cast<int>(Op::RESHAPE), ins, {new_output(target, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::ReshapeOptions, [new_shape](auto& fbb) {
           return tflite::CreateReshapeOptions(fbb, fbb.CreateVector(new_shape)).Union();
         });
  }

  void squeeze() {
    int x = data_input();
    Shape s = at(x).shape, o;
    std::vector<int32_t> dims;
    bool all = in_.flag();
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == 1 && (all || in_.flag())) {
        if (!all) dims.push_back(static_cast<int32_t>(i));
        continue;
      }
      o.push_back(s[i]);
    }
    push(static_cast<int>(Op::SQUEEZE), {x}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::SqueezeOptions, [dims](auto& fbb) {
           return tflite::CreateSqueezeOptions(fbb, fbb.CreateVector(dims)).Union();
         });
  }

  std::vector<int64_t> permutation(int r) {
    std::vector<int64_t> p(static_cast<size_t>(r));
    std::iota(p.begin(), p.end(), 0);
    for (int i = r - 1; i > 0; --i)
      std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(in_.range(0, i))]);
    if (r > 0 && bend(20)) p[0] = p.back();  // not a permutation
    return p;
  }

  void concatenation() {
    int x = data_input();
    int r = rank(x), a = axis(r);
    std::vector<int32_t> ins = {x};
    Shape o = at(x).shape;
    for (int k = in_.range(0, 2); k > 0; --k) {
      Shape s = at(x).shape;
      if (in_rank(a, r)) s[static_cast<size_t>(norm_axis(a, r))] = in_.range(1, 3);
      int t = in_.flag()
                  ? new_const(s, at(x).type)
                  : activation(
                        [&](const TensorSpec& c) { return c.shape == s && c.type == at(x).type; },
                        [&] { return s; }, at(x).type);
      if (in_rank(a, r))
        o[static_cast<size_t>(norm_axis(a, r))] +=
            at(t).shape[static_cast<size_t>(norm_axis(a, r))];
      ins.push_back(t);
    }
    auto fn = in_.one_in(4) ? activation_fn() : tflite::ActivationFunctionType::NONE;
    push(static_cast<int>(Op::CONCATENATION), ins, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::ConcatenationOptions,
         [a, fn](auto& fbb) { return tflite::CreateConcatenationOptions(fbb, a, fn).Union(); });
  }

  void split(Op code) {
    int x = data_input();
    int r = rank(x), a = axis(r);
    int dim = in_rank(a, r) ? at(x).shape[static_cast<size_t>(norm_axis(a, r))] : 1;
    std::vector<int32_t> sizes;
    if (code == Op::SPLIT) {
      int n = 1;
      for (int d = std::min(dim, 4); d >= 1; --d)
        if (dim % d == 0 && in_.flag()) n = d;
      sizes.assign(static_cast<size_t>(n), dim / n);
    } else {
      for (int left = dim; left > 0;) {
        int part = in_.range(1, left);
        sizes.push_back(part);
        left -= part;
      }
      if (sizes.empty()) sizes.push_back(0);
      if (in_.one_in(4)) sizes.back() = -1;
    }
    std::vector<int32_t> outs;
    for (int32_t part : sizes) {
      Shape s = at(x).shape;
      if (in_rank(a, r)) s[static_cast<size_t>(norm_axis(a, r))] = part < 0 ? 1 : part;
      outs.push_back(new_output(s, at(x).type, at(x).quant));
    }
    int n = static_cast<int>(sizes.size());
    if (code == Op::SPLIT) {
      push(static_cast<int>(code), {const_ints({a}), x}, outs, tflite::BuiltinOptions::SplitOptions,
           [n](auto& fbb) { return tflite::CreateSplitOptions(fbb, n).Union(); });
    } else {
      std::vector<int64_t> v(sizes.begin(), sizes.end());
      push(static_cast<int>(code), {x, const_ints(v, {n}), const_ints({a})}, outs,
           tflite::BuiltinOptions::SplitVOptions,
           [n](auto& fbb) { return tflite::CreateSplitVOptions(fbb, n).Union(); });
    }
  }

  void strided_slice() {
    int x = data_input();
    int r = rank(x);
    std::vector<int64_t> begin, end, strides;
    Shape o;
    int shrink = 0;
    for (int i = 0; i < r; ++i) {
      int d = at(x).shape[static_cast<size_t>(i)];
      int st = in_.one_in(4) ? -1 : in_.range(1, 2);
      int b = in_.range(0, std::max(d - 1, 0)), e = in_.range(b + 1, std::max(d, b + 1));
      int len = (e - b + st - 1) / st;
      if (st < 0) b = d - 1, e = -d - 1, len = d;  // the whole axis, backwards
      begin.push_back(b);
      end.push_back(e);
      strides.push_back(st);
      if (in_.one_in(8)) {
        shrink |= 1 << i;
        continue;
      }
      o.push_back(std::max(len, 0));
    }
    int begin_mask = in_.one_in(4) ? in_.range(0, 15) : 0;
    int end_mask = in_.one_in(4) ? in_.range(0, 15) : 0;
    int ellipsis = in_.one_in(20) ? 1 : 0, new_axis = in_.one_in(20) ? 2 : 0;
    bool offset = in_.one_in(20);
    Shape n = {r};
    push(static_cast<int>(Op::STRIDED_SLICE),
         {x, const_ints(begin, n), const_ints(end, n), const_ints(strides, n)},
         {new_output(o, at(x).type, at(x).quant)}, tflite::BuiltinOptions::StridedSliceOptions,
         [=](auto& fbb) {
           return tflite::CreateStridedSliceOptions(fbb, begin_mask, end_mask, ellipsis, new_axis,
                                                    shrink, offset)
               .Union();
         });
  }

  void pad(Op code) {
    int x = data_input();
    std::vector<int64_t> p;
    Shape o = at(x).shape;
    for (auto& d : o) {
      int before = in_.range(0, 2), after = in_.range(0, 2);
      if (code == Op::MIRROR_PAD) before = std::min(before, d), after = std::min(after, d);
      p.push_back(before);
      p.push_back(after);
      d += before + after;
    }
    std::vector<int32_t> ins = {x, const_ints(p, {rank(x), 2}, in_.one_in(6))};
    if (code == Op::PADV2) {
      int v = new_const({}, at(x).type);
      if (at(x).quant) tensors_[static_cast<size_t>(v)].quant = at(x).quant;
      ins.push_back(v);
    }
    if (code == Op::MIRROR_PAD) {
      auto mode = in_.flag() ? tflite::MirrorPadMode::REFLECT : tflite::MirrorPadMode::SYMMETRIC;
      return push(static_cast<int>(code), ins, {new_output(o, at(x).type, at(x).quant)},
                  tflite::BuiltinOptions::MirrorPadOptions,
                  [mode](auto& fbb) { return tflite::CreateMirrorPadOptions(fbb, mode).Union(); });
    }
    push(static_cast<int>(code), ins, {new_output(o, at(x).type, at(x).quant)});
  }

  void reduce(Op code, Type type = Type::FLOAT32) {
    int x = data_input(-1, type);
    int r = rank(x);
    std::vector<int64_t> axes;
    for (int k = in_.range(1, std::max(r, 1)); k > 0; --k) axes.push_back(axis(r));
    bool keep = in_.flag();
    Shape o;
    for (int i = 0; i < r; ++i) {
      bool reduced = std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
        return in_rank(static_cast<int>(a), r) && norm_axis(static_cast<int>(a), r) == i;
      });
      if (!reduced)
        o.push_back(at(x).shape[static_cast<size_t>(i)]);
      else if (keep)
        o.push_back(1);
    }
    int ax = axes.size() == 1 && in_.flag() ? const_ints(axes)
                                            : const_ints(axes, {static_cast<int32_t>(axes.size())});
    push(static_cast<int>(code), {x, ax}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::ReducerOptions,
         [keep](auto& fbb) { return tflite::CreateReducerOptions(fbb, keep).Union(); });
  }

  void gather() {
    int x = data_input();
    int r = rank(x), a = axis(r);
    int dim = in_rank(a, r) ? at(x).shape[static_cast<size_t>(norm_axis(a, r))] : 1;
    Shape ishape = random_shape(in_.range(0, 2));
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < elements(ishape); ++i)
      idx.push_back(in_.range(in_.one_in(8) ? -dim : 0, dim - 1));
    int indices = in_.one_in(6) ? data_input(-1, Type::INT32) : const_ints(idx, ishape, in_.flag());
    Shape o;
    if (in_rank(a, r)) {
      int na = norm_axis(a, r);
      o.assign(at(x).shape.begin(), at(x).shape.begin() + na);
      o.insert(o.end(), at(indices).shape.begin(), at(indices).shape.end());
      o.insert(o.end(), at(x).shape.begin() + na + 1, at(x).shape.end());
    }
    int batch_dims = in_.one_in(10) ? 1 : 0;
    push(static_cast<int>(Op::GATHER), {x, indices}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::GatherOptions, [a, batch_dims](auto& fbb) {
           return tflite::CreateGatherOptions(fbb, a, batch_dims).Union();
         });
  }

  void dequantize() {
    int x;
    if (in_.flag()) {  // a float16 or int8 weight
      Shape s = random_shape();
      Type t = in_.flag() ? Type::FLOAT16 : Type::INT8;
      x = new_const(s, t);
      if (t == Type::INT8) {
        size_t channels = s.empty() || in_.flag() ? 1 : static_cast<size_t>(s[0]);
        tensors_[static_cast<size_t>(x)].quant = random_quant(t, channels, 0);
      }
    } else {
      x = data_input(-1, activation_type_);
    }
    push(static_cast<int>(Op::DEQUANTIZE), {x}, {new_output(at(x).shape, Type::FLOAT32)});
  }

  void depth_space(Op code) {
    int x = image_input();
    Shape s = at(x).shape;
    // A block that divides what it must (height and width, or channels).
    int block = 1;
    for (int b = 2; b <= 3; ++b)
      if ((code == Op::SPACE_TO_DEPTH ? s[1] % b == 0 && s[2] % b == 0 : s[3] % (b * b) == 0) &&
          in_.flag())
        block = b;
    if (bend(30)) block = 0;
    Shape o = s;
    if (block > 0) {
      if (code == Op::SPACE_TO_DEPTH)
        o = {s[0], s[1] / block, s[2] / block, s[3] * block * block};
      else
        o = {s[0], s[1] * block, s[2] * block, s[3] / (block * block)};
    }
    if (code == Op::SPACE_TO_DEPTH)
      push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
           tflite::BuiltinOptions::SpaceToDepthOptions,
           [block](auto& fbb) { return tflite::CreateSpaceToDepthOptions(fbb, block).Union(); });
    else
      push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
           tflite::BuiltinOptions::DepthToSpaceOptions,
           [block](auto& fbb) { return tflite::CreateDepthToSpaceOptions(fbb, block).Union(); });
  }

  void space_batch(Op code) {
    int x = image_input();
    Shape s = at(x).shape;
    int bh = in_.range(1, 2), bw = in_.range(1, 2);
    if (code == Op::BATCH_TO_SPACE_ND && s[0] % (bh * bw) != 0) bh = bw = 1;
    std::vector<int64_t> pads = {in_.range(0, 2), in_.range(0, 2), in_.range(0, 2),
                                 in_.range(0, 2)};
    if (code == Op::SPACE_TO_BATCH_ND) {  // padded sizes are multiples of the block
      pads[1] += (bh - (s[1] + pads[0] + pads[1]) % bh) % bh;
      pads[3] += (bw - (s[2] + pads[2] + pads[3]) % bw) % bw;
    }
    Shape o = s;
    if (code == Op::SPACE_TO_BATCH_ND)
      o = {s[0] * bh * bw, static_cast<int32_t>((s[1] + pads[0] + pads[1]) / bh),
           static_cast<int32_t>((s[2] + pads[2] + pads[3]) / bw), s[3]};
    else
      o = {s[0] / (bh * bw), static_cast<int32_t>(s[1] * bh - pads[0] - pads[1]),
           static_cast<int32_t>(s[2] * bw - pads[2] - pads[3]), s[3]};
    push(static_cast<int>(code), {x, const_ints({bh, bw}, {2}), const_ints(pads, {2, 2})},
         {new_output(o, at(x).type, at(x).quant)});
  }

  void resize(Op code) {
    int x = image_input();
    Shape s = at(x).shape;
    int h = in_.range(1, 8), w = in_.range(1, 8);
    bool align = in_.flag(), half = in_.flag();
    int size = in_.one_in(12) ? data_input(1, Type::INT32) : const_ints({h, w}, {2});
    int y = new_output({s[0], h, w, s[3]}, at(x).type, at(x).quant);
    if (code == Op::RESIZE_BILINEAR)
      push(
          static_cast<int>(code), {x, size}, {y}, tflite::BuiltinOptions::ResizeBilinearOptions,
          [=](auto& fbb) { return tflite::CreateResizeBilinearOptions(fbb, align, half).Union(); });
    else
      push(static_cast<int>(code), {x, size}, {y},
           tflite::BuiltinOptions::ResizeNearestNeighborOptions, [=](auto& fbb) {
             return tflite::CreateResizeNearestNeighborOptions(fbb, align, half).Union();
           });
  }

  // SPACE_TO_BATCH_ND -> CONV_2D / DEPTHWISE_CONV_2D (VALID) -> BATCH_TO_SPACE_ND,
  // as TensorFlow writes a dilated convolution (fuse_dilated_convolutions).
  void dilated_conv() {
    int x = image_input();
    Shape s = at(x).shape;
    int rate = in_.range(1, 3), k = in_.range(1, 3);
    int pad_total = (k - 1) * rate;
    int ph = pad_total + (rate - (s[1] + pad_total) % rate) % rate;
    int pw = pad_total + (rate - (s[2] + pad_total) % rate) % rate;
    std::vector<int64_t> pads = {pad_total / 2, ph - pad_total / 2, pad_total / 2,
                                 pw - pad_total / 2};
    std::vector<int64_t> crops = {0, ph - pad_total, 0, pw - pad_total};
    if (in_.one_in(4)) pads = {0, ph - pad_total, 0, pw - pad_total};  // VALID
    int block = const_ints({rate, rate}, {2});
    Shape sb = {s[0] * rate * rate, static_cast<int32_t>((s[1] + pads[0] + pads[1]) / rate),
                static_cast<int32_t>((s[2] + pads[2] + pads[3]) / rate), s[3]};
    int t1 = new_output(sb, at(x).type, at(x).quant);
    push(static_cast<int>(Op::SPACE_TO_BATCH_ND),
         {x, in_.one_in(8) ? block : const_ints({rate, rate}, {2}), const_ints(pads, {2, 2})},
         {t1});
    bool depthwise = in_.flag();
    int oc = depthwise ? s[3] : in_.range(1, kMaxDim);
    int w = depthwise ? weights({1, k, k, oc}, 3) : weights({oc, k, k, s[3]}, 0);
    Shape sc = {sb[0], sb[1] - k + 1, sb[2] - k + 1, oc};
    int t2 = new_output(sc, at(x).type);
    auto fn = activation_fn();
    if (depthwise)
      push(static_cast<int>(Op::DEPTHWISE_CONV_2D), {t1, w, bias(oc)}, {t2},
           tflite::BuiltinOptions::DepthwiseConv2DOptions, [=](auto& fbb) {
             return tflite::CreateDepthwiseConv2DOptions(fbb, tflite::Padding::VALID, 1, 1, 1, fn)
                 .Union();
           });
    else
      push(static_cast<int>(Op::CONV_2D), {t1, w, bias(oc)}, {t2},
           tflite::BuiltinOptions::Conv2DOptions, [=](auto& fbb) {
             return tflite::CreateConv2DOptions(fbb, tflite::Padding::VALID, 1, 1, fn).Union();
           });
    Shape o = {s[0], sc[1] * rate - static_cast<int32_t>(crops[0] + crops[1]),
               sc[2] * rate - static_cast<int32_t>(crops[2] + crops[3]), oc};
    push(static_cast<int>(Op::BATCH_TO_SPACE_ND), {t2, block, const_ints(crops, {2, 2})},
         {new_output(o, at(x).type)});
  }

  // ---- control flow ------------------------------------------------------------
  // WHILE and IF with subgraphs of their own: a counter and one value through
  // a few iterations, or one value through two branches. Their subgraph
  // indices are bent now and then (out of range, negative, the main graph:
  // recursion), as are the types they hand over.

  struct SubgraphSpec {
    std::string name;
    std::vector<TensorSpec> tensors;
    std::vector<OpSpec> ops;
    std::vector<int32_t> inputs, outputs;
    int add(TensorSpec t) {
      tensors.push_back(std::move(t));
      return static_cast<int>(tensors.size()) - 1;
    }
    int like(const TensorSpec& t, const std::string& tag) {
      TensorSpec c;
      c.name = tag;
      c.type = t.type;
      c.shape = t.shape;
      c.quant = t.quant;
      return add(std::move(c));
    }
    int scalar_i32(int32_t v, const std::string& tag) {
      TensorSpec c;
      c.name = tag;
      c.type = Type::INT32;
      c.constant = true;
      c.data.resize(4);
      std::memcpy(c.data.data(), &v, 4);
      return add(std::move(c));
    }
  };

  // The index a control-flow op names: its subgraph, or a hostile one.
  int subgraph_index(int own) {
    if (!bend(6)) return own;
    switch (in_.range(0, 3)) {
      case 0:
        return -in_.range(1, 5);
      case 1:
        return 1000 + in_.range(0, 1 << 20);
      case 2:
        return 0;  // the main graph, which runs the op: recursion
      default:
        return own + 1;  // another subgraph, whatever its interface
    }
  }
  int add_subgraph(SubgraphSpec g) {
    extra_.push_back(std::move(g));
    return static_cast<int>(extra_.size());  // subgraph 0 is the main graph
  }

  // One elementwise op of `g` on its tensor v.
  int unary_in(SubgraphSpec& g, int v, const std::string& tag) {
    static constexpr Op kOps[] = {Op::ABS, Op::NEG, Op::RELU, Op::TANH, Op::LOGISTIC};
    const Op op = in_.pick(std::span<const Op>(kOps));
    const int y = g.like(g.tensors[static_cast<size_t>(v)], tag);
    g.ops.push_back({static_cast<int>(op), "", {v}, {y}, tflite::BuiltinOptions::NONE, {}});
    return y;
  }

  void while_loop() {
    const int x = data_input();
    const int count = in_.range(0, 3);
    TensorSpec counter;
    counter.type = Type::INT32;
    SubgraphSpec cond;
    cond.name = "cond";
    {
      const int i = cond.like(counter, "i"), v = cond.like(at(x), "v");
      TensorSpec flag;
      flag.name = "again";
      flag.type = Type::BOOL;
      const int again = cond.add(std::move(flag));
      cond.ops.push_back({static_cast<int>(Op::LESS),
                          "",
                          {i, cond.scalar_i32(count, "count")},
                          {again},
                          tflite::BuiltinOptions::NONE,
                          {}});
      cond.inputs = {i, v};
      cond.outputs = {again};
    }
    SubgraphSpec body;
    body.name = "body";
    {
      const int i = body.like(counter, "i"), v = body.like(at(x), "v");
      const int next = body.like(counter, "i_next");
      body.ops.push_back({static_cast<int>(Op::ADD),
                          "",
                          {i, body.scalar_i32(1, "one")},
                          {next},
                          tflite::BuiltinOptions::NONE,
                          {}});
      body.inputs = {i, v};
      body.outputs = {next, unary_in(body, v, "v_next")};
    }
    const int cond_index = subgraph_index(add_subgraph(std::move(cond)));
    const int body_index = subgraph_index(add_subgraph(std::move(body)));
    const int i0 = const_ints({0});
    push(static_cast<int>(Op::WHILE), {i0, x},
         {new_output({}, Type::INT32), new_output(at(x).shape, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::WhileOptions, [=](auto& fbb) {
           return tflite::CreateWhileOptions(fbb, cond_index, body_index).Union();
         });
  }

  // CALL of a subgraph of one elementwise op (or of none: its argument passed
  // through); or STABLEHLO_COMPOSITE with that subgraph as its decomposition
  // (StableHLOCompositeOptions, builtin_options_2).
  void call(bool composite = false) {
    const int x = data_input();
    SubgraphSpec callee;
    callee.name = "callee";
    const int v = callee.like(at(x), "v");
    callee.inputs = {v};
    callee.outputs = {in_.one_in(4) ? v : unary_in(callee, v, "y")};
    const int index = subgraph_index(add_subgraph(std::move(callee)));
    const int y = new_output(at(x).shape, at(x).type, at(x).quant);
    if (!composite)
      return push(static_cast<int>(Op::CALL), {x}, {y}, tflite::BuiltinOptions::CallOptions,
                  [=](auto& fbb) {
                    return tflite::CreateCallOptions(fbb, static_cast<uint32_t>(index)).Union();
                  });
    push(static_cast<int>(Op::STABLEHLO_COMPOSITE), {x}, {y}, tflite::BuiltinOptions::NONE,
         [=](auto& fbb) {
           return tflite::CreateStableHLOCompositeOptions(fbb, fbb.CreateString("odml.fuzz"), index)
               .Union();
         });
    ops_.back().options_2_type = tflite::BuiltinOptions2::StableHLOCompositeOptions;
  }

  void if_then_else() {
    const int c = data_input(0, Type::BOOL);
    const int x = data_input();
    int index[2];
    for (int b = 0; b < 2; ++b) {
      SubgraphSpec branch;
      branch.name = b == 0 ? "then" : "else";
      const int v = branch.like(at(x), "v");
      branch.inputs = {v};
      // A branch that passes its argument through, now and then.
      branch.outputs = {in_.one_in(4) ? v : unary_in(branch, v, "y")};
      index[b] = subgraph_index(add_subgraph(std::move(branch)));
    }
    push(static_cast<int>(Op::IF), {c, x}, {new_output(at(x).shape, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::IfOptions,
         [=](auto& fbb) { return tflite::CreateIfOptions(fbb, index[0], index[1]).Union(); });
  }

  // VAR_HANDLE -> ASSIGN_VARIABLE of a value -> READ_VARIABLE: a resource
  // variable (state: an input and a next output); read before it is
  // assigned now and then (unsupported: nothing gives it a value).
  void resource_variable() {
    const int x = data_input();
    TensorSpec handle;
    handle.name = fresh_name();
    handle.type = Type::RESOURCE;
    const int h = add_tensor(std::move(handle));
    const std::string shared = "v" + std::to_string(in_.range(0, 3));
    push(static_cast<int>(Op::VAR_HANDLE), {}, {h}, tflite::BuiltinOptions::VarHandleOptions,
         [shared](auto& fbb) {
           return tflite::CreateVarHandleOptions(fbb, 0, fbb.CreateString(shared)).Union();
         });
    const bool read_first = bend(4);
    auto assign = [&] { push(static_cast<int>(Op::ASSIGN_VARIABLE), {h, x}, {}); };
    if (!read_first) assign();
    push(static_cast<int>(Op::READ_VARIABLE), {h},
         {new_output(at(x).shape, at(x).type, at(x).quant)});
    if (read_first) assign();
  }

  // SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE: shape arithmetic the converter
  // folds to constants (fold_constants).
  void shape_arithmetic() {
    int x = data_input();
    int r = rank(x);
    if (r == 0) return;
    int shape = new_output({r}, Type::INT32);
    push(static_cast<int>(Op::SHAPE), {x}, {shape}, tflite::BuiltinOptions::ShapeOptions,
         [](auto& fbb) { return tflite::CreateShapeOptions(fbb, Type::INT32).Union(); });
    int first = new_output({}, Type::INT32);
    push(static_cast<int>(Op::STRIDED_SLICE),
         {shape, const_ints({0}, {1}), const_ints({1}, {1}), const_ints({1}, {1})}, {first},
         tflite::BuiltinOptions::StridedSliceOptions,
         [](auto& fbb) { return tflite::CreateStridedSliceOptions(fbb, 0, 0, 0, 0, 1).Union(); });
    int rest = const_ints({-1});
    int packed = new_output({2}, Type::INT32);
    push(static_cast<int>(Op::PACK), {first, rest}, {packed}, tflite::BuiltinOptions::PackOptions,
         [](auto& fbb) { return tflite::CreatePackOptions(fbb, 2, 0).Union(); });
    Shape s = at(x).shape;
    int32_t n0 = s[0];
    Shape o = {n0, n0 ? static_cast<int32_t>(elements(s) / n0) : 0};
    push(static_cast<int>(Op::RESHAPE), {x, packed}, {new_output(o, at(x).type, at(x).quant)});
  }

  // ---- outputs and serialization ---------------------------------------------

  void choose_outputs() {
    std::vector<bool> read(tensors_.size(), false);
    for (const auto& op : ops_)
      for (int32_t i : op.inputs)
        if (i >= 0) read[static_cast<size_t>(i)] = true;
    for (const auto& op : ops_)
      for (int32_t o : op.outputs)
        if (!read[static_cast<size_t>(o)] || in_.one_in(8)) graph_outputs_.push_back(o);
    if (in_.one_in(10) && !graph_inputs_.empty()) graph_outputs_.push_back(graph_inputs_[0]);
    if (in_.one_in(20) && !graph_outputs_.empty()) graph_outputs_.push_back(graph_outputs_[0]);
    if (in_.one_in(20)) {
      for (size_t i = 0; i < tensors_.size(); ++i)
        if (tensors_[i].constant) {
          graph_outputs_.push_back(static_cast<int32_t>(i));
          break;
        }
    }
    if (graph_outputs_.empty() && !graph_inputs_.empty())
      graph_outputs_.push_back(graph_inputs_[0]);
    if (bend(30) && !tensors_.empty()) tensors_.back().variable = true;
    if (in_.one_in(30) && ops_.size() > 1) std::swap(ops_.front(), ops_.back());  // out of order
  }

  std::vector<uint8_t> build() {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<tflite::Buffer>> buffers = {tflite::CreateBuffer(fbb)};
    std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes;
    std::vector<std::pair<int, std::string>> code_keys;
    auto subgraph = [&](const std::string& name, const std::vector<TensorSpec>& specs,
                        const std::vector<OpSpec>& ops, const std::vector<int32_t>& inputs,
                        const std::vector<int32_t>& outputs) {
      std::vector<uint32_t> buffer_of(specs.size(), 0);
      for (size_t i = 0; i < specs.size(); ++i) {
        const TensorSpec& t = specs[i];
        if (!t.constant) continue;
        if (t.shared_buffer_with >= 0) {
          buffer_of[i] = buffer_of[static_cast<size_t>(t.shared_buffer_with)];
          continue;
        }
        fbb.ForceVectorAlignment(t.data.size(), 1, 16);
        buffers.push_back(tflite::CreateBuffer(fbb, fbb.CreateVector(t.data)));
        buffer_of[i] = static_cast<uint32_t>(buffers.size() - 1);
      }
      std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
      for (size_t i = 0; i < specs.size(); ++i) {
        const TensorSpec& t = specs[i];
        flatbuffers::Offset<tflite::QuantizationParameters> q = 0;
        if (t.quant)
          q = tflite::CreateQuantizationParameters(
              fbb, 0, 0, fbb.CreateVector(t.quant->scale), fbb.CreateVector(t.quant->zero_point),
              tflite::QuantizationDetails::NONE, 0, t.quant->axis);
        flatbuffers::Offset<flatbuffers::Vector<int32_t>> signature = 0;
        if (t.dynamic_batch) {
          Shape sig = t.shape;
          sig[0] = -1;
          signature = fbb.CreateVector(sig);
        }
        tensors.push_back(tflite::CreateTensor(fbb, t.has_shape ? fbb.CreateVector(t.shape) : 0,
                                               t.type, buffer_of[i], fbb.CreateString(t.name), q,
                                               t.variable, 0, signature, t.has_shape));
      }
      std::vector<flatbuffers::Offset<tflite::Operator>> operators;
      for (const OpSpec& op : ops) {
        std::pair<int, std::string> key = {op.code, op.custom_code};
        auto it = std::find(code_keys.begin(), code_keys.end(), key);
        if (it == code_keys.end()) {
          code_keys.push_back(key);
          codes.push_back(tflite::CreateOperatorCode(
              fbb, static_cast<int8_t>(std::min(op.code, 127)),
              op.code == static_cast<int>(Op::CUSTOM) ? fbb.CreateString(op.custom_code) : 0, 1,
              static_cast<Op>(op.code)));
          it = code_keys.end() - 1;
        }
        auto options = op.options ? op.options(fbb) : 0;
        const bool second = op.options_2_type != tflite::BuiltinOptions2::NONE;
        operators.push_back(tflite::CreateOperator(
            fbb, static_cast<uint32_t>(it - code_keys.begin()), fbb.CreateVector(op.inputs),
            fbb.CreateVector(op.outputs),
            op.options && !second ? op.options_type : tflite::BuiltinOptions::NONE,
            second ? 0 : options, 0, tflite::CustomOptionsFormat::FLEXBUFFERS, 0, 0, 0, 0,
            second && op.options ? op.options_2_type : tflite::BuiltinOptions2::NONE,
            second ? options : 0));
      }
      return tflite::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(inputs),
                                    fbb.CreateVector(outputs), fbb.CreateVector(operators),
                                    fbb.CreateString(name));
    };
    std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs = {
        subgraph("main", tensors_, ops_, graph_inputs_, graph_outputs_)};
    for (const SubgraphSpec& g : extra_)
      subgraphs.push_back(subgraph(g.name, g.tensors, g.ops, g.inputs, g.outputs));
    auto model = tflite::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs),
                                     fbb.CreateString("fuzz"), fbb.CreateVector(buffers));
    tflite::FinishModelBuffer(fbb, model);
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }

  // The builtin codes the op registry converts. Custom ops are left out: the
  // generator has no recipe for their options (each would be one more
  // unsupported CUSTOM, and the table grows), and their readers have a fuzz
  // target of their own (custom_options).
  static const std::vector<int>& supported_codes() {
    static const std::vector<int> codes = [] {
      std::vector<int> out;
      for (const auto& s : support_matrix())
        if (s.supported && s.code != static_cast<int>(Op::CUSTOM)) out.push_back(s.code);
      return out;
    }();
    return codes;
  }

  FuzzInput in_;
  bool bends_ = false;
  bool quantized_ = false;
  Type activation_type_ = Type::INT8;
  std::vector<TensorSpec> tensors_;
  std::vector<OpSpec> ops_;
  std::vector<int32_t> graph_inputs_, graph_outputs_;
  std::vector<SubgraphSpec> extra_;  // subgraphs 1.. (control flow)
  std::vector<int> activations_;
};

}  // namespace

std::vector<uint8_t> generate_model(std::span<const uint8_t> decisions) {
  return Generator(decisions).run();
}

}  // namespace lite2onnx::fuzz
