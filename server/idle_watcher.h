// Ends what has been idle too long: a thread that wakes a few times per
// period and tells each watched object whose deadline passed (once; it is no
// longer watched after that). ConvertStream calls use it so that a stalled
// upload does not hold its memory budget forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace lite2onnx::server {

class IdleWatcher {
 public:
  using Clock = std::chrono::steady_clock;
  class Watched {
   public:
    // Called on the watcher's thread, which holds its lock: unwatch() waits
    // until this returns. It must not call watch() or unwatch().
    virtual void on_idle() = 0;

   protected:
    ~Watched() = default;
  };

  explicit IdleWatcher(std::chrono::milliseconds period);
  ~IdleWatcher();
  IdleWatcher(const IdleWatcher&) = delete;
  IdleWatcher& operator=(const IdleWatcher&) = delete;

  // (Re)starts the period of `w` now.
  void watch(Watched* w);
  // No on_idle() for `w` after this returns.
  void unwatch(Watched* w);

 private:
  void run();

  const std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<Watched*, Clock::time_point> deadlines_;
  std::thread thread_;
};

}  // namespace lite2onnx::server
