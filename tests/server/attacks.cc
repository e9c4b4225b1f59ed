#include "attacks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "client.h"
#include "http_client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A socket connected to 127.0.0.1:port from `source` (any when empty), with
// `receive_buffer` bytes of receive buffer when > 0; -1 on failure.
int connect_from(int port, const std::string& source, int receive_buffer = 0) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  if (!source.empty() && (inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
                          bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)) {
    close(fd);
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads up to `bytes` (all there is when 0) until the server closes, `stop`,
// or `until`; false once the connection is closed.
bool read_some(int fd, size_t bytes, Stop& stop,
               Clock::time_point until = Clock::time_point::max()) {
  char chunk[16384];
  for (size_t got = 0; (bytes == 0 || got < bytes) && !stop && Clock::now() < until;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n =
        ::recv(fd, chunk, bytes == 0 ? sizeof chunk : std::min(sizeof chunk, bytes - got), 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// Waits until `until` or `stop`, in small steps.
void pause(Stop& stop, Clock::time_point until) {
  while (!stop && Clock::now() < until) std::this_thread::sleep_for(20ms);
}

std::string post_head(size_t length, const std::string& extra = "") {
  return "POST /v1/convert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
         std::to_string(length) + "\r\n" + extra + "\r\n";
}

// One round of a loop that holds a connection: connect, send `bytes`, then
// keep it open, reading whatever comes, until the server closes it or `stop`.
// A short pause after a refused connect keeps a failing loop from spinning.
int hold_connections(int port, const std::function<std::string(int round)>& bytes, Stop& stop,
                     const std::string& source) {
  int rounds = 0;
  while (!stop) {
    const int fd = connect_from(port, source);
    if (fd < 0) {
      pause(stop, Clock::now() + 50ms);
      continue;
    }
    const std::string request = bytes(rounds++);
    if (request.empty() || send_all(fd, request)) read_some(fd, 0, stop);
    close(fd);
    pause(stop, Clock::now() + 20ms);
  }
  return rounds;
}

}  // namespace

int announce_body(int port, uint64_t length, Stop& stop, const std::string& source) {
  return hold_connections(
      port, [head = post_head(length)](int) { return head; }, stop, source);
}

int idle_connection(int port, Stop& stop, const std::string& source) {
  return hold_connections(
      port, [](int) { return std::string(); }, stop, source);
}

int trickle_stream(grpc::Channel& channel, uint64_t total, std::chrono::milliseconds interval,
                   Stop& stop) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  int rounds = 0;
  while (!stop) {
    grpc::ClientContext ctx;
    auto stream = stub->ConvertStream(&ctx);
    v1::ConvertChunk chunk;
    chunk.mutable_options()->set_opset(13);
    chunk.set_total_bytes(total);
    ++rounds;
    for (bool alive = stream->Write(chunk); alive && !stop;) {
      pause(stop, Clock::now() + interval);
      chunk.Clear();
      chunk.set_data("T");
      alive = stream->Write(chunk);
    }
    ctx.TryCancel();
    stream->Finish();
    pause(stop, Clock::now() + 20ms);
  }
  return rounds;
}

int unary_flood(grpc::Channel& channel, uint64_t bytes, Stop& stop) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  v1::ConvertRequest request;
  request.set_model(std::string(bytes, 'x'));
  int rounds = 0;
  while (!stop) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    v1::ConvertResponse response;
    (void)stub->Convert(&ctx, request, &response);
    ++rounds;
  }
  return rounds;
}

int unread_stream(grpc::Channel& channel, const ModelOfRound& model_of, Stop& stop) {
  auto stub = v1::Converter::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  int rounds = 0;
  while (!stop) {
    const std::string model = model_of(rounds);
    grpc::ClientContext ctx;
    auto stream = stub->ConvertStream(&ctx);
    v1::ConvertChunk chunk;
    chunk.set_total_bytes(model.size());
    chunk.mutable_options();
    bool alive = stream->Write(chunk);
    chunk.Clear();
    chunk.set_data(model);
    alive = alive && stream->Write(chunk);
    stream->WritesDone();
    ++rounds;
    // Holds the call without reading a byte of the answer.
    pause(stop, Clock::now() + 60s);
    ctx.TryCancel();
    stream->Finish();
  }
  return rounds;
}

