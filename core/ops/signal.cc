// TensorFlow Lite Micro's Signal ops (signal.h), from tflite-micro's
// signal/micro/kernels/*.cc and signal/src/*.cc: every integer step of the
// kernels in int64 ONNX arithmetic, the C types' wrap-around where their
// stores narrow, so the outputs are the kernels' bit for bit.
//   - SignalWindow: (x * w) >> shift, saturated to int16, per window-sized chunk;
//   - SignalFftAutoScale: the largest magnitude as MaxAbs16 scans it (a
//     Loop: its int16 negation of -32768 makes the scan order matter), the
//     left shift that fills 16 bits, and the shifted input;
//   - SignalEnergy: re^2 + im^2 over [start_index, end_index); the kernel
//     leaves the other outputs unwritten: zeros here;
//   - SignalFilterBank: the weighted and unweighted accumulations of each
//     channel, a constant [channels, bins] matrix of the weights (the weight
//     tensors must be constants);
//   - SignalFilterBankSquareRoot: Sqrt64 (rounded integer square root, its
//     Sqrt32 shortcut below 2^32) >> scale_bits;
//   - SignalFilterBankSpectralSubtraction: the noise estimate's smoothing
//     filter, kept between invocations (a state pair of kind op_state, zeros
//     first, as the kernel's Prepare and Reset set it);
//   - SignalPCAN: WideDynamicFunction's piecewise polynomial gain from the
//     LUT, the SNR and PcanShrink;
//   - SignalFilterBankLog: Log32 (its 128-segment LUT) scaled and clamped.
// The options are FlexBuffer maps, read by name (the kernels read their
// values by position, the keys' sorted order).
#include "core/ops/signal.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/shape.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"

