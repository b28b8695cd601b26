//===- ArenaPlanner.cpp - packing buffers into one arena ------------------===//

#include "compiler/Transforms/ArenaPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace mlir::tcc;

static int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

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

  // Largest first; ties by earlier start keep the plan deterministic.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return requests[a].first < requests[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    // Address ranges of placed buffers alive at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (requests[j].first <= requests[i].last &&
          requests[i].first <= requests[j].last)
        busy.push_back({plan.offsets[j], plan.offsets[j] + sizes[j]});
    std::sort(busy.begin(), busy.end());
    // The lowest gap that fits; best fit among gaps would save little here.
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (begin - offset >= sizes[i])
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + sizes[i]);
    placed.push_back(i);
  }
  return plan;
}
