// What the hostile tests share (hostile_*_test.cc, one file per stage a
// hostile model attacks: the reader, the graph's validation, the shape
// inference, the ops' checks, the limits): models written as JSON, and
// conversions run in forked children, so that a crash, a sanitizer report or
// an exception fails the test that found it (naming the input) instead of
// ending the test binary.
#pragma once

#include <flatbuffers/flatbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/convert.h"
#include "model_builder.h"

namespace lite2onnx::hostile {

using testing::corpus_dir;
using testing::op_counts;
using testing::op_model;
using testing::op_model_json;

using ::testing::AnyOf;
using ::testing::Contains;
using testing::f32_bytes;
using ::testing::HasSubstr;
using testing::i32_bytes;
using testing::i64_bytes;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kSlowdown = 4;  // CPU bounds are larger under ASan
#else
inline constexpr double kSlowdown = 1;
#endif

// ---- model JSON -------------------------------------------------------------

inline std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Builds a one-subgraph model as JSON against core/tflite/schema.fbs. Indices
// returned by the add functions are the ones the model uses.
class ModelJson {
 public:
  ModelJson() { buffers_.push_back("{}"); }  // buffer 0: the empty sentinel

  // `name` is the BuiltinOperator name ("" to write `code` as a number);
  // deprecated_builtin_code gets min(code, 127), as TFLite's writers do.
  int builtin(const std::string& name, int code) {
    std::string bc = name.empty() ? std::to_string(code) : "\"" + name + "\"";
    codes_.push_back("{ \"deprecated_builtin_code\": " + std::to_string(std::min(code, 127)) +
                     ", \"builtin_code\": " + bc + " }");
    return static_cast<int>(codes_.size()) - 1;
  }
  int raw_code(const std::string& json) {
    codes_.push_back(json);
    return static_cast<int>(codes_.size()) - 1;
  }
  int buffer(const std::string& data) {
    buffers_.push_back(data.empty() ? "{}" : "{ \"data\": " + data + " }");
    return static_cast<int>(buffers_.size()) - 1;
  }
  int raw_buffer(const std::string& json) {
    buffers_.push_back(json);
    return static_cast<int>(buffers_.size()) - 1;
  }
  int tensor(const std::string& name, const std::vector<int64_t>& shape,
             const std::string& type = "FLOAT32", int buffer = 0, const std::string& extra = "") {
    tensors_.push_back("{ \"name\": \"" + name + "\", \"shape\": " + ints(shape) +
                       ", \"type\": \"" + type + "\", \"buffer\": " + std::to_string(buffer) +
                       (extra.empty() ? "" : ", " + extra) + " }");
    return static_cast<int>(tensors_.size()) - 1;
  }
  int raw_tensor(const std::string& json) {
    tensors_.push_back(json);
    return static_cast<int>(tensors_.size()) - 1;
  }
  int f32(const std::string& name, const std::vector<int64_t>& shape,
          const std::vector<float>& values) {
    return tensor(name, shape, "FLOAT32", buffer(f32_bytes(values)));
  }
  int i32(const std::string& name, const std::vector<int64_t>& shape,
          const std::vector<int32_t>& values) {
    return tensor(name, shape, "INT32", buffer(i32_bytes(values)));
  }
  void op(int code, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
          const std::string& options_type = "", const std::string& options = "{}") {
    ops_.push_back("{ \"opcode_index\": " + std::to_string(code) + ", \"inputs\": " + ints(in) +
                   ", \"outputs\": " + ints(out) +
                   (options_type.empty() ? ""
                                         : ", \"builtin_options_type\": \"" + options_type +
                                               "\", \"builtin_options\": " + options) +
                   " }");
  }
  void io(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    inputs_ = in;
    outputs_ = out;
  }

