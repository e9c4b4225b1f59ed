#include "server/http_endpoint.h"

#include <civetweb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <vector>

#include "common/error_reasons.h"
#include "common/translate.h"
#include "core/option_table.h"
#include "server/call.h"
#include "server/conversion_runner.h"

namespace lite2onnx::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = size_t{1} << 16;
constexpr size_t kWriteChunk = size_t{1} << 24;
constexpr size_t kMaxWarningHeaderChars = 512;

struct Header {
  std::string name, value;
};

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

bool write_all(mg_connection* conn, std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kWriteChunk);
    if (mg_write(conn, bytes.data(), n) != static_cast<int>(n)) return false;
    bytes.remove_prefix(n);
  }
  return true;
}

// Sends a whole answer; returns its status (civetweb's "handled"). After an
// interim "100 Continue" (written by hand: civetweb 1.15's header functions
// refuse once anything was written) the head is written by hand too, and the
// connection ends with the answer, since civetweb cannot be told the answer's
// Connection header.
int send_answer(mg_connection* conn, int status, std::string_view content_type,
                std::string_view body, const std::vector<Header>& headers,
                bool after_interim = false) {
  std::vector<Header> all{{"Content-Type", std::string(content_type)},
                          {"Content-Length", std::to_string(body.size())}};
  all.insert(all.end(), headers.begin(), headers.end());
  if (after_interim) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " +
                       mg_get_response_code_text(conn, status) + "\r\n";
    bool closes = false;
    for (const Header& h : all) {
      head += h.name + ": " + h.value + "\r\n";
      closes = closes || h.name == "Connection";
    }
    if (!closes) head += "Connection: close\r\n";
    head += "\r\n";
    write_all(conn, head);
  } else {
    mg_response_header_start(conn, status);
    for (const Header& h : all)
      mg_response_header_add(conn, h.name.c_str(), h.value.c_str(),
                             static_cast<int>(h.value.size()));
    mg_response_header_send(conn);
  }
  write_all(conn, body);
  return status;
}

int send_text(mg_connection* conn, int status, std::string_view text,
              const std::vector<Header>& headers = {}) {
  return send_answer(conn, status, "text/plain; charset=utf-8", text, headers);
}

// A failure's answer: its reason's HTTP status and the ConversionError as JSON
// (proto3 JSON mapping). A refusal that a client may retry says when.
int send_failure(mg_connection* conn, const Failure& f, std::string_view request_id,
                 bool body_unread, bool after_interim) {
  std::vector<Header> headers{{"X-Request-Id", std::string(request_id)}};
  const int status = http_status(f.reason);
  if (status == 429 || status == 503) headers.push_back({"Retry-After", "1"});
  // The client may still be sending a body nobody reads: the connection ends
  // with this answer.
  if (body_unread) headers.push_back({"Connection", "close"});
  return send_answer(conn, status, "application/json", json_of(to_proto(f)), headers,
                     after_interim);
}

std::string peer_of(const mg_request_info& info) {
  const std::string_view addr = info.remote_addr;
  const bool v6 = addr.find(':') != std::string_view::npos;
  return (v6 ? "ipv6:[" : "ipv4:") + std::string(addr) + (v6 ? "]:" : ":") +
         std::to_string(info.remote_port);
}

std::string_view header(mg_connection* conn, const char* name) {
  const char* v = mg_get_header(conn, name);
  return v ? std::string_view(v) : std::string_view();
}

bool wants_json(mg_connection* conn) {
  return header(conn, "Accept").find("application/json") != std::string_view::npos;
}

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

std::optional<std::string> url_decoded(std::string_view text) {
  std::string out(text.size() + 1, '\0');
  const int n = mg_url_decode(text.data(), static_cast<int>(text.size()), out.data(),
                              static_cast<int>(out.size()), /*is_form_url_encoded=*/1);
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n));
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

