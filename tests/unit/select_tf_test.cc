// Select-TF ops with a builtin twin (core/ops/select_tf.h): the NodeDef's
// attributes become the builtin's, the node is read as the builtin, and what
// cannot be read is a named refusal (unknown TF op, an axis computed at run
// time) or an invalid model (a malformed NodeDef, an attribute of the wrong
// kind). The numbers are checked by the numeric suite (tests/models
// select_tf_*, against the builtin twin the harness writes).
#include <flatbuffers/flexbuffers.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/convert.h"
#include "core/ir/builtins.h"
#include "core/ops/node_def.h"
#include "core/ops/registry.h"
#include "core/ops/select_tf.h"
#include "model_builder.h"

namespace lite2onnx {
namespace {

using ::testing::HasSubstr;
using testing::op_counts;
using testing::view;

// ---- a NodeDef written by hand (protobuf wire format) ----------------------

void varint(std::string& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(v ? b | 0x80 : b));
  } while (v);
}
void field(std::string& out, uint32_t number, const std::string& bytes) {
  varint(out, number << 3 | 2);
  varint(out, bytes.size());
  out += bytes;
}
void field(std::string& out, uint32_t number, uint64_t v) {
  varint(out, number << 3);
  varint(out, v);
}

// AttrValue forms.
std::string attr_i(int64_t v) {
  std::string s;
  field(s, 3, static_cast<uint64_t>(v));
  return s;
}
std::string attr_b(bool v) {
  std::string s;
  field(s, 5, uint64_t{v});
  return s;
}
std::string attr_type(uint64_t v) {
  std::string s;
  field(s, 6, v);
  return s;
}
std::string attr_f(float v) {
  std::string s;
  varint(s, 4 << 3 | 5);
  char b[4];
  std::memcpy(b, &v, 4);
  s.append(b, 4);
  return s;
}
std::string attr_list_i(const std::vector<int64_t>& v) {
  std::string packed, list, s;
  for (int64_t x : v) varint(packed, static_cast<uint64_t>(x));
  field(list, 3, packed);
  field(s, 1, list);
  return s;
}

std::string node_def(const std::string& op,
                     const std::vector<std::pair<std::string, std::string>>& attrs) {
  std::string def;
  field(def, 2, op);
  for (const auto& [k, v] : attrs) {
    std::string entry;
    field(entry, 1, k);
    field(entry, 2, v);
    field(def, 5, entry);
  }
  return def;
}

// The custom options: FlexBuffer [op name, NodeDef].
std::vector<uint8_t> flex_options(const std::string& op, const std::string& def) {
  flexbuffers::Builder b;
  b.Vector([&] {
    b.String(op);
    b.String(def);
  });
  b.Finish();
  return b.GetBuffer();
}

Result<ir::Attributes> read(const std::string& op,
                            const std::vector<std::pair<std::string, std::string>>& attrs) {
  ir::Attributes a;
  const auto bytes = flex_options(op, node_def(op, attrs));
  if (auto st = ops::read_select_tf_options(bytes, a); !st) return st.take_error();
  return a;
}

// ---- the table ---------------------------------------------------------------

TEST(SelectTf, TheTableIsSortedAndEveryTwinIsSupported) {
  const auto twins = ops::select_tf_twins();
  ASSERT_GT(twins.size(), 40u);
  for (size_t i = 0; i < twins.size(); ++i) {
    SCOPED_TRACE(twins[i].tf_op);
    if (i > 0) {
      EXPECT_LT(std::string(twins[i - 1].tf_op), std::string(twins[i].tf_op));
    }
    EXPECT_EQ(ops::find_select_tf_twin(twins[i].tf_op), &twins[i]);
    EXPECT_TRUE(ops::lookup(twins[i].builtin).supported());
    // In the custom-op table (so in the support matrix), under "Flex" + name.
    EXPECT_TRUE(ops::lookup_custom(std::string("Flex") + twins[i].tf_op).supported());
  }
  EXPECT_EQ(ops::find_select_tf_twin("Softplus"), nullptr);
  EXPECT_EQ(ops::find_select_tf_twin(""), nullptr);
  EXPECT_EQ(ops::find_select_tf_twin("ZerosLikeX"), nullptr);
}

// ---- the NodeDef's attributes -------------------------------------------------

