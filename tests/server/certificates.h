// Throwaway TLS material made by openssl at test time (TLS tests, the CLI's --tls-*).
#pragma once

#include <string>

#include "server_process.h"

namespace lite2onnx::server_test {

// A CA, a server certificate for "localhost" and a client certificate, all
// signed by the CA; plus a second CA that signed nothing the server trusts.
// Files in a temporary directory: ca.pem, server.pem/.key, client.pem/.key,
// stranger.pem/.key (signed by other.pem).
class Certificates {
 public:
  Certificates();
  bool ok() const { return ok_; }
  std::string log() const;
  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string pem(const std::string& name) const;

 private:
  TempDir dir_;
  bool ok_ = false;
};

}  // namespace lite2onnx::server_test