int slow_reader(int port, const ModelOfRound& model_of, size_t bytes,
                std::chrono::milliseconds interval, Stop& stop, const std::string& source) {
  int rounds = 0;
  while (!stop) {
    const int fd = connect_from(port, source, 16384);
    if (fd < 0) {
      pause(stop, Clock::now() + 50ms);
      continue;
    }
    const std::string model = model_of(rounds++);
    if (send_all(fd, post_head(model.size(), "Connection: close\r\n") + model))
      while (!stop && read_some(fd, bytes, stop)) pause(stop, Clock::now() + interval);
    close(fd);
    pause(stop, Clock::now() + 20ms);
  }
  return rounds;
}

int json_answer(int port, const ModelOfRound& model_of, Stop& stop, const std::string& source) {
  return hold_connections(
      port,
      [&model_of](int round) {
        const std::string model = model_of(round);
        return post_head(model.size(), "Accept: application/json\r\nConnection: close\r\n") + model;
      },
      stop, source);
}

Attack::Attack(const Loop& loop, int threads) { add(loop, threads); }

void Attack::add(const Loop& loop, int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this, loop] { rounds_ += loop(stop_); });
}

Attack::~Attack() { stop(); }

int Attack::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  return rounds_;
}

long status_kib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

AttackFigures measure(ServerProcess& server, const std::function<std::unique_ptr<Attack>()>& start,
                      const std::function<void()>& in_place, int good_calls,
                      std::chrono::milliseconds min_duration, std::chrono::milliseconds pause) {
  const std::string model = read_file(mini_mobilenet_path());
  auto channel = server.channel();
  const std::string expected = convert(*channel, model, {}, 60s).response.onnx_model();
  std::unique_ptr<Attack> attack = start();
  if (in_place) in_place();

  AttackFigures f;
  std::atomic<bool> done{false};
  std::vector<double> probe_ms;
  std::thread prober([&] {
    HttpRequest healthz;
    healthz.method = "GET";
    healthz.target = "/healthz";
    while (!done) {
      const auto start = Clock::now();
      // The guard: a kubelet's default probe timeout is 1 s, its period 10 s.
      const HttpResponse r = http_call(server.http_port(), healthz, 30s);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (r.status == 200) {
        ++f.probes.answered;
        probe_ms.push_back(ms);
      } else {
        ++f.probes.failed;
      }
      std::this_thread::sleep_for(100ms);
    }
  });

  HttpRequest post;
  post.target = "/v1/convert";
  post.body = model;
  const auto started = Clock::now();
  for (int i = 0; i < good_calls || Clock::now() - started < min_duration; ++i) {
    const int refused_before = f.good.refused;
    if (i % 2 == 0) {
      const HttpResponse r = http_call(server.http_port(), post, 60s);
      if (r.status == 200)
        ++(r.body == expected ? f.good.ok : f.good.wrong);
      else if (r.status == 429 || r.status == 503)
        ++f.good.refused;
      else
        ++f.good.failed;
    } else {
      const ConvertResult r = convert(*channel, model, {}, 60s);
      const auto code = r.status.error_code();
      if (r.status.ok())
        ++(r.response.onnx_model() == expected ? f.good.ok : f.good.wrong);
      else if (code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
               code == grpc::StatusCode::UNAVAILABLE)
        ++f.good.refused;
      else
        ++f.good.failed;
    }
    if (f.good.refused > refused_before) std::this_thread::sleep_for(100ms);
    std::this_thread::sleep_for(pause);
  }
  done = true;
  prober.join();
  f.rounds = attack->stop();
  std::sort(probe_ms.begin(), probe_ms.end());
  if (!probe_ms.empty()) {
    f.probes.max_ms = probe_ms.back();
    f.probes.median_ms = probe_ms[probe_ms.size() / 2];
  }
  f.peak_rss_kib = status_kib(server.pid(), "VmHWM");
  return f;
}

}  // namespace lite2onnx::server_test
