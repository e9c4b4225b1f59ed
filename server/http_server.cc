// The HTTP endpoint's listener, connections and I/O threads: every connection
// is a C++20 coroutine on its own strand that reads request heads and hands
// them to handle() (http_calls.cc). Probes never wait behind other
// connections: there is no cap on accepting but the number of open
// connections, and at that cap a new connection closes the one that has
// waited longest for a request; a connection that sends no request within the
// head timeout is closed; calls are capped by the call core's admission.
#include <google/protobuf/util/json_util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <thread>
#include <vector>

#include "common/translate.h"
#include "core/convert.h"
#include "server/calls/call.h"
#include "server/http_shared.h"
#include "server/logger.h"
#include "server/metrics.h"

namespace lite2onnx::server {
namespace http {
namespace {

// The I/O threads only move bytes and parse heads: two keep every
// connection's deadlines running while one does a CPU-heavy step (a TLS
// handshake, a piece of base64).
constexpr unsigned kIoThreads = 2;

bool is_parse_error(beast::error_code ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

// One connection: the TLS handshake, then requests until the client closes,
// sends none in time, is evicted, or a request leaves it unusable.
template <class Stream>
asio::awaitable<void> serve(Stream stream, std::string peer, Shared& s) {
  auto link = std::make_shared<Link<Stream>>(
      std::move(stream),
      std::chrono::duration_cast<SteadyClock::duration>(
          std::chrono::duration<double>(s.limits.head_timeout_seconds)),
      std::move(peer));
  // At the cap on open connections, the accept loop may choose this one to
  // close while it waits for a request (checked again on its own executor).
  const auto executor = co_await asio::this_coro::executor;
  auto entry = std::make_shared<Connections::Entry>();
  entry->evict = [executor, link_of = std::weak_ptr(link), entry_of = std::weak_ptr(entry), &s] {
    asio::post(executor, [link_of, entry_of, &s] {
      auto l = link_of.lock();
      auto e = entry_of.lock();
      if (!l || !e || !s.connections.waiting(*e)) return;
      s.core.metrics().record_http_connection_closed("evicted");
      l->evict();
    });
  };
  s.connections.open(entry);
  struct Closed {
    Shared& s;
    Connections::Entry& e;
    ~Closed() { s.connections.closed(e); }
  } closed{s, *entry};

  const beast::error_code handshake = co_await link->handshake();
  if (handshake) {
    // Not worth a warning: any port scanner or plaintext client does it.
    s.core.log().debug("TLS handshake failed", {{"peer", std::string_view(link->peer())},
                                                {"error", std::string_view(handshake.message())}});
    co_return;
  }
  while (!s.stopping.load()) {
    Parser parser;
    parser.header_limit(kMaxHeadBytes);
    parser.body_limit(boost::none);  // the call core counts the body against its limit
    const beast::error_code ec = co_await link->read_head(parser);
    if (ec) {
      if (ec == beast::error::timeout && parser.got_some() == false)
        s.core.metrics().record_http_connection_closed("head_timeout");
      if (is_parse_error(ec)) co_await refuse_head(*link, parser, ec, s);
      co_return;  // closed, idle, evicted, or refused
    }
    s.connections.set_waiting(*entry, false);
    bool keep = false;
    {
      Shared::Busy busy(s);
      if (!busy.admitted()) co_return;
      keep = co_await handle(*link, parser, s);
    }
    if (!keep || !parser.is_done()) {
      co_await link->close(/*unread=*/!parser.is_done());
      co_return;
    }
    s.connections.set_waiting(*entry, true);
  }
}

std::string peer_of(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint e = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const std::string addr = e.address().to_string();
  return e.address().is_v6() ? "ipv6:[" + addr + "]:" + std::to_string(e.port())
                             : "ipv4:" + addr + ":" + std::to_string(e.port());
}

std::string openssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out += (out.empty() ? "" : "; ") + std::string(text);
  }
  return out;
}

// The server's TLS context: TLS 1.2 and later, the certificate chain and key
// (checked against each other), and with a client CA the same rule as the
// gRPC port: a client certificate is required and must verify.
Result<asio::ssl::context> tls_context(const TlsOptions& tls) {
  asio::ssl::context ctx(asio::ssl::context::tls_server);
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_compression |
                  asio::ssl::context::single_dh_use);
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ERR_clear_error();
  auto bad = [](const std::string& what) {
    return make_error(ErrorCode::kInvalidOption, what + ": " + openssl_errors());
  };
  if (SSL_CTX_use_certificate_chain_file(native, tls.cert_file.c_str()) != 1)
    return bad("bad TLS certificate '" + tls.cert_file + "'");
  if (SSL_CTX_use_PrivateKey_file(native, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return bad("bad TLS key '" + tls.key_file + "'");
  if (SSL_CTX_check_private_key(native) != 1)
    return bad("the TLS key '" + tls.key_file + "' does not match the certificate");
  if (tls.mutual()) {
    if (SSL_CTX_load_verify_locations(native, tls.client_ca_file.c_str(), nullptr) != 1)
      return bad("bad TLS client CA '" + tls.client_ca_file + "'");
    // Tells clients which CAs are accepted (curl picks its certificate by it).
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str()))
      SSL_CTX_set_client_CA_list(native, names);
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx;
}

Result<tcp::endpoint> resolve(asio::io_context& ioc, const std::string& listen) {
  std::string host, port;
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    port = listen;
  } else {
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto results =
      resolver.resolve(host, port, tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty())
    return make_error(ErrorCode::kInvalidOption,
                      "cannot serve HTTP on '" + listen +
                          "': " + (ec ? ec.message() : std::string("no such address")));
  return results.begin()->endpoint();
}

}  // namespace

void Connections::open(const std::shared_ptr<Entry>& e) {
  std::lock_guard lock(mu_);
  ++open_;
  e->waiting = true;
  e->in_waiting = waiting_.insert(waiting_.end(), e.get());
}

void Connections::closed(Entry& e) {
  std::lock_guard lock(mu_);
  --open_;
  if (e.waiting) waiting_.erase(e.in_waiting);
  e.waiting = false;
}

void Connections::set_waiting(Entry& e, bool waiting) {
  std::lock_guard lock(mu_);
  if (e.waiting == waiting) return;
  e.waiting = waiting;
  if (waiting)
    e.in_waiting = waiting_.insert(waiting_.end(), &e);
  else
    waiting_.erase(e.in_waiting);
}

bool Connections::waiting(const Entry& e) const {
  std::lock_guard lock(mu_);
  return e.waiting;
}

bool Connections::evict_one() {
  std::function<void()> evict;
  {
    std::lock_guard lock(mu_);
    if (waiting_.empty()) return false;
    Entry* oldest = waiting_.front();
    // Moved to the back: chosen once, until it waits anew.
    waiting_.splice(waiting_.end(), waiting_, waiting_.begin());
    evict = oldest->evict;
  }
  evict();
  return true;
}

unsigned Connections::open_count() const {
  std::lock_guard lock(mu_);
  return open_;
}

Shared::Busy::Busy(Shared& s) : s_(s) {
  std::lock_guard lock(s_.mu);
  admitted_ = !s_.stopping.load();
  if (admitted_) ++s_.busy;
}

Shared::Busy::~Busy() {
  if (!admitted_) return;
  std::lock_guard lock(s_.mu);
  if (--s_.busy == 0) s_.idle.notify_all();
}

void Shared::stop_admitting() {
  std::lock_guard lock(mu);
  stopping.store(true);
}

void Shared::wait_until_idle() {
  std::unique_lock lock(mu);
  idle.wait(lock, [this] { return busy == 0; });
}

}  // namespace http