// Waits for a job that runs on the worker pool.
class Completion {
 public:
  void done() {
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

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

}  // namespace

// One POST /v1/convert or /v1/inspect: admitted (size, memory budget, queue
// room) before its body is read, so that a refusal costs no upload; then read
// in chunks against the budget, run on the pool, and answered.
class HttpCall {
 public:
  HttpCall(mg_connection* conn, const HttpLimits& limits, CallEnvironment& env, ActiveCalls& active,
           bool inspect)
      : conn_(conn),
        info_(*mg_get_request_info(conn)),
        limits_(limits),
        env_(env),
        active_(active),
        inspect_(inspect),
        trace_(env, inspect ? "Inspect" : "Convert", header(conn, "X-Request-Id"), peer_of(info_)) {
  }

  int run() {
    if (env_.draining.load()) return fail(refusal(env_, v1::ConversionError::REASON_SHUTTING_DOWN));
    auto params = parse_parameters(info_.query_string ? info_.query_string : "",
                                   header(conn_, "X-Lite2onnx-Timeout"), !inspect_);
    if (!params) return fail(from_core(params.error(), false));
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

    const long long declared = info_.content_length;  // -1: chunked
    if (declared > 0) trace_.model_bytes = static_cast<uint64_t>(declared);
    if (declared >= 0 && static_cast<uint64_t>(declared) > limits_.max_body_bytes)
      return fail(too_large(static_cast<uint64_t>(declared)));
    auto reservation = env_.budget.try_reserve(declared > 0 ? static_cast<uint64_t>(declared) : 0);
    if (!reservation) return fail(refusal(env_, v1::ConversionError::REASON_MEMORY_BUDGET));
    if (!env_.pool.has_room()) return fail(refusal(env_, v1::ConversionError::REASON_QUEUE_FULL));
    if (header(conn_, "Expect") == "100-continue" &&
        std::string_view(info_.http_version) == "1.1") {
      mg_printf(conn_, "HTTP/1.1 100 Continue\r\n\r\n");
      continued_ = true;
    }
    if (auto f = read_body(declared, *reservation)) return fail(std::move(*f));
    trace_.model_bytes = model_.size();
    fault_ = test_fault(env_, header(conn_, "X-Lite2onnx-Test-Fault"));
    if (!inspect_ && fault_.fault == worker::Fault::kNone) {  // a test fault asks for a worker
      key_ = env_.cache.key(model_, options_);
      if (key_)
        if (auto hit = env_.cache.find(*key_)) {
          model_.clear();
          reservation->release();
          outcome_ = std::move(*hit);
          return answer_convert();
        }
    }

    Completion completion;
    const Clock::time_point queued_at = Clock::now();
    const bool submitted = env_.pool.try_submit([&](ConversionRunner& runner) {
      trace_.dequeued(queued_at);
      try {
        if (stop.stop_requested())
          failure_ = stop.failure();
        else
          work(runner, stop);
      } catch (const std::exception& e) {
        failure_ = failure(v1::ConversionError::REASON_INTERNAL, e.what());
      }
      completion.done();
    });
    if (!submitted) {
      model_.clear();
      return fail(refusal(env_, v1::ConversionError::REASON_QUEUE_FULL));
    }
    completion.wait();
    model_.clear();
    reservation->release();
    if (outcome_.ran)
      trace_.conversion_ran(outcome_.diagnostics, outcome_.outcome, outcome_.cpu_seconds);
    if (failure_) return fail(std::move(*failure_));
    return inspect_ ? answer_inspect() : answer_convert();
  }

 private:
  Failure too_large(uint64_t bytes) const {
    return failure(v1::ConversionError::REASON_MODEL_TOO_LARGE,
                   "the model has " + (bytes ? std::to_string(bytes) : "more") +
                       " bytes, more than this server's " + std::to_string(limits_.max_body_bytes) +
                       " (--max-stream-bytes)");
  }

