// The attacks of issue 31 against the real server, each for a fixed time,
// with the figures docs/service.md ("Attacks") reports: good requests refused,
// /healthz latency, the server's peak RSS. Not a test (attack_test.cc is):
//
//   server_attack_bench [--seconds N] [--only NAME] [--server PATH] [SERVER FLAGS...]
//
// --server runs another build's lite2onnx-server (e.g. main's, for the figures
// before a change); its flags must be the ones that build knows.
//
// Every attack runs against a fresh server with 2 workers, a 256 MiB memory
// budget, a 128 MiB stream/body limit and a queue of 2 (the setup);
// SERVER FLAGS are added to each.
#include <cstdio>
#include <cstring>

#include "attacks.h"
#include "client.h"
#include "server_process.h"
#include "test_models.h"

using namespace lite2onnx::server_test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kMiB = 1 << 20;

struct Case {
  const char* name;
  const char* what;
  std::function<std::unique_ptr<Attack>(ServerProcess&)> start;
};

std::vector<Case> cases() {
  // Another RFFT model every time: each is converted, none answered from the cache.
  const ModelOfRound spectral = [counter = std::make_shared<std::atomic<int>>(0)](int) {
    return spectral_model(3, 4096, (*counter)++);
  };
  return {
      {"announced", "2 HTTP heads announcing Content-Length 128 MiB, no body",
       [](ServerProcess& s) {
         return std::make_unique<Attack>(
             [&s](Stop& stop) { return announce_body(s.http_port(), 128 * kMiB, stop); }, 2);
       }},
      {"trickle", "2 ConvertStreams announcing 128 MiB, then 1 byte every 10 s",
       [](ServerProcess& s) {
         auto channel = s.channel();
         return std::make_unique<Attack>(
             [channel](Stop& stop) { return trickle_stream(*channel, 128 * kMiB - 1, 10s, stop); },
             2);
       }},
      {"unread", "RFFT 3x4096 (816 B): 4 ConvertStreams never read, 2 HTTP reading 1 MiB / 20 s",
       [spectral](ServerProcess& s) {
         auto attack = std::make_unique<Attack>(
             [channel = s.channel(), spectral](Stop& stop) {
               return unread_stream(*channel, spectral, stop);
             },
             4);
         attack->add(
             [&s, spectral](Stop& stop) {
               return slow_reader(s.http_port(), spectral, kMiB, 20s, stop);
             },
             2);
         return attack;
       }},
      {"json", "2 HTTP connections asking for the RFFT model's answer as JSON",
       [spectral](ServerProcess& s) {
         return std::make_unique<Attack>(
             [&s, spectral](Stop& stop) { return json_answer(s.http_port(), spectral, stop); }, 2);
       }},
      {"unary", "8 unary Converts of 100 MiB that are not models, over 8 channels",
       [](ServerProcess& s) {
         return std::make_unique<Attack>(
             [&s](Stop& stop) { return unary_flood(*s.channel(), 100 * kMiB, stop); }, 8);
       }},
      {"idle", "8 connections that send nothing",
       [](ServerProcess& s) {
         return std::make_unique<Attack>(
             [&s](Stop& stop) { return idle_connection(s.http_port(), stop); }, 8);
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 30;
  std::string only;
  std::vector<std::string> extra, wrapper;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--server") && i + 1 < argc)
      // sh drops the test build's binary (its $1) and runs PATH (its $0) instead.
      wrapper = {"/bin/sh", "-c", "shift; exec \"$0\" \"$@\"", argv[++i]};
    else
      extra.push_back(argv[i]);
  }
  std::printf("%-10s | %-34s | %-16s | %-26s | %s\n", "attack", "good calls: ok/refused/other",
              "refused", "/healthz median/max (fail)", "server VmHWM");
  for (const Case& c : cases()) {
    if (!only.empty() && only != c.name) continue;
    std::vector<std::string> args{"--workers",
                                  "2",
                                  "--queue-size",
                                  "2",
                                  "--max-inflight-bytes",
                                  "256MiB",
                                  "--max-stream-bytes",
                                  "128MiB",
                                  "--http-listen",
                                  "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto server = ServerProcess::start(args, {}, -1, wrapper);
    if (!server) return 1;
    const AttackFigures f = measure(
        *server, [&] { return c.start(*server); }, [] { std::this_thread::sleep_for(2s); }, 0,
        std::chrono::seconds(seconds), 50ms);
    std::printf(
        "%-10s | %6d / %6d / %3d wrong %3d failed | %6.1f%%          | %8.1f / %8.1f ms (%d) | "
        "%6.1f MiB\n",
        c.name, f.good.ok, f.good.refused, f.good.wrong, f.good.failed, f.good.refused_percent(),
        f.probes.median_ms, f.probes.max_ms, f.probes.failed,
        static_cast<double>(f.peak_rss_kib) / 1024);
    std::printf("           %s; %d attack rounds\n", c.what, f.rounds);
    std::fflush(stdout);
  }
  return 0;
}