TEST(SelectTf, StridedSliceMasksBecomeItsOptions) {
  auto a = read("StridedSlice", {{"T", attr_type(1)},
                                 {"Index", attr_type(3)},
                                 {"begin_mask", attr_i(5)},
                                 {"end_mask", attr_i(2)},
                                 {"ellipsis_mask", attr_i(0)},
                                 {"new_axis_mask", attr_i(8)},
                                 {"shrink_axis_mask", attr_i(16)}});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->get_string("tf_op"), "StridedSlice");
  EXPECT_EQ(a->get_int("begin_mask"), 5);
  EXPECT_EQ(a->get_int("end_mask"), 2);
  EXPECT_EQ(a->get_int("ellipsis_mask"), 0);
  EXPECT_EQ(a->get_int("new_axis_mask"), 8);
  EXPECT_EQ(a->get_int("shrink_axis_mask"), 16);
  EXPECT_TRUE(a->has("offset"));  // the builtin's default, from its own reader
  EXPECT_EQ(a->get_int("offset"), 0);
}

TEST(SelectTf, AbsentAttributesTakeTheBuiltinsDefaults) {
  auto add = read("AddV2", {{"T", attr_type(1)}});
  ASSERT_TRUE(add.ok()) << add.error().message;
  EXPECT_EQ(add->get_string("fused_activation_function"), "NONE");
  auto softmax = read("Softmax", {});
  ASSERT_TRUE(softmax.ok()) << softmax.error().message;
  EXPECT_FLOAT_EQ(softmax->get_float("beta"), 1.0f);
  auto sum = read("Sum", {});
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  EXPECT_EQ(sum->get_int("keep_dims"), 0);
}

TEST(SelectTf, EveryKindOfAttributeIsMapped) {
  auto pack = read("Pack", {{"N", attr_i(3)}, {"axis", attr_i(-1)}});
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  EXPECT_EQ(pack->get_int("values_count"), 3);
  EXPECT_EQ(pack->get_int("axis"), -1);
  EXPECT_EQ(pack->get_int("select_tf_count"), 3);
  auto mean = read("Mean", {{"keep_dims", attr_b(true)}});
  ASSERT_TRUE(mean.ok()) << mean.error().message;
  EXPECT_EQ(mean->get_int("keep_dims"), 1);
  auto shape = read("Shape", {{"out_type", attr_type(9)}});  // DT_INT64
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_EQ(shape->get_int("out_type"), 4);  // TensorType INT64
  auto squeeze = read("Squeeze", {{"squeeze_dims", attr_list_i({0, -2})}});
  ASSERT_TRUE(squeeze.ok()) << squeeze.error().message;
  EXPECT_EQ(squeeze->get_ints("squeeze_dims"), (std::vector<int64_t>{0, -2}));
  auto leaky = read("LeakyRelu", {{"alpha", attr_f(0.3f)}});
  ASSERT_TRUE(leaky.ok()) << leaky.error().message;
  EXPECT_FLOAT_EQ(leaky->get_float("alpha"), 0.3f);
  auto bmm = read("BatchMatMulV2", {{"adj_x", attr_b(false)}, {"adj_y", attr_b(true)}});
  ASSERT_TRUE(bmm.ok()) << bmm.error().message;
  EXPECT_EQ(bmm->get_int("adj_x"), 0);
  EXPECT_EQ(bmm->get_int("adj_y"), 1);
  auto split = read("SplitV", {{"num_split", attr_i(3)}});
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(split->get_int("num_splits"), 3);
}

TEST(SelectTf, AttributesOfTheWrongKindOrRangeAreInvalid) {
  struct Case {
    std::string op;
    std::vector<std::pair<std::string, std::string>> attrs;
    std::string named;  // the attribute the error names
  };
  const std::vector<Case> cases = {
      {"StridedSlice", {{"begin_mask", attr_b(true)}}, "begin_mask"},          // a bool, not an int
      {"StridedSlice", {{"end_mask", attr_i(int64_t{1} << 40)}}, "end_mask"},  // beyond int32
      {"StridedSlice", {{"shrink_axis_mask", attr_i(1) + attr_b(true)}}, "shrink_axis_mask"},
      {"Mean", {{"keep_dims", attr_i(1)}}, "keep_dims"},
      {"Shape", {{"out_type", attr_type(8)}}, "out_type"},  // DT_COMPLEX64: no TFLite type
      {"Squeeze", {{"squeeze_dims", attr_i(1)}}, "squeeze_dims"},
      {"Squeeze", {{"squeeze_dims", attr_list_i({int64_t{1} << 33})}}, "squeeze_dims"},
      {"LeakyRelu", {{"alpha", attr_f(std::numeric_limits<float>::infinity())}}, "alpha"},
      {"Pack", {{"axis", attr_i(0)}}, "N"},  // N missing
  };
  for (const auto& [op, attrs, named] : cases) {
    SCOPED_TRACE(op + " " + attrs[0].first);
    auto a = read(op, attrs);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidModel);
    EXPECT_THAT(a.error().message, HasSubstr("TF op " + op));
    EXPECT_THAT(a.error().message, HasSubstr("'" + named + "'"));
  }
}

