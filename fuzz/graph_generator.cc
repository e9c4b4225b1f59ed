#include "fuzz/graph_generator.h"

#include "core/convert.h"
#include "fuzz/graph_generator_parts.h"

namespace lite2onnx::fuzz {
namespace gen {

std::vector<uint8_t> Generator::run() {
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

Shape Generator::random_shape(int rank) {
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

Type Generator::data_type() {
  if (in_.one_in(10)) {
    static constexpr Type kOthers[] = {Type::INT32, Type::INT64, Type::BOOL, Type::FLOAT16,
                                       Type::INT16, Type::UINT8, Type::INT8, Type::STRING};
    return in_.pick(std::span<const Type>(kOthers));
  }
  return quantized_ ? activation_type_ : Type::FLOAT32;
}

Quant Generator::random_quant(Type t, size_t channels, int axis) {
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
    int64_t zp = t == Type::UINT8 ? in_.range(0, 255) : t == Type::INT8 ? in_.range(-128, 127) : 0;
    if (bend(40)) zp = 300;
    q.zero_point.push_back(zp);
  }
  if (in_.one_in(30)) q.zero_point.clear();
  return q;
}

std::vector<uint8_t> Generator::values(Type t, int64_t count) {
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

std::string Generator::fresh_name() {
  if (!tensors_.empty() && bend(40))
    return tensors_[static_cast<size_t>(in_.range(0, static_cast<int>(tensors_.size()) - 1))]
        .name;  // a duplicate name
  return "t" + std::to_string(tensors_.size());
}

int Generator::add_tensor(TensorSpec t) {
  tensors_.push_back(std::move(t));
  return static_cast<int>(tensors_.size()) - 1;
}

int Generator::new_input(Shape shape, Type type) {
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

int Generator::new_const(Shape shape, Type type, std::vector<uint8_t> data) {
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
      if (tensors_[i].constant && tensors_[i].shared_buffer_with < 0 && tensors_[i].data == t.data)
        t.shared_buffer_with = static_cast<int>(i);
  return add_tensor(std::move(t));
}

int Generator::const_ints(const std::vector<int64_t>& v, Shape shape, bool int64) {
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

int Generator::const_scalar_f(float v) {
  std::vector<uint8_t> data(4);
  std::memcpy(data.data(), &v, 4);
  return new_const({}, Type::FLOAT32, data);
}

int Generator::new_output(Shape shape, Type type, const std::optional<Quant>& like) {
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

int Generator::activation(const std::function<bool(const TensorSpec&)>& fits,
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

int Generator::data_input(int r, Type type) {
  bool any_type = in_.one_in(10);
  Type want = type == Type::FLOAT32 && quantized_ ? activation_type_ : type;
  return activation(
      [&](const TensorSpec& t) {
        return (r < 0 || static_cast<int>(t.shape.size()) == r) && (any_type || t.type == want);
      },
      [&] { return random_shape(r); }, want);
}

int Generator::axis(int r) {
  if (bend(20)) return in_.range(-9, 9);
  if (r <= 0) return 0;
  int a = in_.range(0, r - 1);
  return in_.one_in(4) ? a - r : a;
}

tflite::ActivationFunctionType Generator::activation_fn() {
  static constexpr tflite::ActivationFunctionType kFns[] = {
      tflite::ActivationFunctionType::NONE,         tflite::ActivationFunctionType::NONE,
      tflite::ActivationFunctionType::RELU,         tflite::ActivationFunctionType::RELU6,
      tflite::ActivationFunctionType::RELU_N1_TO_1, tflite::ActivationFunctionType::TANH,
      tflite::ActivationFunctionType::SIGN_BIT};
  return in_.pick(std::span<const tflite::ActivationFunctionType>(kFns));
}

void Generator::push(int code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                     tflite::BuiltinOptions type, OptionsFn options) {
  // Omit an optional trailing input now and then; drop options sometimes.
  if (inputs.size() > 1 && bend(30)) inputs.back() = -1;
  if (bend(40)) options = {}, type = tflite::BuiltinOptions::NONE;
  ops_.push_back({code, "", std::move(inputs), std::move(outputs), type, std::move(options)});
}

void Generator::add_op() {
  if (in_.one_in(40)) return unsupported_op();
  if (in_.one_in(16)) return dilated_conv();
  if (in_.one_in(16)) return shape_arithmetic();
  add_builtin(static_cast<Op>(in_.pick(std::span<const int>(supported_codes()))));
}

void Generator::unsupported_op() {
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

void Generator::choose_outputs() {
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
  if (graph_outputs_.empty() && !graph_inputs_.empty()) graph_outputs_.push_back(graph_inputs_[0]);
  if (bend(30) && !tensors_.empty()) tensors_.back().variable = true;
  if (in_.one_in(30) && ops_.size() > 1) std::swap(ops_.front(), ops_.back());  // out of order
}

std::vector<uint8_t> Generator::build() {
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

const std::vector<int>& Generator::supported_codes() {
  static const std::vector<int> codes = [] {
    std::vector<int> out;
    for (const auto& s : support_matrix())
      if (s.supported && s.code != static_cast<int>(Op::CUSTOM)) out.push_back(s.code);
    return out;
  }();
  return codes;
}

}  // namespace gen

std::vector<uint8_t> generate_model(std::span<const uint8_t> decisions) {
  return gen::Generator(decisions).run();
}

}  // namespace lite2onnx::fuzz
