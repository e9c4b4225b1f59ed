// The call core's copy of a model (server/conversion_runner.h, ModelBuffer):
// whatever holds the bytes first (gRPC's slices of a unary request, referred
// to with their owner; an upload's blocks) is freed once the second copy
// exists (a worker's memfd, or the one string the core in this process
// reads), so that the server holds a model's bytes once, as the memory
// budget counts them (docs/service.md, Memory).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "server/conversion_runner.h"

namespace lite2onnx::server {
namespace {

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// A request's bytes in two pieces, as gRPC's slices would hold them, and the
// owner that keeps them alive (the test keeps only a weak reference).
struct Request {
  std::shared_ptr<std::string> bytes = std::make_shared<std::string>("0123456789abcdef");
  std::weak_ptr<std::string> alive = bytes;
  void refer_into(ModelBuffer& model) {
    const auto all = bytes_of(*bytes);
    model.refer(all.first(6), bytes);
    model.refer(all.subspan(6), bytes);
    bytes.reset();  // the transport holds no other reference
  }
};

TEST(ModelBufferTest, ReferredBytesAreFreedOnceCopiedIntoTheMemfd) {
  ModelBuffer model;
  Request request;
  request.refer_into(model);
  EXPECT_EQ(model.owners(), 1u) << "one owner for the pieces of one request";
  EXPECT_FALSE(request.alive.expired()) << "kept until the model is copied";
  std::vector<std::byte> memfd(model.size());
  model.drain_to(memfd.data(), [](size_t, size_t) {});
  EXPECT_TRUE(request.alive.expired()) << "gRPC's copy must go once the memfd holds the model";
  EXPECT_EQ(std::memcmp(memfd.data(), "0123456789abcdef", 16), 0);
  EXPECT_EQ(model.size(), 16u);
}

TEST(ModelBufferTest, ReferredPiecesAreFreedOnceJoinedForTheCoreInThisProcess) {
  ModelBuffer model;
  Request request;
  request.refer_into(model);
  const auto all = model.bytes();  // two pieces: joined into one string of its own
  EXPECT_TRUE(request.alive.expired()) << "the pieces were copied: their owner must go";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(all.data()), all.size()), "0123456789abcdef");
}

TEST(ModelBufferTest, OneReferredPieceIsReadInPlaceAndFreedWithTheModel) {
  ModelBuffer model;
  auto owner = std::make_shared<std::string>(std::string(64, 'x'));
  std::weak_ptr<std::string> alive = owner;
  // std::string's heap buffer is 16-byte aligned: the core reads it in place.
  model.refer(bytes_of(*owner), owner);
  owner.reset();
  const auto all = model.bytes();
  ASSERT_EQ(all.size(), 64u);
  EXPECT_FALSE(alive.expired()) << "read in place: its owner must live on";
  model.clear();
  EXPECT_TRUE(alive.expired());
  EXPECT_EQ(model.owners(), 0u);
}

TEST(ModelBufferTest, AppendedBlocksNeedNoOwner) {
  ModelBuffer model;
  model.append(bytes_of("abc"));
  model.append(bytes_of("def"));
  EXPECT_EQ(model.owners(), 0u);
  std::vector<std::byte> memfd(model.size());
  size_t copied = 0;
  model.drain_to(memfd.data(), [&](size_t, size_t n) { copied += n; });
  EXPECT_EQ(copied, 6u);
  EXPECT_EQ(std::memcmp(memfd.data(), "abcdef", 6), 0);
}

}  // namespace
}  // namespace lite2onnx::server