namespace lite2onnx::ops::signal {

using ir::DataType;
using ir::TensorId;
using Kind = CustomField::Kind;

namespace {

constexpr DataType kI64 = DataType::kInt64;
constexpr double kInt32Max = 2147483647.0;
// Bounds of the sizes the lowerings build constants for.
constexpr int64_t kMaxLength = int64_t{1} << 20;
constexpr int64_t kMaxMatrix = int64_t{1} << 24;
// Multipliers of the spectral subtraction, kept so that its uint64 sums fit int64.
constexpr double kMaxCoefficient = 1 << 30;

const ir::Tensor& input(const ir::Graph& g, const ir::Node& n, size_t i) {
  return g.tensor(n.inputs[i]);
}
const ir::Tensor& output(const ir::Graph& g, const ir::Node& n, size_t i) {
  return g.tensor(n.outputs[i]);
}

// Static element count of a tensor, or -1.
int64_t count_of(const ir::Tensor& t) {
  if (!t.has_rank || !ir::static_shape(t)) return -1;
  return ir::element_count(t.shape).value_or(-1);
}

// Checks the element types of the node's first inputs and outputs, and that
// every one of them has a static shape; `one_d`: of rank 1 (as Prepare asks).
Check check_tensors(const ir::Graph& g, const ir::Node& n, std::vector<DataType> ins,
                    std::vector<DataType> outs, std::vector<bool> one_d_in = {}) {
  if (n.inputs.size() < ins.size() || own_outputs(n) != outs.size())
    return refuse(ReasonCode::kOperands, std::to_string(ins.size()) + " inputs and " +
                                             std::to_string(outs.size()) + " outputs expected");
  for (size_t i = 0; i < ins.size(); ++i) {
    const ir::Tensor& t = input(g, n, i);
    if (t.dtype != ins[i])
      return refuse(ReasonCode::kType, "input " + std::to_string(i) + " must be " +
                                           ir::to_string(ins[i]) + ", not " +
                                           ir::to_string(t.dtype));
    if (count_of(t) < 0 || count_of(t) > kMaxLength)
      return refuse(ReasonCode::kShape, "input " + std::to_string(i) +
                                            " must have a static shape of at most 2^20 elements");
    if (i < one_d_in.size() && one_d_in[i] && t.rank() != 1)
      return refuse(ReasonCode::kShape, "input " + std::to_string(i) + " must be 1-D");
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::Tensor& t = output(g, n, i);
    if (t.dtype != outs[i])
      return refuse(ReasonCode::kType, "output " + std::to_string(i) + " must be " +
                                           ir::to_string(outs[i]) + ", not " +
                                           ir::to_string(t.dtype));
    if (count_of(t) < 0 || count_of(t) > kMaxLength)
      return refuse(ReasonCode::kShape, "output " + std::to_string(i) +
                                            " must have a static shape of at most 2^20 elements");
  }
  return {};
}

// A constant int16 input's elements (none when it is no int16 constant).
std::vector<int64_t> int16_constant(const ir::Graph& g, const ir::Node& n, size_t i) {
  const ir::Tensor& t = input(g, n, i);
  std::vector<int64_t> v;
  if (!t.is_const() || t.data->stored_type != DataType::kInt16) return v;
  for (int16_t x : t.data->as<int16_t>()) v.push_back(x);
  return v;
}

// Writes the int64 value `v` into output i (its element type and shape).
void store(NodeBuilder& b, const ir::Node& n, size_t i, TensorId v) {
  const ir::Tensor& t = b.graph().tensor(n.outputs[i]);
  TensorId shaped = b.reshape(v, t.shape, kI64);
  b.into("Cast", {shaped}, {n.outputs[i]}, {{"to", int64_t{ir::onnx_type_code(t.dtype)}}});
}

// Input i as a flat int64 tensor.
TensorId flat(NodeBuilder& b, Int& x, const ir::Node& n, size_t i) {
  return b.reshape(x.from(n.inputs[i]), {-1}, kI64);
}

// ---- SignalWindow ----

const CustomField kWindowFields[] = {{"shift", Kind::kInt, true, 0, 0, 31}};

Check check_window(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_tensors(g, n, {DataType::kInt16, DataType::kInt16}, {DataType::kInt16},
                             {false, true}))
    return c;
  const int64_t size = count_of(input(g, n, 0)), width = count_of(input(g, n, 1));
  if (width < 1 || size % width != 0)
    return refuse(ReasonCode::kShape,
                  "the input's size must be a multiple of the window's (the "
                  "kernel reads past the input otherwise)");
  if (count_of(output(g, n, 0)) != size)
    return refuse(ReasonCode::kShape, "the output must have the input's size");
  return {};
}

Status lower_window(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const int64_t width = count_of(ctx.tensor(n.inputs[1]));
  TensorId rows = b.reshape(x.from(n.inputs[0]), {-1, width}, kI64);
  TensorId raw =
      x.shr(x.mul(rows, x.from(n.inputs[1])), static_cast<int>(n.attrs.get_int("shift")));
  store(b, n, 0, x.clip(raw, INT16_MIN, INT16_MAX));
  return ok_status();
}

// ---- SignalFftAutoScale ----

Check check_auto_scale(const ir::Graph& g, const ir::Node& n) {
  if (auto c =
          check_tensors(g, n, {DataType::kInt16}, {DataType::kInt16, DataType::kInt32}, {true}))
    return c;
  if (count_of(output(g, n, 0)) != count_of(input(g, n, 0)) || output(g, n, 0).rank() != 1 ||
      output(g, n, 1).rank() != 0)
    return refuse(ReasonCode::kShape, "outputs must be the input's size (1-D) and a scalar");
  return {};
}

Status lower_auto_scale(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  TensorId in = x.from(n.inputs[0]);
  // MaxAbs16: max = value if value > max, else -value (an int16 store) if
  // -value > max; in scan order.
  LoopBuilder loop(b, "max_abs");
  NodeBuilder& body = loop.body();
  Int y(body);
  TensorId max = loop.carry(x.c(0), kI64, {});
  TensorId values = loop.capture(in);
  TensorId v = body.add("Gather", {values, loop.iteration()}, kI64, {{"axis", int64_t{0}}});
  TensorId negated = y.sub(y.c(0), v);
  TensorId next = y.where(y.less(max, v), v, y.where(y.less(max, negated), y.wrap16(negated), max));
  TensorId count = b.add("Size", {in}, kI64);
  max = loop.finish(count, ir::kNoTensor, ir::kNoTensor, {next})[0];
  // MostSignificantBit32 of the int16 as uint32: a negative one has 32 bits;
  // scale_bits = 16 - msb - 1, at least 0.
  TensorId bits = x.where(x.less(max, x.c(0)), x.c(32), x.msb(max, 16));
  TensorId scale = x.max(x.sub(x.c(15), bits), x.c(0));
  store(b, n, 0, x.wrap16(x.shl_var(in, scale)));
  store(b, n, 1, scale);
  return ok_status();
}

// ---- SignalEnergy ----

const CustomField kEnergyFields[] = {
    {"end_index", Kind::kInt, true, 0, 0, kInt32Max},
    {"start_index", Kind::kInt, true, 0, 0, kInt32Max},
};

Check check_energy(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_tensors(g, n, {DataType::kInt16}, {DataType::kUInt32}, {true})) return c;
  const int64_t start = n.attrs.get_int("start_index"), end = n.attrs.get_int("end_index");
  const int64_t bins = count_of(input(g, n, 0)) / 2, out = count_of(output(g, n, 0));
  if (start > end || end > bins || end > out)
    return refuse(ReasonCode::kOperands,
                  "start_index <= end_index <= the bins of the input and of the output expected, "
                  "got [" +
                      std::to_string(start) + ", " + std::to_string(end) + ") for " +
                      std::to_string(bins) + " bins and " + std::to_string(out) + " outputs");
  return {};
}

