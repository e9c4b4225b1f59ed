#include "server/worker_pool.h"

#include "server/conversion_runner.h"

namespace lite2onnx::server {

WorkerPool::WorkerPool(unsigned workers, unsigned queue_size, LoadObserver observer)
    : workers_(workers), capacity_(size_t{workers} + queue_size), observer_(std::move(observer)) {}

WorkerPool::~WorkerPool() { stop(); }

Status WorkerPool::start(RunnerFactory make_runner) {
  {
    std::lock_guard lock(mu_);
    starting_ = workers_;
  }
  threads_.reserve(workers_);
  for (unsigned i = 0; i < workers_; ++i)
    threads_.emplace_back([this, make_runner] { run(make_runner); });
  std::unique_lock lock(mu_);
  started_.wait(lock, [this] { return starting_ == 0; });
  if (!start_error_) return ok_status();
  Error e = *start_error_;
  lock.unlock();
  stop();
  return e;
}

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

bool WorkerPool::has_room() const {
  std::lock_guard lock(mu_);
  return !stopping_ && queue_.size() + busy_ < capacity_;
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

void WorkerPool::run(const RunnerFactory& make_runner) {
  auto made = make_runner();
  std::unique_lock lock(mu_);
  if (!made && !start_error_) start_error_ = made.error();
  if (--starting_ == 0) started_.notify_all();
  if (!made) return;
  std::unique_ptr<ConversionRunner> runner = std::move(made).value();
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and every accepted job has run
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    notify_locked();
    lock.unlock();
    job(*runner);
    job = nullptr;  // release what the job holds before counting it done
    runner->after_job();
    lock.lock();
    --busy_;
    notify_locked();
  }
  lock.unlock();
  runner.reset();  // its worker process ends on this thread
}

}  // namespace lite2onnx::server
