// The memory budget (server/calls/budget.h) with the cache's bytes in it:
// calls' and cached bytes together never exceed it, and cached bytes give way
// to a call's (docs/service.md, Memory: peak RSS <= base + budget).
#include "server/calls/budget.h"

#include <gtest/gtest.h>

#include <vector>

namespace lite2onnx::server {
namespace {

constexpr BudgetLimits kLimits{.bytes = 100, .peer_bytes = 100, .peer_calls = 4};

Budget::Ticket enter(Budget& budget) {
  Budget::Refusal why{};
  auto ticket = budget.enter("ipv4:10.0.0.1", &why);
  EXPECT_TRUE(ticket);
  return std::move(*ticket);
}

TEST(BudgetTest, CachedBytesNeverGoBeyondWhatCallsLeave) {
  Budget budget(kLimits);
  Budget::Ticket call = enter(budget);
  ASSERT_FALSE(call.hold(70));
  EXPECT_FALSE(budget.take_shared(31));
  EXPECT_TRUE(budget.take_shared(30));
  EXPECT_EQ(budget.used() + budget.shared(), 100u);
  budget.give_shared(30);
  EXPECT_EQ(budget.shared(), 0u);
}

TEST(BudgetTest, CachedBytesGiveWayToACall) {
  std::vector<uint64_t> observed;
  Budget budget(kLimits, [&](uint64_t used) { observed.push_back(used); });
  std::vector<uint64_t> asked;
  budget.set_reclaimer([&](uint64_t bytes) {
    asked.push_back(bytes);
    budget.give_shared(80);  // the cache drops what it holds
    return uint64_t{80};
  });
  ASSERT_TRUE(budget.take_shared(80));
  Budget::Ticket call = enter(budget);
  EXPECT_FALSE(call.hold(50)) << "the cache must make room";
  EXPECT_EQ(asked, std::vector<uint64_t>{30}) << "asked for what is missing, no more";
  EXPECT_EQ(budget.used(), 50u);
  EXPECT_EQ(budget.shared(), 0u);
  EXPECT_EQ(observed.back(), 50u) << "the usage observed is the calls'";
}

TEST(BudgetTest, ACallIsRefusedWhenTheCacheCannotMakeRoom) {
  Budget budget(kLimits);
  budget.set_reclaimer([&](uint64_t) {
    budget.give_shared(5);
    return uint64_t{5};
  });
  ASSERT_TRUE(budget.take_shared(20));
  Budget::Ticket first = enter(budget), second = enter(budget);
  ASSERT_FALSE(first.hold(70));
  EXPECT_EQ(second.hold(20), Budget::Refusal::kBytes);
  EXPECT_EQ(second.bytes(), 0u);
  EXPECT_EQ(budget.used() + budget.shared(), 85u);
}

TEST(BudgetTest, ACallThatCannotFitAnywayLeavesTheCacheAlone) {
  Budget budget(kLimits);
  int asked = 0;
  budget.set_reclaimer([&](uint64_t) {
    ++asked;
    return uint64_t{0};
  });
  ASSERT_TRUE(budget.take_shared(10));
  Budget::Ticket call = enter(budget);
  EXPECT_EQ(call.hold(101), Budget::Refusal::kBytes) << "beyond the whole budget";
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(call.hold(95), Budget::Refusal::kBytes) << "5 missing: the cache is asked";
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(budget.shared(), 10u);
}

TEST(BudgetTest, WithoutCachedBytesNothingIsAsked) {
  Budget budget(kLimits);
  int asked = 0;
  budget.set_reclaimer([&](uint64_t) {
    ++asked;
    return uint64_t{0};
  });
  Budget::Ticket call = enter(budget);
  EXPECT_EQ(call.hold(101), Budget::Refusal::kBytes);
  EXPECT_EQ(asked, 0);
}

}  // namespace
}  // namespace lite2onnx::server
