// Large answers (issue 33): a worker writes an answer larger than its reused
// memfd into a memfd of its own, which the server seals and sends from a piece
// at a time. The bytes are the CLI's, through every transport and from the
// cache; a client that stops reading makes the server hold a piece, not the
// model; an answer that cannot be written whole is an error, never part of a
// model followed by success.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <thread>

#include "client.h"
#include "http_client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using namespace std::chrono_literals;

constexpr long kMiB = 1 << 20;

// A field of /proc/PID/status in KiB (VmRSS: now, VmHWM: the peak).
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

// The largest VmRSS of `pid` over `span`, sampled every 50 ms.
long max_rss_kib_over(pid_t pid, std::chrono::milliseconds span) {
  long most = 0;
  for (auto end = std::chrono::steady_clock::now() + span; std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(50ms))
    most = std::max(most, status_kib(pid, "VmRSS"));
  return most;
}

// Standard base64 with padding, decoded (OpenSSL's block decoder pads its
// output to whole groups of 3: the padding's bytes are dropped).
std::string decode_base64(const std::string& text) {
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return "";
  out.resize(static_cast<size_t>(n));
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) out.pop_back();
  return out;
}

// What the CLI writes for `model` (the reference: tests/unit/output_cli_test.cc
// checks it against the in-memory conversion).
std::string cli_conversion(const TempDir& dir, const std::string& model) {
  const std::string in = dir.file("model.tflite"), out = dir.file("model.onnx");
  std::ofstream(in, std::ios::binary) << model;
  const CliResult r = run_cli({"convert", in, "-o", out}, 120s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_file(out);
}

class LargeAnswerTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> args) {
    args.insert(args.end(), {"--http-listen", "127.0.0.1:0", "--workers", "1"});
    server_ = ServerProcess::start(args);
    ASSERT_TRUE(server_);
    channel_ = server_->channel();
  }
  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

