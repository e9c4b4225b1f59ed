// The LSTM family's parts (UNIDIRECTIONAL_SEQUENCE_LSTM,
// BIDIRECTIONAL_SEQUENCE_LSTM, LSTM), shared by its three files:
// lstm_read.cc, the op as TFLite's Prepare reads and checks it; lstm_integer.cc,
// the full-integer kernel's parameters and arithmetic; lstm.cc, the ONNX forms
// of the float and hybrid cells, the lowering and the entries.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/exact.h"
#include "core/ops/recurrent.h"

namespace lite2onnx::ops::recurrent {

// Which op: the cell runs over a sequence (one direction or two) or one step.
enum class LstmKind { kUnidirectional, kOneStep, kBidirectional };

// The full-integer kernel's parameters (PopulateQuantizedLstmParams8x8_16).
struct IntegerLstm {
  std::array<double, 4> gate_scale{};  // pre-activation steps of each gate
  double cell_scale = 1;               // the cell state's (a power of two)
  double hidden_scale = 1;
  int64_t hidden_zp = 0;
  double state_scale = 1;  // output state (int8)
  int64_t state_zp = 0;
  double output_scale = 1;  // the output tensor
  int64_t output_zp = 0;
  int64_t cell_clip = 0;  // in cell steps, 0: none
  int64_t proj_clip = 0;  // in output state steps, 0: none
};

// One cell (a direction) as the op describes it.
struct Cell {
  bool cifg = false, peephole = false, layer_norm = false, projection = false, diag = false;
  // Per gate i, f, c, o (i absent with CIFG): kNoTensor where absent.
  std::array<ir::TensorId, 4> w{}, r{}, b{}, ln{}, aux_w{};
  std::array<ir::TensorId, 3> p{};
  ir::TensorId proj_w = ir::kNoTensor, proj_b = ir::kNoTensor, h = ir::kNoTensor, c = ir::kNoTensor;
  int64_t n_input = 0, n_cell = 0, n_output = 0, n_aux = 0;
  std::optional<IntegerLstm> integer;
};

// Everything about the op that the converter reads, checked.
struct Lstm {
  std::vector<Cell> cells;  // forward, then backward
  bool time_major = true, sequence = true, merge = false;
  int64_t batch = 0, steps = 1, n_input = 0;
  ir::TensorId aux = ir::kNoTensor;
  bool bw_reads_aux = false;  // non-stacking bidirectional: aux is the backward input
};

// ---- reading (lstm_read.cc) ----

// Reads the op as TFLite's Prepare does, checking it; nothing or the problem.
Check read_lstm(const ir::Graph& g, const ir::Node& n, LstmKind kind, Lstm& l);
// The real values of a small constant (bias, peephole, layer norm
// coefficients): float as it is; integers times `scale` (the scale TFLite's
// integer kernel reads them with), or their own scale when `scale` is 0.
std::optional<std::vector<float>> real_values(const ir::Tensor& t, double scale = 0);
// The basic kernel's inputs as TFLite's basic::Prepare checks them.
Check check_basic_lstm(const ir::Graph& g, const ir::Node& n);
Check check_sequence_lstm(const ir::Graph& g, const ir::Node& n);
Check check_bidi_lstm(const ir::Graph& g, const ir::Node& n);
Check check_lstm(const ir::Graph& g, const ir::Node& n);
std::optional<std::vector<ir::Shape>> infer_sequence_lstm(const ir::Graph& g, const ir::Node& n);
std::optional<std::vector<ir::Shape>> infer_bidi_lstm(const ir::Graph& g, const ir::Node& n);
std::optional<std::vector<ir::Shape>> infer_lstm(const ir::Graph& g, const ir::Node& n);
void read_sequence_lstm_options(const tflite::Operator& op, ir::Attributes& a);
void read_bidi_lstm_options(const tflite::Operator& op, ir::Attributes& a);
void read_one_step_lstm_options(const tflite::Operator& op, ir::Attributes& a);

// ---- the cell's pieces every kernel uses (lstm.cc) ----

// The gates of a cell present in this order: i (unless CIFG), f, c, o.
std::vector<int> gates(const Cell& c);
// A constant vector of `v`.
ir::TensorId float_vector(Writer& w, const std::vector<float>& v, const std::string& suffix);
// Layer normalization of one gate, as the float kernel computes it:
// (x - mean) / sqrt(variance + epsilon) * coefficients + bias.
ir::TensorId layer_norm(Writer& w, ir::TensorId x, ir::TensorId coef, ir::TensorId bias,
                        float epsilon, const std::string& s);

// ---- the full-integer kernel (lstm_integer.cc) ----
// Computed in float on the grids the integer kernel rounds to: gate
// pre-activations in their 16-bit steps, gates in Q0.15, the cell state on its
// power-of-two scale, the hidden value in 8-bit steps. `s`: the names' prefix.

// The kernel's scales, from the tensors and the op's intermediates, into
// c.integer; nothing or the problem.
Check make_integer(const ir::Graph& g, const ir::Node& n, Cell& c);
// One over each gate's step, per column of the stacked gates.
std::vector<float> inverse_gate_steps(const Cell& c);
// Every step's input projection, in pre-activation steps.
ir::TensorId integer_input_steps(Writer& w, const Cell& c, ir::TensorId projection,
                                 const std::string& prefix);
// The stacked gates' pre-activations of one step: the input part (already in
// steps) plus the recurrent part, rounded on its own, with saturation.
ir::TensorId integer_pre_activation(Writer& w, ir::TensorId input, ir::TensorId h,
                                    ir::TensorId recurrent_t, ir::TensorId inverse_steps,
                                    const std::string& s);
// The peephole term cell * weights as the kernel's
// VectorBatchVectorCwiseProductAccumulate call computes it: with n_output
// where n_cell is meant, so with a projection it walks the flat cells of the
// `together` batches of one call n_output at a time (element j < together *
// n_output takes weight j mod n_output) and adds nothing to the rest (0 here).
ir::TensorId integer_peephole_product(Writer& w, ir::TensorId cell,
                                      const std::vector<float>& weights, int64_t batch,
                                      int64_t together, int64_t units, int64_t outputs,
                                      const std::string& s);
// Gate k's pre-activation `x` plus its peephole term `v` (a real value).
ir::TensorId integer_with_peephole(Writer& w, const IntegerLstm& q, int k, ir::TensorId x,
                                   ir::TensorId v, const std::string& s);
// Gate k from its pre-activation steps (layer normalized first when the cell
// has it), in Q0.15.
ir::TensorId integer_gate(Writer& w, const IntegerLstm& q, int k, ir::TensorId x,
                          bool layer_norm_on, ir::TensorId coef, ir::TensorId bias, bool sigmoid,
                          const std::string& s);
// The new cell state: f * c + i * g, each on the cell's grid, clipped.
ir::TensorId integer_cell(Writer& w, const IntegerLstm& q, ir::TensorId f, ir::TensorId c,
                          ir::TensorId i, ir::TensorId g, const std::string& s);
// The output state and the output of one step, from gate o and the new cell
// state (through the projection when the cell has one).
struct IntegerHidden {
  ir::TensorId state, output;
};
IntegerHidden integer_hidden(Writer& w, const IntegerLstm& q, ir::TensorId o, ir::TensorId cell,
                             ir::TensorId projection_t, ir::TensorId projection_bias,
                             const std::string& s);

// ---- --quantization exact (exact_lstm.cc, exact_lstm_norm.cc) ----
// The full-integer kernel (8x8_16) in ONNX integer arithmetic, bit for bit;
// a hybrid cell as TFLite's hybrid kernel (below).
ExactForm sequence_lstm_exact();
ExactForm one_step_lstm_exact();
ExactForm bidi_lstm_exact();

// ---- the hybrid kernel (lstm.cc; its products: recurrent.h, HybridProduct) ----
Status lower_hybrid_lstm(LowerContext& ctx, const ir::Node& n, LstmKind kind);
// The hybrid cells it covers: the weights the kernel multiplies int8 of one
// scale and zero point 0, peephole weights int8 too, float biases.
Check check_hybrid_lstm(const ir::Graph& g, const ir::Node& n, LstmKind kind);

// One gate's layer normalization as the integer kernel's ApplyLayerNorm
// computes it: the coefficients (int16) and the gate's bias (int32), the
// coefficients' scale, the variance guard of Prepare.
struct IntegerLayerNorm {
  std::vector<int64_t> weights, bias;
  qmath::Multiplier scale;
  int64_t variance_guard = 1;
};
// The normalized gate [batch, units] (int16 values) from its pre-activation.
exact::Value integer_layer_norm(exact::Writer& w, const exact::Value& gate,
                                const IntegerLayerNorm& p, int64_t units);

}  // namespace lite2onnx::ops::recurrent
