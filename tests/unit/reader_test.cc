// The verified reader on valid input: the IR it builds (tensors, constants,
// quantization, nodes, attributes, subgraphs, operator codes), inspect() on a
// real model, and convert() listing every unsupported operator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/convert.h"
#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/option_table.h"
#include "core/provenance.h"
#include "core/tflite/reader.h"
#include "graph_builder.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using testing::corpus_dir;
using testing::op_model;

using ::testing::ElementsAre;
using testing::f32_bytes;
using ::testing::HasSubstr;
using testing::i32_bytes;
using testing::read_file;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;
using ir::DataType;
using ir::Shape;

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A model as JSON against core/tflite/schema.fbs, assembled from pieces; the
// add functions return the index the model uses.
class ModelJson {
 public:
  ModelJson() { buffers_.push_back("{}"); }

  int code(const std::string& json) {
    codes_.push_back(json);
    return static_cast<int>(codes_.size()) - 1;
  }
  int builtin(const std::string& name, int code_value) {
    return code("{ \"deprecated_builtin_code\": " + std::to_string(std::min(code_value, 127)) +
                ", \"builtin_code\": \"" + name + "\" }");
  }
  int buffer(const std::string& json) {
    buffers_.push_back(json);
    return static_cast<int>(buffers_.size()) - 1;
  }
  int data(const std::string& bytes) { return buffer("{ \"data\": " + bytes + " }"); }
  // `fields` is the rest of the Tensor table, e.g. "\"shape\": [1, 2], \"type\": \"INT8\"".
  int tensor(const std::string& name, const std::string& fields) {
    tensors_.push_back("{ \"name\": \"" + name + "\", " + fields + " }");
    return static_cast<int>(tensors_.size()) - 1;
  }
  int f32(const std::string& name, const std::vector<int64_t>& shape) {
    return tensor(name, "\"shape\": " + ints(shape) + ", \"type\": \"FLOAT32\"");
  }
  void op(int code_index, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
          const std::string& options_type = "", const std::string& options = "{}") {
    ops_.push_back("{ \"opcode_index\": " + std::to_string(code_index) +
                   ", \"inputs\": " + ints(in) + ", \"outputs\": " + ints(out) +
                   (options_type.empty() ? ""
                                         : ", \"builtin_options_type\": \"" + options_type +
                                               "\", \"builtin_options\": " + options) +
                   " }");
  }
  void io(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
    inputs_ = in;
    outputs_ = out;
  }
  // Further subgraphs, as JSON SubGraph tables.
  void add_subgraph(const std::string& json) { extra_subgraphs_ += ",\n" + json; }
  void set_description(const std::string& d) { description_ = d; }
  // A metadata entry (name, buffer index), as JSON.
  void add_metadata(const std::string& name, int buffer_index) {
    metadata_.push_back("{ \"name\": \"" + name +
                        "\", \"buffer\": " + std::to_string(buffer_index) + " }");
  }

  std::string json() const {
    auto list = [](const std::vector<std::string>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ",\n  " : "\n  ") + v[i];
      return s + "]";
    };
    return "{ \"version\": 3, \"description\": \"" + description_ + "\",\n" +
           "\"operator_codes\": " + list(codes_) + ",\n" +
           "\"subgraphs\": [ { \"name\": \"main\", \"tensors\": " + list(tensors_) +
           ", \"inputs\": " + ints(inputs_) + ", \"outputs\": " + ints(outputs_) +
           ", \"operators\": " + list(ops_) + " }" + extra_subgraphs_ + " ],\n" +
           "\"buffers\": " + list(buffers_) + ",\n\"metadata\": " + list(metadata_) + " }";
  }
  Bytes bytes() const { return tflite_from_json(json()); }

 private:
  std::vector<std::string> codes_, tensors_, ops_, buffers_, metadata_;
  std::vector<int64_t> inputs_, outputs_;
  std::string extra_subgraphs_;
  std::string description_ = "reader test model";
};

tflite_reader::ReadModel read_ok(const Bytes& bytes) {
  auto r = tflite_reader::read(view(bytes), Limits{}, ops::read_options);
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return {};
  }
  return std::move(r).value();
}

// ---- tensors ------------------------------------------------------------------

// A model with one tensor of each interesting kind (no operators: the reader
// does not need any to build the tensor table).
struct TensorZoo {
  ModelJson m;
  int image, filter, bias, ids, half, flag, unranked, ranked_unknown, state, q, per_axis, seq;
  TensorZoo() {
    image = m.tensor(
        "image", R"("shape": [1, 8, 8, 3], "shape_signature": [-1, 8, 8, 3], "type": "FLOAT32")");
    filter = m.tensor("conv/filter", R"("shape": [2, 1, 1, 3], "type": "FLOAT32", "buffer": )" +
                                         std::to_string(m.data(f32_bytes({1, 2, 3, 4, 5, 6}))));
    bias = m.tensor("conv/bias", R"("shape": [2], "type": "FLOAT32", "buffer": )" +
                                     std::to_string(m.data(f32_bytes({0.5f, -0.5f}))));
    ids = m.tensor("ids", R"("shape": [3], "type": "INT32", "buffer": )" +
                              std::to_string(m.data(i32_bytes({7, -8, 9}))));
    half = m.tensor("half", R"("shape": [2], "type": "FLOAT16", "buffer": )" +
                                std::to_string(m.data("[0, 60, 0, 192]")));
    flag = m.tensor("flag", R"("shape": [], "type": "BOOL")");
    unranked = m.tensor("unranked", R"("type": "FLOAT32")");
    ranked_unknown = m.tensor("ranked", R"("type": "FLOAT32", "has_rank": true)");
    state = m.tensor("state", R"("shape": [1, 2], "type": "FLOAT32", "is_variable": true)");
    q = m.tensor("q", R"("shape": [1, 4], "type": "INT8",
                         "quantization": { "scale": [0.5], "zero_point": [-3] })");
    per_axis = m.tensor("per_axis", R"("shape": [2, 1, 1, 3], "type": "INT8", "buffer": )" +
                                        std::to_string(m.data("[1, 2, 3, 4, 5, 6]")) +
                                        R"(, "quantization": { "scale": [0.25, 0.125],
                                             "zero_point": [0, 0], "quantized_dimension": 0 })");
    seq =
        m.tensor("seq", R"("shape": [1, 1, 16], "shape_signature": [-1, -1, 16], "type": "INT64")");
    m.io({image}, {image});
  }
};

