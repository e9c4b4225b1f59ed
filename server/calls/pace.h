// Deadlines and minimum rates of uploads and answers. Every upload (an HTTP
// body, ConvertStream's chunks) must bring --upload-min-rate bytes per second
// on average once --min-rate-grace has passed, nothing may stall it longer
// than --stream-idle-timeout, and it ends within --upload-timeout; every
// answer likewise (--send-min-rate, --send-timeout). Pace computes the
// deadlines; the HTTP endpoint arms a timer per read and write with them, and
// a Watchdog thread ends the gRPC calls that miss theirs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace lite2onnx::server {

using SteadyClock = std::chrono::steady_clock;

struct RateLimit {
  double min_bytes_per_second = 64 * 1024;
  SteadyClock::duration grace = std::chrono::seconds(10);
  SteadyClock::duration timeout = std::chrono::seconds(900);
};

// One transfer's schedule, from its start.
class Pace {
 public:
  Pace() = default;
  Pace(const RateLimit& limit, SteadyClock::time_point start) : limit_(limit), start_(start) {}

  // When `bytes` must have moved: the grace, then `bytes` at the minimum
  // rate; never later than the overall timeout.
  SteadyClock::time_point deadline(uint64_t bytes) const;
  // Why a transfer that moved `bytes` by its deadline is over, for messages:
  // "slower than 65536 bytes/s" or "longer than 900 s".
  std::string why(uint64_t bytes) const;

 private:
  RateLimit limit_;
  SteadyClock::time_point start_;
};

// Calls back what missed its deadline, on its own thread: ConvertStream
// uploads, and gRPC answers being sent.
class Watchdog {
 public:
  class Watched {
   public:
    // On the watchdog's thread, which holds its lock (unwatch() waits until
    // this returns); it must not call watch() or unwatch(). Once per watch().
    virtual void on_deadline() = 0;

   protected:
    ~Watched() = default;
  };

  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // (Re)sets the deadline of `w`.
  void watch(Watched* w, SteadyClock::time_point deadline);
  // No on_deadline() for `w` after this returns.
  void unwatch(Watched* w);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<Watched*, SteadyClock::time_point> deadlines_;
  std::thread thread_;
};

}  // namespace lite2onnx::server
