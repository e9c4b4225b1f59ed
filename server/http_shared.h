// What the HTTP endpoint's connections share (http_server.cc runs them,
// http_calls.cc answers their requests).
#pragma once

#include <boost/asio/ssl.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "server/http_endpoint.h"
#include "server/http_link.h"

namespace lite2onnx::server::http {

// The open connections, and which of them wait for a request (evictable).
class Connections {
 public:
  struct Entry {
    std::function<void()> evict;  // closes the connection, on its own executor
    bool waiting = true;
    std::list<Entry*>::iterator in_waiting;
  };

  // A connection opened (its `evict` set), waiting for its first request.
  void open(const std::shared_ptr<Entry>& e);
  void closed(Entry& e);
  // A request arrived on it (false), or its answer is out (true).
  void set_waiting(Entry& e, bool waiting);
  // Whether it still waits (the eviction checks on its executor).
  bool waiting(const Entry& e) const;
  // Closes the connection that has waited longest for a request; false when
  // every open connection has a request in progress.
  bool evict_one();
  unsigned open_count() const;

 private:
  mutable std::mutex mu_;
  unsigned open_ = 0;
  std::list<Entry*> waiting_;  // oldest first
};

struct Shared {
  Shared(HttpLimits limits, CallCore& core) : limits(limits), core(core) {}

  // A request being handled, from its head to its answer's last byte; none
  // starts once stop() began (admitted() is false), so that stop() can wait
  // for the last and no pool job outlives its call.
  class Busy {
   public:
    explicit Busy(Shared& s);
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
    bool admitted() const { return admitted_; }

   private:
    Shared& s_;
    bool admitted_ = false;
  };

  void stop_admitting();
  void wait_until_idle();
  // A pace for answers outside a call.
  Pace pace() const { return Pace(limits.send, SteadyClock::now()); }

  const HttpLimits limits;
  CallCore& core;
  std::string operators_json;  // GET /v1/operators, written once
  std::optional<asio::ssl::context> tls;
  asio::thread_pool encoder{1};  // JSON, off the I/O threads
  Connections connections;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle;
  int busy = 0;
};

// Answers one request whose head `parser` has read; whether the connection
// may carry another (http_calls.cc, for both stream types).
template <class Stream>
asio::awaitable<bool> handle(Link<Stream>& link, Parser& parser, Shared& s);

// A request head the parser refused: too large (431) or not HTTP/1.x (400).
template <class Stream>
asio::awaitable<void> refuse_head(Link<Stream>& link, const Parser& parser, beast::error_code ec,
                                  Shared& s);

}  // namespace lite2onnx::server::http
