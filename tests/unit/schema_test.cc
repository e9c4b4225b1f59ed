// core/tflite/schema.fbs against real files. Every model of the corpus and
// every generated test model goes through flatc's JSON round trip (what
// `flatc -t --strict-json --raw-binary --defaults-json` and then `flatc -b` do,
// in process, with the same flatbuffers library), and a walk of the schema's
// reflection data checks that
//  - the original holds no field, enum value or union member that the schema
//    does not declare (a table whose vtable has more slots than the schema has
//    fields would be read without them): the schema covers the whole file;
//  - every field the schema declares reads the same from the original and from
//    the file rebuilt from the JSON (floats within the 6 decimals flatc's text
//    keeps): the JSON carries every field.
// Then fields of notable real models (SignatureDefs, subgraph indices in WHILE
// and CALL_ONCE options, resource variables, metadata) and of the formats_*
// test models (sparsity, FlexBuffer custom options, ...) are read through the
// generated C++ API the core uses.
#include <flatbuffers/flexbuffers.h>
#include <flatbuffers/idl.h>
#include <flatbuffers/reflection.h>
#include <flatbuffers/util.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_builder.h"
#include "schema_generated.h"

namespace lite2onnx {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

Bytes load(const std::string& path) {
  const auto b = testing::read_file(path);
  return Bytes(reinterpret_cast<const uint8_t*>(b.data()),
               reinterpret_cast<const uint8_t*>(b.data()) + b.size());
}

std::string schema_text() {
  std::string text;
  if (!flatbuffers::LoadFile(LITE2ONNX_SCHEMA, false, &text))
    throw std::runtime_error("cannot read " LITE2ONNX_SCHEMA);
  return text;
}

// The reflection data (.bfbs) of a schema.
Bytes reflection_of(const std::string& schema) {
  flatbuffers::Parser p;
  if (!p.Parse(schema.c_str())) throw std::runtime_error("schema: " + p.error_);
  p.Serialize();
  return Bytes(p.builder_.GetBufferPointer(), p.builder_.GetBufferPointer() + p.builder_.GetSize());
}

// flatc -t --strict-json --raw-binary --defaults-json, then flatc -b.
Bytes json_round_trip(const std::string& schema, const Bytes& model, std::string* json) {
  flatbuffers::IDLOptions opts;
  opts.strict_json = true;
  opts.output_default_scalars_in_json = true;
  flatbuffers::Parser text(opts);
  if (!text.Parse(schema.c_str())) throw std::runtime_error("schema: " + text.error_);
  if (!flatbuffers::GenerateText(text, model.data(), json))
    throw std::runtime_error("flatc -t failed");
  flatbuffers::Parser binary;
  if (!binary.Parse(schema.c_str()) || !binary.Parse(json->c_str()))
    throw std::runtime_error("flatc -b failed: " + binary.error_);
  return Bytes(binary.builder_.GetBufferPointer(),
               binary.builder_.GetBufferPointer() + binary.builder_.GetSize());
}

// Walks two files of one schema side by side (see the top of the file).
class Walk {
 public:
  explicit Walk(const reflection::Schema& schema) : schema_(schema) {}

  std::vector<std::string> compare(const Bytes& a, const Bytes& b) {
    table(*schema_.root_table(), flatbuffers::GetAnyRoot(a.data()),
          flatbuffers::GetAnyRoot(b.data()), schema_.root_table()->name()->str());
    return problems_;
  }
  size_t tables() const { return tables_; }

 private:
  void problem(const std::string& p) {
    if (problems_.size() < 20) problems_.push_back(p);
  }

  // A slot of the vtable beyond the declared fields that holds a value.
  void known_fields(const reflection::Object& obj, const flatbuffers::Table& t,
                    const std::string& at) {
    const uint8_t* vt = t.GetVTable();
    const auto vsize = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vt);
    size_t declared = 0;
    for (const reflection::Field* f : *obj.fields())
      declared = std::max<size_t>(declared, f->id() + 1u);
    for (size_t slot = declared; 4 + 2 * slot + 2 <= vsize; ++slot)
      if (flatbuffers::ReadScalar<flatbuffers::voffset_t>(vt + 4 + 2 * slot) != 0)
        problem(at + ": field " + std::to_string(slot) + " of " + obj.name()->str() +
                " is not in the schema");
  }

