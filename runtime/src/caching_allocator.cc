// caching_allocator.cc - pools, splitting and merging, streams, the memory
// limit and the out-of-memory path of the caching allocator.
//
// Locking: one mutex guards the pools and statistics. It is released around
// every backend call (allocate, deallocate and the event functions), so a
// slow device allocation never stalls threads that the cache can serve.
// What that costs is that state changes between the two sides of a call:
// - segment bytes requested from the device are counted in inflight_ so
//   that concurrent requests together respect the memory limit;
// - segments being returned are counted in releasing_, and a request that
//   finds no room waits for those returns before it reports out of memory;
// - pending events are owned by whichever thread took them off the queue.
#include "caching_allocator.h"

#include "status.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <memory>

namespace tcc {

size_t roundSize(size_t bytes) {
  if (bytes < kMinBlockSize)
    return kMinBlockSize;
  return (bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segmentSize(size_t size) {
  if (size <= kSmallSize)
    return kSmallSegment;
  if (size < kMinLargeAlloc)
    return kLargeSegment;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

std::string formatBytes(uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
    return buf;
  }
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit < 3) {
    v /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[unit]);
  return buf;
}

enum class BlockState { Free, Active, Pending };

struct CachingAllocator::Block {
  Block(char *ptr, size_t size, tcc_stream_t stream, bool small)
      : ptr(ptr), size(size), stream(stream), small(small) {}

  char *ptr;
  size_t size;
  tcc_stream_t stream; // the stream it was allocated on; it is reused there
  bool small;          // its pool
  BlockState state = BlockState::Free;
  size_t requested = 0;      // while active: what the caller asked for
  bool countedSplit = false; // free and counted in inactiveSplit_
  Block *prev = nullptr, *next = nullptr; // neighbours in its segment
  std::vector<tcc_stream_t> uses;         // other streams (recordStream)
  int pendingEvents = 0;

  bool wholeSegment() const { return !prev && !next; }
};

bool CachingAllocator::BlockLess::operator()(const Block *a,
                                             const Block *b) const {
  if (a->stream != b->stream)
    return a->stream < b->stream;
  if (a->size != b->size)
    return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) <
         reinterpret_cast<uintptr_t>(b->ptr);
}

CachingAllocator::CachingAllocator(const tcc_device_backend_t &backend,
                                   const tcc_allocator_options_t &options)
    : backend_(backend), options_(options),
      name_(backend.name ? backend.name : "device") {}

CachingAllocator::~CachingAllocator() {
  if (backend_.synchronize_event)
    processEvents(/*wait=*/true);
  // Every segment goes back, allocated blocks included: their owner is gone.
  for (Block *head : segmentHeads_) {
    size_t bytes = 0;
    for (Block *b = head; b;) {
      Block *next = b->next;
      bytes += b->size;
      if (b != head)
        delete b;
      b = next;
    }
    backend_.deallocate(backend_.self, head->ptr, bytes);
    delete head;
  }
  for (Block *b : spareBlocks_)
    delete b;
  if (backend_.destroy)
    backend_.destroy(backend_.self);
}

void CachingAllocator::update(Stat &stat, bool small, int64_t delta) {
  for (tcc_allocator_stat_t *s :
       {&stat.pools[TCC_POOL_ALL],
        &stat.pools[small ? TCC_POOL_SMALL : TCC_POOL_LARGE]}) {
    s->current += delta;
    if (delta > 0) {
      s->allocated += delta;
      s->peak = std::max(s->peak, s->current);
    } else {
      s->freed += -delta;
    }
  }
}

void CachingAllocator::insertFreeLocked(Block *block) {
  block->state = BlockState::Free;
  block->countedSplit = !block->wholeSegment();
  if (block->countedSplit)
    update(inactiveSplit_, block->small, block->size);
  Pool &pool = poolFor(block->small);
  if (spareNodes_.empty()) {
    pool.insert(block);
    return;
  }
  Pool::node_type node = std::move(spareNodes_.back());
  spareNodes_.pop_back();
  node.value() = block;
  pool.insert(std::move(node));
}

void CachingAllocator::eraseFreeLocked(Block *block) {
  Pool::node_type node = poolFor(block->small).extract(block);
  if (spareNodes_.size() < kMaxSpares)
    spareNodes_.push_back(std::move(node));
  if (block->countedSplit)
    update(inactiveSplit_, block->small, -static_cast<int64_t>(block->size));
  block->countedSplit = false;
}

// Blocks and the nodes of the pools and of active_ are recycled, so that a
// steady state of allocations and frees calls malloc not at all.
CachingAllocator::Block *CachingAllocator::newBlockLocked(char *ptr,
                                                          size_t size,
                                                          tcc_stream_t stream,
                                                          bool small) {
  if (spareBlocks_.empty())
    return new Block(ptr, size, stream, small);
  Block *b = spareBlocks_.back();
  spareBlocks_.pop_back();
  *b = Block(ptr, size, stream, small);
  return b;
}

void CachingAllocator::deleteBlockLocked(Block *block) {
  if (spareBlocks_.size() < kMaxSpares)
    spareBlocks_.push_back(block);
  else
    delete block;
}

CachingAllocator::Block *
CachingAllocator::takeCachedLocked(bool small, size_t size,
                                   tcc_stream_t stream) {
  Pool &pool = poolFor(small);
  Block key(nullptr, size, stream, small);
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream)
    return nullptr;
  Block *block = *it;
  eraseFreeLocked(block);
  return block;
}

