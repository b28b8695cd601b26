//===- ArenaPlanner.h - packing buffers into one arena ----------*- C++ -*-===//
//
// The compile-time memory plan: every intermediate buffer of a graph gets an
// offset in one arena such that buffers alive at the same time never
// overlap. Free of MLIR so that it can be tested on random inputs.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TRANSFORMS_ARENAPLANNER_H
#define TCC_COMPILER_TRANSFORMS_ARENAPLANNER_H

#include <cstdint>
#include <vector>

namespace mlir::tcc {

/// One buffer: its size and the first and last step (inclusive) at which it
/// is alive.
struct BufferRequest {
  int64_t bytes;
  int64_t first, last;
};

struct ArenaPlan {
  std::vector<int64_t> offsets; ///< One per request, aligned.
  int64_t arenaBytes = 0;       ///< End of the highest placed buffer.
  int64_t naiveBytes = 0;       ///< Sum of all (aligned) buffer sizes.
  int64_t peakLiveBytes = 0;    ///< Most (aligned) bytes alive at one step.
};

/// Greedy by size (as TFLite's and IREE's planners): the largest buffers are
/// placed first, each at the lowest aligned offset where it overlaps no
/// placed buffer whose lifetime intersects its own.
ArenaPlan planArena(const std::vector<BufferRequest> &requests,
                    int64_t alignment);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TRANSFORMS_ARENAPLANNER_H