Status lower_energy(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const int64_t start = n.attrs.get_int("start_index"), end = n.attrs.get_int("end_index");
  const int64_t out = count_of(ctx.tensor(n.outputs[0]));
  TensorId pairs = b.reshape(x.from(n.inputs[0]), {-1, 2}, kI64);
  TensorId squares = b.slice(x.mul(pairs, pairs), 0, start, end, kI64);
  // int32 sum stored as uint32: the wrap of 2 * 32768^2.
  TensorId energy =
      x.wrap32u(b.add("ReduceSum", {squares, b.ints({1})}, kI64, {{"keepdims", int64_t{0}}}));
  TensorId padded = b.add("Pad", {energy, b.ints({start, out - end})}, kI64);
  store(b, n, 0, padded);
  return ok_status();
}

// ---- SignalFilterBank ----

const CustomField kFilterBankFields[] = {{"num_channels", Kind::kInt, true, 0, 1, 1 << 16}};

struct Bank {
  std::vector<int64_t> matrix;  // [channels, bins]
  std::string problem;
};

// The accumulation as a matrix: FilterbankAccumulateChannels adds the
// weighted bins of channel i into output i - 1 and the unweighted ones into
// output i (element 0 and the last unweighted sum are discarded).
Bank bank_matrix(const ir::Graph& g, const ir::Node& n) {
  Bank bank;
  const int64_t channels = n.attrs.get_int("num_channels"), bins = count_of(input(g, n, 0));
  for (size_t i = 1; i < 6; ++i)
    if (!input(g, n, i).is_const()) {
      bank.problem = "the weight, start and width tensors must be constants";
      return bank;
    }
  if (channels * bins > kMaxMatrix) {
    bank.problem = "channels x bins beyond 2^24";
    return bank;
  }
  const std::vector<int64_t> weights = int16_constant(g, n, 1), unweights = int16_constant(g, n, 2),
                             freq_starts = int16_constant(g, n, 3),
                             weight_starts = int16_constant(g, n, 4),
                             widths = int16_constant(g, n, 5);
  const auto c = static_cast<size_t>(channels);
  if (freq_starts.size() < c + 1 || weight_starts.size() < c + 1 || widths.size() < c + 1 ||
      unweights.size() < weights.size()) {
    bank.problem =
        "the start and width tensors need num_channels + 1 elements, unweights as "
        "many as weights";
    return bank;
  }
  bank.matrix.assign(c * static_cast<size_t>(bins), 0);
  for (size_t i = 0; i <= c; ++i) {
    for (int64_t j = 0; j < widths[i]; ++j) {
      const int64_t f = freq_starts[i] + j, w = weight_starts[i] + j;
      if (f < 0 || f >= bins || w < 0 || w >= static_cast<int64_t>(weights.size())) {
        bank.problem = "channel " + std::to_string(i) + " reads outside the spectrum or weights";
        bank.matrix.clear();
        return bank;
      }
      const auto col = static_cast<size_t>(f);
      if (i >= 1) bank.matrix[(i - 1) * static_cast<size_t>(bins) + col] += weights[w];
      if (i < c) bank.matrix[i * static_cast<size_t>(bins) + col] += unweights[w];
    }
  }
  return bank;
}

