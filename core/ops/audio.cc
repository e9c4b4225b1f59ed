// TFLite's audio custom ops, which its builtin op resolver registers beside
// TFLite_Detection_PostProcess (speech-command models read raw audio with
// them): AudioSpectrogram and Mfcc. Semantics from TFLite's kernels
// (kernels/audio_spectrogram.cc, kernels/mfcc.cc and internal/spectrogram.cc,
// mfcc.cc, mfcc_mel_filterbank.cc, mfcc_dct.cc). Both are Terminate: they work
// on TFLite's axes.
//
// AudioSpectrogram: frames of `window_size` samples every `stride` samples,
// times a periodic Hann window, zero-padded to the next power of two, real DFT,
// squared magnitude (or magnitude) of the 1 + fft/2 bins: a Gather of the
// frames and two MatMuls with cosine and sine matrices that carry the window.
//
// Mfcc: the mel filterbank depends on the sample rate, a run-time input (the
// speech-command models feed it as a graph input), so the bank is computed in
// the graph, in float64 as TFLite computes it, from the rate: bin frequencies,
// their mel values, the channel each bin falls in (a count of the centre
// frequencies below it) and its triangular weight. Then the kernel's sqrt of
// the squared spectrum, the weighted sums (a MatMul with the bank), log with
// TFLite's floor of 1e-12, and the DCT (a MatMul with a constant matrix).
#include <bit>
#include <cmath>
#include <numbers>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/custom_options.h"
#include "core/ops/dft_angles.h"
#include "core/ops/families.h"
#include "core/ops/node_builder.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::audio {
namespace {

using ir::DataType;
using ir::Shape;
using ir::TensorId;
using Kind = CustomField::Kind;

// The DFT matrices are built in memory: 2 x window x (fft/2 + 1) floats.
constexpr int64_t kMaxFftLength = 4096;
constexpr double kMaxStride = 1 << 24;
constexpr double kMaxChannels = 4096;  // mel channels and DCT coefficients
constexpr double kMaxFrequency = 1e9;
// TFLite's mel filterbank floor before the log (internal/mfcc.cc).
constexpr double kFilterbankFloor = 1e-12;

const CustomField kSpectrogramFields[] = {
    {"window_size", Kind::kInt, true, 0, 2, kMaxFftLength},
    {"stride", Kind::kInt, true, 0, 1, kMaxStride},
    {"magnitude_squared", Kind::kBool, false, 0, 0, 1},
};

// TFLite reads the frequency limits with AsInt64 (truncating) into floats.
const CustomField kMfccFields[] = {
    {"upper_frequency_limit", Kind::kFloat, false, 4000, 0, kMaxFrequency},
    {"lower_frequency_limit", Kind::kFloat, false, 20, 0, kMaxFrequency},
    {"filterbank_channel_count", Kind::kInt, false, 40, 1, kMaxChannels},
    {"dct_coefficient_count", Kind::kInt, false, 13, 1, kMaxChannels},
};

int64_t fft_length(int64_t window) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(window)));
}

// Frames of a signal of `samples` samples: 0 when it is shorter than the window.
int64_t frame_count(int64_t samples, int64_t window, int64_t stride) {
  return samples < window ? 0 : 1 + (samples - window) / stride;
}

// ---- AudioSpectrogram ----

Check check_spectrogram(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.dtype != DataType::kFloat32 || g.tensor(n.outputs[0]).dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "input and output must be float32");
  if (!x.has_rank || x.rank() != 2 || !ir::static_shape(x))
    return refuse(ReasonCode::kShape, "input must be [samples, channels] with static dimensions");
  if (frame_count(x.shape[0], n.attrs.get_int("window_size"), n.attrs.get_int("stride")) < 1)
    return refuse(ReasonCode::kShape, "fewer samples than window_size: TFLite's output is empty");
  return {};
}

InferredShapes infer_spectrogram(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank || x.rank() != 2 || !ir::static_shape(x) || n.outputs.size() != 1)
    return std::nullopt;
  const int64_t window = n.attrs.get_int("window_size");
  return std::vector<Shape>{{x.shape[1], frame_count(x.shape[0], window, n.attrs.get_int("stride")),
                             fft_length(window) / 2 + 1}};
}

