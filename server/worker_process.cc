#include "server/worker_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

// glibc 2.36's <sys/pidfd.h> lacks extern "C" (fixed in 2.37).
extern "C" {
#include <sys/pidfd.h>
}

namespace lite2onnx::server {
namespace {

using SteadyClock = std::chrono::steady_clock;
using worker::AnswerFrame;
using worker::AnswerKind;
using worker::UniqueFd;

Error error(const std::string& message) { return make_error(ErrorCode::kInternal, message); }

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string describe(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const char* name = sigabbrev_np(WTERMSIG(wait_status));
    return std::string("was killed by SIG") + (name ? name : std::to_string(WTERMSIG(wait_status)));
  }
  return "ended";
}

// The environment of a worker: none of the server's (it may hold secrets),
// only what a sanitizer build needs to run and limit it.
std::vector<std::string> worker_environment([[maybe_unused]] uint64_t memory_limit) {
  std::vector<std::string> env;
#if defined(__SANITIZE_ADDRESS__)
  // ASan reserves terabytes of address space, so RLIMIT_DATA cannot limit a
  // worker: ASan's own limits do (one allocation beyond the limit returns
  // null: operator new fails; the whole process beyond baseline + limit dies).
  const char* inherited = std::getenv("ASAN_OPTIONS");
  const uint64_t mib = std::max<uint64_t>(1, memory_limit >> 20);
  // (A crash is a plain signal, as in a release build: handle_segv=0.)
  std::string asan = std::string("ASAN_OPTIONS=") + (inherited ? inherited : "") +
                     ":detect_leaks=0:allocator_may_return_null=1:handle_segv=0";
  if (memory_limit > 0)
    asan += ":max_allocation_size_mb=" + std::to_string(mib) +
            ":hard_rss_limit_mb=" + std::to_string(mib + 512);
  env.push_back(asan);
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  if (const char* ubsan = std::getenv("UBSAN_OPTIONS"))
    env.push_back(std::string("UBSAN_OPTIONS=") + ubsan);
#endif
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// The time left until `t` (zero when past), for ppoll.
timespec until(SteadyClock::time_point t) {
  const auto left = std::max(SteadyClock::duration::zero(), t - SteadyClock::now());
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(left);
  return {
      static_cast<time_t>(s.count()),
      static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(left - s).count())};
}

}  // namespace

void ChildRegistry::remove(pid_t pid) {
  std::lock_guard lock(mu_);
  pids_.erase(pid);
}

int ChildRegistry::reap_orphans() {
  std::lock_guard lock(mu_);
  const pid_t self = getpid();
  int reaped = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  for (dirent* e; (e = readdir(proc));) {
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid <= 0 || pids_.count(pid)) continue;
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 > stat.size()) continue;
    char state = stat[close + 2];
    const pid_t ppid = static_cast<pid_t>(std::atol(stat.c_str() + close + 4));
    if (ppid == self && state == 'Z' && waitpid(pid, nullptr, WNOHANG) == pid) ++reaped;
  }
  closedir(proc);
  return reaped;
}

