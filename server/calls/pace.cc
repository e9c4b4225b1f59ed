#include "server/calls/pace.h"

#include <algorithm>
#include <cmath>

namespace lite2onnx::server {

SteadyClock::time_point Pace::deadline(uint64_t bytes) const {
  const double seconds = static_cast<double>(bytes) / limit_.min_bytes_per_second;
  const auto at_rate = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(std::min(seconds, 1e7)));
  return start_ + std::min(limit_.grace + at_rate, limit_.timeout);
}

std::string Pace::why(uint64_t bytes) const {
  const double seconds = static_cast<double>(bytes) / limit_.min_bytes_per_second;
  const auto at_rate = std::chrono::duration<double>(limit_.grace).count() + seconds;
  if (at_rate < std::chrono::duration<double>(limit_.timeout).count())
    return "slower than " + std::to_string(std::llround(limit_.min_bytes_per_second)) + " bytes/s";
  return "longer than " +
         std::to_string(std::llround(std::chrono::duration<double>(limit_.timeout).count())) + " s";
}

Watchdog::Watchdog() : thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::watch(Watched* w, SteadyClock::time_point deadline) {
  {
    std::lock_guard lock(mu_);
    deadlines_.insert_or_assign(w, deadline);
  }
  wake_.notify_all();
}

void Watchdog::unwatch(Watched* w) {
  std::lock_guard lock(mu_);
  deadlines_.erase(w);
}

void Watchdog::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = SteadyClock::now() + std::chrono::seconds(1);
    for (const auto& [w, deadline] : deadlines_) next = std::min(next, deadline);
    wake_.wait_until(lock, next);
    const auto now = SteadyClock::now();
    for (auto it = deadlines_.begin(); it != deadlines_.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      Watched* w = it->first;
      it = deadlines_.erase(it);
      w->on_deadline();
    }
  }
}

}  // namespace lite2onnx::server
