// One worker process (lite2onnx-worker) owned by one pool thread: started with
// posix_spawn (the server never forks once its threads exist), given one job
// at a time, killed at a stop (the call's deadline, its cancellation, the
// per-conversion time limit), reaped through its pidfd, and replaced by its
// owner once it failed. Everything it answers is checked before use.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>

#include "core/options.h"
#include "core/status.h"
#include "server/stop_signal.h"
#include "server/worker_protocol.h"

namespace lite2onnx::server {

struct WorkerOptions {
  std::string binary;         // lite2onnx-worker
  uint64_t memory_limit = 0;  // bytes one conversion may use on top of the warm worker
  std::chrono::milliseconds time_limit{0};  // wall time of one conversion; 0: none
  std::chrono::milliseconds start_timeout{20000};
  bool test_faults = false;  // the worker honours the test hooks (--test-fault-hooks)
  Limits conversion_limits;  // what one conversion may cost (the server's --max-* flags)
};

// The server's live worker pids. The orphan reaper (when the server is PID 1,
// as in the container image) reaps every other dead child and leaves these to
// their owners, which reap them with their status.
class ChildRegistry {
 public:
  // Runs `spawn` (which returns the new pid, or -1) and records its pid under
  // the registry's lock, so the reaper never sees it unrecorded.
  template <class Spawn>
  pid_t add(Spawn spawn) {
    std::lock_guard lock(mu_);
    const pid_t pid = spawn();
    if (pid > 0) pids_.insert(pid);
    return pid;
  }
  void remove(pid_t pid);
  // Reaps dead children that are not workers (orphans re-parented to PID 1);
  // returns how many.
  int reap_orphans();

 private:
  std::mutex mu_;
  std::set<pid_t> pids_;
};

// How a job ended.
enum class JobEnd {
  kAnswered,   // the worker answered: `output` holds the answer
  kDeadline,   // the call's deadline passed: the worker was killed
  kCancelled,  // the client cancelled: the worker was killed (or the job never sent)
  kTimeLimit,  // WorkerOptions::time_limit passed: the worker was killed
  kDied,       // the worker died by itself (a crash, a signal, its memory limit)
  kBadAnswer,  // the worker answered something malformed: it was killed
};

struct JobResult {
  JobEnd end = JobEnd::kDied;
  worker::AnswerFrame answer;  // kAnswered
  // kAnswered: the ONNX model, in the worker's output memfd (mapped
  // read-only): valid until the worker's next job, so copy what you keep.
  // Empty when the answer was handed over (`answer_file`).
  std::span<const std::byte> onnx;
  // kAnswered with kAnswerHandedOver: the answer's own memfd, sealed against
  // any change (the ONNX model in [0, answer.onnx_bytes)), not mapped here.
  worker::UniqueFd answer_file;
  std::string info, error;      // kAnswered: copies of the answer's other parts
  bool out_of_memory = false;   // the worker said an allocation failed
  int wait_status = 0;          // kDied (and every kill): how the process ended
  uint64_t peak_rss_bytes = 0;  // of the whole process, once it ended
  double cpu_seconds = 0;       // the worker's CPU time during the job
  bool sent = false;            // the job reached the worker (not cancelled before)
  std::string problem;          // kDied, kBadAnswer: what happened, for the log
};

class WorkerProcess {
 public:
  // Starts a worker and waits until it is warmed up and ready.
  static Result<std::unique_ptr<WorkerProcess>> start(const WorkerOptions& options,
                                                      ChildRegistry& children);
  ~WorkerProcess();  // SIGKILL and reap, if still alive
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False once a job ended other than kAnswered, or the worker noted an
  // allocation failure: its owner replaces it.
  bool usable() const { return usable_; }

  // Writes the job's bytes (model_bytes + options_bytes of `job`) into the
  // worker's input memfd with `write_input`, sends the job and waits for the
  // answer, the worker's death, or a stop: `stop`'s deadline or cancellation,
  // or the time limit. `on_sent` is called once the worker has the job (from
  // then on a stop kills it, and the job counts as a conversion).
  JobResult run(const worker::JobFrame& job,
                const std::function<void(std::byte* input)>& write_input, StopSignal& stop,
                const std::function<void()>& on_sent = {});

 private:
  WorkerProcess(const WorkerOptions& options, ChildRegistry& children)
      : options_(options), children_(children) {}
  Status spawn();
  Status wait_ready();
  void kill_and_reap(JobResult* result);
  void reap(JobResult* result);
  void read_notes(JobResult* result);
  double cpu_seconds() const;
  void check_answer(JobResult* result, worker::UniqueFd new_output);
  void take_handed_over(JobResult* result, worker::UniqueFd file);
  // An input memfd of at least `bytes` (the current one, or a new one).
  bool ensure_input(uint64_t bytes);

  WorkerOptions options_;
  ChildRegistry& children_;
  pid_t pid_ = -1;
  bool alive_ = false;
  bool usable_ = false;
  double final_cpu_seconds_ = 0;  // the CPU time of its whole life, once reaped
  worker::UniqueFd socket_, pidfd_, wake_;
  worker::UniqueFd input_;     // read-write; the worker has a read-only descriptor
  worker::Mapping input_map_;  // writable
  bool input_sent_ = false;    // the worker has the current input memfd
  worker::UniqueFd output_;    // the worker's, sealed against shrinking
  worker::Mapping output_map_;
};

// The path of lite2onnx-worker beside this program (/proc/self/exe).
std::string default_worker_binary();

}  // namespace lite2onnx::server
