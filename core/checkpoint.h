// Cancellation inside a conversion: every phase polls a Checkpoint in its
// loops, so a deadline or a client that went away stops the work within about
// a millisecond (the caller's hook is asked at most once per millisecond; the
// clock read in between costs ~20 ns).
#pragma once

#include <chrono>
#include <functional>
#include <utility>

#include "core/status.h"

namespace lite2onnx {

class Checkpoint {
 public:
  Checkpoint() = default;  // never stops
  explicit Checkpoint(std::function<bool()> cancelled) : cancelled_(std::move(cancelled)) {}

  // True once the conversion should stop (and from then on).
  bool should_stop() {
    if (stopped_) return true;
    if (!cancelled_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (polled_ && now - last_ < std::chrono::milliseconds(1)) return false;
    polled_ = true;
    last_ = now;
    stopped_ = cancelled_();
    return stopped_;
  }
  // kCancelled once stopped, else ok.
  Status status() const {
    if (!stopped_) return ok_status();
    return make_error(ErrorCode::kCancelled, "conversion cancelled");
  }
  bool stopped() const { return stopped_; }

 private:
  std::function<bool()> cancelled_;
  bool stopped_ = false;
  bool polled_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace lite2onnx