void CachingAllocator::activateLocked(Block *block, size_t size,
                                      size_t requested) {
  size_t remaining = block->size - size;
  // Large blocks keep a remainder of up to 1 MiB rather than leave a sliver
  // that only small requests could use, and small ones could not have it.
  bool split =
      block->small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    Block *rest = newBlockLocked(block->ptr + size, remaining, block->stream,
                                 block->small);
    rest->prev = block;
    rest->next = block->next;
    if (block->next)
      block->next->prev = rest;
    block->next = rest;
    block->size = size;
    insertFreeLocked(rest);
  }
  block->state = BlockState::Active;
  block->requested = requested;
  if (spareActive_.empty()) {
    active_.emplace(block->ptr, block);
  } else {
    ActiveMap::node_type node = std::move(spareActive_.back());
    spareActive_.pop_back();
    node.key() = block->ptr;
    node.mapped() = block;
    active_.insert(std::move(node));
  }
  update(allocated_, block->small, block->size);
  update(requested_, block->small, requested);
  update(activeBlocks_, block->small, 1);
  ++numAllocs_;
}

void CachingAllocator::freeBlockLocked(Block *block) {
  // Merge with free neighbours; active and pending ones stay apart.
  if (Block *prev = block->prev; prev && prev->state == BlockState::Free) {
    eraseFreeLocked(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next)
      block->next->prev = prev;
    deleteBlockLocked(block);
    block = prev;
  }
  if (Block *next = block->next; next && next->state == BlockState::Free) {
    eraseFreeLocked(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next)
      next->next->prev = block;
    deleteBlockLocked(next);
  }
  insertFreeLocked(block);
}

bool CachingAllocator::fitsLimitLocked(size_t segment) const {
  uint64_t limit = options_.memory_limit;
  uint64_t used = reserved_.pools[TCC_POOL_ALL].current + inflight_;
  return !limit || (used <= limit && segment <= limit - used);
}

std::vector<CachingAllocator::Block *>
CachingAllocator::takeReleasableLocked() {
  std::vector<Block *> segments;
  for (Pool *pool : {&smallPool_, &largePool_})
    for (Block *b : *pool)
      if (b->wholeSegment())
        segments.push_back(b);
  for (Block *b : segments) {
    eraseFreeLocked(b);
    releasing_ += b->size;
  }
  return segments;
}

void CachingAllocator::releaseSegments(const std::vector<Block *> &segments) {
  if (segments.empty())
    return;
  for (Block *b : segments)
    backend_.deallocate(backend_.self, b->ptr, b->size);
  std::lock_guard<std::mutex> lock(mutex_);
  for (Block *b : segments) {
    releasing_ -= b->size;
    update(reserved_, b->small, -static_cast<int64_t>(b->size));
    update(segments_, b->small, -1);
    ++numDeviceFrees_;
    segmentHeads_.erase(b);
    delete b;
  }
  released_.notify_all();
}

tcc_status_t
CachingAllocator::outOfMemoryLocked(size_t bytes, tcc_stream_t stream,
                                    const std::string &deviceError) {
  ++numOoms_;
  uint64_t limit = options_.memory_limit;
  uint64_t reserved = reserved_.pools[TCC_POOL_ALL].current;
  uint64_t allocated = allocated_.pools[TCC_POOL_ALL].current;
  return makeStatus(
      TCC_STATUS_RESOURCE_EXHAUSTED,
      "%s: out of memory: cannot allocate %s (%zu bytes) on stream %" PRIu64
      "; %s allocated, %s reserved (%s cached or awaiting streams), memory "
      "limit %s%s%s",
      name_.c_str(), formatBytes(bytes).c_str(), bytes, stream,
      formatBytes(allocated).c_str(), formatBytes(reserved).c_str(),
      formatBytes(reserved - allocated).c_str(),
      limit ? formatBytes(limit).c_str() : "none",
      deviceError.empty() ? "" : "; the device said: ", deviceError.c_str());
}

