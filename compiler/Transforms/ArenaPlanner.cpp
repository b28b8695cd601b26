//===- ArenaPlanner.cpp - packing buffers into one arena ------------------===//

#include "compiler/Transforms/ArenaPlanner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

using namespace mlir::tcc;

static int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// Places the buffers in `order`, each at the lowest gap (or with
/// `tightest`, the smallest gap that fits, else above everything) among the
/// placed buffers alive with it; returns the arena's size.
static int64_t place(const std::vector<BufferRequest> &requests,
                     const std::vector<int64_t> &sizes,
                     const std::vector<size_t> &order, bool tightest,
                     std::vector<int64_t> &offsets) {
  int64_t arena = 0;
  std::vector<size_t> placed;
  for (size_t i : order) {
    // Address ranges of placed buffers alive at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (requests[j].first <= requests[i].last &&
          requests[i].first <= requests[j].last)
        busy.push_back({offsets[j], offsets[j] + sizes[j]});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0, best = -1, bestGap = 0;
    for (auto [begin, end] : busy) {
      int64_t gap = begin - offset;
      if (gap >= sizes[i]) {
        if (!tightest) {
          best = offset;
          break;
        }
        if (best < 0 || gap < bestGap)
          best = offset, bestGap = gap;
      }
      offset = std::max(offset, end);
    }
    offsets[i] = best >= 0 ? best : offset;
    arena = std::max(arena, offsets[i] + sizes[i]);
    placed.push_back(i);
  }
  return arena;
}

ArenaPlan mlir::tcc::planArena(const std::vector<BufferRequest> &requests,
                               int64_t alignment) {
  ArenaPlan plan;
  size_t n = requests.size();
  plan.offsets.assign(n, 0);
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = alignUp(requests[i].bytes, alignment);
    plan.naiveBytes += sizes[i];
  }

  // Peak: sweep the lifetime boundaries.
  std::map<int64_t, int64_t> delta;
  for (size_t i = 0; i < n; ++i) {
    delta[requests[i].first] += sizes[i];
    delta[requests[i].last + 1] -= sizes[i];
  }
  int64_t live = 0;
  for (auto &[step, d] : delta)
    plan.peakLiveBytes = std::max(plan.peakLiveBytes, live += d);

  // Greedy placement in several orders (largest first, as TFLite and IREE
  // do; by size times lifetime; longest-lived first; by start), each buffer
  // at the lowest or the tightest gap among those alive with it; the
  // smallest arena wins, ties to the earlier strategy, so the plan is
  // deterministic. Each order misses the bound on some graphs the others
  // meet.
  auto duration = [&](size_t i) {
    return requests[i].last - requests[i].first + 1;
  };
  using Less = std::function<bool(size_t, size_t)>;
  const Less orders[] = {
      [&](size_t a, size_t b) { return sizes[a] > sizes[b]; },
      [&](size_t a, size_t b) {
        return sizes[a] * duration(a) > sizes[b] * duration(b);
      },
      [&](size_t a, size_t b) {
        return duration(a) != duration(b) ? duration(a) > duration(b)
                                          : sizes[a] > sizes[b];
      },
      [&](size_t a, size_t b) { return requests[a].first < requests[b].first; },
  };
  bool first = true;
  for (const Less &less : orders) {
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (less(a, b) != less(b, a))
        return less(a, b);
      return requests[a].first < requests[b].first;
    });
    for (bool tightest : {false, true}) {
      std::vector<int64_t> offsets(n, 0);
      int64_t arena = place(requests, sizes, order, tightest, offsets);
      if (first || arena < plan.arenaBytes) {
        plan.arenaBytes = arena;
        plan.offsets = std::move(offsets);
        first = false;
      }
    }
  }
  return plan;
}