// Declared in this order so that destruction runs backwards: the I/O threads
// are joined first (in stop()), then the acceptor and timers go, then the
// io_context, whose destruction drops the connections still waiting for a
// request; they refer to `shared`, which goes last.
struct HttpEndpoint::Server {
  Server(HttpLimits limits, CallCore& core) : shared(limits, core) {}

  // Accepts; at the cap on open connections, makes room by closing the one
  // that has waited longest for a request, else waits for one to close.
  http::asio::awaitable<void> accept_loop() {
    using namespace http;
    const unsigned max_open = std::max(1u, shared.limits.max_connections);
    for (;;) {
      while (shared.connections.open_count() >= max_open && acceptor.is_open()) {
        shared.connections.evict_one();
        slot_free.expires_after(std::chrono::milliseconds(100));
        co_await slot_free.async_wait(kAwait);
      }
      if (!acceptor.is_open()) co_return;
      auto [ec, socket] =
          co_await acceptor.async_accept(asio::any_io_executor(asio::make_strand(ioc)), kAwait);
      if (!acceptor.is_open()) co_return;
      if (ec) {  // out of descriptors, say: try again in a moment
        retry.expires_after(std::chrono::milliseconds(50));
        co_await retry.async_wait(kAwait);
        continue;
      }
      // Answers go out as written, not held back for the client's delayed ACK
      // (40 ms per HTTPS answer without it).
      socket.set_option(tcp::no_delay(true), ec);
      std::string peer = peer_of(socket);
      auto executor = socket.get_executor();
      shared.core.metrics().add_http_connections(1);
      auto closed = [this](std::exception_ptr) {
        shared.core.metrics().add_http_connections(-1);
        asio::post(accept_strand, [this] { slot_free.cancel(); });
      };
      if (shared.tls)
        asio::co_spawn(executor,
                       serve(TlsStream(std::move(socket), *shared.tls), std::move(peer), shared),
                       closed);
      else
        asio::co_spawn(executor, serve(PlainStream(std::move(socket)), std::move(peer), shared),
                       closed);
    }
  }