TEST(Reader, TensorNamesTypesAndShapes) {
  TensorZoo z;
  auto model = read_ok(z.m.bytes());
  const ir::Graph& g = model.graph;
  ASSERT_EQ(g.tensor_count(), 12u);
  EXPECT_EQ(g.tensor(z.image).name, "image");
  EXPECT_EQ(g.tensor(z.image).dtype, DataType::kFloat32);
  EXPECT_EQ(g.tensor(z.filter).name, "conv/filter");
  EXPECT_EQ(g.tensor(z.filter).shape, (Shape{2, 1, 1, 3}));
  EXPECT_EQ(g.tensor(z.ids).dtype, DataType::kInt32);
  EXPECT_EQ(g.tensor(z.half).dtype, DataType::kFloat16);
  EXPECT_EQ(g.tensor(z.flag).dtype, DataType::kBool);
  EXPECT_EQ(g.tensor(z.q).dtype, DataType::kInt8);
  EXPECT_EQ(g.tensor(z.seq).dtype, DataType::kInt64);
  EXPECT_EQ(ir::to_string(g.tensor(z.half).dtype), std::string("FLOAT16"));
  EXPECT_THAT(g.inputs(), ElementsAre(z.image));
  EXPECT_THAT(g.outputs(), ElementsAre(z.image));
  EXPECT_EQ(g.name, "main");
}

TEST(Reader, DynamicDimensionsComeFromShapeSignature) {
  TensorZoo z;
  auto model = read_ok(z.m.bytes());
  const ir::Graph& g = model.graph;
  // shape holds 1 where shape_signature holds -1; the IR keeps -1.
  EXPECT_EQ(g.tensor(z.image).shape, (Shape{-1, 8, 8, 3}));
  EXPECT_EQ(g.tensor(z.seq).shape, (Shape{-1, -1, 16}));
  EXPECT_EQ(ir::to_string(g.tensor(z.seq).shape), "[?, ?, 16]");
  EXPECT_FALSE(ir::element_count(g.tensor(z.image).shape).has_value());
  // Without a signature the shape is static.
  EXPECT_EQ(g.tensor(z.state).shape, (Shape{1, 2}));
  EXPECT_EQ(ir::element_count(g.tensor(z.state).shape), 2);
}

TEST(Reader, RankScalarsAndUnknownRank) {
  TensorZoo z;
  auto model = read_ok(z.m.bytes());
  const ir::Graph& g = model.graph;
  EXPECT_TRUE(g.tensor(z.flag).has_rank);  // shape [] : a scalar
  EXPECT_EQ(g.tensor(z.flag).rank(), 0u);
  EXPECT_FALSE(g.tensor(z.unranked).has_rank);       // no shape at all
  EXPECT_TRUE(g.tensor(z.ranked_unknown).has_rank);  // has_rank without a shape
  EXPECT_EQ(g.tensor(z.image).rank(), 4u);
}

TEST(Reader, ConstantsAreViewsIntoTheModelBytes) {
  TensorZoo z;
  Bytes bytes = z.m.bytes();
  auto model = read_ok(bytes);
  const ir::Graph& g = model.graph;
  auto inside = [&](std::span<const std::byte> s) {
    return s.data() >= bytes.data() && s.data() + s.size() <= bytes.data() + bytes.size();
  };
  ASSERT_TRUE(g.tensor(z.filter).is_const());
  EXPECT_EQ(g.tensor(z.filter).data->bytes.size(), 6u * 4);
  EXPECT_TRUE(inside(g.tensor(z.filter).data->bytes));
  EXPECT_EQ(g.tensor(z.filter).data->stored_type, DataType::kFloat32);
  EXPECT_THAT(g.tensor(z.bias).data->as<float>(), ElementsAre(0.5f, -0.5f));
  EXPECT_THAT(g.tensor(z.ids).data->as<int32_t>(), ElementsAre(7, -8, 9));
  EXPECT_EQ(g.tensor(z.half).data->bytes.size(), 4u);
  EXPECT_EQ(g.tensor(z.half).data->stored_type, DataType::kFloat16);
  EXPECT_EQ(g.tensor(z.per_axis).data->bytes.size(), 6u);
  // Tensors on buffer 0 (or an empty buffer) are not constants.
  for (int t : {z.image, z.flag, z.unranked, z.state, z.q, z.seq})
    EXPECT_FALSE(g.tensor(t).is_const()) << g.tensor(t).name;
  // The int32 constant reads back through the converters' helper.
  EXPECT_THAT(*ir::const_ints(g, z.ids), ElementsAre(7, -8, 9));
}

TEST(Reader, BufferAddressedByOffsetIsAViewOfTheFile) {
  // Models over 2 GiB keep buffers after the FlatBuffer, addressed by offset
  // and size from the start of the file: here, 8 bytes inside a small file.
  ModelJson m;
  int b = m.buffer(R"({ "offset": 8, "size": 8 })");
  int k = m.tensor("k", "\"shape\": [2], \"type\": \"FLOAT32\", \"buffer\": " + std::to_string(b));
  m.io({}, {k});
  Bytes bytes = m.bytes();
  auto model = read_ok(bytes);
  const ir::Tensor& t = model.graph.tensor(k);
  ASSERT_TRUE(t.is_const());
  EXPECT_EQ(t.data->bytes.data(), bytes.data() + 8);
  EXPECT_EQ(t.data->bytes.size(), 8u);
}

