// TensorFlow Lite Micro's Signal library custom ops (tflite-micro's
// signal/micro/kernels/*.cc over signal/src/*.cc), lowered to ONNX arithmetic
// that computes what the kernels compute, bit for bit: signal.cc (window, FFT
// auto scale, energy, filter bank, its square root, spectral subtraction,
// PCAN, log), signal_fft.cc (RFFT and IRFFT: kissfft v130 as TFLM builds it)
// and signal_stream.cc (delay, framer, overlap-add, stacker: buffers kept
// between invocations). Shared between those files (and the table, for
// registry.cc).
#pragma once

#include <cstdint>
#include <span>

#include "core/ops/node_builder.h"

namespace lite2onnx::ops::signal {

// One Signal op: its custom code and its entry in the custom-op table.
struct SignalOp {
  const char* code;
  OpEntry (*entry)();
};
// Every Signal op converted, in name order.
std::span<const SignalOp> signal_ops();

OpEntry rfft();         // signal_fft.cc
OpEntry irfft();        // signal_fft.cc
OpEntry delay();        // signal_stream.cc
OpEntry framer();       // signal_stream.cc
OpEntry overlap_add();  // signal_stream.cc
OpEntry stacker();      // signal_stream.cc

// int64 arithmetic for the kernels' integer code: every value of the lowered
// graph an int64 tensor; the C types' wrap-around written where the kernel's
// stores narrow (wrap16, wrap32u), C's shifts as exact floor divisions.
class Int {
 public:
  explicit Int(NodeBuilder& b) : b_(b) {}
  NodeBuilder& builder() { return b_; }

  ir::TensorId c(int64_t v);  // an int64 scalar
  ir::TensorId add(ir::TensorId a, ir::TensorId b);
  ir::TensorId sub(ir::TensorId a, ir::TensorId b);
  ir::TensorId mul(ir::TensorId a, ir::TensorId b);
  // With a constant (TensorId is an integer too: no overloads).
  ir::TensorId add_c(ir::TensorId a, int64_t b) { return add(a, c(b)); }
  ir::TensorId mul_c(ir::TensorId a, int64_t b) { return mul(a, c(b)); }
  // a / b for a >= 0, b > 0 (ONNX's integer Div truncates).
  ir::TensorId div_nonneg(ir::TensorId a, ir::TensorId b);
  // x >> bits, arithmetic (floor(x / 2^bits)), for |x| < 2^60.
  ir::TensorId shr(ir::TensorId x, int bits);
  // The same for any int64 x (one more node).
  ir::TensorId shr_wide(ir::TensorId x, int bits);
  // x >> s and x << s with per-element shifts s in [0, 62] (int64 tensors),
  // x >= 0 for shr_var.
  ir::TensorId shr_var(ir::TensorId x, ir::TensorId s);
  ir::TensorId shl_var(ir::TensorId x, ir::TensorId s);
  // 2^s for s in [0, 62].
  ir::TensorId pow2(ir::TensorId s);
  // The value an int16_t / uint32_t / int32_t store keeps (two's complement).
  ir::TensorId wrap16(ir::TensorId x) { return wrap(x, ir::DataType::kInt16); }
  ir::TensorId wrap32(ir::TensorId x) { return wrap(x, ir::DataType::kInt32); }
  ir::TensorId wrap32u(ir::TensorId x) { return wrap(x, ir::DataType::kUInt32); }
  ir::TensorId min(ir::TensorId a, ir::TensorId b);
  ir::TensorId max(ir::TensorId a, ir::TensorId b);
  ir::TensorId clip(ir::TensorId x, int64_t lo, int64_t hi);
  // Where(cond, a, b).
  ir::TensorId where(ir::TensorId cond, ir::TensorId a, ir::TensorId b);
  ir::TensorId less(ir::TensorId a, ir::TensorId b);
  // MostSignificantBit32 as GCC builds it: 32 - clz(x), 32 for x = 0; for
  // 0 <= x < 2^bits (the count of powers of two at or below x).
  ir::TensorId msb(ir::TensorId x, int bits);
  // table[i] for a constant table (i within it).
  ir::TensorId lookup(ir::TensorId i, std::vector<int64_t> table);
  // Any integer tensor to int64, and back to `type`.
  ir::TensorId from(ir::TensorId x) { return b_.cast(x, ir::DataType::kInt64); }
  ir::TensorId to(ir::TensorId x, ir::DataType type) { return b_.cast(x, type); }

 private:
  ir::TensorId wrap(ir::TensorId x, ir::DataType type);
  NodeBuilder& b_;
};

}  // namespace lite2onnx::ops::signal