tcc_status_t CachingAllocator::allocate(size_t bytes, tcc_stream_t stream,
                                        void **outPtr) {
  // Past this, rounding the segment size would overflow.
  if (bytes > std::numeric_limits<size_t>::max() / 2) {
    std::lock_guard<std::mutex> lock(mutex_);
    return outOfMemoryLocked(bytes, stream, "");
  }
  size_t size = roundSize(bytes);
  if (!noCache()) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!pendingEvents_.empty()) {
      lock.unlock();
      processEvents(/*wait=*/false);
      lock.lock();
    }
    if (Block *block = takeCachedLocked(size <= kSmallSize, size, stream)) {
      activateLocked(block, size, bytes);
      ++numCacheHits_;
      *outPtr = block->ptr;
      return nullptr;
    }
  }
  return allocateNew(bytes, size, stream, outPtr);
}

tcc_status_t CachingAllocator::allocateNew(size_t bytes, size_t size,
                                           tcc_stream_t stream, void **outPtr) {
  bool small = size <= kSmallSize;
  // The pool's segment size first; when that does not fit (the limit, the
  // device), a segment of just the request.
  std::vector<size_t> candidates{noCache() ? size : segmentSize(size)};
  if (candidates[0] != size)
    candidates.push_back(size);
  std::string deviceError;
  // Attempt 0 as things are; 1 after freeing the cache; 2 after waiting
  // for segments that other threads were returning.
  for (int attempt = 0;; ++attempt) {
    for (size_t segment : candidates) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        // Another thread may have freed a block that fits meanwhile.
        if (!noCache() && attempt > 0)
          if (Block *block = takeCachedLocked(small, size, stream)) {
            activateLocked(block, size, bytes);
            ++numCacheHits_;
            *outPtr = block->ptr;
            return nullptr;
          }
        if (!fitsLimitLocked(segment))
          continue;
        inflight_ += segment;
      }
      // Made before the device call, so that running out of host memory
      // for it cannot strand a device segment.
      std::unique_ptr<Block> head;
      tcc_status_t status = nullptr;
      void *ptr = nullptr;
      try {
        head.reset(new Block(nullptr, segment, stream, small));
        status = backend_.allocate(backend_.self, segment, stream, &ptr);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        inflight_ -= segment;
        throw;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      inflight_ -= segment;
      if (!status) {
        head->ptr = static_cast<char *>(ptr);
        segmentHeads_.insert(head.get());
        update(reserved_, small, segment);
        update(segments_, small, 1);
        ++numDeviceAllocs_;
        Block *block = head.release();
        activateLocked(block, size, bytes);
        *outPtr = block->ptr;
        return nullptr;
      }
      if (tcc_status_code(status) != TCC_STATUS_RESOURCE_EXHAUSTED)
        return status;
      deviceError = tcc_status_message(status);
      tcc_status_free(status);
    }
    if (attempt == 0) {
      flushCache();
      std::lock_guard<std::mutex> lock(mutex_);
      ++numAllocRetries_;
      continue;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (attempt == 1 && releasing_) {
      released_.wait(lock, [&] { return releasing_ == 0; });
      continue;
    }
    return outOfMemoryLocked(bytes, stream, deviceError);
  }
}

