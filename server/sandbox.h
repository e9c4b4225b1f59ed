// The setup of a worker process (lite2onnx-worker), in the order it runs:
// first thing in main() prepare_process(), then the warm-up conversion, then
// limit_data() and install_seccomp(). Each returns "" or what failed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace lite2onnx::worker {

// Closes every inherited descriptor but the control socket (posix_spawn
// already did; a second time costs nothing), dies with its parent
// (PR_SET_PDEATHSIG, then checks the parent is still `parent`), no new
// privileges, no core dumps, first in line for the OOM killer
// (oom_score_adj 1000), SIGPIPE ignored and no signal blocked, and the time
// zone fixed (TZ=UTC0) and loaded, so that mktime() needs no file later.
std::string prepare_process(pid_t parent);

// Private writable memory the process maps now (VmData), bytes; 0 if unknown.
uint64_t data_bytes_in_use();
// RLIMIT_DATA (soft and hard) at `data_bytes` when not 0: allocations beyond
// fail. RLIMIT_FSIZE at `file_bytes` when not 0: no memfd (the answer) grows
// beyond (SIGXFSZ). RLIMIT_NOFILE at 16: a worker holds a few descriptors,
// so it cannot hoard memfds either.
std::string limit_resources(uint64_t data_bytes, uint64_t file_bytes);

// A seccomp filter allowing only what a conversion needs (memory, the control
// socket, memfds, futexes, clocks, exit); any other system call kills the
// process (SECCOMP_RET_KILL_PROCESS: the server sees SIGSYS). No mapping may
// be executable.
std::string install_seccomp();

}  // namespace lite2onnx::worker
