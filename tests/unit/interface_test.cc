// The graph interface options (core/passes/interface.h): input shapes fixed
// before shape inference (input_shapes, batch), with every way to get them
// wrong, and graph inputs and outputs renamed (rename_inputs, rename_outputs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/convert.h"
#include "core/option_table.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::op_counts;
using testing::tflite_from_json;
using testing::view;
using Bytes = std::vector<std::byte>;

// x [-1, -1, 5, 3] -> ABS -> a; SHAPE(x) -> s; RESHAPE(a, s) -> y: the shape
// arithmetic folds only when x's shape is static.
Bytes dynamic_model() {
  return tflite_from_json(R"({ "version": 3,
    "operator_codes": [ { "deprecated_builtin_code": 101, "builtin_code": "ABS" },
                        { "deprecated_builtin_code": 77, "builtin_code": "SHAPE" },
                        { "deprecated_builtin_code": 22, "builtin_code": "RESHAPE" } ],
    "subgraphs": [ {
      "name": "main",
      "tensors": [
        { "name": "x", "shape": [1, 1, 5, 3], "shape_signature": [-1, -1, 5, 3], "type": "FLOAT32" },
        { "name": "a", "shape": [1, 1, 5, 3], "shape_signature": [-1, -1, 5, 3], "type": "FLOAT32" },
        { "name": "s", "shape": [4], "type": "INT32" },
        { "name": "y", "shape": [1, 1, 5, 3], "shape_signature": [-1, -1, 5, 3], "type": "FLOAT32" } ],
      "inputs": [0], "outputs": [3],
      "operators": [
        { "opcode_index": 0, "inputs": [0], "outputs": [1] },
        { "opcode_index": 1, "inputs": [0], "outputs": [2],
          "builtin_options_type": "ShapeOptions", "builtin_options": { "out_type": "INT32" } },
        { "opcode_index": 2, "inputs": [1, 2], "outputs": [3] } ] } ],
    "buffers": [ {} ] })");
}

std::vector<std::string> dims(const onnx::ValueInfoProto& v) {
  std::vector<std::string> out;
  for (const auto& d : v.type().tensor_type().shape().dim())
    out.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : "?");
  return out;
}

onnx::ModelProto convert_ok(const Bytes& model, const ConvertOptions& options) {
  Diagnostics diag;
  auto r = convert(view(model), options, diag);
  EXPECT_TRUE(r) << r.error().message;
  onnx::ModelProto m;
  if (r) {
    EXPECT_TRUE(m.ParseFromString(*r));
  }
  return m;
}

std::string convert_error(const Bytes& model, const ConvertOptions& options) {
  Diagnostics diag;
  auto r = convert(view(model), options, diag);
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidOption) << r.error().message;
  return r.error().message;
}

ConvertOptions with(std::initializer_list<std::pair<const char*, const char*>> texts) {
  ConvertOptions o;
  for (auto [name, text] : texts) EXPECT_TRUE(set_option(o, name, text)) << name << "=" << text;
  return o;
}

TEST(InputShapes, WithoutThemDynamicDimensionsStaySymbolicAndShapesAreComputed) {
  const auto m = convert_ok(dynamic_model(), {});
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre("?", "?", "5", "3"));
  EXPECT_EQ(op_counts(m)["Shape"], 1);
}

TEST(InputShapes, AFixedShapeIsStaticEverywhereAndTheShapeArithmeticFolds) {
  const auto m = convert_ok(dynamic_model(), with({{"input_shapes", "x=2,4,5,3"}}));
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre("2", "4", "5", "3"));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre("2", "4", "5", "3"));
  EXPECT_EQ(op_counts(m)["Shape"], 0);
}

TEST(InputShapes, BatchFixesTheFirstDimensionOnly) {
  const auto m = convert_ok(dynamic_model(), with({{"batch", "8"}}));
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre("8", "?", "5", "3"));
  // An input named by input_shapes keeps its own.
  const auto both =
      convert_ok(dynamic_model(), with({{"batch", "8"}, {"input_shapes", "x=1,2,5,3"}}));
  EXPECT_THAT(dims(both.graph().input(0)), ElementsAre("1", "2", "5", "3"));
}

