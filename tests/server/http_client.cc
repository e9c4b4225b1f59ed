#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace lite2onnx::server_test {
namespace {

using Clock = std::chrono::steady_clock;

class Connection {
 public:
  Connection(int port, std::chrono::milliseconds timeout) : end_(Clock::now() + timeout) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~Connection() {
    if (ssl_) SSL_free(ssl_);
    if (ctx_) SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  bool ok() const { return fd_ >= 0; }

  // Makes this a TLS connection (blocking handshake, bounded by the
  // connection's timeout); false with tls_error() set when it fails.
  bool start_tls(const HttpTls& tls) {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(end_ - Clock::now());
    timeval tv{static_cast<time_t>(left.count() / 1000000),
               static_cast<suseconds_t>(left.count() % 1000000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (!ctx_ || SSL_CTX_load_verify_locations(ctx_, tls.ca_file.c_str(), nullptr) != 1 ||
        (!tls.cert_file.empty() &&
         (SSL_CTX_use_certificate_chain_file(ctx_, tls.cert_file.c_str()) != 1 ||
          SSL_CTX_use_PrivateKey_file(ctx_, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1)))
      return tls_failed("TLS material");
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, "localhost");
    SSL_set1_host(ssl_, "localhost");
    if (SSL_connect(ssl_) != 1) return tls_failed("handshake");
    return true;
  }
  const std::string& tls_error() const { return tls_error_; }

  bool send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ssl_ ? SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()))
                             : ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return ssl_ ? tls_failed("write") : false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads more into buffer_; false at the end of the stream or the deadline.
  bool read_more() {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now());
    if (left.count() <= 0) return false;
    if (!ssl_ || SSL_pending(ssl_) == 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    }
    char chunk[65536];
    const ssize_t n =
        ssl_ ? SSL_read(ssl_, chunk, sizeof chunk) : ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0)
      return ssl_ && SSL_get_error(ssl_, static_cast<int>(n)) != SSL_ERROR_ZERO_RETURN
                 ? tls_failed("read")
                 : false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  // One answer's head: status and headers (names lower-cased); 0 if none came.
  int read_head(std::map<std::string, std::string>& headers) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!read_more()) return 0;
    const std::string head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    int status = 0;
    if (std::sscanf(head.c_str(), "HTTP/1.%*d %d", &status) != 1) return 0;
    size_t line = head.find("\r\n");
    while (line != std::string::npos) {
      const size_t next = head.find("\r\n", line + 2);
      const std::string h =
          head.substr(line + 2, next == std::string::npos ? std::string::npos : next - line - 2);
      if (const size_t colon = h.find(':'); colon != std::string::npos) {
        std::string name = h.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        size_t v = colon + 1;
        while (v < h.size() && h[v] == ' ') ++v;
        headers[name] = h.substr(v);
      }
      line = next;
    }
    return status;
  }

  std::string read_body(const std::map<std::string, std::string>& headers) {
    auto it = headers.find("content-length");
    if (it == headers.end()) {
      while (read_more()) {
      }
      return std::move(buffer_);
    }
    const size_t length = std::strtoull(it->second.c_str(), nullptr, 10);
    while (buffer_.size() < length)
      if (!read_more()) break;
    return buffer_.substr(0, std::min(length, buffer_.size()));
  }

 private:
  bool tls_failed(std::string_view what) {
    tls_error_ = std::string(what) + ":";
    while (const unsigned long e = ERR_get_error()) {
      char text[256];
      ERR_error_string_n(e, text, sizeof text);
      tls_error_ += std::string(" ") + text;
    }
    return false;
  }

  int fd_ = -1;
  Clock::time_point end_;
  std::string buffer_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string tls_error_;
};

std::string chunked(std::string_view body) {
  std::string out;
  constexpr size_t kChunk = 65536;
  for (size_t at = 0; at < body.size(); at += kChunk) {
    const size_t n = std::min(kChunk, body.size() - at);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", n);
    out += size;
    out.append(body.substr(at, n));
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

namespace {

HttpResponse call(Connection& c, const HttpRequest& r) {
  HttpResponse out;
  std::string head = r.method + " " + r.target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
  if (r.chunked)
    head += "Transfer-Encoding: chunked\r\n";
  else if (!r.body.empty() || r.method == "POST")
    head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (r.expect_continue) head += "Expect: 100-continue\r\n";
  head += "\r\n";
  const std::string body = r.chunked ? chunked(r.body) : r.body;
  if (!r.expect_continue) {
    c.send_all(head + body);
    out.body_sent = true;
  } else {
    c.send_all(head);
    out.status = c.read_head(out.headers);
    if (out.status != 100) {
      out.body = c.read_body(out.headers);
      out.tls_error = c.tls_error();
      return out;
    }
    out.continued = true;
    out.headers.clear();
    out.body_sent = c.send_all(body);
  }
  out.status = c.read_head(out.headers);
  if (out.status == 100) {  // an interim answer nobody asked for
    out.continued = true;
    out.headers.clear();
    out.status = c.read_head(out.headers);
  }
  if (out.status) out.body = c.read_body(out.headers);
  out.tls_error = c.tls_error();
  return out;
}

}  // namespace

HttpResponse http_call(int port, const HttpRequest& r, std::chrono::milliseconds timeout) {
  Connection c(port, timeout);
  if (!c.ok()) return {};
  return call(c, r);
}

HttpResponse https_call(int port, const HttpTls& tls, const HttpRequest& r,
                        std::chrono::milliseconds timeout) {
  Connection c(port, timeout);
  if (!c.ok()) return {};
  if (!c.start_tls(tls)) {
    HttpResponse out;
    out.tls_error = c.tls_error();
    return out;
  }
  return call(c, r);
}

HttpResponse http_raw(int port, const std::string& bytes, std::chrono::milliseconds timeout) {
  HttpResponse out;
  Connection c(port, timeout);
  if (!c.ok()) return out;
  out.body_sent = c.send_all(bytes);
  out.status = c.read_head(out.headers);
  if (out.status) out.body = c.read_body(out.headers);
  return out;
}

size_t http_flood(int port, const std::string& start, const std::string& unit, size_t max_bytes,
                  std::chrono::milliseconds timeout) {
  Connection c(port, timeout);
  if (!c.ok() || !c.send_all(start)) return 0;
  size_t sent = start.size();
  const auto end = Clock::now() + timeout;
  while (sent < max_bytes && Clock::now() < end && c.send_all(unit)) sent += unit.size();
  return sent;
}

}  // namespace lite2onnx::server_test