  void known_value(const reflection::Type& type, int64_t v, const std::string& at) {
    if (type.index() < 0) return;  // not an enum
    const reflection::Enum* e = schema_.enums()->Get(type.index());
    if (!e->values()->LookupByKey(v))
      problem(at + ": value " + std::to_string(v) + " is not in enum " + e->name()->str());
  }

  static bool same_float(double a, double b, reflection::BaseType t) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (a == b) return true;
    if (std::isinf(a) || std::isinf(b)) return false;
    // flatc prints floats with 6 decimals, doubles with 12 (fixed notation).
    const bool f32 = t == reflection::Float;
    return std::abs(a - b) <= (f32 ? 5e-7 : 5e-13) + std::abs(a) * (f32 ? 2.4e-7 : 4.5e-16);
  }

  void table(const reflection::Object& obj, const flatbuffers::Table* a,
             const flatbuffers::Table* b, const std::string& at) {
    if (!a || !b) {
      if (a || b) problem(at + ": present in one file only");
      return;
    }
    ++tables_;
    known_fields(obj, *a, at);
    for (const reflection::Field* f : *obj.fields()) {
      const std::string path = at + "." + f->name()->str();
      const reflection::BaseType type = f->type()->base_type();
      if (flatbuffers::IsScalar(type)) {
        known_value(*f->type(), flatbuffers::GetAnyFieldI(*a, *f), path);
        if (f->deprecated()) continue;  // flatc leaves deprecated fields out of the JSON
        if (flatbuffers::IsFloat(type)
                ? !same_float(flatbuffers::GetAnyFieldF(*a, *f), flatbuffers::GetAnyFieldF(*b, *f),
                              type)
                : flatbuffers::GetAnyFieldI(*a, *f) != flatbuffers::GetAnyFieldI(*b, *f))
          problem(path + ": " + flatbuffers::GetAnyFieldS(*a, *f, nullptr) + " became " +
                  flatbuffers::GetAnyFieldS(*b, *f, nullptr));
      } else if (f->deprecated()) {
        continue;
      } else if (type == reflection::String) {
        const auto* sa = flatbuffers::GetFieldS(*a, *f);
        const auto* sb = flatbuffers::GetFieldS(*b, *f);
        if (!sa != !sb || (sa && sa->str() != sb->str())) problem(path + ": string differs");
      } else if (type == reflection::Obj) {
        const reflection::Object* o = schema_.objects()->Get(f->type()->index());
        if (o->is_struct()) {
          problem(path + ": structs are not compared");  // TFLite has none
        } else {
          table(*o, flatbuffers::GetFieldT(*a, *f), flatbuffers::GetFieldT(*b, *f), path);
        }
      } else if (type == reflection::Union) {
        const flatbuffers::Table* ua = flatbuffers::GetFieldT(*a, *f);
        if (!ua && !flatbuffers::GetFieldT(*b, *f)) continue;
        const reflection::Field* tf =
            obj.fields()->LookupByKey((f->name()->str() + "_type").c_str());
        const auto* member = schema_.enums()
                                 ->Get(f->type()->index())
                                 ->values()
                                 ->LookupByKey(flatbuffers::GetAnyFieldI(*a, *tf));
        if (!member || !member->union_type()) {
          problem(path + ": no union member");
          continue;
        }
        table(*schema_.objects()->Get(member->union_type()->index()), ua,
              flatbuffers::GetFieldT(*b, *f), path + "<" + member->name()->str() + ">");
      } else if (type == reflection::Vector) {
        vector(*f, *a, *b, path);
      } else {
        problem(path + ": unexpected field type");
      }
    }
  }

  void vector(const reflection::Field& f, const flatbuffers::Table& a, const flatbuffers::Table& b,
              const std::string& at) {
    const flatbuffers::VectorOfAny* va = flatbuffers::GetFieldAnyV(a, f);
    const flatbuffers::VectorOfAny* vb = flatbuffers::GetFieldAnyV(b, f);
    if (!va || !vb) {
      if (va || vb) problem(at + ": present in one file only");
      return;
    }
    if (va->size() != vb->size()) {
      problem(at + ": " + std::to_string(va->size()) + " elements became " +
              std::to_string(vb->size()));
      return;
    }
    const reflection::BaseType elem = f.type()->element();
    if (flatbuffers::IsScalar(elem)) {
      const bool is_enum = f.type()->index() >= 0;
      if (!flatbuffers::IsFloat(elem) && !is_enum) {
        if (std::memcmp(va->Data(), vb->Data(), va->size() * flatbuffers::GetTypeSize(elem)) != 0)
          problem(at + ": elements differ");
        return;
      }
      for (flatbuffers::uoffset_t i = 0; i < va->size(); ++i) {
        const std::string path = at + "[" + std::to_string(i) + "]";
        if (is_enum) known_value(*f.type(), flatbuffers::GetAnyVectorElemI(va, elem, i), path);
        if (flatbuffers::IsFloat(elem)
                ? !same_float(flatbuffers::GetAnyVectorElemF(va, elem, i),
                              flatbuffers::GetAnyVectorElemF(vb, elem, i), elem)
                : flatbuffers::GetAnyVectorElemI(va, elem, i) !=
                      flatbuffers::GetAnyVectorElemI(vb, elem, i))
          problem(path + ": " + flatbuffers::GetAnyVectorElemS(va, elem, i) + " became " +
                  flatbuffers::GetAnyVectorElemS(vb, elem, i));
      }
    } else if (elem == reflection::String) {
      const auto* sa =
          reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>*>(
              va);
      const auto* sb =
          reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>*>(
              vb);
      for (flatbuffers::uoffset_t i = 0; i < sa->size(); ++i)
        if (sa->Get(i)->str() != sb->Get(i)->str())
          problem(at + "[" + std::to_string(i) + "]: string differs");
    } else if (elem == reflection::Obj && !schema_.objects()->Get(f.type()->index())->is_struct()) {
      const reflection::Object& o = *schema_.objects()->Get(f.type()->index());
      const auto* ta =
          reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>*>(va);
      const auto* tb =
          reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>*>(vb);
      for (flatbuffers::uoffset_t i = 0; i < ta->size(); ++i)
        table(o, ta->Get(i), tb->Get(i), at + "[" + std::to_string(i) + "]");
    } else {
      problem(at + ": unexpected vector element type");  // TFLite has none
    }
  }

  const reflection::Schema& schema_;
  std::vector<std::string> problems_;
  size_t tables_ = 0;
};

