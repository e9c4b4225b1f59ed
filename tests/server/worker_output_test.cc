// The worker's AnswerWriter (server/worker_output.h): an answer up to
// kReuseBytes in the reused, mapped output memfd; a larger one moved, in
// order, to a memfd of its own that is not mapped and can be sealed.
#include "server/worker_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace lite2onnx::worker {
namespace {

// `n` bytes of a pattern that differs from piece to piece.
std::string piece(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i % 251);
  return s;
}

std::string read_all(int fd) {
  struct stat st {};
  EXPECT_EQ(fstat(fd, &st), 0);
  std::string s(static_cast<size_t>(st.st_size), '\0');
  EXPECT_EQ(pread(fd, s.data(), s.size(), 0), static_cast<ssize_t>(s.size()));
  return s;
}

TEST(AnswerWriterTest, AnAnswerUpToTheReusedSizeStaysInTheMappedMemfd) {
  Buffers b;
  ASSERT_TRUE(start_output(b));
  AnswerWriter out(b);
  const std::string first = piece(kReuseBytes - 100, 'a'), last = piece(100, 'b');
  ASSERT_TRUE(out.write(first));
  ASSERT_TRUE(out.write(last));
  EXPECT_EQ(out.size(), kReuseBytes);
  EXPECT_LT(out.handed_over(), 0);
  EXPECT_LE(b.output_map.size(), kReuseBytes);
  const std::string held(reinterpret_cast<const char*>(b.output_map.data()), out.size());
  EXPECT_TRUE(held == first + last);
}

TEST(AnswerWriterTest, ALargerAnswerMovesWholeToAMemfdOfItsOwnThatCanBeSealed) {
  Buffers b;
  ASSERT_TRUE(start_output(b));
  AnswerWriter out(b);
  const std::string first = piece(kReuseBytes - 10, 'a'), second = piece(3 << 20, 'b'),
                    third = piece(7, 'c');
  ASSERT_TRUE(out.write(first));
  ASSERT_LT(out.handed_over(), 0);
  ASSERT_TRUE(out.write(second));  // crosses kReuseBytes: the answer moves
  ASSERT_TRUE(out.write(third));
  ASSERT_GE(out.handed_over(), 0);
  EXPECT_EQ(out.size(), first.size() + second.size() + third.size());
  EXPECT_TRUE(read_all(out.handed_over()) == first + second + third);
  // Nobody maps it: the server's seals (server/worker_process.cc) take.
  EXPECT_EQ(fcntl(out.handed_over(), F_ADD_SEALS,
                  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL),
            0);
  // The mapped memfd stays for the next job, within kReuseBytes.
  EXPECT_LE(b.output_map.size(), kReuseBytes);
  const int kept = b.output.get();
  ASSERT_TRUE(start_output(b));
  EXPECT_EQ(b.output.get(), kept);
}

TEST(AnswerWriterTest, ResetForgetsAPartialAnswer) {
  Buffers b;
  ASSERT_TRUE(start_output(b));
  AnswerWriter out(b);
  ASSERT_TRUE(out.write(piece(kReuseBytes + 1, 'a')));
  ASSERT_GE(out.handed_over(), 0);
  out.reset();
  EXPECT_EQ(out.size(), 0u);
  EXPECT_LT(out.handed_over(), 0);
  ASSERT_TRUE(out.write(std::string("error")));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.output_map.data()), 5), "error");
}

}  // namespace
}  // namespace lite2onnx::worker
