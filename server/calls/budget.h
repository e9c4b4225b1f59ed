// The memory budget (--max-inflight-bytes) and the per-peer caps
// (--max-calls-per-peer, --max-bytes-per-peer), shared by every call of every
// transport. A call holds a Ticket from its arrival to its answer's last byte:
// it counts the call against its peer (a client address) and holds the bytes
// the call keeps in this process: its model as the bytes arrive, then its
// answer until it is sent. Nothing is reserved from a size a client
// announces beyond a small first allotment (the upload's first MiB).
//
// The conversion cache's answers are in the budget too, as bytes of no call
// ("shared"): they never count against a peer, and they give way to calls.
// When a call's bytes do not fit, the reclaimer (the cache, dropping its least
// recently used answers) is asked for what is missing, and the call tries once
// more. So the process holds at most the budget in calls' and cached bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace lite2onnx::server {

struct BudgetLimits {
  uint64_t bytes = 0;       // all calls together
  uint64_t peer_bytes = 0;  // one peer's calls together
  unsigned peer_calls = 0;  // one peer's calls in progress
};

class Budget {
 public:
  // Told, under the budget's lock, the calls' bytes in use after every change.
  using UsageObserver = std::function<void(uint64_t used)>;
  // Asked (with no lock of the budget's held) to free at least `bytes` of
  // shared bytes; returns how many it freed.
  using Reclaimer = std::function<uint64_t(uint64_t bytes)>;

  // Why a ticket or its bytes were refused.
  enum class Refusal { kPeerCalls, kPeerBytes, kBytes };

  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket() { release(); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    // Holds `bytes` from now on (more or fewer than before); nothing changes
    // and the refusal says why when more do not fit.
    std::optional<Refusal> hold(uint64_t bytes);
    uint64_t bytes() const { return bytes_; }
    // Gives back the bytes and the peer's call slot.
    void release();

   private:
    friend class Budget;
    Ticket(Budget* budget, std::string peer) : budget_(budget), peer_(std::move(peer)) {}
    Budget* budget_ = nullptr;
    std::string peer_;
    uint64_t bytes_ = 0;
  };

  Budget(BudgetLimits limits, UsageObserver observer = {});
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // A ticket for one more call of `peer`, or kPeerCalls.
  std::optional<Ticket> enter(std::string_view peer, Refusal* refusal);
  const BudgetLimits& limits() const { return limits_; }
  uint64_t used() const;  // by calls

  // Bytes of no call (the cache's): `bytes` more if they fit beside everything
  // held (nothing is reclaimed for them), and given back.
  bool take_shared(uint64_t bytes);
  void give_shared(uint64_t bytes);
  uint64_t shared() const;
  void set_reclaimer(Reclaimer reclaimer);

 private:
  struct PeerUse {
    unsigned calls = 0;
    uint64_t bytes = 0;
  };
  // `missing`: on kBytes, how many bytes more the budget would need, when
  // freeing shared bytes could give them (else untouched).
  std::optional<Refusal> change(const std::string& peer, uint64_t from, uint64_t to,
                                uint64_t* missing = nullptr);
  // Asks the reclaimer for `bytes`; whether it freed any.
  bool reclaim(uint64_t bytes);
  void leave(const std::string& peer, uint64_t bytes);

  const BudgetLimits limits_;
  UsageObserver observer_;
  mutable std::mutex mu_;
  uint64_t used_ = 0;    // by calls
  uint64_t shared_ = 0;  // by no call (the cache)
  Reclaimer reclaimer_;
  std::map<std::string, PeerUse, std::less<>> peers_;  // only peers with a call in progress
};

// The peer of an address as gRPC and the HTTP endpoint write it: the address
// without its port ("ipv4:10.1.2.3:5678" -> "ipv4:10.1.2.3", "ipv6:[::1]:80"
// -> "ipv6:[::1]"); other forms (unix sockets) as they are.
std::string peer_of_address(std::string_view address);

}  // namespace lite2onnx::server