  // Reads the body into model_, growing the reservation for a chunked one.
  std::optional<Failure> read_body(long long declared, MemoryBudget::Reservation& reservation) {
    if (declared > 0) model_.reserve(static_cast<size_t>(declared));
    std::vector<char> chunk(kReadChunk);
    for (;;) {
      const int n = mg_read(conn_, chunk.data(), chunk.size());
      if (n < 0)
        return failure(v1::ConversionError::REASON_BAD_STREAM,
                       "the request body could not be read after " + std::to_string(model_.size()) +
                           " bytes (connection closed or idle "
                           "longer than --stream-idle-timeout)");
      if (n == 0) break;
      const auto bytes = static_cast<uint64_t>(n);
      if (model_.size() + bytes > limits_.max_body_bytes) return too_large(0);
      if (declared < 0 && !reservation.grow(bytes))
        return refusal(env_, v1::ConversionError::REASON_MEMORY_BUDGET);
      model_.append(std::as_bytes(std::span(chunk.data(), bytes)));
    }
    if (declared >= 0 && model_.size() != static_cast<uint64_t>(declared))
      return failure(v1::ConversionError::REASON_BAD_STREAM,
                     "the request body ended after " + std::to_string(model_.size()) + " of " +
                         std::to_string(declared) + " bytes");
    body_read_ = true;
    return std::nullopt;
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

  int answer_convert() {
    trace_.onnx_bytes = outcome_.onnx.bytes.size();
    std::vector<Header> headers{
        {"X-Request-Id", trace_.id()},
        {"X-Lite2onnx-Diagnostics", diagnostics_summary(outcome_.diagnostics)}};
    if (!outcome_.diagnostics.warnings.empty())
      headers.push_back({"X-Lite2onnx-Warning", header_safe(outcome_.diagnostics.warnings.front(),
                                                            kMaxWarningHeaderChars)});
    std::string json;
    if (wants_json(conn_)) {
      v1::ConvertResponse response;
      response.set_onnx_model(std::string(outcome_.onnx.bytes));
      to_proto(outcome_.diagnostics, response.mutable_diagnostics());
      json = json_of(response);
    }
    CallRecord record = trace_.complete(grpc::Status::OK);
    const int status = json.empty()
                           ? send_answer(conn_, 200, "application/octet-stream",
                                         outcome_.onnx.bytes, headers, continued_)
                           : send_answer(conn_, 200, "application/json", json, headers, continued_);
    record.write();
    return status;
  }

  int answer_inspect() {
    const std::string json = json_of(inspect_response_);
    const std::vector<Header> headers{{"X-Request-Id", trace_.id()}};
    CallRecord record = trace_.complete(grpc::Status::OK);
    const int status = send_answer(conn_, 200, "application/json", json, headers, continued_);
    record.write();
    return status;
  }

  int fail(Failure f) {
    const std::string id = trace_.id();
    CallRecord record = trace_.complete(to_status(f));
    const int status =
        send_failure(conn_, f, id, !body_read_ && info_.content_length != 0, continued_);
    record.write();
    return status;
  }

  mg_connection* conn_;
  const mg_request_info& info_;
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
  bool continued_ = false;  // "100 Continue" was sent
  bool body_read_ = false;
  std::optional<Failure> failure_;
  ConvertOutcome outcome_;
  v1::InspectResponse inspect_response_;
};

struct HttpEndpoint::Handlers {
  static HttpEndpoint& self(void* data) { return *static_cast<HttpEndpoint*>(data); }

  // Exceptions must not cross civetweb's C frames.
  template <class Handle>
  static int guarded(mg_connection* conn, Handle handle) {
    try {
      return handle();
    } catch (const std::exception& e) {
      return send_text(conn, 500, std::string("internal error: ") + e.what() + "\n");
    }
  }

  static bool method_is(mg_connection* conn, std::string_view method) {
    if (std::string_view(mg_get_request_info(conn)->request_method) == method) return true;
    send_text(conn, 405, "use " + std::string(method) + "\n",
              {{"Allow", std::string(method)}, {"Connection", "close"}});
    return false;
  }

