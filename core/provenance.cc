#include "core/provenance.h"

// SHA256_Init/Update/Final, deprecated in OpenSSL 3 in favour of EVP: EVP
// would pull libcrypto's providers into the program; these are the same
// SHA-NI/AVX2 code, linked from libcrypto.a (CMakeLists.txt).
#define OPENSSL_API_COMPAT 10101
#include <openssl/sha.h>

#include <algorithm>

#include "core/option_table.h"

namespace lite2onnx {
namespace {

// min_runtime_version is a short printable string ("1.5.0") padded with NULs.
std::string printable_version(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes.first(std::min<size_t>(bytes.size(), 64))) {
    const auto c = static_cast<unsigned char>(b);
    if (c == 0) break;
    if (c < 0x20 || c >= 0x7f) return "";
    out += static_cast<char>(c);
  }
  return out;
}

}  // namespace

struct Sha256::State {
  SHA256_CTX ctx;
  bool ok = SHA256_Init(&ctx) == 1;
};

Sha256::Sha256() : state_(new State) {}

Sha256::~Sha256() { delete state_; }

void Sha256::update(std::span<const std::byte> bytes) {
  if (state_->ok && !bytes.empty())
    state_->ok = SHA256_Update(&state_->ctx, bytes.data(), bytes.size()) == 1;
}

std::string Sha256::hex() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (!state_->ok || SHA256_Final(digest, &state_->ctx) != 1) return "";
  state_->ok = false;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof digest);
  for (unsigned char d : digest) {
    out += kHex[d >> 4];
    out += kHex[d & 15];
  }
  return out;
}

std::string sha256_hex(std::span<const std::byte> bytes, const std::function<bool()>& stop) {
  constexpr size_t kChunk = size_t{1} << 20;
  Sha256 hash;
  for (size_t at = 0; at < bytes.size(); at += kChunk) {
    if (stop && stop()) return "";
    hash.update(bytes.subspan(at, std::min(kChunk, bytes.size() - at)));
  }
  return hash.hex();
}

std::vector<std::pair<std::string, std::string>> provenance_metadata(
    const SourceModel& source, const ConvertOptions& options) {
  std::vector<std::pair<std::string, std::string>> out{
      {kSourceSha256Key, std::string(source.sha256)},
      {"lite2onnx.options", options_summary(options)},
      {"tflite.schema_version", std::to_string(source.schema_version)}};
  if (!source.description.empty())
    out.emplace_back("tflite.description", std::string(source.description));
  for (const auto& entry : source.metadata)
    if (entry.name == "min_runtime_version")
      if (std::string v = printable_version(entry.bytes); !v.empty())
        out.emplace_back("tflite.min_runtime_version", std::move(v));
  if (const TfliteMetadata* m = source.tflite_metadata; m && m->present) {
    out.emplace_back("tflite.metadata", m->to_json());
    for (const auto& file : m->associated_files)
      if (file.embedded) out.emplace_back(associated_file_key(file), file.content);
  }
  return out;
}

}  // namespace lite2onnx