// Problems of the JSON round trip of `model` under `schema` (empty: none).
std::vector<std::string> round_trip_problems(const std::string& schema, const Bytes& model,
                                             size_t* tables = nullptr) {
  std::string json;
  const Bytes rebuilt = json_round_trip(schema, model, &json);
  const Bytes bfbs = reflection_of(schema);
  Walk walk(*reflection::GetSchema(bfbs.data()));
  auto problems = walk.compare(model, rebuilt);
  if (tables) *tables = walk.tables();
  return problems;
}

std::vector<std::string> models_below(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".tflite") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Models up to 1 MiB go through the JSON round trip; larger ones (their
// weights would take seconds as JSON text) are walked against themselves, which
// still finds every field, enum value and union member the schema lacks.
void expect_round_trips(const std::vector<std::string>& models) {
  const std::string schema = schema_text();
  const Bytes bfbs = reflection_of(schema);
  for (const auto& path : models) {
    SCOPED_TRACE(path);
    const Bytes model = load(path);
    flatbuffers::Verifier v(model.data(), model.size());
    ASSERT_TRUE(tflite::VerifyModelBuffer(v));
    size_t tables = 0;
    std::vector<std::string> problems;
    if (model.size() <= (1u << 20)) {
      problems = round_trip_problems(schema, model, &tables);
    } else {
      Walk walk(*reflection::GetSchema(bfbs.data()));
      problems = walk.compare(model, model);
      tables = walk.tables();
    }
    EXPECT_THAT(problems, ::testing::IsEmpty());
    EXPECT_GT(tables, 3u);  // the walk saw the model
  }
}

const tflite::Model* model_of(const Bytes& bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  if (!tflite::VerifyModelBuffer(v)) throw std::runtime_error("not a verified model");
  return tflite::GetModel(bytes.data());
}

std::vector<std::string> metadata_names(const tflite::Model& m) {
  std::vector<std::string> out;
  if (m.metadata())
    for (const auto* e : *m.metadata()) out.push_back(e->name()->str());
  return out;
}

// Ops of subgraph `s` with builtin `op`.
std::vector<const tflite::Operator*> ops_of(const tflite::Model& m, size_t s,
                                            tflite::BuiltinOperator op) {
  std::vector<const tflite::Operator*> out;
  for (const auto* o : *m.subgraphs()->Get(static_cast<flatbuffers::uoffset_t>(s))->operators())
    if (m.operator_codes()->Get(o->opcode_index())->builtin_code() == op) out.push_back(o);
  return out;
}

// ---- the checks can fail -------------------------------------------------------------

TEST(SchemaRoundTrip, AFieldTheSchemaLacksIsFound) {
  if (!fs::is_directory(testing::corpus_dir())) GTEST_SKIP() << "no corpus";
  // SignatureDef without its last three fields: the toy model's signatures
  // hold fields the shortened schema does not declare.
  std::string schema = schema_text();
  const std::string fields = "  signature_key:string;\n";
  const auto at = schema.find(fields);
  ASSERT_NE(at, std::string::npos);
  schema.erase(at, schema.find("}", at) - at);
  const Bytes model = load(testing::corpus_dir() +
                           "/ai-edge-quantizer/toy_model_with_kv_cache_multi_signature.tflite");
  EXPECT_THAT(
      round_trip_problems(schema, model),
      ::testing::Contains(::testing::HasSubstr("of tflite.SignatureDef is not in the schema")));
}

TEST(SchemaRoundTrip, AChangedValueIsFound) {
  const std::string schema = schema_text();
  const Bytes bfbs = reflection_of(schema);
  const Bytes a = load(testing::op_model("formats_per_axis_quantization"));
  Bytes b = a;
  // One scale of the per-axis quantization: 0.125 -> 0.126.
  const float was = 0.125f, now = 0.126f;
  auto it = std::search(b.begin(), b.end(), reinterpret_cast<const uint8_t*>(&was),
                        reinterpret_cast<const uint8_t*>(&was) + 4);
  ASSERT_NE(it, b.end());
  std::memcpy(&*it, &now, 4);
  Walk walk(*reflection::GetSchema(bfbs.data()));
  EXPECT_THAT(walk.compare(a, b), ::testing::Contains(::testing::HasSubstr("scale[2]")));
}

// ---- every model -----------------------------------------------------------------------

TEST(SchemaRoundTrip, EveryCorpusModel) {
  const auto models = models_below(testing::corpus_dir());
  if (models.empty()) GTEST_SKIP() << "no corpus at " << testing::corpus_dir();
  expect_round_trips(models);
}

TEST(SchemaRoundTrip, EveryTestModel) {
  const auto models = models_below(LITE2ONNX_TEST_MODELS_DIR);
  ASSERT_GT(models.size(), 300u);
  expect_round_trips(models);
}

// ---- fields of real models ---------------------------------------------------------------

class CorpusModel : public ::testing::Test {
 protected:
  const tflite::Model& open(const std::string& name) {
    const std::string path = testing::corpus_dir() + "/" + name;
    if (!fs::exists(path)) throw std::runtime_error("missing corpus model " + path);
    bytes_ = load(path);
    return *model_of(bytes_);
  }
  Bytes bytes_;
};

TEST_F(CorpusModel, SignatureDefsOfTwoSubgraphs) {
  if (!fs::is_directory(testing::corpus_dir())) GTEST_SKIP() << "no corpus";
  const auto& m = open("ai-edge-quantizer/toy_model_with_kv_cache_multi_signature.tflite");
  ASSERT_EQ(m.subgraphs()->size(), 2u);
  ASSERT_TRUE(m.signature_defs());
  ASSERT_EQ(m.signature_defs()->size(), 2u);
  for (flatbuffers::uoffset_t i = 0; i < 2; ++i) {
    const auto* s = m.signature_defs()->Get(i);
    EXPECT_EQ(s->signature_key()->str(), "signature_" + std::to_string(i + 1));
    EXPECT_EQ(s->subgraph_index(), i);
    std::vector<std::string> inputs, outputs;
    for (const auto* t : *s->inputs()) {
      inputs.push_back(t->name()->str());
      EXPECT_LT(t->tensor_index(), m.subgraphs()->Get(i)->tensors()->size());
    }
    for (const auto* t : *s->outputs()) outputs.push_back(t->name()->str());
    EXPECT_THAT(inputs, ElementsAre("cache_0", "cache_1", "positions", "tokens"));
    EXPECT_THAT(outputs, ElementsAre("output_0", "output_1_0", "output_1_1"));
  }
  EXPECT_THAT(metadata_names(m), ElementsAre("min_runtime_version", "CONVERSION_METADATA"));
}

TEST_F(CorpusModel, NestedWhileLoopsNameTheirSubgraphs) {
  if (!fs::is_directory(testing::corpus_dir())) GTEST_SKIP() << "no corpus";
  const auto& m = open("LiteRT/nested_while.tflite");
  ASSERT_EQ(m.subgraphs()->size(), 5u);
  const auto outer = ops_of(m, 0, tflite::BuiltinOperator::WHILE);
  ASSERT_EQ(outer.size(), 1u);
  const auto* w = outer[0]->builtin_options_as_WhileOptions();
  ASSERT_TRUE(w);
  EXPECT_EQ(m.subgraphs()->Get(w->cond_subgraph_index())->name()->str(), "while_cond");
  EXPECT_EQ(m.subgraphs()->Get(w->body_subgraph_index())->name()->str(), "while_body");
  const auto inner = ops_of(m, 2, tflite::BuiltinOperator::WHILE);  // in while_body
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0]->builtin_options_as_WhileOptions()->cond_subgraph_index(), 3);
  EXPECT_EQ(inner[0]->builtin_options_as_WhileOptions()->body_subgraph_index(), 4);
}