TEST(Reader, QuantizationParameters) {
  TensorZoo z;
  auto model = read_ok(z.m.bytes());
  const ir::Graph& g = model.graph;
  ASSERT_TRUE(g.tensor(z.q).quant.has_value());
  EXPECT_THAT(g.tensor(z.q).quant->scale, ElementsAre(0.5f));
  EXPECT_THAT(g.tensor(z.q).quant->zero_point, ElementsAre(-3));
  EXPECT_EQ(g.tensor(z.q).quant->axis, 0);
  ASSERT_TRUE(g.tensor(z.per_axis).quant.has_value());
  EXPECT_THAT(g.tensor(z.per_axis).quant->scale, ElementsAre(0.25f, 0.125f));
  EXPECT_THAT(g.tensor(z.per_axis).quant->zero_point, ElementsAre(0, 0));
  EXPECT_FALSE(g.tensor(z.image).quant.has_value());
  EXPECT_FALSE(g.tensor(z.filter).quant.has_value());
}

TEST(Reader, QuantizedDimensionIsKept) {
  ModelJson m;
  int t = m.tensor("w", R"("shape": [1, 1, 1, 3], "type": "INT8",
                           "quantization": { "scale": [0.1, 0.2, 0.3], "quantized_dimension": 3 })");
  m.io({t}, {t});
  auto model = read_ok(m.bytes());
  ASSERT_TRUE(model.graph.tensor(t).quant.has_value());
  EXPECT_EQ(model.graph.tensor(t).quant->axis, 3);
  EXPECT_EQ(model.graph.tensor(t).quant->scale.size(), 3u);
  EXPECT_TRUE(model.graph.tensor(t).quant->zero_point.empty());  // optional in the format
  // inspect() reports the same.
  auto info = inspect(view(m.bytes()));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->tensors[0].quant_scales, 3u);
  EXPECT_EQ(info->tensors[0].quant_axis, 3);
}

TEST(Reader, VariableTensorsAreMarked) {
  TensorZoo z;
  auto model = read_ok(z.m.bytes());
  EXPECT_TRUE(model.graph.tensor(z.state).is_variable);
  EXPECT_FALSE(model.graph.tensor(z.image).is_variable);
}

TEST(Reader, VersionAndDescription) {
  ModelJson m;
  m.set_description("a model that describes itself");
  int x = m.f32("x", {1});
  m.io({x}, {x});
  auto model = read_ok(m.bytes());
  EXPECT_EQ(model.version, 3u);
  EXPECT_EQ(model.description, "a model that describes itself");
}

TEST(Reader, MetadataEntriesAreViewsOfTheirBuffers) {
  ModelJson m;
  int x = m.f32("x", {1});
  m.io({x}, {x});
  m.add_metadata("min_runtime_version", m.data("[49, 46, 53, 46, 48, 0, 0, 0]"));
  m.add_metadata("points nowhere", 99);  // a buffer that does not exist: left out
  auto model = read_ok(m.bytes());
  ASSERT_EQ(model.metadata.size(), 1u);
  EXPECT_EQ(model.metadata[0].name, "min_runtime_version");
  EXPECT_EQ(model.metadata[0].bytes.size(), 8u);
}

// What the ONNX file says of its source: the model's SHA-256, the canonical
// options, the TFLite description and min_runtime_version (docs/architecture.md).
TEST(Provenance, MetadataPropsNameTheSourceAndTheOptions) {
  EXPECT_EQ(sha256_hex(std::as_bytes(std::span("abc", 3))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ModelJson m;
  m.set_description("a model that describes itself");
  int x = m.f32("x", {2});
  m.io({x}, {x});
  m.add_metadata("min_runtime_version", m.data("[49, 46, 53, 46, 48, 0, 0, 0]"));
  const Bytes bytes = m.bytes();
  ConvertOptions options;
  options.opset = 17;
  for (bool hash_given : {false, true}) {
    if (hash_given) options.source_sha256 = [] { return std::string("given"); };
    Diagnostics d;
    auto onnx = convert(view(bytes), options, d);
    ASSERT_TRUE(onnx.ok()) << onnx.error().message;
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(*onnx));
    std::map<std::string, std::string> props;
    for (const auto& p : proto.metadata_props()) props[p.key()] = p.value();
    EXPECT_EQ(props["lite2onnx.source_sha256"], hash_given ? "given" : sha256_hex(view(bytes)));
    EXPECT_EQ(props["lite2onnx.options"], options_summary(options));
    EXPECT_THAT(props["lite2onnx.options"], HasSubstr("opset=17"));
    EXPECT_EQ(props["tflite.description"], "a model that describes itself");
    EXPECT_EQ(props["tflite.min_runtime_version"], "1.5.0");
    EXPECT_EQ(props["tflite.schema_version"], "3");
    EXPECT_EQ(proto.producer_name(), "lite2onnx");
  }
}

// ---- operators ------------------------------------------------------------------

// One of most option-carrying operators, wired through throwaway tensors.
struct OpZoo {
  ModelJson m;
  OpZoo() {
    int conv = m.builtin("CONV_2D", 3), dw = m.builtin("DEPTHWISE_CONV_2D", 4),
        pool = m.builtin("MAX_POOL_2D", 17), fc = m.builtin("FULLY_CONNECTED", 9),
        concat = m.builtin("CONCATENATION", 2), slice = m.builtin("STRIDED_SLICE", 45),
        reshape = m.builtin("RESHAPE", 22), softmax = m.builtin("SOFTMAX", 25),
        mean = m.builtin("MEAN", 40), leaky = m.builtin("LEAKY_RELU", 98),
        mirror = m.builtin("MIRROR_PAD", 100), add = m.builtin("ADD", 0),
        squeeze = m.builtin("SQUEEZE", 43), resize = m.builtin("RESIZE_BILINEAR", 23),
        hswish = m.builtin("HARD_SWISH", 117);
    int x = m.f32("x", {1, 8, 8, 4});
    int next = 1;
    auto t = [&] { return m.f32("t" + std::to_string(next++), {1}); };
    m.op(conv, {x, t(), -1}, {t()}, "Conv2DOptions",
         R"({ "padding": "VALID", "stride_w": 1, "stride_h": 2, "dilation_w_factor": 3,
              "dilation_h_factor": 4, "fused_activation_function": "RELU6" })");
    m.op(dw, {x, t()}, {t()}, "DepthwiseConv2DOptions",
         R"({ "padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 2,
              "fused_activation_function": "RELU" })");
    m.op(pool, {x}, {t()}, "Pool2DOptions",
         R"({ "padding": "SAME", "stride_w": 2, "stride_h": 3, "filter_width": 5,
              "filter_height": 6, "fused_activation_function": "RELU_N1_TO_1" })");
    m.op(fc, {x, t()}, {t()}, "FullyConnectedOptions",
         R"({ "fused_activation_function": "TANH", "keep_num_dims": true })");
    m.op(concat, {x, x}, {t()}, "ConcatenationOptions", R"({ "axis": -1 })");
    m.op(slice, {x, t(), t(), t()}, {t()}, "StridedSliceOptions",
         R"({ "begin_mask": 1, "end_mask": 2, "ellipsis_mask": 4, "new_axis_mask": 8,
              "shrink_axis_mask": 16, "offset": true })");
    m.op(reshape, {x}, {t()}, "ReshapeOptions", R"({ "new_shape": [1, -1] })");
    m.op(softmax, {x}, {t()}, "SoftmaxOptions", R"({ "beta": 0.5 })");
    m.op(mean, {x, t()}, {t()}, "ReducerOptions", R"({ "keep_dims": true })");
    m.op(leaky, {x}, {t()}, "LeakyReluOptions", R"({ "alpha": 0.25 })");
    m.op(mirror, {x, t()}, {t()}, "MirrorPadOptions", R"({ "mode": "SYMMETRIC" })");
    m.op(add, {x, x}, {t()}, "AddOptions", R"({ "fused_activation_function": "RELU" })");
    m.op(squeeze, {x}, {t()}, "SqueezeOptions", R"({ "squeeze_dims": [0, -2] })");
    m.op(resize, {x, t()}, {t()}, "ResizeBilinearOptions", R"({ "half_pixel_centers": true })");
    m.op(hswish, {x}, {t()});
    m.io({x}, {});
  }
};

