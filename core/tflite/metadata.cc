#include "core/tflite/metadata.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "core/tflite/libzip.h"
#include "metadata_schema_generated.h"

namespace lite2onnx::tflite_reader {
namespace {

constexpr std::string_view kEntryName = "TFLITE_METADATA";

std::string warning(const std::string& text) { return "TFLite metadata: " + text; }

std::string mib(uint64_t bytes) {
  return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                 : std::to_string(bytes) + " bytes";
}

// Shared tables and vectors let a small FlatBuffer describe far more than it
// holds (one long string named by every tensor): every string and vector
// element read is charged, up to 4 bytes per byte of the buffer + 64 KiB.
class Budget {
 public:
  explicit Budget(size_t buffer_bytes) : left_(4 * uint64_t{buffer_bytes} + (64u << 10)) {}
  bool take(uint64_t bytes) {
    if (bytes > left_) {
      exceeded_ = true;
      left_ = 0;
      return false;
    }
    left_ -= bytes;
    return true;
  }
  bool exceeded() const { return exceeded_; }

 private:
  uint64_t left_;
  bool exceeded_ = false;
};

// The length of the UTF-8 sequence at s[i], 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  const size_t len = c >= 0xc2 && c < 0xe0   ? 2
                     : c >= 0xe0 && c < 0xf0 ? 3
                     : c >= 0xf0 && c < 0xf5 ? 4
                                             : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return len;
}

// A string of the metadata, as valid UTF-8 (each stray byte becomes U+FFFD):
// it goes into JSON, protobuf strings and the ONNX model.
std::string text(const flatbuffers::String* s, Budget& budget) {
  if (!s || !budget.take(s->size())) return "";
  const std::string_view in = s->string_view();
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    const size_t len = utf8_length(in, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(in.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::vector<float> floats(const flatbuffers::Vector<float>* v, Budget& budget) {
  if (!v || !budget.take(uint64_t{4} * v->size())) return {};
  return {v->begin(), v->end()};
}

// Printable and usable in a metadata_props key: bytes outside
// [A-Za-z0-9._-] become '_', at most 128 of them.
std::string sanitize(std::string_view raw) {
  std::string out;
  for (char c : raw.substr(0, 128)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? "_" : out;
}

// UTF-8 without control characters other than tab, line feed and carriage
// return: a label list, a vocabulary, a readme. Anything else is binary.
bool is_text(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
    const size_t len = utf8_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

const char* content_kind(tflite::ContentProperties type) {
  switch (type) {
    case tflite::ContentProperties::FeatureProperties:
      return "feature";
    case tflite::ContentProperties::ImageProperties:
      return "image";
    case tflite::ContentProperties::BoundingBoxProperties:
      return "bounding_box";
    case tflite::ContentProperties::AudioProperties:
      return "audio";
    default:
      return "";
  }
}

// The associated files, by their name as the metadata and the archive spell
// it, each listed once under a sanitized name that no other file has.
class FileList {
 public:
  FileList(std::vector<AssociatedFileInfo>& files, uint32_t max_files,
           std::vector<std::string>& warnings)
      : files_(files), max_files_(max_files), warnings_(warnings) {}

  // The file's entry (added on first sight); nullptr beyond the limit.
  AssociatedFileInfo* entry(const std::string& raw) {
    if (auto it = index_.find(raw); it != index_.end()) return &files_[it->second];
    if (files_.size() >= max_files_) {
      if (!dropped_)
        warnings_.push_back(warning("more than " + std::to_string(max_files_) +
                                    " associated files; the others are left out"));
      dropped_ = true;
      return nullptr;
    }
    std::string name = sanitize(raw);
    for (int k = 2; names_.count(name); ++k) name = sanitize(raw) + "_" + std::to_string(k);
    names_.insert(name);
    index_.emplace(raw, files_.size());
    files_.push_back({});
    files_.back().name = std::move(name);
    return &files_.back();
  }

  // A file the metadata names (its first mention gives type and description);
  // its listed name, or "" when it is left out.
  std::string named(const tflite::AssociatedFile* f, Budget& budget) {
    if (!f || !budget.take(16)) return "";
    AssociatedFileInfo* e = entry(text(f->name(), budget));
    if (!e) return "";
    if (e->type.empty()) {
      e->type = tflite::EnumNameAssociatedFileType(f->type());
      if (e->type.empty()) e->type = "UNKNOWN(" + std::to_string(static_cast<int>(f->type())) + ")";
      e->description = text(f->description(), budget);
      e->locale = text(f->locale(), budget);
    }
    return e->name;
  }

  void named(const flatbuffers::Vector<flatbuffers::Offset<tflite::AssociatedFile>>* list,
             Budget& budget, std::vector<std::string>* names = nullptr) {
    if (!list) return;
    for (const tflite::AssociatedFile* f : *list) {
      std::string name = named(f, budget);
      if (names && !name.empty()) names->push_back(std::move(name));
    }
  }

  // The vocabularies and models of a tokenizer process unit.
  void named(const tflite::ProcessUnit* unit, Budget& budget,
             std::vector<std::string>* names = nullptr) {
    if (!unit) return;
    if (const auto* o = unit->options_as_BertTokenizerOptions())
      named(o->vocab_file(), budget, names);
    if (const auto* o = unit->options_as_SentencePieceTokenizerOptions()) {
      named(o->sentencePiece_model(), budget, names);
      named(o->vocab_file(), budget, names);
    }
    if (const auto* o = unit->options_as_RegexTokenizerOptions())
      named(o->vocab_file(), budget, names);
  }

 private:
  std::vector<AssociatedFileInfo>& files_;
  uint32_t max_files_;
  std::vector<std::string>& warnings_;
  std::map<std::string, size_t> index_;  // raw name -> entry
  std::set<std::string> names_;          // sanitized names taken
  bool dropped_ = false;
};

TensorMetadataInfo tensor_info(const tflite::TensorMetadata* t, const std::string& tensor,
                               FileList& files, Budget& budget) {
  TensorMetadataInfo out;
  out.tensor = tensor;
  if (!t || !budget.take(16)) return out;
  out.name = text(t->name(), budget);
  out.description = text(t->description(), budget);
  if (t->content()) out.content = content_kind(t->content()->content_properties_type());
  if (const auto* units = t->process_units(); units && budget.take(uint64_t{4} * units->size()))
    for (const tflite::ProcessUnit* unit : *units) {
      const auto* norm = unit ? unit->options_as_NormalizationOptions() : nullptr;
      if (norm && out.mean.empty() && out.std.empty()) {
        out.mean = floats(norm->mean(), budget);
        out.std = floats(norm->std(), budget);
      }
      files.named(unit, budget, &out.associated_files);
    }
  if (const auto* stats = t->stats()) {
    out.max = floats(stats->max(), budget);
    out.min = floats(stats->min(), budget);
  }
  files.named(t->associated_files(), budget, &out.associated_files);
  return out;
}

void read_tensors(const flatbuffers::Vector<flatbuffers::Offset<tflite::TensorMetadata>>* list,
                  const ir::TensorList& graph_tensors, const ir::Graph& graph, const char* what,
                  FileList& files, Budget& budget, std::vector<TensorMetadataInfo>& out,
                  std::vector<std::string>& warnings) {
  const size_t count = list ? list->size() : 0;
  if (count != graph_tensors.size() && count > 0)
    warnings.push_back(warning(std::to_string(count) + " " + what + " tensor entries for " +
                               std::to_string(graph_tensors.size()) + " graph " + what +
                               "s; they are matched by position" +
                               (count > graph_tensors.size() ? ", the extra ones left out" : "")));
  for (size_t i = 0; i < std::min(count, graph_tensors.size()) && !budget.exceeded(); ++i)
    out.push_back(tensor_info(list->Get(static_cast<flatbuffers::uoffset_t>(i)),
                              graph.tensor(graph_tensors[i]).name, files, budget));
}

// ---- the archive ------------------------------------------------------------------------

// Reads up to `cap` bytes of entry `index`; the bytes read (at most cap + 1,
// to see an entry inflate past its bound) or an error message.
bool read_entry(const LibZip& zip, zip_t* archive, zip_uint64_t index, uint64_t cap,
                std::string& out, std::string& error) {
  const auto close = [&zip](zip_file_t* f) { zip.fclose(f); };
  std::unique_ptr<zip_file_t, decltype(close)> file(zip.fopen_index(archive, index, 0), close);
  if (!file) {
    error = zip.strerror(archive);
    return false;
  }
  out.clear();
  char chunk[16384];
  while (out.size() <= cap) {
    const uint64_t want = std::min<uint64_t>(sizeof chunk, cap + 1 - out.size());
    const zip_int64_t got = zip.fread(file.get(), chunk, want);
    if (got < 0) {
      error = zip.file_strerror(file.get());
      return false;
    }
    if (got == 0) break;
    out.append(chunk, static_cast<size_t>(got));
  }
  return true;
}

// Whether the model ends in what looks like a zip archive: the signature of
// the end of central directory record within its last 22 + 65,535 bytes (the
// record and the longest comment). libzip reports a damaged archive and no
// archive alike (ZIP_ER_NOZIP) when the central directory's entries are
// broken; this tells the two apart.
bool has_archive_end(std::span<const std::byte> model) {
  constexpr size_t kEnd = 22 + 65535;
  const auto tail = model.subspan(model.size() > kEnd ? model.size() - kEnd : 0);
  static constexpr std::byte kMagic[] = {std::byte{'P'}, std::byte{'K'}, std::byte{5},
                                         std::byte{6}};
  return std::search(tail.begin(), tail.end(), std::begin(kMagic), std::end(kMagic)) != tail.end();
}

void read_archive(std::span<const std::byte> model, FileList& files,
                  const AssociatedFileLimits& limits, std::vector<std::string>& warnings) {
  if (!has_archive_end(model)) return;
  std::string unloaded;
  const LibZip* z = libzip(&unloaded);
  if (!z) {
    warnings.push_back(
        warning("the zip archive of associated files cannot be read (" + unloaded + ")"));
    return;
  }
  const LibZip& zip = *z;
  zip_error_t error;
  zip.error_init(&error);
  zip_source_t* source = zip.source_buffer_create(model.data(), model.size(), 0, &error);
  const auto discard = [&zip](zip_t* a) { zip.discard(a); };
  std::unique_ptr<zip_t, decltype(discard)> archive(nullptr, discard);
  if (source) {
    archive.reset(zip.open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
    if (!archive) zip.source_free(source);
  }
  if (!archive) {
    warnings.push_back(warning("the zip archive of associated files cannot be read (libzip: " +
                               std::string(zip.error_strerror(&error)) + ")"));
    zip.error_fini(&error);
    return;
  }
  zip.error_fini(&error);
  const zip_int64_t entries = zip.get_num_entries(archive.get(), 0);
  if (entries > static_cast<zip_int64_t>(limits.max_entries))
    warnings.push_back(warning("the archive has " + std::to_string(entries) +
                               " entries; only the first " + std::to_string(limits.max_entries) +
                               " are read"));
  uint64_t total = 0;  // bytes inflated so far
  const auto count = std::min<zip_int64_t>(entries, limits.max_entries);
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip.stat_init(&st);
    if (zip.stat_index(archive.get(), index, ZIP_FL_ENC_RAW, &st) != 0 || !st.name) continue;
    const std::string raw = st.name;
    if (raw.empty() || raw.back() == '/') continue;  // a directory
    AssociatedFileInfo* f = files.entry(raw);
    if (!f) continue;
    if (f->packed) continue;  // a second entry of the same name: the first one counts
    f->packed = true;
    f->size = st.valid & ZIP_STAT_SIZE ? st.size : 0;
    auto refuse = [&](std::string note, bool warn) {
      if (warn)
        warnings.push_back(
            warning("associated file '" + f->name + "' " + note + ": listed, not embedded"));
      f->note = std::move(note);
    };
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      refuse("is encrypted", true);
    } else if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE &&
               st.comp_method != ZIP_CM_DEFLATE) {
      refuse("uses compression method " + std::to_string(st.comp_method) +
                 " (only stored and deflated files are read)",
             true);
    } else if (!(st.valid & ZIP_STAT_SIZE) || st.size > limits.max_file_bytes) {
      refuse("declares " + std::to_string(f->size) + " bytes, more than the " +
                 mib(limits.max_file_bytes) + " a file may have",
             true);
    } else if (st.size > limits.max_total_bytes - total) {
      refuse("would pass the " + mib(limits.max_total_bytes) + " all files may have together",
             true);
    } else {
      std::string content, why;
      const bool ok = read_entry(zip, archive.get(), index, st.size, content, why);
      total += content.size();
      if (!ok)
        refuse("cannot be read (libzip: " + why + ")", true);
      else if (content.size() > st.size)
        refuse("inflates past the " + std::to_string(st.size) + " bytes it declares", true);
      else if (content.size() < st.size)
        refuse("holds " + std::to_string(content.size()) + " of the " + std::to_string(st.size) +
                   " bytes it declares",
               true);
      else if (!is_text(content))
        refuse("is binary", false);
      else {
        f->embedded = true;
        f->content = std::move(content);
      }
    }
  }
}

}  // namespace

TfliteMetadata read_metadata(std::span<const std::byte> model,
                             std::span<const MetadataEntry> entries, const ir::Graph& graph,
                             std::vector<std::string>& warnings, const AssociatedFileLimits& limits,
                             int subgraph) {
  TfliteMetadata out;
  const MetadataEntry* entry = nullptr;
  for (const auto& e : entries)
    if (e.name == kEntryName) {
      entry = &e;
      break;
    }
  if (!entry) return out;
  // A copy: the buffer's bytes may sit at any offset of the model, and the
  // generated code reads scalars in place, at the alignment the verifier
  // checks relative to the buffer's start.
  const size_t size = entry->bytes.size();
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size) std::memcpy(aligned.data(), entry->bytes.data(), size);
  const auto* data = reinterpret_cast<const uint8_t*>(aligned.data());
  if (size < 8 || size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    warnings.push_back(warning(std::string(kEntryName) + " holds " + std::to_string(size) +
                               " bytes, not a metadata FlatBuffer; the metadata is left out"));
    return out;
  }
  if (!tflite::ModelMetadataBufferHasIdentifier(data)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      const char c = static_cast<char>(data[i]);
      id += c >= 32 && c < 127 ? std::string(1, c) : "\\x" + std::to_string(data[i]);
    }
    warnings.push_back(warning(std::string(kEntryName) + " has the file identifier '" + id +
                               "', expected 'M001'; the metadata is left out"));
    return out;
  }
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 64;
  vopts.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 1);
  flatbuffers::Verifier verifier(data, size, vopts);
  if (!tflite::VerifyModelMetadataBuffer(verifier)) {
    warnings.push_back(warning(std::string(kEntryName) +
                               " failed FlatBuffer verification (truncated or damaged, or "
                               "offsets pointing outside it); the metadata is left out"));
    return out;
  }
  const tflite::ModelMetadata* m = tflite::GetModelMetadata(data);
  Budget budget(size);
  FileList files(out.associated_files, limits.max_entries, warnings);
  out.name = text(m->name(), budget);
  out.description = text(m->description(), budget);
  out.version = text(m->version(), budget);
  out.author = text(m->author(), budget);
  out.license = text(m->license(), budget);
  out.min_parser_version = text(m->min_parser_version(), budget);
  files.named(m->associated_files(), budget);
  if (const auto* subgraphs = m->subgraph_metadata();
      subgraphs && subgraph >= 0 && static_cast<size_t>(subgraph) < subgraphs->size()) {
    // The converted subgraph's.
    if (const tflite::SubGraphMetadata* sg =
            subgraphs->Get(static_cast<flatbuffers::uoffset_t>(subgraph))) {
      files.named(sg->associated_files(), budget);
      read_tensors(sg->input_tensor_metadata(), graph.inputs(), graph, "input", files, budget,
                   out.inputs, warnings);
      read_tensors(sg->output_tensor_metadata(), graph.outputs(), graph, "output", files, budget,
                   out.outputs, warnings);
      for (const auto* units : {sg->input_process_units(), sg->output_process_units()})
        if (units && budget.take(uint64_t{4} * units->size()))
          for (const tflite::ProcessUnit* unit : *units) files.named(unit, budget);
    }
  }
  if (budget.exceeded()) {
    warnings.push_back(warning(std::string(kEntryName) +
                               " expands to far more than its size (tables or strings shared "
                               "between tensors); the metadata is left out"));
    return {};
  }
  out.present = true;
  read_archive(model, files, limits, warnings);
  std::vector<std::string> missing;
  for (const auto& f : out.associated_files)
    if (!f.packed) missing.push_back("'" + f.name + "'");
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
    warnings.push_back(warning("associated file" + std::string(missing.size() > 1 ? "s " : " ") +
                               list + (missing.size() > 1 ? " are" : " is") +
                               " named by the metadata but not packed in the model"));
  }
  return out;
}

std::string load_archive_reader() {
  std::string error;
  return libzip(&error) ? std::string() : error;
}

}  // namespace lite2onnx::tflite_reader