TEST_F(CorpusModel, TrainingModelSignaturesAndResourceVariables) {
  if (!fs::is_directory(testing::corpus_dir())) GTEST_SKIP() << "no corpus";
  const auto& m = open("arxdeus-flutter_litert/training_model.tflite");
  ASSERT_EQ(m.subgraphs()->size(), 5u);
  std::vector<std::string> keys;
  for (const auto* s : *m.signature_defs()) {
    keys.push_back(s->signature_key()->str());
    EXPECT_EQ(m.subgraphs()->Get(s->subgraph_index())->name()->str(), s->signature_key()->str());
  }
  EXPECT_THAT(keys, ElementsAre("get_weights", "infer", "set_weights", "train"));
  for (size_t s = 0; s < 4; ++s) {
    const auto once = ops_of(m, s, tflite::BuiltinOperator::CALL_ONCE);
    ASSERT_EQ(once.size(), 1u);
    EXPECT_EQ(once[0]->builtin_options_as_CallOnceOptions()->init_subgraph_index(), 4);
    std::vector<std::string> variables;
    for (const auto* op : ops_of(m, s, tflite::BuiltinOperator::VAR_HANDLE))
      variables.push_back(op->builtin_options_as_VarHandleOptions()->shared_name()->str());
    EXPECT_THAT(variables, UnorderedElementsAre("weight", "bias"));
  }
}