Check check_filter_bank(const ir::Graph& g, const ir::Node& n) {
  const DataType i16 = DataType::kInt16;
  if (auto c = check_tensors(g, n, {DataType::kUInt32, i16, i16, i16, i16, i16},
                             {DataType::kUInt64}, {true, true, true, true, true, true}))
    return c;
  if (count_of(output(g, n, 0)) != n.attrs.get_int("num_channels"))
    return refuse(ReasonCode::kShape, "the output must have num_channels elements");
  if (Bank bank = bank_matrix(g, n); !bank.problem.empty())
    return refuse(ReasonCode::kOperands, bank.problem);
  return {};
}

uint64_t filter_bank_bytes(const ir::Graph& g, const ir::Node& n) {
  return static_cast<uint64_t>(n.attrs.get_int("num_channels")) *
         static_cast<uint64_t>(std::max<int64_t>(count_of(input(g, n, 0)), 0)) * 8;
}

Status lower_filter_bank(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const int64_t channels = n.attrs.get_int("num_channels");
  const int64_t bins = count_of(ctx.tensor(n.inputs[0]));
  Bank bank = bank_matrix(ctx.graph(), n);
  TensorId weights = b.ints(std::move(bank.matrix), ir::Shape{channels, bins});
  TensorId spectrum = b.reshape(flat(b, x, n, 0), {1, bins}, kI64);
  // uint64 sums: int64's wrap-around is theirs.
  store(b, n, 0,
        b.add("ReduceSum", {x.mul(weights, spectrum), b.ints({1})}, kI64,
              {{"keepdims", int64_t{0}}}));
  return ok_status();
}

// ---- SignalFilterBankSquareRoot ----

Check check_square_root(const ir::Graph& g, const ir::Node& n) {
  if (auto c =
          check_tensors(g, n, {DataType::kUInt64, DataType::kInt32}, {DataType::kUInt32}, {true}))
    return c;
  if (input(g, n, 1).rank() != 0) return refuse(ReasonCode::kShape, "scale_bits must be a scalar");
  if (count_of(output(g, n, 0)) != count_of(input(g, n, 0)))
    return refuse(ReasonCode::kShape, "the output must have the input's size");
  return {};
}

// Sqrt64: floor(sqrt(v)) from the float64 root corrected by one either way
// (exact for v < 2^62), then rounded up when the remainder exceeds the root,
// unless the root is 0xFFFF (Sqrt32, for v < 2^32) or 0xFFFFFFFF.
TensorId sqrt64(Int& x, TensorId v) {
  NodeBuilder& b = x.builder();
  TensorId guess =
      b.cast(b.add("Floor", {b.add("Sqrt", {b.cast(v, DataType::kFloat64)}, DataType::kFloat64)},
                   DataType::kFloat64),
             kI64);
  TensorId up = x.add_c(guess, 1);
  TensorId root = x.where(b.add("LessOrEqual", {x.mul(up, up), v}, DataType::kBool), up, guess);
  root = x.where(x.less(v, x.mul(root, root)), x.sub(root, x.c(1)), root);
  TensorId remainder = x.sub(v, x.mul(root, root));
  TensorId cap = x.where(x.less(v, x.c(int64_t{1} << 32)), x.c(0xFFFF), x.c(0xFFFFFFFF));
  TensorId round =
      b.add("And",
            {x.less(root, remainder),
             b.add("Not", {b.add("Equal", {root, cap}, DataType::kBool)}, DataType::kBool)},
            DataType::kBool);
  return x.add(root, b.cast(round, kI64));
}

Status lower_square_root(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  // A shift past 31 is undefined in C: clamped here.
  TensorId shift = x.clip(x.from(n.inputs[1]), 0, 62);
  store(b, n, 0, x.shr_var(sqrt64(x, flat(b, x, n, 0)), shift));
  return ok_status();
}

// ---- SignalFilterBankSpectralSubtraction ----

const CustomField kSpectralFields[] = {
    {"alternate_one_minus_smoothing", Kind::kInt, true, 0, 0, kMaxCoefficient},
    {"alternate_smoothing", Kind::kInt, true, 0, 0, kMaxCoefficient},
    {"clamping", Kind::kBool, true, 0, 0, 1},
    {"min_signal_remaining", Kind::kInt, true, 0, 0, kMaxCoefficient},
    {"num_channels", Kind::kInt, true, 0, 1, 1 << 16},
    {"one_minus_smoothing", Kind::kInt, true, 0, 0, kMaxCoefficient},
    {"smoothing", Kind::kInt, true, 0, 0, kMaxCoefficient},
    {"smoothing_bits", Kind::kInt, true, 0, 0, 31},
    {"spectral_subtraction_bits", Kind::kInt, true, 0, 0, 62},
};

