// caching_allocator.h - the caching allocator behind tcc_allocator_t: pools
// of blocks carved from device segments, split on allocation and merged on
// free, reused per stream (see tcc/allocator.h for the rules).
#ifndef TCC_RUNTIME_SRC_CACHING_ALLOCATOR_H
#define TCC_RUNTIME_SRC_CACHING_ALLOCATOR_H

#include "tcc/allocator.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tcc {

/// Sizes of the pools and segments, as in PyTorch's CUDA allocator.
constexpr size_t kMinBlockSize = TCC_ALLOCATOR_ROUNDING;
constexpr size_t kSmallSize = size_t(1) << 20;     // largest small block
constexpr size_t kSmallSegment = size_t(2) << 20;  // small pool segments
constexpr size_t kLargeSegment = size_t(20) << 20; // for requests < 10 MiB
constexpr size_t kMinLargeAlloc = size_t(10) << 20;
constexpr size_t kRoundLarge = size_t(2) << 20;

/// The request rounded to kMinBlockSize (at least one block).
size_t roundSize(size_t bytes);
/// The size of the segment made for a block of `size` (rounded) bytes.
size_t segmentSize(size_t size);

/// "1.50 MiB".
std::string formatBytes(uint64_t bytes);

/// The table tcc_allocator_summary prints.
std::string formatSummary(const std::string &name,
                          const tcc_allocator_stats_t &stats);

/// A backend of the memory of CUDA device `device`, through the driver
/// library loaded at run time (cuda_backend.cc).
tcc_status_t createCudaBackend(int32_t device, tcc_device_backend_t *out);

class CachingAllocator {
public:
  /// `backend` must have allocate and deallocate.
  CachingAllocator(const tcc_device_backend_t &backend,
                   const tcc_allocator_options_t &options);
  /// Returns every segment, allocated or not, and destroys the backend.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  tcc_status_t allocate(size_t bytes, tcc_stream_t stream, void **outPtr);
  tcc_status_t deallocate(void *ptr);
  tcc_status_t recordStream(void *ptr, tcc_stream_t stream);
  void trim();

  void setMemoryLimit(uint64_t bytes);
  uint64_t memoryLimit() const;
  tcc_allocator_stats_t stats() const;
  void resetPeak();

  const tcc_device_backend_t &backend() const { return backend_; }
  const std::string &name() const { return name_; }

private:
  struct Block;
  /// Orders the free blocks of a pool by stream, then size, then address,
  /// so that the best fit on a stream is a lower_bound.
  struct BlockLess {
    bool operator()(const Block *a, const Block *b) const;
  };
  using Pool = std::set<Block *, BlockLess>;
  using ActiveMap = std::unordered_map<void *, Block *>;
  static constexpr size_t kMaxSpares = 1024;
  /// A statistic, for the pool it belongs to and for all pools.
  struct Stat {
    tcc_allocator_stat_t pools[TCC_POOL_COUNT] = {};
  };
  struct PendingEvent {
    void *event;
    Block *block;
  };

  bool noCache() const { return options_.flags & TCC_ALLOCATOR_NO_CACHE; }
  Pool &poolFor(bool small) { return small ? smallPool_ : largePool_; }

  // Everything below named *Locked expects mutex_ to be held.
  Block *newBlockLocked(char *ptr, size_t size, tcc_stream_t stream,
                        bool small);
  void deleteBlockLocked(Block *block);
  void insertFreeLocked(Block *block);
  void eraseFreeLocked(Block *block);
  Block *takeCachedLocked(bool small, size_t size, tcc_stream_t stream);
  void activateLocked(Block *block, size_t size, size_t requested);
  void freeBlockLocked(Block *block);
  bool fitsLimitLocked(size_t segment) const;
  std::vector<Block *> takeReleasableLocked();
  tcc_status_t outOfMemoryLocked(size_t bytes, tcc_stream_t stream,
                                 const std::string &deviceError);
  static void update(Stat &stat, bool small, int64_t delta);

  tcc_status_t allocateNew(size_t bytes, size_t size, tcc_stream_t stream,
                           void **outPtr);
  /// Calls the backend for each segment; the blocks must no longer be
  /// reachable from a pool.
  void releaseSegments(const std::vector<Block *> &segments);
  /// Gives back the blocks whose pending events have completed; with `wait`,
  /// waits for all of them first.
  void processEvents(bool wait);
  /// Waits for pending events, then releases every free segment.
  void flushCache();

  tcc_device_backend_t backend_;
  tcc_allocator_options_t options_;
  std::string name_;

  mutable std::mutex mutex_;
  Pool smallPool_, largePool_;
  ActiveMap active_;                         // by the pointer handed out
  std::unordered_set<Block *> segmentHeads_; // first block of each segment
  std::deque<PendingEvent> pendingEvents_;
  // Recycled, so that steady-state traffic does not call malloc.
  std::vector<Block *> spareBlocks_;
  std::vector<Pool::node_type> spareNodes_;
  std::vector<ActiveMap::node_type> spareActive_;
  // Segment bytes requested from the backend and not yet returned by it:
  // counted against the limit so that concurrent requests cannot overshoot.
  uint64_t inflight_ = 0;
  // Segment bytes taken out of the pools to be returned to the backend.
  uint64_t releasing_ = 0;
  std::condition_variable released_; // signalled when releasing_ drops
  Stat allocated_, requested_, reserved_, inactiveSplit_, activeBlocks_,
      segments_;
  uint64_t numAllocs_ = 0, numFrees_ = 0, numCacheHits_ = 0,
           numDeviceAllocs_ = 0, numDeviceFrees_ = 0, numAllocRetries_ = 0,
           numOoms_ = 0;
};

} // namespace tcc

#endif // TCC_RUNTIME_SRC_CACHING_ALLOCATOR_H