TEST(Reader, NodeNamesAreCamelCaseWithTheOpIndex) {
  OpZoo z;
  auto model = read_ok(z.m.bytes());
  std::vector<std::string> names;
  for (const ir::Node& n : model.graph.nodes()) names.push_back(n.name);
  EXPECT_THAT(names, ElementsAre("Conv2D_0", "DepthwiseConv2D_1", "MaxPool2D_2", "FullyConnected_3",
                                 "Concatenation_4", "StridedSlice_5", "Reshape_6", "Softmax_7",
                                 "Mean_8", "LeakyRelu_9", "MirrorPad_10", "Add_11", "Squeeze_12",
                                 "ResizeBilinear_13", "HardSwish_14"));
  for (size_t k = 0; k < model.graph.node_count(); ++k) {
    const ir::Node& n = testing::node_at(model.graph, k);
    EXPECT_EQ(n.source_op, static_cast<int>(k));
    EXPECT_EQ(n.dialect, ir::Dialect::kTflite);
  }
  EXPECT_EQ(testing::node_at(model.graph, 0).op, "CONV_2D");
  EXPECT_EQ(testing::node_at(model.graph, 0).builtin, 3);
  EXPECT_EQ(testing::node_at(model.graph, 14).op, "HARD_SWISH");
  EXPECT_EQ(testing::node_at(model.graph, 14).builtin, 117);
}

TEST(Reader, OperatorInputsAndOutputsKeepOmittedInputs) {
  OpZoo z;
  auto model = read_ok(z.m.bytes());
  const ir::Node& conv = testing::node_at(model.graph, 0);
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.inputs[0], 0);
  EXPECT_EQ(model.graph.tensor(conv.inputs[1]).name.substr(0, 1), "t");
  EXPECT_EQ(conv.inputs[2], ir::kNoTensor);  // bias omitted
  ASSERT_EQ(conv.outputs.size(), 1u);
  EXPECT_NE(conv.outputs[0], conv.inputs[1]);
  EXPECT_THAT(testing::node_at(model.graph, 4).inputs,
              ElementsAre(0, 0));  // one tensor, read twice
}

TEST(Reader, OperatorOptionsBecomeAttributes) {
  OpZoo z;
  auto model = read_ok(z.m.bytes());
  const auto n = [&](size_t i) -> const ir::Node& { return testing::node_at(model.graph, i); };
  const ir::Attributes& conv = n(0).attrs;
  EXPECT_EQ(conv.get_string("padding"), "VALID");
  EXPECT_EQ(conv.get_int("stride_h"), 2);
  EXPECT_EQ(conv.get_int("stride_w"), 1);
  EXPECT_EQ(conv.get_int("dilation_h_factor"), 4);
  EXPECT_EQ(conv.get_int("dilation_w_factor"), 3);
  EXPECT_EQ(conv.get_string("fused_activation_function"), "RELU6");

  const ir::Attributes& dw = n(1).attrs;
  EXPECT_EQ(dw.get_string("padding"), "SAME");
  EXPECT_EQ(dw.get_int("stride_h"), 2);
  EXPECT_EQ(dw.get_string("fused_activation_function"), "RELU");

  const ir::Attributes& pool = n(2).attrs;
  EXPECT_EQ(pool.get_int("filter_height"), 6);
  EXPECT_EQ(pool.get_int("filter_width"), 5);
  EXPECT_EQ(pool.get_int("stride_h"), 3);
  EXPECT_EQ(pool.get_string("fused_activation_function"), "RELU_N1_TO_1");

  EXPECT_EQ(n(3).attrs.get_int("keep_num_dims"), 1);
  EXPECT_EQ(n(3).attrs.get_int("weights_format"), 0);
  EXPECT_EQ(n(3).attrs.get_string("fused_activation_function"), "TANH");
  EXPECT_EQ(n(4).attrs.get_int("axis"), -1);

  const ir::Attributes& slice = n(5).attrs;
  EXPECT_EQ(slice.get_int("begin_mask"), 1);
  EXPECT_EQ(slice.get_int("end_mask"), 2);
  EXPECT_EQ(slice.get_int("ellipsis_mask"), 4);
  EXPECT_EQ(slice.get_int("new_axis_mask"), 8);
  EXPECT_EQ(slice.get_int("shrink_axis_mask"), 16);
  EXPECT_EQ(slice.get_int("offset"), 1);

  EXPECT_THAT(n(6).attrs.get_ints("new_shape"), ElementsAre(1, -1));
  EXPECT_FLOAT_EQ(n(7).attrs.get_float("beta"), 0.5f);
  EXPECT_EQ(n(8).attrs.get_int("keep_dims"), 1);
  EXPECT_FLOAT_EQ(n(9).attrs.get_float("alpha"), 0.25f);
  EXPECT_EQ(n(10).attrs.get_string("mode"), "SYMMETRIC");
  EXPECT_EQ(n(11).attrs.get_string("fused_activation_function"), "RELU");
  EXPECT_THAT(n(12).attrs.get_ints("squeeze_dims"), ElementsAre(0, -2));
  EXPECT_EQ(n(13).attrs.get_int("half_pixel_centers"), 1);
  EXPECT_EQ(n(13).attrs.get_int("align_corners"), 0);
}

