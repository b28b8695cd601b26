// bench.cc - the profiler hook, benchmark statistics and paired timing.
#include "tooling/bench.h"

#include "tcc/runtime.h"

#include <algorithm>

namespace tcc::tooling {

void Profiler::callback(void *user, int64_t kernel, const char *name,
                        int32_t end) {
  // The clock first, so that the bookkeeping below is not timed.
  auto now = std::chrono::steady_clock::now();
  auto &p = *static_cast<Profiler *>(user);
  if (kernel < 0)
    return;
  if (static_cast<size_t>(kernel) >= p.kernels.size())
    p.kernels.resize(kernel + 1);
  Kernel &k = p.kernels[kernel];
  tcc_thread_usage_t usage{};
  if (p.context)
    tcc_context_thread_usage(p.context, &usage);
  if (!end) {
    if (k.name.empty() && name)
      k.name = name;
    k.busyAtStart = usage.worker_busy_ns;
    k.waitAtStart = usage.caller_wait_ns;
    k.start = std::chrono::steady_clock::now(); // after the bookkeeping
    return;
  }
  ++k.calls;
  const double ms =
      std::chrono::duration<double, std::milli>(now - k.start).count();
  k.totalMs += ms;
  if (p.context)
    k.threadMs +=
        ms + 1e-6 * static_cast<double>((usage.worker_busy_ns - k.busyAtStart) -
                                        (usage.caller_wait_ns - k.waitAtStart));
}

void Profiler::reset() {
  for (Kernel &k : kernels)
    k.calls = 0, k.totalMs = 0, k.threadMs = 0;
}

double Profiler::threadMs() const {
  double t = 0;
  for (const Kernel &k : kernels)
    t += k.threadMs;
  return t;
}

double Profiler::totalMs() const {
  double t = 0;
  for (const Kernel &k : kernels)
    t += k.totalMs;
  return t;
}

std::vector<size_t> Profiler::order() const {
  std::vector<size_t> idx(kernels.size());
  for (size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return kernels[a].totalMs > kernels[b].totalMs;
  });
  return idx;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double percentile(std::vector<double> v, int percent) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  // The rank ceil(percent / 100 * n), in integers so that p90 of 10 values
  // is exactly the 9th.
  const size_t n = v.size();
  size_t rank =
      (static_cast<size_t>(std::clamp(percent, 0, 100)) * n + 99) / 100;
  return v[rank ? rank - 1 : 0];
}

double mean(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m += x / v.size();
  return m;
}

BenchResult summarize(const std::vector<double> &ms, long warmup) {
  BenchResult b;
  b.runs = static_cast<long>(ms.size());
  b.warmup = warmup;
  if (ms.empty())
    return b;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  b.medianMs = median(sorted);
  b.minMs = sorted.front();
  b.p90Ms = percentile(sorted, 90);
  b.meanMs = mean(sorted);
  return b;
}

double elapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

BenchResult bench(const std::function<void()> &run, long runs, long warmup,
                  Profiler *profiler) {
  for (long i = 0; i < warmup; ++i)
    run();
  if (profiler)
    profiler->reset();
  std::vector<double> ms;
  ms.reserve(runs);
  for (long i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(elapsedMs(start));
  }
  return summarize(ms, warmup);
}

PairedResult benchPaired(const std::function<void()> &runA,
                         const std::function<void()> &runB, long runs,
                         long warmup) {
  for (long i = 0; i < warmup; ++i) {
    runA();
    runB();
  }
  PairedResult r;
  std::vector<double> msA, msB, ratios;
  for (long i = 0; i < runs; ++i) {
    double t[2];
    for (int k = 0; k < 2; ++k) {
      const bool a = (k == 0) == (i % 2 == 0);
      auto start = std::chrono::steady_clock::now();
      (a ? runA : runB)();
      t[a ? 0 : 1] = elapsedMs(start);
    }
    msA.push_back(t[0]);
    msB.push_back(t[1]);
    ratios.push_back(t[1] / t[0]);
    r.bFaster += t[1] < t[0];
  }
  r.a = summarize(msA, warmup);
  r.b = summarize(msB, warmup);
  r.medianRatio = median(ratios);
  return r;
}

} // namespace tcc::tooling
