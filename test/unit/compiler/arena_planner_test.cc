// Randomized tests of the arena planner: whatever the buffers and their
// lifetimes, buffers alive at the same time never overlap, every offset is
// aligned, and the arena lies between the peak-live lower bound and the
// sum of all buffers.

#include "compiler/Transforms/ArenaPlanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using mlir::tcc::ArenaPlan;
using mlir::tcc::BufferRequest;
using mlir::tcc::planArena;

namespace {
constexpr int64_t kAlign = 64;

int64_t aligned(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

void checkPlan(const std::vector<BufferRequest> &req, const ArenaPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), req.size());
  int64_t naive = 0, maxStep = 0;
  for (size_t i = 0; i < req.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kAlign, 0);
    EXPECT_GE(plan.offsets[i], 0);
    EXPECT_LE(plan.offsets[i] + aligned(req[i].bytes), plan.arenaBytes);
    naive += aligned(req[i].bytes);
    maxStep = std::max(maxStep, req[i].last);
    for (size_t j = 0; j < i; ++j) {
      bool together =
          req[i].first <= req[j].last && req[j].first <= req[i].last;
      bool overlap =
          plan.offsets[i] < plan.offsets[j] + aligned(req[j].bytes) &&
          plan.offsets[j] < plan.offsets[i] + aligned(req[i].bytes);
      EXPECT_FALSE(together && overlap && req[i].bytes > 0 && req[j].bytes > 0)
          << "buffers " << i << " and " << j << " overlap while both alive";
    }
  }
  // The peak, recomputed step by step.
  int64_t peak = 0;
  for (int64_t step = 0; step <= maxStep; ++step) {
    int64_t live = 0;
    for (const BufferRequest &r : req)
      if (r.first <= step && step <= r.last)
        live += aligned(r.bytes);
    peak = std::max(peak, live);
  }
  EXPECT_EQ(plan.peakLiveBytes, peak);
  EXPECT_EQ(plan.naiveBytes, naive);
  EXPECT_GE(plan.arenaBytes, plan.peakLiveBytes);
  EXPECT_LE(plan.arenaBytes, plan.naiveBytes);
}
} // namespace

TEST(ArenaPlanner, EmptyPlanIsEmpty) {
  ArenaPlan plan = planArena({}, kAlign);
  EXPECT_EQ(plan.arenaBytes, 0);
  EXPECT_EQ(plan.peakLiveBytes, 0);
}

TEST(ArenaPlanner, DisjointLifetimesShareMemory) {
  std::vector<BufferRequest> req = {{1000, 0, 1}, {1000, 2, 3}, {1000, 4, 5}};
  ArenaPlan plan = planArena(req, kAlign);
  checkPlan(req, plan);
  EXPECT_EQ(plan.arenaBytes, aligned(1000));
}

TEST(ArenaPlanner, OverlappingLifetimesDoNotShare) {
  std::vector<BufferRequest> req = {{100, 0, 5}, {200, 3, 8}, {50, 5, 6}};
  ArenaPlan plan = planArena(req, kAlign);
  checkPlan(req, plan);
  EXPECT_EQ(plan.arenaBytes, aligned(100) + aligned(200) + aligned(50));
}

TEST(ArenaPlanner, ReachesThePeakOnAChain) {
  // A chain of ops, each reading the previous buffer: two alive at a time.
  std::vector<BufferRequest> req;
  for (int64_t i = 0; i < 50; ++i)
    req.push_back({4096 * (1 + i % 7), i, i + 1});
  ArenaPlan plan = planArena(req, kAlign);
  checkPlan(req, plan);
  EXPECT_LE(plan.arenaBytes, plan.peakLiveBytes * 11 / 10);
}

TEST(ArenaPlanner, RandomGraphs) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 500; ++trial) {
    int n = std::uniform_int_distribution<int>(1, 60)(rng);
    int steps = std::uniform_int_distribution<int>(1, 120)(rng);
    std::vector<BufferRequest> req;
    for (int i = 0; i < n; ++i) {
      int64_t first = std::uniform_int_distribution<int64_t>(0, steps)(rng);
      int64_t len =
          std::uniform_int_distribution<int64_t>(0, steps / 3 + 1)(rng);
      // Sizes from a few bytes to a few MiB, as in real graphs.
      int64_t bytes = int64_t(1)
                      << std::uniform_int_distribution<int>(0, 22)(rng);
      bytes += std::uniform_int_distribution<int64_t>(0, bytes)(rng);
      req.push_back({bytes, first, first + len});
    }
    ArenaPlan plan = planArena(req, kAlign);
    checkPlan(req, plan);
    if (HasFailure())
      FAIL() << "trial " << trial;
  }
}

TEST(ArenaPlanner, ReachesThePeakWhereLargestFirstDoesNot) {
  // The buffers of the encoder layer (bytes, first and last use): placed
  // largest first alone they took 2 556 672 bytes, 18% above the peak of
  // 2 163 456; another order of the greedy placement reaches the peak.
  std::vector<BufferRequest> req = {
      {393216, 49, 54}, {393216, 50, 54},  {393216, 61, 63}, {393216, 63, 64},
      {393216, 64, 77}, {786432, 54, 63},  {443136, 54, 54}, {512, 60, 60},
      {512, 60, 60},    {512, 60, 60},     {4, 60, 60},      {4, 60, 60},
      {590592, 63, 63}, {4, 69, 69},       {4, 69, 69},      {3072, 69, 69},
      {3072, 69, 69},   {1572864, 71, 72}, {4, 77, 77},      {4, 77, 77},
      {3072, 77, 77},   {3072, 77, 77}};
  ArenaPlan plan = planArena(req, kAlign);
  checkPlan(req, plan);
  EXPECT_EQ(plan.arenaBytes, plan.peakLiveBytes);
}