tcc_status_t CachingAllocator::deallocate(void *ptr) {
  if (!ptr)
    return nullptr;
  Block *block;
  std::vector<tcc_stream_t> uses;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(ptr);
    if (it == active_.end())
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: cannot free %p: this allocator did not allocate "
                        "it, or it was freed already",
                        name_.c_str(), ptr);
    block = it->second;
    ActiveMap::node_type node = active_.extract(it);
    if (spareActive_.size() < kMaxSpares)
      spareActive_.push_back(std::move(node));
    ++numFrees_;
    update(allocated_, block->small, -static_cast<int64_t>(block->size));
    update(requested_, block->small, -static_cast<int64_t>(block->requested));
    update(activeBlocks_, block->small, -1);
    uses.swap(block->uses);
    if (uses.empty() || !backend_.record_event) {
      if (!noCache()) {
        freeBlockLocked(block);
        return nullptr;
      }
      // Not in any pool: nobody else can reach it.
      block->state = BlockState::Free;
      releasing_ += block->size;
    } else {
      block->state = BlockState::Pending;
    }
  }
  if (block->state == BlockState::Free) {
    releaseSegments({block});
    return nullptr;
  }

  // The block may be reused once the work queued on every stream that used
  // it is done.
  std::vector<void *> events;
  tcc_status_t error = nullptr;
  for (tcc_stream_t stream : uses) {
    void *event = nullptr;
    if (tcc_status_t s = backend_.record_event(backend_.self, stream, &event)) {
      if (!error)
        error = s;
      else
        tcc_status_free(s);
      continue;
    }
    events.push_back(event);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  // Without an event for each stream nothing tells when the block is safe:
  // it stays pending (never reused) until the allocator is destroyed.
  block->pendingEvents = static_cast<int>(events.size()) + (error ? 1 : 0);
  for (void *event : events)
    pendingEvents_.push_back({event, block});
  return error;
}

tcc_status_t CachingAllocator::recordStream(void *ptr, tcc_stream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(ptr);
  if (it == active_.end())
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: cannot record a stream for %p: it is not an "
                      "allocated block of this allocator",
                      name_.c_str(), ptr);
  Block *block = it->second;
  if (stream != block->stream &&
      std::find(block->uses.begin(), block->uses.end(), stream) ==
          block->uses.end())
    block->uses.push_back(stream);
  return nullptr;
}

void CachingAllocator::processEvents(bool wait) {
  std::deque<PendingEvent> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(pendingEvents_);
  }
  if (taken.empty())
    return;
  std::vector<PendingEvent> done, notDone;
  for (const PendingEvent &e : taken) {
    if (wait)
      backend_.synchronize_event(backend_.self, e.event);
    if (wait || backend_.query_event(backend_.self, e.event))
      done.push_back(e);
    else
      notDone.push_back(e);
  }
  for (const PendingEvent &e : done)
    backend_.destroy_event(backend_.self, e.event);
  std::vector<Block *> release;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const PendingEvent &e : notDone)
      pendingEvents_.push_back(e);
    for (const PendingEvent &e : done) {
      if (--e.block->pendingEvents)
        continue;
      if (!noCache()) {
        freeBlockLocked(e.block);
        continue;
      }
      e.block->state = BlockState::Free;
      releasing_ += e.block->size;
      release.push_back(e.block);
    }
  }
  releaseSegments(release);
}

void CachingAllocator::flushCache() {
  if (backend_.synchronize_event)
    processEvents(/*wait=*/true);
  std::vector<Block *> segments;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    segments = takeReleasableLocked();
  }
  releaseSegments(segments);
}

void CachingAllocator::trim() { flushCache(); }

void CachingAllocator::setMemoryLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  options_.memory_limit = bytes;
}

uint64_t CachingAllocator::memoryLimit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return options_.memory_limit;
}

tcc_allocator_stats_t CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  tcc_allocator_stats_t s{};
  auto copy = [](const Stat &from, tcc_allocator_stat_t *to) {
    std::copy(std::begin(from.pools), std::end(from.pools), to);
  };
  copy(allocated_, s.allocated_bytes);
  copy(requested_, s.requested_bytes);
  copy(reserved_, s.reserved_bytes);
  copy(inactiveSplit_, s.inactive_split_bytes);
  copy(activeBlocks_, s.active_blocks);
  copy(segments_, s.segments);
  s.num_allocs = numAllocs_;
  s.num_frees = numFrees_;
  s.num_cache_hits = numCacheHits_;
  s.num_device_allocs = numDeviceAllocs_;
  s.num_device_frees = numDeviceFrees_;
  s.num_alloc_retries = numAllocRetries_;
  s.num_ooms = numOoms_;
  for (const Pool *pool : {&smallPool_, &largePool_})
    for (const Block *b : *pool) {
      s.cached_bytes += b->size;
      s.largest_cached_block =
          std::max<uint64_t>(s.largest_cached_block, b->size);
    }
  s.memory_limit = options_.memory_limit;
  s.fragmentation = s.cached_bytes
                        ? 1.0 - static_cast<double>(s.largest_cached_block) /
                                    static_cast<double>(s.cached_bytes)
                        : 0.0;
  return s;
}

void CachingAllocator::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat *stat : {&allocated_, &requested_, &reserved_, &inactiveSplit_,
                     &activeBlocks_, &segments_})
    for (tcc_allocator_stat_t &s : stat->pools)
      s.peak = s.current;
}

} // namespace tcc
