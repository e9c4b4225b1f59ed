// The real lite2onnx-server binary, started as a child process on a loopback
// port for one test and killed when the test ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace grpc {
class Channel;
class ChannelCredentials;
}  // namespace grpc

namespace lite2onnx::server_test {

using Env = std::map<std::string, std::string>;

// What a server run that ended by itself printed, and its exit code.
struct RunResult {
  int exit_code = -1;  // -1: did not exit in time
  std::string output;  // stdout and stderr
};

// A temporary directory, removed with its files.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

class ServerProcess {
 public:
  // Starts the server with `args` after --listen 127.0.0.1:0, --port-file,
  // --metrics-listen "" and --http-listen "" (no metrics or HTTP endpoint
  // unless `args` or `env` name an address), and
  // waits until it listens. LITE2ONNX_* variables of the test's own
  // environment are not passed on; `env` adds variables; `cpu` >= 0 pins the
  // process to that CPU. Fails the test (and returns null) when the server
  // does not come up.
  // `wrapper`, if given, is a command that runs the server (its arguments
  // follow), e.g. {"/usr/bin/unshare", "--pid", "--fork"}; pid() is then the
  // wrapper's.
  static std::unique_ptr<ServerProcess> start(const std::vector<std::string>& args,
                                              const Env& env = {}, int cpu = -1,
                                              const std::vector<std::string>& wrapper = {});
  ~ServerProcess();  // SIGKILL if still running

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_port_); }
  std::shared_ptr<grpc::Channel> channel() const;
  std::shared_ptr<grpc::Channel> channel(std::shared_ptr<grpc::ChannelCredentials> creds,
                                         const std::string& host_override = "") const;

  void send_signal(int sig) const;
  // The exit code once the server ended, -1 if it did not end within `timeout`.
  int wait_exit(std::chrono::milliseconds timeout);
  // What the server printed so far (its log).
  std::string log() const;
  // The log once `text` occurs `count` times in it (a call's request line is
  // written after its answer), or as it is after `timeout`.
  std::string wait_for_log(const std::string& text, int count = 1,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Runs `start_call` (which starts a conversion and returns) and waits until
  // the server's log says a worker has the job: from then on the conversion
  // runs, and a stop kills the worker. Needs --log-level debug ("job sent to
  // the worker"); false if the line never came (a 60 s guard).
  bool wait_for_job_sent(const std::function<void()>& start_call) const;

 private:
  ServerProcess() = default;
  TempDir dir_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
};

// Runs the server binary with exactly `args` (for configuration errors, --help),
// expecting it to exit by itself within `timeout`; SIGKILLs it otherwise.
RunResult run_server(const std::vector<std::string>& args, const Env& env = {},
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

// What one run of the lite2onnx CLI printed, and its exit code.
struct CliResult {
  int exit_code = -1;  // -1: did not exit in time
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs the lite2onnx CLI of this build with `args` (no LITE2ONNX_* variables).
CliResult run_cli(const std::vector<std::string>& args,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

// The body of GET http://127.0.0.1:port/path; empty on failure.
std::string http_get(int port, const std::string& path);

}  // namespace lite2onnx::server_test