  static int convert(mg_connection* conn, void* data) {
    return guarded(conn, [&] {
      if (!method_is(conn, "POST")) return 405;
      HttpEndpoint& e = self(data);
      return HttpCall(conn, e.limits_, *e.env_, e.active_, /*inspect=*/false).run();
    });
  }
  static int inspect(mg_connection* conn, void* data) {
    return guarded(conn, [&] {
      if (!method_is(conn, "POST")) return 405;
      HttpEndpoint& e = self(data);
      return HttpCall(conn, e.limits_, *e.env_, e.active_, /*inspect=*/true).run();
    });
  }
  static int operators(mg_connection* conn, void* data) {
    return guarded(conn, [&] {
      if (!method_is(conn, "GET")) return 405;
      HttpEndpoint& e = self(data);
      CallTrace trace(*e.env_, "ListOperators", header(conn, "X-Request-Id"),
                      peer_of(*mg_get_request_info(conn)));
      const std::string id = trace.id();
      if (e.env_->draining.load()) {
        const Failure f = refusal(*e.env_, v1::ConversionError::REASON_SHUTTING_DOWN);
        CallRecord record = trace.complete(to_status(f));
        const int status = send_failure(conn, f, id, false, false);
        record.write();
        return status;
      }
      CallRecord record = trace.complete(grpc::Status::OK);
      const int status =
          send_answer(conn, 200, "application/json", e.operators_json_, {{"X-Request-Id", id}});
      record.write();
      return status;
    });
  }
  static int healthz(mg_connection* conn, void*) {
    return guarded(conn,
                   [&] { return method_is(conn, "GET") ? send_text(conn, 200, "ok\n") : 405; });
  }
  static int readyz(mg_connection* conn, void* data) {
    return guarded(conn, [&] {
      if (!method_is(conn, "GET")) return 405;
      return self(data).env_->draining.load() ? send_text(conn, 503, "draining\n")
                                              : send_text(conn, 200, "ready\n");
    });
  }
  static int not_found(mg_connection* conn, void*) {
    return guarded(conn, [&] {
      return send_text(conn, 404,
                       "no such resource; POST /v1/convert, POST /v1/inspect, GET /v1/operators, "
                       "GET /healthz, GET /readyz\n");
    });
  }
  // civetweb's own messages (a port in use, a bad request line): the last is
  // kept for start()'s error.
  static int log_message(const mg_connection* conn, const char* message) {
    if (auto* e = static_cast<HttpEndpoint*>(mg_get_user_data(mg_get_context(conn))))
      e->last_message_ = message;
    return 1;
  }
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

HttpEndpoint::~HttpEndpoint() { stop(); }

Status HttpEndpoint::start(const std::string& listen, HttpLimits limits, CallEnvironment& env) {
  limits_ = limits;
  env_ = &env;
  operators_json_ = json_of(to_proto(support_matrix()));
  mg_init_library(0);
  const std::string threads = std::to_string(std::max(1u, limits.threads));
  const std::string timeout_ms =
      std::to_string(static_cast<int64_t>(std::max(1.0, limits.idle_seconds * 1000)));
  const char* options[] = {"listening_ports", listen.c_str(), "num_threads", threads.c_str(),
                           "request_timeout_ms", timeout_ms.c_str(), "enable_keep_alive", "yes",
                           // no files: every URI is a handler's or 404
                           nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = Handlers::log_message;
  ctx_ = mg_start(&callbacks, this, options);
  if (!ctx_) {
    mg_exit_library();
    return make_error(ErrorCode::kInvalidOption,
                      "cannot serve HTTP on '" + listen + "': " +
                          (last_message_.empty() ? "civetweb could not start" : last_message_));
  }
  mg_set_request_handler(ctx_, "/v1/convert$", Handlers::convert, this);
  mg_set_request_handler(ctx_, "/v1/inspect$", Handlers::inspect, this);
  mg_set_request_handler(ctx_, "/v1/operators$", Handlers::operators, this);
  mg_set_request_handler(ctx_, "/healthz$", Handlers::healthz, this);
  mg_set_request_handler(ctx_, "/readyz$", Handlers::readyz, this);
  mg_set_request_handler(ctx_, "/", Handlers::not_found, this);
  mg_server_port ports[4] = {};
  const int n = mg_get_server_ports(ctx_, 4, ports);
  port_ = n > 0 ? ports[0].port : 0;
  return ok_status();
}

void HttpEndpoint::stop() {
  if (!ctx_) return;
  active_.cancel_all();
  mg_stop(ctx_);
  ctx_ = nullptr;
  mg_exit_library();
}

}  // namespace lite2onnx::server