Check check_spectral(const ir::Graph& g, const ir::Node& n) {
  if (auto c =
          check_tensors(g, n, {DataType::kUInt32}, {DataType::kUInt32, DataType::kUInt32}, {true}))
    return c;
  const int64_t channels = n.attrs.get_int("num_channels");
  if (count_of(input(g, n, 0)) != channels || count_of(output(g, n, 0)) != channels ||
      count_of(output(g, n, 1)) != channels)
    return refuse(ReasonCode::kShape,
                  "input, output and noise estimate need num_channels elements");
  if (op_state_input(n, 0) == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the noise estimate state was not exposed");
  return {};
}

std::vector<OpState> spectral_state(const ir::Graph&, const ir::Node& n) {
  return {{"noise_estimate", DataType::kUInt32, {n.attrs.get_int("num_channels")}}};
}

Status lower_spectral(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const auto& a = n.attrs;
  const int64_t channels = a.get_int("num_channels");
  const int bits = static_cast<int>(a.get_int("smoothing_bits"));
  const int shift = static_cast<int>(a.get_int("spectral_subtraction_bits"));
  std::vector<int64_t> smoothing, rest;
  for (int64_t i = 0; i < channels; ++i) {
    const bool odd = (i & 1) != 0;
    smoothing.push_back(a.get_int(odd ? "alternate_smoothing" : "smoothing"));
    rest.push_back(a.get_int(odd ? "alternate_one_minus_smoothing" : "one_minus_smoothing"));
  }
  TensorId in = flat(b, x, n, 0);
  TensorId noise = x.from(op_state_input(n, 0));
  TensorId scaled = x.wrap32u(x.mul_c(in, int64_t{1} << bits));
  TensorId smoothed =
      x.add(x.mul(scaled, b.ints(std::move(smoothing))), x.mul(noise, b.ints(std::move(rest))));
  noise = x.wrap32u(x.shr_wide(smoothed, shift));  // up to 2^63
  TensorId estimate = x.min(noise, scaled);
  if (a.get_int("clamping") != 0) noise = estimate;
  TensorId floor = x.wrap32u(x.shr(x.mul_c(in, a.get_int("min_signal_remaining")), shift));
  TensorId subtracted = x.shr(x.sub(scaled, estimate), bits);
  store(b, n, 0, x.max(subtracted, floor));
  store(b, n, 1, noise);
  b.into("Cast", {noise}, {op_state_output(n, 0)},
         {{"to", int64_t{ir::onnx_type_code(DataType::kUInt32)}}});
  return ok_status();
}

// ---- SignalPCAN ----

const CustomField kPcanFields[] = {{"snr_shift", Kind::kInt, true, 0, 0, 62}};
constexpr int64_t kPcanLut = 4 * 32 - 6 + 3;  // the entries WideDynamicFunction reads

Check check_pcan(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_tensors(g, n, {DataType::kUInt32, DataType::kUInt32, DataType::kInt16},
                             {DataType::kUInt32}, {true, true, true}))
    return c;
  const int64_t channels = count_of(input(g, n, 0));
  if (count_of(input(g, n, 1)) < channels || count_of(output(g, n, 0)) != channels)
    return refuse(ReasonCode::kShape, "noise estimate and output need the input's size");
  if (count_of(input(g, n, 2)) < kPcanLut)
    return refuse(ReasonCode::kShape,
                  "the gain LUT needs at least 125 entries (the kernel reads "
                  "that far for large noise estimates)");
  return {};
}

// WideDynamicFunction(x, lut) as int64 (the int16 it returns).
TensorId wide_dynamic(Int& x, TensorId v, TensorId lut) {
  NodeBuilder& b = x.builder();
  auto at = [&](TensorId i) { return b.add("Gather", {lut, i}, kI64, {{"axis", int64_t{0}}}); };
  TensorId interval = x.msb(v, 32);
  TensorId base = x.sub(x.mul_c(interval, 4), x.c(6));
  TensorId small = x.less(interval, x.c(11));
  TensorId up = x.shl_var(v, x.max(x.sub(x.c(11), interval), x.c(0)));
  TensorId down = x.shr_var(v, x.max(x.sub(interval, x.c(11)), x.c(0)));
  TensorId frac = b.add("Mod", {x.where(small, up, down), x.c(1024)}, kI64);
  // The segments exist for interval >= 2; x <= 2 takes lut[x] below.
  TensorId safe = x.max(base, x.c(0));
  TensorId result = x.shr(x.mul(at(x.add_c(safe, 2)), frac), 5);
  result = x.wrap32(x.add(result, x.mul_c(at(x.add_c(safe, 1)), 32)));
  result = x.wrap32(x.mul(result, frac));
  result = x.add(x.shr(x.add_c(result, 1 << 14), 15), at(safe));
  TensorId direct = at(x.min(v, x.c(2)));
  return x.wrap16(x.where(b.add("LessOrEqual", {v, x.c(2)}, DataType::kBool), direct, result));
}

