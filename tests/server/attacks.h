// The hostile clients of issue 31, and what good clients get while they run:
// each attack is a loop that reconnects whenever the server ends it, until
// told to stop. attack_test.cc asserts on the figures (counted work, bytes,
// peak memory; never wall time), load_bench's --attacks prints them.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace grpc {
class Channel;
}

namespace lite2onnx::server_test {

class ServerProcess;

// Hostile loops. Each runs until `stop`, starting over whenever the server
// ends what it holds; it returns how many times it started. `source` is the
// local address to connect from ("" for 127.0.0.1): 127.0.0.2 makes it
// another peer than the good clients.
using Stop = const std::atomic<bool>;

// HTTP heads announcing `length` bytes of body (Content-Length), then nothing.
int announce_body(int port, uint64_t length, Stop& stop, const std::string& source = "");
// Connections that send nothing at all.
int idle_connection(int port, Stop& stop, const std::string& source = "");
// ConvertStream calls announcing total_bytes `total`, then one byte every `interval`.
int trickle_stream(grpc::Channel& channel, uint64_t total, std::chrono::milliseconds interval,
                   Stop& stop);
// The model of a round (another one each time: no cache answers it).
using ModelOfRound = std::function<std::string(int round)>;
// Unary Convert calls carrying `bytes` bytes that are not a model: gRPC
// receives each message whole before the server's code sees the call.
int unary_flood(grpc::Channel& channel, uint64_t bytes, Stop& stop);
// ConvertStream calls that upload a model and never read the answer.
int unread_stream(grpc::Channel& channel, const ModelOfRound& model, Stop& stop);
// POST /v1/convert of a model, then read `bytes` of the answer every `interval`
// (a small receive buffer, so that the server's writes wait for the reader).
int slow_reader(int port, const ModelOfRound& model, size_t bytes,
                std::chrono::milliseconds interval, Stop& stop, const std::string& source = "");
// POST /v1/convert with Accept: application/json, the answer read as it comes.
int json_answer(int port, const ModelOfRound& model, Stop& stop, const std::string& source = "");

// Threads running one hostile loop each; stopped and joined when destroyed.
class Attack {
 public:
  using Loop = std::function<int(Stop& stop)>;
  Attack(const Loop& loop, int threads);
  ~Attack();
  // More threads running another loop.
  void add(const Loop& loop, int threads);
  Attack(const Attack&) = delete;
  Attack& operator=(const Attack&) = delete;
  // Stops and joins; the rounds of every thread together.
  int stop();

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::atomic<int> rounds_{0};
};

// What good clients got meanwhile.
struct GoodFigures {
  int ok = 0;       // the expected bytes
  int refused = 0;  // 429 / 503 / RESOURCE_EXHAUSTED / UNAVAILABLE: retry later
  int wrong = 0;    // an answer with other bytes
  int failed = 0;   // anything else (no answer, another error)
  int calls() const { return ok + refused + wrong + failed; }
  double refused_percent() const { return calls() ? 100.0 * refused / calls() : 0; }
};

struct ProbeFigures {
  int answered = 0;  // 200
  int failed = 0;    // no 200 within the probe's guard
  double max_ms = 0, median_ms = 0;
};

struct AttackFigures {
  GoodFigures good;
  ProbeFigures probes;
  long peak_rss_kib = 0;  // the server's VmHWM at the end
  int rounds = 0;         // of the attack's loops
};

// Starts an attack with `start` (once the good client knows the expected
// answer; `in_place` returns once it holds what it takes: a metric says so)
// while a good client converts the mini model `good_calls` times,
// alternately over HTTP and gRPC, comparing each answer with the expected
// bytes (after a refusal it waits 100 ms, as a client honouring Retry-After
// would, only shorter), and /healthz is probed between them (each probe with
// a generous guard); `min_duration` keeps the good client going (the
// benchmark's figures over a fixed time), `pause` between its calls. The
// attack is stopped at the end.
AttackFigures measure(ServerProcess& server, const std::function<std::unique_ptr<Attack>()>& start,
                      const std::function<void()>& in_place, int good_calls,
                      std::chrono::milliseconds min_duration = std::chrono::milliseconds(0),
                      std::chrono::milliseconds pause = std::chrono::milliseconds(0));

// A field of /proc/PID/status in KiB (VmHWM, VmRSS); -1 when unreadable.
long status_kib(pid_t pid, const std::string& field);

}  // namespace lite2onnx::server_test
