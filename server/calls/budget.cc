#include "server/calls/budget.h"

#include <algorithm>
#include <utility>

namespace lite2onnx::server {

Budget::Budget(BudgetLimits limits, UsageObserver observer)
    : limits_(limits), observer_(std::move(observer)) {}

std::optional<Budget::Ticket> Budget::enter(std::string_view peer, Refusal* refusal) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it != peers_.end() && it->second.calls >= limits_.peer_calls) {
    *refusal = Refusal::kPeerCalls;
    return std::nullopt;
  }
  if (it == peers_.end()) it = peers_.emplace(std::string(peer), PeerUse{}).first;
  ++it->second.calls;
  return Ticket(this, it->first);
}

uint64_t Budget::used() const {
  std::lock_guard lock(mu_);
  return used_;
}

bool Budget::take_shared(uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > limits_.bytes - used_ - shared_) return false;
  shared_ += bytes;
  return true;
}

void Budget::give_shared(uint64_t bytes) {
  std::lock_guard lock(mu_);
  shared_ -= std::min(bytes, shared_);
}

uint64_t Budget::shared() const {
  std::lock_guard lock(mu_);
  return shared_;
}

void Budget::set_reclaimer(Reclaimer reclaimer) {
  std::lock_guard lock(mu_);
  reclaimer_ = std::move(reclaimer);
}

bool Budget::reclaim(uint64_t bytes) {
  Reclaimer reclaimer;
  {
    std::lock_guard lock(mu_);
    if (!reclaimer_ || shared_ == 0) return false;
    reclaimer = reclaimer_;
  }
  return reclaimer(bytes) > 0;
}

std::optional<Budget::Refusal> Budget::change(const std::string& peer, uint64_t from, uint64_t to,
                                              uint64_t* missing) {
  std::lock_guard lock(mu_);
  PeerUse& use = peers_[peer];
  if (to > from) {
    const uint64_t more = to - from;
    const uint64_t room = limits_.bytes - used_ - shared_;
    if (more > room) {
      // Only what the cache could free: a call that would not fit even
      // without it does not empty it.
      if (missing && more - room <= shared_) *missing = more - room;
      return Refusal::kBytes;
    }
    if (more > limits_.peer_bytes - use.bytes) return Refusal::kPeerBytes;
  }
  used_ = used_ - from + to;
  use.bytes = use.bytes - from + to;
  if (observer_) observer_(used_);
  return std::nullopt;
}

void Budget::leave(const std::string& peer, uint64_t bytes) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  used_ -= bytes;
  it->second.bytes -= bytes;
  if (--it->second.calls == 0) peers_.erase(it);
  if (observer_) observer_(used_);
}

Budget::Ticket::Ticket(Ticket&& o) noexcept
    : budget_(std::exchange(o.budget_, nullptr)),
      peer_(std::move(o.peer_)),
      bytes_(std::exchange(o.bytes_, 0)) {}

Budget::Ticket& Budget::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    release();
    budget_ = std::exchange(o.budget_, nullptr);
    peer_ = std::move(o.peer_);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

std::optional<Budget::Refusal> Budget::Ticket::hold(uint64_t bytes) {
  if (!budget_) return Refusal::kBytes;
  uint64_t missing = 0;
  auto refused = budget_->change(peer_, bytes_, bytes, &missing);
  // Cached answers give way to a call's bytes.
  if (refused == Refusal::kBytes && missing > 0 && budget_->reclaim(missing))
    refused = budget_->change(peer_, bytes_, bytes);
  if (refused) return refused;
  bytes_ = bytes;
  return std::nullopt;
}

void Budget::Ticket::release() {
  if (!budget_) return;
  budget_->leave(peer_, std::exchange(bytes_, 0));
  budget_ = nullptr;
}

std::string peer_of_address(std::string_view address) {
  const size_t colon = address.rfind(':');
  const bool v4 = address.starts_with("ipv4:") && colon > 5;
  const bool v6 = address.starts_with("ipv6:[") && colon > 6 && address[colon - 1] == ']';
  return std::string(v4 || v6 ? address.substr(0, colon) : address);
}

}  // namespace lite2onnx::server