  std::string json() const {
    auto list = [](const std::vector<std::string>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ",\n  " : "\n  ") + v[i];
      return s + "]";
    };
    return "{ \"version\": 3, \"description\": \"hostile test model\",\n"
           "\"operator_codes\": " +
           list(codes_) +
           ",\n"
           "\"subgraphs\": [ { \"name\": \"main\", \"tensors\": " +
           list(tensors_) + ", \"inputs\": " + ints(inputs_) + ", \"outputs\": " + ints(outputs_) +
           ", \"operators\": " + list(ops_) +
           " } ],\n"
           "\"buffers\": " +
           list(buffers_) + " }";
  }
  Bytes bytes() const { return tflite_from_json(json()); }

 private:
  std::vector<std::string> codes_, tensors_, ops_, buffers_;
  std::vector<int64_t> inputs_, outputs_;
};

// Conv2DOptions of a plain stride-1 convolution (the schema's defaults are 0).
inline constexpr const char* kStride1 = R"({ "padding": "SAME", "stride_h": 1, "stride_w": 1 })";

// ABS: input [1, 4] -> output [1, 4]; a valid base most cases bend.
ModelJson abs_model(int* abs_code = nullptr);
// A small model touching many converters (conv, add, transpose, strided
// slice, reshape, split, concatenation, softmax) with tiny constants: the
// base of the bit-flip loop.
ModelJson many_ops_model();
// CONV_2D 1x1, SAME, [1, 5, 5, 2] -> [1, out, out, 1].
Bytes conv_model(int stride_h, int stride_w, int dilation = 1, int64_t out = 5);
// The bytes a FlatBufferBuilder finished.
Bytes finished(flatbuffers::FlatBufferBuilder& fbb);

// ---- running the converter ----

// In-process conversion, for models that are valid.
Result<std::string> run(std::span<const std::byte> bytes, const ConvertOptions& o = {});
// A conversion (and inspect()) in a forked child: how it died, or its outcome.
struct Outcome {
  std::string died;  // how the child died; empty if it did not
  bool ok = false;
  Error error;
};
Outcome convert_isolated(std::span<const std::byte> bytes, const ConvertOptions& o = {});
// Converts, expecting a failure with `code`; returns the error for more checks.
Error expect_error(const Bytes& bytes, ErrorCode code, const ConvertOptions& o = {});
// inspect() goes through the same reader and must agree.
Error expect_inspect_error(const Bytes& bytes, ErrorCode code, const Limits& limits = {});
// Errors about op 0: kUnsupported with the reason in the list, or
// kInvalidModel naming the op; either way the op and the problem are named.
void expect_op_error(const Bytes& b, const std::string& op, const std::string& problem);
// A model that is odd but well-formed: converted, or rejected with an error
// that blames the model, never the converter.
void expect_converts_or_rejects(const Bytes& b);
// Every graph output's ONNX dims after an in-process conversion (empty on failure).
using Dims = std::vector<std::vector<int64_t>>;
Dims output_dims(const Bytes& bytes, Diagnostics& d);

// Runs check(i) for the cases i = 0 .. n-1 in forked children (hostile.cc);
// returns the number of cases run.
size_t run_cases(size_t n, const std::function<std::string(size_t)>& check,
                 const std::function<std::string(size_t)>& label,
                 std::vector<std::string>* failures);
// Reports the failures of a loop (the first few in full, then a count).
void report(const std::vector<std::string>& failures, const std::string& what);
// The outcome of a damaged model: an error with a message, or a valid
// conversion. Returns what went wrong, or "".
std::string damaged_model_check(std::span<const std::byte> bytes);
// Runs `body` in a forked child and returns how much its peak RSS grew, in
// MiB (or -1 if the child died).
long rss_growth_mib(const std::function<void()>& body);

// The pipe protocol between a child and the test (records of strings).
void put(int fd, const std::string& s);
std::string read_all(int fd);
std::vector<std::string> records(const std::string& wire);
// How a child ended: "" if it exited normally.
std::string wait_child(pid_t pid);

}  // namespace lite2onnx::hostile