// The DFT matrices and the frame indices the lowering creates (a checked op:
// static [samples, channels] input).
uint64_t spectrogram_bytes(const ir::Graph& g, const ir::Node& n) {
  const int64_t samples = g.tensor(n.inputs[0]).shape[0];
  const int64_t window = n.attrs.get_int("window_size"), stride = n.attrs.get_int("stride");
  const int64_t bins = fft_length(window) / 2 + 1;
  const int64_t frames = frame_count(samples, window, stride);
  return 2 * static_cast<uint64_t>(window * bins) * sizeof(float) +
         static_cast<uint64_t>(frames * window) * sizeof(int64_t);
}

Status lower_spectrogram(LowerContext& ctx, const ir::Node& n) {
  const ir::Tensor& x = ctx.tensor(n.inputs[0]);
  const int64_t samples = x.shape[0], channels = x.shape[1];
  const int64_t window = n.attrs.get_int("window_size"), stride = n.attrs.get_int("stride");
  const int64_t fft = fft_length(window), bins = fft / 2 + 1;
  const int64_t frames = frame_count(samples, window, stride);
  // Checked before they exist (the lowering stage added every op's up already).
  if (!ctx.graph().created().admit(spectrogram_bytes(ctx.graph(), n), n.name + "/dft"))
    return ok_status();  // the driver reports the limit after this op
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32;
  // [samples, channels] -> [channels, samples]: the kernel's per-channel signals.
  TensorId signals =
      channels == 1 ? b.reshape(n.inputs[0], {1, samples}, f)
                    : b.add("Transpose", {n.inputs[0]}, f, {{"perm", std::vector<int64_t>{1, 0}}});
  std::vector<int64_t> index(static_cast<size_t>(frames * window));
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t j = 0; j < window; ++j)
      index[static_cast<size_t>(t * window + j)] = t * stride + j;
  TensorId framed = b.add("Gather", {signals, b.ints(std::move(index), Shape{frames, window})}, f,
                          {{"axis", int64_t{1}}});
  // Periodic Hann window folded into the DFT: the zero padding to `fft`
  // contributes nothing, so only `window` rows are needed.
  std::vector<float> cos_m(static_cast<size_t>(window * bins)), sin_m(cos_m.size());
  const DftAngles angles(fft);
  for (int64_t j = 0; j < window; ++j) {
    const double hann = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(j) /
                                             static_cast<double>(window));
    for (int64_t k = 0; k < bins; ++k) {
      cos_m[static_cast<size_t>(j * bins + k)] = static_cast<float>(hann * angles.cos(j, k));
      sin_m[static_cast<size_t>(j * bins + k)] = static_cast<float>(hann * angles.sin(j, k));
    }
  }
  TensorId re = b.add("MatMul", {framed, b.floats(std::move(cos_m), Shape{window, bins})}, f);
  TensorId im = b.add("MatMul", {framed, b.floats(std::move(sin_m), Shape{window, bins})}, f);
  TensorId power = b.add("Add", {b.add("Mul", {re, re}, f), b.add("Mul", {im, im}, f)}, f);
  if (n.attrs.get_int("magnitude_squared"))
    b.into("Identity", {power}, {n.outputs[0]});
  else
    b.into("Sqrt", {power}, {n.outputs[0]});
  return ok_status();
}

// ---- Mfcc ----

// TFLite's limits, truncated as its kernel reads them.
struct MfccParams {
  double lower, upper;
  int64_t channels, coefficients;
  explicit MfccParams(const ir::Node& n)
      : lower(std::trunc(n.attrs.get_float("lower_frequency_limit"))),
        upper(std::trunc(n.attrs.get_float("upper_frequency_limit"))),
        channels(n.attrs.get_int("filterbank_channel_count")),
        coefficients(n.attrs.get_int("dct_coefficient_count")) {}
};

double freq_to_mel(double freq) { return 1127.0 * std::log1p(freq / 700.0); }