TEST(SelectTf, MalformedNodeDefsAreInvalidModels) {
  const std::string good = node_def("AddV2", {{"T", attr_type(1)}});
  std::vector<std::string> defs;
  // Every cut inside a field (the one after the op field leaves a valid NodeDef).
  const size_t op_field = 2 + std::string("AddV2").size();
  for (size_t cut = 1; cut < good.size(); ++cut)
    if (cut != op_field) defs.push_back(good.substr(0, cut));
  defs.push_back(good + "\x2a\xff");                       // field 5 with a length past the end
  defs.push_back(std::string("\x0b\x00", 2));              // a group (wire type 3)
  defs.push_back(std::string("\x2a\x03\x12\x01\xff", 5));  // AttrValue tag 0xff, cut
  for (const std::string& def : defs) {
    ir::Attributes a;
    const auto bytes = flex_options("AddV2", def);
    auto st = ops::read_select_tf_options(bytes, a);
    ASSERT_FALSE(st.ok()) << "NodeDef of " << def.size() << " bytes";
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidModel);
    EXPECT_THAT(st.error().message, HasSubstr("select-TF op options"));
  }
  // No FlexBuffer vector at all.
  ir::Attributes a;
  const std::vector<uint8_t> junk = {1, 2, 3, 4};
  auto st = ops::read_select_tf_options(junk, a);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidModel);
}

// ---- whole models -------------------------------------------------------------

// x [2, 3, 5] -> FlexAddV2(x, c) -> FlexStridedSlice(begin, end, strides with
// masks) -> FlexConcatV2(s, s, axis 1) -> y, every dimension a distinct size.
struct FlexModel {
  std::string add_def = node_def("AddV2", {{"T", attr_type(1)}});
  std::string add_name = "AddV2";
  bool runtime_axis = false;
  std::string concat_code = "FlexConcatV2";