TEST(Reader, MissingOptionsTakeTheDefaults) {
  ModelJson m;
  int conv = m.builtin("CONV_2D", 3), add = m.builtin("ADD", 0),
      leaky = m.builtin("LEAKY_RELU", 98);
  int x = m.f32("x", {1, 4, 4, 1}), w = m.f32("w", {1, 1, 1, 1});
  int a = m.f32("a", {1, 4, 4, 1}), b = m.f32("b", {1, 4, 4, 1}), c = m.f32("c", {1, 4, 4, 1});
  m.op(conv, {x, w}, {a});
  m.op(add, {a, a}, {b});
  m.op(leaky, {b}, {c});
  m.io({x}, {c});
  auto model = read_ok(m.bytes());
  const auto n = [&](size_t i) -> const ir::Node& { return testing::node_at(model.graph, i); };
  EXPECT_EQ(n(0).attrs.get_string("padding"), "SAME");
  EXPECT_EQ(n(0).attrs.get_int("stride_h"), 1);
  EXPECT_EQ(n(0).attrs.get_int("dilation_w_factor"), 1);
  EXPECT_EQ(n(0).attrs.get_string("fused_activation_function"), "NONE");
  EXPECT_EQ(n(1).attrs.get_string("fused_activation_function"), "NONE");
  EXPECT_FLOAT_EQ(n(2).attrs.get_float("alpha"), 0.2f);
}

TEST(Reader, BuiltinCodesAbove127ComeFromBuiltinCode) {
  ModelJson m;
  int gelu = m.builtin("GELU", 150);  // deprecated_builtin_code holds 127
  int old_conv = m.code(R"({ "deprecated_builtin_code": 3 })");  // pre-2.4 files
  int x = m.f32("x", {1, 4, 4, 1}), w = m.f32("w", {1, 1, 1, 1});
  int y = m.f32("y", {1, 4, 4, 1}), z = m.f32("z", {1, 4, 4, 1});
  m.op(old_conv, {x, w}, {y});
  m.op(gelu, {y}, {z});
  m.io({x}, {z});
  auto model = read_ok(m.bytes());
  const auto n = [&](size_t i) -> const ir::Node& { return testing::node_at(model.graph, i); };
  ASSERT_EQ(model.graph.node_count(), 2u);
  EXPECT_EQ(n(0).builtin, 3);
  EXPECT_EQ(n(0).op, "CONV_2D");
  EXPECT_EQ(n(0).name, "Conv2D_0");
  EXPECT_EQ(n(1).builtin, 150);
  EXPECT_EQ(n(1).op, "GELU");
  EXPECT_EQ(n(1).name, "Gelu_1");
}

TEST(Reader, CustomOperatorsKeepTheirCode) {
  ModelJson m;
  int custom = m.code(R"({ "deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                           "custom_code": "VendorTopKDecoder" })");
  int x = m.f32("x", {1, 4}), y = m.f32("y", {1, 4});
  m.op(custom, {x}, {y});
  m.io({x}, {y});
  auto model = read_ok(m.bytes());
  ASSERT_EQ(model.graph.node_count(), 1u);
  const ir::Node& n = testing::node_at(model.graph, 0);
  EXPECT_EQ(n.builtin, 32);
  EXPECT_EQ(n.op, "VendorTopKDecoder");
  EXPECT_EQ(n.name, "Custom_0");

  auto info = inspect(view(m.bytes()));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_EQ(info->ops.size(), 1u);
  EXPECT_EQ(info->ops[0].op, "VendorTopKDecoder");
  EXPECT_FALSE(info->ops[0].supported);
  EXPECT_EQ(info->ops[0].reason, "custom operator");
}

// ---- subgraphs ------------------------------------------------------------------

TEST(Reader, EverySubgraphIsReportedAndTheFirstIsRead) {
  ModelJson m;
  int abs = m.builtin("ABS", 101);
  int x = m.f32("x", {2}), y = m.f32("y", {2});
  m.op(abs, {x}, {y});
  m.io({x}, {y});
  m.add_subgraph(R"({ "name": "cond", "tensors": [
      { "name": "a", "shape": [1], "type": "BOOL" }, { "name": "b", "shape": [1], "type": "BOOL" },
      { "name": "c", "shape": [1], "type": "BOOL" } ],
    "inputs": [0], "outputs": [2],
    "operators": [ { "opcode_index": 0, "inputs": [0], "outputs": [1] },
                   { "opcode_index": 0, "inputs": [1], "outputs": [2] } ] })");
  m.add_subgraph(R"({ "tensors": [] })");
  Bytes bytes = m.bytes();
  auto model = read_ok(bytes);
  ASSERT_EQ(model.subgraphs.size(), 3u);
  EXPECT_EQ(model.subgraphs[0].index, 0);
  EXPECT_EQ(model.subgraphs[0].name, "main");
  EXPECT_EQ(model.subgraphs[0].tensors, 2u);
  EXPECT_EQ(model.subgraphs[0].operators, 1u);
  EXPECT_EQ(model.subgraphs[1].index, 1);
  EXPECT_EQ(model.subgraphs[1].name, "cond");
  EXPECT_EQ(model.subgraphs[1].tensors, 3u);
  EXPECT_EQ(model.subgraphs[1].operators, 2u);
  EXPECT_EQ(model.subgraphs[2].name, "");
  EXPECT_EQ(model.subgraphs[2].operators, 0u);
  // The graph is subgraph 0's.
  EXPECT_EQ(model.graph.name, "main");
  EXPECT_EQ(model.graph.tensor_count(), 2u);
  EXPECT_EQ(model.graph.node_count(), 1u);

  // convert() converts the primary one and says so; inspect() lists all.
  Diagnostics d;
  auto r = convert(view(bytes), {}, d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(d.subgraphs,
              ElementsAre("0 'main' (1 ops, converted)", "1 'cond' (2 ops, not converted)",
                          "2 '' (0 ops, not converted)"));
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_THAT(d.warnings[0], HasSubstr("3 subgraphs; only subgraph 0 is converted"));
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_THAT(info->subgraphs, ElementsAre("0 'main': 2 tensors, 1 ops",
                                           "1 'cond': 3 tensors, 2 ops", "2 '': 0 tensors, 0 ops"));
}