Status lower_pcan(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const int shift = static_cast<int>(n.attrs.get_int("snr_shift"));
  const int64_t channels = count_of(ctx.tensor(n.inputs[0]));
  TensorId in = flat(b, x, n, 0);
  TensorId noise = b.slice(flat(b, x, n, 1), 0, 0, channels, kI64);
  TensorId gain = wide_dynamic(x, noise, flat(b, x, n, 2));
  // The int16 gain as uint32: a negative one is gain + 2^32, so the uint64
  // product is fb * gain + [gain < 0] * fb * 2^32; its shift, modulo 2^32:
  TensorId negative = b.cast(x.less(gain, x.c(0)), kI64);
  TensorId product = x.mul(in, gain);  // |.| < 2^47
  TensorId snr;
  if (shift <= 32) {
    const int64_t high = int64_t{1} << shift;
    TensorId carried =
        x.mul(x.mul_c(b.add("Mod", {in, x.c(high)}, kI64), int64_t{1} << (32 - shift)), negative);
    snr = x.wrap32u(x.add(x.shr(product, shift), carried));
  } else {
    snr = x.shr(x.add(x.shr(product, 32), x.mul(in, negative)), shift - 32);
    snr = x.wrap32u(snr);
  }
  // PcanShrink: snr^2 / 4 below 2 (12 fractional bits in, 6 out), else snr - 1.
  TensorId square = x.shr(x.mul(snr, snr), 2 + 2 * 12 - 6);
  TensorId linear = x.sub(x.shr(snr, 12 - 6), x.c(1 << 6));
  store(b, n, 0, x.wrap32u(x.where(x.less(snr, x.c(2 << 12)), square, linear)));
  return ok_status();
}

// ---- SignalFilterBankLog ----

const CustomField kLogFields[] = {
    {"input_correction_bits", Kind::kInt, true, 0, 0, 31},
    {"output_scale", Kind::kInt, true, 0, 0, kInt32Max},
};

// log.cc's kLogLut: 129 segments' corrections (and a padding entry).
constexpr std::array<int64_t, 130> kLogLut = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
    2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
    4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
    5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
    5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
    2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

Check check_log(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_tensors(g, n, {DataType::kUInt32}, {DataType::kInt16}, {true})) return c;
  if (count_of(output(g, n, 0)) != count_of(input(g, n, 0)))
    return refuse(ReasonCode::kShape, "the output must have the input's size");
  return {};
}

// Log32(v, scale) for v >= 2 (other elements give garbage the caller drops).
TensorId log32(Int& x, TensorId v, int64_t scale) {
  TensorId whole = x.sub(x.msb(v, 32), x.c(1));
  // Log2FractionPart32: the fraction in 16 bits, then the LUT's correction.
  TensorId safe = x.max(whole, x.c(0));
  TensorId frac = x.sub(v, x.pow2(safe));
  TensorId up = x.shl_var(frac, x.max(x.sub(x.c(16), safe), x.c(0)));
  TensorId down = x.shr_var(frac, x.max(x.sub(safe, x.c(16)), x.c(0)));
  frac = x.where(x.less(safe, x.c(16)), up, down);
  TensorId segment = x.clip(x.shr(frac, 16 - 7), 0, 127);
  const std::vector<int64_t> lut(kLogLut.begin(), kLogLut.end());
  TensorId c0 = x.lookup(segment, lut), c1 = x.lookup(x.add_c(segment, 1), lut);
  TensorId offset = x.sub(frac, x.mul_c(segment, (int64_t{1} << 16) >> 7));
  TensorId fraction = x.add(x.add(frac, c0), x.shr(x.mul(x.sub(c1, c0), offset), 16));
  TensorId log2 = x.add(x.mul_c(whole, int64_t{1} << 16), fraction);
  TensorId loge = x.shr(x.add(x.mul_c(log2, 45426), x.c(32768)), 16);
  // out_scale * loge + round in uint32.
  return x.shr(x.wrap32u(x.add(x.mul_c(loge, scale), x.c(32768))), 16);
}