TEST_F(CorpusModel, StreamingStatesAreResourceVariables) {
  if (!fs::is_directory(testing::corpus_dir())) GTEST_SKIP() << "no corpus";
  const auto& m = open("mww-models/okay_nabu.tflite");
  ASSERT_EQ(m.subgraphs()->size(), 2u);
  ASSERT_EQ(m.signature_defs()->size(), 1u);
  EXPECT_EQ(m.signature_defs()->Get(0)->signature_key()->str(), "serving_default");
  const auto once = ops_of(m, 0, tflite::BuiltinOperator::CALL_ONCE);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once[0]->builtin_options_as_CallOnceOptions()->init_subgraph_index(), 1);
  const auto handles = ops_of(m, 0, tflite::BuiltinOperator::VAR_HANDLE);
  ASSERT_GE(handles.size(), 6u);
  EXPECT_EQ(handles[0]->builtin_options_as_VarHandleOptions()->shared_name()->str(),
            "stream/states");
}

// ---- fields of the formats_* test models (make_models_formats.mjs) ------------------------

const tflite::Model& op_model(const std::string& name, Bytes& bytes) {
  bytes = load(testing::op_model(name));
  return *model_of(bytes);
}

TEST(FormatsModel, FlexBufferCustomOptions) {
  Bytes bytes;
  const auto& m = op_model("formats_custom_flexbuffers", bytes);
  const auto* code = m.operator_codes()->Get(0);
  EXPECT_EQ(code->builtin_code(), tflite::BuiltinOperator::CUSTOM);
  EXPECT_EQ(code->custom_code()->str(), "TFLite_Detection_PostProcess");
  const auto* op = m.subgraphs()->Get(0)->operators()->Get(0);
  ASSERT_TRUE(op->custom_options());
  EXPECT_EQ(op->custom_options_format(), tflite::CustomOptionsFormat::FLEXBUFFERS);
  const uint8_t* data = op->custom_options()->data();
  const size_t size = op->custom_options()->size();
  ASSERT_TRUE(flexbuffers::VerifyBuffer(data, size));
  const flexbuffers::Map map = flexbuffers::GetRoot(data, size).AsMap();
  std::vector<std::string> keys;
  for (size_t i = 0; i < map.Keys().size(); ++i) keys.push_back(map.Keys()[i].AsKey());
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(keys.size(), 15u);
  EXPECT_TRUE(map["max_detections"].IsInt());
  EXPECT_EQ(map["max_detections"].AsInt32(), 3);
  EXPECT_EQ(map["num_classes"].AsInt32(), 2);
  EXPECT_TRUE(map["use_regular_nms"].IsBool());
  EXPECT_FALSE(map["use_regular_nms"].AsBool());
  EXPECT_TRUE(map["nms_score_threshold"].IsFloat());
  EXPECT_EQ(map["nms_score_threshold"].AsFloat(), 0.5f);
  EXPECT_TRUE(map["y_scale"].IsFloat());  // flex.float(10): a float, not an int
  EXPECT_EQ(map["y_scale"].AsFloat(), 10.0f);
  EXPECT_EQ(map["lite2onnx_string"].AsString().str(), "d\xc3\xa9tection");
  const flexbuffers::Vector v = map["lite2onnx_vector"].AsVector();
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0].AsInt64(), 1);
  EXPECT_EQ(v[1].AsInt64(), -300);
  EXPECT_EQ(v[2].AsInt64(), 70000);
  EXPECT_TRUE(v[3].IsFloat());
  EXPECT_EQ(v[3].AsDouble(), 2.5);
  EXPECT_TRUE(v[4].IsBool() && v[4].AsBool());
  EXPECT_TRUE(v[5].IsNull());
  EXPECT_EQ(v[6].AsString().str(), "x");
  ASSERT_TRUE(v[7].IsVector());
  EXPECT_TRUE(v[7].AsVector()[0].IsUInt());
  EXPECT_EQ(v[7].AsVector()[0].AsUInt64(), 255u);
  const flexbuffers::Map inner = map["lite2onnx_map"].AsMap();
  EXPECT_EQ(inner["a"].AsDouble(), -1.5e300);
  EXPECT_EQ(inner["b"].AsInt64(), int64_t{1} << 40);
  EXPECT_EQ(inner["nested"].AsMap()["empty"].AsVector().size(), 0u);
  const flexbuffers::Blob blob = map["lite2onnx_blob"].AsBlob();
  ASSERT_EQ(blob.size(), 4u);
  EXPECT_THAT(std::vector<uint8_t>(blob.data(), blob.data() + 4), ElementsAre(0, 1, 2, 255));
}

