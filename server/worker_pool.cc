#include "server/worker_pool.h"

namespace lite2onnx::server {

WorkerPool::WorkerPool(unsigned workers, unsigned queue_size, LoadObserver observer)
    : capacity_(size_t{workers} + queue_size), observer_(std::move(observer)) {
  threads_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::try_submit(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() + busy_ >= capacity_) return false;
    queue_.push_back(std::move(job));
    notify_locked();
  }
  ready_.notify_one();
  return true;
}

void WorkerPool::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void WorkerPool::notify_locked() const {
  if (observer_) observer_(queue_.size(), busy_);
}

void WorkerPool::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every accepted job has run
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    notify_locked();
    lock.unlock();
    job();
    job = nullptr;  // release what the job holds before counting it done
    lock.lock();
    --busy_;
    notify_locked();
  }
}

}  // namespace lite2onnx::server