std::string default_worker_binary() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return "lite2onnx-worker";
  std::string self(path.data(), static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "lite2onnx-worker";
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::start(const WorkerOptions& options,
                                                            ChildRegistry& children) {
  std::unique_ptr<WorkerProcess> w(new WorkerProcess(options, children));
  if (auto st = w->spawn(); !st) return st.take_error();
  if (auto st = w->wait_ready(); !st) return st.take_error();
  w->usable_ = true;
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (alive_) kill_and_reap(nullptr);
}

Status WorkerProcess::spawn() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return error(errno_text("socketpair"));
  socket_.reset(sv[0]);
  UniqueFd theirs(sv[1]);
  wake_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) return error(errno_text("eventfd"));

  // Descriptors: /dev/null in and out, stderr shared only by sanitizer builds
  // (their reports), the control socket at 3, nothing else.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_UNDEFINED__)
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
#endif
  posix_spawn_file_actions_adddup2(&files, theirs.get(), worker::kControlFd);
  posix_spawn_file_actions_addclosefrom_np(&files, worker::kControlFd + 1);
  // Its own process group (a Ctrl-C of the server's terminal does not reach
  // it mid-drain), no blocked signal, default dispositions but SIGPIPE's.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigfillset(&defaults);
  for (int sig : {SIGPIPE, SIGKILL, SIGSTOP}) sigdelset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<std::string> args{options_.binary, "--parent-pid", std::to_string(getpid()),
                                "--memory-limit", std::to_string(options_.memory_limit)};
  if (options_.test_faults) args.push_back("--test-faults");
  const Limits& l = options_.conversion_limits;
  for (auto [flag, value] : {std::pair{"--max-operators", uint64_t{l.max_operators}},
                             std::pair{"--max-tensors", uint64_t{l.max_tensors}},
                             std::pair{"--max-inputs-per-op", uint64_t{l.max_inputs_per_op}},
                             std::pair{"--max-created-bytes", l.max_created_bytes},
                             std::pair{"--max-output-bytes", l.max_output_bytes}}) {
    args.push_back(flag);
    args.push_back(std::to_string(value));
  }
  std::vector<std::string> env = worker_environment(options_.memory_limit);
  auto argv = pointers(args), envp = pointers(env);
  int spawn_error = 0;
  pid_ = children_.add([&] {
    pid_t pid = -1;
    spawn_error =
        posix_spawn(&pid, options_.binary.c_str(), &files, &attr, argv.data(), envp.data());
    return spawn_error == 0 ? pid : -1;
  });
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (pid_ <= 0)
    return error("cannot start the worker '" + options_.binary +
                 "': " + std::strerror(spawn_error));
  alive_ = true;
  // Where pidfd_open is missing (Linux < 5.3, or a container runtime's seccomp
  // profile that refuses it) the end of the socket tells of the worker's death
  // instead, and it is killed by pid (safe: no one else reaps it).
  pidfd_.reset(pidfd_open(pid_, 0));
  return ok_status();
}

Status WorkerProcess::wait_ready() {
  const auto end = SteadyClock::now() + options_.start_timeout;
  pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}};
  const timespec timeout = until(end);
  if (ppoll(fds, 2, &timeout, nullptr) > 0 && (fds[0].revents & POLLIN)) {
    AnswerFrame ready;
    if (worker::receive_frame(socket_.get(), &ready, sizeof ready, nullptr) == 1 &&
        ready.magic == worker::kMagic && ready.kind == AnswerKind::kReady)
      return ok_status();
  }
  JobResult ended;
  kill_and_reap(&ended);
  return error("the worker '" + options_.binary + "' did not start: it " +
               describe(ended.wait_status) + " (run it by hand to see why)");
}

