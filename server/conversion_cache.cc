#include "server/conversion_cache.h"

#include <chrono>

#include "core/option_table.h"
#include "server/metrics.h"

namespace lite2onnx::server {
namespace {

// What an entry costs beyond its ONNX bytes: the key, the diagnostics'
// strings and the bookkeeping, roughly.
uint64_t entry_bytes(const std::string& key, const ConvertOutcome& outcome) {
  const Diagnostics& d = outcome.diagnostics;
  uint64_t bytes = 512 + 2 * key.size() + outcome.onnx.size();
  for (const auto& w : d.warnings) bytes += 32 + w.size();
  for (const auto& i : d.inserted)
    bytes += 128 + i.node.size() + i.op_type.size() + i.tensor.size() + i.reason.size();
  for (const auto& r : d.rewritten_initializers) bytes += 64 + r.tensor.size() + r.reason.size();
  for (const auto& io : d.io_layouts) bytes += 64 + io.tensor.size() + 8 * io.perm.size();
  bytes += 64 * (d.source_ops.size() + d.emitted_nodes.size() + d.timings.size() +
                 d.subgraphs.size() + d.unsupported.size());
  return bytes;
}

}  // namespace

ConversionCache::ConversionCache(uint64_t max_bytes, Metrics& metrics, Budget* budget)
    : max_bytes_(max_bytes), metrics_(metrics), budget_(budget) {
  publish_usage_locked();
  if (budget_ && max_bytes_ > 0)
    budget_->set_reclaimer([this](uint64_t bytes) { return reclaim(bytes); });
}

ConversionCache::~ConversionCache() {
  if (!budget_ || max_bytes_ == 0) return;
  budget_->set_reclaimer({});
  budget_->give_shared(bytes_);
}

uint64_t ConversionCache::reclaim(uint64_t bytes) {
  std::lock_guard lock(mu_);
  uint64_t freed = 0;
  while (freed < bytes && !lru_.empty()) {
    freed += lru_.back().bytes;
    evict_last_locked();
  }
  publish_usage_locked();
  return freed;
}

void ConversionCache::evict_last_locked() {
  const Entry& last = lru_.back();
  bytes_ -= last.bytes;
  if (budget_) budget_->give_shared(last.bytes);
  index_.erase(last.key);
  lru_.pop_back();
  metrics_.record_cache_eviction();
}

std::optional<CacheKey> ConversionCache::key(const ModelBuffer& model,
                                             const ConvertOptions& options) const {
  if (max_bytes_ == 0) return std::nullopt;
  CacheKey k;
  k.source_sha256 = model.sha256();
  if (k.source_sha256.empty()) return std::nullopt;
  k.text = k.source_sha256 + " " + options_summary(options) + " lite2onnx " + version();
  return k;
}

std::optional<ConvertOutcome> ConversionCache::find(const CacheKey& key) {
  std::lock_guard lock(mu_);
  return find_locked(key.text);
}

std::optional<ConvertOutcome> ConversionCache::find_locked(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);  // now the most recently used
  const Entry& e = *it->second;
  ConvertOutcome out;
  out.onnx = e.onnx;
  out.diagnostics = e.diagnostics;
  out.diagnostics.cache = "hit";
  out.outcome = "ok";
  metrics_.record_cache_lookup(true);
  return out;
}

ConvertOutcome ConversionCache::convert(ConversionRunner& runner, ConvertJob& job,
                                        const CacheKey* key) {
  if (!key) return runner.convert(job);
  {
    std::unique_lock lock(mu_);
    // An identical conversion running now answers this call too.
    while (running_.count(key->text)) {
      if (job.stop.stop_requested()) {
        ConvertOutcome stopped;
        stopped.failure = job.stop.failure();
        return stopped;
      }
      finished_.wait_for(lock, std::chrono::milliseconds(50));
    }
    if (auto hit = find_locked(key->text)) {
      // Not under the lock: the budget may ask this cache for room.
      lock.unlock();
      if (job.admit_answer)
        if (auto refused = job.admit_answer(hit->onnx.size())) {
          hit->failure = std::move(refused);
          hit->onnx = {};
        }
      return std::move(*hit);
    }
    running_.insert(key->text);
    metrics_.record_cache_lookup(false);
  }
  job.source_sha256 = key->source_sha256;
  ConvertOutcome out;
  try {
    out = runner.convert(job);
  } catch (...) {
    std::lock_guard lock(mu_);
    running_.erase(key->text);
    finished_.notify_all();
    throw;
  }
  if (!out.failure) out.diagnostics.cache = "miss";
  std::lock_guard lock(mu_);
  running_.erase(key->text);
  if (!out.failure) insert_locked(key->text, out);
  finished_.notify_all();
  return out;
}

void ConversionCache::insert_locked(const std::string& key, const ConvertOutcome& outcome) {
  const uint64_t bytes = entry_bytes(key, outcome);
  if (bytes > max_bytes_ || index_.count(key)) return;
  while (bytes_ + bytes > max_bytes_ && !lru_.empty()) evict_last_locked();
  // Room in the memory budget beside the calls, or the answer is not kept.
  while (budget_ && !budget_->take_shared(bytes)) {
    if (lru_.empty()) return publish_usage_locked();
    evict_last_locked();
  }
  Entry e{key, outcome.onnx, outcome.diagnostics, bytes};
  e.diagnostics.cache.clear();
  lru_.push_front(std::move(e));
  index_[key] = lru_.begin();
  bytes_ += bytes;
  publish_usage_locked();
}

void ConversionCache::publish_usage_locked() { metrics_.set_cache_usage(bytes_, lru_.size()); }

}  // namespace lite2onnx::server
