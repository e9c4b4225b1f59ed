// The Signal ops that stream samples through buffers kept between
// invocations (tflite-micro signal/micro/kernels/delay.cc, framer.cc,
// overlap_add.cc, stacker.cc; signal/src/circular_buffer.cc, overlap_add.cc).
// Their circular buffers, used as the kernels use them, are queues: the
// content is an op_state pair (zeros first, as Prepare and Reset write them),
// and each invocation is the queue's arithmetic on [state, input]:
//   - SignalDelay: per row, the state's delay_length samples then the input;
//     the first frame_size are the output, the last delay_length the state;
//   - SignalFramer: with prefill, per row, frame_size - frame_step samples
//     of history then the input; frame k is frame_size samples from
//     k * frame_step; the last frame_size - frame_step are the state; every
//     frame is valid. Without prefill the queue fills up over the first
//     frames, which the kernel leaves unwritten (output_valid false; zeros
//     here): its content and length are the state;
//   - SignalOverlapAdd (int16, saturating, and float32): per row, frame by
//     frame, the frame added into a frame_size buffer, its first frame_step
//     values out, the buffer shifted left with zeros in;
//   - SignalStacker: frames of num_channels appended to a queue of up to
//     (left + right + 1) frames whose length varies (a second state piece
//     holds it, and whether the first frame, repeated left_context times,
//     was seen); a full queue is the output and loses stacker_step frames.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "core/ir/shape.h"
#include "core/ops/custom_options.h"
#include "core/ops/families.h"
#include "core/ops/signal.h"

