// bench.h - timing: the profiler hook, benchmark statistics, A/B pairs.
#ifndef TCC_RUNTIME_TOOLING_BENCH_H
#define TCC_RUNTIME_TOOLING_BENCH_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct tcc_context_t;

namespace tcc::tooling {

/// Per-kernel times from the profile points of an artifact compiled with
/// tcc --profile. Install it with
/// tcc_context_set_profiler(context, Profiler::callback, &profiler).
struct Profiler {
  struct Kernel {
    std::string name;
    int64_t calls = 0;
    double totalMs = 0;
    std::chrono::steady_clock::time_point start; ///< of the call in flight
    /// Thread time: each call's wall time, less the calling thread's
    /// waits at the ends of parallel loops, plus the workers' time in
    /// them (with `context` set; threadMs / totalMs threads were busy).
    double threadMs = 0;
    int64_t busyAtStart = 0, waitAtStart = 0; ///< of the call in flight
  };
  /// Indexed by the artifact's kernel number.
  std::vector<Kernel> kernels;
  /// The context whose thread usage (tcc_context_thread_usage) each
  /// kernel records, or none.
  const tcc_context_t *context = nullptr;

  /// The runtime's profiler hook: `end` 0 when kernel `kernel` starts,
  /// nonzero when it ends; `user` is the Profiler.
  static void callback(void *user, int64_t kernel, const char *name,
                       int32_t end);
  /// Forgets what was measured (before the timed runs), keeping the names.
  void reset();
  /// The time of all kernels together.
  double totalMs() const;
  /// Their thread time together (0 without a context).
  double threadMs() const;
  /// Kernel indices by total time, largest first (ties in kernel order).
  std::vector<size_t> order() const;
};

/// The statistics of a benchmark's timed runs.
struct BenchResult {
  long runs = 0, warmup = 0;
  double medianMs = 0, minMs = 0, p90Ms = 0, meanMs = 0;
};

/// The median; of an even count, the mean of the middle two. 0 if empty.
double median(std::vector<double> values);

/// The nearest-rank percentile (the smallest value with at least `percent`%
/// of the values at or below it). 0 if empty.
double percentile(std::vector<double> values, int percent);

/// The arithmetic mean. 0 if empty.
double mean(const std::vector<double> &values);

/// Median, min, nearest-rank p90 and mean of `ms`, one entry a timed run,
/// after `warmup` untimed ones.
BenchResult summarize(const std::vector<double> &ms, long warmup);

/// Milliseconds since `start`.
double elapsedMs(std::chrono::steady_clock::time_point start);

/// Runs `run` `warmup` times, then times `runs` runs one by one. The
/// profiler, if any, is reset after the warm-up so that it covers the timed
/// runs only.
BenchResult bench(const std::function<void()> &run, long runs, long warmup,
                  Profiler *profiler = nullptr);

/// Two artifacts timed in turn.
struct PairedResult {
  BenchResult a, b;
  double medianRatio = 0; ///< the median over the pairs of B's time / A's
  long bFaster = 0;       ///< pairs in which B took less time
};

/// The warm-up runs of both, then `runs` pairs in alternating order (A B,
/// B A, A B, ...: neither always goes first). On a machine whose speed
/// drifts (a VM sharing its cores) a pair's two runs see the same machine,
/// so the median of their ratios is steadier than the ratio of two medians
/// taken one after the other.
PairedResult benchPaired(const std::function<void()> &runA,
                         const std::function<void()> &runB, long runs,
                         long warmup);

} // namespace tcc::tooling

#endif // TCC_RUNTIME_TOOLING_BENCH_H