  http::Shared shared;
  http::asio::io_context ioc{static_cast<int>(http::kIoThreads)};
  http::asio::strand<http::asio::io_context::executor_type> accept_strand{
      http::asio::make_strand(ioc)};
  http::tcp::acceptor acceptor{accept_strand};
  http::asio::steady_timer slot_free{accept_strand};
  http::asio::steady_timer retry{accept_strand};
  std::vector<std::thread> threads;
};

HttpEndpoint::HttpEndpoint() = default;
HttpEndpoint::~HttpEndpoint() { stop(); }

Status HttpEndpoint::start(const std::string& listen, HttpLimits limits, const TlsOptions& tls,
                           CallCore& core) {
  using namespace http;
  auto server = std::make_unique<Server>(limits, core);
  std::string operators;
  google::protobuf::util::MessageToJsonString(to_proto(support_matrix()), &operators);
  server->shared.operators_json = std::move(operators);
  if (tls.enabled()) {
    auto ctx = tls_context(tls);
    if (!ctx)
      return make_error(ErrorCode::kInvalidOption,
                        "cannot serve HTTP on '" + listen + "': " + ctx.error().message);
    server->shared.tls.emplace(std::move(*ctx));
  }
  auto endpoint = resolve(server->ioc, listen);
  if (!endpoint) return endpoint.take_error();
  beast::error_code ec;
  tcp::acceptor& acceptor = server->acceptor;
  acceptor.open(endpoint->protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(*endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error(ErrorCode::kInvalidOption,
                      "cannot serve HTTP on '" + listen + "': " + ec.message());
  port_ = acceptor.local_endpoint().port();
  asio::co_spawn(server->accept_strand, server->accept_loop(), asio::detached);
  for (unsigned i = 0; i < kIoThreads; ++i)
    server->threads.emplace_back([&ioc = server->ioc] { ioc.run(); });
  server_ = std::move(server);
  return ok_status();
}

void HttpEndpoint::stop() {
  if (!server_) return;
  Server& s = *server_;
  s.shared.stop_admitting();
  http::asio::post(s.accept_strand, [&s] {
    http::beast::error_code ec;
    s.acceptor.close(ec);
    s.slot_free.cancel();
  });
  // The calls left get cancelled; their answers (each write bounded by its
  // deadline) go out before the connections close.
  s.shared.core.cancel_all();
  s.shared.wait_until_idle();
  s.ioc.stop();
  for (std::thread& t : s.threads) t.join();
  server_.reset();
}

}  // namespace lite2onnx::server
