#include "server/http_endpoint.h"

#include <google/protobuf/util/json_util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <numeric>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/error_reasons.h"
#include "common/translate.h"
#include "core/option_table.h"
#include "server/call.h"
#include "server/conversion_runner.h"

namespace lite2onnx::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// co_await appears only as a statement, an initializer or a co_return operand:
// GCC 12 miscompiles it inside ?: (the awaited coroutine's frame was freed
// before its result was read; valgrind found it) and && is as suspect.
//
// Errors come back as values: a closed or timed-out connection is an
// ordinary outcome, not an exception.
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

constexpr uint32_t kMaxHeadBytes = 16 * 1024;  // request line and headers
constexpr size_t kReadChunk = size_t{1} << 16;
// What one write may take, under one idle timeout: a slow reader still gets a
// large answer, a stalled one is cut off.
constexpr size_t kWriteChunk = size_t{1} << 20;
constexpr size_t kJoinedWriteBytes = 16 * 1024;  // an answer copied into one write
// The read buffer holds a whole head, and what came after it in the same read.
constexpr size_t kReadBufferBytes = kMaxHeadBytes + kReadChunk;
// After an answer that leaves a body unread, the server reads (and drops) at
// most this much, for at most kLingerTime, before closing: closing a socket
// with unread data resets it, and the reset can destroy the answer before the
// client read it.
constexpr size_t kLingerBytes = size_t{1} << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);
// The io threads only move bytes and parse heads; conversions run on the pool
// and answers are written asynchronously, so two keep every connection's
// timeouts running while a CPU-heavy step (a TLS handshake, a JSON answer) runs.
constexpr unsigned kIoThreads = 2;
constexpr size_t kMaxWarningHeaderChars = 512;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using Parser = http::request_parser<http::buffer_body>;

struct Header {
  std::string name, value;
};

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string json_of(const google::protobuf::Message& message) {
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(message, &out).ok()) return "{}";
  return out;
}

// Header values come from diagnostics that quote the model's own strings:
// control characters and non-ASCII bytes become '?', so nothing can end a
// header line early.
std::string header_safe(std::string_view text, size_t max_chars) {
  std::string out(text.substr(0, max_chars));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}

// A whole answer. `close`: the connection ends after it.
struct Answer {
  int status = 200;
  std::string_view content_type = "text/plain; charset=utf-8";
  std::string_view body;
  std::vector<Header> headers;
  bool close = false;
};

std::string head_of(const Answer& a, bool keep_alive, unsigned version) {
  std::string head = "HTTP/1.1 " + std::to_string(a.status) + " " +
                     std::string(sv(http::obsolete_reason(static_cast<http::status>(a.status)))) +
                     "\r\nContent-Type: " + std::string(a.content_type) +
                     "\r\nContent-Length: " + std::to_string(a.body.size()) + "\r\n";
  for (const Header& h : a.headers) head += h.name + ": " + h.value + "\r\n";
  if (!keep_alive)
    head += "Connection: close\r\n";
  else if (version == 10)  // HTTP/1.0 closes unless told otherwise
    head += "Connection: keep-alive\r\n";
  return head + "\r\n";
}

