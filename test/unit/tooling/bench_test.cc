// bench_test.cc - benchmark statistics, the profiler hook, and the order in
// which paired A/B timing runs the two artifacts.
#include "tooling/bench.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

using namespace tcc::tooling;

namespace {

TEST(BenchTest, Median) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5); // the mean of the middle two
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({5, 5, 1, 9, 9}), 5);
  EXPECT_EQ(median({}), 0);
}

TEST(BenchTest, NearestRankPercentile) {
  std::vector<double> ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(percentile(ten, 90), 9); // rank ceil(0.9 * 10) = 9
  EXPECT_EQ(percentile(ten, 50), 5);
  EXPECT_EQ(percentile(ten, 100), 10);
  EXPECT_EQ(percentile(ten, 0), 1);
  std::vector<double> eleven;
  for (int i = 1; i <= 11; ++i)
    eleven.push_back(i);
  EXPECT_EQ(percentile(eleven, 90), 10); // rank ceil(9.9) = 10
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i)
    twenty.push_back(i);
  EXPECT_EQ(percentile(twenty, 90), 18); // exactly 18, no rounding up
  // Rounded up, never to the nearest: rank ceil(5.4) = 6, not 5.
  EXPECT_EQ(percentile({1, 2, 3, 4, 5, 6}, 90), 6);
  EXPECT_EQ(percentile({4, 2, 3}, 90), 4);
  EXPECT_EQ(percentile({5}, 90), 5);
  EXPECT_EQ(percentile({}, 90), 0);
}

TEST(BenchTest, Mean) {
  EXPECT_EQ(mean({1, 2, 3, 4}), 2.5);
  EXPECT_EQ(mean({0.5}), 0.5);
  EXPECT_EQ(mean({}), 0);
}

TEST(BenchTest, Summarize) {
  BenchResult b = summarize({5, 1, 4, 2, 3}, 2);
  EXPECT_EQ(b.runs, 5);
  EXPECT_EQ(b.warmup, 2);
  EXPECT_EQ(b.medianMs, 3);
  EXPECT_EQ(b.minMs, 1);
  EXPECT_EQ(b.p90Ms, 5);
  EXPECT_EQ(b.meanMs, 3);

  b = summarize({0.25, 0.5, 0.25, 4}, 0);
  EXPECT_EQ(b.medianMs, 0.375);
  EXPECT_EQ(b.minMs, 0.25);
  EXPECT_EQ(b.p90Ms, 4); // one slow run shows in p90 and the mean only
  EXPECT_EQ(b.meanMs, 1.25);

  b = summarize({}, 3);
  EXPECT_EQ(b.runs, 0);
  EXPECT_EQ(b.warmup, 3);
  EXPECT_EQ(b.medianMs, 0);
  EXPECT_EQ(b.meanMs, 0);
}

// A profile point pair around kernel 0, as an artifact compiled with
// tcc --profile reports it.
void profiledRun(Profiler &p) {
  Profiler::callback(&p, 0, "node_Add (Add)", 0);
  Profiler::callback(&p, 0, "node_Add (Add)", 1);
}

TEST(BenchTest, BenchTimesRunsAfterWarmup) {
  int calls = 0;
  Profiler profiler;
  BenchResult b = bench(
      [&] {
        ++calls;
        profiledRun(profiler);
      },
      4, 2, &profiler);
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(b.runs, 4);
  EXPECT_EQ(b.warmup, 2);
  EXPECT_GE(b.minMs, 0);
  EXPECT_LE(b.minMs, b.medianMs);
  EXPECT_LE(b.medianMs, b.p90Ms);
  // Reset after the warm-up: the profile covers the timed runs only.
  ASSERT_EQ(profiler.kernels.size(), 1u);
  EXPECT_EQ(profiler.kernels[0].calls, 4);
  EXPECT_EQ(profiler.kernels[0].name, "node_Add (Add)");
}

TEST(BenchTest, BenchMeasuresTheRun) {
  BenchResult b = bench(
      [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, 3, 0);
  EXPECT_EQ(b.runs, 3);
  EXPECT_GE(b.minMs, 2.0);
  EXPECT_GE(b.meanMs, b.minMs);
}

TEST(BenchTest, PairsAlternateWhichRunsFirst) {
  std::string order;
  PairedResult r =
      benchPaired([&] { order += 'A'; }, [&] { order += 'B'; }, 4, 1);
  // The warm-up of both, then A B, B A, A B, B A.
  EXPECT_EQ(order, "ABABBAABBA");
  EXPECT_EQ(r.a.runs, 4);
  EXPECT_EQ(r.b.runs, 4);
  EXPECT_EQ(r.a.warmup, 1);
  EXPECT_EQ(r.b.warmup, 1);
}

TEST(BenchTest, PairedRatioAndFasterCount) {
  auto slow = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  auto fast = [] {};
  PairedResult r = benchPaired(fast, slow, 3, 0);
  EXPECT_GT(r.medianRatio, 1); // B's time over A's
  EXPECT_EQ(r.bFaster, 0);
  EXPECT_GE(r.b.minMs, 2.0);
  EXPECT_LT(r.a.medianMs, r.b.medianMs);

  r = benchPaired(slow, fast, 3, 0);
  EXPECT_LT(r.medianRatio, 1);
  EXPECT_EQ(r.bFaster, 3);
}

TEST(BenchTest, ProfilerCountsCallsAndKeepsTheFirstName) {
  Profiler p;
  Profiler::callback(&p, 2, "second", 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Profiler::callback(&p, 2, nullptr, 1);
  Profiler::callback(&p, 2, "renamed", 0);
  Profiler::callback(&p, 2, "renamed", 1);
  Profiler::callback(&p, -1, "ignored", 0); // not a kernel
  ASSERT_EQ(p.kernels.size(), 3u);          // grown to the index
  EXPECT_EQ(p.kernels[2].calls, 2);
  EXPECT_EQ(p.kernels[2].name, "second");
  EXPECT_GE(p.kernels[2].totalMs, 1.0);
  EXPECT_EQ(p.kernels[0].calls, 0);
  EXPECT_EQ(p.totalMs(), p.kernels[2].totalMs);

  p.reset();
  EXPECT_EQ(p.kernels[2].calls, 0);
  EXPECT_EQ(p.kernels[2].totalMs, 0);
  EXPECT_EQ(p.kernels[2].name, "second");
}

TEST(BenchTest, ProfilerOrderIsLargestFirstStable) {
  Profiler p;
  p.kernels.resize(4);
  p.kernels[0].totalMs = 1;
  p.kernels[1].totalMs = 5;
  p.kernels[2].totalMs = 1;
  p.kernels[3].totalMs = 3;
  EXPECT_EQ(p.order(), (std::vector<size_t>{1, 3, 0, 2}));
  EXPECT_EQ(p.totalMs(), 10);
}

} // namespace
