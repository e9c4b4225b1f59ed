// The CLI's --server: its flags, and the way to the server. Two programs are
// built from client/main.cc (docs/performance.md, start-up): lite2onnx, which
// converts in its own process and loads no gRPC, runs lite2onnx-remote
// (LITE2ONNX_REMOTE_PROGRAM) in its place for --server; lite2onnx-remote has the
// client library linked in (LITE2ONNX_REMOTE). This file is compiled into each
// with its own definition.
#pragma once

#include <string>
#include <variant>

#include "common/failure.h"
#ifdef LITE2ONNX_REMOTE
#include "client/remote/remote.h"
#endif

namespace CLI {
class App;
}

namespace lite2onnx {

// --server and the flags of the connection to it (convert, inspect, ops).
struct RemoteArgs {
  std::string server;  // HOST:PORT; empty: convert in this process
  bool tls = false;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  double deadline_seconds = 0;
  int retries = -1;      // more attempts after a retryable failure; -1: not given (0, a batch 3)
  bool verbose = false;  // convert -v
  bool enabled() const { return !server.empty(); }
};

#if defined(LITE2ONNX_REMOTE) || defined(LITE2ONNX_REMOTE_PROGRAM)
// --server, --tls... on a subcommand (convert, inspect, ops).
void add_remote_options(CLI::App* cmd, RemoteArgs& r);
#endif

#ifdef LITE2ONNX_REMOTE
// A client of --server; the TLS files are read now, the connection is made by the first call.
std::variant<remote::Client, Failure> connect(const RemoteArgs& r);
#endif

#ifdef LITE2ONNX_REMOTE_PROGRAM
// Whether the command line has --server (--server X, --server=X) anywhere.
bool names_a_server(int argc, char** argv);
// --server: runs the gRPC client, the program LITE2ONNX_REMOTE_PROGRAM beside
// this one, in this process's place with the same arguments (so that this one
// starts without loading gRPC, OpenSSL, abseil and their 50 libraries); called
// first thing, before the command line is parsed (that program parses it
// alike: it is this one with the client linked in). Returns only when it
// cannot: why.
std::string run_remote_program(char** argv);
#endif

}  // namespace lite2onnx
