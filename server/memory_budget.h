// A budget of bytes shared by all in-flight requests: each request reserves the
// bytes of its model before it is accepted and gives them back when done.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

namespace lite2onnx::server {

class MemoryBudget {
 public:
  // Told, under the budget's lock, the bytes in use after every change.
  using UsageObserver = std::function<void(uint64_t used)>;

  // Bytes held until it is destroyed; can grow while a stream arrives.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation();
    // Reserves `more` bytes too; false (and nothing changes) if they do not fit.
    bool grow(uint64_t more);
    void release();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    uint64_t bytes_ = 0;
  };

  explicit MemoryBudget(uint64_t limit, UsageObserver observer = {});
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // A reservation of `bytes`, or nothing when they do not fit in what is left.
  std::optional<Reservation> try_reserve(uint64_t bytes);
  uint64_t limit() const { return limit_; }

 private:
  bool take(uint64_t bytes);
  void give_back(uint64_t bytes);

  const uint64_t limit_;
  UsageObserver observer_;
  std::mutex mu_;
  uint64_t used_ = 0;
};

}  // namespace lite2onnx::server
