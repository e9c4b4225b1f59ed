// Hostile TFLite models too large for JSON or built from shared FlatBuffer
// tables: valid FlatBuffers (they pass the schema verifier) whose size, fan-out
// or amplification would make a careless converter take minutes or gigabytes.
// Used by the hostile tests (clean error or correct result, bounded time and
// memory) and by the benchmark (large graphs must convert in linear time).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace lite2onnx::testing {

struct HostileModel {
  std::string name;
  std::string what;  // the attack, in a few words
  // Builds the model's bytes (on demand: some are tens of MB).
  std::function<std::vector<std::byte>()> build;
  std::vector<std::string> args;  // extra converter arguments
  // Beyond a limit: the conversion must end in a resource_limit error (else
  // it must convert).
  bool refused = false;
};

// input -> `ops` x ABS -> output: a deep graph (every tensor named `name`
// when one is given: duplicate names).
std::vector<std::byte> abs_chain(int ops, const std::string& name = "");
// input -> `ops` x CONV_2D 1x1, all reading one weight and one bias.
std::vector<std::byte> conv_chain(int ops);
// The same with int8 tensors (per-tensor scales): the QDQ path.
std::vector<std::byte> quantized_conv_chain(int ops);
// input -> `readers` x ABS, each reading the input -> one CONCATENATION of all
// of them -> output: one tensor with many readers, one op with many inputs.
std::vector<std::byte> fan_out_concat(int readers);
// `inputs` graph inputs -> one CONCATENATION -> output.
std::vector<std::byte> many_graph_inputs(int inputs);
// input -> `outputs` x ABS, each a graph output.
std::vector<std::byte> many_graph_outputs(int outputs);
// `ops` CONCATENATIONs, each reading the input `width` times through one shared
// inputs vector: ops x width reads from a model of about 30 x ops + 4 x width
// bytes.
std::vector<std::byte> shared_input_vectors(int ops, int width);
// `ops` TILEs of a 1-element constant, each to `elements` elements, added up:
// constant folding would materialize ops x elements values.
std::vector<std::byte> tiled_constants(int ops, int elements);
// `ops` FILLs of `elements` elements, added up: constant folding makes
// ops x elements floats.
std::vector<std::byte> filled_constants(int ops, int elements);
// `pairs` RFFT2D -> COMPLEX_ABS pairs with fft_length `fft`: the lowering's
// cosine and sine matrices take 2 x fft x (fft/2 + 1) floats each.
std::vector<std::byte> spectral_pairs(int pairs, int fft);
// One constant of `elements` floats read by `readers` ADDs with an NHWC
// activation: each reader may want the constant in another layout.
std::vector<std::byte> shared_constant_readers(int readers, int elements);

// The set the hostile tests run: each must give a clean error or a correct
// result within the test's time and memory bounds.
std::vector<HostileModel> hostile_models();

}  // namespace lite2onnx::testing