TEST(FormatsModel, SparsityParameters) {
  Bytes bytes;
  const auto& m = op_model("formats_sparse_block_f32", bytes);
  const auto* t = m.subgraphs()->Get(0)->tensors()->Get(0);
  const auto* s = t->sparsity();
  ASSERT_TRUE(s);
  EXPECT_THAT(std::vector<int>(s->traversal_order()->begin(), s->traversal_order()->end()),
              ElementsAre(0, 1, 2));
  EXPECT_THAT(std::vector<int>(s->block_map()->begin(), s->block_map()->end()), ElementsAre(1));
  ASSERT_EQ(s->dim_metadata()->size(), 3u);
  EXPECT_EQ(s->dim_metadata()->Get(0)->format(), tflite::DimensionType::DENSE);
  EXPECT_EQ(s->dim_metadata()->Get(0)->dense_size(), 4);
  const auto* csr = s->dim_metadata()->Get(1);
  EXPECT_EQ(csr->format(), tflite::DimensionType::SPARSE_CSR);
  ASSERT_EQ(csr->array_segments_type(), tflite::SparseIndexVector::Uint16Vector);
  ASSERT_EQ(csr->array_indices_type(), tflite::SparseIndexVector::Uint16Vector);
  const auto* segments = csr->array_segments_as_Uint16Vector()->values();
  const auto* indices = csr->array_indices_as_Uint16Vector()->values();
  ASSERT_EQ(segments->size(), 5u);  // one segment per row, and the end
  EXPECT_EQ(segments->Get(4), indices->size());
  EXPECT_EQ(s->dim_metadata()->Get(2)->dense_size(), 4);  // the block
  // One 1x4 block of floats per stored block index.
  EXPECT_EQ(m.buffers()->Get(t->buffer())->data()->size(), indices->size() * 4 * 4);

  const auto& i8 = op_model("formats_sparse_i8", bytes);
  const auto* dims = i8.subgraphs()->Get(0)->tensors()->Get(0)->sparsity()->dim_metadata();
  ASSERT_EQ(dims->size(), 3u);
  EXPECT_EQ(dims->Get(2)->array_indices_type(), tflite::SparseIndexVector::Uint8Vector);
  const auto& f16 = op_model("formats_sparse_csc_f16", bytes);
  const auto* csc = f16.subgraphs()->Get(0)->tensors()->Get(0)->sparsity();
  EXPECT_THAT(std::vector<int>(csc->traversal_order()->begin(), csc->traversal_order()->end()),
              ElementsAre(1, 0));
  EXPECT_EQ(csc->dim_metadata()->Get(1)->array_indices_type(),
            tflite::SparseIndexVector::Int32Vector);
}