// One connection's stream, its read buffer and its idle timeout: every read
// and write (and the TLS handshake) gets `idle` to complete, after which the
// stream cancels it (beast::tcp_stream's expiry).
template <class Stream>
class Link {
 public:
  Link(Stream stream, std::chrono::steady_clock::duration idle, std::string peer)
      : stream_(std::move(stream)),
        body_timer_(stream_.get_executor()),
        idle_(idle),
        peer_(std::move(peer)) {}

  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  const std::string& peer() const { return peer_; }
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }

  asio::awaitable<beast::error_code> handshake() {
    tcp().expires_after(idle_);
    if constexpr (kTls) {
      auto [ec] = co_await stream_.async_handshake(ssl::stream_base::server, kAwait);
      co_return ec;
    } else {
      co_return beast::error_code();
    }
  }

  // The whole head must arrive within one idle timeout: a client dripping
  // bytes gains nothing.
  asio::awaitable<beast::error_code> read_head(Parser& parser) {
    tcp().expires_after(idle_);
    auto [ec, n] = co_await http::async_read_header(stream_, buffer_, parser, kAwait);
    co_return ec;
  }

  // Up to chunk.size() bytes of the body; `got` says how many. The idle
  // timeout cancels the read instead of closing the stream (as the stream's
  // own expiry would): the client still gets its 400.
  asio::awaitable<beast::error_code> read_body(Parser& parser, std::span<char> chunk, size_t& got) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    tcp().expires_never();
    body_timer_.expires_after(idle_);
    auto [order, ec, n, timer_ec] =
        co_await asio::experimental::make_parallel_group(
            http::async_read(stream_, buffer_, parser, asio::deferred),
            body_timer_.async_wait(asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    if (order[0] == 1) ec = beast::error::timeout;
    if (ec == http::error::need_buffer) ec = {};  // the chunk is full
    got = chunk.size() - parser.get().body().size;
    co_return ec;
  }

  // `head`, then `body`, in writes of one buffer and at most kWriteChunk each.
  // A small answer goes out in one write (one TLS record, one segment). Never
  // a sequence of buffers: beast's ssl_stream (flat_stream) writes 0 bytes of
  // a sequence whose first buffer is empty (as asio::async_write leaves a
  // consumed one), and async_write takes that for the end: a 24 KB answer
  // lost its body after a head written with it (measured).
  asio::awaitable<bool> write(std::string_view head, std::string_view body) {
    std::string joined;
    if (head.size() + body.size() <= kJoinedWriteBytes) {
      joined.reserve(head.size() + body.size());
      joined.append(head).append(body);
      head = joined;
      body = {};
    }
    for (std::string_view bytes : {head, body}) {
      while (!bytes.empty()) {
        const size_t n = std::min(bytes.size(), kWriteChunk);
        tcp().expires_after(idle_);
        auto [ec, written] =
            co_await asio::async_write(stream_, asio::buffer(bytes.data(), n), kAwait);
        if (ec || written != n) co_return false;
        bytes.remove_prefix(n);
      }
    }
    co_return true;
  }

  // Sends `a`; returns whether the connection may carry another request.
  asio::awaitable<bool> send(const Answer& a, const Parser& parser) {
    const bool keep_alive = !a.close && parser.keep_alive();
    const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
    const std::string head = head_of(a, keep_alive, version);
    const bool written = co_await write(head, a.body);
    co_return written&& keep_alive;
  }

  asio::awaitable<bool> send_continue() {
    co_return co_await write("HTTP/1.1 100 Continue\r\n\r\n", {});
  }

  // Ends the connection. `unread`: the client may still be sending (a body
  // nobody read, a head too large): read and drop it for a moment first, so
  // that the answer is not lost to a reset.
  asio::awaitable<void> close(bool unread) {
    beast::error_code ec;
    if (unread) {
      if constexpr (!kTls) tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
      tcp().expires_after(std::min<Clock::duration>(idle_, kLingerTime));
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

 private:
  Stream stream_;
  asio::steady_timer body_timer_;
  beast::flat_buffer buffer_{kReadBufferBytes};
  const Clock::duration idle_;
  const std::string peer_;
};

// What the query string asks for: the conversion options (names from the
// option table) and the call's deadline (`timeout`, seconds).
struct CallParameters {
  ConvertOptions options;
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
};

std::optional<double> parse_seconds(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= 0 ||
      v > 1e7)
    return std::nullopt;
  return v;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::optional<std::string> url_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      unsigned byte = 0;
      if (i + 2 >= text.size()) return std::nullopt;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, byte, 16);
      if (ec != std::errc() || end != text.data() + i + 3) return std::nullopt;
      out += static_cast<char>(byte);
      i += 2;
    }
  }
  return out;
}

Result<CallParameters> parse_parameters(std::string_view query, std::string_view timeout_header,
                                        bool with_options) {
  CallParameters p;
  auto set_timeout = [&](std::string_view text) -> Status {
    auto seconds = parse_seconds(text);
    if (!seconds)
      return make_error(ErrorCode::kInvalidOption,
                        "timeout: '" + header_safe(text, 64) + "' (seconds, a positive number)");
    p.deadline = std::chrono::system_clock::now() +
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(
                     std::chrono::duration<double>(*seconds));
    return ok_status();
  };
  if (!timeout_header.empty())
    if (auto st = set_timeout(timeout_header); !st) return st.take_error();
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    auto name = url_decoded(item.substr(0, eq));
    auto value = url_decoded(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (!name || !value)
      return make_error(ErrorCode::kInvalidOption,
                        "the query parameter '" + header_safe(item, 64) + "' is not URL-encoded");
    if (*name == "timeout") {
      if (auto st = set_timeout(*value); !st) return st.take_error();
    } else if (!with_options) {
      return make_error(ErrorCode::kInvalidOption,
                        "unknown parameter '" + header_safe(*name, 64) + "' (only timeout)");
    } else if (auto st = set_option(p.options, *name, *value); !st) {
      return st.take_error();
    }
  }
  return p;
}

