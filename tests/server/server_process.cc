#include "server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cctype>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "test_models.h"

extern char** environ;

namespace lite2onnx::server_test {
namespace {

using Clock = std::chrono::steady_clock;

// Starts `binary` (the server's by default) with stdout into `out_path` and
// stderr into `err_path` (the same file when empty), pinned to CPU `cpu` if >= 0.
pid_t spawn(const std::vector<std::string>& args, const Env& extra, const std::string& out_path,
            const std::string& err_path = "", const char* binary = LITE2ONNX_SERVER_BIN,
            int cpu = -1) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LITE2ONNX_", 10) != 0) env_strings.emplace_back(*e);
  for (const auto& [k, v] : extra) env_strings.push_back(k + "=" + v);
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  auto pointers = [](std::vector<std::string>& v) {
    std::vector<char*> p;
    for (auto& s : v) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  };
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd =
        err_path.empty() ? fd : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(126);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid` until `timeout`; the exit code (128+signal when killed), -1 if still running.
int wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0 || Clock::now() >= end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The exit code of `pid` once it ended; -1 (and SIGKILL) if it did not end within `timeout`.
int wait_or_kill(pid_t pid, std::chrono::milliseconds timeout) {
  const int code = wait_for(pid, timeout);
  if (code < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return code;
}

}  // namespace

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "lite2onnx-server-XXXXXX");
  path_ = mkdtemp(pattern.data()) ? pattern : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::unique_ptr<ServerProcess> ServerProcess::start(const std::vector<std::string>& args,
                                                    const Env& env, int cpu,
                                                    const std::vector<std::string>& wrapper) {
  std::unique_ptr<ServerProcess> s(new ServerProcess());
  const std::string port_file = s->dir_.file("ports");
  std::vector<std::string> all{"--listen", "127.0.0.1:0", "--port-file", port_file};
  for (const char* flag : {"--metrics-listen", "--http-listen"}) {
    std::string var = "LITE2ONNX_";
    for (const char* c = flag + 2; *c; ++c)
      var += *c == '-' ? '_' : static_cast<char>(std::toupper(*c));
    if (std::find(args.begin(), args.end(), flag) == args.end() && !env.count(var))
      all.insert(all.end(), {flag, ""});
  }
  all.insert(all.end(), args.begin(), args.end());
  if (wrapper.empty()) {
    s->pid_ = spawn(all, env, s->dir_.file("log"), "", LITE2ONNX_SERVER_BIN, cpu);
  } else {
    std::vector<std::string> wrapped(wrapper.begin() + 1, wrapper.end());
    wrapped.push_back(LITE2ONNX_SERVER_BIN);
    wrapped.insert(wrapped.end(), all.begin(), all.end());
    s->pid_ = spawn(wrapped, env, s->dir_.file("log"), "", wrapper[0].c_str(), cpu);
  }
  const auto end = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < end) {
    const std::string ports = read_file(port_file);
    if (!ports.empty()) {
      std::sscanf(ports.c_str(), "grpc=%d\nmetrics=%d\nhttp=%d", &s->grpc_port_, &s->metrics_port_,
                  &s->http_port_);
      return s;
    }
    if (const int code = wait_for(s->pid_, std::chrono::milliseconds(10)); code >= 0) {
      s->exited_ = true;
      s->exit_code_ = code;
      ADD_FAILURE() << "the server exited with " << code << " before listening:\n" << s->log();
      return nullptr;
    }
  }
  ADD_FAILURE() << "the server did not listen within 20 s:\n" << s->log();
  return nullptr;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::shared_ptr<grpc::Channel> ServerProcess::channel() const {
  return channel(grpc::InsecureChannelCredentials());
}

std::shared_ptr<grpc::Channel> ServerProcess::channel(
    std::shared_ptr<grpc::ChannelCredentials> creds, const std::string& host_override) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (!host_override.empty()) args.SetSslTargetNameOverride(host_override);
  // A fresh connection per channel: tests must not share one by accident.
  args.SetInt("grpc.use_local_subchannel_pool", 1);
  return grpc::CreateCustomChannel(address(), std::move(creds), args);
}

void ServerProcess::send_signal(int sig) const {
  if (pid_ > 0 && !exited_) kill(pid_, sig);
}

int ServerProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (exited_) return exit_code_;
  const int code = wait_for(pid_, timeout);
  if (code >= 0) {
    exited_ = true;
    exit_code_ = code;
  }
  return code;
}

std::string ServerProcess::log() const { return read_file(dir_.file("log")); }

namespace {

int occurrences(const std::string& text, const std::string& what) {
  int seen = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size())
    ++seen;
  return seen;
}

}  // namespace

std::string ServerProcess::wait_for_log(const std::string& text, int count,
                                        std::chrono::milliseconds timeout) const {
  const auto end = Clock::now() + timeout;
  for (;;) {
    std::string log = this->log();
    if (occurrences(log, text) >= count || Clock::now() >= end) return log;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool ServerProcess::wait_for_job_sent(const std::function<void()>& start_call) const {
  const std::string sent = "job sent to the worker";
  const int before = occurrences(log(), sent);
  start_call();
  return occurrences(wait_for_log(sent, before + 1, std::chrono::seconds(60)), sent) > before;
}

RunResult run_server(const std::vector<std::string>& args, const Env& env,
                     std::chrono::milliseconds timeout) {
  TempDir dir;
  const pid_t pid = spawn(args, env, dir.file("out"));
  RunResult r;
  r.exit_code = wait_or_kill(pid, timeout);
  r.output = read_file(dir.file("out"));
  return r;
}

CliResult run_cli(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  TempDir dir;
  const pid_t pid = spawn(args, {}, dir.file("out"), dir.file("err"), LITE2ONNX_CLI_BIN);
  CliResult r;
  r.exit_code = wait_or_kill(pid, timeout);
  r.out = read_file(dir.file("out"));
  r.err = read_file(dir.file("err"));
  return r;
}

std::string http_get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[65536];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) response.append(buf, n);
    }
  }
  close(fd);
  const auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

}  // namespace lite2onnx::server_test
