#include "server/sandbox.h"

#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "server/worker_protocol.h"

namespace lite2onnx::worker {
namespace {

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

// The system calls of a conversion, beyond those allowed with argument checks
// in install_seccomp(). Checked by converting the 101 models of the shared
// corpus in both quantization modes and inspecting them, and by the tests,
// with the kernel's audit log of seccomp kills (dmesg: type=1326 syscall=N).
constexpr int kAllowed[] = {
    // memory
    SCMP_SYS(brk),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    // the control socket and the memfds (grown with ftruncate, never shrunk: sealed;
    // a large answer's own memfd written with write)
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendmsg),
    SCMP_SYS(write),
    SCMP_SYS(ftruncate),
    SCMP_SYS(memfd_create),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(close),
    // threads' primitives (std::mutex, static initialization), time, a test hook's sleep
    SCMP_SYS(futex),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    SCMP_SYS(sched_yield),
    // abort() and raise(): block signals, then signal this process (see the tgkill rule)
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    // the end
    SCMP_SYS(exit_group),
    SCMP_SYS(exit),
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
    // The sanitizers' runtime: its allocator, stack traces and reports (test builds only).
    SCMP_SYS(read),
    SCMP_SYS(ioctl),
    SCMP_SYS(fcntl),
    SCMP_SYS(open),
    SCMP_SYS(openat),
    SCMP_SYS(readlink),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(getrlimit),
    SCMP_SYS(prlimit64),
    SCMP_SYS(lseek),
    SCMP_SYS(getdents64),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(pipe2),
    SCMP_SYS(wait4),
    SCMP_SYS(clone),
    SCMP_SYS(clone3),
    SCMP_SYS(execve),
    SCMP_SYS(dup2),
    SCMP_SYS(prctl),
    SCMP_SYS(ptrace),
    SCMP_SYS(getppid),
    SCMP_SYS(setrlimit),
#endif
};

}  // namespace

std::string prepare_process(pid_t parent) {
  // Nothing but stdin/stdout/stderr (/dev/null, or the server's stderr in
  // sanitizer builds) and the control socket.
  if (close_range(kControlFd + 1, ~0U, 0) != 0) return failed("close_range");
  // Dies with the server's thread that started it; if that happened before
  // the line above took effect, the parent is already someone else.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return failed("PR_SET_PDEATHSIG");
  if (getppid() != parent) return "the server exited while this worker started";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("PR_SET_NO_NEW_PRIVS");
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) return failed("RLIMIT_CORE");
  // The pod's OOM killer takes a worker (one conversion), not the server.
  if (!(std::ofstream("/proc/self/oom_score_adj") << "1000" << std::flush))
    return failed("oom_score_adj");
  // posix_spawn reset the mask and every disposition but SIGPIPE's; once more,
  // explicitly: a write to a closed socket is an error, not a death.
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) != 0) return failed("sigprocmask");
  signal(SIGPIPE, SIG_IGN);
  // A fixed time zone, read now: libzip (the associated files of TFLite
  // Metadata) converts each archive entry's DOS time with mktime(), and glibc
  // looks for the zone on every call (a stat, or an open of /etc/localtime
  // when that is missing, as in a minimal image) unless TZ names the zone it
  // has loaded. The worker prints no local time.
  if (setenv("TZ", "UTC0", 1) != 0) return failed("setenv TZ");
  tzset();
  return "";
}

uint64_t data_bytes_in_use() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmData:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

std::string limit_resources(uint64_t data_bytes, uint64_t file_bytes) {
  const rlimit data{data_bytes, data_bytes}, file{file_bytes, file_bytes}, files{16, 16};
  if (data_bytes > 0 && setrlimit(RLIMIT_DATA, &data) != 0) return failed("RLIMIT_DATA");
  if (file_bytes > 0 && setrlimit(RLIMIT_FSIZE, &file) != 0) return failed("RLIMIT_FSIZE");
  if (setrlimit(RLIMIT_NOFILE, &files) != 0) return failed("RLIMIT_NOFILE");
  return "";
}

std::string install_seccomp() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (!ctx) return "seccomp_init failed";
  struct Release {
    scmp_filter_ctx ctx;
    ~Release() { seccomp_release(ctx); }
  } release{ctx};
  // Every thread (a sanitizer's background thread, if any), not just this one.
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0) return "seccomp: no TSYNC";
  auto allow = [&](int call, unsigned count = 0, const scmp_arg_cmp* args = nullptr) {
    return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, call, count, args) == 0;
  };
  for (int call : kAllowed)
    if (!allow(call)) return "seccomp: cannot allow system call " + std::to_string(call);
  // Memory, but never executable: no code can be mapped or made runnable.
  const scmp_arg_cmp no_exec_mmap = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
  if (!allow(SCMP_SYS(mmap), 1, &no_exec_mmap) || !allow(SCMP_SYS(mprotect), 1, &no_exec_mmap))
    return "seccomp: cannot allow mmap/mprotect";
  // Signals to this process only (abort(), raise()).
  const scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid()));
  if (!allow(SCMP_SYS(tgkill), 1, &self)) return "seccomp: cannot allow tgkill";
  if (seccomp_load(ctx) != 0) return "seccomp_load failed";
  return "";
}

}  // namespace lite2onnx::worker