TEST(FormatsModel, SubgraphsSignaturesMetadataAndVariables) {
  Bytes bytes;
  const auto& w = op_model("formats_while", bytes);
  ASSERT_EQ(w.subgraphs()->size(), 3u);
  const auto* wo =
      ops_of(w, 0, tflite::BuiltinOperator::WHILE).at(0)->builtin_options_as_WhileOptions();
  EXPECT_EQ(w.subgraphs()->Get(wo->cond_subgraph_index())->name()->str(), "cond");
  EXPECT_EQ(w.subgraphs()->Get(wo->body_subgraph_index())->name()->str(), "body");

  const auto& i = op_model("formats_if", bytes);
  const auto* io = ops_of(i, 0, tflite::BuiltinOperator::IF).at(0)->builtin_options_as_IfOptions();
  EXPECT_EQ(i.subgraphs()->Get(io->then_subgraph_index())->name()->str(), "then");
  EXPECT_EQ(i.subgraphs()->Get(io->else_subgraph_index())->name()->str(), "else");

  const auto& r = op_model("formats_resource_variable", bytes);
  const auto* once = ops_of(r, 0, tflite::BuiltinOperator::CALL_ONCE).at(0);
  EXPECT_EQ(r.subgraphs()
                ->Get(once->builtin_options_as_CallOnceOptions()->init_subgraph_index())
                ->name()
                ->str(),
            "init");
  const auto* handle = ops_of(r, 0, tflite::BuiltinOperator::VAR_HANDLE).at(0);
  EXPECT_EQ(handle->builtin_options_as_VarHandleOptions()->shared_name()->str(), "accumulator");

  const auto& v = op_model("formats_variable_tensor", bytes);
  std::vector<std::string> variables;
  for (const auto* t : *v.subgraphs()->Get(0)->tensors())
    if (t->is_variable()) variables.push_back(t->name()->str());
  EXPECT_THAT(variables, ElementsAre("rnn/hidden_state"));

  const auto& s = op_model("formats_signatures", bytes);
  ASSERT_EQ(s.signature_defs()->size(), 2u);
  const auto* mul = s.signature_defs()->Get(1);
  EXPECT_EQ(mul->signature_key()->str(), "multiply");
  EXPECT_EQ(mul->subgraph_index(), 1u);
  EXPECT_EQ(mul->inputs()->Get(1)->name()->str(), "y");
  EXPECT_EQ(mul->outputs()->Get(0)->name()->str(), "product");

  const auto& md = op_model("formats_metadata", bytes);
  EXPECT_THAT(metadata_names(md), ElementsAre("min_runtime_version", "lite2onnx_test"));
  const auto* version = md.buffers()->Get(md.metadata()->Get(0)->buffer())->data();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(version->data())), "1.5.0");
  EXPECT_EQ(version->size(), 16u);

  const auto& q = op_model("formats_per_axis_quantization", bytes);
  const auto* qp = q.subgraphs()->Get(0)->tensors()->Get(0)->quantization();
  EXPECT_EQ(qp->quantized_dimension(), 1);
  EXPECT_EQ(qp->scale()->size(), 5u);
  EXPECT_THAT(std::vector<int64_t>(qp->zero_point()->begin(), qp->zero_point()->end()),
              ElementsAre(0, 3, -2, 1, 0));
}

}  // namespace
}  // namespace lite2onnx
