// A fixed set of worker threads behind a bounded queue. A job is accepted only
// when a worker is idle or a queue slot is free; otherwise try_submit() says no
// at once, so overload is refused instead of queued without limit. Each thread
// owns a ConversionRunner (with --isolation process: a worker process) and
// hands it to every job it runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/status.h"

namespace lite2onnx::server {

class ConversionRunner;

class WorkerPool {
 public:
  using Job = std::function<void(ConversionRunner&)>;
  using RunnerFactory = std::function<Result<std::unique_ptr<ConversionRunner>>()>;
  // Told, under the pool's lock, every time the number of waiting or running jobs changes.
  using LoadObserver = std::function<void(size_t queued, size_t busy)>;

  WorkerPool(unsigned workers, unsigned queue_size, LoadObserver observer = {});
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the threads, each making its runner with `make_runner` on itself (a
  // worker process dies with the thread that started it); the first error
  // when a runner could not be made (the pool is then stopped).
  Status start(RunnerFactory make_runner);

  // Accepts the job if a worker is idle or the queue has room; false otherwise
  // (and after stop()).
  bool try_submit(Job job);
  // Whether try_submit() would accept a job now (a caller about to read a
  // large request asks first; the answer may change before it submits).
  bool has_room() const;

  // Takes no more jobs, runs the ones already accepted, joins the workers
  // (which ends their runners).
  void stop();

  unsigned workers() const { return workers_; }

 private:
  void run(const RunnerFactory& make_runner);
  void notify_locked() const;

  const unsigned workers_;
  const size_t capacity_;  // workers + queue slots
  LoadObserver observer_;
  mutable std::mutex mu_;
  std::condition_variable ready_, started_;
  std::deque<Job> queue_;
  size_t busy_ = 0;
  bool stopping_ = false;
  unsigned starting_ = 0;             // threads still making their runner
  std::optional<Error> start_error_;  // the first runner that could not be made
  std::vector<std::thread> threads_;
};

}  // namespace lite2onnx::server
