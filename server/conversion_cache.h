// The content-addressed cache of conversions (--cache-bytes), shared by the
// gRPC and HTTP calls. Registries send the same model again and again (every
// tag, alias and stage change fires a hook) and a conversion is deterministic,
// so an answer is kept under key = SHA-256 of the model bytes + the canonical
// options (every option of the option table) + the converter version.
// Successes only; least recently used first out when the bytes are over the
// budget; identical calls that arrive together convert once (the later ones
// wait for the first). A hit answers without a worker: the call's thread looks
// it up before the call is queued. The hash is the provenance metadata's too
// (ConvertJob::source_sha256): the model is hashed once per call. Its bytes
// are in the memory budget (server/calls/budget.h) as bytes of no call: an
// answer is kept only if it fits beside what calls hold, and the least
// recently used go when a call needs their room.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "server/calls/budget.h"
#include "server/conversion_runner.h"

namespace lite2onnx::server {

class Metrics;

struct CacheKey {
  std::string source_sha256;  // the model's, lower-case hex
  std::string text;           // the hash, the canonical options and the converter version
};

class ConversionCache {
 public:
  // `max_bytes` 0: no cache (key() says nothing, convert() only converts).
  // With a `budget`, what it keeps is held there, and given up when the
  // budget's calls need it.
  ConversionCache(uint64_t max_bytes, Metrics& metrics, Budget* budget = nullptr);
  ~ConversionCache();
  ConversionCache(const ConversionCache&) = delete;
  ConversionCache& operator=(const ConversionCache&) = delete;

  // The key of a model and its options; nothing without a cache. Hashes the
  // model: ~0.65 ms per MB.
  std::optional<CacheKey> key(const ModelBuffer& model, const ConvertOptions& options) const;

  // The answer of an earlier identical conversion (its diagnostics say
  // "cache: hit"), counted as a hit; nothing when there is none.
  std::optional<ConvertOutcome> find(const CacheKey& key);

  // Converts the job, unless an identical one is running: then waits for it
  // (until the job's stop signal) and answers from the cache, or converts if
  // it failed. A success is kept. Without a key: the runner's answer alone.
  ConvertOutcome convert(ConversionRunner& runner, ConvertJob& job, const CacheKey* key);

  uint64_t max_bytes() const { return max_bytes_; }
  // Drops least recently used answers until `bytes` are freed (or none is
  // left); how many were freed. The budget's reclaimer.
  uint64_t reclaim(uint64_t bytes);

 private:
  struct Entry {
    std::string key;
    OnnxBytes onnx;  // shares the answer's owner (or its sealed memfd): no copy
    Diagnostics diagnostics;
    uint64_t bytes = 0;  // what it costs in the budget
  };
  using Lru = std::list<Entry>;  // most recently used first

  std::optional<ConvertOutcome> find_locked(const std::string& key);
  void insert_locked(const std::string& key, const ConvertOutcome& outcome);
  void publish_usage_locked();
  // Drops the least recently used answer.
  void evict_last_locked();

  const uint64_t max_bytes_;
  Metrics& metrics_;
  Budget* const budget_;
  std::mutex mu_;
  std::condition_variable finished_;  // a running conversion ended
  Lru lru_;
  std::unordered_map<std::string, Lru::iterator> index_;
  std::set<std::string> running_;  // keys being converted now
  uint64_t bytes_ = 0;
};

}  // namespace lite2onnx::server