namespace lite2onnx::ops::signal {

using ir::DataType;
using ir::TensorId;
using Kind = CustomField::Kind;

namespace {

constexpr DataType kI64 = DataType::kInt64;
constexpr int64_t kMaxLength = int64_t{1} << 20;
constexpr int64_t kMaxFrames = 256;  // SignalOverlapAdd's frames, unrolled
constexpr int64_t kTensorTypeInt16 = 7, kTensorTypeFloat32 = 0;

int64_t count_of(const ir::Tensor& t) {
  if (!t.has_rank || !ir::static_shape(t)) return -1;
  return ir::element_count(t.shape).value_or(-1);
}

// Rows and innermost length of a static tensor of rank >= 1.
std::pair<int64_t, int64_t> rows_of(const ir::Tensor& t) {
  const int64_t count = count_of(t), inner = t.shape.empty() ? 0 : t.shape.back();
  if (count < 1 || inner < 1) return {0, 0};
  return {count / inner, inner};
}

Check check_io(const ir::Graph& g, const ir::Node& n, DataType type, size_t outputs) {
  if (n.inputs.empty() || own_outputs(n) != outputs)
    return refuse(ReasonCode::kOperands,
                  "1 input and " + std::to_string(outputs) + " outputs expected");
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != type || y.dtype != type)
    return refuse(ReasonCode::kType,
                  std::string("input and output must be ") + ir::to_string(type));
  if (x.rank() < 1 || count_of(x) < 1 || count_of(x) > kMaxLength || count_of(y) < 0 ||
      count_of(y) > kMaxLength)
    return refuse(ReasonCode::kShape,
                  "input and output need static, non-empty shapes of at most 2^20 elements");
  return {};
}

void store(NodeBuilder& b, TensorId out, TensorId v) {
  const ir::Tensor& t = b.graph().tensor(out);
  b.into("Cast", {b.reshape(v, t.shape, kI64)}, {out},
         {{"to", int64_t{ir::onnx_type_code(t.dtype)}}});
}

// The state input as [rows, length] int64, and a writer of its next value.
TensorId state_in(NodeBuilder& b, const ir::Node& n, int64_t rows, int64_t length) {
  return b.reshape(b.cast(op_state_input(n, 0), kI64), {rows, length}, kI64);
}
void state_out_k(NodeBuilder& b, const ir::Node& n, size_t k, TensorId v) {
  const ir::Tensor& t = b.graph().tensor(op_state_output(n, k));
  b.into("Cast", {b.reshape(v, t.shape, kI64)}, {op_state_output(n, k)},
         {{"to", int64_t{ir::onnx_type_code(t.dtype)}}});
}
void state_out(NodeBuilder& b, const ir::Node& n, TensorId v) { state_out_k(b, n, 0, v); }

// ---- SignalDelay ----

const CustomField kDelayFields[] = {
    {"delay_length", Kind::kInt, true, 0, 0, static_cast<double>(kMaxLength)}};

Check check_delay(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_io(g, n, DataType::kInt16, 1)) return c;
  if (count_of(g.tensor(n.outputs[0])) != count_of(g.tensor(n.inputs[0])))
    return refuse(ReasonCode::kShape, "the output must have the input's size");
  const auto [rows, inner] = rows_of(g.tensor(n.inputs[0]));
  if (rows * n.attrs.get_int("delay_length") > kMaxLength)
    return refuse(ReasonCode::kShape, "rows x delay_length beyond 2^20");
  if (n.attrs.get_int("delay_length") > 0 && op_state_input(n, 0) == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the delay line's state was not exposed");
  return {};
}

std::vector<OpState> delay_state(const ir::Graph& g, const ir::Node& n) {
  const int64_t delay = n.attrs.get_int("delay_length");
  const auto [rows, inner] = rows_of(g.tensor(n.inputs[0]));
  if (delay == 0 || rows < 1) return {};
  return {{"delay_line", DataType::kInt16, {rows, delay}}};
}

Status lower_delay(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const int64_t delay = n.attrs.get_int("delay_length");
  const auto [rows, inner] = rows_of(ctx.tensor(n.inputs[0]));
  TensorId x = b.reshape(b.cast(n.inputs[0], kI64), {rows, inner}, kI64);
  if (delay == 0) {
    store(b, n.outputs[0], x);
    return ok_status();
  }
  TensorId queue = b.add("Concat", {state_in(b, n, rows, delay), x}, kI64, {{"axis", int64_t{1}}});
  store(b, n.outputs[0], b.slice(queue, 1, 0, inner, kI64));
  state_out(b, n, b.slice(queue, 1, inner, inner + delay, kI64));
  return ok_status();
}

// ---- SignalFramer ----

const CustomField kFramerFields[] = {
    {"frame_size", Kind::kInt, true, 0, 1, static_cast<double>(kMaxLength)},
    {"frame_step", Kind::kInt, true, 0, 1, static_cast<double>(kMaxLength)},
    {"prefill", Kind::kBool, true, 0, 0, 1},
};

struct Framing {
  int64_t rows, inner, size, step, frames, history;
  Framing(const ir::Graph& g, const ir::Node& n)
      : size(n.attrs.get_int("frame_size")), step(n.attrs.get_int("frame_step")) {
    std::tie(rows, inner) = rows_of(g.tensor(n.inputs[0]));
    frames = inner / step;
    history = size - step;
  }
  // The kernel's circular buffer: frame_step x ceil(frame_size / frame_step).
  int64_t capacity() const { return (size + step - 1) / step * step; }
};

Check check_framer(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_io(g, n, DataType::kInt16, 2)) return c;
  const Framing f(g, n);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const ir::Tensor& valid = g.tensor(n.outputs[1]);
  if (f.inner < f.step || f.inner % f.step != 0)
    return refuse(ReasonCode::kShape, "the innermost dimension must be a multiple of frame_step");
  const bool prefill = n.attrs.get_int("prefill") != 0;
  if (prefill && f.size < f.step)
    return refuse(ReasonCode::kOperands,
                  "frame_size below frame_step with prefill (the kernel's prefill is negative)");
  if (y.rank() != g.tensor(n.inputs[0]).rank() + 1 || count_of(y) != f.rows * f.frames * f.size)
    return refuse(ReasonCode::kShape, "the output must be [..., frames, frame_size]");
  if (valid.dtype != DataType::kBool || valid.rank() != 0)
    return refuse(ReasonCode::kType, "output_valid must be a bool scalar");
  if (f.rows * f.frames * f.size > kMaxLength || f.rows * f.history > kMaxLength)
    return refuse(ReasonCode::kShape, "frames beyond 2^20 samples");
  if ((!prefill || f.history > 0) && op_state_input(n, 0) == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the framer's state was not exposed");
  return {};
}

// With prefill the queue holds frame_size - frame_step samples between
// invocations; without, it fills up first: its content (at most the
// kernel's capacity, frame_step x ceil(frame_size / frame_step)) and length.
std::vector<OpState> framer_state(const ir::Graph& g, const ir::Node& n) {
  const Framing f(g, n);
  if (f.rows < 1 || f.rows * f.capacity() > kMaxLength) return {};
  if (n.attrs.get_int("prefill") == 0)
    return {{"buffer", DataType::kInt16, {f.rows, f.capacity()}}, {"fill", DataType::kInt32, {1}}};
  if (f.history <= 0) return {};
  return {{"history", DataType::kInt16, {f.rows, f.history}}};
}

// Without prefill: c0 samples held, then the input; frame k is valid from
// k0 = max(0, ceil((frame_size - c0) / frame_step) - 1) on and starts at
// (k - k0) * frame_step; each valid frame lets frame_step samples go.
Status lower_framer_filling(NodeBuilder& b, Int& x, const ir::Node& n, const Framing& f) {
  const int64_t cap = f.capacity(), length = cap + f.inner;
  auto gather = [&](TensorId data, TensorId at, int64_t axis) {
    return b.add("Gather", {data, at}, kI64, {{"axis", axis}});
  };
  TensorId buffer = state_in(b, n, f.rows, cap);
  TensorId held = gather(x.from(op_state_input(n, 1)), x.c(0), 0);
  TensorId input = b.reshape(x.from(n.inputs[0]), {f.rows, f.inner}, kI64);
  TensorId both = b.add("Concat", {buffer, input}, kI64, {{"axis", int64_t{1}}});
  std::vector<int64_t> positions;
  for (int64_t p = 0; p < length; ++p) positions.push_back(p);
  TensorId p = b.ints(positions);
  TensorId from_input = x.add(x.sub(p, held), x.c(cap));
  TensorId queue = gather(both, x.clip(x.where(x.less(p, held), p, from_input), 0, length - 1), 1);
  TensorId first =
      x.max(x.sub(x.div_nonneg(x.add_c(x.sub(x.c(f.size), held), f.step - 1), x.c(f.step)), x.c(1)),
            x.c(0));
  std::vector<int64_t> k_of, offset;
  for (int64_t k = 0; k < f.frames; ++k)
    for (int64_t j = 0; j < f.size; ++j) {
      k_of.push_back(k);
      offset.push_back(k * f.step + j);
    }
  const ir::Shape grid{f.frames, f.size};
  TensorId at = x.sub(b.ints(std::move(offset), grid), x.mul_c(first, f.step));
  TensorId frames = gather(queue, x.clip(at, 0, length - 1), 1);  // [rows, frames, size]
  TensorId valid = b.add("Not", {x.less(b.ints(std::move(k_of), grid), first)}, DataType::kBool);
  store(b, n.outputs[0], x.where(valid, frames, x.c(0)));
  b.into("Equal", {first, x.c(0)}, {n.outputs[1]});
  // What stays: the last c0 + frame_step x min(k0, frames) samples.
  TensorId total = x.add_c(held, f.inner);
  TensorId kept = x.add(held, x.mul_c(x.min(first, x.c(f.frames)), f.step));
  std::vector<int64_t> slots(positions.begin(), positions.begin() + cap);
  TensorId q = b.ints(std::move(slots));
  TensorId moved = gather(queue, x.clip(x.add(x.sub(total, kept), q), 0, length - 1), 1);
  state_out_k(b, n, 0, x.where(x.less(q, kept), moved, x.c(0)));
  state_out_k(b, n, 1, b.reshape(kept, {1}, kI64));
  return ok_status();
}

Status lower_framer(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  const Framing f(ctx.graph(), n);
  if (n.attrs.get_int("prefill") == 0) {
    Int x(b);
    return lower_framer_filling(b, x, n, f);
  }
  TensorId queue = b.reshape(b.cast(n.inputs[0], kI64), {f.rows, f.inner}, kI64);
  if (f.history > 0)
    queue =
        b.add("Concat", {state_in(b, n, f.rows, f.history), queue}, kI64, {{"axis", int64_t{1}}});
  std::vector<int64_t> at;
  for (int64_t k = 0; k < f.frames; ++k)
    for (int64_t j = 0; j < f.size; ++j) at.push_back(k * f.step + j);
  TensorId frames = b.add("Gather", {queue, b.ints(std::move(at), ir::Shape{f.frames, f.size})},
                          kI64, {{"axis", int64_t{1}}});
  store(b, n.outputs[0], frames);
  b.into("Cast", {b.ints({1}, ir::Shape{})}, {n.outputs[1]},
         {{"to", int64_t{ir::onnx_type_code(DataType::kBool)}}});
  if (f.history > 0) {
    const int64_t total = f.history + f.inner;
    state_out(b, n, b.slice(queue, 1, total - f.history, total, kI64));
  }
  return ok_status();
}

// The frame index grids (and, without prefill, the queue's positions).
uint64_t framer_bytes(const ir::Graph& g, const ir::Node& n) {
  const Framing f(g, n);
  const auto frames = static_cast<uint64_t>(std::max<int64_t>(f.frames * f.size, 0));
  const auto queue = static_cast<uint64_t>(std::max<int64_t>(f.capacity() + f.inner, 0));
  return 8 * (2 * frames + 2 * queue);
}

// ---- SignalOverlapAdd ----

const CustomField kOverlapFields[] = {
    {"T", Kind::kInt, true, 0, 0, 255},
    {"frame_step", Kind::kInt, true, 0, 1, static_cast<double>(kMaxLength)},
};

DataType overlap_type(const ir::Node& n) {
  return n.attrs.get_int("T") == kTensorTypeFloat32 ? DataType::kFloat32 : DataType::kInt16;
}

Check check_overlap(const ir::Graph& g, const ir::Node& n) {
  const int64_t t = n.attrs.get_int("T");
  if (t != kTensorTypeInt16 && t != kTensorTypeFloat32)
    return refuse(ReasonCode::kType, "T must be int16 or float32");
  if (auto c = check_io(g, n, overlap_type(n), 1)) return c;
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  if (x.rank() < 2 || y.rank() + 1 != x.rank())
    return refuse(ReasonCode::kShape, "input [..., frames, frame_size] and output [..., samples]");
  const int64_t size = x.shape.back(), frames = x.shape[x.rank() - 2];
  const int64_t step = n.attrs.get_int("frame_step");
  if (step > size)
    return refuse(ReasonCode::kOperands,
                  "frame_step beyond frame_size (the kernel moves a "
                  "negative count)");
  if (frames < 1 || frames > kMaxFrames)
    return refuse(ReasonCode::kShape, "1 to 256 frames per row converted");
  if (count_of(y) != count_of(x) / size * step)
    return refuse(ReasonCode::kShape, "the output needs frames x frame_step samples per row");
  if (op_state_input(n, 0) == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the overlap buffer's state was not exposed");
  return {};
}

std::vector<OpState> overlap_state(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  if (x.rank() < 2 || count_of(x) < 1) return {};
  const int64_t size = x.shape.back(), frames = x.shape[x.rank() - 2];
  if (size < 1 || frames < 1) return {};
  return {{"buffer", overlap_type(n), {count_of(x) / (size * frames), size}}};
}

Status lower_overlap(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const ir::Tensor& in = ctx.tensor(n.inputs[0]);
  const int64_t size = in.shape.back(), frames = in.shape[in.rank() - 2];
  const int64_t rows = count_of(in) / (size * frames), step = n.attrs.get_int("frame_step");
  const bool is_float = overlap_type(n) == DataType::kFloat32;
  const DataType work = is_float ? DataType::kFloat32 : kI64;
  auto as_work = [&](TensorId v) { return is_float ? v : b.cast(v, kI64); };
  TensorId frames_in = b.reshape(as_work(n.inputs[0]), {rows, frames, size}, work);
  TensorId buffer = b.reshape(as_work(op_state_input(n, 0)), {rows, size}, work);
  TensorId zeros = is_float ? b.floats(std::vector<float>(static_cast<size_t>(rows * step), 0.f),
                                       ir::Shape{rows, step})
                            : b.ints(std::vector<int64_t>(static_cast<size_t>(rows * step), 0),
                                     ir::Shape{rows, step});
  std::vector<TensorId> outs;
  for (int64_t k = 0; k < frames; ++k) {
    TensorId frame = b.reshape(b.slice(frames_in, 1, k, k + 1, work), {rows, size}, work);
    buffer = b.add("Add", {buffer, frame}, work);
    if (!is_float) buffer = x.clip(buffer, INT16_MIN, INT16_MAX);  // saturating int16
    outs.push_back(b.slice(buffer, 1, 0, step, work));
    buffer = b.add("Concat", {b.slice(buffer, 1, step, size, work), zeros}, work,
                   {{"axis", int64_t{1}}});
  }
  TensorId samples = b.add("Concat", std::move(outs), work, {{"axis", int64_t{1}}});
  const ir::Tensor& out = ctx.tensor(n.outputs[0]);
  const ir::Tensor& next = ctx.tensor(op_state_output(n, 0));
  if (is_float) {
    b.into("Reshape", {samples, b.ints(out.shape)}, {n.outputs[0]});
    b.into("Reshape", {buffer, b.ints(next.shape)}, {op_state_output(n, 0)});
  } else {
    store(b, n.outputs[0], samples);
    state_out(b, n, buffer);
  }
  return ok_status();
}

// ---- SignalStacker ----

const CustomField kStackerFields[] = {
    {"num_channels", Kind::kInt, true, 0, 1, 1 << 16},
    {"stacker_left_context", Kind::kInt, true, 0, 0, 1 << 16},
    {"stacker_right_context", Kind::kInt, true, 0, 0, 1 << 16},
    {"stacker_step", Kind::kInt, true, 0, 1, 1 << 16},
};

struct Stacking {
  int64_t channels, left, right, step, size, step_size;
  explicit Stacking(const ir::Node& n)
      : channels(n.attrs.get_int("num_channels")),
        left(n.attrs.get_int("stacker_left_context")),
        right(n.attrs.get_int("stacker_right_context")),
        step(n.attrs.get_int("stacker_step")),
        size(channels * (left + right + 1)),
        step_size(channels * step) {}
};

Check check_stacker(const ir::Graph& g, const ir::Node& n) {
  if (auto c = check_io(g, n, DataType::kInt16, 2)) return c;
  const Stacking s(n);
  const ir::Tensor& x = g.tensor(n.inputs[0]);
  const ir::Tensor& y = g.tensor(n.outputs[0]);
  const ir::Tensor& valid = g.tensor(n.outputs[1]);
  if (x.rank() != 1 || count_of(x) < s.channels)
    return refuse(ReasonCode::kShape, "the input must be 1-D with num_channels values");
  if (s.size > kMaxLength) return refuse(ReasonCode::kShape, "the stack beyond 2^20 values");
  if (y.rank() != 1 || count_of(y) != s.size)
    return refuse(ReasonCode::kShape,
                  "the output must be 1-D, num_channels x (left + right + 1) values");
  if (valid.dtype != DataType::kBool || valid.rank() != 0)
    return refuse(ReasonCode::kType, "output_valid must be a bool scalar");
  if (s.step > s.left + s.right + 1)
    return refuse(ReasonCode::kOperands,
                  "stacker_step beyond the stack (the kernel discards "
                  "more than its buffer holds)");
  if (op_state_input(n, 1) == ir::kNoTensor)
    return refuse(ReasonCode::kOperands, "the stacker's state was not exposed");
  return {};
}

// The buffer's content (packed at its start) and (its length, whether the
// first frame was seen).
std::vector<OpState> stacker_state(const ir::Graph&, const ir::Node& n) {
  const Stacking s(n);
  if (s.size < 1 || s.size > kMaxLength) return {};
  return {{"buffer", DataType::kInt16, {s.size}}, {"fill", DataType::kInt32, {2}}};
}

// Three index tables of the stack's size.
uint64_t stacker_bytes(const ir::Graph&, const ir::Node& n) {
  return 3 * 8 * static_cast<uint64_t>(std::max<int64_t>(Stacking(n).size, 0));
}

Status lower_stacker(LowerContext& ctx, const ir::Node& n) {
  NodeBuilder b(ctx, n);
  Int x(b);
  const Stacking s(n);
  const DataType kBool = DataType::kBool;
  auto gather = [&](TensorId data, TensorId at) {
    return b.add("Gather", {data, at}, kI64, {{"axis", int64_t{0}}});
  };
  TensorId in = b.slice(b.reshape(x.from(n.inputs[0]), {-1}, kI64), 0, 0, s.channels, kI64);
  TensorId buffer = x.from(op_state_input(n, 0));
  TensorId fill = x.from(op_state_input(n, 1));
  TensorId count = gather(fill, x.c(0)), started = gather(fill, x.c(1));
  std::vector<int64_t> positions, first_at;
  for (int64_t p = 0; p < s.size; ++p) {
    positions.push_back(p);
    first_at.push_back(p % s.channels);
  }
  TensorId p = b.ints(positions);
  TensorId zero = x.c(0);
  // CircularBufferWrite of the frame after the content.
  TensorId offset = x.sub(p, count);
  TensorId from_input = gather(in, x.clip(offset, 0, s.channels - 1));
  TensorId written =
      x.where(x.less(p, count), buffer, x.where(x.less(offset, x.c(s.channels)), from_input, zero));
  // The first frame: CircularBufferExtend repeats it left_context times.
  const int64_t first_count = s.channels * (s.left + 1);
  TensorId repeated =
      x.where(x.less(p, x.c(first_count)), gather(in, b.ints(std::move(first_at))), zero);
  TensorId is_first = b.add("Equal", {started, zero}, kBool);
  written = x.where(is_first, repeated, written);
  count = x.where(is_first, x.c(first_count), x.add_c(count, s.channels));
  // A full stack is the output (else the kernel leaves it unwritten: zeros
  // here), and step_size values leave.
  TensorId valid = b.add("Not", {x.less(count, x.c(s.size))}, kBool);
  store(b, n.outputs[0], x.where(valid, written, zero));
  b.into("Identity", {valid}, {n.outputs[1]});
  std::vector<int64_t> shifted;
  for (int64_t q = 0; q < s.size; ++q) shifted.push_back(std::min(q + s.step_size, s.size - 1));
  TensorId moved = x.where(x.less(p, x.c(s.size - s.step_size)),
                           gather(written, b.ints(std::move(shifted))), zero);
  state_out_k(b, n, 0, x.where(valid, moved, written));
  TensorId left = x.where(valid, x.sub(count, x.c(s.step_size)), count);
  state_out_k(
      b, n, 1,
      b.add("Concat", {b.reshape(left, {1}, kI64), b.ints({1})}, kI64, {{"axis", int64_t{0}}}));
  return ok_status();
}

template <const auto& kFields>
Status read_fields(std::span<const uint8_t> bytes, ir::Attributes& attrs) {
  return read_flex_fields(bytes, kFields, attrs);
}

}  // namespace

OpEntry delay() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kDelayFields>},
          .check = check_delay,
          .lower = lower_delay,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .state = {.internal = delay_state},
          .doc = {.onnx = "Concat + Slice (the delay line a state pair)",
                  .dtypes = "int16",
                  .notes = "TFLite Micro Signal library; exact; the delay line is state (kind "
                           "op_state)"}};
}