std::string diagnostics_summary(const Diagnostics& d) {
  const int64_t nodes =
      std::accumulate(d.emitted_nodes.begin(), d.emitted_nodes.end(), int64_t{0},
                      [](int64_t sum, const auto& kv) { return sum + kv.second; });
  return "opset=" + std::to_string(d.opset) + "; onnx_bytes=" + std::to_string(d.onnx_bytes) +
         "; nodes=" + std::to_string(nodes) +
         "; transposes=" + std::to_string(d.transposes_after_cleanup) +
         "; warnings=" + std::to_string(d.warnings.size()) +
         (d.cache.empty() ? "" : "; cache=" + d.cache);
}

// The request as the handlers read it.
struct Request {
  explicit Request(const Parser& parser) : parser(parser) {
    const std::string_view target = sv(parser.get().target());
    const size_t q = target.find('?');
    path = target.substr(0, q);
    query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  }
  std::string_view header(std::string_view name) const {
    auto it = parser.get().find(beast::string_view(name.data(), name.size()));
    return it == parser.get().end() ? std::string_view() : sv(it->value());
  }
  std::string_view method() const { return sv(parser.get().method_string()); }
  bool wants_json() const {
    return header("Accept").find("application/json") != std::string_view::npos;
  }

  const Parser& parser;
  std::string_view path, query;
};

// A failure's answer: its reason's HTTP status and the ConversionError as JSON
// (proto3 JSON mapping). A refusal that a client may retry says when.
struct FailureAnswer {
  FailureAnswer(const Failure& f, std::string_view request_id, bool body_unread)
      : json(json_of(to_proto(f))) {
    answer.status = http_status(f.reason);
    answer.content_type = "application/json";
    answer.body = json;
    answer.headers.push_back({"X-Request-Id", std::string(request_id)});
    if (answer.status == 429 || answer.status == 503)
      answer.headers.push_back({"Retry-After", "1"});
    // The client may still be sending a body nobody reads: the connection
    // ends with this answer.
    answer.close = body_unread;
  }
  FailureAnswer(const FailureAnswer&) = delete;
  FailureAnswer& operator=(const FailureAnswer&) = delete;
  std::string json;
  Answer answer;  // its body is `json`
};

// What the connections share: limits, the call environment, the TLS context,
// and the count of requests being answered (stop() waits for it).
struct Shared {
  Shared(HttpLimits limits, CallEnvironment& env) : limits(limits), env(env) {}

  // A request being handled, from its head to its answer's last byte; none
  // starts once stop() began (admitted() is false), so that stop() can wait
  // for the last and no pool job outlives its call.
  class Busy {
   public:
    explicit Busy(Shared& s) : s_(s) {
      std::lock_guard lock(s_.mu);
      admitted_ = !s_.stopping.load();
      if (admitted_) ++s_.busy;
    }
    ~Busy() {
      if (!admitted_) return;
      std::lock_guard lock(s_.mu);
      if (--s_.busy == 0) s_.idle.notify_all();
    }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
    bool admitted() const { return admitted_; }

   private:
    Shared& s_;
    bool admitted_ = false;
  };

  void stop_admitting() {
    std::lock_guard lock(mu);
    stopping.store(true);
  }
  void wait_until_idle() {
    std::unique_lock lock(mu);
    idle.wait(lock, [this] { return busy == 0; });
  }

  const HttpLimits limits;
  CallEnvironment& env;
  ActiveCalls active;
  std::string operators_json;  // GET /v1/operators, written once
  std::optional<ssl::context> tls;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle;
  int busy = 0;
};

}  // namespace

