// The HTTP endpoint's requests: each call of the Converter service goes
// through the call core (server/calls/call.h), which admits, budgets, paces,
// caches, queues, runs and records it; this file moves its bytes and
// translates (query parameters to options, a Failure to the error envelope,
// a result to ONNX bytes or JSON). Probes, the operators and the OpenAPI
// description are answered at once, whatever load the server carries.
#include <google/protobuf/util/json_util.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "server/calls/call.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/http_shared.h"
#include "server/openapi.h"

namespace lite2onnx::server::http {
namespace {

constexpr size_t kMaxWarningHeaderChars = 512;
// The ONNX bytes base64-encoded per write of a JSON answer: 1 MiB of text.
constexpr size_t kJsonPieceBytes = kWriteChunk / 4 * 3;

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

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

// Runs `f` on the endpoint's encoder thread and resumes here with its result.
template <class F>
asio::awaitable<std::invoke_result_t<F>> off_io(Shared& s, F f) {
  using R = std::invoke_result_t<F>;
  co_return co_await asio::co_spawn(
      s.encoder, [f = std::move(f)]() -> asio::awaitable<R> { co_return f(); },
      asio::use_awaitable);
}

// Sends a whole answer; whether the connection may carry another request.
template <class Stream>
asio::awaitable<bool> send(Link<Stream>& link, const Parser& parser, const Answer& a,
                           const Pace& pace, uint64_t& sent) {
  const bool keep_alive = !a.close && parser.keep_alive();
  const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
  const std::string head =
      head_of(a.status, a.content_type, a.body.size(), a.headers, keep_alive, version);
  const bool written = co_await link.write(head, a.body, pace, sent);
  co_return written&& keep_alive;
}

template <class Stream>
asio::awaitable<bool> send(Link<Stream>& link, const Parser& parser, const Answer& a, Shared& s) {
  uint64_t sent = 0;
  co_return co_await send(link, parser, a, s.pace(), sent);
}

// One POST /v1/convert or /v1/inspect, or GET /v1/operators.
template <class Stream>
class HttpCall {
 public:
  HttpCall(Link<Stream>& link, Parser& parser, Shared& s, std::string_view method,
           const Outcome<CallParameters>& params)
      : link_(link),
        parser_(parser),
        request_(parser),
        s_(s),
        method_(method),
        call_(s.core, info(params)) {}

  asio::awaitable<bool> run(const Outcome<CallParameters>& params) {
    if (auto refused = call_.admit()) co_return co_await fail(*refused);
    if (method_ == "ListOperators") co_return co_await answer_operators();
    if (!params) co_return co_await fail(params.error());
    if (method_ == "Convert")
      if (auto bad = call_.set_options(params->options)) co_return co_await fail(*bad);
    if (auto problem = co_await read_body()) co_return co_await fail(*problem);

    // The pool's thread posts the end of the job back to this connection's
    // strand: the I/O threads stay free while the conversion runs.
    const auto executor = co_await asio::this_coro::executor;
    asio::steady_timer job_done(executor, asio::steady_timer::time_point::max());
    bool done = false;
    CallResult result;
    call_.run([&, executor](CallResult& r) {
      result = std::move(r);
      // The last touch of this call from the pool's thread: once posted, the
      // call may resume and end at once (hence the job's own copy of the executor).
      asio::post(executor, [&] {
        done = true;
        job_done.cancel();
      });
    });
    while (!done) co_await job_done.async_wait(kAwait);
    if (result.failure) co_return co_await fail(*result.failure);
    if (method_ == "Inspect") co_return co_await answer_inspect(result);
    co_return co_await answer_convert(result);
  }

 private:
  CallInfo info(const Outcome<CallParameters>& params) const {
    CallInfo i;
    i.protocol = "http";
    i.method = method_;
    i.address = link_.peer();
    i.request_id = request_.header("X-Request-Id");
    i.traceparent = request_.header("traceparent");
    i.test_fault = request_.header("X-Lite2onnx-Test-Fault");
    if (params) i.deadline = params->deadline;
    return i;
  }