Check check_mfcc(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& rate = g.tensor(n.inputs[1]);
  if (x.dtype != DataType::kFloat32 || g.tensor(n.outputs[0]).dtype != DataType::kFloat32)
    return refuse(ReasonCode::kType, "spectrogram and output must be float32");
  if (!x.has_rank || x.rank() != 3 || x.shape[2] < 2)
    return refuse(ReasonCode::kShape,
                  "spectrogram must be [channels, frames, bins] with at least 2 static bins");
  if (rate.dtype != DataType::kInt32 || !rate.has_rank ||
      ir::element_count(rate.shape).value_or(0) != 1)
    return refuse(ReasonCode::kType, "sample rate must be one int32");
  // TFLite's filterbank or DCT refuses to initialise; its Eval then fails.
  const MfccParams p(n);
  if (p.upper <= p.lower)
    return refuse(
        ReasonCode::kOperands,
        "upper_frequency_limit must exceed lower_frequency_limit (TFLite fails at run time)");
  if (p.coefficients > p.channels)
    return refuse(
        ReasonCode::kOperands,
        "dct_coefficient_count must not exceed filterbank_channel_count (TFLite fails at run "
        "time)");
  return {};
}

InferredShapes infer_mfcc(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (!x.has_rank || x.rank() != 3 || n.outputs.size() != 1) return std::nullopt;
  return std::vector<Shape>{{x.shape[0], x.shape[1], n.attrs.get_int("dct_coefficient_count")}};
}

Status lower_mfcc(LowerContext& ctx, const ir::Node& n) {
  const int64_t bins = ctx.tensor(n.inputs[0]).shape[2];
  const MfccParams p(n);
  const int64_t channels = p.channels;
  NodeBuilder b(ctx, n);
  const DataType f = DataType::kFloat32, d = DataType::kFloat64, i64 = DataType::kInt64;

  // Centre frequencies in mel (constants: they do not depend on the rate):
  // hi[c] = centre c, lo[c] = centre c - 1 (the lower limit for c = 0).
  const double mel_lo = freq_to_mel(p.lower), mel_hi = freq_to_mel(p.upper);
  const double spacing = (mel_hi - mel_lo) / static_cast<double>(channels + 1);
  std::vector<double> centres(static_cast<size_t>(channels + 1));
  for (int64_t c = 0; c <= channels; ++c)
    centres[static_cast<size_t>(c)] = mel_lo + spacing * static_cast<double>(c + 1);
  std::vector<double> below(centres.begin(), centres.end() - 1);
  std::vector<double> lower_edges(centres.begin(), centres.end() - 1);
  lower_edges.insert(lower_edges.begin(), mel_lo);

  // Per bin, from the run-time rate: hz = rate / 2 / (bins - 1), mel of i * hz.
  TensorId rate = b.cast(b.reshape(n.inputs[1], {1}, DataType::kInt32), d);
  TensorId hz = b.add("Mul", {rate, b.doubles({0.5 / static_cast<double>(bins - 1)})}, d);
  std::vector<double> index(static_cast<size_t>(bins));
  for (int64_t i = 0; i < bins; ++i) index[static_cast<size_t>(i)] = static_cast<double>(i);
  TensorId bin = b.doubles(std::move(index));
  TensorId ratio = b.add("Div", {b.add("Mul", {bin, hz}, d), b.doubles({700.0})}, d);
  TensorId mel = b.add(
      "Mul", {b.add("Log", {b.add("Add", {ratio, b.doubles({1.0})}, d)}, d), b.doubles({1127.0})},
      d);
  // Bins outside [int(1.5 + lower / hz), int(upper / hz)] are unused.
  TensorId first =
      b.add("Floor",
            {b.add("Add", {b.add("Div", {b.doubles({p.lower}), hz}, d), b.doubles({1.5})}, d)}, d);
  TensorId last = b.add("Floor", {b.add("Div", {b.doubles({p.upper}), hz}, d)}, d);
  TensorId used = b.add("And",
                        {b.add("GreaterOrEqual", {bin, first}, DataType::kBool),
                         b.add("LessOrEqual", {bin, last}, DataType::kBool)},
                        DataType::kBool);
  // The channel whose right slope a bin is on: the centres below its mel, - 1.
  TensorId above = b.add(
      "Less",
      {b.doubles(std::move(below), Shape{1, channels}), b.add("Unsqueeze", {mel, b.ints({1})}, d)},
      DataType::kBool);
  TensorId count =
      b.add("ReduceSum", {b.cast(above, i64), b.ints({1})}, i64, {{"keepdims", int64_t{0}}});
  TensorId hi = b.add("Gather", {b.doubles(std::move(centres)), count}, d);
  TensorId lo = b.add("Gather", {b.doubles(std::move(lower_edges)), count}, d);
  TensorId weight = b.add("Div", {b.add("Sub", {hi, mel}, d), b.add("Sub", {hi, lo}, d)}, d);
  // bank[i, c] = weight (c = count - 1) + (1 - weight) (c = count), used bins only.
  std::vector<int64_t> channel_ids(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) channel_ids[static_cast<size_t>(c)] = c;
  TensorId ids = b.ints(std::move(channel_ids), Shape{1, channels});
  TensorId count_col = b.add("Unsqueeze", {count, b.ints({1})}, i64);
  TensorId weight_col = b.add("Unsqueeze", {weight, b.ints({1})}, d);
  TensorId right = b.add(
      "Mul",
      {b.cast(b.add("Equal", {b.add("Sub", {count_col, b.ints({1})}, i64), ids}, DataType::kBool),
              d),
       weight_col},
      d);
  TensorId left = b.add("Mul",
                        {b.cast(b.add("Equal", {count_col, ids}, DataType::kBool), d),
                         b.add("Sub", {b.doubles({1.0}), weight_col}, d)},
                        d);
  TensorId bank = b.add("Mul",
                        {b.add("Add", {right, left}, d),
                         b.cast(b.add("Unsqueeze", {used, b.ints({1})}, DataType::kBool), d)},
                        d);
  // The kernel's filterbank: sqrt of the squared spectrum, weighted sums, log.
  TensorId mel_spectrum = b.add("MatMul", {b.add("Sqrt", {n.inputs[0]}, f), b.cast(bank, f)}, f);
  TensorId log_mel =
      b.add("Log", {b.add("Max", {mel_spectrum, b.scalar(f, kFilterbankFloor)}, f)}, f);
  // DCT-II with TFLite's scale, the first `coefficients` rows, transposed.
  const double norm = std::sqrt(2.0 / static_cast<double>(channels));
  std::vector<float> dct(static_cast<size_t>(channels * p.coefficients));
  for (int64_t j = 0; j < channels; ++j)
    for (int64_t k = 0; k < p.coefficients; ++k)
      dct[static_cast<size_t>(j * p.coefficients + k)] = static_cast<float>(
          norm * std::cos(static_cast<double>(k) * std::numbers::pi /
                          static_cast<double>(channels) * (static_cast<double>(j) + 0.5)));
  TensorId coefficients =
      b.add("MatMul", {log_mel, b.floats(std::move(dct), Shape{channels, p.coefficients})}, f);
  // When upper / hz reaches past the last bin, TFLite's filterbank returns
  // nothing and the DCT of nothing is zeros.
  TensorId in_range =
      b.add("Less", {last, b.doubles({static_cast<double>(bins)})}, DataType::kBool);
  b.into("Where", {in_range, coefficients, b.scalar(f, 0.0)}, {n.outputs[0]});
  return ok_status();
}

