#include "server/stop_signal.h"

#include <sys/eventfd.h>

namespace lite2onnx::server {

Failure StopSignal::failure() const {
  const bool near_deadline =
      std::chrono::system_clock::now() + std::chrono::milliseconds(50) >= deadline_;
  return near_deadline ? make_failure(reason_named("deadline_exceeded"),
                                      "the deadline passed before the conversion ended")
                       : make_failure(reason_named("cancelled"), "the client cancelled the call");
}

void StopSignal::cancel() {
  std::lock_guard lock(mu_);
  cancelled_.store(true);
  if (waker_ >= 0) eventfd_write(waker_, 1);
}

bool StopSignal::set_waker(int fd) {
  std::lock_guard lock(mu_);
  waker_ = fd;
  return cancelled_.load();
}

void StopSignal::clear_waker() {
  std::lock_guard lock(mu_);
  waker_ = -1;
}

}  // namespace lite2onnx::server