// ---- real models ------------------------------------------------------------------

TEST(Reader, ReadsTheAbsOpModel) {
  Bytes bytes = read_file(op_model("abs"));
  auto model = read_ok(bytes);
  EXPECT_EQ(model.version, 3u);
  ASSERT_EQ(model.graph.tensor_count(), 2u);
  EXPECT_EQ(model.graph.tensor(0).name, "input");
  EXPECT_EQ(model.graph.tensor(0).shape, (Shape{1, 5, 7, 3}));
  EXPECT_EQ(model.graph.tensor(1).name, "output");
  ASSERT_EQ(model.graph.node_count(), 1u);
  EXPECT_EQ(testing::node_at(model.graph, 0).name, "Abs_0");
  EXPECT_THAT(model.graph.inputs(), ElementsAre(0));
  EXPECT_THAT(model.graph.outputs(), ElementsAre(1));
}

TEST(Inspect, ListsOpsAndTensorsOfMiniMobilenet) {
  Bytes bytes = read_file(op_model("mini_mobilenet"));
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->version, 3u);
  EXPECT_THAT(info->description, HasSubstr("mini_mobilenet"));
  ASSERT_EQ(info->tensors.size(), 15u);
  EXPECT_EQ(info->tensors[0].name, "input");
  EXPECT_EQ(info->tensors[0].dtype, "FLOAT32");
  EXPECT_EQ(info->tensors[0].shape, (Shape{1, 12, 10, 3}));
  EXPECT_FALSE(info->tensors[0].constant);
  EXPECT_EQ(info->tensors[1].name, "stem/conv/weights");
  EXPECT_TRUE(info->tensors[1].constant);
  EXPECT_EQ(info->tensors[12].dtype, "INT32");
  EXPECT_THAT(info->inputs, ElementsAre(0));
  EXPECT_THAT(info->outputs, ElementsAre(14));
  std::vector<std::string> ops;
  for (const auto& o : info->ops) ops.push_back(o.op);
  EXPECT_THAT(ops, ElementsAre("CONV_2D", "RELU6", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D",
                               "CONV_2D", "RESHAPE", "SOFTMAX"));
  for (size_t k = 0; k < info->ops.size(); ++k) {
    EXPECT_EQ(info->ops[k].index, static_cast<int>(k));
    EXPECT_TRUE(info->ops[k].supported) << info->ops[k].op << ": " << info->ops[k].reason;
  }
  EXPECT_THAT(info->ops[0].inputs, ElementsAre(0, 1, 2));
  EXPECT_THAT(info->ops[0].outputs, ElementsAre(3));
  EXPECT_TRUE(info->unsupported.empty());

  std::string text = info->to_text();
  EXPECT_THAT(text, HasSubstr("ops (7)"));
  EXPECT_THAT(text, HasSubstr("DEPTHWISE_CONV_2D"));
  EXPECT_THAT(text, HasSubstr("'stem/conv/weights' FLOAT32 [8, 3, 3, 3] const"));
  EXPECT_THAT(text, HasSubstr("all operators are supported"));
  auto j = nlohmann::json::parse(info->to_json());
  EXPECT_TRUE(j.is_object());
}

TEST(Inspect, RealCorpusModel) {
  std::string path = corpus_dir() + "/tflite-support/mobilenet_v1_0.25_224_1_default_1.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus model not present: " << path;
  Bytes bytes = read_file(path);
  auto info = inspect(view(bytes));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->ops.size(), 31u);
  ASSERT_EQ(info->inputs.size(), 1u);
  const TensorInfo& in = info->tensors[static_cast<size_t>(info->inputs[0])];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.shape, (Shape{1, 224, 224, 3}));
  ASSERT_EQ(info->outputs.size(), 1u);
  EXPECT_EQ(info->tensors[static_cast<size_t>(info->outputs[0])].shape, (Shape{1, 1001}));
  for (const auto& o : info->ops)
    EXPECT_TRUE(o.supported) << o.index << " " << o.op << ": " << o.reason;
}

// ---- unsupported operators -----------------------------------------------------