  // Reads the body into the call (an announced size reserves only a first
  // allotment); each read by the upload's deadline.
  asio::awaitable<std::optional<Failure>> read_body() {
    const std::optional<std::string> boundary = multipart_boundary(request_.header("Content-Type"));
    if (boundary && boundary->empty())
      co_return make_failure(reason_named("bad_request"),
                             "a multipart/form-data body needs a boundary");
    std::optional<MultipartModel> multipart;
    if (boundary)
      multipart.emplace(*boundary, [this](std::span<const std::byte> bytes) {
        return call_.receive(bytes, Call::Keep::kCopy);
      });
    if (!parser_.chunked() && !multipart)
      if (auto refused = call_.announce(parser_.content_length().value_or(0))) co_return refused;
    if (beast::iequals(request_.header("Expect"), "100-continue") &&
        parser_.get().version() == 11 && !parser_.is_done()) {
      uint64_t sent = 0;
      const bool written = co_await link_.write("HTTP/1.1 100 Continue\r\n\r\n", s_.pace(), sent);
      if (!written) co_return make_failure(reason_named("cancelled"), "the client went away");
    }
    std::vector<char> chunk(kReadChunk);
    while (!parser_.is_done()) {
      size_t n = 0;
      const beast::error_code ec =
          co_await link_.read_body(parser_, chunk, n, call_.upload_deadline());
      if (ec == beast::error::timeout) co_return call_.upload_late();
      if (ec)
        co_return make_failure(reason_named("bad_stream"),
                               "the request body could not be read after " +
                                   std::to_string(call_.model_bytes()) + " bytes (" + ec.message() +
                                   ": the connection closed, or not HTTP)");
      const std::string_view bytes(chunk.data(), n);
      std::optional<Failure> problem =
          multipart ? multipart->feed(bytes)
                    : call_.receive(std::as_bytes(std::span(bytes)), Call::Keep::kCopy);
      if (problem) co_return problem;
      if (call_.stop().cancelled()) co_return call_.stop().failure();  // stop() during an upload
    }
    if (multipart)
      if (auto problem = multipart->finish()) co_return problem;
    co_return call_.upload_done();
  }