Status read_spectrogram_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kSpectrogramFields, attrs);
}

Status read_mfcc_options(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kMfccFields, attrs);
}

}  // namespace

OpEntry audio_spectrogram() {
  return {.read = {.custom_options = read_spectrogram_options},
          .infer_shapes = infer_spectrogram,
          .check = check_spectrogram,
          .lower = lower_spectrogram,
          .lowering_bytes = spectrogram_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "Gather (frames) + MatMul x2 (windowed cosine, sine) + Mul + Add (+ "
                          "Sqrt)",
                  .notes = "TFLite's own custom op: periodic Hann window, DFT of the next power "
                           "of two, [channels, frames, bins]; computed in float32 (TFLite: "
                           "float64)"}};
}

OpEntry mfcc() {
  return {.read = {.min_inputs = 2, .custom_options = read_mfcc_options},
          .infer_shapes = infer_mfcc,
          .check = check_mfcc,
          .lower = lower_mfcc,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .doc = {.onnx = "mel filterbank built in float64 from the run-time sample rate + Sqrt + "
                          "MatMul + Log + MatMul (DCT)",
                  .dtypes = "float32 (int32 sample rate)",
                  .notes = "TFLite's own custom op; the sample rate may be a run-time input; a "
                           "rate that puts upper_frequency_limit past the last bin gives zeros, as "
                           "TFLite does"}};
}

}  // namespace lite2onnx::ops::audio