  std::string json() const {
    auto bytes = [](const std::vector<uint8_t>& v) { return nlohmann::json(v).dump(); };
    const std::string slice = node_def("StridedSlice", {{"begin_mask", attr_i(1)},
                                                        {"end_mask", attr_i(0)},
                                                        {"shrink_axis_mask", attr_i(0)},
                                                        {"T", attr_type(1)}});
    const std::string concat =
        node_def("ConcatV2", {{"N", attr_i(2)}, {"T", attr_type(1)}, {"Tidx", attr_type(3)}});
    const std::string axis = runtime_axis ? R"("buffer": 0)" : R"("buffer": 5)";
    return R"({
    "version": 3,
    "operator_codes": [
      {"deprecated_builtin_code": 32, "builtin_code": "CUSTOM", "custom_code": "FlexAddV2"},
      {"deprecated_builtin_code": 32, "builtin_code": "CUSTOM", "custom_code": "FlexStridedSlice"},
      {"deprecated_builtin_code": 32, "builtin_code": "CUSTOM", "custom_code": ")" +
           concat_code + R"("}],
    "subgraphs": [{
      "tensors": [
        {"name": "x", "shape": [2, 3, 5], "buffer": 0},
        {"name": "c", "shape": [5], "buffer": 1},
        {"name": "sum", "shape": [2, 3, 5], "buffer": 0},
        {"name": "begin", "shape": [3], "type": "INT32", "buffer": 2},
        {"name": "end", "shape": [3], "type": "INT32", "buffer": 3},
        {"name": "strides", "shape": [3], "type": "INT32", "buffer": 4},
        {"name": "sliced", "shape": [2, 2, 4], "buffer": 0},
        {"name": "axis", "shape": [], "type": "INT32", )" +
           axis + R"(},
        {"name": "y", "shape": [2, 4, 4], "buffer": 0}],
      "inputs": )" +
           std::string(runtime_axis ? "[0, 7]" : "[0]") + R"(, "outputs": [8],
      "operators": [
        {"opcode_index": 0, "inputs": [0, 1], "outputs": [2], "custom_options": )" +
           bytes(flex_options(add_name, add_def)) + R"(},
        {"opcode_index": 1, "inputs": [2, 3, 4, 5], "outputs": [6], "custom_options": )" +
           bytes(flex_options("StridedSlice", slice)) + R"(},
        {"opcode_index": 2, "inputs": [6, 6, 7], "outputs": [8], "custom_options": )" +
           bytes(flex_options("ConcatV2", concat)) + R"(}]}],
    "buffers": [{}, {"data": )" +
           testing::f32_bytes({1, 2, 3, 4, 5}) + R"(}, {"data": )" + testing::i32_bytes({1, 1, 0}) +
           R"(}, {"data": )" + testing::i32_bytes({0, 3, 4}) + R"(}, {"data": )" +
           testing::i32_bytes({1, 1, 1}) + R"(}, {"data": )" + testing::i32_bytes({1}) + R"(}]})";
  }
};

Result<std::string> convert_json(const std::string& json) {
  ConvertOptions o;
  Diagnostics d;
  return convert(view(testing::tflite_from_json(json)), o, d);
}

TEST(SelectTf, FlexOpsAreConvertedAsTheirBuiltinTwins) {
  const std::string json = FlexModel{}.json();
  auto r = convert_json(json);
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  auto ops = op_counts(m);
  EXPECT_EQ(ops["Add"], 1);
  EXPECT_EQ(ops["Slice"], 1);
  EXPECT_EQ(ops["Concat"], 1);
  // Traceable names: the builtin's, at the TFLite op index.
  bool named = false;
  for (const auto& n : m.graph().node()) named = named || n.name().starts_with("Add_0");
  EXPECT_TRUE(named);
  ASSERT_EQ(m.graph().output(0).type().tensor_type().shape().dim_size(), 3);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 4);

  // inspect() names both: the file's op and the builtin it is read as.
  auto info = inspect(view(testing::tflite_from_json(json)));
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_EQ(info->ops.size(), 3u);
  EXPECT_EQ(info->ops[0].op, "FlexAddV2 (as ADD)");
  EXPECT_EQ(info->ops[1].op, "FlexStridedSlice (as STRIDED_SLICE)");
  EXPECT_EQ(info->ops[2].op, "FlexConcatV2 (as CONCATENATION)");
  EXPECT_TRUE(info->ops[2].supported);
}

TEST(SelectTf, AnUnknownTfOpIsUnsupportedNamingIt) {
  FlexModel f;
  f.concat_code = "FlexMatrixInverse";  // no twin: its options are not read
  auto r = convert_json(f.json());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  ASSERT_EQ(r.error().unsupported.size(), 1u) << r.error().message;
  EXPECT_EQ(r.error().unsupported[0].op, "FlexMatrixInverse");
  EXPECT_EQ(r.error().unsupported[0].reason_code, "select_tf_op");
  EXPECT_THAT(r.error().unsupported[0].reason, HasSubstr("TensorFlow op 'MatrixInverse'"));
}

// Softplus has no builtin twin: its own entry, ONNX Softplus.
TEST(SelectTf, SoftplusBecomesOnnxSoftplus) {
  const std::string def = node_def("Softplus", {{"T", attr_type(1)}});
  auto model = [&](const std::string& named) {
    return R"({
    "version": 3,
    "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                        "custom_code": "FlexSoftplus"}],
    "subgraphs": [{
      "tensors": [{"name": "x", "shape": [2, 3, 5], "buffer": 0},
                  {"name": "y", "shape": [2, 3, 5], "buffer": 0}],
      "inputs": [0], "outputs": [1],
      "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1], "custom_options": )" +
           nlohmann::json(flex_options(named, def)).dump() + R"(}]}],
    "buffers": [{}]})";
  };
  auto r = convert_json(model("Softplus"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(*r));
  EXPECT_EQ(op_counts(m)["Softplus"], 1);
  auto other = convert_json(model("Exp"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kInvalidModel);
  EXPECT_THAT(other.error().message, HasSubstr("'Exp', not Softplus"));
}

TEST(SelectTf, AnAxisComputedAtRunTimeIsNamed) {
  FlexModel f;
  f.runtime_axis = true;
  auto r = convert_json(f.json());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  ASSERT_EQ(r.error().unsupported.size(), 1u) << r.error().message;
  EXPECT_EQ(r.error().unsupported[0].op, "FlexConcatV2");
  EXPECT_THAT(r.error().unsupported[0].reason, HasSubstr("axis operand (input 2)"));
}

TEST(SelectTf, OptionsOfAnotherOpAreAnInvalidModel) {
  FlexModel f;
  f.add_name = "Sub";  // custom code FlexAddV2, options [Sub, NodeDef]
  auto r = convert_json(f.json());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidModel);
  EXPECT_THAT(r.error().message, HasSubstr("name TF op 'Sub', not AddV2"));
}

TEST(SelectTf, EveryByteOfTheOptionsFlippedIsAClearAnswer) {
  // Each byte of the first op's options (FlexBuffer + NodeDef) set to 0xFF
  // in turn: a conversion or an error, never a crash.
  nlohmann::json j = nlohmann::json::parse(FlexModel{}.json());
  auto& options = j["subgraphs"][0]["operators"][1]["custom_options"];
  const size_t n = options.size();
  int errors = 0;
  for (size_t i = 0; i < n; ++i) {
    nlohmann::json k = j;
    k["subgraphs"][0]["operators"][1]["custom_options"][i] = 0xFF;
    auto r = convert_json(k.dump());
    if (!r.ok()) {
      ++errors;
      EXPECT_NE(r.error().code, ErrorCode::kInternal) << "byte " << i << ": " << r.error().message;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace lite2onnx