// One POST /v1/convert or /v1/inspect: admitted (size, memory budget, queue
// room) before its body is read, so that a refusal costs no upload; then read
// in chunks against the budget, run on the pool, and answered. run() returns
// whether the connection may carry another request.
template <class Stream>
class HttpCall {
 public:
  HttpCall(Link<Stream>& link, Parser& parser, Shared& shared, bool inspect)
      : link_(link),
        parser_(parser),
        request_(parser),
        limits_(shared.limits),
        env_(shared.env),
        active_(shared.active),
        inspect_(inspect),
        trace_(env_, inspect ? "Inspect" : "Convert", request_.header("X-Request-Id"),
               link.peer()) {}

  asio::awaitable<bool> run() {
    Parser& parser = parser_;
    if (env_.draining.load())
      co_return co_await fail(refusal(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
    auto params =
        parse_parameters(request_.query, request_.header("X-Lite2onnx-Timeout"), !inspect_);
    if (!params) co_return co_await fail(from_core(params.error(), false));
    options_ = std::move(params->options);
    wire_options_ = to_proto(options_);
    if (!inspect_) trace_.options = summary(wire_options_);
    StopSignal stop(params->deadline);
    active_.add(&stop);
    struct Unregister {
      ActiveCalls& active;
      StopSignal* stop;
      ~Unregister() { active.remove(stop); }
    } unregister{active_, &stop};

    // -1: chunked, counted as it arrives.
    const int64_t declared = parser.chunked()
                                 ? -1
                                 : static_cast<int64_t>(std::min<uint64_t>(
                                       parser.content_length().value_or(0), INT64_MAX));
    if (declared > 0) trace_.model_bytes = static_cast<uint64_t>(declared);
    if (declared >= 0 && static_cast<uint64_t>(declared) > limits_.max_body_bytes)
      co_return co_await fail(too_large(static_cast<uint64_t>(declared)));
    auto reservation = env_.budget.try_reserve(declared > 0 ? static_cast<uint64_t>(declared) : 0);
    if (!reservation)
      co_return co_await fail(refusal(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    if (!env_.pool.has_room())
      co_return co_await fail(refusal(env_, v1::ConversionError::REASON_QUEUE_FULL));
    if (beast::iequals(request_.header("Expect"), "100-continue") && parser.get().version() == 11 &&
        !parser.is_done()) {
      const bool sent = co_await link_.send_continue();
      if (!sent) co_return false;
    }
    std::optional<Failure> unread = co_await read_body(parser, declared, *reservation, stop);
    if (unread) co_return co_await fail(std::move(*unread));
    trace_.model_bytes = model_.size();
    fault_ = test_fault(env_, request_.header("X-Lite2onnx-Test-Fault"));
    if (!inspect_ && fault_.fault == worker::Fault::kNone) {  // a test fault asks for a worker
      key_ = env_.cache.key(model_, options_);
      if (key_)
        if (auto hit = env_.cache.find(*key_)) {
          model_.clear();
          reservation->release();
          outcome_ = std::move(*hit);
          co_return co_await answer_convert();
        }
    }

    // The pool's thread posts the end of the job back to this connection's
    // strand: the io threads stay free while the conversion runs.
    const auto executor = co_await asio::this_coro::executor;
    asio::steady_timer job_done(executor, asio::steady_timer::time_point::max());
    bool done = false;
    const Clock::time_point queued_at = Clock::now();
    const bool submitted = env_.pool.try_submit([&, executor](ConversionRunner& runner) {
      trace_.dequeued(queued_at);
      try {
        if (stop.stop_requested())
          failure_ = stop.failure();
        else
          work(runner, stop);
      } catch (const std::exception& e) {
        failure_ = failure(v1::ConversionError::REASON_INTERNAL, e.what());
      }
      // The last touch of this call from the pool's thread: once posted, the
      // call may resume and end at once (hence the job's own copy of the executor).
      asio::post(executor, [&] {
        done = true;
        job_done.cancel();
      });
    });
    if (!submitted) {
      model_.clear();
      co_return co_await fail(refusal(env_, v1::ConversionError::REASON_QUEUE_FULL));
    }
    while (!done) co_await job_done.async_wait(kAwait);
    model_.clear();
    reservation->release();
    if (outcome_.ran)
      trace_.conversion_ran(outcome_.diagnostics, outcome_.outcome, outcome_.cpu_seconds);
    if (failure_) co_return co_await fail(std::move(*failure_));
    if (inspect_) co_return co_await answer_inspect();
    co_return co_await answer_convert();
  }

 private:
  Failure too_large(uint64_t bytes) const {
    return failure(v1::ConversionError::REASON_MODEL_TOO_LARGE,
                   "the model has " + (bytes ? std::to_string(bytes) : "more") +
                       " bytes, more than this server's " + std::to_string(limits_.max_body_bytes) +
                       " (--max-stream-bytes)");
  }

  // Reads the body into model_, growing the reservation for a chunked one.
  asio::awaitable<std::optional<Failure>> read_body(Parser& parser, int64_t declared,
                                                    MemoryBudget::Reservation& reservation,
                                                    const StopSignal& stop) {
    if (declared > 0) model_.reserve(static_cast<size_t>(declared));
    std::vector<char> chunk(kReadChunk);
    while (!parser.is_done()) {
      size_t n = 0;
      const beast::error_code ec = co_await link_.read_body(parser, chunk, n);
      if (ec)
        co_return failure(v1::ConversionError::REASON_BAD_STREAM,
                          "the request body could not be read after " +
                              std::to_string(model_.size()) + " bytes (" + ec.message() +
                              "; connection closed, not HTTP, or idle longer than "
                              "--stream-idle-timeout)");
      const auto bytes = static_cast<uint64_t>(n);
      if (model_.size() + bytes > limits_.max_body_bytes) co_return too_large(0);
      if (declared < 0 && !reservation.grow(bytes))
        co_return refusal(env_, v1::ConversionError::REASON_MEMORY_BUDGET);
      model_.append(std::as_bytes(std::span(chunk.data(), bytes)));
      if (stop.cancelled()) co_return stop.failure();  // stop() during a slow upload
    }
    co_return std::nullopt;
  }

  // On a pool thread.
  void work(ConversionRunner& runner, StopSignal& stop) {
    if (inspect_) {
      InspectOutcome out = runner.inspect(model_, stop, fault_, trace_.id());
      failure_ = std::move(out.failure);
      inspect_response_ = std::move(out.response);
      return;
    }
    ConvertJob job{model_, wire_options_, options_, stop, fault_, trace_.id()};
    outcome_ = env_.cache.convert(runner, job, key_ ? &*key_ : nullptr);
    failure_ = outcome_.failure;
  }

  asio::awaitable<bool> answer_convert() {
    trace_.onnx_bytes = outcome_.onnx.bytes.size();
    Answer a;
    a.headers = {{"X-Request-Id", trace_.id()},
                 {"X-Lite2onnx-Diagnostics", diagnostics_summary(outcome_.diagnostics)}};
    if (!outcome_.diagnostics.warnings.empty())
      a.headers.push_back({"X-Lite2onnx-Warning", header_safe(outcome_.diagnostics.warnings.front(),
                                                              kMaxWarningHeaderChars)});
    std::string json;
    if (request_.wants_json()) {
      v1::ConvertResponse response;
      response.set_onnx_model(std::string(outcome_.onnx.bytes));
      to_proto(outcome_.diagnostics, response.mutable_diagnostics());
      json = json_of(response);
      a.content_type = "application/json";
      a.body = json;
    } else {
      a.content_type = "application/octet-stream";
      a.body = outcome_.onnx.bytes;
    }
    CallRecord record = trace_.complete(grpc::Status::OK);
    const bool keep = co_await link_.send(a, parser_);
    record.write();
    co_return keep;
  }

  asio::awaitable<bool> answer_inspect() {
    const std::string json = json_of(inspect_response_);
    Answer a;
    a.content_type = "application/json";
    a.body = json;
    a.headers = {{"X-Request-Id", trace_.id()}};
    CallRecord record = trace_.complete(grpc::Status::OK);
    const bool keep = co_await link_.send(a, parser_);
    record.write();
    co_return keep;
  }

  asio::awaitable<bool> fail(Failure f) {
    const FailureAnswer answer(f, trace_.id(), !parser_.is_done());
    CallRecord record = trace_.complete(to_status(f));
    const bool keep = co_await link_.send(answer.answer, parser_);
    record.write();
    co_return keep;
  }

  Link<Stream>& link_;
  Parser& parser_;
  const Request request_;
  const HttpLimits& limits_;
  CallEnvironment& env_;
  ActiveCalls& active_;
  const bool inspect_;
  CallTrace trace_;
  ConvertOptions options_;
  v1::ConvertOptions wire_options_;
  ModelBuffer model_;
  std::optional<CacheKey> key_;
  TestFault fault_;
  std::optional<Failure> failure_;
  ConvertOutcome outcome_;
  v1::InspectResponse inspect_response_;
};

namespace {

// The handlers of one request; each returns whether the connection may carry
// another request.
template <class Stream>
asio::awaitable<bool> handle(Link<Stream>& link, Parser& parser, Shared& s) {
  const Request r(parser);
  auto method_is = [&](std::string_view method) { return r.method() == method; };
  auto wrong_method = [&](std::string_view method) -> asio::awaitable<bool> {
    Answer a;
    a.status = 405;
    const std::string text = "use " + std::string(method) + "\n";
    a.body = text;
    a.headers = {{"Allow", std::string(method)}};
    a.close = true;
    co_return co_await link.send(a, parser);
  };
  auto text = [&](int status, std::string_view body) -> asio::awaitable<bool> {
    Answer a;
    a.status = status;
    a.body = body;
    co_return co_await link.send(a, parser);
  };

  if (r.path == "/v1/convert" || r.path == "/v1/inspect") {
    if (!method_is("POST")) co_return co_await wrong_method("POST");
    HttpCall<Stream> call(link, parser, s, r.path == "/v1/inspect");
    co_return co_await call.run();
  }
  if (r.path == "/v1/operators") {
    if (!method_is("GET")) co_return co_await wrong_method("GET");
    CallTrace trace(s.env, "ListOperators", r.header("X-Request-Id"), link.peer());
    const std::string id = trace.id();
    if (s.env.draining.load()) {
      const Failure f = refusal(s.env, v1::ConversionError::REASON_SHUTTING_DOWN);
      const FailureAnswer answer(f, id, false);
      CallRecord record = trace.complete(to_status(f));
      const bool keep = co_await link.send(answer.answer, parser);
      record.write();
      co_return keep;
    }
    Answer a;
    a.content_type = "application/json";
    a.body = s.operators_json;
    a.headers = {{"X-Request-Id", id}};
    CallRecord record = trace.complete(grpc::Status::OK);
    const bool keep = co_await link.send(a, parser);
    record.write();
    co_return keep;
  }
  if (r.path == "/healthz") {
    if (!method_is("GET")) co_return co_await wrong_method("GET");
    co_return co_await text(200, "ok\n");
  }
  if (r.path == "/readyz") {
    if (!method_is("GET")) co_return co_await wrong_method("GET");
    if (s.env.draining.load()) co_return co_await text(503, "draining\n");
    co_return co_await text(200, "ready\n");
  }
  co_return co_await text(404,
                          "no such resource; POST /v1/convert, POST /v1/inspect, GET "
                          "/v1/operators, GET /healthz, GET /readyz\n");
}

// A head the parser refused: too large (431) or not HTTP/1.x (400).
template <class Stream>
asio::awaitable<void> refuse_head(Link<Stream>& link, const Parser& parser, beast::error_code ec) {
  Answer a;
  a.close = true;
  std::string text;
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    a.status = 431;
    text = "the request line and headers exceed " + std::to_string(kMaxHeadBytes) + " bytes\n";
  } else {
    a.status = 400;
    text = "not an HTTP/1.1 request: " + ec.message() + "\n";
  }
  a.body = text;
  co_await link.send(a, parser);
  co_await link.close(/*unread=*/true);
}

bool is_parse_error(beast::error_code ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// One connection: the TLS handshake, then requests until the client closes,
// goes idle, or a request leaves it unusable.
template <class Stream>
asio::awaitable<void> serve(Stream stream, std::string peer, Shared& s) {
  Link<Stream> link(std::move(stream),
                    std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(s.limits.idle_seconds)),
                    std::move(peer));
  const beast::error_code handshake = co_await link.handshake();
  if (handshake) {
    // Not worth a warning: any port scanner or plaintext client does it.
    s.env.log.log(LogLevel::kDebug, "TLS handshake failed",
                  {{"peer", std::string_view(link.peer())},
                   {"error", std::string_view(handshake.message())}});
    co_return;
  }
  while (!s.stopping.load()) {
    Parser parser;
    parser.header_limit(kMaxHeadBytes);
    parser.body_limit(boost::none);  // HttpCall counts the body against --max-stream-bytes
    const beast::error_code ec = co_await link.read_head(parser);
    if (ec) {
      if (is_parse_error(ec)) co_await refuse_head(link, parser, ec);
      co_return;  // closed, idle, or refused
    }
    bool keep = false;
    {
      Shared::Busy busy(s);
      if (!busy.admitted()) co_return;
      std::string error;
      try {
        keep = co_await handle(link, parser, s);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (!error.empty()) {  // (no co_await inside a handler)
        Answer a;
        a.status = 500;
        const std::string text = "internal error: " + error + "\n";
        a.body = text;
        a.close = true;
        co_await link.send(a, parser);
      }
    }
    if (!keep || !parser.is_done()) {
      co_await link.close(/*unread=*/!parser.is_done());
      co_return;
    }
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
Result<ssl::context> tls_context(const TlsOptions& tls) {
  ssl::context ctx(ssl::context::tls_server);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                  ssl::context::single_dh_use);
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

// Declared in this order so that destruction runs backwards: the io threads
// are joined first (in stop()), then the acceptor and timer go, then the
// io_context, whose destruction drops the connections still waiting for a
// request; they refer to `shared`, which goes last.
struct HttpEndpoint::Server {
  Server(HttpLimits limits, CallEnvironment& env) : shared(limits, env) {}

  // Accepts while fewer than limits.connections connections are open; the
  // rest wait in the listen backlog.
  asio::awaitable<void> accept_loop() {
    const unsigned max_open = std::max(1u, shared.limits.connections);
    for (;;) {
      while (open >= max_open && acceptor.is_open()) co_await slot_free.async_wait(kAwait);
      if (!acceptor.is_open()) co_return;
      auto [ec, socket] =
          co_await acceptor.async_accept(asio::any_io_executor(asio::make_strand(ioc)), kAwait);
      if (!acceptor.is_open()) co_return;
      if (ec) {  // out of descriptors, say: try again in a moment
        retry.expires_after(std::chrono::milliseconds(50));
        co_await retry.async_wait(kAwait);
        continue;
      }
      ++open;
      // Answers go out as written, not held back for the client's delayed ACK
      // (40 ms per HTTPS answer without it).
      socket.set_option(tcp::no_delay(true), ec);
      std::string peer = peer_of(socket);
      auto executor = socket.get_executor();
      auto closed = [this](std::exception_ptr) {
        asio::post(accept_strand, [this] {
          --open;
          slot_free.cancel_one();
        });
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

  Shared shared;
  asio::io_context ioc{static_cast<int>(kIoThreads)};
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{accept_strand};
  asio::steady_timer slot_free{accept_strand, asio::steady_timer::time_point::max()};
  asio::steady_timer retry{accept_strand};
  unsigned open = 0;  // connections; on accept_strand only
  std::vector<std::thread> threads;
};

void ActiveCalls::add(StopSignal* stop) {
  std::lock_guard lock(mu_);
  calls_.insert(stop);
}

void ActiveCalls::remove(StopSignal* stop) {
  std::lock_guard lock(mu_);
  calls_.erase(stop);
}

void ActiveCalls::cancel_all() {
  std::lock_guard lock(mu_);
  for (StopSignal* stop : calls_) stop->cancel();
}

HttpEndpoint::HttpEndpoint() = default;
HttpEndpoint::~HttpEndpoint() { stop(); }

Status HttpEndpoint::start(const std::string& listen, HttpLimits limits, const TlsOptions& tls,
                           CallEnvironment& env) {
  auto server = std::make_unique<Server>(limits, env);
  server->shared.operators_json = json_of(to_proto(support_matrix()));
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
  asio::post(s.accept_strand, [&s] {
    beast::error_code ec;
    s.acceptor.close(ec);
    s.slot_free.cancel();
  });
  // The calls left get cancelled; their answers (each write bounded by the
  // idle timeout) go out before the connections close.
  s.shared.active.cancel_all();
  s.shared.wait_until_idle();
  s.ioc.stop();
  for (std::thread& t : s.threads) t.join();
  server_.reset();
}

}  // namespace lite2onnx::server
