// Golden outputs: the SHA-256 of every converted model (the generated op
// models and the third-party corpus) in every option mode the test suite uses,
// committed in tests/golden/goldens.json. Any change of output must be
// deliberate and visible in review: refactors keep every hash; a change that
// means to alter output regenerates the file and the diff shows which models
// moved.
//
//   golden_outputs --check tests/golden/goldens.json    # the ctest
//   golden_outputs --write tests/golden/goldens.json    # after a deliberate change
//
// The converter's version string is masked (ModelProto.producer_version is
// left out of the hash), so a release does not move every hash. A failed
// conversion is recorded as its error code. Corpus models missing from the
// file are reported, not failed: new ones arrive between sessions.
//
// A model with SignatureDefs also gets the mode io_names_signature, and a
// row NAME#KEY per signature after the first (the first is what the plain
// row converts), in every mode with --signature KEY.
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/convert.h"
#include "core/option_table.h"
#include "core/tflite/reader.h"

namespace {

namespace fs = std::filesystem;
using namespace lite2onnx;

// One option of the table (core/option_table.h) set by its text, the others
// at their defaults.
struct Mode {
  const char* name;
  const char* option;  // canonical name
  const char* text;
};

// The option modes tests/numeric runs the models in (tests/CMakeLists.txt,
// tests/numeric/corpus.sh).
const Mode kModes[] = {
    {"opset13", "opset", "13"},
    {"opset17", "opset", "17"},
    {"keep_io_layout", "keep_io_layout", "true"},
    {"dequantize", "quantization", "dequantize"},
    {"keep_int8_activations", "keep_int8_activations", "true"},
    {"keep_float16_weights", "keep_float16_weights", "true"},
};
// The mode of models with signatures only.
const Mode kSignatureMode = {"io_names_signature", "io_names", "signature"};

std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Reads one varint at `p`; false when the bytes end first.
bool varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    uint8_t b = *p++;
    v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// SHA-256 of a serialized ModelProto without its producer_version (field 3).
std::string masked_sha256(const std::string& onnx) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  const auto* p = reinterpret_cast<const uint8_t*>(onnx.data());
  const uint8_t* end = p + onnx.size();
  while (p < end) {
    const uint8_t* field = p;
    uint64_t tag = 0, len = 0;
    if (!varint(p, end, tag)) break;
    switch (tag & 7) {
      case 0:
        varint(p, end, len);
        break;
      case 1:
        p += 8;
        break;
      case 2:
        varint(p, end, len);
        p += std::min<uint64_t>(len, static_cast<uint64_t>(end - p));
        break;
      case 5:
        p += 4;
        break;
      default:
        p = end;
    }
    if (p > end) p = end;
    if ((tag >> 3) != 3) EVP_DigestUpdate(ctx, field, static_cast<size_t>(p - field));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx, digest, &size);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < size; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

std::string outcome(const std::vector<std::byte>& model, const Mode& mode,
                    const std::string& signature) {
  ConvertOptions options;
  if (auto st = set_option(options, mode.option, mode.text); !st) return st.error().message;
  options.signature = signature;
  Diagnostics diag;
  auto onnx = convert(model, options, diag);
  if (!onnx) return std::string("error:") + to_string(onnx.error().code);
  return "sha256:" + masked_sha256(*onnx);
}

struct Model {
  std::string key;  // "ops/NAME.tflite" or "corpus/DIR/NAME.tflite" (+ "#KEY")
  fs::path path;
  std::string signature;  // converted with --signature this (empty: the default)
  bool has_signatures = false;
};

// The keys of a model's signatures, the first one's duplicates left out.
std::vector<std::string> signature_keys(const fs::path& path) {
  std::vector<std::string> keys;
  const auto bytes = read_file(path);
  auto read = tflite_reader::read(bytes, Limits{});
  if (read)
    for (const auto& sig : read->signatures)
      if (std::find(keys.begin(), keys.end(), sig.key) == keys.end()) keys.push_back(sig.key);
  return keys;
}

std::vector<Model> models(const fs::path& ops_dir, const fs::path& corpus_dir) {
  std::vector<Model> out;
  auto add = [&](const fs::path& root, const std::string& prefix, bool recursive) {
    if (!fs::is_directory(root)) return;
    auto visit = [&](const fs::directory_entry& e) {
      if (!e.is_regular_file() || e.path().extension() != ".tflite") return;
      const std::string key = prefix + fs::relative(e.path(), root).generic_string();
      const auto keys = signature_keys(e.path());
      out.push_back({key, e.path(), "", !keys.empty()});
      for (size_t i = 1; i < keys.size(); ++i)
        out.push_back({key + "#" + keys[i], e.path(), keys[i], true});
    };
    if (recursive)
      for (const auto& e : fs::recursive_directory_iterator(root)) visit(e);
    else
      for (const auto& e : fs::directory_iterator(root)) visit(e);
  };
  add(ops_dir, "ops/", false);
  add(corpus_dir, "corpus/", true);
  std::sort(out.begin(), out.end(), [](const Model& a, const Model& b) { return a.key < b.key; });
  return out;
}

using Table = std::map<std::string, std::map<std::string, std::string>>;

Table run(const std::vector<Model>& list) {
  std::vector<std::map<std::string, std::string>> rows(list.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < list.size();) {
      auto bytes = read_file(list[i].path);
      for (const Mode& m : kModes) rows[i][m.name] = outcome(bytes, m, list[i].signature);
      if (list[i].has_signatures)
        rows[i][kSignatureMode.name] = outcome(bytes, kSignatureMode, list[i].signature);
    }
  };
  std::vector<std::thread> threads;
  const unsigned n = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (unsigned t = 0; t < n; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  Table table;
  for (size_t i = 0; i < list.size(); ++i) table[list[i].key] = std::move(rows[i]);
  return table;
}

int usage() {
  std::cerr << "usage: golden_outputs (--check | --write) GOLDENS.json OPS_DIR CORPUS_DIR\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return usage();
  const std::string verb = argv[1];
  if (verb != "--check" && verb != "--write") return usage();
  const char* corpus_env = std::getenv("LITE2ONNX_TEST_MODELS");
  const fs::path goldens = argv[2], ops_dir = argv[3],
                 corpus_dir = corpus_env && *corpus_env ? corpus_env : argv[4];
  if (!fs::is_directory(ops_dir)) {
    std::cerr << "golden_outputs: no op models in " << ops_dir << "\n";
    return 1;
  }
  const auto list = models(ops_dir, corpus_dir);
  const Table got = run(list);

  if (verb == "--write") {
    nlohmann::ordered_json j;
    j["//"] =
        "SHA-256 of every converted model per option mode (producer_version masked); written by "
        "golden_outputs --write, checked by the golden_outputs ctest. Regenerate only for a "
        "deliberate change of output and say which models moved in the commit.";
    for (const auto& [key, modes] : got) j[key] = modes;
    std::ofstream(goldens) << j.dump(1) << "\n";
    std::cout << "wrote " << got.size() << " models x " << std::size(kModes) << " modes to "
              << goldens << "\n";
    return 0;
  }

  std::ifstream in(goldens);
  if (!in) {
    std::cerr << "golden_outputs: cannot read " << goldens << "\n";
    return 1;
  }
  const nlohmann::json want = nlohmann::json::parse(in);
  int changed = 0, missing = 0;
  for (const auto& [key, modes] : got) {
    if (!want.contains(key)) {
      std::cout << "NOTE " << key << ": not in the goldens (new model?)\n";
      ++missing;
      continue;
    }
    for (const auto& [mode, value] : modes) {
      const std::string expected = want[key].value(mode, "");
      if (expected == value) continue;
      std::cout << "CHANGED " << key << " [" << mode << "]: " << expected << " -> " << value
                << "\n";
      ++changed;
    }
  }
  for (const auto& [key, modes] : want.items())
    if (key.rfind("ops/", 0) == 0 && !got.count(key)) {
      std::cout << "GONE " << key << ": in the goldens but not built\n";
      ++changed;
    }
  std::cout << got.size() << " models x " << std::size(kModes) << " modes: " << changed
            << " changed, " << missing << " not in the goldens\n";
  if (changed)
    std::cout << "If the change is deliberate: golden_outputs --write " << goldens.string()
              << " ... and commit the diff.\n";
  return changed ? 1 : 0;
}