  asio::awaitable<bool> answer_convert(const CallResult& r) {
    std::vector<Header> headers{{"X-Request-Id", call_.id()},
                                {"X-Lite2onnx-Diagnostics", diagnostics_summary(r.diagnostics)}};
    if (!r.diagnostics.warnings.empty())
      headers.push_back({"X-Lite2onnx-Warning",
                         header_safe(r.diagnostics.warnings.front(), kMaxWarningHeaderChars)});
    const OnnxBytes& onnx = r.onnx;
    // A JSON answer's piece of base64 is held beside the ONNX bytes (and a
    // piece read from a handed-over answer's memfd beside it).
    const uint64_t piece_bytes =
        request_.wants_json()
            ? JsonAnswer::base64_bytes(std::min<uint64_t>(onnx.size(), kJsonPieceBytes))
            : 0;
    if (piece_bytes > 0)
      if (auto refused = call_.resize_answer(onnx.size() + piece_bytes))
        co_return co_await fail(*refused);
    call_.finish(std::nullopt, 200);
    const bool keep = parser_.keep_alive();
    const Pace pace = call_.start_answer();
    uint64_t sent = 0;
    bool written = false;
    // The ONNX bytes a piece at a time, each written by its deadline before
    // the next is read: a slow reader makes the call hold one piece. A piece
    // that cannot be read ends the connection short of its Content-Length.
    std::string scratch;
    if (!request_.wants_json()) {
      const std::string head = head_of(200, "application/octet-stream", onnx.size(), headers, keep,
                                       parser_.get().version());
      if (!onnx.file) {
        written = co_await link_.write(head, onnx.bytes, pace, sent);
      } else {
        written = co_await link_.write(head, pace, sent);
        for (uint64_t at = 0; written && at < onnx.size(); at += kWriteChunk) {
          const auto piece = onnx.piece(
              at, static_cast<size_t>(std::min<uint64_t>(kWriteChunk, onnx.size() - at)), scratch);
          written = piece.has_value();
          if (written) written = co_await link_.write(*piece, pace, sent);
        }
      }
    } else {
      // Made on the encoder thread; the ONNX bytes in base64 a piece at a time.
      const Diagnostics& d = r.diagnostics;
      const JsonAnswer json = co_await off_io(s_, [&d] { return json_answer(d); });
      const uint64_t length =
          json.prefix.size() + JsonAnswer::base64_bytes(onnx.size()) + json.suffix.size();
      written = co_await link_.write(
          head_of(200, "application/json", length, headers, keep, parser_.get().version()) +
              json.prefix,
          pace, sent);
      std::string piece;
      for (uint64_t at = 0; written && at < onnx.size(); at += kJsonPieceBytes) {
        const auto bytes = onnx.piece(
            at, static_cast<size_t>(std::min<uint64_t>(kJsonPieceBytes, onnx.size() - at)),
            scratch);
        written = bytes.has_value();
        if (!written) break;
        piece.clear();
        JsonAnswer::append_base64(*bytes, piece);
        written = co_await link_.write(piece, pace, sent);
      }
      if (written) written = co_await link_.write(json.suffix, pace, sent);
    }
    if (written)
      call_.answer_sent(onnx.size());
    else
      call_.answer_dropped(sent, "the client went away, or read it " + pace.why(sent) +
                                     " (--send-min-rate, --send-timeout)");
    co_return written&& keep;
  }

  // The JSON is made on the encoder thread (one at a time), then held in the
  // budget beside the message, which is freed: the answer is the JSON alone.
  asio::awaitable<bool> answer_inspect(CallResult& r) {
    const v1::InspectResponse& inspection = r.inspection;
    const uint64_t message_bytes = inspection.ByteSizeLong();
    Answer a;
    a.content_type = "application/json";
    a.body = co_await off_io(s_, [&inspection] {
      std::string json;
      google::protobuf::util::MessageToJsonString(inspection, &json);
      return json;
    });
    const std::optional<Failure> refused = call_.resize_answer(message_bytes + a.body.size());
    if (refused) std::string().swap(a.body);
    v1::InspectResponse().Swap(&r.inspection);
    call_.resize_answer(a.body.size());  // fewer bytes: always fits
    if (refused) co_return co_await fail(*refused);
    co_return co_await answer(a);
  }

  asio::awaitable<bool> answer_operators() {
    Answer a;
    a.content_type = "application/json";
    a.body = s_.operators_json;
    co_return co_await answer(a);
  }

  asio::awaitable<bool> answer(Answer& a) {
    a.headers.push_back({"X-Request-Id", call_.id()});
    call_.finish(std::nullopt, a.status);
    const bool keep = parser_.keep_alive();
    const std::string head =
        head_of(a.status, a.content_type, a.body.size(), a.headers, keep, parser_.get().version());
    const Pace pace = call_.start_answer();
    uint64_t sent = 0;
    const bool written = co_await link_.write(head, a.body, pace, sent);
    if (written)
      call_.answer_sent(a.body.size());
    else
      call_.answer_dropped(sent, "the client went away, or read it " + pace.why(sent));
    co_return written&& keep;
  }

  asio::awaitable<bool> fail(const Failure& f) {
    Answer a = error_answer(f, call_.id());
    // The client may still be sending a body nobody reads: the connection
    // ends with this answer.
    a.close = !parser_.is_done();
    call_.finish(f, a.status);
    const Pace pace = call_.start_answer();
    uint64_t sent = 0;
    co_return co_await send(link_, parser_, a, pace, sent);
  }

