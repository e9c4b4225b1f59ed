#include "certificates.h"

#include <cstdlib>

#include "test_models.h"

namespace lite2onnx::server_test {

Certificates::Certificates() {
  const std::string d = dir_.path();
  const std::string script =
      "set -e; cd '" + d +
      "'; exec >openssl.log 2>&1\n"
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca "
      "  -keyout ca.key -out ca.pem\n"
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca "
      "  -keyout other.key -out other.pem\n"
      "printf 'subjectAltName=DNS:localhost\\n' > san.ext\n"
      "openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out "
      "server.csr\n"
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "  -extfile san.ext -out server.pem\n"
      "openssl req -newkey rsa:2048 -nodes -subj /CN=client -keyout client.key -out client.csr\n"
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "  -out client.pem\n"
      "openssl req -newkey rsa:2048 -nodes -subj /CN=stranger -keyout stranger.key "
      "  -out stranger.csr\n"
      "openssl x509 -req -in stranger.csr -CA other.pem -CAkey other.key -CAcreateserial "
      "  -days 1 -out stranger.pem\n";
  ok_ = std::system(script.c_str()) == 0;
}

std::string Certificates::log() const { return read_file(path("openssl.log")); }

std::string Certificates::pem(const std::string& name) const { return read_file(path(name)); }

}  // namespace lite2onnx::server_test
