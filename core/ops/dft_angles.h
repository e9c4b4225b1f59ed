// The angles of a length-n discrete Fourier transform: a DFT matrix holds
// cos(2 pi (k i mod n) / n) and the sine of the same, so its k x i entries
// take only n distinct values. Each is computed once (as the matrices
// computed every entry before, in double), and a matrix is filled by lookup:
// n trigonometric calls instead of k x i.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace lite2onnx::ops {

class DftAngles {
 public:
  explicit DftAngles(int64_t n) : n_(n), cos_(static_cast<size_t>(n)), sin_(cos_.size()) {
    for (int64_t m = 0; m < n; ++m) {
      const double t = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
      cos_[static_cast<size_t>(m)] = std::cos(t);
      sin_[static_cast<size_t>(m)] = std::sin(t);
    }
  }
  // cos and sin of 2 pi k i / n, for k, i >= 0.
  double cos(int64_t k, int64_t i) const { return cos_[index(k, i)]; }
  double sin(int64_t k, int64_t i) const { return sin_[index(k, i)]; }

 private:
  size_t index(int64_t k, int64_t i) const { return static_cast<size_t>((k * i) % n_); }
  int64_t n_;
  std::vector<double> cos_, sin_;
};

}  // namespace lite2onnx::ops