TEST(InputShapes, BatchWithoutADynamicBatchWarns) {
  Bytes model = dynamic_model();
  Diagnostics diag;
  ConvertOptions o = with({{"batch", "2"}, {"input_shapes", "x=1,1,5,3"}});
  ASSERT_TRUE(convert(view(model), o, diag));
  EXPECT_THAT(diag.warnings, ::testing::Contains(HasSubstr("batch 2: no graph input has a "
                                                           "dynamic first dimension")));
}

TEST(InputShapes, WrongOverridesAreInvalidOptionsNamingTheInput) {
  const Bytes model = dynamic_model();
  EXPECT_EQ(convert_error(model, with({{"input_shapes", "z=1,1,5,3"}})),
            "input_shapes 'z=1,1,5,3': the model has no graph input named 'z' (its inputs: x)");
  EXPECT_EQ(convert_error(model, with({{"input_shapes", "x=1,5,3"}})),
            "input_shapes 'x=1,5,3': 'x' has rank 4 [-1,-1,5,3], the shape has 3 dimensions");
  EXPECT_EQ(convert_error(model, with({{"input_shapes", "x=1,1,6,3"}})),
            "input_shapes 'x=1,1,6,3': dimension 2 of 'x' [-1,-1,5,3] is static (5); only "
            "dynamic (-1) dimensions can be set");
  EXPECT_THAT(
      convert_error(model, with({{"input_shapes", "x=1,1,5,3"}, {"input_shapes", "x=2,1,5,3"}})),
      HasSubstr("'x' is given a shape twice"));
  // Hostile sizes: the product is checked before it can overflow.
  EXPECT_EQ(convert_error(model, with({{"input_shapes", "x=2147483647,2147483647,5,3"}})),
            "input_shapes 'x=2147483647,2147483647,5,3': [2147483647,2147483647,5,3] has 2^31 "
            "elements or more");
}

TEST(InputShapes, AStaticDimensionMayBeGivenItsOwnValue) {
  const auto m = convert_ok(dynamic_model(), with({{"input_shapes", "x=3,7,5,3"}}));
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre("3", "7", "5", "3"));
}

TEST(RenameInterface, InputsAndOutputsTakeTheNamesInOrder) {
  const auto m = convert_ok(
      dynamic_model(), with({{"rename_inputs", "image"}, {"rename_outputs", "probabilities"}}));
  EXPECT_EQ(m.graph().input(0).name(), "image");
  EXPECT_EQ(m.graph().output(0).name(), "probabilities");
  // Shapes and layouts name the input by either name.
  for (const char* name : {"x=2,4,5,3", "image=2,4,5,3"}) {
    const auto fixed =
        convert_ok(dynamic_model(), with({{"rename_inputs", "image"}, {"input_shapes", name}}));
    EXPECT_THAT(dims(fixed.graph().input(0)), ElementsAre("2", "4", "5", "3")) << name;
  }
  const auto nchw = convert_ok(dynamic_model(), with({{"rename_inputs", "image"},
                                                      {"io_layouts", "x=NCHW"},
                                                      {"input_shapes", "image=2,4,5,3"}}));
  EXPECT_THAT(dims(nchw.graph().input(0)), ElementsAre("2", "3", "4", "5"));
}

TEST(RenameInterface, WrongListsAreInvalidOptions) {
  const Bytes model = dynamic_model();
  EXPECT_EQ(convert_error(model, with({{"rename_inputs", "a,b"}})),
            "rename_inputs: 2 names for the model's 1 graph inputs");
  EXPECT_EQ(convert_error(model, with({{"rename_outputs", ","}})),
            "rename_outputs: 2 names for the model's 1 graph outputs");
  EXPECT_THAT(convert_error(model, with({{"rename_inputs", "same"}, {"rename_outputs", "same"}})),
              HasSubstr("two graph inputs or outputs would be named 'same'"));
}

}  // namespace
}  // namespace lite2onnx