Status lower_log(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const int64_t bits = n.attrs.get_int("input_correction_bits");
  TensorId scaled = x.wrap32u(x.mul_c(flat(b, x, n, 0), int64_t{1} << bits));
  TensorId value = x.min(log32(x, scaled, n.attrs.get_int("output_scale")), x.c(INT16_MAX));
  store(b, n, 0, x.where(x.less(x.c(1), scaled), value, x.c(0)));
  return ok_status();
}

template <const auto& kFields>
Status read_fields(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kFields, attrs);
}

constexpr Documentation doc(const char* onnx, const char* dtypes, const char* notes = "") {
  return {.onnx = onnx, .dtypes = dtypes, .notes = notes};
}

OpEntry window() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kWindowFields>},
          .check = check_window,
          .lower = lower_window,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Mul + Div (shift) + Clip, int64", "int16",
                     "TFLite Micro Signal library; bit-exact")};
}

OpEntry auto_scale() {
  return {.read = {.min_inputs = -1},
          .check = check_auto_scale,
          .lower = lower_auto_scale,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Loop (MaxAbs16's scan) + Gather (powers of two) + Mul, int64",
                     "int16 (int32 scale)", "TFLite Micro Signal library; bit-exact")};
}

OpEntry energy() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kEnergyFields>},
          .check = check_energy,
          .lower = lower_energy,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Mul + ReduceSum + Pad, int64", "int16 -> uint32",
                     "TFLite Micro Signal library; bit-exact in [start_index, end_index), zeros "
                     "elsewhere (the kernel leaves them unwritten)")};
}

OpEntry filter_bank() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kFilterBankFields>},
          .check = check_filter_bank,
          .lower = lower_filter_bank,
          .lowering_bytes = filter_bank_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Mul + ReduceSum with a constant [channels, bins] matrix, int64",
                     "uint32 -> uint64 (int16 weights)",
                     "TFLite Micro Signal library; bit-exact; constant weights")};
}

OpEntry square_root() {
  return {.read = {.min_inputs = -1},
          .check = check_square_root,
          .lower = lower_square_root,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Sqrt (float64) corrected to the integer root + Div (shift), int64",
                     "uint64 -> uint32", "TFLite Micro Signal library; bit-exact below 2^62")};
}

OpEntry spectral_subtraction() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kSpectralFields>},
          .check = check_spectral,
          .lower = lower_spectral,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .state = {.internal = spectral_state},
          .doc = doc("Mul + Add + Div (shifts) + Min/Max, int64; the noise estimate a state pair",
                     "uint32",
                     "TFLite Micro Signal library; bit-exact; the noise estimate the kernel keeps "
                     "is state (kind op_state)")};
}

OpEntry pcan() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kPcanFields>},
          .check = check_pcan,
          .lower = lower_pcan,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Gather (the LUT's segments) + Mul + Div (shifts), int64",
                     "uint32 (int16 LUT)", "TFLite Micro Signal library; bit-exact")};
}

OpEntry filter_bank_log() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kLogFields>},
          .check = check_log,
          .lower = lower_log,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = doc("Gather (log LUT) + Mul + Div (shifts), int64", "uint32 -> int16",
                     "TFLite Micro Signal library; bit-exact")};
}

constexpr SignalOp kOps[] = {
    {"SignalDelay", delay},
    {"SignalEnergy", energy},
    {"SignalFftAutoScale", auto_scale},
    {"SignalFilterBank", filter_bank},
    {"SignalFilterBankLog", filter_bank_log},
    {"SignalFilterBankSpectralSubtraction", spectral_subtraction},
    {"SignalFilterBankSquareRoot", square_root},
    {"SignalFramer", framer},
    {"SignalIrfft", irfft},
    {"SignalOverlapAdd", overlap_add},
    {"SignalPCAN", pcan},
    {"SignalRfft", rfft},
    {"SignalStacker", stacker},
    {"SignalWindow", window},
};

}  // namespace

std::span<const SignalOp> signal_ops() { return kOps; }

}  // namespace lite2onnx::ops::signal
