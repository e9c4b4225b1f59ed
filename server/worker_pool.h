// A fixed set of worker threads behind a bounded queue. A job is accepted only
// when a worker is idle or a queue slot is free; otherwise try_submit() says no
// at once, so overload is refused instead of queued without limit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lite2onnx::server {

class WorkerPool {
 public:
  using Job = std::function<void()>;
  // Told, under the pool's lock, every time the number of waiting or running jobs changes.
  using LoadObserver = std::function<void(size_t queued, size_t busy)>;

  WorkerPool(unsigned workers, unsigned queue_size, LoadObserver observer = {});
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Accepts the job if a worker is idle or the queue has room; false otherwise
  // (and after stop()).
  bool try_submit(Job job);

  // Takes no more jobs, runs the ones already accepted, joins the workers.
  void stop();

  unsigned workers() const { return static_cast<unsigned>(threads_.size()); }

 private:
  void run();
  void notify_locked() const;

  const size_t capacity_;  // workers + queue slots
  LoadObserver observer_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Job> queue_;
  size_t busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace lite2onnx::server
