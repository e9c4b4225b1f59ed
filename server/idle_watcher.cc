#include "server/idle_watcher.h"

#include <algorithm>
#include <vector>

namespace lite2onnx::server {

IdleWatcher::IdleWatcher(std::chrono::milliseconds period)
    : period_(period), thread_([this] { run(); }) {}

IdleWatcher::~IdleWatcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void IdleWatcher::watch(Watched* w) {
  std::lock_guard lock(mu_);
  deadlines_[w] = Clock::now() + period_;
}

void IdleWatcher::unwatch(Watched* w) {
  std::lock_guard lock(mu_);
  deadlines_.erase(w);
}

void IdleWatcher::run() {
  // A quarter of the period between looks: an idle object ends within 1.25 periods.
  const auto tick = std::clamp<std::chrono::milliseconds>(period_ / 4, std::chrono::milliseconds(5),
                                                          std::chrono::seconds(1));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, tick);
    const auto now = Clock::now();
    for (auto it = deadlines_.begin(); it != deadlines_.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      Watched* w = it->first;
      it = deadlines_.erase(it);
      w->on_idle();
    }
  }
}

}  // namespace lite2onnx::server
