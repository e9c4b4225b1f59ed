// One HTTP connection's stream (plain TCP or TLS over it), its read buffer
// and its deadlines: the TLS handshake and each request head within the head
// timeout, each body read by the call's upload deadline, each write by its
// answer's pace. Errors come back as values: a closed or timed-out connection
// is an ordinary outcome, not an exception.
#pragma once

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "server/calls/pace.h"

namespace lite2onnx::server::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

// co_await appears only as a statement, an initializer or a co_return operand:
// GCC 12 miscompiles it inside ?: (the awaited coroutine's frame was freed
// before its result was read; valgrind found it) and && is as suspect.
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

inline constexpr uint32_t kMaxHeadBytes = 16 * 1024;  // request line and headers
inline constexpr size_t kReadChunk = size_t{1} << 16;
// What one write may take: a slow reader gets its answer chunk by chunk, each
// by its deadline.
inline constexpr size_t kWriteChunk = size_t{1} << 20;
inline constexpr size_t kJoinedWriteBytes = 16 * 1024;  // an answer copied into one write
// The read buffer holds a whole head, and what came after it in the same read.
inline constexpr size_t kReadBufferBytes = kMaxHeadBytes + kReadChunk;
// After an answer that leaves a body unread, the server reads (and drops) at
// most this much, for at most kLingerTime, before closing: closing a socket
// with unread data resets it, and the reset can destroy the answer before the
// client read it.
inline constexpr size_t kLingerBytes = size_t{1} << 20;
inline constexpr auto kLingerTime = std::chrono::seconds(2);

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using Parser = bhttp::request_parser<bhttp::buffer_body>;

template <class Stream>
class Link {
 public:
  Link(Stream stream, SteadyClock::duration head_timeout, std::string peer)
      : stream_(std::move(stream)),
        body_timer_(stream_.get_executor()),
        head_timeout_(head_timeout),
        peer_(std::move(peer)) {}

  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  const std::string& peer() const { return peer_; }
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }

  asio::awaitable<beast::error_code> handshake() {
    tcp().expires_after(head_timeout_);
    if constexpr (kTls) {
      auto [ec] = co_await stream_.async_handshake(asio::ssl::stream_base::server, kAwait);
      co_return ec;
    } else {
      co_return beast::error_code();
    }
  }

  // The whole head must arrive within the head timeout: a client dripping
  // bytes, or sending nothing, gains nothing.
  asio::awaitable<beast::error_code> read_head(Parser& parser) {
    tcp().expires_after(head_timeout_);
    auto [ec, n] = co_await bhttp::async_read_header(stream_, buffer_, parser, kAwait);
    co_return ec;
  }

  // Up to chunk.size() bytes of the body by `deadline`; `got` says how many.
  // The deadline cancels the read instead of closing the stream (as the
  // stream's own expiry would): the client still gets its 400.
  asio::awaitable<beast::error_code> read_body(Parser& parser, std::span<char> chunk, size_t& got,
                                               SteadyClock::time_point deadline) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    tcp().expires_never();
    body_timer_.expires_at(deadline);
    auto [order, ec, n, timer_ec] =
        co_await asio::experimental::make_parallel_group(
            bhttp::async_read(stream_, buffer_, parser, asio::deferred),
            body_timer_.async_wait(asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    if (order[0] == 1) ec = beast::error::timeout;
    if (ec == bhttp::error::need_buffer) ec = {};  // the chunk is full
    got = chunk.size() - parser.get().body().size;
    co_return ec;
  }

  // `bytes`, in writes of at most kWriteChunk, each done by `pace`'s deadline
  // for the bytes sent with it; `sent` counts them. Never a sequence of
  // buffers: beast's ssl_stream (flat_stream) writes 0 bytes of a sequence
  // whose first buffer is empty (as asio::async_write leaves a consumed one),
  // and async_write takes that for the end (a 24 KB answer lost its body
  // after a head written with it, measured).
  asio::awaitable<bool> write(std::string_view bytes, const Pace& pace, uint64_t& sent) {
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), kWriteChunk);
      tcp().expires_at(pace.deadline(sent + n));
      auto [ec, written] =
          co_await asio::async_write(stream_, asio::buffer(bytes.data(), n), kAwait);
      if (ec || written != n) co_return false;
      sent += n;
      bytes.remove_prefix(n);
    }
    co_return true;
  }

  // A head and a small body in one write (one TLS record, one segment).
  asio::awaitable<bool> write(std::string_view head, std::string_view body, const Pace& pace,
                              uint64_t& sent) {
    if (head.size() + body.size() <= kJoinedWriteBytes) {
      std::string joined;
      joined.reserve(head.size() + body.size());
      joined.append(head).append(body);
      co_return co_await write(joined, pace, sent);
    }
    const bool head_written = co_await write(head, pace, sent);
    if (!head_written) co_return false;
    co_return co_await write(body, pace, sent);
  }

  // Ends the connection. `unread`: the client may still be sending (a body
  // nobody read, a head too large): read and drop it for a moment first, so
  // that the answer is not lost to a reset.
  asio::awaitable<void> close(bool unread) {
    beast::error_code ec;
    if (unread) {
      if constexpr (!kTls) tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
      tcp().expires_after(std::min<SteadyClock::duration>(head_timeout_, kLingerTime));
      std::vector<char> sink(kReadChunk);
      for (size_t dropped = 0; dropped < kLingerBytes;) {
        auto [read_ec, n] = co_await stream_.async_read_some(asio::buffer(sink), kAwait);
        if (read_ec) break;
        dropped += n;
      }
    }
    tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp().close();
  }

  // Ends a connection that waits for a request (on its own executor).
  void evict() {
    beast::error_code ec;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp().close();
  }

 private:
  Stream stream_;
  asio::steady_timer body_timer_;
  beast::flat_buffer buffer_{kReadBufferBytes};
  const SteadyClock::duration head_timeout_;
  const std::string peer_;
};

}  // namespace lite2onnx::server::http