// 6,000,000 floats: a 24 MB constant, above the worker's 16 MiB memfd (its
// answer is handed over) and 23 times the 1 MiB chunk of ConvertStream.
TEST_F(LargeAnswerTest, EveryTransportAnswersTheClisBytes) {
  start({"--cache-bytes", "256MiB", "--max-unary-bytes", "64MiB"});
  const std::string model = big_constant_model(6'000'000);
  TempDir dir;
  const std::string expected = cli_conversion(dir, model);
  ASSERT_GT(expected.size(), size_t{16} << 20);

  const StreamResult streamed = convert_stream(*channel_, model, {}, 1 << 20);
  ASSERT_TRUE(streamed.status.ok()) << streamed.status.error_message();
  EXPECT_TRUE(streamed.diagnostics_first);
  EXPECT_GT(streamed.chunks_received, 20u);
  EXPECT_EQ(streamed.diagnostics.cache(), "miss");
  EXPECT_TRUE(streamed.onnx_model == expected) << "ConvertStream's answer differs from the CLI's";

  // The same call again: answered from the cache, which kept the sealed memfd.
  const StreamResult cached = convert_stream(*channel_, model, {}, 1 << 20);
  ASSERT_TRUE(cached.status.ok()) << cached.status.error_message();
  EXPECT_EQ(cached.diagnostics.cache(), "hit");
  EXPECT_TRUE(cached.onnx_model == expected) << "the cached answer differs from the CLI's";

  const ConvertResult unary = convert(*channel_, model);
  ASSERT_TRUE(unary.status.ok()) << unary.status.error_message();
  EXPECT_TRUE(unary.response.onnx_model() == expected) << "Convert's answer differs";

  HttpRequest request;
  request.target = "/v1/convert";
  request.body = model;
  const HttpResponse http = http_call(server_->http_port(), request, 120s);
  ASSERT_EQ(http.status, 200) << http.body.substr(0, 500);
  EXPECT_TRUE(http.body == expected) << "the HTTP answer differs from the CLI's";
  request.headers.push_back({"Accept", "application/json"});
  const HttpResponse json = http_call(server_->http_port(), request, 120s);
  ASSERT_EQ(json.status, 200);
  const std::string base64 = nlohmann::json::parse(json.body).at("onnxModel");
  EXPECT_TRUE(decode_base64(base64) == expected) << "the HTTP JSON answer differs";
  EXPECT_NE(json.body.find(R"(","diagnostics":{)", (expected.size() + 2) / 3 * 4),
            std::string::npos);

  // Fresh conversions, not from the cache: another model of the same kind.
  const std::string other = big_constant_model(5'000'000);
  const std::string other_expected = cli_conversion(dir, other);
  request.headers.clear();
  request.body = other;
  const HttpResponse fresh = http_call(server_->http_port(), request, 120s);
  ASSERT_EQ(fresh.status, 200);
  EXPECT_NE(fresh.header("x-lite2onnx-diagnostics").find("cache=miss"), std::string::npos);
  EXPECT_TRUE(fresh.body == other_expected) << "a fresh HTTP answer differs from the CLI's";
}

// A small model whose answer is large: about 64 MiB of DFT matrices from 800
// bytes, so that the server's memory during the answer is the answer's, not
// the upload's.
std::string widening_model() { return spectral_model(1, 4096); }

TEST_F(LargeAnswerTest, AConvertStreamClientThatStopsReadingCostsAChunkNotTheModel) {
  start({"--max-output-bytes", "1GiB", "--cache-bytes", "0", "--send-timeout", "60"});
  const long idle_kib = status_kib(server_->pid(), "VmRSS");
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  auto stream = stub->ConvertStream(&ctx);
  v1::ConvertChunk chunk;
  chunk.mutable_options();
  ASSERT_TRUE(stream->Write(chunk));
  chunk.Clear();
  chunk.set_data(widening_model());
  ASSERT_TRUE(stream->Write(chunk));
  stream->WritesDone();
  ASSERT_TRUE(stream->Read(&chunk));  // the diagnostics; then nothing more is read
  ASSERT_TRUE(chunk.has_diagnostics());
  const uint64_t answer_bytes = chunk.total_bytes();
  ASSERT_GT(answer_bytes, uint64_t{60} << 20);
  const long during_kib = max_rss_kib_over(server_->pid(), 2s);
  ctx.TryCancel();
  std::printf(
      "ConvertStream, client not reading: server VmRSS %ld KiB idle, at most %ld KiB "
      "during a %llu-byte answer\n",
      idle_kib, during_kib, static_cast<unsigned long long>(answer_bytes));
  EXPECT_LT(during_kib - idle_kib, 24 * kMiB / 1024)
      << "the server holds the answer while its client does not read";
}

TEST_F(LargeAnswerTest, AnHttpClientThatStopsReadingCostsAPieceNotTheModel) {
  start({"--max-output-bytes", "1GiB", "--cache-bytes", "0", "--send-timeout", "60"});
  const long idle_kib = status_kib(server_->pid(), "VmRSS");
  const std::string model = widening_model();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int small = 16 * 1024;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->http_port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request =
      "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(model.size()) +
      "\r\n\r\n" + model;
  ASSERT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  char head[4096];
  const ssize_t got = recv(fd, head, sizeof head, 0);  // the head; then nothing more is read
  ASSERT_GT(got, 0);
  EXPECT_EQ(std::string(head, 12), "HTTP/1.1 200");
  const long during_kib = max_rss_kib_over(server_->pid(), 2s);
  close(fd);
  std::printf("HTTP, client not reading: server VmRSS %ld KiB idle, at most %ld KiB during\n",
              idle_kib, during_kib);
  EXPECT_LT(during_kib - idle_kib, 24 * kMiB / 1024)
      << "the server holds the answer while its client does not read";
}

// The worker's file-size limit (its memory limit) stops the answer half
// written: the client gets the memory_limit error and not a byte of a model.
TEST_F(LargeAnswerTest, AnAnswerThatCannotBeWrittenWholeIsAnErrorWithoutModelBytes) {
  start({"--conversion-memory-limit", "20MiB", "--cache-bytes", "0"});
  const std::string model = big_constant_model(6'000'000);
  const StreamResult streamed = convert_stream(*channel_, model, {}, 1 << 20);
  EXPECT_EQ(streamed.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << streamed.status.error_message();
  const auto detail = error_detail(streamed.status);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->reason(), v1::ConversionError::REASON_MEMORY_LIMIT) << detail->message();
  EXPECT_EQ(streamed.onnx_model.size(), 0u);

  HttpRequest request;
  request.target = "/v1/convert";
  request.body = model;
  const HttpResponse http = http_call(server_->http_port(), request, 120s);
  EXPECT_EQ(http.status, 413) << http.body.substr(0, 500);
  EXPECT_NE(http.body.find("\"memory_limit\""), std::string::npos) << http.body.substr(0, 500);
}

// A compromised worker hands over an answer it keeps mapped writable, to
// change it while it is sent: the server cannot seal it, refuses the answer
// and replaces the worker.
TEST_F(LargeAnswerTest, AnAnswerTheWorkerCanStillChangeIsRefused) {
  start({"--test-fault-hooks"});
  const std::string model = read_file(mini_mobilenet_path());
  const ConvertResult r =
      convert(*channel_, model, {}, 0ms, {{"x-lite2onnx-test-fault", "mapped-answer"}});
  EXPECT_FALSE(r.status.ok());
  const auto detail = error_detail(r.status);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->reason(), v1::ConversionError::REASON_WORKER_CRASHED);
  EXPECT_NE(detail->message().find("sealed"), std::string::npos) << detail->message();
  const ConvertResult after = convert(*channel_, model);
  EXPECT_TRUE(after.status.ok()) << after.status.error_message();
}

}  // namespace
}  // namespace lite2onnx::server_test
