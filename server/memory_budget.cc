#include "server/memory_budget.h"

#include <utility>

namespace lite2onnx::server {

MemoryBudget::MemoryBudget(uint64_t limit, UsageObserver observer)
    : limit_(limit), observer_(std::move(observer)) {}

std::optional<MemoryBudget::Reservation> MemoryBudget::try_reserve(uint64_t bytes) {
  if (!take(bytes)) return std::nullopt;
  return Reservation(this, bytes);
}

bool MemoryBudget::take(uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > limit_ - used_) return false;
  used_ += bytes;
  if (observer_) observer_(used_);
  return true;
}

void MemoryBudget::give_back(uint64_t bytes) {
  std::lock_guard lock(mu_);
  used_ -= bytes;
  if (observer_) observer_(used_);
}

MemoryBudget::Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

MemoryBudget::Reservation::~Reservation() { release(); }

bool MemoryBudget::Reservation::grow(uint64_t more) {
  if (!budget_ || !budget_->take(more)) return false;
  bytes_ += more;
  return true;
}

void MemoryBudget::Reservation::release() {
  if (budget_ && bytes_ > 0) budget_->give_back(bytes_);
  bytes_ = 0;
}

}  // namespace lite2onnx::server