TEST(ReaderUnsupported, ConvertReportsEveryUnsupportedOp) {
  ModelJson m;
  int abs = m.builtin("ABS", 101), lsh = m.builtin("LSH_PROJECTION", 15),
      skip_gram = m.builtin("SKIP_GRAM", 30);
  int custom = m.code(R"({ "deprecated_builtin_code": 32, "custom_code": "MyOp" })");
  std::vector<int> t;
  for (int i = 0; i <= 6; ++i) t.push_back(m.f32("t" + std::to_string(i), {1, 4}));
  m.op(abs, {t[0]}, {t[1]});
  m.op(lsh, {t[1]}, {t[2]});
  m.op(skip_gram, {t[2]}, {t[3]});
  m.op(abs, {t[3]}, {t[4]});
  m.op(lsh, {t[4]}, {t[5]});
  m.op(custom, {t[5]}, {t[6]});
  m.io({t[0]}, {t[6]});
  Diagnostics d;
  auto r = convert(view(m.bytes()), {}, d);
  ASSERT_FALSE(r.ok());
  const Error& e = r.error();
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  ASSERT_EQ(e.unsupported.size(), 4u) << e.message;
  EXPECT_EQ(e.unsupported[0].op_index, 1);
  EXPECT_EQ(e.unsupported[0].op, "LSH_PROJECTION");
  EXPECT_EQ(e.unsupported[1].op_index, 2);
  EXPECT_EQ(e.unsupported[1].op, "SKIP_GRAM");
  EXPECT_EQ(e.unsupported[2].op_index, 4);
  EXPECT_EQ(e.unsupported[2].op, "LSH_PROJECTION");
  EXPECT_EQ(e.unsupported[3].op_index, 5);
  EXPECT_EQ(e.unsupported[3].op, "MyOp");
  EXPECT_EQ(e.unsupported[3].reason, "custom operator");
  EXPECT_THAT(e.message, HasSubstr("4 operators cannot be converted"));
  EXPECT_THAT(e.message, HasSubstr("SKIP_GRAM"));
  EXPECT_THAT(e.message, HasSubstr("LSH_PROJECTION x2"));
  EXPECT_THAT(e.message, HasSubstr("MyOp"));
  // The diagnostics carry the same list, and inspect() marks the same ops.
  ASSERT_EQ(d.unsupported.size(), 4u);
  EXPECT_EQ(d.unsupported[2].op_index, 4);
  auto info = inspect(view(m.bytes()));
  ASSERT_TRUE(info.ok()) << info.error().message;
  std::vector<bool> supported;
  for (const auto& o : info->ops) supported.push_back(o.supported);
  EXPECT_THAT(supported, ElementsAre(true, false, false, true, false, false));
  EXPECT_EQ(info->ops[2].reason, "not implemented");
}

TEST(ReaderUnsupported, UnsupportedOpsWithReasonsAreAllListed) {
  // Supported op kinds the converter cannot take here, each for its own reason.
  ModelJson m;
  int tr = m.builtin("TRANSPOSE", 39), conv = m.builtin("CONV_2D", 3);
  int x = m.f32("x", {1, 4, 4, 2});
  int perm = m.tensor("perm", "\"shape\": [4], \"type\": \"INT32\"");  // computed at run time
  int a = m.f32("a", {1, 4, 4, 2});
  int w = m.f32("w", {2, 1, 1, 2});  // a non-constant filter is fine; stride 0 is not
  int y = m.f32("y", {1, 4, 4, 2});
  m.op(tr, {x, perm}, {a});
  m.op(conv, {a, w}, {y}, "Conv2DOptions", R"({ "stride_h": 0, "stride_w": 1 })");
  m.io({x, perm, w}, {y});
  Diagnostics d;
  auto r = convert(view(m.bytes()), {}, d);
  ASSERT_FALSE(r.ok());
  const Error& e = r.error();
  EXPECT_EQ(e.code, ErrorCode::kUnsupported);
  ASSERT_EQ(e.unsupported.size(), 2u) << e.message;
  EXPECT_EQ(e.unsupported[0].op_index, 0);
  EXPECT_THAT(e.unsupported[0].reason, HasSubstr("perm must be a constant"));
  EXPECT_EQ(e.unsupported[1].op_index, 1);
  EXPECT_THAT(e.unsupported[1].reason, HasSubstr("strides must be positive"));
  EXPECT_THAT(e.message, HasSubstr("first reason: op 0 TRANSPOSE"));
}

// A constant with no elements has an empty buffer, like an activation: when no
// op writes it and it is no graph input, it is that constant (RESHAPE to a
// scalar reads the shape [0] this way: tflite-support/2022IDDetectorWithMetadata).
// Sparse constants (tests/models/make_models_formats.mjs: CSR, block-sparse and
// CSC; float32, float16 and int8) are made dense when read (the numeric suite
// checks the values against TFLite's DENSIFY).
TEST(ReaderSparse, ConstantsAreReadDense) {
  for (const char* name : {"formats_sparse_csr_f32", "formats_sparse_block_f32",
                           "formats_sparse_csc_f16", "formats_sparse_i8"}) {
    SCOPED_TRACE(name);
    const Bytes bytes = read_file(op_model(name));
    auto model = read_ok(bytes);
    const ir::Graph& g = model.graph;
    bool found = false;
    for (ir::TensorId id = 0; id < static_cast<ir::TensorId>(g.tensor_count()); ++id) {
      const ir::Tensor& t = g.tensor(id);
      if (t.name != "weights/sparse") continue;
      found = true;
      ASSERT_TRUE(t.is_const());
      EXPECT_EQ(t.data->bytes.size(),
                static_cast<size_t>(*ir::element_count(t.shape)) * ir::element_size(t.dtype));
      EXPECT_GT(g.created().used(), 0u);  // the dense copy counts against max_created_bytes
    }
    EXPECT_TRUE(found);
    // inspect says which tensors the file stored sparse.
    auto info = inspect(view(bytes));
    ASSERT_TRUE(info.ok());
    int sparse = 0;
    for (const TensorInfo& t : info->tensors) sparse += t.sparse && t.name == "weights/sparse";
    EXPECT_EQ(sparse, 1);
    EXPECT_THAT(info->to_json(), HasSubstr("\"sparse\": true"));
  }
}

// A [2,3] float32 constant `w` stored sparse (`sparsity` JSON, `values`), added
// to an input.
Bytes sparse_model(const std::string& sparsity, const std::vector<float>& values) {
  ModelJson m;
  int add = m.builtin("ADD", 0);
  int w =
      m.tensor("w", R"("shape": [2, 3], "type": "FLOAT32", "buffer": )" +
                        std::to_string(m.data(f32_bytes(values))) + ", \"sparsity\": " + sparsity);
  int x = m.f32("x", {2, 3});
  int y = m.f32("y", {2, 3});
  m.op(add, {w, x}, {y}, "AddOptions");
  m.io({x}, {y});
  return m.bytes();
}