  Link<Stream>& link_;
  Parser& parser_;
  const Request request_;
  Shared& s_;
  const std::string_view method_;
  Call call_;
};

Failure http_failure(std::string_view reason, std::string message) {
  return make_failure(reason_named(reason), std::move(message));
}

}  // namespace

template <class Stream>
asio::awaitable<bool> handle(Link<Stream>& link, Parser& parser, Shared& s) {
  const Request r(parser);
  // Not a call, but answered with the same envelope and a request id.
  auto refuse = [&](std::string_view reason, std::string message,
                    std::string_view allow = {}) -> asio::awaitable<bool> {
    Answer a = error_answer(http_failure(reason, std::move(message)),
                            s.core.request_id(r.header("X-Request-Id")));
    if (!allow.empty()) a.headers.push_back({"Allow", std::string(allow)});
    a.close = !parser.is_done();
    co_return co_await send(link, parser, a, s);
  };
  auto text = [&](int status, std::string body,
                  std::string_view type = "text/plain; charset=utf-8") -> asio::awaitable<bool> {
    Answer a;
    a.status = status;
    a.content_type = type;
    a.body = std::move(body);
    co_return co_await send(link, parser, a, s);
  };
  struct Route {
    std::string_view path, method, call;  // call: the Converter method it is, if any
  };
  static constexpr Route kRoutes[] = {{"/v1/convert", "POST", "Convert"},
                                      {"/v1/inspect", "POST", "Inspect"},
                                      {"/v1/operators", "GET", "ListOperators"},
                                      {"/healthz", "GET", ""},
                                      {"/livez", "GET", ""},
                                      {"/readyz", "GET", ""},
                                      {"/openapi.yaml", "GET", ""}};
  const Route* route = nullptr;
  for (const Route& candidate : kRoutes)
    if (candidate.path == r.path) route = &candidate;
  if (!route)
    co_return co_await refuse("not_found", "no such resource '" + header_safe(r.path, 256) +
                                               "'; GET /openapi.yaml lists them");
  if (r.method() != route->method)
    co_return co_await refuse("method_not_allowed",
                              std::string(r.path) + " takes " + std::string(route->method),
                              route->method);
  if (!route->call.empty()) {
    const Outcome<CallParameters> params =
        parse_parameters(r.query, r.header("X-Lite2onnx-Timeout"), route->call == "Convert");
    HttpCall<Stream> call(link, parser, s, route->call, params);
    co_return co_await call.run(params);
  }
  if (r.path == "/readyz" && s.core.draining())
    co_return co_await refuse("shutting_down", "the server is draining");
  if (r.path == "/openapi.yaml")
    co_return co_await text(200, std::string(openapi_yaml()), "application/yaml");
  co_return co_await text(200, r.path == "/readyz" ? "ready\n" : "ok\n");
}

template <class Stream>
asio::awaitable<void> refuse_head(Link<Stream>& link, const Parser& parser, beast::error_code ec,
                                  Shared& s) {
  const bool too_large = ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow;
  Answer a = error_answer(
      too_large ? http_failure("head_too_large", "the request line and headers exceed " +
                                                     std::to_string(kMaxHeadBytes) + " bytes")
                : http_failure("bad_request", "not an HTTP/1.1 request: " + ec.message()),
      s.core.request_id(""));
  a.close = true;
  co_await send(link, parser, a, s);
  co_await link.close(/*unread=*/true);
}

template asio::awaitable<bool> handle(Link<PlainStream>&, Parser&, Shared&);
template asio::awaitable<bool> handle(Link<TlsStream>&, Parser&, Shared&);
template asio::awaitable<void> refuse_head(Link<PlainStream>&, const Parser&, beast::error_code,
                                           Shared&);
template asio::awaitable<void> refuse_head(Link<TlsStream>&, const Parser&, beast::error_code,
                                           Shared&);

}  // namespace lite2onnx::server::http
