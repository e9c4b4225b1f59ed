#include "client/remote_args.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

namespace lite2onnx {

#ifdef LITE2ONNX_REMOTE
std::variant<remote::Client, Failure> connect(const RemoteArgs& r) {
  // Failures are reported in one line each; with -v, gRPC's own log shows too.
  if (!r.verbose) remote::silence_grpc_logging();
  remote::ClientOptions options;
  options.address = r.server;
  options.tls.enabled =
      r.tls || !r.tls_ca.empty() || !r.tls_cert.empty() || !r.tls_server_name.empty();
  options.tls.ca_file = r.tls_ca;
  options.tls.cert_file = r.tls_cert;
  options.tls.key_file = r.tls_key;
  options.tls.server_name = r.tls_server_name;
  options.deadline = std::chrono::milliseconds(std::llround(r.deadline_seconds * 1000));
  options.retry.max_attempts = 1 + std::max(r.retries, 0);
  auto client = remote::Client::create(options);
  if (!client) return client.error();
  return std::move(client).value();
}
#endif

#ifdef LITE2ONNX_REMOTE_PROGRAM
bool names_a_server(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--server" || arg.starts_with("--server=")) return true;
  }
  return false;
}

std::string run_remote_program(char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string program = (self.parent_path() / LITE2ONNX_REMOTE_PROGRAM).string();
  if (!ec) {
    std::cout.flush();
    ::execv(program.c_str(), argv);
  }
  return "--server needs the program " + program + " (the gRPC client, installed beside " +
         "lite2onnx): " + (ec ? ec.message() : std::string(std::strerror(errno)));
}
#endif

#if defined(LITE2ONNX_REMOTE) || defined(LITE2ONNX_REMOTE_PROGRAM)
void add_remote_options(CLI::App* cmd, RemoteArgs& r) {
  auto* server = cmd->add_option("--server", r.server,
                                 "HOST:PORT of a lite2onnx-server (or a gRPC target: "
                                 "dns:///NAME:PORT, ipv4:A:P,B:Q; calls are balanced over all its "
                                 "addresses): run there instead of in this process (same options, "
                                 "same output)");
  cmd->add_flag("--tls", r.tls, "connect with TLS, verifying the server with the system's CAs")
      ->needs(server);
  cmd->add_option("--tls-ca", r.tls_ca, "PEM CA bundle that verifies the server (implies --tls)")
      ->needs(server)
      ->check(CLI::ExistingFile);
  auto* cert = cmd->add_option("--tls-cert", r.tls_cert,
                               "PEM client certificate for mutual TLS (implies --tls)")
                   ->needs(server)
                   ->check(CLI::ExistingFile);
  auto* key = cmd->add_option("--tls-key", r.tls_key, "PEM private key of --tls-cert")
                  ->needs(cert)
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  cmd->add_option("--tls-server-name", r.tls_server_name,
                  "the name the server's certificate must carry (default: HOST of --server; "
                  "implies --tls)")
      ->needs(server);
  cmd->add_option("--deadline", r.deadline_seconds,
                  "seconds the server may take for the whole call (default: no deadline)")
      ->needs(server)
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_option("--retries", r.retries,
                  "retry a call refused for a passing reason (queue_full, memory_budget, "
                  "cancelled, shutting_down, unavailable) up to N times, at most 4 (gRPC's "
                  "limit of 5 attempts): the server says when, an unreachable one is tried "
                  "again after 250 ms doubling (default 0, and 3 for a batch; --deadline bounds "
                  "all attempts of one model together)")
      ->needs(server)
      ->check(CLI::Range(0, 100));
}
#endif

}  // namespace lite2onnx
