// Tests of latency_histogram.h against data whose percentiles are known exactly. Built and run by
// tests/test_open_loop.py (g++ -std=c++17, no RocksDB needed); exits non-zero naming the first failure.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>

#include "latency_histogram.h"

static int failures = 0;

static void Near(const char* what, double got, double want, double rel) {
  if (std::fabs(got - want) > rel * want) {
    std::fprintf(stderr, "FAIL %s: got %.0f, want %.0f (within %.2f %%)\n", what, got, want, rel * 100);
    ++failures;
  }
}

int main() {
  // Every value from 1 to 1,000,000 once: the q-quantile is q * 1e6.
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 1000000; ++v) h.Record(v);
  Near("uniform p50", h.Percentile(0.5), 500000, 0.008);
  Near("uniform p99", h.Percentile(0.99), 990000, 0.008);
  Near("uniform p99.9", h.Percentile(0.999), 999000, 0.008);
  Near("uniform p99.99", h.Percentile(0.9999), 999900, 0.008);
  Near("uniform max", h.Max(), 1000000, 0.0);
  Near("uniform mean", h.Mean(), 500000.5, 1e-9);
  if (h.Percentile(1.0) != 1000000) { std::fprintf(stderr, "FAIL p100 is not the max\n"); ++failures; }

  // Counts above a threshold: 100,000 values above 900,000, less at most the threshold's bucket.
  const double above = static_cast<double>(h.CountAbove(900000));
  if (above > 100000 || above < 100000 - 900000.0 / 128) {
    std::fprintf(stderr, "FAIL count above 900000: %.0f\n", above);
    ++failures;
  }
  if (h.CountAbove(1000000) != 0 || h.CountAbove(0) != 1000000) { std::fprintf(stderr, "FAIL count above the ends\n"); ++failures; }

  // Values below 2^sub_bits are exact.
  LatencyHistogram small;
  for (uint64_t v = 0; v < 128; ++v) small.Record(v);
  if (small.Percentile(0.5) != 63) { std::fprintf(stderr, "FAIL exact p50 %llu\n", (unsigned long long)small.Percentile(0.5)); ++failures; }

  // A 1.5 s pause among 1 ms requests: 10,000 requests at 1 ms, then 1,500 queued behind the pause whose
  // latencies (from their intended start) fall from 1.5 s to 1 ms: P99.9 is ~1.5 s, P50 1 ms.
  LatencyHistogram paused;
  for (int i = 0; i < 10000; ++i) paused.Record(1000000);
  for (int i = 0; i < 1500; ++i) paused.Record(static_cast<uint64_t>(1500000000.0 - i * 1000000.0));
  Near("paused p50", paused.Percentile(0.5), 1000000, 0.008);
  Near("paused p99.9", paused.Percentile(0.999), 1489000000, 0.01);

  // Exponential latencies (mean 100 us): the q-quantile is -mean * ln(1 - q); merged from two halves.
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> exp(1.0 / 100000.0);
  LatencyHistogram a, b;
  for (int i = 0; i < 2000000; ++i) (i % 2 ? a : b).Record(static_cast<uint64_t>(exp(rng)));
  a.Merge(b);
  Near("exponential p99", a.Percentile(0.99), -100000 * std::log(0.01), 0.02);
  Near("exponential p99.9", a.Percentile(0.999), -100000 * std::log(0.001), 0.04);
  if (a.Count() != 2000000) { std::fprintf(stderr, "FAIL merged count\n"); ++failures; }

  // Every bucket's highest value maps back into the bucket, and the next value into the next one.
  for (size_t i = 0; i + 1 < 7000; ++i) {
    if (h.Index(h.HighestOf(i)) != i || h.Index(h.HighestOf(i) + 1) != i + 1) {
      std::fprintf(stderr, "FAIL bucket %zu bounds\n", i);
      ++failures;
      break;
    }
  }
  if (failures == 0) std::printf("latency_histogram: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