OpEntry framer() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kFramerFields>},
          .check = check_framer,
          .lower = lower_framer,
          .lowering_bytes = framer_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .state = {.internal = framer_state},
          .doc = {.onnx = "Concat + Gather (frames) + Slice (the history a state pair); without "
                          "prefill Gather + Where over the queue and its length (state pairs)",
                  .dtypes = "int16 (bool valid)",
                  .notes = "TFLite Micro Signal library; exact; frames the kernel leaves "
                           "unwritten while its buffer fills (no prefill, output_valid false) are "
                           "zeros"}};
}

OpEntry overlap_add() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kOverlapFields>},
          .check = check_overlap,
          .lower = lower_overlap,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .state = {.internal = overlap_state},
          .doc = {.onnx = "per frame Add (+ Clip, int16) + Slice + Concat (the buffer a state "
                          "pair)",
                  .dtypes = "int16, float32",
                  .notes = "TFLite Micro Signal library; exact; up to 256 frames per row; the "
                           "overlap buffer is state (kind op_state)"}};
}

OpEntry stacker() {
  return {.read = {.min_inputs = -1, .custom_options = read_fields<kStackerFields>},
          .check = check_stacker,
          .lower = lower_stacker,
          .lowering_bytes = stacker_bytes,
          .quantization = {.kernel = QuantizedKernel::kNoQuantized},
          .state = {.internal = stacker_state},
          .doc = {.onnx = "Gather + Where (the buffer's content and fill two state pairs)",
                  .dtypes = "int16 (bool valid)",
                  .notes = "TFLite Micro Signal library; exact; the first frame repeated "
                           "left_context times; while the stack is not full the kernel leaves "
                           "the output unwritten: zeros here"}};
}

}  // namespace lite2onnx::ops::signal
