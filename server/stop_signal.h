// Why a call's work should stop: its deadline passed or its client cancelled.
// A worker thread waiting for a worker process registers a wake-up eventfd, so
// that a cancellation (on a gRPC thread) reaches it at once.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

#include "common/failure.h"

namespace lite2onnx::server {

class StopSignal {
 public:
  explicit StopSignal(std::chrono::system_clock::time_point deadline) : deadline_(deadline) {}
  void cancel();
  bool cancelled() const { return cancelled_.load(); }
  // Within a few milliseconds: a client cancels at its own deadline, which
  // reaches the server a moment before the server's copy of it passes.
  bool deadline_passed() const {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(5) >= deadline_;
  }
  bool stop_requested() const { return cancelled() || deadline_passed(); }
  std::chrono::system_clock::time_point deadline() const { return deadline_; }
  // Why the call stopped: its deadline, or the client. A cancellation up to
  // 50 ms before the server's copy of the deadline counts as the deadline: a
  // client cancels at its own deadline, and the server's copy (arrival plus
  // the remaining timeout) is later by the request's transit and by any wait
  // before the server read it, more than deadline_passed()'s margin when the
  // machine is busy.
  Failure failure() const;

  // From now on cancel() writes to the eventfd `fd`; returns whether the call
  // was already cancelled. clear_waker() undoes it: no write follows its return.
  bool set_waker(int fd);
  void clear_waker();

 private:
  std::chrono::system_clock::time_point deadline_;
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;  // guards waker_ (and orders it with cancelled_)
  int waker_ = -1;
};

}  // namespace lite2onnx::server
