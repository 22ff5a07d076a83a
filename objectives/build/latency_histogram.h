// A log-linear latency histogram in the manner of HdrHistogram: values below 2^sub_bits are counted
// exactly, above that each power of two is split into 2^sub_bits buckets, so a value is known to within
// 1 / 2^sub_bits of itself (sub_bits 7: < 0.8 %, better than HdrHistogram's 2 significant digits).
// Percentiles answer the bucket's highest value, never above the largest value recorded, so a
// percentile is never understated by more than the bucket's width and never overstated past the max.
// Header-only; used by open_loop.cc, tested by latency_histogram_test.cc (tests/test_open_loop.py).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

class LatencyHistogram {
 public:
  explicit LatencyHistogram(int sub_bits = 7)
      : sub_bits_(sub_bits), counts_(static_cast<size_t>(64 - sub_bits + 1) << sub_bits, 0) {}

  void Record(uint64_t value, uint64_t count = 1) {
    counts_[Index(value)] += count;
    total_ += count;
    max_ = std::max(max_, value);
    min_ = std::min(min_, value);
    sum_ += static_cast<double>(value) * static_cast<double>(count);
  }

  void Merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < counts_.size() && i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    max_ = std::max(max_, other.max_);
    min_ = std::min(min_, other.min_);
    sum_ += other.sum_;
  }

  uint64_t Count() const { return total_; }
  uint64_t Max() const { return total_ ? max_ : 0; }
  uint64_t Min() const { return total_ ? min_ : 0; }
  double Mean() const { return total_ ? sum_ / static_cast<double>(total_) : 0.0; }

  // The smallest bucket's highest value v with at least q * Count() values at or below v (q in [0, 1]).
  uint64_t Percentile(double q) const {
    if (total_ == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total_) + 0.999999999);
    rank = std::max<uint64_t>(1, std::min(rank, total_));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(HighestOf(i), max_);
    }
    return max_;
  }

  // How many values were recorded in buckets wholly above x: never a value <= x, but the values above x
  // in x's own bucket are left out (at most its width, 1 / 2^sub_bits of x). Counts over a threshold add
  // up across histograms, as percentiles do not.
  uint64_t CountAbove(uint64_t x) const {
    uint64_t above = 0;
    for (size_t i = Index(x) + 1; i < counts_.size(); ++i) above += counts_[i];
    return above;
  }

  // The bucket a value falls in: exact below 2^sub_bits, then 2^sub_bits buckets per power of two.
  size_t Index(uint64_t value) const {
    const uint64_t unit = uint64_t{1} << sub_bits_;
    if (value < unit) return static_cast<size_t>(value);
    const int top = 63 - __builtin_clzll(value);  // floor(log2(value)) >= sub_bits
    const int shift = top - sub_bits_;
    return static_cast<size_t>((static_cast<uint64_t>(shift) + 1) * unit + ((value >> shift) - unit));
  }

  // The highest value bucket i holds.
  uint64_t HighestOf(size_t i) const {
    const uint64_t unit = uint64_t{1} << sub_bits_;
    if (i < unit) return i;
    const uint64_t shift = i / unit - 1;
    const uint64_t mantissa = unit + i % unit;
    return ((mantissa + 1) << shift) - 1;
  }

 private:
  int sub_bits_;
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
  double sum_ = 0.0;
};
