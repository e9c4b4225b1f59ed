// Prints the wire layout of a FlatBuffers schema, one fact a line, sorted:
// every table with its fields by id (name, type, default, deprecated), every
// enum with its values, every union with its members in order. Two schemas
// with the same output read and write the same bytes, so comparing the output
// for core/tflite/schema.fbs with that for an official TFLite schema shows
// whether ours is wire-compatible (see tests/models/README.md, "The schema"):
//
//   build/tests/schema_layout core/tflite/schema.fbs > ours.txt
//   build/tests/schema_layout tensorflow/.../schema.fbs > official.txt
//   diff ours.txt official.txt
//
// Debian's flatc 2.0.8 does not parse attributes on enum values and union
// members; the official schema marks two of them "(deprecated)", which this
// tool drops before parsing (attributes do not reach the wire).
#include <flatbuffers/idl.h>
#include <flatbuffers/reflection.h>
#include <flatbuffers/util.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace {

std::string type_name(const reflection::Schema& s, const reflection::Type& t, bool element) {
  const reflection::BaseType base = element ? t.element() : t.base_type();
  if (base == reflection::Vector) return "[" + type_name(s, t, true) + "]";
  if (base == reflection::Obj) return s.objects()->Get(t.index())->name()->str();
  std::string name = reflection::EnumNameBaseType(base);
  if (t.index() >= 0) name += " " + s.enums()->Get(t.index())->name()->str();
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: schema_layout SCHEMA.fbs\n";
    return 2;
  }
  std::string text;
  if (!flatbuffers::LoadFile(argv[1], false, &text)) {
    std::cerr << "schema_layout: cannot read " << argv[1] << "\n";
    return 1;
  }
  for (size_t at; (at = text.find(" (deprecated),")) != std::string::npos;)
    text.replace(at, 14, ",");
  flatbuffers::Parser parser;
  if (!parser.Parse(text.c_str(), nullptr, argv[1])) {
    std::cerr << "schema_layout: " << parser.error_ << "\n";
    return 1;
  }
  parser.Serialize();
  const reflection::Schema& s = *reflection::GetSchema(parser.builder_.GetBufferPointer());

  std::vector<std::string> lines;
  lines.push_back("root_type " + s.root_table()->name()->str());
  lines.push_back("file_identifier " + (s.file_ident() ? s.file_ident()->str() : ""));
  for (const reflection::Object* o : *s.objects()) {
    const std::string table = (o->is_struct() ? "struct " : "table ") + o->name()->str();
    lines.push_back(table);
    for (const reflection::Field* f : *o->fields()) {
      std::string line = table + " field " + std::to_string(f->id()) + " " + f->name()->str() +
                         ": " + type_name(s, *f->type(), false);
      if (flatbuffers::IsScalar(f->type()->base_type()))
        line += " = " + (flatbuffers::IsFloat(f->type()->base_type())
                             ? flatbuffers::NumToString(f->default_real())
                             : flatbuffers::NumToString(f->default_integer()));
      if (f->deprecated()) line += " (deprecated)";
      lines.push_back(line);
    }
  }
  for (const reflection::Enum* e : *s.enums()) {
    const std::string name = (e->is_union() ? "union " : "enum ") + e->name()->str();
    lines.push_back(name + " : " + type_name(s, *e->underlying_type(), false));
    for (const reflection::EnumVal* v : *e->values()) {
      std::string line =
          name + " value " + flatbuffers::NumToString(v->value()) + " " + v->name()->str();
      if (v->union_type() && v->union_type()->index() >= 0)
        line += " -> " + s.objects()->Get(v->union_type()->index())->name()->str();
      lines.push_back(line);
    }
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& l : lines) std::cout << l << "\n";
  return 0;
}