// Rows DENSE, columns CSR: row 0 holds columns 0 and 2, row 1 column 1.
const char* kCsr = R"({ "traversal_order": [0, 1], "dim_metadata": [
    { "format": "DENSE", "dense_size": 2 },
    { "format": "SPARSE_CSR", "array_segments_type": "Uint8Vector",
      "array_segments": { "values": %SEGMENTS% },
      "array_indices_type": "Uint8Vector", "array_indices": { "values": %INDICES% } } ] })";

std::string csr(const std::string& segments, const std::string& indices) {
  std::string s = kCsr;
  s.replace(s.find("%SEGMENTS%"), 10, segments);
  s.replace(s.find("%INDICES%"), 9, indices);
  return s;
}

TEST(ReaderSparse, CsrPlacesEachValue) {
  auto model = read_ok(sparse_model(csr("[0, 2, 3]", "[0, 2, 1]"), {1.5f, 2.5f, 3.5f}));
  const ir::Tensor& w = model.graph.tensor(0);
  ASSERT_TRUE(w.is_const());
  auto v = w.data->as<float>();
  EXPECT_THAT(std::vector<float>(v.begin(), v.end()), ElementsAre(1.5f, 0, 2.5f, 0, 3.5f, 0));
}

// Every inconsistency is an invalid model naming the tensor, never a read
// outside the file's vectors.
TEST(ReaderSparse, InconsistentMetadataIsInvalidNamingTheTensor) {
  struct Case {
    std::string sparsity;
    size_t values;
    const char* says;
  };
  const std::vector<Case> cases = {
      {csr("[0, 2, 3]", "[0, 3, 1]"), 3, "index 3 outside its size 3"},
      {csr("[0, 2, 1]", "[0, 2, 1]"), 3, "segment [2, 1)"},
      {csr("[0, 2, 9]", "[0, 2, 1]"), 3, "outside its 3 indices"},
      {csr("[0, 2]", "[0, 2]"), 2, "segment bounds"},
      {csr("[0, 2, 3]", "[0, 2, 1]"), 4, "stores 4 values but its metadata places 3"},
      {csr("[0, 2, 3]", "[0, 2, 1]"), 2, "places more than the 2 values"},
      {R"({ "traversal_order": [0, 0], "dim_metadata": [{ "format": "DENSE", "dense_size": 2 },
           { "format": "DENSE", "dense_size": 3 }] })",
       6, "traversal_order entry 1"},
      {R"({ "traversal_order": [0, 1], "dim_metadata": [{ "format": "DENSE", "dense_size": 2 },
           { "format": "DENSE", "dense_size": 4 }] })",
       6, "DENSE of size 4 but its dimension has 3"},
      {R"({ "traversal_order": [0, 1, 2], "block_map": [1],
           "dim_metadata": [{ "format": "DENSE", "dense_size": 2 },
           { "format": "DENSE", "dense_size": 1 }, { "format": "DENSE", "dense_size": 2 }] })",
       6, "block size 2 does not divide dimension 1"},
      {R"({ "traversal_order": [0, 1] })", 6, "dim_metadata must hold 2 entries"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.says);
    auto r = tflite_reader::read(view(sparse_model(c.sparsity, std::vector<float>(c.values, 1.f))),
                                 Limits{}, ops::read_options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
    EXPECT_EQ(r.error().tensor, "w");
    EXPECT_THAT(r.error().message, HasSubstr(c.says));
  }
}

TEST(ReaderSparse, TheDenseFormCountsAgainstTheCreatedBytesLimit) {
  Limits limits;
  limits.max_created_bytes = 20;  // the dense [2,3] float32 needs 24
  auto r = tflite_reader::read(view(sparse_model(csr("[0, 2, 3]", "[0, 2, 1]"), {1, 2, 3})), limits,
                               ops::read_options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceLimit);
  EXPECT_THAT(r.error().message, HasSubstr("max_created_bytes"));
}

// A constant without a `shape` field: TFLite reads one element as a scalar.
TEST(Reader, ConstantWithoutAShapeIsAScalarOnlyWithOneElement) {
  auto model_with = [](const std::vector<float>& values) {
    ModelJson m;
    int add = m.builtin("ADD", 0);
    int c = m.tensor(
        "c", R"("type": "FLOAT32", "buffer": )" + std::to_string(m.data(f32_bytes(values))));
    int x = m.f32("x", {2, 3});
    int y = m.f32("y", {2, 3});
    m.op(add, {x, c}, {y}, "AddOptions");
    m.io({x}, {y});
    return m.bytes();
  };
  auto model = read_ok(model_with({1.5f}));
  const ir::Tensor& c = model.graph.tensor(0);
  EXPECT_TRUE(c.has_rank);
  EXPECT_EQ(c.rank(), 0u);
  auto r = tflite_reader::read(view(model_with({1.5f, 2.5f})), Limits{}, ops::read_options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_EQ(r.error().tensor, "c");
  EXPECT_THAT(r.error().message, HasSubstr("without a shape holds 8 bytes"));
}

TEST(Reader, ZeroElementTensorNobodyWritesIsAnEmptyConstant) {
  ModelJson m;
  int reshape = m.builtin("RESHAPE", 22);
  int x = m.f32("x", {1, 1});
  int shape = m.tensor(
      "shape", R"("shape": [0], "type": "INT32", "buffer": )" + std::to_string(m.buffer("{}")));
  int y = m.tensor("y", R"("shape": [], "type": "FLOAT32")");
  m.op(reshape, {x, shape}, {y});
  m.io({x}, {y});
  auto read = read_ok(m.bytes());
  ASSERT_TRUE(read.graph.tensor(shape).is_const());
  EXPECT_TRUE(read.graph.tensor(shape).data->bytes.empty());
  EXPECT_FALSE(read.graph.tensor(y).is_const());
  Diagnostics d;
  auto onnx = convert(view(m.bytes()), {}, d);
  EXPECT_TRUE(onnx.ok()) << onnx.error().message;
}

}  // namespace
}  // namespace lite2onnx