double WorkerProcess::cpu_seconds() const {
  clockid_t clock;
  timespec t{};
  if (clock_getcpuclockid(pid_, &clock) != 0 || clock_gettime(clock, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void WorkerProcess::reap(JobResult* result) {
  int status = 0;
  rusage usage{};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  children_.remove(pid_);
  alive_ = false;
  usable_ = false;
  final_cpu_seconds_ = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  if (result) {
    result->wait_status = status;
    result->peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  }
}

void WorkerProcess::kill_and_reap(JobResult* result) {
  if (pidfd_)
    pidfd_send_signal(pidfd_.get(), SIGKILL, nullptr, 0);
  else
    kill(pid_, SIGKILL);
  reap(result);
}

// Takes the notes a worker sent before it died (an allocation failure).
void WorkerProcess::read_notes(JobResult* result) {
  for (;;) {
    pollfd p{socket_.get(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) return;
    AnswerFrame note;
    if (worker::receive_frame(socket_.get(), &note, sizeof note, nullptr) != 1) return;
    if (note.magic == worker::kMagic && note.kind == AnswerKind::kOutOfMemory)
      result->out_of_memory = true;
  }
}

bool WorkerProcess::ensure_input(uint64_t bytes) {
  if (input_ && bytes <= input_map_.size()) return true;
  // A size of whole MiB, fixed by seals: only the server writes it (the
  // worker's descriptor is read-only), and it never shrinks under the worker.
  const uint64_t size = std::max<uint64_t>(1, (bytes + (1 << 20) - 1) >> 20) << 20;
  input_map_ = worker::Mapping();
  input_ = worker::make_memfd("lite2onnx-model");
  if (!input_ || ftruncate(input_.get(), static_cast<off_t>(size)) != 0 ||
      fcntl(input_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    input_.reset();
    return false;
  }
  input_map_ = worker::Mapping::map(input_.get(), static_cast<size_t>(size), true);
  input_sent_ = false;
  if (!input_map_.ok()) input_.reset();
  return input_map_.ok();
}

namespace {

// A copy of [offset, offset + n) of a file (false: it cannot be read whole).
bool read_exactly(int fd, uint64_t offset, uint64_t n, std::string* out) {
  out->resize(static_cast<size_t>(n));
  for (uint64_t done = 0; done < n;) {
    const ssize_t got = pread(fd, out->data() + done, static_cast<size_t>(n - done),
                              static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

void WorkerProcess::take_handed_over(JobResult* result, UniqueFd file) {
  const AnswerFrame& a = result->answer;
  // Sealed before anything is read: from now on neither the worker nor anyone
  // can change, grow or shrink it (F_SEAL_WRITE is refused while a writable
  // mapping exists: the worker must not have mapped it).
  constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
  struct stat st {};
  if (!file || fcntl(file.get(), F_ADD_SEALS, kSeals) != 0 ||
      (fcntl(file.get(), F_GET_SEALS) & kSeals) != kSeals || fstat(file.get(), &st) != 0) {
    result->problem = "its large answer came without a memfd that can be sealed";
  } else {
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (a.onnx_bytes > size || a.info_bytes > size - a.onnx_bytes ||
        a.error_bytes > size - a.onnx_bytes - a.info_bytes) {
      result->problem = "its answer's lengths exceed its memfd";
    } else if (!read_exactly(file.get(), a.onnx_bytes, a.info_bytes, &result->info) ||
               !read_exactly(file.get(), a.onnx_bytes + a.info_bytes, a.error_bytes,
                             &result->error)) {
      result->problem = errno_text("its answer's memfd cannot be read");
    } else {
      result->answer_file = std::move(file);
      result->end = JobEnd::kAnswered;
      return;
    }
  }
  result->end = JobEnd::kBadAnswer;
  kill_and_reap(result);
}

void WorkerProcess::check_answer(JobResult* result, UniqueFd new_output) {
  const AnswerFrame& a = result->answer;
  if (a.flags & ~worker::kAnswerHandedOver) {
    result->problem = "its answer has unknown flags";
    result->end = JobEnd::kBadAnswer;
    return kill_and_reap(result);
  }
  if (a.flags & worker::kAnswerHandedOver) return take_handed_over(result, std::move(new_output));
  // A new output memfd is sealed against shrinking before it is mapped: the
  // worker cannot make the server's mapping point past its end (no SIGBUS).
  // Only a memfd takes seals.
  if (new_output) {
    if (fcntl(new_output.get(), F_ADD_SEALS, F_SEAL_SHRINK) != 0 ||
        !(fcntl(new_output.get(), F_GET_SEALS) & F_SEAL_SHRINK)) {
      result->problem = "its answer came without a sealable memfd";
      result->end = JobEnd::kBadAnswer;
      return kill_and_reap(result);
    }
    output_map_ = worker::Mapping();
    output_ = std::move(new_output);
  }
  struct stat st {};
  if (!output_ || fstat(output_.get(), &st) != 0) {
    result->problem = "its answer has no memfd";
  } else {
    // It may grow: map what it holds now (the mapping stays valid, it cannot shrink).
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > output_map_.size()) {
      output_map_ = worker::Mapping();
      output_map_ = worker::Mapping::map(output_.get(), static_cast<size_t>(size), false);
    }
    const uint64_t mapped = output_map_.ok() ? output_map_.size() : 0;
    if (a.onnx_bytes > mapped || a.info_bytes > mapped - a.onnx_bytes ||
        a.error_bytes > mapped - a.onnx_bytes - a.info_bytes) {
      result->problem = "its answer's lengths exceed its memfd";
    } else {
      // Copies of the small parts, before they are parsed (the worker could
      // change them meanwhile).
      auto copy = [&](uint64_t offset, uint64_t n) {
        return std::string(reinterpret_cast<const char*>(output_map_.data() + offset),
                           static_cast<size_t>(n));
      };
      result->onnx = output_map_.bytes(0, static_cast<size_t>(a.onnx_bytes));
      result->info = copy(a.onnx_bytes, a.info_bytes);
      result->error = copy(a.onnx_bytes + a.info_bytes, a.error_bytes);
      result->end = JobEnd::kAnswered;
      return;
    }
  }
  result->end = JobEnd::kBadAnswer;
  kill_and_reap(result);
}

JobResult WorkerProcess::run(const worker::JobFrame& job,
                             const std::function<void(std::byte* input)>& write_input,
                             StopSignal& stop, const std::function<void()>& on_sent) {
  JobResult result;
  if (!ensure_input(job.model_bytes + job.options_bytes)) {
    result.problem = errno_text("cannot make its input memfd");
    kill_and_reap(&result);
    return result;
  }
  write_input(input_map_.data());
  // The worker's descriptor of a new input memfd: read-only.
  UniqueFd readonly;
  if (!input_sent_) {
    readonly.reset(
        open(("/proc/self/fd/" + std::to_string(input_.get())).c_str(), O_RDONLY | O_CLOEXEC));
    if (!readonly) {
      result.problem = errno_text("cannot reopen its input memfd read-only");
      kill_and_reap(&result);
      return result;
    }
  }
  const auto started = SteadyClock::now();
  const auto time_limit = options_.time_limit.count() > 0 ? started + options_.time_limit
                                                          : SteadyClock::time_point::max();
  // The call's deadline on the steady clock (no deadline: none).
  // (gRPC's "no deadline" is the clock's maximum; anything a year away counts as none.)
  const auto call_left = stop.deadline() - std::chrono::system_clock::now();
  auto deadline = SteadyClock::time_point::max();
  if (call_left < std::chrono::hours(24 * 365))
    deadline = started + std::chrono::duration_cast<SteadyClock::duration>(call_left);
  if (stop.set_waker(wake_.get())) {
    stop.clear_waker();
    result.end = JobEnd::kCancelled;
    return result;
  }
  const double cpu_before = cpu_seconds();
  result.sent = true;
  if (!worker::send_frame(socket_.get(), &job, sizeof job, readonly.get())) {
    result.problem = "it was gone before the job";
    reap(&result);
  } else {
    input_sent_ = true;
    if (on_sent) on_sent();
    for (;;) {
      const auto now = SteadyClock::now();
      if (now >= deadline || now >= time_limit) {
        result.end = now >= deadline ? JobEnd::kDeadline : JobEnd::kTimeLimit;
        read_notes(&result);
        kill_and_reap(&result);
        break;
      }
      pollfd fds[3] = {
          {socket_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
      const timespec timeout = until(std::min(deadline, time_limit));
      if (ppoll(fds, 3, &timeout, nullptr) < 0 && errno != EINTR) {
        result.problem = errno_text("ppoll");
        kill_and_reap(&result);
        break;
      }
      if (fds[2].revents & POLLIN) {
        eventfd_t ignored;
        eventfd_read(wake_.get(), &ignored);
        if (stop.cancelled()) {
          result.end = stop.deadline_passed() ? JobEnd::kDeadline : JobEnd::kCancelled;
          kill_and_reap(&result);
          break;
        }
      }
      if (fds[0].revents & POLLIN) {
        UniqueFd output;
        const int got =
            worker::receive_frame(socket_.get(), &result.answer, sizeof result.answer, &output);
        if (got == 1 && result.answer.magic == worker::kMagic &&
            result.answer.kind == AnswerKind::kOutOfMemory) {
          result.out_of_memory = true;
          continue;
        }
        if (got == 1 && result.answer.magic == worker::kMagic &&
            result.answer.kind == AnswerKind::kDone) {
          check_answer(&result, std::move(output));
          break;
        }
        if (got != 0) {
          result.end = JobEnd::kBadAnswer;
          result.problem = "it sent a malformed frame";
          kill_and_reap(&result);
          break;
        }
      }
      // Its pidfd, or the end of its socket (got == 0 above): it died.
      if ((fds[1].revents & POLLIN) || (fds[0].revents & (POLLIN | POLLHUP))) {
        read_notes(&result);
        result.end = JobEnd::kDied;
        reap(&result);
        result.problem = "it " + describe(result.wait_status);
        break;
      }
    }
  }
  stop.clear_waker();
  result.cpu_seconds = (alive_ ? cpu_seconds() : final_cpu_seconds_) - cpu_before;
  if (result.out_of_memory) usable_ = false;
  // A large model's memfd is not kept for the next, small, ones.
  if (input_map_.size() > worker::kReuseBytes) {
    input_map_ = worker::Mapping();
    input_.reset();
  }
  return result;
}

}  // namespace lite2onnx::server
